/* The AVX-512 VNNI kernel of the 32-weight types with one f16 scale per block and signed codes
 * (Q8_0, Q5_0, Q4_0), written once: two blocks per 512-bit vector (block i in the low half, i + 1
 * in the high half) against activations in pairs (block_q8_0x2: codes already offset to unsigned
 * a + 128, scales already spread over their lanes). dpbusd multiplies the unsigned activations by
 * the signed weight codes; each weight block's lanes start at -128 * sum(w), which cancels the
 * offset. Per block pair and output: dpbusd, convert, (d_w * d_a) per half, FMA into one f32x16
 * accumulator. An odd last block runs alone in the low half (its partner's scale is 0).
 *
 *   PAIR_TILE_VNNI_BODY(block_type, codes, scales, IN_ORDER)   is the statement body of a tile body
 *   function (simd.h's tile body parameters w, ws, a, as, k, y, ys, NR, NC); codes(const block_type *b,
 *   int both) gives the 64 signed codes of b[0] and b[1] (zeros or anything finite for b[1] when
 *   !both); scales(const void *b, int block_bytes, int both) the two blocks' scales spread over
 *   the low and high 8 lanes (0 for b[1] when !both): pair_scales below for the types whose f16
 *   d opens the block. IN_ORDER (a constant): the 4 x 1 row kernel prefetches the rows two calls
 *   ahead in address order, into L2 (prefetch_rows4_share, simd.h), instead of per row
 *   (PREFETCH_ROW). */
#ifndef TS_KERNELS_PAIR_DOT_H
#define TS_KERNELS_PAIR_DOT_H
#include "kernels/kernels_internal.h"
#include "kernels/simd.h"

#if defined(TS_X86)
/* A 32-weight block's 16 code bytes as 32 nibbles: byte j's low nibble at byte j, its high one at
 * byte j + 16 (Q4_0, Q4_1, Q5_0, Q5_1). */
static ALWAYS_INLINE TARGET_AVX2 __m256i nibbles_256(const uint8_t *qs) {
    const __m128i bytes = _mm_loadu_si128((const __m128i *)qs);
    return _mm256_and_si256(_mm256_set_m128i(_mm_srli_epi16(bytes, 4), bytes), _mm256_set1_epi8(0x0f));
}
/* Byte j all ones where bit j of the little-endian 32 bits at qh is set (Q5_0, Q5_1's fifth bits):
 * byte j takes byte j / 8 of qh, then tests its bit j % 8. */
static ALWAYS_INLINE TARGET_AVX2 __m256i qh_bit_bytes(const uint8_t *qh) {
    const __m256i bytes = _mm256_shuffle_epi8(_mm256_set1_epi32((int)load_u32(qh)),
        _mm256_setr_epi8(0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1,
                         2, 2, 2, 2, 2, 2, 2, 2, 3, 3, 3, 3, 3, 3, 3, 3));
    const __m256i bit = _mm256_set1_epi64x(0x8040201008040201LL);
    return _mm256_cmpeq_epi8(_mm256_and_si256(bytes, bit), bit);
}

/* AVX2, the tile body of the 32-weight types with unsigned codes, a scale and a min per block (Q4_1,
 * Q5_1): per block d_w d_a sum(q a) + m_w d_a sum(a), each sum in 8 int32 lanes (maddubs: the codes
 * are at most 31, so a pair's products fit int16), converted and scaled into one f32x8 accumulator
 * per output; the lanes are summed at the end.
 *
 *   MIN_TILE_AVX2_BODY(block_bytes, codes, scale, min)   as SIGNED_TILE_AVX2_BODY below, with
 *   codes(b) the 32 unsigned codes and min(b) the block's min as a float. */
#define MIN_TILE_AVX2_BODY(block_bytes, codes, scale, min)                                              \
    __m256 acc[4][4];                                                                                  \
    UNROLL                                                                                             \
    for (int r = 0; r < NR; r++) for (int c = 0; c < NC; c++) acc[r][c] = _mm256_setzero_ps();         \
    const __m256i ones16 = _mm256_set1_epi16(1), ones8 = _mm256_set1_epi8(1);                          \
    for (int64_t i = 0; i < k / QK; i++) {                                                             \
        __m256i wq[4];                                                                                 \
        __m256 dw[4], mw[4];                                                                           \
        UNROLL                                                                                         \
        for (int r = 0; r < NR; r++) {                                                                 \
            const uint8_t *b = w + r * ws + (size_t)i * (block_bytes);                                 \
            PREFETCH_ROW(b, NR, ws);                                                                   \
            wq[r] = codes(b);                                                                          \
            dw[r] = _mm256_set1_ps(scale(b));                                                          \
            mw[r] = _mm256_set1_ps(min(b));                                                            \
        }                                                                                              \
        UNROLL                                                                                         \
        for (int c = 0; c < NC; c++) {                                                                 \
            const block_q8_0 *ab = (const block_q8_0 *)(a + c * as) + i;                               \
            const __m256i aq = _mm256_loadu_si256((const __m256i *)ab->qs);                            \
            const __m256 da = _mm256_set1_ps(f16_bits_to_f32(ab->d));                                  \
            const __m256 asum = _mm256_cvtepi32_ps(_mm256_madd_epi16(_mm256_maddubs_epi16(ones8, aq), ones16)); \
            UNROLL                                                                                     \
            for (int r = 0; r < NR; r++) {                                                             \
                const __m256i p = _mm256_madd_epi16(_mm256_maddubs_epi16(wq[r], aq), ones16);          \
                acc[r][c] = _mm256_fmadd_ps(_mm256_mul_ps(dw[r], da), _mm256_cvtepi32_ps(p), acc[r][c]); \
                acc[r][c] = _mm256_fmadd_ps(_mm256_mul_ps(mw[r], da), asum, acc[r][c]);                \
            }                                                                                          \
        }                                                                                              \
    }                                                                                                  \
    UNROLL                                                                                             \
    for (int r = 0; r < NR; r++) for (int c = 0; c < NC; c++) y[c * ys + r] = hsum_f32x8(acc[r][c]);

/* AVX2, the tile body of the 32-weight types with one scale per block and signed codes (Q8_0,
 * Q5_0, and IQ4_NL / MXFP4 once their codes are looked up): per block, |w| (unsigned) times a with
 * w's sign (x86 has no signed x signed byte multiply), pairs summed into 8 int32 lanes, converted,
 * scaled by d_w * d_a and added to one f32x8 accumulator per output; the lanes are summed at the end.
 *
 *   SIGNED_TILE_AVX2_BODY(block_bytes, codes, scale)   is the statement body of a tile body
 *   function (simd.h's parameters w, ws, a, as, k, y, ys, NR, NC); codes(const uint8_t *b) gives
 *   the block's 32 signed codes as an __m256i, scale(const uint8_t *b) its scale as a float. */
#define SIGNED_TILE_AVX2_BODY(block_bytes, codes, scale)                                               \
    __m256 acc[4][4];                                                                                  \
    UNROLL                                                                                             \
    for (int r = 0; r < NR; r++) for (int c = 0; c < NC; c++) acc[r][c] = _mm256_setzero_ps();         \
    const __m256i ones = _mm256_set1_epi16(1);                                                         \
    for (int64_t i = 0; i < k / QK; i++) {                                                             \
        __m256i wq[4], wabs[4];                                                                        \
        __m256 dw[4];                                                                                  \
        UNROLL                                                                                         \
        for (int r = 0; r < NR; r++) {                                                                 \
            const uint8_t *b = w + r * ws + (size_t)i * (block_bytes);                                 \
            PREFETCH_ROW(b, NR, ws);                                                                   \
            wq[r] = codes(b);                                                                          \
            wabs[r] = _mm256_sign_epi8(wq[r], wq[r]);                                                  \
            dw[r] = _mm256_set1_ps(scale(b));                                                          \
        }                                                                                              \
        UNROLL                                                                                         \
        for (int c = 0; c < NC; c++) {                                                                 \
            const block_q8_0 *ab = (const block_q8_0 *)(a + c * as) + i;                               \
            __m256i aq = _mm256_loadu_si256((const __m256i *)ab->qs);                                  \
            __m256 da = _mm256_set1_ps(f16_bits_to_f32(ab->d));                                        \
            UNROLL                                                                                     \
            for (int r = 0; r < NR; r++) {                                                             \
                __m256i p = _mm256_madd_epi16(_mm256_maddubs_epi16(wabs[r], _mm256_sign_epi8(aq, wq[r])), ones); \
                acc[r][c] = _mm256_fmadd_ps(_mm256_mul_ps(dw[r], da), _mm256_cvtepi32_ps(p), acc[r][c]); \
            }                                                                                          \
        }                                                                                              \
    }                                                                                                  \
    UNROLL                                                                                             \
    for (int r = 0; r < NR; r++) for (int c = 0; c < NC; c++) y[c * ys + r] = hsum_f32x8(acc[r][c]);

/* The f16 scales of blocks b[0] and b[1] (0 when !both), broadcast to the low and high 8 lanes,
 * for block types whose d opens the block: one masked load of the words up to b[1].d (nothing past
 * b[0] is touched when !both) and one permute. */
static ALWAYS_INLINE TARGET_AVX512 __m512 pair_scales(const void *b, const int block_bytes, int both) {
    const int w1 = block_bytes / 2;                      /* b[1].d is word w1 */
    __m512i raw = _mm512_maskz_loadu_epi16(both ? (__mmask32)((2u << w1) - 1) : (__mmask32)1, b);
    __m512i idx = _mm512_mask_blend_epi16((__mmask32)0xff00, _mm512_setzero_si512(), _mm512_set1_epi16((short)w1));
    return _mm512_cvtph_ps(_mm512_castsi512_si256(_mm512_permutexvar_epi16(idx, raw)));
}

/* One block pair (i, i + 1) of the tile; BOTH is a constant, so the loop over whole pairs has no
 * test for the odd last block. */
#define PAIR_STEP_VNNI(block_type, codes, scales, IN_ORDER, BOTH)                                      \
    {                                                                                                  \
        __m512i wq[4], start[4];                                                                       \
        __m512 dw[4];                                                                                  \
        UNROLL                                                                                         \
        for (int r = 0; r < NR; r++) {                                                                 \
            const block_type *b = (const block_type *)(w + r * ws) + i;                                \
            if ((IN_ORDER) && NR == 4 && NC == 1) {                                                    \
                if (r == 0) prefetch_rows4_share(w, ws, (size_t)i * sizeof(block_type),                \
                                                 (size_t)(i + 2) * sizeof(block_type), 1);             \
            } else {                                                                                   \
                PREFETCH_ROW(b, NR, ws);                                                               \
                PREFETCH_ROW((const uint8_t *)b + 64, NR, ws);                                         \
            }                                                                                          \
            wq[r] = codes(b, BOTH);                                                                    \
            start[r] = _mm512_sub_epi32(_mm512_setzero_si512(),                                        \
                                        _mm512_dpbusd_epi32(_mm512_setzero_si512(), offset, wq[r]));   \
            dw[r] = scales(b, (int)sizeof(block_type), BOTH);                                          \
        }                                                                                              \
        UNROLL                                                                                         \
        for (int c = 0; c < NC; c++) {                                                                 \
            const block_q8_0x2 *ap = (const block_q8_0x2 *)(a + c * as) + i / 2;                       \
            __m512i au = _mm512_loadu_si512((const void *)ap->qs);                                     \
            __m512 da = _mm512_loadu_ps((const void *)ap->d);                                          \
            UNROLL                                                                                     \
            for (int r = 0; r < NR; r++) {                                                             \
                __m512i p = _mm512_dpbusd_epi32(start[r], au, wq[r]);                                  \
                acc[r][c] = _mm512_fmadd_ps(_mm512_mul_ps(dw[r], da), _mm512_cvtepi32_ps(p), acc[r][c]); \
            }                                                                                          \
        }                                                                                              \
    }

/* The 4-bit nibbles of two blocks' 16 code bytes (qs1 NULL: zeros) in one 512-bit vector, in
 * element order: the 128-bit lanes hold qs0, qs0, qs1, qs1 shifted by 0, 4, 0, 4 bits, masked. */
static ALWAYS_INLINE TARGET_AVX512 __m512i nibbles_pair(const uint8_t *qs0, const uint8_t *qs1) {
    __m128i q0 = _mm_loadu_si128((const __m128i *)qs0);
    __m128i q1 = qs1 ? _mm_loadu_si128((const __m128i *)qs1) : _mm_setzero_si128();
    __m512i v = _mm512_castsi256_si512(_mm256_setr_m128i(q0, q1));
    v = _mm512_shuffle_i64x2(v, v, 0x50);                         /* lanes: q0 q0 q1 q1 */
    const __m512i shift = _mm512_setr_epi64(0, 0, 0x0004000400040004LL, 0x0004000400040004LL,
                                            0, 0, 0x0004000400040004LL, 0x0004000400040004LL);
    return _mm512_and_si512(_mm512_srlv_epi16(v, shift), _mm512_set1_epi8(0x0f));
}

#define PAIR_TILE_VNNI_BODY(block_type, codes, scales, IN_ORDER)                                       \
    __m512 acc[4][4];                                                                                  \
    UNROLL                                                                                             \
    for (int r = 0; r < NR; r++)                                                                       \
        UNROLL                                                                                         \
        for (int c = 0; c < NC; c++) acc[r][c] = _mm512_setzero_ps();                                  \
    const __m512i offset = _mm512_set1_epi8((char)0x80);   /* for the weights' start values */         \
    const int64_t nb = k / QK;                                                                         \
    int64_t i = 0;                                                                                     \
    for (; i + 1 < nb; i += 2) PAIR_STEP_VNNI(block_type, codes, scales, IN_ORDER, 1)                  \
    if (i < nb) PAIR_STEP_VNNI(block_type, codes, scales, IN_ORDER, 0)                                 \
    UNROLL                                                                                             \
    for (int r = 0; r < NR; r++)                                                                       \
        UNROLL                                                                                         \
        for (int c = 0; c < NC; c++) y[c * ys + r] = hsum_f32x16(acc[r][c]);
#endif

#if defined(__aarch64__)
/* NEON SDOT, the tile body of the 32-weight types with one scale per block and signed codes (Q8_0,
 * Q4_0, Q5_0, IQ4_NL, MXFP4) against Q8_0 activations: per block and output the integer sum by
 * two SDOTs, then the portable kernels' float operations, sum += d_w * d_a * (float)isum, so
 * their bits.
 *
 *   SIGNED_TILE_DOTPROD_BODY(block_bytes, codes, scale)   is the statement body of a tile body
 *   function (simd.h's parameters w, ws, a, as, k, y, ys, NR, NC); codes(const uint8_t *b,
 *   int8x16_t *lo, int8x16_t *hi) gives the block's signed codes 0-15 and 16-31, scale(const
 *   uint8_t *b) its scale as a float. */
#define SIGNED_TILE_DOTPROD_BODY(block_bytes, codes, scale)                                            \
    float sum[4][4] = { { 0.0f } };                                                                    \
    for (int64_t i = 0; i < k / QK; i++) {                                                             \
        int8x16_t alo[4], ahi[4];                                                                      \
        float da[4];                                                                                   \
        UNROLL                                                                                         \
        for (int c = 0; c < NC; c++) {                                                                 \
            const block_q8_0 *ab = (const block_q8_0 *)(a + c * as) + i;                               \
            alo[c] = vld1q_s8(ab->qs);                                                                 \
            ahi[c] = vld1q_s8(ab->qs + 16);                                                            \
            da[c] = load_f16(ab->d);                                                                   \
        }                                                                                              \
        UNROLL                                                                                         \
        for (int r = 0; r < NR; r++) {                                                                 \
            const uint8_t *b = w + r * ws + (size_t)i * (block_bytes);                                 \
            int8x16_t wlo, whi;                                                                        \
            codes(b, &wlo, &whi);                                                                      \
            const float dw = scale(b);                                                                 \
            UNROLL                                                                                     \
            for (int c = 0; c < NC; c++) {                                                             \
                int32x4_t p = vdotq_s32(vdotq_s32(vdupq_n_s32(0), wlo, alo[c]), whi, ahi[c]);          \
                sum[r][c] += dw * da[c] * (float)vaddvq_s32(p);                                        \
            }                                                                                          \
        }                                                                                              \
    }                                                                                                  \
    store_tile_sums(sum, y, ys, NR, NC);

/* The f16 scale that opens a block (Q8_0, Q4_0, Q5_0, IQ4_NL) */
static ALWAYS_INLINE float block_f16_scale(const uint8_t *b) { return load_f16(b); }
#endif

#endif
