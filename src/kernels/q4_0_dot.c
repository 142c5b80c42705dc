/* Q4_0 weights . Q8_0 activations: per block (d_w * d_a) * sum((q - 8) * a), integer inside.
 * Portable (also the NEON kernel without SDOT), AVX2, AVX-512 VNNI and NEON SDOT (pair_dot.h). */
#include <stddef.h>
#include "kernels/kernels_internal.h"
#include "kernels/simd.h"
#include "kernels/pair_dot.h"

static ALWAYS_INLINE float dot_q4_0_q8_0(const void *w, const void *act, int64_t k) {
    const block_q4_0 *x = w;
    const block_q8_0 *y = act;
    float sum = 0.0f;
    for (int64_t i = 0; i < k / QK; i++) {
        int8_t q[QK];
        for (int j = 0; j < QK / 2; j++) {
            q[j] = (int8_t)((x[i].qs[j] & 0xf) - 8);
            q[j + QK / 2] = (int8_t)((x[i].qs[j] >> 4) - 8);
        }
        sum += load_f16(x[i].d) * load_f16(y[i].d) * (float)dot_i8(q, y[i].qs, QK);
    }
    return sum;
}

static float q4_0_dot_generic(const void *w, const void *a, int64_t k) { return dot_q4_0_q8_0(w, a, k); }

const type_kernels q4_0_kernels_generic = { .act_type = TS_Q8_0, .dot = q4_0_dot_generic };

#if defined(TS_X86)
/* AVX2: the shared body of the signed 32-weight types (pair_dot.h) on the block's 32 codes, its low
 * nibbles then its high ones, minus 8. The portable body, left to the compiler, decoded the 1B Q4_0
 * at 2.2 tok/s. */
static ALWAYS_INLINE TARGET_AVX2 __m256i q4_0_codes(const uint8_t *b) {
    return _mm256_sub_epi8(nibbles_256(((const block_q4_0 *)b)->qs), _mm256_set1_epi8(8));
}
#define Q4_0_SCALE(b) f16_bits_to_f32((b) + offsetof(block_q4_0, d))
static ALWAYS_INLINE TARGET_AVX2 void q4_0_avx2_body(const uint8_t *w, size_t ws, const uint8_t *a,
                                                     size_t as, int64_t k, float *y, long ys,
                                                     const int NR, const int NC) {
    SIGNED_TILE_AVX2_BODY(sizeof(block_q4_0), q4_0_codes, Q4_0_SCALE)
}
DOT_FROM_BODY(TARGET_AVX2, q4_0_dot_avx2, q4_0_avx2_body)
TILE_FROM_BODY(TARGET_AVX2, q4_0_rows4_avx2, q4_0_avx2_body, 4, 1)
TILE_FROM_BODY(TARGET_AVX2, q4_0_tile_avx2, q4_0_avx2_body, 4, 4)
const type_kernels q4_0_kernels_avx2 = {
    .act_type = TS_Q8_0, .dot = q4_0_dot_avx2, .rows4 = q4_0_rows4_avx2,
    .tile = q4_0_tile_avx2, .tile_rows = 4, .tile_cols = 4 };

/* The signed codes of blocks b[0] and b[1] (when both) in one 512-bit vector: nibbles minus 8. */
static ALWAYS_INLINE TARGET_AVX512 __m512i q4_0_codes_pair(const block_q4_0 *b, int both) {
    return _mm512_sub_epi8(nibbles_pair(b[0].qs, both ? b[1].qs : NULL), _mm512_set1_epi8(8));
}

_Static_assert(offsetof(block_q4_0, d) == 0, "pair_scales reads d at the block start");
static ALWAYS_INLINE TARGET_AVX512 void q4_0_avx512_body(const uint8_t *w, size_t ws, const uint8_t *a,
                                                         size_t as, int64_t k, float *y, long ys,
                                                         const int NR, const int NC) {
    PAIR_TILE_VNNI_BODY(block_q4_0, q4_0_codes_pair, pair_scales, 0)
}

DOT_FROM_BODY(TARGET_AVX512, q4_0_dot_avx512, q4_0_avx512_body)
TILE_FROM_BODY(TARGET_AVX512, q4_0_tile_avx512, q4_0_avx512_body, 4, 4)
const type_kernels q4_0_kernels_avx512 = {
    .act_type = ACT_Q8_0X2, .dot = q4_0_dot_avx512,
    .tile = q4_0_tile_avx512, .tile_rows = 4, .tile_cols = 4 };
#endif

#if defined(__aarch64__)
/* NEON SDOT (pair_dot.h): the nibbles minus 8 */
static ALWAYS_INLINE TARGET_DOTPROD void q4_0_codes_neon(const uint8_t *b, int8x16_t *lo, int8x16_t *hi) {
    const uint8x16_t qs = vld1q_u8(((const block_q4_0 *)b)->qs);
    *lo = vsubq_s8(vreinterpretq_s8_u8(vandq_u8(qs, vdupq_n_u8(0x0f))), vdupq_n_s8(8));
    *hi = vsubq_s8(vreinterpretq_s8_u8(vshrq_n_u8(qs, 4)), vdupq_n_s8(8));
}

static ALWAYS_INLINE TARGET_DOTPROD void q4_0_dotprod_body(const uint8_t *w, size_t ws, const uint8_t *a, size_t as,
                                                           int64_t k, float *y, long ys, const int NR, const int NC) {
    SIGNED_TILE_DOTPROD_BODY(sizeof(block_q4_0), q4_0_codes_neon, block_f16_scale)
}

DOT_FROM_BODY(TARGET_DOTPROD, q4_0_dot_dotprod, q4_0_dotprod_body)
TILE_FROM_BODY(TARGET_DOTPROD, q4_0_rows4_dotprod, q4_0_dotprod_body, 4, 1)
TILE_FROM_BODY(TARGET_DOTPROD, q4_0_tile_dotprod, q4_0_dotprod_body, 4, 4)
const type_kernels q4_0_kernels_neon_dotprod = {
    .act_type = TS_Q8_0, .dot = q4_0_dot_dotprod, .rows4 = q4_0_rows4_dotprod,
    .tile = q4_0_tile_dotprod, .tile_rows = 4, .tile_cols = 4 };
#endif
