/* F32 weights . f32 activations (the shared float kernel in float_dot.h). Portable and AVX2/AVX-512. */
#define FLOAT_DOT_NAME f32
#define FLOAT_DOT_ELEM float
#define FLOAT_DOT_WIDEN(v) (v)
#define FLOAT_DOT_LOAD8(p) _mm256_loadu_ps(p)
#define FLOAT_DOT_LOAD16(p) _mm512_loadu_ps(p)
#define FLOAT_DOT_MLOAD16(m, p) _mm512_maskz_loadu_ps(m, p)
#include "kernels/float_dot.h"

#if defined(TS_X86)
TS_X86_SHAPES(f32, avx2, TARGET_AVX2, f32_tile_avx2, 1, 2)
TS_X86_SHAPES(f32, avx512, TARGET_AVX512, f32_tile_avx512, 2, 4)
#endif
