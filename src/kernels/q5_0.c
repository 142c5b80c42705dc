/* Q5_0: blocks of 32 weights, value = (q - 16) * d; the low 4 bits are packed as in Q4_0 and bit 4
 * of element j is bit j of the little-endian 32-bit word qh. */
#include "kernels/kernels_internal.h"
#include "kernels/f16.h"

static void dequant_block(const uint8_t *p, float *y) {
    const block_q5_0 *b = (const block_q5_0 *)p;
    float d = load_f16(b->d);
    uint32_t qh = load_u32(b->qh);
    for (int j = 0; j < QK / 2; j++) {
        int lo = (b->qs[j] & 0xf) | ((qh >> j) & 1) << 4;
        int hi = (b->qs[j] >> 4) | ((qh >> (j + QK / 2)) & 1) << 4;
        y[j] = (lo - 16) * d;
        y[j + QK / 2] = (hi - 16) * d;
    }
}

static void q5_0_dequant_row(const void *row, float *dst, int64_t k) {
    dequant_blocks(row, dst, k, QK, sizeof(block_q5_0), dequant_block);
}

static float q5_0_dot_f32(const void *row, const float *x, int64_t k) {
    return dot_blocks(row, x, k, QK, sizeof(block_q5_0), dequant_block);
}

/* As Q4_0 with 32 levels: the weight of largest magnitude maps to code 0 (d = it / -16). */
static void q5_0_quantize_row(const float *src, void *row, int64_t k) {
    block_q5_0 *b = row;
    for (int64_t i = 0; i < k / QK; i++, b++) {
        const float *x = src + i * QK;
        float amax = 0.0f, max = 0.0f;
        for (int j = 0; j < QK; j++)
            if (fabsf(x[j]) > amax) { amax = fabsf(x[j]); max = x[j]; }
        store_f16(b->d, f16_from_f32(max / -16.0f));
        float d = load_f16(b->d), id = d != 0.0f ? 1.0f / d : 0.0f;
        uint32_t qh = 0;
        for (int j = 0; j < QK / 2; j++) {
            int lo = clamp_int(nearest_int(x[j] * id) + 16, 0, 31);
            int hi = clamp_int(nearest_int(x[j + QK / 2] * id) + 16, 0, 31);
            b->qs[j] = (uint8_t)((lo & 0xf) | (hi & 0xf) << 4);
            qh |= (uint32_t)(lo >> 4) << j | (uint32_t)(hi >> 4) << (j + QK / 2);
        }
        store_u32(b->qh, qh);
    }
}

const type_traits q5_0_traits = { q5_0_dequant_row, q5_0_dot_f32, q5_0_quantize_row };
