/* The SIMD kernel sets against independent computations, for every weight type, on odd sizes:
 * - a quantized-activation dot (portable, AVX2, AVX-512, NEON) equals the double-precision dot of
 *   the dequantized weights with the dequantized activations (integer sums are exact, so only
 *   f32 rounding separates them);
 * - it is within the activation quantization error of the scalar reference dot_f32 (bounded by
 *   sum |w| |x - dequant(quant(x))|);
 * - the activation quantizers keep every value within half a step (plus the scale's f16 rounding
 *   error times 127 for Q8_0), their Q8_K block sums are the
 *   sums of the codes, and the SIMD quantizers agree with the reference ones (same scales, codes
 *   within one);
 * - the register tile kernels give bitwise the row kernel's outputs;
 * - matmul: threaded == single-threaded, batched == one position at a time, exactly;
 * - the attention kernels of every KV cache type (f32, f16, q8_0) equal double-precision scores
 *   and weighted sums of the keys and values as stored (within f32 rounding: 2e-6 of the sum of
 *   the magnitudes; the portable kernels multiply and add, the SIMD ones fuse), give the same bits
 *   whether keys are scored in one run or several, and read a wrapped ring exactly as the same
 *   rows laid out in order;
 * - the gated delta rule's scan of every set gives the portable kernel's bits, a position at a time. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "check.h"
#include "kernels/simd.h"
#include "kernels/matmul.h"
#include "kernels/attention.h"
#include "kernels/recurrence.h"
#include "kernels/types.h"
#include "kernels/f16.h"

typedef struct { uint64_t s; double spare; bool has_spare; } rng;
static uint32_t rng_u32(rng *r) {
    r->s ^= r->s >> 12; r->s ^= r->s << 25; r->s ^= r->s >> 27;
    return (uint32_t)((r->s * 0x2545F4914F6CDD1DULL) >> 32);
}
/* Normal deviates by Marsaglia's polar method, two per logarithm and no cosine: the random weights
 * and activations took a fifth of this test's time natively and half of it under qemu with Box-Muller. */
static float rng_gauss(rng *r) {
    if (r->has_spare) { r->has_spare = false; return (float)r->spare; }
    double u, v, s;
    do {
        u = rng_u32(r) / 2147483648.0 - 1.0;
        v = rng_u32(r) / 2147483648.0 - 1.0;
        s = u * u + v * v;
    } while (s >= 1.0 || s == 0.0);
    const double m = sqrt(-2.0 * log(s) / s);
    r->spare = v * m;
    r->has_spare = true;
    return (float)(u * m);
}

static const int TYPES[] = { TS_F32, TS_F16, TS_BF16, TS_Q8_0, TS_Q4_0, TS_Q4_1, TS_Q5_0, TS_Q5_1,
                             TS_Q2_K, TS_Q3_K, TS_Q4_K, TS_Q5_K, TS_Q6_K, TS_IQ4_NL, TS_IQ4_XS, TS_MXFP4,
                             TS_IQ2_XXS, TS_IQ2_XS, TS_IQ2_S, TS_IQ3_XXS, TS_IQ3_S, TS_IQ1_S, TS_IQ1_M,
                             TS_TQ1_0, TS_TQ2_0, TS_NVFP4, TS_Q1_0, TS_Q2_0 };
/* The low-bit types of README-iq-grid: the same integer sums and float operations in every set
 * (unpacked_dot.h, nvfp4_dot.c, q1_0_dot.c, q2_0_dot.c), so every kernel gives the portable one's bits. */
static bool is_lowbit(int type) {
    switch (type) {
    case TS_IQ2_XXS: case TS_IQ2_XS: case TS_IQ2_S: case TS_IQ3_XXS: case TS_IQ3_S: case TS_IQ1_S: case TS_IQ1_M:
    case TS_TQ1_0: case TS_TQ2_0: case TS_NVFP4: case TS_Q1_0: case TS_Q2_0:
    case TS_Q3_K:   /* an unpacking type too (q3_k_dot.c) */
    case TS_Q2_K:   /* its min term exact in integers too (q2_k_dot.c) */
        return true;
    default: return false;
    }
}
#define N_TYPES (int)(sizeof TYPES / sizeof TYPES[0])

/* Odd sizes: k not a multiple of the vector width where the format allows it. */
static int64_t test_k(int type) {
    if (type_block_size(type) == 1) return 203;
    if (type_block_size(type) == 32) return 32 * 7;
    if (type_block_size(type) == 64) return 64 * 7;     /* 14 activation blocks: the 4 lanes unequal */
    if (type_block_size(type) == 128) return 128 * 5;
    return 256 * 3;
}

/* rows x k weights quantized by the engine's quantizer, with a per-row scale and an offset so
 * the min/offset terms of the affine formats matter. */
static uint8_t *random_weights(rng *r, int type, int rows, int64_t k, size_t *row_bytes) {
    const type_traits *tt = type_get(type);
    *row_bytes = type_row_bytes(type, k);
    uint8_t *w = malloc((size_t)rows * *row_bytes);
    float *src = malloc((size_t)k * sizeof(float));
    for (int i = 0; i < rows; i++) {
        if (!tt->quantize_row) {
            /* the types without a quantizer: random bytes (every grid entry, sign pattern and code),
             * each block redrawn until its values are finite and moderate (random scale fields) */
            const int bs = type_block_size(type);
            const size_t bb = type_block_bytes(type);
            for (int64_t b = 0; b < k / bs; b++) {
                uint8_t *blk = w + (size_t)i * *row_bytes + b * bb;
                for (bool ok = false; !ok;) {
                    for (size_t j = 0; j < bb; j++) blk[j] = (uint8_t)rng_u32(r);
                    tt->dequant_row(blk, src, bs);
                    ok = true;
                    for (int j = 0; j < bs; j++) ok &= isfinite(src[j]) && fabsf(src[j]) < 100.0f;
                }
            }
            continue;
        }
        float scale = 0.02f * (1 + i % 3), shift = (i % 2) ? 0.01f : 0.0f;
        for (int64_t j = 0; j < k; j++) src[j] = scale * rng_gauss(r) + shift;
        tt->quantize_row(src, w + (size_t)i * *row_bytes, k);
        /* MXFP4: some blocks with the extreme exponents (0 and 1 give subnormal scales) */
        if (type == TS_MXFP4) w[(size_t)i * *row_bytes + 17 * (i % 7)] = (uint8_t)(int[]){ 0, 1, 2, 150 }[i % 4];
    }
    free(src);
    return w;
}

static void random_acts(rng *r, float *x, int64_t k) {
    for (int64_t j = 0; j < k; j++) x[j] = rng_gauss(r) * (j % 17 == 0 ? 4.0f : 1.0f);
}

static const char *ISA_NAMES[] = { "scalar", "avx2", "avx512", "neon", "portable" };

static void check_quantizers(const kernel_set *ks, rng *r) {
    const char *isa = ISA_NAMES[ks->level];
    const int64_t k = 512;
    float x[512], deq[512];
    random_acts(r, x, k);
    x[5] = 0.0f; x[300] = -x[301];   /* a zero and a symmetric pair */
    /* halfway cases: max|x| 127 makes the step 1 in Q8_0 block 1 and Q8_K block 0 */
    x[32] = 127.0f;
    for (int j = 33; j < 64; j++) x[j] = (float)(j - 48) + 0.5f;
    struct { int type; quantize_act_fn q; } fmt[2] = { { TS_Q8_0, ks->quantize_q8_0 }, { TS_Q8_K, ks->quantize_q8_k } };
    for (int f = 0; f < 2; f++) {
        const type_traits *tt = type_get(fmt[f].type);
        const int bsize = type_block_size(fmt[f].type);
        const size_t bbytes = type_block_bytes(fmt[f].type);
        size_t bytes = type_row_bytes(fmt[f].type, k);
        uint8_t *a = malloc(bytes), *ref = malloc(bytes);
        fmt[f].q(x, a, k);
        tt->quantize_row(x, ref, k);
        tt->dequant_row(a, deq, k);
        int bad = 0, code_diff = 0, scale_diff = 0, bsum_bad = 0;
        for (int64_t b = 0; b < k / bsize; b++) {
            float amax = 0;
            for (int j = 0; j < bsize; j++) amax = fmaxf(amax, fabsf(x[b * bsize + j]));
            const uint8_t *blk = a + b * bbytes, *rblk = ref + b * bbytes;
            float step = fmt[f].type == TS_Q8_0 ? f16_to_f32((uint16_t)(blk[0] | blk[1] << 8))
                                                : (float)(amax / 127.0f);
            if (memcmp(blk, rblk, fmt[f].type == TS_Q8_0 ? 2 : 4) != 0) scale_diff++;
            const int8_t *qs = (const int8_t *)blk + (fmt[f].type == TS_Q8_0 ? 2 : 4);
            const int8_t *rqs = (const int8_t *)rblk + (fmt[f].type == TS_Q8_0 ? 2 : 4);
            for (int j = 0; j < bsize; j++) {
                int64_t e = b * bsize + j;
                /* Q8_0 codes may be chosen against the unrounded scale amax / 127 */
                float slack = 127.0f * fabsf(step - amax / 127.0f);
                if (fabsf(x[e] - deq[e]) > (0.5f * step + slack) * 1.0001f + 1e-30f) bad++;
                if (abs(qs[j] - rqs[j]) > 1) code_diff++;
            }
            if (fmt[f].type == TS_Q8_K)
                for (int g = 0; g < 16; g++) {
                    int s = 0;
                    for (int j = 0; j < 16; j++) s += qs[16 * g + j];
                    if (q8k_bsum(blk + 4 + 256, g) != s) bsum_bad++;
                }
        }
        CHECK(bad == 0 && code_diff == 0 && scale_diff == 0 && bsum_bad == 0,
              "%s: %s activation quantizer: within half a step (%d off), codes within 1 of the reference "
              "(%d off), same scales (%d differ), block sums (%d wrong)", isa, type_name(fmt[f].type), bad, code_diff,
              scale_diff, bsum_bad);
        /* every set quantizes activations to the same bytes: the portable quantizers (the NEON
         * set's) are the x86 ones in C, halfway cases to even included */
        uint8_t *portable = malloc(bytes);
        (fmt[f].type == TS_Q8_0 ? act_quantize_q8_0_generic : act_quantize_q8_k_generic)(x, portable, k);
        CHECK(memcmp(a, portable, bytes) == 0, "%s: %s activation quantizer makes the portable quantizer's bytes",
              isa, type_name(fmt[f].type));
        free(a); free(ref); free(portable);
    }
    if (ks->quantize_q8_0x2) {
        /* the paired layout holds the set's Q8_0 values exactly; 7 blocks end in a half pair */
        const int64_t k7 = 7 * 32;
        uint8_t q[7 * 34], pairs[4 * 128];
        float v1[7 * 32], v2[7 * 32];
        ks->quantize_q8_0(x, q, k7);
        ks->quantize_q8_0x2(x, pairs, k7);
        type_get(TS_Q8_0)->dequant_row(q, v1, k7);
        act_dequant(ACT_Q8_0X2, pairs, v2, k7);
        int pad_ok = 1;
        for (int j = 32; j < 64; j++) pad_ok &= pairs[3 * 128 + j] == 128;
        for (int j = 96; j < 128; j++) pad_ok &= pairs[3 * 128 + j] == 0;
        CHECK(memcmp(v1, v2, sizeof v1) == 0 && pad_ok && act_row_bytes(ACT_Q8_0X2, k7) == 4 * 128,
              "%s: paired Q8_0 activations hold the Q8_0 quantizer's values exactly, half pair padded", isa);
    }
    if (ks->quantize_q8_k_nibbles) {
        /* the Q4_K code order holds the set's Q8_K values and sums exactly; every group moved as said */
        uint8_t q[2 * 292], nib[2 * 292];
        float v1[512], v2[512];
        ks->quantize_q8_k(x, q, k);
        ks->quantize_q8_k_nibbles(x, nib, k);
        type_get(TS_Q8_K)->dequant_row(q, v1, k);
        act_dequant(ACT_Q8_K_NIBBLES, nib, v2, k);
        int same_sums = 1, moved = 0;
        for (int b = 0; b < 2; b++) {
            same_sums &= memcmp(q + b * 292, nib + b * 292, 4) == 0 && memcmp(q + b * 292 + 260, nib + b * 292 + 260, 32) == 0;
            for (int g = 0; g < 8; g++)   /* group g of 32 codes at slot 0 2 1 3 4 6 5 7 */
                moved += memcmp(q + b * 292 + 4 + 32 * g, nib + b * 292 + 4 + 32 * (int[]){ 0, 2, 1, 3, 4, 6, 5, 7 }[g], 32) == 0;
        }
        CHECK(memcmp(v1, v2, sizeof v1) == 0 && same_sums && moved == 16 && act_row_bytes(ACT_Q8_K_NIBBLES, k) == 2 * 292,
              "%s: Q8_K activations in Q4_K code order hold the Q8_K quantizer's values, scales and sums exactly", isa);
    }
    if (ks->quantize_q8_k_planes) {
        /* the 4-byte grids' plane order: element 4 e + j at 64 j + e (written out here, not through
         * q8_k_plane_slot), same scales and sums */
        uint8_t q[2 * 292], pl[2 * 292];
        float v1[512], v2[512];
        ks->quantize_q8_k(x, q, k);
        ks->quantize_q8_k_planes(x, pl, k);
        type_get(TS_Q8_K)->dequant_row(q, v1, k);
        act_dequant(ACT_Q8_K_PLANES, pl, v2, k);
        int same_sums = 1, moved = 0;
        for (int b = 0; b < 2; b++) {
            same_sums &= memcmp(q + b * 292, pl + b * 292, 4) == 0 && memcmp(q + b * 292 + 260, pl + b * 292 + 260, 32) == 0;
            for (int e = 0; e < 64; e++)
                for (int j = 0; j < 4; j++) moved += q[b * 292 + 4 + 4 * e + j] == pl[b * 292 + 4 + 64 * j + e];
        }
        CHECK(memcmp(v1, v2, sizeof v1) == 0 && same_sums && moved == 512 && act_row_bytes(ACT_Q8_K_PLANES, k) == 2 * 292,
              "%s: Q8_K activations in grid-plane order hold the Q8_K quantizer's values, scales and sums exactly", isa);
    }
}

/* The portable kernels (the reference for every ISA; the NEON kernels give their bits) on this machine. */
static const kernel_set portable = {
    .level = SIMD_COUNT,   /* labelled "portable" */
    .quantize_q8_0 = act_quantize_q8_0_generic, .quantize_q8_k = act_quantize_q8_k_generic,
    .types = {
        [TS_F32] = &f32_kernels_generic, [TS_F16] = &f16_kernels_generic, [TS_BF16] = &bf16_kernels_generic,
        [TS_Q8_0] = &q8_0_kernels_generic, [TS_Q4_0] = &q4_0_kernels_generic, [TS_Q4_1] = &q4_1_kernels_generic,
        [TS_Q5_0] = &q5_0_kernels_generic, [TS_Q5_1] = &q5_1_kernels_generic, [TS_Q2_K] = &q2_k_kernels_generic,
        [TS_Q3_K] = &q3_k_kernels_generic, [TS_Q4_K] = &q4_k_kernels_generic, [TS_Q5_K] = &q5_k_kernels_generic,
        [TS_Q6_K] = &q6_k_kernels_generic, [TS_IQ4_NL] = &iq4_nl_kernels_generic,
        [TS_IQ4_XS] = &iq4_xs_kernels_generic, [TS_MXFP4] = &mxfp4_kernels_generic,
        [TS_IQ2_XXS] = &iq2_xxs_kernels_generic, [TS_IQ2_XS] = &iq2_xs_kernels_generic,
        [TS_IQ2_S] = &iq2_s_kernels_generic, [TS_IQ3_XXS] = &iq3_xxs_kernels_generic,
        [TS_IQ3_S] = &iq3_s_kernels_generic, [TS_IQ1_S] = &iq1_s_kernels_generic,
        [TS_IQ1_M] = &iq1_m_kernels_generic, [TS_TQ1_0] = &tq1_0_kernels_generic,
        [TS_TQ2_0] = &tq2_0_kernels_generic, [TS_NVFP4] = &nvfp4_kernels_generic,
        [TS_Q1_0] = &q1_0_kernels_generic, [TS_Q2_0] = &q2_0_kernels_generic,
    } };

/* One type under one kernel set. */
static void check_type(const kernel_set *ks, int type, rng *r) {
    const char *isa = ISA_NAMES[ks->level];
    const type_traits *tt = type_get(type);
    const type_kernels *tk = ks->types[type];
    const char *tname = type_name(type);
    const int rows = 9, cols = 6;
    const int64_t k = test_k(type);
    size_t rb;
    uint8_t *w = random_weights(r, type, rows, k, &rb);
    float *x = malloc((size_t)cols * k * sizeof(float)), *wd = malloc((size_t)k * sizeof(float));
    float *ad = malloc((size_t)k * sizeof(float));
    for (int c = 0; c < cols; c++) random_acts(r, x + c * k, k);
    size_t as = act_row_bytes(tk->act_type, k);
    uint8_t *act = malloc((size_t)cols * as);
    for (int c = 0; c < cols; c++) {
        if (tk->act_type == TS_F32) memcpy(act + c * as, x + c * k, as);
        else act_quantizer(ks, tk->act_type)(x + c * k, act + c * as, k);
    }
    double worst_exact = 0, worst_ref = 0;
    float y[6][9];
    /* kernels that do the portable kernel's float operations on the same integer sums: the
     * AVX-512 K-quants, and every NEON kernel */
    const type_kernels *same_bits = ks->level == SIMD_NEON || is_lowbit(type) ? portable.types[type]
                                    : ks->level != SIMD_AVX512 ? NULL
                                    : type == TS_Q4_K ? &q4_k_kernels_generic
                                    : type == TS_Q5_K ? &q5_k_kernels_generic
                                    : type == TS_Q6_K ? &q6_k_kernels_generic : NULL;
    int same_bits_diff = 0;
    /* the portable kernel reads its own format (plain Q8_K for the K-quants): the set's quantizer
     * into that format gives it the same values */
    const size_t ps = same_bits ? act_row_bytes(same_bits->act_type, k) : 0;
    uint8_t *plain = same_bits ? malloc(ps * cols) : NULL;
    for (int c = 0; plain && c < cols; c++) {
        if (same_bits->act_type == TS_F32) memcpy(plain + c * ps, x + c * k, ps);
        else act_quantizer(ks, same_bits->act_type)(x + c * k, plain + c * ps, k);
    }
    for (int i = 0; i < rows; i++) {
        tt->dequant_row(w + i * rb, wd, k);
        for (int c = 0; c < cols; c++) {
            const float *xc = x + c * k;
            if (tk->act_type == TS_F32) memcpy(ad, xc, k * sizeof(float));
            else act_dequant(tk->act_type, act + c * as, ad, k);
            double exact = 0, mag = 0, qerr = 0;
            for (int64_t j = 0; j < k; j++) {
                exact += (double)wd[j] * ad[j];
                mag += fabs((double)wd[j] * ad[j]);
                qerr += fabs((double)wd[j]) * fabs((double)xc[j] - ad[j]);
            }
            float got = tk->dot(w + i * rb, act + c * as, k);
            y[c][i] = got;
            if (same_bits) {
                float want = same_bits->dot(w + i * rb, plain + c * ps, k);
                same_bits_diff += memcmp(&got, &want, 4) != 0;
            }
            double e1 = fabs(got - exact) / (mag + 1e-30);
            if (e1 > worst_exact) worst_exact = e1;
            double ref = tt->dot_f32(w + i * rb, xc, k);
            double e2 = fabs(got - ref) / (qerr + 1e-5 * mag + 1e-30);
            if (e2 > worst_ref) worst_ref = e2;
        }
    }
    CHECK(worst_exact <= 2e-6, "%s: %s dot (k=%lld) equals the double dot of the dequantized operands "
          "(worst error %.3g of sum|w a|)", isa, tname, (long long)k, worst_exact);
    CHECK(worst_ref <= 1.0, "%s: %s dot is within the activation rounding of the scalar reference "
          "(worst %.3g of the bound)", isa, tname, worst_ref);
    if (same_bits)
        CHECK(same_bits_diff == 0, "%s: %s dot equals the portable kernel's bit for bit (%d of %d differ)", isa, tname,
              same_bits_diff, rows * cols);
    if (tk->tile) {
        /* two tiles at odd offsets, compared with the row kernel's outputs in y */
        float t[6][9];
        memset(t, 0, sizeof t);
        int diff = 0, R = tk->tile_rows, C = tk->tile_cols;
        const int r0s[2] = { 1, rows - R }, c0s[2] = { cols - C, 1 };
        for (int v = 0; v < 2; v++) {
            int r0 = r0s[v], c0 = c0s[v];
            tk->tile(w + r0 * rb, rb, act + c0 * as, as, k, &t[c0][r0], 9);
            for (int c = c0; c < c0 + C; c++)
                for (int i = r0; i < r0 + R; i++) if (memcmp(&t[c][i], &y[c][i], 4)) diff++;
        }
        CHECK(diff == 0, "%s: %s %dx%d tiles equal the row kernel bit for bit (%d differ)", isa, tname, R, C, diff);
    }
    if (tk->rows4) {
        /* 4 rows x 1 position at odd offsets, against the row kernel's outputs */
        float t[6][9];
        memset(t, 0, sizeof t);
        int diff = 0;
        for (int c = 0; c < cols; c++)
            for (int r0 = c % 2; r0 + 4 <= rows; r0 += 5) {
                tk->rows4(w + r0 * rb, rb, act + c * as, as, k, &t[c][r0], 9);
                for (int i = r0; i < r0 + 4; i++) if (memcmp(&t[c][i], &y[c][i], 4)) diff++;
            }
        CHECK(diff == 0, "%s: %s 4x1 row kernels equal the row kernel bit for bit (%d differ)", isa, tname, diff);
    }
    free(w); free(x); free(wd); free(ad); free(act); free(plain);
}

/* matmul: batched/threaded equals one position at a time on one thread, bit for bit; with 600
 * rows a product is several chunks, which the 3 threads share out and take from each other. The
 * position counts take a batch kernel's every width (rows in lanes: 4 at a time, then 1 to 3).
 * lanes: the rows kept in lanes (weight.lanes, type_kernels.lanes_pack; rows a multiple of 16),
 * against the plain rows one at a time, and each row put together again equals its bytes. */
static void check_matmul(const kernel_set *ks, int type, int rows, int n, bool lanes, rng *r) {
    const int level = ks->level;
    const type_kernels *tk = ks->types[type];
    if (lanes && (!tk || !tk->lanes_pack)) return;
    const int64_t k = test_k(type);
    size_t rb;
    uint8_t *data = random_weights(r, type, rows, k, &rb), *packed = NULL;
    weight w = { .type = type, .rows = rows, .cols = k, .row_bytes = rb, .data = data, .name = "w" }, wl = w;
    if (lanes) {
        const size_t prb = lanes_packed_row_bytes(tk, rb, k);
        packed = malloc((size_t)rows * prb);
        for (int i = 0; i < rows; i += 16) tk->lanes_pack(data + (size_t)i * rb, rb, k, packed + (size_t)i * prb);
        if (tk->lanes_row) {
            uint8_t *row = malloc(rb);
            int rows_back = 0;
            for (int i = 0; i < rows; i++) {
                tk->lanes_row(packed + (size_t)(i / 16 * 16) * prb, prb, k, i % 16, row);
                rows_back += memcmp(row, data + (size_t)i * rb, rb) == 0;
            }
            free(row);
            CHECK(rows_back == rows, "%s: %s rows kept in lanes: each row put together again equals its bytes (%d of %d)",
                  ISA_NAMES[level], type_name(type), rows_back, rows);
        }
        wl.data = packed;
        wl.row_bytes = prb;
        wl.lanes = true;
    }
    float *x = malloc((size_t)n * k * sizeof(float));
    for (int t = 0; t < n; t++) random_acts(r, x + t * k, k);
    float *y1 = calloc((size_t)n * rows, sizeof(float)), *y3 = calloc((size_t)n * rows, sizeof(float));
    float *y3v = calloc((size_t)n * rows, sizeof(float));
    size_t sb = matmul_scratch_bytes(n, k);
    thread_pool *p1 = thread_pool_new(1), *p3 = thread_pool_new(3);
    matmul_ctx m1 = { p1, ks, malloc(sb), sb }, m3 = { p3, ks, malloc(sb), sb };
    for (int t = 0; t < n; t++) matmul(&m1, &w, x + t * k, k, 1, y1 + t * rows, rows);
    for (int t = 0; t < n; t++) matmul(&m3, &wl, x + t * k, k, 1, y3v + t * rows, rows);
    matmul(&m3, &wl, x, k, n, y3, rows);
    CHECK(memcmp(y1, y3, (size_t)n * rows * sizeof(float)) == 0 && memcmp(y1, y3v, (size_t)n * rows * sizeof(float)) == 0,
          "%s: %s matmul of %d rows%s, %d positions on 3 threads (batched and one at a time) == one at a time on 1 thread, exactly",
          ISA_NAMES[level], type_name(type), rows, lanes ? " kept in lanes" : "", n);
    thread_pool_free(p1); thread_pool_free(p3);
    free(m1.act); free(m3.act); free(data); free(packed); free(x); free(y1); free(y3); free(y3v);
}

/* matmul_each_n: weights with inputs of their own widths and strides in one pass (the experts of a
 * batch), an input given twice quantized once, each product == that weight alone, one position at
 * a time on 1 thread, bit for bit. Plain rows and rows in lanes (each type's batch paths: 1, 2, 5,
 * 9 and 11 positions). */
static void check_matmul_each_n(const kernel_set *ks, int type, rng *r) {
    enum { W = 6 };
    const type_kernels *tk = ks->types[type];
    const bool lanes = tk && tk->lanes_pack;
    const int64_t k = test_k(type);
    const int rows = 32, ns[W] = { 1, 5, 1, 9, 2, 11 };   /* weight 2 reads weight 0's input */
    const long strides[W] = { k, k + 3, k, k, 2 * k, k };
    size_t rb, prb = 0;
    uint8_t *data[W], *packed[W] = { 0 };
    weight w[W];
    float *x[W], *y[W], *y1[W];
    const float *xs[W];
    float *ys[W];
    const weight *wp[W];
    long yst[W];
    int distinct = 0;
    for (int i = 0; i < W; i++) {
        data[i] = random_weights(r, type, rows, k, &rb);
        w[i] = (weight){ .type = type, .rows = rows, .cols = k, .row_bytes = rb, .data = data[i], .name = "w" };
        if (lanes && i % 2 == 1) {   /* every other weight's rows in lanes */
            prb = lanes_packed_row_bytes(tk, rb, k);
            packed[i] = malloc((size_t)rows * prb);
            for (int j = 0; j < rows; j += 16) tk->lanes_pack(data[i] + (size_t)j * rb, rb, k, packed[i] + (size_t)j * prb);
            w[i].data = packed[i];
            w[i].row_bytes = prb;
            w[i].lanes = true;
        }
        x[i] = i == 2 ? x[0] : malloc((size_t)ns[i] * strides[i] * sizeof(float));
        if (i != 2) {
            for (int t = 0; t < ns[i]; t++) random_acts(r, x[i] + t * strides[i], k);
            distinct += ns[i];
        }
        y[i] = calloc((size_t)ns[i] * (rows + 1), sizeof(float));
        y1[i] = calloc((size_t)ns[i] * (rows + 1), sizeof(float));
        xs[i] = x[i]; ys[i] = y[i]; wp[i] = &w[i]; yst[i] = rows + 1;
    }
    size_t sb = matmul_scratch_bytes(distinct, k), sb1 = matmul_scratch_bytes(1, k);
    thread_pool *p1 = thread_pool_new(1), *p3 = thread_pool_new(3);
    matmul_ctx m1 = { p1, ks, malloc(sb1), sb1 }, m3 = { p3, ks, malloc(sb), sb };
    matmul_each_n(&m3, W, wp, xs, strides, ns, ys, yst);
    bool same = true;
    for (int i = 0; i < W; i++) {
        weight plain = w[i];
        plain.data = data[i]; plain.row_bytes = rb; plain.lanes = false;
        for (int t = 0; t < ns[i]; t++) matmul(&m1, &plain, x[i] + t * strides[i], k, 1, y1[i] + t * (rows + 1), rows + 1);
        same &= memcmp(y[i], y1[i], (size_t)ns[i] * (rows + 1) * sizeof(float)) == 0;
    }
    CHECK(same, "%s: %s matmul_each_n of %d weights (1 to 11 positions, own strides, one input shared%s) == each alone on 1 thread, exactly",
          ISA_NAMES[ks->level], type_name(type), W, lanes ? ", rows in lanes and plain" : "");
    thread_pool_free(p1); thread_pool_free(p3);
    free(m1.act); free(m3.act);
    for (int i = 0; i < W; i++) {
        free(data[i]); free(packed[i]); free(y[i]); free(y1[i]);
        if (i != 2) free(x[i]);
    }
}

/* A cached key or value as the kernels see it: stored in the cache type and widened back. */
static void kv_dequant(int kv, const float *x, float *out, int n) {
    if (kv == KV_F16) { for (int i = 0; i < n; i++) out[i] = f16_to_f32(f16_from_f32(x[i])); return; }
    if (kv == KV_Q8_0) {
        const type_traits *tt = type_get(TS_Q8_0);
        uint8_t *row = malloc(type_row_bytes(TS_Q8_0, n));
        tt->quantize_row(x, row, n);
        tt->dequant_row(row, out, n);
        free(row);
        return;
    }
    memcpy(out, x, (size_t)n * sizeof(float));
}

/* The query heads of a KV head taken together (1 to 9 in a call): each head's scores and values are
 * the bits of the same head in a call of its own. Keys from slot 3 of block 0 on, in runs within a
 * block; values from a ring that wraps when count > 2. */
static void check_attention_heads(int level, const attention_kernels *ak, int kv, int hd, int count, const uint8_t *kc, size_t kb,
                                  const uint8_t *v, size_t rb, int slots, rng *r) {
    enum { MAXH = 9 };
    const size_t ss = (size_t)count + 3, os = (size_t)hd + 5;   /* strides with a gap between the heads */
    float *q = malloc((size_t)MAXH * hd * sizeof(float)), *a = malloc(MAXH * ss * sizeof(float));
    float *sg = malloc(MAXH * ss * sizeof(float)), *s1 = malloc(MAXH * ss * sizeof(float));
    float *og = malloc(MAXH * os * sizeof(float)), *o1 = malloc(MAXH * os * sizeof(float));
    for (int i = 0; i < MAXH * hd; i++) q[i] = rng_gauss(r);
    for (size_t i = 0; i < MAXH * ss; i++) a[i] = (rng_u32(r) & 0xffff) / 65536.0f;
    const int n = count < slots - 10 ? count : slots - 10, s0 = slots - n / 2;
    /* each head in a call of its own, once */
    for (int g = 0; g < MAXH; g++) {
        for (int done = 0, sl = 3; done < n; ) {
            int len = KV_KEY_BLOCK - sl % KV_KEY_BLOCK;
            if (len > n - done) len = n - done;
            ak->scores[kv](q + (size_t)g * hd, 1, kc + (size_t)(sl / KV_KEY_BLOCK) * kb, hd, sl % KV_KEY_BLOCK, len, 0.125f, s1 + g * ss + done, 0);
            done += len;
            sl += len;
        }
        ak->values[kv](a + g * ss, 0, 1, n, v, rb, slots, s0, hd, o1 + g * os, 0);
    }
    int bad = 0;
    for (int heads = 1; heads <= MAXH; heads++) {
        for (int done = 0, sl = 3; done < n; ) {
            int len = KV_KEY_BLOCK - sl % KV_KEY_BLOCK;
            if (len > n - done) len = n - done;
            ak->scores[kv](q, heads, kc + (size_t)(sl / KV_KEY_BLOCK) * kb, hd, sl % KV_KEY_BLOCK, len, 0.125f, sg + done, ss);
            done += len;
            sl += len;
        }
        ak->values[kv](a, ss, heads, n, v, rb, slots, s0, hd, og, os);
        for (int g = 0; g < heads; g++)
            bad += memcmp(sg + g * ss, s1 + g * ss, (size_t)n * sizeof(float)) != 0 ||
                   memcmp(og + g * os, o1 + g * os, (size_t)hd * sizeof(float)) != 0;
    }
    CHECK(bad == 0, "%s: attention, %s cache, head %d, %d keys: 1 to %d query heads in one call give each head's bits of a call of its own (%d differ)",
          ISA_NAMES[level], attention_kv_type_name(kv), hd, n, MAXH, bad);
    free(q); free(a); free(sg); free(s1); free(og); free(o1);
}

/* Per cache type: keys stored into transposed blocks and scored in runs, values stored as rows
 * and summed from a wrapped ring, against double precision on the stored (dequantized) values. */
static void check_attention(int level, rng *r) {
    const attention_kernels ak = attention_kernels_for(level);
    const int hds[] = { 64, 72, 40, 256, 96, 2080 }, counts[] = { 1, 2, 17, 37, 130, 257 };   /* 2080: keys stored 256 at a time, past 2048 */
    const int slots = 300, blocks = (slots + KV_KEY_BLOCK - 1) / KV_KEY_BLOCK;
    for (int kv = 0; kv < KV_TYPE_COUNT; kv++)
    for (int hi = 0; hi < 6; hi++) {
        const int hd = hds[hi];
        if (!attention_kv_type_fits(kv, hd)) continue;
        /* one cache of random keys and values per type and head size, read by every key count */
        const size_t kb = attention_key_block_bytes(kv, hd);
        const size_t rb = attention_value_row_bytes(kv, 2 * hd), head1 = attention_value_row_bytes(kv, hd);
        float *key = malloc((size_t)slots * hd * sizeof(float)), *val = malloc((size_t)slots * 2 * hd * sizeof(float));
        float *kd = malloc((size_t)slots * hd * sizeof(float)), *vd = malloc((size_t)slots * 2 * hd * sizeof(float));
        uint8_t *kc = calloc((size_t)blocks, kb), *vc = calloc((size_t)slots, rb);
        for (int sl = 0; sl < slots; sl++) {
            for (int i = 0; i < hd; i++) key[(long)sl * hd + i] = rng_gauss(r);
            for (int i = 0; i < 2 * hd; i++) val[(long)sl * 2 * hd + i] = rng_gauss(r);
            attention_store_key(&ak, kv, kc + (size_t)(sl / KV_KEY_BLOCK) * kb, sl % KV_KEY_BLOCK, key + (long)sl * hd, hd);
            attention_store_value(&ak, kv, vc + (size_t)sl * rb, val + (long)sl * 2 * hd, 2 * hd);
            kv_dequant(kv, key + (long)sl * hd, kd + (long)sl * hd, hd);
            kv_dequant(kv, val + (long)sl * 2 * hd, vd + (long)sl * 2 * hd, 2 * hd);
        }
        for (int ci = 0; ci < 6; ci++) {
            const int count = counts[ci];
            float *q = malloc(hd * sizeof(float)), *a = malloc(count * sizeof(float));
            float *s1 = malloc(count * sizeof(float)), *s2 = malloc(count * sizeof(float));
            float *o1 = malloc(hd * sizeof(float)), *o2 = malloc(hd * sizeof(float));
            uint8_t *lin = calloc((size_t)count, rb);
            for (int i = 0; i < hd; i++) q[i] = rng_gauss(r);
            for (int j = 0; j < count; j++) a[j] = (rng_u32(r) & 0xffff) / 65536.0f;
            /* scores of keys s0 .. s0 + count - 1 (< slots), in runs within a block; again cut once more */
            const int s0 = 5 + (count > 200 ? 0 : 20);
            for (int pass = 0; pass < 2; pass++) {
                float *dst = pass ? s2 : s1;
                int cut = pass ? s0 + count / 3 : -1;
                for (int done = 0, sl = s0; done < count; ) {
                    int len = KV_KEY_BLOCK - sl % KV_KEY_BLOCK;
                    if (len > count - done) len = count - done;
                    if (sl < cut && sl + len > cut) len = cut - sl;
                    ak.scores[kv](q, 1, kc + (size_t)(sl / KV_KEY_BLOCK) * kb, hd, sl % KV_KEY_BLOCK, len, 0.125f, dst + done, 0);
                    done += len;
                    sl += len;
                }
            }
            double worst = 0.0;
            for (int j = 0; j < count; j++) {
                double ref = 0.0, mag = 0.0;
                for (int i = 0; i < hd; i++) {
                    ref += (double)q[i] * kd[(long)(s0 + j) * hd + i];
                    mag += fabs((double)q[i] * kd[(long)(s0 + j) * hd + i]);
                }
                double e = fabs(s1[j] - 0.125 * ref) / (0.125 * mag);
                if (e > worst) worst = e;
            }
            CHECK(worst < 2e-6 && memcmp(s1, s2, count * sizeof(float)) == 0,
                  "%s: attention scores, %s cache, head %d, %d keys: within %.1e of double on the stored keys, same bits in other runs",
                  ISA_NAMES[level], attention_kv_type_name(kv), hd, count, worst);
            /* softmax of the scores (spread out so the exponentials span a wide range) */
            for (int j = 0; j < count; j++) s2[j] = s1[j] * 8.0f;
            float mx_got;
            float sum_got = ak.softmax(s2, count, &mx_got);
            double mx = -INFINITY, z = 0.0;
            for (int j = 0; j < count; j++) if (s1[j] * 8.0 > mx) mx = s1[j] * 8.0;
            for (int j = 0; j < count; j++) z += exp((double)(s1[j] * 8.0f) - mx);
            worst = 0.0;
            for (int j = 0; j < count; j++) {
                double ref = exp((double)(s1[j] * 8.0f) - mx) / z;
                double e = fabs(s2[j] - ref) / (ref + 1e-37);
                if (ref > 1e-30 && e > worst) worst = e;
            }
            /* the float x - max alone rounds by up to ulp(|x|) ~ 4e-6 here (expf does no better) */
            CHECK(worst < 1e-5 && mx_got == (float)mx && fabs(sum_got - z) < 1e-5 * z,
                  "%s: attention softmax of %d scores: within %.1e of double (relative, each value), its max and sum",
                  ISA_NAMES[level], count, worst);
            /* values of head 1 from a ring whose run wraps vs the same rows in order */
            const int start = slots - count / 2 - 1;
            for (int j = 0; j < count; j++) memcpy(lin + (size_t)j * rb, vc + (size_t)((start + j) % slots) * rb, rb);
            ak.values[kv](a, 0, 1, count, vc + head1, rb, slots, start, hd, o1, 0);
            ak.values[kv](a, 0, 1, count, lin + head1, rb, count, 0, hd, o2, 0);
            worst = 0.0;
            for (int i = 0; i < hd; i++) {
                double ref = 0.0, mag = 0.0;
                for (int j = 0; j < count; j++) {
                    double vv = vd[(long)((start + j) % slots) * 2 * hd + hd + i];
                    ref += (double)a[j] * vv;
                    mag += fabs((double)a[j] * vv);
                }
                double e = fabs(o1[i] - ref) / (mag + 1e-30);
                if (e > worst) worst = e;
            }
            CHECK(worst < 2e-6 && memcmp(o1, o2, hd * sizeof(float)) == 0,
                  "%s: attention values, %s cache, head %d, %d rows: within %.1e of double on the stored values, a wrapped ring == rows in order",
                  ISA_NAMES[level], attention_kv_type_name(kv), hd, count, worst);
            if (level == SIMD_NEON) {
                /* the NEON kernels do the portable kernels' operations: their bits, run by run */
                const attention_kernels pk = attention_kernels_for(SIMD_SCALAR);
                for (int done = 0, sl = s0; done < count; ) {
                    int len = KV_KEY_BLOCK - sl % KV_KEY_BLOCK;
                    if (len > count - done) len = count - done;
                    pk.scores[kv](q, 1, kc + (size_t)(sl / KV_KEY_BLOCK) * kb, hd, sl % KV_KEY_BLOCK, len, 0.125f, s2 + done, 0);
                    done += len;
                    sl += len;
                }
                pk.values[kv](a, 0, 1, count, vc + head1, rb, slots, start, hd, o2, 0);
                CHECK(memcmp(s1, s2, count * sizeof(float)) == 0 && memcmp(o1, o2, hd * sizeof(float)) == 0,
                      "%s: attention, %s cache, head %d, %d keys: scores and values are the portable kernels' bits",
                      ISA_NAMES[level], attention_kv_type_name(kv), hd, count);
            }
            check_attention_heads(level, &ak, kv, hd, count, kc, kb, vc + head1, rb, slots, r);
            free(q); free(lin); free(s1); free(s2); free(o1); free(o2); free(a);
        }
        free(key); free(val); free(kd); free(vd); free(kc); free(vc);
    }
}

/* The delta rule's scan: a set's run of T positions (value widths with and without a tail of
 * lanes) gives the bits of the portable kernel run one position at a time, its snapshots the
 * states after their positions, and the portable kernel stays within float rounding of the rule
 * in double. */
static void check_delta_rule(int level, rng *r) {
    const recurrence_kernels rk = recurrence_kernels_for(level), pk = recurrence_kernels_for(SIMD_SCALAR);
    static const int dims[][2] = { { 16, 16 }, { 24, 40 }, { 128, 128 }, { 7, 3 } };
    enum { T = 5, MAXD = 128 };
    for (int d = 0; d < 4; d++) {
        const int dk = dims[d][0], dv = dims[d][1];
        const size_t sz = (size_t)dk * dv;
        float *s1 = malloc(sizeof(float) * sz), *s2 = malloc(sizeof(float) * sz), *snaps = malloc(sizeof(float) * sz * 2);
        float *want_snap = malloc(sizeof(float) * sz * 2);
        double *sd = malloc(sizeof(double) * sz);
        float q[T][MAXD], k[T][MAXD], v[T][MAXD], o1[T][MAXD], o2[T][MAXD], decay[T], beta[T];
        for (size_t i = 0; i < sz; i++) sd[i] = s1[i] = s2[i] = 0.1f * rng_gauss(r);
        for (int t = 0; t < T; t++) {
            for (int i = 0; i < dk; i++) { q[t][i] = rng_gauss(r) / 8; k[t][i] = rng_gauss(r) / 8; }
            for (int i = 0; i < dv; i++) v[t][i] = rng_gauss(r);
            decay[t] = 0.9f + 0.02f * t;
            beta[t] = 0.5f + 0.1f * t;
        }
        delta_rule_run run = { .dk = dk, .dv = dv, .n = T, .q = q[0], .k = k[0], .v = v[0], .qk_stride = MAXD,
                               .v_stride = MAXD, .o_stride = MAXD, .decay = decay, .beta = beta, .o = o1[0],
                               .n_snap = 2, .snap_t = { 1, T - 1 }, .snap = { snaps, snaps + sz } };
        rk.delta_rule_scan(s1, &run);
        double worst = 0;
        for (int t = 0; t < T; t++) {   /* the portable kernel a position at a time, and the rule in double */
            delta_rule_run one = { .dk = dk, .dv = dv, .n = 1, .q = q[t], .k = k[t], .v = v[t], .decay = decay + t,
                                   .beta = beta + t, .o = o2[t] };
            pk.delta_rule_scan(s2, &one);
            if (t == 1) memcpy(want_snap, s2, sizeof(float) * sz);
            if (t == T - 1) memcpy(want_snap + sz, s2, sizeof(float) * sz);
            for (int b = 0; b < dv; b++) {
                double kv = 0, o = 0;
                for (int a = 0; a < dk; a++) { sd[a * dv + b] *= decay[t]; kv += sd[a * dv + b] * k[t][a]; }
                double u = beta[t] * (v[t][b] - kv);
                for (int a = 0; a < dk; a++) { sd[a * dv + b] += k[t][a] * u; o += sd[a * dv + b] * q[t][a]; }
                double e = fabs(o2[t][b] - o) / (1 + fabs(o));
                if (e > worst) worst = e;
            }
        }
        bool same = !memcmp(s1, s2, sizeof(float) * sz) && !memcmp(snaps, want_snap, sizeof(float) * sz * 2);
        for (int t = 0; t < T; t++) same &= !memcmp(o1[t], o2[t], sizeof(float) * dv);
        CHECK(same && worst < 1e-5, "%s: delta rule scan, dk %d dv %d, %d positions in one run: the portable kernel's bits one position at a time, snapshots included (%s), within %.1e of double",
              ISA_NAMES[level], dk, dv, T, same ? "same" : "differ", worst);
        free(s1); free(s2); free(snaps); free(want_snap); free(sd);
    }
}

/* A set's unpacking (a batch's rows in block_unpacked, read by the tiles) gives the portable
 * unpacking's bytes, and every code fits the tiles' unsigned offset (|q| <= 62, |sc| <= 64). */
static void check_unpack(const kernel_set *ks, int type, rng *r) {
    const type_kernels *tk = ks->types[type], *ref = portable.types[type];
    if (!tk || !tk->unpack || !ref || !ref->unpack) return;
    const int rows = 16;
    const int64_t k = 256 * 3;
    size_t rb;
    uint8_t *w = random_weights(r, type, rows, k, &rb);
    const size_t bb = type_block_bytes(type);
    int differ = 0, out_of_range = 0, blocks = 0;
    for (int i = 0; i < rows; i++)
        for (int64_t b = 0; b < k / QK_K; b++, blocks++) {
            block_unpacked u1, u2;
            memset(&u1, 0, sizeof u1);
            memset(&u2, 0, sizeof u2);
            tk->unpack(w + (size_t)i * rb + b * bb, &u1);
            ref->unpack(w + (size_t)i * rb + b * bb, &u2);
            differ += memcmp(&u1, &u2, sizeof u1) != 0;
            for (int j = 0; j < QK_K; j++) out_of_range += abs(u2.q[j]) > 62;
            for (int g = 0; g < 16; g++) out_of_range += abs(u2.sc[g]) > 64;
        }
    CHECK(differ == 0 && out_of_range == 0, "%s: %s unpacking equals the portable one (%d of %d blocks differ), codes within the tiles' range (%d outside)",
          ISA_NAMES[ks->level], type_name(type), differ, blocks, out_of_range);
    free(w);
}

/* Keys and values to halves (attn_to_f16_fn): f16_from_f32's bits, on edge cases (halfway cases to
 * even, the largest half and what rounds past it, subnormals and their halfway cases, zeros,
 * infinities, NaNs with payloads) and random bit patterns, in lengths with and without a tail. */
static void check_to_f16(int level, rng *r) {
    const attention_kernels ak = attention_kernels_for(level);
    enum { N = 4099 };
    static float x[N];
    static uint16_t h[N];
    const uint32_t edges[] = { 0x00000000u, 0x80000000u, 0x3f800000u, 0x3f801000u, 0x3f803000u, 0x3f802000u, 0x3f800fffu,
                               0x477fe000u, 0x477fefffu, 0x477ff000u, 0x477fffffu, 0x47800000u, 0x7f7fffffu, 0x7f800000u,
                               0xff800000u, 0x7fc00000u, 0xffc00001u, 0x7f800001u, 0x7fa00000u, 0x33800000u, 0x33000000u,
                               0x33000001u, 0x387fc000u, 0x38800000u, 0x387fe000u, 0x38000000u, 0xb8000000u, 0x00000001u,
                               0x337fffffu, 0x33c00000u };
    const int n_edges = (int)(sizeof edges / sizeof edges[0]);
    for (int i = 0; i < N; i++) {
        const uint32_t b = i < n_edges ? edges[i] : i % 3 ? rng_u32(r) : (rng_u32(r) & 0x8fffffffu) | 0x30000000u;
        memcpy(&x[i], &b, 4);
    }
    int bad = 0, lengths = 0;
    for (int n = 1; n <= N; n = n < 40 ? n + 1 : 2 * n + 3) {
        ak.to_f16(x, h, n);
        for (int i = 0; i < n; i++) bad += h[i] != f16_from_f32(x[i]);
        lengths++;
    }
    ak.to_f16(x, h, N);
    for (int i = 0; i < N; i++) bad += h[i] != f16_from_f32(x[i]);
    CHECK(bad == 0, "%s: keys and values to halves: f16_from_f32's bits on %d edge cases and random bits, %d lengths (%d differ)",
          ISA_NAMES[level], n_edges, lengths + 1, bad);
}

int main(void) {
    rng r = { .s = 0x9e3779b97f4a7c15ULL };
    /* TS_SIMD_TYPES_ONLY=1: only each type's kernels of the set this CPU gets. For a second emulated
     * CPU whose set differs from the first's in those alone (tests/sh/test_aarch64_build.sh: the
     * NEON kernels without SDOT); the rest is the same code, checked on the first. */
    const char *types_only_env = getenv("TS_SIMD_TYPES_ONLY");
    const bool types_only = types_only_env && atoi(types_only_env);
    for (int level = 0; level < SIMD_COUNT; level++) {
        const kernel_set *ks = kernel_set_for(level), *base = kernel_set_base(level);
        if (!ks || !cpu_has_simd(level)) { printf("# %s: not available here, skipped\n", ISA_NAMES[level]); continue; }
        if (level == SIMD_SCALAR && types_only) continue;
        if (level != SIMD_SCALAR) {
            if (!types_only) check_quantizers(ks, &r);
            for (int i = 0; i < N_TYPES; i++) { check_type(ks, TYPES[i], &r); check_unpack(ks, TYPES[i], &r); }
            /* the level's kernels for CPUs without this one's extensions (AVX-512 without VBMI) */
            if (base != ks && !types_only) {
                printf("# %s without this CPU's extensions:\n", ISA_NAMES[level]);
                for (int i = 0; i < N_TYPES; i++) {
                    check_type(base, TYPES[i], &r);
                    check_matmul(base, TYPES[i], 48, 5, true, &r);   /* its rows in lanes too */
                    check_matmul(base, TYPES[i], 608, 8, true, &r);
                }
            }
        }
        for (int i = 0; i < N_TYPES; i++) { 
            check_matmul(ks, TYPES[i], 23, 6, false, &r);
            check_matmul(ks, TYPES[i], 600, 11, false, &r);
            check_matmul(ks, TYPES[i], 48, 5, false, &r);
            /* rows in lanes: every width of one pass (the widest is 8 or LANES_MAX_NC = 16), and
             * more positions than the widest: 17 as 8 + 5 + 4 or 9 + 8, 33 as 16 + 9 + 8 */
            for (int n = 1; n <= 16; n++) check_matmul(ks, TYPES[i], 48, n, true, &r);
            check_matmul(ks, TYPES[i], 48, 17, true, &r);
            check_matmul(ks, TYPES[i], 48, 33, true, &r);
            check_matmul(ks, TYPES[i], 608, 6, true, &r);
            check_matmul_each_n(ks, TYPES[i], &r);
        }
        if (types_only) continue;
        check_attention(level, &r);
        check_to_f16(level, &r);
        check_delta_rule(level, &r);
    }
    for (int i = 0; i < N_TYPES && !types_only; i++) check_type(&portable, TYPES[i], &r);
    CHECK_EXIT();
}
