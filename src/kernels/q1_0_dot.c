/* Q1_0 weights . Q8_0 activations: per activation block t of 32 (a quarter of a weight block),
 *   isum = sum (bit ? a : -a),   part[t % 4] += (d * d_a) * (float)isum
 * and the result (part[0] + part[1]) + (part[2] + part[3]): four independent sums, so the float
 * additions do not wait on each other. Every set does exactly these operations (the SIMD kernels
 * only find isum faster), so all give the same bits. */
#include "kernels/kernels_internal.h"
#include "kernels/simd.h"

static ALWAYS_INLINE int32_t isum_generic(const uint8_t *bits, const int8_t *a) {
    int32_t s = 0;
    for (int j = 0; j < 32; j++) s += bits[j / 8] >> (j % 8) & 1 ? a[j] : -a[j];
    return s;
}

#define Q1_0_DOT(NAME, TARGET, ISUM, F16)                                                                   \
    static TARGET float NAME(const void *w, const void *act, int64_t k) {                              \
        const block_q1_0 *x = w;                                                                       \
        const block_q8_0 *y = act;                                                                     \
        float part[4] = { 0.0f, 0.0f, 0.0f, 0.0f };                                                    \
        for (int64_t i = 0; i < k / 128; i++) {                                                        \
            const float d = F16(x[i].d);                                                               \
            for (int j = 0; j < 4; j++) {                                                              \
                const block_q8_0 *a = &y[4 * i + j];                                                   \
                part[j] += (d * F16(a->d)) * (float)ISUM(x[i].qs + 4 * j, a->qs);                      \
            }                                                                                          \
        }                                                                                              \
        return (part[0] + part[1]) + (part[2] + part[3]);                                              \
    }

Q1_0_DOT(q1_0_dot_generic, , isum_generic, load_f16)
const type_kernels q1_0_kernels_generic = { .act_type = TS_Q8_0, .dot = q1_0_dot_generic };

#if defined(TS_X86)
/* The 32 bits spread to bytes (byte j gets bits byte j / 8, tested against 1 << j % 8): a where set,
 * -a where clear, summed by maddubs / madd. */
static ALWAYS_INLINE TARGET_AVX2 int32_t isum_avx2(const uint8_t *bits, const int8_t *a) {
    const __m256i spread = _mm256_shuffle_epi8(_mm256_set1_epi32((int)load_u32(bits)),
                                               _mm256_setr_epi64x(0, 0x0101010101010101LL, 0x0202020202020202LL, 0x0303030303030303LL));
    const __m256i bit = _mm256_set1_epi64x((long long)0x8040201008040201ULL);
    const __m256i clear = _mm256_cmpeq_epi8(_mm256_and_si256(spread, bit), _mm256_setzero_si256());
    const __m256i av = _mm256_loadu_si256((const __m256i *)a);
    const __m256i sa = _mm256_sub_epi8(_mm256_xor_si256(av, clear), clear);
    const __m256i s = _mm256_madd_epi16(_mm256_maddubs_epi16(_mm256_set1_epi8(1), sa), _mm256_set1_epi16(1));
    return hsum_i32x8(s);
}

Q1_0_DOT(q1_0_dot_avx2, TARGET_AVX2, isum_avx2, f16_bits_to_f32)   /* F16C: the same values */
const type_kernels q1_0_kernels_avx2 = { .act_type = TS_Q8_0, .dot = q1_0_dot_avx2 };
const type_kernels q1_0_kernels_avx512 = { .act_type = TS_Q8_0, .dot = q1_0_dot_avx2 };
#endif

#if defined(__aarch64__)
static ALWAYS_INLINE TARGET_DOTPROD int32_t isum_dotprod(const uint8_t *bits, const int8_t *a) {
    static const uint8_t bitsel[16] = { 1, 2, 4, 8, 16, 32, 64, 128, 1, 2, 4, 8, 16, 32, 64, 128 };
    const uint8x16_t sel = vld1q_u8(bitsel);
    int32x4_t acc = vdupq_n_s32(0);
    for (int h = 0; h < 2; h++) {
        const uint8x16_t spread = vcombine_u8(vdup_n_u8(bits[2 * h]), vdup_n_u8(bits[2 * h + 1]));
        const int8x16_t sign = vbslq_s8(vtstq_u8(spread, sel), vdupq_n_s8(1), vdupq_n_s8(-1));
        acc = vdotq_s32(acc, sign, vld1q_s8(a + 16 * h));
    }
    return vaddvq_s32(acc);
}

Q1_0_DOT(q1_0_dot_dotprod, TARGET_DOTPROD, isum_dotprod, load_f16)
const type_kernels q1_0_kernels_neon_dotprod = { .act_type = TS_Q8_0, .dot = q1_0_dot_dotprod };
#endif
