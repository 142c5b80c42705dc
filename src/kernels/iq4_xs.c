/* IQ4_XS: super-blocks of 256 weights in 8 sub-blocks of 32; value = d * (ls - 32) *
 * kvalues_iq4nl[q] with an f16 d, a 6-bit ls per sub-block and a 4-bit index q (layout in
 * kernels_internal.h). The scale d * (ls - 32) is one f32 product, then the value another, as
 * ggml computes them, so dequantization is bit-exact. */
#include "kernels/kernels_internal.h"
#include "kernels/f16.h"

/* ls - 32 of sub-block ib */
static int sub_scale(const block_iq4_xs *b, int ib) {
    int low = (b->scales_l[ib / 2] >> (4 * (ib % 2))) & 0xf;
    int high = ((b->scales_h[0] | b->scales_h[1] << 8) >> (2 * ib)) & 3;
    return (low | high << 4) - 32;
}

static void dequant_block(const uint8_t *p, float *y) {
    const block_iq4_xs *b = (const block_iq4_xs *)p;
    float d = load_f16(b->d);
    for (int ib = 0; ib < QK_K / 32; ib++) {
        float dl = d * (float)sub_scale(b, ib);
        const uint8_t *qs = b->qs + 16 * ib;
        for (int j = 0; j < 16; j++) {
            y[32 * ib + j] = dl * kvalues_iq4nl[qs[j] & 0xf];
            y[32 * ib + j + 16] = dl * kvalues_iq4nl[qs[j] >> 4];
        }
    }
}

static void iq4_xs_dequant_row(const void *row, float *dst, int64_t k) {
    dequant_blocks(row, dst, k, QK_K, sizeof(block_iq4_xs), dequant_block);
}

static float iq4_xs_dot_f32(const void *row, const float *x, int64_t k) {
    return dot_blocks(row, x, k, QK_K, sizeof(block_iq4_xs), dequant_block);
}

/* Each sub-block is fitted as an IQ4_NL group; the sub-block scale of largest magnitude maps to
 * ls - 32 = -32 (d = it / -32, rounded to f16), every sub-block takes the nearest ls, and its
 * indices are chosen again against its stored scale d * (ls - 32). */
static void iq4_xs_quantize_row(const float *src, void *row, int64_t k) {
    block_iq4_xs *b = row;
    for (int64_t i = 0; i < k / QK_K; i++, b++) {
        const float *x = src + i * QK_K;
        float s[QK_K / 32], smax = 0.0f;
        uint8_t idx[QK];
        for (int ib = 0; ib < QK_K / 32; ib++) {
            s[ib] = iq4_nl_fit_group(x + 32 * ib, idx);
            if (fabsf(s[ib]) > fabsf(smax)) smax = s[ib];
        }
        store_f16(b->d, f16_from_f32(smax / -32.0f));
        float d = load_f16(b->d), id = d != 0.0f ? 1.0f / d : 0.0f;
        uint16_t sh = 0;
        memset(b->scales_l, 0, sizeof b->scales_l);
        for (int ib = 0; ib < QK_K / 32; ib++) {
            int ls = clamp_int(nearest_int(s[ib] * id), -32, 31) + 32;
            b->scales_l[ib / 2] |= (uint8_t)((ls & 0xf) << (4 * (ib % 2)));
            sh |= (uint16_t)((ls >> 4) << (2 * ib));
            float dl = d * (float)(ls - 32), idl = dl != 0.0f ? 1.0f / dl : 0.0f;
            const float *xb = x + 32 * ib;
            for (int j = 0; j < QK; j++) idx[j] = (uint8_t)nearest_index16(kvalues_iq4nl, xb[j] * idl);
            for (int j = 0; j < 16; j++) b->qs[16 * ib + j] = (uint8_t)(idx[j] | idx[j + 16] << 4);
        }
        store_f16(b->scales_h, sh);
    }
}

const type_traits iq4_xs_traits = { iq4_xs_dequant_row, iq4_xs_dot_f32, iq4_xs_quantize_row };
