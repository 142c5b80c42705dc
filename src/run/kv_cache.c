/* The cache lives in one anonymous mapping, zero-filled by the kernel page by page as positions
 * first write it: a long context costs nothing until it is used. */
#include "run/kv_cache.h"
#include "tessera.h"
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#define KV_ALIGN 64   /* bytes: every layer's K and V start on a cache line */

static size_t round_up(size_t n, size_t a) { return (n + a - 1) / a * a; }

static int layer_slots(const layer_geometry *ly, int n_ctx, int max_batch) {
    if (ly->attn.window > 0 && ly->attn.window + max_batch - 1 < n_ctx) return ly->attn.window + max_batch - 1;
    return n_ctx;
}

/* keys are stored in whole blocks of KV_KEY_BLOCK slots */
static size_t key_bytes(const kv_cache *c, int il, const layer_geometry *ly) {
    return round_up(round_up((size_t)c->slots[il], KV_KEY_BLOCK) / KV_KEY_BLOCK * ly->attn.n_kv_heads * c->k_head_bytes[il], KV_ALIGN);
}

static size_t value_bytes(const kv_cache *c, int il, const layer_geometry *ly) {
    return round_up((size_t)c->slots[il] * ly->attn.n_kv_heads * c->v_row_bytes[il], KV_ALIGN);
}

int kv_cache_init(kv_cache *c, const model_geometry *g, int n_ctx, int max_batch, int type_k, int type_v) {
    memset(c, 0, sizeof *c);
    c->n_layers = g->n_layers;
    c->type_k = type_k;
    c->type_v = type_v;
    c->slots = calloc((size_t)g->n_layers, sizeof *c->slots);
    c->k = calloc((size_t)g->n_layers, sizeof *c->k);
    c->v = calloc((size_t)g->n_layers, sizeof *c->v);
    c->k_head_bytes = calloc((size_t)g->n_layers, sizeof *c->k_head_bytes);
    c->v_row_bytes = calloc((size_t)g->n_layers, sizeof *c->v_row_bytes);
    if (!c->slots || !c->k || !c->v || !c->k_head_bytes || !c->v_row_bytes) { kv_cache_free(c); return -1; }
    size_t total = 0;
    for (int il = 0; il < g->n_layers; il++) {
        const layer_geometry *ly = &g->layers[il];
        if (!layer_has_kv_cache(ly) || ly->attn.kv_source != il) continue;
        c->slots[il] = layer_slots(ly, n_ctx, max_batch);
        c->k_head_bytes[il] = attention_key_block_bytes(type_k, ly->attn.head_dim);
        c->v_row_bytes[il] = attention_value_row_bytes(type_v, ly->attn.value_dim);
        total += key_bytes(c, il, ly) + value_bytes(c, il, ly);
        c->bytes += (size_t)c->slots[il] * kv_bytes_per_token_of_layer(ly, type_k, type_v);
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
        if (!layer_has_kv_cache(ly) || ly->attn.kv_source != il) continue;
        c->k[il] = (uint8_t *)c->arena + off;
        c->v[il] = (uint8_t *)c->arena + off + key_bytes(c, il, ly);
        off += key_bytes(c, il, ly) + value_bytes(c, il, ly);
    }
    for (int il = 0; il < g->n_layers; il++) {     /* shared layers read their source's cache */
        if (!layer_has_kv_cache(&g->layers[il])) continue;
        int src = g->layers[il].attn.kv_source;
        if (src != il) {
            c->slots[il] = c->slots[src]; c->k[il] = c->k[src]; c->v[il] = c->v[src];
            c->k_head_bytes[il] = c->k_head_bytes[src]; c->v_row_bytes[il] = c->v_row_bytes[src];
        }
    }
    return 0;
}

void kv_cache_free(kv_cache *c) {
    if (c->arena) munmap(c->arena, c->arena_bytes);
    free(c->k); free(c->v); free(c->slots); free(c->k_head_bytes); free(c->v_row_bytes);
    memset(c, 0, sizeof *c);
}

void kv_cache_copy(kv_cache *dst, const kv_cache *src, const model_geometry *g, int n_ctx, int n) {
    for (int il = 0; il < g->n_layers; il++) {
        const layer_geometry *ly = &g->layers[il];
        if (!layer_has_kv_cache(ly) || ly->attn.kv_source != il || n <= 0) continue;
        const int slots = src->slots[il], used = slots < n_ctx ? slots : n;   /* a ring: all of it */
        const size_t blocks = ((size_t)slots + KV_KEY_BLOCK - 1) / KV_KEY_BLOCK;
        const size_t used_blocks = ((size_t)used + KV_KEY_BLOCK - 1) / KV_KEY_BLOCK;
        for (int h = 0; h < ly->attn.n_kv_heads; h++) {   /* each head's keys, then its values, are contiguous */
            memcpy(dst->k[il] + (size_t)h * blocks * src->k_head_bytes[il], src->k[il] + (size_t)h * blocks * src->k_head_bytes[il],
                   used_blocks * src->k_head_bytes[il]);
            memcpy(kv_value_row(dst, il, 0, h), kv_value_row(src, il, 0, h), (size_t)used * src->v_row_bytes[il]);
        }
    }
}

size_t kv_bytes_per_token_of_layer(const layer_geometry *ly, int type_k, int type_v) {
    return (attention_key_block_bytes(type_k, ly->attn.head_dim) / KV_KEY_BLOCK +
            attention_value_row_bytes(type_v, ly->attn.value_dim)) * ly->attn.n_kv_heads;
}

size_t kv_bytes_per_token(const model_geometry *g, int type_k, int type_v) {
    size_t b = 0;
    for (int il = 0; il < g->n_layers; il++) {
        const layer_geometry *ly = &g->layers[il];
        if (layer_has_kv_cache(ly) && ly->attn.kv_source == il && ly->attn.window == 0) b += kv_bytes_per_token_of_layer(ly, type_k, type_v);
    }
    return b;
}

int kv_type_of_ts(int ts_type) {
    return ts_type == TS_KV_F32 ? KV_F32 : ts_type == TS_KV_Q8_0 ? KV_Q8_0 : KV_F16;
}

int ts_kv_type_from_name(const char *name) {
    int t = attention_kv_type_from_name(name);
    return t == KV_F32 ? TS_KV_F32 : t == KV_F16 ? TS_KV_F16 : t == KV_Q8_0 ? TS_KV_Q8_0 : -1;
}

const char *ts_kv_type_name(int type) {
    return type == TS_KV_DEFAULT ? "f16" : type >= TS_KV_F32 && type <= TS_KV_Q8_0 ? attention_kv_type_name(kv_type_of_ts(type)) : "?";
}
