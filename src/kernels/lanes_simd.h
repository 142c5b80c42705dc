/* Rows in lanes (type_kernels.lanes_*), the AVX-512 helpers the types' files share: 16 weight
 * rows rearranged once per chunk so that lane p of a 512-bit register holds row lane_row(p), and an
 * integer dot product serves 16 rows at once. Private to src/kernels/. */
#ifndef TS_KERNELS_LANES_SIMD_H
#define TS_KERNELS_LANES_SIMD_H
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

/* The 16 lanes of v stored as rows 0..15 at y (y[row] = lane lane_row(row)). */
static ALWAYS_INLINE TARGET_AVX512 void lanes_store_rows(float *y, __m512 v) {
    _mm512_storeu_ps(y, _mm512_permutexvar_ps(_mm512_setr_epi32(0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15), v));
}
#endif
#endif
