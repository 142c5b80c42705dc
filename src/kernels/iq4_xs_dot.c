/* IQ4_XS weights . Q8_K activations: per super-block
 *   d * d_a * sum_ib (ls[ib] - 32) * sum(kvalues_iq4nl[q] * a)
 * over the 8 sub-blocks of 32, the sums in integers. Portable, AVX2, AVX-512 VNNI and NEON
 * (SDOT). */
#include "kernels/kernels_internal.h"
#include "kernels/simd.h"
#include "kernels/pair_dot.h"

/* ls - 32 of the 8 sub-blocks: the low nibbles are nibble ib of the LE u32 scales_l, the high
 * 2 bits are bits 2ib..2ib+1 of the LE u16 scales_h. */
static ALWAYS_INLINE void iq4_xs_sub_scales(const block_iq4_xs *b, int32_t *sc) {
    uint32_t low = load_u32(b->scales_l), high = (uint32_t)(b->scales_h[0] | b->scales_h[1] << 8);
    for (int ib = 0; ib < QK_K / 32; ib++)
        sc[ib] = (int32_t)(((low >> (4 * ib)) & 0xf) | ((high >> (2 * ib)) & 3) << 4) - 32;
}

static ALWAYS_INLINE float dot_iq4_xs_q8_k(const void *w, const void *act, int64_t k) {
    const block_iq4_xs *x = w;
    const block_q8_K *y = act;
    float sum = 0.0f;
    for (int64_t i = 0; i < k / QK_K; i++) {
        int32_t sc[QK_K / 32];
        iq4_xs_sub_scales(&x[i], sc);
        int32_t isum = 0;
        for (int ib = 0; ib < QK_K / 32; ib++) {
            int8_t q[32];
            for (int j = 0; j < 16; j++) {
                q[j] = kvalues_iq4nl[x[i].qs[16 * ib + j] & 0xf];
                q[j + 16] = kvalues_iq4nl[x[i].qs[16 * ib + j] >> 4];
            }
            isum += sc[ib] * dot_i8(q, y[i].qs + 32 * ib, 32);
        }
        sum += f32_from_bits(load_u32(y[i].d)) * load_f16(x[i].d) * (float)isum;
    }
    return sum;
}

static float iq4_xs_dot_generic(const void *w, const void *a, int64_t k) { return dot_iq4_xs_q8_k(w, a, k); }

const type_kernels iq4_xs_kernels_generic = { .act_type = TS_Q8_K, .dot = iq4_xs_dot_generic };

#if defined(TS_X86)
/* Per super-block and output: per sub-block the 32 looked-up codes (pshufb) times the activations
 * (|w| unsigned times a with w's sign), pairs summed and scaled by ls - 32 with one madd into 8
 * int32 lanes; then acc += (d * d_a) * lanes, and the result is hsum(acc). */
static ALWAYS_INLINE TARGET_AVX2 void iq4_xs_avx2_body(const uint8_t *w, size_t ws, const uint8_t *a,
                                                       size_t as, int64_t k, float *y, long ys,
                                                       const int NR, const int NC) {
    const __m128i table = _mm_loadu_si128((const __m128i *)kvalues_iq4nl), low4 = _mm_set1_epi8(0x0f);
    __m256 acc[4][4];
    UNROLL
    for (int r = 0; r < NR; r++) for (int c = 0; c < NC; c++) acc[r][c] = _mm256_setzero_ps();
    for (int64_t i = 0; i < k / QK_K; i++) {
        const block_iq4_xs *wb[4];
        const block_q8_K *ab[4];
        int32_t sc[4][QK_K / 32];
        UNROLL
        for (int r = 0; r < NR; r++) {
            wb[r] = (const block_iq4_xs *)(w + r * ws) + i;
            for (int l = 0; l < (int)sizeof(block_iq4_xs); l += 64) PREFETCH_ROW((const uint8_t *)wb[r] + l, NR, ws);
            iq4_xs_sub_scales(wb[r], sc[r]);
        }
        UNROLL
        for (int c = 0; c < NC; c++) ab[c] = (const block_q8_K *)(a + c * as) + i;
        __m256i isum[4][4];
        UNROLL
        for (int r = 0; r < NR; r++) for (int c = 0; c < NC; c++) isum[r][c] = _mm256_setzero_si256();
        for (int ib = 0; ib < QK_K / 32; ib++) {
            __m256i wq[4], wabs[4], scale[4];
            UNROLL
            for (int r = 0; r < NR; r++) {
                __m128i qs = _mm_loadu_si128((const __m128i *)(wb[r]->qs + 16 * ib));
                wq[r] = _mm256_setr_m128i(_mm_shuffle_epi8(table, _mm_and_si128(qs, low4)),
                                          _mm_shuffle_epi8(table, _mm_and_si128(_mm_srli_epi16(qs, 4), low4)));
                wabs[r] = _mm256_sign_epi8(wq[r], wq[r]);
                scale[r] = _mm256_set1_epi16((short)sc[r][ib]);
            }
            UNROLL
            for (int c = 0; c < NC; c++) {
                __m256i av = _mm256_loadu_si256((const __m256i *)(ab[c]->qs + 32 * ib));
                UNROLL
                for (int r = 0; r < NR; r++) {
                    __m256i p = _mm256_maddubs_epi16(wabs[r], _mm256_sign_epi8(av, wq[r]));
                    isum[r][c] = _mm256_add_epi32(isum[r][c], _mm256_madd_epi16(p, scale[r]));
                }
            }
        }
        UNROLL
        for (int c = 0; c < NC; c++) {
            float da = f32_from_bits(load_u32(ab[c]->d));
            UNROLL
            for (int r = 0; r < NR; r++) {
                float d = f16_bits_to_f32(wb[r]->d) * da;
                acc[r][c] = _mm256_fmadd_ps(_mm256_set1_ps(d), _mm256_cvtepi32_ps(isum[r][c]), acc[r][c]);
            }
        }
    }
    UNROLL
    for (int r = 0; r < NR; r++) for (int c = 0; c < NC; c++) y[c * ys + r] = hsum_f32x8(acc[r][c]);
}

/* iq4_xs_sub_scales in 8 int32 lanes, computed in registers. */
static ALWAYS_INLINE TARGET_AVX2 __m256i iq4_xs_sub_scales_avx2(const block_iq4_xs *b) {
    __m256i low = _mm256_srlv_epi32(_mm256_set1_epi32((int)load_u32(b->scales_l)), _mm256_setr_epi32(0, 4, 8, 12, 16, 20, 24, 28));
    __m256i high = _mm256_srlv_epi32(_mm256_set1_epi32(b->scales_h[0] | b->scales_h[1] << 8), _mm256_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14));
    low = _mm256_and_si256(low, _mm256_set1_epi32(0xf));
    high = _mm256_slli_epi32(_mm256_and_si256(high, _mm256_set1_epi32(3)), 4);
    return _mm256_sub_epi32(_mm256_or_si256(low, high), _mm256_set1_epi32(32));
}

/* The 64 nibbles of 32 code bytes (sub-blocks 2j and 2j + 1) in element order: one 256-bit load
 * spread to the 128-bit lanes q0, q0, q1, q1, shifted by 0, 4, 0, 4 bits and masked. */
static ALWAYS_INLINE TARGET_AVX512 __m512i iq4_xs_nibbles(const uint8_t *qs) {
    __m512i v = _mm512_permutexvar_epi64(_mm512_setr_epi64(0, 1, 0, 1, 2, 3, 2, 3),
                                         _mm512_castsi256_si512(_mm256_loadu_si256((const __m256i *)qs)));
    const __m512i shift = _mm512_setr_epi64(0, 0, 0x0004000400040004LL, 0x0004000400040004LL,
                                            0, 0, 0x0004000400040004LL, 0x0004000400040004LL);
    return _mm512_and_si512(_mm512_srlv_epi16(v, shift), _mm512_set1_epi8(0x0f));
}

/* AVX-512 VNNI: two sub-blocks per 512-bit vector (the 32 code bytes of sub-blocks 2j and 2j + 1
 * unpack in element order, against 64 contiguous activations). dpbusd wants unsigned weights, so
 * the table is looked up offset by 128 (codes 1..241): per 4 products an int32 lane of
 * sum((w + 128) a), times the sub-block's ls - 32 (vpmulld). The offset's share,
 * 128 * sum_ib (ls - 32) * sum(a over the sub-block), comes from the Q8_K block sums and starts
 * the lanes. Then acc += (d * d_a) * lanes, and the result is hsum(acc). */
static ALWAYS_INLINE TARGET_AVX512 void iq4_xs_avx512_body(const uint8_t *w, size_t ws, const uint8_t *a,
                                                           size_t as, int64_t k, float *y, long ys,
                                                           const int NR, const int NC) {
    const __m512i table = _mm512_broadcast_i32x4(
        _mm_xor_si128(_mm_loadu_si128((const __m128i *)kvalues_iq4nl), _mm_set1_epi8((char)0x80)));
    /* chunk j: the low 8 lanes take sub-block 2j's scale, the high 8 lanes 2j + 1's */
    __m512i scale_index[4];
    UNROLL
    for (int j = 0; j < 4; j++)
        scale_index[j] = _mm512_inserti64x4(_mm512_set1_epi32(2 * j), _mm256_set1_epi32(2 * j + 1), 1);
    __m512 acc[4][4];
    UNROLL
    for (int r = 0; r < NR; r++)
        UNROLL
        for (int c = 0; c < NC; c++) acc[r][c] = _mm512_setzero_ps();
    for (int64_t i = 0; i < k / QK_K; i++) {
        const block_iq4_xs *wb[4];
        const block_q8_K *ab[4];
        __m256i sc[4], bs[4];
        UNROLL
        for (int r = 0; r < NR; r++) {
            wb[r] = (const block_iq4_xs *)(w + r * ws) + i;
            for (int l = 0; l < (int)sizeof(block_iq4_xs); l += 64) PREFETCH_ROW((const uint8_t *)wb[r] + l, NR, ws);
            sc[r] = iq4_xs_sub_scales_avx2(wb[r]);
        }
        UNROLL
        for (int c = 0; c < NC; c++) {
            ab[c] = (const block_q8_K *)(a + c * as) + i;
            /* the activation sums of each sub-block: adjacent pairs of the 16 block sums */
            bs[c] = _mm256_madd_epi16(_mm256_loadu_si256((const __m256i *)ab[c]->bsums), _mm256_set1_epi16(1));
        }
        __m512i isum[4][4];
        UNROLL
        for (int r = 0; r < NR; r++)
            UNROLL
            for (int c = 0; c < NC; c++)
                isum[r][c] = _mm512_zextsi256_si512(
                    _mm256_sub_epi32(_mm256_setzero_si256(), _mm256_slli_epi32(_mm256_mullo_epi32(sc[r], bs[c]), 7)));
        UNROLL
        for (int j = 0; j < 4; j++) {
            __m512i u[4], scale[4];
            UNROLL
            for (int r = 0; r < NR; r++) {
                u[r] = _mm512_shuffle_epi8(table, iq4_xs_nibbles(wb[r]->qs + 32 * j));
                scale[r] = _mm512_permutexvar_epi32(scale_index[j], _mm512_castsi256_si512(sc[r]));
            }
            UNROLL
            for (int c = 0; c < NC; c++) {
                __m512i av = _mm512_loadu_si512((const void *)(ab[c]->qs + 64 * j));
                UNROLL
                for (int r = 0; r < NR; r++) {
                    __m512i p = _mm512_dpbusd_epi32(_mm512_setzero_si512(), u[r], av);
                    isum[r][c] = _mm512_add_epi32(isum[r][c], _mm512_mullo_epi32(p, scale[r]));
                }
            }
        }
        UNROLL
        for (int c = 0; c < NC; c++) {
            float da = f32_from_bits(load_u32(ab[c]->d));
            UNROLL
            for (int r = 0; r < NR; r++) {
                float d = f16_bits_to_f32(wb[r]->d) * da;
                acc[r][c] = _mm512_fmadd_ps(_mm512_set1_ps(d), _mm512_cvtepi32_ps(isum[r][c]), acc[r][c]);
            }
        }
    }
    UNROLL
    for (int r = 0; r < NR; r++)
        UNROLL
        for (int c = 0; c < NC; c++) y[c * ys + r] = hsum_f32x16(acc[r][c]);
}

DOT_FROM_BODY(TARGET_AVX2, iq4_xs_dot_avx2, iq4_xs_avx2_body)
TILE_FROM_BODY(TARGET_AVX2, iq4_xs_tile_avx2, iq4_xs_avx2_body, 4, 4)
const type_kernels iq4_xs_kernels_avx2 = {
    .act_type = TS_Q8_K, .dot = iq4_xs_dot_avx2,
    .tile = iq4_xs_tile_avx2, .tile_rows = 4, .tile_cols = 4 };

DOT_FROM_BODY(TARGET_AVX512, iq4_xs_dot_avx512, iq4_xs_avx512_body)
TILE_FROM_BODY(TARGET_AVX512, iq4_xs_tile_avx512, iq4_xs_avx512_body, 4, 4)
const type_kernels iq4_xs_kernels_avx512 = {
    .act_type = TS_Q8_K, .dot = iq4_xs_dot_avx512,
    .tile = iq4_xs_tile_avx512, .tile_rows = 4, .tile_cols = 4 };
#endif

#if defined(__aarch64__)
/* NEON SDOT, NR rows x NC activations per super-block: each sub-block's 32 codes looked up in the
 * table (TBL), its SDOT sum scaled in int32 lanes, then the portable kernel's float operations,
 * so the same bits. */
static ALWAYS_INLINE TARGET_DOTPROD void iq4_xs_dotprod_body(const uint8_t *w, size_t ws, const uint8_t *a, size_t as,
                                                             int64_t k, float *y, long ys, const int NR, const int NC) {
    float sum[4][4] = { { 0.0f } };
    const int8x16_t table = vld1q_s8(kvalues_iq4nl);
    const uint8x16_t low4 = vdupq_n_u8(0x0f);
    for (int64_t i = 0; i < k / QK_K; i++) {
        const block_q8_K *ab[4];
        float da[4];
        UNROLL
        for (int c = 0; c < NC; c++) {
            ab[c] = (const block_q8_K *)(a + c * as) + i;
            da[c] = f32_from_bits(load_u32(ab[c]->d));
        }
        NO_UNROLL   /* as k4_tile_dotprod (q4_k_simd.h): unrolled, the tiles spilled */
        for (int r = 0; r < NR; r++) {
            const block_iq4_xs *wb = (const block_iq4_xs *)(w + r * ws) + i;
            int32_t sc[QK_K / 32];
            iq4_xs_sub_scales(wb, sc);
            int32x4_t isum[4];
            UNROLL
            for (int c = 0; c < NC; c++) isum[c] = vdupq_n_s32(0);
            for (int ib = 0; ib < QK_K / 32; ib++) {
                const uint8x16_t qs = vld1q_u8(wb->qs + 16 * ib);
                const int8x16_t lo = vqtbl1q_s8(table, vandq_u8(qs, low4)), hi = vqtbl1q_s8(table, vshrq_n_u8(qs, 4));
                UNROLL
                for (int c = 0; c < NC; c++) {
                    const int8_t *q = ab[c]->qs + 32 * ib;
                    const int32x4_t p = vdotq_s32(vdotq_s32(vdupq_n_s32(0), lo, vld1q_s8(q)), hi, vld1q_s8(q + 16));
                    isum[c] = vmlaq_n_s32(isum[c], p, sc[ib]);
                }
            }
            const float d = load_f16(wb->d);
            UNROLL
            for (int c = 0; c < NC; c++) sum[r][c] += da[c] * d * (float)vaddvq_s32(isum[c]);
        }
    }
    store_tile_sums(sum, y, ys, NR, NC);
}

DOT_FROM_BODY(TARGET_DOTPROD, iq4_xs_dot_dotprod, iq4_xs_dotprod_body)
TILE_FROM_BODY(TARGET_DOTPROD, iq4_xs_rows4_dotprod, iq4_xs_dotprod_body, 4, 1)
TILE_FROM_BODY(TARGET_DOTPROD, iq4_xs_tile_dotprod, iq4_xs_dotprod_body, 4, 4)
const type_kernels iq4_xs_kernels_neon_dotprod = {
    .act_type = TS_Q8_K, .dot = iq4_xs_dot_dotprod, .rows4 = iq4_xs_rows4_dotprod,
    .tile = iq4_xs_tile_dotprod, .tile_rows = 4, .tile_cols = 4 };
#endif
