/* Q6_K weights . Q8_K activations: per super-block
 *   d * d_a * (sum_g scales[g] sum(q a) - 32 sum_g scales[g] bsum[g])
 * over the 16 groups of 16 with the unsigned 6-bit q; the sums are integers. Portable,
 * AVX2/AVX-512 and NEON (SDOT). */
#include <string.h>
#include "kernels/kernels_internal.h"
#include "kernels/simd.h"
#include "kernels/lanes_simd.h"

static ALWAYS_INLINE float dot_q6_k_q8_k(const void *w, const void *act, int64_t k) {
    const block_q6_K *x = w;
    const block_q8_K *y = act;
    float sum = 0.0f;
    for (int64_t i = 0; i < k / QK_K; i++) {
        int8_t q[QK_K];
        UNROLL
        for (int n = 0; n < 2; n++)
            UNROLL
            for (int j = 0; j < 4; j++)
                for (int l = 0; l < 32; l++) {
                    int low = (x[i].ql[64 * n + 32 * (j & 1) + l] >> (4 * (j >> 1))) & 0xf;
                    int high = (x[i].qh[32 * n + l] >> (2 * j)) & 3;
                    q[128 * n + 32 * j + l] = (int8_t)(low | high << 4);
                }
        int32_t isum = 0, corr = 0;
        for (int g = 0; g < 16; g++) {
            isum += x[i].scales[g] * dot_i8(q + 16 * g, y[i].qs + 16 * g, 16);
            corr += x[i].scales[g] * q8k_bsum(y[i].bsums, g);
        }
        sum += f32_from_bits(load_u32(y[i].d)) * load_f16(x[i].d) * (float)(isum - 32 * corr);
    }
    return sum;
}

static float q6_k_dot_generic(const void *w, const void *act, int64_t k) {
    return dot_q6_k_q8_k(w, act, k);
}

const type_kernels q6_k_kernels_generic = { .act_type = TS_Q8_K, .dot = q6_k_dot_generic };

#if defined(TS_X86)
/* sum_g scales[g] bsum[g] over the 16 groups of a super-block (bs: the activation's bsums) */
static ALWAYS_INLINE TARGET_AVX2 int q6_k_scaled_bsums(const int8_t *scales, __m256i bs) {
    __m256i sb = _mm256_madd_epi16(_mm256_cvtepi8_epi16(_mm_loadu_si128((const __m128i *)scales)), bs);
    __m128i h = _mm_add_epi32(_mm256_castsi256_si128(sb), _mm256_extracti128_si256(sb, 1));
    h = _mm_add_epi32(h, _mm_unpackhi_epi64(h, h));
    return _mm_cvtsi128_si32(h) + _mm_extract_epi32(h, 1);
}

/* Per super-block and output: the unsigned codes times the activations, scaled per group of 16
 * (the low and high 128-bit halves of a 32-code vector are two groups), in 8 int32 lanes; then
 *   acc += (d * d_a) * lanes   and   corr += (d * d_a) * 32 sum_g scales[g] bsum(g)
 * and the result is hsum(acc) - corr. */
static ALWAYS_INLINE TARGET_AVX2 void q6_k_avx2_body(const uint8_t *w, size_t ws, const uint8_t *a,
                                                     size_t as, int64_t k, float *y, long ys,
                                                     const int NR, const int NC) {
    __m256 acc[4][4];
    float corr[4][4];
    UNROLL
    for (int r = 0; r < NR; r++)
        UNROLL
        for (int c = 0; c < NC; c++) { acc[r][c] = _mm256_setzero_ps(); corr[r][c] = 0.0f; }
    const __m256i low4 = _mm256_set1_epi8(0x0f), low2 = _mm256_set1_epi8(0x03);
    for (int64_t i = 0; i < k / QK_K; i++) {
        const block_q6_K *wb[4];
        const block_q8_K *ab[4];
        __m256i scales8[4];   /* the 16 int8 scales of the super-block in both 128-bit lanes */
        UNROLL
        for (int r = 0; r < NR; r++) {
            wb[r] = (const block_q6_K *)(w + r * ws) + i;
            if (NC > 1 || NR == 1)
                for (int l = 0; l < (int)sizeof(block_q6_K); l += 64) PREFETCH_ROW((const uint8_t *)wb[r] + l, NR, ws);
            scales8[r] = _mm256_broadcastsi128_si256(_mm_loadu_si128((const __m128i *)wb[r]->scales));
        }
        UNROLL
        for (int c = 0; c < NC; c++) ab[c] = (const block_q8_K *)(a + c * as) + i;
        __m256i isum[4][4];
        UNROLL
        for (int r = 0; r < NR; r++) for (int c = 0; c < NC; c++) isum[r][c] = _mm256_setzero_si256();
        UNROLL
        for (int n = 0; n < 2; n++)
            UNROLL
            for (int j = 0; j < 4; j++) {
                if (NR == 4 && NC == 1)   /* an eighth of the 4 rows' prefetch a step (q4_k_simd.h) */
                    prefetch_rows4_step(w, ws, (size_t)i * sizeof(block_q6_K), sizeof(block_q6_K), (size_t)(4 * n + j), 8);
                __m256i q[4], scale[4];
                UNROLL
                for (int r = 0; r < NR; r++) {
                    __m256i ql = _mm256_loadu_si256((const __m256i *)(wb[r]->ql + 64 * n + 32 * (j & 1)));
                    __m256i qh = _mm256_loadu_si256((const __m256i *)(wb[r]->qh + 32 * n));
                    __m256i low = _mm256_and_si256(_mm256_srli_epi16(ql, 4 * (j >> 1)), low4);
                    __m256i high = _mm256_and_si256(_mm256_srli_epi16(qh, 2 * j), low2);
                    q[r] = _mm256_or_si256(low, _mm256_slli_epi16(high, 4));
                    /* scales g and g + 1 (g = 8n + 2j) as int16 in the low and high lanes: each byte
                     * pair holds the scale twice, and the arithmetic shift keeps its sign */
                    const __m256i pick = _mm256_setr_m128i(_mm_set1_epi8((char)(8 * n + 2 * j)),
                                                           _mm_set1_epi8((char)(8 * n + 2 * j + 1)));
                    scale[r] = _mm256_srai_epi16(_mm256_shuffle_epi8(scales8[r], pick), 8);
                }
                UNROLL
                for (int c = 0; c < NC; c++) {
                    __m256i av = _mm256_loadu_si256((const __m256i *)(ab[c]->qs + 128 * n + 32 * j));
                    UNROLL
                    for (int r = 0; r < NR; r++) {
                        __m256i p = _mm256_madd_epi16(_mm256_maddubs_epi16(q[r], av), scale[r]);
                        isum[r][c] = _mm256_add_epi32(isum[r][c], p);
                    }
                }
            }
        UNROLL
        for (int c = 0; c < NC; c++) {
            float da = f32_from_bits(load_u32(ab[c]->d));
            __m256i bs = _mm256_loadu_si256((const __m256i *)ab[c]->bsums);
            UNROLL
            for (int r = 0; r < NR; r++) {
                int cs = q6_k_scaled_bsums(wb[r]->scales, bs);
                float d = f16_bits_to_f32(wb[r]->d) * da;
                acc[r][c] = _mm256_fmadd_ps(_mm256_set1_ps(d), _mm256_cvtepi32_ps(isum[r][c]), acc[r][c]);
                corr[r][c] += d * (float)(32 * cs);
            }
        }
    }
    UNROLL
    for (int r = 0; r < NR; r++)
        UNROLL
        for (int c = 0; c < NC; c++) y[c * ys + r] = hsum_f32x8(acc[r][c]) - corr[r][c];
}

/* AVX-512: the AVX2 scheme on 64 codes at a time (codes j and j + 1 of the AVX2 loop: 64
 * contiguous ql bytes, one 32-byte qh chunk shifted by 2j in the low half and 2j + 2 in the high
 * half, four groups of 16 with their scales, 64 contiguous activations). Each super-block's lanes
 * are added up as integers and take the portable kernel's float operations,
 *   sum += (d_a * d) * (float)(isum - 32 sum_g scales[g] bsum(g))
 * so every AVX-512 Q6_K kernel gives the portable one's bits. */

/* 32 sum_g scales[g] bsum(g) for the 16 pairs of a 4 x 4 tile, pair (r, c) in lane 4r + c: two
 * rows per vector against column c's sums in both halves gives 8 partial sums per pair; unpack +
 * add rounds transpose and finish them */
static ALWAYS_INLINE TARGET_AVX512 __m512i q6_k_offsets_4x4(const __m256i sc16[4], const block_q8_K *const ab[4]) {
    __m512i w[2];
    UNROLL
    for (int h = 0; h < 2; h++) {
        const __m512i s = _mm512_inserti64x4(_mm512_castsi256_si512(sc16[2 * h]), sc16[2 * h + 1], 1);
        __m512i t[4];
        UNROLL
        for (int c = 0; c < 4; c++)
            t[c] = _mm512_madd_epi16(s, _mm512_broadcast_i64x4(_mm256_loadu_si256((const __m256i *)ab[c]->bsums)));
        const __m512i x = lane_sums_4_blocks(t);
        /* 128-bit lanes 0 + 1 hold row 2h's halves, 2 + 3 row 2h + 1's */
        w[h] = _mm512_add_epi32(x, _mm512_shuffle_i32x4(x, x, _MM_SHUFFLE(2, 3, 0, 1)));
    }
    return _mm512_slli_epi32(_mm512_shuffle_i32x4(w[0], w[1], _MM_SHUFFLE(2, 0, 2, 0)), 5);
}

/* 32 sum_g scales[g] bsum(g) for 4 rows and one column, row r in lane r: two rows per vector
 * against the column's sums in both halves; 128-bit shuffles + adds bring each row's 8 partial
 * sums to 4 in one block, which block_sums_4 totals */
static ALWAYS_INLINE TARGET_AVX512 __m128i q6_k_offsets_4x1(const __m256i sc16[4], const block_q8_K *ab) {
    const __m512i bs = _mm512_broadcast_i64x4(_mm256_loadu_si256((const __m256i *)ab->bsums));
    const __m512i t0 = _mm512_madd_epi16(_mm512_inserti64x4(_mm512_castsi256_si512(sc16[0]), sc16[1], 1), bs);
    const __m512i t1 = _mm512_madd_epi16(_mm512_inserti64x4(_mm512_castsi256_si512(sc16[2]), sc16[3], 1), bs);
    /* blocks: row 0, row 1 (of t0), row 2, row 3 (of t1), 4 partial sums each */
    const __m512i t = _mm512_add_epi32(_mm512_shuffle_i32x4(t0, t1, _MM_SHUFFLE(2, 0, 2, 0)),
                                 _mm512_shuffle_i32x4(t0, t1, _MM_SHUFFLE(3, 1, 3, 1)));
    return _mm_slli_epi32(block_sums_4(t), 5);
}

/* the d of four rows' super-blocks */
static ALWAYS_INLINE TARGET_AVX512 __m128 q6_k_d4(const block_q6_K *const wb[4]) {
    return _mm_cvtph_ps(_mm_setr_epi16((short)(wb[0]->d[0] | wb[0]->d[1] << 8), (short)(wb[1]->d[0] | wb[1]->d[1] << 8),
                                       (short)(wb[2]->d[0] | wb[2]->d[1] << 8), (short)(wb[3]->d[0] | wb[3]->d[1] << 8),
                                       0, 0, 0, 0));
}

static ALWAYS_INLINE TARGET_AVX512 void q6_k_avx512_body(const uint8_t *w, size_t ws, const uint8_t *a,
                                                         size_t as, int64_t k, float *y, long ys,
                                                         const int NR, const int NC) {
    __m512 sum16 = _mm512_setzero_ps();    /* 4 x 4: pair (r, c) in lane 4r + c */
    __m128 sum4 = _mm_setzero_ps();        /* 4 x 1: row r in lane r */
    float sum[4][4] = { { 0 } };           /* other shapes */
    const __m512i low4 = _mm512_set1_epi8(0x0f), bits45 = _mm512_set1_epi8(0x30);
    /* step (n, jj) covers groups 8n + 4jj .. + 3, one per 128-bit lane: each 16-bit lane of 128-bit
     * lane l takes the scale of group 8n + 4jj + l from the 16 widened scales */
    __m512i scale_index[4];
    UNROLL
    for (int step = 0; step < 4; step++)
        scale_index[step] = _mm512_add_epi16(_mm512_set1_epi16((short)(4 * step)),
                                             _mm512_set_epi16(3, 3, 3, 3, 3, 3, 3, 3, 2, 2, 2, 2, 2, 2, 2, 2,
                                                              1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0));
    for (int64_t i = 0; i < k / QK_K; i++) {
        const block_q6_K *wb[4];
        const block_q8_K *ab[4];
        UNROLL
        for (int r = 0; r < NR; r++) {
            wb[r] = (const block_q6_K *)(w + r * ws) + i;
            if (NC > 1 || NR == 1)
                for (int l = 0; l < (int)sizeof(block_q6_K); l += 64) PREFETCH_ROW((const uint8_t *)wb[r] + l, NR, ws);
        }
        /* the 16 scales of each row widened once, in vector registers */
        __m256i sc16[4];
        UNROLL
        for (int r = 0; r < NR; r++) sc16[r] = _mm256_cvtepi8_epi16(_mm_loadu_si128((const __m128i *)wb[r]->scales));
        UNROLL
        for (int c = 0; c < NC; c++) ab[c] = (const block_q8_K *)(a + c * as) + i;
        __m512i isum[4][4];
        UNROLL
        for (int r = 0; r < NR; r++) for (int c = 0; c < NC; c++) isum[r][c] = _mm512_setzero_si512();
        UNROLL
        for (int n = 0; n < 2; n++)
            UNROLL
            for (int jj = 0; jj < 2; jj++) {
                if (NR == 4 && NC == 1)   /* a quarter of the 4 rows' prefetch a step (q4_k_simd.h) */
                    prefetch_rows4_step(w, ws, (size_t)i * sizeof(block_q6_K), sizeof(block_q6_K), (size_t)(2 * n + jj), 4);
                /* the two high bits at 4jj (low half) and 4jj + 2 (high half) moved straight to bits 4-5:
                 * left by 4 and 2 (jj = 0), right by 0 and 2 (jj = 1) */
                const __m512i high_move = _mm512_inserti64x4(_mm512_set1_epi16((short)(jj ? 0 : 4)), _mm256_set1_epi16(2), 1);
                __m512i q[4], scale[4];
                UNROLL
                for (int r = 0; r < NR; r++) {
                    __m512i ql = _mm512_loadu_si512((const void *)(wb[r]->ql + 64 * n));
                    __m512i qh = _mm512_broadcast_i64x4(_mm256_loadu_si256((const __m256i *)(wb[r]->qh + 32 * n)));
                    __m512i low = _mm512_and_si512(_mm512_srli_epi16(ql, 4 * jj), low4);
                    __m512i high = _mm512_and_si512(jj ? _mm512_srlv_epi16(qh, high_move) : _mm512_sllv_epi16(qh, high_move), bits45);
                    q[r] = _mm512_or_si512(low, high);
                    scale[r] = _mm512_permutexvar_epi16(scale_index[2 * n + jj], _mm512_castsi256_si512(sc16[r]));
                }
                UNROLL
                for (int c = 0; c < NC; c++) {
                    __m512i av = _mm512_loadu_si512((const void *)(ab[c]->qs + 128 * n + 64 * jj));
                    UNROLL
                    for (int r = 0; r < NR; r++)
                        /* dpwssd = madd + add in one instruction (the same int32 sums) */
                        isum[r][c] = _mm512_dpwssd_epi32(isum[r][c], _mm512_maddubs_epi16(q[r], av), scale[r]);
                }
            }
        if (NR == 4 && NC == 4) {   /* the 16 pairs at once */
            const __m512 dw = _mm512_permutexvar_ps(_mm512_setr_epi32(0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3),
                                                    _mm512_castps128_ps512(q6_k_d4(wb)));
            const __m512 da = _mm512_broadcast_f32x4(_mm_setr_ps(f32_from_bits(load_u32(ab[0]->d)), f32_from_bits(load_u32(ab[1]->d)),
                                                                 f32_from_bits(load_u32(ab[2]->d)), f32_from_bits(load_u32(ab[3]->d))));
            const __m512i total = _mm512_sub_epi32(lane_sums_4x4(isum), q6_k_offsets_4x4(sc16, ab));
            sum16 = _mm512_add_ps(sum16, _mm512_mul_ps(_mm512_mul_ps(da, dw), _mm512_cvtepi32_ps(total)));
        } else if (NR == 4 && NC == 1) {   /* 4 rows: lanes 0-3 */
            const __m512i col[4] = { isum[0][0], isum[1][0], isum[2][0], isum[3][0] };
            const __m128i total = _mm_sub_epi32(lane_sums_4(col), q6_k_offsets_4x1(sc16, ab[0]));
            const __m128 d = _mm_mul_ps(_mm_set1_ps(f32_from_bits(load_u32(ab[0]->d))), q6_k_d4(wb));
            sum4 = _mm_add_ps(sum4, _mm_mul_ps(d, _mm_cvtepi32_ps(total)));
        } else {
            UNROLL
            for (int c = 0; c < NC; c++) {
                const float da = f32_from_bits(load_u32(ab[c]->d));
                const __m256i bs = _mm256_loadu_si256((const __m256i *)ab[c]->bsums);
                UNROLL
                for (int r = 0; r < NR; r++) {
                    const int32_t total = _mm512_reduce_add_epi32(isum[r][c]) - 32 * q6_k_scaled_bsums(wb[r]->scales, bs);
                    sum[r][c] += da * f16_bits_to_f32(wb[r]->d) * (float)total;
                }
            }
        }
    }
    store_exact_sums(y, ys, NR, NC, sum16, sum4, sum);
}

DOT_FROM_BODY(TARGET_AVX2, q6_k_dot_avx2, q6_k_avx2_body)
TILE_FROM_BODY(TARGET_AVX2, q6_k_rows4_avx2, q6_k_avx2_body, 4, 1)
TILE_FROM_BODY(TARGET_AVX2, q6_k_tile_avx2, q6_k_avx2_body, 4, 4)
const type_kernels q6_k_kernels_avx2 = {
    .act_type = TS_Q8_K, .dot = q6_k_dot_avx2, .rows4 = q6_k_rows4_avx2,
    .tile = q6_k_tile_avx2, .tile_rows = 4, .tile_cols = 4 };

/* The portable kernel's float operations for a super-block, 16 rows (lanes) at once:
 * sum + (d_a * d) * (float)(isum - 32 corr) */
static ALWAYS_INLINE TARGET_AVX512 __m512 q6_k_term_16(__m512 sum, const block_q8_K *ab, __m512 d, __m512i isum, __m512i corr) {
    const __m512 dd = _mm512_mul_ps(_mm512_set1_ps(f32_from_bits(load_u32(ab->d))), d);
    const __m512i t = _mm512_sub_epi32(isum, _mm512_slli_epi32(corr, 5));
    return _mm512_add_ps(sum, _mm512_mul_ps(dd, _mm512_cvtepi32_ps(t)));
}

/* ---- AVX-512 rows in lanes (type_kernels.lanes_*): a super-block of 16 rows rearranged ----
 * Codes in element order (the activations' TS_Q8_K order), quad t = elements 4t .. 4t + 3 of
 * group t / 4; lane p holds row lane_row(p) (lanes_simd.h). */
typedef struct {
    uint8_t codes[64][64];   /* quad t: lane p's 4 unsigned 6-bit codes at bytes 4p .. 4p + 3 */
    int32_t sc[16][16];      /* group g: lane p's scale */
    int32_t sc2[8][16];      /* groups 2h, 2h + 1: lane p's two scales as int16 (dpwssd with a bsums pair) */
    float d[16];
} q6_k_lanes;
_Static_assert(sizeof(q6_k_lanes) % 64 == 0, "whole cache lines");

static TARGET_AVX512 void q6_k_lanes_unpack_avx512(const uint8_t *w, size_t ws, int64_t k, uint8_t *out) {
    const __m512i low4 = _mm512_set1_epi8(0x0f), bits45 = _mm512_set1_epi8(0x30);
    for (int64_t i = 0; i < k / QK_K; i++) {
        q6_k_lanes *u = (q6_k_lanes *)out + i;
        const block_q6_K *b[16];   /* lane p's super-block */
        UNROLL
        for (int p = 0; p < 16; p++) {
            b[p] = (const block_q6_K *)(w + lane_row(p) * ws) + i;
            /* the same super-block of the next 16 rows into L2, this row's next but one into L1
             * (prefetches past the matrix are harmless) */
            for (int l = 0; l < 4; l++) _mm_prefetch((const char *)b[p] + 16 * ws + 64 * l, _MM_HINT_T1);
            for (int l = 0; l < 4; l++) _mm_prefetch((const char *)(b[p] + 2) + 64 * l, _MM_HINT_T0);
        }
        /* qh: dword m of half n (qh bytes 32n + 4m ..) holds the high bits of elements
         * 128n + 32j + 4m .. + 3 at bits 2j, 2j + 1 */
        __m512i qh[16];
        UNROLL
        for (int p = 0; p < 16; p++) qh[p] = _mm512_loadu_si512((const void *)b[p]->qh);
        transpose_16x16_epi32(qh);   /* qh[8n + m]: that dword of every lane */
        UNROLL
        for (int half = 0; half < 2; half++) {   /* ql bytes 64 half .. + 63 */
            __m512i r[16];
            UNROLL
            for (int p = 0; p < 16; p++) r[p] = _mm512_loadu_si512((const void *)(b[p]->ql + 64 * half));
            transpose_16x16_epi32(r);
            /* r[d]: ql bytes 64 half + 4d ..: with jl = d / 8, m = d % 8, the low nibbles of elements
             * 128 half + 32 jl + 4m .., the high nibbles of 128 half + 32 (jl + 2) + 4m .. */
            UNROLL
            for (int d = 0; d < 16; d++) {
                const int jl = d / 8, m = d % 8;
                const __m512i h = qh[8 * half + m];
                UNROLL
                for (int hi = 0; hi < 2; hi++) {
                    const int j = jl + 2 * hi;   /* high bits 2j, 2j + 1 to bits 4, 5 */
                    const __m512i top = j == 0 ? _mm512_slli_epi16(h, 4) : j == 1 ? _mm512_slli_epi16(h, 2)
                                      : j == 2 ? h : _mm512_srli_epi16(h, 2);
                    const __m512i lo = hi ? _mm512_and_si512(_mm512_srli_epi16(r[d], 4), low4) : _mm512_and_si512(r[d], low4);
                    _mm512_store_si512((void *)u->codes[32 * half + 8 * j + m],
                                       _mm512_or_si512(lo, _mm512_and_si512(top, bits45)));
                }
            }
        }
        __m512i sc4[4];   /* row 4q + L's 16 scales in 128-bit lane L of sc4[q] */
        UNROLL
        for (int q = 0; q < 4; q++) {
            const uint8_t *s[4] = { (const uint8_t *)b[q]->scales, (const uint8_t *)b[4 + q]->scales,
                                    (const uint8_t *)b[8 + q]->scales, (const uint8_t *)b[12 + q]->scales };
            sc4[q] = lanes_load4x16(s);
        }
        UNROLL
        for (int g = 0; g < 16; g++)   /* the signed scale in the top byte, shifted down */
            _mm512_store_si512((void *)u->sc[g], _mm512_srai_epi32(lanes_spread(sc4, -1, -1, -1, g), 24));
        UNROLL
        for (int h = 0; h < 8; h++)
            _mm512_store_si512((void *)u->sc2[h], _mm512_srai_epi16(lanes_spread(sc4, -1, 2 * h, -1, 2 * h + 1), 8));
        uint16_t dd[16];
        UNROLL
        for (int p = 0; p < 16; p++) dd[p] = (uint16_t)(b[p]->d[0] | b[p]->d[1] << 8);
        _mm512_store_ps(u->d, _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *)dd)));
    }
}

/* 16 rows (lanes) x NC positions: the scaled group sums, the offset 32 through the scales against
 * the bsums pairs, then the portable kernel's float operations lane by lane. */
static ALWAYS_INLINE TARGET_AVX512 void q6_k_lanes_body(const uint8_t *ub, const uint8_t *a, size_t as, int64_t k,
                                                        float *y, long ys, const int NC) {
    __m512 sum[4];
    UNROLL
    for (int c = 0; c < NC; c++) sum[c] = _mm512_setzero_ps();
    for (int64_t i = 0; i < k / QK_K; i++) {
        const q6_k_lanes *u = (const q6_k_lanes *)ub + i;
        const block_q8_K *ab[4];
        __m512i isum[4], corr[4];
        UNROLL
        for (int c = 0; c < NC; c++) {
            ab[c] = (const block_q8_K *)(a + c * as) + i;
            isum[c] = corr[c] = _mm512_setzero_si512();
        }
        lanes_scaled_group_sums(u->codes, u->sc, 16, 4, ab, NC, isum);
        lanes_bsum_pairs(u->sc2, ab, NC, corr);
        const __m512 d = _mm512_load_ps(u->d);
        UNROLL
        for (int c = 0; c < NC; c++) sum[c] = q6_k_term_16(sum[c], ab[c], d, isum[c], corr[c]);
    }
    UNROLL
    for (int c = 0; c < NC; c++) lanes_store_rows(y + c * ys, sum[c]);
}

LANES_FROM_BODY(q6_k_lanes_tile_avx512, q6_k_lanes_body, 4)

/* Rows in lanes kept (type_kernels.lanes_pack): super-block i of 16 rows as one q6_k_packed, lane
 * p of every vector row p, in the 16 rows' own bytes (so 32-byte aligned at best: unaligned loads).
 * The codes are put together from ql and qh in registers, once per super-block and 4 positions. */
typedef struct {
    uint8_t ql[32][64];   /* v = 16 half + j: lane p's ql bytes 64 half + 4j .. + 3 */
    uint8_t qh[16][64];   /* v = 8 half + m: lane p's qh bytes 32 half + 4m .. + 3 */
    int8_t sc[16][16];    /* group g, lane p */
    uint16_t d[16];       /* f16 */
} q6_k_packed;
_Static_assert(sizeof(q6_k_packed) == 16 * sizeof(block_q6_K), "the 16 rows' own bytes");

static TARGET_AVX512 void q6_k_lanes_pack(const uint8_t *w, size_t ws, int64_t k, uint8_t *out) {
    for (int64_t i = 0; i < k / QK_K; i++) {
        q6_k_packed u;
        UNROLL
        for (int part = 0; part < 3; part++) {   /* ql's halves, then qh: a 16 x 16 dword transpose each */
            __m512i r[16];
            UNROLL
            for (int p = 0; p < 16; p++) {
                const block_q6_K *b = (const block_q6_K *)(w + p * ws) + i;
                r[p] = _mm512_loadu_si512((const void *)(part < 2 ? b->ql + 64 * part : b->qh));
            }
            transpose_16x16_epi32(r);
            UNROLL
            for (int j = 0; j < 16; j++) _mm512_storeu_si512((void *)(part < 2 ? u.ql[16 * part + j] : u.qh[j]), r[j]);
        }
        for (int p = 0; p < 16; p++) {
            const block_q6_K *b = (const block_q6_K *)(w + p * ws) + i;
            for (int g = 0; g < 16; g++) u.sc[g][p] = b->scales[g];
            u.d[p] = load_u16(b->d);
        }
        memcpy(out + (size_t)i * sizeof u, &u, sizeof u);
    }
}

static void q6_k_lanes_row(const uint8_t *ub, size_t ws, int64_t k, int p, uint8_t *row) {
    for (int64_t i = 0; i < k / QK_K; i++) {
        const q6_k_packed *u = (const q6_k_packed *)ub + i;
        block_q6_K *b = (block_q6_K *)row + i;
        for (int v = 0; v < 32; v++) memcpy(b->ql + 4 * v, &u->ql[v][4 * p], 4);
        for (int v = 0; v < 16; v++) memcpy(b->qh + 4 * v, &u->qh[v][4 * p], 4);
        for (int g = 0; g < 16; g++) b->scales[g] = u->sc[g][p];
        b->d[0] = (uint8_t)u->d[p]; b->d[1] = (uint8_t)(u->d[p] >> 8);
    }
}

/* corr[c] += the scales against position c's bsums (the offset 32, taken back in q6_k_term_16):
 * groups 2h, 2h + 1's scales as int16 pairs against bsums 2h, 2h + 1 */
static ALWAYS_INLINE TARGET_AVX512 void q6_k_packed_corr(const q6_k_packed *u, const block_q8_K *const *ab, const int NC, __m512i *corr) {
    const __m512i low16 = _mm512_set1_epi32(0xffff);
    UNROLL
    for (int h = 0; h < 8; h++) {
        const __m512i s0 = _mm512_cvtepi8_epi32(_mm_loadu_si128((const __m128i *)u->sc[2 * h]));
        const __m512i s1 = _mm512_cvtepi8_epi32(_mm_loadu_si128((const __m128i *)u->sc[2 * h + 1]));
        const __m512i pair = _mm512_or_si512(_mm512_and_si512(s0, low16), _mm512_slli_epi32(s1, 16));
        UNROLL_16
        for (int c = 0; c < NC; c++)
            corr[c] = _mm512_dpwssd_epi32(corr[c], pair, _mm512_set1_epi32((int)load_u32(ab[c]->bsums + 4 * h)));
    }
}
/* 16 packed rows x NC positions: for each ql dword j of a half (jl = j / 8, m = j % 8) its low
 * nibbles with bits 2jl of qh dword m are quad 32 half + 8 jl + m, its high nibbles with bits
 * 2 (jl + 2) quad 32 half + 8 (jl + 2) + m (group = quad / 4); the groups' sums times their scales,
 * the offset 32 through the scales against the bsums pairs, then the portable kernel's float
 * operations lane by lane. 1 to 16 positions (LANES_MAX_NC): one group a pass, in a loop over (half,
 * mq, jl) (unrolled, GCC kept many groups' sums alive at once and spilled them: 5 positions 22.5 ->
 * 27.5 GB/s in L2), the running sums in y itself; one position too (as Q4_K's). Group j of a pass:
 * j = jl (low nibbles, bits 2 jl of qh shifted up by 4 - 2 jl) and j = jl + 2 (high nibbles, bits
 * 2 jl + 4 shifted down by 2 jl). */
static ALWAYS_INLINE TARGET_AVX512 void q6_k_packed_body(const uint8_t *ub, const uint8_t *a, size_t as, int64_t k,
                                                         float *y, long ys, const int NC) {
    const __m512i low4 = _mm512_set1_epi8(0x0f), bits45 = _mm512_set1_epi8(0x30);
    UNROLL_16
    for (int c = 0; c < NC; c++) _mm512_storeu_ps(y + c * ys, _mm512_setzero_ps());
    for (int64_t i = 0; i < k / QK_K; i++) {
        const q6_k_packed *u = (const q6_k_packed *)ub + i;
        const block_q8_K *ab[LANES_MAX_NC];
        __m512i isum[LANES_MAX_NC], corr[LANES_MAX_NC];
        k_packed_start(a, as, i, NC, ab, isum, corr);
        NO_UNROLL
        for (size_t pass = 0; pass < 8; pass++) {
            /* per pass one pointer each to the codes, the high bits, the scales and (at) the
             * activations' bytes, so the addresses inside are constant offsets (computed from the
             * pass variables at each use, they took more instructions than the products) */
            const size_t half = pass >> 2, mq = (pass >> 1) & 1, jl = pass & 1;
            const uint8_t (*ql)[64] = u->ql + 16 * half + 8 * jl + 4 * mq, (*qh)[64] = u->qh + 8 * half + 4 * mq;
            const int8_t (*scales)[16] = u->sc + 8 * half + 2 * jl + mq;   /* + 4: the high nibbles' group */
            const size_t at = 128 * half + 32 * jl + 16 * mq;             /* + 64: the high nibbles' quads */
            const __m128i up = _mm_cvtsi32_si128((int)(4 - 2 * jl)), down = _mm_cvtsi32_si128((int)(2 * jl));
            UNROLL
            for (int hi = 0; hi < 2; hi++) {
                __m512i acc[LANES_MAX_NC];
                UNROLL_16
                for (int c = 0; c < NC; c++) acc[c] = _mm512_setzero_si512();
                UNROLL
                for (int mm = 0; mm < 4; mm++) {
                    k_packed_prefetch_step(u, sizeof *u, k, 8 * pass + 4 * (size_t)hi + (size_t)mm, 64);
                    const __m512i r = _mm512_loadu_si512((const void *)ql[mm]);
                    const __m512i h = _mm512_loadu_si512((const void *)qh[mm]);
                    const __m512i top = hi ? _mm512_srl_epi16(h, down) : _mm512_sll_epi16(h, up);
                    const __m512i lo = hi ? _mm512_and_si512(_mm512_srli_epi16(r, 4), low4) : _mm512_and_si512(r, low4);
                    const __m512i code = _mm512_ternarylogic_epi32(lo, top, bits45, 0xf8);   /* lo | (top & bits45) */
                    UNROLL_16
                    for (int c = 0; c < NC; c++)
                        acc[c] = _mm512_dpbusd_epi32(acc[c], code, _mm512_set1_epi32((int)load_u32((const uint8_t *)ab[c]->qs + at + 64 * hi + 4 * mm)));
                }
                const __m512i sc = _mm512_cvtepi8_epi32(_mm_loadu_si128((const __m128i *)scales[4 * hi]));
                UNROLL_16
                for (int c = 0; c < NC; c++) isum[c] = _mm512_add_epi32(isum[c], _mm512_mullo_epi32(acc[c], sc));
            }
        }
        q6_k_packed_corr(u, ab, NC, corr);
        const __m512 d = _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *)u->d));
        UNROLL_16
        for (int c = 0; c < NC; c++) _mm512_storeu_ps(y + c * ys, q6_k_term_16(_mm512_loadu_ps(y + c * ys), ab[c], d, isum[c], corr[c]));
    }
}
LANES_FROM_BODY_16(q6_k_packed_avx512, q6_k_packed_body)

DOT_FROM_BODY(TARGET_AVX512, q6_k_dot_avx512, q6_k_avx512_body)
TILE_FROM_BODY(TARGET_AVX512, q6_k_rows4_avx512, q6_k_avx512_body, 4, 1)
TILE_FROM_BODY(TARGET_AVX512, q6_k_tile_avx512, q6_k_avx512_body, 4, 4)
const type_kernels q6_k_kernels_avx512 = {
    .act_type = TS_Q8_K, .dot = q6_k_dot_avx512, .rows4 = q6_k_rows4_avx512,
    .tile = q6_k_tile_avx512, .tile_rows = 4, .tile_cols = 4,
    .lanes_unpack = q6_k_lanes_unpack_avx512, .lanes_tile = q6_k_lanes_tile_avx512,
    .lanes_sb_bytes = sizeof(q6_k_lanes), .lanes_min_cols = 5,
    .lanes_pack = q6_k_lanes_pack, .lanes_packed = q6_k_packed_avx512, .lanes_packed_widest = LANES_MAX_NC, .lanes_row = q6_k_lanes_row };
#endif

#if defined(__aarch64__)
/* NEON SDOT, NR rows x NC activations per super-block: each group of 16 6-bit codes assembled
 * from ql and qh, its SDOT sum scaled in int32 lanes; the offset 32 through the activation's
 * bsums; then the portable kernel's float operations, so the same bits. */
static ALWAYS_INLINE TARGET_DOTPROD void q6_k_dotprod_body(const uint8_t *w, size_t ws, const uint8_t *a, size_t as,
                                                           int64_t k, float *y, long ys, const int NR, const int NC) {
    float sum[4][4] = { { 0.0f } };
    const uint8x16_t low4 = vdupq_n_u8(0x0f), low2 = vdupq_n_u8(0x03);
    for (int64_t i = 0; i < k / QK_K; i++) {
        const block_q8_K *ab[4];
        float da[4];
        int16x8_t bsum_lo[4], bsum_hi[4];
        UNROLL
        for (int c = 0; c < NC; c++) {
            ab[c] = (const block_q8_K *)(a + c * as) + i;
            da[c] = f32_from_bits(load_u32(ab[c]->d));
            bsum_lo[c] = vreinterpretq_s16_u8(vld1q_u8(ab[c]->bsums));
            bsum_hi[c] = vreinterpretq_s16_u8(vld1q_u8(ab[c]->bsums + 16));
        }
        NO_UNROLL   /* as k4_tile_dotprod (q4_k_simd.h): unrolled, the 4 x 1 kernel spilled */
        for (int r = 0; r < NR; r++) {
            const block_q6_K *wb = (const block_q6_K *)(w + r * ws) + i;
            const int8x16_t scales = vld1q_s8(wb->scales);
            const int16x8_t sc_lo = vmovl_s8(vget_low_s8(scales)), sc_hi = vmovl_s8(vget_high_s8(scales));
            int32x4_t isum[4];
            UNROLL
            for (int c = 0; c < NC; c++) isum[c] = vdupq_n_s32(0);
            for (int n = 0; n < 2; n++) {
                uint8x16_t ql[4], qh[2];
                UNROLL
                for (int t = 0; t < 4; t++) ql[t] = vld1q_u8(wb->ql + 64 * n + 16 * t);
                qh[0] = vld1q_u8(wb->qh + 32 * n);
                qh[1] = vld1q_u8(wb->qh + 32 * n + 16);
                UNROLL
                for (int j = 0; j < 4; j++)
                    UNROLL
                    for (int half = 0; half < 2; half++) {   /* codes 128n + 32j + 16 half .. + 15: group 8n + 2j + half */
                        const uint8x16_t l = ql[2 * (j & 1) + half];
                        const uint8x16_t low = j < 2 ? vandq_u8(l, low4) : vshrq_n_u8(l, 4);
                        const uint8x16_t high = vandq_u8(vshlq_u8(qh[half], vdupq_n_s8((int8_t)(-2 * j))), low2);
                        const int8x16_t code = vreinterpretq_s8_u8(vorrq_u8(low, vshlq_n_u8(high, 4)));
                        const int g = 8 * n + 2 * j + half;
                        UNROLL
                        for (int c = 0; c < NC; c++) {
                            int32x4_t p = vdotq_s32(vdupq_n_s32(0), code, vld1q_s8(ab[c]->qs + 16 * g));
                            isum[c] = vmlaq_n_s32(isum[c], p, wb->scales[g]);
                        }
                    }
            }
            const float d = load_f16(wb->d);
            UNROLL
            for (int c = 0; c < NC; c++) {
                int32x4_t corr = vmull_s16(vget_low_s16(sc_lo), vget_low_s16(bsum_lo[c]));
                corr = vmlal_s16(corr, vget_high_s16(sc_lo), vget_high_s16(bsum_lo[c]));
                corr = vmlal_s16(corr, vget_low_s16(sc_hi), vget_low_s16(bsum_hi[c]));
                corr = vmlal_s16(corr, vget_high_s16(sc_hi), vget_high_s16(bsum_hi[c]));
                const int32_t is = vaddvq_s32(isum[c]), cs = vaddvq_s32(corr);
                sum[r][c] += da[c] * d * (float)(is - 32 * cs);
            }
        }
    }
    store_tile_sums(sum, y, ys, NR, NC);
}

DOT_FROM_BODY(TARGET_DOTPROD, q6_k_dot_dotprod, q6_k_dotprod_body)
TILE_FROM_BODY(TARGET_DOTPROD, q6_k_rows4_dotprod, q6_k_dotprod_body, 4, 1)
TILE_FROM_BODY(TARGET_DOTPROD, q6_k_tile_dotprod, q6_k_dotprod_body, 4, 4)
const type_kernels q6_k_kernels_neon_dotprod = {
    .act_type = TS_Q8_K, .dot = q6_k_dot_dotprod, .rows4 = q6_k_rows4_dotprod,
    .tile = q6_k_tile_dotprod, .tile_rows = 4, .tile_cols = 4 };
#endif
