/* The float-weight dot and tile (F32, F16, BF16 weights . f32 activations), written once: the
 * activations stay f32, products are accumulated with FMA in 4 x 8 lanes per output and the lanes
 * summed at the end; the k % 8 tail is added last in element order.
 *
 * Included by f32_dot.c, f16_dot.c and bf16_dot.c after they define:
 *   FLOAT_DOT_NAME     the type's name in function names (f32, f16, bf16)
 *   FLOAT_DOT_ELEM     the stored element type (float, uint16_t)
 *   FLOAT_DOT_WIDEN(v) one stored element -> float
 *   FLOAT_DOT_LOAD8(p) 8 stored elements at p -> __m256 (x86 only) */
#include "kernels/kernels_internal.h"
#include "kernels/simd.h"

#define FLOAT_DOT_CAT_(a, b) a##b
#define FLOAT_DOT_CAT(a, b) FLOAT_DOT_CAT_(a, b)
#define FLOAT_DOT_FN(prefix, suffix) FLOAT_DOT_CAT(FLOAT_DOT_CAT(prefix, FLOAT_DOT_NAME), suffix)

/* Portable: 8 running sums (lane j takes elements j, j+8, ...), then the tail. */
float FLOAT_DOT_FN(vec_dot_, _generic)(const void *w, const void *act, int64_t k) {
    const FLOAT_DOT_ELEM *wr = w;
    const float *x = act;
    float lane[8] = { 0 };
    int64_t i = 0;
    for (; i + 8 <= k; i += 8)
        for (int j = 0; j < 8; j++) lane[j] += FLOAT_DOT_WIDEN(wr[i + j]) * x[i + j];
    float sum = ((lane[0] + lane[4]) + (lane[1] + lane[5])) + ((lane[2] + lane[6]) + (lane[3] + lane[7]));
    for (; i < k; i++) sum += FLOAT_DOT_WIDEN(wr[i]) * x[i];
    return sum;
}

#if defined(TS_X86)
/* The 8-element chunks of a row go round-robin to 4 accumulators per output (so 4 independent FMA
 * chains run even for a single row); a short row's leftover chunks go to the first ones. */
#define LOAD_W(r, i) FLOAT_DOT_LOAD8((const FLOAT_DOT_ELEM *)(w + r * ws) + (i))
#define ELEM_BYTES ((int)sizeof(FLOAT_DOT_ELEM))

static ALWAYS_INLINE TARGET_AVX2 void FLOAT_DOT_FN(, _tile_avx2)(const uint8_t *w, size_t ws, const uint8_t *a,
                                                                size_t as, int64_t k, float *y, long ys,
                                                                const int NR, const int NC) {
    __m256 acc[4][4][4];
    for (int r = 0; r < NR; r++)
        for (int c = 0; c < NC; c++)
            for (int u = 0; u < 4; u++) acc[r][c][u] = _mm256_setzero_ps();
    int64_t i = 0;
    for (; i + 32 <= k; i += 32) {
        for (int r = 0; r < NR; r++)
            for (int l = 0; l < 32 * ELEM_BYTES; l += 64) PREFETCH_ROW(w + r * ws + i * ELEM_BYTES + l);
        for (int u = 0; u < 4; u++)
            for (int r = 0; r < NR; r++) {
                __m256 wv = LOAD_W(r, i + 8 * u);
                for (int c = 0; c < NC; c++)
                    acc[r][c][u] = _mm256_fmadd_ps(wv, _mm256_loadu_ps((const float *)(a + c * as) + i + 8 * u), acc[r][c][u]);
            }
    }
    for (int u = 0; i + 8 <= k; i += 8, u++)
        for (int r = 0; r < NR; r++) {
            __m256 wv = LOAD_W(r, i);
            for (int c = 0; c < NC; c++)
                acc[r][c][u] = _mm256_fmadd_ps(wv, _mm256_loadu_ps((const float *)(a + c * as) + i), acc[r][c][u]);
        }
    for (int r = 0; r < NR; r++)
        for (int c = 0; c < NC; c++) {
            const FLOAT_DOT_ELEM *wr = (const FLOAT_DOT_ELEM *)(w + r * ws);
            const float *x = (const float *)(a + c * as);
            __m256 s = _mm256_add_ps(_mm256_add_ps(acc[r][c][0], acc[r][c][1]), _mm256_add_ps(acc[r][c][2], acc[r][c][3]));
            float sum = hsum_f32x8(s);
            for (int64_t t = i; t < k; t++) sum += FLOAT_DOT_WIDEN(wr[t]) * x[t];
            y[c * ys + r] = sum;
        }
}
#undef LOAD_W
#undef ELEM_BYTES
#endif
