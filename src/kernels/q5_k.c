/* Q5_K: Q4_K with a fifth bit per weight: value = d*sc*(q4 + 16*h) - dmin*m, where h for element
 * 64c + l is bit 2c of qh[l] and for element 64c + 32 + l bit 2c + 1 of qh[l]. */
#include "kernels/kernels_internal.h"

static void dequant_block(const uint8_t *p, float *y) {
    const block_q5_K *b = (const block_q5_K *)p;
    float d = load_f16(b->d), dmin = load_f16(b->dmin);
    for (int c = 0; c < 4; c++) {
        int sc0, m0, sc1, m1;
        kq_get_scale_min(b->scales, 2 * c, &sc0, &m0);
        kq_get_scale_min(b->scales, 2 * c + 1, &sc1, &m1);
        float d0 = d * sc0, min0 = dmin * m0, d1 = d * sc1, min1 = dmin * m1;
        const uint8_t *q = b->qs + 32 * c;
        for (int l = 0; l < 32; l++) {
            int lo = (q[l] & 0xf) | ((b->qh[l] >> (2 * c)) & 1) << 4;
            int hi = (q[l] >> 4) | ((b->qh[l] >> (2 * c + 1)) & 1) << 4;
            y[64 * c + l] = d0 * lo - min0;
            y[64 * c + 32 + l] = d1 * hi - min1;
        }
    }
}

static void q5_k_dequant_row(const void *row, float *dst, int64_t k) {
    dequant_blocks(row, dst, k, QK_K, sizeof(block_q5_K), dequant_block);
}

static float q5_k_dot_f32(const void *row, const float *x, int64_t k) {
    return dot_blocks(row, x, k, QK_K, sizeof(block_q5_K), dequant_block);
}

static void q5_k_quantize_row(const float *src, void *row, int64_t k) {
    block_q5_K *b = row;
    for (int64_t i = 0; i < k / QK_K; i++, b++) {
        uint8_t sc[8], m[8], q[QK_K];
        uint16_t d, dmin;
        kquant_fit_affine(src + i * QK_K, 8, 32, 31, 63, &d, &dmin, sc, m, q);
        store_f16(b->d, d);
        store_f16(b->dmin, dmin);
        kq_pack_scale_min(b->scales, sc, m);
        memset(b->qh, 0, sizeof b->qh);
        for (int c = 0; c < 4; c++)
            for (int l = 0; l < 32; l++) {
                int lo = q[64 * c + l], hi = q[64 * c + 32 + l];
                b->qs[32 * c + l] = (uint8_t)((lo & 0xf) | (hi & 0xf) << 4);
                b->qh[l] |= (uint8_t)((lo >> 4) << (2 * c) | (hi >> 4) << (2 * c + 1));
            }
    }
}

const type_traits q5_k_traits = { q5_k_dequant_row, q5_k_dot_f32, q5_k_quantize_row };
