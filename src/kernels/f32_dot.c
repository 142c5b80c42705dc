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

const type_kernels f32_kernels_generic = { TS_F32, f32_dot_generic, NULL, 0, 0 };

#if defined(TS_X86)
/* 1 x 2 tiles with AVX2 and 2 x 4 with AVX-512 (see float_dot.h for why). */
static TARGET_AVX2 float f32_dot_avx2(const void *w, const void *a, int64_t k) {
    float y;
    float_avx2_body(w, 0, a, 0, k, &y, 0, 1, 1);
    return y;
}

static TARGET_AVX2 void f32_tile_avx2(const uint8_t *w, size_t ws, const uint8_t *a, size_t as, int64_t k,
                                      float *y, long ys) {
    float_avx2_body(w, ws, a, as, k, y, ys, 1, 2);
}

static TARGET_AVX512 float f32_dot_avx512(const void *w, const void *a, int64_t k) {
    float y;
    float_avx512_body(w, 0, a, 0, k, &y, 0, 1, 1);
    return y;
}

static TARGET_AVX512 void f32_tile_avx512(const uint8_t *w, size_t ws, const uint8_t *a, size_t as, int64_t k,
                                          float *y, long ys) {
    float_avx512_body(w, ws, a, as, k, y, ys, 2, 4);
}

const type_kernels f32_kernels_avx2 = { TS_F32, f32_dot_avx2, f32_tile_avx2, 1, 2 };
const type_kernels f32_kernels_avx512 = { TS_F32, f32_dot_avx512, f32_tile_avx512, 2, 4 };
#endif

#if defined(__aarch64__)
FLOAT_NEON_KERNELS(f32);
#endif
