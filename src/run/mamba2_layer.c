/* The Mamba-2 kind's run part (README-ssm.md). Per position t, with [z | m | dt] = W_in x_t:
 *   c_t = silu(sum_j conv[:, j] * m_{t-K+1+j} + conv_bias)      causal depthwise convolution, m_{<0} = 0
 *   x = c_t's first d_inner values, nh heads of dh; then B and C, ng groups of N each
 *   per head h (group g = h / (nh / ng)):
 *     delta = softplus(dt_h + dt_bias_h);  S_h = exp(delta a_h) S_h + (delta x_h) B_g^T
 *     y_h = S_h C_g + d_h x_h
 *   v = y * silu(z), RMS-normed per norm_group values times the norm's weight;  out_t = W_out v
 * A prompt runs the recurrence one position at a time (HF's chunked scan is the same sums
 * reordered), so a batch gives the bits of single steps: batched prefill == sequential, and a
 * rewind to a snapshot continues exactly. The heads are independent: a batch's heads are spread
 * over the threads, each head through every position in order. A head's state is [dh][N], N
 * contiguous: the update and the read-out by C are one pass over each row. */
#include "run/mamba2_layer.h"
#include "run/causal_conv.h"
#include "run/vector_ops.h"
#include "kernels/matmul.h"
#include <math.h>
#include <string.h>

size_t mamba2_layer_state_floats(const layer_geometry *ly) {
    const mamba2_geometry *mb = &ly->mamba;
    return (size_t)(mb->conv_kernel - 1) * mb->conv_channels + (size_t)mb->n_heads * mb->head_dim * mb->state_size;
}

int mamba2_layer_rewind(const ts_context *c, const sequence *s, const layer_geometry *ly, int il, int pos) {
    return recurrent_state_best(&s->rs, pos);
}


typedef struct scan_job { ts_context *c; const mamba2_geometry *mb; const batch_run *r; int il; float *state; } scan_job;

/* Heads [lo, hi) through every position of the run: their outputs into c->mamba.y ([n][d_inner]). */
static void heads_task(void *ctx, int ith, int nth) {
    const scan_job *j = ctx;
    const mamba2_geometry *mb = j->mb;
    ts_context *c = j->c;
    const int nh = mb->n_heads, dh = mb->head_dim, N = mb->state_size, C = mb->conv_channels;
    const long inner = (long)nh * dh, P = inner + C + nh, ng = mb->n_groups;
    const size_t conv_floats = (size_t)(mb->conv_kernel - 1) * C;
    long lo, hi;
    split_range(nh, ith, nth, &lo, &hi);
    for (long h = lo; h < hi; h++) {
        float *S = j->state + conv_floats + (size_t)h * dh * N;   /* [dh][N] */
        const long g = h / (nh / ng);
        for (int t = j->r->t0; t < j->r->t0 + j->r->n; t++) {
            const float *xbc = c->mamba.xbc + (long)t * C;
            const float *x = xbc + h * dh, *B = xbc + inner + g * N, *Cg = xbc + inner + (ng + g) * N;
            const float delta = softplus(c->mamba.proj[t * P + inner + C + h] + mb->dt_bias[h]);
            const float decay = expf(delta * mb->a[h]);
            float *y = c->mamba.y + t * inner + h * dh;
            for (int p = 0; p < dh; p++) {
                float *row = S + (long)p * N;
                const float xd = x[p] * delta;
                float acc = 0.0f;
                for (int k = 0; k < N; k++) {
                    row[k] = row[k] * decay + B[k] * xd;
                    acc += row[k] * Cg[k];
                }
                y[p] = acc + mb->d[h] * x[p];
            }
            float *snap = recurrent_state_capture(&j->r->seq->rs, j->il, j->r->seq->pos + t - j->r->t0 + 1);
            if (snap) memcpy(snap + conv_floats + (size_t)h * dh * N, S, (size_t)dh * N * sizeof(float));
        }
    }
}

void mamba2_layer_forward(ts_context *c, const layer_geometry *ly, int il, int n) {
    const mamba2_geometry *mb = &ly->mamba;
    const int H = c->m->g.hidden, C = mb->conv_channels, nh = mb->n_heads;
    const long inner = (long)nh * mb->head_dim, P = inner + C + nh;
    matmul(&c->mm, &mb->w_in, c->xn, H, n, c->mamba.proj, P);
    /* per run: xBC through the convolution (taps, the bias, silu) into c->mamba.xbc, then the scan */
    const causal_conv cv = { .channels = C, .kernel = mb->conv_kernel, .taps = mb->conv, .bias = mb->conv_bias,
                             .silu = true, .in = c->mamba.proj + inner, .in_stride = P, .out = c->mamba.xbc,
                             .out_stride = C };
    for (int r = 0; r < c->n_runs; r++) {
        const batch_run *run = &c->runs[r];
        float *state = recurrent_state_layer(&run->seq->rs, il);
        causal_conv_run(c, il, run, state, &cv);
        scan_job j = { c, mb, run, il, state };
        if (run->n > 1 || nh > 1) thread_pool_run(c->pool, heads_task, &j);
        else heads_task(&j, 0, 1);
    }
    /* the gate before the norm; the norm per group of values (the container's rule) */
    const int G = mb->norm_group;
    for (int t = 0; t < n; t++) {
        float *y = c->mamba.y + t * inner;
        const float *z = c->mamba.proj + t * P;
        for (long i = 0; i < inner; i++) y[i] *= silu(z[i]);
        for (long g0 = 0; g0 < inner; g0 += G) rmsnorm(y + g0, y + g0, mb->norm + g0, G, c->m->g.norm_eps);
    }
    matmul(&c->mm, &mb->w_out, c->mamba.y, inner, n, c->tmp, H);
}
