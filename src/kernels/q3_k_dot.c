/* Q3_K weights . Q8_K activations: per super-block d * d_a * sum_g (s[g] - 32) sum(q a) with the
 * signed 3-bit q, integer inside. That is the integer form of block_unpacked (q3_k.c unpacks into
 * it), with the same float operations ((d * d_a) * isum), so Q3_K takes the low-bit types' kernels
 * (unpacked_dot.h): SUB_KERNELS defines q3_k_kernels_generic, q3_k_kernels_avx2, q3_k_kernels_avx512
 * and q3_k_kernels_neon_dotprod, and a batch multiplies its rows unpacked once, in tiles. */
#include "kernels/unpacked_dot.h"

#if defined(TS_X86)
static inline float q3_k_d(const block_q3_K *b) { return load_f16(b->d); }
/* sub-block ib = 4 n + j: the 2 low bits at 2 j of qs[32 n + l], the high bit 4 n + j of hmask[l] */
static ALWAYS_INLINE TARGET_AVX2 void q3_k_sub_avx2(const block_q3_K *b, int ib, __m256i *mag, __m256i *sgn, __m256i *sc) {
    const int n = ib / 4, j = ib % 4;
    const __m256i low = _mm256_and_si256(_mm256_srli_epi16(_mm256_loadu_si256((const __m256i *)(b->qs + 32 * n)), 2 * j),
                                         _mm256_set1_epi8(3));
    const __m256i high = _mm256_and_si256(_mm256_srli_epi16(_mm256_loadu_si256((const __m256i *)b->hmask), 4 * n + j),
                                          _mm256_set1_epi8(1));
    const __m256i q = _mm256_sub_epi8(_mm256_or_si256(low, _mm256_slli_epi16(high, 2)), _mm256_set1_epi8(4));
    *mag = _mm256_abs_epi8(q);
    *sgn = q;
    *sc = _mm256_setr_m128i(_mm_set1_epi16((short)(q3_k_scale6(b->scales, 2 * ib) - 32)),
                          _mm_set1_epi16((short)(q3_k_scale6(b->scales, 2 * ib + 1) - 32)));
}
#endif

SUB_KERNELS(q3_k, block_q3_K)
