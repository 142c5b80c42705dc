#include "load/layout.h"
#include "load/model_arena.h"
#include "kernels/types.h"
#include "kernels/f16.h"
#include "kernels/bf16.h"
#include "core/error.h"
#include <string.h>

int layout_unpermute_qk_rows(uint8_t *dst, const uint8_t *src, int64_t n_rows, size_t row_bytes,
                      int n_heads, const char *tensor_name, ts_error *err) {
    if (n_heads <= 0 || n_rows <= 0 || n_rows % (2 * (int64_t)n_heads) != 0)
        return ts_fail(err, "tensor '%s': %lld rows cannot be split into %d heads of pairs "
                       "(rows must be divisible by 2 x heads)", tensor_name,
                       (long long)n_rows, n_heads);
    int64_t d = n_rows / n_heads, half = d / 2;
    for (int64_t h = 0; h < n_heads; h++)
        for (int64_t s = 0; s < 2; s++)
            for (int64_t j = 0; j < half; j++)
                memcpy(dst + (size_t)(h * d + s * half + j) * row_bytes,
                       src + (size_t)(h * d + 2 * j + s) * row_bytes, row_bytes);
    return 0;
}

/* One element of a float tensor as f32. */
static float element(const tensor_entry *t, int64_t i) {
    if (t->type == TS_F32) { float v; memcpy(&v, t->data + 4 * i, 4); return v; }
    uint16_t h;
    memcpy(&h, t->data + 2 * i, 2);
    return t->type == TS_F16 ? f16_to_f32(h) : bf16_to_f32(h);
}

int layout_experts_from_input_major(model_arena *arena, const tensor_entry *gu, const tensor_entry *dn,
                                    int E, int64_t H, int64_t F, weight *gate, weight *up, weight *down,
                                    ts_error *err) {
    if ((gu->type != TS_F32 && gu->type != TS_F16 && gu->type != TS_BF16) || dn->type != gu->type)
        return ts_fail(err, "tensor '%s': experts must be F32, F16 or BF16", gu->name);
    for (int e = 0; e < E; e++) {
        float *g = model_arena_alloc(arena, (size_t)(F * H) * sizeof(float));
        float *u = model_arena_alloc(arena, (size_t)(F * H) * sizeof(float));
        float *d = model_arena_alloc(arena, (size_t)(H * F) * sizeof(float));
        if (!g || !u || !d) return ts_fail(err, "out of memory transposing '%s'", gu->name);
        const int64_t gu_base = (int64_t)e * H * 2 * F, dn_base = (int64_t)e * F * H;
        for (int64_t h = 0; h < H; h++)
            for (int64_t f = 0; f < F; f++) {
                g[f * H + h] = element(gu, gu_base + h * 2 * F + 2 * f);
                u[f * H + h] = element(gu, gu_base + h * 2 * F + 2 * f + 1);
            }
        for (int64_t f = 0; f < F; f++)
            for (int64_t h = 0; h < H; h++) d[h * F + f] = element(dn, dn_base + f * H + h);
        gate[e] = (weight){ TS_F32, F, H, (size_t)H * sizeof(float), (const uint8_t *)g, gu->name };
        up[e] = (weight){ TS_F32, F, H, (size_t)H * sizeof(float), (const uint8_t *)u, gu->name };
        down[e] = (weight){ TS_F32, H, F, (size_t)F * sizeof(float), (const uint8_t *)d, dn->name };
    }
    return 0;
}
