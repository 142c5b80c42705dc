/* The KV cache, laid out per layer at that layer's own geometry (n_kv_heads x head_dim). A layer
 * that attends to all positions keeps n_ctx slots; a sliding layer keeps only its window plus one
 * batch (a ring buffer: position p lives in slot p % slots), so memory follows the model. Layers
 * that share another layer's KV own nothing. */
#ifndef TS_MODEL_KV_CACHE_H
#define TS_MODEL_KV_CACHE_H
#include <stddef.h>
#include "model/geometry.h"

#define KV_KEY_BLOCK 64   /* slots per transposed block of keys */

typedef struct kv_cache {
    int n_layers;
    int *slots;        /* positions held per layer */
    float **k, **v;    /* per layer: k in blocks of KV_KEY_BLOCK slots, each block transposed
                          [n_kv_heads * head_dim][KV_KEY_BLOCK] (so the attention scores a run of
                          keys per vector, and memory is touched block by block as positions
                          fill); v [slots][n_kv_heads * head_dim]; shared layers alias their source */
    size_t bytes;      /* owned bytes in total */
    void *arena;       /* one mapping holding every owned K and V */
    size_t arena_bytes;
} kv_cache;

/* max_batch: the most positions one evaluation writes (a ring must hold window + batch - 1). */
int  kv_cache_init(kv_cache *c, const model_geometry *g, int n_ctx, int max_batch);
void kv_cache_free(kv_cache *c);
/* Bytes per cached position summed over the layers that own a cache (full-attention layers). */
size_t kv_bytes_per_token(const model_geometry *g);

#endif
