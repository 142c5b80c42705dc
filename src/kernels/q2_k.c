/* Q2_K: super-blocks of 256 weights in 16 groups of 16; value = d*sc*q - dmin*m with 2-bit q and
 * 4-bit sc/m per group (scales[g] = sc | m << 4). Element 128n + 32j + l is bits 2j..2j+1 of
 * qs[32n + l]. */
#include "kernels/kernels_internal.h"

static void dequant_block(const uint8_t *p, float *y) {
    const block_q2_K *b = (const block_q2_K *)p;
    float d = load_f16(b->d), dmin = load_f16(b->dmin);
    for (int n = 0; n < 2; n++)
        for (int j = 0; j < 4; j++)
            for (int half = 0; half < 2; half++) {
                uint8_t sc = b->scales[8 * n + 2 * j + half];
                float dl = d * (sc & 0xf), ml = dmin * (sc >> 4);
                const uint8_t *q = b->qs + 32 * n + 16 * half;
                float *out = y + 128 * n + 32 * j + 16 * half;
                for (int l = 0; l < 16; l++) out[l] = dl * ((q[l] >> (2 * j)) & 3) - ml;
            }
}

static void q2_k_dequant_row(const void *row, float *dst, int64_t k) {
    dequant_blocks(row, dst, k, QK_K, sizeof(block_q2_K), dequant_block);
}

static float q2_k_dot_f32(const void *row, const float *x, int64_t k) {
    return dot_blocks(row, x, k, QK_K, sizeof(block_q2_K), dequant_block);
}

static void q2_k_quantize_row(const float *src, void *row, int64_t k) {
    block_q2_K *b = row;
    for (int64_t i = 0; i < k / QK_K; i++, b++) {
        uint8_t sc[16], m[16], q[QK_K];
        uint16_t d, dmin;
        kquant_fit_affine(src + i * QK_K, 16, 16, 3, 15, &d, &dmin, sc, m, q);
        store_f16(b->d, d);
        store_f16(b->dmin, dmin);
        for (int g = 0; g < 16; g++) b->scales[g] = (uint8_t)(sc[g] | m[g] << 4);
        memset(b->qs, 0, sizeof b->qs);
        for (int n = 0; n < 2; n++)
            for (int j = 0; j < 4; j++)
                for (int l = 0; l < 32; l++)
                    b->qs[32 * n + l] |= (uint8_t)(q[128 * n + 32 * j + l] << (2 * j));
    }
}

const type_traits q2_k_traits = { q2_k_dequant_row, q2_k_dot_f32, q2_k_quantize_row };
