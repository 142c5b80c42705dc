/* The per-layer geometry table: everything the forward needs to know about a model, normalized by
 * the geometry builder (model/build.c) from whatever container and convention the weights came
 * in. The forward and the KV cache read only this table; no architecture has a forward of its own. */
#ifndef TS_MODEL_GEOMETRY_H
#define TS_MODEL_GEOMETRY_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "kernels/weight.h"

#define MOE_MAX_EXPERTS 512   /* experts a router may choose from */

enum layer_kind { LAYER_FULL = 0, LAYER_SLIDING = 1 };
enum ffn_activation {
    ACT_SILU = 0, ACT_GELU_TANH = 1,
    ACT_SWIGLU_OAI = 2,        /* gpt-oss experts: (min(up, 7) clamped to +-7 + 1) * g * sigmoid(1.702 g), g = min(gate, 7) */
};
static inline const char *activation_name(int act) {
    return act == ACT_SILU ? "silu" : act == ACT_GELU_TANH ? "gelu_tanh" : act == ACT_SWIGLU_OAI ? "swiglu_oai" : "?";
}

/* A layer's mixture of experts: a router picks n_used of n_experts per token; their outputs,
 * weighted, replace (or, with a dense MLP beside them, add to) the MLP's output. */
typedef struct moe_geometry {
    int n_experts, n_used, ffn_dim;
    int gating;                 /* enum moe_gating */
    bool renorm;                /* GATING_SOFTMAX_TOPK: the chosen weights renormalized to sum 1 */
    int activation;             /* enum ffn_activation */
    weight router;              /* rows = n_experts */
    const float *router_bias;   /* n_experts, NULL: none */
    const float *router_scale;  /* Gemma 4: the router reads rms(x) * router_scale / sqrt(hidden) of
                                   the residual; NULL: it reads the FFN input */
    const float *expert_scale;  /* n_experts multipliers of each expert's output (NULL: none) */
    weight *gate, *up, *down;   /* n_experts each (row views of stacked tensors) */
    const float *gate_bias, *up_bias, *down_bias;   /* [E][ffn], [E][ffn], [E][hidden], NULL: none */
    const float *in_norm;       /* the experts' own input norm (Gemma 4); NULL: the FFN input */
    const float *out_norm;      /* norm of the weighted sum (Gemma 4) */
    const float *dense_out_norm;/* with a dense MLP beside: norm of the dense output before the sum */
} moe_geometry;

typedef struct layer_geometry {
    int kind;                   /* enum layer_kind */
    int n_heads, n_kv_heads, head_dim;
    int window;                 /* sliding layers: attends to the last `window` positions; 0 = all */
    float attn_scale;           /* multiplies q.k */
    float attn_softcap;         /* scores = c * tanh(scores / c) before the softmax; 0 = off */
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
    const float *rope_inv_freq, *rope_inv_freq_long;
    /* Llama 4 attention temperature (Mistral 3): q *= 1 + beta * ln(1 + floor(pos / len)); beta 0 = off */
    float attn_temp_beta;
    int attn_temp_len;
    int kv_source;              /* the layer whose KV cache this layer uses (itself unless shared) */
    bool v_from_k;              /* no V projection: V is K's projection before k_norm and RoPE */
    bool v_norm;                /* V goes through a weightless RMSNorm (Gemma 4) */
    bool qk_norm_whole;         /* q_norm/k_norm normalize the whole projection, not each head (OLMo 2) */
    int ffn_dim;
    int activation;             /* enum ffn_activation */
    float output_scale;         /* the layer's output multiplied by this (1 = none) */
    /* norm weights, f32, with any "+1" convention already applied; NULL when the model has no
     * such norm (attn_norm / ffn_norm NULL: the sublayer reads the residual as it is) */
    const float *attn_norm, *post_attn_norm, *ffn_norm, *post_ffn_norm, *q_norm, *k_norm;
    weight wq, wk, wv, wo, w_gate, w_up, w_down;   /* w_gate.data NULL: no dense MLP (experts only) */
    const float *bq, *bk, *bv, *bo;    /* projection biases, NULL when absent */
    const float *attn_sinks;    /* per head: one more logit in the softmax's denominator (gpt-oss); NULL: none */
    moe_geometry moe;           /* moe.n_experts 0: no experts */
    /* per-layer embeddings (Gemma 4 PLE): x += ple_post_norm(ple_proj(gelu(ple_gate x) * pli)) */
    weight ple_gate, ple_proj;
    const float *ple_post_norm;
} layer_geometry;

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
    weight tok_embd;            /* rows = n_vocab, cols = hidden */
    weight output;              /* the LM head; the same data as tok_embd when tied */
    const float *output_norm;
    /* Per-layer embeddings (Gemma 4 PLE), ple_dim = 0 when the model has none. Per token:
     *   pli[l] = (rmsnorm(ple_model_proj(x_emb) * ple_proj_scale)[l] * ple_proj_norm
     *             + ple_embd[token][l] * ple_embd_scale) * ple_combine_scale */
    int ple_dim;
    weight ple_embd;            /* rows = n_vocab, cols = n_layers * ple_dim */
    weight ple_model_proj;      /* rows = n_layers * ple_dim, cols = hidden */
    const float *ple_proj_norm; /* ple_dim */
    float ple_embd_scale, ple_proj_scale, ple_combine_scale;
    layer_geometry *layers;     /* n_layers entries */
} model_geometry;

#endif
