/* BF16 rows: the upper 16 bits of an f32 (the row must be 2-byte aligned). */
#include "kernels/kernels_internal.h"

void dequant_row_bf16(const void *row, float *dst, int64_t k) {
    const uint16_t *w = row;
    for (int64_t i = 0; i < k; i++) dst[i] = bfloat_to_f32(w[i]);
}

/* Summed in f32 over runs of 32, the runs accumulated in double (as dot_blocks does). */
float dot_f32_bf16(const void *row, const float *x, int64_t k) {
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

void quantize_row_bf16(const float *src, void *row, int64_t k) {
    uint16_t *w = row;
    for (int64_t i = 0; i < k; i++) w[i] = f32_to_bf16(src[i]);
}
