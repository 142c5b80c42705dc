/* Shared by the Q4_K and Q5_K kernels: the min terms (AVX2 and AVX-512), and the AVX-512 tile body
 * of Q4_K and Q5_K weights . Q8_K activations (the two share the super-block layout except Q5_K's
 * fifth bits in qh; Q4_K's activations come in its code order, ACT_Q8_K_NIBBLES): per super-block
 * and output, the scaled group sums in 16 int32 lanes, two groups of codes in one 512-bit vector
 * against 64 activations, added up as integers, then the portable kernel's float operations
 * (k4_term_16), so every AVX-512 Q4_K/Q5_K kernel gives the portable one's bits; and the NEON
 * SDOT tile body (same bits too). Included by q4_k_dot.c (five = 0) and q5_k_dot.c (five = 1). */
#ifndef TS_KERNELS_Q4_K_SIMD_H
#define TS_KERNELS_Q4_K_SIMD_H
#include <stddef.h>
#include "kernels/kernels_internal.h"
#include "kernels/simd.h"
#include "kernels/lanes_simd.h"
#include "kernels/lanes_pack.h"

#if defined(TS_X86)
/* The activation sums of each group of 32 (adjacent pairs of the 16-value bsums), as int16. */
static ALWAYS_INLINE TARGET_AVX2 __m128i k4_group_bsums(const block_q8_K *ab) {
    return _mm_hadd_epi16(_mm_loadu_si128((const __m128i *)ab->bsums),
                          _mm_loadu_si128((const __m128i *)(ab->bsums + 16)));
}

/* sum_g m[g] * bs[g] over the 8 groups (mins widened to int16) */
static ALWAYS_INLINE TARGET_AVX2 int k4_min_sum(__m128i mins, __m128i bs) {
    __m128i mb = _mm_madd_epi16(mins, bs);
    mb = _mm_add_epi32(mb, _mm_unpackhi_epi64(mb, mb));
    return _mm_cvtsi128_si32(mb) + _mm_extract_epi32(mb, 1);
}

/* The 8 six-bit scales (bytes 0-7) and mins (bytes 8-15) of the 12 packed bytes (as
 * kq_unpack_scales_mins), assembled in registers: a vector load of values just stored one by one
 * would wait for the stores to drain (measured on IQ4_XS's scales: 116 -> 81 us per 2048 x 2048
 * product). Reads 16 bytes: the packed scales are followed by the codes in both layouts. With the
 * little-endian words u0, u1, u2 of the packed bytes, the four result words are
 *   u0 & 0x3f3f3f3f,  (u2 & 0x0f0f0f0f) | (u0 >> 2) & 0x30303030,
 *   u1 & 0x3f3f3f3f,  (u2 >> 4) & 0x0f0f0f0f | (u1 >> 2) & 0x30303030
 * ((u >> 2) & 0x30 moves each byte's top two bits to bits 4 and 5). */
static ALWAYS_INLINE TARGET_AVX2 __m128i k4_scales_mins(const uint8_t *packed) {
    const __m128i v = _mm_loadu_si128((const __m128i *)packed);
    __m128i lo = _mm_srlv_epi32(_mm_shuffle_epi32(v, _MM_SHUFFLE(2, 1, 2, 0)), _mm_setr_epi32(0, 0, 0, 4));
    lo = _mm_and_si128(lo, _mm_setr_epi32(0x3f3f3f3f, 0x0f0f0f0f, 0x3f3f3f3f, 0x0f0f0f0f));
    __m128i hi = _mm_srli_epi32(_mm_shuffle_epi32(v, _MM_SHUFFLE(1, 1, 0, 0)), 2);
    hi = _mm_and_si128(hi, _mm_setr_epi32(0, 0x30303030, 0, 0x30303030));
    return _mm_or_si128(lo, hi);
}

/* k4_scales_mins for four rows at once, row r's 16 packed bytes in 128-bit lane r (the same
 * operations lane by lane) */
static ALWAYS_INLINE TARGET_AVX512 __m512i k4_scales_mins_x4(const uint8_t *const packed[4]) {
    __m512i v = _mm512_castsi128_si512(_mm_loadu_si128((const __m128i *)packed[0]));
    v = _mm512_inserti32x4(v, _mm_loadu_si128((const __m128i *)packed[1]), 1);
    v = _mm512_inserti32x4(v, _mm_loadu_si128((const __m128i *)packed[2]), 2);
    v = _mm512_inserti32x4(v, _mm_loadu_si128((const __m128i *)packed[3]), 3);
    __m512i lo = _mm512_srlv_epi32(_mm512_shuffle_epi32(v, _MM_PERM_CBCA), _mm512_broadcast_i32x4(_mm_setr_epi32(0, 0, 0, 4)));
    lo = _mm512_and_si512(lo, _mm512_broadcast_i32x4(_mm_setr_epi32(0x3f3f3f3f, 0x0f0f0f0f, 0x3f3f3f3f, 0x0f0f0f0f)));
    __m512i hi = _mm512_srli_epi32(_mm512_shuffle_epi32(v, _MM_PERM_BBAA), 2);
    hi = _mm512_and_si512(hi, _mm512_broadcast_i32x4(_mm_setr_epi32(0, 0x30303030, 0, 0x30303030)));
    return _mm512_or_si512(lo, hi);
}

/* 128-bit lane r of v in all four lanes (r a constant once unrolled; the switch keeps the
 * immediate a literal for unoptimized builds) */
static ALWAYS_INLINE TARGET_AVX512 __m512i k4_lane_everywhere(__m512i v, int r) {
    switch (r) {
    case 0: return _mm512_shuffle_i32x4(v, v, 0x00);
    case 1: return _mm512_shuffle_i32x4(v, v, 0x55);
    case 2: return _mm512_shuffle_i32x4(v, v, 0xaa);
    default: return _mm512_shuffle_i32x4(v, v, 0xff);
    }
}

/* field offsets, equal in both layouts */
#define D_AT offsetof(block_q4_K, d)
#define DMIN_AT offsetof(block_q4_K, dmin)
#define SCALES_AT offsetof(block_q4_K, scales)
#define QH_AT offsetof(block_q5_K, qh)
_Static_assert(offsetof(block_q5_K, d) == D_AT && offsetof(block_q5_K, dmin) == DMIN_AT &&
               offsetof(block_q5_K, scales) == SCALES_AT, "Q4_K and Q5_K share their header");

/* d and dmin of four rows' super-blocks, widened: lanes 4r..4r+3 hold row r's (for a 4 x 4 tile
 * whose pair (r, c) is lane 4r + c) */
static ALWAYS_INLINE TARGET_AVX512 void k4_d_dmin_4x4(const uint8_t *const wb[4], __m512 *d, __m512 *dmin) {
    const __m256 ddmin = _mm256_cvtph_ps(_mm_setr_epi32((int)load_u32(wb[0] + D_AT), (int)load_u32(wb[1] + D_AT),
                                                        (int)load_u32(wb[2] + D_AT), (int)load_u32(wb[3] + D_AT)));
    const __m512 dd8 = _mm512_castps256_ps512(ddmin);
    *d = _mm512_permutexvar_ps(_mm512_setr_epi32(0, 0, 0, 0, 2, 2, 2, 2, 4, 4, 4, 4, 6, 6, 6, 6), dd8);
    *dmin = _mm512_permutexvar_ps(_mm512_setr_epi32(1, 1, 1, 1, 3, 3, 3, 3, 5, 5, 5, 5, 7, 7, 7, 7), dd8);
}

/* m . bsum for the 16 pairs of a 4 x 4 tile (m: row r's 8 mins as int16 in 128-bit lane r), pair
 * (r, c) in lane 4r + c: per 128-bit lane r, madd
 * against column c's sums gives 4 partial sums, which lane_sums_4_blocks adds up */
static ALWAYS_INLINE TARGET_AVX512 __m512i k4_min_sums_4x4(__m512i m, const block_q8_K *const ab[4]) {
    __m512i t[4];
    UNROLL
    for (int c = 0; c < 4; c++) t[c] = _mm512_madd_epi16(m, _mm512_broadcast_i32x4(k4_group_bsums(ab[c])));
    return lane_sums_4_blocks(t);
}

/* m . bsum for 4 rows (m as for the 4 x 4 tile) and one column, row r in lane r: per 128-bit block r, madd against the
 * column's sums gives 4 partial sums, which block_sums_4 totals. */
static ALWAYS_INLINE TARGET_AVX512 __m128i k4_min_sums_4x1(__m512i m, const block_q8_K *ab) {
    return block_sums_4(_mm512_madd_epi16(m, _mm512_broadcast_i32x4(k4_group_bsums(ab))));
}

/* One super-block's term, as the portable kernel forms it, so the result has its bits: with the
 * exact integer sums isum = sum_g sc[g] sum(q a) and msum = sum_g m[g] bsum(g),
 *   sum += d_a * (d * (float)isum - dmin * (float)msum)
 * (a multiply, a multiply, a subtract, a multiply and an add, never fused). The AVX-512 kernels
 * keep isum in 16 int32 lanes per (row, column) and add the lanes up as integers first. */
/* AVX2, NR rows x NC activations of Q4_K (five = 0) or Q5_K (five = 1): per super-block and output,
 * the scaled group sums in 8 int32 lanes (maddubs gives the byte-pair products, madd with the
 * group's scale widens and scales them; Q5_K's codes take their fifth bit from qh first, at most 31:
 * a pair's products fit int16), then
 *   acc += (d * d_a) * lanes   and   mins += (dmin * d_a) * sum_g m[g] bsum(g)
 * and the result is hsum(acc) - mins. */
static ALWAYS_INLINE TARGET_AVX2 void k4_tile_avx2(const uint8_t *w, size_t ws, const uint8_t *a, size_t as, int64_t k,
                                                   float *y, long ys, const int NR, const int NC, const int five) {
    const size_t bsize = five ? sizeof(block_q5_K) : sizeof(block_q4_K);
    const size_t qs_at = five ? offsetof(block_q5_K, qs) : offsetof(block_q4_K, qs);
    const __m256i one = _mm256_set1_epi8(1);
    __m256 acc[4][4];
    float minsum[4][4];
    UNROLL
    for (int r = 0; r < NR; r++)
        UNROLL
        for (int c = 0; c < NC; c++) { acc[r][c] = _mm256_setzero_ps(); minsum[r][c] = 0.0f; }
    const __m256i low4 = _mm256_set1_epi8(0x0f);
    for (int64_t i = 0; i < k / QK_K; i++) {
        const uint8_t *wb[4];
        const block_q8_K *ab[4];
        __m256i scale[4][8];
        __m128i mins[4];
        UNROLL
        for (int r = 0; r < NR; r++) {
            wb[r] = w + r * ws + (size_t)i * bsize;
            PREFETCH_ROW(wb[r], NR, ws);
            PREFETCH_ROW(wb[r] + 64, NR, ws);
            PREFETCH_ROW(wb[r] + 128, NR, ws);
            int16_t sc[8];
            uint8_t m[8];
            kq_unpack_scales_mins(wb[r] + SCALES_AT, sc, m);
            for (int g = 0; g < 8; g++) scale[r][g] = _mm256_set1_epi16(sc[g]);
            mins[r] = _mm_cvtepu8_epi16(_mm_loadl_epi64((const __m128i *)m));
        }
        UNROLL
        for (int c = 0; c < NC; c++) ab[c] = (const block_q8_K *)(a + c * as) + i;
        __m256i isum[4][4];
        UNROLL
        for (int r = 0; r < NR; r++) for (int c = 0; c < NC; c++) isum[r][c] = _mm256_setzero_si256();
        UNROLL
        for (int j = 0; j < 4; j++) {
            __m256i lo[4], hi[4];
            UNROLL
            for (int r = 0; r < NR; r++) {
                __m256i q = _mm256_loadu_si256((const __m256i *)(wb[r] + qs_at + 32 * j));
                lo[r] = _mm256_and_si256(q, low4);
                hi[r] = _mm256_and_si256(_mm256_srli_epi16(q, 4), low4);
                if (five) {   /* bits 2j and 2j + 1 of qh[l] as bit 4 of codes l of groups 2j and 2j + 1 */
                    const __m256i qh = _mm256_loadu_si256((const __m256i *)(wb[r] + QH_AT));
                    lo[r] = _mm256_or_si256(lo[r], _mm256_slli_epi16(_mm256_and_si256(_mm256_srli_epi16(qh, 2 * j), one), 4));
                    hi[r] = _mm256_or_si256(hi[r], _mm256_slli_epi16(_mm256_and_si256(_mm256_srli_epi16(qh, 2 * j + 1), one), 4));
                }
            }
            UNROLL
            for (int c = 0; c < NC; c++) {
                __m256i a0 = _mm256_loadu_si256((const __m256i *)(ab[c]->qs + 64 * j));
                __m256i a1 = _mm256_loadu_si256((const __m256i *)(ab[c]->qs + 64 * j + 32));
                UNROLL
                for (int r = 0; r < NR; r++) {
                    __m256i p0 = _mm256_madd_epi16(_mm256_maddubs_epi16(lo[r], a0), scale[r][2 * j]);
                    __m256i p1 = _mm256_madd_epi16(_mm256_maddubs_epi16(hi[r], a1), scale[r][2 * j + 1]);
                    isum[r][c] = _mm256_add_epi32(isum[r][c], _mm256_add_epi32(p0, p1));
                }
            }
        }
        UNROLL
        for (int c = 0; c < NC; c++) {
            float da = f32_from_bits(load_u32(ab[c]->d));
            __m128i bs = k4_group_bsums(ab[c]);
            UNROLL
            for (int r = 0; r < NR; r++) {
                int msum = k4_min_sum(mins[r], bs);
                float d = f16_bits_to_f32(wb[r] + D_AT) * da, dmin = f16_bits_to_f32(wb[r] + DMIN_AT) * da;
                acc[r][c] = _mm256_fmadd_ps(_mm256_set1_ps(d), _mm256_cvtepi32_ps(isum[r][c]), acc[r][c]);
                minsum[r][c] += dmin * (float)msum;
            }
        }
    }
    UNROLL
    for (int r = 0; r < NR; r++)
        UNROLL
        for (int c = 0; c < NC; c++) y[c * ys + r] = hsum_f32x8(acc[r][c]) - minsum[r][c];
}

static ALWAYS_INLINE TARGET_AVX512 __m512 k4_term_16(__m512 sum, __m512 da, __m512 d, __m512 dmin, __m512i isum, __m512i msum) {
    const __m512 t = _mm512_sub_ps(_mm512_mul_ps(d, _mm512_cvtepi32_ps(isum)), _mm512_mul_ps(dmin, _mm512_cvtepi32_ps(msum)));
    return _mm512_add_ps(sum, _mm512_mul_ps(da, t));
}

static ALWAYS_INLINE TARGET_AVX512 void k4_tile_avx512(const uint8_t *w, size_t ws, const uint8_t *a,
                                                       size_t as, int64_t k, float *y, long ys,
                                                       const int NR, const int NC, const int five) {
    __m512 sum16 = _mm512_setzero_ps();    /* 4 x 4: pair (r, c) in lane 4r + c */
    __m128 sum4 = _mm_setzero_ps();        /* 4 x 1: row r in lane r */
    float sum[4][4] = { { 0 } };           /* other shapes */
    const __m512i low4 = _mm512_set1_epi8(0x0f);
    const __m512i nibble_shift = _mm512_inserti64x4(_mm512_setzero_si512(), _mm256_set1_epi16(4), 1);
    const __m512i one = _mm512_set1_epi8(1);
    /* Step j of a super-block multiplies 64 codes, two groups of 32 (one per 256-bit half), by 64
     * activations. Q5_K: chunk j of 32 code bytes, its low nibbles (group 2j) in the low half, its
     * high nibbles (2j + 1) in the high half. Q4_K: one 64-byte load serves steps 2h and 2h + 1:
     * its low nibbles (groups 4h, 4h + 2), then its high nibbles (4h + 1, 4h + 3), against
     * activations in that order (ACT_Q8_K_NIBBLES). group_of_half[j]: 16-bit lanes holding the
     * low and high half's group (Q5_K: the qh bits they take); scale_pick[j]: a byte shuffle of the
     * 8 scale bytes that widens each half's group scale to its 16-bit lanes. */
    __m512i group_of_half[4], scale_pick[4];
    UNROLL
    for (int j = 0; j < 4; j++) {
        const int g0 = five ? 2 * j : 4 * (j / 2) + j % 2, g1 = five ? g0 + 1 : g0 + 2;
        group_of_half[j] = _mm512_inserti64x4(_mm512_set1_epi16((short)g0), _mm256_set1_epi16((short)g1), 1);
        scale_pick[j] = _mm512_or_si512(group_of_half[j], _mm512_set1_epi16((short)0xff00));   /* high byte: zero */
    }
    const size_t bsize = five ? sizeof(block_q5_K) : sizeof(block_q4_K);
    const size_t qs_at = five ? offsetof(block_q5_K, qs) : offsetof(block_q4_K, qs);
    for (int64_t i = 0; i < k / QK_K; i++) {
        const uint8_t *wb[4];       /* super-block i of each row */
        const block_q8_K *ab[4];
        __m512i scale[4][4], code_bytes[4];
        __m128i mins[4];
        __m512i sm_rows = _mm512_setzero_si512(), mins4 = _mm512_setzero_si512();   /* 4 rows: row r's in lane r */
        UNROLL
        for (int r = 0; r < NR; r++) {
            wb[r] = w + r * ws + (size_t)i * bsize;
            if (NC > 1 || NR == 1)
                UNROLL
                for (int l = 0; l < 3 + five; l++) PREFETCH_ROW(wb[r] + 64 * l, NR, ws);
        }
        if (NR == 4) {   /* the four rows' scales and mins unpacked together, row r in 128-bit lane r
                          * (the "% NR" only keeps shapes where this branch is dead from naming wb[1..3]) */
            const uint8_t *packed[4] = { wb[0] + SCALES_AT, wb[1 % NR] + SCALES_AT, wb[2 % NR] + SCALES_AT, wb[3 % NR] + SCALES_AT };
            sm_rows = k4_scales_mins_x4(packed);
            mins4 = _mm512_unpackhi_epi8(sm_rows, _mm512_setzero_si512());
        }
        UNROLL
        for (int r = 0; r < NR; r++) {
            __m512i sm4;   /* row r's scales and mins in every 128-bit lane */
            if (NR == 4) {
                sm4 = k4_lane_everywhere(sm_rows, r);
            } else {
                const __m128i sm = k4_scales_mins(wb[r] + SCALES_AT);
                sm4 = _mm512_broadcast_i32x4(sm);
                mins[r] = _mm_cvtepu8_epi16(_mm_srli_si128(sm, 8));
            }
            UNROLL
            for (int j = 0; j < 4; j++) scale[r][j] = _mm512_shuffle_epi8(sm4, scale_pick[j]);
        }
        UNROLL
        for (int c = 0; c < NC; c++) ab[c] = (const block_q8_K *)(a + c * as) + i;
        __m512i isum[4][4];
        UNROLL
        for (int r = 0; r < NR; r++) for (int c = 0; c < NC; c++) isum[r][c] = _mm512_setzero_si512();
        UNROLL
        for (int j = 0; j < 4; j++) {
            if (NR == 4 && NC == 1)
                prefetch_rows4_step(w, ws, (size_t)i * bsize, bsize, (size_t)j, 4);
            __m512i q[4];
            UNROLL
            for (int r = 0; r < NR; r++) {
                if (!five) {   /* step 2h: load 64 code bytes, keep them for step 2h + 1 */
                    if (j % 2 == 0) code_bytes[r] = _mm512_loadu_si512((const void *)(wb[r] + qs_at + 64 * (j / 2)));
                    q[r] = _mm512_and_si512(j % 2 ? _mm512_srli_epi16(code_bytes[r], 4) : code_bytes[r], low4);
                    continue;
                }
                __m512i both = _mm512_broadcast_i64x4(_mm256_loadu_si256((const __m256i *)(wb[r] + qs_at + 32 * j)));
                q[r] = _mm512_and_si512(_mm512_srlv_epi16(both, nibble_shift), low4);
                /* bit 2j (low half) or 2j + 1 (high half) of qh[l], as bit 4 */
                __m512i qh = _mm512_broadcast_i64x4(_mm256_loadu_si256((const __m256i *)(wb[r] + QH_AT)));
                __m512i hb = _mm512_and_si512(_mm512_srlv_epi16(qh, group_of_half[j]), one);
                q[r] = _mm512_or_si512(q[r], _mm512_slli_epi16(hb, 4));
            }
            UNROLL
            for (int c = 0; c < NC; c++) {
                __m512i av = _mm512_loadu_si512((const void *)(ab[c]->qs + 64 * j));
                UNROLL
                for (int r = 0; r < NR; r++)
                    /* dpwssd = madd + add in one instruction (the same int32 sums) */
                    isum[r][c] = _mm512_dpwssd_epi32(isum[r][c], _mm512_maddubs_epi16(q[r], av), scale[r][j]);
            }
        }
        if (NR == 4 && NC == 4) {   /* the 16 pairs at once */
            __m512 d, dmin;
            k4_d_dmin_4x4(wb, &d, &dmin);
            const __m512 da = _mm512_broadcast_f32x4(_mm_setr_ps(f32_from_bits(load_u32(ab[0]->d)), f32_from_bits(load_u32(ab[1]->d)),
                                                                 f32_from_bits(load_u32(ab[2]->d)), f32_from_bits(load_u32(ab[3]->d))));
            sum16 = k4_term_16(sum16, da, d, dmin, lane_sums_4x4(isum), k4_min_sums_4x4(mins4, ab));
        } else if (NR == 4 && NC == 1) {   /* 4 rows: lanes 0-3 */
            const __m128i msum = k4_min_sums_4x1(mins4, ab[0]);
            const __m256 ddmin = _mm256_cvtph_ps(_mm_setr_epi32((int)load_u32(wb[0] + D_AT), (int)load_u32(wb[1] + D_AT),
                                                                (int)load_u32(wb[2] + D_AT), (int)load_u32(wb[3] + D_AT)));
            const __m256 dd = _mm256_permutevar8x32_ps(ddmin, _mm256_setr_epi32(0, 2, 4, 6, 1, 3, 5, 7));
            const __m128 d = _mm256_castps256_ps128(dd), dmin = _mm256_extractf128_ps(dd, 1);
            const __m512i col[4] = { isum[0][0], isum[1][0], isum[2][0], isum[3][0] };
            const __m128 t = _mm_sub_ps(_mm_mul_ps(d, _mm_cvtepi32_ps(lane_sums_4(col))), _mm_mul_ps(dmin, _mm_cvtepi32_ps(msum)));
            sum4 = _mm_add_ps(sum4, _mm_mul_ps(_mm_set1_ps(f32_from_bits(load_u32(ab[0]->d))), t));
        } else {
            UNROLL
            for (int c = 0; c < NC; c++) {
                const float da = f32_from_bits(load_u32(ab[c]->d));
                const __m128i bs = k4_group_bsums(ab[c]);
                UNROLL
                for (int r = 0; r < NR; r++) {
                    const float d = f16_bits_to_f32(wb[r] + D_AT), dmin = f16_bits_to_f32(wb[r] + DMIN_AT);
                    const int32_t is = _mm512_reduce_add_epi32(isum[r][c]), ms = k4_min_sum(mins[r], bs);
                    sum[r][c] += da * (d * (float)is - dmin * (float)ms);
                }
            }
        }
    }
    store_exact_sums(y, ys, NR, NC, sum16, sum4, sum);
}
/* ---- AVX-512 rows in lanes (type_kernels.lanes_*): a super-block of 16 rows rearranged ----
 * Positions in the activations' order: Q4_K's (ACT_Q8_K_NIBBLES: slot s holds the 32 codes of group
 * q8_k_nibble_slot(s), the low (s / 2 even) or high nibbles of qs bytes 64 (s / 4) + 32 (s % 2) ..
 * + 31), Q5_K's the elements' (slot s = group s). quad t = codes 4t .. 4t + 3 of slot t / 8. Lane p
 * of every vector holds row lane_row(p) (lanes_simd.h). */
typedef struct {
    uint8_t codes[64][64];   /* quad t: lane p's 4 codes at bytes 4p .. 4p + 3 */
    int32_t sc[8][16];       /* slot s: lane p's scale of the group there */
    int32_t m[8][16];        /* group g: lane p's min, in both int16 halves (dpwssd with a bsums pair) */
    float d[16], dmin[16];
} k4_lanes;
_Static_assert(sizeof(k4_lanes) % 64 == 0, "whole cache lines");

static ALWAYS_INLINE TARGET_AVX512 void k4_lanes_unpack(const uint8_t *w, size_t ws, int64_t k, uint8_t *out, const int five) {
    const __m512i low4 = _mm512_set1_epi8(0x0f), one = _mm512_set1_epi8(1);
    const size_t bsize = five ? sizeof(block_q5_K) : sizeof(block_q4_K);
    const size_t qs_at = five ? offsetof(block_q5_K, qs) : offsetof(block_q4_K, qs);
    for (int64_t i = 0; i < k / QK_K; i++) {
        k4_lanes *u = (k4_lanes *)out + i;
        const uint8_t *b[16];   /* lane p's super-block */
        UNROLL
        for (int p = 0; p < 16; p++) {
            b[p] = w + lane_row(p) * ws + (size_t)i * bsize;
            /* the same super-block of the next 16 rows (the next call's, in address order) into L2,
             * this row's next but one into L1 (a prefetch past the matrix is harmless): the 16
             * rows' loads then find them instead of missing at once */
            for (int l = 0; l < 3 + five; l++) _mm_prefetch((const char *)b[p] + 16 * ws + 64 * l, _MM_HINT_T1);
            for (int l = 0; l < 3 + five; l++) _mm_prefetch((const char *)b[p] + 2 * bsize + 64 * l, _MM_HINT_T0);
        }
        __m512i qh[16];   /* Q5_K: qh dword m (bytes 4m ..) of every lane in qh[m], m < 8 */
        if (five) {
            UNROLL
            for (int p = 0; p < 16; p++) qh[p] = _mm512_castsi256_si512(_mm256_loadu_si256((const __m256i *)(b[p] + QH_AT)));
            transpose_16x16_epi32(qh);
        }
        UNROLL
        for (int half = 0; half < 2; half++) {   /* qs bytes 64 half .. + 63 of the 16 lanes */
            __m512i r[16];
            UNROLL
            for (int p = 0; p < 16; p++) r[p] = _mm512_loadu_si512((const void *)(b[p] + qs_at + 64 * half));
            transpose_16x16_epi32(r);
            /* r[j]: dword j (qs bytes 64 half + 4j ..) of each lane. Q4_K: its low nibbles are quad
             * 32 half + j, its high nibbles quad 32 half + 16 + j. Q5_K (c = 2 half + j / 8,
             * m = j % 8): low nibbles with bit 2c of qh dword m are quad 16c + m, high nibbles with
             * bit 2c + 1 quad 16c + 8 + m. */
            UNROLL
            for (int j = 0; j < 16; j++) {
                __m512i lo = _mm512_and_si512(r[j], low4), hi = _mm512_and_si512(_mm512_srli_epi16(r[j], 4), low4);
                int at_lo = 32 * half + j, at_hi = 32 * half + 16 + j;
                if (five) {
                    const int c = 2 * half + j / 8, m = j % 8;
                    const __m512i h = qh[m];
                    lo = _mm512_or_si512(lo, _mm512_slli_epi16(_mm512_and_si512(_mm512_srli_epi16(h, 2 * c), one), 4));
                    hi = _mm512_or_si512(hi, _mm512_slli_epi16(_mm512_and_si512(_mm512_srli_epi16(h, 2 * c + 1), one), 4));
                    at_lo = 16 * c + m;
                    at_hi = 16 * c + 8 + m;
                }
                _mm512_store_si512((void *)u->codes[at_lo], lo);
                _mm512_store_si512((void *)u->codes[at_hi], hi);
            }
        }
        /* scales and mins: row 4q + L's 16 bytes (k4_scales_mins) in 128-bit lane L of sm[q] */
        __m512i sm[4];
        UNROLL
        for (int q = 0; q < 4; q++) {
            const uint8_t *packed[4] = { b[q] + SCALES_AT, b[4 + q] + SCALES_AT, b[8 + q] + SCALES_AT, b[12 + q] + SCALES_AT };
            sm[q] = k4_scales_mins_x4(packed);
        }
        UNROLL
        for (int g = 0; g < 8; g++) {   /* Q4_K: the slot of group g is q8_k_nibble_slot(g) (an involution) */
            _mm512_store_si512((void *)u->sc[five ? g : q8_k_nibble_slot(g)], lanes_spread(sm, g, -1, -1, -1));
            _mm512_store_si512((void *)u->m[g], lanes_spread(sm, 8 + g, -1, 8 + g, -1));
        }
        uint16_t dd[32];
        UNROLL
        for (int p = 0; p < 16; p++) {
            dd[p] = (uint16_t)(b[p][D_AT] | b[p][D_AT + 1] << 8);
            dd[16 + p] = (uint16_t)(b[p][DMIN_AT] | b[p][DMIN_AT + 1] << 8);
        }
        _mm512_store_ps(u->d, _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *)dd)));
        _mm512_store_ps(u->dmin, _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *)(dd + 16))));
    }
}

/* 16 rows (lanes) x NC positions: the scaled sums slot by slot, the mins against the bsums pairs,
 * then the portable kernel's float operations lane by lane (k4_term_16). */
static ALWAYS_INLINE TARGET_AVX512 void k4_lanes_body(const uint8_t *ub, const uint8_t *a, size_t as, int64_t k,
                                                      float *y, long ys, const int NC) {
    __m512 sum[4];
    UNROLL
    for (int c = 0; c < NC; c++) sum[c] = _mm512_setzero_ps();
    for (int64_t i = 0; i < k / QK_K; i++) {
        const k4_lanes *u = (const k4_lanes *)ub + i;
        const block_q8_K *ab[4];
        __m512i isum[4], msum[4];
        UNROLL
        for (int c = 0; c < NC; c++) {
            ab[c] = (const block_q8_K *)(a + c * as) + i;
            isum[c] = msum[c] = _mm512_setzero_si512();
        }
        lanes_scaled_group_sums(u->codes, u->sc, 8, 8, ab, NC, isum);
        lanes_bsum_pairs(u->m, ab, NC, msum);
        const __m512 d = _mm512_load_ps(u->d), dmin = _mm512_load_ps(u->dmin);
        UNROLL
        for (int c = 0; c < NC; c++)
            sum[c] = k4_term_16(sum[c], _mm512_set1_ps(f32_from_bits(load_u32(ab[c]->d))), d, dmin, isum[c], msum[c]);
    }
    UNROLL
    for (int c = 0; c < NC; c++) lanes_store_rows(y + c * ys, sum[c]);
}
#undef D_AT
#undef DMIN_AT
#undef SCALES_AT
#undef QH_AT

/* Rows in lanes kept (type_kernels.lanes_pack): super-block i of 16 rows as one k4_packed (Q4_K) or
 * k5_packed (Q5_K: the same and the fifth bits as masks), lane p of every vector row p, in the 16
 * rows' own bytes. Nothing is rearranged per product: the codes are split from their nibbles and
 * the 6-bit scales and mins put together in registers, once per super-block and 4 positions. */
typedef struct {
    uint8_t qs[32][64];         /* v = 16 half + j: lane p's qs bytes 64 half + 4j .. + 3 */
    uint8_t sm_lo[8][16];       /* group g, lane p: its scale's low 4 bits, its min's above them */
    uint32_t sm_hi[16];         /* lane p: group g's scale >> 4 at bits 4g, its min >> 4 at bits 4g + 2 */
    uint16_t d[16], dmin[16];   /* f16 */
} k4_packed;
_Static_assert(sizeof(k4_packed) == 16 * sizeof(block_q4_K), "the 16 rows' own bytes");
typedef struct {
    k4_packed k4;
    uint64_t high[32][2];       /* qs dword v, nibble h (0 low, 1 high): bit 4p + b, lane p's byte b's fifth bit */
} k5_packed;
_Static_assert(sizeof(k5_packed) == 16 * sizeof(block_q5_K), "the 16 rows' own bytes");

/* Q4_K and Q5_K blocks begin alike: d, dmin, the 12 scale bytes (Q5_K's qh come before its qs) */
static ALWAYS_INLINE TARGET_AVX512 void k4_packed_pack(const uint8_t *w, size_t ws, int64_t k, uint8_t *out, const int five) {
    const size_t bsize = five ? sizeof(block_q5_K) : sizeof(block_q4_K), psize = five ? sizeof(k5_packed) : sizeof(k4_packed);
    const size_t qs_at = five ? offsetof(block_q5_K, qs) : offsetof(block_q4_K, qs);
    for (int64_t i = 0; i < k / QK_K; i++) {
        k5_packed u;
        memset(&u, 0, sizeof u);
        UNROLL
        for (int half = 0; half < 2; half++) {   /* the codes: a 16 x 16 dword transpose per half */
            __m512i r[16];
            UNROLL
            for (int p = 0; p < 16; p++) r[p] = _mm512_loadu_si512((const void *)(w + p * ws + (size_t)i * bsize + qs_at + 64 * half));
            transpose_16x16_epi32(r);
            UNROLL
            for (int j = 0; j < 16; j++) _mm512_storeu_si512((void *)u.k4.qs[16 * half + j], r[j]);
        }
        uint8_t smb[4][64];   /* row 4q + L's 8 scales and 8 mins (k4_scales_mins) at smb[q][16 L] */
        UNROLL
        for (int q = 0; q < 4; q++) {
            const uint8_t *scales[4];
            for (int l = 0; l < 4; l++) scales[l] = w + (4 * q + l) * ws + (size_t)i * bsize + 4;
            _mm512_storeu_si512((void *)smb[q], k4_scales_mins_x4(scales));
        }
        for (int p = 0; p < 16; p++) {
            const uint8_t *b = w + p * ws + (size_t)i * bsize;
            const uint8_t *sm = &smb[p / 4][16 * (p % 4)];
            for (int g = 0; g < 8; g++) {
                const int sc = sm[g], m = sm[8 + g];
                u.k4.sm_lo[g][p] = (uint8_t)((sc & 15) | (m & 15) << 4);
                u.k4.sm_hi[p] |= (uint32_t)(sc >> 4) << (4 * g) | (uint32_t)(m >> 4) << (4 * g + 2);
            }
            u.k4.d[p] = load_u16(b);
            u.k4.dmin[p] = load_u16(b + 2);
            if (five)   /* qs byte n = 4v + j's nibble h: qh byte n % 32, bit 2 (n / 32) + h (4 bytes j at a time) */
                for (int v = 0; v < 32; v++)
                    for (int h = 0; h < 2; h++)
                        u.high[v][h] |= byte_bits4(load_u32(((const block_q5_K *)b)->qh + 4 * (v % 8)) >> (2 * (v / 8) + h)) << (4 * p);
        }
        memcpy(out + (size_t)i * psize, &u, psize);
    }
}

/* Row p of 16 packed rows put together again (type_kernels.lanes_row: a tied head's token rows) */
static inline void k4_packed_row(const uint8_t *ub, int64_t k, int p, uint8_t *row, const int five) {
    const size_t bsize = five ? sizeof(block_q5_K) : sizeof(block_q4_K), psize = five ? sizeof(k5_packed) : sizeof(k4_packed);
    uint8_t *qs_out = row + (five ? offsetof(block_q5_K, qs) : offsetof(block_q4_K, qs));
    for (int64_t i = 0; i < k / QK_K; i++, row += bsize, qs_out += bsize) {
        const k5_packed *u = (const k5_packed *)(ub + (size_t)i * psize);
        for (int v = 0; v < 32; v++) memcpy(qs_out + 4 * v, &u->k4.qs[v][4 * p], 4);
        int sc[8], m[8];
        for (int g = 0; g < 8; g++) {
            sc[g] = (u->k4.sm_lo[g][p] & 15) | (int)((u->k4.sm_hi[p] >> (4 * g)) & 3) << 4;
            m[g] = (u->k4.sm_lo[g][p] >> 4) | (int)((u->k4.sm_hi[p] >> (4 * g + 2)) & 3) << 4;
        }
        uint8_t *scales = row + 4;
        for (int j = 0; j < 4; j++) {   /* the 12-byte packing kq_get_scale_min reads */
            scales[j] = (uint8_t)(sc[j] | (sc[j + 4] >> 4) << 6);
            scales[j + 4] = (uint8_t)(m[j] | (m[j + 4] >> 4) << 6);
            scales[j + 8] = (uint8_t)((sc[j + 4] & 15) | (m[j + 4] & 15) << 4);
        }
        row[0] = (uint8_t)u->k4.d[p]; row[1] = (uint8_t)(u->k4.d[p] >> 8);
        row[2] = (uint8_t)u->k4.dmin[p]; row[3] = (uint8_t)(u->k4.dmin[p] >> 8);
        if (five) {
            uint8_t *qh = ((block_q5_K *)row)->qh;
            memset(qh, 0, 32);
            for (int n = 0; n < 128; n++)
                for (int h = 0; h < 2; h++)
                    qh[n % 32] |= (uint8_t)(((u->high[n / 4][h] >> (4 * p + n % 4)) & 1) << (2 * (n / 32) + h));
        }
    }
}

/* The end: each position's term (k4_term_16) with the 16 rows' f16 d and dmin */
static ALWAYS_INLINE TARGET_AVX512 void k_packed_terms(__m512 sum[8], const uint16_t d16[16], const uint16_t dmin16[16],
                                                       const block_q8_K *const ab[8], const __m512i isum[8], const __m512i msum[8],
                                                       const int NC) {
    const __m512 d = _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *)d16));
    const __m512 dmin = _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *)dmin16));
    UNROLL
    for (int c = 0; c < NC; c++)
        sum[c] = k4_term_16(sum[c], _mm512_set1_ps(f32_from_bits(load_u32(ab[c]->d))), d, dmin, isum[c], msum[c]);
}

/* Group g's 6-bit scale (field 0) or min (field 1) in the 16 lanes */
static ALWAYS_INLINE TARGET_AVX512 __m512i k4_packed_field(const k4_packed *u, __m512i hi, int g, int field) {
    const __m512i lo = _mm512_cvtepu8_epi32(_mm_loadu_si128((const __m128i *)u->sm_lo[g]));
    const __m512i low = field ? _mm512_srli_epi32(lo, 4) : _mm512_and_si512(lo, _mm512_set1_epi32(15));
    const __m512i top = _mm512_and_si512(_mm512_srli_epi32(hi, 4 * g + 2 * field), _mm512_set1_epi32(3));
    return _mm512_or_si512(low, _mm512_slli_epi32(top, 4));
}
/* the mins against the activation's group sums (a group's 32 int8 sum to at most 4,064: int16), two
 * groups per dpwssd: lanes (min 2p, min 2p + 1) against (group sum 2p, group sum 2p + 1). The same
 * integers as a min times each of its group's two bsums. */
static ALWAYS_INLINE TARGET_AVX512 void k4_packed_mins(const k4_packed *u, __m512i hi, const block_q8_K *const *ab, const int NC,
                                                       __m512i *msum) {
    int32_t group_pairs[LANES_MAX_NC][4] __attribute__((aligned(16)));
    UNROLL_16
    for (int c = 0; c < NC; c++)
        _mm_store_si128((__m128i *)group_pairs[c], _mm_hadd_epi16(_mm_loadu_si128((const __m128i *)ab[c]->bsums),
                                                                  _mm_loadu_si128((const __m128i *)(ab[c]->bsums + 16))));
    UNROLL
    for (int p = 0; p < 4; p++) {
        const __m512i mm = _mm512_or_si512(k4_packed_field(u, hi, 2 * p, 1), _mm512_slli_epi32(k4_packed_field(u, hi, 2 * p + 1, 1), 16));
        UNROLL_16
        for (int c = 0; c < NC; c++) msum[c] = _mm512_dpwssd_epi32(msum[c], mm, _mm512_set1_epi32(group_pairs[c][p]));
    }
}
#endif

#if defined(__aarch64__)
/* NEON SDOT, NR rows x NC activations per super-block of Q4_K (five = 0) or Q5_K (five = 1): the
 * groups' integer sums by SDOT, scaled per group in int32 lanes; the mins against the activation's
 * pair sums of bsums; then the portable kernel's float operations, so the same bits. */
static ALWAYS_INLINE TARGET_DOTPROD void k4_tile_dotprod(const uint8_t *w, size_t ws, const uint8_t *a, size_t as,
                                                         int64_t k, float *y, long ys, const int NR, const int NC,
                                                         const int five) {
    const size_t bsize = five ? sizeof(block_q5_K) : sizeof(block_q4_K);
    const size_t qs_at = five ? offsetof(block_q5_K, qs) : offsetof(block_q4_K, qs);
    float sum[4][4] = { { 0.0f } };
    const uint8x16_t low4 = vdupq_n_u8(0x0f), one = vdupq_n_u8(1);
    for (int64_t i = 0; i < k / QK_K; i++) {
        const block_q8_K *ab[4];
        float da[4];
        int16x8_t group_sums[4];   /* the activation's sums over each group of 32 codes */
        UNROLL
        for (int c = 0; c < NC; c++) {
            ab[c] = (const block_q8_K *)(a + c * as) + i;
            da[c] = f32_from_bits(load_u32(ab[c]->d));
            group_sums[c] = vpaddq_s16(vreinterpretq_s16_u8(vld1q_u8(ab[c]->bsums)),
                                       vreinterpretq_s16_u8(vld1q_u8(ab[c]->bsums + 16)));
        }
        /* one row at a time (not unrolled): unrolled, GCC keeps every row's loads of the same
         * activation bytes in registers, and spilled (156 stack stores per 4 x 4 tile call) */
        NO_UNROLL
        for (int r = 0; r < NR; r++) {
            /* d, dmin and the scales sit where they do in both layouts */
            const block_q4_K *wb = (const block_q4_K *)(w + r * ws + (size_t)i * bsize);
            const uint8_t *qs = (const uint8_t *)wb + qs_at;
            int sc[8];
            int16_t mins[8];
            for (int g = 0; g < 8; g++) {
                int m;
                kq_get_scale_min(wb->scales, g, &sc[g], &m);
                mins[g] = (int16_t)m;
            }
            const int16x8_t m8 = vld1q_s16(mins);
            uint8x16_t qh0 = vdupq_n_u8(0), qh1 = vdupq_n_u8(0);
            if (five) {
                qh0 = vld1q_u8(((const block_q5_K *)wb)->qh);
                qh1 = vld1q_u8(((const block_q5_K *)wb)->qh + 16);
            }
            int32x4_t isum[4];
            UNROLL
            for (int c = 0; c < NC; c++) isum[c] = vdupq_n_s32(0);
            NO_UNROLL
            for (int h = 0; h < 4; h++) {   /* 32 bytes: group 2h in the low nibbles, 2h + 1 in the high */
                const uint8x16_t raw0 = vld1q_u8(qs + 32 * h), raw1 = vld1q_u8(qs + 32 * h + 16);
                uint8x16_t lo0 = vandq_u8(raw0, low4), lo1 = vandq_u8(raw1, low4);
                uint8x16_t hi0 = vshrq_n_u8(raw0, 4), hi1 = vshrq_n_u8(raw1, 4);
                if (five) {   /* group 2h's fifth bits are bit 2h of qh, group 2h + 1's bit 2h + 1 */
                    const int8x16_t down_lo = vdupq_n_s8((int8_t)(-2 * h)), down_hi = vdupq_n_s8((int8_t)(-2 * h - 1));
                    lo0 = vorrq_u8(lo0, vshlq_n_u8(vandq_u8(vshlq_u8(qh0, down_lo), one), 4));
                    lo1 = vorrq_u8(lo1, vshlq_n_u8(vandq_u8(vshlq_u8(qh1, down_lo), one), 4));
                    hi0 = vorrq_u8(hi0, vshlq_n_u8(vandq_u8(vshlq_u8(qh0, down_hi), one), 4));
                    hi1 = vorrq_u8(hi1, vshlq_n_u8(vandq_u8(vshlq_u8(qh1, down_hi), one), 4));
                }
                UNROLL
                for (int c = 0; c < NC; c++) {
                    const int8_t *q = ab[c]->qs + 64 * h;
                    int32x4_t p = vdotq_s32(vdotq_s32(vdupq_n_s32(0), vreinterpretq_s8_u8(lo0), vld1q_s8(q)),
                                            vreinterpretq_s8_u8(lo1), vld1q_s8(q + 16));
                    isum[c] = vmlaq_n_s32(isum[c], p, sc[2 * h]);
                    p = vdotq_s32(vdotq_s32(vdupq_n_s32(0), vreinterpretq_s8_u8(hi0), vld1q_s8(q + 32)),
                                  vreinterpretq_s8_u8(hi1), vld1q_s8(q + 48));
                    isum[c] = vmlaq_n_s32(isum[c], p, sc[2 * h + 1]);
                }
            }
            const float d = load_f16(wb->d), dmin = load_f16(wb->dmin);
            UNROLL
            for (int c = 0; c < NC; c++) {
                int32x4_t ms = vmull_s16(vget_low_s16(m8), vget_low_s16(group_sums[c]));
                ms = vmlal_s16(ms, vget_high_s16(m8), vget_high_s16(group_sums[c]));
                const int32_t is = vaddvq_s32(isum[c]), msum = vaddvq_s32(ms);
                sum[r][c] += da[c] * (d * (float)is - dmin * (float)msum);
            }
        }
    }
    store_tile_sums(sum, y, ys, NR, NC);
}
#endif

#endif
