/* Shared by the kernels of the 32-weight types whose 4-bit codes index a 16-entry int8 table
 * (IQ4_NL: an f16 d opens an 18-byte block; MXFP4: an E8M0 exponent byte opens a 17-byte block),
 * against Q8_0 activations: per block (d_w * d_a) * sum(table[q] * a), the sum in integers.
 * Included by iq4_nl_dot.c (mxfp4 = 0) and mxfp4_dot.c (mxfp4 = 1). */
#ifndef TS_KERNELS_TABLE4_SIMD_H
#define TS_KERNELS_TABLE4_SIMD_H
#include "kernels/kernels_internal.h"
#include "kernels/simd.h"
#include "kernels/pair_dot.h"

/* Portable: the block's codes looked up, then an int8 dot. */
static ALWAYS_INLINE float table4_dot_q8_0(const void *w, const void *act, int64_t k, const int mxfp4) {
    const uint8_t *x = w;
    const block_q8_0 *y = act;
    const size_t bytes = mxfp4 ? sizeof(block_mxfp4) : sizeof(block_iq4_nl);
    const int8_t *table = mxfp4 ? kvalues_mxfp4 : kvalues_iq4nl;
    float sum = 0.0f;
    for (int64_t i = 0; i < k / QK; i++, x += bytes) {
        const uint8_t *qs = x + (mxfp4 ? 1 : 2);
        int8_t q[QK];
        for (int j = 0; j < QK / 2; j++) {
            q[j] = table[qs[j] & 0xf];
            q[j + QK / 2] = table[qs[j] >> 4];
        }
        float dw = mxfp4 ? e8m0_half_to_f32(x[0]) : load_f16(x);
        sum += dw * load_f16(y[i].d) * (float)dot_i8(q, y[i].qs, QK);
    }
    return sum;
}

#if defined(TS_X86)
/* AVX2: the codes looked up with pshufb (the table fits one 128-bit register), then pair_dot.h's
 * AVX2 body, as Q8_0. */
static ALWAYS_INLINE TARGET_AVX2 __m256i table4_codes(__m128i table, const uint8_t *b, const int mxfp4) {
    const __m128i low4 = _mm_set1_epi8(0x0f);
    __m128i qs = _mm_loadu_si128((const __m128i *)(b + (mxfp4 ? 1 : 2)));
    return _mm256_setr_m128i(_mm_shuffle_epi8(table, _mm_and_si128(qs, low4)),
                             _mm_shuffle_epi8(table, _mm_and_si128(_mm_srli_epi16(qs, 4), low4)));
}
static ALWAYS_INLINE TARGET_AVX2 void table4_avx2_body(const uint8_t *w, size_t ws, const uint8_t *a,
                                                       size_t as, int64_t k, float *y, long ys,
                                                       const int NR, const int NC, const int mxfp4) {
    const size_t bytes = mxfp4 ? sizeof(block_mxfp4) : sizeof(block_iq4_nl);
    const __m128i table = _mm_loadu_si128((const __m128i *)(mxfp4 ? kvalues_mxfp4 : kvalues_iq4nl));
#define TABLE4_CODES(b) table4_codes(table, b, mxfp4)
#define TABLE4_SCALE(b) (mxfp4 ? e8m0_half_to_f32((b)[0]) : f16_bits_to_f32(b))
    SIGNED_TILE_AVX2_BODY(bytes, TABLE4_CODES, TABLE4_SCALE)
#undef TABLE4_CODES
#undef TABLE4_SCALE
}
#endif

#endif
