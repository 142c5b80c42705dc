/* F32 rows: plain little-endian floats (the row must be 4-byte aligned). */
#include "kernels/kernels_internal.h"

static void f32_dequant_row(const void *row, float *dst, int64_t k) {
    memcpy(dst, row, (size_t)k * sizeof(float));
}

/* Summed in f32 over runs of 32, the runs accumulated in double (as dot_blocks does). */
static float f32_dot_f32(const void *row, const float *x, int64_t k) {
    const float *w = row;
    double total = 0.0;
    for (int64_t i = 0; i < k; i += QK) {
        int64_t n = k - i < QK ? k - i : QK;
        float sum = 0.0f;
        for (int64_t j = 0; j < n; j++) sum += w[i + j] * x[i + j];
        total += sum;
    }
    return (float)total;
}

static void f32_quantize_row(const float *src, void *row, int64_t k) {
    memcpy(row, src, (size_t)k * sizeof(float));
}

const type_traits f32_traits = { f32_dequant_row, f32_dot_f32, f32_quantize_row };
