/* Ternary rows in lanes kept in a form of their own (type_kernels.lanes_packed_sb_bytes): IQ1_S and
 * IQ1_M (iq1_dot.c), TQ1_0 (tq1_0_dot.c). Private to src/kernels/.
 * An IQ1 grid entry costs a load and an index put together from two fields (most of the row kernel's
 * time), a TQ1_0 weight a division of its base-3 byte; at load, the copy writes each weight's value
 * instead, as t + 1 in 2 bits (t = -1, 0, +1), with its group's scale and delta sign as a 4-bit tag,
 * 16 rows in lanes as the Q4_K rows are. The integer sums stay the row kernels': with u = t + 1, a
 * group h of weights (32 in IQ1_S and TQ1_0, 8 in IQ1_M) with scale sc and delta sign s gives
 *   IQ1:   sc sum_h (8 t + s) a = 8 sc . sum_h u a  +  sc (s - 8) . sum_h a
 *   TQ1_0:    sum_h t a         =      sum_h u a  -              sum_h a,
 * one dpwssd of the int16 pair (sum u a, sum a) with the tag's pair (8 sc, sc (s - 8)), or (1, -1).
 * The rows take 70 (IQ1_S), 82 (IQ1_M) and 98 (TQ1_0) bytes a super-block instead of 50, 56 and 54:
 * the kernel is then bound by memory, not by the unpacking. */
#ifndef TS_KERNELS_TERNARY_LANES_H
#define TS_KERNELS_TERNARY_LANES_H
#include "kernels/kernels_internal.h"
#include "kernels/lanes_simd.h"
#include "kernels/f16.h"
#include <string.h>

#if defined(TS_X86)
#define TERNARY_LANES_BYTES(groups) (16 * 64 + 64 * ((groups) / 8 > 0 ? (groups) / 8 : 1) + 32)
/* groups of a super-block, and whether its weights are 8 t + s (IQ1) or t (TQ1_0) */
enum { IQ1_S_GROUPS = 8, IQ1_M_GROUPS = 32, TQ1_0_GROUPS = 8 };

/* 16 rows (ws bytes apart) from their portable unpacking (block_unpacked: IQ1, q = 8 t + s with t the
 * grid's -1 / 0 / +1 and s the delta's sign, sc = 2 field + 1 per 16, d = the f16 d / 8; TQ1_0, q = t,
 * sc = 1, d = the f16 d), as: the 2-bit
 * values at byte 64 c + 4 p + j bits 2 m (weight 16 c + 4 m + j of row p), the tags at byte
 * 1024 + 64 (h / 8) + 4 p bits 4 (h % 8) (the scale field in bits 0..2, the minus sign in bit 3),
 * the rows' f16 d at the end. */
static inline void ternary_lanes_pack(unpack_block_fn unpack, size_t block_bytes, int groups, bool iq1, const uint8_t *w,
                                      size_t ws, int64_t k, uint8_t *out) {
    const size_t sb = TERNARY_LANES_BYTES(groups);
    memset(out, 0, (size_t)(k / QK_K) * sb);
    for (int64_t i = 0; i < k / QK_K; i++)
        for (int p = 0; p < 16; p++) {
            uint8_t *o = out + (size_t)i * sb;
            block_unpacked u;
            unpack(w + p * ws + (size_t)i * block_bytes, &u);
            for (int e = 0; e < QK_K; e++) {
                const int q = u.q[e], t = iq1 ? (q + (q > 0 ? 4 : -4)) / 8 : q;   /* IQ1: -9, -7 -> -1; -1, 1 -> 0; 7, 9 -> 1 */
                o[64 * (e / 16) + 4 * p + e % 4] |= (uint8_t)((t + 1) << (2 * (e % 16 / 4)));
                if (iq1 && e % (QK_K / groups) == 0) {
                    const int h = e / (QK_K / groups), neg = q - 8 * t < 0;
                    uint32_t *tag = (uint32_t *)(o + 1024 + 64 * (h / 8)) + p;
                    *tag |= (uint32_t)((u.sc[e / 16] - 1) / 2 | neg << 3) << (4 * (h % 8));
                }
            }
            const uint16_t d16 = f16_from_f32(iq1 ? u.d * 8.0f : u.d);   /* exact: u.d is an f16 (/ 8) */
            memcpy(o + sb - 32 + 2 * p, &d16, 2);
        }
}
/* 16 packed rows x NC positions, GROUPS groups of weights: per group, its 2-bit values against the
 * activations (dpbusd per 4), the sum's low half joined to the group's activation sum (held << 16),
 * and one dpwssd with the tag's pair; then the portable kernel's float operations lane by lane. */
static ALWAYS_INLINE TARGET_AVX512 void ternary_packed_body(const uint8_t *ub, const uint8_t *a, size_t as, int64_t k,
                                                            float *y, long ys, const int NC, const int GROUPS, const bool IQ1) {
    const int per_group = QK_K / GROUPS / 4;   /* quads of weights */
    const size_t sb = TERNARY_LANES_BYTES(GROUPS);
    int32_t pair_lut[16];
    for (int t = 0; t < 16; t++) {
        const int sc = 2 * (t & 7) + 1, s = t & 8 ? -1 : 1;
        pair_lut[t] = IQ1 ? (int32_t)((uint32_t)(uint16_t)(8 * sc) | (uint32_t)(uint16_t)(sc * (s - 8)) << 16)
                          : (int32_t)(1u | (uint32_t)(uint16_t)-1 << 16);
    }
    const __m512i lut = _mm512_loadu_si512((const void *)pair_lut), three = _mm512_set1_epi8(3);
    __m512 sum[8];
    UNROLL
    for (int c = 0; c < NC; c++) sum[c] = _mm512_setzero_ps();
    for (int64_t i = 0; i < k / QK_K; i++) {
        const uint8_t *u = ub + (size_t)i * sb;
        /* the same super-block of the next 16 rows into L2 (the rows are one stream: q4_k_packed_body) */
        for (size_t l = 0; l < sb; l += 64) _mm_prefetch((const char *)(u + (size_t)(k / QK_K) * sb) + l, _MM_HINT_T1);
        const block_q8_K *ab[8];
        __m512i isum[8];
        int32_t gsum[8][32] __attribute__((aligned(64)));   /* position c's activation sum of group h, << 16 */
        UNROLL
        for (int c = 0; c < NC; c++) {
            ab[c] = (const block_q8_K *)(a + c * as) + i;
            isum[c] = _mm512_setzero_si512();
            if (GROUPS == 8) {   /* pairs of the 16-code block sums */
                const __m256i bs = _mm256_loadu_si256((const __m256i *)ab[c]->bsums);
                _mm256_store_si256((__m256i *)gsum[c], _mm256_slli_epi32(_mm256_madd_epi16(bs, _mm256_set1_epi16(1)), 16));
            } else {             /* sums of 8 from sums of absolute differences with -128 */
                UNROLL
                for (int q = 0; q < 4; q++) {
                    const __m512i v = _mm512_xor_si512(_mm512_loadu_si512((const void *)(ab[c]->qs + 64 * q)), _mm512_set1_epi8((char)0x80));
                    const __m512i s8 = _mm512_sub_epi64(_mm512_sad_epu8(v, _mm512_setzero_si512()), _mm512_set1_epi64(1024));
                    _mm256_store_si256((__m256i *)(gsum[c] + 8 * q), _mm256_slli_epi32(_mm512_cvtepi64_epi32(s8), 16));
                }
            }
        }
        __m512i tags[4];
        UNROLL
        for (int t = 0; t < (GROUPS + 7) / 8; t++) tags[t] = _mm512_loadu_si512((const void *)(u + 1024 + 64 * t));
        UNROLL
        for (int h = 0; h < GROUPS; h++) {
            const __m512i pair = _mm512_permutexvar_epi32(_mm512_srli_epi32(tags[h / 8], 4 * (h % 8)), lut);
            __m512i acc[8];
            UNROLL
            for (int c = 0; c < NC; c++) acc[c] = _mm512_setzero_si512();
            UNROLL
            for (int q = 0; q < per_group; q++) {
                const int t = per_group * h + q, m = t % 4;
                const __m512i x = _mm512_loadu_si512((const void *)(u + 64 * (t / 4)));
                const __m512i v = _mm512_and_si512(m ? _mm512_srli_epi16(x, 2 * m) : x, three);
                UNROLL
                for (int c = 0; c < NC; c++)
                    acc[c] = _mm512_dpbusd_epi32(acc[c], v, _mm512_set1_epi32((int)load_u32((const uint8_t *)ab[c]->qs + 4 * t)));
            }
            UNROLL
            for (int c = 0; c < NC; c++) isum[c] = lanes_group_pair(isum[c], acc[c], gsum[c][h], pair);
        }
        const __m512 d16 = _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *)(u + sb - 32)));
        const __m512 d = IQ1 ? _mm512_mul_ps(d16, _mm512_set1_ps(0.125f)) : d16;
        UNROLL
        for (int c = 0; c < NC; c++) sum[c] = lanes_d_term(sum[c], d, ab[c], isum[c]);
    }
    UNROLL
    for (int c = 0; c < NC; c++) _mm512_storeu_ps(y + c * ys, sum[c]);
}
#endif
#endif
