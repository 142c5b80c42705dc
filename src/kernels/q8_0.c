/* Q8_0: blocks of 32 weights, value = q * d (f16 d, int8 q). */
#include "kernels/kernels_internal.h"
#include "kernels/f16.h"

static void dequant_block(const uint8_t *p, float *y) {
    const block_q8_0 *b = (const block_q8_0 *)p;
    float d = load_f16(b->d);
    for (int j = 0; j < QK; j++) y[j] = b->qs[j] * d;
}

static void q8_0_dequant_row(const void *row, float *dst, int64_t k) {
    dequant_blocks(row, dst, k, QK, sizeof(block_q8_0), dequant_block);
}

static float q8_0_dot_f32(const void *row, const float *x, int64_t k) {
    return dot_blocks(row, x, k, QK, sizeof(block_q8_0), dequant_block);
}

/* d = max|x| / 127, rounded to f16 first so the codes are chosen against the stored scale:
 * every weight is then within d/2 of its dequantized value. */
void q8_0_quantize_row(const float *src, void *row, int64_t k) {
    block_q8_0 *b = row;
    for (int64_t i = 0; i < k / QK; i++, b++) {
        const float *x = src + i * QK;
        float amax = 0.0f;
        for (int j = 0; j < QK; j++) amax = fmaxf(amax, fabsf(x[j]));
        store_f16(b->d, f16_from_f32(amax / 127.0f));
        float d = load_f16(b->d), id = d != 0.0f ? 1.0f / d : 0.0f;
        for (int j = 0; j < QK; j++) b->qs[j] = (int8_t)clamp_int(nearest_int(x[j] * id), -127, 127);
    }
}

const type_traits q8_0_traits = { q8_0_dequant_row, q8_0_dot_f32, q8_0_quantize_row };
