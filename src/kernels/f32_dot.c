/* F32 weights . f32 activations (the shared float kernel in float_dot.h). Portable, AVX2/AVX-512
 * and NEON. */
#define FLOAT_DOT_ELEM float
#define FLOAT_DOT_WIDEN(v) (v)
#define FLOAT_DOT_LOAD8(p) _mm256_loadu_ps(p)
#define FLOAT_DOT_LOAD16(p) _mm512_loadu_ps(p)
#define FLOAT_DOT_MLOAD16(m, p) _mm512_maskz_loadu_ps(m, p)
#define FLOAT_DOT_LOAD4(p) vld1q_f32(p)
#include "kernels/float_dot.h"

static float f32_dot_generic(const void *w, const void *a, int64_t k) { return float_dot_portable(w, a, k); }

const type_kernels f32_kernels_generic = { .act_type = TS_F32, .dot = f32_dot_generic };

#if defined(TS_X86)
/* 1 x 2 tiles with AVX2 and 2 x 4 with AVX-512 (see float_dot.h for why). */
DOT_FROM_BODY(TARGET_AVX2, f32_dot_avx2, float_avx2_body)
TILE_FROM_BODY(TARGET_AVX2, f32_tile_avx2, float_avx2_body, 1, 2)
const type_kernels f32_kernels_avx2 = {
    .act_type = TS_F32, .dot = f32_dot_avx2,
    .tile = f32_tile_avx2, .tile_rows = 1, .tile_cols = 2 };

DOT_FROM_BODY(TARGET_AVX512, f32_dot_avx512, float_avx512_body)
TILE_FROM_BODY(TARGET_AVX512, f32_tile_avx512, float_avx512_body, 2, 4)
const type_kernels f32_kernels_avx512 = {
    .act_type = TS_F32, .dot = f32_dot_avx512,
    .tile = f32_tile_avx512, .tile_rows = 2, .tile_cols = 4 };
#endif

#if defined(__aarch64__)
/* 4 x 1 rows and 2 x 4 tiles (whose 2 x 4 x 2 accumulators stay in registers) */
DOT_FROM_BODY(TARGET_NEON, f32_dot_neon, float_neon_body)
TILE_FROM_BODY(TARGET_NEON, f32_rows4_neon, float_neon_body, 4, 1)
TILE_FROM_BODY(TARGET_NEON, f32_tile_neon, float_neon_body, 2, 4)
const type_kernels f32_kernels_neon = {
    .act_type = TS_F32, .dot = f32_dot_neon, .rows4 = f32_rows4_neon,
    .tile = f32_tile_neon, .tile_rows = 2, .tile_cols = 4 };
#endif
