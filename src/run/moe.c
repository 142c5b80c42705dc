/* Mixture-of-experts feed-forward (the layer's moe_geometry): a router scores the experts per
 * token, the rule of the layer's gating picks n_used of them and weighs them, and the weighted sum
 * of the chosen experts' MLPs is the output.
 *
 * A batch is computed expert by expert: the tokens that chose an expert are gathered and go
 * through its matrices together, so each expert's rows are read once per batch, and a decoded
 * token reads only the experts it chose. The experts go through the thread pool in groups, many
 * experts' products a pass (small products in passes of their own left the threads waiting on
 * each other). Every expert output of a token is computed by the same
 * operations whichever other tokens share the batch (matmul's guarantee), and a token sums its
 * experts in the order the router ranked them, so batched and one-at-a-time evaluation agree
 * exactly. */
#include "run/moe.h"
#include "run/context.h"
#include "run/vector_ops.h"
#include "kernels/matmul.h"
#include <math.h>
#include <string.h>

/* Ranks the experts: ids[0..n_used) in descending order of score (ties: the lower id first). */
static void top_k(const float *score, int n, int k, int *ids) {
    for (int j = 0; j < k; j++) {
        int best = -1;
        for (int e = 0; e < n; e++) {
            bool taken = false;
            for (int i = 0; i < j && !taken; i++) taken = ids[i] == e;
            if (!taken && (best < 0 || score[e] > score[best])) best = e;
        }
        ids[j] = best;
    }
}

void moe_route(const moe_geometry *moe, const float *logits, int *ids, float *weights) {
    const int n_experts = moe->n_experts, n_used = moe->n_used;
    if (moe->gating == GATING_TOPK_SOFTMAX) {
        /* the k largest logits, then a softmax over those k */
        top_k(logits, n_experts, n_used, ids);
        float max = logits[ids[0]], sum = 0.0f;
        for (int j = 0; j < n_used; j++) { weights[j] = expf(logits[ids[j]] - max); sum += weights[j]; }
        for (int j = 0; j < n_used; j++) weights[j] /= sum;
        return;
    }
    /* each expert's score: a softmax over every expert, or a sigmoid of its own logit */
    float p[MOE_MAX_EXPERTS];
    if (moe->gating == GATING_SIGMOID_TOPK) {
        for (int e = 0; e < n_experts; e++) p[e] = sigmoid(logits[e]);
    } else {
        float max = logits[0], sum = 0.0f;
        for (int e = 1; e < n_experts; e++) if (logits[e] > max) max = logits[e];
        for (int e = 0; e < n_experts; e++) { p[e] = expf(logits[e] - max); sum += p[e]; }
        for (int e = 0; e < n_experts; e++) p[e] /= sum;
    }
    /* the k best by score, or (DeepSeek) by score + selection bias among the kept groups' experts;
     * the weights are the unbiased scores either way */
    const float *select = p;
    float u[MOE_MAX_EXPERTS];
    if (moe->select_bias || moe->n_group > 1) {
        for (int e = 0; e < n_experts; e++) u[e] = p[e] + (moe->select_bias ? moe->select_bias[e] : 0.0f);
        if (moe->n_group > 1) {
            const int G = moe->n_group, per = n_experts / G;
            float group_score[MOE_MAX_EXPERTS];
            int kept[MOE_MAX_EXPERTS];
            for (int g = 0; g < G; g++) {   /* a group scores by its two best experts */
                float a = -INFINITY, b = -INFINITY;
                for (int e = g * per; e < (g + 1) * per; e++) {
                    if (u[e] > a) { b = a; a = u[e]; } else if (u[e] > b) b = u[e];
                }
                group_score[g] = a + b;
            }
            top_k(group_score, G, moe->topk_group, kept);
            for (int g = 0; g < G; g++) {
                bool keep = false;
                for (int i = 0; i < moe->topk_group && !keep; i++) keep = kept[i] == g;
                if (!keep) for (int e = g * per; e < (g + 1) * per; e++) u[e] = moe->dropped_groups_zero ? 0.0f : -INFINITY;
            }
        }
        select = u;
    }
    top_k(select, n_experts, n_used, ids);
    float chosen = 0.0f;
    for (int j = 0; j < n_used; j++) { weights[j] = p[ids[j]]; chosen += weights[j]; }
    if (moe->renorm) {
        if (chosen < 6.103515625e-5f) chosen = 6.103515625e-5f;   /* as llama.cpp clamps the sum */
        for (int j = 0; j < n_used; j++) weights[j] /= chosen;
    }
    if (moe->routed_scale != 1.0f)
        for (int j = 0; j < n_used; j++) weights[j] *= moe->routed_scale;
}

/* gate[i] = act(gate[i] + gb[i]) * (up[i] + ub[i]) for one token's F values (biases may be NULL) */
static void expert_activation(float *gate, const float *up, int F, int act, const float *gb, const float *ub) {
    for (int i = 0; i < F; i++) gate[i] = glu(act, gate[i] + (gb ? gb[i] : 0.0f), up[i] + (ub ? ub[i] : 0.0f));
}

/* dst = (y + the expert's down bias) * its scale, one token's output of expert e */
static void finish_expert(const moe_geometry *moe, int e, const float *y, float *dst, int H) {
    const float *db = moe->down_bias ? moe->down_bias + (long)e * H : NULL;
    float scale = moe->expert_scale ? moe->expert_scale[e] : 1.0f;
    for (int d = 0; d < H; d++) dst[d] = (y[d] + (db ? db[d] : 0.0f)) * scale;
}

/* The experts a group's two passes of the pool compute: as many as one pass takes (their gate and
 * up: MATMUL_MAX_MULTI weights) and the scratch holds (FORWARD_MAX_BATCH rows of their tokens); the
 * shared expert, on every token, goes with the first group. A decoded token's experts and its
 * shared one are one group: two passes a layer, however many experts there are. */
typedef struct expert_group {
    int count, rows;                  /* experts; rows of the scratch they take */
    int id[MATMUL_MAX_MULTI / 2];     /* each one's expert */
    int row0[MATMUL_MAX_MULTI / 2];   /* its first row in the scratch (s->x, s->gate, s->up, s->y) */
    bool shared;                      /* the shared expert too */
} expert_group;

/* The weights of one pass and where each reads and writes. */
typedef struct pass_list {
    int count;
    const weight *w[MATMUL_MAX_MULTI];
    const float *x[MATMUL_MAX_MULTI];
    long x_stride[MATMUL_MAX_MULTI], y_stride[MATMUL_MAX_MULTI];
    int n[MATMUL_MAX_MULTI];
    float *y[MATMUL_MAX_MULTI];
} pass_list;

static void pass_add(pass_list *p, const weight *w, const float *x, long x_stride, int n, float *y, long y_stride) {
    p->w[p->count] = w; p->x[p->count] = x; p->x_stride[p->count] = x_stride;
    p->n[p->count] = n; p->y[p->count] = y; p->y_stride[p->count++] = y_stride;
}

static void pass_run(ts_context *c, const pass_list *p) {
    matmul_each_n(&c->mm, p->count, p->w, p->x, p->x_stride, p->n, p->y, p->y_stride);
}

/* One group: the gate and up of every expert on its tokens (gathered; a single token's row read
 * where it is), then every down, each token's output of an expert to its slot. */
static void experts_group(ts_context *c, const moe_geometry *moe, const float *in, int n, const expert_group *gr) {
    const int H = c->m->g.hidden, K = moe->n_used, F = moe->ffn_dim, SF = moe->shared_ffn_dim;
    moe_scratch *s = &c->moe;
    pass_list p = { 0 };
    for (int i = 0; i < gr->count; i++) {
        const int e = gr->id[i], m = s->count[e], r0 = gr->row0[i];
        const int *slots = s->slot_of + (long)e * FORWARD_MAX_BATCH;
        const float *x = in + (long)(slots[0] / K) * H;
        if (m > 1) {
            for (int t = 0; t < m; t++) memcpy(s->x + (long)(r0 + t) * H, in + (long)(slots[t] / K) * H, (size_t)H * sizeof(float));
            x = s->x + (long)r0 * H;
        }
        pass_add(&p, &moe->gate[e], x, H, m, s->gate + (long)r0 * F, F);
        pass_add(&p, &moe->up[e], x, H, m, s->up + (long)r0 * F, F);
    }
    if (gr->shared) {
        pass_add(&p, &moe->shared_gate, in, H, n, s->shared_gate, SF);
        pass_add(&p, &moe->shared_up, in, H, n, s->shared_up, SF);
        if (moe->shared_gate_inp.data) pass_add(&p, &moe->shared_gate_inp, in, H, n, s->shared_g, 1);
    }
    pass_run(c, &p);

    p.count = 0;
    for (int i = 0; i < gr->count; i++) {
        const int e = gr->id[i], m = s->count[e], r0 = gr->row0[i];
        for (int t = 0; t < m; t++)
            expert_activation(s->gate + (long)(r0 + t) * F, s->up + (long)(r0 + t) * F, F, moe->activation,
                              moe->gate_bias ? moe->gate_bias + (long)e * F : NULL,
                              moe->up_bias ? moe->up_bias + (long)e * F : NULL);
        pass_add(&p, &moe->down[e], s->gate + (long)r0 * F, F, m, s->y + (long)r0 * H, H);
    }
    if (gr->shared) {
        for (int t = 0; t < n; t++) expert_activation(s->shared_gate + (long)t * SF, s->shared_up + (long)t * SF, SF, moe->activation, NULL, NULL);
        pass_add(&p, &moe->shared_down, s->shared_gate, SF, n, s->shared_y, H);
    }
    pass_run(c, &p);

    for (int i = 0; i < gr->count; i++) {
        const int e = gr->id[i], r0 = gr->row0[i];
        const int *slots = s->slot_of + (long)e * FORWARD_MAX_BATCH;
        for (int t = 0; t < s->count[e]; t++) finish_expert(moe, e, s->y + (long)(r0 + t) * H, s->slots + (long)slots[t] * H, H);
    }
}

/* Every chosen expert (and the shared one) in groups, in expert order. */
static void experts_in_groups(ts_context *c, const moe_geometry *moe, const float *in, int n) {
    const moe_scratch *s = &c->moe;
    const int shared_weights = !moe->shared_down.data ? 0 : moe->shared_gate_inp.data ? 3 : 2;
    bool shared = shared_weights > 0;
    for (int e = 0; e < moe->n_experts || shared; shared = false) {
        expert_group gr = { .shared = shared, .rows = shared ? n : 0 };
        for (int weights = shared ? shared_weights : 0; e < moe->n_experts; e++) {
            const int m = s->count[e];
            if (m == 0) continue;
            if (weights + 2 > MATMUL_MAX_MULTI || gr.rows + m > FORWARD_MAX_BATCH) break;
            gr.id[gr.count] = e;
            gr.row0[gr.count++] = gr.rows;
            gr.rows += m;
            weights += 2;
        }
        experts_group(c, moe, in, n, &gr);
    }
}

void moe_forward(ts_context *c, const layer_geometry *ly, int il, int n, float *out) {
    const model_geometry *g = &c->m->g;
    const moe_geometry *moe = &ly->moe;
    const int H = g->hidden, E = moe->n_experts, K = moe->n_used;
    moe_scratch *s = &c->moe;

    /* inputs: the experts read the FFN input or their own norm of the residual; the router reads
     * the FFN input, or (Gemma 4) the residual's weightless norm times its scale / sqrt(hidden) */
    const float *in = c->xn, *router_in = c->xn;
    if (moe->in_norm) {
        for (int t = 0; t < n; t++) rmsnorm(s->in + (long)t * H, c->x + (long)t * H, moe->in_norm, H, g->norm_eps);
        in = s->in;
    }
    if (moe->router_scale) {
        const float k = 1.0f / sqrtf((float)H);
        for (int t = 0; t < n; t++) {
            float *r = s->router_in + (long)t * H;
            rmsnorm(r, c->x + (long)t * H, moe->router_scale, H, g->norm_eps);
            for (int i = 0; i < H; i++) r[i] *= k;
        }
        router_in = s->router_in;
    }
    matmul(&c->mm, &moe->router, router_in, H, n, s->logits, E);

    /* route every token; list the tokens of each expert */
    memset(s->count, 0, (size_t)E * sizeof *s->count);
    for (int t = 0; t < n; t++) {
        float *lg = s->logits + (long)t * E;
        if (moe->router_bias) for (int e = 0; e < E; e++) lg[e] += moe->router_bias[e];
        int *ids = s->ids + (long)t * K;
        moe_route(moe, lg, ids, s->weights + (long)t * K);
        for (int j = 0; j < K; j++) {
            int e = ids[j];
            s->slot_of[(long)e * FORWARD_MAX_BATCH + s->count[e]] = t * K + j;
            s->count[e]++;
            if (c->expert_usage) c->expert_usage[(long)il * MOE_MAX_EXPERTS + e]++;
        }
    }

    experts_in_groups(c, moe, in, n);

    /* each token: its experts' outputs, weighted, in the router's order */
    for (int t = 0; t < n; t++) {
        float *o = out + (long)t * H;
        const float *w = s->weights + (long)t * K;
        for (int d = 0; d < H; d++) o[d] = 0.0f;
        for (int j = 0; j < K; j++) {
            const float *y = s->slots + ((long)t * K + j) * H;
            for (int d = 0; d < H; d++) o[d] += w[j] * y[d];
        }
    }
    /* then the shared expert's, times sigmoid(its gate) when it has one (Qwen3.5-MoE) */
    if (moe->shared_down.data)
        for (int t = 0; t < n; t++) {
            const float gate = moe->shared_gate_inp.data ? sigmoid(s->shared_g[t]) : 1.0f;
            float *o = out + (long)t * H;
            const float *y = s->shared_y + (long)t * H;
            for (int d = 0; d < H; d++) o[d] += gate * y[d];
        }
}
