/* Hugging Face folder -> hyper-parameters + a tensor source for the geometry builder. The
 * container reader of safetensors folders and FastFlowLM q4nx packs: config.json's fields (SPEC 1.5
 * and 4; every field read is recorded, the ones known to change the computation that the engine
 * lacks are refused by name, the rest listed in --info), the family's Hugging Face tensor names,
 * and the folder conventions: safetensors rows are in HF order (no Q/K permutation), float weights
 * are used in place from the mmap, and Gemma 2/3 norms scale by (1 + w): the 1 is added here, once,
 * into owned f32 copies, so the forward always multiplies by w. */
#include "load/model.h"
#include "load/build.h"
#include "load/rope.h"
#include "io/json.h"
#include "io/file.h"
#include "io/safetensors.h"
#include "io/q4nx.h"
#include "kernels/types.h"
#include "text/tokenizer_json.h"
#include "text/spm_model.h"
#include "text/tokenizer_config.h"
#include "core/error.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ---- config.json, with a record of what was read ---- */

typedef struct config_reader {
    const json_value *c;       /* the text model's config (text_config when nested) */
    const json_value *root;
    bool *read;                /* per member of c */
    const char *path;
} config_reader;

static const json_value *cfg(config_reader *R, const char *key) {
    for (size_t i = 0; i < R->c->n; i++)
        if (!strcmp(R->c->keys[i], key)) { R->read[i] = true; return &R->c->items[i]; }
    return NULL;
}

static bool cfg_present(config_reader *R, const char *key) {
    const json_value *v = cfg(R, key);
    return v && v->type != JSON_NULL;
}

static double cfg_num(config_reader *R, const char *key, double def) {
    const json_value *v = cfg(R, key);
    return v && v->type == JSON_NUMBER ? v->number : def;
}

static int64_t cfg_int(config_reader *R, const char *key, int64_t def) {
    const json_value *v = cfg(R, key);
    if (!v || v->type != JSON_NUMBER) return def;
    if (v->is_integer) return v->integer;
    return v->number == floor(v->number) && fabs(v->number) < 9e15 ? (int64_t)v->number : def;
}

static bool cfg_bool(config_reader *R, const char *key, bool def) {
    const json_value *v = cfg(R, key);
    return v && v->type == JSON_BOOL ? v->boolean : def;
}

static const char *cfg_str(config_reader *R, const char *key) {
    const json_value *v = cfg(R, key);
    return v && v->type == JSON_STRING ? v->str : NULL;
}

/* Fields that change the computation in ways the engine does not implement: refused when set
 * (to anything but null, false or 0). */
static const struct { const char *key, *why; } REFUSED_FIELDS[] = {
    { "quantization_config", "quantized checkpoints (GPTQ, AWQ, bitsandbytes, ...) are not supported" },
    { "n_routed_experts", "DeepSeek-style routed experts are not supported" },
    { "n_shared_experts", "shared experts are not supported" },
    { "shared_expert_intermediate_size", "shared experts are not supported" },
    { "use_mrope", "multimodal RoPE is not supported" },
    { "attention_chunk_size", "chunked attention is not supported" },
    { "kv_lora_rank", "multi-head latent attention is not supported" },
    { "use_parallel_residual", "parallel residual blocks are not supported" },
    { "altup_num_inputs", "Gemma 3n layers are not supported" },
    { "mlp_bias", "MLP biases are not supported" },
};

/* Fields that describe training or packaging, never the computation. */
static const char *const INERT_FIELDS[] = {
    "architectures", "model_type", "torch_dtype", "dtype", "transformers_version", "_name_or_path",
    "use_cache", "initializer_range", "attention_dropout", "attention_bias", "pad_token_id",
    "pretraining_tp", "embd_pdrop", "resid_pdrop", "attn_pdrop", "hidden_dropout", "dropout",
    "router_aux_loss_coef", "output_router_logits", "router_jitter_noise", "cache_implementation",
    "id2label", "label2id", "auto_map", "is_decoder", "tokenizer_class", "sep_token_id",
    "decoder_start_token_id", "return_dict", "output_attentions", "output_hidden_states",
    "tie_encoder_decoder", "torchscript", "use_return_dict", "bad_words_ids", "lm_head_bias",
    "interpolate_factor", "full_attn_mod", "max_window_layers", "vocab_size_per_layer_input",
    "final_logit_softcapping", "attn_logit_softcapping", "mlp_only_layers", "decoder_sparse_step",
};

static int check_fields(config_reader *R, ts_model *m, ts_error *err) {
    for (size_t i = 0; i < sizeof REFUSED_FIELDS / sizeof REFUSED_FIELDS[0]; i++) {
        const json_value *v = cfg(R, REFUSED_FIELDS[i].key);
        if (!v) v = json_get(R->root, REFUSED_FIELDS[i].key);
        if (!v || v->type == JSON_NULL || (v->type == JSON_BOOL && !v->boolean) ||
            (v->type == JSON_NUMBER && v->number == 0)) continue;
        return ts_fail(err, "%s: config field '%s': %s", R->path, REFUSED_FIELDS[i].key, REFUSED_FIELDS[i].why);
    }
    char unread[400] = "";
    int n = 0;
    for (size_t i = 0; i < R->c->n; i++) {
        if (R->read[i]) continue;
        bool inert = false;
        for (size_t j = 0; j < sizeof INERT_FIELDS / sizeof INERT_FIELDS[0] && !inert; j++)
            inert = !strcmp(R->c->keys[i], INERT_FIELDS[j]);
        if (inert) continue;
        size_t len = strlen(unread);
        if (len < sizeof unread - 64) snprintf(unread + len, sizeof unread - len, "%s%s", n ? ", " : "", R->c->keys[i]);
        n++;
    }
    if (n) model_note(m, "config fields not used (not known to change the computation): %s", unread);
    return 0;
}

/* The numeric fields the engine reads, with the values that make sense: a field present with
 * anything else (another type, NaN, out of range) is refused by name. null counts as absent. */
static const struct { const char *key; double lo, hi; bool integer, lo_open; } NUMERIC_FIELDS[] = {
    { "hidden_size", 1, 1 << 20, true }, { "num_hidden_layers", 1, HP_MAX_LAYERS, true },
    { "num_attention_heads", 1, 4096, true }, { "num_key_value_heads", 1, 4096, true },
    { "vocab_size", 1, 1 << 24, true }, { "intermediate_size", 1, 1 << 24, true },
    { "head_dim", 2, 4096, true }, { "max_position_embeddings", 1, 1 << 30, true },
    { "rms_norm_eps", 0, 1, false, true }, { "rope_theta", 0, 1e12, false, true },
    { "rope_local_base_freq", 0, 1e12, false, true }, { "partial_rotary_factor", 0, 1, false, true },
    { "sliding_window", 0, 1 << 30, true }, { "sliding_window_pattern", 1, 4096, true },
    { "query_pre_attn_scalar", 0, 1e9, false, true },
    { "final_logit_softcapping", 0, 1e9 }, { "attn_logit_softcapping", 0, 1e9 },
    { "embedding_multiplier", 0, 1e9, false, true }, { "residual_multiplier", 0, 1e9, false, true },
    { "attention_multiplier", 0, 1e9, false, true }, { "logits_scaling", 0, 1e9, false, true },
    { "num_experts", 0, 4096, true }, { "num_local_experts", 0, 4096, true },
    { "num_experts_per_tok", 0, 4096, true }, { "top_k_experts", 0, 4096, true },
    { "experts_per_token", 0, 4096, true }, { "moe_intermediate_size", 1, 1 << 24, true },
    { "global_head_dim", 2, 4096, true }, { "num_global_key_value_heads", 1, 4096, true },
    { "num_kv_shared_layers", 0, HP_MAX_LAYERS, true }, { "hidden_size_per_layer_input", 0, 65536, true },
    { "no_rope_layer_interval", 0, 4096, true }, { "original_max_position_embeddings", 1, 1 << 30, true },
};

static int check_numeric_fields(config_reader *R, ts_error *err) {
    for (size_t i = 0; i < sizeof NUMERIC_FIELDS / sizeof NUMERIC_FIELDS[0]; i++) {
        const json_value *v = json_get(R->c, NUMERIC_FIELDS[i].key);
        if (!v || v->type == JSON_NULL) continue;
        double lo = NUMERIC_FIELDS[i].lo, hi = NUMERIC_FIELDS[i].hi;
        bool ok = v->type == JSON_NUMBER && isfinite(v->number) && v->number <= hi &&
                  (NUMERIC_FIELDS[i].lo_open ? v->number > lo : v->number >= lo) &&
                  (!NUMERIC_FIELDS[i].integer || v->number == floor(v->number));
        if (!ok) {
            char shown[48];
            if (v->type == JSON_NUMBER) snprintf(shown, sizeof shown, "%g", v->number);
            else snprintf(shown, sizeof shown, "a %s", v->type == JSON_STRING ? "string" : v->type == JSON_BOOL ? "bool" : "non-number");
            return ts_fail(err, "%s: config field '%s' is %s; expected %s in %s%g, %g]", R->path, NUMERIC_FIELDS[i].key, shown,
                           NUMERIC_FIELDS[i].integer ? "an integer" : "a number", NUMERIC_FIELDS[i].lo_open ? "(" : "[", lo, hi);
        }
    }
    return 0;
}

/* The activation a config names must be the family's. */
static int check_activation(config_reader *R, const arch_desc *a, ts_error *err) {
    const char *keys[] = { "hidden_activation", "hidden_act" };
    for (int i = 0; i < 2; i++) {
        const char *act = cfg_str(R, keys[i]);
        if (!act) continue;
        bool silu = !strcmp(act, "silu") || !strcmp(act, "swish");
        bool gelu_tanh = !strcmp(act, "gelu_pytorch_tanh") || !strcmp(act, "gelu_tanh") || !strcmp(act, "gelu_new");
        if ((a->activation == ACT_SILU && !silu) || (a->activation == ACT_GELU_TANH && !gelu_tanh))
            return ts_fail(err, "%s: %s '%s' is not the activation this engine runs for %s", R->path, keys[i], act, a->name);
    }
    return 0;
}

/* ---- RoPE: rope_theta + rope_scaling (transformers 4) or rope_parameters (transformers 5) ---- */

static int read_float_list(ts_model *m, const json_value *v, const float **out, int *n) {
    if (!v || v->type != JSON_ARRAY || v->n == 0 || v->n > 4096) return -1;
    float *f = model_arena_alloc(&m->arena, v->n * sizeof(float));
    if (!f) return -1;
    for (size_t i = 0; i < v->n; i++) {
        if (v->items[i].type != JSON_NUMBER) return -1;
        f[i] = (float)v->items[i].number;
    }
    *out = f;
    *n = (int)v->n;
    return 0;
}

/* One rope_scaling / rope_parameters object into hp->scaling (HF _compute_*_parameters). */
static int read_rope_object(config_reader *R, ts_model *m, const json_value *rs, model_hparams *hp, ts_error *err) {
    rope_scaling *s = &hp->scaling;
    const char *rt = json_get_str(rs, "rope_type");
    if (!rt) rt = json_get_str(rs, "type");
    if (!rt || !strcmp(rt, "default") || !strcmp(rt, "proportional")) return 0;
    double factor = json_get_num(rs, "factor", 1.0);
    int64_t orig = json_get_int(rs, "original_max_position_embeddings", 0);
    if (orig <= 0) orig = cfg_int(R, "original_max_position_embeddings", 0);
    s->factor = factor;
    s->orig_ctx = (int)orig;
    if (!strcmp(rt, "linear")) {
        if (!(factor > 0)) return ts_fail(err, "%s: rope scaling needs a positive factor", R->path);
        s->kind = ROPE_LINEAR;
        return 0;
    }
    if (!strcmp(rt, "yarn")) {
        if (!(factor > 0) || orig <= 0) return ts_fail(err, "%s: YaRN needs factor and original_max_position_embeddings", R->path);
        s->kind = ROPE_YARN;
        s->beta_fast = json_get_num(rs, "beta_fast", 32.0);
        s->beta_slow = json_get_num(rs, "beta_slow", 1.0);
        s->truncate = json_get_bool(rs, "truncate", true);
        double ms = json_get_num(rs, "mscale", 0.0), ms_all = json_get_num(rs, "mscale_all_dim", 0.0);
        const json_value *af = json_get(rs, "attention_factor");
        s->mscale = af && af->type == JSON_NUMBER ? af->number
                  : ms != 0 && ms_all != 0 ? rope_yarn_get_mscale(factor, ms) / rope_yarn_get_mscale(factor, ms_all)
                  : rope_yarn_get_mscale(factor, 1.0);
        s->temp_beta = json_get_num(rs, "llama_4_scaling_beta", 0.0);
        if (json_get(rs, "extrapolation_factor") && json_get_num(rs, "extrapolation_factor", 1.0) != 1.0)
            return ts_fail(err, "%s: a YaRN extrapolation_factor other than 1 is not supported", R->path);
        return 0;
    }
    if (!strcmp(rt, "llama3")) {
        s->kind = ROPE_LLAMA3;
        s->low_freq_factor = json_get_num(rs, "low_freq_factor", 1.0);
        s->high_freq_factor = json_get_num(rs, "high_freq_factor", 4.0);
        if (!(factor > 0) || orig <= 0 || !(s->high_freq_factor > s->low_freq_factor) || !(s->low_freq_factor > 0))
            return ts_fail(err, "%s: llama3 rope scaling needs factor, low/high_freq_factor and original_max_position_embeddings", R->path);
        return 0;
    }
    if (!strcmp(rt, "longrope") || !strcmp(rt, "su")) {
        s->kind = ROPE_LONGROPE;
        int ns = 0, nl = 0;
        if (read_float_list(m, json_get(rs, "short_factor"), &s->short_factor, &ns) ||
            read_float_list(m, json_get(rs, "long_factor"), &s->long_factor, &nl) || ns != nl)
            return ts_fail(err, "%s: LongRoPE needs short_factor and long_factor lists of one length", R->path);
        s->n_factors = ns;
        if (orig <= 0) return ts_fail(err, "%s: LongRoPE needs original_max_position_embeddings", R->path);
        s->long_round = 1;
        /* HF: the scale is max_position_embeddings over the original context; the attention
         * factor sqrt(1 + ln s / ln original) unless the config states one */
        double scale = (double)hp->n_ctx_train / orig;
        const json_value *af = json_get(rs, "attention_factor");
        s->mscale = af && af->type == JSON_NUMBER ? af->number
                  : scale <= 1.0 ? 1.0 : sqrt(1.0 + log(scale) / log((double)orig));
        return 0;
    }
    return ts_fail(err, "%s: rope scaling type '%s' is not supported", R->path, rt);
}

/* ---- the tensor source ---- */

typedef struct hf_reader {
    ts_model *m;
    const arch_desc *a;
    const tensor_dir *dir;
    const char *prefix;        /* "model." or "model.language_model." */
    const char *quant;         /* NULL, "q8_0" or "q4_0": quantize matrices at load */
    bool norm_plus_one;        /* Gemma 2/3 safetensors: RMSNorm scales by (1 + w) */
    bool q4nx_pack;            /* a FastFlowLM pack: I8 tensors are 4-bit tiles (SPEC 5) */
    bool tied;                 /* lm_head.weight may be left (the head is the embedding) */
    const char *weights_file;  /* the pack's model.q4nx, for messages */
    int n_tiled[2];            /* q4nx tensors per tile kind (enum q4nx_kind) */
    int64_t q4nx_weights;      /* weights and bytes of the repacked matrices */
    size_t q4nx_bytes;
} hf_reader;

static const char *hf_role_name(const tensor_source *s, int role, int layer, int expert, char *buf, size_t cap) {
    const hf_reader *L = s->ctx;
    const char *fmt = L->a->hf->role[role];
    if (!fmt) return NULL;
    char name[256];
    snprintf(name, sizeof name, fmt, layer, expert);
    snprintf(buf, cap, "%s%s", L->prefix, name);
    if (!tensor_dir_find(L->dir, buf) && tensor_dir_find(L->dir, name)) snprintf(buf, cap, "%s", name);
    return buf;
}

/* A pack's I8 tile array -> Q4NX rows in the model arena (the tile kind named by the declared
 * width, see io/q4nx.h); one layout note per tensor for --info. */
static int attach_q4nx(hf_reader *L, weight *w, const tensor_entry *t, int64_t rows, int64_t cols,
                       ts_error *err) {
    q4nx_layout lay;
    const char *file = L->weights_file;
    if (q4nx_layout_of(file, t, rows, cols, &lay, err) != 0) return -1;
    size_t bytes = q4nx_repacked_bytes(rows, cols);
    uint8_t *data = model_arena_alloc(&L->m->arena, bytes);
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

/* --quant: the matrix re-encoded into a block type at load (rows whose width is not whole blocks
 * stay as they are). */
static int quantize_weight(hf_reader *L, weight *w, ts_error *err) {
    int target = !strcmp(L->quant, "q8_0") ? TS_Q8_0 : TS_Q4_0;
    const type_traits *src = type_get(w->type), *dst = type_get(target);
    size_t rb = type_row_bytes(target, w->cols);
    if (rb == 0) return 0;
    uint8_t *q = model_arena_alloc(&L->m->arena, rb * (size_t)w->rows);
    float *row = malloc((size_t)w->cols * sizeof(float));
    if (!q || !row) { free(row); return ts_fail(err, "%s: out of memory quantizing '%s'", w->name, w->name); }
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

static int hf_matrix(const tensor_source *s, const tensor_entry *t, int role, int64_t rows, int64_t cols,
                     weight *w, ts_error *err) {
    hf_reader *L = s->ctx;
    if (L->q4nx_pack && t->type == TS_I8) return attach_q4nx(L, w, t, rows, cols, err);
    if (t->type != TS_F32 && t->type != TS_F16 && t->type != TS_BF16)
        return ts_fail(err, "%s: tensor '%s' has dtype %s (expected F32, F16 or BF16)", s->path,
                       t->name, safetensors_type_name(t->type));
    int64_t n_rows = t->ne[1] * (t->n_dims == 3 ? t->ne[2] : 1);   /* stacked experts: rows of all of them */
    if (t->n_dims < 2 || t->n_dims > 3 || t->ne[0] != cols || (rows >= 0 && n_rows != rows))
        return ts_fail(err, "%s: tensor '%s' has %lld rows of %lld, expected %lld of %lld", s->path,
                       t->name, (long long)n_rows, (long long)t->ne[0], (long long)rows, (long long)cols);
    w->type = t->type;
    w->rows = n_rows;
    w->cols = cols;
    w->row_bytes = type_row_bytes(t->type, cols);
    w->data = t->data;
    w->name = t->name;
    /* --quant re-encodes the attention and feed-forward matrices, not the embedding tables */
    bool projection = (role >= ROLE_ATTN_Q && role <= ROLE_FFN_DOWN) || (role >= ROLE_EXP_GATE && role <= ROLE_EXP_DOWN);
    if (L->quant && projection) return quantize_weight(L, w, err);
    return 0;
}

static int hf_vector(const tensor_source *s, const tensor_entry *t, int64_t n, bool norm,
                     const float **out, ts_error *err) {
    const hf_reader *L = s->ctx;
    if (t->type != TS_F32 && t->type != TS_F16 && t->type != TS_BF16)
        return ts_fail(err, "%s: tensor '%s' must hold %lld float values", s->path, t->name, (long long)n);
    float *v = model_arena_alloc(&L->m->arena, (size_t)n * sizeof(float));
    if (!v) return ts_fail(err, "%s: out of memory", s->path);
    type_get(t->type)->dequant_row(t->data, v, n);
    if (norm && L->norm_plus_one)
        for (int64_t i = 0; i < n; i++) v[i] += 1.0f;
    *out = v;
    return 0;
}

static const char *hf_ignorable(const tensor_source *s, const char *name) {
    if (strstr(name, "rotary_emb.inv_freq")) return "RoPE frequencies are computed from the config";
    if (!strncmp(name, "vision_tower.", 13) || !strncmp(name, "model.vision_tower.", 19) ||
        !strncmp(name, "multi_modal_projector.", 22) || !strncmp(name, "model.multi_modal_projector.", 28))
        return "the vision encoder: text-only use";
    return NULL;
}

/* ---- the folder ---- */

/* The tokenizer of a folder: tokenizer.json, else tokenizer.model. Missing: no tokenizer. */
static int load_folder_tokenizer(ts_model *m, const char *dir, ts_error *err) {
    char p[1200];
    snprintf(p, sizeof p, "%s/tokenizer.json", dir);
    if (access(p, R_OK) == 0) {
        if (tokenizer_json_read(p, &m->voc, err) != 0) return -1;
        m->has_vocab = true;
        return 0;
    }
    snprintf(p, sizeof p, "%s/tokenizer.model", dir);
    if (access(p, R_OK) == 0) {
        if (spm_model_read(p, &m->voc, err) != 0) return -1;
        m->has_vocab = true;
    }
    return 0;
}

/* The config's token ids win over the tokenizer's defaults; then tokenizer_config.json's facts
 * (chat template, BOS when config.json does not say, add_bos). */
static int apply_token_facts(ts_model *m, const char *dir, config_reader *R, ts_error *err) {
    const json_value *b = cfg(R, "bos_token_id");
    if (!b) b = json_get(R->root, "bos_token_id");
    const json_value *e = cfg(R, "eos_token_id");
    if (!e) e = json_get(R->root, "eos_token_id");
    if (!m->has_vocab) return 0;
    if (b && b->type == JSON_NUMBER && b->is_integer && b->integer >= 0 && b->integer < m->voc.n) m->voc.bos = (int32_t)b->integer;
    /* eos_token_id: one id, or a list of ids that all end generation */
    if (e && e->type == JSON_NUMBER && e->is_integer && e->integer >= 0 && e->integer < m->voc.n)
        m->voc.eos = (int32_t)e->integer;
    for (size_t i = 0; e && e->type == JSON_ARRAY && i < e->n && m->n_eog < 8; i++)
        if (e->items[i].is_integer && e->items[i].integer >= 0 && e->items[i].integer < m->voc.n)
            m->eog[m->n_eog++] = (int32_t)e->items[i].integer;
    tokenizer_config tc;
    if (tokenizer_config_read(dir, &tc, err) != 0) return -1;
    if (tc.chat_template && !m->chat_template) {
        m->chat_template = model_arena_alloc(&m->arena, strlen(tc.chat_template) + 1);
        if (m->chat_template) strcpy(m->chat_template, tc.chat_template);
    }
    if (!(b && b->type == JSON_NUMBER)) {
        if (tc.bos.text) {
            int id = vocab_find(&m->voc, tc.bos.text, strlen(tc.bos.text));
            if (id >= 0) { m->voc.bos = id; model_note(m, "bos: '%s' (id %d) from tokenizer_config.json", tc.bos.text, id); }
        } else if (tc.bos.null) {
            m->voc.bos = -1;
        }
    }
    if (tc.has_add_bos) {
        m->voc.add_bos = tc.add_bos;
        model_note(m, "add_bos: %s from tokenizer_config.json", tc.add_bos ? "true" : "false");
    }
    tokenizer_config_free(&tc);
    return 0;
}

static int read_hparams(config_reader *R, ts_model *m, const arch_desc *a, model_hparams *hp, ts_error *err) {
    memset(hp, 0, sizeof *hp);
    hp->hf = true;
    hp->scaling.mscale = 1.0;
    if (check_numeric_fields(R, err)) return -1;
    int64_t H = cfg_int(R, "hidden_size", 0), NL = cfg_int(R, "num_hidden_layers", 0);
    int64_t NH = cfg_int(R, "num_attention_heads", 0), NKV = cfg_int(R, "num_key_value_heads", NH);
    int64_t V = cfg_int(R, "vocab_size", 0), FF = cfg_int(R, "intermediate_size", 0);
    if (H <= 0 || H > (1 << 20) || NL <= 0 || NL > HP_MAX_LAYERS || NH <= 0 || NH > 4096 || NKV <= 0 ||
        NKV > NH || NH % NKV || V <= 0 || V > (1 << 24) || FF <= 0 || FF > (1 << 24))
        return ts_fail(err, "%s: missing or invalid sizes (hidden_size, num_hidden_layers, heads, vocab_size, intermediate_size)", R->path);
    int64_t HD = cfg_present(R, "head_dim") ? cfg_int(R, "head_dim", 0) : H / NH;
    if (HD <= 0 || HD > 4096 || HD % 2) return ts_fail(err, "%s: invalid head_dim %lld", R->path, (long long)HD);
    hp->hidden = (int)H;
    hp->n_layers = (int)NL;
    hp->n_heads = (int)NH;
    hp->n_kv_heads = (int)NKV;
    hp->n_vocab = (int)V;
    hp->ffn_dim = (int)FF;
    hp->head_dim = (int)HD;
    int64_t ctx = cfg_int(R, "max_position_embeddings", 2048);
    hp->n_ctx_train = ctx > 0 && ctx < (1 << 24) ? (int)ctx : 2048;
    hp->norm_eps = (float)cfg_num(R, "rms_norm_eps", 1e-6);
    if (check_activation(R, a, err)) return -1;

    /* RoPE */
    hp->rope_theta = (float)cfg_num(R, "rope_theta", 10000.0);
    hp->has_theta_swa = cfg_present(R, "rope_local_base_freq");
    hp->rope_theta_swa = (float)cfg_num(R, "rope_local_base_freq", 10000.0);
    double prf = cfg_num(R, "partial_rotary_factor", 1.0);
    if (!(prf > 0 && prf <= 1)) return ts_fail(err, "%s: invalid partial_rotary_factor", R->path);
    if (prf < 1) hp->rope_dim = (int)(HD * prf);
    const json_value *rs = cfg(R, "rope_scaling");
    const json_value *rp = cfg(R, "rope_parameters");
    if (rs && rs->type == JSON_OBJECT && read_rope_object(R, m, rs, hp, err)) return -1;
    if (rp && rp->type == JSON_OBJECT) {
        const json_value *sl = json_get(rp, "sliding_attention"), *full = json_get(rp, "full_attention");
        if (sl || full) {   /* Gemma 4: parameters per layer kind */
            if (sl) {
                hp->has_theta_swa = json_get(sl, "rope_theta") != NULL;
                hp->rope_theta_swa = (float)json_get_num(sl, "rope_theta", hp->rope_theta);
                hp->rope_fraction_swa = (float)json_get_num(sl, "partial_rotary_factor", 1.0);
            }
            if (full) {
                hp->rope_theta = (float)json_get_num(full, "rope_theta", hp->rope_theta);
                hp->rope_fraction = (float)json_get_num(full, "partial_rotary_factor", 1.0);
                if (read_rope_object(R, m, full, hp, err)) return -1;
            }
            if (!(hp->rope_fraction >= 0 && hp->rope_fraction <= 1) || !(hp->rope_fraction_swa >= 0 && hp->rope_fraction_swa <= 1))
                return ts_fail(err, "%s: invalid partial_rotary_factor", R->path);
        } else {
            hp->rope_theta = (float)json_get_num(rp, "rope_theta", hp->rope_theta);
            if (read_rope_object(R, m, rp, hp, err)) return -1;
        }
    }

    /* layer kinds */
    if (cfg_bool(R, "use_sliding_window", false) && cfg_present(R, "max_window_layers"))
        return ts_fail(err, "%s: use_sliding_window with max_window_layers (sliding layers by depth) is not supported", R->path);
    if (cfg_present(R, "sliding_window") && cfg_bool(R, "use_sliding_window", true))
        hp->window = (int)cfg_int(R, "sliding_window", 0);
    if (hp->window < 0 || hp->window > (1 << 24)) return ts_fail(err, "%s: invalid sliding_window", R->path);
    hp->sliding_period = (int)cfg_int(R, "sliding_window_pattern", 0);
    if (cfg_present(R, "sliding_window_pattern") && hp->sliding_period < 1)
        return ts_fail(err, "%s: invalid sliding_window_pattern", R->path);
    cfg(R, "sliding_window_size");   /* Gemma 2 repeats sliding_window under this name */
    const json_value *types = cfg(R, "layer_types");
    if (types && types->type != JSON_NULL) {
        if (types->type != JSON_ARRAY || (int64_t)types->n < NL) return ts_fail(err, "%s: layer_types must list every layer", R->path);
        bool *sl = model_arena_alloc(&m->arena, (size_t)NL);
        if (!sl) return ts_fail(err, "%s: out of memory", R->path);
        for (int il = 0; il < NL; il++) {
            const json_value *t = &types->items[il];
            if (t->type != JSON_STRING) return ts_fail(err, "%s: layer_types[%d] is not a string", R->path, il);
            sl[il] = !strcmp(t->str, "sliding_attention");
            if (!sl[il] && strcmp(t->str, "full_attention")) return ts_fail(err, "%s: unknown layer type '%s'", R->path, t->str);
        }
        hp->layer_sliding = sl;
        for (int il = 0; il < NL; il++)
            if (sl[il] && hp->window <= 0) return ts_fail(err, "%s: layer %d slides but sliding_window is not set", R->path, il);
    }
    /* Gemma 4: full layers' own head size and KV heads; K = V on full layers */
    if (cfg_present(R, "global_head_dim")) {
        hp->head_dim_swa = (int)HD;
        hp->head_dim = (int)cfg_int(R, "global_head_dim", HD);
        if (hp->head_dim <= 0 || hp->head_dim > 4096 || hp->head_dim % 2) return ts_fail(err, "%s: invalid global_head_dim", R->path);
    }
    hp->k_eq_v = cfg_bool(R, "attention_k_eq_v", false);
    if (hp->k_eq_v && cfg_present(R, "num_global_key_value_heads"))
        hp->n_kv_heads_full = (int)cfg_int(R, "num_global_key_value_heads", NKV);
    else cfg(R, "num_global_key_value_heads");
    if (hp->n_kv_heads_full < 0 || (hp->n_kv_heads_full > 0 && NH % hp->n_kv_heads_full))
        return ts_fail(err, "%s: invalid num_global_key_value_heads", R->path);
    int64_t shared = cfg_int(R, "num_kv_shared_layers", 0);
    if (shared < 0 || shared >= NL) return ts_fail(err, "%s: invalid num_kv_shared_layers", R->path);
    hp->n_shared_kv = (int)shared;
    int64_t ple = cfg_int(R, "hidden_size_per_layer_input", 0);
    if (ple < 0 || ple > 65536) return ts_fail(err, "%s: invalid hidden_size_per_layer_input", R->path);
    hp->ple_dim = (int)ple;
    hp->query_pre_attn_scalar = cfg_num(R, "query_pre_attn_scalar", 0.0);
    if (cfg_present(R, "query_pre_attn_scalar") && !(hp->query_pre_attn_scalar > 0))
        return ts_fail(err, "%s: invalid query_pre_attn_scalar", R->path);
    /* SmolLM3: no_rope_layers[i] == 1 means layer i uses RoPE (the default list leaves out every
     * no_rope_layer_interval-th layer) */
    const json_value *nope = cfg(R, "no_rope_layers");
    int64_t interval = cfg_int(R, "no_rope_layer_interval", 0);
    if ((nope && nope->type != JSON_NULL) || interval > 0) {
        bool *off = model_arena_alloc(&m->arena, (size_t)NL);
        if (!off) return ts_fail(err, "%s: out of memory", R->path);
        if (nope && nope->type == JSON_ARRAY) {
            if ((int64_t)nope->n != NL) return ts_fail(err, "%s: no_rope_layers must list every layer", R->path);
            for (int il = 0; il < NL; il++) {
                const json_value *x = &nope->items[il];
                if (x->type != JSON_NUMBER || (x->number != 0 && x->number != 1))
                    return ts_fail(err, "%s: no_rope_layers[%d] must be 0 or 1", R->path, il);
                off[il] = x->number == 0;
            }
        } else if (interval > 0) {
            for (int il = 0; il < NL; il++) off[il] = (il + 1) % interval == 0;
        } else {
            return ts_fail(err, "%s: no_rope_layers must be a list", R->path);
        }
        hp->layer_nope = off;
    }
    /* mixture of experts: which layers have one follows the tensors (a router) */
    hp->n_experts = (int)cfg_int(R, "num_local_experts", cfg_int(R, "num_experts", 0));
    hp->n_experts_used = (int)cfg_int(R, "num_experts_per_tok", cfg_int(R, "top_k_experts", cfg_int(R, "experts_per_token", 0)));
    hp->expert_ffn_dim = (int)cfg_int(R, "moe_intermediate_size", FF);
    cfg(R, "enable_moe_block");
    const json_value *ntp = cfg(R, "norm_topk_prob");
    hp->gating_renorm = ntp && ntp->type == JSON_BOOL ? ntp->boolean : -1;
    if (hp->n_experts < 0 || hp->n_experts > 4096 || hp->n_experts_used < 0 || hp->n_experts_used > hp->n_experts)
        return ts_fail(err, "%s: invalid expert counts (%d experts, %d per token)", R->path, hp->n_experts, hp->n_experts_used);
    if (cfg_present(R, "swiglu_limit") && cfg_num(R, "swiglu_limit", 7.0) != 7.0)
        return ts_fail(err, "%s: swiglu_limit %g: only gpt-oss's 7 is supported", R->path, cfg_num(R, "swiglu_limit", 7.0));
    /* Granite's multipliers */
    hp->embed_scale = (float)cfg_num(R, "embedding_multiplier", 0.0);
    hp->residual_scale = (float)cfg_num(R, "residual_multiplier", 0.0);
    hp->attn_scale = (float)cfg_num(R, "attention_multiplier", 0.0);
    hp->logit_scale = (float)cfg_num(R, "logits_scaling", 0.0);
    if (hp->embed_scale < 0 || hp->residual_scale < 0 || hp->attn_scale < 0 || hp->logit_scale < 0)
        return ts_fail(err, "%s: a negative multiplier", R->path);
    hp->final_softcap = (float)cfg_num(R, "final_logit_softcapping", 0.0);
    hp->attn_softcap = (float)cfg_num(R, "attn_logit_softcapping", 0.0);
    if (hp->final_softcap < 0 || hp->attn_softcap < 0) return ts_fail(err, "%s: invalid softcapping", R->path);
    return 0;
}

int load_hf_model(ts_model *m, const char *dir, const char *weights_file, const char *quant,
                  ts_error *err) {
    char p[1200];
    snprintf(p, sizeof p, "%s/config.json", dir);
    char *text; size_t len;
    if (file_read(p, &text, &len, err) != 0) return -1;
    json_value *root = NULL;
    ts_error e2;
    int rc = json_parse(text, len, &root, &e2);
    free(text);
    if (rc != 0) return ts_fail(err, "%s: %s", p, e2.msg);
    rc = -1;
    config_reader R = { .root = root, .path = p };
    if (root->type != JSON_OBJECT) { ts_fail(err, "%s: not a JSON object", p); goto out; }
    const json_value *tc = json_get(root, "text_config");
    R.c = tc && tc->type == JSON_OBJECT ? tc : root;
    R.read = calloc(R.c->n ? R.c->n : 1, 1);
    if (!R.read) { ts_fail(err, "%s: out of memory", p); goto out; }
    const char *mt = cfg_str(&R, "model_type");
    if (!mt) mt = json_get_str(root, "model_type");
    const arch_desc *a = mt ? arch_by_hf_model_type(mt) : NULL;
    if (!a) {
        char known[256];
        arch_known_list(known, sizeof known);
        ts_fail(err, "%s: unsupported model_type '%s' (supported families: %s)", p, mt ? mt : "(none)", known);
        goto out;
    }

    if (load_folder_tokenizer(m, dir, err) != 0) goto out;
    if (apply_token_facts(m, dir, &R, err) != 0) goto out;

    /* A FastFlowLM pack: a folder with model.q4nx (a safetensors file of bf16 and 4-bit tiles). */
    char pack_file[1200];
    snprintf(pack_file, sizeof pack_file, "%s/model.q4nx", dir);
    if (!weights_file && access(pack_file, R_OK) == 0) weights_file = pack_file;
    size_t wlen = weights_file ? strlen(weights_file) : 0;
    bool pack = wlen >= 5 && !strcmp(weights_file + wlen - 5, ".q4nx");
    if (pack && quant) { ts_fail(err, "%s: --quant does not apply to a q4nx pack (its matrices are 4-bit already)", weights_file); goto out; }

    model_hparams hp;
    if (read_hparams(&R, m, a, &hp, err) != 0) goto out;
    if (check_fields(&R, m, err) != 0) goto out;

    safetensors *st = NULL;
    if ((weights_file ? safetensors_open(weights_file, &st, err) : safetensors_open_folder(dir, &st, err)) != 0) goto out;
    m->safetensors = st;
    hf_reader L = { .m = m, .a = a, .dir = safetensors_tensors(st), .prefix = "model.", .quant = quant,
                    .q4nx_pack = pack, .weights_file = weights_file,
                    /* packs store Gemma norms with the 1 folded in */
                    .norm_plus_one = a->hf_norm_plus_one && !pack };
    if (!tensor_dir_find(L.dir, "model.embed_tokens.weight") &&
        tensor_dir_find(L.dir, "model.language_model.embed_tokens.weight"))
        L.prefix = "model.language_model.";

    /* the head: tie_word_embeddings, else (absent) what the file holds; Gemma ties by default */
    const json_value *tie_v = cfg(&R, "tie_word_embeddings");
    if (!tie_v) tie_v = json_get(root, "tie_word_embeddings");
    bool has_lm = tensor_dir_find(L.dir, "lm_head.weight") != NULL;
    hp.tie = tie_v && tie_v->type == JSON_BOOL ? (tie_v->boolean ? 1 : 0) : a->hf_tied_by_default ? 1 : -1;
    /* a pack's lm_head is packed from the unscaled embedding: never tied to the pre-scaled one */
    if (pack && a->embed_scale_sqrt) {
        if (!has_lm) { ts_fail(err, "%s: the pack has no lm_head.weight (its embedding is pre-scaled by sqrt(hidden) and cannot serve as the output)", weights_file); goto out; }
        hp.tie = 0;
        hp.embed_scale = 1.0f;     /* stored multiplied by sqrt(hidden) already */
    }
    if (pack && has_lm) hp.tie = 0;
    if (hp.tie == 0 && !has_lm && tie_v) { ts_fail(err, "%s: tie_word_embeddings is false but lm_head.weight is missing", dir); goto out; }

    tensor_source src = { .dir = L.dir, .path = dir, .ctx = &L, .name = hf_role_name, .matrix = hf_matrix,
                          .vector = hf_vector, .ignorable = hf_ignorable };
    if (build_geometry(m, a, &hp, &src, err) != 0) goto out;
    model_note(m, L.norm_plus_one ? "norms: 1 + w (Hugging Face Gemma convention, the 1 added at load)"
                  : pack && a->hf_norm_plus_one ? "norms: used as w (the pack stores 1 + w)" : "norms: used as w");
    if (pack && a->embed_scale_sqrt) model_note(m, "embedding: used as stored (the pack stores it multiplied by sqrt(hidden)); lm_head packed separately");
    if (quant) model_note(m, "weights: matrices quantized to %s at load", quant);
    else if (pack)
        model_note(m, "weights: q4nx pack, %d tensors in tiles (32x256) and %d in quarter tiles "
                   "(16x128) repacked losslessly to Q4NX (%zu bytes, %.4f bytes per weight); the rest used in place",
                   L.n_tiled[Q4NX_TILE], L.n_tiled[Q4NX_QUARTER], L.q4nx_bytes,
                   L.q4nx_weights ? (double)L.q4nx_bytes / (double)L.q4nx_weights : 0.0);
    else model_note(m, "weights: used in place from the safetensors mmap");
    rc = 0;
out:
    free(R.read);
    json_free(root);
    return rc;
}
