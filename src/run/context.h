/* What a context is: its sequences' states (each one's position, KV cache and any other per-layer
 * state its layers' kinds keep) and the scratch one forward runs in. A forward evaluates a batch of
 * positions that may belong to several sequences (runs of positions, one sequence each): the matrix
 * products take the whole batch, the mixers' per-sequence parts (attention over a sequence's cache,
 * a recurrence's scan) go run by run. Created by context_new.c, run by eval.c through forward.c;
 * the layer kinds (run/KIND_layer.c) and the experts (moe.c) read and write it. */
#ifndef TS_RUN_CONTEXT_H
#define TS_RUN_CONTEXT_H
#include "load/model.h"
#include "run/kv_cache.h"
#include "run/recurrent_state.h"
#include "core/thread_pool.h"
#include "kernels/matmul.h"

/* Positions evaluated together; longer batches are split into chunks of this many. */
#define FORWARD_MAX_BATCH 64

/* A context's scratch for the experts, sized for a full batch at the largest expert layer (and its
 * shared expert). */
typedef struct moe_scratch {
    float *in, *router_in, *logits, *weights, *x, *gate, *up, *y, *slots, *dense;
    float *shared_gate, *shared_up, *shared_y, *shared_g;
    int *ids, *count, *slot_of;
} moe_scratch;

/* The gated DeltaNet layers' scratch for a batch: the q/k/v projection (then the convolution's
 * output), the output gate's, beta's and the decay's projections, the heads' gated outputs. */
typedef struct deltanet_scratch { float *qkv, *z, *beta, *alpha, *y; } deltanet_scratch;

/* The Mamba-2 layers' scratch for a batch: the input projection [z | xBC | dt], the convolution's
 * output, the heads' outputs (then gated and normed). */
typedef struct mamba2_scratch { float *proj, *xbc, *y; } mamba2_scratch;

/* The latent-attention layers' scratch for a batch: the q path's low-rank projection, the full
 * queries [q_nope | q_pe] per head, the latent [c | k_pe], the heads' decompressed outputs. */
typedef struct mla_scratch { float *qa, *q, *kv, *o; } mla_scratch;

/* One sequence's state. */
typedef struct sequence {
    int pos;                 /* positions in the cache */
    int high_water;          /* the most positions ever held since the cache was last emptied */
    kv_cache kv;             /* the attention layers' state */
    recurrent_state rs;      /* the recurrent layers' state and its snapshots */
} sequence;

/* Positions t0 .. t0 + n - 1 of a forward's batch: the next n of one sequence (at seq->pos..). */
typedef struct batch_run { sequence *seq; int t0, n; } batch_run;

struct ts_context {
    ts_model *m;
    int n_ctx;               /* positions per sequence */
    bool rope_long;          /* LongRoPE: this context uses the long factor list */
    int n_seq;
    sequence *seqs;          /* n_seq of them; the single-sequence calls (ts_eval, ...) use seqs[0] */
    /* the batch of the forward under way: its runs, and each position's sequence and position */
    batch_run runs[FORWARD_MAX_BATCH];
    int n_runs;
    sequence *seq_of[FORWARD_MAX_BATCH];
    int pos_of[FORWARD_MAX_BATCH];
    /* ts_eval_batch's reusable buffers (a decode step is one call: no allocation per step): the
     * items, and up to FORWARD_MAX_BATCH rows of logits a forward writes before they go to them */
    struct eval_item *batch_items;
    int batch_items_cap;
    float *batch_rows;
    int batch_rows_cap;
    thread_pool *pool;
    matmul_ctx mm;           /* the pool, the model's kernel set, quantized-activation scratch */
    /* scratch, sized for FORWARD_MAX_BATCH positions at the largest layer */
    float *x, *xn, *q, *k, *v, *att, *gate, *up, *tmp;
    float *attn_scratch;     /* per thread, attn_scratch_stride floats: a chunk's attention weights
                                (+ 1 for a sink) and values for each head of a group, the merge
                                state of a task */
    size_t attn_scratch_stride;
    float *attn_part;        /* a decoded token's chunk parts: per head and chunk, max, sum, values */
    float *q_gate;           /* gated attention: a batch's [query | gate] projections, then the gates */
    moe_scratch moe;         /* the experts' scratch, when a layer has experts */
    deltanet_scratch delta;  /* the DeltaNet layers' scratch, when a layer is one */
    float *shortconv_in;     /* the short-convolution layers' [b | c | u] projections of a batch */
    mamba2_scratch mamba;    /* the Mamba-2 layers' scratch, when a layer is one */
    mla_scratch mla;         /* the latent-attention layers' scratch, when a layer is one */
    int *expert_usage;       /* NULL, or n_layers x MOE_MAX_EXPERTS counts of chosen experts (tests) */
    uint64_t weight_bytes;   /* weight bytes the matrix products have read (mm.weight_bytes counts here) */
    float *pli, *ple_tmp, *ple_row;   /* per-layer embeddings (Gemma 4), NULL when unused */
};

#endif
