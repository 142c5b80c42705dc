/* Q5_1: blocks of 32 weights, value = q * d + m; bits packed as in Q5_0. */
#include "kernels/kernels_internal.h"
#include "kernels/f16.h"

static void dequant_block(const uint8_t *p, float *y) {
    const block_q5_1 *b = (const block_q5_1 *)p;
    float d = load_f16(b->d), m = load_f16(b->m);
    uint32_t qh = load_u32(b->qh);
    for (int j = 0; j < QK / 2; j++) {
        int lo = (b->qs[j] & 0xf) | ((qh >> j) & 1) << 4;
        int hi = (b->qs[j] >> 4) | ((qh >> (j + QK / 2)) & 1) << 4;
        y[j] = lo * d + m;
        y[j + QK / 2] = hi * d + m;
    }
}

static void q5_1_dequant_row(const void *row, float *dst, int64_t k) {
    dequant_blocks(row, dst, k, QK, sizeof(block_q5_1), dequant_block);
}

static float q5_1_dot_f32(const void *row, const float *x, int64_t k) {
    return dot_blocks(row, x, k, QK, sizeof(block_q5_1), dequant_block);
}

/* m = block minimum, d = range / 31; codes are chosen against the stored (f16) d and m. */
static void q5_1_quantize_row(const float *src, void *row, int64_t k) {
    block_q5_1 *b = row;
    for (int64_t i = 0; i < k / QK; i++, b++) {
        const float *x = src + i * QK;
        float min = x[0], max = x[0];
        for (int j = 1; j < QK; j++) { min = fminf(min, x[j]); max = fmaxf(max, x[j]); }
        store_f16(b->d, f16_from_f32((max - min) / 31.0f));
        store_f16(b->m, f16_from_f32(min));
        float d = load_f16(b->d), m = load_f16(b->m), id = d != 0.0f ? 1.0f / d : 0.0f;
        uint32_t qh = 0;
        for (int j = 0; j < QK / 2; j++) {
            int lo = clamp_int(nearest_int((x[j] - m) * id), 0, 31);
            int hi = clamp_int(nearest_int((x[j + QK / 2] - m) * id), 0, 31);
            b->qs[j] = (uint8_t)((lo & 0xf) | (hi & 0xf) << 4);
            qh |= (uint32_t)(lo >> 4) << j | (uint32_t)(hi >> 4) << (j + QK / 2);
        }
        store_u32(b->qh, qh);
    }
}

const type_traits q5_1_traits = { q5_1_dequant_row, q5_1_dot_f32, q5_1_quantize_row };
