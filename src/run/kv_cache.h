/* The KV cache, laid out per layer at that layer's own geometry (n_kv_heads x head_dim) in one of
 * the cache types of kernels/attention.h (f32, f16, q8_0; keys and values each their own). A
 * layer that attends to all positions keeps n_ctx slots; a sliding layer keeps only its window
 * plus one batch (a ring buffer: position p lives in slot p % slots), so memory follows the
 * model. Layers that share another layer's KV own nothing. */
#ifndef TS_MODEL_KV_CACHE_H
#define TS_MODEL_KV_CACHE_H
#include <stddef.h>
#include <stdint.h>
#include "load/geometry.h"
#include "kernels/attention.h"

typedef struct kv_cache {
    int n_layers;
    int type_k, type_v;  /* enum kv_type */
    int *slots;          /* positions held per layer */
    uint8_t **k, **v;    /* per layer, each KV head's part contiguous (a decoded token's attention
                            streams one head's keys and values, not a slice of every row):
                            k [kv head][block] in blocks of KV_KEY_BLOCK slots of
                            attention_key_block_bytes each (so the attention scores a run of keys
                            per vector); v [kv head][slot] rows of attention_value_row_bytes(head_dim).
                            Memory is touched page by page as positions fill. Shared layers alias
                            their source */
    size_t *k_head_bytes, *v_row_bytes;   /* per layer: one head's key block, one head's value row */
    size_t bytes;        /* owned bytes in total */
    void *arena;         /* one mapping holding every owned K and V */
    size_t arena_bytes;
} kv_cache;

/* max_batch: the most positions one evaluation writes (a ring must hold window + batch - 1).
 * Returns -1 when out of memory. The types must fit every layer's head size
 * (attention_kv_type_fits; the caller checks, to name the problem). */
int  kv_cache_init(kv_cache *c, const model_geometry *g, int n_ctx, int max_batch, int type_k, int type_v);
void kv_cache_free(kv_cache *c);
/* dst's cache made to hold src's positions 0 .. n - 1 (both of one geometry): a layer that holds
 * every position has those slots copied, a sliding ring is copied whole (its slots hold what its
 * positions map to). What dst held is overwritten. */
void kv_cache_copy(kv_cache *dst, const kv_cache *src, const model_geometry *g, int n_ctx, int n);
/* Bytes per cached position summed over the layers that own a cache (full-attention layers), and
 * of one layer. */
size_t kv_bytes_per_token(const model_geometry *g, int type_k, int type_v);
size_t kv_bytes_per_token_of_layer(const layer_geometry *ly, int type_k, int type_v);
/* The cache type (enum kv_type) of a public enum ts_kv_type; TS_KV_DEFAULT is f16. */
int kv_type_of_ts(int ts_type);
/* Layer il's key block holding slot s, for KV head h. */
static inline uint8_t *kv_key_block(const kv_cache *c, int il, int s, int h) {
    const size_t blocks = ((size_t)c->slots[il] + KV_KEY_BLOCK - 1) / KV_KEY_BLOCK;
    return c->k[il] + ((size_t)h * blocks + (size_t)(s / KV_KEY_BLOCK)) * c->k_head_bytes[il];
}
/* Layer il's value row of slot s, for KV head h. */
static inline uint8_t *kv_value_row(const kv_cache *c, int il, int s, int h) {
    return c->v[il] + ((size_t)h * (size_t)c->slots[il] + (size_t)s) * c->v_row_bytes[il];
}

#endif
