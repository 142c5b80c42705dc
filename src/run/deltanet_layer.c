/* The gated DeltaNet kind's run part (README-hybrid.md). Per position t, with m_t = W_qkv x_t:
 *   c_t = silu(sum_j conv[:, j] * m_{t-K+1+j})           causal depthwise convolution, m_{<0} = 0
 *   q, k = c_t's key-head parts, L2-normed (q also / sqrt(dk)); v = its value-head part
 *   per value head h (key head i = key_head[h]):
 *     beta = sigmoid(W_beta x_t)_h,  g = a_h * softplus((W_alpha x_t)_h + dt_bias_h)
 *     S_h = exp(g) S_h;  u = beta (v_h - S_h^T k_i);  S_h += k_i u^T;  o_h = S_h^T q_i
 *     y_h = rmsnorm(o_h) * norm * silu((W_z x_t)_h)
 *   out_t = W_out [y_0 .. y_{Hv-1}]
 * A prompt runs the same recurrence one position at a time (the chunked form is the same math
 * reordered for GPUs), so a batch gives the bits of single steps: batched prefill == sequential,
 * and a rewind to a snapshot continues exactly. The heads are independent: a batch's heads are
 * spread over the threads, each head through every position in order. */
#include "run/deltanet_layer.h"
#include "run/causal_conv.h"
#include "run/vector_ops.h"
#include "kernels/matmul.h"
#include "kernels/recurrence.h"
#include <math.h>
#include <string.h>

size_t deltanet_layer_state_floats(const layer_geometry *ly) {
    const deltanet_geometry *d = &ly->delta;
    return (size_t)(d->conv_kernel - 1) * d->conv_channels + (size_t)d->n_v_heads * d->head_k * d->head_v;
}

int deltanet_layer_rewind(const ts_context *c, const sequence *s, const layer_geometry *ly, int il, int pos) {
    return recurrent_state_best(&s->rs, pos);
}


/* x / sqrt(|x|^2 + 1e-6) * scale, in place (HF's l2norm; the 1e-6 is fixed, not the model's eps) */
static void l2_normalize(float *x, int n, float scale) {
    double ss = 0.0;
    for (int i = 0; i < n; i++) ss += (double)x[i] * x[i];
    const float inv = scale / sqrtf((float)ss + 1e-6f);
    for (int i = 0; i < n; i++) x[i] *= inv;
}

/* Run r's convolution (threaded over channels), then q and k normalized per key head. */
static void convolve(ts_context *c, const deltanet_geometry *d, int il, const batch_run *r, float *window) {
    const int C = d->conv_channels, hk = d->n_k_heads, dk = d->head_k;
    const float q_scale = 1.0f / sqrtf((float)dk);
    const causal_conv cv = { .channels = C, .kernel = d->conv_kernel, .taps = d->conv, .silu = true,
                             .in = c->delta.qkv, .in_stride = C, .out = c->delta.qkv, .out_stride = C };
    causal_conv_run(c, il, r, window, &cv);
    for (int t = r->t0; t < r->t0 + r->n; t++) {
        float *m = c->delta.qkv + (long)t * C;
        for (int i = 0; i < hk; i++) {
            l2_normalize(m + (long)i * dk, dk, q_scale);
            l2_normalize(m + (long)(hk + i) * dk, dk, 1.0f);
        }
    }
}

typedef struct delta_job {
    ts_context *c;
    const deltanet_geometry *d;
    const batch_run *r;
    int il;
    float *state;
    delta_rule_scan_fn scan;   /* the model's SIMD level's */
} delta_job;

/* Value heads [lo, hi) through every position of the run. */
static void heads_task(void *ctx, int ith, int nth) {
    const delta_job *j = ctx;
    const deltanet_geometry *d = j->d;
    ts_context *c = j->c;
    const int C = d->conv_channels, hv = d->n_v_heads, dk = d->head_k, dv = d->head_v, V = hv * dv;
    const long key_off = (long)d->n_k_heads * dk, v_off = 2 * key_off;
    const size_t conv_floats = (size_t)(d->conv_kernel - 1) * C;
    const batch_run *run = j->r;
    const int n = run->n;
    const long t0 = run->t0;
    float decay[n], beta[n];
    long lo, hi;
    split_range(hv, ith, nth, &lo, &hi);
    for (long h = lo; h < hi; h++) {
        const int i_k = d->key_head[h];
        const float *qkv = c->delta.qkv + t0 * C;
        delta_rule_run r = { .dk = dk, .dv = dv, .n = n, .q = qkv + (long)i_k * dk,
                             .k = qkv + key_off + (long)i_k * dk, .v = qkv + v_off + h * dv,
                             .qk_stride = C, .v_stride = C, .o_stride = V, .decay = decay, .beta = beta,
                             .o = c->delta.y + t0 * V + h * dv };
        for (int t = 0; t < n; t++) {
            beta[t] = sigmoid(c->delta.beta[(t0 + t) * hv + h]);
            decay[t] = expf(d->a[h] * softplus(c->delta.alpha[(t0 + t) * hv + h] + d->dt_bias[h]));
            float *snap = recurrent_state_capture(&run->seq->rs, j->il, run->seq->pos + t + 1);
            if (snap && r.n_snap < DELTA_RULE_MAX_SNAPS) {
                r.snap_t[r.n_snap] = t;
                r.snap[r.n_snap++] = snap + conv_floats + (size_t)h * dk * dv;
            }
        }
        j->scan(j->state + conv_floats + (size_t)h * dk * dv, &r);
        /* the gated RMSNorm, in place on each position's output */
        for (long t = t0; t < t0 + n; t++) {
            float *y = c->delta.y + t * V + h * dv;
            const float *z = c->delta.z + t * V + h * dv;
            rmsnorm(y, y, d->norm, dv, c->m->g.norm_eps);
            for (int b = 0; b < dv; b++) y[b] *= silu(z[b]);
        }
    }
}

void deltanet_layer_forward(ts_context *c, const layer_geometry *ly, int il, int n) {
    const deltanet_geometry *d = &ly->delta;
    const int H = c->m->g.hidden, C = d->conv_channels, hv = d->n_v_heads, V = hv * d->head_v;
    {   /* the four projections read the same input: one quantization, one pass of the pool */
        const weight *w4[4] = { &d->w_qkv, &d->w_z, &d->w_beta, &d->w_alpha };
        float *y4[4] = { c->delta.qkv, c->delta.z, c->delta.beta, c->delta.alpha };
        const long s4[4] = { C, V, hv, hv };
        matmul_multi(&c->mm, 4, w4, c->xn, H, n, y4, s4);
    }
    const delta_rule_scan_fn scan = recurrence_kernels_for(matmul_kernels_level(c->mm.ks)).delta_rule_scan;
    for (int r = 0; r < c->n_runs; r++) {   /* each run through its sequence's state */
        const batch_run *run = &c->runs[r];
        float *state = recurrent_state_layer(&run->seq->rs, il);
        convolve(c, d, il, run, state);
        delta_job j = { c, d, run, il, state, scan };
        if (run->n > 1 || hv > 1) thread_pool_run(c->pool, heads_task, &j);
        else heads_task(&j, 0, 1);
    }
    matmul(&c->mm, &d->w_out, c->delta.y, V, n, c->tmp, H);
}
