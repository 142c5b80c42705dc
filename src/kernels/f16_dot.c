/* F16 weights . f32 activations, the weights widened with F16C or FCVT (the shared float kernel
 * in float_dot.h). Portable, AVX2/AVX-512 and NEON. */
#define FLOAT_DOT_ELEM uint16_t
#define FLOAT_DOT_WIDEN(v) half_to_f32(v)
#define FLOAT_DOT_LOAD8(p) _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(p)))
#define FLOAT_DOT_LOAD16(p) _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *)(p)))
#define FLOAT_DOT_MLOAD16(m, p) _mm512_cvtph_ps(_mm256_maskz_loadu_epi16(m, p))
#define FLOAT_DOT_LOAD4(p) vcvt_f32_f16(vreinterpret_f16_u16(vld1_u16(p)))
#include "kernels/float_dot.h"

static float f16_dot_generic(const void *w, const void *a, int64_t k) { return float_dot_portable(w, a, k); }

const type_kernels f16_kernels_generic = { .act_type = TS_F32, .dot = f16_dot_generic };

#if defined(TS_X86)
/* 1 x 2 tiles with AVX2 and 2 x 4 with AVX-512 (see float_dot.h for why). */
DOT_FROM_BODY(TARGET_AVX2, f16_dot_avx2, float_avx2_body)
TILE_FROM_BODY(TARGET_AVX2, f16_tile_avx2, float_avx2_body, 1, 2)
const type_kernels f16_kernels_avx2 = {
    .act_type = TS_F32, .dot = f16_dot_avx2,
    .tile = f16_tile_avx2, .tile_rows = 1, .tile_cols = 2 };

DOT_FROM_BODY(TARGET_AVX512, f16_dot_avx512, float_avx512_body)
TILE_FROM_BODY(TARGET_AVX512, f16_tile_avx512, float_avx512_body, 2, 4)
const type_kernels f16_kernels_avx512 = {
    .act_type = TS_F32, .dot = f16_dot_avx512,
    .tile = f16_tile_avx512, .tile_rows = 2, .tile_cols = 4 };
#endif

#if defined(__aarch64__)
/* 4 x 1 rows and 2 x 4 tiles (whose 2 x 4 x 2 accumulators stay in registers) */
DOT_FROM_BODY(TARGET_NEON, f16_dot_neon, float_neon_body)
TILE_FROM_BODY(TARGET_NEON, f16_rows4_neon, float_neon_body, 4, 1)
TILE_FROM_BODY(TARGET_NEON, f16_tile_neon, float_neon_body, 2, 4)
const type_kernels f16_kernels_neon = {
    .act_type = TS_F32, .dot = f16_dot_neon, .rows4 = f16_rows4_neon,
    .tile = f16_tile_neon, .tile_rows = 2, .tile_cols = 4 };
#endif
