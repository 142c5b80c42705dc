/* MXFP4: blocks of 32 weights, value = kvalues_mxfp4[q] * 2^(e - 128) with a shared E8M0 exponent
 * byte e and 4-bit E2M1 codes q (bit 3 the sign); byte j holds code j in its low nibble and code
 * j + 16 in its high nibble. The table holds the E2M1 values doubled, so the scale is half of
 * 2^(e - 127): both are exact, and so is every value. */
#include "kernels/kernels_internal.h"

static void dequant_block(const uint8_t *p, float *y) {
    const block_mxfp4 *b = (const block_mxfp4 *)p;
    float d = e8m0_half_to_f32(b->e);
    for (int j = 0; j < QK / 2; j++) {
        y[j] = kvalues_mxfp4[b->qs[j] & 0xf] * d;
        y[j + QK / 2] = kvalues_mxfp4[b->qs[j] >> 4] * d;
    }
}

static void mxfp4_dequant_row(const void *row, float *dst, int64_t k) {
    dequant_blocks(row, dst, k, QK, sizeof(block_mxfp4), dequant_block);
}

static float mxfp4_dot_f32(const void *row, const float *x, int64_t k) {
    return dot_blocks(row, x, k, QK, sizeof(block_mxfp4), dequant_block);
}

/* The shared exponent puts max|x| in the table's top octave: e = floor(log2(max|x|)) - 2 + 127
 * (0 for an all-zero block); each value takes the nearest code (the first on a tie). */
static void mxfp4_quantize_row(const float *src, void *row, int64_t k) {
    block_mxfp4 *b = row;
    for (int64_t i = 0; i < k / QK; i++, b++) {
        const float *x = src + i * QK;
        float amax = 0.0f;
        for (int j = 0; j < QK; j++) amax = fmaxf(amax, fabsf(x[j]));
        int e = amax > 0.0f ? clamp_int((int)floorf(log2f(amax)) - 2 + 127, 0, 255) : 0;
        b->e = (uint8_t)e;
        float d = e8m0_half_to_f32(b->e);   /* divided by, not inverted: 1 / 2^-128 overflows */
        for (int j = 0; j < QK / 2; j++) {
            int lo = nearest_index16(kvalues_mxfp4, x[j] / d);
            int hi = nearest_index16(kvalues_mxfp4, x[j + QK / 2] / d);
            b->qs[j] = (uint8_t)(lo | hi << 4);
        }
    }
}

const type_traits mxfp4_traits = { mxfp4_dequant_row, mxfp4_dot_f32, mxfp4_quantize_row };
