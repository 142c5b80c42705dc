/* Hugging Face folder -> geometry table: config.json rules (SPEC 1.5 and 4) and HF tensor names.
 * Safetensors rows are in HF order already (no Q/K permutation); float weights are used in place
 * from the mmap. Gemma 2/3 norms scale by (1 + w): the 1 is added here, once, into owned f32 copies,
 * so the forward always multiplies by w. */
#include "model/model.h"
#include "io/json.h"
#include "io/safetensors.h"
#include "io/q4nx.h"
#include "kernels/types.h"
#include "text/tokenizer.h"
#include "core/error.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef struct hf_loader {
    ts_model *m;
    const tensor_dir *dir;
    const char *path;          /* the folder */
    const char *prefix;        /* "model." or "model.language_model." */
    const char *quant;         /* NULL, "q8_0" or "q4_0": quantize matrices at load */
    bool norm_plus_one;        /* Gemma 2/3: RMSNorm scales by (1 + w) */
    bool q4nx_pack;            /* a FastFlowLM pack: I8 tensors are 4-bit tiles (SPEC 5) */
    const char *weights_file;  /* the pack's model.q4nx, for messages */
    int n_tiled[2];            /* q4nx tensors per tile kind (enum q4nx_kind) */
    int64_t q4nx_weights;      /* weights and bytes of the repacked matrices */
    size_t q4nx_bytes;
} hf_loader;

static const tensor_entry *find(const hf_loader *L, const char *fmt, int layer) {
    char name[256], full[320];
    snprintf(name, sizeof name, fmt, layer);
    snprintf(full, sizeof full, "%s%s", L->prefix, name);
    const tensor_entry *t = tensor_dir_find(L->dir, full);
    return t ? t : tensor_dir_find(L->dir, name);
}

/* A pack's I8 tile array -> Q4NX rows in the model arena (the tile kind named by the declared
 * width, see io/q4nx.h); one layout note per tensor for --info. */
static int attach_q4nx(hf_loader *L, weight *w, const tensor_entry *t, int64_t rows, int64_t cols,
                       ts_error *err) {
    q4nx_layout lay;
    const char *file = L->weights_file;
    if (q4nx_layout_of(file, t, rows, cols, &lay, err) != 0) return -1;
    size_t bytes = q4nx_repacked_bytes(rows, cols);
    uint8_t *data = arena_alloc(&L->m->arena, bytes);
    if (!data) return ts_fail(err, "%s: out of memory repacking '%s'", file, t->name);
    q4nx_repack(t, &lay, rows, cols, data);
    w->type = TS_Q4NX;
    w->rows = rows;
    w->cols = cols;
    w->row_bytes = type_row_bytes(TS_Q4NX, cols);
    w->data = data;
    w->name = t->name;
    L->n_tiled[lay.kind]++;
    L->q4nx_weights += rows * cols;
    L->q4nx_bytes += bytes;
    char shape[64];
    if (t->n_dims == 3) snprintf(shape, sizeof shape, "[%lld, %lld, %lld]", (long long)t->ne[2], (long long)t->ne[1], (long long)t->ne[0]);
    else snprintf(shape, sizeof shape, "[%lld, %lld]", (long long)t->ne[1], (long long)t->ne[0]);
    model_note(L->m, "%s: %s %s (%lldx%lld grid, %lld columns stored) -> Q4NX %lldx%lld", t->name,
               q4nx_kind_name(lay.kind), shape, (long long)lay.row_tiles, (long long)lay.col_tiles,
               (long long)lay.stored_k, (long long)rows, (long long)cols);
    return 0;
}

static int attach_weight(hf_loader *L, weight *w, const char *fmt, int layer, int64_t rows,
                         int64_t cols, bool required, ts_error *err) {
    memset(w, 0, sizeof *w);
    const tensor_entry *t = find(L, fmt, layer);
    char name[256];
    snprintf(name, sizeof name, fmt, layer);
    if (!t) return required ? ts_fail(err, "%s: tensor '%s%s' is missing", L->path, L->prefix, name) : 0;
    if (L->q4nx_pack && t->type == TS_I8) return attach_q4nx(L, w, t, rows, cols, err);
    if (t->type != TS_F32 && t->type != TS_F16 && t->type != TS_BF16)
        return ts_fail(err, "%s: tensor '%s' has dtype %s (expected F32, F16 or BF16)", L->path,
                       t->name, safetensors_type_name(t->type));
    if (t->n_dims != 2 || t->ne[0] != cols || t->ne[1] != rows)
        return ts_fail(err, "%s: tensor '%s' has shape [%lld, %lld], expected [%lld, %lld]", L->path,
                       t->name, (long long)t->ne[1], (long long)t->ne[0], (long long)rows, (long long)cols);
    w->type = t->type;
    w->rows = rows;
    w->cols = cols;
    w->row_bytes = type_row_bytes(t->type, cols);
    w->data = t->data;
    w->name = t->name;
    return 0;
}

/* Norm vector (any float dtype) -> owned f32, with + add. */
static int attach_vector(hf_loader *L, const float **out, const char *fmt, int layer, int64_t n,
                         float add, bool required, ts_error *err) {
    *out = NULL;
    const tensor_entry *t = find(L, fmt, layer);
    char name[256];
    snprintf(name, sizeof name, fmt, layer);
    if (!t) return required ? ts_fail(err, "%s: tensor '%s%s' is missing", L->path, L->prefix, name) : 0;
    int64_t count = 1;
    for (int i = 0; i < t->n_dims; i++) count *= t->ne[i];
    if (count != n || (t->type != TS_F32 && t->type != TS_F16 && t->type != TS_BF16))
        return ts_fail(err, "%s: tensor '%s' must hold %lld float values", L->path, t->name, (long long)n);
    float *v = arena_alloc(&L->m->arena, (size_t)n * sizeof(float));
    if (!v) return ts_fail(err, "%s: out of memory", L->path);
    type_get(t->type)->dequant_row(t->data, v, n);
    for (int64_t i = 0; i < n; i++) v[i] += add;
    *out = v;
    return 0;
}

/* --quant: the matrix re-encoded into a block type at load (rows whose width is not whole blocks
 * stay as they are). */
static int quantize_weight(hf_loader *L, weight *w, ts_error *err) {
    if (!L->quant || !w->data) return 0;
    int target = !strcmp(L->quant, "q8_0") ? TS_Q8_0 : TS_Q4_0;
    const type_traits *src = type_get(w->type), *dst = type_get(target);
    size_t rb = type_row_bytes(target, w->cols);
    if (rb == 0) return 0;
    uint8_t *q = arena_alloc(&L->m->arena, rb * (size_t)w->rows);
    float *row = malloc((size_t)w->cols * sizeof(float));
    if (!q || !row) { free(row); return ts_fail(err, "%s: out of memory quantizing '%s'", L->path, w->name); }
    for (int64_t r = 0; r < w->rows; r++) {
        src->dequant_row(w->data + (size_t)r * w->row_bytes, row, w->cols);
        dst->quantize_row(row, q + (size_t)r * rb, w->cols);
    }
    free(row);
    w->type = target;
    w->row_bytes = rb;
    w->data = q;
    return 0;
}

static const json_value *text_config(const json_value *cfg) {
    const json_value *tc = json_get(cfg, "text_config");
    return tc && tc->type == JSON_OBJECT ? tc : cfg;
}

static bool is_null_or_absent(const json_value *obj, const char *key) {
    const json_value *v = json_get(obj, key);
    return !v || v->type == JSON_NULL;
}

/* The tokenizer of a folder: tokenizer.json, else tokenizer.model. Missing: no tokenizer. */
static int load_folder_tokenizer(ts_model *m, const char *dir, ts_error *err) {
    char p[1200];
    snprintf(p, sizeof p, "%s/tokenizer.json", dir);
    if (access(p, R_OK) == 0) {
        if (vocab_from_tokenizer_json(p, &m->voc, err) != 0) return -1;
        m->has_vocab = true;
        return 0;
    }
    snprintf(p, sizeof p, "%s/tokenizer.model", dir);
    if (access(p, R_OK) == 0) {
        if (vocab_from_spm_model(p, &m->voc, err) != 0) return -1;
        m->has_vocab = true;
    }
    return 0;
}

/* tokenizer_config.json: chat template, and BOS facts config.json leaves unsaid (SPEC 1.5). */
static int apply_tokenizer_config(ts_model *m, const char *dir, const json_value *cfg, ts_error *err) {
    char p[1200];
    snprintf(p, sizeof p, "%s/tokenizer_config.json", dir);
    if (access(p, R_OK) != 0) return 0;
    char *text; size_t len;
    if (read_file(p, &text, &len, err) != 0) return -1;
    json_value *tc = NULL;
    ts_error e2;
    if (json_parse(text, len, &tc, &e2) != 0) {
        free(text);
        return ts_fail(err, "%s: %s", p, e2.msg);
    }
    free(text);
    const json_value *tmpl = json_get(tc, "chat_template");
    const char *t = NULL;
    if (tmpl && tmpl->type == JSON_STRING) t = tmpl->str;
    else if (tmpl && tmpl->type == JSON_ARRAY)   /* [{name, template}, ...]: the "default" one */
        for (size_t i = 0; i < tmpl->n; i++) {
            const char *name = json_get_str(&tmpl->items[i], "name");
            if (name && !strcmp(name, "default")) t = json_get_str(&tmpl->items[i], "template");
        }
    if (t && !m->chat_template) {
        m->chat_template = arena_alloc(&m->arena, strlen(t) + 1);
        if (m->chat_template) strcpy(m->chat_template, t);
    }
    if (m->has_vocab) {
        const json_value *cfg_bos = json_get(cfg, "bos_token_id");
        if (!cfg_bos || cfg_bos->type != JSON_NUMBER) {
            const json_value *b = json_get(tc, "bos_token");
            const char *s = b && b->type == JSON_STRING ? b->str : b ? json_get_str(b, "content") : NULL;
            if (s) {
                int id = vocab_find(&m->voc, s, strlen(s));
                if (id >= 0) { m->voc.bos = id; model_note(m, "bos: '%s' (id %d) from tokenizer_config.json", s, id); }
            } else if (b && b->type == JSON_NULL) {
                m->voc.bos = -1;
            }
        }
        const json_value *ab = json_get(tc, "add_bos_token");
        if (ab && ab->type == JSON_BOOL) {
            m->voc.add_bos = ab->boolean;
            model_note(m, "add_bos: %s from tokenizer_config.json", ab->boolean ? "true" : "false");
        }
    }
    json_free(tc);
    return 0;
}

enum hf_family { FAM_LLAMA, FAM_QWEN3, FAM_GEMMA3, FAM_GEMMA4 };

static int hf_family(const char *model_type, int *fam) {
    static const struct { const char *name; int fam; } known[] = {
        { "llama", FAM_LLAMA }, { "mistral", FAM_LLAMA }, { "qwen3", FAM_QWEN3 },
        { "gemma3", FAM_GEMMA3 }, { "gemma3_text", FAM_GEMMA3 },
        { "gemma4", FAM_GEMMA4 }, { "gemma4_text", FAM_GEMMA4 },
    };
    for (size_t i = 0; i < sizeof known / sizeof known[0]; i++)
        if (!strcmp(model_type, known[i].name)) { *fam = known[i].fam; return 0; }
    return -1;
}

int load_hf_model(ts_model *m, const char *dir, const char *weights_file, const char *quant,
                  ts_error *err) {
    char p[1200];
    snprintf(p, sizeof p, "%s/config.json", dir);
    char *text; size_t len;
    if (read_file(p, &text, &len, err) != 0) return -1;
    json_value *root = NULL;
    ts_error e2;
    int rc = json_parse(text, len, &root, &e2);
    free(text);
    if (rc != 0) return ts_fail(err, "%s: %s", p, e2.msg);
    rc = -1;
    if (root->type != JSON_OBJECT) { ts_fail(err, "%s: not a JSON object", p); goto out; }
    const json_value *c = text_config(root);
    model_geometry *g = &m->g;
    const char *mt = json_get_str(c, "model_type");
    if (!mt) mt = json_get_str(root, "model_type");
    int fam;
    if (!mt || hf_family(mt, &fam) != 0) { ts_fail(err, "%s: unsupported model_type '%s'", p, mt ? mt : "(none)"); goto out; }
    snprintf(g->arch, sizeof g->arch, "%s", fam == FAM_LLAMA ? "llama" : fam == FAM_QWEN3 ? "qwen3" : fam == FAM_GEMMA3 ? "gemma3" : "gemma4");

    if (load_folder_tokenizer(m, dir, err) != 0) goto out;
    if (m->has_vocab) {   /* config.json's ids win over the tokenizer's defaults */
        int64_t b = json_get_int(c, "bos_token_id", json_get_int(root, "bos_token_id", -2));
        if (b >= 0 && b < m->voc.n) m->voc.bos = (int32_t)b;
        /* eos_token_id: one id, or a list of ids that all end generation */
        const json_value *e = json_get(c, "eos_token_id");
        if (!e) e = json_get(root, "eos_token_id");
        if (e && e->type == JSON_NUMBER && e->is_integer && e->integer >= 0 && e->integer < m->voc.n)
            m->voc.eos = (int32_t)e->integer;
        for (size_t i = 0; e && e->type == JSON_ARRAY && i < e->n && m->n_eog < 8; i++)
            if (e->items[i].is_integer && e->items[i].integer >= 0 && e->items[i].integer < m->voc.n)
                m->eog[m->n_eog++] = (int32_t)e->items[i].integer;
    }
    if (apply_tokenizer_config(m, dir, c, err) != 0) goto out;

    /* A FastFlowLM pack: a folder with model.q4nx (a safetensors file of bf16 and 4-bit tiles). */
    char pack_file[1200];
    snprintf(pack_file, sizeof pack_file, "%s/model.q4nx", dir);
    if (!weights_file && access(pack_file, R_OK) == 0) weights_file = pack_file;
    size_t wlen = weights_file ? strlen(weights_file) : 0;
    bool pack = wlen >= 5 && !strcmp(weights_file + wlen - 5, ".q4nx");
    if (pack && quant) { ts_fail(err, "%s: --quant does not apply to a q4nx pack (its matrices are 4-bit already)", weights_file); goto out; }

    safetensors *st = NULL;
    if ((weights_file ? safetensors_open(weights_file, &st, err) : safetensors_open_folder(dir, &st, err)) != 0) goto out;
    m->safetensors = st;
    hf_loader L = { .m = m, .dir = safetensors_tensors(st), .path = dir, .prefix = "model.",
                    .quant = quant, .q4nx_pack = pack, .weights_file = weights_file,
                    /* packs store Gemma norms with the 1 folded in */
                    .norm_plus_one = fam == FAM_GEMMA3 && !pack };
    if (!tensor_dir_find(L.dir, "model.embed_tokens.weight") &&
        tensor_dir_find(L.dir, "model.language_model.embed_tokens.weight"))
        L.prefix = "model.language_model.";

    int64_t H = json_get_int(c, "hidden_size", 0), NL = json_get_int(c, "num_hidden_layers", 0);
    int64_t NH = json_get_int(c, "num_attention_heads", 0);
    int64_t NKV = json_get_int(c, "num_key_value_heads", NH);
    int64_t V = json_get_int(c, "vocab_size", 0), FF = json_get_int(c, "intermediate_size", 0);
    if (H <= 0 || H > (1 << 20) || NL <= 0 || NL > 4096 || NH <= 0 || NH > 4096 || NKV <= 0 ||
        NKV > NH || NH % NKV || V <= 0 || V > (1 << 24) || FF <= 0 || FF > (1 << 24)) {
        ts_fail(err, "%s: missing or invalid sizes (hidden_size, num_hidden_layers, heads, vocab_size, intermediate_size)", p);
        goto out;
    }
    int64_t HD = is_null_or_absent(c, "head_dim") ? H / NH : json_get_int(c, "head_dim", 0);
    if (HD <= 0 || HD > 4096 || HD % 2) { ts_fail(err, "%s: invalid head_dim %lld", p, (long long)HD); goto out; }
    g->hidden = (int)H;
    g->n_layers = (int)NL;
    g->n_vocab = (int)V;
    g->n_ctx_train = (int)json_get_int(c, "max_position_embeddings", 2048);
    if (g->n_ctx_train <= 0 || g->n_ctx_train > (1 << 24)) g->n_ctx_train = 2048;
    g->norm_eps = (float)json_get_num(c, "rms_norm_eps", 1e-6);
    bool gemma = fam == FAM_GEMMA3 || fam == FAM_GEMMA4;
    /* packs store the Gemma embedding multiplied by sqrt(hidden) already */
    g->embed_scale = gemma && !pack ? sqrtf((float)H) : 1.0f;
    g->final_softcap = (float)json_get_num(c, "final_logit_softcapping", 0.0);
    if (m->has_vocab && m->voc.n > g->n_vocab) { ts_fail(err, "%s: the tokenizer has %d tokens, more than vocab_size %d", dir, m->voc.n, g->n_vocab); goto out; }

    float plus = L.norm_plus_one ? 1.0f : 0.0f;
    if (attach_weight(&L, &g->tok_embd, "embed_tokens.weight", 0, V, H, true, err)) goto out;
    if (attach_vector(&L, &g->output_norm, "norm.weight", 0, H, plus, true, err)) goto out;
    const json_value *tie_v = json_get(c, "tie_word_embeddings");
    if (!tie_v) tie_v = json_get(root, "tie_word_embeddings");
    bool tie = tie_v && tie_v->type == JSON_BOOL ? tie_v->boolean : gemma;
    const tensor_entry *lm = tensor_dir_find(L.dir, "lm_head.weight");
    if (!lm && tie_v && tie_v->type == JSON_BOOL && !tie_v->boolean) {
        ts_fail(err, "%s: tie_word_embeddings is false but lm_head.weight is missing", dir);
        goto out;
    }
    /* A pack's lm_head is packed from the unscaled embedding: never tied to the pre-scaled one. */
    if (pack && gemma && !lm) { ts_fail(err, "%s: the pack has no lm_head.weight (its embedding is pre-scaled by sqrt(hidden) and cannot serve as the output)", weights_file); goto out; }
    if (pack && lm) tie = false;
    if (!tie && lm) {
        L.prefix = "";
        if (attach_weight(&L, &g->output, "lm_head.weight", 0, V, H, true, err)) goto out;
        L.prefix = tensor_dir_find(L.dir, "model.embed_tokens.weight") ? "model." : "model.language_model.";
    } else {
        g->output = g->tok_embd;
        model_note(m, "output: tied to embed_tokens%s", lm ? " (tie_word_embeddings; lm_head.weight ignored)" : "");
    }

    /* RoPE and layer kinds */
    float theta = (float)json_get_num(c, "rope_theta", 10000.0);
    float pos_scale = 1.0f;
    const json_value *rs = json_get(c, "rope_scaling");
    if (rs && rs->type == JSON_OBJECT) {
        const char *rt = json_get_str(rs, "rope_type");
        if (!rt) rt = json_get_str(rs, "type");
        double factor = json_get_num(rs, "factor", 1.0);
        if (rt && !strcmp(rt, "linear") && factor > 0) pos_scale = (float)(1.0 / factor);
        else if (rt && strcmp(rt, "default") != 0) { ts_fail(err, "%s: rope_scaling type '%s' is not supported", p, rt); goto out; }
    }
    bool has_local_base = !is_null_or_absent(c, "rope_local_base_freq");
    float theta_local = (float)json_get_num(c, "rope_local_base_freq", 10000.0);
    int64_t window = json_get_int(c, "sliding_window", 0);
    if (is_null_or_absent(c, "sliding_window")) window = 0;
    int64_t pattern = json_get_int(c, "sliding_window_pattern", 6);
    const json_value *types = json_get(c, "layer_types");
    if (types && (types->type != JSON_ARRAY || (int64_t)types->n < NL)) { ts_fail(err, "%s: layer_types must list every layer", p); goto out; }
    /* Gemma 4 rope parameters per layer kind */
    const json_value *rp = json_get(c, "rope_parameters");
    const json_value *rp_sl = rp ? json_get(rp, "sliding_attention") : NULL, *rp_full = rp ? json_get(rp, "full_attention") : NULL;
    int64_t global_hd = json_get_int(c, "global_head_dim", HD);
    bool k_eq_v = json_get_bool(c, "attention_k_eq_v", false);
    int64_t global_kv = k_eq_v && !is_null_or_absent(c, "num_global_key_value_heads") ? json_get_int(c, "num_global_key_value_heads", NKV) : NKV;
    int64_t n_shared = json_get_int(c, "num_kv_shared_layers", 0);
    if (n_shared < 0 || n_shared >= NL) { ts_fail(err, "%s: invalid num_kv_shared_layers", p); goto out; }
    double qpas = json_get_num(c, "query_pre_attn_scalar", (double)HD);
    if (qpas <= 0) { ts_fail(err, "%s: invalid query_pre_attn_scalar", p); goto out; }

    /* per-layer embeddings (Gemma 4) */
    int64_t ple = fam == FAM_GEMMA4 ? json_get_int(c, "hidden_size_per_layer_input", 0) : 0;
    if (ple < 0 || ple > 65536) { ts_fail(err, "%s: invalid hidden_size_per_layer_input", p); goto out; }
    if (ple > 0) {
        g->ple_dim = (int)ple;
        if (attach_weight(&L, &g->ple_embd, "embed_tokens_per_layer.weight", 0, V, ple * NL, true, err)) goto out;
        if (attach_weight(&L, &g->ple_model_proj, "per_layer_model_projection.weight", 0, ple * NL, H, true, err)) goto out;
        if (attach_vector(&L, &g->ple_proj_norm, "per_layer_projection_norm.weight", 0, ple, 0, true, err)) goto out;
        g->ple_embd_scale = sqrtf((float)ple);
        g->ple_proj_scale = 1.0f / sqrtf((float)H);
        g->ple_combine_scale = 1.0f / sqrtf(2.0f);
    }

    g->layers = arena_alloc(&m->arena, (size_t)NL * sizeof(layer_geometry));
    if (!g->layers) { ts_fail(err, "%s: out of memory", dir); goto out; }
    int first_shared = (int)(NL - n_shared);
    for (int il = 0; il < NL; il++) {
        layer_geometry *ly = &g->layers[il];
        bool sliding = false;
        if (types) {
            const json_value *t = &types->items[il];
            if (t->type != JSON_STRING) { ts_fail(err, "%s: layer_types[%d] is not a string", p, il); goto out; }
            sliding = !strcmp(t->str, "sliding_attention");
            if (!sliding && strcmp(t->str, "full_attention")) { ts_fail(err, "%s: unknown layer type '%s'", p, t->str); goto out; }
        } else if (fam == FAM_GEMMA3) {
            if (pattern < 1) { ts_fail(err, "%s: invalid sliding_window_pattern", p); goto out; }
            sliding = (il + 1) % pattern != 0;
        }
        if (sliding && window <= 0) { ts_fail(err, "%s: layer %d slides but sliding_window is not set", p, il); goto out; }
        int64_t hd = HD, nkv = NKV;
        ly->kind = sliding ? LAYER_SLIDING : LAYER_FULL;
        ly->window = sliding ? (int)window : 0;
        ly->n_heads = (int)NH;
        ly->rope_theta = theta;
        ly->rope_pos_scale = pos_scale;
        ly->attn_scale = 1.0f / sqrtf((float)HD);
        ly->activation = gemma ? ACT_GELU_TANH : ACT_SILU;
        ly->output_scale = 1.0f;
        if (fam == FAM_GEMMA3) {
            ly->attn_scale = (float)(1.0 / sqrt(qpas));
            if (sliding) {
                ly->rope_theta = theta_local;     /* rope_local_base_freq, 1e4 when absent */
                if (has_local_base) ly->rope_pos_scale = 1.0f;
            }
        }
        int rot_pairs = -1;
        if (fam == FAM_GEMMA4) {
            ly->attn_scale = 1.0f;
            ly->v_norm = true;
            const json_value *r = sliding ? rp_sl : rp_full;
            if (!sliding) { hd = global_hd; nkv = global_kv; }
            if (hd <= 0 || hd > 4096 || hd % 2 || nkv <= 0 || NH % nkv) { ts_fail(err, "%s: layer %d: invalid KV geometry", p, il); goto out; }
            if (r) {
                ly->rope_theta = (float)json_get_num(r, "rope_theta", ly->rope_theta);
                double prf = json_get_num(r, "partial_rotary_factor", 1.0);
                if (prf <= 0 || prf > 1) { ts_fail(err, "%s: invalid partial_rotary_factor", p); goto out; }
                rot_pairs = (int)(prf * (double)(hd / 2) + 0.5);
            }
        }
        ly->head_dim = (int)hd;
        ly->n_kv_heads = (int)nkv;
        ly->rope_dim = (int)hd;
        ly->rope_pairs = rot_pairs >= 0 ? rot_pairs : (int)hd / 2;
        ly->kv_source = il;
        if (il >= first_shared) {
            int src = -1;
            for (int j = first_shared - 1; j >= 0; j--) if (g->layers[j].kind == ly->kind) { src = j; break; }
            if (src < 0) { ts_fail(err, "%s: shared-KV layer %d has no earlier layer of its kind", p, il); goto out; }
            ly->kv_source = src;
        }
        bool own_kv = ly->kv_source == il;
        int64_t ff = FF;
        const tensor_entry *gt = find(&L, "layers.%d.mlp.gate_proj.weight", il);
        if (gt && gt->n_dims == 2 && gt->type != TS_I8) ff = gt->ne[1];    /* per-layer widths follow the tensors */
        ly->ffn_dim = (int)ff;
        int64_t qr = NH * hd, kvr = nkv * hd;
        if (attach_vector(&L, &ly->attn_norm, "layers.%d.input_layernorm.weight", il, H, plus, true, err)) goto out;
        if (gemma) {
            if (attach_vector(&L, &ly->post_attn_norm, "layers.%d.post_attention_layernorm.weight", il, H, plus, true, err)) goto out;
            if (attach_vector(&L, &ly->ffn_norm, "layers.%d.pre_feedforward_layernorm.weight", il, H, plus, true, err)) goto out;
            if (attach_vector(&L, &ly->post_ffn_norm, "layers.%d.post_feedforward_layernorm.weight", il, H, plus, true, err)) goto out;
        } else {
            /* Llama's "post_attention_layernorm" is the norm before the MLP */
            if (attach_vector(&L, &ly->ffn_norm, "layers.%d.post_attention_layernorm.weight", il, H, plus, true, err)) goto out;
        }
        if (fam != FAM_LLAMA) {
            if (attach_vector(&L, &ly->q_norm, "layers.%d.self_attn.q_norm.weight", il, hd, plus, true, err)) goto out;
            if (attach_vector(&L, &ly->k_norm, "layers.%d.self_attn.k_norm.weight", il, hd, plus, own_kv, err)) goto out;
        }
        if (attach_weight(&L, &ly->wq, "layers.%d.self_attn.q_proj.weight", il, qr, H, true, err)) goto out;
        if (attach_weight(&L, &ly->wk, "layers.%d.self_attn.k_proj.weight", il, kvr, H, own_kv, err)) goto out;
        bool v_required = own_kv && !(fam == FAM_GEMMA4 && k_eq_v && !sliding);
        if (attach_weight(&L, &ly->wv, "layers.%d.self_attn.v_proj.weight", il, kvr, H, v_required, err)) goto out;
        ly->v_from_k = own_kv && !ly->wv.data;
        if (attach_weight(&L, &ly->wo, "layers.%d.self_attn.o_proj.weight", il, H, qr, true, err)) goto out;
        if (attach_weight(&L, &ly->w_gate, "layers.%d.mlp.gate_proj.weight", il, ff, H, true, err)) goto out;
        if (attach_weight(&L, &ly->w_up, "layers.%d.mlp.up_proj.weight", il, ff, H, true, err)) goto out;
        if (attach_weight(&L, &ly->w_down, "layers.%d.mlp.down_proj.weight", il, H, ff, true, err)) goto out;
        if (fam == FAM_GEMMA4) {
            const float *scalar = NULL;
            if (attach_vector(&L, &scalar, "layers.%d.layer_scalar", il, 1, 0, false, err)) goto out;
            if (scalar) ly->output_scale = scalar[0];
            if (ple > 0) {
                if (attach_weight(&L, &ly->ple_gate, "layers.%d.per_layer_input_gate.weight", il, ple, H, true, err)) goto out;
                if (attach_weight(&L, &ly->ple_proj, "layers.%d.per_layer_projection.weight", il, H, ple, true, err)) goto out;
                if (attach_vector(&L, &ly->ple_post_norm, "layers.%d.post_per_layer_input_norm.weight", il, H, 0, true, err)) goto out;
            }
        }
        weight *mats[] = { &ly->wq, &ly->wk, &ly->wv, &ly->wo, &ly->w_gate, &ly->w_up, &ly->w_down };
        for (size_t i = 0; i < sizeof mats / sizeof mats[0]; i++)
            if (quantize_weight(&L, mats[i], err)) goto out;
    }
    model_note(m, "attn_q/attn_k: used as stored (safetensors rows are in Hugging Face order)");
    model_note(m, L.norm_plus_one ? "norms: 1 + w (Hugging Face Gemma convention, the 1 added at load)"
                  : pack && fam == FAM_GEMMA3 ? "norms: used as w (the pack stores 1 + w)" : "norms: used as w");
    if (pack && gemma) model_note(m, "embedding: used as stored (the pack stores it multiplied by sqrt(hidden)); lm_head packed separately");
    if (fam == FAM_GEMMA3) model_note(m, "attention scale: query_pre_attn_scalar^-0.5 = %g", 1.0 / sqrt(qpas));
    if (pos_scale != 1.0f)
        model_note(m, "rope: linear scaling x%g on %s", (double)pos_scale,
                   fam == FAM_GEMMA3 && has_local_base ? "full-attention layers (a local base is stated)" : "every layer");
    if (quant) model_note(m, "weights: matrices quantized to %s at load", quant);
    else if (pack)
        model_note(m, "weights: q4nx pack, %d tensors in tiles (32x256) and %d in quarter tiles "
                   "(16x128) repacked losslessly to Q4NX (%zu bytes, %.4f bytes per weight); the rest used in place",
                   L.n_tiled[Q4NX_TILE], L.n_tiled[Q4NX_QUARTER], L.q4nx_bytes,
                   L.q4nx_weights ? (double)L.q4nx_bytes / (double)L.q4nx_weights : 0.0);
    else model_note(m, "weights: used in place from the safetensors mmap");
    rc = 0;
out:
    json_free(root);
    return rc;
}
