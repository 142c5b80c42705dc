/* The float-weight dot and tile (F32, F16, BF16 weights . f32 activations), written once: the
 * activations stay f32, products are accumulated with FMA in 4 x 8 lanes per output and the lanes
 * summed at the end; the k % 8 tail is added last in element order.
 *
 * Included (once) by f32_dot.c, f16_dot.c and bf16_dot.c, which name their kernels and call the
 * bodies defined here: float_dot_portable(w, act, k), and float_avx2_body / float_avx512_body
 * (simd.h's tile body parameters). They define first:
 *   FLOAT_DOT_ELEM     the stored element type (float, uint16_t)
 *   FLOAT_DOT_WIDEN(v) one stored element -> float
 *   FLOAT_DOT_LOAD8(p) 8 stored elements at p -> __m256 (x86 only)
 *   FLOAT_DOT_LOAD16(p) 16 stored elements at p -> __m512 (x86 only)
 *   FLOAT_DOT_MLOAD16(m, p) the stored elements at p selected by __mmask16 m -> __m512, 0 elsewhere
 *                      (x86 only)
 *   FLOAT_DOT_LOAD4(p) 4 stored elements at p -> float32x4_t (aarch64 only) */
#include "kernels/kernels_internal.h"
#include "kernels/simd.h"

/* Portable: 8 running sums (lane j takes elements j, j+8, ...), then the tail. */
static ALWAYS_INLINE float float_dot_portable(const void *w, const void *act, int64_t k) {
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

static ALWAYS_INLINE TARGET_AVX2 void float_avx2_body(const uint8_t *w, size_t ws, const uint8_t *a,
                                                      size_t as, int64_t k, float *y, long ys,
                                                      const int NR, const int NC) {
    __m256 acc[4][4][4];
    UNROLL
    for (int r = 0; r < NR; r++)
        UNROLL
        for (int c = 0; c < NC; c++)
            UNROLL
            for (int u = 0; u < 4; u++) acc[r][c][u] = _mm256_setzero_ps();
    int64_t i = 0;
    for (; i + 32 <= k; i += 32) {
        UNROLL
        for (int r = 0; r < NR; r++)
            for (int l = 0; l < 32 * ELEM_BYTES; l += 64) PREFETCH_ROW(w + r * ws + i * ELEM_BYTES + l, NR, ws);
        UNROLL
        for (int u = 0; u < 4; u++)
            UNROLL
            for (int r = 0; r < NR; r++) {
                __m256 wv = LOAD_W(r, i + 8 * u);
                UNROLL
                for (int c = 0; c < NC; c++)
                    acc[r][c][u] = _mm256_fmadd_ps(wv, _mm256_loadu_ps((const float *)(a + c * as) + i + 8 * u), acc[r][c][u]);
            }
    }
    for (int u = 0; i + 8 <= k; i += 8, u++)
        UNROLL
        for (int r = 0; r < NR; r++) {
            __m256 wv = LOAD_W(r, i);
            UNROLL
            for (int c = 0; c < NC; c++)
                acc[r][c][u] = _mm256_fmadd_ps(wv, _mm256_loadu_ps((const float *)(a + c * as) + i), acc[r][c][u]);
        }
    UNROLL
    for (int r = 0; r < NR; r++)
        UNROLL
        for (int c = 0; c < NC; c++) {
            const FLOAT_DOT_ELEM *wr = (const FLOAT_DOT_ELEM *)(w + r * ws);
            const float *x = (const float *)(a + c * as);
            __m256 s = _mm256_add_ps(_mm256_add_ps(acc[r][c][0], acc[r][c][1]), _mm256_add_ps(acc[r][c][2], acc[r][c][3]));
            float sum = hsum_f32x8(s);
            for (int64_t t = i; t < k; t++) sum += FLOAT_DOT_WIDEN(wr[t]) * x[t];
            y[c * ys + r] = sum;
        }
}

/* AVX-512: 16-element chunks alternate between 2 accumulators per output (a tile of 2 rows x 4
 * positions keeps 16 FMA chains going; a single row's 2 chains keep up with memory); the last
 * partial chunk is a masked load. */
static ALWAYS_INLINE TARGET_AVX512 void float_avx512_body(const uint8_t *w, size_t ws, const uint8_t *a,
                                                          size_t as, int64_t k, float *y, long ys,
                                                          const int NR, const int NC) {
    __m512 acc0[2][4], acc1[2][4];   /* even and odd chunks */
    UNROLL
    for (int r = 0; r < NR; r++)
        UNROLL
        for (int c = 0; c < NC; c++) acc0[r][c] = acc1[r][c] = _mm512_setzero_ps();
    int64_t i = 0;
    for (; i + 32 <= k; i += 32) {
        UNROLL
        for (int r = 0; r < NR; r++)
            for (int l = 0; l < 32 * ELEM_BYTES; l += 64) PREFETCH_ROW(w + r * ws + i * ELEM_BYTES + l, NR, ws);
        UNROLL
        for (int r = 0; r < NR; r++) {
            __m512 w0 = FLOAT_DOT_LOAD16((const FLOAT_DOT_ELEM *)(w + r * ws) + i);
            __m512 w1 = FLOAT_DOT_LOAD16((const FLOAT_DOT_ELEM *)(w + r * ws) + i + 16);
            UNROLL
            for (int c = 0; c < NC; c++) {
                const float *x = (const float *)(a + c * as) + i;
                acc0[r][c] = _mm512_fmadd_ps(w0, _mm512_loadu_ps(x), acc0[r][c]);
                acc1[r][c] = _mm512_fmadd_ps(w1, _mm512_loadu_ps(x + 16), acc1[r][c]);
            }
        }
    }
    /* fewer than 32 left: at most two chunks, into accumulators 0 and 1 (written out with
     * constant indices, which keeps the accumulators in registers) */
#define FLOAT_DOT_TAIL_CHUNK(ACC)                                                                        \
    if (i < k) {                                                                                       \
        __mmask16 m = k - i >= 16 ? (__mmask16)0xffff : (__mmask16)((1u << (k - i)) - 1);              \
        UNROLL \
        for (int r = 0; r < NR; r++) {                                                                 \
            __m512 wv = FLOAT_DOT_MLOAD16(m, (const FLOAT_DOT_ELEM *)(w + r * ws) + i);                \
            UNROLL \
            for (int c = 0; c < NC; c++)                                                               \
                ACC[r][c] = _mm512_fmadd_ps(wv, _mm512_maskz_loadu_ps(m, (const float *)(a + c * as) + i), ACC[r][c]); \
        }                                                                                              \
        i += 16;                                                                                       \
    }
    FLOAT_DOT_TAIL_CHUNK(acc0)
    FLOAT_DOT_TAIL_CHUNK(acc1)
#undef FLOAT_DOT_TAIL_CHUNK
    UNROLL
    for (int r = 0; r < NR; r++)
        UNROLL
        for (int c = 0; c < NC; c++) y[c * ys + r] = hsum_f32x16(_mm512_add_ps(acc0[r][c], acc1[r][c]));
}
#undef LOAD_W
#undef ELEM_BYTES
#endif

#if defined(__aarch64__)
/* NEON: the portable kernel's operations (its 8 running sums as two vectors, the same final
 * additions, the tail in element order) for NR rows x NC activations that share their loads, so
 * the portable kernel's bits; 4 x 1 rows give a matrix-vector product 8 independent add chains. */
static ALWAYS_INLINE void float_neon_body(const uint8_t *w, size_t ws, const uint8_t *a, size_t as, int64_t k,
                                          float *y, long ys, const int NR, const int NC) {
    float32x4_t lo[4][4] = { { { 0 } } }, hi[4][4] = { { { 0 } } };
    int64_t i = 0;
    for (; i + 8 <= k; i += 8) {
        float32x4_t xl[4], xh[4];
        UNROLL
        for (int c = 0; c < NC; c++) {
            xl[c] = vld1q_f32((const float *)(a + c * as) + i);
            xh[c] = vld1q_f32((const float *)(a + c * as) + i + 4);
        }
        UNROLL
        for (int r = 0; r < NR; r++) {
            const FLOAT_DOT_ELEM *wr = (const FLOAT_DOT_ELEM *)(w + r * ws) + i;
            const float32x4_t wl = FLOAT_DOT_LOAD4(wr), wh = FLOAT_DOT_LOAD4(wr + 4);
            UNROLL
            for (int c = 0; c < NC; c++) {
                lo[r][c] = vaddq_f32(lo[r][c], vmulq_f32(wl, xl[c]));
                hi[r][c] = vaddq_f32(hi[r][c], vmulq_f32(wh, xh[c]));
            }
        }
    }
    UNROLL
    for (int r = 0; r < NR; r++)
        UNROLL
        for (int c = 0; c < NC; c++) {
            const float32x4_t t = vaddq_f32(lo[r][c], hi[r][c]);   /* lane j: running sums j and j + 4 */
            float sum = (vgetq_lane_f32(t, 0) + vgetq_lane_f32(t, 1)) + (vgetq_lane_f32(t, 2) + vgetq_lane_f32(t, 3));
            const FLOAT_DOT_ELEM *wr = (const FLOAT_DOT_ELEM *)(w + r * ws);
            const float *x = (const float *)(a + c * as);
            for (int64_t j = i; j < k; j++) sum += FLOAT_DOT_WIDEN(wr[j]) * x[j];
            y[c * ys + r] = sum;
        }
}

#endif
