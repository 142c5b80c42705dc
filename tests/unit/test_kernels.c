/* Scalar reference kernels for every tensor type.
 *
 * - the type table and type_row_bytes;
 * - f16/bf16 conversions, exhaustively against an independent decoding and rounding rule;
 * - hand-built blocks: the test chooses codes and scales, packs them into bytes at the positions
 *   the GGUF block formats give (written here from the format description, element by element),
 *   and checks every dequantized element against the formula evaluated in double;
 * - dot_f32 against dequant_row + a double dot;
 * - quantize -> dequantize round trips with per-type error bounds;
 * - real data: every tensor of the llama-tiny GGUF files (quantized by llama.cpp from the same
 *   weights) dequantized and compared with model-f32.gguf; a deliberately mis-ordered read must fail;
 *   the same for iq4-tiny's IQ4_NL / IQ4_XS files;
 * - iq4-tiny's decoder unit-test files (gguf-py's dequantization) reproduced bit for bit; MXFP4 at
 *   extreme exponents, and gpt-oss-tiny's MXFP4 experts equal to the F32 file's tensors exactly;
 * - the low-bit types of README-iq-grid: the grid tables equal grids.json entry by entry, the 24
 *   decoder vectors (real rows and random bytes, decoded by llama.cpp) reproduced bit for bit, the
 *   unpacked integer form equal to the dequantized values, and every tensor of every iq-grid-tiny
 *   file near model-f32.gguf's (another row's bytes far from it). */
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "check.h"
#include "io/gguf.h"
#include "kernels/types.h"
#include "kernels/f16.h"
#include "kernels/bf16.h"
#include "kernels/iq_grids.h"
#include "kernels/kernels_internal.h"
#include "io/json.h"

/* ---------------------------------------------------------------- helpers */

typedef struct { uint64_t s; } rng;

static uint32_t rng_u32(rng *r) {   /* xorshift64* */
    r->s ^= r->s >> 12; r->s ^= r->s << 25; r->s ^= r->s >> 27;
    return (uint32_t)((r->s * 0x2545F4914F6CDD1DULL) >> 32);
}
static int rng_int(rng *r, int lo, int hi) { return lo + (int)(rng_u32(r) % (uint32_t)(hi - lo + 1)); }
static double rng_unit(rng *r) { return (rng_u32(r) + 0.5) / 4294967296.0; }
static float rng_gauss(rng *r) {
    return (float)(sqrt(-2.0 * log(rng_unit(r))) * cos(6.283185307179586 * rng_unit(r)));
}

/* IEEE binary16 value of h, decoded from the definition (NaN for NaNs). */
static double half_value(uint16_t h) {
    int sign = h >> 15, e = (h >> 10) & 31, m = h & 1023;
    double v = e == 0 ? ldexp(m, -24) : e == 31 ? (m ? NAN : INFINITY) : ldexp(1024 + m, e - 25);
    return sign ? -v : v;
}

/* bfloat16 value of h: 8-bit exponent (bias 127), 7-bit mantissa. */
static double bf16_value(uint16_t h) {
    int sign = h >> 15, e = (h >> 7) & 255, m = h & 127;
    double v = e == 0 ? ldexp(m, -133) : e == 255 ? (m ? NAN : INFINITY) : ldexp(128 + m, e - 134);
    return sign ? -v : v;
}

/* A finite half of moderate size (2^-10 .. 2^1), random sign unless positive is asked. */
static uint16_t rand_half(rng *r, int positive) {
    uint16_t h = (uint16_t)(rng_int(r, 5, 16) << 10 | rng_int(r, 0, 1023));
    return positive || rng_int(r, 0, 1) == 0 ? h : (uint16_t)(h | 0x8000);
}

static void put_u16(uint8_t *b, uint16_t v) { b[0] = (uint8_t)v; b[1] = (uint8_t)(v >> 8); }
/* OR `value` into `nbits` bits of byte b[0] starting at bit `shift`. */
static void put_bits(uint8_t *b, int shift, int nbits, int value) {
    b[0] |= (uint8_t)((value & ((1 << nbits) - 1)) << shift);
}

/* ---------------------------------------------------------------- hand-built blocks
 * Each builder fills one zeroed block with random codes and scales and writes, per element, the
 * expected value (in double) and its magnitude scale (the sum of |terms|, for the rounding tolerance). */

typedef void (*block_builder)(rng *r, uint8_t *blk, double *want, double *mag);

static void build_q8_0(rng *r, uint8_t *b, double *want, double *mag) {
    uint16_t d = rand_half(r, 0);
    put_u16(b, d);                                   /* d: bytes 0..1, then 32 int8 codes */
    for (int e = 0; e < 32; e++) {
        int q = rng_int(r, -128, 127);
        b[2 + e] = (uint8_t)(int8_t)q;
        want[e] = half_value(d) * q; mag[e] = fabs(want[e]);
    }
}

static void build_q4_0(rng *r, uint8_t *b, double *want, double *mag) {
    uint16_t d = rand_half(r, 0);
    put_u16(b, d);                                   /* element e: byte 2 + e%16, nibble e/16 */
    for (int e = 0; e < 32; e++) {
        int q = rng_int(r, 0, 15);
        put_bits(b + 2 + e % 16, 4 * (e / 16), 4, q);
        want[e] = half_value(d) * (q - 8); mag[e] = fabs(want[e]);
    }
}

static void build_q4_1(rng *r, uint8_t *b, double *want, double *mag) {
    uint16_t d = rand_half(r, 0), m = rand_half(r, 0);
    put_u16(b, d); put_u16(b + 2, m);
    for (int e = 0; e < 32; e++) {
        int q = rng_int(r, 0, 15);
        put_bits(b + 4 + e % 16, 4 * (e / 16), 4, q);
        want[e] = half_value(d) * q + half_value(m);
        mag[e] = fabs(half_value(d) * q) + fabs(half_value(m));
    }
}

/* Q5_0/Q5_1: qh (4 bytes, little-endian u32) bit e = bit 4 of element e. */
static void build_q5(rng *r, uint8_t *b, double *want, double *mag, int with_min) {
    uint16_t d = rand_half(r, 0), m = rand_half(r, 0);
    put_u16(b, d);
    if (with_min) put_u16(b + 2, m);
    uint8_t *qh = b + (with_min ? 4 : 2), *qs = qh + 4;
    for (int e = 0; e < 32; e++) {
        int q = rng_int(r, 0, 31);
        put_bits(qs + e % 16, 4 * (e / 16), 4, q);
        put_bits(qh + e / 8, e % 8, 1, q >> 4);
        if (with_min) {
            want[e] = half_value(d) * q + half_value(m);
            mag[e] = fabs(half_value(d) * q) + fabs(half_value(m));
        } else {
            want[e] = half_value(d) * (q - 16); mag[e] = fabs(want[e]);
        }
    }
}
static void build_q5_0(rng *r, uint8_t *b, double *w, double *g) { build_q5(r, b, w, g, 0); }
static void build_q5_1(rng *r, uint8_t *b, double *w, double *g) { build_q5(r, b, w, g, 1); }

/* Q2_K: scales[16] @0 (sc | m << 4), qs[64] @16, d @80, dmin @82. Element e = 128n + 32j + l:
 * bits 2j of qs[32n + l]; group e / 16. */
static void build_q2_k(rng *r, uint8_t *b, double *want, double *mag) {
    uint16_t d = rand_half(r, 1), dmin = rand_half(r, 1);
    int sc[16], m[16];
    for (int g = 0; g < 16; g++) {
        sc[g] = rng_int(r, 0, 15); m[g] = rng_int(r, 0, 15);
        b[g] = (uint8_t)(sc[g] | m[g] << 4);
    }
    put_u16(b + 80, d); put_u16(b + 82, dmin);
    for (int e = 0; e < 256; e++) {
        int n = e / 128, j = e % 128 / 32, l = e % 32, g = e / 16, q = rng_int(r, 0, 3);
        put_bits(b + 16 + 32 * n + l, 2 * j, 2, q);
        want[e] = half_value(d) * sc[g] * q - half_value(dmin) * m[g];
        mag[e] = fabs(half_value(d) * sc[g] * q) + fabs(half_value(dmin) * m[g]);
    }
}

/* Q3_K: hmask[32] @0, qs[64] @32, scales[12] @96, d @108. Element e = 128n + 32j + l: 2 low bits
 * at bit 2j of qs[32n + l], high bit at bit 4n + j of hmask[l]; code = low + 4*high - 4. The 6-bit
 * group scale s (value s - 32): low nibble in byte g % 8 (nibble g / 8), top 2 bits in byte
 * 8 + g % 4 at bit 2*(g / 4). */
static void build_q3_k(rng *r, uint8_t *b, double *want, double *mag) {
    uint16_t d = rand_half(r, 0);
    int s[16];
    for (int g = 0; g < 16; g++) {
        s[g] = rng_int(r, 0, 63);
        put_bits(b + 96 + g % 8, 4 * (g / 8), 4, s[g] & 15);
        put_bits(b + 96 + 8 + g % 4, 2 * (g / 4), 2, s[g] >> 4);
    }
    put_u16(b + 108, d);
    for (int e = 0; e < 256; e++) {
        int n = e / 128, j = e % 128 / 32, l = e % 32, g = e / 16, u = rng_int(r, 0, 7);
        put_bits(b + 32 + 32 * n + l, 2 * j, 2, u & 3);
        put_bits(b + l, 4 * n + j, 1, u >> 2);
        want[e] = half_value(d) * (s[g] - 32) * (u - 4); mag[e] = fabs(want[e]);
    }
}

/* Q4_K/Q5_K 6-bit scale and min of group g in the 12 bytes at s: groups 0..3 in bits 0..5 of bytes
 * g (scale) and g+4 (min); groups 4..7: low 4 bits in byte g+4 (scale low nibble, min high
 * nibble), top 2 bits in bits 6..7 of byte g-4 (scale) and byte g (min). */
static void put_scale_min(uint8_t *s, int g, int sc, int m) {
    if (g < 4) {
        put_bits(s + g, 0, 6, sc); put_bits(s + g + 4, 0, 6, m);
    } else {
        put_bits(s + g + 4, 0, 4, sc & 15); put_bits(s + g + 4, 4, 4, m & 15);
        put_bits(s + g - 4, 6, 2, sc >> 4); put_bits(s + g, 6, 2, m >> 4);
    }
}

/* Q4_K: d @0, dmin @2, scales[12] @4, qs[128] @16. Q5_K: same, then qh[32] @16 and qs @48.
 * Element e = 64c + r: low 4 bits in qs[32c + r%32], nibble r / 32; group e / 32; Q5_K's fifth bit
 * at bit 2c + r/32 of qh[r % 32]. */
static void build_qk_affine(rng *r, uint8_t *b, double *want, double *mag, int five) {
    uint16_t d = rand_half(r, 1), dmin = rand_half(r, 1);
    put_u16(b, d); put_u16(b + 2, dmin);
    int sc[8], m[8];
    for (int g = 0; g < 8; g++) {
        sc[g] = rng_int(r, 0, 63); m[g] = rng_int(r, 0, 63);
        put_scale_min(b + 4, g, sc[g], m[g]);
    }
    uint8_t *qh = b + 16, *qs = b + (five ? 48 : 16);
    for (int e = 0; e < 256; e++) {
        int c = e / 64, rr = e % 64, g = e / 32, q = rng_int(r, 0, five ? 31 : 15);
        put_bits(qs + 32 * c + rr % 32, 4 * (rr / 32), 4, q & 15);
        if (five) put_bits(qh + rr % 32, 2 * c + rr / 32, 1, q >> 4);
        want[e] = half_value(d) * sc[g] * q - half_value(dmin) * m[g];
        mag[e] = fabs(half_value(d) * sc[g] * q) + fabs(half_value(dmin) * m[g]);
    }
}
static void build_q4_k(rng *r, uint8_t *b, double *w, double *g) { build_qk_affine(r, b, w, g, 0); }
static void build_q5_k(rng *r, uint8_t *b, double *w, double *g) { build_qk_affine(r, b, w, g, 1); }

/* Q6_K: ql[128] @0, qh[64] @128, int8 scales[16] @192, d @208. Element e = 128n + 32j + l: low 4
 * bits in ql[64n + 32(j%2) + l] nibble j/2, high 2 bits at bit 2j of qh[32n + l]; value
 * d * scale[e/16] * (q - 32). */
static void build_q6_k(rng *r, uint8_t *b, double *want, double *mag) {
    uint16_t d = rand_half(r, 0);
    int sc[16];
    for (int g = 0; g < 16; g++) { sc[g] = rng_int(r, -128, 127); b[192 + g] = (uint8_t)(int8_t)sc[g]; }
    put_u16(b + 208, d);
    for (int e = 0; e < 256; e++) {
        int n = e / 128, j = e % 128 / 32, l = e % 32, q = rng_int(r, 0, 63);
        put_bits(b + 64 * n + 32 * (j % 2) + l, 4 * (j / 2), 4, q & 15);
        put_bits(b + 128 + 32 * n + l, 2 * j, 2, q >> 4);
        want[e] = half_value(d) * sc[e / 16] * (q - 32); mag[e] = fabs(want[e]);
    }
}

/* Q8_K: f32 d @0, int8 qs[256] @4, int16 bsums[16] @260 (not used to dequantize). */
static void build_q8_k(rng *r, uint8_t *b, double *want, double *mag) {
    float d = (float)ldexp(1.0 + rng_unit(r), -rng_int(r, 2, 12));
    memcpy(b, &d, 4);
    for (int e = 0; e < 256; e++) {
        int q = rng_int(r, -128, 127);
        b[4 + e] = (uint8_t)(int8_t)q;
        want[e] = (double)d * q; mag[e] = fabs(want[e]);
    }
}

/* The non-linear 4-bit tables, as ggml-common.h and README-moe give them. */
static const int IQ4NL_VALUES[16] = { -127, -104, -83, -65, -49, -35, -22, -10, 1, 13, 25, 38, 53, 69, 89, 113 };
static const int MXFP4_VALUES[16] = { 0, 1, 2, 3, 4, 6, 8, 12, 0, -1, -2, -3, -4, -6, -8, -12 };

/* IQ4_NL: d @0, qs[16] @2; element e: nibble e / 16 of byte 2 + e % 16; value d * table[q]. */
static void build_iq4_nl(rng *r, uint8_t *b, double *want, double *mag) {
    uint16_t d = rand_half(r, 0);
    put_u16(b, d);
    for (int e = 0; e < 32; e++) {
        int q = rng_int(r, 0, 15);
        put_bits(b + 2 + e % 16, 4 * (e / 16), 4, q);
        want[e] = half_value(d) * IQ4NL_VALUES[q]; mag[e] = fabs(want[e]);
    }
}

/* IQ4_XS: d @0, scales_h (LE u16) @2, scales_l[4] @4, qs[128] @8. Sub-block ib = e / 32 has a
 * 6-bit ls: low 4 bits at nibble ib % 2 of scales_l[ib / 2], high 2 bits at bit 2ib of
 * scales_h; element j = e % 32 of it: nibble j / 16 of qs[16ib + j % 16]; value
 * d * (ls - 32) * table[q]. */
static void build_iq4_xs(rng *r, uint8_t *b, double *want, double *mag) {
    uint16_t d = rand_half(r, 0), sh = 0;
    put_u16(b, d);
    for (int ib = 0; ib < 8; ib++) {
        int ls = rng_int(r, 0, 63);
        put_bits(b + 4 + ib / 2, 4 * (ib % 2), 4, ls & 15);
        sh |= (uint16_t)((ls >> 4) << (2 * ib));
        for (int j = 0; j < 32; j++) {
            int q = rng_int(r, 0, 15), e = 32 * ib + j;
            put_bits(b + 8 + 16 * ib + j % 16, 4 * (j / 16), 4, q);
            want[e] = half_value(d) * (ls - 32) * IQ4NL_VALUES[q]; mag[e] = fabs(want[e]);
        }
    }
    put_u16(b + 2, sh);
}

/* MXFP4 (README-moe): E8M0 byte e @0, qs[16] @1; element e: nibble e / 16 of byte 1 + e % 16;
 * value table[q] * 2^(e - 128). */
static void build_mxfp4(rng *r, uint8_t *b, double *want, double *mag) {
    int ex = rng_int(r, 100, 140);
    b[0] = (uint8_t)ex;
    for (int e = 0; e < 32; e++) {
        int q = rng_int(r, 0, 15);
        put_bits(b + 1 + e % 16, 4 * (e / 16), 4, q);
        want[e] = ldexp(MXFP4_VALUES[q], ex - 128); mag[e] = fabs(want[e]);
    }
}

/* Float types: one element per "block". */
static void build_f32(rng *r, uint8_t *b, double *want, double *mag) {
    float v = rng_gauss(r);
    memcpy(b, &v, 4); want[0] = v; mag[0] = fabs(v);
}
static void build_f16(rng *r, uint8_t *b, double *want, double *mag) {
    uint16_t h;
    do h = (uint16_t)rng_u32(r); while (((h >> 10) & 31) == 31);   /* finite, incl. subnormals */
    memcpy(b, &h, 2); want[0] = half_value(h); mag[0] = fabs(want[0]);
}
static void build_bf16(rng *r, uint8_t *b, double *want, double *mag) {
    uint16_t h;
    do h = (uint16_t)rng_u32(r); while (((h >> 7) & 255) < 90 || ((h >> 7) & 255) > 160);   /* 2^-37..2^33: the dot stays finite */
    memcpy(b, &h, 2); want[0] = bf16_value(h); mag[0] = fabs(want[0]);
}

typedef struct {
    int type;
    int block_size;
    size_t block_bytes;
    block_builder build;
    double roundtrip_bound;   /* max rel. RMS error of quantize -> dequantize on gaussian data */
    double real_bound;        /* max rel. RMS error per tensor against the F32 GGUF */
} type_case;

/* Bounds calibrated from measurement (the test prints the measured values): round trips (gaussian
 * data with block-varying scale and a few 6x outliers) measured F16 2.1e-4, BF16 1.6e-3, Q8_0 7.2e-3,
 * Q4_0 0.107, Q4_1 0.077, Q5_0 0.051, Q5_1 0.039, Q2_K 0.295, Q3_K 0.160, Q4_K 0.074, Q5_K 0.037,
 * Q6_K 0.017, Q8_K 0.011, IQ4_NL 0.081, IQ4_XS 0.079, MXFP4 0.117; real llama.cpp tensors: see test_real_gguf's printout. A mis-ordered read
 * of the real tensors gives about 1.4. */
static const type_case cases[] = {
    { TS_F32,  1,   4,   build_f32,  0,       0       },
    { TS_F16,  1,   2,   build_f16,  3e-4,    3e-4    },
    { TS_BF16, 1,   2,   build_bf16, 2.5e-3,  2.5e-3  },
    { TS_Q8_0, 32,  34,  build_q8_0, 0.01,    0.008   },
    { TS_Q4_0, 32,  18,  build_q4_0, 0.13,    0.10    },
    { TS_Q4_1, 32,  20,  build_q4_1, 0.10,    0.10    },
    { TS_Q5_0, 32,  22,  build_q5_0, 0.065,   0.055   },
    { TS_Q5_1, 32,  24,  build_q5_1, 0.05,    0.05    },
    { TS_Q2_K, 256, 84,  build_q2_k, 0.40,    0.40    },
    { TS_Q3_K, 256, 110, build_q3_k, 0.22,    0.20    },
    { TS_Q4_K, 256, 144, build_q4_k, 0.10,    0.10    },
    { TS_Q5_K, 256, 176, build_q5_k, 0.05,    0.05    },
    { TS_Q6_K, 256, 210, build_q6_k, 0.025,   0.025   },
    { TS_Q8_K, 256, 292, build_q8_k, 0.015,   0       },
    { TS_IQ4_NL, 32, 18, build_iq4_nl, 0.10,  0.10    },
    { TS_IQ4_XS, 256, 136, build_iq4_xs, 0.10, 0.10   },
    { TS_MXFP4, 32,  17,  build_mxfp4, 0.15,   0       },
};
#define N_CASES ((int)(sizeof cases / sizeof cases[0]))

static const type_case *case_for(int type) {
    for (int i = 0; i < N_CASES; i++) if (cases[i].type == type) return &cases[i];
    return NULL;
}

/* ---------------------------------------------------------------- type table */

static void test_type_table(void) {
    for (int i = 0; i < N_CASES; i++) {
        const type_case *c = &cases[i];
        const type_traits *t = type_get(c->type);
        CHECK(t && type_block_size(c->type) == c->block_size && type_block_bytes(c->type) == c->block_bytes &&
              t->dequant_row && t->dot_f32,
              "%s: block of %d weights in %zu bytes", type_name(c->type), c->block_size, c->block_bytes);
        int64_t k = 7 * (int64_t)c->block_size;
        CHECK(type_row_bytes(c->type, k) == 7 * c->block_bytes, "%s: row bytes of %lld weights",
              type_name(c->type), (long long)k);
        if (c->block_size > 1)
            CHECK(type_row_bytes(c->type, k + 1) == 0, "%s: a partial block gives 0 row bytes",
                  type_name(c->type));
        /* the largest whole-block k: its byte count overflows size_t for the 2- and 4-byte types */
        int64_t huge = INT64_MAX / c->block_size * c->block_size;
        uint64_t blocks = (uint64_t)(huge / c->block_size);
        size_t expect = blocks > SIZE_MAX / c->block_bytes ? 0 : (size_t)(blocks * c->block_bytes);
        CHECK(type_row_bytes(c->type, huge) == expect && type_row_bytes(c->type, -c->block_size) == 0,
              "%s: huge k gives %zu row bytes (0 = overflow), negative k gives 0", type_name(c->type), expect);
    }
    CHECK(!strcmp(type_name(TS_Q4_K), "Q4_K") && !strcmp(type_name(TS_BF16), "BF16") &&
          !strcmp(type_name(TS_Q6_K), "Q6_K"), "type names");
    CHECK(type_get(4) == NULL && type_get(-1) == NULL && type_get(TS_TYPE_COUNT) == NULL &&
          type_get(1000) == NULL && !strcmp(type_name(5), "?") && type_row_bytes(4, 32) == 0,
          "unknown type ids are rejected");
    const int quantizers[] = { TS_F32, TS_F16, TS_BF16, TS_Q8_0, TS_Q4_0, TS_Q4_1, TS_Q5_0,
                               TS_Q5_1, TS_Q4_K, TS_Q6_K, TS_Q8_K };
    int all = 1;
    for (size_t i = 0; i < sizeof quantizers / sizeof quantizers[0]; i++)
        all &= type_get(quantizers[i])->quantize_row != NULL;
    CHECK(all, "required quantizers present");
}

/* ---------------------------------------------------------------- f16 / bf16 */

static void test_half_conversions(void) {
    int decode_bad = 0, trip_bad = 0, nan_bad = 0, round_bad = 0;
    for (uint32_t h = 0; h < 65536; h++) {
        float f = f16_to_f32((uint16_t)h);
        double want = half_value((uint16_t)h);
        if (isnan(want)) {
            nan_bad += !isnan(f);
            uint16_t back = f16_from_f32(f);
            nan_bad += !((back & 0x7c00) == 0x7c00 && (back & 0x3ff) != 0);
            continue;
        }
        if ((double)f != want || !signbit(f) != !signbit(want)) decode_bad++;
        if (f16_from_f32(f) != h) trip_bad++;
        /* rounding: between this finite half and the next larger-magnitude one the exact midpoint
         * goes to the even code, anything just off it to the nearer one. */
        if ((h & 0x7fff) < 0x7c00) {
            double next = half_value((uint16_t)(h + 1));   /* 0x7bff + 1 = inf */
            double mid = isinf(next) ? copysign(65520.0, want) : (want + next) / 2;
            uint16_t even = (h & 1) ? (uint16_t)(h + 1) : (uint16_t)h;
            float fm = (float)mid;   /* exact: a midpoint of halves needs 12 significant bits */
            if ((double)fm != mid) round_bad++;
            if (f16_from_f32(fm) != even) round_bad++;
            if (f16_from_f32(nextafterf(fm, 0.0f)) != h) round_bad++;
            if (f16_from_f32(nextafterf(fm, fm * 2)) != (uint16_t)(h + 1)) round_bad++;
        }
    }
    CHECK(decode_bad == 0, "f16_to_f32 matches the IEEE definition for all 63488 finite/inf halves (%d bad)", decode_bad);
    CHECK(trip_bad == 0, "f16 -> f32 -> f16 round trip is exact for every non-NaN half (%d bad)", trip_bad);
    CHECK(nan_bad == 0, "every f16 NaN stays NaN through f32 and back (%d bad)", nan_bad);
    CHECK(round_bad == 0, "f16_from_f32 rounds to nearest, ties to even, at every half boundary (%d bad)", round_bad);
    CHECK(f16_from_f32(1.0f) == 0x3c00 && f16_from_f32(-2.0f) == 0xc000 && f16_from_f32(65504.0f) == 0x7bff &&
          f16_from_f32(65520.0f) == 0x7c00 && f16_from_f32(1e6f) == 0x7c00 && f16_from_f32(-INFINITY) == 0xfc00 &&
          f16_from_f32(0x1p-24f) == 0x0001 && f16_from_f32(0x1p-25f) == 0 && f16_from_f32(0x1.8p-25f) == 0x0001 &&
          f16_from_f32(-0x1p-30f) == 0x8000 && f16_from_f32(0x1p-14f) == 0x0400 && f16_from_f32(0.1f) == 0x2e66 &&
          f16_from_f32(-0.0f) == 0x8000 && f16_from_f32(FLT_MIN / 2) == 0,
          "f16_from_f32 known values (1, -2, max, overflow, inf, subnormals, 0.1, -0)");
    CHECK(f16_to_f32(0x3555) == 0x1.554p-2f && f16_to_f32(0x0001) == 0x1p-24f && isinf(f16_to_f32(0x7c00)),
          "f16_to_f32 known values");

    int bf_bad = 0, bf_nan_bad = 0;
    for (uint32_t h = 0; h < 65536; h++) {
        float f = bf16_to_f32((uint16_t)h);
        double want = bf16_value((uint16_t)h);
        if (isnan(want)) { bf_nan_bad += !isnan(f) || !isnan(bf16_to_f32(bf16_from_f32(f))); continue; }
        bf_bad += (double)f != want || !signbit(f) != !signbit(want) || bf16_from_f32(f) != h;
    }
    CHECK(bf_bad == 0, "bf16 decode matches the definition and round-trips for every non-NaN value (%d bad)", bf_bad);
    CHECK(bf_nan_bad == 0, "every bf16 NaN stays NaN (%d bad)", bf_nan_bad);
    uint32_t bits[] = { 0x3f808000u, 0x3f818000u, 0x3f808001u, 0x3f807fffu, 0x7f7fffffu, 0x7f800001u, 0xff800000u };
    uint16_t want[] = { 0x3f80, 0x3f82, 0x3f81, 0x3f80, 0x7f80, 0, 0xff80 };
    int ok = 1;
    for (int i = 0; i < 7; i++) {
        float f; memcpy(&f, &bits[i], 4);
        uint16_t got = bf16_from_f32(f);
        ok &= i == 5 ? ((got & 0x7f80) == 0x7f80 && (got & 0x7f) != 0) : got == want[i];
    }
    CHECK(ok, "bf16_from_f32 rounds to nearest even, overflows to inf, keeps a low-payload NaN a NaN");
}

/* ---------------------------------------------------------------- hand-built blocks and dot */

static void test_hand_built(const type_case *c, rng *r) {
    const type_traits *t = type_get(c->type);
    /* an odd number of blocks; float types get a length that is not a multiple of 32 */
    int n_blocks = c->block_size == 1 ? 229 : c->block_size == 32 ? 7 : 3;
    int64_t k = (int64_t)n_blocks * c->block_size;
    uint8_t *row = calloc((size_t)n_blocks, c->block_bytes);
    double *want = malloc(sizeof(double) * k), *mag = malloc(sizeof(double) * k);
    float *got = malloc(sizeof(float) * k), *x = malloc(sizeof(float) * k);
    for (int i = 0; i < n_blocks; i++)
        c->build(r, row + i * c->block_bytes, want + i * c->block_size, mag + i * c->block_size);
    t->dequant_row(row, got, k);
    int bad = 0;
    double worst = 0;
    for (int64_t e = 0; e < k; e++) {
        double err = fabs(got[e] - want[e]), tol = 1e-6 * mag[e] + 1e-30;
        if (!(err <= tol)) bad++;
        worst = fmax(worst, err / (mag[e] + 1e-30));
    }
    CHECK(bad == 0, "%s: %lld hand-built weights dequantize to the format's formula (%d bad, worst rel %.2g)",
          type_name(c->type), (long long)k, bad, worst);

    for (int64_t e = 0; e < k; e++) x[e] = rng_gauss(r);
    double ref = 0, abs_sum = 0;
    for (int64_t e = 0; e < k; e++) { ref += (double)got[e] * x[e]; abs_sum += fabs((double)got[e] * x[e]); }
    float dot = t->dot_f32(row, x, k);
    CHECK(fabs(dot - ref) <= 1e-5 * abs_sum + 1e-30,
          "%s: dot_f32 over %lld weights equals dequant + dot (%.9g vs %.9g)", type_name(c->type), (long long)k, dot, ref);
    free(row); free(want); free(mag); free(got); free(x);
}

/* ---------------------------------------------------------------- quantize round trips */

static double rel_rms(const float *a, const float *ref, int64_t n) {
    double num = 0, den = 0;
    for (int64_t i = 0; i < n; i++) { double e = (double)a[i] - ref[i]; num += e * e; den += (double)ref[i] * ref[i]; }
    return den > 0 ? sqrt(num / den) : sqrt(num);
}

static void test_roundtrip(const type_case *c, rng *r) {
    const type_traits *t = type_get(c->type);
    if (!t->quantize_row) { printf("# %s: no quantizer\n", type_name(c->type)); return; }
    const int64_t k = 4096;
    size_t bytes = type_row_bytes(c->type, k);
    uint8_t *row = malloc(bytes);
    float *src = malloc(sizeof(float) * k), *back = malloc(sizeof(float) * k);
    /* gaussian weights whose scale varies from block to block, plus a few outliers */
    for (int64_t i = 0; i < k; i++) {
        float s = 0.02f * (1.0f + (float)((i / 256) % 5));
        src[i] = s * rng_gauss(r);
        if (rng_int(r, 0, 499) == 0) src[i] *= 6.0f;
    }
    t->quantize_row(src, row, k);
    t->dequant_row(row, back, k);
    double err = rel_rms(back, src, k);
    CHECK(err <= c->roundtrip_bound, "%s: quantize -> dequantize rel. RMS error %.4g <= %.3g",
          type_name(c->type), err, c->roundtrip_bound);

    if (c->type == TS_Q8_0 || c->type == TS_Q8_K || c->type == TS_F16 || c->type == TS_BF16 ||
        c->type == TS_F32) {
        /* per-weight bound: half a step of the stored scale (8-bit types) or half an ulp */
        int bad = 0;
        for (int64_t i = 0; i < k; i++) {
            double lim;
            if (c->type == TS_Q8_0) lim = fabs(half_value((uint16_t)(row[i / 32 * 34] | row[i / 32 * 34 + 1] << 8))) / 2;
            else if (c->type == TS_Q8_K) { float d; memcpy(&d, row + i / 256 * 292, 4); lim = fabs(d) / 2; }
            else if (c->type == TS_F16) lim = fabs(src[i]) * ldexp(1, -11) + ldexp(1, -25);
            else if (c->type == TS_BF16) lim = fabs(src[i]) * ldexp(1, -8);
            else lim = 0;
            if (!(fabs((double)back[i] - src[i]) <= lim * (1 + 1e-6))) bad++;
        }
        CHECK(bad == 0, "%s: every weight within half a quantization step (%d bad)", type_name(c->type), bad);
    }

    /* all-zero and constant rows */
    int ok = 1;
    for (int64_t i = 0; i < k; i++) src[i] = 0.0f;
    t->quantize_row(src, row, k);
    t->dequant_row(row, back, k);
    for (int64_t i = 0; i < k; i++) ok &= back[i] == 0.0f;
    for (int64_t i = 0; i < k; i++) src[i] = i < k / 2 ? 0.5f : -0.25f;
    t->quantize_row(src, row, k);
    t->dequant_row(row, back, k);
    double cerr = rel_rms(back, src, k);
    CHECK(ok && cerr <= c->roundtrip_bound, "%s: zero row stays zero, constant row error %.3g", type_name(c->type), cerr);
    free(row); free(src); free(back);
}

/* ---------------------------------------------------------------- real GGUF data */

typedef struct { int tensors; double worst; double worst_shuffled; double worst_ours_ratio; } type_stats;

/* Mis-ordered reads a buggy kernel might do, applied within each block: the two halves swapped
 * (e.g. nibble order) and a pairwise interleave (e.g. treating low/high nibbles as adjacent). */
static void shuffle_block(const float *in, float *out, int n, int kind) {
    for (int i = 0; i < n; i++)
        out[i] = kind == 0 ? in[(i + n / 2) % n] : in[(i % 2) * (n / 2) + i / 2];
}

static void compare_file(const char *folder, const char *file, const gguf_file *ref, type_stats *stats) {
    char path[1024];
    snprintf(path, sizeof path, "%s/%s/%s", fixtures_dir(), folder, file);
    gguf_file *g = NULL;
    ts_error err = { { 0 } };
    if (gguf_open(path, &g, &err) != 0) { CHECK(0, "open %s: %s", path, err.msg); return; }
    const tensor_dir *dir = gguf_tensors(g), *ref_dir = gguf_tensors(ref);
    int missing = 0, unsupported = 0, n_checked = 0;
    for (int i = 0; i < dir->n; i++) {
        const tensor_entry *te = &dir->t[i];
        const tensor_entry *re = tensor_dir_find(ref_dir, te->name);
        const type_traits *t = type_get(te->type);
        const type_case *c = case_for(te->type);
        if (!re || re->type != TS_F32 || memcmp(re->ne, te->ne, sizeof te->ne) != 0) { missing++; continue; }
        if (!t || !c) { unsupported++; continue; }
        int64_t k = te->ne[0], n = 1;
        for (int d = 0; d < TS_MAX_DIMS; d++) n *= te->ne[d];
        int64_t rows = n / k;
        size_t rb = type_row_bytes(te->type, k);
        float *deq = malloc(sizeof(float) * n), *shuf = malloc(sizeof(float) * n);
        for (int64_t r = 0; r < rows; r++) t->dequant_row(te->data + r * rb, deq + r * k, k);
        const float *want = (const float *)re->data;
        double e = rel_rms(deq, want, n);
        type_stats *s = &stats[te->type];
        s->tensors++;
        s->worst = fmax(s->worst, e);
        int ok = e <= c->real_bound;
        if (c->block_size > 1) {
            for (int kind = 0; kind < 2; kind++) {
                for (int64_t b = 0; b < n / c->block_size; b++)
                    shuffle_block(deq + b * c->block_size, shuf + b * c->block_size, c->block_size, kind);
                double es = rel_rms(shuf, want, n);
                if (s->worst_shuffled == 0 || es < s->worst_shuffled) s->worst_shuffled = es;
                ok &= es > 3 * c->real_bound;
            }
        }
        if (!ok) CHECK(0, "%s %s (%s): rel. RMS %.4g, bound %.3g", file, te->name, type_name(c->type), e, c->real_bound);
        if (t->quantize_row && e > 0) {
            /* our round-to-nearest quantizer on the same F32 weights, relative to llama-quantize */
            uint8_t *q = malloc(rb * (size_t)rows);
            for (int64_t r = 0; r < rows; r++) {
                t->quantize_row(want + r * k, q + r * rb, k);
                t->dequant_row(q + r * rb, shuf + r * k, k);
            }
            s->worst_ours_ratio = fmax(s->worst_ours_ratio, rel_rms(shuf, want, n) / e);
            free(q);
        }
        n_checked++;
        free(deq); free(shuf);
    }
    CHECK(missing == 0 && unsupported == 0 && n_checked == dir->n,
          "%s: all %d tensors dequantized and matched against F32 (missing %d, unsupported %d)",
          file, n_checked, missing, unsupported);
    gguf_close(g);
}

static void test_real_gguf(void) {
    static const char *files[] = { "model-f16.gguf", "model-bf16.gguf", "model-q8_0.gguf",
        "model-q4_0.gguf", "model-q4_1.gguf", "model-q5_0.gguf", "model-q5_1.gguf", "model-q2_k.gguf",
        "model-q3_k_m.gguf", "model-q4_k_m.gguf", "model-q5_k_m.gguf", "model-q6_k.gguf" };
    char path[1024];
    snprintf(path, sizeof path, "%s/llama-tiny/model-f32.gguf", fixtures_dir());
    gguf_file *ref = NULL;
    ts_error err = { { 0 } };
    if (gguf_open(path, &ref, &err) != 0) { CHECK(0, "open %s: %s", path, err.msg); return; }
    type_stats stats[TS_TYPE_COUNT] = { { 0, 0, 0, 0 } };
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) compare_file("llama-tiny", files[i], ref, stats);
    gguf_close(ref);
    /* IQ4_NL and IQ4_XS (with Q5_K, Q6_K and an IQ4_NL fallback), quantized by llama.cpp from iq4-tiny's F32 */
    snprintf(path, sizeof path, "%s/iq4-tiny/model-f32.gguf", fixtures_dir());
    if (gguf_open(path, &ref, &err) != 0) { CHECK(0, "open %s: %s", path, err.msg); return; }
    compare_file("iq4-tiny", "model-iq4_nl.gguf", ref, stats);
    compare_file("iq4-tiny", "model-iq4_xs.gguf", ref, stats);
    for (int i = 0; i < N_CASES; i++) {
        const type_case *c = &cases[i];
        const type_stats *s = &stats[c->type];
        if (!s->tensors) continue;
        printf("# real data %-5s: %3d tensors, worst rel. RMS %.4g (bound %.3g), best mis-ordered read %.3g, "
               "our quantizer's error / llama.cpp's <= %.3g\n",
               type_name(c->type), s->tensors, s->worst, c->real_bound, s->worst_shuffled, s->worst_ours_ratio);
        CHECK(s->worst <= c->real_bound && (c->block_size == 1 || s->worst_shuffled > 3 * c->real_bound),
              "%s: llama.cpp-quantized tensors match F32 within %.3g; mis-ordered reads fail", type_name(c->type),
              c->real_bound);
        if (type_get(c->type)->quantize_row)
            CHECK(s->worst_ours_ratio <= 1.05, "%s: our quantizer's error is within 5%% of llama-quantize's on "
                  "every real tensor (ratio %.3g)", type_name(c->type), s->worst_ours_ratio);
    }
    static const int must_see[] = { TS_F16, TS_BF16, TS_Q8_0, TS_Q4_0, TS_Q4_1, TS_Q5_0, TS_Q5_1,
                                    TS_Q2_K, TS_Q3_K, TS_Q4_K, TS_Q5_K, TS_Q6_K, TS_IQ4_NL, TS_IQ4_XS };
    int all = 1;
    for (size_t i = 0; i < sizeof must_see / sizeof must_see[0]; i++) all &= stats[must_see[i]].tensors > 0;
    CHECK(all, "the fixtures exercised every GGUF weight type");
    gguf_close(ref);
}

/* ---------------------------------------------------------------- IQ4 and MXFP4 fixtures */


/* README-phi3-iq's decoder unit tests: rows 0..3 of three tensors, dequantized by gguf-py; ours
 * must give the same bits. */
static void test_iq4_dequant_files(void) {
    static const struct { const char *gguf, *tensor, *expect; int type; } u[] = {
        { "model-iq4_nl.gguf", "token_embd.weight", "dequant-iq4_nl-token_embd-rows0-3.f32", TS_IQ4_NL },
        { "model-iq4_xs.gguf", "token_embd.weight", "dequant-iq4_xs-token_embd-rows0-3.f32", TS_IQ4_XS },
        { "model-iq4_xs.gguf", "blk.0.ffn_down.weight", "dequant-iq4_xs-blk.0.ffn_down-rows0-3.f32", TS_IQ4_NL },
    };
    for (size_t i = 0; i < sizeof u / sizeof u[0]; i++) {
        char path[1024];
        snprintf(path, sizeof path, "%s/iq4-tiny/%s", fixtures_dir(), u[i].expect);
        size_t n = 0;
        float *want = read_all(path, &n);
        snprintf(path, sizeof path, "%s/iq4-tiny/%s", fixtures_dir(), u[i].gguf);
        gguf_file *g = NULL;
        ts_error err = { { 0 } };
        if (!want || gguf_open(path, &g, &err) != 0) { CHECK(0, "open %s (%s)", u[i].expect, err.msg); free(want); continue; }
        const tensor_entry *te = tensor_dir_find(gguf_tensors(g), u[i].tensor);
        int64_t k = te ? te->ne[0] : 0;
        int ok = te && te->type == u[i].type && n == (size_t)(4 * k) * sizeof(float);
        int diff = -1;
        if (ok) {
            float *got = malloc(n);
            size_t rb = type_row_bytes(te->type, k);
            for (int r = 0; r < 4; r++) type_get(te->type)->dequant_row(te->data + r * rb, got + r * k, k);
            diff = 0;
            for (int64_t e = 0; e < 4 * k; e++) diff += memcmp(&got[e], &want[e], 4) != 0;
            free(got);
        }
        CHECK(ok && diff == 0, "%s %s (%s): rows 0-3 equal %s bit for bit (%d differ)", u[i].gguf, u[i].tensor,
              type_name(u[i].type), u[i].expect, diff);
        gguf_close(g);
        free(want);
    }
}

/* MXFP4 at the extreme exponents (e = 0 and 1 give subnormal scales): every code of the table,
 * dequantized exactly to table[q] * 2^(e - 128). */
static void test_mxfp4_exponents(void) {
    static const int exps[] = { 0, 1, 2, 100, 127, 128, 200, 252 };
    int bad = 0;
    for (size_t i = 0; i < sizeof exps / sizeof exps[0]; i++) {
        uint8_t blk[17];
        float got[32];
        blk[0] = (uint8_t)exps[i];
        for (int j = 0; j < 16; j++) blk[1 + j] = (uint8_t)(j | (15 - j) << 4);   /* element j: code j; j + 16: code 15 - j */
        type_get(TS_MXFP4)->dequant_row(blk, got, 32);
        for (int e = 0; e < 32; e++) {
            int q = e < 16 ? e : 31 - e;
            if ((double)got[e] != ldexp(MXFP4_VALUES[q], exps[i] - 128)) bad++;
        }
    }
    CHECK(bad == 0, "MXFP4: every code at exponents 0 .. 252 dequantizes exactly to table[q] * 2^(e - 128) (%d bad)", bad);
}

/* gpt-oss-tiny's MXFP4 experts hold exactly the F32 file's values (README-moe). */
static void test_mxfp4_gpt_oss(void) {
    char path[1024];
    gguf_file *q = NULL, *f = NULL;
    ts_error err = { { 0 } };
    snprintf(path, sizeof path, "%s/gpt-oss-tiny/model-mxfp4_moe.gguf", fixtures_dir());
    if (gguf_open(path, &q, &err) != 0) { CHECK(0, "open %s: %s", path, err.msg); return; }
    snprintf(path, sizeof path, "%s/gpt-oss-tiny/model-f32.gguf", fixtures_dir());
    if (gguf_open(path, &f, &err) != 0) { CHECK(0, "open %s: %s", path, err.msg); gguf_close(q); return; }
    const tensor_dir *qd = gguf_tensors(q), *fd = gguf_tensors(f);
    int n_mxfp4 = 0, n_equal = 0;
    for (int i = 0; i < qd->n; i++) {
        const tensor_entry *te = &qd->t[i];
        if (te->type != TS_MXFP4) continue;
        n_mxfp4++;
        const tensor_entry *re = tensor_dir_find(fd, te->name);
        if (!re || re->type != TS_F32 || memcmp(re->ne, te->ne, sizeof te->ne) != 0) continue;
        int64_t k = te->ne[0], n = 1;
        for (int d = 0; d < TS_MAX_DIMS; d++) n *= te->ne[d];
        size_t rb = type_row_bytes(TS_MXFP4, k);
        float *deq = malloc(sizeof(float) * n);
        for (int64_t r = 0; r < n / k; r++) type_get(TS_MXFP4)->dequant_row(te->data + r * rb, deq + r * k, k);
        n_equal += memcmp(deq, re->data, sizeof(float) * n) == 0;
        free(deq);
    }
    CHECK(n_mxfp4 == 6 && n_equal == n_mxfp4, "gpt-oss-tiny: %d/%d MXFP4 expert tensors dequantize to the F32 "
          "file's values exactly (6 expected)", n_equal, n_mxfp4);
    gguf_close(q);
    gguf_close(f);
}

/* ---------------------------------------------------------------- the low-bit types (README-iq-grid) */

static const struct { const char *name; int type; } LOWBIT[] = {
    { "iq2_xxs", TS_IQ2_XXS }, { "iq2_xs", TS_IQ2_XS }, { "iq2_s", TS_IQ2_S }, { "iq3_xxs", TS_IQ3_XXS },
    { "iq3_s", TS_IQ3_S }, { "iq1_s", TS_IQ1_S }, { "iq1_m", TS_IQ1_M }, { "tq1_0", TS_TQ1_0 },
    { "tq2_0", TS_TQ2_0 }, { "nvfp4", TS_NVFP4 }, { "q1_0", TS_Q1_0 }, { "q2_0", TS_Q2_0 },
};
#define N_LOWBIT (int)(sizeof LOWBIT / sizeof LOWBIT[0])

/* The generated tables (src/kernels/iq_grids.c) against grids.json, entry by entry, and the sign
 * masks the generator derived from them against their definition. */
static void test_iq_grid_tables(void) {
    char path[1024];
    snprintf(path, sizeof path, "%s/iq-grid-tiny/grids.json", fixtures_dir());
    size_t n = 0;
    char *text = read_all(path, &n);
    json_value *root = NULL;
    ts_error err = { { 0 } };
    if (!text || json_parse(text, n, &root, &err) != 0) { CHECK(0, "read %s (%s)", path, err.msg); free(text); return; }
    const json_value *tables = json_get(root, "tables");
    static const struct { const char *name; const void *table; int bytes, count; } t[] = {
        { "ksigns_iq2xs", iq_ksigns, 1, 128 }, { "iq2xxs_grid", iq_grid2xxs, 8, 256 },
        { "iq2xs_grid", iq_grid2xs, 8, 512 }, { "iq2s_grid", iq_grid2s, 8, 1024 },
        { "iq3xxs_grid", iq_grid3xxs, 4, 256 }, { "iq3s_grid", iq_grid3s, 4, 512 },
        { "iq1s_grid", iq_grid1s, 8, 2048 }, { "kvalues_fp4", kvalues_mxfp4, -1, 16 },
    };
    for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) {
        const json_value *v = json_get(json_get(tables, t[i].name), "values");
        int bad = 0;
        if (!v || v->type != JSON_ARRAY || (int)v->n != t[i].count) bad = -1;
        for (int e = 0; bad >= 0 && e < t[i].count; e++) {
            const json_value *x = &v->items[e];
            uint64_t want = x->type == JSON_STRING ? strtoull(x->str, NULL, 16) : (uint64_t)x->integer;
            uint64_t got = t[i].bytes == 8 ? ((const uint64_t *)t[i].table)[e]
                         : t[i].bytes == 4 ? ((const uint32_t *)t[i].table)[e]
                         : t[i].bytes == 1 ? ((const uint8_t *)t[i].table)[e]
                         : (uint64_t)(int64_t)((const int8_t *)t[i].table)[e];
            bad += got != want;
        }
        CHECK(bad == 0, "%s: the engine's %d entries equal grids.json's (%d differ)", t[i].name, t[i].count, bad);
    }
    int bad = 0;
    for (int b = 0; b < 256; b++)
        for (int j = 0; j < 8; j++) bad += grid_byte(iq_sign_mask8[b], j) != (b >> j & 1 ? 0xff : 0x01);
    for (int i = 0; i < 128; i++) bad += iq_ksigns_mask[i] != iq_sign_mask8[iq_ksigns[i]];
    CHECK(bad == 0, "sign masks: byte j of iq_sign_mask8[b] is -1 where bit j of b is set, +1 elsewhere; "
          "iq_ksigns_mask = iq_sign_mask8 o iq_ksigns (%d wrong)", bad);
    /* the VBMI kernels' 2-bit codes of the 8-byte IQ2 grids decode back to the entries */
    static const struct { const char *name; const uint64_t *grid; const uint8_t *codes; int count; } c[] = {
        { "iq2xxs", iq_grid2xxs, &iq_grid2xxs_codes[0][0], 256 },
        { "iq2xs", iq_grid2xs, &iq_grid2xs_codes[0][0], 512 },
        { "iq2s", iq_grid2s, &iq_grid2s_codes[0][0], 1024 },
    };
    for (size_t i = 0; i < sizeof c / sizeof c[0]; i++) {
        static const uint8_t value_of_code[4] = { 8, 25, 43, 0 };
        bad = 0;
        for (int e = 0; e < c[i].count; e++) {
            const unsigned code = c[i].codes[e] | (unsigned)c[i].codes[c[i].count + e] << 8;
            for (int j = 0; j < 8; j++) bad += value_of_code[code >> (2 * j) & 3] != grid_byte(c[i].grid[e], j);
        }
        CHECK(bad == 0, "%s: the 2-bit code planes decode to the grid's values (%d of %d wrong)", c[i].name, bad, 8 * c[i].count);
    }
    json_free(root);
    free(text);
}

/* dequant-<t>.bin / .f32 (rows 0..3 of blk.0.attn_output, ne0 512) and dequant-<t>-random (2048
 * values of random-byte blocks, codes the quantizer never writes), decoded by llama.cpp. */
static void test_lowbit_decoder_vectors(void) {
    for (int i = 0; i < N_LOWBIT; i++)
        for (int rnd = 0; rnd < 2; rnd++) {
            char path[1024];
            size_t nb = 0, nf = 0;
            snprintf(path, sizeof path, "%s/iq-grid-tiny/dequant-%s%s.bin", fixtures_dir(), LOWBIT[i].name, rnd ? "-random" : "");
            uint8_t *bin = read_all(path, &nb);
            snprintf(path, sizeof path, "%s/iq-grid-tiny/dequant-%s%s.f32", fixtures_dir(), LOWBIT[i].name, rnd ? "-random" : "");
            float *want = read_all(path, &nf);
            const int64_t k = rnd ? 2048 : 512, rows = rnd ? 1 : 4;
            const size_t rb = type_row_bytes(LOWBIT[i].type, k);
            int diff = -1;
            if (bin && want && nb == rows * rb && nf == (size_t)(rows * k) * sizeof(float)) {
                float *got = malloc(nf);
                for (int r = 0; r < rows; r++) type_get(LOWBIT[i].type)->dequant_row(bin + r * rb, got + r * k, k);
                diff = 0;
                for (int64_t e = 0; e < rows * k; e++) diff += memcmp(&got[e], &want[e], 4) != 0;
                free(got);
            }
            CHECK(diff == 0, "%s: %s dequantized bit for bit as llama.cpp does (%d of %lld differ)",
                  type_name(LOWBIT[i].type), rnd ? "random-byte blocks" : "real rows", diff, (long long)(rows * k));
            free(bin);
            free(want);
        }
}

/* The unpacked integer form the dot products use (d * sc * q) is the dequantized weight: exactly for
 * the float order-free cases, within an f32 rounding otherwise; over random bytes (redrawn until
 * finite) so every grid entry and sign pattern is met. */
static void test_unpacked_form(rng *r) {
    static const struct { int type; unpack_block_fn unpack; } u[] = {
        { TS_IQ2_XXS, iq2_xxs_unpack }, { TS_IQ2_XS, iq2_xs_unpack }, { TS_IQ2_S, iq2_s_unpack },
        { TS_IQ3_XXS, iq3_xxs_unpack }, { TS_IQ3_S, iq3_s_unpack }, { TS_IQ1_S, iq1_s_unpack },
        { TS_IQ1_M, iq1_m_unpack }, { TS_TQ1_0, tq1_0_unpack }, { TS_TQ2_0, tq2_0_unpack },
    };
    for (size_t i = 0; i < sizeof u / sizeof u[0]; i++) {
        const size_t bb = type_block_bytes(u[i].type);
        uint8_t blk[128];
        float deq[QK_K];
        int bad = 0, blocks = 0;
        for (int trial = 0; trial < 400; trial++) {
            for (size_t j = 0; j < bb; j++) blk[j] = (uint8_t)rng_u32(r);
            type_get(u[i].type)->dequant_row(blk, deq, QK_K);
            int finite = 1;
            for (int j = 0; j < QK_K; j++) finite &= isfinite(deq[j]) && fabsf(deq[j]) < 1e30f;
            if (!finite) continue;
            blocks++;
            block_unpacked up;
            u[i].unpack(blk, &up);
            for (int j = 0; j < QK_K; j++) {
                double v = (double)up.d * up.sc[j / 16] * up.q[j];
                if (fabs(v - deq[j]) > 1e-6 * fabs(deq[j]) + 1e-37) bad++;
            }
        }
        CHECK(bad == 0 && blocks > 100, "%s: the unpacked form d * sc * q equals the dequantized weights (%d blocks, %d off)",
              type_name(u[i].type), blocks, bad);
    }
}

/* Every tensor of every iq-grid-tiny file (llama-quantize from model-f32.gguf) dequantized near the
 * F32 weights: the rel. RMS error within the file's bound (about 1.3x what the bit-exact decoders
 * give: these are 1-3 bit fits of random weights), and row r decoded from row r + 1's bytes far
 * from it (~1.4), so the bound says something. */
static void test_lowbit_real_files(void) {
    static const double bound[N_LOWBIT + 1] = { 0.45, 0.40, 0.33, 0.25, 0.19, 0.65, 0.62, 0.90, 0.90, 0.13, 0.75, 0.85, 0.65 };
    char path[1024];
    gguf_file *f32 = NULL;
    ts_error err = { { 0 } };
    snprintf(path, sizeof path, "%s/iq-grid-tiny/model-f32.gguf", fixtures_dir());
    if (gguf_open(path, &f32, &err) != 0) { CHECK(0, "open %s: %s", path, err.msg); return; }
    for (int i = 0; i < N_LOWBIT + 1; i++) {
        const char *name = i < N_LOWBIT ? LOWBIT[i].name : "ud-mix";
        gguf_file *g = NULL;
        snprintf(path, sizeof path, "%s/iq-grid-tiny/model-%s.gguf", fixtures_dir(), name);
        if (gguf_open(path, &g, &err) != 0) { CHECK(0, "open %s: %s", path, err.msg); continue; }
        const tensor_dir *d = gguf_tensors(g);
        int n = 0, worse = 0, types_seen = 0;
        double worst = 0, best_shifted = 1e30;
        int seen[TS_TYPE_COUNT] = { 0 };
        for (int t = 0; t < d->n; t++) {
            const tensor_entry *te = &d->t[t];
            if (te->type == TS_F32) continue;
            const tensor_entry *re = tensor_dir_find(gguf_tensors(f32), te->name);
            if (!re || memcmp(re->ne, te->ne, sizeof te->ne) != 0) { worse++; continue; }
            types_seen += !seen[te->type]++;
            const int64_t k = te->ne[0], rows = te->ne[1];
            const size_t rb = type_row_bytes(te->type, k);
            float *w = malloc(sizeof(float) * k), *ws = malloc(sizeof(float) * k);
            double e2 = 0, r2 = 0, s2 = 0;
            for (int64_t row = 0; row < rows; row++) {
                type_get(te->type)->dequant_row(te->data + row * rb, w, k);
                type_get(te->type)->dequant_row(te->data + (row + 1) % rows * rb, ws, k);
                const float *ref = (const float *)re->data + row * k;
                for (int64_t j = 0; j < k; j++) {
                    e2 += (w[j] - ref[j]) * (double)(w[j] - ref[j]);
                    r2 += (ws[j] - ref[j]) * (double)(ws[j] - ref[j]);
                    s2 += (double)ref[j] * ref[j];
                }
            }
            double rel = sqrt(e2 / s2), rel_shifted = sqrt(r2 / s2);
            if (rel > worst) worst = rel;
            if (rel_shifted < best_shifted) best_shifted = rel_shifted;
            n++;
            free(w); free(ws);
        }
        CHECK(n == 16 && worse == 0 && worst <= bound[i] && best_shifted > 1.1 &&
                  (i < N_LOWBIT ? types_seen == 1 && seen[LOWBIT[i].type] == 16 : types_seen == 14),
              "model-%s.gguf: %d matrices (%d types) near model-f32's: worst rel. RMS %.3f (bound %.2f), "
              "a shifted row %.3f or more", name, n, types_seen, worst, bound[i], best_shifted);
        gguf_close(g);
    }
    gguf_close(f32);
}

int main(void) {
    rng r = { 0x9E3779B97F4A7C15ULL };
    test_type_table();
    test_half_conversions();
    for (int i = 0; i < N_CASES; i++) test_hand_built(&cases[i], &r);
    for (int i = 0; i < N_CASES; i++) test_roundtrip(&cases[i], &r);
    test_real_gguf();
    test_iq4_dequant_files();
    test_mxfp4_exponents();
    test_mxfp4_gpt_oss();
    test_iq_grid_tables();
    test_lowbit_decoder_vectors();
    test_unpacked_form(&r);
    test_lowbit_real_files();
    CHECK_EXIT();
}
