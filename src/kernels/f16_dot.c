/* F16 weights . f32 activations, the weights widened with F16C (the shared float kernel in
 * float_dot.h). Portable and AVX2/AVX-512. */
#define FLOAT_DOT_NAME f16
#define FLOAT_DOT_ELEM uint16_t
#define FLOAT_DOT_WIDEN(v) half_to_f32(v)
#define FLOAT_DOT_LOAD8(p) _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(p)))
#include "kernels/float_dot.h"

#if defined(TS_X86)
TS_X86_SHAPES(f16, avx2, TARGET_AVX2, f16_tile_avx2, 1, 2)
TS_X86_SHAPES(f16, avx512, TARGET_AVX512, f16_tile_avx2, 1, 4)
#endif
