/* The kernels of rows unpacked into block_unpacked (unpacked_dot.h): a batch on a grid or ternary
 * type multiplies its rows unpacked once per cache block (matmul.c) with these tiles, each output
 * the bits of the packed type's row kernel. */
#include "kernels/unpacked_dot.h"

static float unpacked_dot_generic(const void *w, const void *act, int64_t k) {
    const block_unpacked *u = w;
    const block_q8_K *a = act;
    float sum = 0.0f;
    for (int64_t i = 0; i < k / QK_K; i++) sum += (u[i].d * f32_from_bits(load_u32(a[i].d))) * (float)unpacked_isum(&u[i], &a[i]);
    return sum;
}

const type_kernels unpacked_kernels_generic = { .act_type = TS_Q8_K, .dot = unpacked_dot_generic };

#if defined(TS_X86)
/* Tiles over unpacked rows. The codes are taken as unsigned bytes u = q + 64 (|q| <= 62, kernels_internal.h),
 * once per row for the NC activation rows, so a product is one maddubs(u, a) with no sign work per
 * pair; the offset comes back once per super-block from the activations' block sums:
 *   sum_g sc[g] sum_e q a = sum_g sc[g] sum_e u a - 64 sum_g sc[g] bsum[g]
 * (maddubs cannot saturate: 2 * 126 * 127 < 32767). The same integers, so the row kernel's bits. */
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
        UNROLL
        for (int r = 0; r < NR; r++) {
            const __m256i offset = _mm256_slli_epi16(_mm256_loadu_si256((const __m256i *)ub[r]->sc), 6);
            UNROLL
            for (int c = 0; c < NC; c++)
                acc[r][c] = _mm256_sub_epi32(acc[r][c], _mm256_madd_epi16(_mm256_loadu_si256((const __m256i *)ab[c]->bsums), offset));
        }
        for (int h = 0; h < 8; h++) {
            __m256i u[4], sc[4];
            UNROLL
            for (int r = 0; r < NR; r++) {
                u[r] = _mm256_add_epi8(_mm256_loadu_si256((const __m256i *)(ub[r]->q + 32 * h)), _mm256_set1_epi8(64));
                sc[r] = scales_2_avx2(ub[r]->sc + 2 * h);
            }
            UNROLL
            for (int c = 0; c < NC; c++) {
                const __m256i av = _mm256_loadu_si256((const __m256i *)(ab[c]->qs + 32 * h));
                UNROLL
                for (int r = 0; r < NR; r++)
                    acc[r][c] = _mm256_add_epi32(acc[r][c], _mm256_madd_epi16(_mm256_maddubs_epi16(u[r], av), sc[r]));
            }
        }
        UNROLL
        for (int r = 0; r < NR; r++)
            UNROLL
            for (int c = 0; c < NC; c++)
                sum[r][c] += (ub[r]->d * f32_from_bits(load_u32(ab[c]->d))) * (float)hsum_i32x8(acc[r][c]);
    }
    UNROLL
    for (int r = 0; r < NR; r++) for (int c = 0; c < NC; c++) y[c * ys + r] = sum[r][c];
}

DOT_FROM_BODY(TARGET_AVX2, unpacked_dot_avx2, unpacked_avx2_body)
TILE_FROM_BODY(TARGET_AVX2, unpacked_tile_avx2, unpacked_avx2_body, 4, 4)
const type_kernels unpacked_kernels_avx2 = {
    .act_type = TS_Q8_K, .dot = unpacked_dot_avx2, .tile = unpacked_tile_avx2, .tile_rows = 4, .tile_cols = 4 };

/* ---- AVX-512: 64 codes per step; (q + 64) . a by maddubs, the pairs times the group scales and
 * added into int32 lanes by VNNI's dpwssd; the offset's term likewise, once per super-block ---- */

/* The int16 scale vector of codes 64 h .. 64 h + 63 from a super-block's 16 scales (low lanes of
 * sc16): groups 4h .. 4h + 3, 8 int16 lanes each, by one permute. */
static ALWAYS_INLINE TARGET_AVX512 __m512i scales_4_avx512(__m512i sc16, int h) {
    const short g = (short)(4 * h);
    return _mm512_permutexvar_epi16(_mm512_set_epi16(g + 3, g + 3, g + 3, g + 3, g + 3, g + 3, g + 3, g + 3,
                                                     g + 2, g + 2, g + 2, g + 2, g + 2, g + 2, g + 2, g + 2,
                                                     g + 1, g + 1, g + 1, g + 1, g + 1, g + 1, g + 1, g + 1,
                                                     g, g, g, g, g, g, g, g), sc16);
}

static ALWAYS_INLINE TARGET_AVX512 void unpacked_avx512_body(const uint8_t *w, size_t ws, const uint8_t *a, size_t as,
                                                             int64_t k, float *y, long ys, const int NR, const int NC) {
    float sum[4][4] = { { 0.0f } };
    for (int64_t i = 0; i < k / QK_K; i++) {
        const block_unpacked *ub[4];
        const block_q8_K *ab[4];
        UNROLL
        for (int r = 0; r < NR; r++) ub[r] = (const block_unpacked *)(w + r * ws) + i;
        UNROLL
        for (int c = 0; c < NC; c++) ab[c] = (const block_q8_K *)(a + c * as) + i;
        __m512i acc[4][4];
        UNROLL
        for (int r = 0; r < NR; r++) for (int c = 0; c < NC; c++) acc[r][c] = _mm512_setzero_si512();
        __m512i sc16[4];
        UNROLL
        for (int r = 0; r < NR; r++) {
            const __m256i s = _mm256_loadu_si256((const __m256i *)ub[r]->sc);
            sc16[r] = _mm512_zextsi256_si512(s);
            /* -64 sc[g] in the low 16 lanes, zeros above */
            const __m512i offset = _mm512_zextsi256_si512(_mm256_sub_epi16(_mm256_setzero_si256(), _mm256_slli_epi16(s, 6)));
            UNROLL
            for (int c = 0; c < NC; c++)
                acc[r][c] = _mm512_dpwssd_epi32(acc[r][c], _mm512_zextsi256_si512(_mm256_loadu_si256((const __m256i *)ab[c]->bsums)), offset);
        }
        for (int h = 0; h < 4; h++) {
            __m512i u[4], sc[4];
            UNROLL
            for (int r = 0; r < NR; r++) {
                u[r] = _mm512_add_epi8(_mm512_loadu_si512((const void *)(ub[r]->q + 64 * h)), _mm512_set1_epi8(64));
                sc[r] = scales_4_avx512(sc16[r], h);
            }
            UNROLL
            for (int c = 0; c < NC; c++) {
                const __m512i av = _mm512_loadu_si512((const void *)(ab[c]->qs + 64 * h));
                UNROLL
                for (int r = 0; r < NR; r++) acc[r][c] = _mm512_dpwssd_epi32(acc[r][c], _mm512_maddubs_epi16(u[r], av), sc[r]);
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

#endif

#if defined(__aarch64__)
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
#endif
