/* IQ1_S, IQ1_M weights . Q8_K activations: each super-block unpacked (iq1.c) and multiplied in
 * integers, the same bits in every set: UNPACKING_KERNELS (unpacked_dot.h) defines each type's
 * tables T_kernels_generic, T_kernels_avx2, T_kernels_avx512 and T_kernels_neon_dotprod; on x86 the
 * row kernel unpacks each sub-block of 32 into registers: four grid entries of -1 / 0 / +1, times 8
 * plus the delta's +-1, shifted to unsigned (below). */
#include "kernels/unpacked_dot.h"
#include "kernels/iq_grids.h"
#include "kernels/ternary_lanes.h"

#if defined(TS_X86)
/* The x86 row kernels take the codes shifted to unsigned, u = q + 9 = 8 (grid + 1) + (delta + 1)
 * in 0..18, so maddubs multiplies them with the activations directly (no sign juggling), and take
 * the shift back once per super-block from the block sums:
 *   isum = sum_g sc[g] sum_e q a = sum_g sc[g] sum_e u a  -  9 sum_g sc[g] bsum[g],
 * the same integer as through block_unpacked, so the same bits. */

/* u = 8 (grid + 1) + delta1 with delta1 = delta + 1 in {0, 2} per byte (no carries between bytes) */
static ALWAYS_INLINE TARGET_AVX2 __m256i iq1_shifted_codes(__m256i grid, __m256i delta1) {
    return _mm256_add_epi8(_mm256_slli_epi16(_mm256_add_epi8(grid, _mm256_set1_epi8(1)), 3), delta1);
}

static inline float iq1_s_d(const block_iq1_s *b) { return load_f16(b->d) * 0.125f; }
/* Per super-block: the indices and 2 s + 1 per group (s = bits 12..14 of the sub-block's qh word, the
 * same for both of its groups); the delta's sign, bit 15 of that word, is read per sub-block (aux unused). */
static ALWAYS_INLINE TARGET_AVX2 __m256i iq1_s_prepare(const block_iq1_s *b, uint16_t *idx, uint16_t *aux) {
    const __m128i qh = _mm_loadu_si128((const __m128i *)b->qh);
    /* entry l of sub-block ib reads qh word ib, field at bit 3 l */
    const __m256i words = _mm256_broadcastsi128_si256(qh);
    const __m256i hi0 = _mm256_shuffle_epi8(words, _mm256_setr_epi8(0, 1, 0, 1, 0, 1, 0, 1, 2, 3, 2, 3, 2, 3, 2, 3,
                                                                    4, 5, 4, 5, 4, 5, 4, 5, 6, 7, 6, 7, 6, 7, 6, 7));
    const __m256i hi1 = _mm256_shuffle_epi8(words, _mm256_setr_epi8(8, 9, 8, 9, 8, 9, 8, 9, 10, 11, 10, 11, 10, 11, 10, 11,
                                                                    12, 13, 12, 13, 12, 13, 12, 13, 14, 15, 14, 15, 14, 15, 14, 15));
    const __m256i mult = _mm256_setr_epi16(1 << 13, 1 << 10, 1 << 7, 1 << 4, 1 << 13, 1 << 10, 1 << 7, 1 << 4,
                                           1 << 13, 1 << 10, 1 << 7, 1 << 4, 1 << 13, 1 << 10, 1 << 7, 1 << 4);
    grid_indices(b->qs, hi0, hi1, mult, idx);
    const __m128i s = _mm_and_si128(_mm_srli_epi16(qh, 12), _mm_set1_epi16(7));
    const __m128i sc = _mm_or_si128(_mm_slli_epi16(s, 1), _mm_set1_epi16(1));
    return _mm256_setr_m128i(_mm_unpacklo_epi16(sc, sc), _mm_unpackhi_epi16(sc, sc));
}
static ALWAYS_INLINE TARGET_AVX2 __m256i iq1_s_codes(const block_iq1_s *b, const uint16_t *idx, const uint16_t *aux, int ib) {
    const uint16_t *e = idx + 4 * ib;
    return iq1_shifted_codes(four_entries(&iq_grid1s[e[0]], &iq_grid1s[e[1]], &iq_grid1s[e[2]], &iq_grid1s[e[3]]), _mm256_set1_epi8(load_u16(b->qh + 2 * ib) & 0x8000 ? 0 : 2));
}

static inline float iq1_m_d(const block_iq1_m *b) {
    uint16_t sc[4];
    for (int i = 0; i < 4; i++) sc[i] = load_u16(b->sc + 2 * i);
    return half_to_f32((uint16_t)((sc[0] >> 12) | ((sc[1] >> 8) & 0x00f0) | ((sc[2] >> 4) & 0x0f00) | (sc[3] & 0xf000))) * 0.125f;
}
/* Per super-block: the indices (entry e reads nibble e % 2 of qh byte e / 2: index bits in 0..2,
 * the delta sign in bit 3), each entry's delta sign as a 16-bit lane (bit 11 after the multiply),
 * and 2 s + 1 per group (s of group g = bits 3 (g % 4) .. +2 of scale word g / 4: each word copied to
 * four lanes, its field moved to the top 3 bits by a multiply, then shifted down). */
static ALWAYS_INLINE TARGET_AVX2 __m256i iq1_m_prepare(const block_iq1_m *b, uint16_t *idx, uint16_t *aux) {
    const __m128i qh = _mm_loadu_si128((const __m128i *)b->qh);
    const __m256i hi0 = _mm256_cvtepu8_epi16(_mm_unpacklo_epi8(qh, qh));
    const __m256i hi1 = _mm256_cvtepu8_epi16(_mm_unpackhi_epi8(qh, qh));
    const __m256i mult = _mm256_setr_epi16(1 << 13, 1 << 9, 1 << 13, 1 << 9, 1 << 13, 1 << 9, 1 << 13, 1 << 9,
                                           1 << 13, 1 << 9, 1 << 13, 1 << 9, 1 << 13, 1 << 9, 1 << 13, 1 << 9);
    grid_indices(b->qs, hi0, hi1, mult, idx);
    /* the delta sign: bit 3 of the nibble -> bit 11 of nibble << 8 */
    const __m256i dmult = _mm256_setr_epi16(1 << 8, 1 << 4, 1 << 8, 1 << 4, 1 << 8, 1 << 4, 1 << 8, 1 << 4,
                                            1 << 8, 1 << 4, 1 << 8, 1 << 4, 1 << 8, 1 << 4, 1 << 8, 1 << 4);
    const __m256i bit = _mm256_set1_epi16(0x0800);
    _mm256_storeu_si256((__m256i *)aux, _mm256_and_si256(_mm256_mullo_epi16(hi0, dmult), bit));
    _mm256_storeu_si256((__m256i *)(aux + 16), _mm256_and_si256(_mm256_mullo_epi16(hi1, dmult), bit));
    const __m256i words = _mm256_broadcastsi128_si256(_mm_loadl_epi64((const __m128i *)b->sc));
    const __m256i spread = _mm256_shuffle_epi8(words, _mm256_setr_epi8(0, 1, 0, 1, 0, 1, 0, 1, 2, 3, 2, 3, 2, 3, 2, 3,
                                                                      4, 5, 4, 5, 4, 5, 4, 5, 6, 7, 6, 7, 6, 7, 6, 7));
    const __m256i up = _mm256_mullo_epi16(spread, _mm256_setr_epi16(1 << 13, 1 << 10, 1 << 7, 1 << 4, 1 << 13, 1 << 10, 1 << 7, 1 << 4,
                                                                     1 << 13, 1 << 10, 1 << 7, 1 << 4, 1 << 13, 1 << 10, 1 << 7, 1 << 4));
    return _mm256_or_si256(_mm256_slli_epi16(_mm256_srli_epi16(up, 13), 1), _mm256_set1_epi16(1));
}
static ALWAYS_INLINE TARGET_AVX2 __m256i iq1_m_codes(const block_iq1_m *b, const uint16_t *idx, const uint16_t *aux, int ib) {
    const uint16_t *e = idx + 4 * ib;
    /* delta + 1 = 2 where the sign bit is clear, per entry of 8 bytes */
    const __m256i sign = _mm256_cvtepu16_epi64(_mm_loadl_epi64((const __m128i *)(aux + 4 * ib)));
    const __m256i delta1 = _mm256_and_si256(_mm256_cmpeq_epi64(sign, _mm256_setzero_si256()), _mm256_set1_epi8(2));
    return iq1_shifted_codes(four_entries(&iq_grid1s[e[0]], &iq_grid1s[e[1]], &iq_grid1s[e[2]], &iq_grid1s[e[3]]), delta1);
}

#define IQ1_AVX2_DOT(T, block)                                                                              \
    static TARGET_AVX2 float T##_dot_avx2(const void *w, const void *act, int64_t k) {                      \
        const block *x = w;                                                                                 \
        const block_q8_K *y = act;                                                                          \
        float sum = 0.0f;                                                                                   \
        for (int64_t i = 0; i < k / QK_K; i++) {                                                            \
            _mm_prefetch((const char *)(x + i) + PREFETCH_BYTES, _MM_HINT_T0);                              \
            uint16_t idx[32], aux[32];                                                                      \
            const __m256i sc16 = T##_prepare(&x[i], idx, aux);                                              \
            __m256i acc = _mm256_setzero_si256();                                                           \
            UNROLL                                                                                          \
            for (int ib = 0; ib < 8; ib++) {                                                                \
                const __m256i av = _mm256_loadu_si256((const __m256i *)(y[i].qs + 32 * ib));                \
                const __m256i p = _mm256_maddubs_epi16(T##_codes(&x[i], idx, aux, ib), av);                           \
                acc = _mm256_add_epi32(acc, _mm256_madd_epi16(p, scales_of_sub_block(sc16, ib)));           \
            }                                                                                               \
            const __m256i bs = _mm256_loadu_si256((const __m256i *)y[i].bsums);                             \
            const int32_t isum = hsum_i32x8(acc) - 9 * hsum_i32x8(_mm256_madd_epi16(sc16, bs));            \
            sum += (T##_d(&x[i]) * f32_from_bits(load_u32(y[i].d))) * (float)isum;                          \
        }                                                                                                   \
        return sum;                                                                                         \
    }                                                                                                       \
    /* a batch's unpacking through the same registers: q = u - 9 */                                        \
    static TARGET_AVX2 void T##_unpack_avx2(const uint8_t *wb, block_unpacked *ub) {                        \
        const block *x = (const block *)wb;                                                                 \
        uint16_t idx[32], aux[32];                                                                          \
        _mm256_storeu_si256((__m256i *)ub->sc, T##_prepare(x, idx, aux));                                   \
        ub->d = T##_d(x);                                                                                   \
        UNROLL                                                                                              \
        for (int ib = 0; ib < 8; ib++)                                                                      \
            _mm256_storeu_si256((__m256i *)(ub->q + 32 * ib), _mm256_sub_epi8(T##_codes(x, idx, aux, ib), _mm256_set1_epi8(9))); \
    }                                                                                                       \
    const type_kernels T##_kernels_avx2 = { .act_type = TS_Q8_K, .dot = T##_dot_avx2, .unpack = T##_unpack_avx2 };

/* Which of the 32 entries have delta + 1 = 2 (bit e): IQ1_S per sub-block (bit 15 of its qh word
 * clear), IQ1_M per entry (bit 3 of its qh nibble clear); pdep spreads the bits. */
static ALWAYS_INLINE TARGET_AVX512 uint32_t iq1_s_positive(const block_iq1_s *b) {
    const uint32_t neg8 = _mm_movepi16_mask(_mm_loadu_si128((const __m128i *)b->qh));
    return ~(uint32_t)(_pdep_u32(neg8, 0x11111111u) * 15u);
}
static ALWAYS_INLINE TARGET_AVX512 uint32_t iq1_m_positive(const block_iq1_m *b) {
    const __m128i qh = _mm_loadu_si128((const __m128i *)b->qh);
    const uint32_t even = _mm_movepi8_mask(_mm_slli_epi16(qh, 4)), odd = _mm_movepi8_mask(qh);
    return ~(uint32_t)(_pdep_u32(even, 0x55555555u) | _pdep_u32(odd, 0xaaaaaaaau));
}

/* AVX-512: two sub-blocks per vector (8 entries by loads: one gather measured slower, IQ1_S 2.3 ->
 * 2.1 GB/s on one thread), their groups' scales by one vpermw, VNNI's dpwssd; the same integers. */
/* Rows in lanes of their own (ternary_lanes.h) */
static void iq1_s_lanes_pack(const uint8_t *w, size_t ws, int64_t k, uint8_t *out) {
    ternary_lanes_pack(iq1_s_unpack, sizeof(block_iq1_s), IQ1_S_GROUPS, true, w, ws, k, out);
}
static void iq1_m_lanes_pack(const uint8_t *w, size_t ws, int64_t k, uint8_t *out) {
    ternary_lanes_pack(iq1_m_unpack, sizeof(block_iq1_m), IQ1_M_GROUPS, true, w, ws, k, out);
}
#define IQ1_S_PACKED_BODY(u, a, as, k, y, ys, NC) ternary_packed_body(u, a, as, k, y, ys, NC, IQ1_S_GROUPS, true)
#define IQ1_M_PACKED_BODY(u, a, as, k, y, ys, NC) ternary_packed_body(u, a, as, k, y, ys, NC, IQ1_M_GROUPS, true)
#define IQ1_S_PACKED_BODY_VBMI(u, a, as, k, y, ys, NC) ternary_packed_body_vbmi(u, a, as, k, y, ys, NC, IQ1_S_GROUPS, true)
#define IQ1_M_PACKED_BODY_VBMI(u, a, as, k, y, ys, NC) ternary_packed_body_vbmi(u, a, as, k, y, ys, NC, IQ1_M_GROUPS, true)
LANES_FROM_BODY(iq1_s_packed_avx512, IQ1_S_PACKED_BODY, 8)
LANES_FROM_BODY(iq1_m_packed_avx512, IQ1_M_PACKED_BODY, 8)
LANES_FROM_BODY_TARGET(TARGET_AVX512_VBMI, iq1_s_packed_avx512_vbmi, IQ1_S_PACKED_BODY_VBMI, 8)
LANES_FROM_BODY_TARGET(TARGET_AVX512_VBMI, iq1_m_packed_avx512_vbmi, IQ1_M_PACKED_BODY_VBMI, 8)
#define iq1_s_GROUPS IQ1_S_GROUPS
#define iq1_m_GROUPS IQ1_M_GROUPS

#define IQ1_AVX512_DOT(T, block)                                                                            \
    static TARGET_AVX512 float T##_dot_avx512(const void *w, const void *act, int64_t k) {                                \
        const block *x = w;                                                                                 \
        const block_q8_K *y = act;                                                                          \
        float sum = 0.0f;                                                                                   \
        for (int64_t i = 0; i < k / QK_K; i++) {                                                            \
            _mm_prefetch((const char *)(x + i) + PREFETCH_BYTES, _MM_HINT_T0);                              \
            uint16_t idx[32], aux[32];                                                                      \
            const __m256i sc16 = T##_prepare(&x[i], idx, aux);                                              \
            const uint32_t pos = T##_positive(&x[i]);                                                        \
            const __m512i scz = _mm512_zextsi256_si512(sc16);                                               \
            __m512i acc = _mm512_setzero_si512();                                                           \
            UNROLL                                                                                          \
            for (int p = 0; p < 4; p++) {                                                                   \
                const uint16_t *e = idx + 8 * p;                                                            \
                const __m512i g = _mm512_inserti64x4(_mm512_castsi256_si512(four_entries(&iq_grid1s[e[0]], &iq_grid1s[e[1]], &iq_grid1s[e[2]], &iq_grid1s[e[3]])), \
                                                     four_entries(&iq_grid1s[e[4]], &iq_grid1s[e[5]], &iq_grid1s[e[6]], &iq_grid1s[e[7]]), 1); \
                const __m512i delta1 = _mm512_maskz_mov_epi64((__mmask8)(pos >> (8 * p)), _mm512_set1_epi8(2)); \
                const __m512i u = _mm512_add_epi8(_mm512_slli_epi16(_mm512_add_epi8(g, _mm512_set1_epi8(1)), 3), delta1); \
                const __m512i av = _mm512_loadu_si512(y[i].qs + 64 * p);                                    \
                const __m512i sel = _mm512_add_epi16(_mm512_set1_epi16((short)(4 * p)),                    \
                    _mm512_srli_epi16(_mm512_set_epi16(31, 30, 29, 28, 27, 26, 25, 24, 23, 22, 21, 20, 19, 18, 17, 16, \
                                                       15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0), 3)); \
                acc = _mm512_dpwssd_epi32(acc, _mm512_maddubs_epi16(u, av), _mm512_permutexvar_epi16(sel, scz)); \
            }                                                                                               \
            const __m256i bs = _mm256_loadu_si256((const __m256i *)y[i].bsums);                             \
            const int32_t isum = _mm512_reduce_add_epi32(acc) - 9 * hsum_i32x8(_mm256_madd_epi16(sc16, bs)); \
            sum += (T##_d(&x[i]) * f32_from_bits(load_u32(y[i].d))) * (float)isum;                          \
        }                                                                                                   \
        return sum;                                                                                         \
    }                                                                                                       \
    const type_kernels T##_kernels_avx512 = { .act_type = TS_Q8_K, .dot = T##_dot_avx512, .unpack = T##_unpack_avx2, \
        TERNARY_LANES_FIELDS(T, T##_packed_avx512, T##_GROUPS) };                                           \
    const type_kernels T##_kernels_avx512_vbmi = { .act_type = TS_Q8_K, .dot = T##_dot_avx512, .unpack = T##_unpack_avx2, \
        TERNARY_LANES_FIELDS(T, T##_packed_avx512_vbmi, T##_GROUPS) };


UNPACKING_KERNELS_GENERIC(iq1_s, block_iq1_s)
UNPACKING_KERNELS_GENERIC(iq1_m, block_iq1_m)
IQ1_AVX2_DOT(iq1_s, block_iq1_s)
IQ1_AVX2_DOT(iq1_m, block_iq1_m)
IQ1_AVX512_DOT(iq1_s, block_iq1_s)
IQ1_AVX512_DOT(iq1_m, block_iq1_m)
#else
UNPACKING_KERNELS(iq1_s, block_iq1_s)
UNPACKING_KERNELS(iq1_m, block_iq1_m)
#endif
