/* The type table (block sizes and kernels per GGUF type id) and the half-precision conversions. */
#include "kernels/kernels_internal.h"

#define ENTRY(id, nm, bs, bytes, fn) \
    [id] = { nm, bs, bytes, dequant_row_##fn, dot_f32_##fn, quantize_row_##fn }

static const type_traits type_table[TS_TYPE_COUNT] = {
    ENTRY(TS_F32,  "F32",  1,    4,                   f32),
    ENTRY(TS_F16,  "F16",  1,    2,                   f16),
    ENTRY(TS_BF16, "BF16", 1,    2,                   bf16),
    ENTRY(TS_Q4_0, "Q4_0", QK,   sizeof(block_q4_0),  q4_0),
    ENTRY(TS_Q4_1, "Q4_1", QK,   sizeof(block_q4_1),  q4_1),
    ENTRY(TS_Q5_0, "Q5_0", QK,   sizeof(block_q5_0),  q5_0),
    ENTRY(TS_Q5_1, "Q5_1", QK,   sizeof(block_q5_1),  q5_1),
    ENTRY(TS_Q8_0, "Q8_0", QK,   sizeof(block_q8_0),  q8_0),
    ENTRY(TS_Q2_K, "Q2_K", QK_K, sizeof(block_q2_K),  q2_k),
    ENTRY(TS_Q3_K, "Q3_K", QK_K, sizeof(block_q3_K),  q3_k),
    ENTRY(TS_Q4_K, "Q4_K", QK_K, sizeof(block_q4_K),  q4_k),
    ENTRY(TS_Q5_K, "Q5_K", QK_K, sizeof(block_q5_K),  q5_k),
    ENTRY(TS_Q6_K, "Q6_K", QK_K, sizeof(block_q6_K),  q6_k),
    ENTRY(TS_Q8_K, "Q8_K", QK_K, sizeof(block_q8_K),  q8_k),
    ENTRY(TS_Q4NX, "Q4NX", QK,   sizeof(block_q4nx),  q4nx),
};

const type_traits *type_get(int type) {
    if (type < 0 || type >= TS_TYPE_COUNT || !type_table[type].name) return NULL;
    return &type_table[type];
}

const char *type_name(int type) {
    const type_traits *t = type_get(type);
    return t ? t->name : "?";
}

size_t type_row_bytes(int type, int64_t k) {
    const type_traits *t = type_get(type);
    if (!t || k < 0 || k % t->block_size != 0) return 0;
    uint64_t blocks = (uint64_t)(k / t->block_size);
    if (blocks > SIZE_MAX / t->block_bytes) return 0;
    return (size_t)blocks * t->block_bytes;
}

float fp16_to_f32(uint16_t h) { return half_to_f32(h); }

/* Round to nearest even; overflow gives inf, NaN stays a (quiet) NaN with its top payload bits. */
uint16_t f32_to_fp16(float f) {
    uint32_t x = f32_bits(f);
    uint16_t sign = (uint16_t)((x >> 16) & 0x8000u);
    uint32_t exp = (x >> 23) & 0xffu, man = x & 0x7fffffu;
    if (exp == 0xff) return (uint16_t)(sign | 0x7c00u | (man ? 0x200u | (man >> 13) : 0));
    int e = (int)exp - 127 + 15;   /* half exponent field */
    if (e >= 31) return (uint16_t)(sign | 0x7c00u);
    if (e <= 0) {
        /* half subnormal: count units of 2^-24; below half a unit rounds to zero */
        if (e < -10) return sign;
        uint32_t m = man | 0x800000u;
        int shift = 14 - e;
        uint32_t r = m >> shift, rem = m & ((1u << shift) - 1), half = 1u << (shift - 1);
        if (rem > half || (rem == half && (r & 1))) r++;
        return (uint16_t)(sign | r);   /* r == 0x400 is the smallest normal, as it should be */
    }
    uint32_t r = ((uint32_t)e << 10) | (man >> 13), rem = man & 0x1fffu;
    if (rem > 0x1000u || (rem == 0x1000u && (r & 1))) r++;   /* a carry may reach inf: correct */
    return (uint16_t)(sign | r);
}

float bf16_to_f32(uint16_t h) { return bfloat_to_f32(h); }

uint16_t f32_to_bf16(float f) {
    uint32_t x = f32_bits(f);
    if ((x & 0x7fffffffu) > 0x7f800000u) return (uint16_t)((x >> 16) | 0x40u);   /* NaN: keep it NaN */
    return (uint16_t)((x + 0x7fffu + ((x >> 16) & 1u)) >> 16);
}
