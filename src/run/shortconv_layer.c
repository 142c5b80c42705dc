/* The gated short-convolution kind's run part (README-ssm.md, LFM2). Per position t, with
 * [b | c | u] = W_in x_t (D channels each):
 *   v_t = b ⊙ u                                            the input gate
 *   y_t[d] = c[d] * sum_j conv[d][j] * v_{t-K+1+j}[d]      causal depthwise convolution, v_{<0} = 0
 *   out_t = W_out y_t
 * The state is the window of the K - 1 last v (oldest first). A batch moves it on one position at
 * a time, so a prompt gives the bits of single steps, and a snapshot continues exactly. */
#include "run/shortconv_layer.h"
#include "run/causal_conv.h"
#include "kernels/matmul.h"
#include <string.h>

size_t shortconv_layer_state_floats(const layer_geometry *ly) {
    return (size_t)(ly->conv.kernel - 1) * ly->conv.channels;
}

int shortconv_layer_rewind(const ts_context *c, const sequence *s, const layer_geometry *ly, int il, int pos) {
    return recurrent_state_best(&s->rs, pos);
}

void shortconv_layer_forward(ts_context *c, const layer_geometry *ly, int il, int n) {
    const shortconv_geometry *s = &ly->conv;
    const int H = c->m->g.hidden, D = s->channels;
    const long stride = 3L * D;
    float *bcu = c->shortconv_in;   /* [n][b | c | u]; y_t is written over b_t */
    matmul(&c->mm, &s->w_in, c->xn, H, n, bcu, stride);
    for (int t = 0; t < n; t++) {   /* the input gate */
        float *b = bcu + t * stride, *u = b + 2L * D;
        for (int d = 0; d < D; d++) u[d] *= b[d];
    }
    /* u through the convolution into b's place, then the output gate c */
    const causal_conv cv = { .channels = D, .kernel = s->kernel, .taps = s->conv, .in = bcu + 2L * D,
                             .in_stride = stride, .out = bcu, .out_stride = stride };
    for (int r = 0; r < c->n_runs; r++)
        causal_conv_run(c, il, &c->runs[r], recurrent_state_layer(&c->runs[r].seq->rs, il), &cv);
    for (int t = 0; t < n; t++) {
        float *b = bcu + t * stride, *gate = b + D;
        for (int d = 0; d < D; d++) b[d] = gate[d] * b[d];
    }
    matmul(&c->mm, &s->w_out, bcu, stride, n, c->tmp, H);
}
