/* The body of the ternary rows in lanes (ternary_lanes.h), included there once per kernel set with
 * TERNARY_BODY (the function's name), TERNARY_TARGET and TERNARY_VBMI (0: each 2-bit field by a shift
 * and a mask; 1: by one vpermb), which it undefines. No include guard: that is its use. Private to
 * src/kernels/. */
/* 16 packed rows x NC positions, GROUPS groups of weights: per group, its 2-bit values against the
 * activations (dpbusd per 4), the sum's low half joined to the group's activation sum (held << 16),
 * and one dpwssd with the tag's pair; then the portable kernel's float operations lane by lane. */
static ALWAYS_INLINE TERNARY_TARGET void TERNARY_BODY(const uint8_t *ub, const uint8_t *a, size_t as, int64_t k, float *y,
                                                      long ys, const int NC, const int GROUPS, const bool IQ1) {
    const int per_group = QK_K / GROUPS / 4;   /* quads of weights */
    const size_t sb = TERNARY_LANES_BYTES(GROUPS);
    int32_t pair_lut[16];
    for (int t = 0; t < 16; t++) {
        const int sc = 2 * (t & 7) + 1, s = t & 8 ? -1 : 1;
        pair_lut[t] = IQ1 ? (int32_t)((uint32_t)(uint16_t)(8 * sc) | (uint32_t)(uint16_t)(sc * (s - 8)) << 16)
                          : (int32_t)(1u | (uint32_t)(uint16_t)-1 << 16);
    }
    const __m512i lut = _mm512_loadu_si512((const void *)pair_lut);
#if TERNARY_VBMI
    uint8_t field[3][64];   /* the 2-bit field at bits 0-1, 2-3 or 4-5 of the index (vpermb reads 0-5) */
    for (int m = 0; m < 3; m++)
        for (int i = 0; i < 64; i++) field[m][i] = (uint8_t)((i >> 2 * m) & 3);
    const __m512i fields[3] = { _mm512_loadu_si512((const void *)field[0]), _mm512_loadu_si512((const void *)field[1]),
                                _mm512_loadu_si512((const void *)field[2]) };
#else
    const __m512i three = _mm512_set1_epi8(3);
#endif
    __m512 sum[8];
    UNROLL
    for (int c = 0; c < NC; c++) sum[c] = _mm512_setzero_ps();
    for (int64_t i = 0; i < k / QK_K; i++) {
        const uint8_t *u = ub + (size_t)i * sb;
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
                k_packed_prefetch_step(u, sb, k, (size_t)t, 64);   /* the next 16 rows' super-block, spread */
                const __m512i x = _mm512_loadu_si512((const void *)(u + 64 * (t / 4)));
#if TERNARY_VBMI   /* fields 0-2 read in place; field 3's bits 6-7 moved to 2-3 (a 16-bit shift: within each byte there) */
                const __m512i v = _mm512_permutexvar_epi8(m == 3 ? _mm512_srli_epi16(x, 4) : x, fields[m == 3 ? 1 : m]);
#else
                const __m512i v = _mm512_and_si512(m ? _mm512_srli_epi16(x, 2 * m) : x, three);
#endif
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
#undef TERNARY_BODY
#undef TERNARY_TARGET
#undef TERNARY_VBMI
