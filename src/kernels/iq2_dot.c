/* IQ2_XXS, IQ2_XS, IQ2_S weights . Q8_K activations: each super-block unpacked (iq2.c) and multiplied in
 * integers, the same bits in every set: UNPACKING_KERNELS (unpacked_dot.h) defines each type's
 * tables T_kernels_generic, T_kernels_avx2, T_kernels_avx512 and T_kernels_neon_dotprod; on x86 the
 * row kernel unpacks each sub-block of 32 into registers (PREPARED_SUB_KERNELS): four 8-byte grid entries
 * loaded by address, the super-block's indices, sign bytes and scales formed first in vectors; the
 * signs go to the activations (AVX2: sign; AVX-512: a masked negation). With VBMI and BITALG the
 * super-block's 32 grid entries are looked up in vectors instead (at the end). */
#include "kernels/unpacked_dot.h"
#include "kernels/iq_grids.h"
#include "kernels/lanes_simd.h"
#include "kernels/lanes_pack.h"
#include <string.h>

#if defined(TS_X86)
static inline float iq2_xxs_d(const block_iq2_xxs *b) { return load_f16(b->d) * 0.125f; }
/* Per super-block: the sign bytes of all 32 groups in vectors (the sign words are the odd u32 of qs) */
typedef struct { __m256i signs[2]; } iq2_xxs_prepared;
static ALWAYS_INLINE TARGET_AVX2 void iq2_xxs_prepare_avx2(const block_iq2_xxs *b, iq2_xxs_prepared *p) {
    const __m256 v0 = _mm256_castsi256_ps(_mm256_loadu_si256((const __m256i *)b->qs));
    const __m256 v1 = _mm256_castsi256_ps(_mm256_loadu_si256((const __m256i *)(b->qs + 32)));
    /* words of sub-blocks 0 1 4 5 | 2 3 6 7, then in order */
    const __m256i w = _mm256_permute4x64_epi64(_mm256_castps_si256(_mm256_shuffle_ps(v0, v1, _MM_SHUFFLE(3, 1, 3, 1))), 0xD8);
    ksign_bytes(ksign_fields(w), p->signs);
}
static ALWAYS_INLINE TARGET_AVX2 void iq2_xxs_sub_avx2(const block_iq2_xxs *b, const iq2_xxs_prepared *p, int ib, __m256i *mag,
                                                      __m256i *sgn, __m256i *sc) {
    const uint8_t *idx = b->qs + 8 * ib;
    *mag = four_entries(&iq_grid2xxs[idx[0]], &iq_grid2xxs[idx[1]], &iq_grid2xxs[idx[2]], &iq_grid2xxs[idx[3]]);
    *sgn = signs_of_bytes(p->signs[ib / 4], ib % 4);
    *sc = _mm256_set1_epi16((short)(2 * (idx[7] >> 4) + 1));   /* a byte load: cheaper than a vector per super-block */
}

static inline float iq2_xs_d(const block_iq2_xs *b) { return load_f16(b->d) * 0.125f; }
/* Per super-block: the sign bytes of all 32 groups (bits 9..15 of each u16 of qs) in vectors */
typedef struct { __m256i signs[2], sc16; } iq2_xs_prepared;
static ALWAYS_INLINE TARGET_AVX2 void iq2_xs_prepare_avx2(const block_iq2_xs *b, iq2_xs_prepared *p) {
    const __m256i a = _mm256_srli_epi16(_mm256_loadu_si256((const __m256i *)b->qs), 9);
    const __m256i c = _mm256_srli_epi16(_mm256_loadu_si256((const __m256i *)(b->qs + 32)), 9);
    ksign_bytes(_mm256_permute4x64_epi64(_mm256_packus_epi16(a, c), 0xD8), p->signs);
    p->sc16 = scales16_of_nibbles(b->scales);
}
static ALWAYS_INLINE TARGET_AVX2 void iq2_xs_sub_avx2(const block_iq2_xs *b, const iq2_xs_prepared *p, int ib, __m256i *mag,
                                                     __m256i *sgn, __m256i *sc) {
    uint16_t q[4];
    memcpy(q, b->qs + 8 * ib, 8);   /* little-endian hosts only: x86 */
    *mag = four_entries(&iq_grid2xs[q[0] & 511], &iq_grid2xs[q[1] & 511], &iq_grid2xs[q[2] & 511], &iq_grid2xs[q[3] & 511]);
    *sgn = signs_of_bytes(p->signs[ib / 4], ib % 4);
    *sc = scales_of_sub_block(p->sc16, ib);
}

static inline float iq2_s_d(const block_iq2_s *b) { return load_f16(b->d) * 0.125f; }
/* Per super-block, in vectors: the 32 10-bit grid indices (entry l of sub-block ib: qs[4 ib + l]
 * and bits 2l..2l+1 of qh[ib], moved to bits 8..9 by a multiply) and the sign bytes copied to both
 * halves, for each sub-block's signs by one shuffle (bit j of sign byte l negates weight 8 l + j). */
typedef struct { uint16_t idx[32]; __m256i signs[2], sc16; } iq2_s_prepared;
static ALWAYS_INLINE TARGET_AVX2 void iq2_s_prepare_avx2(const block_iq2_s *b, iq2_s_prepared *p) {
    const __m256i qh = _mm256_broadcastsi128_si256(_mm_loadl_epi64((const __m128i *)b->qh));
    const __m256i mult = _mm256_setr_epi16(1 << 14, 1 << 12, 1 << 10, 1 << 8, 1 << 14, 1 << 12, 1 << 10, 1 << 8,
                                           1 << 14, 1 << 12, 1 << 10, 1 << 8, 1 << 14, 1 << 12, 1 << 10, 1 << 8);
    const char z = (char)0x80;
    UNROLL
    for (int v = 0; v < 2; v++) {
        const char a0 = (char)(4 * v), a1 = (char)(4 * v + 1), a2 = (char)(4 * v + 2), a3 = (char)(4 * v + 3);
        const __m256i hi = _mm256_shuffle_epi8(qh, _mm256_setr_epi8(a0, z, a0, z, a0, z, a0, z, a1, z, a1, z, a1, z, a1, z,
                                                                    a2, z, a2, z, a2, z, a2, z, a3, z, a3, z, a3, z, a3, z));
        const __m256i lo = _mm256_cvtepu8_epi16(_mm_loadu_si128((const __m128i *)(b->qs + 16 * v)));
        const __m256i bits89 = _mm256_and_si256(_mm256_srli_epi16(_mm256_mullo_epi16(hi, mult), 6), _mm256_set1_epi16(0x300));
        _mm256_storeu_si256((__m256i *)(p->idx + 16 * v), _mm256_or_si256(lo, bits89));
    }
    p->signs[0] = _mm256_broadcastsi128_si256(_mm_loadu_si128((const __m128i *)(b->qs + 32)));
    p->signs[1] = _mm256_broadcastsi128_si256(_mm_loadu_si128((const __m128i *)(b->qs + 48)));
    p->sc16 = scales16_of_nibbles(b->scales);
}
static ALWAYS_INLINE TARGET_AVX2 void iq2_s_sub_avx2(const block_iq2_s *b, const iq2_s_prepared *p, int ib, __m256i *mag,
                                                    __m256i *sgn, __m256i *sc) {
    const uint16_t *e = p->idx + 4 * ib;
    *mag = four_entries(&iq_grid2s[e[0]], &iq_grid2s[e[1]], &iq_grid2s[e[2]], &iq_grid2s[e[3]]);
    *sgn = signs_of_bytes(p->signs[ib / 4], ib % 4);
    *sc = scales_of_sub_block(p->sc16, ib);
}
/* The AVX-512 kernels' negation masks: bit 8 l + j of sub-block ib is bit j of its sign byte l */
static ALWAYS_INLINE TARGET_AVX512 __mmask32 iq2_xxs_negative(const block_iq2_xxs *b, const iq2_xxs_prepared *p, int ib) {
    return negative_of_bytes(p->signs[ib / 4], ib % 4);
}
static ALWAYS_INLINE TARGET_AVX512 __mmask32 iq2_xs_negative(const block_iq2_xs *b, const iq2_xs_prepared *p, int ib) {
    return negative_of_bytes(p->signs[ib / 4], ib % 4);
}
static ALWAYS_INLINE TARGET_AVX512 __mmask32 iq2_s_negative(const block_iq2_s *b, const iq2_s_prepared *p, int ib) {
    return _cvtu32_mask32(load_u32(b->qs + 32 + 4 * ib));
}
#endif

PREPARED_SUB_KERNELS(iq2_xxs, block_iq2_xxs)
PREPARED_SUB_KERNELS(iq2_xs, block_iq2_xs)
PREPARED_SUB_KERNELS(iq2_s, block_iq2_s)

#if defined(TS_X86)
/* ---- AVX-512 with VBMI and BITALG: a super-block's 32 grid entries looked up at once ----
 * Each entry's 8 values (8, 25 or 43) as a 16-bit code of 2-bit fields (iq_grid2*_codes: a low and
 * a high byte plane, one vpermi2b per 128 entries and plane). Per pair of sub-blocks z, the 8
 * entries' codes go to the low bytes of 8 qwords; vpmultishiftqb moves field j to the bottom of
 * byte j, and vpermb maps it to its value. The signs become four 64-bit negation masks (bit 8 e + j:
 * value j of entry e), taken from the sign bytes in entry order. The integer sums are
 * block_unpacked's: the same bits. */

/* code_pick[z]: qword q of pair z from entry 8 z + q, whose code bytes sit at byte POS(e) of the two
 * lookups (the low plane's, then the high plane's at 64 + POS(e)) */
#define IQ2_PICK_Q(POS, e) POS(e), 64 + POS(e), 0, 0, 0, 0, 0, 0
#define IQ2_PICK_Z(POS, z) IQ2_PICK_Q(POS, 8 * (z)), IQ2_PICK_Q(POS, 8 * (z) + 1), IQ2_PICK_Q(POS, 8 * (z) + 2), \
    IQ2_PICK_Q(POS, 8 * (z) + 3), IQ2_PICK_Q(POS, 8 * (z) + 4), IQ2_PICK_Q(POS, 8 * (z) + 5),                 \
    IQ2_PICK_Q(POS, 8 * (z) + 6), IQ2_PICK_Q(POS, 8 * (z) + 7)
#define IQ2_PICK(POS) { { IQ2_PICK_Z(POS, 0) }, { IQ2_PICK_Z(POS, 1) }, { IQ2_PICK_Z(POS, 2) }, { IQ2_PICK_Z(POS, 3) } }
#define POS_XXS(e) (8 * ((e) / 4) + (e) % 4)   /* IQ2_XXS: 4 index bytes per 8-byte record */
#define POS_XS(e) (2 * (e))                    /* IQ2_XS: the low byte of each u16 */
#define POS_S(e) (e)                           /* IQ2_S: the index bytes in order */
static const _Alignas(64) uint8_t iq2_xxs_code_pick[4][64] = IQ2_PICK(POS_XXS);
static const _Alignas(64) uint8_t iq2_xs_code_pick[4][64] = IQ2_PICK(POS_XS);
static const _Alignas(64) uint8_t iq2_s_code_pick[4][64] = IQ2_PICK(POS_S);
/* the sign bytes at POS(e) into entry order (bytes 0..31) */
#define IQ2_COMPACT8(POS, e) POS(e), POS(e + 1), POS(e + 2), POS(e + 3), POS(e + 4), POS(e + 5), POS(e + 6), POS(e + 7)
static const _Alignas(64) uint8_t iq2_xxs_sign_pick[64] = { IQ2_COMPACT8(POS_XXS, 0), IQ2_COMPACT8(POS_XXS, 8),
                                                             IQ2_COMPACT8(POS_XXS, 16), IQ2_COMPACT8(POS_XXS, 24) };
static const _Alignas(64) uint8_t iq2_xs_sign_pick[64] = { IQ2_COMPACT8(POS_XS, 0), IQ2_COMPACT8(POS_XS, 8),
                                                            IQ2_COMPACT8(POS_XS, 16), IQ2_COMPACT8(POS_XS, 24) };
/* scale_pick[z][w]: the scale word of the maddubs pair w of pair z (values 2 w, 2 w + 1 of its 64):
 * per sub-block (IQ2_XXS: word 0 of qword ib) or per group of 16 (IQ2_XS, IQ2_S: word g) */
#define W8(x) x, x, x, x, x, x, x, x
static const _Alignas(64) uint16_t iq2_xxs_scale_pick[4][32] = { { W8(0), W8(0), W8(4), W8(4) }, { W8(8), W8(8), W8(12), W8(12) },
                                                                 { W8(16), W8(16), W8(20), W8(20) }, { W8(24), W8(24), W8(28), W8(28) } };
static const _Alignas(64) uint16_t iq2_group_scale_pick[4][32] = { { W8(0), W8(1), W8(2), W8(3) }, { W8(4), W8(5), W8(6), W8(7) },
                                                                   { W8(8), W8(9), W8(10), W8(11) }, { W8(12), W8(13), W8(14), W8(15) } };
#undef W8

/* The integer sum of a super-block from the lookups lo, hi of its entries' codes, its negation
 * masks, and its scale words (picked per pair by scale_pick). */
static ALWAYS_INLINE TARGET_AVX512_VBMI int32_t iq2_codes_isum(__m512i lo, __m512i hi, const uint8_t (*code_pick)[64], const uint64_t neg[4],
                                                               __m512i scales, const uint16_t (*scale_pick)[32], const int8_t *a) {
    static const _Alignas(64) uint8_t value_of_code[64] = {
#define V4 8, 25, 43, 0
#define V16 V4, V4, V4, V4
        V16, V16, V16, V16
#undef V16
#undef V4
    };
    const __m512i shifts = _mm512_set1_epi64(0x0e0c0a0806040200LL), values = _mm512_load_si512(value_of_code);
    __m512i acc = _mm512_setzero_si512();
    UNROLL
    for (int z = 0; z < 4; z++) {
        const __m512i codes = _mm512_permutex2var_epi8(lo, _mm512_load_si512(code_pick[z]), hi);
        const __m512i mag = _mm512_permutexvar_epi8(_mm512_multishift_epi64_epi8(shifts, codes), values);
        const __m512i sc = _mm512_permutexvar_epi16(_mm512_load_si512(scale_pick[z]), scales);
        const __m512i av = _mm512_loadu_si512(a + 64 * z);
        acc = _mm512_dpwssd_epi32(acc, _mm512_maddubs_epi16(mag, _mm512_mask_sub_epi8(av, _cvtu64_mask64(neg[z]), _mm512_setzero_si512(), av)), sc);
    }
    return _mm512_reduce_add_epi32(acc);
}

/* The sign bytes (at POS(e) in signs) as the four negation masks */
static ALWAYS_INLINE TARGET_AVX512_VBMI void iq2_negation_masks(__m512i signs, const uint8_t *sign_pick, uint64_t neg[4]) {
    _mm256_storeu_si256((__m256i *)neg, _mm512_castsi512_si256(_mm512_permutexvar_epi8(_mm512_load_si512(sign_pick), signs)));
}

/* IQ2_XXS: qword ib holds 4 index bytes, then the word w_ib: the sign fields at its bits 0, 7, 14,
 * 21 (cut out to bytes 0..3 by vpmultishiftqb; vpermi2b looks them up in ksigns by their 7 bits),
 * 2 s + 1 from its top 4 bits */
static ALWAYS_INLINE TARGET_AVX512_VBMI int32_t iq2_xxs_isum_vbmi(const block_iq2_xxs *b, const int8_t *a) {
    const __m512i q = _mm512_loadu_si512(b->qs);
    const __mmask64 bit7 = _mm512_movepi8_mask(q);
    const __m512i fields = _mm512_multishift_epi64_epi8(_mm512_set1_epi64(0x00000000352e2720LL), q);
    uint64_t neg[4];
    iq2_negation_masks(_mm512_permutex2var_epi8(_mm512_loadu_si512(iq_ksigns), fields, _mm512_loadu_si512(iq_ksigns + 64)), iq2_xxs_sign_pick, neg);
    const __m512i sc = _mm512_or_si512(_mm512_slli_epi64(_mm512_srli_epi64(q, 60), 1), _mm512_set1_epi64(1));
    return iq2_codes_isum(plane_lookup_256(iq_grid2xxs_codes[0], q, bit7), plane_lookup_256(iq_grid2xxs_codes[1], q, bit7),
                          iq2_xxs_code_pick, neg, sc, iq2_xxs_scale_pick, a);
}

/* IQ2_XS: u16 e = 9-bit index | 7-bit sign field << 9 */
static ALWAYS_INLINE TARGET_AVX512_VBMI int32_t iq2_xs_isum_vbmi(const block_iq2_xs *b, const int8_t *a) {
    const __m512i q = _mm512_loadu_si512(b->qs);
    const __mmask64 bit7 = _mm512_movepi8_mask(q), bit8 = _mm512_test_epi8_mask(_mm512_srli_epi16(q, 8), _mm512_set1_epi8(1));
    uint64_t neg[4];
    iq2_negation_masks(_mm512_permutex2var_epi8(_mm512_loadu_si512(iq_ksigns), _mm512_srli_epi16(q, 9), _mm512_loadu_si512(iq_ksigns + 64)),
                       iq2_xs_sign_pick, neg);
    return iq2_codes_isum(plane_lookup_512(iq_grid2xs_codes[0], q, bit7, bit8), plane_lookup_512(iq_grid2xs_codes[1], q, bit7, bit8),
                          iq2_xs_code_pick, neg, _mm512_zextsi256_si512(scales16_of_nibbles(b->scales)), iq2_group_scale_pick, a);
}
/* IQ2_S: 32 index bytes, bits 8, 9 of entry e at bits 2 (e % 4), +1 of qh[e / 4]; the sign bytes
 * stored in entry order */
static ALWAYS_INLINE TARGET_AVX512_VBMI int32_t iq2_s_isum_vbmi(const block_iq2_s *b, const int8_t *a) {
    const __m512i q = _mm512_zextsi256_si512(_mm256_loadu_si256((const __m256i *)b->qs));
    const __mmask64 bit7 = _mm512_movepi8_mask(q);
    const uint64_t qh = load_u64(b->qh);
    const __mmask64 bit8 = _cvtu64_mask64(_pext_u64(qh, 0x5555555555555555ull)), bit9 = _cvtu64_mask64(_pext_u64(qh, 0xaaaaaaaaaaaaaaaaull));
    __m512i code[2];
    UNROLL
    for (int h = 0; h < 2; h++)
        code[h] = _mm512_mask_blend_epi8(bit9, plane_lookup_512(iq_grid2s_codes[h], q, bit7, bit8),
                                         plane_lookup_512(iq_grid2s_codes[h] + 512, q, bit7, bit8));
    uint64_t neg[4];
    memcpy(neg, b->qs + 32, 32);   /* little-endian: bit 8 e + j of the 256 is bit j of sign byte e */
    return iq2_codes_isum(code[0], code[1], iq2_s_code_pick, neg, _mm512_zextsi256_si512(scales16_of_nibbles(b->scales)), iq2_group_scale_pick, a);
}


/* ---- Rows in lanes kept in a form of their own (type_kernels.lanes_packed_sb_bytes; with VBMI) ----
 * The copy writes each weight's value q = +-8, 25 or 43 instead of its grid index: the magnitude's
 * rank in 2 bits (IQ1's layout, ternary_lanes.h) and its sign as a bit of a 64-bit mask per 4 codes,
 * 16 rows in lanes, with each group of 16's scale field as a nibble tag. Per 4 codes: one vpermb to
 * |q| + 43 (its table reads the rank where it lies in the byte, so only every fourth needs a shift),
 * one masked subtract to u = q + 43 (0..86) and one dpbusd; a group's int32 sum less 43 times its
 * block sum, times the scale: the row kernel's integers, without its grid lookups, in 108 bytes a row
 * and super-block instead of 66 (IQ2_XXS), 74 (IQ2_XS) and 82 (IQ2_S). */
typedef struct {
    uint8_t rank[16][64];   /* chunk c, lane p byte j bits 2 m: weight 16 c + 4 m + j of row p, rank of |q| */
    uint64_t sign[64];      /* 4 codes t, bit 4 p + j: weight 4 t + j of row p negative */
    uint32_t tag[2][16];    /* lane p: group g's scale field (sc = 2 s + 1) at word g / 8, bits 4 (g % 8) */
    float d[16];            /* block_unpacked.d */
} iq2_lanes;

static void iq2_lanes_pack(unpack_block_fn unpack, size_t block_bytes, const uint8_t *w, size_t ws, int64_t k, uint8_t *out) {
    uint8_t rank_of[256];   /* |q|'s rank by q's byte: a table, not branches the random values mispredict */
    for (int b = 0; b < 256; b++) {
        const int q = (int8_t)b, mag = q < 0 ? -q : q;
        rank_of[b] = (uint8_t)(mag == 8 ? 0 : mag == 25 ? 1 : 2);
    }
    for (int64_t i = 0; i < k / QK_K; i++) {
        iq2_lanes l;
        memset(&l, 0, sizeof l);
        for (int p = 0; p < 16; p++) {
            block_unpacked u;
            unpack(w + p * ws + (size_t)i * block_bytes, &u);
            uint8_t rank[QK_K], sign[QK_K];
            for (int e = 0; e < QK_K; e++) {
                rank[e] = rank_of[(uint8_t)u.q[e]];
                sign[e] = (uint8_t)u.q[e] >> 7;
            }
            lanes_pack_fields2(rank, p, l.rank);
            lanes_pack_bits(sign, p, l.sign);
            for (int g = 0; g < 16; g++) l.tag[g / 8][p] |= (uint32_t)((u.sc[g] - 1) / 2) << (4 * (g % 8));
            l.d[p] = u.d;
        }
        memcpy(out + (size_t)i * sizeof l, &l, sizeof l);
    }
}

static ALWAYS_INLINE TARGET_AVX512_VBMI void iq2_packed_body(const uint8_t *ub, const uint8_t *a, size_t as, int64_t k,
                                                             float *y, long ys, const int NC) {
    int32_t sc_lut[16];
    uint8_t value[3][64];   /* |q| + 43 of the rank at bits 0-1, 2-3 or 4-5 of the index (vpermb reads 0-5) */
    for (int s = 0; s < 16; s++) sc_lut[s] = 2 * s + 1;
    for (int m = 0; m < 3; m++)
        for (int i = 0; i < 64; i++) value[m][i] = (uint8_t)((int[]){ 8, 25, 43, 0 }[(i >> 2 * m) & 3] + 43);
    const __m512i scales = _mm512_loadu_si512((const void *)sc_lut), twice_offset = _mm512_set1_epi8(86);
    const __m512i values[3] = { _mm512_loadu_si512((const void *)value[0]), _mm512_loadu_si512((const void *)value[1]),
                                _mm512_loadu_si512((const void *)value[2]) };
    /* codes 0-2 read in place; code 3's bits 6-7 moved to 2-3 (a 16-bit shift: within each byte
     * there); then 43 - |q| where the sign mask says so */
#define IQ2_SCALE(u, g) _mm512_permutexvar_epi32(_mm512_srli_epi32(_mm512_loadu_si512((const void *)(u)->tag[(g) / 8]), 4 * ((g) % 8)), scales)
#define IQ2_MAGNITUDE(u, g, q) _mm512_permutexvar_epi8((q) == 3 ? _mm512_srli_epi16(_mm512_loadu_si512((const void *)(u)->rank[g]), 4) \
                                                             : _mm512_loadu_si512((const void *)(u)->rank[g]), values[(q) == 3 ? 1 : (q)])
#define IQ2_CODES(u, g, q) _mm512_mask_sub_epi8(IQ2_MAGNITUDE(u, g, q), _cvtu64_mask64((u)->sign[4 * (g) + (q)]), twice_offset, \
                                                IQ2_MAGNITUDE(u, g, q))
    LANES_OFFSET_BODY(iq2_lanes, ub, a, as, k, y, ys, NC, 43, IQ2_SCALE, IQ2_CODES);
#undef IQ2_SCALE
#undef IQ2_MAGNITUDE
#undef IQ2_CODES
}
LANES_FROM_BODY_TARGET(TARGET_AVX512_VBMI, iq2_packed_avx512_vbmi, iq2_packed_body, 8)
#define IQ2_LANES(T) (.lanes_pack = T##_lanes_pack, .lanes_packed = iq2_packed_avx512_vbmi, \
                      .lanes_packed_sb_bytes = sizeof(iq2_lanes) / 16)
static void iq2_xxs_lanes_pack(const uint8_t *w, size_t ws, int64_t k, uint8_t *out) { iq2_lanes_pack(iq2_xxs_unpack, sizeof(block_iq2_xxs), w, ws, k, out); }
static void iq2_xs_lanes_pack(const uint8_t *w, size_t ws, int64_t k, uint8_t *out) { iq2_lanes_pack(iq2_xs_unpack, sizeof(block_iq2_xs), w, ws, k, out); }
static void iq2_s_lanes_pack(const uint8_t *w, size_t ws, int64_t k, uint8_t *out) { iq2_lanes_pack(iq2_s_unpack, sizeof(block_iq2_s), w, ws, k, out); }

VBMI_ISUM_DOT(iq2_xxs, block_iq2_xxs, iq2_xxs_isum_vbmi, TS_Q8_K, IQ2_LANES(iq2_xxs))
VBMI_ISUM_DOT(iq2_xs, block_iq2_xs, iq2_xs_isum_vbmi, TS_Q8_K, IQ2_LANES(iq2_xs))
VBMI_ISUM_DOT(iq2_s, block_iq2_s, iq2_s_isum_vbmi, TS_Q8_K, IQ2_LANES(iq2_s))
#endif
