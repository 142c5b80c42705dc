/* Q4_0: blocks of 32 weights, value = (q - 8) * d; byte j holds element j in its low nibble and
 * element j + 16 in its high nibble. */
#include "kernels/kernels_internal.h"
#include "kernels/f16.h"

static void dequant_block(const uint8_t *p, float *y) {
    const block_q4_0 *b = (const block_q4_0 *)p;
    float d = load_f16(b->d);
    for (int j = 0; j < QK / 2; j++) {
        y[j] = ((b->qs[j] & 0xf) - 8) * d;
        y[j + QK / 2] = ((b->qs[j] >> 4) - 8) * d;
    }
}

static void q4_0_dequant_row(const void *row, float *dst, int64_t k) {
    dequant_blocks(row, dst, k, QK, sizeof(block_q4_0), dequant_block);
}

static float q4_0_dot_f32(const void *row, const float *x, int64_t k) {
    return dot_blocks(row, x, k, QK, sizeof(block_q4_0), dequant_block);
}

/* The weight of largest magnitude maps exactly to code 0 (d = that weight / -8), which uses the
 * asymmetric code range -8..7 fully on its side. */
static void q4_0_quantize_row(const float *src, void *row, int64_t k) {
    block_q4_0 *b = row;
    for (int64_t i = 0; i < k / QK; i++, b++) {
        const float *x = src + i * QK;
        float amax = 0.0f, max = 0.0f;
        for (int j = 0; j < QK; j++)
            if (fabsf(x[j]) > amax) { amax = fabsf(x[j]); max = x[j]; }
        store_f16(b->d, f16_from_f32(max / -8.0f));
        float d = load_f16(b->d), id = d != 0.0f ? 1.0f / d : 0.0f;
        for (int j = 0; j < QK / 2; j++) {
            int lo = clamp_int(nearest_int(x[j] * id) + 8, 0, 15);
            int hi = clamp_int(nearest_int(x[j + QK / 2] * id) + 8, 0, 15);
            b->qs[j] = (uint8_t)(lo | hi << 4);
        }
    }
}

const type_traits q4_0_traits = { q4_0_dequant_row, q4_0_dot_f32, q4_0_quantize_row };
