/* One forward for every architecture. Per layer, as the geometry table says:
 *   x += post_attn_norm( mixer(attn_norm(x)) )       the layer's kind: attention over the KV cache, ...
 *   x += post_ffn_norm( Wdown · (act(Wgate·n) * (Wup·n)) ),   n = ffn_norm(x)   (and/or experts)
 *   x *= output_scale
 * and then logits = output · output_norm(x), optionally soft-capped.
 * Every matrix product goes through matmul(), which splits rows across threads; each output is
 * computed by the same code whichever thread or batch size, so batched prefill, sequential
 * prefill and threaded runs agree exactly. */
#include "run/forward.h"
#include "run/layer_kind.h"
#include "run/positions.h"
#include "run/moe.h"
#include "run/vector_ops.h"
#include "kernels/matmul.h"
#include "kernels/types.h"
#include "core/error.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* gate[i] = act(gate[i]) * up[i] over a slice of the batch's FFN values */
typedef struct gate_job { float *gate; const float *up; long n; int activation; } gate_job;

static void gate_task(void *ctx, int ith, int nth) {
    const gate_job *j = ctx;
    long lo, hi;
    split_range(j->n, ith, nth, &lo, &hi);
    for (long i = lo; i < hi; i++) {
        j->gate[i] = glu(j->activation, j->gate[i], j->up[i]);
    }
}

/* out = norm(x), or x itself for a sublayer without an input norm (OLMo 2) */
static void sublayer_input(const ts_context *c, const float *norm, int t) {
    const model_geometry *g = &c->m->g;
    float *out = c->xn + (long)t * g->hidden;
    const float *x = c->x + (long)t * g->hidden;
    if (norm) rmsnorm(out, x, norm, g->hidden, g->norm_eps);
    else memcpy(out, x, (size_t)g->hidden * sizeof(float));
}

/* xn = attn_norm(x): the mixer's input */
static void mixer_input(ts_context *c, const layer_geometry *ly, int il, int t) {
    sublayer_input(c, ly->attn_norm, t);
}

/* x += residual_scale * post_norm(o) for position t, o the sublayer's output in c->tmp (post_norm
 * NULL: none) */
static void add_sublayer_output(ts_context *c, int t, const float *post_norm) {
    const model_geometry *g = &c->m->g;
    const int H = g->hidden;
    float *o = c->tmp + (long)t * H, *x = c->x + (long)t * H;
    if (post_norm) rmsnorm(o, o, post_norm, H, g->norm_eps);
    if (g->residual_scale != 1.0f) for (int i = 0; i < H; i++) x[i] += g->residual_scale * o[i];
    else for (int i = 0; i < H; i++) x[i] += o[i];
}

/* x += post_attn_norm(the mixer's output); xn = ffn_norm(x) */
static void mixer_residual(ts_context *c, const layer_geometry *ly, int il, int t) {
    add_sublayer_output(c, t, ly->post_attn_norm);
    sublayer_input(c, ly->ffn_norm, t);
}

/* x += post_ffn_norm(FFN output) */
static void ffn_residual(ts_context *c, const layer_geometry *ly, int il, int t) {
    add_sublayer_output(c, t, ly->post_ffn_norm);
}

/* ---- one layer ---- */

static void layer_forward(ts_context *c, int il, int n) {
    const model_geometry *g = &c->m->g;
    const layer_geometry *ly = &g->layers[il];
    const int H = g->hidden;

    /* the mixer: attention or another kind (run/layer_kind.c), from xn into tmp */
    positions_each(c, ly, il, n, mixer_input);
    layer_kind_ops(ly->kind)->forward(c, ly, il, n);
    positions_each(c, ly, il, n, mixer_residual);

    /* the MLP, the experts, or both (Gemma 4: each output normed, then summed) into c->tmp */
    const bool dense = ly->w_gate.data != NULL;
    if (dense) {
        const long F = ly->ffn_dim;
        const weight *w2[2] = { &ly->w_gate, &ly->w_up };
        float *y2[2] = { c->gate, c->up };
        const long s2[2] = { F, F };
        matmul_multi(&c->mm, 2, w2, c->xn, H, n, y2, s2);
        gate_job gj = { c->gate, c->up, (long)n * F, ly->activation };
        /* elementwise: any split gives the same bits; one position's 8,192 values are ~35 us of
         * expf, which the other threads would otherwise wait through */
        if (gj.n >= 2048) thread_pool_run(c->pool, gate_task, &gj);
        else gate_task(&gj, 0, 1);
        matmul(&c->mm, &ly->w_down, c->gate, F, n, c->tmp, H);
    }
    if (ly->moe.n_experts > 0) {
        float *moe_out = dense ? c->moe.dense : c->tmp;
        moe_forward(c, ly, il, n, moe_out);
        for (int t = 0; t < n; t++) {
            float *o = c->tmp + (long)t * H, *e = moe_out + (long)t * H;
            if (ly->moe.out_norm) rmsnorm(e, e, ly->moe.out_norm, H, g->norm_eps);
            if (!dense) continue;
            if (ly->moe.dense_out_norm) rmsnorm(o, o, ly->moe.dense_out_norm, H, g->norm_eps);
            for (int i = 0; i < H; i++) o[i] += e[i];
        }
    }
    positions_each(c, ly, il, n, ffn_residual);

    if (g->ple_dim > 0) {     /* per-layer embedding input */
        const int P = g->ple_dim;
        matmul(&c->mm, &ly->ple_gate, c->x, H, n, c->ple_tmp, P);
        for (int t = 0; t < n; t++) {
            float *gt = c->ple_tmp + (long)t * P;
            const float *pli = c->pli + ((long)t * g->n_layers + il) * P;
            for (int i = 0; i < P; i++) gt[i] = gelu_tanh(gt[i]) * pli[i];
        }
        matmul(&c->mm, &ly->ple_proj, c->ple_tmp, P, n, c->tmp, H);
        for (int t = 0; t < n; t++) add_sublayer_output(c, t, ly->ple_post_norm);
    }
    if (ly->output_scale != 1.0f)
        for (long i = 0; i < (long)n * H; i++) c->x[i] *= ly->output_scale;
}

/* Per-layer embedding inputs of the batch (Gemma 4 PLE), from the token ids and the scaled
 * embeddings in c->x: c->pli[t][layer][ple_dim]. */
static void per_layer_inputs(ts_context *c, const int32_t *tokens, int n) {
    const model_geometry *g = &c->m->g;
    const int P = g->ple_dim, L = g->n_layers, H = g->hidden;
    const long W = (long)P * L;
    matmul(&c->mm, &g->ple_model_proj, c->x, H, n, c->pli, W);
    const type_traits *et = type_get(g->ple_embd.type);
    float *emb = c->ple_row;
    for (int t = 0; t < n; t++) {
        float *p = c->pli + t * W;
        et->dequant_row(g->ple_embd.data + (size_t)tokens[t] * g->ple_embd.row_bytes, emb, W);
        for (int l = 0; l < L; l++) {
            float *pl = p + (long)l * P;
            for (int i = 0; i < P; i++) pl[i] *= g->ple_proj_scale;
            rmsnorm(pl, pl, g->ple_proj_norm, P, g->norm_eps);
            for (int i = 0; i < P; i++)
                pl[i] = (pl[i] + emb[(long)l * P + i] * g->ple_embd_scale) * g->ple_combine_scale;
        }
    }
}

int forward_batch(ts_context *c, const int32_t *tokens, int n, const int *rows, int n_rows, float *logits,
                  ts_error *err) {
    const model_geometry *g = &c->m->g;
    const int H = g->hidden;
    if (n <= 0 || n > FORWARD_MAX_BATCH) return ts_fail(err, "internal: batch of %d positions", n);
    for (int r = 0, t = 0; r < c->n_runs; r++) {   /* each position's sequence and place in it */
        const batch_run *run = &c->runs[r];
        if (run->t0 != t || run->n <= 0) return ts_fail(err, "internal: the runs do not tile the batch");
        for (int i = 0; i < run->n; i++, t++) { c->seq_of[t] = run->seq; c->pos_of[t] = run->seq->pos + i; }
        if (r == c->n_runs - 1 && t != n) return ts_fail(err, "internal: the runs do not tile the batch");
    }
    const type_traits *et = type_get(g->tok_embd.type);
    uint8_t *row = g->tok_embd.lanes ? malloc(g->tok_embd.row_bytes) : NULL;   /* a tied head's rows in lanes */
    if (g->tok_embd.lanes && !row) return ts_fail(err, "out of memory");
    for (int t = 0; t < n; t++) {
        float *x = c->x + (long)t * H;
        et->dequant_row(matmul_weight_row(&c->mm, &g->tok_embd, tokens[t], row), x, H);
        if (g->embed_scale != 1.0f) for (int i = 0; i < H; i++) x[i] *= g->embed_scale;
    }
    free(row);
    if (g->ple_dim > 0) per_layer_inputs(c, tokens, n);
    for (int il = 0; il < g->n_layers; il++) layer_forward(c, il, n);
    for (int r = 0; r < c->n_runs; r++) c->runs[r].seq->pos += c->runs[r].n;

    if (n_rows <= 0) return 0;
    for (int i = 0; i < n_rows; i++)
        rmsnorm(c->xn + (long)i * H, c->x + (long)rows[i] * H, g->output_norm, H, g->norm_eps);
    matmul(&c->mm, &g->output, c->xn, H, n_rows, logits, g->n_vocab);
    if (g->logit_scale != 1.0f)
        for (long i = 0; i < (long)n_rows * g->n_vocab; i++) logits[i] *= g->logit_scale;
    if (g->final_softcap > 0.0f) {
        float cap = g->final_softcap;
        for (long i = 0; i < (long)n_rows * g->n_vocab; i++) logits[i] = cap * tanhf(logits[i] / cap);
    }
    return 0;
}
