/* F16 weights . f32 activations (the weights widened with F16C): the activations stay f32, products are
 * accumulated with FMA in 4 x 8 lanes per output and the lanes summed at the end; the k % 8 tail
 * is added last in element order. Portable and AVX2/AVX-512. */
#include "kernels/kernels_internal.h"
#include "kernels/simd.h"

/* Portable: 8 running sums (lane j takes elements j, j+8, ...), then the tail. */
float vec_dot_f16_generic(const void *w, const void *act, int64_t k) {
    const uint16_t *wr = w;
    const float *x = act;
    float lane[8] = { 0 };
    int64_t i = 0;
    for (; i + 8 <= k; i += 8)
        for (int j = 0; j < 8; j++) lane[j] += half_to_f32(wr[i + j]) * x[i + j];
    float sum = ((lane[0] + lane[4]) + (lane[1] + lane[5])) + ((lane[2] + lane[6]) + (lane[3] + lane[7]));
    for (; i < k; i++) sum += half_to_f32(wr[i]) * x[i];
    return sum;
}

#if defined(TS_X86)
/* The 8-element chunks of a row go round-robin to 4 accumulators per output (so 4 independent FMA
 * chains run even for a single row); a short row's leftover chunks go to the first ones. */
#define LOAD_W(r, i) _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)((const uint16_t *)(w + r * ws) + (i))))

static ALWAYS_INLINE TARGET_AVX2 void f16_tile_avx2(const uint8_t *w, size_t ws, const uint8_t *a,
                                                   size_t as, int64_t k, float *y, long ys,
                                                   const int NR, const int NC) {
    __m256 acc[4][4][4];
    for (int r = 0; r < NR; r++)
        for (int c = 0; c < NC; c++)
            for (int u = 0; u < 4; u++) acc[r][c][u] = _mm256_setzero_ps();
    int64_t i = 0;
    for (; i + 32 <= k; i += 32) {
        for (int r = 0; r < NR; r++)
            for (int l = 0; l < 32 * 2; l += 64) PREFETCH_ROW(w + r * ws + i * 2 + l);
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
            const uint16_t *wr = (const uint16_t *)(w + r * ws);
            const float *x = (const float *)(a + c * as);
            __m256 s = _mm256_add_ps(_mm256_add_ps(acc[r][c][0], acc[r][c][1]), _mm256_add_ps(acc[r][c][2], acc[r][c][3]));
            float sum = hsum_f32x8(s);
            for (int64_t t = i; t < k; t++) sum += half_to_f32(wr[t]) * x[t];
            y[c * ys + r] = sum;
        }
}
#undef LOAD_W

TS_X86_SHAPES(f16, avx2, TARGET_AVX2, f16_tile_avx2, 1, 2)
TS_X86_SHAPES(f16, avx512, TARGET_AVX512, f16_tile_avx2, 1, 4)
#endif
