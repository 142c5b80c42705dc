/* Q2_K weights . Q8_K activations: per super-block
 *   d_a * (d * sum_g sc[g] sum(q a) - dmin * sum_g m[g] bsum[g])
 * over the 16 groups of 16, integer inside; on AVX-512 a copy keeps the rows in lanes (below). */
#include "kernels/kernels_internal.h"
#include "kernels/simd.h"
#include "kernels/q4_k_simd.h"
#include "kernels/lanes_pack.h"

static ALWAYS_INLINE float dot_q2_k_q8_k(const void *w, const void *act, int64_t k) {
    const block_q2_K *x = w;
    const block_q8_K *y = act;
    float sum = 0.0f;
    for (int64_t i = 0; i < k / QK_K; i++) {
        int8_t q[QK_K];
        for (int n = 0; n < 2; n++)
            for (int j = 0; j < 4; j++)
                for (int l = 0; l < 32; l++)
                    q[128 * n + 32 * j + l] = (int8_t)((x[i].qs[32 * n + l] >> (2 * j)) & 3);
        int32_t isum = 0, msum = 0;
        for (int g = 0; g < 16; g++) {
            isum += (x[i].scales[g] & 0xf) * dot_i8(q + 16 * g, y[i].qs + 16 * g, 16);
            msum += (x[i].scales[g] >> 4) * q8k_bsum(y[i].bsums, g);
        }
        float da = f32_from_bits(load_u32(y[i].d));
        sum += da * (load_f16(x[i].d) * (float)isum - load_f16(x[i].dmin) * (float)msum);
    }
    return sum;
}

static float q2_k_dot_generic(const void *w, const void *a, int64_t k) { return dot_q2_k_q8_k(w, a, k); }

const type_kernels q2_k_kernels_generic = { .act_type = TS_Q8_K, .dot = q2_k_dot_generic };

#if defined(TS_X86)
/* The same integer sums in registers: sub-block ib = 4n + j (32 codes, groups 2ib and 2ib + 1) is
 * bits 2j..2j+1 of qs[32n .. 32n + 31]; maddubs(q, a) then madd by the two groups' scales, and the
 * min term as one madd of the 16 m[g] with the 16 bsums. Same integers, same float operations,
 * so the same bits as the portable kernel. */
static TARGET_AVX2 float q2_k_dot_avx2(const void *w, const void *act, int64_t k) {
    const block_q2_K *x = w;
    const block_q8_K *y = act;
    const __m256i three = _mm256_set1_epi8(3);
    float sum = 0.0f;
    for (int64_t i = 0; i < k / QK_K; i++) {
        _mm_prefetch((const char *)(x + i) + PREFETCH_BYTES, _MM_HINT_T0);
        const __m128i sb = _mm_loadu_si128((const __m128i *)x[i].scales);
        const __m256i m16 = _mm256_cvtepu8_epi16(_mm_and_si128(_mm_srli_epi16(sb, 4), _mm_set1_epi8(0x0f)));
        const __m256i bs = _mm256_loadu_si256((const __m256i *)y[i].bsums);
        const int32_t msum = hsum_i32x8(_mm256_madd_epi16(m16, bs));
        /* the low nibbles in both halves; a shuffle per sub-block makes its two groups' int16 scales */
        const __m256i sc8 = _mm256_broadcastsi128_si256(_mm_and_si128(sb, _mm_set1_epi8(0x0f)));
        __m256i acc = _mm256_setzero_si256();
        UNROLL
        for (int n = 0; n < 2; n++) {
            const __m256i qb = _mm256_loadu_si256((const __m256i *)(x[i].qs + 32 * n));
            UNROLL
            for (int j = 0; j < 4; j++) {
                const int ib = 4 * n + j;
                const __m256i q = _mm256_and_si256(_mm256_srli_epi16(qb, 2 * j), three);
                const __m256i av = _mm256_loadu_si256((const __m256i *)(y[i].qs + 32 * ib));
                const char g0 = (char)(2 * ib), g1 = (char)(2 * ib + 1), z = (char)0x80;
                const __m256i sel = _mm256_setr_epi8(g0, z, g0, z, g0, z, g0, z, g0, z, g0, z, g0, z, g0, z,
                                                     g1, z, g1, z, g1, z, g1, z, g1, z, g1, z, g1, z, g1, z);
                const __m256i sc = _mm256_shuffle_epi8(sc8, sel);
                acc = _mm256_add_epi32(acc, _mm256_madd_epi16(_mm256_maddubs_epi16(q, av), sc));
            }
        }
        const int32_t isum = hsum_i32x8(acc);
        float da = f32_from_bits(load_u32(y[i].d));
        sum += da * (load_f16(x[i].d) * (float)isum - load_f16(x[i].dmin) * (float)msum);
    }
    return sum;
}

const type_kernels q2_k_kernels_avx2 = { .act_type = TS_Q8_K, .dot = q2_k_dot_avx2 };

/* Rows in lanes kept (type_kernels.lanes_pack): super-block i of 16 rows in the 16 rows' own bytes,
 * the codes by weight (IQ2's rank layout, iq2_dot.c: a shift and a mask per 4 codes), each group's
 * scales byte and d, dmin lane by lane. Per 4 codes one dpbusd for 16 rows; per group its sum times
 * its scale, its min times its block sum: the row kernel's integers and float operations. */
typedef struct {
    uint8_t qs[16][64];       /* group g, lane p byte j bits 2 m: code of weight 16 g + 4 m + j of row p */
    uint8_t scales[16][16];   /* group g, lane p: scales[g] of row p (sc low nibble, m high) */
    uint16_t d[16], dmin[16];
} q2_k_packed;
_Static_assert(sizeof(q2_k_packed) == 16 * sizeof(block_q2_K), "the 16 rows' own bytes");

static void q2_k_lanes_pack(const uint8_t *w, size_t ws, int64_t k, uint8_t *out) {
    for (int64_t i = 0; i < k / QK_K; i++) {
        q2_k_packed u;
        for (int p = 0; p < 16; p++) {
            const block_q2_K *b = (const block_q2_K *)(w + p * ws) + i;
            uint8_t code[QK_K];
            k_qs_codes2(b->qs, code);
            lanes_pack_fields2(code, p, u.qs);
            for (int g = 0; g < 16; g++) u.scales[g][p] = b->scales[g];
            u.d[p] = load_u16(b->d);
            u.dmin[p] = load_u16(b->dmin);
        }
        memcpy(out + (size_t)i * sizeof u, &u, sizeof u);
    }
}

static void q2_k_lanes_row(const uint8_t *ub, size_t ws, int64_t k, int p, uint8_t *row) {
    for (int64_t i = 0; i < k / QK_K; i++) {
        const q2_k_packed *u = (const q2_k_packed *)ub + i;
        block_q2_K *b = (block_q2_K *)row + i;
        memset(b->qs, 0, sizeof b->qs);
        for (int e = 0; e < QK_K; e++)
            b->qs[32 * (e / 128) + e % 32] |= (uint8_t)(((u->qs[e / 16][4 * p + e % 4] >> (2 * (e % 16 / 4))) & 3) << (2 * (e % 128 / 32)));
        for (int g = 0; g < 16; g++) b->scales[g] = u->scales[g][p];
        b->d[0] = (uint8_t)u->d[p]; b->d[1] = (uint8_t)(u->d[p] >> 8);
        b->dmin[0] = (uint8_t)u->dmin[p]; b->dmin[1] = (uint8_t)(u->dmin[p] >> 8);
    }
}

static ALWAYS_INLINE TARGET_AVX512 void q2_k_packed_body(const uint8_t *ub, const uint8_t *a, size_t as, int64_t k,
                                                         float *y, long ys, const int NC) {
    const __m512i three = _mm512_set1_epi8(3), low4 = _mm512_set1_epi32(15);
    __m512 sum[8];
    UNROLL
    for (int c = 0; c < NC; c++) sum[c] = _mm512_setzero_ps();
    for (int64_t i = 0; i < k / QK_K; i++) {
        const q2_k_packed *u = (const q2_k_packed *)ub + i;
        const block_q8_K *ab[LANES_MAX_NC];
        __m512i isum[LANES_MAX_NC], msum[LANES_MAX_NC];
        k_packed_start(a, as, i, NC, ab, isum, msum);
        UNROLL
        for (int g = 0; g < 16; g++) {
            const __m512i sm = _mm512_cvtepu8_epi32(_mm_loadu_si128((const __m128i *)u->scales[g]));
            const __m512i sc = _mm512_and_si512(sm, low4), m = _mm512_srli_epi32(sm, 4);
            const __m512i r = _mm512_loadu_si512((const void *)u->qs[g]);
            __m512i acc[8];
            UNROLL
            for (int c = 0; c < NC; c++) acc[c] = _mm512_setzero_si512();
            UNROLL
            for (int q = 0; q < 4; q++) {
                k_packed_prefetch_step(u, sizeof *u, k, 4 * (size_t)g + (size_t)q, 64);
                const __m512i x = _mm512_and_si512(q ? _mm512_srli_epi16(r, 2 * q) : r, three);
                UNROLL
                for (int c = 0; c < NC; c++)
                    acc[c] = _mm512_dpbusd_epi32(acc[c], x, _mm512_set1_epi32((int)load_u32((const uint8_t *)ab[c]->qs + 16 * g + 4 * q)));
            }
            UNROLL
            for (int c = 0; c < NC; c++) {
                isum[c] = _mm512_add_epi32(isum[c], _mm512_mullo_epi32(acc[c], sc));
                msum[c] = _mm512_add_epi32(msum[c], _mm512_mullo_epi32(m, _mm512_set1_epi32(q8k_bsum(ab[c]->bsums, g))));
            }
        }
        k_packed_terms(sum, u->d, u->dmin, ab, isum, msum, NC);
    }
    UNROLL
    for (int c = 0; c < NC; c++) _mm512_storeu_ps(y + c * ys, sum[c]);
}
LANES_FROM_BODY(q2_k_packed_avx512, q2_k_packed_body, 8)
const type_kernels q2_k_kernels_avx512 = { .act_type = TS_Q8_K, .dot = q2_k_dot_avx2,
    .lanes_pack = q2_k_lanes_pack, .lanes_packed = q2_k_packed_avx512, .lanes_row = q2_k_lanes_row };
#endif
