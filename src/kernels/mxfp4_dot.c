/* MXFP4 weights . Q8_0 activations: per block (2^(e - 128) * d_a) * sum(kvalues_mxfp4[q] * a), the
 * sum in integers. Portable, AVX2 (table4_simd.h) and AVX-512 VNNI (the pair kernel of
 * pair_dot.h on the looked-up codes, with the E8M0 scales). */
#include <stddef.h>
#include "kernels/kernels_internal.h"
#include "kernels/simd.h"
#include "kernels/table4_simd.h"
#include "kernels/pair_dot.h"

static float mxfp4_dot_generic(const void *w, const void *a, int64_t k) { return table4_dot_q8_0(w, a, k, 1); }

const type_kernels mxfp4_kernels_generic = { .act_type = TS_Q8_0, .dot = mxfp4_dot_generic };

#if defined(TS_X86)
static ALWAYS_INLINE TARGET_AVX2 void mxfp4_avx2_body(const uint8_t *w, size_t ws, const uint8_t *a,
                                                      size_t as, int64_t k, float *y, long ys,
                                                      const int NR, const int NC) {
    table4_avx2_body(w, ws, a, as, k, y, ys, NR, NC, 1);
}

/* The signed codes of blocks b[0] and b[1] (when both): the nibbles looked up in the table. */
static ALWAYS_INLINE TARGET_AVX512 __m512i mxfp4_codes_pair(const block_mxfp4 *b, int both) {
    const __m512i table = _mm512_broadcast_i32x4(_mm_loadu_si128((const __m128i *)kvalues_mxfp4));
    return _mm512_shuffle_epi8(table, nibbles_pair(b[0].qs, both ? b[1].qs : NULL));
}

/* The scales 2^(e - 128) of blocks b[0] and b[1] (0 when !both) in the low and high 8 lanes: both
 * float bit patterns made in integer registers (e8m0_half_to_f32) and spread by one permute. */
static ALWAYS_INLINE TARGET_AVX512 __m512 mxfp4_scales_pair(const void *p, const int block_bytes, int both) {
    const block_mxfp4 *b = p;
    uint64_t bits = f32_bits(e8m0_half_to_f32(b[0].e)) | (both ? (uint64_t)f32_bits(e8m0_half_to_f32(b[1].e)) << 32 : 0);
    const __m512i spread = _mm512_inserti64x4(_mm512_setzero_si512(), _mm256_set1_epi32(1), 1);
    return _mm512_castsi512_ps(_mm512_permutexvar_epi32(spread, _mm512_castsi128_si512(_mm_cvtsi64_si128((long long)bits))));
}

static ALWAYS_INLINE TARGET_AVX512 void mxfp4_avx512_body(const uint8_t *w, size_t ws, const uint8_t *a,
                                                          size_t as, int64_t k, float *y, long ys,
                                                          const int NR, const int NC) {
    PAIR_TILE_VNNI_BODY(block_mxfp4, mxfp4_codes_pair, mxfp4_scales_pair, 0)
}

DOT_FROM_BODY(TARGET_AVX2, mxfp4_dot_avx2, mxfp4_avx2_body)
TILE_FROM_BODY(TARGET_AVX2, mxfp4_tile_avx2, mxfp4_avx2_body, 4, 4)
const type_kernels mxfp4_kernels_avx2 = {
    .act_type = TS_Q8_0, .dot = mxfp4_dot_avx2,
    .tile = mxfp4_tile_avx2, .tile_rows = 4, .tile_cols = 4 };

DOT_FROM_BODY(TARGET_AVX512, mxfp4_dot_avx512, mxfp4_avx512_body)
TILE_FROM_BODY(TARGET_AVX512, mxfp4_tile_avx512, mxfp4_avx512_body, 4, 4)
const type_kernels mxfp4_kernels_avx512 = {
    .act_type = ACT_Q8_0X2, .dot = mxfp4_dot_avx512,
    .tile = mxfp4_tile_avx512, .tile_rows = 4, .tile_cols = 4 };
#endif

#if defined(__aarch64__)
/* NEON SDOT (pair_dot.h): the nibbles looked up in the doubled E2M1 table, the E8M0 scale halved */
static ALWAYS_INLINE TARGET_DOTPROD void mxfp4_codes_neon(const uint8_t *b, int8x16_t *lo, int8x16_t *hi) {
    const int8x16_t table = vld1q_s8(kvalues_mxfp4);
    const uint8x16_t qs = vld1q_u8(((const block_mxfp4 *)b)->qs);
    *lo = vqtbl1q_s8(table, vandq_u8(qs, vdupq_n_u8(0x0f)));
    *hi = vqtbl1q_s8(table, vshrq_n_u8(qs, 4));
}

static ALWAYS_INLINE float mxfp4_scale_neon(const uint8_t *b) { return e8m0_half_to_f32(b[0]); }

static ALWAYS_INLINE TARGET_DOTPROD void mxfp4_dotprod_body(const uint8_t *w, size_t ws, const uint8_t *a, size_t as,
                                                            int64_t k, float *y, long ys, const int NR, const int NC) {
    SIGNED_TILE_DOTPROD_BODY(sizeof(block_mxfp4), mxfp4_codes_neon, mxfp4_scale_neon)
}

DOT_FROM_BODY(TARGET_DOTPROD, mxfp4_dot_dotprod, mxfp4_dotprod_body)
TILE_FROM_BODY(TARGET_DOTPROD, mxfp4_rows4_dotprod, mxfp4_dotprod_body, 4, 1)
TILE_FROM_BODY(TARGET_DOTPROD, mxfp4_tile_dotprod, mxfp4_dotprod_body, 4, 4)
const type_kernels mxfp4_kernels_neon_dotprod = {
    .act_type = TS_Q8_0, .dot = mxfp4_dot_dotprod, .rows4 = mxfp4_rows4_dotprod,
    .tile = mxfp4_tile_dotprod, .tile_rows = 4, .tile_cols = 4 };
#endif
