/* The architecture table: one row per model family with everything that tells it from the others
 * (its conventions, its tensor names in Hugging Face folders, the GGUF keys llama.cpp reads for
 * it), and the container-neutral hyper-parameters the loaders read into. The geometry builder
 * (model/build.c) turns a row + hyper-parameters + tensors into the geometry table. */
#ifndef TS_MODEL_ARCH_H
#define TS_MODEL_ARCH_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* ---- the tensors a model can have, by role (one name per container per role) ---- */
enum tensor_role {
    /* model-wide */
    ROLE_TOKEN_EMBD, ROLE_OUTPUT, ROLE_OUTPUT_NORM, ROLE_ROPE_FREQS,
    ROLE_ROPE_FACTORS_SHORT, ROLE_ROPE_FACTORS_LONG,
    ROLE_PLE_EMBD, ROLE_PLE_MODEL_PROJ, ROLE_PLE_PROJ_NORM,
    /* per layer (the name holds the layer number) */
    ROLE_ATTN_NORM, ROLE_ATTN_Q, ROLE_ATTN_K, ROLE_ATTN_V, ROLE_ATTN_QKV, ROLE_ATTN_OUT,
    ROLE_ATTN_Q_BIAS, ROLE_ATTN_K_BIAS, ROLE_ATTN_V_BIAS, ROLE_ATTN_OUT_BIAS,
    ROLE_ATTN_Q_NORM, ROLE_ATTN_K_NORM, ROLE_POST_ATTN_NORM,
    ROLE_FFN_NORM, ROLE_FFN_GATE, ROLE_FFN_UP, ROLE_FFN_GATE_UP, ROLE_FFN_DOWN, ROLE_POST_FFN_NORM,
    ROLE_LAYER_SCALE, ROLE_PLE_GATE, ROLE_PLE_PROJ, ROLE_PLE_POST_NORM, ROLE_ATTN_SINKS,
    /* mixture of experts: the router, the experts (stacked 3-D, or one tensor per expert when the
     * name holds a second %d), and Gemma 4's extra norms around the expert block */
    ROLE_ROUTER, ROLE_ROUTER_BIAS, ROLE_ROUTER_SCALE,
    ROLE_EXP_GATE, ROLE_EXP_UP, ROLE_EXP_GATE_UP, ROLE_EXP_DOWN,
    ROLE_EXP_GATE_BIAS, ROLE_EXP_UP_BIAS, ROLE_EXP_GATE_UP_BIAS, ROLE_EXP_DOWN_BIAS, ROLE_EXP_SCALE,
    ROLE_MOE_IN_NORM, ROLE_MOE_OUT_NORM, ROLE_DENSE_OUT_NORM,
    ROLE_COUNT
};
#define ROLE_FIRST_LAYER ROLE_ATTN_NORM

/* Hugging Face names: printf formats with %d for the layer, relative to the model prefix
 * ("model." or "model.language_model."); NULL = the family has no such tensor. */
typedef struct hf_names { const char *role[ROLE_COUNT]; } hf_names;
/* One departure from the standard GGUF names (name NULL: the arch has no such tensor); a list of
 * them ends with role -1. */
typedef struct role_name { int role; const char *name; } role_name;

enum norm_layout {
    NORMS_PRE,        /* attn_norm before attention, ffn_norm before the MLP (Llama) */
    NORMS_SANDWICH,   /* those plus post_attn_norm and post_ffn_norm on the outputs (Gemma) */
    NORMS_POST,       /* only the output norms: the sublayers read the raw residual (OLMo 2) */
};
enum qk_norm_kind { QK_NORM_NONE, QK_NORM_HEAD, QK_NORM_WHOLE };
/* How a router's logits choose and weigh the experts. */
enum moe_gating {
    GATING_SOFTMAX_TOPK,   /* softmax over every expert, the top k, their weights renormalized or not */
    GATING_TOPK_SOFTMAX,   /* the top k logits, softmax over those k (gpt-oss) */
};
enum attn_scale_rule {
    SCALE_HEAD_DIM,   /* 1/sqrt(head_dim), or the container's explicit scale (Granite) */
    SCALE_QPAS,       /* HF: query_pre_attn_scalar^-0.5; GGUF: as llama.cpp (see gguf_scale_hidden_layers) */
    SCALE_ONE,        /* 1 (Gemma 4: q_norm/k_norm carry the scale) */
};
/* Whether RoPE scaling (linear or YaRN) reaches sliding-window layers. */
enum swa_scaling { SWA_SCALED, SWA_SCALED_UNLESS_LOCAL_BASE, SWA_UNSCALED };

typedef struct arch_desc {
    const char *name;                /* GGUF general.architecture; the geometry's arch */
    const char *hf_model_types[4];   /* config.json model_type values */
    const hf_names *hf;              /* safetensors tensor names */
    const struct role_name *gguf_renames;   /* where this GGUF arch departs from the standard names */
    int activation;                  /* enum ffn_activation */
    int norms;                       /* enum norm_layout */
    int qk_norm;                     /* enum qk_norm_kind */
    int attn_scale;                  /* enum attn_scale_rule */
    int swa_scaling;                 /* enum swa_scaling */
    bool gguf_qk_permuted;           /* llama.cpp's converter permuted attn_q/attn_k rows (SPEC 1.1) */
    bool hf_norm_plus_one;           /* HF RMSNorm scales by (1 + w) (SPEC 1.4) */
    bool embed_scale_sqrt;           /* embeddings x sqrt(hidden) */
    bool v_norm;                     /* V through a weightless RMSNorm */
    bool k_eq_v_full;                /* full-attention layers may have no V (HF attention_k_eq_v) */
    bool hf_window_every_layer;      /* HF: a sliding_window with no layer pattern slides every layer */
    bool hf_tied_by_default;         /* HF: no tie_word_embeddings means tied */
    bool gguf_yarn_betas;            /* llama.cpp reads rope.scaling.yarn_beta_* / yarn_log_multiplier */
    int gguf_sliding_period;         /* llama.cpp's sliding period when the GGUF has no pattern (0: none) */
    int hf_sliding_period;           /* HF's default sliding_window_pattern (0: none) */
    int gguf_nope_period;            /* llama.cpp: layers with (il + 1) % period == 0 have no RoPE */
    int gguf_scale_hidden_layers;    /* llama.cpp: a model of this many layers scales by (hidden/heads)^-0.5 */
    int gguf_default_window;         /* llama.cpp's sliding_window when the key is absent */
    bool gguf_window_ignored;        /* llama.cpp does not slide this arch whatever the GGUF says */
    float default_theta_swa;         /* sliding layers' RoPE base when none is stated (0: rope_theta) */
    /* mixture of experts */
    int gating;                      /* enum moe_gating */
    bool gguf_gating_renorm;         /* llama.cpp renormalizes the chosen experts' weights */
    int expert_activation;           /* enum ffn_activation of the experts */
    bool hf_experts_input_major;     /* HF stacks experts as [E, in, out] with gate/up interleaved (gpt-oss) */
} arch_desc;

const arch_desc *arch_by_gguf_name(const char *name, size_t len);
const arch_desc *arch_by_hf_model_type(const char *model_type);
/* The standard GGUF name of a role for this arch ("blk.%d.attn_q.weight"). */
const char *arch_gguf_name(const arch_desc *a, int role, char *buf, size_t cap);
/* The architectures the table knows, comma-separated, for messages. */
void arch_known_list(char *buf, size_t cap);

/* What a tensor nobody consumed is for, when the engine can tell ("mixture-of-experts layers"):
 * for the refusal message. NULL when unknown. */
const char *arch_tensor_purpose(const char *name);

/* ---- hyper-parameters, as read from a GGUF's metadata or a config.json ---- */

enum rope_scaling_kind { ROPE_PLAIN, ROPE_LINEAR, ROPE_YARN, ROPE_LLAMA3, ROPE_LONGROPE };

typedef struct rope_scaling {
    int kind;                      /* enum rope_scaling_kind */
    double factor;                 /* s */
    int orig_ctx;                  /* the context the model was trained at before scaling */
    double beta_fast, beta_slow;   /* YaRN correction range (32, 1) */
    bool truncate;                 /* YaRN: round the correction dims (llama.cpp always; HF by default) */
    double low_freq_factor, high_freq_factor;   /* llama3 */
    const float *short_factor, *long_factor;    /* LongRoPE divisors, n_factors each */
    int n_factors;
    int long_round;                /* LongRoPE: the context is rounded up to this before the comparison */
    double mscale;                 /* the cos/sin multiplier, resolved by the container's rules */
    double temp_beta;              /* Llama 4 attention temperature (0: off); length orig_ctx */
} rope_scaling;

#define HP_MAX_LAYERS 4096

typedef struct model_hparams {
    int n_layers, hidden, n_vocab, n_ctx_train, ffn_dim;
    float norm_eps;
    int n_heads, n_kv_heads;           /* every layer's, unless the per-layer arrays say */
    const int *layer_n_heads, *layer_n_kv_heads;   /* NULL or n_layers values */
    int n_kv_heads_full;               /* full-attention layers' KV heads (0: n_kv_heads) */
    int head_dim, head_dim_swa;        /* 0: hidden / n_heads; swa 0: head_dim */
    int rope_dim, rope_dim_swa;        /* the RoPE pairing span (0: the head dim) */
    float rope_fraction, rope_fraction_swa;   /* proportional RoPE: the fraction of pairs that rotate (0: all) */
    float rope_theta, rope_theta_swa;
    bool has_theta_swa;                /* a local RoPE base is stated */
    rope_scaling scaling;
    int window;                        /* sliding window (0: none) */
    int sliding_period;                /* a layer pattern by period (0: not given) */
    const bool *layer_sliding;         /* a layer pattern per layer (NULL: not given) */
    const bool *layer_nope;            /* layers without RoPE (NULL: none given) */
    int n_shared_kv;                   /* the last n layers reuse earlier layers' KV */
    bool k_eq_v;                       /* HF attention_k_eq_v */
    float attn_scale;                  /* explicit (Granite's attention multiplier); 0: the arch's rule */
    double query_pre_attn_scalar;      /* 0: not given */
    float embed_scale;                 /* explicit (Granite); 0: the arch's rule */
    float residual_scale, logit_scale; /* 0: none */
    float attn_softcap, final_softcap; /* 0: off */
    int ple_dim;
    int n_experts, n_experts_used, expert_ffn_dim;   /* 0: no mixture of experts */
    int gating_renorm;                 /* -1: the arch's rule; 0/1: stated (HF norm_topk_prob) */
    int tie;                           /* 1: the head is the embedding (an output tensor is ignored);
                                          0: untied (the output tensor is required); -1: as the file has it */
    bool hf;                           /* read from a config.json (HF semantics), else a GGUF (llama.cpp's) */
} model_hparams;

#endif
