/* The attention kind's part of the builder: which layers slide, heads and head sizes (per layer,
 * per sliding/full kind), the RoPE table, shared KV, q/k norms, the projections (separate or one
 * fused [q; k; v]; Llama GGUF rows un-permuted), biases and sinks. */
#include "load/build_attention.h"
#include "load/model_arena.h"
#include "load/rope.h"
#include "core/error.h"
#include <math.h>

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

/* Whether the model has RoPE at all: as stated (HF position_embedding_type; GGUF
 * rope.scaling.finetuned where the family's converter makes it the switch, RoPE when absent as in
 * llama.cpp), else unless the container's rules for the family say none. */
static bool model_rope(const builder *b) {
    const model_hparams *hp = b->hp;
    if (hp->position_rope >= 0) return hp->position_rope == 1;
    if (b->rules->rope_switch_finetuned) return hp->rope_finetuned != 0;
    return !b->rules->nope_by_default;
}

/* Whether a layer has no RoPE: every layer of a model without it, a per-layer list, or every
 * period-th layer (stated, or the container's convention for the family). */
static bool layer_nope(const builder *b, int il) {
    const model_hparams *hp = b->hp;
    if (!model_rope(b)) return true;
    if (hp->layer_rope) return !hp->layer_rope[il];
    int p = hp->nope_period > 0 ? hp->nope_period : b->rules->nope_period;
    return p > 0 && (il + 1) % p == 0;
}

/* The RoPE table of a layer. Scaling reaches sliding layers as the family says. */
static int layer_rope(builder *b, attention_geometry *ly, bool sliding) {
    const float *rope_freqs = b->rope_freqs;
    const int64_t n_rope_freqs = b->n_rope_freqs;
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

int build_attention_layer(builder *b, int il) {
    const model_hparams *hp = b->hp;
    const arch_desc *a = b->a;
    model_geometry *g = &b->m->g;
    attention_geometry *at = &g->layers[il].attn;
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

    at->sliding = sliding;
    at->n_heads = nh;
    at->n_kv_heads = nkv;
    at->head_dim = hd;
    at->value_dim = hd;
    at->window = sliding ? b->window : 0;
    at->scale = attention_scale(b, nh, hd);
    at->softcap = hp->attn_softcap;
    at->rope_theta = sliding ? (hp->rope_theta_swa > 0 ? hp->rope_theta_swa
                                : a->default_theta_swa > 0 ? a->default_theta_swa : hp->rope_theta)
                             : hp->rope_theta;
    at->rope_dim = rdim;
    float frac = sliding ? hp->rope_fraction_swa : hp->rope_fraction;
    at->rope_pairs = frac > 0 ? (int)(frac * (double)(hd / 2) + 0.5) : rdim / 2;
    if (layer_nope(b, il)) at->rope_pairs = 0;
    /* multimodal RoPE sections (Qwen3.5): a text token has one position in every stream, so sections
     * that cover every rotating pair are plain RoPE; others would leave pairs unrotated */
    if (hp->rope_sections && at->rope_pairs > 0) {
        int covered = 0;
        for (int i = 0; i < hp->n_rope_sections; i++) covered += hp->rope_sections[i];
        if (covered != at->rope_pairs)
            return ts_fail(err, "%s: layer %d: multimodal RoPE sections cover %d of %d rotating pairs; sections that do not cover them all are not supported",
                           path, il, covered, at->rope_pairs);
    }
    if (layer_rope(b, at, sliding) != 0) return -1;
    if (hp->scaling.temp_beta > 0) {
        at->temp_beta = (float)hp->scaling.temp_beta;
        at->temp_len = hp->scaling.orig_ctx;
    }

    /* shared KV: reuse the last earlier non-shared layer of the same kind */
    int first_shared = hp->n_layers - hp->n_shared_kv;
    at->kv_source = il;
    if (il >= first_shared) {
        int src = -1;
        for (int j = first_shared - 1; j >= 0; j--)
            if (g->layers[j].kind == LAYER_ATTENTION && g->layers[j].attn.sliding == sliding) { src = j; break; }
        if (src < 0) return ts_fail(err, "%s: shared-KV layer %d has no earlier layer of its kind", path, il);
        if (g->layers[src].attn.n_kv_heads != nkv || g->layers[src].attn.head_dim != hd)
            return ts_fail(err, "%s: shared-KV layer %d does not match the geometry of layer %d", path, il, src);
        at->kv_source = src;
    }
    bool own_kv = at->kv_source == il;
    at->v_norm = a->v_norm;
    at->qk_norm_whole = a->qk_norm == QK_NORM_WHOLE;

    const int64_t q_rows = (int64_t)nh * hd, kv_rows = (int64_t)nkv * hd;
    /* gated heads: q_proj holds [query | gate] per head */
    at->out_gate = a->attn_out_gate;
    const int64_t wq_rows = at->out_gate ? 2 * q_rows : q_rows;
    /* q/k norms: the family's, or (GLM-4.5) where the file has them unless the config says none */
    if (a->qk_norm != QK_NORM_NONE && !(a->qk_norm == QK_NORM_HEAD_IF_PRESENT && hp->use_qk_norm == 0)) {
        bool whole = a->qk_norm == QK_NORM_WHOLE, required = a->qk_norm != QK_NORM_HEAD_IF_PRESENT || hp->use_qk_norm == 1;
        if (builder_vector(b, &at->q_norm, ROLE_ATTN_Q_NORM, il, whole ? q_rows : hd, true, required)) return -1;
        if (builder_vector(b, &at->k_norm, ROLE_ATTN_K_NORM, il, whole ? kv_rows : hd, true, required && own_kv)) return -1;
        if (a->qk_norm == QK_NORM_HEAD_IF_PRESENT && !at->q_norm != !at->k_norm)
            return ts_fail(err, "%s: layer %d has one of the q/k norms without the other", path, il);
    }

    /* attention projections: separate, or one fused [q; k; v] used as row views */
    weight qkv;
    if (builder_matrix(b, &qkv, ROLE_ATTN_QKV, il, q_rows + 2 * kv_rows, H, false)) return -1;
    if (qkv.data) {
        at->wq = builder_row_view(&qkv, 0, q_rows);
        at->wk = builder_row_view(&qkv, q_rows, kv_rows);
        at->wv = builder_row_view(&qkv, q_rows + kv_rows, kv_rows);
    } else {
        bool v_optional = a->k_eq_v_full && (b->rules->v_optional_any_layer || (hp->k_eq_v == 1 && !sliding));
        if (builder_matrix(b, &at->wq, ROLE_ATTN_Q, il, wq_rows, H, true)) return -1;
        if (builder_matrix(b, &at->wk, ROLE_ATTN_K, il, kv_rows, H, own_kv)) return -1;
        if (builder_matrix(b, &at->wv, ROLE_ATTN_V, il, kv_rows, H, own_kv && !v_optional)) return -1;
        if (b->rules->qk_permuted) {
            if (builder_unpermute(b, &at->wq, nh)) return -1;
            if (at->wk.data && builder_unpermute(b, &at->wk, nkv)) return -1;
        }
    }
    at->v_from_k = own_kv && !at->wv.data;
    if (builder_matrix(b, &at->wo, ROLE_ATTN_OUT, il, H, q_rows, true)) return -1;
    if (builder_vector(b, &at->bq, ROLE_ATTN_Q_BIAS, il, q_rows, false, false)) return -1;
    if (builder_vector(b, &at->bk, ROLE_ATTN_K_BIAS, il, kv_rows, false, false)) return -1;
    if (builder_vector(b, &at->bv, ROLE_ATTN_V_BIAS, il, kv_rows, false, false)) return -1;
    if (builder_vector(b, &at->bo, ROLE_ATTN_OUT_BIAS, il, H, false, false)) return -1;
    if (builder_vector(b, &at->sinks, ROLE_ATTN_SINKS, il, nh, false, false)) return -1;
    if (b->rules->qk_permuted && (at->bq || at->bk))
        return ts_fail(err, "%s: layer %d: q/k biases in permuted row order are not supported", path, il);

    return 0;
}
