/* The cache lives in one anonymous mapping, zero-filled by the kernel page by page as positions
 * first write it: a long context costs nothing until it is used. */
#include "model/kv_cache.h"
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#define KV_ALIGN 64   /* bytes: every layer's K and V start on a cache line */

static size_t round_up(size_t n, size_t a) { return (n + a - 1) / a * a; }

/* keys are stored in whole blocks of KV_KEY_BLOCK slots */
static size_t key_floats(int slots, const layer_geometry *ly) {
    return round_up((size_t)slots, KV_KEY_BLOCK) * ly->n_kv_heads * ly->head_dim;
}

static int layer_slots(const layer_geometry *ly, int n_ctx, int max_batch) {
    if (ly->window > 0 && ly->window + max_batch - 1 < n_ctx) return ly->window + max_batch - 1;
    return n_ctx;
}

int kv_cache_init(kv_cache *c, const model_geometry *g, int n_ctx, int max_batch) {
    memset(c, 0, sizeof *c);
    c->n_layers = g->n_layers;
    c->slots = calloc((size_t)g->n_layers, sizeof *c->slots);
    c->k = calloc((size_t)g->n_layers, sizeof *c->k);
    c->v = calloc((size_t)g->n_layers, sizeof *c->v);
    if (!c->slots || !c->k || !c->v) { kv_cache_free(c); return -1; }
    size_t total = 0;
    for (int il = 0; il < g->n_layers; il++) {
        const layer_geometry *ly = &g->layers[il];
        if (ly->kv_source != il) continue;
        c->slots[il] = layer_slots(ly, n_ctx, max_batch);
        size_t n = (size_t)c->slots[il] * ly->n_kv_heads * ly->head_dim;
        total += round_up(key_floats(c->slots[il], ly) * sizeof(float), KV_ALIGN) + round_up(n * sizeof(float), KV_ALIGN);
        c->bytes += 2 * n * sizeof(float);
    }
    if (total > 0) {
        void *p = mmap(NULL, total, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (p == MAP_FAILED) { kv_cache_free(c); return -1; }
        c->arena = p;
        c->arena_bytes = total;
    }
    size_t off = 0;
    for (int il = 0; il < g->n_layers; il++) {
        const layer_geometry *ly = &g->layers[il];
        if (ly->kv_source != il) continue;
        size_t kb = round_up(key_floats(c->slots[il], ly) * sizeof(float), KV_ALIGN);
        size_t vb = round_up((size_t)c->slots[il] * ly->n_kv_heads * ly->head_dim * sizeof(float), KV_ALIGN);
        c->k[il] = (float *)((char *)c->arena + off);
        c->v[il] = (float *)((char *)c->arena + off + kb);
        off += kb + vb;
    }
    for (int il = 0; il < g->n_layers; il++) {     /* shared layers read their source's cache */
        int src = g->layers[il].kv_source;
        if (src != il) { c->slots[il] = c->slots[src]; c->k[il] = c->k[src]; c->v[il] = c->v[src]; }
    }
    return 0;
}

void kv_cache_free(kv_cache *c) {
    if (c->arena) munmap(c->arena, c->arena_bytes);
    free(c->k); free(c->v); free(c->slots);
    memset(c, 0, sizeof *c);
}

size_t kv_bytes_per_token(const model_geometry *g) {
    size_t b = 0;
    for (int il = 0; il < g->n_layers; il++) {
        const layer_geometry *ly = &g->layers[il];
        if (ly->kv_source == il && ly->window == 0)
            b += 2 * (size_t)ly->n_kv_heads * ly->head_dim * sizeof(float);
    }
    return b;
}
