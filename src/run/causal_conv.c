/* The recurrent kinds' causal convolution (see causal_conv.h). */
#include "run/causal_conv.h"
#include "run/vector_ops.h"
#include <string.h>

typedef struct conv_job { ts_context *c; const causal_conv *cv; int il, n; float *window; } conv_job;

/* Channels [lo, hi) through every position of the batch (the run of channels a vector loop). */
static void conv_task(void *ctx, int ith, int nth) {
    const conv_job *j = ctx;
    const causal_conv *cv = j->cv;
    const int C = cv->channels, W = cv->kernel - 1;
    float *window = j->window;
    long lo, hi;
    split_range(C, ith, nth, &lo, &hi);
    const long n_ch = hi - lo;
    float acc[n_ch > 0 ? n_ch : 1];
    for (int t = 0; t < j->n; t++) {
        const float *in = cv->in + t * cv->in_stride + lo;
        float *out = cv->out + t * cv->out_stride + lo;
        for (long i = 0; i < n_ch; i++) acc[i] = 0.0f;
        for (int tap = 0; tap < W; tap++) {
            const float *w = cv->taps + (long)tap * C + lo, *x = window + (long)tap * C + lo;
            for (long i = 0; i < n_ch; i++) acc[i] += w[i] * x[i];
        }
        const float *w = cv->taps + (long)W * C + lo;
        for (long i = 0; i < n_ch; i++) acc[i] += w[i] * in[i];
        if (cv->bias)
            for (long i = 0; i < n_ch; i++) acc[i] += cv->bias[lo + i];
        /* the window moves on before the output is written: out may be the input */
        for (int tap = 0; tap + 1 < W; tap++)
            memcpy(window + (long)tap * C + lo, window + (long)(tap + 1) * C + lo, (size_t)n_ch * sizeof(float));
        if (W > 0) memcpy(window + (long)(W - 1) * C + lo, in, (size_t)n_ch * sizeof(float));
        if (cv->silu)
            for (long i = 0; i < n_ch; i++) out[i] = silu(acc[i]);
        else
            memcpy(out, acc, (size_t)n_ch * sizeof(float));
        float *snap = recurrent_state_capture(&j->c->rs, j->il, j->c->pos + t + 1);
        if (snap)
            for (int i = 0; i < W; i++)
                memcpy(snap + (long)i * C + lo, window + (long)i * C + lo, (size_t)n_ch * sizeof(float));
    }
}

void causal_conv_run(ts_context *c, int il, int n, float *window, const causal_conv *cv) {
    conv_job j = { c, cv, il, n, window };
    if (n > 1) thread_pool_run(c->pool, conv_task, &j);
    else conv_task(&j, 0, 1);
}
