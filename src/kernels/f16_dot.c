/* F16 weights . f32 activations, the weights widened with F16C (the shared float kernel in
 * float_dot.h). Portable and AVX2/AVX-512. */
#define FLOAT_DOT_NAME f16
#define FLOAT_DOT_ELEM uint16_t
#define FLOAT_DOT_WIDEN(v) half_to_f32(v)
#define FLOAT_DOT_LOAD8(p) _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(p)))
#define FLOAT_DOT_LOAD16(p) _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *)(p)))
#define FLOAT_DOT_MLOAD16(m, p) _mm512_cvtph_ps(_mm256_maskz_loadu_epi16(m, p))
#include "kernels/float_dot.h"

#if defined(TS_X86)
TS_X86_SHAPES(f16, avx2, TARGET_AVX2, f16_tile_avx2, 1, 2)
TS_X86_SHAPES(f16, avx512, TARGET_AVX512, f16_tile_avx512, 2, 4)
#endif
