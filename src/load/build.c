/* The geometry builder (see build.h). Reads the arch row's conventions and the container-neutral
 * hyper-parameters, attaches each layer's tensors by role, and checks every shape against the
 * geometry it derived. */
#include "load/build.h"
#include "load/layout.h"
#include "load/rope.h"
#include "kernels/types.h"
#include "core/error.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct builder {
    ts_model *m;
    const arch_desc *a;
    const model_hparams *hp;
    tensor_source *src;
    const container_rules *rules;   /* how the model's container states its family */
    int window;                 /* the sliding window, with the container's default and switches applied */
    bool *used;                 /* per entry of src->dir: consumed */
    ts_error *err;
} builder;

/* The entry of a role, or NULL (name gets the container's name for messages, "" when the
 * container has no name for the role). */
static const tensor_entry *find_expert(builder *b, int role, int layer, int expert, char *name, size_t cap) {
    name[0] = 0;
    if (!b->src->name(b->src, role, layer, expert, name, cap)) return NULL;
    return tensor_dir_find(b->src->dir, name);
}

static const tensor_entry *find(builder *b, int role, int layer, char *name, size_t cap) {
    return find_expert(b, role, layer, -1, name, cap);
}

static void consume(builder *b, const tensor_entry *t) {
    b->used[t - b->src->dir->t] = true;
}

/* A matrix of rows x cols (rows < 0: any number; a stacked 3-D tensor counts its rows over the
 * outer dimension). Absent and optional: w->data = NULL. expert: the expert a per-expert name
 * holds, -1 for none. */
static int get_matrix_expert(builder *b, weight *w, int role, int layer, int expert, int64_t rows,
                             int64_t cols, bool required) {
    char name[256];
    const tensor_entry *t = find_expert(b, role, layer, expert, name, sizeof name);
    memset(w, 0, sizeof *w);
    if (!t) return required ? ts_fail(b->err, "%s: tensor '%s' is missing", b->src->path, name) : 0;
    if (b->src->matrix(b->src, t, role, rows, cols, w, b->err) != 0) return -1;
    consume(b, t);
    return 0;
}

static int get_matrix(builder *b, weight *w, int role, int layer, int64_t rows, int64_t cols, bool required) {
    return get_matrix_expert(b, w, role, layer, -1, rows, cols, required);
}

/* n floats (owned f32); norm: the container's norm convention (Gemma's 1 + w) applies. */
static int get_vector(builder *b, const float **out, int role, int layer, int64_t n, bool norm,
                      bool required) {
    char name[256];
    const tensor_entry *t = find(b, role, layer, name, sizeof name);
    *out = NULL;
    if (!t) return required ? ts_fail(b->err, "%s: tensor '%s' is missing", b->src->path, name) : 0;
    int64_t count = 1;
    for (int i = 0; i < t->n_dims; i++) count *= t->ne[i];
    if (count != n)
        return ts_fail(b->err, "%s: tensor '%s' has %lld values, expected %lld", b->src->path, name,
                       (long long)count, (long long)n);
    if (b->src->vector(b->src, t, n, norm, out, b->err) != 0) return -1;
    consume(b, t);
    return 0;
}

/* rows [first, first + n) of w, in place */
static weight row_view(const weight *w, int64_t first, int64_t n) {
    weight v = *w;
    v.rows = n;
    v.data = w->data + (size_t)first * w->row_bytes;
    return v;
}

/* Restores split-half row order of a permuted attn_q / attn_k into an owned copy. */
static int unpermute(builder *b, weight *w, int n_heads) {
    uint8_t *dst = model_arena_alloc(&b->m->arena, (size_t)w->rows * w->row_bytes);
    if (!dst) return ts_fail(b->err, "%s: out of memory", b->src->path);
    ts_error e2;
    if (layout_unpermute_qk_rows(dst, w->data, w->rows, w->row_bytes, n_heads, w->name, &e2) != 0)
        return ts_fail(b->err, "%s: %s", b->src->path, e2.msg);
    /* the copy replaces the file's rows: they need not count twice in resident memory */
    if (b->src->release) b->src->release(b->src, w->data, (size_t)w->rows * w->row_bytes);
    w->data = dst;
    return 0;
}

/* ---- layer kinds and RoPE ---- */

/* Which layers slide (attend to the last `window` positions): a per-layer list or a period p
 * (the last layer of every p is full) when the container states one; else, when there is a
 * window, the family's default period, or every layer when the family slides them all. */
static bool layer_slides(const builder *b, int il) {
    const model_hparams *hp = b->hp;
    if (hp->layer_types) return hp->layer_types[il] == LAYER_TYPE_SLIDING;
    int p = hp->sliding_period;
    if (p <= 0 && b->window > 0) p = b->rules->sliding_period;
    if (p > 0) return il % p < p - 1;
    return b->window > 0 && b->rules->window_every_layer;
}

/* Whether a layer has no RoPE: a per-layer list, or every period-th layer (stated, or the
 * container's convention for the family). */
static bool layer_nope(const builder *b, int il) {
    const model_hparams *hp = b->hp;
    if (hp->layer_rope) return !hp->layer_rope[il];
    int p = hp->nope_period > 0 ? hp->nope_period : b->rules->nope_period;
    return p > 0 && (il + 1) % p == 0;
}

/* The RoPE table of a layer. Scaling reaches sliding layers as the family says. */
static int layer_rope(builder *b, layer_geometry *ly, bool sliding, const float *rope_freqs,
                      int64_t n_rope_freqs) {
    const model_hparams *hp = b->hp;
    const rope_scaling *s = &hp->scaling;
    bool scaled = !sliding || b->a->swa_scaling == SWA_SCALED ||
                  (b->a->swa_scaling == SWA_SCALED_UNLESS_LOCAL_BASE && !(hp->rope_theta_swa > 0));
    int half = ly->rope_dim / 2;
    ly->rope_pos_scale = scaled && s->kind == ROPE_LINEAR ? (float)(1.0 / s->factor) : 1.0f;
    ly->rope_mscale = scaled && s->mscale > 0 ? (float)s->mscale : 1.0f;
    float *inv = model_arena_alloc(&b->m->arena, (size_t)(half ? half : 1) * sizeof(float));
    if (!inv) return ts_fail(b->err, "%s: out of memory", b->src->path);
    ly->rope_inv_freq = inv;
    if (ly->rope_pairs == 0) return 0;
    if (scaled && s->kind != ROPE_PLAIN && s->kind != ROPE_LINEAR) {
        if (s->kind == ROPE_LONGROPE && s->n_factors != half)
            return ts_fail(b->err, "%s: LongRoPE factor lists have %d values, the rotary dimensions need %d",
                           b->src->path, s->n_factors, half);
        rope_scaled(inv, ly->rope_pairs, ly->rope_dim, ly->rope_theta, s, false);
        if (s->kind == ROPE_LONGROPE) {
            float *inv_long = model_arena_alloc(&b->m->arena, (size_t)half * sizeof(float));
            if (!inv_long) return ts_fail(b->err, "%s: out of memory", b->src->path);
            rope_scaled(inv_long, ly->rope_pairs, ly->rope_dim, ly->rope_theta, s, true);
            ly->rope_inv_freq_long = inv_long;
        }
        return 0;
    }
    /* a rope_freqs tensor (GGUF: Llama 3's frequency bands, Gemma 4's non-rotating pairs) divides
     * the full-attention layers' frequencies */
    const float *div = NULL;
    if (rope_freqs && !sliding) {
        if (n_rope_freqs != half)
            return ts_fail(b->err, "%s: rope_freqs.weight has %lld values, a layer needs %d", b->src->path,
                           (long long)n_rope_freqs, half);
        div = rope_freqs;
        int rot = 0;
        while (rot < half && rope_freqs[rot] < 1e20f) rot++;
        if (rot < ly->rope_pairs) ly->rope_pairs = rot;     /* pairs with a 1e30 divisor do not rotate */
    }
    rope_plain(inv, ly->rope_pairs, ly->rope_dim, ly->rope_theta, div);
    return 0;
}

static float attention_scale(const builder *b, int n_heads, int head_dim) {
    const model_hparams *hp = b->hp;
    if (hp->attn_scale > 0) return hp->attn_scale;
    switch (b->a->attn_scale) {
    case SCALE_ONE: return 1.0f;
    case SCALE_QPAS:
        if (hp->query_pre_attn_scalar > 0) return (float)(1.0 / sqrt(hp->query_pre_attn_scalar));
        if (hp->n_layers == b->rules->scale_hidden_layers) return 1.0f / sqrtf((float)hp->hidden / n_heads);
        return 1.0f / sqrtf((float)head_dim);
    default: return 1.0f / sqrtf((float)head_dim);
    }
}

/* ---- feed-forward ---- */

/* The dense MLP: gate and up separate, or one fused [gate; up]; the width follows the tensors. */
static int build_dense_ffn(builder *b, int il) {
    layer_geometry *ly = &b->m->g.layers[il];
    const int64_t H = b->hp->hidden;
    ts_error *err = b->err;
    char name[256];
    const tensor_entry *gu = find(b, ROLE_FFN_GATE_UP, il, name, sizeof name);
    if (gu) {
        if (gu->n_dims != 2 || gu->ne[1] % 2 != 0)
            return ts_fail(err, "%s: tensor '%s' must be a matrix of [gate; up] rows", b->src->path, name);
        int64_t ff = gu->ne[1] / 2;
        weight gate_up;
        if (get_matrix(b, &gate_up, ROLE_FFN_GATE_UP, il, 2 * ff, H, true)) return -1;
        ly->w_gate = row_view(&gate_up, 0, ff);
        ly->w_up = row_view(&gate_up, ff, ff);
        ly->ffn_dim = (int)ff;
    } else {
        const tensor_entry *gt = find(b, ROLE_FFN_GATE, il, name, sizeof name);
        int64_t ff = b->hp->ffn_dim;
        if (gt && gt->n_dims == 2 && gt->type != TS_I8) ff = gt->ne[1];   /* I8: q4nx tiles, width from the config */
        if (ff <= 0 || ff > (1 << 24)) return ts_fail(err, "%s: layer %d: invalid feed-forward width %lld", b->src->path, il, (long long)ff);
        ly->ffn_dim = (int)ff;
        if (get_matrix(b, &ly->w_gate, ROLE_FFN_GATE, il, ff, H, true)) return -1;
        if (get_matrix(b, &ly->w_up, ROLE_FFN_UP, il, ff, H, true)) return -1;
    }
    return get_matrix(b, &ly->w_down, ROLE_FFN_DOWN, il, H, ly->ffn_dim, true);
}

/* n_experts matrices of rows x cols each: one stacked tensor (its experts used in place as row
 * views), or one tensor per expert. Absent: *out NULL. */
static int get_experts(builder *b, weight **out, int role, int il, int n_experts, int64_t rows, int64_t cols) {
    char name[256];
    *out = NULL;
    bool stacked = find(b, role, il, name, sizeof name) != NULL;
    if (!stacked && !find_expert(b, role, il, 0, name, sizeof name)) return 0;
    weight *w = model_arena_alloc(&b->m->arena, (size_t)n_experts * sizeof(weight));
    if (!w) return ts_fail(b->err, "%s: out of memory", b->src->path);
    if (stacked) {
        weight all;
        if (get_matrix(b, &all, role, il, (int64_t)n_experts * rows, cols, true)) return -1;
        for (int e = 0; e < n_experts; e++) w[e] = row_view(&all, (int64_t)e * rows, rows);
    } else {
        for (int e = 0; e < n_experts; e++)
            if (get_matrix_expert(b, &w[e], role, il, e, rows, cols, true)) return -1;
    }
    *out = w;
    return 0;
}

/* gpt-oss folders stack their experts input-major ([E, in, out], gate and up interleaved): owned
 * row-major copies, gate and up apart (layout.h). */
static int get_experts_input_major(builder *b, moe_geometry *moe, int il, int64_t H, int64_t F) {
    char name[256];
    const int E = moe->n_experts;
    const tensor_entry *gu = find(b, ROLE_EXP_GATE_UP, il, name, sizeof name);
    const tensor_entry *dn = find(b, ROLE_EXP_DOWN, il, name, sizeof name);
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
    consume(b, gu);
    consume(b, dn);
    moe->gate = w[0]; moe->up = w[1]; moe->down = w[2];
    const tensor_entry *gub = find(b, ROLE_EXP_GATE_UP_BIAS, il, name, sizeof name);
    if (gub) {   /* [E, 2F] interleaved: gate columns 0::2, up 1::2 */
        const float *v;
        if (get_vector(b, &v, ROLE_EXP_GATE_UP_BIAS, il, (int64_t)E * 2 * F, false, true)) return -1;
        float *g = model_arena_alloc(&b->m->arena, (size_t)E * F * sizeof(float));
        float *u = model_arena_alloc(&b->m->arena, (size_t)E * F * sizeof(float));
        if (!g || !u) return ts_fail(b->err, "%s: out of memory", b->src->path);
        for (int64_t i = 0; i < (int64_t)E * F; i++) { g[i] = v[2 * i]; u[i] = v[2 * i + 1]; }
        moe->gate_bias = g;
        moe->up_bias = u;
    }
    return 0;
}

/* A layer's mixture of experts. */
static int build_moe(builder *b, int il) {
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
    moe->gating = a->gating;
    moe->renorm = hp->gating_renorm >= 0 ? hp->gating_renorm != 0 : b->rules->gating_renorm;
    moe->activation = a->expert_activation;
    if (get_matrix(b, &moe->router, ROLE_ROUTER, il, E, H, true)) return -1;
    if (get_vector(b, &moe->router_bias, ROLE_ROUTER_BIAS, il, E, false, false)) return -1;
    if (get_vector(b, &moe->router_scale, ROLE_ROUTER_SCALE, il, H, false, false)) return -1;
    if (get_vector(b, &moe->expert_scale, ROLE_EXP_SCALE, il, E, false, false)) return -1;
    if (get_vector(b, &moe->in_norm, ROLE_MOE_IN_NORM, il, H, true, false)) return -1;
    if (get_vector(b, &moe->out_norm, ROLE_MOE_OUT_NORM, il, H, true, false)) return -1;
    if (get_vector(b, &moe->dense_out_norm, ROLE_DENSE_OUT_NORM, il, H, true, false)) return -1;
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
                moe->gate[e] = row_view(&gate_up[e], 0, F);
                moe->up[e] = row_view(&gate_up[e], F, F);
            }
        } else {
            if (get_experts(b, &moe->gate, ROLE_EXP_GATE, il, E, F, H)) return -1;
            if (get_experts(b, &moe->up, ROLE_EXP_UP, il, E, F, H)) return -1;
        }
        if (get_experts(b, &moe->down, ROLE_EXP_DOWN, il, E, H, F)) return -1;
        if (get_vector(b, &moe->gate_bias, ROLE_EXP_GATE_BIAS, il, (int64_t)E * F, false, false)) return -1;
        if (get_vector(b, &moe->up_bias, ROLE_EXP_UP_BIAS, il, (int64_t)E * F, false, false)) return -1;
    }
    if (!moe->gate || !moe->up || !moe->down)
        return ts_fail(err, "%s: layer %d: the experts' gate, up or down tensors are missing", path, il);
    if (get_vector(b, &moe->down_bias, ROLE_EXP_DOWN_BIAS, il, (int64_t)E * H, false, false)) return -1;
    return 0;
}

/* ---- one layer ---- */

static int build_layer(builder *b, int il, const float *rope_freqs, int64_t n_rope_freqs) {
    const model_hparams *hp = b->hp;
    const arch_desc *a = b->a;
    model_geometry *g = &b->m->g;
    layer_geometry *ly = &g->layers[il];
    const char *path = b->src->path;
    const int64_t H = hp->hidden;
    ts_error *err = b->err;

    bool sliding = layer_slides(b, il);
    if (sliding && b->window <= 0) return ts_fail(err, "%s: layer %d slides but no sliding window is given", path, il);
    /* heads: per layer or one count; full layers may have their own KV heads (Gemma 4 K = V) */
    int nh = hp->layer_n_heads ? hp->layer_n_heads[il] : hp->n_heads;
    int nkv = hp->layer_n_kv_heads ? hp->layer_n_kv_heads[il]
            : !sliding && hp->k_eq_v == 1 && hp->n_kv_heads_full > 0 ? hp->n_kv_heads_full : hp->n_kv_heads;
    if (nkv == 0) nkv = nh;
    if (nh <= 0 || nh > 4096 || nkv <= 0 || nkv > nh || nh % nkv != 0)
        return ts_fail(err, "%s: layer %d: invalid head counts (%d heads, %d KV heads)", path, il, nh, nkv);
    /* head size: sliding and full layers may each have their own */
    bool own_dims_swa = sliding && hp->head_dim_swa > 0;
    int hd = own_dims_swa ? hp->head_dim_swa : !sliding && hp->head_dim_full > 0 ? hp->head_dim_full
           : hp->head_dim > 0 ? hp->head_dim : (int)(H / nh);
    if (hd <= 0 || hd > 4096 || hd % 2 != 0)
        return ts_fail(err, "%s: layer %d: invalid head dimension %d", path, il, hd);
    int vd = own_dims_swa ? hp->value_dim_swa : hp->value_dim;
    if (vd > 0 && vd != hd)
        return ts_fail(err, "%s: layer %d: value heads of %d (keys %d): value heads of another size than the key heads are not supported", path, il, vd, hd);
    /* the RoPE span: stated, a fraction of the configured head size (HF partial_rotary_factor), or the head */
    int config_hd = hp->head_dim > 0 ? hp->head_dim : hp->n_heads > 0 ? (int)(H / hp->n_heads) : hd;
    int rdim = own_dims_swa ? (hp->rope_dim_swa > 0 ? hp->rope_dim_swa : hd)
             : hp->rope_dim > 0 ? hp->rope_dim
             : hp->rope_partial > 0 && hp->rope_partial < 1 ? (int)(config_hd * hp->rope_partial) : hd;
    if (rdim <= 0 || rdim > hd || rdim % 2 != 0)
        return ts_fail(err, "%s: layer %d: invalid rope dimension count %d", path, il, rdim);

    ly->kind = sliding ? LAYER_SLIDING : LAYER_FULL;
    ly->n_heads = nh;
    ly->n_kv_heads = nkv;
    ly->head_dim = hd;
    ly->window = sliding ? b->window : 0;
    ly->attn_scale = attention_scale(b, nh, hd);
    ly->attn_softcap = hp->attn_softcap;
    ly->rope_theta = sliding ? (hp->rope_theta_swa > 0 ? hp->rope_theta_swa
                                : a->default_theta_swa > 0 ? a->default_theta_swa : hp->rope_theta)
                             : hp->rope_theta;
    ly->rope_dim = rdim;
    float frac = sliding ? hp->rope_fraction_swa : hp->rope_fraction;
    ly->rope_pairs = frac > 0 ? (int)(frac * (double)(hd / 2) + 0.5) : rdim / 2;
    if (layer_nope(b, il)) ly->rope_pairs = 0;
    if (layer_rope(b, ly, sliding, rope_freqs, n_rope_freqs) != 0) return -1;
    if (hp->scaling.temp_beta > 0) {
        ly->attn_temp_beta = (float)hp->scaling.temp_beta;
        ly->attn_temp_len = hp->scaling.orig_ctx;
    }

    /* shared KV: reuse the last earlier non-shared layer of the same kind */
    int first_shared = hp->n_layers - hp->n_shared_kv;
    ly->kv_source = il;
    if (il >= first_shared) {
        int src = -1;
        for (int j = first_shared - 1; j >= 0; j--)
            if (g->layers[j].kind == ly->kind) { src = j; break; }
        if (src < 0) return ts_fail(err, "%s: shared-KV layer %d has no earlier layer of its kind", path, il);
        if (g->layers[src].n_kv_heads != nkv || g->layers[src].head_dim != hd)
            return ts_fail(err, "%s: shared-KV layer %d does not match the geometry of layer %d", path, il, src);
        ly->kv_source = src;
    }
    bool own_kv = ly->kv_source == il;
    ly->activation = a->activation;
    ly->output_scale = 1.0f;
    ly->v_norm = a->v_norm;
    ly->qk_norm_whole = a->qk_norm == QK_NORM_WHOLE;

    /* norms */
    bool pre = a->norms != NORMS_POST, post = a->norms != NORMS_PRE;
    if (get_vector(b, &ly->attn_norm, ROLE_ATTN_NORM, il, H, true, pre)) return -1;
    if (get_vector(b, &ly->ffn_norm, ROLE_FFN_NORM, il, H, true, pre)) return -1;
    if (post) {
        if (get_vector(b, &ly->post_attn_norm, ROLE_POST_ATTN_NORM, il, H, true, true)) return -1;
        if (get_vector(b, &ly->post_ffn_norm, ROLE_POST_FFN_NORM, il, H, true, true)) return -1;
    }
    const int64_t q_rows = (int64_t)nh * hd, kv_rows = (int64_t)nkv * hd;
    if (a->qk_norm != QK_NORM_NONE) {
        bool whole = a->qk_norm == QK_NORM_WHOLE;
        if (get_vector(b, &ly->q_norm, ROLE_ATTN_Q_NORM, il, whole ? q_rows : hd, true, true)) return -1;
        if (get_vector(b, &ly->k_norm, ROLE_ATTN_K_NORM, il, whole ? kv_rows : hd, true, own_kv)) return -1;
    }

    /* attention projections: separate, or one fused [q; k; v] used as row views */
    weight qkv;
    if (get_matrix(b, &qkv, ROLE_ATTN_QKV, il, q_rows + 2 * kv_rows, H, false)) return -1;
    if (qkv.data) {
        ly->wq = row_view(&qkv, 0, q_rows);
        ly->wk = row_view(&qkv, q_rows, kv_rows);
        ly->wv = row_view(&qkv, q_rows + kv_rows, kv_rows);
    } else {
        bool v_optional = a->k_eq_v_full && (b->rules->v_optional_any_layer || (hp->k_eq_v == 1 && !sliding));
        if (get_matrix(b, &ly->wq, ROLE_ATTN_Q, il, q_rows, H, true)) return -1;
        if (get_matrix(b, &ly->wk, ROLE_ATTN_K, il, kv_rows, H, own_kv)) return -1;
        if (get_matrix(b, &ly->wv, ROLE_ATTN_V, il, kv_rows, H, own_kv && !v_optional)) return -1;
        if (b->rules->qk_permuted) {
            if (unpermute(b, &ly->wq, nh)) return -1;
            if (ly->wk.data && unpermute(b, &ly->wk, nkv)) return -1;
        }
    }
    ly->v_from_k = own_kv && !ly->wv.data;
    if (get_matrix(b, &ly->wo, ROLE_ATTN_OUT, il, H, q_rows, true)) return -1;
    if (get_vector(b, &ly->bq, ROLE_ATTN_Q_BIAS, il, q_rows, false, false)) return -1;
    if (get_vector(b, &ly->bk, ROLE_ATTN_K_BIAS, il, kv_rows, false, false)) return -1;
    if (get_vector(b, &ly->bv, ROLE_ATTN_V_BIAS, il, kv_rows, false, false)) return -1;
    if (get_vector(b, &ly->bo, ROLE_ATTN_OUT_BIAS, il, H, false, false)) return -1;
    if (get_vector(b, &ly->attn_sinks, ROLE_ATTN_SINKS, il, nh, false, false)) return -1;
    if (b->rules->qk_permuted && (ly->bq || ly->bk))
        return ts_fail(err, "%s: layer %d: q/k biases in permuted row order are not supported", path, il);

    /* a mixture of experts where the layer has a router; a dense MLP where it has one (both: Gemma 4) */
    char name[256];
    bool has_router = find(b, ROLE_ROUTER, il, name, sizeof name) != NULL;
    if (has_router && build_moe(b, il) != 0) return -1;
    bool dense = !has_router || find(b, ROLE_FFN_GATE, il, name, sizeof name) || find(b, ROLE_FFN_GATE_UP, il, name, sizeof name);
    if (dense && build_dense_ffn(b, il) != 0) return -1;

    const float *scalar = NULL;
    if (get_vector(b, &scalar, ROLE_LAYER_SCALE, il, 1, false, false)) return -1;
    if (scalar) ly->output_scale = scalar[0];
    if (g->ple_dim > 0) {
        if (get_matrix(b, &ly->ple_gate, ROLE_PLE_GATE, il, g->ple_dim, H, true)) return -1;
        if (get_matrix(b, &ly->ple_proj, ROLE_PLE_PROJ, il, H, g->ple_dim, true)) return -1;
        if (get_vector(b, &ly->ple_post_norm, ROLE_PLE_POST_NORM, il, H, false, true)) return -1;
    }
    return 0;
}

/* ---- the model ---- */

/* Every tensor of the file is consumed, or the container says why it may stay; else one line
 * naming the tensors (and what they are for, when known) refuses the model. */
static int check_consumed(builder *b) {
    const tensor_dir *d = b->src->dir;
    char names[400] = "";
    const char *purpose = NULL;
    int n_left = 0;
    for (int i = 0; i < d->n; i++) {
        if (b->used[i]) continue;
        const char *why = b->src->ignorable ? b->src->ignorable(b->src, d->t[i].name) : NULL;
        if (why) { model_note(b->m, "%s: ignored (%s)", d->t[i].name, why); continue; }
        if (n_left < 3) {
            size_t len = strlen(names);
            snprintf(names + len, sizeof names - len, "%s'%s'", n_left ? ", " : "", d->t[i].name);
        }
        if (!purpose) purpose = arch_tensor_purpose(d->t[i].name);
        n_left++;
    }
    if (n_left == 0) return 0;
    char more[32] = "";
    if (n_left > 3) snprintf(more, sizeof more, " and %d more", n_left - 3);
    if (purpose)
        return ts_fail(b->err, "%s: tensor%s %s%s: %s are not supported (the model is refused rather than computed wrongly)",
                       b->src->path, n_left > 1 ? "s" : "", names, more, purpose);
    return ts_fail(b->err, "%s: tensor%s %s%s %s not understood by this engine (the model is refused rather than computed wrongly)",
                   b->src->path, n_left > 1 ? "s" : "", names, more, n_left > 1 ? "are" : "is");
}

static int build(builder *b) {
    const model_hparams *hp = b->hp;
    const arch_desc *a = b->a;
    ts_model *m = b->m;
    model_geometry *g = &m->g;
    const char *path = b->src->path;
    ts_error *err = b->err;

    if (hp->hidden <= 0 || hp->hidden > (1 << 20)) return ts_fail(err, "%s: invalid hidden size %d", path, hp->hidden);
    if (hp->n_layers <= 0 || hp->n_layers > HP_MAX_LAYERS) return ts_fail(err, "%s: invalid layer count %d", path, hp->n_layers);
    if (hp->n_shared_kv < 0 || hp->n_shared_kv >= hp->n_layers)
        return ts_fail(err, "%s: invalid shared-KV layer count %d", path, hp->n_shared_kv);
    if (hp->sliding_period < 0) return ts_fail(err, "%s: invalid sliding window pattern %d", path, hp->sliding_period);
    if (!(hp->norm_eps > 0) || hp->norm_eps > 1) return ts_fail(err, "%s: invalid RMSNorm epsilon %g", path, (double)hp->norm_eps);
    if (!(hp->rope_theta > 0)) return ts_fail(err, "%s: invalid RoPE base %g", path, (double)hp->rope_theta);
    if (hp->activation >= 0 && hp->activation != a->activation)
        return ts_fail(err, "%s: the stated activation (%s) is not the one this engine runs for %s (%s)", path,
                       activation_name(hp->activation), a->name, activation_name(a->activation));
    /* the sliding window: stated or the container's default; HF's use_sliding_window switches it */
    b->window = hp->window >= 0 ? hp->window : b->rules->default_window;
    if (hp->use_sliding_window == 1 && hp->max_window_layers > 0)
        return ts_fail(err, "%s: use_sliding_window with max_window_layers (sliding layers by depth) is not supported", path);
    if (hp->use_sliding_window == 0) b->window = 0;
    if (b->rules->window_ignored && b->window > 0) {
        model_note(m, "sliding window %d: ignored, as llama.cpp does for %s", b->window, a->name);
        b->window = 0;
    }
    if (b->window < 0 || b->window > (1 << 24)) return ts_fail(err, "%s: invalid sliding window %d", path, b->window);
    snprintf(g->arch, sizeof g->arch, "%s", a->name);
    g->hidden = hp->hidden;
    g->n_layers = hp->n_layers;
    g->n_ctx_train = hp->n_ctx_train > 0 && hp->n_ctx_train < (1 << 24) ? hp->n_ctx_train : 2048;
    g->norm_eps = hp->norm_eps;
    g->embed_scale = hp->embed_scale > 0 ? hp->embed_scale : a->embed_scale_sqrt ? sqrtf((float)hp->hidden) : 1.0f;
    g->residual_scale = hp->residual_scale > 0 ? hp->residual_scale : 1.0f;
    g->logit_scale = hp->logit_scale > 0 ? 1.0f / hp->logit_scale : 1.0f;
    g->final_softcap = hp->final_softcap;
    const int64_t H = hp->hidden;

    /* embedding, head, final norm */
    char name[256];
    const tensor_entry *emb = find(b, ROLE_TOKEN_EMBD, 0, name, sizeof name);
    if (!emb || emb->n_dims != 2) return ts_fail(err, "%s: tensor '%s' is missing or not 2-D", path, name);
    if (emb->ne[1] <= 0 || emb->ne[1] > (1 << 24)) return ts_fail(err, "%s: vocabulary of %lld tokens is out of range", path, (long long)emb->ne[1]);
    if (hp->n_vocab > 0 && hp->n_vocab != emb->ne[1])
        return ts_fail(err, "%s: a vocabulary of %d tokens is stated but tensor '%s' has %lld rows", path, hp->n_vocab, name,
                       (long long)emb->ne[1]);
    g->n_vocab = (int)emb->ne[1];
    if (m->has_vocab && m->voc.n > g->n_vocab)
        return ts_fail(err, "%s: the tokenizer has %d tokens, more than the model's %d", path, m->voc.n, g->n_vocab);
    if (m->has_vocab && b->src->vocab_exact && m->voc.n != g->n_vocab)
        return ts_fail(err, "%s: token_embd has %d rows but the tokenizer has %d tokens", path, g->n_vocab, m->voc.n);
    if (get_matrix(b, &g->tok_embd, ROLE_TOKEN_EMBD, 0, g->n_vocab, H, true)) return -1;
    if (get_vector(b, &g->output_norm, ROLE_OUTPUT_NORM, 0, H, true, true)) return -1;
    const tensor_entry *out = find(b, ROLE_OUTPUT, 0, name, sizeof name);
    const int tie = hp->tie >= 0 ? hp->tie : b->rules->tied_by_default ? 1 : -1;
    if (tie == 0 && !out) return ts_fail(err, "%s: the model is untied but tensor '%s' is missing", path, name);
    if (out && tie == 1) {
        consume(b, out);
        model_note(m, "output: tied to %s (%s ignored: the config ties the head to the embedding)", g->tok_embd.name, out->name);
    }
    if (out && tie != 1) {
        if (get_matrix(b, &g->output, ROLE_OUTPUT, 0, g->n_vocab, H, true)) return -1;
    } else {
        g->output = g->tok_embd;
        if (!out) model_note(m, "output: tied to %s", g->tok_embd.name);
    }

    /* model-wide RoPE tensors: GGUF rope_freqs divisors, LongRoPE factor lists */
    const float *rope_freqs = NULL;
    int64_t n_rope_freqs = 0;
    const tensor_entry *rf = find(b, ROLE_ROPE_FREQS, 0, name, sizeof name);
    if (rf) {
        if (rf->n_dims != 1 || rf->type != TS_F32) return ts_fail(err, "%s: tensor '%s' must be a 1-D F32 vector", path, name);
        n_rope_freqs = rf->ne[0];
        if (get_vector(b, &rope_freqs, ROLE_ROPE_FREQS, 0, n_rope_freqs, false, true)) return -1;
    }
    model_hparams hpc = *hp;        /* the LongRoPE lists may come from tensors */
    const tensor_entry *fs = find(b, ROLE_ROPE_FACTORS_SHORT, 0, name, sizeof name);
    const tensor_entry *fl = find(b, ROLE_ROPE_FACTORS_LONG, 0, name, sizeof name);
    if (fs || fl) {
        if (!fs || !fl || fs->ne[0] != fl->ne[0] || fs->n_dims != 1 || fl->n_dims != 1)
            return ts_fail(err, "%s: LongRoPE needs rope_factors_short and rope_factors_long of one length", path);
        hpc.scaling.kind = ROPE_LONGROPE;
        hpc.scaling.n_factors = (int)fs->ne[0];
        if (get_vector(b, &hpc.scaling.short_factor, ROLE_ROPE_FACTORS_SHORT, 0, fs->ne[0], false, true)) return -1;
        if (get_vector(b, &hpc.scaling.long_factor, ROLE_ROPE_FACTORS_LONG, 0, fl->ne[0], false, true)) return -1;
    }
    b->hp = hp = &hpc;
    if (hp->scaling.kind == ROPE_LONGROPE) {
        if (hp->scaling.orig_ctx <= 0) return ts_fail(err, "%s: LongRoPE without an original context length", path);
        for (int i = 0; i < hp->scaling.n_factors; i++)
            if (!(hp->scaling.short_factor[i] > 0) || !(hp->scaling.long_factor[i] > 0))
                return ts_fail(err, "%s: LongRoPE factors must be positive", path);
        g->rope_long_ctx = hp->scaling.orig_ctx;
        g->rope_long_round = hp->scaling.long_round > 0 ? hp->scaling.long_round : 1;
    }

    /* per-layer embeddings */
    if (hp->ple_dim < 0 || hp->ple_dim > 65536) return ts_fail(err, "%s: invalid per-layer embedding size %d", path, hp->ple_dim);
    if (hp->ple_dim > 0) {
        int64_t P = hp->ple_dim, total = P * hp->n_layers;
        g->ple_dim = hp->ple_dim;
        if (get_matrix(b, &g->ple_embd, ROLE_PLE_EMBD, 0, g->n_vocab, total, true)) return -1;
        if (get_matrix(b, &g->ple_model_proj, ROLE_PLE_MODEL_PROJ, 0, total, H, true)) return -1;
        if (get_vector(b, &g->ple_proj_norm, ROLE_PLE_PROJ_NORM, 0, P, false, true)) return -1;
        g->ple_embd_scale = sqrtf((float)P);
        g->ple_proj_scale = 1.0f / sqrtf((float)H);
        g->ple_combine_scale = 1.0f / sqrtf(2.0f);
        model_note(m, "per-layer embeddings: %d values per layer", hp->ple_dim);
    }

    g->layers = model_arena_alloc(&m->arena, (size_t)hp->n_layers * sizeof(layer_geometry));
    if (!g->layers) return ts_fail(err, "%s: out of memory", path);
    for (int il = 0; il < hp->n_layers; il++)
        if (build_layer(b, il, rope_freqs, n_rope_freqs) != 0) return -1;
    if (check_consumed(b) != 0) return -1;
    int moe_layers = 0;
    for (int il = 0; il < hp->n_layers; il++) moe_layers += g->layers[il].moe.n_experts > 0;
    if (hp->n_experts > 0 && moe_layers == 0)
        return ts_fail(err, "%s: %d experts are stated but no layer has a router tensor", path, hp->n_experts);
    if (moe_layers) model_note(m, "experts: %d of %d layers, %d experts, %d per token", moe_layers, hp->n_layers,
                               hp->n_experts, hp->n_experts_used);

    /* the decisions, for --info */
    if (b->rules->qk_permuted) model_note(m, "attn_q/attn_k: un-permuted from GGUF Llama order (interleaved pairs) to split-half");
    if (a->attn_scale == SCALE_QPAS && hp->attn_scale <= 0) {
        if (hp->query_pre_attn_scalar > 0) model_note(m, "attention scale: query_pre_attn_scalar^-0.5 = %g", (double)g->layers[0].attn_scale);
        else model_note(m, "attention scale: %g, %s (no query_pre_attn_scalar stated)", (double)g->layers[0].attn_scale,
                        hp->n_layers == b->rules->scale_hidden_layers ? "(hidden / heads)^-0.5" : "head_dim^-0.5");
    }
    const rope_scaling *s = &hp->scaling;
    static const char *const kinds[] = { "plain", "linear", "YaRN", "llama3", "LongRoPE" };
    if (s->kind != ROPE_PLAIN) {
        bool some_unscaled = false;
        for (int il = 0; il < hp->n_layers; il++)
            if (g->layers[il].kind == LAYER_SLIDING && a->swa_scaling != SWA_SCALED &&
                !(a->swa_scaling == SWA_SCALED_UNLESS_LOCAL_BASE && !(hp->rope_theta_swa > 0))) some_unscaled = true;
        model_note(m, "rope: %s scaling, factor %g, original context %d, attention factor %g, on %s", kinds[s->kind],
                   s->factor, s->orig_ctx, s->kind == ROPE_LINEAR ? 1.0 : s->mscale,
                   some_unscaled ? "full-attention layers (sliding layers use plain RoPE)" : "every layer");
    }
    return 0;
}

int build_geometry(ts_model *m, const arch_desc *a, const model_hparams *hp, tensor_source *src,
                   ts_error *err) {
    builder b = { .m = m, .a = a, .hp = hp, .src = src, .rules = src->rules, .err = err };
    b.used = calloc((size_t)(src->dir->n ? src->dir->n : 1), 1);
    if (!b.used) return ts_fail(err, "%s: out of memory", src->path);
    int rc = build(&b);
    free(b.used);
    return rc;
}
