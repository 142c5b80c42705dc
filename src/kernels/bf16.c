/* BF16 rows: the upper 16 bits of an f32 (the row must be 2-byte aligned). */
#include "kernels/bf16.h"
#include "kernels/kernels_internal.h"

float bf16_to_f32(uint16_t h) { return bfloat_to_f32(h); }

uint16_t bf16_from_f32(float f) {
    uint32_t x = f32_bits(f);
    if ((x & 0x7fffffffu) > 0x7f800000u) return (uint16_t)((x >> 16) | 0x40u);   /* NaN: keep it NaN */
    return (uint16_t)((x + 0x7fffu + ((x >> 16) & 1u)) >> 16);
}

static void bf16_dequant_row(const void *row, float *dst, int64_t k) {
    const uint16_t *w = row;
    for (int64_t i = 0; i < k; i++) dst[i] = bfloat_to_f32(w[i]);
}

/* Summed in f32 over runs of 32, the runs accumulated in double (as dot_blocks does). */
static float bf16_dot_f32(const void *row, const float *x, int64_t k) {
    const uint16_t *w = row;
    double total = 0.0;
    for (int64_t i = 0; i < k; i += QK) {
        int64_t n = k - i < QK ? k - i : QK;
        float sum = 0.0f;
        for (int64_t j = 0; j < n; j++) sum += bfloat_to_f32(w[i + j]) * x[i + j];
        total += sum;
    }
    return (float)total;
}

static void bf16_quantize_row(const float *src, void *row, int64_t k) {
    uint16_t *w = row;
    for (int64_t i = 0; i < k; i++) w[i] = bf16_from_f32(src[i]);
}

const type_traits bf16_traits = { bf16_dequant_row, bf16_dot_f32, bf16_quantize_row };
