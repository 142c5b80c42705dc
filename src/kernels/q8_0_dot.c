/* Q8_0 weights . Q8_0 activations: per block (d_w * d_a) * sum(q_w * q_a), the sum in integers.
 * Portable, AVX2 (sign trick + maddubs), AVX-512 VNNI (dpbusd) and NEON (with and
 * without SDOT) variants. */
#include <stddef.h>
#include "kernels/kernels_internal.h"
#include "kernels/simd.h"
#include "kernels/pair_dot.h"

static ALWAYS_INLINE float dot_q8_0_q8_0(const void *w, const void *act, int64_t k) {
    const block_q8_0 *x = w, *y = act;
    float sum = 0.0f;
    for (int64_t i = 0; i < k / QK; i++)
        sum += load_f16(x[i].d) * load_f16(y[i].d) * (float)dot_i8(x[i].qs, y[i].qs, QK);
    return sum;
}

static float q8_0_dot_generic(const void *w, const void *act, int64_t k) {
    return dot_q8_0_q8_0(w, act, k);
}

const type_kernels q8_0_kernels_generic = { .act_type = TS_Q8_0, .dot = q8_0_dot_generic };

#if defined(TS_X86)
/* The block's codes and scale, for the shared AVX2 body (pair_dot.h) */
static ALWAYS_INLINE TARGET_AVX2 __m256i q8_0_codes(const uint8_t *b) {
    return _mm256_loadu_si256((const __m256i *)((const block_q8_0 *)b)->qs);
}
#define Q8_0_SCALE(b) f16_bits_to_f32((b) + offsetof(block_q8_0, d))

static ALWAYS_INLINE TARGET_AVX2 void q8_0_avx2_body(const uint8_t *w, size_t ws, const uint8_t *a,
                                                     size_t as, int64_t k, float *y, long ys,
                                                     const int NR, const int NC) {
    SIGNED_TILE_AVX2_BODY(sizeof(block_q8_0), q8_0_codes, Q8_0_SCALE)
}

/* AVX-512 VNNI (pair_dot.h): the codes of Q8_0 weight blocks b[0] and (both ? b[1] : none) as a pair */
static ALWAYS_INLINE TARGET_AVX512 __m512i load_q8_0_pair(const block_q8_0 *b, int both) {
    __m256i hi = both ? _mm256_loadu_si256((const __m256i *)b[1].qs) : _mm256_setzero_si256();
    return join_i8x32(_mm256_loadu_si256((const __m256i *)b[0].qs), both ? &hi : NULL);
}
_Static_assert(offsetof(block_q8_0, d) == 0, "pair_scales reads d at the block start");
static ALWAYS_INLINE TARGET_AVX512 void q8_0_avx512_body(const uint8_t *w, size_t ws, const uint8_t *a,
                                                         size_t as, int64_t k, float *y, long ys,
                                                         const int NR, const int NC) {
    PAIR_TILE_VNNI_BODY(block_q8_0, load_q8_0_pair, pair_scales, 1)
}

DOT_FROM_BODY(TARGET_AVX2, q8_0_dot_avx2, q8_0_avx2_body)
TILE_FROM_BODY(TARGET_AVX2, q8_0_rows4_avx2, q8_0_avx2_body, 4, 1)
TILE_FROM_BODY(TARGET_AVX2, q8_0_tile_avx2, q8_0_avx2_body, 4, 4)
const type_kernels q8_0_kernels_avx2 = {
    .act_type = TS_Q8_0, .dot = q8_0_dot_avx2, .rows4 = q8_0_rows4_avx2,
    .tile = q8_0_tile_avx2, .tile_rows = 4, .tile_cols = 4 };

DOT_FROM_BODY(TARGET_AVX512, q8_0_dot_avx512, q8_0_avx512_body)
TILE_FROM_BODY(TARGET_AVX512, q8_0_rows4_avx512, q8_0_avx512_body, 4, 1)
TILE_FROM_BODY(TARGET_AVX512, q8_0_tile_avx512, q8_0_avx512_body, 4, 4)
const type_kernels q8_0_kernels_avx512 = {
    .act_type = ACT_Q8_0X2, .dot = q8_0_dot_avx512, .rows4 = q8_0_rows4_avx512,
    .tile = q8_0_tile_avx512, .tile_rows = 4, .tile_cols = 4 };
#endif

#if defined(__aarch64__)
/* NEON: each block's integer sum in int32 lanes, then the portable kernel's float operations (so
 * the same bits). Without SDOT: widening byte multiplies summed pairwise. */
static float q8_0_dot_neon(const void *w, const void *act, int64_t k) {
    const block_q8_0 *x = w, *y = act;
    float sum = 0.0f;
    for (int64_t i = 0; i < k / QK; i++) {
        int32x4_t s = vdupq_n_s32(0);
        for (int h = 0; h < 2; h++) {
            int8x16_t a = vld1q_s8(x[i].qs + 16 * h), b = vld1q_s8(y[i].qs + 16 * h);
            s = vpadalq_s16(s, vmull_s8(vget_low_s8(a), vget_low_s8(b)));
            s = vpadalq_s16(s, vmull_s8(vget_high_s8(a), vget_high_s8(b)));
        }
        sum += load_f16(x[i].d) * load_f16(y[i].d) * (float)vaddvq_s32(s);
    }
    return sum;
}

const type_kernels q8_0_kernels_neon = { .act_type = TS_Q8_0, .dot = q8_0_dot_neon };

/* With SDOT (pair_dot.h), NR rows x NC activations: each activation block loaded once for the rows. */
static ALWAYS_INLINE TARGET_DOTPROD void q8_0_codes_neon(const uint8_t *b, int8x16_t *lo, int8x16_t *hi) {
    *lo = vld1q_s8(((const block_q8_0 *)b)->qs);
    *hi = vld1q_s8(((const block_q8_0 *)b)->qs + 16);
}

static ALWAYS_INLINE TARGET_DOTPROD void q8_0_dotprod_body(const uint8_t *w, size_t ws, const uint8_t *a, size_t as,
                                                           int64_t k, float *y, long ys, const int NR, const int NC) {
    SIGNED_TILE_DOTPROD_BODY(sizeof(block_q8_0), q8_0_codes_neon, block_f16_scale)
}

DOT_FROM_BODY(TARGET_DOTPROD, q8_0_dot_dotprod, q8_0_dotprod_body)
TILE_FROM_BODY(TARGET_DOTPROD, q8_0_rows4_dotprod, q8_0_dotprod_body, 4, 1)
TILE_FROM_BODY(TARGET_DOTPROD, q8_0_tile_dotprod, q8_0_dotprod_body, 4, 4)
const type_kernels q8_0_kernels_neon_dotprod = {
    .act_type = TS_Q8_0, .dot = q8_0_dot_dotprod, .rows4 = q8_0_rows4_dotprod,
    .tile = q8_0_tile_dotprod, .tile_rows = 4, .tile_cols = 4 };
#endif
