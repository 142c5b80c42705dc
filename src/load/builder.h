/* The geometry builder's shared state and its tensor helpers, used by build.c and by each layer
 * kind's and the feed-forward's part of the builder (build_attention.c, build_ffn.c): find a
 * role's tensor in the container, attach it as a matrix or a vector with its shape checked, and
 * mark it consumed (a tensor nobody consumes refuses the model). */
#ifndef TS_LOAD_BUILDER_H
#define TS_LOAD_BUILDER_H
#include "load/tensor_source.h"

typedef struct builder {
    ts_model *m;
    const arch_desc *a;
    const model_hparams *hp;
    tensor_source *src;
    const container_rules *rules;   /* how the model's container states its family */
    int window;                 /* the sliding window, with the container's default and switches applied */
    const float *rope_freqs;    /* model-wide RoPE divisors (GGUF rope_freqs), NULL: none */
    int64_t n_rope_freqs;
    bool *used;                 /* per entry of src->dir: consumed */
    ts_error *err;
} builder;

/* The entry of a role, or NULL (name gets the container's name for messages, "" when the
 * container has no name for the role); expert: the expert a per-expert name holds, -1 for none. */
const tensor_entry *builder_find_expert(builder *b, int role, int layer, int expert, char *name, size_t cap);
const tensor_entry *builder_find(builder *b, int role, int layer, char *name, size_t cap);
void builder_consume(builder *b, const tensor_entry *t);

/* A matrix of rows x cols (rows < 0: any number; a stacked 3-D tensor counts its rows over the
 * outer dimension). Absent and optional: w->data = NULL. */
int builder_matrix_expert(builder *b, weight *w, int role, int layer, int expert, int64_t rows, int64_t cols, bool required);
int builder_matrix(builder *b, weight *w, int role, int layer, int64_t rows, int64_t cols, bool required);
/* n floats (owned f32); norm: the container's norm convention (Gemma's 1 + w) applies. */
int builder_vector(builder *b, const float **out, int role, int layer, int64_t n, bool norm, bool required);
/* The recurrent kinds' tensors: a depthwise convolution's taps of `channels` channels reading K
 * positions, stored with the taps innermost ([channels][K], each channel's oldest first; refused by
 * name otherwise), kept tap-major ([K][channels]: one position's channels are one run); and n decay rates, -exp(A_log)
 * where the container stores A_log, each checked negative. */
int builder_conv_taps(builder *b, const float **out, int role, int layer, int64_t channels, int K);
int builder_decay_rates(builder *b, const float **out, int layer, int n);
/* Restores split-half row order of a permuted attn_q / attn_k into an owned copy. */
int builder_unpermute(builder *b, weight *w, int n_heads);

/* rows [first, first + n) of w, in place */
static inline weight builder_row_view(const weight *w, int64_t first, int64_t n) {
    weight v = *w;
    v.rows = n;
    v.data = w->data + (size_t)first * w->row_bytes;
    return v;
}

#endif
