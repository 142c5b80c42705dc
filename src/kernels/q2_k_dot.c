/* Q2_K weights . Q8_K activations: per super-block
 *   d_a * (d * sum_g sc[g] sum(q a) - dmin * sum_g m[g] bsum[g])
 * over the 16 groups of 16, integer inside. */
#include "kernels/kernels_internal.h"
#include "kernels/simd.h"

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
const type_kernels q2_k_kernels_avx512 = { .act_type = TS_Q8_K, .dot = q2_k_dot_avx2 };
#endif
