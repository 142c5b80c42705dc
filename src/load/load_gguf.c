/* GGUF -> hyper-parameters + a tensor source for the geometry builder. The container reader of
 * GGUF files: llama.cpp's metadata keys through the hyper-parameter table (load/hparams.c: every
 * key under the architecture's prefix is a row or refuses the model by name), llama.cpp's rules
 * where they differ from transformers' (the YaRN attention factor), llama.cpp's standard tensor
 * names, and GGUF's layout conventions: Llama-family attn_q/attn_k rows are permuted (for
 * llama.cpp's interleaved-pair RoPE) and Gemma norms are stored with their "+1" already folded in,
 * so they are used as w. */
#include "load/load_gguf.h"
#include "load/model_arena.h"
#include "load/build.h"
#include "load/rope.h"
#include "load/hparams.h"
#include "kernels/types.h"
#include "text/vocab_gguf.h"
#include "core/error.h"
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct gguf_reader {
    ts_model *m;
    const gguf_file *g;
    const char *path;
    const arch_desc *a;
    int first_nextn_block;   /* blocks from here on are multi-token-prediction heads (INT_MAX: none) */
} gguf_reader;

/* ---- the architecture's metadata keys, through the hyper-parameter table ---- */

/* The value of "<arch>.<suffix>" (element index of an array when index >= 0). */
static void gguf_value(const hparam_source *hs, const char *suffix, long index, hp_value *v) {
    const gguf_reader *R = hs->ctx;
    char k[192];
    snprintf(k, sizeof k, "%s.%s", R->a->name, suffix);
    memset(v, 0, sizeof *v);
    int type = gguf_key_type(R->g, k), elem = -1;
    uint64_t n = 0;
    if (type < 0) return;
    if (type == GGUF_ARRAY && gguf_get_arr(R->g, k, &elem, &n) && index < 0) { v->kind = HPV_ARRAY; v->n = (size_t)n; return; }
    if (type == GGUF_ARRAY && (index < 0 || (uint64_t)index >= n)) return;
    if (type != GGUF_ARRAY) { elem = type; index = -1; }
    int64_t i;
    if (elem == GGUF_STRING) {
        v->kind = HPV_STRING;
        if (index >= 0) gguf_arr_str(R->g, k, (uint64_t)index, &v->str, &v->len);
        else gguf_get_str(R->g, k, &v->str, &v->len);
    } else if (elem == GGUF_BOOL) {
        v->kind = HPV_BOOL;
        if (index >= 0 ? gguf_arr_i64(R->g, k, (uint64_t)index, &i) : gguf_get_i64(R->g, k, &i)) v->boolean = i != 0;
    } else if (elem == GGUF_F32 || elem == GGUF_F64) {
        float f = 0;
        v->kind = HPV_NUMBER;
        if (index >= 0) gguf_arr_f64(R->g, k, (uint64_t)index, &v->number);
        else if (gguf_get_f32(R->g, k, &f)) v->number = f;   /* f32, as llama.cpp reads them */
    } else if (index >= 0 ? gguf_arr_i64(R->g, k, (uint64_t)index, &i) : gguf_get_i64(R->g, k, &i)) {
        v->kind = HPV_NUMBER;
        v->number = (double)i;
    } else {
        v->kind = HPV_NUMBER;
        v->number = NAN;           /* an integer that does not fit: refused as out of range */
    }
}

/* Every "<arch>." key is one the table knows; the others name themselves in the refusal. */
static int check_keys(gguf_reader *R, const hparam_source *hs, ts_error *err) {
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
        if (!hparams_find(CONTAINER_GGUF, k + plen + 1)) return hparams_refuse_unknown(hs, k + plen + 1, err);
    }
    return 0;
}

/* RoPE scaling as llama.cpp computes it (README-rope-bias.md): the cos/sin multiplier is
 * rope.scaling.attn_factor, and for YaRN (1 + 0.1 ln s) times it; Mistral 3 divides by the mscale of
 * yarn_log_multiplier instead and reads the correction range, which llama.cpp ignores elsewhere. */
static int resolve_rope_scaling(gguf_reader *R, model_hparams *hp, ts_error *err) {
    rope_scaling *s = &hp->scaling;
    const container_rules *rules = &R->a->gguf;
    s->mscale = s->attn_factor;
    s->truncate = true;
    s->long_round = 256;     /* llama.cpp compares the context rounded up to a multiple of 256 */
    if (s->temp_beta != 0 && s->orig_ctx <= 0)
        return ts_fail(err, "%s: an attention temperature needs rope.scaling.original_context_length", R->path);
    if (s->kind == ROPE_PLAIN) return 0;
    if (!(s->factor > 0)) return ts_fail(err, "%s: rope scaling needs a positive rope.scaling.factor", R->path);
    if (s->kind != ROPE_YARN) return 0;
    if (s->orig_ctx <= 0) return ts_fail(err, "%s: YaRN needs rope.scaling.original_context_length", R->path);
    s->mscale = rope_yarn_get_mscale(s->factor, 1.0) * s->attn_factor;
    if (rules->mla_yarn_kq_scale) {
        /* llama.cpp's deepseek2: with yarn_log_multiplier (0.1 x mscale_all_dim) the rotation's own
         * magnitude is cancelled and (1 + multiplier x ln s)^2 scales the attention; without it
         * both take 1 + 0.1 ln s. The correction range stays 32 / 1 whatever the file says. */
        double ms = s->yarn_log_multiplier != 0 ? 1.0 + s->yarn_log_multiplier * log(s->factor) : rope_yarn_get_mscale(s->factor, 1.0);
        s->kq_mscale = ms * ms;
        if (s->yarn_log_multiplier != 0) s->mscale = s->attn_factor;
        if (s->beta_fast != 32.0 || s->beta_slow != 1.0)
            model_note(R->m, "rope: yarn_beta_fast/slow ignored, as llama.cpp does for %s", R->a->name);
        s->beta_fast = 32.0;
        s->beta_slow = 1.0;
        return 0;
    }
    if (rules->yarn_betas) {
        if (s->yarn_log_multiplier != 0)
            s->mscale = rope_yarn_get_mscale(s->factor, 1.0) / rope_yarn_get_mscale(s->factor, s->yarn_log_multiplier);
        return 0;
    }
    if (s->beta_fast != 32.0 || s->beta_slow != 1.0 || s->yarn_log_multiplier != 0)
        model_note(R->m, "rope: yarn_beta_fast/slow and yarn_log_multiplier ignored, as llama.cpp does for %s", R->a->name);
    s->beta_fast = 32.0;
    s->beta_slow = 1.0;
    return 0;
}

static int read_hparams(gguf_reader *R, model_hparams *hp, ts_error *err) {
    char prefix[64];
    snprintf(prefix, sizeof prefix, "%s.", R->a->name);
    hparam_source hs = { .container = CONTAINER_GGUF, .path = R->path, .what = "metadata key", .prefix = prefix,
                         .ctx = R, .get = gguf_value };
    if (check_keys(R, &hs, err) != 0) return -1;
    if (hparams_read(&hs, R->m, hp, err) != 0) return -1;
    if (!hp->hidden) return ts_fail(err, "%s: missing %s.embedding_length", R->path, R->a->name);
    if (!hp->n_layers) return ts_fail(err, "%s: missing %s.block_count", R->path, R->a->name);
    if (hp->n_heads <= 0 && !hp->layer_n_heads) return ts_fail(err, "%s: missing %s.attention.head_count", R->path, R->a->name);
    return resolve_rope_scaling(R, hp, err);
}

/* ---- the tensor source ---- */

static const char *gguf_role_name(const tensor_source *s, int role, int layer, int expert, char *buf, size_t cap) {
    const char *fmt = arch_tensor_name(s->rules, CONTAINER_GGUF, role);
    if (!fmt) return NULL;
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

static void gguf_release_copied(const tensor_source *s, const void *p, size_t n) {
    gguf_release(((const gguf_reader *)s->ctx)->g, p, n);
}

/* The blocks nextn_predict_layers counts after the model's own (Qwen3.5's MTP head, GLM's NextN):
 * a draft head for speculative decoding that plain decoding never runs (llama.cpp skips them too). */
static const char *gguf_ignorable(const tensor_source *s, const char *name) {
    const gguf_reader *R = s->ctx;
    int block;
    if (sscanf(name, "blk.%d.", &block) == 1 && block >= R->first_nextn_block && block < R->first_nextn_block + 64)
        return "a multi-token-prediction block, not run by plain decoding";
    return NULL;
}

/* Vectors become owned f32 (GGUF stores Gemma's norms as 1 + w already: no convention to apply). */
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
    model_hparams hp;
    if (read_hparams(&R, &hp, err) != 0) return -1;
    R.first_nextn_block = hp.n_nextn > 0 ? hp.n_layers - hp.n_nextn : INT_MAX;
    tensor_source src = { .dir = gguf_tensors(g), .path = path, .rules = &R.a->gguf, .vocab_exact = true, .weight_scales = true, .ctx = &R,
                          .name = gguf_role_name, .matrix = gguf_matrix, .vector = gguf_vector,
                          .ignorable = gguf_ignorable, .release = gguf_release_copied };
    if (build_geometry(m, R.a, &hp, &src, err) != 0) return -1;
    if (!R.a->gguf.qk_permuted) model_note(m, "attn_q/attn_k: used as stored (%s GGUF is not permuted)", R.a->name);
    model_note(m, R.a->hf.norm_plus_one ? "norms: used as w (GGUF stores Gemma's 1 + w already)" : "norms: used as w");
    return 0;
}
