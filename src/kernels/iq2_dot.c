/* IQ2_XXS, IQ2_XS, IQ2_S weights . Q8_K activations: each super-block unpacked (iq2.c) and multiplied in
 * integers, the same bits in every set: UNPACKING_KERNELS (unpacked_dot.h) defines each type's
 * tables T_kernels_generic, T_kernels_avx2, T_kernels_avx512 and T_kernels_neon_dotprod; on x86 the
 * row kernel unpacks each sub-block of 32 into registers (PREPARED_SUB_KERNELS): four 8-byte grid entries
 * loaded by address, the super-block's indices, sign bytes and scales formed first in vectors; the
 * signs go to the activations (AVX2: sign; AVX-512: a masked negation). */
#include "kernels/unpacked_dot.h"
#include "kernels/iq_grids.h"

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
