/* BF16 weights . f32 activations, a bfloat16 widened to f32 by a 16-bit shift (the shared float
 * kernel in float_dot.h). Portable and AVX2/AVX-512. */
#define FLOAT_DOT_NAME bf16
#define FLOAT_DOT_ELEM uint16_t
#define FLOAT_DOT_WIDEN(v) bfloat_to_f32(v)
#define FLOAT_DOT_LOAD8(p) \
    _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(_mm_loadu_si128((const __m128i *)(p))), 16))
#define FLOAT_DOT_LOAD16(p) _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(_mm256_loadu_si256((const __m256i *)(p))), 16))
#define FLOAT_DOT_MLOAD16(m, p) _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(_mm256_maskz_loadu_epi16(m, p)), 16))
#include "kernels/float_dot.h"

#if defined(TS_X86)
TS_X86_SHAPES(bf16, avx2, TARGET_AVX2, bf16_tile_avx2, 1, 2)
TS_X86_SHAPES(bf16, avx512, TARGET_AVX512, bf16_tile_avx512, 2, 4)
#endif
