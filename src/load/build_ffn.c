/* The feed-forward part of the geometry builder: a dense MLP (gate and up separate or fused) and a
 * mixture of experts (router, stacked or per-expert tensors, biases, scales, Gemma 4's norms). */
#include "load/build_ffn.h"
#include "load/model_arena.h"
#include "load/layout.h"
#include "kernels/types.h"
#include "core/error.h"
#include <string.h>

/* The dense MLP: gate and up separate, or one fused [gate; up]; the width follows the tensors. */
int build_ffn_dense(builder *b, int il) {
    layer_geometry *ly = &b->m->g.layers[il];
    const int64_t H = b->hp->hidden;
    ts_error *err = b->err;
    char name[256];
    const tensor_entry *gu = builder_find(b, ROLE_FFN_GATE_UP, il, name, sizeof name);
    if (gu) {
        if (gu->n_dims != 2 || gu->ne[1] % 2 != 0)
            return ts_fail(err, "%s: tensor '%s' must be a matrix of [gate; up] rows", b->src->path, name);
        int64_t ff = gu->ne[1] / 2;
        weight gate_up;
        if (builder_matrix(b, &gate_up, ROLE_FFN_GATE_UP, il, 2 * ff, H, true)) return -1;
        ly->w_gate = builder_row_view(&gate_up, 0, ff);
        ly->w_up = builder_row_view(&gate_up, ff, ff);
        ly->ffn_dim = (int)ff;
    } else {
        const tensor_entry *gt = builder_find(b, ROLE_FFN_GATE, il, name, sizeof name);
        int64_t ff = b->hp->ffn_dim;
        if (gt && gt->n_dims == 2 && gt->type != TS_I8) ff = gt->ne[1];   /* I8: q4nx tiles, width from the config */
        if (ff <= 0 || ff > (1 << 24)) return ts_fail(err, "%s: layer %d: invalid feed-forward width %lld", b->src->path, il, (long long)ff);
        ly->ffn_dim = (int)ff;
        if (builder_matrix(b, &ly->w_gate, ROLE_FFN_GATE, il, ff, H, true)) return -1;
        if (builder_matrix(b, &ly->w_up, ROLE_FFN_UP, il, ff, H, true)) return -1;
    }
    return builder_matrix(b, &ly->w_down, ROLE_FFN_DOWN, il, H, ly->ffn_dim, true);
}

/* n_experts matrices of rows x cols each: one stacked tensor (its experts used in place as row
 * views), or one tensor per expert. Absent: *out NULL. */
static int get_experts(builder *b, weight **out, int role, int il, int n_experts, int64_t rows, int64_t cols) {
    char name[256];
    *out = NULL;
    bool stacked = builder_find(b, role, il, name, sizeof name) != NULL;
    if (!stacked && !builder_find_expert(b, role, il, 0, name, sizeof name)) return 0;
    weight *w = model_arena_alloc(&b->m->arena, (size_t)n_experts * sizeof(weight));
    if (!w) return ts_fail(b->err, "%s: out of memory", b->src->path);
    if (stacked) {
        weight all;
        if (builder_matrix(b, &all, role, il, (int64_t)n_experts * rows, cols, true)) return -1;
        for (int e = 0; e < n_experts; e++) w[e] = builder_row_view(&all, (int64_t)e * rows, rows);
    } else {
        for (int e = 0; e < n_experts; e++)
            if (builder_matrix_expert(b, &w[e], role, il, e, rows, cols, true)) return -1;
    }
    *out = w;
    return 0;
}

/* gpt-oss folders stack their experts input-major ([E, in, out], gate and up interleaved): owned
 * row-major copies, gate and up apart (layout.h). */
static int get_experts_input_major(builder *b, moe_geometry *moe, int il, int64_t H, int64_t F) {
    char name[256];
    const int E = moe->n_experts;
    const tensor_entry *gu = builder_find(b, ROLE_EXP_GATE_UP, il, name, sizeof name);
    const tensor_entry *dn = builder_find(b, ROLE_EXP_DOWN, il, name, sizeof name);
    if (!gu || !dn) return ts_fail(b->err, "%s: layer %d: the experts' gate_up_proj and down_proj are missing", b->src->path, il);
    if (gu->n_dims != 3 || gu->ne[2] != E || gu->ne[1] != H || gu->ne[0] != 2 * F ||
        dn->n_dims != 3 || dn->ne[2] != E || dn->ne[1] != F || dn->ne[0] != H)
        return ts_fail(b->err, "%s: layer %d: expert tensors of shape [%d, %lld, %lld] and [%d, %lld, %lld] expected", b->src->path, il,
                       E, (long long)H, (long long)(2 * F), E, (long long)F, (long long)H);
    weight *w[3];
    for (int i = 0; i < 3; i++) {
        w[i] = model_arena_alloc(&b->m->arena, (size_t)E * sizeof(weight));
        if (!w[i]) return ts_fail(b->err, "%s: out of memory", b->src->path);
    }
    ts_error e2;
    if (layout_experts_from_input_major(&b->m->arena, gu, dn, E, H, F, w[0], w[1], w[2], &e2) != 0)
        return ts_fail(b->err, "%s: %s", b->src->path, e2.msg);
    builder_consume(b, gu);
    builder_consume(b, dn);
    moe->gate = w[0]; moe->up = w[1]; moe->down = w[2];
    const tensor_entry *gub = builder_find(b, ROLE_EXP_GATE_UP_BIAS, il, name, sizeof name);
    if (gub) {   /* [E, 2F] interleaved: gate columns 0::2, up 1::2 */
        const float *v;
        if (builder_vector(b, &v, ROLE_EXP_GATE_UP_BIAS, il, (int64_t)E * 2 * F, false, true)) return -1;
        float *g = model_arena_alloc(&b->m->arena, (size_t)E * F * sizeof(float));
        float *u = model_arena_alloc(&b->m->arena, (size_t)E * F * sizeof(float));
        if (!g || !u) return ts_fail(b->err, "%s: out of memory", b->src->path);
        for (int64_t i = 0; i < (int64_t)E * F; i++) { g[i] = v[2 * i]; u[i] = v[2 * i + 1]; }
        moe->gate_bias = g;
        moe->up_bias = u;
    }
    return 0;
}

/* A shared expert beside the routed ones (Qwen3.5-MoE, Granite 4.0-H): gate and up separate, or
 * one fused [gate; up] (HF Granite); its width stated or its gate's rows; its sigmoid gate, one
 * row of H, optional. */
static int build_shared_expert(builder *b, moe_geometry *moe, int il) {
    const int64_t H = b->hp->hidden;
    char name[256];
    const tensor_entry *g = builder_find(b, ROLE_SHEXP_GATE, il, name, sizeof name);
    const tensor_entry *gu = g ? NULL : builder_find(b, ROLE_SHEXP_GATE_UP, il, name, sizeof name);
    if (!g && !gu) return 0;
    int64_t fs = b->hp->shared_ffn_dim > 0 ? b->hp->shared_ffn_dim : g && g->n_dims == 2 ? g->ne[1]
               : gu && gu->n_dims == 2 ? gu->ne[1] / 2 : 0;
    if (fs <= 0 || fs > (1 << 24)) return ts_fail(b->err, "%s: layer %d: invalid shared expert width %lld", b->src->path, il, (long long)fs);
    moe->shared_ffn_dim = (int)fs;
    if (gu) {
        weight gate_up;
        if (builder_matrix(b, &gate_up, ROLE_SHEXP_GATE_UP, il, 2 * fs, H, true)) return -1;
        moe->shared_gate = builder_row_view(&gate_up, 0, fs);
        moe->shared_up = builder_row_view(&gate_up, fs, fs);
    } else {
        if (builder_matrix(b, &moe->shared_gate, ROLE_SHEXP_GATE, il, fs, H, true)) return -1;
        if (builder_matrix(b, &moe->shared_up, ROLE_SHEXP_UP, il, fs, H, true)) return -1;
    }
    if (builder_matrix(b, &moe->shared_down, ROLE_SHEXP_DOWN, il, H, fs, true)) return -1;
    return builder_matrix(b, &moe->shared_gate_inp, ROLE_SHEXP_GATE_INP, il, 1, H, false);
}

/* A layer's mixture of experts. */
int build_ffn_experts(builder *b, int il) {
    const model_hparams *hp = b->hp;
    const arch_desc *a = b->a;
    layer_geometry *ly = &b->m->g.layers[il];
    moe_geometry *moe = &ly->moe;
    const int64_t H = hp->hidden;
    const char *path = b->src->path;
    ts_error *err = b->err;
    if (hp->n_experts <= 0 || hp->n_experts_used <= 0 || hp->n_experts_used > hp->n_experts || hp->n_experts > MOE_MAX_EXPERTS)
        return ts_fail(err, "%s: layer %d has a router but the model states no valid expert counts (%d experts, %d used)",
                       path, il, hp->n_experts, hp->n_experts_used);
    const int E = hp->n_experts;
    const int64_t F = hp->expert_ffn_dim > 0 ? hp->expert_ffn_dim : hp->ffn_dim;
    if (F <= 0 || F > (1 << 24)) return ts_fail(err, "%s: invalid expert feed-forward width %lld", path, (long long)F);
    moe->n_experts = E;
    moe->n_used = hp->n_experts_used;
    moe->ffn_dim = (int)F;
    /* the gating function: the family's, or where the container's rules read it from the file
     * (llama.cpp's deepseek2 and glm4moe: expert_gating_func 1 softmax, 2 sigmoid) the stated one,
     * and when none is stated softmax if the rules say so (deepseek2) */
    moe->gating = a->gating;
    if (b->rules->gating_func_read)
        moe->gating = hp->gating_func == 1 ? GATING_SOFTMAX_TOPK : hp->gating_func == 2 ? GATING_SIGMOID_TOPK
                    : b->rules->unstated_gating_softmax ? GATING_SOFTMAX_TOPK : a->gating;
    else if (hp->gating_func > 0 && hp->gating_func != (a->gating == GATING_SIGMOID_TOPK ? 2 : 1))
        model_note(b->m, "expert_gating_func %d: ignored, as llama.cpp does for %s", hp->gating_func, a->name);
    moe->renorm = hp->gating_renorm >= 0 ? hp->gating_renorm != 0 : b->rules->gating_renorm;
    /* llama.cpp skips a scale of 0 or 1 (a 0 is read as "none") */
    moe->routed_scale = hp->routed_scale > 0 ? hp->routed_scale : 1.0f;
    moe->n_group = hp->n_group > 1 ? hp->n_group : 1;
    moe->topk_group = hp->n_group > 1 ? hp->topk_group : 1;
    moe->dropped_groups_zero = b->rules->group_fill_zero;
    if (moe->n_group > 1) {
        if (E % moe->n_group != 0)
            return ts_fail(err, "%s: %d experts cannot be split into %d groups", path, E, moe->n_group);
        if (E / moe->n_group < 2)
            return ts_fail(err, "%s: groups of %d expert score by their two best experts; groups of one are not supported", path, E / moe->n_group);
        if (moe->topk_group < 1 || moe->topk_group > moe->n_group || moe->topk_group * (E / moe->n_group) < moe->n_used)
            return ts_fail(err, "%s: %d of %d expert groups kept cannot hold the %d experts used", path, moe->topk_group, moe->n_group, moe->n_used);
    }
    moe->activation = a->expert_activation;
    if (builder_matrix(b, &moe->router, ROLE_ROUTER, il, E, H, true)) return -1;
    if (builder_vector(b, &moe->router_bias, ROLE_ROUTER_BIAS, il, E, false, false)) return -1;
    if (builder_vector(b, &moe->select_bias, ROLE_EXP_SELECT_BIAS, il, E, false, false)) return -1;
    if (builder_vector(b, &moe->router_scale, ROLE_ROUTER_SCALE, il, H, false, false)) return -1;
    if (builder_vector(b, &moe->expert_scale, ROLE_EXP_SCALE, il, E, false, false)) return -1;
    if (builder_vector(b, &moe->in_norm, ROLE_MOE_IN_NORM, il, H, true, false)) return -1;
    if (builder_vector(b, &moe->out_norm, ROLE_MOE_OUT_NORM, il, H, true, false)) return -1;
    if (builder_vector(b, &moe->dense_out_norm, ROLE_DENSE_OUT_NORM, il, H, true, false)) return -1;
    if (b->rules->experts_input_major) {
        if (get_experts_input_major(b, moe, il, H, F) != 0) return -1;
    } else {
        weight *gate_up;
        if (get_experts(b, &gate_up, ROLE_EXP_GATE_UP, il, E, 2 * F, H)) return -1;
        if (gate_up) {   /* fused [gate; up] per expert */
            moe->gate = model_arena_alloc(&b->m->arena, (size_t)E * sizeof(weight));
            moe->up = model_arena_alloc(&b->m->arena, (size_t)E * sizeof(weight));
            if (!moe->gate || !moe->up) return ts_fail(err, "%s: out of memory", path);
            for (int e = 0; e < E; e++) {
                moe->gate[e] = builder_row_view(&gate_up[e], 0, F);
                moe->up[e] = builder_row_view(&gate_up[e], F, F);
            }
        } else {
            if (get_experts(b, &moe->gate, ROLE_EXP_GATE, il, E, F, H)) return -1;
            if (get_experts(b, &moe->up, ROLE_EXP_UP, il, E, F, H)) return -1;
        }
        if (get_experts(b, &moe->down, ROLE_EXP_DOWN, il, E, H, F)) return -1;
        if (builder_vector(b, &moe->gate_bias, ROLE_EXP_GATE_BIAS, il, (int64_t)E * F, false, false)) return -1;
        if (builder_vector(b, &moe->up_bias, ROLE_EXP_UP_BIAS, il, (int64_t)E * F, false, false)) return -1;
    }
    if (!moe->gate || !moe->up || !moe->down)
        return ts_fail(err, "%s: layer %d: the experts' gate, up or down tensors are missing", path, il);
    if (builder_vector(b, &moe->down_bias, ROLE_EXP_DOWN_BIAS, il, (int64_t)E * H, false, false)) return -1;
    if (build_shared_expert(b, moe, il) != 0) return -1;
    if (hp->n_shared_experts > 0 && !moe->shared_down.data)
        return ts_fail(err, "%s: layer %d: %d shared experts are stated but their tensors are missing", path, il, hp->n_shared_experts);
    return 0;
}

