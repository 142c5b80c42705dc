/* Q5_K weights . Q8_K activations: per super-block
 *   d_a * (d * sum_g sc[g] sum(q a) - dmin * sum_g m[g] (bsum[2g] + bsum[2g+1]))
 * over the 8 groups of 32 with 5-bit q, integer inside. */
#include "kernels/kernels_internal.h"
#include "kernels/simd.h"
#include "kernels/q4_k_simd.h"

static ALWAYS_INLINE float dot_q5_k_q8_k(const void *w, const void *act, int64_t k) {
    const block_q5_K *x = w;
    const block_q8_K *y = act;
    float sum = 0.0f;
    for (int64_t i = 0; i < k / QK_K; i++) {
        int8_t q[QK_K];
        for (int c = 0; c < 4; c++)
            for (int l = 0; l < 32; l++) {
                uint8_t b = x[i].qs[32 * c + l], h = x[i].qh[l];
                q[64 * c + l] = (int8_t)((b & 0xf) | ((h >> (2 * c)) & 1) << 4);
                q[64 * c + 32 + l] = (int8_t)((b >> 4) | ((h >> (2 * c + 1)) & 1) << 4);
            }
        int32_t isum = 0, msum = 0;
        for (int g = 0; g < 8; g++) {
            int sc, m;
            kq_get_scale_min(x[i].scales, g, &sc, &m);
            isum += sc * dot_i8(q + 32 * g, y[i].qs + 32 * g, 32);
            msum += m * (q8k_bsum(y[i].bsums, 2 * g) + q8k_bsum(y[i].bsums, 2 * g + 1));
        }
        float da = f32_from_bits(load_u32(y[i].d));
        sum += da * (load_f16(x[i].d) * (float)isum - load_f16(x[i].dmin) * (float)msum);
    }
    return sum;
}

static float q5_k_dot_generic(const void *w, const void *a, int64_t k) { return dot_q5_k_q8_k(w, a, k); }

const type_kernels q5_k_kernels_generic = { .act_type = TS_Q8_K, .dot = q5_k_dot_generic };

#if defined(TS_X86)
/* AVX2: the body shared with Q4_K (q4_k_simd.h), with the fifth bit. The portable body, left to
 * the compiler, decoded the 1B Q5_K_M at 11.4 tok/s. */
static ALWAYS_INLINE TARGET_AVX2 void q5_k_avx2_body(const uint8_t *w, size_t ws, const uint8_t *a,
                                                     size_t as, int64_t k, float *y, long ys,
                                                     const int NR, const int NC) {
    k4_tile_avx2(w, ws, a, as, k, y, ys, NR, NC, 1);
}
DOT_FROM_BODY(TARGET_AVX2, q5_k_dot_avx2, q5_k_avx2_body)
TILE_FROM_BODY(TARGET_AVX2, q5_k_rows4_avx2, q5_k_avx2_body, 4, 1)
TILE_FROM_BODY(TARGET_AVX2, q5_k_tile_avx2, q5_k_avx2_body, 4, 4)
const type_kernels q5_k_kernels_avx2 = {
    .act_type = TS_Q8_K, .dot = q5_k_dot_avx2, .rows4 = q5_k_rows4_avx2,
    .tile = q5_k_tile_avx2, .tile_rows = 4, .tile_cols = 4 };

/* AVX-512: the Q4_K body (q4_k_simd.h) with the fifth bit. */
static ALWAYS_INLINE TARGET_AVX512 void q5_k_avx512_body(const uint8_t *w, size_t ws, const uint8_t *a,
                                                         size_t as, int64_t k, float *y, long ys,
                                                         const int NR, const int NC) {
    k4_tile_avx512(w, ws, a, as, k, y, ys, NR, NC, 1);
}

DOT_FROM_BODY(TARGET_AVX512, q5_k_dot_avx512, q5_k_avx512_body)
TILE_FROM_BODY(TARGET_AVX512, q5_k_rows4_avx512, q5_k_avx512_body, 4, 1)
TILE_FROM_BODY(TARGET_AVX512, q5_k_tile_avx512, q5_k_avx512_body, 4, 4)
/* rows in lanes: the body shared with Q4_K (q4_k_simd.h), with the fifth bits */
static TARGET_AVX512 void q5_k_lanes_unpack_avx512(const uint8_t *w, size_t ws, int64_t k, uint8_t *out) {
    k4_lanes_unpack(w, ws, k, out, 1);
}
LANES_FROM_BODY(q5_k_lanes_tile_avx512, k4_lanes_body, 4)

/* Rows in lanes kept (type_kernels.lanes_pack): k5_packed (q4_k_simd.h) */
static TARGET_AVX512 void q5_k_lanes_pack(const uint8_t *w, size_t ws, int64_t k, uint8_t *out) { k4_packed_pack(w, ws, k, out, 1); }
static void q5_k_lanes_row(const uint8_t *ub, size_t ws, int64_t k, int p, uint8_t *row) { k4_packed_row(ub, k, p, row, 1); }

/* 16 packed rows x NC positions (Q8_K): per 64 weights of a lane's 256, each of its qs dwords split
 * into nibbles, the fifth bits added under their masks (one masked add each), one dpbusd per nibble
 * and position; group 2c (the low nibbles of qs bytes 32c ..) and 2c + 1 (the high ones) times their
 * scales, the mins against the bsums pairs, then the portable kernel's float operations lane by lane. */
static ALWAYS_INLINE TARGET_AVX512 void q5_k_packed_body(const uint8_t *ub, const uint8_t *a, size_t as, int64_t k,
                                                         float *y, long ys, const int NC) {
    const __m512i low4 = _mm512_set1_epi8(0x0f), sixteen = _mm512_set1_epi8(16);
    __m512 sum[8];
    UNROLL
    for (int c = 0; c < NC; c++) sum[c] = _mm512_setzero_ps();
    for (int64_t i = 0; i < k / QK_K; i++) {
        const k5_packed *u = (const k5_packed *)ub + i;
        const block_q8_K *ab[LANES_MAX_NC];
        __m512i isum[LANES_MAX_NC], msum[LANES_MAX_NC];
        k_packed_start(a, as, i, NC, ab, isum, msum);
        const __m512i hi = _mm512_loadu_si512((const void *)u->k4.sm_hi);
        for (int ch = 0; ch < 4; ch++) {
            __m512i acc[2][8];
            UNROLL
            for (int c = 0; c < NC; c++) acc[0][c] = acc[1][c] = _mm512_setzero_si512();
            UNROLL
            for (int q = 0; q < 8; q++) {
                const int v = 8 * ch + q;
                k_packed_prefetch_step(u, sizeof *u, k, (size_t)v, 32);
                const __m512i r = _mm512_loadu_si512((const void *)u->k4.qs[v]);
                const __m512i lo = _mm512_and_si512(r, low4), hn = _mm512_and_si512(_mm512_srli_epi16(r, 4), low4);
                const __m512i lo5 = _mm512_mask_add_epi8(lo, _cvtu64_mask64(u->high[v][0]), lo, sixteen);
                const __m512i hn5 = _mm512_mask_add_epi8(hn, _cvtu64_mask64(u->high[v][1]), hn, sixteen);
                UNROLL
                for (int c = 0; c < NC; c++) {
                    acc[0][c] = _mm512_dpbusd_epi32(acc[0][c], lo5, _mm512_set1_epi32((int)load_u32((const uint8_t *)ab[c]->qs + 64 * ch + 4 * q)));
                    acc[1][c] = _mm512_dpbusd_epi32(acc[1][c], hn5, _mm512_set1_epi32((int)load_u32((const uint8_t *)ab[c]->qs + 64 * ch + 32 + 4 * q)));
                }
            }
            const __m512i sc_lo = k4_packed_field(&u->k4, hi, 2 * ch, 0), sc_hi = k4_packed_field(&u->k4, hi, 2 * ch + 1, 0);
            UNROLL
            for (int c = 0; c < NC; c++)
                isum[c] = _mm512_add_epi32(_mm512_add_epi32(isum[c], _mm512_mullo_epi32(acc[0][c], sc_lo)),
                                           _mm512_mullo_epi32(acc[1][c], sc_hi));
        }
        k4_packed_mins(&u->k4, hi, ab, NC, msum);
        k_packed_terms(sum, u->k4.d, u->k4.dmin, ab, isum, msum, NC);
    }
    UNROLL
    for (int c = 0; c < NC; c++) _mm512_storeu_ps(y + c * ys, sum[c]);
}
LANES_FROM_BODY(q5_k_packed_avx512, q5_k_packed_body, 8)

const type_kernels q5_k_kernels_avx512 = {
    .act_type = TS_Q8_K, .dot = q5_k_dot_avx512, .rows4 = q5_k_rows4_avx512,
    .tile = q5_k_tile_avx512, .tile_rows = 4, .tile_cols = 4,
    .lanes_unpack = q5_k_lanes_unpack_avx512, .lanes_tile = q5_k_lanes_tile_avx512,
    .lanes_sb_bytes = sizeof(k4_lanes), .lanes_min_cols = 5,
    .lanes_pack = q5_k_lanes_pack, .lanes_packed = q5_k_packed_avx512, .lanes_row = q5_k_lanes_row };
#endif

#if defined(__aarch64__)
/* NEON SDOT: the Q4_K body (q4_k_simd.h) with the fifth bit. */
static ALWAYS_INLINE TARGET_DOTPROD void q5_k_dotprod_body(const uint8_t *w, size_t ws, const uint8_t *a, size_t as,
                                                           int64_t k, float *y, long ys, const int NR, const int NC) {
    k4_tile_dotprod(w, ws, a, as, k, y, ys, NR, NC, 1);
}

DOT_FROM_BODY(TARGET_DOTPROD, q5_k_dot_dotprod, q5_k_dotprod_body)
TILE_FROM_BODY(TARGET_DOTPROD, q5_k_rows4_dotprod, q5_k_dotprod_body, 4, 1)
TILE_FROM_BODY(TARGET_DOTPROD, q5_k_tile_dotprod, q5_k_dotprod_body, 4, 4)
const type_kernels q5_k_kernels_neon_dotprod = {
    .act_type = TS_Q8_K, .dot = q5_k_dot_dotprod, .rows4 = q5_k_rows4_dotprod,
    .tile = q5_k_tile_dotprod, .tile_rows = 4, .tile_cols = 4 };
#endif
