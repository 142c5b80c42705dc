/* NVFP4 weights . Q8_0 activations: activation block t of 32 covers NVFP4 sub-blocks s0 = 2 (t % 2)
 * and s1 = s0 + 1 of weight block t / 2; with isum_s = sum kvalues_mxfp4[code] a over a sub-block,
 *   part[t % 4] += (d_a * scale_s0) * (float)isum_s0;  part[t % 4] += (d_a * scale_s1) * (float)isum_s1
 * (scale = the halved UE4M3 byte) and the result (part[0] + part[1]) + (part[2] + part[3]), the
 * same operations in every set. */
#include "kernels/kernels_internal.h"
#include "kernels/simd.h"

/* Sub-block s: byte 8 s + j holds weight 16 s + j (low nibble) and 16 s + 8 + j (high). */
static ALWAYS_INLINE void isums_generic(const uint8_t *qs, const int8_t *a, int32_t *i0, int32_t *i1) {
    int32_t s[2] = { 0, 0 };
    for (int h = 0; h < 2; h++)
        for (int j = 0; j < 8; j++) {
            s[h] += kvalues_mxfp4[qs[8 * h + j] & 0xf] * a[16 * h + j];
            s[h] += kvalues_mxfp4[qs[8 * h + j] >> 4] * a[16 * h + 8 + j];
        }
    *i0 = s[0];
    *i1 = s[1];
}

#define NVFP4_DOT(NAME, TARGET, ISUMS, F16)                                                                 \
    static TARGET float NAME(const void *w, const void *act, int64_t k) {                              \
        const block_nvfp4 *x = w;                                                                      \
        const block_q8_0 *y = act;                                                                     \
        float part[4] = { 0.0f, 0.0f, 0.0f, 0.0f };                                                    \
        for (int64_t t = 0; t < k / 32; t++) {                                                         \
            const block_nvfp4 *b = &x[t / 2];                                                          \
            const int s0 = 2 * (int)(t % 2);                                                           \
            int32_t i0, i1;                                                                            \
            ISUMS(b->qs + 8 * s0, y[t].qs, &i0, &i1);                                                  \
            const float da = F16(y[t].d);                                                         \
            part[t % 4] += (da * ue4m3_half_to_f32(b->d[s0])) * (float)i0;                             \
            part[t % 4] += (da * ue4m3_half_to_f32(b->d[s0 + 1])) * (float)i1;                         \
        }                                                                                              \
        return (part[0] + part[1]) + (part[2] + part[3]);                                              \
    }

NVFP4_DOT(nvfp4_dot_generic, , isums_generic, load_f16)
const type_kernels nvfp4_kernels_generic = { .act_type = TS_Q8_0, .dot = nvfp4_dot_generic };

#if defined(TS_X86)
/* The 16 code bytes of two sub-blocks: low nibbles are weights 0..7 (and 16..23), high 8..15 (and
 * 24..31); looked up by pshufb and multiplied as |w| . (a * sign w). */
static ALWAYS_INLINE TARGET_AVX2 void isums_avx2(const uint8_t *qs, const int8_t *a, int32_t *i0, int32_t *i1) {
    const __m128i table = _mm_loadu_si128((const __m128i *)kvalues_mxfp4), low4 = _mm_set1_epi8(0x0f);
    const __m128i b = _mm_loadu_si128((const __m128i *)qs);
    const __m128i lo = _mm_shuffle_epi8(table, _mm_and_si128(b, low4));
    const __m128i hi = _mm_shuffle_epi8(table, _mm_and_si128(_mm_srli_epi16(b, 4), low4));
    /* weights in element order: sub-block 0 = lo[0..7], hi[0..7]; sub-block 1 = lo[8..15], hi[8..15] */
    const __m256i wv = _mm256_setr_m128i(_mm_unpacklo_epi64(lo, hi), _mm_unpackhi_epi64(lo, hi));
    const __m256i av = _mm256_loadu_si256((const __m256i *)a);
    const __m256i p = _mm256_madd_epi16(_mm256_maddubs_epi16(_mm256_sign_epi8(wv, wv), _mm256_sign_epi8(av, wv)), _mm256_set1_epi16(1));
    __m128i t0 = _mm256_castsi256_si128(p), t1 = _mm256_extracti128_si256(p, 1);
    __m128i t = _mm_hadd_epi32(t0, t1);   /* (0+1, 2+3) of sub-block 0, then of 1 */
    t = _mm_hadd_epi32(t, t);
    *i0 = _mm_cvtsi128_si32(t);
    *i1 = _mm_extract_epi32(t, 1);
}

NVFP4_DOT(nvfp4_dot_avx2, TARGET_AVX2, isums_avx2, f16_bits_to_f32)   /* F16C: the same values */
const type_kernels nvfp4_kernels_avx2 = { .act_type = TS_Q8_0, .dot = nvfp4_dot_avx2 };
const type_kernels nvfp4_kernels_avx512 = { .act_type = TS_Q8_0, .dot = nvfp4_dot_avx2 };
#endif

#if defined(__aarch64__)
static ALWAYS_INLINE TARGET_DOTPROD void isums_dotprod(const uint8_t *qs, const int8_t *a, int32_t *i0, int32_t *i1) {
    const int8x16_t table = vld1q_s8(kvalues_mxfp4);
    const uint8x16_t b = vld1q_u8(qs);
    const int8x16_t lo = vqtbl1q_s8(table, vandq_u8(b, vdupq_n_u8(0x0f))), hi = vqtbl1q_s8(table, vshrq_n_u8(b, 4));
    const int8x16_t w0 = vcombine_s8(vget_low_s8(lo), vget_low_s8(hi)), w1 = vcombine_s8(vget_high_s8(lo), vget_high_s8(hi));
    *i0 = vaddvq_s32(vdotq_s32(vdupq_n_s32(0), w0, vld1q_s8(a)));
    *i1 = vaddvq_s32(vdotq_s32(vdupq_n_s32(0), w1, vld1q_s8(a + 16)));
}

NVFP4_DOT(nvfp4_dot_dotprod, TARGET_DOTPROD, isums_dotprod, load_f16)
const type_kernels nvfp4_kernels_neon_dotprod = { .act_type = TS_Q8_0, .dot = nvfp4_dot_dotprod };
#endif
