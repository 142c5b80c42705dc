/* The small per-vector operations of the forward (norms, activations), shared by its files. */
#ifndef TS_MODEL_VECTOR_OPS_H
#define TS_MODEL_VECTOR_OPS_H
#include <math.h>

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

#endif
