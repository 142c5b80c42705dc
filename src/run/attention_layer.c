/* The attention kind's run part: a layer's q/k/v projections, q/k norms and RoPE, its keys and
 * values into the KV cache (kv_cache.c), softmax attention over the cached positions it sees, and
 * the output projection. The state is the KV cache; rewinding it is moving the position back,
 * except where a sliding layer's ring has already overwritten what a rewind would need. */
#include "run/attention_layer.h"
#include "run/positions.h"
#include "run/vector_ops.h"
#include "kernels/matmul.h"
#include "kernels/attention.h"
#include <math.h>
#include <string.h>

/* The rotation of each RoPE pair at a position (computed once per position, shared by heads);
 * cos and sin carry the layer's attention factor. */
void attention_layer_rope_angles(const ts_context *c, const attention_geometry *ly, int pos, float *cs, float *sn) {
    const float *inv = c->rope_long && ly->rope_inv_freq_long ? ly->rope_inv_freq_long : ly->rope_inv_freq;
    float p = (float)pos * ly->rope_pos_scale;
    for (int i = 0; i < ly->rope_pairs; i++) {
        float angle = p * inv[i];
        cs[i] = cosf(angle) * ly->rope_mscale;
        sn[i] = sinf(angle) * ly->rope_mscale;
    }
}

/* Split-half RoPE on one head: dimension i pairs with i + rope_dim/2. */
static void rope(float *v, const attention_geometry *ly, const float *cs, const float *sn) {
    int half = ly->rope_dim / 2;
    for (int i = 0; i < ly->rope_pairs; i++) {
        float a = v[i], b = v[i + half];
        v[i] = a * cs[i] - b * sn[i];
        v[i + half] = a * sn[i] + b * cs[i];
    }
}

/* ---- attention over the cache ----
 *
 * A query's keys (the positions it sees, in order) are taken in chunks of ATTN_CHUNK. Per chunk:
 * the scores (in runs that stay within one block of the cache and do not wrap a sliding layer's
 * ring), the soft-cap, the softmax over the chunk (an attention sink, gpt-oss, is one more logit
 * in the last chunk's softmax that weighs no value), and the chunk's weighted sum of values o_c
 * with the softmax's max m_c and sum l_c. The chunks are merged in order:
 *   O = o_0, M = m_0, L = l_0;  then per chunk  M' = max(M, m_c), a = e^(M - M') L, b = e^(m_c - M') l_c,
 *   O = (a / (a + b)) O + (b / (a + b)) o_c,  L = a + b
 * (a query that sees one chunk gets o_0 itself: the plain softmax-weighted sum). Each chunk's part
 * is computed by the same code whichever task computes it, and merged in the same order, so a
 * decoded token (whose chunks are spread over the threads) and a batch (where one task takes a
 * few positions and a KV head through every chunk, the chunk's keys and values staying in cache
 * for all of them) give the same bits. */

#define ATTN_CHUNK 256    /* keys per chunk */
#define ATTN_POSITIONS 16 /* positions per task of a batch */

int attention_layer_chunks(int n_keys) { return (n_keys + ATTN_CHUNK - 1) / ATTN_CHUNK; }

/* per thread: the scores of a group's heads, each head's chunk output, max and sum (a batch merges
 * them), and a batch task's running max and sum per position and head */
size_t attention_layer_scratch(int hd, int group) {
    return (size_t)group * (ATTN_CHUNK + 1 + hd + 2) + 2 * (size_t)ATTN_POSITIONS * group;
}

/* One run's attention: its positions t0 .. t0 + n - 1 of the batch over its sequence's cache kv,
 * the first at position pos0. */
typedef struct attention_job {
    ts_context *c;
    const attention_geometry *ly;
    const kv_cache *kv;
    attention_kernels ak;
    int layer, t0, n, pos0;
    long q_stride, o_stride;  /* floats per position in c->q, in c->att */
} attention_job;

/* The keys batch position t sees: first position and count. */
static void visible_keys(const attention_job *j, int t, int *first, int *count) {
    const int p = j->pos0 + t - j->t0, w = j->ly->window;
    *first = w > 0 && p - w + 1 > 0 ? p - w + 1 : 0;
    *count = p - *first + 1;
}

/* Chunk ch of position t for the query heads h0 .. h0 + hn - 1, all of one KV head (the kernels
 * widen each cached key and value once for all of them): head h0 + g's weighted sum of values into
 * o + g * o_stride, its softmax's max and sum into m[g * ml_stride], l[g * ml_stride].
 * scores: room for hn * (ATTN_CHUNK + 1) floats. */
static void chunk_part(const attention_job *j, int t, int h0, int hn, int ch, float *scores, float *o, size_t o_stride,
                       float *m, float *l, size_t ml_stride) {
    const ts_context *c = j->c;
    const attention_geometry *ly = j->ly;
    const kv_cache *kv = j->kv;
    const int hd = ly->head_dim, vd = ly->value_dim, kvh = h0 / (ly->n_heads / ly->n_kv_heads);
    const int slots = kv->slots[j->layer];
    const size_t ss = ATTN_CHUNK + 1;   /* between the heads' scores */
    int first, count;
    visible_keys(j, t, &first, &count);
    const int k0 = ch * ATTN_CHUNK, n = count - k0 < ATTN_CHUNK ? count - k0 : ATTN_CHUNK;
    const bool last = k0 + n == count;
    const float *q = c->q + t * j->q_stride + h0 * hd;
    const attn_scores_fn scores_fn = j->ak.scores[kv->type_k];
    for (int done = 0, s = (first + k0) % slots; done < n; ) {
        int in_block = KV_KEY_BLOCK - s % KV_KEY_BLOCK, len = n - done;
        if (len > in_block) len = in_block;
        if (len > slots - s) len = slots - s;
        scores_fn(q, hn, kv_key_block(kv, j->layer, s, kvh), hd, s % KV_KEY_BLOCK, len, ly->scale, scores + done, ss);
        done += len;
        s = s + len == slots ? 0 : s + len;
    }
    const bool sink = last && ly->sinks;
    for (int g = 0; g < hn; g++) {
        float *sc = scores + g * ss;
        if (ly->softcap > 0.0f) {
            const float cap = ly->softcap;
            for (int i = 0; i < n; i++) sc[i] = cap * tanhf(sc[i] / cap);
        }
        if (sink) sc[n] = ly->sinks[h0 + g];
        l[g * ml_stride] = j->ak.softmax(sc, n + sink, &m[g * ml_stride]);
    }
    j->ak.values[kv->type_v](scores, ss, hn, n, kv_value_row(kv, j->layer, 0, kvh), kv->v_row_bytes[j->layer], slots,
                             (first + k0) % slots, vd, o, o_stride);
}

/* The merge step of a chunk after the first (see above). */
static void merge_chunk(float *M, float *L, float *O, float m, float l, const float *o, int hd) {
    const float mx = m > *M ? m : *M;
    const float a = expf(*M - mx) * *L, b = expf(m - mx) * l, sum = a + b;
    const float wa = a / sum, wb = b / sum;
    for (int i = 0; i < hd; i++) O[i] = wa * O[i] + wb * o[i];
    *M = mx;
    *L = sum;
}

/* A batch: each task takes up to ATTN_POSITIONS positions and one KV head (all of its query heads)
 * through every chunk. */
static void attention_batch_task(void *ctx, int ith, int nth) {
    const attention_job *j = ctx;
    ts_context *c = j->c;
    const attention_geometry *ly = j->ly;
    const int vd = ly->value_dim, group = ly->n_heads / ly->n_kv_heads;
    const int ranges = (j->n + ATTN_POSITIONS - 1) / ATTN_POSITIONS;
    float *scores = c->attn_scratch + (size_t)ith * c->attn_scratch_stride;
    float *o = scores + (size_t)group * (ATTN_CHUNK + 1), *m = o + (size_t)group * vd, *l = m + group;
    float *M = l + group, *L = M + ATTN_POSITIONS * group;
    long lo, hi;
    split_range((long)ranges * ly->n_kv_heads, ith, nth, &lo, &hi);
    for (long task = lo; task < hi; task++) {
        const int r = (int)(task / ly->n_kv_heads), h0 = (int)(task % ly->n_kv_heads) * group;
        const int t0 = j->t0 + r * ATTN_POSITIONS, end = j->t0 + j->n;
        const int t1 = t0 + ATTN_POSITIONS < end ? t0 + ATTN_POSITIONS : end;
        int first, count;
        visible_keys(j, t1 - 1, &first, &count);
        const int chunks = attention_layer_chunks(count);   /* the last position sees the most */
        for (int ch = 0; ch < chunks; ch++)
            for (int t = t0; t < t1; t++) {
                visible_keys(j, t, &first, &count);
                if (ch >= attention_layer_chunks(count)) continue;
                float *out = c->att + t * j->o_stride + h0 * vd, *Mt = M + (t - t0) * group, *Lt = L + (t - t0) * group;
                if (ch == 0) { chunk_part(j, t, h0, group, 0, scores, out, vd, Mt, Lt, 1); continue; }
                chunk_part(j, t, h0, group, ch, scores, o, vd, m, l, 1);
                for (int g = 0; g < group; g++) merge_chunk(&Mt[g], &Lt[g], out + g * vd, m[g], l[g], o + g * vd, vd);
            }
    }
}

/* One position (a decoded token): the tasks are (KV head, chunk, part of the group's heads), every
 * chunk's part into c->attn_part; then attention_merge_task merges each head's chunks in order.
 * The group is split into parts only when there are too few (KV head, chunk) pairs to keep every
 * thread busy; a head's bits do not depend on it. */
static void attention_chunks_task(void *ctx, int ith, int nth) {
    const attention_job *j = ctx;
    ts_context *c = j->c;
    const attention_geometry *ly = j->ly;
    const int vd = ly->value_dim, group = ly->n_heads / ly->n_kv_heads;
    int first, count;
    visible_keys(j, j->t0, &first, &count);
    const int chunks = attention_layer_chunks(count);
    int parts = 1;
    while (parts < group && (long)ly->n_kv_heads * chunks * parts < 2L * nth) parts++;
    const int per_part = (group + parts - 1) / parts;
    parts = (group + per_part - 1) / per_part;
    float *scores = c->attn_scratch + (size_t)ith * c->attn_scratch_stride;
    const size_t stride = (size_t)chunks * (vd + 2);   /* between the heads' parts in c->attn_part */
    long lo, hi;
    split_range((long)ly->n_kv_heads * chunks * parts, ith, nth, &lo, &hi);
    for (long task = lo; task < hi; task++) {
        const int kvh = (int)(task / ((long)chunks * parts)), ch = (int)(task / parts % chunks);
        const int g0 = (int)(task % parts) * per_part, hn = group - g0 < per_part ? group - g0 : per_part;
        const int h0 = kvh * group + g0;
        float *part = c->attn_part + (size_t)h0 * stride + (size_t)ch * (vd + 2);
        if (chunks == 1)   /* nothing to merge */
            chunk_part(j, j->t0, h0, hn, 0, scores, c->att + j->t0 * j->o_stride + h0 * vd, vd, &part[0], &part[1], stride);
        else chunk_part(j, j->t0, h0, hn, ch, scores, part + 2, stride, &part[0], &part[1], stride);
    }
}

static void attention_merge_task(void *ctx, int ith, int nth) {
    const attention_job *j = ctx;
    ts_context *c = j->c;
    const int vd = j->ly->value_dim;
    int first, count;
    visible_keys(j, j->t0, &first, &count);
    const int chunks = attention_layer_chunks(count);
    long lo, hi;
    split_range(j->ly->n_heads, ith, nth, &lo, &hi);
    for (long h = lo; h < hi; h++) {
        const float *part = c->attn_part + (size_t)h * chunks * (vd + 2);
        float *out = c->att + j->t0 * j->o_stride + h * vd, M = part[0], L = part[1];
        memcpy(out, part + 2, (size_t)vd * sizeof(float));
        for (int ch = 1; ch < chunks; ch++) {
            const float *p = part + (size_t)ch * (vd + 2);
            merge_chunk(&M, &L, out, p[0], p[1], p + 2, vd);
        }
    }
}

/* Run r's positions over its sequence's cache. */
static void attend(ts_context *c, const attention_geometry *ly, const batch_run *r) {
    attention_job aj = { c, ly, &r->seq->kv, attention_kernels_for(matmul_kernels_level(c->mm.ks)), ly->kv_source,
                         r->t0, r->n, r->seq->pos, (long)ly->n_heads * ly->head_dim, (long)ly->n_heads * ly->value_dim };
    if (r->n > 1) { thread_pool_run(c->pool, attention_batch_task, &aj); return; }
    int first, count;
    visible_keys(&aj, r->t0, &first, &count);
    thread_pool_run(c->pool, attention_chunks_task, &aj);
    if (attention_layer_chunks(count) > 1) thread_pool_run(c->pool, attention_merge_task, &aj);
}

void attention_layer_attend(ts_context *c, const attention_geometry *ly) {
    for (int r = 0; r < c->n_runs; r++) attend(c, ly, &c->runs[r]);
}

/* q/k norms and RoPE on position t's heads, then its K and V into the cache */
static void rope_and_cache(ts_context *c, const layer_geometry *layer, int il, int t) {
    const model_geometry *g = &c->m->g;
    const attention_geometry *ly = &layer->attn;
    const int hd = ly->head_dim, kv_width = ly->n_kv_heads * hd;
    const long qs = (long)ly->n_heads * hd, ks = kv_width;   /* strides of c->q and c->k, c->v */
    const int pos = c->pos_of[t];
    float cs[2048], sn[2048];   /* rope_pairs <= head_dim / 2 <= 2048 (the loader checks) */
    attention_layer_rope_angles(c, ly, pos, cs, sn);
    /* q/k norms per head, or over the whole projection (OLMo 2) */
    if (ly->qk_norm_whole) rmsnorm(c->q + t * qs, c->q + t * qs, ly->q_norm, (int)qs, g->norm_eps);
    /* Llama 4 attention temperature (Mistral 3): grows with the position, on q only */
    float temp = ly->temp_beta > 0.0f
               ? 1.0f + ly->temp_beta * logf(1.0f + floorf((float)pos / (float)ly->temp_len)) : 1.0f;
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
    kv_cache *kv = &c->seq_of[t]->kv;
    const int slot = pos % kv->slots[il];
    /* keys transposed within blocks of KV_KEY_BLOCK slots: [kv head][block][dim][slot in block] */
    const attention_kernels ak = attention_kernels_for(matmul_kernels_level(c->mm.ks));
    for (int h = 0; h < ly->n_kv_heads; h++) {
        attention_store_key(&ak, kv->type_k, kv_key_block(kv, il, slot, h), slot % KV_KEY_BLOCK, c->k + t * ks + h * hd, hd);
        attention_store_value(&ak, kv->type_v, kv_value_row(kv, il, slot, h), c->v + t * ks + h * hd, hd);
    }
}

/* A gated layer's projections [query | gate] per head (qg, n rows of 2 x nh x hd): the queries into
 * q (n rows of nh x hd), the gates packed the same way at the front of qg. */
static void split_gates(float *qg, float *q, int n, int nh, int hd) {
    const long w = (long)nh * hd;
    for (int t = 0; t < n; t++)
        for (int h = 0; h < nh; h++)
            memcpy(q + t * w + (long)h * hd, qg + t * 2 * w + (long)h * 2 * hd, (size_t)hd * sizeof(float));
    for (int t = 0; t < n; t++)   /* in order: a gate moves to an earlier place or stays */
        for (int h = 0; h < nh; h++)
            memmove(qg + t * w + (long)h * hd, qg + t * 2 * w + (long)h * 2 * hd + hd, (size_t)hd * sizeof(float));
}

/* y[t] += b for n rows of width w (b NULL: nothing) */
static void add_bias(float *y, const float *b, int n, long w) {
    if (!b) return;
    for (int t = 0; t < n; t++)
        for (long i = 0; i < w; i++) y[t * w + i] += b[i];
}

void attention_layer_forward(ts_context *c, const layer_geometry *layer, int il, int n) {
    const model_geometry *g = &c->m->g;
    const attention_geometry *ly = &layer->attn;
    const int H = g->hidden, hd = ly->head_dim;
    const int q_width = ly->n_heads * hd, kv_width = ly->n_kv_heads * hd;
    const long qs = q_width, ks = kv_width;   /* strides of c->q, c->k, c->v for this layer */

    bool own_kv = ly->kv_source == il;
    {   /* Q, K and V read the same input: one quantization, one pass of the pool */
        const weight *w3[3] = { &ly->wq, own_kv ? &ly->wk : NULL, own_kv && !ly->v_from_k ? &ly->wv : NULL };
        float *y3[3] = { ly->out_gate ? c->q_gate : c->q, c->k, c->v };
        const long s3[3] = { ly->out_gate ? 2 * qs : qs, ks, ks };
        matmul_multi(&c->mm, 3, w3, c->xn, H, n, y3, s3);
        if (ly->out_gate) split_gates(c->q_gate, c->q, n, ly->n_heads, hd);
        add_bias(c->q, ly->bq, n, qs);
        if (own_kv) { add_bias(c->k, ly->bk, n, ks); add_bias(c->v, ly->bv, n, ks); }
        if (own_kv && ly->v_from_k) memcpy(c->v, c->k, (size_t)n * kv_width * sizeof(float));
    }
    positions_each(c, layer, il, n, rope_and_cache);
    attention_layer_attend(c, ly);
    if (ly->out_gate)   /* each head's output times sigmoid(its gate) */
        for (long i = 0; i < (long)n * qs; i++) c->att[i] *= sigmoid(c->q_gate[i]);

    matmul(&c->mm, &ly->wo, c->att, qs, n, c->tmp, H);
    add_bias(c->tmp, ly->bo, n, H);
}

/* Continuing at pos needs a sliding layer's ring to still hold positions pos - window + 1 .. pos - 1:
 * its slot for position x was overwritten if anything at x + slots was ever written. */
int attention_layer_rewind(const ts_context *c, const sequence *s, const layer_geometry *layer, int il, int pos) {
    const attention_geometry *ly = &layer->attn;
    if (ly->window > 0 && s->kv.slots[il] < c->n_ctx && s->high_water - pos > s->kv.slots[il] - ly->window)
        return 0;
    return pos;
}
