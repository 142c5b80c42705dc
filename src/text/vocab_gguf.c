/* Loading a vocabulary from GGUF tokenizer.ggml.* metadata. */
#include "text/vocab_gguf.h"
#include "text/bpe.h"
#include "text/pipeline.h"
#include "text/pretokenize.h"
#include "core/error.h"
#include "core/str.h"
#include <stdlib.h>
#include <string.h>

/* A special-token id key: absent (or -1 / 0xFFFFFFFF, which converters write for "none") leaves
 * *id unchanged; a value outside the vocabulary is an error. */
static int read_special_id(const gguf_file *g, const char *key, int n, int32_t *id, ts_error *err) {
    int64_t value;
    if (!gguf_has(g, key)) return 0;
    if (!gguf_get_i64(g, key, &value))
        return ts_fail(err, "%s: %s is not an integer", gguf_path(g), key);
    if (value == -1 || value == 0xFFFFFFFFll) { *id = -1; return 0; }
    if (value < 0 || value >= n)
        return ts_fail(err, "%s: %s = %lld is outside the vocabulary (%d tokens)", gguf_path(g), key,
                       (long long)value, n);
    *id = (int32_t)value;
    return 0;
}

static int read_bool(const gguf_file *g, const char *key, bool *out, ts_error *err) {
    if (!gguf_has(g, key)) return 0;
    if (!gguf_get_bool(g, key, out)) return ts_fail(err, "%s: %s is not a boolean", gguf_path(g), key);
    return 0;
}

/* key is a numeric array with one entry per token (n of them). */
static int check_per_token_array(const gguf_file *g, const char *key, uint64_t n, ts_error *err) {
    int type;
    uint64_t m;
    if (!gguf_get_arr(g, key, &type, &m) || type == GGUF_STRING || type == GGUF_ARRAY)
        return ts_fail(err, "%s: %s is not a numeric array", gguf_path(g), key);
    if (m != n) return ts_fail(err, "%s: %s has %llu entries for %llu tokens", gguf_path(g), key,
                               (unsigned long long)m, (unsigned long long)n);
    return 0;
}

static int load_tokens(const gguf_file *g, vocab *v, ts_error *err) {
    const char *path = gguf_path(g);
    const char *key = "tokenizer.ggml.tokens";
    int type;
    uint64_t n;
    if (!gguf_has(g, key)) return ts_fail(err, "%s: no tokenizer (%s missing)", path, key);
    if (!gguf_get_arr(g, key, &type, &n) || type != GGUF_STRING)
        return ts_fail(err, "%s: %s is not an array of strings", path, key);
    if (n == 0 || n > 0x7fffffff) return ts_fail(err, "%s: %s has %llu entries", path, key,
                                                 (unsigned long long)n);
    v->n = (int)n;
    v->text = calloc(n, sizeof *v->text);
    v->len = calloc(n, sizeof *v->len);
    v->score = calloc(n, sizeof *v->score);
    v->attr = calloc(n, sizeof *v->attr);
    if (!v->text || !v->len || !v->score || !v->attr) return ts_fail(err, "%s: out of memory", path);
    for (uint64_t i = 0; i < n; i++) {
        const char *s;
        size_t len;
        if (!gguf_arr_str(g, key, i, &s, &len))
            return ts_fail(err, "%s: cannot read %s[%llu]", path, key, (unsigned long long)i);
        if (len > 0xffffffffu) return ts_fail(err, "%s: %s[%llu] is too long", path, key,
                                              (unsigned long long)i);
        if (!(v->text[i] = str_copy(s, len))) return ts_fail(err, "%s: out of memory", path);
        v->len[i] = (uint32_t)len;
        v->attr[i] = TOKEN_NORMAL;     /* without token_type every token is normal (as llama.cpp) */
    }

    key = "tokenizer.ggml.scores";
    if (gguf_has(g, key)) {
        if (check_per_token_array(g, key, n, err) != 0) return -1;
        for (uint64_t i = 0; i < n; i++) {
            double s;
            if (!gguf_arr_f64(g, key, i, &s)) return ts_fail(err, "%s: cannot read %s[%llu]", path, key,
                                                             (unsigned long long)i);
            v->score[i] = (float)s;
        }
    }

    key = "tokenizer.ggml.token_type";
    if (gguf_has(g, key)) {
        if (check_per_token_array(g, key, n, err) != 0) return -1;
        for (uint64_t i = 0; i < n; i++) {
            int64_t t;
            if (!gguf_arr_i64(g, key, i, &t)) return ts_fail(err, "%s: cannot read %s[%llu]", path, key,
                                                             (unsigned long long)i);
            if (t < TOKEN_UNDEFINED || t > TOKEN_BYTE)
                return ts_fail(err, "%s: %s[%llu] = %lld is not a token type", path, key,
                               (unsigned long long)i, (long long)t);
            v->attr[i] = (uint8_t)t;
        }
    }
    return 0;
}

static int load_merges(const gguf_file *g, vocab *v, ts_error *err) {
    const char *path = gguf_path(g);
    const char *key = "tokenizer.ggml.merges";
    int type;
    uint64_t n;
    if (!gguf_has(g, key)) return ts_fail(err, "%s: byte-level BPE tokenizer without %s", path, key);
    if (!gguf_get_arr(g, key, &type, &n) || type != GGUF_STRING)
        return ts_fail(err, "%s: %s is not an array of strings", path, key);
    if (n > 0x7fffffff) return ts_fail(err, "%s: %s has too many entries", path, key);
    v->merges = calloc(n ? n : 1, sizeof *v->merges);
    if (!v->merges) return ts_fail(err, "%s: out of memory", path);
    for (uint64_t i = 0; i < n; i++) {
        const char *s;
        size_t len;
        if (!gguf_arr_str(g, key, i, &s, &len))
            return ts_fail(err, "%s: cannot read %s[%llu]", path, key, (unsigned long long)i);
        if (!(v->merges[i] = str_copy(s, len))) return ts_fail(err, "%s: out of memory", path);
        v->n_merges = (int)i + 1;
    }

    key = "tokenizer.ggml.pre";
    if (gguf_has(g, key)) {
        const char *s;
        size_t len;
        if (!gguf_get_str(g, key, &s, &len)) return ts_fail(err, "%s: %s is not a string", path, key);
        if (!(v->pre = str_copy(s, len))) return ts_fail(err, "%s: out of memory", path);
        const char *const *regexes;
        int n_regexes;
        if (pretokenize_regexes(v->pre, &regexes, &n_regexes, &v->ignore_merges) &&
            pipeline_from_regexes(regexes, n_regexes, &v->pipeline, err))
            return -1;
    }
    return 0;
}

static int load_vocab(const gguf_file *g, vocab *v, ts_error *err) {
    const char *path = gguf_path(g);
    const char *model;
    size_t model_len;
    if (!gguf_has(g, "tokenizer.ggml.model"))
        return ts_fail(err, "%s: no tokenizer (tokenizer.ggml.model missing)", path);
    if (!gguf_get_str(g, "tokenizer.ggml.model", &model, &model_len))
        return ts_fail(err, "%s: tokenizer.ggml.model is not a string", path);
    if (model_len == 5 && memcmp(model, "llama", 5) == 0) v->kind = VOCAB_SPM;
    else if (model_len == 4 && memcmp(model, "gpt2", 4) == 0) v->kind = VOCAB_BPE_BYTES;
    else return ts_fail(err, "%s: unsupported tokenizer model \"%.*s\" (tokenizer.ggml.model)", path,
                        (int)(model_len > 64 ? 64 : model_len), model);

    if (load_tokens(g, v, err)) return -1;
    if (v->kind == VOCAB_BPE_BYTES && load_merges(g, v, err)) return -1;
    if (vocab_build_hash(v, err)) return -1;

    bool spm = v->kind == VOCAB_SPM;
    if (spm) {          /* SentencePiece's fixed ids, when the file does not say */
        v->unk = v->n > 0 ? 0 : -1;
        v->bos = v->n > 1 ? 1 : -1;
        v->eos = v->n > 2 ? 2 : -1;
    }
    if (read_special_id(g, "tokenizer.ggml.bos_token_id", v->n, &v->bos, err) ||
        read_special_id(g, "tokenizer.ggml.eos_token_id", v->n, &v->eos, err) ||
        read_special_id(g, "tokenizer.ggml.eot_token_id", v->n, &v->eot, err) ||
        read_special_id(g, "tokenizer.ggml.unknown_token_id", v->n, &v->unk, err) ||
        read_special_id(g, "tokenizer.ggml.padding_token_id", v->n, &v->pad, err))
        return -1;
    vocab_find_eot(v);

    v->add_bos = spm;
    v->add_eos = false;
    v->add_space_prefix = spm;
    if (read_bool(g, "tokenizer.ggml.add_bos_token", &v->add_bos, err) ||
        read_bool(g, "tokenizer.ggml.add_eos_token", &v->add_eos, err) ||
        read_bool(g, "tokenizer.ggml.add_space_prefix", &v->add_space_prefix, err))
        return -1;
    return 0;
}

int vocab_from_gguf(const gguf_file *g, vocab *out, ts_error *err) {
    vocab v;
    memset(&v, 0, sizeof v);
    v.bos = v.eos = v.eot = v.unk = v.pad = -1;
    if (load_vocab(g, &v, err) || (v.kind == VOCAB_BPE_BYTES && bpe_prepare(&v, err))) {
        vocab_free(&v);
        return -1;
    }
    *out = v;
    return 0;
}
