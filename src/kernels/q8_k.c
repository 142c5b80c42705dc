/* Q8_K: super-blocks of 256 weights, value = d * q with an f32 d and int8 q, plus bsums (sums of each
 * 16 codes) for integer dot products. Used for activations, not stored in model files. */
#include "kernels/kernels_internal.h"

static void dequant_block(const uint8_t *p, float *y) {
    const block_q8_K *b = (const block_q8_K *)p;
    float d = f32_from_bits(load_u32(b->d));
    for (int j = 0; j < QK_K; j++) y[j] = d * b->qs[j];
}

static void q8_k_dequant_row(const void *row, float *dst, int64_t k) {
    dequant_blocks(row, dst, k, QK_K, sizeof(block_q8_K), dequant_block);
}

static float q8_k_dot_f32(const void *row, const float *x, int64_t k) {
    return dot_blocks(row, x, k, QK_K, sizeof(block_q8_K), dequant_block);
}

/* d = max|x| / 127 (kept in f32, so every weight is within d/2 of its dequantized value). */
void q8_k_quantize_row(const float *src, void *row, int64_t k) {
    block_q8_K *b = row;
    for (int64_t i = 0; i < k / QK_K; i++, b++) {
        const float *x = src + i * QK_K;
        float amax = 0.0f;
        for (int j = 0; j < QK_K; j++) amax = fmaxf(amax, fabsf(x[j]));
        float d = amax / 127.0f, id = d != 0.0f ? 1.0f / d : 0.0f;
        store_u32(b->d, f32_bits(d));
        for (int j = 0; j < QK_K; j++) b->qs[j] = (int8_t)clamp_int(nearest_int(x[j] * id), -127, 127);
        for (int s = 0; s < QK_K / 16; s++) {
            int sum = 0;
            for (int j = 0; j < 16; j++) sum += b->qs[16 * s + j];
            b->bsums[2 * s] = (uint8_t)(sum & 0xff);
            b->bsums[2 * s + 1] = (uint8_t)((sum >> 8) & 0xff);
        }
    }
}

const type_traits q8_k_traits = { q8_k_dequant_row, q8_k_dot_f32, q8_k_quantize_row };
