/* A byte-level tokenizer's normalizer and pre-tokenizer steps (pipeline.h), as Hugging Face
 * tokenizers defines them. Every split step is a regex with a behavior: the character-class
 * pre-tokenizers (Digits, Punctuation, WhitespaceSplit) are one-character classes, matched one
 * character at a time as their Rust predicates are. */
#include "text/pipeline.h"
#include "core/error.h"
#include "core/unicode.h"
#include "core/unicode_norm.h"
#include "core/utf8.h"
#include "text/precompiled.h"
#include <stdlib.h>
#include <string.h>

enum norm_kind { NORM_FORM, NORM_LOWERCASE, NORM_STRIP, NORM_REPLACE, NORM_PREPEND, NORM_PRECOMPILED };
typedef struct norm_step {
    int kind;
    unicode_form form;              /* NORM_FORM */
    bool left, right;               /* NORM_STRIP */
    regex *re;                      /* NORM_REPLACE: what is replaced */
    uint32_t *text;                 /* NORM_REPLACE: the replacement; NORM_PREPEND: the prefix */
    size_t text_n;
    precompiled *charsmap;          /* NORM_PRECOMPILED */
} norm_step;

/* How a split step turns the matches of its regex into pieces (tokenizers' SplitDelimiterBehavior) */
enum split_behavior { SPLIT_REMOVED, SPLIT_ISOLATED, SPLIT_MERGED_WITH_PREVIOUS, SPLIT_MERGED_WITH_NEXT, SPLIT_CONTIGUOUS };
static const char *const behavior_names[] = { "Removed", "Isolated", "MergedWithPrevious", "MergedWithNext", "Contiguous" };
typedef struct split_step { regex *re; int behavior; bool invert; } split_step;

/* A Metaspace pre-tokenizer's rewrite (the first pre-tokenizer step): spaces become the replacement
 * character, which is put in front of a piece that does not start with it: every piece (always),
 * only the one at the start of the input (first), or none (never). Its split, when asked, is an
 * ordinary split step on the replacement (MergedWithNext). */
enum prepend_scheme { PREPEND_NEVER, PREPEND_ALWAYS, PREPEND_FIRST };
typedef struct metaspace { bool on; uint32_t replacement; int prepend; } metaspace;

struct pipeline {
    norm_step *norm;
    int n_norm, cap_norm;
    metaspace meta;
    split_step *split;
    int n_split, cap_split;
};

/* GPT-2's split, which a ByteLevel pre-tokenizer applies when use_regex */
static const char byte_level_regex[] = "'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)|\\s+";

void pipeline_free(pipeline *p) {
    if (!p) return;
    for (int i = 0; i < p->n_norm; i++) {
        regex_free(p->norm[i].re);
        free(p->norm[i].text);
        precompiled_free(p->norm[i].charsmap);
    }
    for (int i = 0; i < p->n_split; i++) regex_free(p->split[i].re);
    free(p->norm);
    free(p->split);
    free(p);
}

/* ---- building ---- */

static int add_split(pipeline *p, const char *pattern, size_t len, int behavior, bool invert, const char *path, ts_error *err) {
    if (p->n_split == p->cap_split) {
        int cap = p->cap_split ? 2 * p->cap_split : 4;
        split_step *s = realloc(p->split, (size_t)cap * sizeof *s);
        if (!s) return ts_fail(err, "%s: out of memory", path);
        p->split = s;
        p->cap_split = cap;
    }
    split_step *s = &p->split[p->n_split];
    ts_error rerr;
    if (regex_compile(pattern, len, &s->re, &rerr)) return ts_fail(err, "%s: pre-tokenizer %s", path, rerr.msg);
    s->behavior = behavior;
    s->invert = invert;
    p->n_split++;
    return 0;
}

static norm_step *add_norm(pipeline *p, int kind, const char *path, ts_error *err) {
    if (p->n_norm == p->cap_norm) {
        int cap = p->cap_norm ? 2 * p->cap_norm : 4;
        norm_step *s = realloc(p->norm, (size_t)cap * sizeof *s);
        if (!s) { ts_fail(err, "%s: out of memory", path); return NULL; }
        p->norm = s;
        p->cap_norm = cap;
    }
    norm_step *s = &p->norm[p->n_norm++];
    memset(s, 0, sizeof *s);
    s->kind = kind;
    return s;
}

static const char *type_of(const json_value *node) {
    const char *t = json_get_str(node, "type");
    return t ? t : "?";
}

/* A JSON string as code points (malloc'd). */
static int code_points_of(const json_value *s, uint32_t **out, size_t *n, const char *path, const char *what, ts_error *err) {
    if (!s || s->type != JSON_STRING) return ts_fail(err, "%s: %s is not a string", path, what);
    uint32_t *cps = malloc((s->len + 1) * sizeof *cps);
    if (!cps) return ts_fail(err, "%s: out of memory", path);
    const long m = utf8_to_code_points(s->str, s->len, cps, NULL);
    if (m < 0) { free(cps); return ts_fail(err, "%s: %s is not valid UTF-8", path, what); }
    *out = cps;
    *n = (size_t)m;
    return 0;
}

/* A pattern object, {"Regex": r} or {"String": s}, as a regex (a string's characters escaped). */
static int pattern_regex(const json_value *pattern, char **out, size_t *len, const char *path, ts_error *err) {
    const json_value *r = json_get(pattern, "Regex"), *s = json_get(pattern, "String");
    const json_value *v = r ? r : s;
    if (!v || v->type != JSON_STRING) return ts_fail(err, "%s: a pattern is neither {\"Regex\": ...} nor {\"String\": ...}", path);
    char *re = malloc(2 * v->len + 1);
    if (!re) return ts_fail(err, "%s: out of memory", path);
    size_t m = 0;
    for (size_t i = 0; i < v->len; i++) {
        const unsigned char c = (unsigned char)v->str[i];
        if (!r && c && strchr("\\^$.|?*+()[]{}", c)) re[m++] = '\\';   /* the metacharacters */
        re[m++] = (char)c;
    }
    re[m] = '\0';
    *out = re;
    *len = m;
    return 0;
}

static int behavior_of(const json_value *node, int fallback, int *out, const char *path, ts_error *err) {
    const char *b = json_get_str(node, "behavior");
    if (!b) { *out = fallback; return 0; }
    for (int i = 0; i < (int)(sizeof behavior_names / sizeof behavior_names[0]); i++)
        if (strcmp(b, behavior_names[i]) == 0) { *out = i; return 0; }
    return ts_fail(err, "%s: unsupported split behavior \"%s\"", path, b);
}

static int add_normalizer(pipeline *p, const json_value *node, const char *path, ts_error *err) {
    if (!node || node->type == JSON_NULL) return 0;
    if (node->type != JSON_OBJECT) return ts_fail(err, "%s: a normalizer is not an object", path);
    const char *t = type_of(node);
    static const struct { const char *name; unicode_form form; } forms[] = {
        { "NFC", UNICODE_NFC }, { "NFD", UNICODE_NFD }, { "NFKC", UNICODE_NFKC }, { "NFKD", UNICODE_NFKD } };
    for (size_t i = 0; i < sizeof forms / sizeof forms[0]; i++)
        if (strcmp(t, forms[i].name) == 0) {
            norm_step *s = add_norm(p, NORM_FORM, path, err);
            if (!s) return -1;
            s->form = forms[i].form;
            return 0;
        }
    if (strcmp(t, "Sequence") == 0) {
        const json_value *list = json_get(node, "normalizers");
        if (!list || list->type != JSON_ARRAY) return ts_fail(err, "%s: normalizer Sequence without a normalizers list", path);
        for (size_t i = 0; i < list->n; i++)
            if (add_normalizer(p, &list->items[i], path, err)) return -1;
        return 0;
    }
    if (strcmp(t, "Lowercase") == 0) return add_norm(p, NORM_LOWERCASE, path, err) ? 0 : -1;
    if (strcmp(t, "Precompiled") == 0) {   /* a SentencePiece model's compiled rules */
        const json_value *map = json_get(node, "precompiled_charsmap");
        if (!map || map->type != JSON_STRING) return ts_fail(err, "%s: Precompiled normalizer without a precompiled_charsmap", path);
        norm_step *s = add_norm(p, NORM_PRECOMPILED, path, err);
        ts_error perr;
        if (!s) return -1;
        return precompiled_from_base64(map->str, map->len, &s->charsmap, &perr) ? ts_fail(err, "%s: %s", path, perr.msg) : 0;
    }
    if (strcmp(t, "Strip") == 0) {
        norm_step *s = add_norm(p, NORM_STRIP, path, err);
        if (!s) return -1;
        s->left = json_get_bool(node, "strip_left", true);
        s->right = json_get_bool(node, "strip_right", true);
        return 0;
    }
    if (strcmp(t, "Prepend") == 0) {
        norm_step *s = add_norm(p, NORM_PREPEND, path, err);
        return s ? code_points_of(json_get(node, "prepend"), &s->text, &s->text_n, path, "Prepend's prepend", err) : -1;
    }
    if (strcmp(t, "Replace") == 0) {
        norm_step *s = add_norm(p, NORM_REPLACE, path, err);
        if (!s || code_points_of(json_get(node, "content"), &s->text, &s->text_n, path, "Replace's content", err)) return -1;
        char *re;
        size_t len;
        if (pattern_regex(json_get(node, "pattern"), &re, &len, path, err)) return -1;
        ts_error rerr;
        int rc = regex_compile(re, len, &s->re, &rerr);
        free(re);
        return rc ? ts_fail(err, "%s: normalizer Replace %s", path, rerr.msg) : 0;
    }
    return ts_fail(err, "%s: unsupported normalizer \"%s\"", path, t);
}

static int add_metaspace(pipeline *p, const json_value *node, const char *path, ts_error *err) {
    /* It rewrites the text it is given; after another step it would rewrite each piece apart. */
    if (p->n_split > 0 || p->meta.on)
        return ts_fail(err, "%s: a Metaspace pre-tokenizer after another pre-tokenizer step is not supported", path);
    uint32_t *rep = NULL;
    size_t n_rep = 0;
    const json_value *r = json_get(node, "replacement");
    if (r && code_points_of(r, &rep, &n_rep, path, "Metaspace's replacement", err)) return -1;
    uint32_t replacement = rep && n_rep == 1 ? rep[0] : 0x2581;
    free(rep);
    if (r && n_rep != 1) return ts_fail(err, "%s: Metaspace's replacement is not one character", path);
    const char *scheme = json_get_str(node, "prepend_scheme");
    int prepend;
    if (!scheme) prepend = json_get_bool(node, "add_prefix_space", true) ? PREPEND_ALWAYS : PREPEND_NEVER;  /* the older form */
    else if (strcmp(scheme, "always") == 0) prepend = PREPEND_ALWAYS;
    else if (strcmp(scheme, "first") == 0) prepend = PREPEND_FIRST;
    else if (strcmp(scheme, "never") == 0) prepend = PREPEND_NEVER;
    else return ts_fail(err, "%s: unsupported Metaspace prepend_scheme \"%s\"", path, scheme);
    p->meta = (metaspace){ true, replacement, prepend };
    if (!json_get_bool(node, "split", true)) return 0;
    char re[8];
    int k = utf8_encode(replacement, re);
    return add_split(p, re, (size_t)k, SPLIT_MERGED_WITH_NEXT, false, path, err);
}

static int add_pre_tokenizer(pipeline *p, const json_value *node, bool last, const char *path, ts_error *err) {
    if (!node || node->type == JSON_NULL) return 0;
    if (node->type != JSON_OBJECT) return ts_fail(err, "%s: a pre-tokenizer is not an object", path);
    const char *t = type_of(node);
    if (strcmp(t, "Sequence") == 0) {
        const json_value *list = json_get(node, "pretokenizers");
        if (!list || list->type != JSON_ARRAY) return ts_fail(err, "%s: pre_tokenizer Sequence without a pretokenizers list", path);
        for (size_t i = 0; i < list->n; i++)
            if (add_pre_tokenizer(p, &list->items[i], last && i + 1 == list->n, path, err)) return -1;
        return 0;
    }
    if (strcmp(t, "Split") == 0) {
        char *re;
        size_t len;
        int behavior = SPLIT_ISOLATED;
        if (behavior_of(node, -1, &behavior, path, err)) return -1;
        if (behavior < 0) return ts_fail(err, "%s: Split pre-tokenizer without a behavior", path);
        if (pattern_regex(json_get(node, "pattern"), &re, &len, path, err)) return -1;
        int rc = add_split(p, re, len, behavior, json_get_bool(node, "invert", false), path, err);
        free(re);
        return rc;
    }
    if (strcmp(t, "ByteLevel") == 0) {
        /* the byte mapping is the encoder's own; only the last step may do it */
        if (!last) return ts_fail(err, "%s: a ByteLevel pre-tokenizer before other steps is not supported", path);
        if (json_get_bool(node, "add_prefix_space", false))
            return ts_fail(err, "%s: ByteLevel add_prefix_space is not supported", path);
        if (!json_get_bool(node, "use_regex", true)) return 0;
        return add_split(p, byte_level_regex, sizeof byte_level_regex - 1, SPLIT_ISOLATED, false, path, err);
    }
    if (strcmp(t, "Digits") == 0)
        return add_split(p, "\\p{N}", 5, json_get_bool(node, "individual_digits", false) ? SPLIT_ISOLATED : SPLIT_CONTIGUOUS,
                         false, path, err);
    if (strcmp(t, "Punctuation") == 0) {
        int behavior = SPLIT_ISOLATED;
        static const char punct[] = "[\\p{P}!-/:-@\\[-`{-~]";   /* Unicode P, or ASCII punctuation */
        return behavior_of(node, SPLIT_ISOLATED, &behavior, path, err) ? -1
               : add_split(p, punct, sizeof punct - 1, behavior, false, path, err);
    }
    if (strcmp(t, "Whitespace") == 0)   /* the matches of \w+|[^\w\s]+ kept, the rest removed */
        return add_split(p, "\\w+|[^\\w\\s]+", 12, SPLIT_REMOVED, true, path, err);
    if (strcmp(t, "WhitespaceSplit") == 0) return add_split(p, "\\s", 2, SPLIT_REMOVED, false, path, err);
    if (strcmp(t, "Metaspace") == 0) return add_metaspace(p, node, path, err);
    return ts_fail(err, "%s: unsupported pre-tokenizer \"%s\"", path, t);
}

int pipeline_from_json(const json_value *normalizer, const json_value *pre_tokenizer, const char *path, pipeline **out,
                       ts_error *err) {
    *out = NULL;
    pipeline *p = calloc(1, sizeof *p);
    if (!p) return ts_fail(err, "%s: out of memory", path);
    if (add_normalizer(p, normalizer, path, err) || add_pre_tokenizer(p, pre_tokenizer, true, path, err)) {
        pipeline_free(p);
        return -1;
    }
    *out = p;
    return 0;
}

int pipeline_from_regexes(const char *const *regexes, int n, pipeline **out, ts_error *err) {
    *out = NULL;
    pipeline *p = calloc(1, sizeof *p);
    if (!p) return ts_fail(err, "out of memory");
    for (int i = 0; i < n; i++)
        if (add_split(p, regexes[i], strlen(regexes[i]), SPLIT_ISOLATED, false, "pre-tokenizer", err)) {
            pipeline_free(p);
            return -1;
        }
    *out = p;
    return 0;
}

/* ---- normalizing ---- */

bool pipeline_normalizes(const pipeline *p) { return p && p->n_norm > 0; }

/* A growing array of code points (allocated by its first put, even of nothing: the steps take its
 * array as a pointer they offset) */
typedef struct cp_buf { uint32_t *v; size_t n, cap; } cp_buf;
static int cp_put(cp_buf *b, const uint32_t *cps, size_t n) {
    if (b->n + n > b->cap || !b->v) {
        size_t cap = (b->n + n) * 2 + 16;
        uint32_t *v = realloc(b->v, cap * sizeof *v);
        if (!v) return -1;
        b->v = v;
        b->cap = cap;
    }
    if (n) memcpy(b->v + b->n, cps, n * sizeof *cps);
    b->n += n;
    return 0;
}

/* The steps that write a whole new text: cur[0..n) -> *v (malloc'd, *m code points) */
static int transform_step(const norm_step *s, const uint32_t *cur, size_t n, uint32_t **v, size_t *m, ts_error *err) {
    switch (s->kind) {
    case NORM_FORM:
        return unicode_normalize(s->form, cur, n, v, m) ? ts_fail(err, "out of memory normalizing %zu code points", n) : 0;
    case NORM_LOWERCASE:
        return unicode_lowercase(cur, n, v, m) ? ts_fail(err, "out of memory lowercasing %zu code points", n) : 0;
    default:   /* NORM_PRECOMPILED */
        return precompiled_normalize(s->charsmap, cur, n, v, m, err);
    }
}

/* One step: cur[0..n) -> *out (malloc'd) */
static int normalize_step(const norm_step *s, const uint32_t *cur, size_t n, cp_buf *out, ts_error *err) {
    switch (s->kind) {
    case NORM_FORM:
    case NORM_LOWERCASE:
    case NORM_PRECOMPILED: {
        uint32_t *v;
        size_t m;
        if (transform_step(s, cur, n, &v, &m, err)) return -1;
        out->v = v;
        out->n = out->cap = m;
        return 0;
    }
    case NORM_STRIP: {
        size_t a = 0, b = n;
        if (s->left) while (a < b && unicode_is_space(cur[a])) a++;
        if (s->right) while (b > a && unicode_is_space(cur[b - 1])) b--;
        return cp_put(out, cur + a, b - a) ? ts_fail(err, "out of memory normalizing") : 0;
    }
    case NORM_PREPEND:
        if (n && cp_put(out, s->text, s->text_n)) return ts_fail(err, "out of memory normalizing");
        return cp_put(out, cur, n) ? ts_fail(err, "out of memory normalizing") : 0;
    default: {   /* NORM_REPLACE: every match by the content */
        regex_matches m = { 0 };
        if (regex_find_all(s->re, cur, n, &m, err)) { regex_matches_free(&m); return -1; }
        size_t pos = 0;
        int rc = 0;
        for (size_t i = 0; i < m.n && !rc; i++) {
            rc = cp_put(out, cur + pos, m.m[i].start - pos) || cp_put(out, s->text, s->text_n);
            pos = m.m[i].end;
        }
        rc = rc || cp_put(out, cur + pos, n - pos);
        regex_matches_free(&m);
        return rc ? ts_fail(err, "out of memory normalizing") : 0;
    }
    }
}

int pipeline_normalize(const pipeline *p, const uint32_t *cps, size_t n, uint32_t **out, size_t *out_n, ts_error *err) {
    cp_buf cur = { 0 };
    if (cp_put(&cur, cps, n)) return ts_fail(err, "out of memory normalizing %zu code points", n);
    for (int i = 0; i < p->n_norm; i++) {
        cp_buf next = { 0 };
        int rc = normalize_step(&p->norm[i], cur.v, cur.n, &next, err);
        free(cur.v);
        if (rc) { free(next.v); return -1; }
        cur = next;
    }
    *out = cur.v;
    *out_n = cur.n;
    return 0;
}

/* ---- the pre-tokenizer's rewrite ---- */

bool pipeline_rewrites(const pipeline *p) { return p && p->meta.on; }

int pipeline_rewrite(const pipeline *p, const uint32_t *cps, size_t n, bool at_start, uint32_t **out, size_t *out_n, ts_error *err) {
    const metaspace m = p->meta;
    uint32_t *v = malloc((n + 1) * sizeof *v);
    if (!v) return ts_fail(err, "out of memory pre-tokenizing %zu code points", n);
    size_t w = 0;
    /* prepended only to a piece that does not already start with it (a leading space included) */
    bool starts = n > 0 && (cps[0] == ' ' || cps[0] == m.replacement);
    if (m.on && n > 0 && !starts && (m.prepend == PREPEND_ALWAYS || (m.prepend == PREPEND_FIRST && at_start))) v[w++] = m.replacement;
    for (size_t i = 0; i < n; i++) v[w++] = m.on && cps[i] == ' ' ? m.replacement : cps[i];
    *out = v;
    *out_n = w;
    return 0;
}

/* ---- splitting ---- */

static int span_put(regex_matches *o, size_t start, size_t end) {
    if (o->n == o->cap) {
        size_t cap = o->cap ? 2 * o->cap : 64;
        regex_match *m = realloc(o->m, cap * sizeof *m);
        if (!m) return -1;
        o->m = m;
        o->cap = cap;
    }
    o->m[o->n++] = (regex_match){ start, end };
    return 0;
}

/* The piece [a, b) of cps split by one step into out (appended), as tokenizers' NormalizedString::split:
 * the matches and the stretches between them, flagged; inverted if asked; then joined by the behavior;
 * empty pieces dropped. */
static int split_piece(const split_step *s, const uint32_t *cps, size_t a, size_t b, regex_matches *found, regex_matches *spans,
                       bool **flag, size_t *flag_cap, regex_matches *out, ts_error *err) {
    if (regex_find_all(s->re, cps + a, b - a, found, err)) return -1;
    spans->n = 0;
    if (*flag_cap < 2 * found->n + 1) {
        bool *f = realloc(*flag, (2 * found->n + 1) * sizeof *f);
        if (!f) return ts_fail(err, "out of memory splitting");
        *flag = f;
        *flag_cap = 2 * found->n + 1;
    }
    size_t pos = 0;
    for (size_t i = 0; i < found->n; i++) {
        const regex_match m = found->m[i];
        if (m.start > pos) { (*flag)[spans->n] = false; if (span_put(spans, a + pos, a + m.start)) goto oom; }
        (*flag)[spans->n] = true;
        if (span_put(spans, a + m.start, a + m.end)) goto oom;
        pos = m.end;
    }
    if (pos < b - a) { (*flag)[spans->n] = false; if (span_put(spans, a + pos, b)) goto oom; }
    if (s->invert)
        for (size_t i = 0; i < spans->n; i++) (*flag)[i] = !(*flag)[i];

    /* join per the behavior, in place: w spans kept so far */
    size_t w = 0;
    bool previous = false;
    if (s->behavior == SPLIT_MERGED_WITH_NEXT) {
        /* from the end: a match joins the piece after it unless that one is a match */
        size_t r = spans->n;
        w = spans->n;
        while (r-- > 0) {
            const bool is = (*flag)[r];
            if (is && !previous && w < spans->n) spans->m[w].start = spans->m[r].start;
            else spans->m[--w] = spans->m[r];
            previous = is;
        }
        for (size_t i = w; i < spans->n; i++)
            if (spans->m[i].end > spans->m[i].start && span_put(out, spans->m[i].start, spans->m[i].end)) goto oom;
        return 0;
    }
    for (size_t r = 0; r < spans->n; r++) {
        const bool is = (*flag)[r];
        switch (s->behavior) {
        case SPLIT_REMOVED:
            if (!is) spans->m[w++] = spans->m[r];
            break;
        case SPLIT_ISOLATED:
            spans->m[w++] = spans->m[r];
            break;
        case SPLIT_MERGED_WITH_PREVIOUS:   /* a match joins the piece before it unless that one is a match */
            if (is && !previous && w > 0) spans->m[w - 1].end = spans->m[r].end;
            else spans->m[w++] = spans->m[r];
            break;
        default:                           /* SPLIT_CONTIGUOUS: runs of the same kind join */
            if (is == previous && w > 0) spans->m[w - 1].end = spans->m[r].end;
            else spans->m[w++] = spans->m[r];
            break;
        }
        previous = is;
    }
    for (size_t i = 0; i < w; i++)
        if (spans->m[i].end > spans->m[i].start && span_put(out, spans->m[i].start, spans->m[i].end)) goto oom;
    return 0;
oom:
    return ts_fail(err, "out of memory splitting");
}

int pipeline_split(const pipeline *p, const uint32_t *cps, size_t n, regex_matches *out, ts_error *err) {
    out->n = 0;
    if (n && span_put(out, 0, n)) return ts_fail(err, "out of memory splitting");
    regex_matches next = { 0 }, found = { 0 }, spans = { 0 };
    bool *flag = NULL;
    size_t flag_cap = 0;
    int rc = 0;
    for (int i = 0; i < p->n_split && !rc; i++) {
        next.n = 0;
        for (size_t k = 0; k < out->n && !rc; k++)
            rc = split_piece(&p->split[i], cps, out->m[k].start, out->m[k].end, &found, &spans, &flag, &flag_cap, &next, err);
        regex_matches t = *out;
        *out = next;
        next = t;
    }
    regex_matches_free(&next);
    regex_matches_free(&found);
    regex_matches_free(&spans);
    free(flag);
    return rc;
}
