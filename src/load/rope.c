/* RoPE frequency tables (see rope.h). Formulas: YaRN (Peng et al. 2023) as Hugging Face's
 * _compute_yarn_parameters and llama.cpp's rope_yarn state them, Llama 3's frequency bands, and
 * Phi-3's LongRoPE divisor lists (README-rope-bias.md and README-phi3-iq.md in the fixtures). */
#include "load/rope.h"
#include <math.h>

void rope_plain(float *inv, int pairs, int span, float theta, const float *divisor) {
    for (int i = 0; i < pairs; i++) {
        float f = powf(theta, -2.0f * (float)i / (float)span);
        inv[i] = divisor ? f / divisor[i] : f;
    }
}

double rope_yarn_get_mscale(double s, double m) {
    return s <= 1.0 ? 1.0 : 0.1 * m * log(s) + 1.0;
}

/* The dimension at which a frequency makes `rotations` turns over the original context. */
static double yarn_corr_dim(double rotations, int span, double theta, int orig_ctx) {
    return span * log(orig_ctx / (rotations * 2.0 * M_PI)) / (2.0 * log(theta));
}

void rope_scaled(float *inv, int pairs, int span, float theta, const rope_scaling *s, bool long_list) {
    for (int i = 0; i < pairs; i++) {
        double base = pow((double)theta, -2.0 * i / span);
        double f = base;
        if (s->kind == ROPE_YARN) {
            double low = yarn_corr_dim(s->beta_fast, span, theta, s->orig_ctx);
            double high = yarn_corr_dim(s->beta_slow, span, theta, s->orig_ctx);
            if (s->truncate) { low = floor(low); high = ceil(high); }
            if (low < 0) low = 0;
            if (high > span - 1) high = span - 1;
            if (high == low) high += 0.001;
            double ramp = (i - low) / (high - low);
            ramp = ramp < 0 ? 0 : ramp > 1 ? 1 : ramp;
            /* ramp 0: extrapolation (unscaled); 1: interpolation (divided by the factor) */
            f = base / s->factor * ramp + base * (1.0 - ramp);
        } else if (s->kind == ROPE_LLAMA3) {
            double wavelen = 2.0 * M_PI / base;
            double low_wl = s->orig_ctx / s->low_freq_factor, high_wl = s->orig_ctx / s->high_freq_factor;
            if (wavelen > low_wl) f = base / s->factor;
            else if (wavelen >= high_wl) {
                double smooth = (s->orig_ctx / wavelen - s->low_freq_factor) / (s->high_freq_factor - s->low_freq_factor);
                f = (1.0 - smooth) * base / s->factor + smooth * base;
            }
        } else if (s->kind == ROPE_LONGROPE) {
            const float *list = long_list ? s->long_factor : s->short_factor;
            f = base / list[i];
        }
        inv[i] = (float)f;
    }
}
