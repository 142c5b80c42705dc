/* IQ3_XXS, IQ3_S weights . Q8_K activations: each super-block unpacked (iq3.c) and multiplied in
 * integers, the same bits in every set: UNPACKING_KERNELS (unpacked_dot.h) defines each type's
 * tables T_kernels_generic, T_kernels_avx2, T_kernels_avx512 and T_kernels_neon_dotprod; on x86 the
 * row kernel unpacks each sub-block of 32 into registers (PREPARED_SUB_KERNELS): eight 4-byte grid entries
 * loaded by address, the super-block's indices, sign bytes and scales formed first in vectors; the
 * signs go to the activations (AVX2: sign; AVX-512: a masked negation). */
#include "kernels/unpacked_dot.h"
#include "kernels/iq_grids.h"
#include "kernels/lanes_simd.h"
#include "kernels/lanes_pack.h"
#include <string.h>

#if defined(TS_X86)
/* Eight 4-byte grid entries by loads (IQ3_XXS: its indices are bytes, addressed as they are). */
static ALWAYS_INLINE TARGET_AVX2 __m256i eight_u32(const uint32_t *g, const uint8_t *i) {
    return _mm256_setr_epi32((int)g[i[0]], (int)g[i[1]], (int)g[i[2]], (int)g[i[3]], (int)g[i[4]], (int)g[i[5]],
                             (int)g[i[6]], (int)g[i[7]]);
}

static inline float iq3_xxs_d(const block_iq3_xxs *b) { return load_f16(b->d) * 0.25f; }
/* Per super-block: the sign bytes of all 32 groups (the words after the indices) in vectors */
typedef struct { __m256i signs[2]; } iq3_xxs_prepared;
static ALWAYS_INLINE TARGET_AVX2 void iq3_xxs_prepare_avx2(const block_iq3_xxs *b, iq3_xxs_prepared *p) {
    ksign_bytes(ksign_fields(_mm256_loadu_si256((const __m256i *)(b->qs + QK_K / 4))), p->signs);
}
static ALWAYS_INLINE TARGET_AVX2 void iq3_xxs_sub_avx2(const block_iq3_xxs *b, const iq3_xxs_prepared *p, int ib, __m256i *mag,
                                                      __m256i *sgn, __m256i *sc) {
    *mag = eight_u32(iq_grid3xxs, b->qs + 8 * ib);
    *sgn = signs_of_bytes(p->signs[ib / 4], ib % 4);
    *sc = _mm256_set1_epi16((short)(2 * (b->qs[QK_K / 4 + 4 * ib + 3] >> 4) + 1));
}

static inline float iq3_s_d(const block_iq3_s *b) { return load_f16(b->d); }
/* Per super-block, in vectors: the 64 9-bit grid indices (entry k of sub-block ib: qs[8 ib + k]
 * and bit k of qh[ib], moved to bit 8 by a multiply) and the sign bytes copied to both halves, for
 * each sub-block's signs by one shuffle (bit j of sign byte l negates weight 8 l + j). */
typedef struct { uint16_t idx[64]; __m256i signs[2], sc16; } iq3_s_prepared;
/* the scales of the 16 groups: nibble ib of the 4 scale bytes for sub-block ib's two */
static ALWAYS_INLINE TARGET_AVX2 __m256i iq3_s_scales16(const block_iq3_s *b) {
    const __m128i x = _mm_cvtsi32_si128((int)load_u32(b->scales)), m4 = _mm_set1_epi8(0x0f);
    const __m128i nib = _mm_unpacklo_epi8(_mm_and_si128(x, m4), _mm_and_si128(_mm_srli_epi16(x, 4), m4));
    return scales16_of_sub_blocks(_mm256_cvtepu8_epi32(nib));
}
static ALWAYS_INLINE TARGET_AVX2 void iq3_s_prepare_avx2(const block_iq3_s *b, iq3_s_prepared *p) {
    const __m256i qh = _mm256_broadcastsi128_si256(_mm_loadl_epi64((const __m128i *)b->qh));
    const __m256i mult = _mm256_setr_epi16((short)(1 << 15), 1 << 14, 1 << 13, 1 << 12, 1 << 11, 1 << 10, 1 << 9, 1 << 8,
                                           (short)(1 << 15), 1 << 14, 1 << 13, 1 << 12, 1 << 11, 1 << 10, 1 << 9, 1 << 8);
    const char z = (char)0x80;
    UNROLL
    for (int v = 0; v < 4; v++) {
        const char s0 = (char)(2 * v), s1 = (char)(2 * v + 1);
        const __m256i hi = _mm256_shuffle_epi8(qh, _mm256_setr_epi8(s0, z, s0, z, s0, z, s0, z, s0, z, s0, z, s0, z, s0, z,
                                                                    s1, z, s1, z, s1, z, s1, z, s1, z, s1, z, s1, z, s1, z));
        const __m256i lo = _mm256_cvtepu8_epi16(_mm_loadu_si128((const __m128i *)(b->qs + 16 * v)));
        const __m256i bit8 = _mm256_and_si256(_mm256_srli_epi16(_mm256_mullo_epi16(hi, mult), 7), _mm256_set1_epi16(0x100));
        _mm256_storeu_si256((__m256i *)(p->idx + 16 * v), _mm256_or_si256(lo, bit8));
    }
    p->signs[0] = _mm256_broadcastsi128_si256(_mm_loadu_si128((const __m128i *)b->signs));
    p->signs[1] = _mm256_broadcastsi128_si256(_mm_loadu_si128((const __m128i *)(b->signs + 16)));
    p->sc16 = iq3_s_scales16(b);
}
static ALWAYS_INLINE TARGET_AVX2 void iq3_s_sub_avx2(const block_iq3_s *b, const iq3_s_prepared *p, int ib, __m256i *mag,
                                                    __m256i *sgn, __m256i *sc) {
    const uint16_t *e = p->idx + 8 * ib;
    *mag = _mm256_setr_epi32((int)iq_grid3s[e[0]], (int)iq_grid3s[e[1]], (int)iq_grid3s[e[2]], (int)iq_grid3s[e[3]],
                             (int)iq_grid3s[e[4]], (int)iq_grid3s[e[5]], (int)iq_grid3s[e[6]], (int)iq_grid3s[e[7]]);
    *sgn = signs_of_bytes(p->signs[ib / 4], ib % 4);
    *sc = scales_of_sub_block(p->sc16, ib);
}
/* The AVX-512 kernels' negation masks: bit 8 l + j of sub-block ib is bit j of its sign byte l */
static ALWAYS_INLINE TARGET_AVX512 __mmask32 iq3_xxs_negative(const block_iq3_xxs *b, const iq3_xxs_prepared *p, int ib) {
    return negative_of_bytes(p->signs[ib / 4], ib % 4);
}
static ALWAYS_INLINE TARGET_AVX512 __mmask32 iq3_s_negative(const block_iq3_s *b, const iq3_s_prepared *p, int ib) {
    return _cvtu32_mask32(load_u32(b->signs + 4 * ib));
}

/* ---- AVX-512 with VBMI and BITALG: a super-block's 64 grid entries looked up at once (unpacked_dot.h) ---- */

/* IQ3_XXS: the 64 index bytes, the sign bytes from the ksigns, 2 s + 1 from the top 4 bits of each word */
static ALWAYS_INLINE TARGET_AVX512_VBMI int32_t iq3_xxs_planes_isum(const block_iq3_xxs *b, const int8_t *a) {
    const __m512i idx = _mm512_loadu_si512(b->qs);
    const __mmask64 bit7 = _mm512_movepi8_mask(idx);
    __m512i codes[4];
    UNROLL
    for (int j = 0; j < 4; j++) codes[j] = plane_lookup_256(iq_grid3xxs_planes[j], idx, bit7);
    const __m256i words = _mm256_loadu_si256((const __m256i *)(b->qs + QK_K / 4));
    return planes_isum(codes, ksign_bytes8(ksign_fields(words)), scales16_of_sub_blocks(_mm256_srli_epi32(words, 28)), a);
}

/* IQ3_S: bit 8 of index e is bit e of the 8 qh bytes; the sign bytes as stored; the scales' nibbles */
static ALWAYS_INLINE TARGET_AVX512_VBMI int32_t iq3_s_planes_isum(const block_iq3_s *b, const int8_t *a) {
    const __m512i idx = _mm512_loadu_si512(b->qs);
    const __mmask64 bit7 = _mm512_movepi8_mask(idx), bit8 = _cvtu64_mask64(load_u64(b->qh));
    __m512i codes[4];
    UNROLL
    for (int j = 0; j < 4; j++) codes[j] = plane_lookup_512(iq_grid3s_planes[j], idx, bit7, bit8);
    return planes_isum(codes, _mm256_loadu_si256((const __m256i *)b->signs), iq3_s_scales16(b), a);
}

#endif

#if defined(TS_X86)
/* ---- Rows in lanes kept in a form of their own (type_kernels.lanes_packed_sb_bytes) ----
 * The copy writes each weight's value q as a nibble, its rank among the type's 16 values (IQ3_S: the
 * odd -15..15; IQ3_XXS: +-4, 12, ..., 52, 62), 16 rows in lanes, and each sub-block's scale field as
 * a 4-bit tag. Per 4 codes, one byte shuffle gives u = q + offset (unsigned for dpbusd); a group g of
 * 16 with scale sc then gives sc sum_g q a = sc (sum_g u a - offset sum_g a), the row kernel's
 * integers without its grid lookups, in 136 bytes a row and super-block instead of 110 and 98. */
typedef struct {
    uint8_t codes[32][64];   /* chunk c, lane p byte j: weight 8 c + j (low nibble), 8 c + 4 + j (high) of row p */
    uint32_t tag[16];        /* lane p: sub-block ib's scale field (sc = 2 s + 1) at bits 4 ib */
    float d[16];             /* block_unpacked.d */
} iq3_lanes;

static const int8_t iq3_s_values[16] = { -15, -13, -11, -9, -7, -5, -3, -1, 1, 3, 5, 7, 9, 11, 13, 15 };
static const int8_t iq3_xxs_values[16] = { -62, -52, -44, -36, -28, -20, -12, -4, 4, 12, 20, 28, 36, 44, 52, 62 };

static void iq3_lanes_pack(unpack_block_fn unpack, size_t block_bytes, const int8_t values[16], const uint8_t *w, size_t ws,
                           int64_t k, uint8_t *out) {
    uint8_t rank[256];   /* a value's rank by its byte (a search of the 16 per weight took 80% of a load) */
    memset(rank, 15, sizeof rank);
    for (int n = 15; n >= 0; n--) rank[(uint8_t)values[n]] = (uint8_t)n;
    for (int64_t i = 0; i < k / QK_K; i++) {
        iq3_lanes l;
        memset(&l, 0, sizeof l);
        for (int p = 0; p < 16; p++) {
            block_unpacked u;
            unpack(w + p * ws + (size_t)i * block_bytes, &u);
            uint8_t nibble[QK_K];
            for (int e = 0; e < QK_K; e++) nibble[e] = rank[(uint8_t)u.q[e]];
            lanes_pack_nibbles(nibble, p, l.codes);
            for (int ib = 0; ib < 8; ib++) l.tag[p] |= (uint32_t)((u.sc[2 * ib] - 1) / 2) << (4 * ib);
            l.d[p] = u.d;
        }
        memcpy(out + (size_t)i * sizeof l, &l, sizeof l);
    }
}
static void iq3_s_lanes_pack(const uint8_t *w, size_t ws, int64_t k, uint8_t *out) {
    iq3_lanes_pack(iq3_s_unpack, sizeof(block_iq3_s), iq3_s_values, w, ws, k, out);
}
static void iq3_xxs_lanes_pack(const uint8_t *w, size_t ws, int64_t k, uint8_t *out) {
    iq3_lanes_pack(iq3_xxs_unpack, sizeof(block_iq3_xxs), iq3_xxs_values, w, ws, k, out);
}

/* 16 packed rows x NC positions (Q8_K): per group of 16, its values against the activations (dpbusd
 * per 4), less the offset's block sum, times the scale; then the portable kernel's float operations. */
static ALWAYS_INLINE TARGET_AVX512 void iq3_packed_body(const uint8_t *ub, const uint8_t *a, size_t as, int64_t k,
                                                        float *y, long ys, const int NC, const int8_t values[16], const int offset) {
    int32_t sc_lut[16];
    for (int s = 0; s < 16; s++) sc_lut[s] = 2 * s + 1;
    const __m512i scales = _mm512_loadu_si512((const void *)sc_lut), low4 = _mm512_set1_epi8(0x0f);
    const __m512i lut = _mm512_broadcast_i32x4(_mm_add_epi8(_mm_loadu_si128((const __m128i *)values), _mm_set1_epi8((char)offset)));
    /* codes t = 4 g + q: the low nibbles of codes[t / 2] for even t, the high ones for odd */
#define IQ3_SCALE(u, g) _mm512_permutexvar_epi32(_mm512_srli_epi32(_mm512_loadu_si512((const void *)(u)->tag), 4 * ((g) / 2)), scales)
#define IQ3_NIBBLES(x, odd) _mm512_and_si512((odd) ? _mm512_srli_epi16(x, 4) : (x), low4)
#define IQ3_CODES(u, g, q) _mm512_shuffle_epi8(lut, IQ3_NIBBLES(_mm512_loadu_si512((const void *)(u)->codes[(4 * (g) + (q)) / 2]), (q) % 2))
    LANES_OFFSET_BODY(iq3_lanes, ub, a, as, k, y, ys, NC, offset, IQ3_SCALE, IQ3_CODES);
#undef IQ3_SCALE
#undef IQ3_NIBBLES
#undef IQ3_CODES
}
#define IQ3_S_PACKED_BODY(u, a, as, k, y, ys, NC) iq3_packed_body(u, a, as, k, y, ys, NC, iq3_s_values, 15)
#define IQ3_XXS_PACKED_BODY(u, a, as, k, y, ys, NC) iq3_packed_body(u, a, as, k, y, ys, NC, iq3_xxs_values, 62)
LANES_FROM_BODY(iq3_s_packed_avx512, IQ3_S_PACKED_BODY, 8)
LANES_FROM_BODY(iq3_xxs_packed_avx512, IQ3_XXS_PACKED_BODY, 8)
/* the tables' fields (the VBMI tables' activations are in planes, the packed rows' Q8_K) */
#define IQ3_LANES(T) (.lanes_pack = T##_lanes_pack, .lanes_packed = T##_packed_avx512, \
                      .lanes_packed_sb_bytes = sizeof(iq3_lanes) / 16, .lanes_act_type = TS_Q8_K)
#endif

PREPARED_SUB_KERNELS_LANES(iq3_xxs, block_iq3_xxs, IQ3_LANES(iq3_xxs))
PREPARED_SUB_KERNELS_LANES(iq3_s, block_iq3_s, IQ3_LANES(iq3_s))

#if defined(TS_X86)
/* the VBMI tables: activations in planes (the rows in lanes: Q8_K) */
VBMI_ISUM_DOT(iq3_xxs, block_iq3_xxs, iq3_xxs_planes_isum, ACT_Q8_K_PLANES, IQ3_LANES(iq3_xxs))
VBMI_ISUM_DOT(iq3_s, block_iq3_s, iq3_s_planes_isum, ACT_Q8_K_PLANES, IQ3_LANES(iq3_s))
#endif
