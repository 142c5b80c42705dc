#include "model/kv_cache.h"
#include <stdlib.h>
#include <string.h>

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
    for (int il = 0; il < g->n_layers; il++) {
        const layer_geometry *ly = &g->layers[il];
        if (ly->kv_source != il) continue;
        size_t width = (size_t)ly->n_kv_heads * ly->head_dim;
        c->slots[il] = layer_slots(ly, n_ctx, max_batch);
        size_t n = (size_t)c->slots[il] * width;
        c->k[il] = calloc(n, sizeof(float));
        c->v[il] = calloc(n, sizeof(float));
        if (!c->k[il] || !c->v[il]) { kv_cache_free(c); return -1; }
        c->bytes += 2 * n * sizeof(float);
    }
    for (int il = 0; il < g->n_layers; il++) {     /* shared layers read their source's cache */
        int src = g->layers[il].kv_source;
        if (src != il) { c->slots[il] = c->slots[src]; c->k[il] = c->k[src]; c->v[il] = c->v[src]; }
    }
    return 0;
}

void kv_cache_free(kv_cache *c) {
    if (c->k && c->v && c->slots)
        for (int il = 0; il < c->n_layers; il++) {
            /* only free what this layer owns: aliases point at an earlier layer's buffer */
            bool owner = true;
            for (int j = 0; j < il; j++) if (c->k[j] == c->k[il]) owner = false;
            if (owner) { free(c->k[il]); free(c->v[il]); }
        }
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
