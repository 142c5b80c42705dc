/* IQ4_NL weights . Q8_0 activations: per block (d_w * d_a) * sum(kvalues_iq4nl[q] * a), the sum in
 * integers. Portable, AVX2 (table4_simd.h) and AVX-512 VNNI (the pair kernel of pair_dot.h on
 * the looked-up codes). */
#include <stddef.h>
#include "kernels/kernels_internal.h"
#include "kernels/simd.h"
#include "kernels/table4_simd.h"
#include "kernels/pair_dot.h"

static float iq4_nl_dot_generic(const void *w, const void *a, int64_t k) { return table4_dot_q8_0(w, a, k, 0); }

const type_kernels iq4_nl_kernels_generic = { .act_type = TS_Q8_0, .dot = iq4_nl_dot_generic };

#if defined(TS_X86)
static ALWAYS_INLINE TARGET_AVX2 void iq4_nl_avx2_body(const uint8_t *w, size_t ws, const uint8_t *a,
                                                       size_t as, int64_t k, float *y, long ys,
                                                       const int NR, const int NC) {
    table4_avx2_body(w, ws, a, as, k, y, ys, NR, NC, 0);
}

/* The signed codes of blocks b[0] and b[1] (when both) in one 512-bit vector: the nibbles looked
 * up in the table (vpshufb per 128-bit lane, the table in every lane). */
static ALWAYS_INLINE TARGET_AVX512 __m512i iq4_nl_codes_pair(const block_iq4_nl *b, int both) {
    const __m512i table = _mm512_broadcast_i32x4(_mm_loadu_si128((const __m128i *)kvalues_iq4nl));
    return _mm512_shuffle_epi8(table, nibbles_pair(b[0].qs, both ? b[1].qs : NULL));
}

_Static_assert(offsetof(block_iq4_nl, d) == 0, "pair_scales reads d at the block start");
static ALWAYS_INLINE TARGET_AVX512 void iq4_nl_avx512_body(const uint8_t *w, size_t ws, const uint8_t *a,
                                                           size_t as, int64_t k, float *y, long ys,
                                                           const int NR, const int NC) {
    PAIR_TILE_VNNI_BODY(block_iq4_nl, iq4_nl_codes_pair, pair_scales, 0)
}

DOT_FROM_BODY(TARGET_AVX2, iq4_nl_dot_avx2, iq4_nl_avx2_body)
TILE_FROM_BODY(TARGET_AVX2, iq4_nl_tile_avx2, iq4_nl_avx2_body, 4, 4)
const type_kernels iq4_nl_kernels_avx2 = {
    .act_type = TS_Q8_0, .dot = iq4_nl_dot_avx2,
    .tile = iq4_nl_tile_avx2, .tile_rows = 4, .tile_cols = 4 };

DOT_FROM_BODY(TARGET_AVX512, iq4_nl_dot_avx512, iq4_nl_avx512_body)
TILE_FROM_BODY(TARGET_AVX512, iq4_nl_tile_avx512, iq4_nl_avx512_body, 4, 4)
const type_kernels iq4_nl_kernels_avx512 = {
    .act_type = ACT_Q8_0X2, .dot = iq4_nl_dot_avx512,
    .tile = iq4_nl_tile_avx512, .tile_rows = 4, .tile_cols = 4 };
#endif

#if defined(__aarch64__)
/* NEON SDOT (pair_dot.h): the nibbles looked up in the table (TBL; it fits one register) */
static ALWAYS_INLINE TARGET_DOTPROD void iq4_nl_codes_neon(const uint8_t *b, int8x16_t *lo, int8x16_t *hi) {
    const int8x16_t table = vld1q_s8(kvalues_iq4nl);
    const uint8x16_t qs = vld1q_u8(((const block_iq4_nl *)b)->qs);
    *lo = vqtbl1q_s8(table, vandq_u8(qs, vdupq_n_u8(0x0f)));
    *hi = vqtbl1q_s8(table, vshrq_n_u8(qs, 4));
}

static ALWAYS_INLINE TARGET_DOTPROD void iq4_nl_dotprod_body(const uint8_t *w, size_t ws, const uint8_t *a, size_t as,
                                                             int64_t k, float *y, long ys, const int NR, const int NC) {
    SIGNED_TILE_DOTPROD_BODY(sizeof(block_iq4_nl), iq4_nl_codes_neon, block_f16_scale)
}

DOT_FROM_BODY(TARGET_DOTPROD, iq4_nl_dot_dotprod, iq4_nl_dotprod_body)
TILE_FROM_BODY(TARGET_DOTPROD, iq4_nl_rows4_dotprod, iq4_nl_dotprod_body, 4, 1)
TILE_FROM_BODY(TARGET_DOTPROD, iq4_nl_tile_dotprod, iq4_nl_dotprod_body, 4, 4)
const type_kernels iq4_nl_kernels_neon_dotprod = {
    .act_type = TS_Q8_0, .dot = iq4_nl_dot_dotprod, .rows4 = iq4_nl_rows4_dotprod,
    .tile = iq4_nl_tile_dotprod, .tile_rows = 4, .tile_cols = 4 };
#endif
