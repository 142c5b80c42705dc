/* Q4_K: super-blocks of 256 weights in 8 groups of 32; value = d*sc*q - dmin*m with 4-bit q and
 * 6-bit sc/m per group (packing in kernels_internal.h). Element 64c + l (l < 32) is the low nibble
 * of qs[32c + l] (group 2c); element 64c + 32 + l its high nibble (group 2c + 1).
 * Also home of kquant_fit_affine, the super-block fit shared by Q2_K, Q4_K and Q5_K. */
#include <float.h>
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

void dequant_row_q4_k(const void *row, float *dst, int64_t k) {
    dequant_blocks(row, dst, k, QK_K, sizeof(block_q4_K), dequant_block);
}

float dot_f32_q4_k(const void *row, const float *x, int64_t k) {
    return dot_blocks(row, x, k, QK_K, sizeof(block_q4_K), dequant_block);
}

void quantize_row_q4_k(const float *src, void *row, int64_t k) {
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

/* Squared error of one affine group for step D and offset M (value = D*q - M, exactly as the
 * dequantizers compute it); writes the codes when q is not NULL. */
static float affine_group_error(const float *x, int n, int qmax, float D, float M, uint8_t *q) {
    float err = 0.0f;
    for (int i = 0; i < n; i++) {
        int c = D > 0.0f ? clamp_int(nearest_int((x[i] + M) / D), 0, qmax) : 0;
        float e = x[i] - (D * c - M);
        err += e * e;
        if (q) q[i] = (uint8_t)c;
    }
    return err;
}

/* Round-to-nearest fit: each group spans [min(x, 0), max(x)]; the super-block scales d and dmin
 * are the largest group step / offset over code_max (rounded to f16); each group's integer codes
 * start at the nearest value and the best of their +-1 neighbours is kept. */
void kquant_fit_affine(const float *x, int n_groups, int group_len, int qmax, int code_max,
                       uint16_t *d_bits, uint16_t *dmin_bits, uint8_t *sc, uint8_t *m, uint8_t *q) {
    float step[16], offset[16], max_step = 0.0f, max_offset = 0.0f;
    for (int g = 0; g < n_groups; g++) {
        const float *xg = x + g * group_len;
        float lo = 0.0f, hi = xg[0];
        for (int i = 0; i < group_len; i++) { lo = fminf(lo, xg[i]); hi = fmaxf(hi, xg[i]); }
        step[g] = (hi - lo) / qmax;
        offset[g] = -lo;
        max_step = fmaxf(max_step, step[g]);
        max_offset = fmaxf(max_offset, offset[g]);
    }
    *d_bits = f32_to_fp16(max_step / code_max);
    *dmin_bits = f32_to_fp16(max_offset / code_max);
    float d = half_to_f32(*d_bits), dmin = half_to_f32(*dmin_bits);
    for (int g = 0; g < n_groups; g++) {
        const float *xg = x + g * group_len;
        int s0 = d > 0.0f ? clamp_int(nearest_int(step[g] / d), 0, code_max) : 0;
        int m0 = dmin > 0.0f ? clamp_int(nearest_int(offset[g] / dmin), 0, code_max) : 0;
        float best = FLT_MAX;
        for (int s = s0 - 1; s <= s0 + 1; s++)
            for (int mm = m0 - 1; mm <= m0 + 1; mm++) {
                if (s < 0 || s > code_max || mm < 0 || mm > code_max) continue;
                float err = affine_group_error(xg, group_len, qmax, d * s, dmin * mm, NULL);
                if (err < best) { best = err; sc[g] = (uint8_t)s; m[g] = (uint8_t)mm; }
            }
        affine_group_error(xg, group_len, qmax, d * sc[g], dmin * m[g], q + g * group_len);
    }
}
