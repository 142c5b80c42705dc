/* The small per-vector operations of the forward (norms, activations), shared by its files. */
#ifndef TS_RUN_VECTOR_OPS_H
#define TS_RUN_VECTOR_OPS_H
#include <math.h>
#include "load/geometry.h"

/* out = x / rms(x) * w   (w NULL: no weight) */
static inline void rmsnorm(float *out, const float *x, const float *w, int n, float eps) {
    double ss = 0.0;
    for (int i = 0; i < n; i++) ss += (double)x[i] * x[i];
    float inv = 1.0f / sqrtf((float)(ss / n) + eps);
    for (int i = 0; i < n; i++) out[i] = x[i] * inv * (w ? w[i] : 1.0f);
}

static inline float gelu_tanh(float x) {
    return 0.5f * x * (1.0f + tanhf(0.7978845608028654f * (x + 0.044715f * x * x * x)));
}

static inline float silu(float x) { return x / (1.0f + expf(-x)); }
static inline float sigmoid(float x) { return 1.0f / (1.0f + expf(-x)); }
/* log(1 + e^x), x itself above 20 (as torch and ggml) */
static inline float softplus(float x) { return x > 20.0f ? x : log1pf(expf(x)); }

/* A gated unit of the feed-forward: act(gate) * up, by enum ffn_activation. */
static inline float glu(int act, float g, float u) {
    if (act == ACT_SWIGLU_OAI) {
        /* gpt-oss: gate clamped above at 7, up to [-7, 7], glu = g * sigmoid(1.702 g), times (u + 1) */
        g = g > 7.0f ? 7.0f : g;
        u = u > 7.0f ? 7.0f : u < -7.0f ? -7.0f : u;
        return (u + 1.0f) * (g / (1.0f + expf(-1.702f * g)));
    }
    return (act == ACT_GELU_TANH ? gelu_tanh(g) : silu(g)) * u;
}

#endif
