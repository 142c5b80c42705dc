/* One forward for every architecture. Per layer, as the geometry table says:
 *   x += post_attn_norm( Wo · attention( rope(q_norm(Wq·n)), rope(k_norm(Wk·n)), Wv·n ) ),  n = attn_norm(x)
 *   x += post_ffn_norm( Wdown · (act(Wgate·n) * (Wup·n)) ),                                  n = ffn_norm(x)
 *   x *= output_scale
 * and then logits = output · output_norm(x), optionally soft-capped.
 * Every matrix product goes through matmul(), which splits rows across threads; each output is
 * computed by the same code whichever thread or batch size, so batched prefill, sequential
 * prefill and threaded runs agree exactly. */
#include "model/forward.h"
#include "model/moe.h"
#include "model/vector_ops.h"
#include "kernels/matmul.h"
#include "kernels/types.h"
#include "kernels/attention.h"
#include "core/error.h"
#include <math.h>
#include <string.h>

/* The rotation of each RoPE pair at a position (computed once per position, shared by heads);
 * cos and sin carry the layer's attention factor. */
static void rope_angles(const ts_context *c, const layer_geometry *ly, int pos, float *cs, float *sn) {
    const float *inv = c->rope_long && ly->rope_inv_freq_long ? ly->rope_inv_freq_long : ly->rope_inv_freq;
    float p = (float)pos * ly->rope_pos_scale;
    for (int i = 0; i < ly->rope_pairs; i++) {
        float angle = p * inv[i];
        cs[i] = cosf(angle) * ly->rope_mscale;
        sn[i] = sinf(angle) * ly->rope_mscale;
    }
}

/* Split-half RoPE on one head: dimension i pairs with i + rope_dim/2. */
static void rope(float *v, const layer_geometry *ly, const float *cs, const float *sn) {
    int half = ly->rope_dim / 2;
    for (int i = 0; i < ly->rope_pairs; i++) {
        float a = v[i], b = v[i + half];
        v[i] = a * cs[i] - b * sn[i];
        v[i + half] = a * sn[i] + b * cs[i];
    }
}

/* ---- attention over the cache ---- */

typedef struct attention_job {
    ts_context *c;
    const layer_geometry *ly;
    attention_kernels ak;
    int layer, n, pos0;
    long q_stride;            /* floats per position in c->q / c->att */
} attention_job;

/* One query (position t, head h) against the cached positions it sees: scores, softmax, and the
 * weighted sum of values. Keys are scored in runs that stay within one block of the cache and do
 * not wrap a sliding layer's ring (each score is independent of its neighbours, so the runs do
 * not change any bits). */
static void attention_task(void *ctx, int ith, int nth) {
    const attention_job *j = ctx;
    ts_context *c = j->c;
    const layer_geometry *ly = j->ly;
    const int hd = ly->head_dim, kv_width = ly->n_kv_heads * hd;
    const int group = ly->n_heads / ly->n_kv_heads;
    const int slots = c->kv.slots[j->layer];
    const float *kc = c->kv.k[j->layer], *vc = c->kv.v[j->layer];
    float *scores = c->scores + (size_t)ith * (c->n_ctx + 1);
    long lo, hi;
    split_range((long)j->n * ly->n_heads, ith, nth, &lo, &hi);
    for (long task = lo; task < hi; task++) {
        int t = (int)(task / ly->n_heads), h = (int)(task % ly->n_heads);
        int p = j->pos0 + t;
        int first = ly->window > 0 && p - ly->window + 1 > 0 ? p - ly->window + 1 : 0;
        int count = p - first + 1;
        const float *q = c->q + t * j->q_stride + h * hd;
        int kvh = h / group;
        /* runs of keys that are contiguous in one block of the cache (and do not wrap the ring) */
        for (int done = 0, s = first % slots; done < count; ) {
            int in_block = KV_KEY_BLOCK - s % KV_KEY_BLOCK, len = count - done;
            if (len > in_block) len = in_block;
            if (len > slots - s) len = slots - s;
            const float *kt = kc + ((size_t)(s / KV_KEY_BLOCK) * kv_width + (size_t)kvh * hd) * KV_KEY_BLOCK + s % KV_KEY_BLOCK;
            j->ak.scores(q, kt, KV_KEY_BLOCK, hd, len, ly->attn_scale, scores + done);
            done += len;
            s = s + len == slots ? 0 : s + len;
        }
        if (ly->attn_softcap > 0.0f) {
            const float cap = ly->attn_softcap;
            for (int i = 0; i < count; i++) scores[i] = cap * tanhf(scores[i] / cap);
        }
        /* an attention sink (gpt-oss) is one more logit in the softmax that weighs no value */
        if (ly->attn_sinks) scores[count] = ly->attn_sinks[h];
        j->ak.softmax(scores, count + (ly->attn_sinks != NULL));
        float *out = c->att + t * j->q_stride + h * hd;
        j->ak.values(scores, count, vc + (size_t)kvh * hd, kv_width, slots, first % slots, hd, out);
    }
}

/* gate[i] = act(gate[i]) * up[i] over a slice of the batch's FFN values */
typedef struct gate_job { float *gate; const float *up; long n; int activation; } gate_job;

static void gate_task(void *ctx, int ith, int nth) {
    const gate_job *j = ctx;
    long lo, hi;
    split_range(j->n, ith, nth, &lo, &hi);
    for (long i = lo; i < hi; i++) {
        float a = j->gate[i];
        a = j->activation == ACT_GELU_TANH ? gelu_tanh(a) : silu(a);
        j->gate[i] = a * j->up[i];
    }
}

/* ---- per-position steps of a layer (run across the pool for a batch: each position is
 * computed by one thread with the same operations, so any split gives the same bits) ---- */

typedef void (*position_fn)(ts_context *c, const layer_geometry *ly, int il, int t);
typedef struct position_job { ts_context *c; const layer_geometry *ly; int il, n; position_fn fn; } position_job;

static void position_task(void *ctx, int ith, int nth) {
    const position_job *j = ctx;
    long lo, hi;
    split_range(j->n, ith, nth, &lo, &hi);
    for (long t = lo; t < hi; t++) j->fn(j->c, j->ly, j->il, (int)t);
}

static void for_each_position(ts_context *c, const layer_geometry *ly, int il, int n, position_fn fn) {
    if (n == 1) { fn(c, ly, il, 0); return; }   /* decode: not worth waking the pool */
    position_job j = { c, ly, il, n, fn };
    thread_pool_run(c->pool, position_task, &j);
}

/* out = norm(x), or x itself for a sublayer without an input norm (OLMo 2) */
static void sublayer_input(const ts_context *c, const float *norm, int t) {
    const model_geometry *g = &c->m->g;
    float *out = c->xn + (long)t * g->hidden;
    const float *x = c->x + (long)t * g->hidden;
    if (norm) rmsnorm(out, x, norm, g->hidden, g->norm_eps);
    else memcpy(out, x, (size_t)g->hidden * sizeof(float));
}

/* xn = attn_norm(x) */
static void attention_input(ts_context *c, const layer_geometry *ly, int il, int t) {
    sublayer_input(c, ly->attn_norm, t);
}

/* q/k norms and RoPE on position t's heads, then its K and V into the cache */
static void rope_and_cache(ts_context *c, const layer_geometry *ly, int il, int t) {
    const model_geometry *g = &c->m->g;
    const int hd = ly->head_dim, kv_width = ly->n_kv_heads * hd;
    const long qs = (long)ly->n_heads * hd, ks = kv_width;   /* strides of c->q and c->k, c->v */
    const int pos = c->pos + t;
    float cs[2048], sn[2048];   /* rope_pairs <= head_dim / 2 <= 2048 (the loader checks) */
    rope_angles(c, ly, pos, cs, sn);
    /* q/k norms per head, or over the whole projection (OLMo 2) */
    if (ly->qk_norm_whole) rmsnorm(c->q + t * qs, c->q + t * qs, ly->q_norm, (int)qs, g->norm_eps);
    /* Llama 4 attention temperature (Mistral 3): grows with the position, on q only */
    float temp = ly->attn_temp_beta > 0.0f
               ? 1.0f + ly->attn_temp_beta * logf(1.0f + floorf((float)pos / (float)ly->attn_temp_len)) : 1.0f;
    for (int h = 0; h < ly->n_heads; h++) {
        float *q = c->q + t * qs + h * hd;
        if (ly->q_norm && !ly->qk_norm_whole) rmsnorm(q, q, ly->q_norm, hd, g->norm_eps);
        rope(q, ly, cs, sn);
        if (temp != 1.0f) for (int i = 0; i < hd; i++) q[i] *= temp;
    }
    if (ly->kv_source != il) return;   /* this layer reads another layer's cache */
    if (ly->qk_norm_whole) rmsnorm(c->k + t * ks, c->k + t * ks, ly->k_norm, (int)ks, g->norm_eps);
    for (int h = 0; h < ly->n_kv_heads; h++) {
        float *k = c->k + t * ks + h * hd;
        if (ly->k_norm && !ly->qk_norm_whole) rmsnorm(k, k, ly->k_norm, hd, g->norm_eps);
        rope(k, ly, cs, sn);
        if (ly->v_norm) { float *v = c->v + t * ks + h * hd; rmsnorm(v, v, NULL, hd, g->norm_eps); }
    }
    const int slots = c->kv.slots[il], slot = pos % slots;
    /* keys transposed within blocks of KV_KEY_BLOCK slots: [block][kv head][dim][slot in block] */
    float *kt = c->kv.k[il] + (size_t)(slot / KV_KEY_BLOCK) * kv_width * KV_KEY_BLOCK + slot % KV_KEY_BLOCK;
    for (int i = 0; i < kv_width; i++) kt[(size_t)i * KV_KEY_BLOCK] = c->k[t * ks + i];
    memcpy(c->kv.v[il] + (size_t)slot * kv_width, c->v + t * ks, (size_t)kv_width * sizeof(float));
}

/* x += residual_scale * post_norm(o + bias) for position t, o the sublayer's output in c->tmp
 * (bias, post_norm NULL: none) */
static void add_sublayer_output(ts_context *c, int t, const float *bias, const float *post_norm) {
    const model_geometry *g = &c->m->g;
    const int H = g->hidden;
    float *o = c->tmp + (long)t * H, *x = c->x + (long)t * H;
    if (bias) for (int i = 0; i < H; i++) o[i] += bias[i];
    if (post_norm) rmsnorm(o, o, post_norm, H, g->norm_eps);
    if (g->residual_scale != 1.0f) for (int i = 0; i < H; i++) x[i] += g->residual_scale * o[i];
    else for (int i = 0; i < H; i++) x[i] += o[i];
}

/* x += post_attn_norm(attention output); xn = ffn_norm(x) */
static void attention_residual(ts_context *c, const layer_geometry *ly, int il, int t) {
    add_sublayer_output(c, t, ly->bo, ly->post_attn_norm);
    sublayer_input(c, ly->ffn_norm, t);
}

/* x += post_ffn_norm(FFN output) */
static void ffn_residual(ts_context *c, const layer_geometry *ly, int il, int t) {
    add_sublayer_output(c, t, NULL, ly->post_ffn_norm);
}

/* y[t] += b for n rows of width w (b NULL: nothing) */
static void add_bias(float *y, const float *b, int n, long w) {
    if (!b) return;
    for (int t = 0; t < n; t++)
        for (long i = 0; i < w; i++) y[t * w + i] += b[i];
}

/* ---- one layer ---- */

static void layer_forward(ts_context *c, int il, int n) {
    const model_geometry *g = &c->m->g;
    const layer_geometry *ly = &g->layers[il];
    const int H = g->hidden, hd = ly->head_dim;
    const int q_width = ly->n_heads * hd, kv_width = ly->n_kv_heads * hd;
    const long qs = q_width, ks = kv_width;   /* strides of c->q, c->k, c->v for this layer */

    for_each_position(c, ly, il, n, attention_input);
    bool own_kv = ly->kv_source == il;
    {   /* Q, K and V read the same input: one quantization, one pass of the pool */
        const weight *w3[3] = { &ly->wq, own_kv ? &ly->wk : NULL, own_kv && !ly->v_from_k ? &ly->wv : NULL };
        float *y3[3] = { c->q, c->k, c->v };
        const long s3[3] = { qs, ks, ks };
        matmul_multi(&c->mm, 3, w3, c->xn, H, n, y3, s3);
        add_bias(c->q, ly->bq, n, qs);
        if (own_kv) { add_bias(c->k, ly->bk, n, ks); add_bias(c->v, ly->bv, n, ks); }
        if (own_kv && ly->v_from_k) memcpy(c->v, c->k, (size_t)n * kv_width * sizeof(float));
    }
    for_each_position(c, ly, il, n, rope_and_cache);
    attention_job aj = { c, ly, attention_kernels_for(matmul_kernels_level(c->mm.ks)), ly->kv_source, n, c->pos, qs };
    thread_pool_run(c->pool, attention_task, &aj);

    matmul(&c->mm, &ly->wo, c->att, qs, n, c->tmp, H);
    for_each_position(c, ly, il, n, attention_residual);

    /* the MLP, the experts, or both (Gemma 4: each output normed, then summed) into c->tmp */
    const bool dense = ly->w_gate.data != NULL;
    if (dense) {
        const long F = ly->ffn_dim;
        const weight *w2[2] = { &ly->w_gate, &ly->w_up };
        float *y2[2] = { c->gate, c->up };
        const long s2[2] = { F, F };
        matmul_multi(&c->mm, 2, w2, c->xn, H, n, y2, s2);
        gate_job gj = { c->gate, c->up, (long)n * F, ly->activation };
        if (n > 1) thread_pool_run(c->pool, gate_task, &gj);   /* elementwise: any split gives the same bits */
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
    for_each_position(c, ly, il, n, ffn_residual);

    if (g->ple_dim > 0) {     /* per-layer embedding input */
        const int P = g->ple_dim;
        matmul(&c->mm, &ly->ple_gate, c->x, H, n, c->ple_tmp, P);
        for (int t = 0; t < n; t++) {
            float *gt = c->ple_tmp + (long)t * P;
            const float *pli = c->pli + ((long)t * g->n_layers + il) * P;
            for (int i = 0; i < P; i++) gt[i] = gelu_tanh(gt[i]) * pli[i];
        }
        matmul(&c->mm, &ly->ple_proj, c->ple_tmp, P, n, c->tmp, H);
        for (int t = 0; t < n; t++) add_sublayer_output(c, t, NULL, ly->ple_post_norm);
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

int forward_chunk(ts_context *c, const int32_t *tokens, int n, float *logits, bool all_rows,
                  ts_error *err) {
    const model_geometry *g = &c->m->g;
    const int H = g->hidden;
    if (n <= 0 || n > FORWARD_MAX_BATCH) return ts_fail(err, "internal: batch of %d positions", n);
    const type_traits *et = type_get(g->tok_embd.type);
    for (int t = 0; t < n; t++) {
        float *x = c->x + (long)t * H;
        et->dequant_row(g->tok_embd.data + (size_t)tokens[t] * g->tok_embd.row_bytes, x, H);
        if (g->embed_scale != 1.0f) for (int i = 0; i < H; i++) x[i] *= g->embed_scale;
    }
    if (g->ple_dim > 0) per_layer_inputs(c, tokens, n);
    for (int il = 0; il < g->n_layers; il++) layer_forward(c, il, n);
    c->pos += n;

    if (!logits) return 0;
    int first = all_rows ? 0 : n - 1, rows = n - first;
    for (int t = first; t < n; t++)
        rmsnorm(c->xn + (long)(t - first) * H, c->x + (long)t * H, g->output_norm, H, g->norm_eps);
    matmul(&c->mm, &g->output, c->xn, H, rows, logits, g->n_vocab);
    if (g->logit_scale != 1.0f)
        for (long i = 0; i < (long)rows * g->n_vocab; i++) logits[i] *= g->logit_scale;
    if (g->final_softcap > 0.0f) {
        float cap = g->final_softcap;
        for (long i = 0; i < (long)rows * g->n_vocab; i++) logits[i] = cap * tanhf(logits[i] / cap);
    }
    return 0;
}
