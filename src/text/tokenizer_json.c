/* Loading a vocabulary from a Hugging Face tokenizer.json (+ tokenizer_config.json next to it).
 *
 * Two families of "BPE" models are understood:
 *  - byte-level BPE (GPT-2, Llama 3, Qwen, gpt-oss, DeepSeek V3): a ByteLevel pre-tokenizer/decoder;
 *    the normalizer and pre-tokenizer steps become the vocabulary's pipeline (pipeline.h: the split
 *    regexes run by the regex engine with Hugging Face's semantics; a step it does not know is
 *    refused by name, as a guessed split would tokenize subtly wrong).
 *  - SentencePiece-style BPE (Gemma 3, Llama 2 and Mistral in HF form): spaces become U+2581 in the
 *    pipeline (a Replace normalizer with or without a Prepend, or a Metaspace pre-tokenizer), and
 *    characters the vocabulary lacks fall back to <0xNN> byte tokens. Loaded as VOCAB_SPM with the
 *    merges kept (bpe.c merges each piece by rank, exactly as the tokenizer.json defines) and
 *    scores derived from merge ranks (so a score-merging SPM encoder gives the same result wherever
 *    every split of a token is listed, as converters write them).
 */
#include "text/tokenizer_json.h"
#include "text/bpe.h"
#include "text/spm.h"
#include "text/pipeline.h"
#include "io/json.h"
#include "io/file.h"
#include "text/tokenizer_config.h"
#include "core/error.h"
#include "core/str.h"
#include "core/utf8.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_VOCAB (1 << 24)

typedef struct loader {
    const char *path;
    ts_error *err;
} loader;

static bool str_is(const json_value *v, const char *s) {
    return v && v->type == JSON_STRING && v->len == strlen(s) && memcmp(v->str, s, v->len) == 0;
}

static const char *type_of(const json_value *obj) {
    const char *t = json_get_str(obj, "type");
    return t ? t : "";
}

/* ---- tokens ---------------------------------------------------------------------------------- */

static int set_token(loader *L, vocab *v, int64_t id, const char *s, size_t len, uint8_t attr) {
    free(v->text[id]);
    if (!(v->text[id] = str_copy(s, len))) return ts_fail(L->err, "%s: out of memory", L->path);
    v->len[id] = (uint32_t)len;
    v->attr[id] = attr;
    return 0;
}

static int load_tokens(loader *L, const json_value *model, const json_value *added, bool byte_fallback,
                       vocab *v) {
    const json_value *tokens = json_get(model, "vocab");
    if (!tokens || tokens->type != JSON_OBJECT)
        return ts_fail(L->err, "%s: model.vocab is missing or not an object", L->path);
    if (added && added->type != JSON_ARRAY)
        return ts_fail(L->err, "%s: added_tokens is not an array", L->path);

    int64_t max_id = -1;
    for (size_t i = 0; i < tokens->n; i++) {
        const json_value *id = &tokens->items[i];
        if (id->type != JSON_NUMBER || !id->is_integer || id->integer < 0 || id->integer >= MAX_VOCAB)
            return ts_fail(L->err, "%s: model.vocab[\"%.40s\"] is not a valid token id", L->path, tokens->keys[i]);
        if (id->integer > max_id) max_id = id->integer;
    }
    size_t n_added = added ? added->n : 0;
    for (size_t i = 0; i < n_added; i++) {
        int64_t id = json_get_int(&added->items[i], "id", -1);
        if (id < 0 || id >= MAX_VOCAB || !json_get_str(&added->items[i], "content"))
            return ts_fail(L->err, "%s: added_tokens[%zu] has no valid id and content", L->path, i);
        if (id > max_id) max_id = id;
    }
    if (max_id < 0) return ts_fail(L->err, "%s: the vocabulary is empty", L->path);
    /* Unnamed ids become placeholders; a real vocabulary has few (padding), and bounding them by
     * the named ones keeps the work proportional to the file (an id of 16 million in a small
     * file would otherwise cost seconds and hundreds of MB). */
    const int64_t named = (int64_t)tokens->n + (int64_t)n_added;
    if (max_id + 1 > 2 * named + 4096)
        return ts_fail(L->err, "%s: token ids reach %lld but only %lld tokens are named (ids this sparse are not a vocabulary)",
                       L->path, (long long)max_id, (long long)named);

    v->n = (int)(max_id + 1);
    v->text = calloc((size_t)v->n, sizeof *v->text);
    v->len = calloc((size_t)v->n, sizeof *v->len);
    v->score = calloc((size_t)v->n, sizeof *v->score);
    v->attr = calloc((size_t)v->n, sizeof *v->attr);
    if (!v->text || !v->len || !v->score || !v->attr) return ts_fail(L->err, "%s: out of memory", L->path);

    for (size_t i = 0; i < tokens->n; i++) {
        int64_t id = tokens->items[i].integer;
        if (v->text[id])
            return ts_fail(L->err, "%s: token id %lld appears twice in model.vocab", L->path, (long long)id);
        const char *s = tokens->keys[i];
        size_t len = tokens->key_lens[i];
        uint8_t attr = byte_fallback && spm_byte_of_token(s, len) >= 0 ? TOKEN_BYTE : TOKEN_NORMAL;
        if (set_token(L, v, id, s, len, attr)) return -1;
    }
    for (size_t i = 0; i < n_added; i++) {
        const json_value *a = &added->items[i];
        const json_value *content = json_get(a, "content");
        int64_t id = json_get_int(a, "id", -1);
        uint8_t attr = json_get_bool(a, "special", false) ? TOKEN_CONTROL : TOKEN_USER_DEFINED;
        /* Gemma lists runs of U+2581 as added tokens; Hugging Face's decoder turns them into
         * spaces like any vocabulary entry, so they stay normal tokens here (user-defined ones
         * print verbatim). Encoding is unaffected: merges reach the same token. */
        if (attr == TOKEN_USER_DEFINED && v->attr[id] == TOKEN_NORMAL && v->len[id] == content->len &&
            memcmp(v->text[id], content->str, content->len) == 0 && strstr(content->str, SPM_SPACE_MARK))
            continue;
        if (set_token(L, v, id, content->str, content->len, attr)) return -1;
        const uint8_t strip = (json_get_bool(a, "lstrip", false) ? VOCAB_LSTRIP : 0) | (json_get_bool(a, "rstrip", false) ? VOCAB_RSTRIP : 0);
        if (strip && !v->strip && !(v->strip = calloc((size_t)v->n, 1))) return ts_fail(L->err, "%s: out of memory", L->path);
        if (strip) v->strip[id] = strip;
    }
    /* Ids nobody named: empty, unused placeholders. */
    for (int id = 0; id < v->n; id++)
        if (!v->text[id] && set_token(L, v, id, "", 0, TOKEN_UNUSED)) return -1;
    return 0;
}

/* ---- merges ---------------------------------------------------------------------------------- */

static int load_merges(loader *L, const json_value *model, vocab *v) {
    const json_value *merges = json_get(model, "merges");
    if (!merges || merges->type != JSON_ARRAY)
        return ts_fail(L->err, "%s: model.merges is missing or not an array", L->path);
    if (merges->n > 0x7fffffff) return ts_fail(L->err, "%s: too many merges", L->path);
    v->merges = calloc(merges->n ? merges->n : 1, sizeof *v->merges);
    if (!v->merges) return ts_fail(L->err, "%s: out of memory", L->path);
    for (size_t i = 0; i < merges->n; i++) {
        const json_value *m = &merges->items[i];
        char *joined;
        if (m->type == JSON_STRING) {          /* "left right" */
            joined = str_copy(m->str, m->len);
        } else if (m->type == JSON_ARRAY && m->n == 2 && m->items[0].type == JSON_STRING &&
                   m->items[1].type == JSON_STRING) {     /* ["left", "right"] */
            const json_value *a = &m->items[0], *b = &m->items[1];
            /* The shared form is "left right", split at the first space after the first byte. */
            if (a->len == 0 || b->len == 0 || memchr(a->str + 1, ' ', a->len - 1) || memchr(b->str, ' ', b->len))
                return ts_fail(L->err, "%s: model.merges[%zu] has a token with a space, which is not supported",
                               L->path, i);
            joined = malloc(a->len + b->len + 2);
            if (joined) {
                memcpy(joined, a->str, a->len);
                joined[a->len] = ' ';
                memcpy(joined + a->len + 1, b->str, b->len);
                joined[a->len + 1 + b->len] = '\0';
            }
        } else {
            return ts_fail(L->err, "%s: model.merges[%zu] is neither \"a b\" nor [\"a\", \"b\"]", L->path, i);
        }
        if (!joined) return ts_fail(L->err, "%s: out of memory", L->path);
        v->merges[i] = joined;
        v->n_merges = (int)i + 1;
    }
    return 0;
}

/* ---- pre-tokenizer / normalizer -------------------------------------------------------------- */

static bool contains_type(const json_value *node, const char *type, const char *list_key) {
    if (!node || node->type != JSON_OBJECT) return false;
    if (strcmp(type_of(node), type) == 0) return true;
    const json_value *list = json_get(node, list_key);
    if (list && list->type == JSON_ARRAY)
        for (size_t i = 0; i < list->n; i++)
            if (contains_type(&list->items[i], type, list_key)) return true;
    return false;
}

/* Added tokens marked "normalized" (the default for non-special ones) are matched in normalized text:
 * their content through the pipeline's normalizers is kept beside the vocabulary (tokenizer.c). */
static int normalize_added_tokens(loader *L, const json_value *added, vocab *v) {
    if (!added || !pipeline_normalizes(v->pipeline)) return 0;
    for (size_t i = 0; i < added->n; i++) {
        const json_value *a = &added->items[i];
        int64_t id = json_get_int(a, "id", -1);
        if (!json_get_bool(a, "normalized", !json_get_bool(a, "special", false)) || v->attr[id] == TOKEN_NORMAL) continue;
        const json_value *content = json_get(a, "content");
        uint32_t *cps = malloc((content->len + 1) * sizeof *cps), *norm = NULL;
        size_t m = 0;
        if (!cps) return ts_fail(L->err, "%s: out of memory", L->path);
        const long n = utf8_to_code_points(content->str, content->len, cps, NULL);
        if (n < 0) { free(cps); return ts_fail(L->err, "%s: added_tokens[%zu] is not valid UTF-8", L->path, i); }
        int rc = pipeline_normalize(v->pipeline, cps, (size_t)n, &norm, &m, L->err);
        free(cps);
        if (rc) return -1;
        if (!v->norm_text && !(v->norm_text = calloc((size_t)v->n, sizeof *v->norm_text))) { free(norm); return ts_fail(L->err, "%s: out of memory", L->path); }
        char *text = malloc(4 * m + 1);
        if (!text) { free(norm); return ts_fail(L->err, "%s: out of memory", L->path); }
        const size_t len = utf8_from_code_points(norm, m, text);
        text[len] = '\0';
        free(norm);
        free(v->norm_text[id]);
        v->norm_text[id] = text;
        if (len == 0) { free(text); v->norm_text[id] = NULL; }   /* normalized away: never matched */
    }
    return 0;
}

/* ---- decoder --------------------------------------------------------------------------------- */

/* The decoder steps whose per-token meaning tokenizer.c's tokenizer_token_bytes implements: the
 * byte-level map (ByteLevel), U+2581 as a space (Metaspace, or Replace of it by " "), <0xNN> as a
 * byte (ByteFallback), and joining (Fuse). Strip of one leading space only touches the start of a
 * whole decoded text; printing streams token by token from the answer on, as llama.cpp does, where
 * it does not apply. Any other step would print differently: refused by name. */
static int check_decoder(loader *L, const json_value *d, bool byte_level) {
    if (!d || d->type == JSON_NULL) return 0;
    const char *t = type_of(d);
    if (strcmp(t, "Sequence") == 0) {
        const json_value *list = json_get(d, "decoders");
        if (!list || list->type != JSON_ARRAY) return ts_fail(L->err, "%s: decoder Sequence without a decoders list", L->path);
        for (size_t i = 0; i < list->n; i++)
            if (check_decoder(L, &list->items[i], byte_level)) return -1;
        return 0;
    }
    if (strcmp(t, "ByteLevel") == 0 || strcmp(t, "Fuse") == 0) return 0;
    if (!byte_level && (strcmp(t, "Metaspace") == 0 || strcmp(t, "ByteFallback") == 0)) return 0;
    if (!byte_level && strcmp(t, "Replace") == 0 && str_is(json_get(json_get(d, "pattern"), "String"), SPM_SPACE_MARK) &&
        str_is(json_get(d, "content"), " "))
        return 0;
    if (strcmp(t, "Strip") == 0 && str_is(json_get(d, "content"), " ") && json_get_int(d, "start", 0) <= 1 &&
        json_get_int(d, "stop", 0) == 0)
        return 0;
    return ts_fail(L->err, "%s: unsupported decoder \"%s\"%s", L->path, t,
                   strcmp(t, "Replace") == 0 || strcmp(t, "Strip") == 0 ? " (only U+2581 -> space / one leading space)" : "");
}

/* ---- special tokens -------------------------------------------------------------------------- */

/* The token a tokenizer_config.json entry names: -1 for null or an unknown text. */
static int32_t config_token_id(const vocab *v, config_token t) {
    return t.text ? vocab_find(v, t.text, strlen(t.text)) : -1;
}

static int read_config(loader *L, const char *json_path, vocab *v) {
    char dir[1200];
    const char *slash = strrchr(json_path, '/');
    snprintf(dir, sizeof dir, "%.*s", slash ? (int)(slash - json_path) : 1, slash ? json_path : ".");
    tokenizer_config tc;
    if (tokenizer_config_read(dir, &tc, L->err) != 0) return -1;
    struct { config_token t; int32_t *id; } named[] = {
        { tc.bos, &v->bos }, { tc.eos, &v->eos }, { tc.pad, &v->pad }, { tc.unk, &v->unk },
    };
    for (size_t i = 0; i < sizeof named / sizeof named[0]; i++)
        if (named[i].t.present) *named[i].id = config_token_id(v, named[i].t);
    if (tc.has_add_bos) v->add_bos = tc.add_bos;
    if (tc.has_add_eos) v->add_eos = tc.add_eos;
    int rc = 0;
    if (tc.root && v->add_bos && v->bos < 0) rc = ts_fail(L->err, "%s: add_bos_token without a known bos_token", tc.path);
    tokenizer_config_free(&tc);
    return rc;
}

/* BOS/EOS from a TemplateProcessing post-processor ("single": [<bos>, $A, <eos>]). */
static void template_specials(const json_value *post, vocab *v) {
    const json_value *single = json_get(post, "single");
    if (!single || single->type != JSON_ARRAY || single->n == 0) return;
    for (int end = 0; end < 2; end++) {
        const json_value *item = &single->items[end ? single->n - 1 : 0];
        const json_value *special = json_get(item, "SpecialToken");
        const json_value *id = json_get(special, "id");
        if (!id || id->type != JSON_STRING) continue;
        int32_t tok = vocab_find(v, id->str, id->len);
        if (tok < 0) continue;
        if (end == 0) { v->bos = tok; v->add_bos = true; }
        else { v->eos = tok; v->add_eos = true; }
    }
}

/* The post-processor: TemplateProcessing gives the special tokens around a text, ByteLevel only
 * trims offsets (nothing for ids), a Sequence holds them; others (RobertaProcessing, ...) add
 * tokens this engine would not: refused by name. */
static int read_post_processor(loader *L, const json_value *post, vocab *v) {
    if (!post || post->type == JSON_NULL) return 0;
    const char *t = type_of(post);
    if (strcmp(t, "TemplateProcessing") == 0) { template_specials(post, v); return 0; }
    if (strcmp(t, "ByteLevel") == 0) return 0;
    if (strcmp(t, "Sequence") == 0) {
        const json_value *list = json_get(post, "processors");
        if (!list || list->type != JSON_ARRAY) return ts_fail(L->err, "%s: post_processor Sequence without a processors list", L->path);
        for (size_t i = 0; i < list->n; i++)
            if (read_post_processor(L, &list->items[i], v)) return -1;
        return 0;
    }
    return ts_fail(L->err, "%s: unsupported post_processor \"%s\"", L->path, t);
}

/* ---- entry point ----------------------------------------------------------------------------- */

static int load(loader *L, const json_value *root, vocab *v) {
    if (root->type != JSON_OBJECT) return ts_fail(L->err, "%s: not a JSON object", L->path);
    const json_value *model = json_get(root, "model");
    if (!model || model->type != JSON_OBJECT) return ts_fail(L->err, "%s: no \"model\" object", L->path);
    const char *type = json_get_str(model, "type");
    if (type ? strcmp(type, "BPE") != 0 : !json_get(model, "merges"))
        return ts_fail(L->err, "%s: unsupported tokenizer model type \"%s\" (only BPE)", L->path,
                       type ? type : "?");
    bool byte_fallback = json_get_bool(model, "byte_fallback", false);
    /* model options that would change the result and are not implemented: refused by name */
    const json_value *dropout = json_get(model, "dropout");
    if (dropout && dropout->type != JSON_NULL && !(dropout->type == JSON_NUMBER && dropout->number == 0))
        return ts_fail(L->err, "%s: model.dropout is set (BPE dropout samples merges at random: a training option)", L->path);
    static const char *const affixes[] = { "continuing_subword_prefix", "end_of_word_suffix" };
    for (int i = 0; i < 2; i++) {
        const json_value *a = json_get(model, affixes[i]);
        if (a && a->type != JSON_NULL && !(a->type == JSON_STRING && a->len == 0))
            return ts_fail(L->err, "%s: model.%s is not supported", L->path, affixes[i]);
    }
    v->fuse_unk = json_get_bool(model, "fuse_unk", false);
    const json_value *pt = json_get(root, "pre_tokenizer");
    const json_value *norm = json_get(root, "normalizer");
    const json_value *decoder = json_get(root, "decoder");
    bool byte_level = contains_type(pt, "ByteLevel", "pretokenizers") ||
                      contains_type(decoder, "ByteLevel", "decoders");

    if (load_tokens(L, model, json_get(root, "added_tokens"), byte_fallback, v)) return -1;
    if (load_merges(L, model, v)) return -1;
    if (vocab_build_hash(v, L->err)) return -1;

    const char *unk = json_get_str(model, "unk_token");
    if (unk && (v->unk = vocab_find(v, unk, strlen(unk))) >= 0) v->attr[v->unk] = TOKEN_UNKNOWN;

    if (byte_level && (!pt || pt->type != JSON_OBJECT))
        return ts_fail(L->err, "%s: byte-level BPE without a pre_tokenizer", L->path);
    if (check_decoder(L, decoder, byte_level)) return -1;
    if (pipeline_from_json(norm, pt, L->path, &v->pipeline, L->err)) return -1;
    v->kind = byte_level ? VOCAB_BPE_BYTES : VOCAB_SPM;
    v->ignore_merges = json_get_bool(model, "ignore_merges", false);
    v->add_space_prefix = false;      /* the pipeline's own Prepend or Metaspace puts it there */
    if (normalize_added_tokens(L, json_get(root, "added_tokens"), v)) return -1;

    if (read_post_processor(L, json_get(root, "post_processor"), v)) return -1;
    if (read_config(L, L->path, v)) return -1;
    vocab_find_eot(v);
    if (bpe_prepare(v, L->err)) return -1;
    if (v->kind == VOCAB_SPM) bpe_scores_from_ranks(v);
    return 0;
}

int tokenizer_json_read(const char *path, vocab *out, ts_error *err) {
    loader L = { path, err };
    char *text;
    size_t len;
    json_value *root = NULL;
    ts_error perr;
    if (file_read(path, &text, &len, err)) return -1;
    if (json_parse(text, len, &root, &perr)) {
        free(text);
        return ts_fail(err, "%s: %s", path, perr.msg);
    }
    free(text);
    vocab v;
    memset(&v, 0, sizeof v);
    v.bos = v.eos = v.eot = v.unk = v.pad = -1;
    int rc = load(&L, root, &v);
    json_free(root);
    if (rc) {
        vocab_free(&v);
        return -1;
    }
    *out = v;
    return 0;
}
