/* Q4_K: super-blocks of 256 weights in 8 groups of 32; value = d*sc*q - dmin*m with 4-bit q and
 * 6-bit sc/m per group (packing in kernels_internal.h). Element 64c + l (l < 32) is the low nibble
 * of qs[32c + l] (group 2c); element 64c + 32 + l its high nibble (group 2c + 1). */
#include "kernels/kernels_internal.h"

static void dequant_block(const uint8_t *p, float *y) {
    const block_q4_K *b = (const block_q4_K *)p;
    float d = load_f16(b->d), dmin = load_f16(b->dmin);
    for (int c = 0; c < 4; c++) {
        int sc0, m0, sc1, m1;
        kq_get_scale_min(b->scales, 2 * c, &sc0, &m0);
        kq_get_scale_min(b->scales, 2 * c + 1, &sc1, &m1);
        float d0 = d * sc0, min0 = dmin * m0, d1 = d * sc1, min1 = dmin * m1;
        const uint8_t *q = b->qs + 32 * c;
        for (int l = 0; l < 32; l++) {
            y[64 * c + l] = d0 * (q[l] & 0xf) - min0;
            y[64 * c + 32 + l] = d1 * (q[l] >> 4) - min1;
        }
    }
}

static void q4_k_dequant_row(const void *row, float *dst, int64_t k) {
    dequant_blocks(row, dst, k, QK_K, sizeof(block_q4_K), dequant_block);
}

static float q4_k_dot_f32(const void *row, const float *x, int64_t k) {
    return dot_blocks(row, x, k, QK_K, sizeof(block_q4_K), dequant_block);
}

static void q4_k_quantize_row(const float *src, void *row, int64_t k) {
    block_q4_K *b = row;
    for (int64_t i = 0; i < k / QK_K; i++, b++) {
        uint8_t sc[8], m[8], q[QK_K];
        uint16_t d, dmin;
        kquant_fit_affine(src + i * QK_K, 8, 32, 15, 63, &d, &dmin, sc, m, q);
        store_f16(b->d, d);
        store_f16(b->dmin, dmin);
        kq_pack_scale_min(b->scales, sc, m);
        for (int c = 0; c < 4; c++)
            for (int l = 0; l < 32; l++)
                b->qs[32 * c + l] = (uint8_t)(q[64 * c + l] | q[64 * c + 32 + l] << 4);
    }
}

const type_traits q4_k_traits = { q4_k_dequant_row, q4_k_dot_f32, q4_k_quantize_row };
