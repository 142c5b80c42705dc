/* IQ1_S, IQ1_M weights . Q8_K activations: each super-block unpacked (iq1.c) and multiplied in
 * integers, the same bits in every set: UNPACKING_KERNELS (unpacked_dot.h) defines each type's
 * tables T_kernels_generic, T_kernels_avx2, T_kernels_avx512 and T_kernels_neon_dotprod; on x86 the
 * row kernel unpacks each sub-block of 32 into registers (SUB_KERNELS): four grid entries of
 * -1 / 0 / +1, times 8 plus the delta's +-1. */
#include "kernels/unpacked_dot.h"
#include "kernels/iq_grids.h"

#if defined(TS_X86)
/* 8 g + delta for the four groups' entries (g in -1, 0, +1: sign_epi8 of 8 by g), deltas +-1 per
 * group: the signed codes, their magnitudes and the codes themselves as the activations' signs */
static ALWAYS_INLINE TARGET_AVX2 void iq1_codes(uint64_t g0, uint64_t g1, uint64_t g2, uint64_t g3, __m256i delta,
                                                __m256i *mag, __m256i *sgn) {
    const __m256i g = _mm256_setr_epi64x((long long)g0, (long long)g1, (long long)g2, (long long)g3);
    const __m256i q = _mm256_add_epi8(_mm256_sign_epi8(_mm256_set1_epi8(8), g), delta);
    *mag = _mm256_abs_epi8(q);
    *sgn = q;
}

static inline float iq1_s_d(const block_iq1_s *b) { return load_f16(b->d) * 0.125f; }
static ALWAYS_INLINE TARGET_AVX2 void iq1_s_sub_avx2(const block_iq1_s *b, int ib, __m256i *mag, __m256i *sgn, __m256i *sc) {
    const uint8_t *lo = b->qs + 4 * ib;
    const int qh = load_u16(b->qh + 2 * ib);
    iq1_codes(iq_grid1s[lo[0] | (qh & 7) << 8], iq_grid1s[lo[1] | (qh >> 3 & 7) << 8], iq_grid1s[lo[2] | (qh >> 6 & 7) << 8],
              iq_grid1s[lo[3] | (qh >> 9 & 7) << 8], _mm256_set1_epi8(qh & 0x8000 ? -1 : 1), mag, sgn);
    *sc = _mm256_set1_epi16((short)(2 * ((qh >> 12) & 7) + 1));
}

static inline float iq1_m_d(const block_iq1_m *b) {
    uint16_t sc[4];
    for (int i = 0; i < 4; i++) sc[i] = load_u16(b->sc + 2 * i);
    return half_to_f32((uint16_t)((sc[0] >> 12) | ((sc[1] >> 8) & 0x00f0) | ((sc[2] >> 4) & 0x0f00) | (sc[3] & 0xf000))) * 0.125f;
}
static ALWAYS_INLINE TARGET_AVX2 void iq1_m_sub_avx2(const block_iq1_m *b, int ib, __m256i *mag, __m256i *sgn, __m256i *sc) {
    const uint8_t *lo = b->qs + 4 * ib;
    const int h0 = b->qh[2 * ib], h1 = b->qh[2 * ib + 1];
    const long long plus = 0x0101010101010101LL, minus = -1LL;
    const __m256i delta = _mm256_setr_epi64x(h0 & 8 ? minus : plus, h0 & 0x80 ? minus : plus, h1 & 8 ? minus : plus,
                                             h1 & 0x80 ? minus : plus);
    iq1_codes(iq_grid1s[lo[0] | (h0 & 7) << 8], iq_grid1s[lo[1] | (h0 >> 4 & 7) << 8], iq_grid1s[lo[2] | (h1 & 7) << 8],
              iq_grid1s[lo[3] | (h1 >> 4 & 7) << 8], delta, mag, sgn);
    const int w16 = load_u16(b->sc + 2 * (ib / 2)), sh = 6 * (ib % 2);
    *sc = _mm256_setr_m128i(_mm_set1_epi16((short)(2 * ((w16 >> sh) & 7) + 1)), _mm_set1_epi16((short)(2 * ((w16 >> (sh + 3)) & 7) + 1)));
}
#endif

SUB_KERNELS(iq1_s, block_iq1_s)
SUB_KERNELS(iq1_m, block_iq1_m)
