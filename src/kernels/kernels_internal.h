/* Block layouts of the GGUF/ggml tensor types and the per-type kernel entry points (private to
 * src/kernels/).
 *
 * Every block struct is made of bytes only, so a block has no alignment requirement and its
 * multi-byte fields are read little-endian whatever the host. The layouts (field order and sizes)
 * are exactly those of ggml's block_* structs, because rows are read straight out of GGUF files.
 * F32/F16/BF16 rows are plain arrays and must be aligned to their element size. */
#ifndef TS_KERNELS_INTERNAL_H
#define TS_KERNELS_INTERNAL_H
#include <math.h>
#include <stdint.h>
#include <string.h>
#include "core/tensor_type.h"
#include "kernels/type_traits.h"

#define QK 32      /* weights per block of the legacy types (Q4_0 ... Q8_0) */
#define QK_K 256   /* weights per super-block of the K-quants */

/* value = (q - 8) * d; byte j holds element j (low nibble) and element j+16 (high nibble). */
typedef struct { uint8_t d[2]; uint8_t qs[QK / 2]; } block_q4_0;
/* value = q * d + m; nibbles as Q4_0. */
typedef struct { uint8_t d[2]; uint8_t m[2]; uint8_t qs[QK / 2]; } block_q4_1;
/* value = (q - 16) * d; low 4 bits as Q4_0, bit 4 of element j is bit j of the LE u32 qh. */
typedef struct { uint8_t d[2]; uint8_t qh[4]; uint8_t qs[QK / 2]; } block_q5_0;
/* value = q * d + m; bits as Q5_0. */
typedef struct { uint8_t d[2]; uint8_t m[2]; uint8_t qh[4]; uint8_t qs[QK / 2]; } block_q5_1;
/* value = q * d. */
typedef struct { uint8_t d[2]; int8_t qs[QK]; } block_q8_0;
/* Q4NX (repacked FastFlowLM q4nx tiles): value = q * d + m with a bf16 d and m; nibbles as Q4_0. */
typedef struct { uint8_t d[2]; uint8_t m[2]; uint8_t qs[QK / 2]; } block_q4nx;

/* 16 groups of 16: value = d * (scales[g] & 15) * q - dmin * (scales[g] >> 4), q in 0..3.
 * Element e = 128n + 32j + l (l < 32) is bits 2j..2j+1 of qs[32n + l]; group g = e / 16. */
typedef struct { uint8_t scales[QK_K / 16]; uint8_t qs[QK_K / 4]; uint8_t d[2]; uint8_t dmin[2]; } block_q2_K;
/* 16 groups of 16: value = d * (s[g] - 32) * (q - (high bit set ? 0 : 4)), q = 2 low bits as in
 * Q2_K, the high bit of element e = 128n + 32j + l is bit 4n + j of hmask[l]; s[g] is a 6-bit
 * value: low 4 bits in scales[g % 8] (low nibble for g < 8, high nibble otherwise), high 2 bits
 * in scales[8 + g % 4] at bit 2 * (g / 4). */
typedef struct { uint8_t hmask[QK_K / 8]; uint8_t qs[QK_K / 4]; uint8_t scales[12]; uint8_t d[2]; } block_q3_K;
/* Q3_K's 6-bit s[g] from its 12 scale bytes (the packing above) */
static inline int q3_k_scale6(const uint8_t *s, int g) {
    return (g < 8 ? s[g] & 0xf : s[g - 8] >> 4) | ((s[8 + g % 4] >> (2 * (g / 4))) & 3) << 4;
}
/* 8 groups of 32: value = d * sc[g] * q - dmin * m[g], q in 0..15, sc/m 6-bit (see q4_k.c for the
 * packing). Element e = 64c + l (l < 32): low nibble of qs[32c + l]; e = 64c + 32 + l: high nibble. */
typedef struct { uint8_t d[2]; uint8_t dmin[2]; uint8_t scales[12]; uint8_t qs[QK_K / 2]; } block_q4_K;
/* Q4_K plus a fifth bit: element 64c + l has bit 2c of qh[l], element 64c + 32 + l bit 2c + 1. */
typedef struct { uint8_t d[2]; uint8_t dmin[2]; uint8_t scales[12]; uint8_t qh[QK_K / 8]; uint8_t qs[QK_K / 2]; } block_q5_K;
/* 16 groups of 16: value = d * scales[g] * (q - 32), q 6-bit. Element e = 128n + 32j + l: low 4
 * bits from ql[64n + 32(j & 1) + l] (low nibble for j < 2, high for j >= 2), high 2 bits from
 * bits 2j..2j+1 of qh[32n + l]; group g = e / 16. */
typedef struct { uint8_t ql[QK_K / 2]; uint8_t qh[QK_K / 4]; int8_t scales[QK_K / 16]; uint8_t d[2]; } block_q6_K;
/* value = d * q with an f32 d; bsums[i] = sum of qs[16i .. 16i+15] (for integer dot products). */
typedef struct { uint8_t d[4]; int8_t qs[QK_K]; uint8_t bsums[2 * (QK_K / 16)]; } block_q8_K;
/* IQ4_NL: value = d * kvalues_iq4nl[q] with a 4-bit index q; nibbles as Q4_0. */
typedef struct { uint8_t d[2]; uint8_t qs[QK / 2]; } block_iq4_nl;
/* IQ4_XS: 8 sub-blocks of 32, value = d * (ls - 32) * kvalues_iq4nl[q]. The 6-bit ls of sub-block
 * ib: low 4 bits = nibble ib of the LE u32 scales_l (scales_l[ib / 2] >> 4 * (ib % 2)), high 2
 * bits = bits 2ib..2ib+1 of the LE u16 scales_h. Sub-block ib's codes are qs[16ib .. 16ib + 15],
 * nibbles as IQ4_NL. */
typedef struct { uint8_t d[2]; uint8_t scales_h[2]; uint8_t scales_l[QK_K / 64]; uint8_t qs[QK_K / 2]; } block_iq4_xs;
/* MXFP4: value = kvalues_mxfp4[q] * 2^(e - 128) (E2M1 values times two, so the shared E8M0
 * exponent e scales by half of 2^(e - 127)); nibbles as Q4_0. */
typedef struct { uint8_t e; uint8_t qs[QK / 2]; } block_mxfp4;
/* ---- the low-bit types of README-iq-grid (layouts: ggml's block_* structs) ----
 * The grid types index lookup tables (kernels/iq_grids.h) with one entry per group of 8 (IQ1, IQ2)
 * or 4 (IQ3) weights; "sub-block" ib = 32 weights, group l = 8 weights, element 32 ib + 8 l + j. */
/* qs: per sub-block 8 bytes: 4 grid indices (groups 0..3), then the LE u32 w: bits 7l..7l+6 the
 * sign index of group l (ksigns_iq2xs), bits 28..31 the scale s; value = d (2s+1)/8 * grid * sign */
typedef struct { uint8_t d[2]; uint8_t qs[64]; } block_iq2_xxs;
/* qs: LE u16 per group (4 ib + l): 9-bit grid index, 7-bit sign index; scales[ib]: low nibble
 * for groups 0, 1, high nibble for groups 2, 3 */
typedef struct { uint8_t d[2]; uint8_t qs[64]; uint8_t scales[QK_K / 32]; } block_iq2_xs;
/* qs[0..31]: low 8 bits of group (4 ib + l)'s 10-bit index, qs[32..63]: its explicit sign byte;
 * qh[ib] bits 2l, 2l + 1: index bits 8, 9; scales as IQ2_XS */
typedef struct { uint8_t d[2]; uint8_t qs[64]; uint8_t qh[QK_K / 32]; uint8_t scales[QK_K / 32]; } block_iq2_s;
/* qs[0..63]: 8 indices (4 weights each) per sub-block; then 8 LE u32 w as IQ2_XXS;
 * value = d (2s+1)/4 * grid * sign */
typedef struct { uint8_t d[2]; uint8_t qs[3 * QK_K / 8]; } block_iq3_xxs;
/* qs: low 8 bits of 8 indices (4 weights each) per sub-block, qh[ib] bit k: bit 8 of index k;
 * signs[4 ib + l]: explicit sign byte of group l; scales: nibble ib; value = d (2s+1) grid sign */
typedef struct { uint8_t d[2]; uint8_t qs[QK_K / 4]; uint8_t qh[QK_K / 32]; uint8_t signs[QK_K / 8]; uint8_t scales[QK_K / 64]; } block_iq3_s;
/* qs[4 ib + l]: low 8 bits of an 11-bit index into iq1s_grid (-1/0/+1); qh[ib] LE u16: bits 3l..3l+2
 * index bits 8..10, bits 12..14 s, bit 15 the delta's sign; value = d (2s+1) (grid + delta) */
typedef struct { uint8_t d[2]; uint8_t qs[QK_K / 8]; uint8_t qh[QK_K / 16]; } block_iq1_s;
/* qs as IQ1_S; qh[2 ib + l/2] nibble (low for even l): index bits 8..10, bit 3 the delta's sign;
 * sc: 4 LE u16 with 3-bit scales (two per 16 weights... see iq1.c) and the f16 d in their top nibbles */
typedef struct { uint8_t qs[QK_K / 8]; uint8_t qh[QK_K / 16]; uint8_t sc[QK_K / 32]; } block_iq1_m;
/* ternary: 5 trits per byte in qs, 4 in qh; the f16 d last; value = (t - 1) d */
typedef struct { uint8_t qs[(QK_K - 4 * QK_K / 64) / 5]; uint8_t qh[QK_K / 64]; uint8_t d[2]; } block_tq1_0;
/* 2-bit fields: weight 128 h + 32 l + m is bits 2l..2l+1 of qs[32 h + m]; value = (q - 1) d */
typedef struct { uint8_t qs[QK_K / 4]; uint8_t d[2]; } block_tq2_0;
/* NVFP4: 4 sub-blocks of 16 with a UE4M3 scale byte each; qs[8 s + j]: low nibble weight 16 s + j,
 * high nibble 16 s + 8 + j; value = kvalues_mxfp4[nibble] * ue4m3(d[s]) / 2 */
typedef struct { uint8_t d[4]; uint8_t qs[32]; } block_nvfp4;
/* Q1_0: 128 weights, bit j % 8 of qs[j / 8]: value = bit ? d : -d */
typedef struct { uint8_t d[2]; uint8_t qs[16]; } block_q1_0;
/* Q2_0: 64 weights, bits 2 (j % 4) of qs[j / 4]: value = (q - 1) d */
typedef struct { uint8_t d[2]; uint8_t qs[16]; } block_q2_0;

/* A 256-weight super-block of a grid or ternary type unpacked into integers (for the integer dot
 * products and the prefill's repacked rows): value = d * sc[e / 16] * q[e], exactly the integer
 * form ggml's dot kernels use (e.g. IQ2_XXS: d = f16 d / 8, sc = 2s + 1, q = signed grid value).
 * Every type's |q| <= 62 (IQ3_XXS's largest grid value; test_kernels checks each unpacking), which
 * the x86 tiles rely on to take q + 64 as an unsigned byte; |sc| <= 64. */
typedef struct { float d; int16_t sc[16]; int8_t q[QK_K]; } block_unpacked;
typedef void (*unpack_block_fn)(const uint8_t *block, block_unpacked *u);
void iq2_xxs_unpack(const uint8_t *block, block_unpacked *u);
void iq2_xs_unpack(const uint8_t *block, block_unpacked *u);
void iq2_s_unpack(const uint8_t *block, block_unpacked *u);
void iq3_xxs_unpack(const uint8_t *block, block_unpacked *u);
void iq3_s_unpack(const uint8_t *block, block_unpacked *u);
void iq1_s_unpack(const uint8_t *block, block_unpacked *u);
void iq1_m_unpack(const uint8_t *block, block_unpacked *u);
void tq1_0_unpack(const uint8_t *block, block_unpacked *u);
void tq2_0_unpack(const uint8_t *block, block_unpacked *u);
void q3_k_unpack(const uint8_t *block, block_unpacked *u);   /* symmetric: d (s - 32) q */

/* Activations only (the AVX-512 Q8_0 and Q5_0 kernels): two Q8_0 blocks laid out for one 512-bit
 * vector each way. qs: the codes plus 128 (unsigned, as VNNI's dpbusd wants them), block 2p then
 * block 2p + 1; d: 16 little-endian f32, the f16-rounded scale of block 2p eight times, then that
 * of block 2p + 1. A row with an odd number of blocks ends with a half pair (codes 128, scale 0). */
typedef struct { uint8_t qs[2 * QK]; uint8_t d[16 * 4]; } block_q8_0x2;

_Static_assert(sizeof(block_q4_0) == 18, "block_q4_0 layout");
_Static_assert(sizeof(block_q4_1) == 20, "block_q4_1 layout");
_Static_assert(sizeof(block_q5_0) == 22, "block_q5_0 layout");
_Static_assert(sizeof(block_q5_1) == 24, "block_q5_1 layout");
_Static_assert(sizeof(block_q8_0) == 34, "block_q8_0 layout");
_Static_assert(sizeof(block_q4nx) == 20, "block_q4nx layout");
_Static_assert(sizeof(block_q2_K) == 84, "block_q2_K layout");
_Static_assert(sizeof(block_q3_K) == 110, "block_q3_K layout");
_Static_assert(sizeof(block_q4_K) == 144, "block_q4_K layout");
_Static_assert(sizeof(block_q5_K) == 176, "block_q5_K layout");
_Static_assert(sizeof(block_q6_K) == 210, "block_q6_K layout");
_Static_assert(sizeof(block_q8_K) == 292, "block_q8_K layout");
_Static_assert(sizeof(block_iq4_nl) == 18, "block_iq4_nl layout");
_Static_assert(sizeof(block_iq4_xs) == 136, "block_iq4_xs layout");
_Static_assert(sizeof(block_mxfp4) == 17, "block_mxfp4 layout");
_Static_assert(sizeof(block_q8_0x2) == 128, "block_q8_0x2 layout");
_Static_assert(sizeof(block_iq2_xxs) == 66, "block_iq2_xxs layout");
_Static_assert(sizeof(block_iq2_xs) == 74, "block_iq2_xs layout");
_Static_assert(sizeof(block_iq2_s) == 82, "block_iq2_s layout");
_Static_assert(sizeof(block_iq3_xxs) == 98, "block_iq3_xxs layout");
_Static_assert(sizeof(block_iq3_s) == 110, "block_iq3_s layout");
_Static_assert(sizeof(block_iq1_s) == 50, "block_iq1_s layout");
_Static_assert(sizeof(block_iq1_m) == 56, "block_iq1_m layout");
_Static_assert(sizeof(block_tq1_0) == 54, "block_tq1_0 layout");
_Static_assert(sizeof(block_tq2_0) == 66, "block_tq2_0 layout");
_Static_assert(sizeof(block_nvfp4) == 36, "block_nvfp4 layout");
_Static_assert(sizeof(block_q1_0) == 18, "block_q1_0 layout");
_Static_assert(sizeof(block_q2_0) == 18, "block_q2_0 layout");
_Static_assert(sizeof(block_unpacked) == 292, "block_unpacked layout");

/* The non-linear 4-bit tables: IQ4_NL/IQ4_XS values (ggml's kvalues_iq4nl) and MXFP4's E2M1
 * values doubled (sign in bit 3). */
static const int8_t kvalues_iq4nl[16] = { -127, -104, -83, -65, -49, -35, -22, -10, 1, 13, 25, 38, 53, 69, 89, 113 };
static const int8_t kvalues_mxfp4[16] = { 0, 1, 2, 3, 4, 6, 8, 12, 0, -1, -2, -3, -4, -6, -8, -12 };

/* ---- half precision, inline so per-element row kernels need no call ---- */

static inline float f32_from_bits(uint32_t b) { float f; memcpy(&f, &b, 4); return f; }
static inline uint32_t f32_bits(float f) { uint32_t b; memcpy(&b, &f, 4); return b; }

static inline float half_to_f32(uint16_t h) {
#if defined(__aarch64__)
    /* one instruction (FCVT), exact like the bit version (other targets); a signalling NaN comes
     * back quiet */
    __fp16 v;
    memcpy(&v, &h, 2);
    return (float)v;
#else
    uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
    uint32_t exp = (h >> 10) & 0x1fu, man = h & 0x3ffu;
    if (exp == 0x1f) return f32_from_bits(sign | 0x7f800000u | (man << 13));   /* inf, NaN payload */
    if (exp != 0) return f32_from_bits(sign | ((exp + 112) << 23) | (man << 13));
    /* zero or subnormal: man * 2^-24 is exact in f32 */
    float v = (float)man * 0x1p-24f;
    return sign ? -v : v;
#endif
}

static inline float bfloat_to_f32(uint16_t h) { return f32_from_bits((uint32_t)h << 16); }

/* 2^(e - 128), exact (e = 0 and 1 are f32 subnormals): the MXFP4 block scale for the doubled
 * E2M1 table. */
static inline float e8m0_half_to_f32(uint8_t e) {
    return f32_from_bits(e < 2 ? 0x00200000u << e : (uint32_t)(e - 1) << 23);
}

/* An NVFP4 scale byte (unsigned E4M3, bit 7 ignored, 0x7f read as 0 like 0x00) halved, for the
 * doubled E2M1 table: m * 2^-10 for exponent 0, else (8 + m) * 2^(e - 11), exact. */
static inline float ue4m3_half_to_f32(uint8_t b) {
    if (b == 0x00 || b == 0x7f) return 0.0f;
    const uint32_t e = (b >> 3) & 15, m = b & 7;
    /* (1 + m/8) * 2^(e - 8): the f32 with exponent e - 8 and mantissa m in its top 3 bits */
    return e == 0 ? (float)m * 0x1p-10f : f32_from_bits((e + 119) << 23 | m << 20);
}

/* Little-endian field loads from block bytes. */
static inline float load_f16(const uint8_t *p) { return half_to_f32((uint16_t)(p[0] | p[1] << 8)); }
static inline void store_f16(uint8_t *p, uint16_t h) { p[0] = (uint8_t)h; p[1] = (uint8_t)(h >> 8); }
static inline uint16_t load_u16(const uint8_t *p) { return (uint16_t)(p[0] | p[1] << 8); }
static inline uint32_t load_u32(const uint8_t *p) {
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}
static inline uint64_t load_u64(const uint8_t *p) { return load_u32(p) | (uint64_t)load_u32(p + 4) << 32; }
static inline void store_u32(uint8_t *p, uint32_t v) {
    p[0] = (uint8_t)v; p[1] = (uint8_t)(v >> 8); p[2] = (uint8_t)(v >> 16); p[3] = (uint8_t)(v >> 24);
}

/* Round half away from zero, as the reference quantizers do. */
static inline int nearest_int(float v) { return (int)lroundf(v); }
static inline int clamp_int(int v, int lo, int hi) { return v < lo ? lo : v > hi ? hi : v; }

/* The index of the table value nearest to v (the first one on a tie): the non-linear 4-bit
 * quantizers (IQ4_NL, IQ4_XS, MXFP4). */
static inline int nearest_index16(const int8_t *values, float v) {
    int best = 0;
    float err = fabsf(v - values[0]);
    for (int i = 1; i < 16; i++) {
        float e = fabsf(v - values[i]);
        if (e < err) { err = e; best = i; }
    }
    return best;
}

/* Q4_K / Q5_K pack 8 six-bit scales and 8 six-bit mins into 12 bytes: groups 0..3 in the low 6
 * bits of bytes 0..3 (scales) and 4..7 (mins); groups 4..7 keep their low 4 bits in bytes 8..11
 * (scale low nibble, min high nibble) and their top 2 bits in the top bits of bytes 0..3 / 4..7. */
static inline void kq_get_scale_min(const uint8_t *s, int g, int *sc, int *m) {
    if (g < 4) {
        *sc = s[g] & 63;
        *m = s[g + 4] & 63;
    } else {
        *sc = (s[g + 4] & 0xf) | (s[g - 4] >> 6) << 4;
        *m = (s[g + 4] >> 4) | (s[g] >> 6) << 4;
    }
}

/* All 8 scales and mins at once, a 32-bit word (4 groups) at a time (sc widened for madd). */
static inline void kq_unpack_scales_mins(const uint8_t *packed, int16_t *sc, uint8_t *m) {
    uint32_t u[3], out[4];
    memcpy(u, packed, 12);
    out[0] = u[0] & 0x3f3f3f3fu;                                                   /* sc 0-3 */
    out[1] = (u[2] & 0x0f0f0f0fu) | ((u[0] >> 6) & 0x03030303u) << 4;              /* sc 4-7 */
    out[2] = u[1] & 0x3f3f3f3fu;                                                   /* m 0-3 */
    out[3] = ((u[2] >> 4) & 0x0f0f0f0fu) | ((u[1] >> 6) & 0x03030303u) << 4;       /* m 4-7 */
    uint8_t b[16];
    memcpy(b, out, 16);
    for (int g = 0; g < 8; g++) sc[g] = b[g];
    memcpy(m, b + 8, 8);
}

static inline void kq_pack_scale_min(uint8_t *s, const uint8_t *sc, const uint8_t *m) {
    for (int g = 0; g < 4; g++) {
        s[g] = (uint8_t)((sc[g] & 63) | (sc[g + 4] >> 4) << 6);
        s[g + 4] = (uint8_t)((m[g] & 63) | (m[g + 4] >> 4) << 6);
        s[g + 8] = (uint8_t)((sc[g + 4] & 0xf) | (m[g + 4] & 0xf) << 4);
    }
}

/* ---- shared row drivers: a row is k / block_size independent blocks ---- */

typedef void (*block_dequant_fn)(const uint8_t *block, float *dst);

static inline void dequant_blocks(const void *row, float *dst, int64_t k, int block_size,
                                  size_t block_bytes, block_dequant_fn dequant_block) {
    const uint8_t *b = row;
    for (int64_t i = 0; i < k / block_size; i++)
        dequant_block(b + (size_t)i * block_bytes, dst + i * block_size);
}

/* The scalar reference dot: each block is dequantized into a stack buffer and summed in f32 (in
 * element order); the block sums are accumulated in double, so the result stays within f32
 * rounding of the exact dot of the dequantized row even for long rows. */
static inline float dot_blocks(const void *row, const float *x, int64_t k, int block_size,
                               size_t block_bytes, block_dequant_fn dequant_block) {
    const uint8_t *b = row;
    float w[QK_K];
    double total = 0.0;
    for (int64_t i = 0; i < k / block_size; i++) {
        dequant_block(b + (size_t)i * block_bytes, w);
        const float *xb = x + i * block_size;
        float sum = 0.0f;
        for (int j = 0; j < block_size; j++) sum += w[j] * xb[j];
        total += sum;
    }
    return (float)total;
}

/* The traits T_traits of a type whose file defines T_dequant_block(block, dst): dequantization and
 * the scalar reference dot through it, no quantizer. */
#define BLOCK_TYPE_TRAITS(T, block, block_size)                                                  \
    static void T##_dequant_row(const void *row, float *dst, int64_t k) {                       \
        dequant_blocks(row, dst, k, block_size, sizeof(block), T##_dequant_block);              \
    }                                                                                            \
    static float T##_dot_f32(const void *row, const float *x, int64_t k) {                      \
        return dot_blocks(row, x, k, block_size, sizeof(block), T##_dequant_block);             \
    }                                                                                            \
    const type_traits T##_traits = { T##_dequant_row, T##_dot_f32, NULL };

/* ---- per-type traits, each exported by its type's file (f32.c, q4_k.c, ...) ---- */

extern const type_traits f32_traits, f16_traits, bf16_traits;
extern const type_traits q8_0_traits, q4_0_traits, q4_1_traits, q5_0_traits, q5_1_traits;
extern const type_traits q2_k_traits, q3_k_traits, q4_k_traits, q5_k_traits, q6_k_traits, q8_k_traits;
extern const type_traits q4nx_traits;
extern const type_traits iq4_nl_traits, iq4_xs_traits, mxfp4_traits;
extern const type_traits iq2_xxs_traits, iq2_xs_traits, iq2_s_traits, iq3_xxs_traits, iq3_s_traits;
extern const type_traits iq1_s_traits, iq1_m_traits, tq1_0_traits, tq2_0_traits;
extern const type_traits nvfp4_traits, q1_0_traits, q2_0_traits;

/* The reference activation quantizers (q8_0.c, q8_k.c), also called by q8_act.c. */
void q8_0_quantize_row(const float *src, void *row, int64_t k);
void q8_k_quantize_row(const float *src, void *row, int64_t k);

/* Fits 32 weights to d * kvalues_iq4nl[idx] (iq4_nl.c; IQ4_XS fits its sub-blocks with it): returns
 * d (unrounded), writes the indices. */
float iq4_nl_fit_group(const float *x, uint8_t *idx);

/* ---- K-quant super-block fitting, shared by the K-quant quantizers (kquant_fit.c) ---- */

/* Affine groups (Q2_K, Q4_K, Q5_K): x ~= d*sc[g]*q - dmin*m[g], q in 0..qmax, sc/m in 0..code_max.
 * Writes the codes, the f16 bits of d and dmin, and q[0..n_groups*group_len). */
void kquant_fit_affine(const float *x, int n_groups, int group_len, int qmax, int code_max,
                       uint16_t *d_bits, uint16_t *dmin_bits, uint8_t *sc, uint8_t *m, uint8_t *q);
/* Symmetric groups (Q3_K, Q6_K): x ~= d*sc[g]*q, q in qmin..-qmin-1, sc in -code_lim..code_lim-1. */
void kquant_fit_symmetric(const float *x, int n_groups, int group_len, int qmin, int code_lim,
                          uint16_t *d_bits, int *sc, int *q);

#endif
