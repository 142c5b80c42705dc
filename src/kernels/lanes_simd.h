/* Rows in lanes (type_kernels.lanes_*), the AVX-512 helpers the types' files share: 16 weight
 * rows rearranged once per chunk so that lane p of a 512-bit register holds row lane_row(p), and an
 * integer dot product serves 16 rows at once. Private to src/kernels/. */
#ifndef TS_KERNELS_LANES_SIMD_H
#define TS_KERNELS_LANES_SIMD_H
#include "kernels/kernels_internal.h"
#include "kernels/simd.h"

#if defined(TS_X86)
/* The row in lane p: 4 (p % 4) + p / 4, its own inverse. In this order four rows' bytes, one row
 * per 128-bit lane, spread into the dwords of all 16 with byte shuffles alone. */
static inline int lane_row(int p) { return 4 * (p % 4) + p / 4; }

/* r[0..15]: 16 dwords each, transposed in place (r[j] dword i = r[i] dword j before) */
static ALWAYS_INLINE TARGET_AVX512 void transpose_16x16_epi32(__m512i r[16]) {
    __m512i t[16], u[16];
    UNROLL
    for (int i = 0; i < 8; i++) {
        t[2 * i] = _mm512_unpacklo_epi32(r[2 * i], r[2 * i + 1]);
        t[2 * i + 1] = _mm512_unpackhi_epi32(r[2 * i], r[2 * i + 1]);
    }
    UNROLL
    for (int i = 0; i < 4; i++) {   /* u[4i + c], 128-bit lane L: dword 4L + c of rows 4i .. 4i + 3 */
        u[4 * i + 0] = _mm512_unpacklo_epi64(t[4 * i], t[4 * i + 2]);
        u[4 * i + 1] = _mm512_unpackhi_epi64(t[4 * i], t[4 * i + 2]);
        u[4 * i + 2] = _mm512_unpacklo_epi64(t[4 * i + 1], t[4 * i + 3]);
        u[4 * i + 3] = _mm512_unpackhi_epi64(t[4 * i + 1], t[4 * i + 3]);
    }
    UNROLL
    for (int c = 0; c < 4; c++) {   /* lane i of r[4L + c] = lane L of u[4i + c] */
        const __m512i v0 = _mm512_shuffle_i32x4(u[c], u[4 + c], 0x44), v1 = _mm512_shuffle_i32x4(u[c], u[4 + c], 0xee);
        const __m512i v2 = _mm512_shuffle_i32x4(u[8 + c], u[12 + c], 0x44), v3 = _mm512_shuffle_i32x4(u[8 + c], u[12 + c], 0xee);
        r[c] = _mm512_shuffle_i32x4(v0, v2, 0x88);
        r[4 + c] = _mm512_shuffle_i32x4(v0, v2, 0xdd);
        r[8 + c] = _mm512_shuffle_i32x4(v1, v3, 0x88);
        r[12 + c] = _mm512_shuffle_i32x4(v1, v3, 0xdd);
    }
}

/* Dwords for all 16 lanes from four[q], whose 128-bit lane L holds 16 bytes of row 4q + L (the row
 * of lane 4L + q): byte j of each dword is byte fj of its row's 16 (fj < 0: zero). The shuffle
 * indices are formed in registers from constants (a vector loaded from bytes just stored one by
 * one would wait for the stores). */
static ALWAYS_INLINE TARGET_AVX512 __m512i lanes_spread(const __m512i four[4], int f0, int f1, int f2, int f3) {
    const unsigned pick = (unsigned)(f0 < 0 ? 0x80 : f0) | (unsigned)(f1 < 0 ? 0x80 : f1) << 8 |
                          (unsigned)(f2 < 0 ? 0x80 : f2) << 16 | (unsigned)(f3 < 0 ? 0x80 : f3) << 24;
    __m512i v = _mm512_setzero_si512();
    UNROLL
    for (int q = 0; q < 4; q++) {
        const __m512i idx = _mm512_mask_set1_epi32(_mm512_set1_epi32((int)0x80808080u), (__mmask16)(0x1111 << q), (int)pick);
        v = _mm512_or_si512(v, _mm512_shuffle_epi8(four[q], idx));
    }
    return v;
}

/* Four rows' 16 bytes at p[0..3] in the 128-bit lanes of one register (for lanes_spread) */
static ALWAYS_INLINE TARGET_AVX512 __m512i lanes_load4x16(const uint8_t *const p[4]) {
    __m512i v = _mm512_castsi128_si512(_mm_loadu_si128((const __m128i *)p[0]));
    v = _mm512_inserti32x4(v, _mm_loadu_si128((const __m128i *)p[1]), 1);
    v = _mm512_inserti32x4(v, _mm_loadu_si128((const __m128i *)p[2]), 2);
    return _mm512_inserti32x4(v, _mm_loadu_si128((const __m128i *)p[3]), 3);
}

/* isum[c] (16 lanes) += sum over the groups g < n_groups of sc[g] * (the codes of group g . those
 * of position c's activations), a group being `quads` quads of 4 codes, quad t at codes[t] (lane p:
 * 4 bytes at 4p) against activation bytes 4t .. 4t + 3: one dpbusd per quad against the 4 bytes
 * broadcast, two groups at once (twice the independent sums in flight), each group's sums times
 * its scales. Exact integers. */
static ALWAYS_INLINE TARGET_AVX512 void lanes_scaled_group_sums(const uint8_t (*codes)[64], const int32_t (*sc)[16],
                                                                const int n_groups, const int quads,
                                                                const block_q8_K *const ab[4], const int NC, __m512i isum[4]) {
    for (int g = 0; g < n_groups; g += 2) {
        __m512i acc[2][4];
        UNROLL
        for (int c = 0; c < NC; c++) acc[0][c] = acc[1][c] = _mm512_setzero_si512();
        UNROLL
        for (int q = 0; q < quads; q++)
            UNROLL
            for (int h = 0; h < 2; h++) {
                const int t = quads * (g + h) + q;
                const __m512i wq = _mm512_load_si512((const void *)codes[t]);
                UNROLL
                for (int c = 0; c < NC; c++)
                    acc[h][c] = _mm512_dpbusd_epi32(acc[h][c], wq, _mm512_set1_epi32((int)load_u32((const uint8_t *)ab[c]->qs + 4 * t)));
            }
        UNROLL
        for (int h = 0; h < 2; h++) {
            const __m512i s = _mm512_load_si512((const void *)sc[g + h]);
            UNROLL
            for (int c = 0; c < NC; c++) isum[c] = _mm512_add_epi32(isum[c], _mm512_mullo_epi32(acc[h][c], s));
        }
    }
}

/* out[c] (16 lanes) += sum over the 8 pairs h of the lanes' int16 pair[h] . position c's bsums
 * 2h, 2h + 1 (the mins or scales against the activation's sums of 16 codes). Exact integers. */
static ALWAYS_INLINE TARGET_AVX512 void lanes_bsum_pairs(const int32_t (*pair)[16], const block_q8_K *const ab[4],
                                                         const int NC, __m512i out[4]) {
    UNROLL
    for (int h = 0; h < 8; h++) {
        const __m512i p = _mm512_load_si512((const void *)pair[h]);
        UNROLL
        for (int c = 0; c < NC; c++)
            out[c] = _mm512_dpwssd_epi32(out[c], p, _mm512_set1_epi32((int)load_u32(ab[c]->bsums + 4 * h)));
    }
}

/* isum + (the low int16 half of acc, a group's code sums; gsum_hi, its activation sum << 16) . pair,
 * the lanes' two int16 factors of that group (rows in lanes of a form of their own: IQ1, IQ3_S).
 * Exact while the sums fit 16 bits. imm 0xec = (A & C) | B. */
static ALWAYS_INLINE TARGET_AVX512 __m512i lanes_group_pair(__m512i isum, __m512i acc, int32_t gsum_hi, __m512i pair) {
    const __m512i joined = _mm512_ternarylogic_epi32(acc, _mm512_set1_epi32(gsum_hi), _mm512_set1_epi32(0xffff), 0xec);
    return _mm512_dpwssd_epi32(isum, joined, pair);
}

/* Rows in lanes of a form of their own whose groups of 16 codes u = q + offset multiply as unsigned
 * bytes (IQ2, IQ3), at super-block i of NC positions' activations (as bytes apart): each position's
 * activation block ab[c], its sum isum[c] zeroed, and its block sums times offset (out[c][g], 16
 * groups), to take back. */
static ALWAYS_INLINE TARGET_AVX512 void lanes_offset_start(const uint8_t *a, size_t as, int64_t i, const int NC, int offset,
                                                          const block_q8_K *ab[8], __m512i isum[8], int32_t (*out)[16]) {
    UNROLL
    for (int c = 0; c < NC; c++) {
        ab[c] = (const block_q8_K *)(a + c * as) + i;
        isum[c] = _mm512_setzero_si512();
        _mm512_store_si512((void *)out[c], _mm512_mullo_epi32(_mm512_cvtepi16_epi32(_mm256_loadu_si256((const __m256i *)ab[c]->bsums)),
                                                              _mm512_set1_epi32(offset)));
    }
}
/* isum + (acc - the group's offset sum) * sc: a group's sum of q a, times its scale (exact integers) */
static ALWAYS_INLINE TARGET_AVX512 __m512i lanes_scaled_group(__m512i isum, __m512i acc, int32_t offset_sum, __m512i sc) {
    return _mm512_add_epi32(isum, _mm512_mullo_epi32(_mm512_sub_epi32(acc, _mm512_set1_epi32(offset_sum)), sc));
}
/* sum + (d * the activation block's d) * isum: the portable kernels' float operations per super-block,
 * lane by lane */
static ALWAYS_INLINE TARGET_AVX512 __m512 lanes_d_term(__m512 sum, __m512 d, const block_q8_K *ab, __m512i isum) {
    return _mm512_add_ps(sum, _mm512_mul_ps(_mm512_mul_ps(d, _mm512_set1_ps(f32_from_bits(load_u32(ab->d)))), _mm512_cvtepi32_ps(isum)));
}

/* The body of rows in lanes of a form of their own whose groups of 16 codes u = q + OFFSET multiply
 * as unsigned bytes (IQ2, IQ3, Q3_K), 16 groups and a float d per lane in each super-block of type
 * LANES (a struct with a member d[16]): per group, SCALE(u, g) its scales in the 16 lanes and
 * CODES(u, g, q) the 64 bytes of codes q of its 4 in the 16 lanes (u: the super-block), one dpbusd
 * per 4 codes and position, the sum less OFFSET times the activations' block sum, times the scale;
 * then the portable kernels' float operations lane by lane (lanes_d_term). A macro, so the codes and
 * scales are the types' own expressions, compiled into each body with its constants. */
#define LANES_OFFSET_BODY(LANES, ub, a, as, k, y, ys, NC, OFFSET, SCALE, CODES)                                   \
    do {                                                                                                        \
        __m512 sum_[8];                                                                                         \
        UNROLL                                                                                                  \
        for (int c = 0; c < (NC); c++) sum_[c] = _mm512_setzero_ps();                                          \
        for (int64_t i = 0; i < (k) / QK_K; i++) {                                                              \
            const LANES *u = (const LANES *)(ub) + i;                                                           \
            const block_q8_K *ab[8];                                                                            \
            __m512i isum[8];                                                                                    \
            int32_t offset_sums[8][16] __attribute__((aligned(64)));                                            \
            lanes_offset_start(a, as, i, NC, OFFSET, ab, isum, offset_sums);                                    \
            UNROLL                                                                                              \
            for (int g = 0; g < 16; g++) {                                                                      \
                const __m512i sc = SCALE(u, g);                                                                 \
                __m512i acc[8];                                                                                 \
                UNROLL                                                                                          \
                for (int c = 0; c < (NC); c++) acc[c] = _mm512_setzero_si512();                                 \
                UNROLL                                                                                          \
                for (int q = 0; q < 4; q++) {                                                                   \
                    k_packed_prefetch_step(u, sizeof *u, k, 4 * (size_t)g + (size_t)q, 64);                    \
                    const __m512i v = CODES(u, g, q);                                                           \
                    UNROLL                                                                                      \
                    for (int c = 0; c < (NC); c++)                                                              \
                        acc[c] = _mm512_dpbusd_epi32(acc[c], v, _mm512_set1_epi32((int)load_u32((const uint8_t *)ab[c]->qs + 16 * g + 4 * q))); \
                }                                                                                               \
                UNROLL                                                                                          \
                for (int c = 0; c < (NC); c++) isum[c] = lanes_scaled_group(isum[c], acc[c], offset_sums[c][g], sc); \
            }                                                                                                   \
            const __m512 d = _mm512_loadu_ps(u->d);                                                             \
            UNROLL                                                                                              \
            for (int c = 0; c < (NC); c++) sum_[c] = lanes_d_term(sum_[c], d, ab[c], isum[c]);                  \
        }                                                                                                       \
        UNROLL                                                                                                  \
        for (int c = 0; c < (NC); c++) _mm512_storeu_ps((y) + c * (ys), sum_[c]);                               \
    } while (0)

/* The most positions a rows-in-lanes body takes in one pass (its arrays' size) */
#define LANES_MAX_NC 16

/* type_kernels.lanes_tile (widest 4) or lanes_packed (widest 8: 1 to 8 positions in one pass) from
 * a body taking NC as a constant; above the widest, the widest (the caller gives no more). */
#define LANES_FROM_BODY(name, body, widest) LANES_FROM_BODY_TARGET(TARGET_AVX512, name, body, widest)
#define LANES_CASE(body, n, widest) case n: body(u, a, as, k, y, ys, (widest) < (n) ? (widest) : (n)); break;
/* the same for the kernels of an extension (TARGET_AVX512_VBMI) */
#define LANES_FROM_BODY_TARGET(target, name, body, widest)                                                        \
    static target void name(const uint8_t *u, const uint8_t *a, size_t as, int64_t k, int nc, float *y, long ys) { \
        switch (nc) {                                                                                             \
        LANES_CASE(body, 1, widest) LANES_CASE(body, 2, widest) LANES_CASE(body, 3, widest)                     \
        LANES_CASE(body, 4, widest) LANES_CASE(body, 5, widest) LANES_CASE(body, 6, widest)                     \
        LANES_CASE(body, 7, widest)                                                                               \
        default: body(u, a, as, k, y, ys, widest); break;                                                         \
        }                                                                                                         \
    }
/* The same for a body taking 1 to LANES_MAX_NC positions (type_kernels.lanes_packed_widest): its own
 * macro, so that the bodies of 8 are not compiled again for 9 to 15 (the sanitizer and fuzz builds
 * took minutes a file). */
#define LANES_CASE_ALL(body, n) LANES_CASE(body, n, LANES_MAX_NC)
#define LANES_FROM_BODY_16(name, body)                                                                            \
    static TARGET_AVX512 void name(const uint8_t *u, const uint8_t *a, size_t as, int64_t k, int nc, float *y, long ys) { \
        switch (nc) {                                                                                             \
        LANES_CASE_ALL(body, 1) LANES_CASE_ALL(body, 2) LANES_CASE_ALL(body, 3) LANES_CASE_ALL(body, 4)          \
        LANES_CASE_ALL(body, 5) LANES_CASE_ALL(body, 6) LANES_CASE_ALL(body, 7) LANES_CASE_ALL(body, 8)          \
        LANES_CASE_ALL(body, 9) LANES_CASE_ALL(body, 10) LANES_CASE_ALL(body, 11) LANES_CASE_ALL(body, 12)       \
        LANES_CASE_ALL(body, 13) LANES_CASE_ALL(body, 14) LANES_CASE_ALL(body, 15)                               \
        default: body(u, a, as, k, y, ys, LANES_MAX_NC); break;                                                   \
        }                                                                                                         \
    }

/* The start of super-block i of 16 packed rows of the K types kept in lanes for NC positions: each
 * position's activation block ab[c], its sums (the scaled ones and the mins' or offsets') zeroed.
 * The bodies prefetch the same super-block of the next 16 rows as they go (k_packed_prefetch_step). */
static ALWAYS_INLINE TARGET_AVX512 void k_packed_start(const uint8_t *a, size_t as, int64_t i, const int NC,
                                                       const block_q8_K *ab[LANES_MAX_NC], __m512i isum[LANES_MAX_NC],
                                                       __m512i msum[LANES_MAX_NC]) {
    UNROLL_16
    for (int c = 0; c < NC; c++) {
        ab[c] = (const block_q8_K *)(a + c * as) + i;
        isum[c] = msum[c] = _mm512_setzero_si512();
    }
}
/* The same super-block of the next 16 rows into L2, spread over a body's steps: step s (0 .. steps
 * - 1) takes its share of the lines, between the products. The rows are one stream, and the
 * products of a few positions are too slow for the hardware's prefetch to keep ahead (Q4_K, 8
 * positions, 1 thread, without: 5.3 against 10.5 GB/s in cache). All the lines at the super-block's
 * start made the products wait: a burst fills the core's misses in flight, and the loads of the
 * codes queue behind it (Q4_K, 9 positions, 2 threads, from memory: 12.2 -> 17.2 GB/s, 17-20 in
 * cache; the 1B Q4_K_M's forward over 9 positions 59 -> 49-51 ms, over one 35 -> 33; decode of 1B
 * files: Q2_K 39.6-40.0 -> 44.6-46.3 tok/s, Q3_K_M 35.9-36.4 -> 39.7-40.3, IQ3_S 30.4-31.3 -> 38.1-38.3). */
static ALWAYS_INLINE void k_packed_prefetch_step(const void *u, size_t bytes, int64_t k, size_t step, size_t steps) {
    const size_t lines = (bytes + 63) / 64;
    for (size_t l = step * lines / steps; l < (step + 1) * lines / steps; l++)
        _mm_prefetch((const char *)u + (size_t)(k / QK_K) * bytes + 64 * l, _MM_HINT_T1);
}
/* The 16 lanes of v stored as rows 0..15 at y (y[row] = lane lane_row(row)). */
static ALWAYS_INLINE TARGET_AVX512 void lanes_store_rows(float *y, __m512 v) {
    _mm512_storeu_ps(y, _mm512_permutexvar_ps(_mm512_setr_epi32(0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15), v));
}
#endif
#endif
