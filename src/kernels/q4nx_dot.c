/* Q4NX weights . f32 activations (the activations stay f32: 8-bit activations would cost more
 * accuracy than the 4-bit weights leave room for against the f32 references). Per block,
 * sum((q d + m) x) = d sum(q x) + m sum(x): the codes widen to f32, sum(q x) and sum(x) are taken
 * in 8 lanes, combined as d sum(q x) + m sum(x) and added to the lane accumulator; the lanes are
 * summed at the end. The order of operations depends only on k, so the tile agrees with the dot bit for bit.
 * AVX2/AVX-512 (other targets use the scalar reference). */
#include "kernels/kernels_internal.h"
#include "kernels/simd.h"

#if defined(TS_X86)
static ALWAYS_INLINE TARGET_AVX2 void q4nx_avx2_body(const uint8_t *w, size_t ws, const uint8_t *a,
                                                   size_t as, int64_t k, float *y, long ys,
                                                   const int NR, const int NC) {
    __m256 acc[4][4];
    UNROLL
    for (int r = 0; r < NR; r++) for (int c = 0; c < NC; c++) acc[r][c] = _mm256_setzero_ps();
    const __m128i low4 = _mm_set1_epi8(0x0f);
    for (int64_t i = 0; i < k / QK; i++) {
        __m256 x[4][4], xsum[4];
        UNROLL
        for (int c = 0; c < NC; c++) {
            const float *xp = (const float *)(a + c * as) + i * QK;
            for (int v = 0; v < 4; v++) x[c][v] = _mm256_loadu_ps(xp + 8 * v);
            xsum[c] = _mm256_add_ps(_mm256_add_ps(x[c][0], x[c][1]), _mm256_add_ps(x[c][2], x[c][3]));
        }
        UNROLL
        for (int r = 0; r < NR; r++) {
            const block_q4nx *b = (const block_q4nx *)(w + r * ws) + i;
            __m128i bytes = _mm_loadu_si128((const __m128i *)b->qs);
            __m128i lo = _mm_and_si128(bytes, low4), hi = _mm_and_si128(_mm_srli_epi16(bytes, 4), low4);
            __m256 q[4] = {   /* elements 0-7, 8-15 (low nibbles), 16-23, 24-31 (high nibbles) */
                _mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(lo)),
                _mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(_mm_srli_si128(lo, 8))),
                _mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(hi)),
                _mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(_mm_srli_si128(hi, 8))),
            };
            __m256 d = _mm256_set1_ps(bfloat_to_f32((uint16_t)(b->d[0] | b->d[1] << 8)));
            __m256 m = _mm256_set1_ps(bfloat_to_f32((uint16_t)(b->m[0] | b->m[1] << 8)));
            UNROLL
            for (int c = 0; c < NC; c++) {
                __m256 qx = _mm256_mul_ps(q[0], x[c][0]);
                qx = _mm256_fmadd_ps(q[1], x[c][1], qx);
                qx = _mm256_fmadd_ps(q[2], x[c][2], qx);
                qx = _mm256_fmadd_ps(q[3], x[c][3], qx);
                /* one add carried from block to block (not two FMAs): half the latency chain */
                acc[r][c] = _mm256_add_ps(acc[r][c], _mm256_fmadd_ps(m, xsum[c], _mm256_mul_ps(d, qx)));
            }
        }
    }
    UNROLL
    for (int r = 0; r < NR; r++)
        UNROLL
        for (int c = 0; c < NC; c++) y[c * ys + r] = hsum_f32x8(acc[r][c]);
}

/* AVX-512: the AVX2 body compiled for the AVX-512 target. */

DOT_FROM_BODY(TARGET_AVX2, q4nx_dot_avx2, q4nx_avx2_body)
TILE_FROM_BODY(TARGET_AVX2, q4nx_tile_avx2, q4nx_avx2_body, 4, 4)
const type_kernels q4nx_kernels_avx2 = {
    .act_type = TS_F32, .dot = q4nx_dot_avx2,
    .tile = q4nx_tile_avx2, .tile_rows = 4, .tile_cols = 4 };

DOT_FROM_BODY(TARGET_AVX512, q4nx_dot_avx512, q4nx_avx2_body)
TILE_FROM_BODY(TARGET_AVX512, q4nx_tile_avx512, q4nx_avx2_body, 4, 4)
const type_kernels q4nx_kernels_avx512 = {
    .act_type = TS_F32, .dot = q4nx_dot_avx512,
    .tile = q4nx_tile_avx512, .tile_rows = 4, .tile_cols = 4 };
#endif
