/* Q3_K: super-blocks of 256 weights in 16 groups of 16; value = d * (s - 32) * q with a signed 3-bit
 * q = (2 low bits) - (high bit ? 0 : 4) and a 6-bit s per group. The 2 low bits are placed as in
 * Q2_K; the high bit of element 128n + 32j + l is bit 4n + j of hmask[l]. */
#include "kernels/kernels_internal.h"


static void dequant_block(const uint8_t *p, float *y) {
    const block_q3_K *b = (const block_q3_K *)p;
    float d = load_f16(b->d);
    for (int n = 0; n < 2; n++)
        for (int j = 0; j < 4; j++)
            for (int half = 0; half < 2; half++) {
                float dl = d * (q3_k_scale6(b->scales, 8 * n + 2 * j + half) - 32);
                const uint8_t *q = b->qs + 32 * n + 16 * half;
                const uint8_t *hm = b->hmask + 16 * half;
                int bit = 4 * n + j;
                float *out = y + 128 * n + 32 * j + 16 * half;
                for (int l = 0; l < 16; l++)
                    out[l] = dl * (((q[l] >> (2 * j)) & 3) - (((hm[l] >> bit) & 1) ? 0 : 4));
            }
}

/* The integer form of block_unpacked: d, sc = s - 32 per group, q in -4..3. */
void q3_k_unpack(const uint8_t *p, block_unpacked *u) {
    const block_q3_K *b = (const block_q3_K *)p;
    u->d = load_f16(b->d);
    for (int g = 0; g < 16; g++) u->sc[g] = (int16_t)(q3_k_scale6(b->scales, g) - 32);
    for (int n = 0; n < 2; n++)
        for (int j = 0; j < 4; j++)
            for (int l = 0; l < 32; l++)
                u->q[128 * n + 32 * j + l] =
                    (int8_t)(((b->qs[32 * n + l] >> (2 * j)) & 3) - ((b->hmask[l] >> (4 * n + j)) & 1 ? 0 : 4));
}

static void q3_k_dequant_row(const void *row, float *dst, int64_t k) {
    dequant_blocks(row, dst, k, QK_K, sizeof(block_q3_K), dequant_block);
}

static float q3_k_dot_f32(const void *row, const float *x, int64_t k) {
    return dot_blocks(row, x, k, QK_K, sizeof(block_q3_K), dequant_block);
}

static void q3_k_quantize_row(const float *src, void *row, int64_t k) {
    block_q3_K *b = row;
    for (int64_t i = 0; i < k / QK_K; i++, b++) {
        int sc[16], q[QK_K];
        uint16_t d;
        kquant_fit_symmetric(src + i * QK_K, 16, 16, -4, 32, &d, sc, q);
        store_f16(b->d, d);
        memset(b->scales, 0, sizeof b->scales);
        for (int g = 0; g < 16; g++) {
            int s = sc[g] + 32;   /* 0..63 */
            b->scales[g % 8] |= (uint8_t)((s & 0xf) << (g < 8 ? 0 : 4));
            b->scales[8 + g % 4] |= (uint8_t)((s >> 4) << (2 * (g / 4)));
        }
        memset(b->qs, 0, sizeof b->qs);
        memset(b->hmask, 0, sizeof b->hmask);
        for (int n = 0; n < 2; n++)
            for (int j = 0; j < 4; j++)
                for (int l = 0; l < 32; l++) {
                    int u = q[128 * n + 32 * j + l] + 4;   /* 0..7 */
                    b->qs[32 * n + l] |= (uint8_t)((u & 3) << (2 * j));
                    b->hmask[l] |= (uint8_t)((u >> 2) << (4 * n + j));
                }
    }
}

const type_traits q3_k_traits = { q3_k_dequant_row, q3_k_dot_f32, q3_k_quantize_row };
