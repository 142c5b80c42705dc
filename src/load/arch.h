/* The architecture table: one row per model family with everything that tells it from the others:
 * what the family is (activation, norm layout, attention scale, ...) and how each container states
 * it (container_rules: tensor names, norm storage, Q/K row order, the converter's defaults). The
 * geometry builder (load/build.c) turns a row + the hyper-parameters (load/hparams.h) + tensors
 * into the geometry table. */
#ifndef TS_MODEL_ARCH_H
#define TS_MODEL_ARCH_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "load/geometry.h"

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
    ROLE_SHEXP_GATE, ROLE_SHEXP_UP, ROLE_SHEXP_DOWN, ROLE_SHEXP_GATE_INP,
    ROLE_SHEXP_GATE_UP, ROLE_EXP_SELECT_BIAS,
    /* multi-head latent attention: the low-rank q path, the compressed KV's projection and norm,
     * its decompression (GGUF: split and transposed into k_b and v_b; HF: one kv_b of both) */
    ROLE_MLA_Q_A, ROLE_MLA_Q_A_NORM, ROLE_MLA_Q_B, ROLE_MLA_KV_A, ROLE_MLA_KV_A_NORM,
    ROLE_MLA_K_B, ROLE_MLA_V_B, ROLE_MLA_KV_B,
    /* recurrent layers: the gated DeltaNet's projections, and the state-space tensors the recurrent
     * kinds share (the convolution's taps, the decay, the time-step bias, the gated norm, the output) */
    ROLE_DELTA_QKV, ROLE_DELTA_Z, ROLE_DELTA_BETA, ROLE_DELTA_ALPHA,
    ROLE_SSM_CONV, ROLE_SSM_A, ROLE_SSM_DT_BIAS, ROLE_SSM_NORM, ROLE_SSM_OUT,
    /* the gated short convolution: its input projection [B | C | X], its taps, its output */
    ROLE_SHORTCONV_IN, ROLE_SHORTCONV_CONV, ROLE_SHORTCONV_OUT,
    /* Mamba-2: the one input projection [z | x B C | dt], the convolution's bias, the skip D */
    ROLE_SSM_IN, ROLE_SSM_CONV_BIAS, ROLE_SSM_D,
    ROLE_COUNT
};
#define ROLE_FIRST_LAYER ROLE_ATTN_NORM

/* A container's tensor names: printf formats with %d for the layer (and a second %d for the expert
 * of one-tensor-per-expert names); Hugging Face names are relative to the model prefix ("model." or
 * "model.language_model."). NULL = the family has no such tensor. */
typedef struct tensor_names { const char *role[ROLE_COUNT]; } tensor_names;
/* One departure from the standard GGUF names (name NULL: the arch has no such tensor); a list of
 * them ends with role -1. */
typedef struct role_name { int role; const char *name; } role_name;

enum norm_layout {
    NORMS_PRE,        /* attn_norm before attention, ffn_norm before the MLP (Llama) */
    NORMS_SANDWICH,   /* those plus post_attn_norm and post_ffn_norm on the outputs (Gemma) */
    NORMS_POST,       /* only the output norms: the sublayers read the raw residual (OLMo 2) */
};
enum qk_norm_kind {
    QK_NORM_NONE, QK_NORM_HEAD, QK_NORM_WHOLE,
    QK_NORM_HEAD_IF_PRESENT,   /* per head where the file has the tensors (GLM-4.5's use_qk_norm) */
};
enum attn_scale_rule {
    SCALE_HEAD_DIM,   /* 1/sqrt(head_dim), or the container's explicit scale (Granite) */
    SCALE_QPAS,       /* query_pre_attn_scalar^-0.5 (when not stated: container_rules.scale_hidden_layers) */
    SCALE_ONE,        /* 1 (Gemma 4: q_norm/k_norm carry the scale) */
};
/* Whether RoPE scaling (linear or YaRN) reaches sliding-window layers. */
enum swa_scaling { SWA_SCALED, SWA_SCALED_UNLESS_LOCAL_BASE, SWA_UNSCALED };

/* How one container states a family: its tensor names and the conventions its converter or its
 * modelling code follow. Each architecture row has one for GGUF (llama.cpp's semantics) and one for
 * Hugging Face folders (transformers' semantics); the builder reads the one of the container the
 * model came in, and never asks which container that was. */
typedef struct container_rules {
    const tensor_names *names;           /* tensor names (NULL: the container's standard names) */
    const struct role_name *renames; /* departures from them */
    bool qk_permuted;                /* attn_q/attn_k rows are permuted for llama.cpp's interleaved-pair RoPE */
    bool norm_plus_one;              /* norm weights w scale by (1 + w) (HF Gemma 2/3; GGUF stores 1 + w) */
    bool tied_by_default;            /* no tie_word_embeddings stated: the head is the embedding */
    bool window_every_layer;         /* a window with no layer pattern slides every layer */
    int sliding_period;              /* a window with no layer pattern: the last layer of every this many is full (0: none) */
    int default_window;              /* the window when none is stated (0: none) */
    bool window_ignored;             /* the window is never applied (llama.cpp's phi3) */
    int nope_period;                 /* layers with (il + 1) % period == 0 have no RoPE (0: none) */
    int scale_hidden_layers;         /* SCALE_QPAS with no query_pre_attn_scalar: a model of this many layers
                                        scales by (hidden/heads)^-0.5, others by head_dim^-0.5 (llama.cpp) */
    bool yarn_betas;                 /* YaRN reads yarn_beta_* and yarn_log_multiplier (llama.cpp's mistral3) */
    bool gating_renorm;              /* the chosen experts' weights are renormalized unless the file says */
    bool experts_input_major;        /* experts stacked [E, in, out] with gate/up interleaved (HF gpt-oss) */
    bool v_optional_any_layer;       /* with k_eq_v_full, any layer may lack V (else only full layers of a
                                        config stating attention_k_eq_v) */
    bool ssm_a_log;                  /* the recurrent layers' decay is stored as A_log (HF), not -exp(A_log) */
    bool delta_v_tiled;              /* DeltaNet value head m reads key head m mod Hk (llama.cpp's converter
                                        reorders them), else m / (Hv / Hk) (HF's grouped order) */
    bool ssm_norm_per_group;         /* Mamba-2's gated RMSNorm normalizes each of the n_groups slices of
                                        d_inner on its own (llama.cpp), else all of d_inner at once (HF) */
    bool rope_switch_finetuned;      /* rope.scaling.finetuned switches RoPE: false = none, absent = RoPE
                                        (llama.cpp's granitehybrid) */
    bool nope_by_default;            /* no RoPE unless the config states position_embedding_type "rope"
                                        (transformers' GraniteMoeHybrid) */
    bool gating_func_read;           /* the file's gating function (GGUF expert_gating_func) chooses the experts'
                                        gating; else the family's, whatever the file says (llama.cpp reads it
                                        for deepseek2 and glm4moe only) */
    bool unstated_gating_softmax;    /* no gating function stated: softmax, not the family's (llama.cpp's deepseek2) */
    bool mla_yarn_kq_scale;          /* latent attention with YaRN: the attention scale takes YaRN's magnitude
                                        squared; the readers resolve it (rope_scaling.kq_mscale) */
    float lora_norm_eps;             /* latent attention's q_a/kv_a norms use this epsilon (HF's 1e-6), 0: the model's */
    bool group_fill_zero;            /* group-limited routing: the dropped groups' experts score 0, not -inf
                                        (transformers' DeepseekV3 and Glm4Moe) */
    bool kv_b_fused;                 /* latent attention's decompression is one kv_b_proj [nh x (d_n + d_v), r]
                                        (HF), not k_b / v_b split and transposed (GGUF) */
} container_rules;

typedef struct arch_desc {
    const char *name;                /* GGUF general.architecture; the geometry's arch */
    const char *hf_model_types[4];   /* config.json model_type values */
    int activation;                  /* enum ffn_activation */
    int norms;                       /* enum norm_layout */
    int qk_norm;                     /* enum qk_norm_kind */
    int attn_scale;                  /* enum attn_scale_rule */
    int swa_scaling;                 /* enum swa_scaling */
    bool embed_scale_sqrt;           /* embeddings x sqrt(hidden) */
    bool v_norm;                     /* V through a weightless RMSNorm */
    bool k_eq_v_full;                /* full-attention layers may have no V: K serves as V */
    float default_theta_swa;         /* sliding layers' RoPE base when none is stated (0: rope_theta) */
    bool attn_out_gate;              /* attention heads are gated: q_proj rows [query | gate] per head */
    /* layer kinds beside attention */
    int recurrent_kind;              /* the family's recurrent layer kind (enum layer_kind; 0: none) */
    int attention_kind;              /* the kind of its attention layers (0: softmax attention over
                                        per-head keys; LAYER_MLA: latent attention) */
    int full_attention_interval;     /* recurrent families: with no stated layer pattern, layer il is attention
                                        iff (il + 1) % this == 0 */
    /* mixture of experts */
    int gating;                      /* enum moe_gating */
    int expert_activation;           /* enum ffn_activation of the experts */
    container_rules gguf, hf;
} arch_desc;

const arch_desc *arch_by_gguf_name(const char *name, size_t len);
const arch_desc *arch_by_hf_model_type(const char *model_type);
/* The name format of a role in a container's rules ("blk.%d.attn_q.weight"), or NULL when it has
 * none: the rules' names (GGUF: llama.cpp's standard names unless the rules give others), with
 * the rules' departures applied. */
const char *arch_tensor_name(const container_rules *r, int container, int role);
/* The architectures the table knows, comma-separated, for messages. */
void arch_known_list(char *buf, size_t cap);

/* What a tensor nobody consumed is for, when the engine can tell ("mixture-of-experts layers"):
 * for the refusal message. NULL when unknown. */
const char *arch_tensor_purpose(const char *name);

#endif
