/* The recurrent kinds' causal convolution (see causal_conv.h). */
#include "run/causal_conv.h"
#include "run/vector_ops.h"
#include <string.h>

typedef struct conv_job { const causal_conv *cv; const batch_run *r; int il; float *window; } conv_job;

/* Channels [lo, hi) through every position of the run (the run of channels a vector loop). */
static void conv_task(void *ctx, int ith, int nth) {
    const conv_job *j = ctx;
    const causal_conv *cv = j->cv;
    const int C = cv->channels, W = cv->kernel - 1;
    float *window = j->window;
    long lo, hi;
    split_range(C, ith, nth, &lo, &hi);
    const long n_ch = hi - lo;
    float acc[n_ch > 0 ? n_ch : 1];
    const batch_run *r = j->r;
    for (int t = r->t0; t < r->t0 + r->n; t++) {
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
        float *snap = recurrent_state_capture(&r->seq->rs, j->il, r->seq->pos + t - r->t0 + 1);
        if (snap)
            for (int i = 0; i < W; i++)
                memcpy(snap + (long)i * C + lo, window + (long)i * C + lo, (size_t)n_ch * sizeof(float));
    }
}

void causal_conv_run(ts_context *c, int il, const batch_run *r, float *window, const causal_conv *cv) {
    conv_job j = { cv, r, il, window };
    if (r->n > 1) thread_pool_run(c->pool, conv_task, &j);
    else conv_task(&j, 0, 1);
}
