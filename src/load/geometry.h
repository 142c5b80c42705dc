/* The per-layer geometry table: everything the forward needs to know about a model, normalized by
 * the geometry builder (load/build.c) from whatever container and convention the weights came
 * in. The forward and the caches read only this table; no architecture has a forward of its own.
 *
 * Shapes are [rows, cols] of the matrices as the forward multiplies them (y = W x, rows outputs of
 * cols inputs); H = hidden, per layer nh/nkv = heads/KV heads, hd = head_dim, F = ffn_dim, E =
 * experts, Fe = the experts' width, P = ple_dim, L = layers, V = vocabulary. */
#ifndef TS_LOAD_GEOMETRY_H
#define TS_LOAD_GEOMETRY_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "kernels/weight.h"

#define MOE_MAX_EXPERTS 512   /* experts a router may choose from */

/* How a layer mixes the positions of a sequence. Each kind is a module in two parts, one per stage:
 * load/build_KIND.c (the tensors it needs, their shapes, its geometry) and run/KIND_layer.c (its
 * per-sequence state and how big it is, the one-token step and the batched prefill, how its state
 * is rewound); run/layer_kind.c names them for the forward. */
enum layer_kind {
    LAYER_ATTENTION,           /* softmax attention over a KV cache (full or sliding window) */
    LAYER_DELTANET,            /* gated delta rule: a matrix state per value head (Qwen3.5 linear attention) */
    LAYER_SHORTCONV,           /* gated short convolution: a window of past inputs per channel (LFM2) */
    LAYER_MAMBA2,              /* Mamba-2 selective scan: a matrix state per head (Granite 4.0-H) */
    LAYER_MLA,                 /* multi-head latent attention: one compressed key per position (DeepSeek) */
    LAYER_KIND_COUNT
};
enum ffn_activation {
    ACT_SILU = 0, ACT_GELU_TANH = 1,
    ACT_SWIGLU_OAI = 2,        /* gpt-oss experts: (min(up, 7) clamped to +-7 + 1) * g * sigmoid(1.702 g), g = min(gate, 7) */
};
static inline const char *activation_name(int act) {
    return act == ACT_SILU ? "silu" : act == ACT_GELU_TANH ? "gelu_tanh" : act == ACT_SWIGLU_OAI ? "swiglu_oai" : "?";
}

/* How a router's logits choose and weigh the experts. */
enum moe_gating {
    GATING_SOFTMAX_TOPK,   /* softmax over every expert, the top k, their weights renormalized or not */
    GATING_TOPK_SOFTMAX,   /* the top k logits, softmax over those k (gpt-oss) */
    GATING_SIGMOID_TOPK,   /* a sigmoid of each logit, the top k, their weights renormalized or not (DeepSeek V3, GLM-4.5) */
};

/* A layer's mixture of experts: a router picks n_used of n_experts per token; their outputs,
 * weighted, replace (or, with a dense MLP beside them, add to) the MLP's output. */
typedef struct moe_geometry {
    int n_experts, n_used, ffn_dim;
    int gating;                 /* enum moe_gating */
    bool renorm;                /* GATING_SOFTMAX_TOPK, GATING_SIGMOID_TOPK: the chosen weights renormalized to sum 1 */
    /* DeepSeek's selection (GATING_SOFTMAX_TOPK, GATING_SIGMOID_TOPK): the experts are chosen by
     * score + select_bias (the weights stay the unbiased scores), only from the topk_group of
     * n_group groups of consecutive experts whose two best biased scores sum highest; the weights
     * are then multiplied by routed_scale */
    const float *select_bias;   /* n_experts, NULL: none */
    int n_group, topk_group;    /* n_group <= 1: no groups */
    bool dropped_groups_zero;   /* the other groups' experts score 0 for the selection (transformers),
                                   not -inf (llama.cpp): they differ when a kept score is <= 0 */
    float routed_scale;         /* 1: none */
    int activation;             /* enum ffn_activation */
    weight router;              /* [E, H] */
    const float *router_bias;   /* n_experts, NULL: none */
    const float *router_scale;  /* Gemma 4: the router reads rms(x) * router_scale / sqrt(hidden) of
                                   the residual; NULL: it reads the FFN input */
    const float *expert_scale;  /* n_experts multipliers of each expert's output (NULL: none) */
    weight *gate, *up, *down;   /* E each: [Fe, H], [Fe, H], [H, Fe] (row views of stacked tensors) */
    const float *gate_bias, *up_bias, *down_bias;   /* [E][ffn], [E][ffn], [E][hidden], NULL: none */
    const float *in_norm;       /* the experts' own input norm (Gemma 4); NULL: the FFN input */
    const float *out_norm;      /* norm of the weighted sum (Gemma 4) */
    const float *dense_out_norm;/* with a dense MLP beside: norm of the dense output before the sum */
    /* a shared expert every token goes through, its output added to the routed experts' sum, scaled
     * by sigmoid(shared_gate . x) when shared_gate is given (Qwen3.5-MoE); shared_down.data NULL: none */
    int shared_ffn_dim;         /* Fs */
    weight shared_gate, shared_up;   /* [Fs, H] */
    weight shared_down;         /* [H, Fs] */
    weight shared_gate_inp;     /* [1, H], data NULL: the shared expert is not gated */
} moe_geometry;

/* An attention layer: q/k/v projections, RoPE, softmax over the cached keys, the output projection. */
typedef struct attention_geometry {
    bool sliding;               /* attends to the last `window` positions only */
    int n_heads, n_kv_heads, head_dim;
    int value_dim;              /* a value head's size (head_dim, but for latent attention's cache) */
    int window;                 /* sliding layers: attends to the last `window` positions; 0 = all */
    float scale;                /* multiplies q.k */
    float softcap;              /* scores = c * tanh(scores / c) before the softmax; 0 = off */
    /* RoPE, split-half (rotate_half) form: dimension i pairs with i + rope_dim/2 and rotates by
     * pos * rope_pos_scale * rope_inv_freq[i] for i < rope_pairs; pairs beyond stay put. cos and
     * sin are multiplied by rope_mscale (YaRN / LongRoPE attention factor). rope_pairs = 0: no
     * RoPE on this layer (NoPE). rope_inv_freq_long: LongRoPE's long-context list, used instead
     * when the context is longer than the model's original one (model_geometry.rope_long_*). */
    float rope_theta;           /* the base the table was computed from (for --info) */
    int rope_dim;               /* span of the split-half pairing (head_dim, or the partial-rotary width) */
    int rope_pairs;             /* pairs that rotate */
    float rope_pos_scale;       /* linear RoPE scaling: position multiplied by this (1 = none) */
    float rope_mscale;          /* cos/sin multiplier (1 = none) */
    const float *rope_inv_freq, *rope_inv_freq_long;   /* rope_dim / 2 each */
    /* Llama 4 attention temperature (Mistral 3): q *= 1 + beta * ln(1 + floor(pos / len)); beta 0 = off */
    float temp_beta;
    int temp_len;
    int kv_source;              /* the layer whose KV cache this layer uses (itself unless shared) */
    bool v_from_k;              /* no V projection: V is K's projection before k_norm and RoPE */
    bool v_norm;                /* V goes through a weightless RMSNorm (Gemma 4) */
    bool qk_norm_whole;         /* q_norm/k_norm normalize the whole projection, not each head (OLMo 2) */
    const float *q_norm, *k_norm;   /* hd each (nh x hd / nkv x hd when whole); NULL: none */
    weight wq;                  /* [nh x hd, H] */
    weight wk, wv;              /* [nkv x hd, H]; data NULL when the KV comes from kv_source (wv also with v_from_k) */
    weight wo;                  /* [H, nh x hd] */
    const float *bq, *bk, *bv, *bo;    /* projection biases (nh x hd, nkv x hd, nkv x hd, H), NULL when absent */
    const float *sinks;         /* nh: one more logit per head in the softmax's denominator (gpt-oss); NULL: none */
    bool out_gate;              /* wq's rows are per head [query (hd) | gate (hd)]; the head's output is
                                   multiplied by sigmoid(gate) before wo (Qwen3.5's gated attention) */
} attention_geometry;

/* A gated DeltaNet layer (Qwen3.5's linear attention): per token a causal depthwise convolution
 * of the q/k/v projection (silu after it), L2-normed q and k per key head, and per value head h a
 * state S_h [dk x dv] that decays by exp(g_h) and learns v_h by the delta rule with rate beta_h;
 * the output S_h^T q, RMS-normed and gated by silu(z), goes through w_out. */
typedef struct deltanet_geometry {
    int n_k_heads, n_v_heads;   /* Hk, Hv (a multiple of Hk) */
    int head_k, head_v;         /* dk, dv */
    int conv_kernel;            /* K: positions the convolution reads (the current one and K - 1 before) */
    int conv_channels;          /* C = 2 Hk dk + Hv dv: [q | k | v] */
    const int *key_head;        /* Hv: the key head value head h reads (the container's head order) */
    weight w_qkv;               /* [C, H] */
    weight w_z;                 /* [Hv x dv, H]: the output gate */
    weight w_beta, w_alpha;     /* [Hv, H]: beta = sigmoid(w_beta x); g = a * softplus(w_alpha x + dt_bias) */
    const float *conv;          /* [K][C]: tap j of every channel (j = 0 the oldest position), so one
                                   position's channels are read as one run */
    const float *a;             /* Hv: -exp(A_log), the decay rate (negative) */
    const float *dt_bias;       /* Hv */
    const float *norm;          /* dv: the gated RMSNorm's weight, shared by the heads, used as is */
    weight w_out;               /* [H, Hv x dv] */
} deltanet_geometry;

/* A gated short-convolution layer (LFM2): [b | c | u] = w_in x_t; per channel, the product b u
 * enters a window of the last K positions, c_t = sum_j conv[:, j] * (b u)_{t-K+1+j}, and the
 * output is w_out (c ⊙ c_t) (the second gate c on the convolution's result). */
typedef struct shortconv_geometry {
    int channels;               /* D: the hidden size */
    int kernel;                 /* K: positions the convolution reads (the current one and K - 1 before) */
    weight w_in;                /* [3D, H]: rows b, then c, then u */
    const float *conv;          /* [K][D]: tap j of every channel (j = 0 the oldest position) */
    weight w_out;               /* [H, D] */
} shortconv_geometry;
/* A Mamba-2 layer (Granite 4.0-H): per token one projection [z | xBC | dt]; a causal depthwise
 * convolution of xBC (bias, silu after it) gives x (nh heads of dh), B and C (ng groups of N);
 * per head h, with dt_h = softplus(dt + dt_bias_h) and g = the group of h, a state S_h [dh x N]
 * decays by exp(dt_h a_h) and adds dt_h x_h B_g^T; y_h = S_h C_g + d_h x_h. y * silu(z) goes
 * through an RMSNorm per norm_group values, then w_out. */
typedef struct mamba2_geometry {
    int n_heads, head_dim;      /* nh, dh; d_inner = nh x dh */
    int state_size;             /* N */
    int n_groups;               /* ng: head h reads group h / (nh / ng) of B and C */
    int conv_kernel;            /* K: positions the convolution reads (the current one and K - 1 before) */
    int conv_channels;          /* C = d_inner + 2 ng N: [x | B | C] */
    int norm_group;             /* values normalized together: d_inner / ng (llama.cpp) or d_inner (HF) */
    weight w_in;                /* [d_inner + C + nh, H]: rows [z | xBC | dt] */
    const float *conv;          /* [K][C]: tap j of every channel (j = 0 the oldest position) */
    const float *conv_bias;     /* C; NULL: none */
    const float *a;             /* nh: -exp(A_log), the decay rate (negative) */
    const float *d;             /* nh: the skip x_h's weight */
    const float *dt_bias;       /* nh */
    const float *norm;          /* d_inner: the gated RMSNorm's weight, used as is */
    weight w_out;               /* [H, d_inner] */
} mamba2_geometry;

/* A multi-head latent attention layer (DeepSeek V2/V3, README-mla.md), run in its absorbed form.
 * Per position: q = wq_b(rms(wq_a x) q_a_norm) (or wq x), per head [q_nope (d_n) | q_pe (d_r)];
 * a = wkv_a x = [c (r) | k_pe (d_r)], c = rms(c) kv_a_norm; q_pe and k_pe rotated. Head h attends
 * with [wk_b_h q_nope_h | q_pe_h] to the one cached key [c | k_pe] of every position, value c; its
 * r-wide result goes through wv_b_h (d_v), the heads' results through wo. The cache's view is
 * layer_geometry.attn (1 KV head, head_dim r + d_r, value_dim r, the scale, the RoPE table). */
typedef struct mla_geometry {
    int n_heads;
    int q_lora_rank;            /* 0: the plain q projection wq */
    int kv_lora_rank;           /* r */
    int nope_dim, rope_dim, v_dim;   /* d_n, d_r, d_v */
    bool rope_adjacent;         /* RoPE pairs (2i, 2i + 1) (DeepSeek), else (i, i + d_r / 2) */
    float lora_norm_eps;        /* q_a_norm's and kv_a_norm's epsilon */
    weight wq_a;                /* [q_lora_rank, H] */
    const float *q_a_norm;      /* q_lora_rank */
    weight wq_b;                /* [nh x (d_n + d_r), q_lora_rank] */
    weight wq;                  /* [nh x (d_n + d_r), H] when q_lora_rank is 0 */
    weight wkv_a;               /* [r + d_r, H] */
    const float *kv_a_norm;     /* r */
    weight wk_b;                /* [nh x r, d_n]: head h's r rows absorb its q_nope into the latent space */
    weight wv_b;                /* [nh x d_v, r]: head h's d_v rows decompress its result */
    weight wo;                  /* [H, nh x d_v] */
} mla_geometry;

typedef struct layer_geometry {
    int kind;                   /* enum layer_kind: how the layer mixes positions */
    attention_geometry attn;    /* LAYER_ATTENTION; LAYER_MLA: its cache's view */
    mla_geometry mla;           /* LAYER_MLA */
    deltanet_geometry delta;    /* LAYER_DELTANET */
    shortconv_geometry conv;    /* LAYER_SHORTCONV */
    mamba2_geometry mamba;      /* LAYER_MAMBA2 */
    /* norm weights (H values), f32, with any "+1" convention already applied; NULL when the model
     * has no such norm (attn_norm / ffn_norm NULL: the sublayer reads the residual as it is).
     * attn_norm / post_attn_norm surround the layer's mixer, whatever its kind (llama.cpp's names). */
    const float *attn_norm, *post_attn_norm, *ffn_norm, *post_ffn_norm;
    int ffn_dim;                /* F */
    int activation;             /* enum ffn_activation */
    weight w_gate, w_up;        /* [F, H] each; w_gate.data NULL: no dense MLP (experts only) */
    weight w_down;              /* [H, F] */
    moe_geometry moe;           /* moe.n_experts 0: no experts */
    float output_scale;         /* the layer's output multiplied by this (1 = none) */
    /* per-layer embeddings (Gemma 4 PLE): x += ple_post_norm(ple_proj(gelu(ple_gate x) * pli)) */
    weight ple_gate;            /* [P, H] */
    weight ple_proj;            /* [H, P] */
    const float *ple_post_norm; /* H */
} layer_geometry;

/* Every matrix of a layer that a token reads whatever it is (its kind's and the dense feed-forward's;
 * not the experts', which a token reads only when chosen), for code that treats them alike (the
 * resident copy). Writes at most LAYER_MAX_MATRICES pointers; absent ones have data NULL. */
#define LAYER_MAX_MATRICES 16
static inline int layer_matrices(layer_geometry *ly, weight **out) {
    int n = 0;
    if (ly->kind == LAYER_ATTENTION) {
        out[n++] = &ly->attn.wq; out[n++] = &ly->attn.wk; out[n++] = &ly->attn.wv; out[n++] = &ly->attn.wo;
    } else if (ly->kind == LAYER_DELTANET) {
        out[n++] = &ly->delta.w_qkv; out[n++] = &ly->delta.w_z; out[n++] = &ly->delta.w_beta;
        out[n++] = &ly->delta.w_alpha; out[n++] = &ly->delta.w_out;
    } else if (ly->kind == LAYER_SHORTCONV) {
        out[n++] = &ly->conv.w_in; out[n++] = &ly->conv.w_out;
    } else if (ly->kind == LAYER_MAMBA2) {
        out[n++] = &ly->mamba.w_in; out[n++] = &ly->mamba.w_out;
    } else if (ly->kind == LAYER_MLA) {
        out[n++] = &ly->mla.wq_a; out[n++] = &ly->mla.wq_b; out[n++] = &ly->mla.wq; out[n++] = &ly->mla.wkv_a;
        out[n++] = &ly->mla.wk_b; out[n++] = &ly->mla.wv_b; out[n++] = &ly->mla.wo;
    }
    out[n++] = &ly->w_gate; out[n++] = &ly->w_up; out[n++] = &ly->w_down;
    out[n++] = &ly->ple_gate; out[n++] = &ly->ple_proj; out[n++] = &ly->moe.router;
    out[n++] = &ly->moe.shared_gate; out[n++] = &ly->moe.shared_up; out[n++] = &ly->moe.shared_down;
    return n;
}

/* Whether a layer keeps a KV cache (its layer_geometry.attn says how big). */
static inline bool layer_has_kv_cache(const layer_geometry *ly) {
    return ly->kind == LAYER_ATTENTION || ly->kind == LAYER_MLA;
}

typedef struct model_geometry {
    char arch[32];
    int n_layers, hidden, n_vocab, n_ctx_train;
    float norm_eps;
    float embed_scale;          /* embeddings multiplied by this (Gemma: sqrt(hidden)); 1 = none */
    float residual_scale;       /* x += residual_scale * sublayer output (Granite); 1 = none */
    float logit_scale;          /* logits multiplied by this (Granite: 1 / logits_scaling); 1 = none */
    float final_softcap;        /* logits = c * tanh(logits / c); 0 = off */
    /* LongRoPE: a context of more than rope_long_ctx positions (first rounded up to a multiple of
     * rope_long_round) uses the layers' rope_inv_freq_long; 0 = no long list */
    int rope_long_ctx, rope_long_round;
    weight tok_embd;            /* [V, H] */
    weight output;              /* [V, H], the LM head; the same data as tok_embd when tied */
    const float *output_norm;
    /* Per-layer embeddings (Gemma 4 PLE), ple_dim = 0 when the model has none. Per token:
     *   pli[l] = (rmsnorm(ple_model_proj(x_emb) * ple_proj_scale)[l] * ple_proj_norm
     *             + ple_embd[token][l] * ple_embd_scale) * ple_combine_scale */
    int ple_dim;
    weight ple_embd;            /* [V, L x P] */
    weight ple_model_proj;      /* [L x P, H] */
    const float *ple_proj_norm; /* ple_dim */
    float ple_embd_scale, ple_proj_scale, ple_combine_scale;
    layer_geometry *layers;     /* n_layers entries */
} model_geometry;

#endif
