/* GGUF -> geometry table. Reads the architecture's hyper-parameters and tensors, checks every
 * shape against them, and applies the layout rules of GGUF containers:
 *  - Llama-family attn_q/attn_k rows are un-permuted back to split-half order (SPEC 1.1);
 *  - norm weights are stored with any "+1" already folded in (Gemma), so they are used as w. */
#include "model/model.h"
#include "model/layout.h"
#include "kernels/types.h"
#include "text/tokenizer.h"
#include "core/error.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct gguf_loader {
    ts_model *m;
    const gguf_file *g;
    const char *path;
    const char *arch;
} gguf_loader;

static bool arch_i64(const gguf_loader *L, const char *key, int64_t *out) {
    char k[160];
    snprintf(k, sizeof k, "%s.%s", L->arch, key);
    return gguf_get_i64(L->g, k, out);
}

static bool arch_f32(const gguf_loader *L, const char *key, float *out) {
    char k[160];
    snprintf(k, sizeof k, "%s.%s", L->arch, key);
    return gguf_get_f32(L->g, k, out);
}

/* A per-layer integer that may be stored as one value or as an array with one value per layer. */
static int arch_layer_i64(const gguf_loader *L, const char *key, int layer, int64_t def,
                          int64_t *out, ts_error *err) {
    char k[160];
    snprintf(k, sizeof k, "%s.%s", L->arch, key);
    int elem; uint64_t n;
    if (gguf_get_arr(L->g, k, &elem, &n)) {
        if (n <= (uint64_t)layer)
            return ts_fail(err, "%s: metadata '%s' has %llu values, layer %d needs one", L->path, k,
                           (unsigned long long)n, layer);
        if (!gguf_arr_i64(L->g, k, (uint64_t)layer, out))
            return ts_fail(err, "%s: metadata '%s' is not an integer array", L->path, k);
        return 0;
    }
    if (gguf_has(L->g, k) && !gguf_get_i64(L->g, k, out))
        return ts_fail(err, "%s: metadata '%s' is not an integer", L->path, k);
    if (!gguf_has(L->g, k)) *out = def;
    return 0;
}

static const tensor_entry *find_tensor(const gguf_loader *L, const char *fmt, int layer) {
    char name[128];
    snprintf(name, sizeof name, fmt, layer);
    return tensor_dir_find(gguf_tensors(L->g), name);
}

/* Attaches a 2-D weight [rows x cols], checking its shape. Absent and optional: w->data = NULL. */
static int attach_weight(gguf_loader *L, weight *w, const char *fmt, int layer,
                         int64_t rows, int64_t cols, bool required, ts_error *err) {
    char name[128];
    snprintf(name, sizeof name, fmt, layer);
    const tensor_entry *t = tensor_dir_find(gguf_tensors(L->g), name);
    memset(w, 0, sizeof *w);
    if (!t) {
        if (required) return ts_fail(err, "%s: tensor '%s' is missing", L->path, name);
        return 0;
    }
    if (!type_get(t->type))
        return ts_fail(err, "%s: tensor '%s' has unsupported type %s", L->path, name, type_name(t->type));
    if (t->n_dims > 2 || t->ne[0] != cols || (rows >= 0 && t->ne[1] != rows))
        return ts_fail(err, "%s: tensor '%s' has shape [%lld, %lld], expected [%lld, %lld]",
                       L->path, name, (long long)t->ne[1], (long long)t->ne[0],
                       (long long)rows, (long long)cols);
    w->type = t->type;
    w->rows = t->ne[1];
    w->cols = t->ne[0];
    w->row_bytes = type_row_bytes(t->type, t->ne[0]);
    w->data = t->data;
    w->name = t->name;
    return 0;
}

/* Norm weights become owned f32 vectors of length n. */
static int attach_norm(gguf_loader *L, const float **out, const char *fmt, int layer, int64_t n,
                       bool required, ts_error *err) {
    char name[128];
    snprintf(name, sizeof name, fmt, layer);
    const tensor_entry *t = tensor_dir_find(gguf_tensors(L->g), name);
    *out = NULL;
    if (!t) {
        if (required) return ts_fail(err, "%s: tensor '%s' is missing", L->path, name);
        return 0;
    }
    if (t->n_dims != 1 || t->ne[0] != n)
        return ts_fail(err, "%s: tensor '%s' has %lld values, expected %lld", L->path, name,
                       (long long)t->ne[0], (long long)n);
    const type_traits *tt = type_get(t->type);
    if (!tt || (t->type != TS_F32 && t->type != TS_F16 && t->type != TS_BF16))
        return ts_fail(err, "%s: norm tensor '%s' has type %s (expected F32, F16 or BF16)",
                       L->path, name, type_name(t->type));
    float *v = arena_alloc(&L->m->arena, (size_t)n * sizeof(float));
    if (!v) return ts_fail(err, "%s: out of memory", L->path);
    tt->dequant_row(t->data, v, n);
    *out = v;
    return 0;
}

/* Restores split-half row order of a Llama GGUF attn_q / attn_k into an owned copy. */
static int unpermute_weight(gguf_loader *L, weight *w, int n_heads, ts_error *err) {
    uint8_t *dst = arena_alloc(&L->m->arena, (size_t)w->rows * w->row_bytes);
    if (!dst) return ts_fail(err, "%s: out of memory", L->path);
    ts_error e2;
    if (unpermute_qk_rows(dst, w->data, w->rows, w->row_bytes, n_heads, w->name, &e2) != 0)
        return ts_fail(err, "%s: %s", L->path, e2.msg);
    w->data = dst;
    return 0;
}

/* Architectures whose GGUF attn_q/attn_k rows llama.cpp's converter permutes. */
static bool arch_has_permuted_qk(const char *arch) {
    return strcmp(arch, "llama") == 0;
}

static int supported_arch(const char *arch) {
    static const char *known[] = { "llama", "qwen3", "gemma3", "gemma4", NULL };
    for (int i = 0; known[i]; i++) if (strcmp(arch, known[i]) == 0) return 1;
    return 0;
}

/* Which layers use sliding-window attention: Gemma 3 from `sliding_window_pattern` (layer i slides
 * iff (i+1) % pattern != 0; llama.cpp assumes 6 when the key is absent), Gemma 4 from a per-layer
 * bool array (true = sliding). */
static int layer_is_sliding(gguf_loader *L, int il, bool *sliding, ts_error *err) {
    *sliding = false;
    char k[160];
    snprintf(k, sizeof k, "%s.attention.sliding_window_pattern", L->arch);
    int elem; uint64_t n;
    if (gguf_get_arr(L->g, k, &elem, &n)) {
        int64_t v;
        if (n <= (uint64_t)il || !gguf_arr_i64(L->g, k, (uint64_t)il, &v))
            return ts_fail(err, "%s: metadata '%s' has no value for layer %d", L->path, k, il);
        *sliding = v != 0;
        return 0;
    }
    if (strcmp(L->arch, "gemma3") != 0) return 0;
    int64_t pattern = 6;
    if (gguf_has(L->g, k) && (!gguf_get_i64(L->g, k, &pattern) || pattern < 1))
        return ts_fail(err, "%s: metadata '%s' is not a positive integer", L->path, k);
    *sliding = (il + 1) % pattern != 0;
    return 0;
}

static float scalar_tensor(const tensor_entry *t) {
    float v = 1.0f;
    const type_traits *tt = type_get(t->type);
    if (tt && t->ne[0] == 1 && (t->type == TS_F32 || t->type == TS_F16 || t->type == TS_BF16)) tt->dequant_row(t->data, &v, 1);
    return v;
}

int load_gguf_model(ts_model *m, const char *path, ts_error *err) {
    if (gguf_open(path, &m->gguf, err) != 0) return -1;
    gguf_loader L = { .m = m, .g = m->gguf, .path = path };
    model_geometry *g = &m->g;

    const char *s; size_t slen;
    if (!gguf_get_str(L.g, "general.architecture", &s, &slen))
        return ts_fail(err, "%s: no general.architecture in the metadata", path);
    if (slen >= sizeof g->arch) slen = sizeof g->arch - 1;
    memcpy(g->arch, s, slen);
    g->arch[slen] = 0;
    L.arch = g->arch;

    /* the tokenizer first: a vocab-only GGUF is usable for --tokenize */
    if (gguf_has(L.g, "tokenizer.ggml.model")) {
        if (vocab_from_gguf(L.g, &m->voc, err) != 0) return -1;
        m->has_vocab = true;
    }
    if (gguf_get_str(L.g, "tokenizer.chat_template", &s, &slen)) {
        m->chat_template = arena_alloc(&m->arena, slen + 1);
        if (!m->chat_template) return ts_fail(err, "%s: out of memory", path);
        memcpy(m->chat_template, s, slen);
    }
    if (gguf_tensors(L.g)->n == 0) return 0;   /* vocab only */

    if (!supported_arch(g->arch))
        return ts_fail(err, "%s: unsupported architecture '%s'", path, g->arch);
    const bool is_gemma3 = !strcmp(g->arch, "gemma3"), is_gemma4 = !strcmp(g->arch, "gemma4");
    const bool is_gemma = is_gemma3 || is_gemma4;

    int64_t v;
    if (!arch_i64(&L, "embedding_length", &v) || v <= 0 || v > (1 << 20))
        return ts_fail(err, "%s: missing or invalid %s.embedding_length", path, g->arch);
    g->hidden = (int)v;
    if (!arch_i64(&L, "block_count", &v) || v <= 0 || v > 4096)
        return ts_fail(err, "%s: missing or invalid %s.block_count", path, g->arch);
    g->n_layers = (int)v;
    g->n_ctx_train = arch_i64(&L, "context_length", &v) && v > 0 && v < (1 << 24) ? (int)v : 2048;
    g->norm_eps = 1e-5f;
    arch_f32(&L, "attention.layer_norm_rms_epsilon", &g->norm_eps);
    g->embed_scale = is_gemma ? sqrtf((float)g->hidden) : 1.0f;
    g->final_softcap = 0.0f;
    arch_f32(&L, "final_logit_softcapping", &g->final_softcap);

    float theta = 10000.0f, theta_swa = 10000.0f;
    arch_f32(&L, "rope.freq_base", &theta);
    bool has_swa_base = arch_f32(&L, "rope.freq_base_swa", &theta_swa);
    float pos_scale = 1.0f;
    {
        char k[160];
        snprintf(k, sizeof k, "%s.rope.scaling.type", g->arch);
        float factor = 1.0f;
        if (gguf_get_str(L.g, k, &s, &slen) && slen == 6 && memcmp(s, "linear", 6) == 0 &&
            arch_f32(&L, "rope.scaling.factor", &factor) && factor > 0)
            pos_scale = 1.0f / factor;
    }
    int64_t window = 0;
    arch_i64(&L, "attention.sliding_window", &window);
    if (window < 0 || window > (1 << 24)) return ts_fail(err, "%s: invalid sliding window %lld", path, (long long)window);
    int64_t n_shared = 0;
    arch_i64(&L, "attention.shared_kv_layers", &n_shared);
    if (n_shared < 0 || n_shared >= g->n_layers)
        return ts_fail(err, "%s: invalid shared_kv_layers %lld", path, (long long)n_shared);

    const tensor_entry *emb = tensor_dir_find(gguf_tensors(L.g), "token_embd.weight");
    if (!emb || emb->n_dims != 2) return ts_fail(err, "%s: tensor 'token_embd.weight' is missing or not 2-D", path);
    g->n_vocab = (int)emb->ne[1];
    if (emb->ne[1] > (1 << 24)) return ts_fail(err, "%s: vocabulary of %lld tokens is too large", path, (long long)emb->ne[1]);
    if (m->has_vocab && m->voc.n != g->n_vocab)
        return ts_fail(err, "%s: token_embd has %d rows but the tokenizer has %d tokens", path, g->n_vocab, m->voc.n);
    if (attach_weight(&L, &g->tok_embd, "token_embd.weight", 0, g->n_vocab, g->hidden, true, err)) return -1;
    if (attach_norm(&L, &g->output_norm, "output_norm.weight", 0, g->hidden, true, err)) return -1;
    if (attach_weight(&L, &g->output, "output.weight", 0, g->n_vocab, g->hidden, false, err)) return -1;
    if (!g->output.data) {
        g->output = g->tok_embd;
        model_note(m, "output: tied to token_embd.weight");
    }

    /* Gemma 4 proportional RoPE: a per-pair divisor, 1e30 for pairs that do not rotate */
    const float *rope_factors = NULL;
    int64_t rope_factor_n = 0;
    const tensor_entry *rf = tensor_dir_find(gguf_tensors(L.g), "rope_freqs.weight");
    if (rf) {
        if (rf->n_dims != 1 || rf->type != TS_F32)
            return ts_fail(err, "%s: tensor 'rope_freqs.weight' must be a 1-D F32 vector", path);
        rope_factor_n = rf->ne[0];
        if (attach_norm(&L, &rope_factors, "rope_freqs.weight", 0, rope_factor_n, true, err)) return -1;
    }

    /* Gemma 4 per-layer embeddings */
    int64_t ple = 0;
    arch_i64(&L, "embedding_length_per_layer_input", &ple);
    if (ple < 0 || ple > 65536) return ts_fail(err, "%s: invalid embedding_length_per_layer_input %lld", path, (long long)ple);
    if (ple > 0) {
        g->ple_dim = (int)ple;
        int64_t total = ple * g->n_layers;
        if (attach_weight(&L, &g->ple_embd, "per_layer_token_embd.weight", 0, g->n_vocab, total, true, err)) return -1;
        if (attach_weight(&L, &g->ple_model_proj, "per_layer_model_proj.weight", 0, total, g->hidden, true, err)) return -1;
        if (attach_norm(&L, &g->ple_proj_norm, "per_layer_proj_norm.weight", 0, ple, true, err)) return -1;
        g->ple_embd_scale = sqrtf((float)ple);
        g->ple_proj_scale = 1.0f / sqrtf((float)g->hidden);
        g->ple_combine_scale = 1.0f / sqrtf(2.0f);
        model_note(m, "per-layer embeddings: %lld values per layer", (long long)ple);
    }

    g->layers = arena_alloc(&m->arena, (size_t)g->n_layers * sizeof(layer_geometry));
    if (!g->layers) return ts_fail(err, "%s: out of memory", path);
    bool permuted = arch_has_permuted_qk(g->arch);
    bool has_qk_norm = strcmp(g->arch, "qwen3") == 0 || is_gemma;
    int first_shared = g->n_layers - (int)n_shared;
    for (int il = 0; il < g->n_layers; il++) {
        layer_geometry *ly = &g->layers[il];
        bool sliding;
        if (layer_is_sliding(&L, il, &sliding, err)) return -1;
        int64_t nh, nkv, hd, ff, rdim;
        if (arch_layer_i64(&L, "attention.head_count", il, 0, &nh, err)) return -1;
        if (arch_layer_i64(&L, "attention.head_count_kv", il, nh, &nkv, err)) return -1;
        if (nh <= 0 || nh > 4096 || nkv <= 0 || nkv > nh || nh % nkv != 0)
            return ts_fail(err, "%s: layer %d: invalid head counts (%lld heads, %lld KV heads)",
                           path, il, (long long)nh, (long long)nkv);
        if (arch_layer_i64(&L, "attention.key_length", il, g->hidden / nh, &hd, err)) return -1;
        if (arch_layer_i64(&L, "rope.dimension_count", il, hd, &rdim, err)) return -1;
        if (sliding && is_gemma4) {
            if (arch_layer_i64(&L, "attention.key_length_swa", il, hd, &hd, err)) return -1;
            if (arch_layer_i64(&L, "rope.dimension_count_swa", il, hd, &rdim, err)) return -1;
        }
        if (hd <= 0 || hd > 4096 || hd % 2 != 0)
            return ts_fail(err, "%s: layer %d: invalid head dimension %lld", path, il, (long long)hd);
        if (rdim <= 0 || rdim > hd || rdim % 2 != 0)
            return ts_fail(err, "%s: layer %d: invalid rope dimension count %lld", path, il, (long long)rdim);
        ly->kind = sliding ? LAYER_SLIDING : LAYER_FULL;
        ly->n_heads = (int)nh;
        ly->n_kv_heads = (int)nkv;
        ly->head_dim = (int)hd;
        ly->window = sliding ? (int)window : 0;
        if (sliding && window <= 0) return ts_fail(err, "%s: layer %d slides but no sliding_window is given", path, il);
        ly->attn_scale = is_gemma4 ? 1.0f
                       : is_gemma3 && g->n_layers == 62 ? 1.0f / sqrtf((float)g->hidden / nh)
                       : 1.0f / sqrtf((float)hd);
        /* sliding layers use the local base; linear scaling reaches them only when no local base is stated */
        ly->rope_theta = sliding ? theta_swa : theta;
        ly->rope_pos_scale = sliding && has_swa_base ? 1.0f : pos_scale;
        ly->rope_dim = (int)rdim;
        ly->rope_pairs = (int)rdim / 2;
        if (!sliding && rope_factors) {
            if (rope_factor_n != rdim / 2)
                return ts_fail(err, "%s: rope_freqs.weight has %lld values, layer %d needs %lld", path,
                               (long long)rope_factor_n, il, (long long)rdim / 2);
            ly->rope_freq_factors = rope_factors;
            int rot = 0;
            while (rot < rdim / 2 && rope_factors[rot] < 1e20f) rot++;
            ly->rope_pairs = rot;     /* pairs with a 1e30 divisor do not rotate */
        }
        ly->kv_source = il;
        if (il >= first_shared) {     /* reuse the last earlier non-shared layer of the same kind */
            int src = -1;
            for (int j = first_shared - 1; j >= 0; j--)
                if (g->layers[j].kind == ly->kind) { src = j; break; }
            if (src < 0) return ts_fail(err, "%s: shared-KV layer %d has no earlier layer of its kind", path, il);
            ly->kv_source = src;
            if (g->layers[src].n_kv_heads != ly->n_kv_heads || g->layers[src].head_dim != ly->head_dim)
                return ts_fail(err, "%s: shared-KV layer %d does not match the geometry of layer %d", path, il, src);
        }
        ly->activation = is_gemma ? ACT_GELU_TANH : ACT_SILU;
        ly->output_scale = 1.0f;
        ly->v_norm = is_gemma4;

        const tensor_entry *gate = find_tensor(&L, "blk.%d.ffn_gate.weight", il);
        if (!gate || gate->n_dims != 2)
            return ts_fail(err, "%s: tensor 'blk.%d.ffn_gate.weight' is missing or not 2-D", path, il);
        ff = gate->ne[1];
        ly->ffn_dim = (int)ff;

        int64_t q_rows = nh * hd, kv_rows = nkv * hd;
        bool own_kv = ly->kv_source == il;
        if (attach_norm(&L, &ly->attn_norm, "blk.%d.attn_norm.weight", il, g->hidden, true, err)) return -1;
        if (attach_norm(&L, &ly->ffn_norm, "blk.%d.ffn_norm.weight", il, g->hidden, true, err)) return -1;
        if (attach_weight(&L, &ly->wq, "blk.%d.attn_q.weight", il, q_rows, g->hidden, true, err)) return -1;
        if (attach_weight(&L, &ly->wk, "blk.%d.attn_k.weight", il, kv_rows, g->hidden, own_kv, err)) return -1;
        if (attach_weight(&L, &ly->wv, "blk.%d.attn_v.weight", il, kv_rows, g->hidden, own_kv && !is_gemma4, err)) return -1;
        ly->v_from_k = own_kv && !ly->wv.data;
        if (attach_weight(&L, &ly->wo, "blk.%d.attn_output.weight", il, g->hidden, q_rows, true, err)) return -1;
        if (attach_weight(&L, &ly->w_gate, "blk.%d.ffn_gate.weight", il, ff, g->hidden, true, err)) return -1;
        if (attach_weight(&L, &ly->w_up, "blk.%d.ffn_up.weight", il, ff, g->hidden, true, err)) return -1;
        if (attach_weight(&L, &ly->w_down, "blk.%d.ffn_down.weight", il, g->hidden, ff, true, err)) return -1;
        if (has_qk_norm) {
            if (attach_norm(&L, &ly->q_norm, "blk.%d.attn_q_norm.weight", il, hd, true, err)) return -1;
            if (attach_norm(&L, &ly->k_norm, "blk.%d.attn_k_norm.weight", il, hd, own_kv, err)) return -1;
        }
        if (is_gemma) {
            if (attach_norm(&L, &ly->post_attn_norm, "blk.%d.post_attention_norm.weight", il, g->hidden, true, err)) return -1;
            if (attach_norm(&L, &ly->post_ffn_norm, "blk.%d.post_ffw_norm.weight", il, g->hidden, true, err)) return -1;
        }
        const tensor_entry *los = find_tensor(&L, "blk.%d.layer_output_scale.weight", il);
        if (los) ly->output_scale = scalar_tensor(los);
        if (g->ple_dim > 0) {
            if (attach_weight(&L, &ly->ple_gate, "blk.%d.inp_gate.weight", il, g->ple_dim, g->hidden, true, err)) return -1;
            if (attach_weight(&L, &ly->ple_proj, "blk.%d.proj.weight", il, g->hidden, g->ple_dim, true, err)) return -1;
            if (attach_norm(&L, &ly->ple_post_norm, "blk.%d.post_norm.weight", il, g->hidden, true, err)) return -1;
        }
        if (permuted) {
            if (unpermute_weight(&L, &ly->wq, ly->n_heads, err)) return -1;
            if (unpermute_weight(&L, &ly->wk, ly->n_kv_heads, err)) return -1;
        }
    }
    if (permuted)
        model_note(m, "attn_q/attn_k: un-permuted from GGUF Llama order (interleaved pairs) to split-half");
    else
        model_note(m, "attn_q/attn_k: used as stored (%s GGUF is not permuted)", g->arch);
    model_note(m, is_gemma3 ? "norms: used as w (GGUF stores Gemma's 1 + w already)" : "norms: used as w");
    if (is_gemma3) model_note(m, "attention scale: 1/sqrt(head_dim), as llama.cpp (GGUF has no query_pre_attn_scalar)");
    if (pos_scale != 1.0f)
        model_note(m, "rope: linear scaling x%g on %s", (double)pos_scale,
                   has_swa_base ? "full-attention layers (a local base is stated)" : "every layer");
    return 0;
}
