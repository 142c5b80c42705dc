/* F16 rows: IEEE binary16 (the row must be 2-byte aligned). */
#include "kernels/f16.h"
#include "kernels/kernels_internal.h"

float f16_to_f32(uint16_t h) { return half_to_f32(h); }

/* Round to nearest even; overflow gives inf, NaN stays a (quiet) NaN with its top payload bits. */
uint16_t f16_from_f32(float f) {
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

static void f16_dequant_row(const void *row, float *dst, int64_t k) {
    const uint16_t *w = row;
    for (int64_t i = 0; i < k; i++) dst[i] = half_to_f32(w[i]);
}

/* Summed in f32 over runs of 32, the runs accumulated in double (as dot_blocks does). */
static float f16_dot_f32(const void *row, const float *x, int64_t k) {
    const uint16_t *w = row;
    double total = 0.0;
    for (int64_t i = 0; i < k; i += QK) {
        int64_t n = k - i < QK ? k - i : QK;
        float sum = 0.0f;
        for (int64_t j = 0; j < n; j++) sum += half_to_f32(w[i + j]) * x[i + j];
        total += sum;
    }
    return (float)total;
}

void f16_from_f32_row(const float *x, uint16_t *h, int64_t n) {
    for (int64_t i = 0; i < n; i++) h[i] = f16_from_f32(x[i]);
}

static void f16_quantize_row(const float *src, void *row, int64_t k) { f16_from_f32_row(src, row, k); }

const type_traits f16_traits = { f16_dequant_row, f16_dot_f32, f16_quantize_row };
