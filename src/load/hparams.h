/* The hyper-parameters: what a model states about itself, in one declarative table (hparams.c) that
 * both container readers run from. Each row names a value's GGUF metadata key (under "<arch>.") and
 * its Hugging Face config.json path(s), its type and range, its default per container, and whether
 * the engine uses it, knows it to change nothing (with the reason, for --info) or refuses it. A key
 * of either container that no row names is refused by name, the same way for both: a model the
 * engine does not fully understand is never answered.
 *
 * The readers fill model_hparams with what is *stated*; the geometry builder (build.c) decides what
 * it means (defaults that depend on other values, the family's conventions). So a family that
 * brings a new key adds a row here and the one place in the builder that uses it. */
#ifndef TS_LOAD_HPARAMS_H
#define TS_LOAD_HPARAMS_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "load/model.h"

#define HP_MAX_LAYERS 4096

enum container { CONTAINER_GGUF, CONTAINER_HF, CONTAINER_COUNT };

enum rope_scaling_kind { ROPE_PLAIN, ROPE_LINEAR, ROPE_YARN, ROPE_LLAMA3, ROPE_LONGROPE };

/* A layer's type as a config names it (HF layer_types, GGUF's per-layer sliding flags). */
enum layer_type { LAYER_TYPE_FULL = 0, LAYER_TYPE_SLIDING = 1, LAYER_TYPE_LINEAR = 2, LAYER_TYPE_CONV = 3, LAYER_TYPE_MAMBA = 4 };

typedef struct rope_scaling {
    int kind;                      /* enum rope_scaling_kind */
    double factor;                 /* s */
    int orig_ctx;                  /* the context the model was trained at before scaling */
    double beta_fast, beta_slow;   /* YaRN correction range (32, 1) */
    int truncate;                  /* YaRN: round the correction dims (llama.cpp always; HF by default) */
    double low_freq_factor, high_freq_factor;   /* llama3 */
    const float *short_factor, *long_factor;    /* LongRoPE divisors, n_factors each */
    int n_factors, n_long_factors;              /* as read (the readers check they are equal) */
    int long_round;                /* LongRoPE: the context is rounded up to this before the comparison */
    double mscale;                 /* the cos/sin multiplier, resolved by the container's rules */
    double kq_mscale;              /* latent attention (mla_yarn_kq_scale): the attention scale's multiplier, 0: 1 */
    double temp_beta;              /* Llama 4 attention temperature (0: off); length orig_ctx */
    /* as stated, for the container's mscale rule (-1: not stated) */
    double attn_factor;            /* GGUF rope.scaling.attn_factor (multiplies); HF attention_factor (replaces) */
    double yarn_log_multiplier;    /* GGUF */
    double mscale_stated, mscale_all_dim;   /* HF */
} rope_scaling;

/* Container-neutral hyper-parameters: what the file states (0 or -1 where it states nothing, as
 * each field says); the builder applies the defaults and the family's rules. */
typedef struct model_hparams {
    int n_layers, hidden, n_vocab;     /* n_vocab 0: the embedding's rows */
    int n_ctx_train;                   /* 0: not stated */
    int ffn_dim;                       /* 0: from the tensors */
    float norm_eps;
    int n_heads, n_kv_heads;           /* every layer's, unless the per-layer arrays say; kv 0: n_heads */
    const int *layer_n_heads, *layer_n_kv_heads;   /* NULL or n_layers values */
    int n_kv_heads_full;               /* full-attention layers' KV heads (0: n_kv_heads) */
    int head_dim;                      /* 0: hidden / n_heads */
    int head_dim_swa, head_dim_full;   /* sliding / full layers' own head size (0: head_dim) */
    int value_dim, value_dim_swa;      /* stated value head sizes (0: as the keys) */
    int rope_dim, rope_dim_swa;        /* the RoPE pairing span (0: the head dim) */
    double rope_partial;               /* HF partial_rotary_factor: the span is head_dim x this (0: all) */
    float rope_fraction, rope_fraction_swa;   /* proportional RoPE: the fraction of pairs that rotate (0: all) */
    float rope_theta, rope_theta_swa;  /* swa 0: not stated */
    rope_scaling scaling;
    int window;                        /* sliding window; -1: not stated (the container's default) */
    int use_sliding_window;            /* HF: -1 not stated, 0 the window is off, 1 on */
    int max_window_layers;             /* HF: sliding layers by depth (0: not stated) */
    int sliding_period;                /* a layer pattern by period (0: not given) */
    const int *layer_types;            /* enum layer_type per layer (NULL: not given) */
    const int *layer_rope;             /* per layer 1: RoPE, 0: none (NULL: not given) */
    int nope_period;                   /* layers (il + 1) % period == 0 have no RoPE (0: not given) */
    int n_shared_kv;                   /* the last n layers reuse earlier layers' KV */
    int k_eq_v;                        /* HF attention_k_eq_v: -1 not stated, 0, 1 */
    float attn_scale;                  /* explicit (Granite's attention multiplier); 0: the family's rule */
    double query_pre_attn_scalar;      /* 0: not given */
    float embed_scale;                 /* explicit (Granite); 0: the family's rule */
    float residual_scale, logit_scale; /* 0: none */
    float attn_softcap, final_softcap; /* 0: off */
    int ple_dim;
    int n_experts, n_experts_used, expert_ffn_dim;   /* 0: no mixture of experts; ffn 0: ffn_dim */
    int gating_renorm;                 /* -1: the family's rule; 0/1: stated */
    int gating_func;                   /* llama.cpp expert_gating_func (1 softmax, 2 sigmoid); 0: not stated */
    int shared_ffn_dim;                /* a shared expert's width (0: none stated) */
    int n_shared_experts;              /* shared experts (their width n x expert_ffn_dim); 0: not stated */
    float routed_scale;                /* the chosen experts' weights multiplied by this; 0: not stated */
    int n_group, topk_group;           /* DeepSeek's group-limited selection; 0: not stated */
    int use_qk_norm;                   /* HF (GLM-4.5): -1 not stated, 0, 1 */
    /* multi-head latent attention (0: not stated) */
    int q_lora_rank, kv_lora_rank;
    int mla_nope_dim, mla_rope_dim, mla_v_dim;   /* HF: qk_nope_head_dim, qk_rope_head_dim, v_head_dim */
    int mla_key_dim, mla_value_dim;    /* GGUF key_length_mla (d_n + d_r), value_length_mla (d_v) */
    int rope_interleave;               /* HF: -1 not stated (true), 0, 1 */
    /* recurrent layers */
    int full_attention_interval;       /* layer il is attention iff (il + 1) % this == 0 (0: not stated) */
    const int *layer_recurrent;        /* per layer 1: the family's recurrent kind (NULL: not given) */
    int ssm_conv_kernel;               /* the causal convolution's width */
    int ssm_state_size;                /* DeltaNet: dk (= dv in GGUF); Mamba-2: N */
    int ssm_head_v;                    /* DeltaNet: dv as HF states it (0: ssm_state_size); Mamba-2: head size */
    int ssm_group_count;               /* DeltaNet: key heads; Mamba-2: B/C groups */
    int ssm_time_step_rank;            /* DeltaNet: value heads; Mamba-2: heads */
    int ssm_inner_size;                /* DeltaNet: value heads x dv (a check); Mamba-2: d_inner */
    int ssm_expand;                    /* Mamba-2 (HF): d_inner = this x hidden (0: not stated) */
    int ssm_conv_bias;                 /* Mamba-2 (HF): the convolution has a bias; -1: not stated (required) */
    int rope_finetuned;                /* GGUF rope.scaling.finetuned: -1 not stated, 0, 1 (the RoPE switch
                                          where the family's rules say so) */
    int position_rope;                 /* HF position_embedding_type: -1 not stated, 0 "nope", 1 "rope" */
    const int *rope_sections;          /* multimodal RoPE sections (pairs per position stream), NULL: none */
    int n_rope_sections;
    int n_nextn, n_mtp;                /* multi-token-prediction blocks after the model's layers (GGUF counts
                                          them in block_count; HF does not) */
    int activation;                    /* enum ffn_activation the config names; -1: not stated */
    int tie;                           /* 1: the head is the embedding (an output tensor is ignored);
                                          0: untied (the output tensor is required); -1: not stated */
} model_hparams;

/* ---- the table ---- */

enum hp_type {
    HP_INT, HP_FLOAT, HP_DOUBLE,
    HP_BOOL,         /* stored as an int: 0 or 1 */
    HP_CHOICE,       /* a string, one of the row's choices, stored as its value */
    HP_LAYER_INTS,   /* one integer for every layer (into `at`), or an array of one per layer (into `at2`) */
    HP_LAYER_CHOICES,/* an array of one string per layer, each a choice */
    HP_FLOATS,       /* a list of numbers (into `at`, a const float *; its length into `at2`) */
    HP_INTS,         /* a list of integers (into `at`, a const int *; its length into `at2`) */
    HP_OBJECT,       /* an object whose members are rows of their own ("rope_scaling.factor") */
    HP_ANY,          /* any value (read elsewhere, or not at all) */
};
enum hp_use {
    HP_USED,         /* read into model_hparams (or by the reader: model_type, token ids) */
    HP_INERT,        /* known to change nothing the engine computes: listed in --info with why */
    HP_REFUSED,      /* names a feature the engine lacks: refused unless null, false or 0 */
};

typedef struct hp_choice { const char *name; int value; } hp_choice;

typedef struct hparam {
    /* the key in each container: GGUF, a suffix of "<arch>."; HF, a config.json path, "a.b" for a
     * member of an object, "x|y" for alternatives (the first present wins), "{p,q}.c" for the same
     * member under several prefixes. NULL: the container has no such key. */
    const char *key[CONTAINER_COUNT];
    int type;                   /* enum hp_type */
    int use;                    /* enum hp_use */
    size_t at, at2;             /* HP_AT(field) of model_hparams, 0: not stored */
    double lo, hi;              /* the range a number (or each per-layer value) must be in */
    bool lo_open;               /* lo itself excluded */
    double def[CONTAINER_COUNT];/* the value when absent (numbers and bools) */
    const hp_choice *choices;   /* HP_CHOICE, HP_LAYER_CHOICES: the strings understood, NULL-terminated */
    const char *why;            /* HP_INERT, HP_REFUSED: the reason; else shown when a value is refused */
} hparam;

#define HP_AT(field) (offsetof(model_hparams, field) + 1)

/* ---- what a container offers the reader ---- */

enum hp_value_kind { HPV_ABSENT, HPV_NULL, HPV_NUMBER, HPV_BOOL, HPV_STRING, HPV_ARRAY, HPV_OBJECT };

typedef struct hp_value {
    int kind;                   /* enum hp_value_kind */
    double number;              /* HPV_NUMBER */
    bool boolean;               /* HPV_BOOL */
    const char *str;            /* HPV_STRING (not NUL-terminated) */
    size_t len;
    size_t n;                   /* HPV_ARRAY: elements; HPV_OBJECT: members */
} hp_value;

typedef struct hparam_source {
    int container;              /* enum container */
    const char *path;           /* the file, for messages */
    const char *what;           /* "metadata key", "config field" */
    const char *prefix;         /* shown before a key in messages ("llama."), or "" */
    void *ctx;
    /* The value at a key (one path, no alternatives); index >= 0: that element of an array. */
    void (*get)(const struct hparam_source *s, const char *key, long index, hp_value *out);
} hparam_source;

/* Reads every row the container has a key for into hp (the defaults where absent), checking type
 * and range, refusing what the table refuses and noting what it knows to be inert. */
int hparams_read(const hparam_source *src, ts_model *m, model_hparams *hp, ts_error *err);

/* The row a container's key belongs to (a GGUF suffix, or a config.json path such as
 * "rope_scaling.factor"), or NULL: the key is unknown and the model must be refused. */
const hparam *hparams_find(int container, const char *key);
/* Refuses an unknown key by name: "<path>: <what> '<key>' is not understood by this engine; ...". */
int hparams_refuse_unknown(const hparam_source *src, const char *key, ts_error *err);

#endif
