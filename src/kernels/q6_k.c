/* Q6_K: super-blocks of 256 weights in 16 groups of 16; value = d * scales[g] * (q - 32) with a
 * 6-bit q and an int8 scale per group. Element 128n + 32j + l takes its low 4 bits from
 * ql[64n + 32(j & 1) + l] (low nibble for j < 2, high nibble for j >= 2) and its high 2 bits from
 * bits 2j..2j+1 of qh[32n + l]; its group is (element / 16).
 * Also home of kquant_fit_symmetric, the super-block fit shared by Q3_K and Q6_K. */
#include <float.h>
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

void dequant_row_q6_k(const void *row, float *dst, int64_t k) {
    dequant_blocks(row, dst, k, QK_K, sizeof(block_q6_K), dequant_block);
}

float dot_f32_q6_k(const void *row, const float *x, int64_t k) {
    return dot_blocks(row, x, k, QK_K, sizeof(block_q6_K), dequant_block);
}

void quantize_row_q6_k(const float *src, void *row, int64_t k) {
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

/* Squared error of one symmetric group for step D (value = D*q); writes the codes if q != NULL. */
static float symmetric_group_error(const float *x, int n, int qmin, float D, int *q) {
    float err = 0.0f;
    for (int i = 0; i < n; i++) {
        int c = D != 0.0f ? clamp_int(nearest_int(x[i] / D), qmin, -qmin - 1) : 0;
        float e = x[i] - D * c;
        err += e * e;
        if (q) q[i] = c;
    }
    return err;
}

/* Round-to-nearest fit: a group's step is either (its largest-magnitude weight v) / qmin, which uses
 * the extra negative code, or -v / qmax, which keeps both signs in range; the super-block d maps
 * the largest step to code -code_lim (rounded to f16); each group tries the nearest integer scale
 * code for both steps and their +-1 neighbours and keeps the best. */
void kquant_fit_symmetric(const float *x, int n_groups, int group_len, int qmin, int code_lim,
                          uint16_t *d_bits, int *sc, int *q) {
    int qmax = -qmin - 1;
    float vmax[16], big = 0.0f;
    for (int g = 0; g < n_groups; g++) {
        const float *xg = x + g * group_len;
        float amax = 0.0f;
        vmax[g] = 0.0f;
        for (int i = 0; i < group_len; i++)
            if (fabsf(xg[i]) > amax) { amax = fabsf(xg[i]); vmax[g] = xg[i]; }
        float step = vmax[g] / qmin;
        if (fabsf(step) > fabsf(big)) big = step;
    }
    *d_bits = f32_to_fp16(big / -code_lim);
    float d = half_to_f32(*d_bits);
    for (int g = 0; g < n_groups; g++) {
        const float *xg = x + g * group_len;
        float best = FLT_MAX;
        sc[g] = 0;
        float steps[2] = { vmax[g] / qmin, -vmax[g] / qmax };
        for (int t = 0; t < 2; t++) {
            int c0 = d != 0.0f ? nearest_int(steps[t] / d) : 0;
            for (int c = c0 - 1; c <= c0 + 1; c++) {
                if (c < -code_lim || c > code_lim - 1) continue;
                float err = symmetric_group_error(xg, group_len, qmin, d * c, NULL);
                if (err < best) { best = err; sc[g] = c; }
            }
        }
        symmetric_group_error(xg, group_len, qmin, d * sc[g], q + g * group_len);
    }
}
