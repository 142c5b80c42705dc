/* Q4_K weights . Q8_K activations: per super-block
 *   d_a * (d * sum_g sc[g] sum(q a) - dmin * sum_g m[g] (bsum[2g] + bsum[2g+1]))
 * over the 8 groups of 32 with 4-bit q; the sums are integers. Portable, AVX2/AVX-512 and NEON
 * (SDOT). */
#include <string.h>
#include "kernels/kernels_internal.h"
#include "kernels/simd.h"
#include "kernels/q4_k_simd.h"

static ALWAYS_INLINE float dot_q4_k_q8_k(const void *w, const void *act, int64_t k) {
    const block_q4_K *x = w;
    const block_q8_K *y = act;
    float sum = 0.0f;
    for (int64_t i = 0; i < k / QK_K; i++) {
        int8_t q[QK_K];
        UNROLL
        for (int c = 0; c < 4; c++)
            for (int l = 0; l < 32; l++) {
                q[64 * c + l] = (int8_t)(x[i].qs[32 * c + l] & 0xf);
                q[64 * c + 32 + l] = (int8_t)(x[i].qs[32 * c + l] >> 4);
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

static float q4_k_dot_generic(const void *w, const void *act, int64_t k) {
    return dot_q4_k_q8_k(w, act, k);
}

const type_kernels q4_k_kernels_generic = { .act_type = TS_Q8_K, .dot = q4_k_dot_generic };

#if defined(TS_X86)
/* AVX2: the body shared with Q5_K (q4_k_simd.h), without the fifth bit. */
static ALWAYS_INLINE TARGET_AVX2 void q4_k_avx2_body(const uint8_t *w, size_t ws, const uint8_t *a,
                                                     size_t as, int64_t k, float *y, long ys,
                                                     const int NR, const int NC) {
    k4_tile_avx2(w, ws, a, as, k, y, ys, NR, NC, 0);
}

/* AVX-512: the body shared with Q5_K (q4_k_simd.h), without the fifth bit. */
static ALWAYS_INLINE TARGET_AVX512 void q4_k_avx512_body(const uint8_t *w, size_t ws, const uint8_t *a,
                                                         size_t as, int64_t k, float *y, long ys,
                                                         const int NR, const int NC) {
    k4_tile_avx512(w, ws, a, as, k, y, ys, NR, NC, 0);
}

DOT_FROM_BODY(TARGET_AVX2, q4_k_dot_avx2, q4_k_avx2_body)
TILE_FROM_BODY(TARGET_AVX2, q4_k_rows4_avx2, q4_k_avx2_body, 4, 1)
TILE_FROM_BODY(TARGET_AVX2, q4_k_tile_avx2, q4_k_avx2_body, 4, 4)
const type_kernels q4_k_kernels_avx2 = {
    .act_type = TS_Q8_K, .dot = q4_k_dot_avx2, .rows4 = q4_k_rows4_avx2,
    .tile = q4_k_tile_avx2, .tile_rows = 4, .tile_cols = 4 };

/* rows in lanes: the body shared with Q5_K (q4_k_simd.h) */
static TARGET_AVX512 void q4_k_lanes_unpack_avx512(const uint8_t *w, size_t ws, int64_t k, uint8_t *out) {
    k4_lanes_unpack(w, ws, k, out, 0);
}
LANES_FROM_BODY(q4_k_lanes_tile_avx512, k4_lanes_body, 4)

/* Rows in lanes kept (type_kernels.lanes_pack): k4_packed (q4_k_simd.h) */
static TARGET_AVX512 void q4_k_lanes_pack(const uint8_t *w, size_t ws, int64_t k, uint8_t *out) { k4_packed_pack(w, ws, k, out, 0); }
static void q4_k_lanes_row(const uint8_t *ub, size_t ws, int64_t k, int p, uint8_t *row) { k4_packed_row(ub, k, p, row, 0); }

/* 16 packed rows x NC positions (ACT_Q8_K_NIBBLES: slot s holds group q8_k_nibble_slot(s), its quad
 * q the nibbles of qs dword 8 (s % 2) + q of half s / 4, low for s % 4 < 2): each slot's sums times
 * its scales; the mins against the activation's group sums; then the portable kernel's float
 * operations lane by lane (k4_term_16). 1 to 16 positions (LANES_MAX_NC; a speculation's 9 in one
 * pass instead of 5 + 4: its 1B forward 71.8 -> 62.0 ms): one slot a pass, in a loop (unrolled, GCC
 * kept every slot's sums alive at once and spilled them: 8 positions 14.6 -> 15.2 GB/s in L2, 5
 * positions 22 -> 23.5), the running sums in y itself. One position too: a kernel of its own, two
 * slots per load of the codes, was as fast alone (bench_matvec) but decoded the 1B at 29.9 against
 * 35.3 tok/s, each with the prefetch spread. The high nibbles are not shifted down: their sums are
 * 16 times theirs, so the low nibbles' scales are taken 16 times too and the whole sum divided by 16
 * at the end (exact: at most 8 slots x 16 x 63 x 32 x 15 x 127 < 2^31). Pass j takes scale group
 * j: slot 4 half + e + 2 h, its group q8_k_nibble_slot(slot) = 4 half + 2 e + h. */
static ALWAYS_INLINE TARGET_AVX512 void q4_k_packed_body(const uint8_t *ub, const uint8_t *a, size_t as, int64_t k,
                                                         float *y, long ys, const int NC) {
    UNROLL_16
    for (int c = 0; c < NC; c++) _mm512_storeu_ps(y + c * ys, _mm512_setzero_ps());
    for (int64_t i = 0; i < k / QK_K; i++) {
        const k4_packed *u = (const k4_packed *)ub + i;
        const block_q8_K *ab[LANES_MAX_NC];
        __m512i isum[LANES_MAX_NC], msum[LANES_MAX_NC];
        k_packed_start(a, as, i, NC, ab, isum, msum);
        const __m512i hi = _mm512_loadu_si512((const void *)u->sm_hi);
        NO_UNROLL
        for (size_t j = 0; j < 8; j++) {   /* the codes of half and e, nibble h (size_t: no sign extensions) */
            const size_t half = j >> 2, e = (j >> 1) & 1, h = j & 1;
            const __m512i nibble = _mm512_set1_epi8((char)(h ? 0xf0 : 0x0f));
            const uint8_t (*codes)[64] = u->qs + 16 * half + 8 * e;
            const size_t at = 32 * (4 * half + e + 2 * h);   /* the slot's activation bytes */
            __m512i acc[LANES_MAX_NC];
            UNROLL_16
            for (int c = 0; c < NC; c++) acc[c] = _mm512_setzero_si512();
            UNROLL
            for (int q = 0; q < 8; q++) {
                k_packed_prefetch_step(u, sizeof *u, k, 8 * j + (size_t)q, 64);
                const __m512i x = _mm512_and_si512(_mm512_loadu_si512((const void *)codes[q]), nibble);
                UNROLL_16
                for (int c = 0; c < NC; c++)
                    acc[c] = _mm512_dpbusd_epi32(acc[c], x, _mm512_set1_epi32((int)load_u32((const uint8_t *)ab[c]->qs + at + 4 * q)));
            }
            const __m512i sc = _mm512_sll_epi32(k4_packed_field(u, hi, (int)j, 0), _mm_cvtsi32_si128((int)(4 - 4 * h)));
            UNROLL_16
            for (int c = 0; c < NC; c++) isum[c] = _mm512_add_epi32(isum[c], _mm512_mullo_epi32(acc[c], sc));
        }
        k4_packed_mins(u, hi, ab, NC, msum);
        const __m512 d = _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *)u->d));
        const __m512 dmin = _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *)u->dmin));
        UNROLL_16
        for (int c = 0; c < NC; c++)
            _mm512_storeu_ps(y + c * ys, k4_term_16(_mm512_loadu_ps(y + c * ys), _mm512_set1_ps(f32_from_bits(load_u32(ab[c]->d))),
                                                    d, dmin, _mm512_srai_epi32(isum[c], 4), msum[c]));
    }
}
LANES_FROM_BODY_16(q4_k_packed_avx512, q4_k_packed_body)

DOT_FROM_BODY(TARGET_AVX512, q4_k_dot_avx512, q4_k_avx512_body)
TILE_FROM_BODY(TARGET_AVX512, q4_k_rows4_avx512, q4_k_avx512_body, 4, 1)
TILE_FROM_BODY(TARGET_AVX512, q4_k_tile_avx512, q4_k_avx512_body, 4, 4)
const type_kernels q4_k_kernels_avx512 = {
    .act_type = ACT_Q8_K_NIBBLES, .dot = q4_k_dot_avx512, .rows4 = q4_k_rows4_avx512,
    .tile = q4_k_tile_avx512, .tile_rows = 4, .tile_cols = 4,
    .lanes_unpack = q4_k_lanes_unpack_avx512, .lanes_tile = q4_k_lanes_tile_avx512,
    .lanes_sb_bytes = sizeof(k4_lanes), .lanes_min_cols = 5,
    .lanes_pack = q4_k_lanes_pack, .lanes_packed = q4_k_packed_avx512, .lanes_packed_widest = LANES_MAX_NC, .lanes_row = q4_k_lanes_row };
#endif

#if defined(__aarch64__)
/* NEON SDOT: the shared body (q4_k_simd.h) */
static ALWAYS_INLINE TARGET_DOTPROD void q4_k_dotprod_body(const uint8_t *w, size_t ws, const uint8_t *a, size_t as,
                                                           int64_t k, float *y, long ys, const int NR, const int NC) {
    k4_tile_dotprod(w, ws, a, as, k, y, ys, NR, NC, 0);
}

DOT_FROM_BODY(TARGET_DOTPROD, q4_k_dot_dotprod, q4_k_dotprod_body)
TILE_FROM_BODY(TARGET_DOTPROD, q4_k_rows4_dotprod, q4_k_dotprod_body, 4, 1)
TILE_FROM_BODY(TARGET_DOTPROD, q4_k_tile_dotprod, q4_k_dotprod_body, 4, 4)
const type_kernels q4_k_kernels_neon_dotprod = {
    .act_type = TS_Q8_K, .dot = q4_k_dot_dotprod, .rows4 = q4_k_rows4_dotprod,
    .tile = q4_k_tile_dotprod, .tile_rows = 4, .tile_cols = 4 };
#endif
