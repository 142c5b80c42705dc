/* The geometry builder (see build.h). Reads the arch row's conventions and the container-neutral
 * hyper-parameters, builds each layer by its kind (build_attention.c) and its feed-forward
 * (build_ffn.c), attaches the model-wide tensors, and refuses the model when a tensor is left over. */
#include "load/build.h"
#include "load/model_arena.h"
#include "load/builder.h"
#include "load/build_attention.h"
#include "load/build_deltanet.h"
#include "load/build_shortconv.h"
#include "load/build_mamba2.h"
#include "load/build_mla.h"
#include "load/build_ffn.h"
#include "kernels/types.h"
#include "core/error.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- one layer ---- */

/* The layer kinds' parts of the builder, and their names for messages. */
static int (*const BUILD_KIND[LAYER_KIND_COUNT])(builder *b, int il) = {
    [LAYER_ATTENTION] = build_attention_layer,
    [LAYER_DELTANET] = build_deltanet_layer,
    [LAYER_SHORTCONV] = build_shortconv_layer,
    [LAYER_MAMBA2] = build_mamba2_layer,
    [LAYER_MLA] = build_mla_layer,
};
static const char *const KIND_NAME[LAYER_KIND_COUNT] = {
    [LAYER_ATTENTION] = "attention", [LAYER_DELTANET] = "gated DeltaNet",
    [LAYER_SHORTCONV] = "short convolution", [LAYER_MAMBA2] = "Mamba-2", [LAYER_MLA] = "latent attention",
};
/* The kind of each layer type a config can name. */
static const int KIND_OF_TYPE[] = {
    [LAYER_TYPE_FULL] = LAYER_ATTENTION, [LAYER_TYPE_SLIDING] = LAYER_ATTENTION, [LAYER_TYPE_LINEAR] = LAYER_DELTANET,
    [LAYER_TYPE_CONV] = LAYER_SHORTCONV, [LAYER_TYPE_MAMBA] = LAYER_MAMBA2,
};

/* A layer's kind: the type the config names for it; else, in a family with recurrent layers, its
 * recurrent kind where the file marks the layer recurrent (a per-layer list, an attention interval
 * stated or the family's, or a layer without KV heads); else attention. */
static int layer_kind_of(const builder *b, int il) {
    const model_hparams *hp = b->hp;
    const arch_desc *a = b->a;
    const int attention = a->attention_kind;   /* LAYER_ATTENTION unless the family says */
    if (hp->layer_types) {
        int kind = KIND_OF_TYPE[hp->layer_types[il]];
        return kind == LAYER_ATTENTION ? attention : kind;
    }
    if (!a->recurrent_kind) return attention;
    int interval = hp->full_attention_interval > 0 ? hp->full_attention_interval : a->full_attention_interval;
    bool recurrent = hp->layer_recurrent ? hp->layer_recurrent[il] != 0
                   : interval > 0 ? (il + 1) % interval != 0
                   : hp->layer_n_kv_heads && hp->layer_n_kv_heads[il] == 0;
    return recurrent ? a->recurrent_kind : attention;
}

/* The role's tensor is in the file and no part of the builder has taken it yet. */
static bool unconsumed(builder *b, int role, int il) {
    char name[256];
    const tensor_entry *t = builder_find(b, role, il, name, sizeof name);
    return t && !b->used[t - b->src->dir->t];
}

static int build_layer(builder *b, int il) {
    const model_hparams *hp = b->hp;
    const arch_desc *a = b->a;
    model_geometry *g = &b->m->g;
    layer_geometry *ly = &g->layers[il];
    const int64_t H = hp->hidden;

    ly->kind = layer_kind_of(b, il);
    if (ly->kind != a->attention_kind && ly->kind != a->recurrent_kind)
        return ts_fail(b->err, "%s: layer %d is a %s layer, which %s models do not have", b->src->path, il,
                       KIND_NAME[ly->kind], a->name);
    if (BUILD_KIND[ly->kind](b, il) != 0) return -1;
    ly->activation = a->activation;
    ly->output_scale = 1.0f;
    /* norms */
    bool pre = a->norms != NORMS_POST, post = a->norms != NORMS_PRE;
    if (builder_vector(b, &ly->attn_norm, ROLE_ATTN_NORM, il, H, true, pre)) return -1;
    if (builder_vector(b, &ly->ffn_norm, ROLE_FFN_NORM, il, H, true, pre)) return -1;
    if (post) {
        if (builder_vector(b, &ly->post_attn_norm, ROLE_POST_ATTN_NORM, il, H, true, true)) return -1;
        if (builder_vector(b, &ly->post_ffn_norm, ROLE_POST_FFN_NORM, il, H, true, true)) return -1;
    }

    /* a mixture of experts where the layer has a router; a dense MLP where it has one (both: Gemma 4)
     * that the experts did not take as their shared expert (Granite's HF names are the same) */
    char name[256];
    bool has_router = builder_find(b, ROLE_ROUTER, il, name, sizeof name) != NULL;
    if (has_router && build_ffn_experts(b, il) != 0) return -1;
    bool dense = !has_router || unconsumed(b, ROLE_FFN_GATE, il) || unconsumed(b, ROLE_FFN_GATE_UP, il);
    if (dense && build_ffn_dense(b, il) != 0) return -1;

    const float *scalar = NULL;
    if (builder_vector(b, &scalar, ROLE_LAYER_SCALE, il, 1, false, false)) return -1;
    if (scalar) ly->output_scale = scalar[0];
    if (g->ple_dim > 0) {
        if (builder_matrix(b, &ly->ple_gate, ROLE_PLE_GATE, il, g->ple_dim, H, true)) return -1;
        if (builder_matrix(b, &ly->ple_proj, ROLE_PLE_PROJ, il, H, g->ple_dim, true)) return -1;
        if (builder_vector(b, &ly->ple_post_norm, ROLE_PLE_POST_NORM, il, H, false, true)) return -1;
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
    /* the builder's own copy: multi-token-prediction blocks are not run, and the LongRoPE lists may
     * come from tensors */
    model_hparams hpc = *b->hp;
    hpc.n_layers -= hpc.n_nextn;
    const model_hparams *hp = b->hp = &hpc;
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
    const tensor_entry *emb = builder_find(b, ROLE_TOKEN_EMBD, 0, name, sizeof name);
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
    if (builder_matrix(b, &g->tok_embd, ROLE_TOKEN_EMBD, 0, g->n_vocab, H, true)) return -1;
    if (builder_vector(b, &g->output_norm, ROLE_OUTPUT_NORM, 0, H, true, true)) return -1;
    const tensor_entry *out = builder_find(b, ROLE_OUTPUT, 0, name, sizeof name);
    const int tie = hp->tie >= 0 ? hp->tie : b->rules->tied_by_default ? 1 : -1;
    if (tie == 0 && !out) return ts_fail(err, "%s: the model is untied but tensor '%s' is missing", path, name);
    if (out && tie == 1) {
        builder_consume(b, out);
        model_note(m, "output: tied to %s (%s ignored: the config ties the head to the embedding)", g->tok_embd.name, out->name);
    }
    if (out && tie != 1) {
        if (builder_matrix(b, &g->output, ROLE_OUTPUT, 0, g->n_vocab, H, true)) return -1;
    } else {
        g->output = g->tok_embd;
        if (!out) model_note(m, "output: tied to %s", g->tok_embd.name);
    }

    /* model-wide RoPE tensors: GGUF rope_freqs divisors, LongRoPE factor lists */
    const float *rope_freqs = NULL;
    int64_t n_rope_freqs = 0;
    const tensor_entry *rf = builder_find(b, ROLE_ROPE_FREQS, 0, name, sizeof name);
    if (rf) {
        if (rf->n_dims != 1 || rf->type != TS_F32) return ts_fail(err, "%s: tensor '%s' must be a 1-D F32 vector", path, name);
        n_rope_freqs = rf->ne[0];
        if (builder_vector(b, &rope_freqs, ROLE_ROPE_FREQS, 0, n_rope_freqs, false, true)) return -1;
    }
    const tensor_entry *fs = builder_find(b, ROLE_ROPE_FACTORS_SHORT, 0, name, sizeof name);
    const tensor_entry *fl = builder_find(b, ROLE_ROPE_FACTORS_LONG, 0, name, sizeof name);
    if (fs || fl) {
        if (!fs || !fl || fs->ne[0] != fl->ne[0] || fs->n_dims != 1 || fl->n_dims != 1)
            return ts_fail(err, "%s: LongRoPE needs rope_factors_short and rope_factors_long of one length", path);
        hpc.scaling.kind = ROPE_LONGROPE;
        hpc.scaling.n_factors = (int)fs->ne[0];
        if (builder_vector(b, &hpc.scaling.short_factor, ROLE_ROPE_FACTORS_SHORT, 0, fs->ne[0], false, true)) return -1;
        if (builder_vector(b, &hpc.scaling.long_factor, ROLE_ROPE_FACTORS_LONG, 0, fl->ne[0], false, true)) return -1;
    }
    b->rope_freqs = rope_freqs;
    b->n_rope_freqs = n_rope_freqs;
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
        if (builder_matrix(b, &g->ple_embd, ROLE_PLE_EMBD, 0, g->n_vocab, total, true)) return -1;
        if (builder_matrix(b, &g->ple_model_proj, ROLE_PLE_MODEL_PROJ, 0, total, H, true)) return -1;
        if (builder_vector(b, &g->ple_proj_norm, ROLE_PLE_PROJ_NORM, 0, P, false, true)) return -1;
        g->ple_embd_scale = sqrtf((float)P);
        g->ple_proj_scale = 1.0f / sqrtf((float)H);
        g->ple_combine_scale = 1.0f / sqrtf(2.0f);
        model_note(m, "per-layer embeddings: %d values per layer", hp->ple_dim);
    }

    g->layers = model_arena_alloc(&m->arena, (size_t)hp->n_layers * sizeof(layer_geometry));
    if (!g->layers) return ts_fail(err, "%s: out of memory", path);
    for (int il = 0; il < hp->n_layers; il++)
        if (build_layer(b, il) != 0) return -1;
    if (check_consumed(b) != 0) return -1;
    int moe_layers = 0;
    for (int il = 0; il < hp->n_layers; il++) moe_layers += g->layers[il].moe.n_experts > 0;
    if (hp->n_experts > 0 && moe_layers == 0)
        return ts_fail(err, "%s: %d experts are stated but no layer has a router tensor", path, hp->n_experts);
    if ((hp->n_shared_experts > 0 || hp->n_group > 1) && moe_layers == 0)
        return ts_fail(err, "%s: %s stated but no layer has a router tensor", path,
                       hp->n_shared_experts > 0 ? "shared experts are" : "expert groups are");
    if (moe_layers) model_note(m, "experts: %d of %d layers, %d experts, %d per token", moe_layers, hp->n_layers,
                               hp->n_experts, hp->n_experts_used);

    /* the decisions, for --info */
    if (b->rules->qk_permuted) model_note(m, "attn_q/attn_k: un-permuted from GGUF Llama order (interleaved pairs) to split-half");
    if (a->attn_scale == SCALE_QPAS && hp->attn_scale <= 0) {
        if (hp->query_pre_attn_scalar > 0) model_note(m, "attention scale: query_pre_attn_scalar^-0.5 = %g", (double)g->layers[0].attn.scale);
        else model_note(m, "attention scale: %g, %s (no query_pre_attn_scalar stated)", (double)g->layers[0].attn.scale,
                        hp->n_layers == b->rules->scale_hidden_layers ? "(hidden / heads)^-0.5" : "head_dim^-0.5");
    }
    const rope_scaling *s = &hp->scaling;
    static const char *const kinds[] = { "plain", "linear", "YaRN", "llama3", "LongRoPE" };
    if (s->kind != ROPE_PLAIN) {
        bool some_unscaled = false;
        for (int il = 0; il < hp->n_layers; il++)
            if (g->layers[il].attn.sliding && a->swa_scaling != SWA_SCALED &&
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
