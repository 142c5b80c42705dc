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
/* AVX2: the portable body, vectorized by the compiler. */
static TARGET_AVX2 float q5_k_dot_avx2(const void *w, const void *a, int64_t k) { return dot_q5_k_q8_k(w, a, k); }
const type_kernels q5_k_kernels_avx2 = { .act_type = TS_Q8_K, .dot = q5_k_dot_avx2 };

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
const type_kernels q5_k_kernels_avx512 = {
    .act_type = TS_Q8_K, .dot = q5_k_dot_avx512, .rows4 = q5_k_rows4_avx512,
    .tile = q5_k_tile_avx512, .tile_rows = 4, .tile_cols = 4,
    .lanes_unpack = q5_k_lanes_unpack_avx512, .lanes_tile = q5_k_lanes_tile_avx512,
    .lanes_sb_bytes = sizeof(k4_lanes), .lanes_min_cols = 5 };
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
