/* Hugging Face folder -> hyper-parameters + a tensor source for the geometry builder. The
 * container reader of safetensors folders and FastFlowLM q4nx packs: config.json's fields through
 * the hyper-parameter table (load/hparams.c: every member of the text config, and of the RoPE
 * objects, is a row or refuses the model by name), transformers' rules where they differ from
 * llama.cpp's (YaRN's and LongRoPE's attention factors), the family's Hugging Face tensor names,
 * and the folder conventions: safetensors rows are in HF order (no Q/K permutation), float weights
 * are used in place from the mmap, and Gemma 2/3 norms scale by (1 + w): the 1 is added here, once,
 * into owned f32 copies, so the forward always multiplies by w. */
#include "load/load_hf.h"
#include "load/model_arena.h"
#include "load/build.h"
#include "load/rope.h"
#include "load/hparams.h"
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

/* ---- config.json, through the hyper-parameter table ---- */

typedef struct config_reader {
    const json_value *c;       /* the text model's config (text_config when nested) */
    const json_value *root;
    const char *path;
} config_reader;

/* A member of the text config (or, when the config nests one, of the root), following a dotted
 * path ("rope_scaling.factor"); NULL when absent. */
static const json_value *config_at(const config_reader *R, const char *path) {
    const json_value *v = R->c;
    for (const char *p = path; v && *p; ) {
        const char *dot = strchr(p, '.');
        size_t n = dot ? (size_t)(dot - p) : strlen(p);
        char key[128];
        if (n >= sizeof key || v->type != JSON_OBJECT) return NULL;
        memcpy(key, p, n);
        key[n] = 0;
        const json_value *next = json_get(v, key);
        if (!next && v == R->c && R->root != R->c) next = json_get(R->root, key);
        v = next;
        p = dot ? dot + 1 : p + n;
    }
    return v;
}

static void hf_value(const hparam_source *hs, const char *path, long index, hp_value *out) {
    const json_value *v = config_at(hs->ctx, path);
    memset(out, 0, sizeof *out);
    if (v && index >= 0) v = v->type == JSON_ARRAY && (size_t)index < v->n ? &v->items[index] : NULL;
    if (!v) return;
    switch (v->type) {
    case JSON_NULL: out->kind = HPV_NULL; break;
    case JSON_BOOL: out->kind = HPV_BOOL; out->boolean = v->boolean; break;
    case JSON_NUMBER: out->kind = HPV_NUMBER; out->number = v->number; break;
    case JSON_STRING: out->kind = HPV_STRING; out->str = v->str; out->len = v->len; break;
    case JSON_ARRAY: out->kind = HPV_ARRAY; out->n = v->n; break;
    case JSON_OBJECT: out->kind = HPV_OBJECT; out->n = v->n; break;
    }
}

/* Every member of the text config (and of the objects the table reads member by member) is one
 * the table knows; the others name themselves in the refusal. */
static int check_members(const hparam_source *hs, const json_value *obj, const char *prefix, ts_error *err) {
    for (size_t i = 0; i < obj->n; i++) {
        char path[256];
        snprintf(path, sizeof path, "%s%s", prefix, obj->keys[i]);
        const hparam *r = hparams_find(CONTAINER_HF, path);
        if (!r) return hparams_refuse_unknown(hs, path, err);
        if (r->type == HP_OBJECT && obj->items[i].type == JSON_OBJECT) {
            char sub[260];
            snprintf(sub, sizeof sub, "%s.", path);
            if (check_members(hs, &obj->items[i], sub, err)) return -1;
        }
    }
    return 0;
}

/* RoPE scaling as transformers computes it (_compute_*_parameters): YaRN's attention factor is
 * attention_factor, or mscale / mscale_all_dim, or 0.1 ln s + 1; LongRoPE's is attention_factor or
 * sqrt(1 + ln s / ln original) with s = max_position_embeddings / original. */
static int resolve_rope_scaling(const config_reader *R, model_hparams *hp, ts_error *err) {
    rope_scaling *s = &hp->scaling;
    const bool stated_af = s->attn_factor > 0;
    s->mscale = 1.0;
    s->long_round = 1;
    switch (s->kind) {
    case ROPE_LINEAR:
        if (!(s->factor > 0)) return ts_fail(err, "%s: rope scaling needs a positive factor", R->path);
        return 0;
    case ROPE_YARN:
        if (!(s->factor > 0) || s->orig_ctx <= 0)
            return ts_fail(err, "%s: YaRN needs factor and original_max_position_embeddings", R->path);
        s->mscale = stated_af ? s->attn_factor
                  : s->mscale_stated != 0 && s->mscale_all_dim != 0
                  ? rope_yarn_get_mscale(s->factor, s->mscale_stated) / rope_yarn_get_mscale(s->factor, s->mscale_all_dim)
                  : rope_yarn_get_mscale(s->factor, 1.0);
        return 0;
    case ROPE_LLAMA3:
        if (!(s->factor > 0) || s->orig_ctx <= 0 || !(s->high_freq_factor > s->low_freq_factor) || !(s->low_freq_factor > 0))
            return ts_fail(err, "%s: llama3 rope scaling needs factor, low/high_freq_factor and original_max_position_embeddings", R->path);
        return 0;
    case ROPE_LONGROPE: {
        if (!s->short_factor || !s->long_factor || s->n_factors != s->n_long_factors)
            return ts_fail(err, "%s: LongRoPE needs short_factor and long_factor lists of one length", R->path);
        if (s->orig_ctx <= 0) return ts_fail(err, "%s: LongRoPE needs original_max_position_embeddings", R->path);
        int ctx = hp->n_ctx_train > 0 && hp->n_ctx_train < (1 << 24) ? hp->n_ctx_train : 2048;
        double scale = (double)ctx / s->orig_ctx;
        s->mscale = stated_af ? s->attn_factor : scale <= 1.0 ? 1.0 : sqrt(1.0 + log(scale) / log((double)s->orig_ctx));
        return 0;
    }
    default:
        return 0;
    }
}

static int read_hparams(config_reader *R, ts_model *m, model_hparams *hp, ts_error *err) {
    hparam_source hs = { .container = CONTAINER_HF, .path = R->path, .what = "config field", .prefix = "", .ctx = R,
                         .get = hf_value };
    if (check_members(&hs, R->c, "", err) != 0) return -1;
    if (hparams_read(&hs, m, hp, err) != 0) return -1;
    if (hp->hidden <= 0 || hp->n_layers <= 0 || (hp->n_heads <= 0 && !hp->layer_n_heads))
        return ts_fail(err, "%s: missing sizes (hidden_size, num_hidden_layers, num_attention_heads)", R->path);
    return resolve_rope_scaling(R, hp, err);
}

/* ---- the tensor source ---- */

typedef struct hf_reader {
    ts_model *m;
    const arch_desc *a;
    const tensor_dir *dir;
    const char *prefix;        /* "model." or "model.language_model." */
    const char *quant;         /* NULL, "q8_0" or "q4_0": quantize matrices at load */
    bool norm_plus_one;        /* Gemma 2/3 safetensors: RMSNorm scales by (1 + w) */
    bool q4nx_pack;            /* a FastFlowLM pack: I8 tensors are 4-bit tiles (io/q4nx.h) */
    bool tied;                 /* lm_head.weight may be left (the head is the embedding) */
    bool has_mtp;              /* the config states multi-token-prediction blocks (mtp.* tensors, or
                                  layers after the model's own: GLM's NextN) */
    int n_layers;              /* the model's own layers */
    const char *weights_file;  /* the pack's model.q4nx, for messages */
    int n_tiled[2];            /* q4nx tensors per tile kind (enum q4nx_kind) */
    int64_t q4nx_weights;      /* weights and bytes of the repacked matrices */
    size_t q4nx_bytes;
} hf_reader;

static const char *hf_role_name(const tensor_source *s, int role, int layer, int expert, char *buf, size_t cap) {
    const hf_reader *L = s->ctx;
    const char *fmt = arch_tensor_name(s->rules, CONTAINER_HF, role);
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
    const hf_reader *L = s->ctx;
    if (L->has_mtp && !strncmp(name, "mtp.", 4)) return "the multi-token-prediction block, not run by plain decoding";
    int layer;
    if (L->has_mtp && sscanf(name, "model.layers.%d.", &layer) == 1 && layer >= L->n_layers)
        return "a multi-token-prediction layer after the model's own, not run by plain decoding";
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
static int apply_token_facts(ts_model *m, const char *dir, const config_reader *R, ts_error *err) {
    const json_value *b = config_at(R, "bos_token_id"), *e = config_at(R, "eos_token_id");
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
    const json_value *mtv = config_at(&R, "model_type");
    const char *mt = mtv && mtv->type == JSON_STRING ? mtv->str : NULL;
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
    if (read_hparams(&R, m, &hp, err) != 0) goto out;
    /* transformers' DeepseekV3: with rope_scaling stating mscale_all_dim, the attention scale is
     * multiplied by YaRN's mscale(factor, mscale_all_dim) squared */
    if (a->hf.mla_yarn_kq_scale && hp.scaling.kind != ROPE_PLAIN && hp.scaling.mscale_all_dim > 0) {
        double ms = rope_yarn_get_mscale(hp.scaling.factor, hp.scaling.mscale_all_dim);
        hp.scaling.kq_mscale = ms * ms;
    }

    safetensors *st = NULL;
    if ((weights_file ? safetensors_open(weights_file, &st, err) : safetensors_open_folder(dir, &st, err)) != 0) goto out;
    m->safetensors = st;
    hf_reader L = { .m = m, .a = a, .dir = safetensors_tensors(st), .prefix = "model.", .quant = quant,
                    .q4nx_pack = pack, .weights_file = weights_file, .has_mtp = hp.n_mtp > 0, .n_layers = hp.n_layers,
                    /* packs store Gemma norms with the 1 folded in */
                    .norm_plus_one = a->hf.norm_plus_one && !pack };
    if (!tensor_dir_find(L.dir, "model.embed_tokens.weight") &&
        tensor_dir_find(L.dir, "model.language_model.embed_tokens.weight"))
        L.prefix = "model.language_model.";

    /* a pack's lm_head is packed from the unscaled embedding: never tied to the pre-scaled one */
    bool has_lm = tensor_dir_find(L.dir, "lm_head.weight") != NULL;
    if (pack && a->embed_scale_sqrt) {
        if (!has_lm) { ts_fail(err, "%s: the pack has no lm_head.weight (its embedding is pre-scaled by sqrt(hidden) and cannot serve as the output)", weights_file); goto out; }
        hp.tie = 0;
        hp.embed_scale = 1.0f;     /* stored multiplied by sqrt(hidden) already */
    }
    if (pack && has_lm) hp.tie = 0;

    tensor_source src = { .dir = L.dir, .path = dir, .rules = &a->hf, .ctx = &L, .name = hf_role_name, .matrix = hf_matrix,
                          .vector = hf_vector, .ignorable = hf_ignorable };
    if (build_geometry(m, a, &hp, &src, err) != 0) goto out;
    model_note(m, "attn_q/attn_k: used as stored (safetensors rows are in Hugging Face order)");
    model_note(m, L.norm_plus_one ? "norms: 1 + w (Hugging Face Gemma convention, the 1 added at load)"
                  : pack && a->hf.norm_plus_one ? "norms: used as w (the pack stores 1 + w)" : "norms: used as w");
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
    json_free(root);
    return rc;
}
