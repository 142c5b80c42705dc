/* The per-layer geometry table: everything the forward needs to know about a model, normalized by
 * the loaders from whatever container and convention the weights came in. The forward and the KV
 * cache read only this table; no architecture has a forward of its own. */
#ifndef TS_MODEL_GEOMETRY_H
#define TS_MODEL_GEOMETRY_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "kernels/weight.h"

enum layer_kind { LAYER_FULL = 0, LAYER_SLIDING = 1 };
enum ffn_activation { ACT_SILU = 0, ACT_GELU_TANH = 1 };

typedef struct layer_geometry {
    int kind;                   /* enum layer_kind */
    int n_heads, n_kv_heads, head_dim;
    int window;                 /* sliding layers: attends to the last `window` positions; 0 = all */
    float attn_scale;           /* multiplies q.k */
    /* RoPE, split-half (rotate_half) form: dimension i pairs with i + rope_dim/2 and rotates by
     * pos * theta^(-2i/rope_dim) / freq_factor[i], for i < rope_pairs; pairs beyond stay put. */
    float rope_theta;
    int rope_dim;               /* span of the split-half pairing (normally head_dim) */
    int rope_pairs;             /* pairs that rotate (rope_dim/2 for full rotary) */
    float rope_pos_scale;       /* linear RoPE scaling: position multiplied by this (1 = none) */
    const float *rope_freq_factors;  /* NULL or rope_dim/2 divisors */
    int kv_source;              /* the layer whose KV cache this layer uses (itself unless shared) */
    bool v_from_k;              /* no V projection: V is K's projection before k_norm and RoPE */
    bool v_norm;                /* V goes through a weightless RMSNorm (Gemma 4) */
    int ffn_dim;
    int activation;             /* enum ffn_activation */
    float output_scale;         /* the layer's output multiplied by this (1 = none) */
    /* norm weights, f32, with any "+1" convention already applied; NULL when absent */
    const float *attn_norm, *post_attn_norm, *ffn_norm, *post_ffn_norm, *q_norm, *k_norm;
    weight wq, wk, wv, wo, w_gate, w_up, w_down;
    /* per-layer embeddings (Gemma 4 PLE): x += ple_post_norm(ple_proj(gelu(ple_gate x) * pli)) */
    weight ple_gate, ple_proj;
    const float *ple_post_norm;
} layer_geometry;

typedef struct model_geometry {
    char arch[32];
    int n_layers, hidden, n_vocab, n_ctx_train;
    float norm_eps;
    float embed_scale;          /* embeddings multiplied by this (Gemma: sqrt(hidden)); 1 = none */
    float final_softcap;        /* logits = c * tanh(logits / c); 0 = off */
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
