/* TQ2_0 weights . Q8_K activations: each super-block unpacked (tq2_0.c) and multiplied in integers,
 * the same bits in every set: UNPACKING_KERNELS (unpacked_dot.h) defines the tables
 * T_kernels_generic, T_kernels_avx2, T_kernels_avx512 and T_kernels_neon_dotprod; on x86 the row
 * kernel takes each sub-block of 32 straight from its 2-bit fields (SUB_KERNELS). */
#include "kernels/unpacked_dot.h"

#if defined(TS_X86)
static inline float tq2_0_d(const block_tq2_0 *b) { return load_f16(b->d); }
/* sub-block ib = 4 h + l: field l of bytes 32 h .. 32 h + 31, minus 1 */
static ALWAYS_INLINE TARGET_AVX2 void tq2_0_sub_avx2(const block_tq2_0 *b, int ib, __m256i *mag, __m256i *sgn, __m256i *sc) {
    const __m256i bytes = _mm256_loadu_si256((const __m256i *)(b->qs + 32 * (ib / 4)));
    const __m256i q = _mm256_sub_epi8(_mm256_and_si256(_mm256_srli_epi16(bytes, 2 * (ib % 4)), _mm256_set1_epi8(3)), _mm256_set1_epi8(1));
    *mag = _mm256_abs_epi8(q);
    *sgn = q;
    *sc = _mm256_set1_epi16(1);
}
#endif

SUB_KERNELS(tq2_0, block_tq2_0)
