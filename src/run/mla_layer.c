/* The latent-attention kind's run part (README-mla.md), absorbed form for prefill and decode alike:
 *   q_h  = [q_nope_h | q_pe_h]              (wq_b(rms(wq_a x)), or wq x)
 *   [c | k_pe] = wkv_a x,  c = rms(c) kv_a_norm,  q_pe_h and k_pe rotated
 *   Q_h  = [wk_b_h q_nope_h | q_pe_h]        r + d_r values: q_nope absorbed into the latent space
 *   õ_h  = softmax_j(scale Q_h . [c_j | k_pe_j]) c_j   (the attention kernels, one KV head)
 *   out  = wo [wv_b_0 õ_0 | ... | wv_b_{nh-1} õ_{nh-1}]
 * The cache holds [c | k_pe] per position as keys and c as values (its view: layer_geometry.attn),
 * so a position costs (2r + d_r) values per layer instead of nh (d_n + d_r + d_v). Rewinding it
 * is moving the position back, as for attention. */
#include "run/mla_layer.h"
#include "run/attention_layer.h"
#include "run/positions.h"
#include "run/vector_ops.h"
#include "kernels/matmul.h"
#include "kernels/attention.h"

/* RoPE on d_r values: adjacent pairs (2i, 2i + 1) (DeepSeek as stored), or split-half. */
static void rope_part(float *v, const mla_geometry *a, const float *cs, const float *sn) {
    const int half = a->rope_dim / 2;
    for (int i = 0; i < half; i++) {
        const int i0 = a->rope_adjacent ? 2 * i : i, i1 = a->rope_adjacent ? 2 * i + 1 : i + half;
        const float x = v[i0], y = v[i1];
        v[i0] = x * cs[i] - y * sn[i];
        v[i1] = x * sn[i] + y * cs[i];
    }
}

/* Position t: the latent normed, k_pe and every head's q_pe rotated (q_pe into its place in c->q),
 * then [c | k_pe] into the sequence's cache as its key and c as its value. */
static void latent_and_rope(ts_context *c, const layer_geometry *layer, int il, int t) {
    const mla_geometry *a = &layer->mla;
    const attention_geometry *at = &layer->attn;
    const int r = a->kv_lora_rank, dqk = a->nope_dim + a->rope_dim, kw = r + a->rope_dim;
    const int pos = c->pos_of[t];
    float cs[2048], sn[2048];   /* d_r / 2 <= 2048 (the builder checks d_r <= 4096) */
    attention_layer_rope_angles(c, at, pos, cs, sn);
    float *kv = c->mla.kv + (long)t * kw;
    rmsnorm(kv, kv, a->kv_a_norm, r, a->lora_norm_eps);
    rope_part(kv + r, a, cs, sn);
    for (int h = 0; h < a->n_heads; h++) {
        float *dst = c->q + ((long)t * a->n_heads + h) * kw + r;
        const float *src = c->mla.q + ((long)t * a->n_heads + h) * dqk + a->nope_dim;
        for (int i = 0; i < a->rope_dim; i++) dst[i] = src[i];
        rope_part(dst, a, cs, sn);
    }
    kv_cache *cache = &c->seq_of[t]->kv;
    const int slot = pos % cache->slots[il];
    const attention_kernels ak = attention_kernels_for(matmul_kernels_level(c->mm.ks));
    attention_store_key(&ak, cache->type_k, kv_key_block(cache, il, slot, 0), slot % KV_KEY_BLOCK, kv, kw);
    attention_store_value(&ak, cache->type_v, kv_value_row(cache, il, slot, 0), kv, r);
}

/* y_h = w_h x_h for every head h (w_h: rows [h rows_per_head, ...) of w), heads in groups of one
 * pass of the pool each (the activation scratch holds count x n rows). */
static void per_head(ts_context *c, const weight *w, int n_heads, int64_t rows_per_head, const float *x, long x_head,
                     long x_stride, int n, float *y, long y_head, long y_stride) {
    int per_call = FORWARD_MAX_BATCH / n;
    if (per_call > MATMUL_MAX_MULTI) per_call = MATMUL_MAX_MULTI;
    if (per_call < 1) per_call = 1;
    weight views[MATMUL_MAX_MULTI];
    const weight *ws[MATMUL_MAX_MULTI];
    const float *xs[MATMUL_MAX_MULTI];
    float *ys[MATMUL_MAX_MULTI];
    long st[MATMUL_MAX_MULTI];
    for (int h0 = 0; h0 < n_heads; h0 += per_call) {
        const int count = n_heads - h0 < per_call ? n_heads - h0 : per_call;
        for (int i = 0; i < count; i++) {
            const int h = h0 + i;
            views[i] = *w;
            views[i].rows = rows_per_head;
            views[i].data = w->data + (size_t)h * rows_per_head * w->row_bytes;
            ws[i] = &views[i];
            xs[i] = x + h * x_head;
            ys[i] = y + h * y_head;
            st[i] = y_stride;
        }
        matmul_each(&c->mm, count, ws, xs, x_stride, n, ys, st);
    }
}

void mla_layer_forward(ts_context *c, const layer_geometry *layer, int il, int n) {
    const model_geometry *g = &c->m->g;
    const mla_geometry *a = &layer->mla;
    const int H = g->hidden, nh = a->n_heads, r = a->kv_lora_rank, dqk = a->nope_dim + a->rope_dim;
    const int kw = r + a->rope_dim, ql = a->q_lora_rank;
    mla_scratch *s = &c->mla;

    /* the queries and the latent, which read the same input */
    if (ql > 0) {
        const weight *w2[2] = { &a->wq_a, &a->wkv_a };
        float *y2[2] = { s->qa, s->kv };
        const long st2[2] = { ql, kw };
        matmul_multi(&c->mm, 2, w2, c->xn, H, n, y2, st2);
        for (int t = 0; t < n; t++) rmsnorm(s->qa + (long)t * ql, s->qa + (long)t * ql, a->q_a_norm, ql, a->lora_norm_eps);
        matmul(&c->mm, &a->wq_b, s->qa, ql, n, s->q, (long)nh * dqk);
    } else {
        const weight *w2[2] = { &a->wq, &a->wkv_a };
        float *y2[2] = { s->q, s->kv };
        const long st2[2] = { (long)nh * dqk, kw };
        matmul_multi(&c->mm, 2, w2, c->xn, H, n, y2, st2);
    }
    positions_each(c, layer, il, n, latent_and_rope);
    /* each head's q_nope into the latent space: Q_h = [wk_b_h q_nope_h | q_pe_h] */
    per_head(c, &a->wk_b, nh, r, s->q, dqk, (long)nh * dqk, n, c->q, kw, (long)nh * kw);
    attention_layer_attend(c, &layer->attn);
    /* each head's r-wide result out of the latent space, then the output projection */
    per_head(c, &a->wv_b, nh, a->v_dim, c->att, r, (long)nh * r, n, s->o, a->v_dim, (long)nh * a->v_dim);
    matmul(&c->mm, &a->wo, s->o, (long)nh * a->v_dim, n, c->tmp, H);
}
