/* The forward pass: one function that reads the geometry table and runs any model in it. */
#ifndef TS_MODEL_FORWARD_H
#define TS_MODEL_FORWARD_H
#include "load/model.h"
#include "run/kv_cache.h"
#include "run/moe.h"
#include "core/thread_pool.h"
#include "kernels/matmul.h"

/* Positions evaluated together; longer batches are split into chunks of this many. */
#define FORWARD_MAX_BATCH 64

struct ts_context {
    ts_model *m;
    int n_ctx;
    int pos;                 /* positions in the cache */
    int high_water;          /* the most positions ever held since the cache was last emptied */
    bool rope_long;          /* LongRoPE: this context uses the long factor list */
    kv_cache kv;
    thread_pool *pool;
    matmul_ctx mm;           /* the pool, the model's kernel set, quantized-activation scratch */
    /* scratch, sized for FORWARD_MAX_BATCH positions at the largest layer */
    float *x, *xn, *q, *k, *v, *att, *gate, *up, *tmp;
    float *attn_scratch;     /* per thread, attn_scratch_stride floats: a chunk's attention weights
                                (+ 1 for a sink) and values for each head of a group, the merge
                                state of a task */
    size_t attn_scratch_stride;
    float *attn_part;        /* a decoded token's chunk parts: per head and chunk, max, sum, values */
    moe_scratch moe;         /* the experts' scratch, when a layer has experts */
    int *expert_usage;       /* NULL, or n_layers x MOE_MAX_EXPERTS counts of chosen experts (tests) */
    uint64_t weight_bytes;   /* weight bytes the matrix products have read (mm.weight_bytes counts here) */
    float *pli, *ple_tmp, *ple_row;   /* per-layer embeddings (Gemma 4), NULL when unused */
};

/* ts_context_new_opts with a choice: sliding_rings false gives sliding layers a full-length cache
 * (tests use it as the independent path for the ring buffers). opt NULL: the defaults. */
int context_new(ts_model *m, const ts_context_options *opt, bool sliding_rings, ts_context **out,
                ts_error *err);

/* The chunks of keys a query that sees n_keys positions is computed in (forward.c). */
int forward_attention_chunks(int n_keys);
/* Floats of per-thread attention scratch for heads of up to hd dimensions in groups of up to
 * group query heads per KV head. */
size_t forward_attention_scratch(int hd, int group);

/* Starts counting, per layer, how often each expert is chosen (c->expert_usage; for tests). */
int context_trace_experts(ts_context *c, ts_error *err);

/* Evaluates tokens[0..n) at positions c->pos.. (n <= FORWARD_MAX_BATCH); writes the logits of
 * the positions asked for: all rows, or the last one only. */
int forward_chunk(ts_context *c, const int32_t *tokens, int n, float *logits, bool all_rows,
                  ts_error *err);

#endif
