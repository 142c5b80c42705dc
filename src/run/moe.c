/* Mixture-of-experts feed-forward (the layer's moe_geometry): a router scores the experts per
 * token, the rule of the layer's gating picks n_used of them and weighs them, and the weighted sum
 * of the chosen experts' MLPs is the output.
 *
 * A batch is computed expert by expert: the tokens that chose an expert are gathered and go
 * through its matrices together, so each expert's rows are read once per batch, and a decoded
 * token reads only the experts it chose. Every expert output of a token is computed by the same
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

/* A batch expert by expert over the tokens that chose it: each expert's rows are read once. */
static void experts_grouped(ts_context *c, const moe_geometry *moe, const float *in, int n) {
    const int H = c->m->g.hidden, E = moe->n_experts, K = moe->n_used, F = moe->ffn_dim;
    moe_scratch *s = &c->moe;
    for (int e = 0; e < E; e++) {
        int m = s->count[e];
        if (m == 0) continue;
        const int *slots = s->slot_of + (long)e * FORWARD_MAX_BATCH;
        for (int i = 0; i < m; i++) memcpy(s->x + (long)i * H, in + (long)(slots[i] / K) * H, (size_t)H * sizeof(float));
        const weight *w2[2] = { &moe->gate[e], &moe->up[e] };
        float *y2[2] = { s->gate, s->up };
        const long st2[2] = { F, F };
        matmul_multi(&c->mm, 2, w2, s->x, H, m, y2, st2);
        for (int i = 0; i < m; i++)
            expert_activation(s->gate + (long)i * F, s->up + (long)i * F, F, moe->activation,
                              moe->gate_bias ? moe->gate_bias + (long)e * F : NULL,
                              moe->up_bias ? moe->up_bias + (long)e * F : NULL);
        matmul(&c->mm, &moe->down[e], s->gate, F, m, s->y, H);
        for (int i = 0; i < m; i++) finish_expert(moe, e, s->y + (long)i * H, s->slots + (long)slots[i] * H, H);
    }
}

/* out += the shared expert on every token, times sigmoid(its gate) when it has one (Qwen3.5-MoE) */
static void shared_expert(ts_context *c, const moe_geometry *moe, const float *in, int n, float *out) {
    const int H = c->m->g.hidden, F = moe->shared_ffn_dim;
    moe_scratch *s = &c->moe;
    const weight *w3[3] = { &moe->shared_gate, &moe->shared_up, moe->shared_gate_inp.data ? &moe->shared_gate_inp : NULL };
    float *y3[3] = { s->shared_gate, s->shared_up, s->shared_g };
    const long st3[3] = { F, F, 1 };
    matmul_multi(&c->mm, 3, w3, in, H, n, y3, st3);
    for (int t = 0; t < n; t++) expert_activation(s->shared_gate + (long)t * F, s->shared_up + (long)t * F, F, moe->activation, NULL, NULL);
    matmul(&c->mm, &moe->shared_down, s->shared_gate, F, n, s->shared_y, H);
    for (int t = 0; t < n; t++) {
        const float g = moe->shared_gate_inp.data ? sigmoid(s->shared_g[t]) : 1.0f;
        float *o = out + (long)t * H;
        const float *y = s->shared_y + (long)t * H;
        for (int d = 0; d < H; d++) o[d] += g * y[d];
    }
}

void moe_forward(ts_context *c, const layer_geometry *ly, int il, int n, float *out) {
    const model_geometry *g = &c->m->g;
    const moe_geometry *moe = &ly->moe;
    const int H = g->hidden, E = moe->n_experts, K = moe->n_used, F = moe->ffn_dim;
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

    if (n == 1 && 2 * K <= MATMUL_MAX_MULTI) {
        /* one token (decode): every chosen expert's gate and up in one pass of the pool, then
         * every down in another, each on its own input */
        const weight *w[MATMUL_MAX_MULTI];
        float *y[MATMUL_MAX_MULTI];
        const float *xs[MATMUL_MAX_MULTI];
        long st[MATMUL_MAX_MULTI];
        for (int j = 0; j < K; j++) {
            int e = s->ids[j];
            w[2 * j] = &moe->gate[e]; y[2 * j] = s->gate + (long)j * F; st[2 * j] = F;
            w[2 * j + 1] = &moe->up[e]; y[2 * j + 1] = s->up + (long)j * F; st[2 * j + 1] = F;
        }
        matmul_multi(&c->mm, 2 * K, w, in, H, 1, y, st);
        for (int j = 0; j < K; j++) {
            int e = s->ids[j];
            expert_activation(s->gate + (long)j * F, s->up + (long)j * F, F, moe->activation,
                              moe->gate_bias ? moe->gate_bias + (long)e * F : NULL,
                              moe->up_bias ? moe->up_bias + (long)e * F : NULL);
            w[j] = &moe->down[e]; xs[j] = s->gate + (long)j * F; y[j] = s->slots + (long)j * H; st[j] = H;
        }
        matmul_each(&c->mm, K, w, xs, F, 1, y, st);
        for (int j = 0; j < K; j++) finish_expert(moe, s->ids[j], s->slots + (long)j * H, s->slots + (long)j * H, H);
    } else {
        experts_grouped(c, moe, in, n);
    }

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
    if (moe->shared_down.data) shared_expert(c, moe, in, n, out);
}
