/* GGUF -> hyper-parameters + a tensor source for the geometry builder. The container reader of
 * GGUF files: llama.cpp's metadata keys (every key under the architecture's prefix is either read,
 * known to change nothing llama.cpp computes, or refused by name), llama.cpp's standard tensor
 * names, and GGUF's layout conventions: Llama-family attn_q/attn_k rows are permuted (SPEC 1.1)
 * and Gemma norms are stored with their "+1" already folded in, so they are used as w. */
#include "load/model.h"
#include "load/build.h"
#include "load/rope.h"
#include "kernels/types.h"
#include "text/vocab_gguf.h"
#include "core/error.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct gguf_reader {
    ts_model *m;
    const gguf_file *g;
    const char *path;
    const arch_desc *a;
} gguf_reader;

/* ---- the architecture's metadata keys ---- */

enum key_use { KEY_READ, KEY_CHECKED, KEY_INERT, KEY_REFUSED };

/* Every key under "<arch>." that the engine knows. KEY_READ keys are read below; KEY_CHECKED ones
 * are compared with what the model says otherwise; KEY_INERT ones do not change what llama.cpp
 * computes for the supported families; KEY_REFUSED ones name a feature the engine lacks. */
static const struct { const char *suffix; int use; const char *why; } ARCH_KEYS[] = {
    { "context_length", KEY_READ, NULL }, { "embedding_length", KEY_READ, NULL },
    { "block_count", KEY_READ, NULL }, { "feed_forward_length", KEY_READ, NULL },
    { "vocab_size", KEY_CHECKED, NULL },
    { "attention.head_count", KEY_READ, NULL }, { "attention.head_count_kv", KEY_READ, NULL },
    { "attention.key_length", KEY_READ, NULL }, { "attention.value_length", KEY_CHECKED, NULL },
    { "attention.key_length_swa", KEY_READ, NULL }, { "attention.value_length_swa", KEY_CHECKED, NULL },
    { "attention.layer_norm_rms_epsilon", KEY_READ, NULL },
    { "attention.sliding_window", KEY_READ, NULL }, { "attention.sliding_window_pattern", KEY_READ, NULL },
    { "attention.shared_kv_layers", KEY_READ, NULL }, { "attention.causal", KEY_CHECKED, NULL },
    { "attention.scale", KEY_READ, NULL }, { "attention.temperature_scale", KEY_READ, NULL },
    { "attn_logit_softcapping", KEY_READ, NULL }, { "final_logit_softcapping", KEY_READ, NULL },
    { "embedding_scale", KEY_READ, NULL }, { "residual_scale", KEY_READ, NULL }, { "logit_scale", KEY_READ, NULL },
    { "embedding_length_per_layer_input", KEY_READ, NULL },
    { "rope.freq_base", KEY_READ, NULL }, { "rope.freq_base_swa", KEY_READ, NULL },
    { "rope.dimension_count", KEY_READ, NULL }, { "rope.dimension_count_swa", KEY_READ, NULL },
    { "rope.scaling.type", KEY_READ, NULL }, { "rope.scaling.factor", KEY_READ, NULL },
    { "rope.scaling.original_context_length", KEY_READ, NULL }, { "rope.scaling.attn_factor", KEY_READ, NULL },
    { "rope.scaling.yarn_beta_fast", KEY_READ, NULL }, { "rope.scaling.yarn_beta_slow", KEY_READ, NULL },
    { "rope.scaling.yarn_log_multiplier", KEY_READ, NULL },
    { "rope.scaling.yarn_attn_factor", KEY_INERT, "llama.cpp recomputes the YaRN magnitude from the factor" },
    { "rope.scaling.finetuned", KEY_INERT, "a training note" },
    { "expert_count", KEY_READ, NULL }, { "expert_used_count", KEY_READ, NULL },
    { "expert_feed_forward_length", KEY_READ, NULL }, { "expert_weights_norm", KEY_READ, NULL },
    { "expert_gating_func", KEY_READ, NULL },
    { "leading_dense_block_count", KEY_INERT, "which layers are dense follows the tensors" },
    { "expert_shared_count", KEY_REFUSED, "shared experts are not supported" },
    { "expert_weights_scale", KEY_REFUSED, "scaled expert weights are not supported" },
    { "attention.layer_norm_epsilon", KEY_REFUSED, "LayerNorm (not RMSNorm) models are not supported" },
    { "attention.clamp_kqv", KEY_REFUSED, "clamped Q/K/V are not supported" },
    { "attention.q_lora_rank", KEY_REFUSED, "multi-head latent attention is not supported" },
    { "attention.kv_lora_rank", KEY_REFUSED, "multi-head latent attention is not supported" },
    { "use_parallel_residual", KEY_REFUSED, "parallel residual blocks are not supported" },
    { "rope.dimension_sections", KEY_REFUSED, "multimodal RoPE sections are not supported" },
    { "rope.scaling.yarn_ext_factor", KEY_REFUSED, "a YaRN extrapolation factor other than 1 is not supported" },
    { "pooling_type", KEY_REFUSED, "embedding models are not supported" },
    { "tensor_data_layout", KEY_REFUSED, "a tensor layout other than the converter's is not supported" },
};

static bool key_at(const gguf_reader *R, const char *suffix, char *k, size_t cap) {
    snprintf(k, cap, "%s.%s", R->a->name, suffix);
    return gguf_has(R->g, k);
}

/* Optional integer / float keys; *out unchanged when absent. A present key of the wrong kind is
 * an error: a number the file states must be the one the engine uses. */
static int get_int(const gguf_reader *R, const char *suffix, int64_t lo, int64_t hi, int *out, ts_error *err) {
    char k[160];
    if (!key_at(R, suffix, k, sizeof k)) return 0;
    int64_t v;
    if (!gguf_get_i64(R->g, k, &v)) return ts_fail(err, "%s: metadata '%s' is not an integer", R->path, k);
    if (v < lo || v > hi) return ts_fail(err, "%s: metadata '%s' = %lld is out of range", R->path, k, (long long)v);
    *out = (int)v;
    return 0;
}

static int get_float(const gguf_reader *R, const char *suffix, float *out, ts_error *err) {
    char k[160];
    if (!key_at(R, suffix, k, sizeof k)) return 0;
    float v;
    if (!gguf_get_f32(R->g, k, &v) || !isfinite(v)) return ts_fail(err, "%s: metadata '%s' is not a finite number", R->path, k);
    *out = v;
    return 0;
}

/* A per-layer integer: one value for every layer, or an array with one per layer (owned ints). */
static int get_layer_ints(gguf_reader *R, const char *suffix, int n_layers, int *scalar, const int **per_layer,
                          ts_error *err) {
    char k[160];
    if (!key_at(R, suffix, k, sizeof k)) return 0;
    int elem; uint64_t n;
    if (!gguf_get_arr(R->g, k, &elem, &n)) return get_int(R, suffix, 0, 1 << 20, scalar, err);
    if (n != (uint64_t)n_layers)
        return ts_fail(err, "%s: metadata '%s' has %llu values for %d layers", R->path, k, (unsigned long long)n, n_layers);
    int *v = model_arena_alloc(&R->m->arena, (size_t)n_layers * sizeof(int));
    if (!v) return ts_fail(err, "%s: out of memory", R->path);
    for (int i = 0; i < n_layers; i++) {
        int64_t x;
        if (!gguf_arr_i64(R->g, k, (uint64_t)i, &x) || x < 0 || x > (1 << 20))
            return ts_fail(err, "%s: metadata '%s' is not an array of sizes", R->path, k);
        v[i] = (int)x;
    }
    *per_layer = v;
    return 0;
}

/* Every "<arch>." key is one the engine knows; the others name themselves in the refusal. */
static int check_keys(gguf_reader *R, ts_error *err) {
    size_t plen = strlen(R->a->name);
    for (uint64_t i = 0; i < gguf_n_keys(R->g); i++) {
        const char *k = gguf_key_at(R->g, i);
        if (!strcmp(k, "split.count")) {
            int64_t n;
            if (gguf_get_i64(R->g, k, &n) && n > 1)
                return ts_fail(err, "%s: split GGUF files (%lld parts) are not supported; merge them with llama-gguf-split --merge", R->path, (long long)n);
            continue;
        }
        if (strncmp(k, R->a->name, plen) != 0 || k[plen] != '.') continue;   /* general.*, tokenizer.*, ... */
        const char *suffix = k + plen + 1;
        size_t j = 0;
        while (j < sizeof ARCH_KEYS / sizeof ARCH_KEYS[0] && strcmp(ARCH_KEYS[j].suffix, suffix)) j++;
        if (j == sizeof ARCH_KEYS / sizeof ARCH_KEYS[0])
            return ts_fail(err, "%s: metadata '%s' is not understood by this engine; refusing to answer from a model it may compute wrongly", R->path, k);
        if (ARCH_KEYS[j].use == KEY_REFUSED) {
            int64_t n;   /* counts of zero (no experts, no lora rank) state the feature's absence */
            if (gguf_get_i64(R->g, k, &n) && n == 0) continue;
            return ts_fail(err, "%s: metadata '%s': %s", R->path, k, ARCH_KEYS[j].why);
        }
        if (ARCH_KEYS[j].use == KEY_INERT) model_note(R->m, "%s: ignored (%s)", k, ARCH_KEYS[j].why);
    }
    return 0;
}

/* RoPE scaling: rope.scaling.* as llama.cpp reads them (README-rope-bias.md). */
static int read_rope_scaling(gguf_reader *R, model_hparams *hp, ts_error *err) {
    rope_scaling *s = &hp->scaling;
    char k[160];
    s->mscale = 1.0;
    s->beta_fast = 32.0;
    s->beta_slow = 1.0;
    s->truncate = true;
    s->long_round = 256;     /* llama.cpp compares the context rounded up to a multiple of 256 */
    float factor = 1.0f, attn_factor = 1.0f, beta = 0.0f;
    if (get_float(R, "rope.scaling.factor", &factor, err) || get_float(R, "rope.scaling.attn_factor", &attn_factor, err)) return -1;
    if (get_int(R, "rope.scaling.original_context_length", 0, 1 << 26, &s->orig_ctx, err)) return -1;
    if (get_float(R, "attention.temperature_scale", &beta, err)) return -1;
    s->factor = factor;
    s->mscale = attn_factor;
    s->temp_beta = beta;
    if (beta != 0.0f && s->orig_ctx <= 0)
        return ts_fail(err, "%s: an attention temperature needs rope.scaling.original_context_length", R->path);
    const char *type; size_t tlen;
    if (!key_at(R, "rope.scaling.type", k, sizeof k)) return 0;
    if (!gguf_get_str(R->g, k, &type, &tlen)) return ts_fail(err, "%s: metadata '%s' is not a string", R->path, k);
    if (tlen == 4 && !memcmp(type, "none", 4)) return 0;
    if (!(factor > 0)) return ts_fail(err, "%s: rope scaling needs a positive rope.scaling.factor", R->path);
    if (tlen == 6 && !memcmp(type, "linear", 6)) { s->kind = ROPE_LINEAR; return 0; }
    if (tlen == 4 && !memcmp(type, "yarn", 4)) {
        if (s->orig_ctx <= 0) return ts_fail(err, "%s: YaRN needs rope.scaling.original_context_length", R->path);
        s->kind = ROPE_YARN;
        /* llama.cpp: cos/sin x (1 + 0.1 ln s) x attn_factor; Mistral 3 divides by the mscale of
         * yarn_log_multiplier instead, and reads the correction range */
        s->mscale = rope_yarn_get_mscale(factor, 1.0) * attn_factor;
        float bf = 32.0f, bs = 1.0f, log_mul = 0.0f;
        if (get_float(R, "rope.scaling.yarn_beta_fast", &bf, err) || get_float(R, "rope.scaling.yarn_beta_slow", &bs, err) ||
            get_float(R, "rope.scaling.yarn_log_multiplier", &log_mul, err)) return -1;
        if (R->a->gguf_yarn_betas) {
            s->beta_fast = bf;
            s->beta_slow = bs;
            if (log_mul != 0.0f) s->mscale = rope_yarn_get_mscale(factor, 1.0) / rope_yarn_get_mscale(factor, log_mul);
        } else if (bf != 32.0f || bs != 1.0f || log_mul != 0.0f) {
            model_note(R->m, "rope: yarn_beta_fast/slow and yarn_log_multiplier ignored, as llama.cpp does for %s", R->a->name);
        }
        return 0;
    }
    return ts_fail(err, "%s: metadata '%s' = '%.*s': this rope scaling is not supported", R->path, k, (int)tlen, type);
}

static int read_hparams(gguf_reader *R, model_hparams *hp, ts_error *err) {
    const arch_desc *a = R->a;
    char k[160];
    memset(hp, 0, sizeof *hp);
    hp->tie = -1;
    hp->k_eq_v = a->k_eq_v_full;
    hp->n_ctx_train = 2048;
    hp->norm_eps = 1e-5f;
    hp->rope_theta = 10000.0f;
    if (get_int(R, "embedding_length", 1, 1 << 20, &hp->hidden, err)) return -1;
    if (get_int(R, "block_count", 1, HP_MAX_LAYERS, &hp->n_layers, err)) return -1;
    if (!hp->hidden) return ts_fail(err, "%s: missing %s.embedding_length", R->path, a->name);
    if (!hp->n_layers) return ts_fail(err, "%s: missing %s.block_count", R->path, a->name);
    int ctx = 0;
    if (get_int(R, "context_length", 0, 1 << 30, &ctx, err)) return -1;
    if (ctx > 0 && ctx < (1 << 24)) hp->n_ctx_train = ctx;
    if (get_int(R, "feed_forward_length", 0, 1 << 24, &hp->ffn_dim, err)) return -1;
    if (get_float(R, "attention.layer_norm_rms_epsilon", &hp->norm_eps, err)) return -1;
    if (get_layer_ints(R, "attention.head_count", hp->n_layers, &hp->n_heads, &hp->layer_n_heads, err)) return -1;
    hp->n_kv_heads = hp->n_heads;
    if (get_layer_ints(R, "attention.head_count_kv", hp->n_layers, &hp->n_kv_heads, &hp->layer_n_kv_heads, err)) return -1;
    if (hp->n_heads <= 0 && !hp->layer_n_heads) return ts_fail(err, "%s: missing %s.attention.head_count", R->path, a->name);
    if (get_int(R, "attention.key_length", 1, 4096, &hp->head_dim, err)) return -1;
    if (get_int(R, "attention.key_length_swa", 1, 4096, &hp->head_dim_swa, err)) return -1;
    int vlen = 0, vlen_swa = 0;
    if (get_int(R, "attention.value_length", 1, 4096, &vlen, err) || get_int(R, "attention.value_length_swa", 1, 4096, &vlen_swa, err)) return -1;
    if ((vlen && vlen != (hp->head_dim ? hp->head_dim : hp->hidden / (hp->n_heads ? hp->n_heads : 1))) ||
        (vlen_swa && vlen_swa != hp->head_dim_swa))
        return ts_fail(err, "%s: value heads of another size than the key heads are not supported", R->path);
    if (get_int(R, "rope.dimension_count", 1, 4096, &hp->rope_dim, err)) return -1;
    if (get_int(R, "rope.dimension_count_swa", 1, 4096, &hp->rope_dim_swa, err)) return -1;
    if (get_float(R, "rope.freq_base", &hp->rope_theta, err)) return -1;
    hp->has_theta_swa = key_at(R, "rope.freq_base_swa", k, sizeof k);
    if (get_float(R, "rope.freq_base_swa", &hp->rope_theta_swa, err)) return -1;
    if (read_rope_scaling(R, hp, err)) return -1;
    if (!(hp->norm_eps > 0) || hp->norm_eps > 1)
        return ts_fail(err, "%s: metadata '%s.attention.layer_norm_rms_epsilon' is %g; expected a number in (0, 1]", R->path, a->name, (double)hp->norm_eps);
    if (!(hp->rope_theta > 0) || (hp->has_theta_swa && !(hp->rope_theta_swa > 0)))
        return ts_fail(err, "%s: metadata '%s.rope.freq_base%s' must be positive", R->path, a->name, hp->rope_theta > 0 ? "_swa" : "");

    /* sliding windows: a period, or one bool per layer (true = sliding) */
    hp->window = a->gguf_default_window;
    if (get_int(R, "attention.sliding_window", 0, 1 << 24, &hp->window, err)) return -1;
    if (key_at(R, "attention.sliding_window_pattern", k, sizeof k)) {
        int elem; uint64_t n;
        if (gguf_get_arr(R->g, k, &elem, &n)) {
            bool *sl = model_arena_alloc(&R->m->arena, (size_t)hp->n_layers);
            if (!sl) return ts_fail(err, "%s: out of memory", R->path);
            for (int il = 0; il < hp->n_layers; il++) {
                int64_t v;
                if (n <= (uint64_t)il || !gguf_arr_i64(R->g, k, (uint64_t)il, &v))
                    return ts_fail(err, "%s: metadata '%s' has no value for layer %d", R->path, k, il);
                sl[il] = v != 0;
            }
            hp->layer_sliding = sl;
        } else if (get_int(R, "attention.sliding_window_pattern", 1, 1 << 20, &hp->sliding_period, err)) {
            return -1;
        }
    }
    if (a->gguf_window_ignored && hp->window > 0) {
        model_note(R->m, "%s.attention.sliding_window: ignored, as llama.cpp does for %s", a->name, a->name);
        hp->window = 0;
    }
    if (a->gguf_nope_period > 0) {     /* llama.cpp's fixed NoPE layers (SmolLM3) */
        bool *nope = model_arena_alloc(&R->m->arena, (size_t)hp->n_layers);
        if (!nope) return ts_fail(err, "%s: out of memory", R->path);
        for (int il = 0; il < hp->n_layers; il++) nope[il] = (il + 1) % a->gguf_nope_period == 0;
        hp->layer_nope = nope;
    }
    if (get_int(R, "attention.shared_kv_layers", 0, HP_MAX_LAYERS, &hp->n_shared_kv, err)) return -1;
    if (get_int(R, "embedding_length_per_layer_input", 0, 65536, &hp->ple_dim, err)) return -1;
    if (get_float(R, "attention.scale", &hp->attn_scale, err)) return -1;
    if (get_float(R, "embedding_scale", &hp->embed_scale, err)) return -1;
    if (get_float(R, "residual_scale", &hp->residual_scale, err)) return -1;
    if (get_float(R, "logit_scale", &hp->logit_scale, err)) return -1;
    if (get_float(R, "attn_logit_softcapping", &hp->attn_softcap, err)) return -1;
    if (get_float(R, "final_logit_softcapping", &hp->final_softcap, err)) return -1;
    if (hp->attn_scale < 0 || hp->embed_scale < 0 || hp->residual_scale < 0 || hp->logit_scale < 0 ||
        hp->attn_softcap < 0 || hp->final_softcap < 0)
        return ts_fail(err, "%s: a negative scale or softcap in the metadata", R->path);
    bool causal = true;
    if (key_at(R, "attention.causal", k, sizeof k) && (!gguf_get_bool(R->g, k, &causal) || !causal))
        return ts_fail(err, "%s: non-causal attention (%s) is not supported", R->path, k);
    /* mixture of experts */
    if (get_int(R, "expert_count", 0, 4096, &hp->n_experts, err)) return -1;
    if (get_int(R, "expert_used_count", 0, 4096, &hp->n_experts_used, err)) return -1;
    hp->expert_ffn_dim = hp->ffn_dim;   /* Mixtral: feed_forward_length is the experts' width */
    if (get_int(R, "expert_feed_forward_length", 1, 1 << 24, &hp->expert_ffn_dim, err)) return -1;
    hp->gating_renorm = -1;
    if (key_at(R, "expert_weights_norm", k, sizeof k)) {
        bool norm;
        if (!gguf_get_bool(R->g, k, &norm)) return ts_fail(err, "%s: metadata '%s' is not a bool", R->path, k);
        hp->gating_renorm = norm;
    }
    int gating_func = 1;
    if (get_int(R, "expert_gating_func", 0, 16, &gating_func, err)) return -1;
    if (gating_func != 1)   /* llama.cpp: 1 softmax, 2 sigmoid */
        return ts_fail(err, "%s: %s.expert_gating_func %d: only softmax gating is supported", R->path, a->name, gating_func);
    int n_vocab = 0;
    if (get_int(R, "vocab_size", 1, 1 << 24, &n_vocab, err)) return -1;
    const tensor_entry *emb = tensor_dir_find(gguf_tensors(R->g), "token_embd.weight");
    if (n_vocab && emb && emb->n_dims == 2 && emb->ne[1] != n_vocab)
        return ts_fail(err, "%s: %s.vocab_size is %d but token_embd has %lld rows", R->path, a->name, n_vocab, (long long)emb->ne[1]);
    return 0;
}

/* ---- the tensor source ---- */

static const char *gguf_role_name(const tensor_source *s, int role, int layer, int expert, char *buf, size_t cap) {
    const gguf_reader *R = s->ctx;
    char fmt[128];
    if (!arch_gguf_name(R->a, role, fmt, sizeof fmt)) return NULL;
    snprintf(buf, cap, fmt, layer, expert);
    return buf;
}

static int gguf_matrix(const tensor_source *s, const tensor_entry *t, int role, int64_t rows, int64_t cols,
                       weight *w, ts_error *err) {
    if (!type_get(t->type))
        return ts_fail(err, "%s: tensor '%s' has unsupported type %s", s->path, t->name, type_name(t->type));
    int64_t n_rows = t->ne[1] * (t->n_dims == 3 ? t->ne[2] : 1);   /* stacked experts: rows of all of them */
    if (t->n_dims > 3 || t->ne[0] != cols || (rows >= 0 && n_rows != rows))
        return ts_fail(err, "%s: tensor '%s' has %lld rows of %lld, expected %lld of %lld", s->path, t->name,
                       (long long)n_rows, (long long)t->ne[0], (long long)rows, (long long)cols);
    w->type = t->type;
    w->rows = n_rows;
    w->cols = t->ne[0];
    w->row_bytes = type_row_bytes(t->type, t->ne[0]);
    w->data = t->data;
    w->name = t->name;
    return 0;
}

/* Vectors become owned f32 (GGUF stores Gemma's norms as 1 + w already: no convention to apply). */
static void gguf_release_copied(const tensor_source *s, const void *p, size_t n) {
    gguf_release(((const gguf_reader *)s->ctx)->g, p, n);
}

static int gguf_vector(const tensor_source *s, const tensor_entry *t, int64_t n, bool norm,
                       const float **out, ts_error *err) {
    const gguf_reader *R = s->ctx;
    if (t->type != TS_F32 && t->type != TS_F16 && t->type != TS_BF16)
        return ts_fail(err, "%s: tensor '%s' has type %s (expected F32, F16 or BF16)", s->path, t->name, type_name(t->type));
    float *v = model_arena_alloc(&R->m->arena, (size_t)n * sizeof(float));
    if (!v) return ts_fail(err, "%s: out of memory", s->path);
    type_get(t->type)->dequant_row(t->data, v, n);
    *out = v;
    return 0;
}

int load_gguf_model(ts_model *m, const char *path, ts_error *err) {
    if (gguf_open(path, &m->gguf, err) != 0) return -1;
    const gguf_file *g = m->gguf;
    const char *s; size_t slen;
    if (!gguf_get_str(g, "general.architecture", &s, &slen))
        return ts_fail(err, "%s: no general.architecture in the metadata", path);
    if (slen >= sizeof m->g.arch) slen = sizeof m->g.arch - 1;
    memcpy(m->g.arch, s, slen);
    m->g.arch[slen] = 0;

    /* the tokenizer first: a vocab-only GGUF is usable for --tokenize */
    if (gguf_has(g, "tokenizer.ggml.model")) {
        if (vocab_from_gguf(g, &m->voc, err) != 0) return -1;
        m->has_vocab = true;
    }
    if (gguf_get_str(g, "tokenizer.chat_template", &s, &slen)) {
        m->chat_template = model_arena_alloc(&m->arena, slen + 1);
        if (!m->chat_template) return ts_fail(err, "%s: out of memory", path);
        memcpy(m->chat_template, s, slen);
    }
    if (gguf_tensors(g)->n == 0) return 0;   /* vocab only */

    const char *type; size_t tlen;
    if (gguf_get_str(g, "general.type", &type, &tlen) && !(tlen == 5 && !memcmp(type, "model", 5)))
        return ts_fail(err, "%s: a GGUF of type '%.*s' is not a model", path, (int)tlen, type);
    gguf_reader R = { .m = m, .g = g, .path = path, .a = arch_by_gguf_name(m->g.arch, strlen(m->g.arch)) };
    if (!R.a) {
        char known[256];
        arch_known_list(known, sizeof known);
        return ts_fail(err, "%s: unsupported architecture '%s' (supported: %s)", path, m->g.arch, known);
    }
    if (check_keys(&R, err) != 0) return -1;
    model_hparams hp;
    if (read_hparams(&R, &hp, err) != 0) return -1;
    tensor_source src = { .dir = gguf_tensors(g), .path = path, .qk_permuted = R.a->gguf_qk_permuted, .ctx = &R,
                          .name = gguf_role_name, .matrix = gguf_matrix, .vector = gguf_vector,
                          .release = gguf_release_copied };
    if (build_geometry(m, R.a, &hp, &src, err) != 0) return -1;
    model_note(m, R.a->hf_norm_plus_one ? "norms: used as w (GGUF stores Gemma's 1 + w already)" : "norms: used as w");
    return 0;
}
