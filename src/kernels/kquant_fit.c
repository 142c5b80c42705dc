/* The K-quant super-block fits of the round-to-nearest reference quantizers: the affine fit
 * (Q2_K, Q4_K, Q5_K) and the symmetric fit (Q3_K, Q6_K). */
#include <float.h>
#include "kernels/kernels_internal.h"
#include "kernels/f16.h"

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
    *d_bits = f16_from_f32(max_step / code_max);
    *dmin_bits = f16_from_f32(max_offset / code_max);
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
    *d_bits = f16_from_f32(big / -code_lim);
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
