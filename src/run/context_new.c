/* Making contexts: one sequence each, with its KV cache and the scratch the forward runs in, sized
 * from the geometry table. */
#include "run/context_new.h"
#include "run/attention_layer.h"
#include "run/layer_kind.h"
#include "run/kv_cache.h"
#include "kernels/matmul.h"
#include "core/error.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* What the caches of a context may take by default: a quarter of the physical memory (0: unknown). */
static double kv_budget_bytes(void) {
    long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
    return pages > 0 && page > 0 ? (double)pages * (double)page / 4.0 : 0.0;
}

int ts_context_new(ts_model *m, int n_ctx, int n_threads, ts_context **out, ts_error *err) {
    ts_context_options opt = { .n_ctx = n_ctx, .n_threads = n_threads };
    return context_new(m, &opt, true, out, err);
}

int ts_context_new_opts(ts_model *m, const ts_context_options *opt, ts_context **out, ts_error *err) {
    return context_new(m, opt, true, out, err);
}

static int ts_type_of_kv(int t) { return t == KV_F32 ? TS_KV_F32 : t == KV_Q8_0 ? TS_KV_Q8_0 : TS_KV_F16; }
int ts_context_cache_type_k(const ts_context *c) { return ts_type_of_kv(c->seqs[0].kv.type_k); }
int ts_context_cache_type_v(const ts_context *c) { return ts_type_of_kv(c->seqs[0].kv.type_v); }
int ts_context_n_seq(const ts_context *c) { return c->n_seq; }

/* The cache type (enum kv_type) of a requested ts_kv_type for the keys or (values) the values, checked
 * against every layer's key or value size. */
static int cache_type(const ts_model *m, int requested, int model_default, bool values, int *out, ts_error *err) {
    const char *what = values ? "value" : "key";
    int t = requested != TS_KV_DEFAULT ? requested : model_default;
    if (t < TS_KV_DEFAULT || t > TS_KV_Q8_0)
        return ts_fail(err, "unknown KV cache type %d for %s (expected TS_KV_F32, TS_KV_F16 or TS_KV_Q8_0)", t, what);
    *out = kv_type_of_ts(t);
    for (int il = 0; il < m->g.n_layers; il++) {
        const attention_geometry *a = &m->g.layers[il].attn;
        const int size = values ? a->value_dim : a->head_dim;
        if (layer_has_kv_cache(&m->g.layers[il]) && !attention_kv_type_fits(*out, size))
            return ts_fail(err, "%s: a %s cache of type %s needs head sizes that are multiples of 32 (layer %d has %d); use f16 or f32",
                           m->path, what, attention_kv_type_name(*out), il, size);
    }
    return 0;
}

int context_new(ts_model *m, const ts_context_options *opt, bool sliding_rings, ts_context **out,
                ts_error *err) {
    *out = NULL;
    const model_geometry *g = &m->g;
    int n_ctx = opt ? opt->n_ctx : 0, n_threads = opt ? opt->n_threads : 0, type_k, type_v;
    int n_seq = opt && opt->n_seq > 0 ? opt->n_seq : 1;
    if (g->n_layers == 0) return ts_fail(err, "%s: the file holds no model weights (vocabulary only)", m->path);
    if (cache_type(m, opt ? opt->cache_type_k : TS_KV_DEFAULT, m->cache_type_k, false, &type_k, err) != 0 ||
        cache_type(m, opt ? opt->cache_type_v : TS_KV_DEFAULT, m->cache_type_v, true, &type_v, err) != 0)
        return -1;
    if (n_ctx <= 0) {
        /* the model's context, capped so the KV caches take at most a quarter of the memory */
        n_ctx = g->n_ctx_train;
        const double budget = kv_budget_bytes();
        size_t per_token = kv_bytes_per_token(g, type_k, type_v);
        if (budget > 0 && per_token > 0) {
            double cap = budget / (double)per_token / n_seq;
            if (cap < n_ctx) n_ctx = cap < 256 ? 256 : (int)cap;
        }
    }
    ts_context *c = calloc(1, sizeof *c);
    if (!c) return ts_fail(err, "out of memory");
    c->m = m;
    c->n_ctx = n_ctx;
    c->n_seq = n_seq;
    c->seqs = calloc((size_t)n_seq, sizeof *c->seqs);
    if (!c->seqs) { free(c); return ts_fail(err, "out of memory"); }
    if (g->rope_long_ctx > 0) {   /* LongRoPE: the long factor list for a context beyond the original one */
        long r = g->rope_long_round > 0 ? g->rope_long_round : 1;
        c->rope_long = (n_ctx + r - 1) / r * r > g->rope_long_ctx;
    }
    if (n_threads <= 0) { long nc = sysconf(_SC_NPROCESSORS_ONLN); n_threads = nc > 0 ? (int)nc : 1; }
    c->pool = thread_pool_new(n_threads);
    int max_q = 0, max_kv = 0, max_ff = 0, max_e = 0, max_k = 0, max_eff = 0, max_heads = 0, max_hd = 0, max_group = 0;
    int max_shared = 0, max_dc = 0, max_dv = 0, max_dh = 0, max_sc = 0, max_mp = 0, max_mc = 0, max_mi = 0;
    int max_mla_qa = 0, max_mla_q = 0, max_mla_kv = 0, max_mla_o = 0, max_mla_in = 0;
    bool gated = false;
    size_t *state_floats = calloc((size_t)g->n_layers, sizeof *state_floats);
    for (int il = 0; il < g->n_layers; il++) {
        const layer_geometry *ly = &g->layers[il];
        state_floats[il] = layer_kind_ops(ly->kind)->state_floats(ly);
        if (ly->ffn_dim > max_ff) max_ff = ly->ffn_dim;
        if (ly->moe.n_experts > max_e) max_e = ly->moe.n_experts;
        if (ly->moe.n_used > max_k) max_k = ly->moe.n_used;
        if (ly->moe.ffn_dim > max_eff) max_eff = ly->moe.ffn_dim;
        if (ly->moe.shared_ffn_dim > max_shared) max_shared = ly->moe.shared_ffn_dim;
        if (ly->kind == LAYER_DELTANET) {
            const deltanet_geometry *d = &ly->delta;
            if (d->conv_channels > max_dc) max_dc = d->conv_channels;
            if (d->n_v_heads * d->head_v > max_dv) max_dv = d->n_v_heads * d->head_v;
            if (d->n_v_heads > max_dh) max_dh = d->n_v_heads;
        }
        if (ly->kind == LAYER_SHORTCONV && ly->conv.channels > max_sc) max_sc = ly->conv.channels;
        if (ly->kind == LAYER_MAMBA2) {
            const mamba2_geometry *mb = &ly->mamba;
            int inner = mb->n_heads * mb->head_dim;
            if (inner + mb->conv_channels + mb->n_heads > max_mp) max_mp = inner + mb->conv_channels + mb->n_heads;
            if (mb->conv_channels > max_mc) max_mc = mb->conv_channels;
            if (inner > max_mi) max_mi = inner;
        }
        if (ly->kind == LAYER_MLA) {
            const mla_geometry *a = &ly->mla;
            const int q = a->n_heads * (a->nope_dim + a->rope_dim), o = a->n_heads * a->v_dim;
            if (a->q_lora_rank > max_mla_qa) max_mla_qa = a->q_lora_rank;
            if (q > max_mla_q) max_mla_q = q;
            if (a->kv_lora_rank + a->rope_dim > max_mla_kv) max_mla_kv = a->kv_lora_rank + a->rope_dim;
            if (o > max_mla_o) max_mla_o = o;
            const int ins[4] = { a->q_lora_rank, a->nope_dim, a->kv_lora_rank, o };
            for (int i = 0; i < 4; i++) if (ins[i] > max_mla_in) max_mla_in = ins[i];
        }
        if (!layer_has_kv_cache(ly)) continue;
        gated |= ly->attn.out_gate;
        if (ly->attn.n_heads * ly->attn.head_dim > max_q) max_q = ly->attn.n_heads * ly->attn.head_dim;
        if (ly->attn.n_kv_heads * ly->attn.head_dim > max_kv) max_kv = ly->attn.n_kv_heads * ly->attn.head_dim;
        if (ly->attn.n_heads > max_heads) max_heads = ly->attn.n_heads;
        if (ly->attn.head_dim > max_hd) max_hd = ly->attn.head_dim;
        if (ly->attn.n_heads / ly->attn.n_kv_heads > max_group) max_group = ly->attn.n_heads / ly->attn.n_kv_heads;
    }
    size_t B = FORWARD_MAX_BATCH;
    c->x = calloc(B * g->hidden, sizeof(float));
    c->xn = calloc(B * g->hidden, sizeof(float));
    c->tmp = calloc(B * g->hidden, sizeof(float));
    c->q = calloc(B * max_q, sizeof(float));
    c->att = calloc(B * max_q, sizeof(float));
    c->k = calloc(B * max_kv, sizeof(float));
    c->v = calloc(B * max_kv, sizeof(float));
    c->gate = calloc(B * max_ff, sizeof(float));
    c->up = calloc(B * max_ff, sizeof(float));
    c->attn_scratch_stride = attention_layer_scratch(max_hd, max_group);
    c->attn_scratch = calloc((size_t)thread_pool_size(c->pool) * c->attn_scratch_stride, sizeof(float));
    c->attn_part = calloc((size_t)max_heads * attention_layer_chunks(n_ctx) * (max_hd + 2), sizeof(float));
    /* quantized activations for the widest matmul input */
    int64_t max_in = g->output.cols > max_ff ? g->output.cols : max_ff;
    if (max_q > max_in) max_in = max_q;
    if (g->ple_dim > max_in) max_in = g->ple_dim;
    if (max_eff > max_in) max_in = max_eff;
    if (max_shared > max_in) max_in = max_shared;
    if (max_dv > max_in) max_in = max_dv;
    if (max_mi > max_in) max_in = max_mi;
    if (max_mla_in > max_in) max_in = max_mla_in;
    c->mm = (matmul_ctx){ c->pool, matmul_kernels(m->simd), NULL, matmul_scratch_bytes(FORWARD_MAX_BATCH, max_in), &c->weight_bytes };
    c->mm.act = malloc(c->mm.act_bytes);
    bool ple_ok = true;
    if (g->ple_dim > 0) {
        size_t w = (size_t)g->ple_dim * g->n_layers;
        c->pli = calloc(B * w, sizeof(float));
        c->ple_tmp = calloc(B * g->ple_dim, sizeof(float));
        c->ple_row = calloc(w, sizeof(float));
        ple_ok = c->pli && c->ple_tmp && c->ple_row;
    }
    bool kinds_ok = state_floats != NULL, kv_ok = true;
    for (int i = 0; i < n_seq && kinds_ok && kv_ok; i++) {
        kinds_ok = recurrent_state_init(&c->seqs[i].rs, g->n_layers, state_floats) == 0;
        kv_ok = kv_cache_init(&c->seqs[i].kv, g, n_ctx, sliding_rings ? FORWARD_MAX_BATCH : n_ctx, type_k, type_v) == 0;
    }
    free(state_floats);
    if (gated) kinds_ok &= (c->q_gate = calloc(B * 2 * max_q, sizeof(float))) != NULL;
    if (max_dc > 0) {
        deltanet_scratch *ds = &c->delta;
        ds->qkv = calloc(B * max_dc, sizeof(float));
        ds->z = calloc(B * max_dv, sizeof(float));
        ds->y = calloc(B * max_dv, sizeof(float));
        ds->beta = calloc(B * max_dh, sizeof(float));
        ds->alpha = calloc(B * max_dh, sizeof(float));
        kinds_ok &= ds->qkv && ds->z && ds->y && ds->beta && ds->alpha;
    }
    if (max_sc > 0) kinds_ok &= (c->shortconv_in = calloc(B * 3 * max_sc, sizeof(float))) != NULL;
    if (max_mla_kv > 0) {
        mla_scratch *ml = &c->mla;
        ml->qa = calloc(B * (max_mla_qa ? max_mla_qa : 1), sizeof(float));
        ml->q = calloc(B * max_mla_q, sizeof(float));
        ml->kv = calloc(B * max_mla_kv, sizeof(float));
        ml->o = calloc(B * max_mla_o, sizeof(float));
        kinds_ok &= ml->qa && ml->q && ml->kv && ml->o;
    }
    if (max_mp > 0) {
        mamba2_scratch *mb = &c->mamba;
        mb->proj = calloc(B * max_mp, sizeof(float));
        mb->xbc = calloc(B * max_mc, sizeof(float));
        mb->y = calloc(B * max_mi, sizeof(float));
        kinds_ok &= mb->proj && mb->xbc && mb->y;
    }
    bool moe_ok = true;
    if (max_e > 0) {
        moe_scratch *ms = &c->moe;
        const size_t H = (size_t)g->hidden;
        ms->in = calloc(B * H, sizeof(float));
        ms->router_in = calloc(B * H, sizeof(float));
        ms->logits = calloc(B * max_e, sizeof(float));
        ms->weights = calloc(B * max_k, sizeof(float));
        ms->x = calloc(B * H, sizeof(float));
        ms->gate = calloc(B * max_eff, sizeof(float));
        ms->up = calloc(B * max_eff, sizeof(float));
        ms->y = calloc(B * H, sizeof(float));
        ms->slots = calloc(B * max_k * H, sizeof(float));
        ms->dense = calloc(B * H, sizeof(float));
        ms->ids = calloc(B * max_k, sizeof(int));
        ms->count = calloc((size_t)max_e, sizeof(int));
        ms->slot_of = calloc((size_t)max_e * B, sizeof(int));
        moe_ok = ms->in && ms->router_in && ms->logits && ms->weights && ms->x && ms->gate && ms->up &&
                 ms->y && ms->slots && ms->dense && ms->ids && ms->count && ms->slot_of;
        if (max_shared > 0) {
            ms->shared_gate = calloc(B * max_shared, sizeof(float));
            ms->shared_up = calloc(B * max_shared, sizeof(float));
            ms->shared_y = calloc(B * H, sizeof(float));
            ms->shared_g = calloc(B, sizeof(float));
            moe_ok &= ms->shared_gate && ms->shared_up && ms->shared_y && ms->shared_g;
        }
    }
    if (!moe_ok || !kinds_ok || !c->pool || !c->x || !c->xn || !c->tmp || !c->q || !c->att || !c->k || !c->v || !c->gate ||
        !c->up || !c->attn_scratch || !c->attn_part || !c->mm.act || !ple_ok || !kv_ok) {
        ts_context_free(c);
        return ts_fail(err, "%s: out of memory for a context of %d positions", m->path, n_ctx);
    }
    *out = c;
    return 0;
}

void ts_context_free(ts_context *c) {
    if (!c) return;
    for (int i = 0; i < c->n_seq; i++) {
        kv_cache_free(&c->seqs[i].kv);
        recurrent_state_free(&c->seqs[i].rs);
    }
    free(c->seqs);
    free(c->batch_items);
    free(c->batch_rows);
    thread_pool_free(c->pool);
    free(c->x); free(c->xn); free(c->tmp); free(c->q); free(c->att); free(c->k); free(c->v);
    free(c->gate); free(c->up); free(c->attn_scratch); free(c->attn_part); free(c->pli); free(c->ple_tmp); free(c->ple_row);
    moe_scratch *ms = &c->moe;
    free(ms->in); free(ms->router_in); free(ms->logits); free(ms->weights); free(ms->x); free(ms->gate);
    free(ms->up); free(ms->y); free(ms->slots); free(ms->dense); free(ms->ids); free(ms->count); free(ms->slot_of);
    free(ms->shared_gate); free(ms->shared_up); free(ms->shared_y); free(ms->shared_g);
    deltanet_scratch *ds = &c->delta;
    free(ds->qkv); free(ds->z); free(ds->y); free(ds->beta); free(ds->alpha);
    free(c->mamba.proj); free(c->mamba.xbc); free(c->mamba.y);
    free(c->mla.qa); free(c->mla.q); free(c->mla.kv); free(c->mla.o);
    free(c->q_gate);
    free(c->shortconv_in);
    free(c->expert_usage);
    free(c->mm.act);
    free(c);
}

int ts_default_slots(const ts_model *m, int n_ctx) {
    const model_geometry *g = &m->g;
    if (g->n_layers == 0) return 1;
    int ctx = n_ctx > 0 ? n_ctx : g->n_ctx_train > 0 ? g->n_ctx_train : 4096;
    if (ctx > 4096) ctx = 4096;
    const int type_k = kv_type_of_ts(m->cache_type_k), type_v = kv_type_of_ts(m->cache_type_v);
    double per_slot = (double)kv_bytes_per_token(g, type_k, type_v) * ctx;
    for (int il = 0; il < g->n_layers; il++) {
        const layer_geometry *ly = &g->layers[il];
        if (layer_has_kv_cache(ly) && ly->attn.kv_source == il && ly->attn.window > 0)   /* a ring */
            per_slot += (double)kv_bytes_per_token_of_layer(ly, type_k, type_v) * (ly->attn.window + FORWARD_MAX_BATCH);
        per_slot += (double)layer_kind_ops(ly->kind)->state_floats(ly) * sizeof(float) * (1 + RECURRENT_SNAPSHOTS);
    }
    const double budget = kv_budget_bytes();
    if (budget <= 0 || per_slot <= 0) return 8;
    double fit = budget / per_slot;
    return fit >= 8 ? 8 : fit >= 1 ? (int)fit : 1;
}

int context_trace_experts(ts_context *c, ts_error *err) {
    free(c->expert_usage);
    c->expert_usage = calloc((size_t)c->m->g.n_layers * MOE_MAX_EXPERTS, sizeof(int));
    return c->expert_usage ? 0 : ts_fail(err, "out of memory");
}
