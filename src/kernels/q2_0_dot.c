/* Q2_0 weights . Q8_0 activations: per activation block t of 32 (half a weight block),
 *   isum = sum (q - 1) a,   part[t % 4] += (d * d_a) * (float)isum
 * and the result (part[0] + part[1]) + (part[2] + part[3]), the same operations in every set. */
#include "kernels/kernels_internal.h"
#include "kernels/simd.h"

/* Weight 32 h + j of a block (h = half) is bits 2 (j % 4) of qs[8 h + j / 4]. */
static ALWAYS_INLINE int32_t isum_generic(const uint8_t *qs, const int8_t *a) {
    int32_t s = 0;
    for (int j = 0; j < 32; j++) s += ((qs[j / 4] >> (2 * (j % 4)) & 3) - 1) * a[j];
    return s;
}

#define Q2_0_DOT(NAME, TARGET, ISUM, F16)                                                                   \
    static TARGET float NAME(const void *w, const void *act, int64_t k) {                              \
        const block_q2_0 *x = w;                                                                       \
        const block_q8_0 *y = act;                                                                     \
        float part[4] = { 0.0f, 0.0f, 0.0f, 0.0f };                                                    \
        for (int64_t t = 0; t < k / 32; t++) {                                                         \
            const block_q2_0 *b = &x[t / 2];                                                           \
            part[t % 4] += (F16(b->d) * F16(y[t].d)) * (float)ISUM(b->qs + 8 * (t % 2), y[t].qs); \
        }                                                                                              \
        return (part[0] + part[1]) + (part[2] + part[3]);                                              \
    }

Q2_0_DOT(q2_0_dot_generic, , isum_generic, load_f16)
const type_kernels q2_0_kernels_generic = { .act_type = TS_Q8_0, .dot = q2_0_dot_generic };

#if defined(TS_X86)
/* The 8 code bytes spread so byte j holds byte j / 4, shifted right by 2 (j % 4) (per 16-bit lane:
 * a left shift of the multiplier picks the field), masked; sum (q - 1) a = sum q a - sum a. */
static ALWAYS_INLINE TARGET_AVX2 int32_t isum_avx2(const uint8_t *qs, const int8_t *a) {
    uint64_t v;
    memcpy(&v, qs, 8);
    const __m256i spread = _mm256_shuffle_epi8(_mm256_set1_epi64x((long long)v),
                                               _mm256_setr_epi8(0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3,
                                                                4, 4, 4, 4, 5, 5, 5, 5, 6, 6, 6, 6, 7, 7, 7, 7));
    /* per byte j: shift right by 2 (j % 4): multiply-free, via two 16-bit shifts and a blend */
    const __m256i s0 = spread, s2 = _mm256_srli_epi16(spread, 2), s4 = _mm256_srli_epi16(spread, 4), s6 = _mm256_srli_epi16(spread, 6);
    const __m256i m01 = _mm256_set1_epi32(0x0000ff00), m2 = _mm256_set1_epi32(0x00ff0000), m3 = _mm256_set1_epi32((int)0xff000000u);
    __m256i q = _mm256_blendv_epi8(s0, s2, m01);
    q = _mm256_blendv_epi8(q, s4, m2);
    q = _mm256_blendv_epi8(q, s6, m3);
    q = _mm256_and_si256(q, _mm256_set1_epi8(3));
    const __m256i av = _mm256_loadu_si256((const __m256i *)a);
    const __m256i ones = _mm256_set1_epi16(1);
    const __m256i qa = _mm256_madd_epi16(_mm256_maddubs_epi16(q, av), ones);
    const __m256i sa = _mm256_madd_epi16(_mm256_maddubs_epi16(_mm256_set1_epi8(1), av), ones);
    const __m256i s = _mm256_sub_epi32(qa, sa);
    return hsum_i32x8(s);
}

Q2_0_DOT(q2_0_dot_avx2, TARGET_AVX2, isum_avx2, f16_bits_to_f32)   /* F16C: the same values */
const type_kernels q2_0_kernels_avx2 = { .act_type = TS_Q8_0, .dot = q2_0_dot_avx2 };
const type_kernels q2_0_kernels_avx512 = { .act_type = TS_Q8_0, .dot = q2_0_dot_avx2 };
#endif

#if defined(__aarch64__)
static ALWAYS_INLINE TARGET_DOTPROD int32_t isum_dotprod(const uint8_t *qs, const int8_t *a) {
    int8_t q[32];
    for (int j = 0; j < 32; j++) q[j] = (int8_t)((qs[j / 4] >> (2 * (j % 4)) & 3) - 1);
    return vaddvq_s32(vdotq_s32(vdotq_s32(vdupq_n_s32(0), vld1q_s8(q), vld1q_s8(a)), vld1q_s8(q + 16), vld1q_s8(a + 16)));
}

Q2_0_DOT(q2_0_dot_dotprod, TARGET_DOTPROD, isum_dotprod, load_f16)
const type_kernels q2_0_kernels_neon_dotprod = { .act_type = TS_Q8_0, .dot = q2_0_dot_dotprod };
#endif
