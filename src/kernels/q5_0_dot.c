/* Q5_0 weights . Q8_0 activations: per block (d_w * d_a) * sum((q - 16) * a), the sum in
 * integers. Portable, AVX2 and AVX-512 VNNI. */
#include <stddef.h>
#include "kernels/kernels_internal.h"
#include "kernels/simd.h"
#include "kernels/pair_dot.h"

static ALWAYS_INLINE float dot_q5_0_q8_0(const void *w, const void *act, int64_t k) {
    const block_q5_0 *x = w;
    const block_q8_0 *y = act;
    float sum = 0.0f;
    for (int64_t i = 0; i < k / QK; i++) {
        int8_t q[QK];
        uint32_t qh = load_u32(x[i].qh);
        for (int j = 0; j < QK / 2; j++) {
            q[j] = (int8_t)(((x[i].qs[j] & 0xf) | ((qh >> j) & 1) << 4) - 16);
            q[j + QK / 2] = (int8_t)(((x[i].qs[j] >> 4) | ((qh >> (j + QK / 2)) & 1) << 4) - 16);
        }
        sum += load_f16(x[i].d) * load_f16(y[i].d) * (float)dot_i8(q, y[i].qs, QK);
    }
    return sum;
}

static float q5_0_dot_generic(const void *w, const void *act, int64_t k) {
    return dot_q5_0_q8_0(w, act, k);
}

const type_kernels q5_0_kernels_generic = { .act_type = TS_Q8_0, .dot = q5_0_dot_generic };

#if defined(TS_X86)
/* The 32 signed codes of a block: nibble j (low) and j + 16 (high) of qs, minus 16 unless bit
 * j of qh is set; as int8, nibble - 16 is the nibble with the top four bits set. */
static ALWAYS_INLINE TARGET_AVX2 __m256i q5_0_codes(const uint8_t *block) {
    const block_q5_0 *b = (const block_q5_0 *)block;
    return _mm256_or_si256(nibbles_256(b->qs), _mm256_andnot_si256(qh_bit_bytes(b->qh), _mm256_set1_epi8((char)0xf0)));
}

/* As the Q8_0 kernels (pair_dot.h's AVX2 body), with the codes unpacked first. */
#define Q5_0_SCALE(b) f16_bits_to_f32((b) + offsetof(block_q5_0, d))
static ALWAYS_INLINE TARGET_AVX2 void q5_0_avx2_body(const uint8_t *w, size_t ws, const uint8_t *a,
                                                     size_t as, int64_t k, float *y, long ys,
                                                     const int NR, const int NC) {
    SIGNED_TILE_AVX2_BODY(sizeof(block_q5_0), q5_0_codes, Q5_0_SCALE)
}

/* The signed codes of blocks b[0] and b[1] (when both) in one 512-bit vector: the nibbles, and a
 * byte whose qh bit is clear gets its top four bits set (nibble - 16). Without b[1] the high half
 * is -16s, which the kernel multiplies by zero activations with a zero scale. */
static ALWAYS_INLINE TARGET_AVX512 __m512i q5_0_codes_pair(const block_q5_0 *b, int both) {
    __m512i nib = nibbles_pair(b[0].qs, both ? b[1].qs : NULL);
    uint32_t h0, h1 = 0;
    memcpy(&h0, b[0].qh, 4);
    if (both) memcpy(&h1, b[1].qh, 4);
    __mmask64 high = _cvtu64_mask64((uint64_t)h1 << 32 | h0);
    return _mm512_mask_blend_epi8(high, _mm512_or_si512(nib, _mm512_set1_epi8((char)0xf0)), nib);
}

/* AVX-512 VNNI: the shared pair kernel (pair_dot.h) on the unpacked codes. */
_Static_assert(offsetof(block_q5_0, d) == 0, "pair_scales reads d at the block start");
static ALWAYS_INLINE TARGET_AVX512 void q5_0_avx512_body(const uint8_t *w, size_t ws, const uint8_t *a,
                                                         size_t as, int64_t k, float *y, long ys,
                                                         const int NR, const int NC) {
    PAIR_TILE_VNNI_BODY(block_q5_0, q5_0_codes_pair, pair_scales, 0)
}

DOT_FROM_BODY(TARGET_AVX2, q5_0_dot_avx2, q5_0_avx2_body)
TILE_FROM_BODY(TARGET_AVX2, q5_0_tile_avx2, q5_0_avx2_body, 4, 4)
const type_kernels q5_0_kernels_avx2 = {
    .act_type = TS_Q8_0, .dot = q5_0_dot_avx2,
    .tile = q5_0_tile_avx2, .tile_rows = 4, .tile_cols = 4 };

DOT_FROM_BODY(TARGET_AVX512, q5_0_dot_avx512, q5_0_avx512_body)
TILE_FROM_BODY(TARGET_AVX512, q5_0_tile_avx512, q5_0_avx512_body, 4, 4)
const type_kernels q5_0_kernels_avx512 = {
    .act_type = ACT_Q8_0X2, .dot = q5_0_dot_avx512,
    .tile = q5_0_tile_avx512, .tile_rows = 4, .tile_cols = 4 };
#endif

#if defined(__aarch64__)
/* NEON SDOT (pair_dot.h): nibble j (low) and j + 16 (high) of qs, minus 16 unless bit j of qh is
 * set: the nibble with the top four bits set where the bit is clear. Bit j of qh becomes byte
 * j's mask by testing the byte of qh that holds it against that bit. */
static ALWAYS_INLINE TARGET_DOTPROD void q5_0_codes_neon(const uint8_t *b, int8x16_t *lo, int8x16_t *hi) {
    const block_q5_0 *blk = (const block_q5_0 *)b;
    static const uint8_t bit_of_byte[16] = { 1, 2, 4, 8, 16, 32, 64, 128, 1, 2, 4, 8, 16, 32, 64, 128 };
    const uint8x16_t bits = vld1q_u8(bit_of_byte), top4 = vdupq_n_u8(0xf0);
    const uint8x16_t qs = vld1q_u8(blk->qs);
    const uint8x16_t set_lo = vtstq_u8(vcombine_u8(vdup_n_u8(blk->qh[0]), vdup_n_u8(blk->qh[1])), bits);
    const uint8x16_t set_hi = vtstq_u8(vcombine_u8(vdup_n_u8(blk->qh[2]), vdup_n_u8(blk->qh[3])), bits);
    *lo = vreinterpretq_s8_u8(vorrq_u8(vandq_u8(qs, vdupq_n_u8(0x0f)), vbicq_u8(top4, set_lo)));
    *hi = vreinterpretq_s8_u8(vorrq_u8(vshrq_n_u8(qs, 4), vbicq_u8(top4, set_hi)));
}

static ALWAYS_INLINE TARGET_DOTPROD void q5_0_dotprod_body(const uint8_t *w, size_t ws, const uint8_t *a, size_t as,
                                                           int64_t k, float *y, long ys, const int NR, const int NC) {
    SIGNED_TILE_DOTPROD_BODY(sizeof(block_q5_0), q5_0_codes_neon, block_f16_scale)
}

DOT_FROM_BODY(TARGET_DOTPROD, q5_0_dot_dotprod, q5_0_dotprod_body)
TILE_FROM_BODY(TARGET_DOTPROD, q5_0_rows4_dotprod, q5_0_dotprod_body, 4, 1)
TILE_FROM_BODY(TARGET_DOTPROD, q5_0_tile_dotprod, q5_0_dotprod_body, 4, 4)
const type_kernels q5_0_kernels_neon_dotprod = {
    .act_type = TS_Q8_0, .dot = q5_0_dot_dotprod, .rows4 = q5_0_rows4_dotprod,
    .tile = q5_0_tile_dotprod, .tile_rows = 4, .tile_cols = 4 };
#endif
