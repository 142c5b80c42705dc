/* The grid and ternary types (IQ1_S, IQ1_M, IQ2_XXS, IQ2_XS, IQ2_S, IQ3_XXS, IQ3_S, TQ1_0, TQ2_0)
 * against Q8_K activations, and the unpacked rows the prefill makes of them.
 *
 * Every one of these types is, per super-block of 256, d * sc[g] * q[e] with integer sc (one per
 * 16 weights) and int8 q (block_unpacked): the dot of a super-block is
 *   isum = sum_g sc[g] * sum_{e in g} q[e] a[e]        (exact, in integers)
 *   sum += (d * d_a) * (float)isum                     (in super-block order)
 * in every kernel of every set, so all of them give the same bits: the portable one, AVX2, AVX-512,
 * NEON, and the tiles that read rows unpacked once for a whole batch (matmul.c). A type's kernels
 * differ only in how a super-block is unpacked (its file: iq1.c, iq2.c, iq3.c, tq.c); the SIMD
 * kernels unpack with the portable code into a block_unpacked on the stack (one L1-resident
 * buffer) and multiply it with vector instructions. */
#include "kernels/kernels_internal.h"
#include "kernels/simd.h"

/* ---- the portable kernels ---- */

static ALWAYS_INLINE int32_t unpacked_isum(const block_unpacked *u, const block_q8_K *a) {
    int32_t isum = 0;
    for (int g = 0; g < 16; g++) isum += u->sc[g] * dot_i8(u->q + 16 * g, a->qs + 16 * g, 16);
    return isum;
}

static ALWAYS_INLINE float dot_unpacking(unpack_block_fn unpack, size_t block_bytes, const void *w, const void *act,
                                         int64_t k) {
    const uint8_t *wb = w;
    const block_q8_K *a = act;
    float sum = 0.0f;
    for (int64_t i = 0; i < k / QK_K; i++) {
        block_unpacked u;
        unpack(wb + (size_t)i * block_bytes, &u);
        sum += (u.d * f32_from_bits(load_u32(a[i].d))) * (float)unpacked_isum(&u, &a[i]);
    }
    return sum;
}

static float unpacked_dot_generic(const void *w, const void *act, int64_t k) {
    const block_unpacked *u = w;
    const block_q8_K *a = act;
    float sum = 0.0f;
    for (int64_t i = 0; i < k / QK_K; i++) sum += (u[i].d * f32_from_bits(load_u32(a[i].d))) * (float)unpacked_isum(&u[i], &a[i]);
    return sum;
}

const type_kernels unpacked_kernels_generic = { .act_type = TS_Q8_K, .dot = unpacked_dot_generic };

#define GENERIC_KERNELS(T, block)                                                                           \
    static float T##_dot_generic(const void *w, const void *a, int64_t k) {                                 \
        return dot_unpacking(T##_unpack, sizeof(block), w, a, k);                                           \
    }                                                                                                       \
    const type_kernels T##_kernels_generic = { .act_type = TS_Q8_K, .dot = T##_dot_generic, .unpack = T##_unpack };

GENERIC_KERNELS(iq2_xxs, block_iq2_xxs)
GENERIC_KERNELS(iq2_xs, block_iq2_xs)
GENERIC_KERNELS(iq2_s, block_iq2_s)
GENERIC_KERNELS(iq3_xxs, block_iq3_xxs)
GENERIC_KERNELS(iq3_s, block_iq3_s)
GENERIC_KERNELS(iq1_s, block_iq1_s)
GENERIC_KERNELS(iq1_m, block_iq1_m)
GENERIC_KERNELS(tq1_0, block_tq1_0)
GENERIC_KERNELS(tq2_0, block_tq2_0)

#if defined(TS_X86)
/* ---- AVX2: per 32 codes maddubs(|q|, a * sign q) -> 16 int16, madd by the two groups' scales ---- */

static ALWAYS_INLINE TARGET_AVX2 __m256i scales_2_avx2(const int16_t *sc) {
    return _mm256_setr_m128i(_mm_set1_epi16(sc[0]), _mm_set1_epi16(sc[1]));
}

/* The 8 int32 lanes of sc-scaled products of one unpacked super-block with one activation block. */
static ALWAYS_INLINE TARGET_AVX2 int32_t unpacked_isum_avx2(const block_unpacked *u, const block_q8_K *a) {
    __m256i acc = _mm256_setzero_si256();
    UNROLL
    for (int h = 0; h < 8; h++) {
        const __m256i q = _mm256_loadu_si256((const __m256i *)(u->q + 32 * h));
        const __m256i av = _mm256_loadu_si256((const __m256i *)(a->qs + 32 * h));
        const __m256i p = _mm256_maddubs_epi16(_mm256_sign_epi8(q, q), _mm256_sign_epi8(av, q));
        acc = _mm256_add_epi32(acc, _mm256_madd_epi16(p, scales_2_avx2(u->sc + 2 * h)));
    }
    __m128i s = _mm_add_epi32(_mm256_castsi256_si128(acc), _mm256_extracti128_si256(acc, 1));
    s = _mm_add_epi32(s, _mm_shuffle_epi32(s, _MM_SHUFFLE(1, 0, 3, 2)));
    s = _mm_add_epi32(s, _mm_shuffle_epi32(s, _MM_SHUFFLE(2, 3, 0, 1)));
    return _mm_cvtsi128_si32(s);
}

/* Tiles over unpacked rows: |q| and the scale vectors of each row taken once per super-block for
 * the NC activation rows. */
static ALWAYS_INLINE TARGET_AVX2 void unpacked_avx2_body(const uint8_t *w, size_t ws, const uint8_t *a, size_t as,
                                                         int64_t k, float *y, long ys, const int NR, const int NC) {
    float sum[4][4] = { { 0.0f } };
    for (int64_t i = 0; i < k / QK_K; i++) {
        const block_unpacked *ub[4];
        const block_q8_K *ab[4];
        UNROLL
        for (int r = 0; r < NR; r++) ub[r] = (const block_unpacked *)(w + r * ws) + i;
        UNROLL
        for (int c = 0; c < NC; c++) ab[c] = (const block_q8_K *)(a + c * as) + i;
        __m256i acc[4][4];
        UNROLL
        for (int r = 0; r < NR; r++) for (int c = 0; c < NC; c++) acc[r][c] = _mm256_setzero_si256();
        for (int h = 0; h < 8; h++) {
            __m256i q[4], qa[4], sc[4];
            UNROLL
            for (int r = 0; r < NR; r++) {
                q[r] = _mm256_loadu_si256((const __m256i *)(ub[r]->q + 32 * h));
                qa[r] = _mm256_sign_epi8(q[r], q[r]);
                sc[r] = scales_2_avx2(ub[r]->sc + 2 * h);
            }
            UNROLL
            for (int c = 0; c < NC; c++) {
                const __m256i av = _mm256_loadu_si256((const __m256i *)(ab[c]->qs + 32 * h));
                UNROLL
                for (int r = 0; r < NR; r++)
                    acc[r][c] = _mm256_add_epi32(acc[r][c], _mm256_madd_epi16(_mm256_maddubs_epi16(qa[r], _mm256_sign_epi8(av, q[r])), sc[r]));
            }
        }
        UNROLL
        for (int r = 0; r < NR; r++)
            UNROLL
            for (int c = 0; c < NC; c++) {
                __m128i s = _mm_add_epi32(_mm256_castsi256_si128(acc[r][c]), _mm256_extracti128_si256(acc[r][c], 1));
                s = _mm_add_epi32(s, _mm_shuffle_epi32(s, _MM_SHUFFLE(1, 0, 3, 2)));
                s = _mm_add_epi32(s, _mm_shuffle_epi32(s, _MM_SHUFFLE(2, 3, 0, 1)));
                sum[r][c] += (ub[r]->d * f32_from_bits(load_u32(ab[c]->d))) * (float)_mm_cvtsi128_si32(s);
            }
    }
    UNROLL
    for (int r = 0; r < NR; r++) for (int c = 0; c < NC; c++) y[c * ys + r] = sum[r][c];
}

DOT_FROM_BODY(TARGET_AVX2, unpacked_dot_avx2, unpacked_avx2_body)
TILE_FROM_BODY(TARGET_AVX2, unpacked_tile_avx2, unpacked_avx2_body, 4, 4)
const type_kernels unpacked_kernels_avx2 = {
    .act_type = TS_Q8_K, .dot = unpacked_dot_avx2, .tile = unpacked_tile_avx2, .tile_rows = 4, .tile_cols = 4 };

/* ---- AVX-512: 64 codes per step; a negated where q < 0 (mask), |q| . a by maddubs, the pairs
 * times the group scales and added into int32 lanes by VNNI's dpwssd ---- */

/* The int16 scale vector of codes 64 h .. 64 h + 63: groups 4h .. 4h + 3, 8 int16 lanes each. */
static ALWAYS_INLINE TARGET_AVX512 __m512i scales_4_avx512(const int16_t *sc) {
    return _mm512_inserti64x4(_mm512_castsi256_si512(_mm256_setr_m128i(_mm_set1_epi16(sc[0]), _mm_set1_epi16(sc[1]))),
                              _mm256_setr_m128i(_mm_set1_epi16(sc[2]), _mm_set1_epi16(sc[3])), 1);
}

static ALWAYS_INLINE TARGET_AVX512 void unpacked_avx512_body(const uint8_t *w, size_t ws, const uint8_t *a, size_t as,
                                                             int64_t k, float *y, long ys, const int NR, const int NC) {
    float sum[4][4] = { { 0.0f } };
    const __m512i zero = _mm512_setzero_si512();
    for (int64_t i = 0; i < k / QK_K; i++) {
        const block_unpacked *ub[4];
        const block_q8_K *ab[4];
        UNROLL
        for (int r = 0; r < NR; r++) ub[r] = (const block_unpacked *)(w + r * ws) + i;
        UNROLL
        for (int c = 0; c < NC; c++) ab[c] = (const block_q8_K *)(a + c * as) + i;
        __m512i acc[4][4];
        UNROLL
        for (int r = 0; r < NR; r++) for (int c = 0; c < NC; c++) acc[r][c] = zero;
        for (int h = 0; h < 4; h++) {
            __m512i qa[4], sc[4];
            __mmask64 neg[4];
            UNROLL
            for (int r = 0; r < NR; r++) {
                const __m512i q = _mm512_loadu_si512((const void *)(ub[r]->q + 64 * h));
                neg[r] = _mm512_movepi8_mask(q);
                qa[r] = _mm512_abs_epi8(q);
                sc[r] = scales_4_avx512(ub[r]->sc + 4 * h);
            }
            UNROLL
            for (int c = 0; c < NC; c++) {
                const __m512i av = _mm512_loadu_si512((const void *)(ab[c]->qs + 64 * h));
                UNROLL
                for (int r = 0; r < NR; r++) {
                    const __m512i sa = _mm512_mask_sub_epi8(av, neg[r], zero, av);
                    acc[r][c] = _mm512_dpwssd_epi32(acc[r][c], _mm512_maddubs_epi16(qa[r], sa), sc[r]);
                }
            }
        }
        UNROLL
        for (int r = 0; r < NR; r++)
            UNROLL
            for (int c = 0; c < NC; c++)
                sum[r][c] += (ub[r]->d * f32_from_bits(load_u32(ab[c]->d))) * (float)_mm512_reduce_add_epi32(acc[r][c]);
    }
    UNROLL
    for (int r = 0; r < NR; r++) for (int c = 0; c < NC; c++) y[c * ys + r] = sum[r][c];
}

DOT_FROM_BODY(TARGET_AVX512, unpacked_dot_avx512, unpacked_avx512_body)
TILE_FROM_BODY(TARGET_AVX512, unpacked_tile_avx512, unpacked_avx512_body, 4, 4)
const type_kernels unpacked_kernels_avx512 = {
    .act_type = TS_Q8_K, .dot = unpacked_dot_avx512, .tile = unpacked_tile_avx512, .tile_rows = 4, .tile_cols = 4 };

/* A packed type's kernels: each super-block unpacked on the stack, then multiplied as above. */
static ALWAYS_INLINE TARGET_AVX2 float dot_unpacking_avx2(unpack_block_fn unpack, size_t block_bytes, const void *w,
                                                          const void *act, int64_t k) {
    const uint8_t *wb = w;
    const block_q8_K *a = act;
    float sum = 0.0f;
    for (int64_t i = 0; i < k / QK_K; i++) {
        block_unpacked u;
        _mm_prefetch((const char *)wb + (size_t)i * block_bytes + PREFETCH_BYTES, _MM_HINT_T0);
        unpack(wb + (size_t)i * block_bytes, &u);
        sum += (u.d * f32_from_bits(load_u32(a[i].d))) * (float)unpacked_isum_avx2(&u, &a[i]);
    }
    return sum;
}

#define X86_KERNELS(T, block)                                                                              \
    static TARGET_AVX2 float T##_dot_avx2(const void *w, const void *a, int64_t k) {                       \
        return dot_unpacking_avx2(T##_unpack, sizeof(block), w, a, k);                                     \
    }                                                                                                      \
    const type_kernels T##_kernels_avx2 = { .act_type = TS_Q8_K, .dot = T##_dot_avx2, .unpack = T##_unpack }; \
    const type_kernels T##_kernels_avx512 = { .act_type = TS_Q8_K, .dot = T##_dot_avx2, .unpack = T##_unpack };

X86_KERNELS(iq2_xxs, block_iq2_xxs)
X86_KERNELS(iq2_xs, block_iq2_xs)
X86_KERNELS(iq2_s, block_iq2_s)
X86_KERNELS(iq3_xxs, block_iq3_xxs)
X86_KERNELS(iq3_s, block_iq3_s)
X86_KERNELS(iq1_s, block_iq1_s)
X86_KERNELS(iq1_m, block_iq1_m)
X86_KERNELS(tq1_0, block_tq1_0)
X86_KERNELS(tq2_0, block_tq2_0)
#endif

#if defined(__aarch64__)
/* ---- NEON with SDOT: a group of 16 codes is one SDOT into 4 lanes, its sum times sc ---- */
static ALWAYS_INLINE TARGET_DOTPROD int32_t unpacked_isum_dotprod(const block_unpacked *u, const block_q8_K *a) {
    int32x4_t acc = vdupq_n_s32(0);
    for (int g = 0; g < 16; g++)
        acc = vmlaq_n_s32(acc, vdotq_s32(vdupq_n_s32(0), vld1q_s8(u->q + 16 * g), vld1q_s8(a->qs + 16 * g)), u->sc[g]);
    return vaddvq_s32(acc);
}

static ALWAYS_INLINE TARGET_DOTPROD void unpacked_dotprod_body(const uint8_t *w, size_t ws, const uint8_t *a, size_t as,
                                                               int64_t k, float *y, long ys, const int NR, const int NC) {
    float sum[4][4] = { { 0.0f } };
    for (int64_t i = 0; i < k / QK_K; i++)
        NO_UNROLL
        for (int r = 0; r < NR; r++) {
            const block_unpacked *u = (const block_unpacked *)(w + r * ws) + i;
            UNROLL
            for (int c = 0; c < NC; c++) {
                const block_q8_K *ab = (const block_q8_K *)(a + c * as) + i;
                sum[r][c] += (u->d * f32_from_bits(load_u32(ab->d))) * (float)unpacked_isum_dotprod(u, ab);
            }
        }
    store_tile_sums(sum, y, ys, NR, NC);
}

DOT_FROM_BODY(TARGET_DOTPROD, unpacked_dot_dotprod, unpacked_dotprod_body)
TILE_FROM_BODY(TARGET_DOTPROD, unpacked_tile_dotprod, unpacked_dotprod_body, 4, 4)
const type_kernels unpacked_kernels_neon_dotprod = {
    .act_type = TS_Q8_K, .dot = unpacked_dot_dotprod, .tile = unpacked_tile_dotprod, .tile_rows = 4, .tile_cols = 4 };

static ALWAYS_INLINE TARGET_DOTPROD float dot_unpacking_dotprod(unpack_block_fn unpack, size_t block_bytes,
                                                                const void *w, const void *act, int64_t k) {
    const uint8_t *wb = w;
    const block_q8_K *a = act;
    float sum = 0.0f;
    for (int64_t i = 0; i < k / QK_K; i++) {
        block_unpacked u;
        unpack(wb + (size_t)i * block_bytes, &u);
        sum += (u.d * f32_from_bits(load_u32(a[i].d))) * (float)unpacked_isum_dotprod(&u, &a[i]);
    }
    return sum;
}

#define DOTPROD_KERNELS(T, block)                                                                          \
    static TARGET_DOTPROD float T##_dot_dotprod(const void *w, const void *a, int64_t k) {                 \
        return dot_unpacking_dotprod(T##_unpack, sizeof(block), w, a, k);                                  \
    }                                                                                                      \
    const type_kernels T##_kernels_neon_dotprod = { .act_type = TS_Q8_K, .dot = T##_dot_dotprod, .unpack = T##_unpack };

DOTPROD_KERNELS(iq2_xxs, block_iq2_xxs)
DOTPROD_KERNELS(iq2_xs, block_iq2_xs)
DOTPROD_KERNELS(iq2_s, block_iq2_s)
DOTPROD_KERNELS(iq3_xxs, block_iq3_xxs)
DOTPROD_KERNELS(iq3_s, block_iq3_s)
DOTPROD_KERNELS(iq1_s, block_iq1_s)
DOTPROD_KERNELS(iq1_m, block_iq1_m)
DOTPROD_KERNELS(tq1_0, block_tq1_0)
DOTPROD_KERNELS(tq2_0, block_tq2_0)
#endif
