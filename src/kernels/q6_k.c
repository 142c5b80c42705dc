/* Q6_K: super-blocks of 256 weights in 16 groups of 16; value = d * scales[g] * (q - 32) with a
 * 6-bit q and an int8 scale per group. Element 128n + 32j + l takes its low 4 bits from
 * ql[64n + 32(j & 1) + l] (low nibble for j < 2, high nibble for j >= 2) and its high 2 bits from
 * bits 2j..2j+1 of qh[32n + l]; its group is (element / 16). */
#include "kernels/kernels_internal.h"

static void dequant_block(const uint8_t *p, float *y) {
    const block_q6_K *b = (const block_q6_K *)p;
    float d = load_f16(b->d);
    for (int n = 0; n < 2; n++)
        for (int j = 0; j < 4; j++) {
            const uint8_t *ql = b->ql + 64 * n + 32 * (j & 1), *qh = b->qh + 32 * n;
            int shift = 4 * (j >> 1);
            for (int l = 0; l < 32; l++) {
                int e = 128 * n + 32 * j + l;
                int q = (((ql[l] >> shift) & 0xf) | ((qh[l] >> (2 * j)) & 3) << 4) - 32;
                y[e] = d * b->scales[e / 16] * q;
            }
        }
}

static void q6_k_dequant_row(const void *row, float *dst, int64_t k) {
    dequant_blocks(row, dst, k, QK_K, sizeof(block_q6_K), dequant_block);
}

static float q6_k_dot_f32(const void *row, const float *x, int64_t k) {
    return dot_blocks(row, x, k, QK_K, sizeof(block_q6_K), dequant_block);
}

static void q6_k_quantize_row(const float *src, void *row, int64_t k) {
    block_q6_K *b = row;
    for (int64_t i = 0; i < k / QK_K; i++, b++) {
        int sc[16], q[QK_K];
        uint16_t d;
        kquant_fit_symmetric(src + i * QK_K, 16, 16, -32, 128, &d, sc, q);
        store_f16(b->d, d);
        for (int g = 0; g < 16; g++) b->scales[g] = (int8_t)sc[g];
        memset(b->ql, 0, sizeof b->ql);
        memset(b->qh, 0, sizeof b->qh);
        for (int n = 0; n < 2; n++)
            for (int j = 0; j < 4; j++)
                for (int l = 0; l < 32; l++) {
                    int u = q[128 * n + 32 * j + l] + 32;   /* 0..63 */
                    b->ql[64 * n + 32 * (j & 1) + l] |= (uint8_t)((u & 0xf) << (4 * (j >> 1)));
                    b->qh[32 * n + l] |= (uint8_t)((u >> 4) << (2 * j));
                }
    }
}

const type_traits q6_k_traits = { q6_k_dequant_row, q6_k_dot_f32, q6_k_quantize_row };
