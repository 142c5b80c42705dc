/* BF16 weights . f32 activations, a bfloat16 widened to f32 by a 16-bit shift (the shared float
 * kernel in float_dot.h). Portable, AVX2/AVX-512 and NEON. */
#define FLOAT_DOT_ELEM uint16_t
#define FLOAT_DOT_WIDEN(v) bfloat_to_f32(v)
#define FLOAT_DOT_LOAD8(p) \
    _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(_mm_loadu_si128((const __m128i *)(p))), 16))
#define FLOAT_DOT_LOAD16(p) _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(_mm256_loadu_si256((const __m256i *)(p))), 16))
#define FLOAT_DOT_MLOAD16(m, p) _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(_mm256_maskz_loadu_epi16(m, p)), 16))
#define FLOAT_DOT_LOAD4(p) vreinterpretq_f32_u32(vshll_n_u16(vld1_u16(p), 16))
#include "kernels/float_dot.h"

static float bf16_dot_generic(const void *w, const void *a, int64_t k) { return float_dot_portable(w, a, k); }

const type_kernels bf16_kernels_generic = { TS_F32, bf16_dot_generic, NULL, 0, 0 };

#if defined(TS_X86)
/* 1 x 2 tiles with AVX2 and 2 x 4 with AVX-512 (see float_dot.h for why). */
static TARGET_AVX2 float bf16_dot_avx2(const void *w, const void *a, int64_t k) {
    float y;
    float_avx2_body(w, 0, a, 0, k, &y, 0, 1, 1);
    return y;
}

static TARGET_AVX2 void bf16_tile_avx2(const uint8_t *w, size_t ws, const uint8_t *a, size_t as, int64_t k,
                                       float *y, long ys) {
    float_avx2_body(w, ws, a, as, k, y, ys, 1, 2);
}

static TARGET_AVX512 float bf16_dot_avx512(const void *w, const void *a, int64_t k) {
    float y;
    float_avx512_body(w, 0, a, 0, k, &y, 0, 1, 1);
    return y;
}

static TARGET_AVX512 void bf16_tile_avx512(const uint8_t *w, size_t ws, const uint8_t *a, size_t as, int64_t k,
                                           float *y, long ys) {
    float_avx512_body(w, ws, a, as, k, y, ys, 2, 4);
}

const type_kernels bf16_kernels_avx2 = { TS_F32, bf16_dot_avx2, bf16_tile_avx2, 1, 2 };
const type_kernels bf16_kernels_avx512 = { TS_F32, bf16_dot_avx512, bf16_tile_avx512, 2, 4 };
#endif

#if defined(__aarch64__)
FLOAT_NEON_KERNELS(bf16);
#endif
