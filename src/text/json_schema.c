/* JSON Schema -> GBNF (see json_schema.h for the subset, the narrowings and the refusals).
 *
 * Every schema becomes one rule (named after its property, "-N" appended), a $ref target one rule
 * shared by all its references (so recursive definitions are rules that name themselves); the
 * fixed pieces (any value, strings, numbers, the formats) are rules named json-* and fmt-*, written
 * once at the end when used. Schemas with $ref siblings or allOf are first merged into one plain
 * schema object (normalize/merge), with objects of our own kept in an arena. */
#include "text/json_schema.h"
#include "core/error.h"
#include "core/utf8.h"
#include "io/json.h"
#include <ctype.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define JS_MAX_DEPTH 64          /* schema nesting (and $ref / allOf chains) */
#define JS_MAX_OUT (1u << 20)    /* bytes of grammar */
#define JS_MAX_COUNT 10000       /* lengths, item counts, regex repetitions */
#define JS_CHUNK 100             /* the largest {m,n} count written */
#define JS_MAX_PREFIX 64         /* prefixItems */
#define JS_MAX_ENUM 10000        /* enum values */
#define JS_MAX_PROPS 1000        /* properties of one object */
#define JS_MAX_KEY 256           /* bytes of a declared key when additional keys must avoid it */
#define JS_MAX_BOUND 1e15        /* numeric bounds */
#define JS_MAX_RANGES 512        /* ranges of a regex character class */
#define JS_NAME 64

enum { T_OBJECT = 1, T_ARRAY = 2, T_STRING = 4, T_NUMBER = 8, T_INTEGER = 16, T_BOOLEAN = 32,
       T_NULL = 64, T_ALL = 127 };

/* the fixed rules */
enum { P_VALUE = 1, P_OBJECT = 2, P_ARRAY = 4, P_STRING = 8, P_CHAR = 16, P_NUMBER = 32, P_INT = 64,
       P_KEYCHAR = 128, P_DATE = 256, P_TIME = 512, P_DATETIME = 1024, P_UUID = 2048 };

typedef struct ref_memo {
    const json_value *target;
    char name[JS_NAME];
    bool open;        /* being generated */
    int guard;        /* containers around it when opened */
} ref_memo;

typedef struct ctx {
    const json_value *root;
    json_buf out;
    ts_error *err;
    char path[400];
    int depth, guard;
    unsigned counter, prims;
    ref_memo *refs;
    size_t n_refs, cap_refs;
    void **blocks;
    size_t n_blocks, cap_blocks;
    bool oom;
    bool unsat;       /* the last failure: the schema matches nothing (an anyOf branch may) */
} ctx;

/* ------------------------------------------------------------------ errors, paths, buffers */

static int fail(ctx *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int fail(ctx *c, const char *fmt, ...) {
    char msg[320];
    c->unsat = false;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return ts_fail(c->err, "json schema: %s at %s", msg, c->path[0] ? c->path : "the root");
}

/* fail() for a schema that no value satisfies */
#define UNSAT(...) (fail(c, __VA_ARGS__), c->unsat = true, -1)

/* Appends "/seg" (JSON pointer escapes) to the path; returns the old length for path_pop. */
static size_t path_push(ctx *c, const char *seg) {
    size_t old = strlen(c->path), n = old, cap = sizeof c->path;
    if (n + 2 < cap) c->path[n++] = '/';
    for (const char *s = seg; *s && n + 3 < cap; s++) {
        if (*s == '~' || *s == '/') { c->path[n++] = '~'; c->path[n++] = *s == '~' ? '0' : '1'; }
        else c->path[n++] = *s;
    }
    c->path[n] = 0;
    return old;
}

static size_t path_push_index(ctx *c, const char *seg, size_t i) {
    char num[24];
    size_t old = path_push(c, seg);
    snprintf(num, sizeof num, "%zu", i);
    path_push(c, num);
    return old;
}

static void path_pop(ctx *c, size_t old) { c->path[old] = 0; }

static void putn(ctx *c, json_buf *b, const char *s, size_t n) {
    if (json_buf_put(b, s, n)) c->oom = true;
}

static void put(ctx *c, json_buf *b, const char *s) { putn(c, b, s, strlen(s)); }

static void putf(ctx *c, json_buf *b, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void putf(ctx *c, json_buf *b, const char *fmt, ...) {
    char tmp[512];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(tmp, sizeof tmp, fmt, ap);
    va_end(ap);
    if (n < 0 || (size_t)n >= sizeof tmp) { c->oom = true; return; }
    putn(c, b, tmp, (size_t)n);
}

/* A GBNF literal "..." holding the bytes s[0..n). */
static void put_lit(ctx *c, json_buf *b, const char *s, size_t n) {
    put(c, b, "\"");
    for (size_t i = 0; i < n; i++) {
        unsigned char ch = (unsigned char)s[i];
        if (ch == '"') put(c, b, "\\\"");
        else if (ch == '\\') put(c, b, "\\\\");
        else if (ch == '\n') put(c, b, "\\n");
        else if (ch == '\r') put(c, b, "\\r");
        else if (ch == '\t') put(c, b, "\\t");
        else if (ch < 0x20 || ch == 0x7f) putf(c, b, "\\x%02x", ch);
        else putn(c, b, (const char *)&ch, 1);
    }
    put(c, b, "\"");
}

/* A GBNF literal of s as a JSON string (quoted, escaped), followed by suffix. */
static void put_json_string_lit(ctx *c, json_buf *b, const char *s, size_t n, const char *suffix) {
    json_buf t = { 0 };
    if (json_buf_put_string(&t, s, n) || json_buf_put(&t, suffix, strlen(suffix))) c->oom = true;
    else put_lit(c, b, t.data, t.len);
    json_buf_free(&t);
}

static bool too_big(ctx *c, const json_buf *b) { return c->out.len + b->len > JS_MAX_OUT; }

static int fail_size(ctx *c) { return fail(c, "the grammar would exceed %u bytes", JS_MAX_OUT); }

/* A fresh rule name: the hint's letters and digits, then "-N". */
static void new_name(ctx *c, const char *hint, char name[JS_NAME]) {
    char h[28];
    size_t n = 0;
    for (const char *s = hint; *s && n < 24; s++) {
        unsigned char ch = (unsigned char)*s;
        bool alnum = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9');
        if (alnum) h[n++] = (char)ch;
        else if (n && h[n - 1] != '-') h[n++] = '-';
    }
    while (n && h[n - 1] == '-') n--;
    if (!n) h[n++] = 's';
    h[n] = 0;
    snprintf(name, JS_NAME, "%s-%u", h, ++c->counter);
}

static int emit_rule(ctx *c, const char *name, const json_buf *body) {
    put(c, &c->out, name);
    put(c, &c->out, " ::= ");
    putn(c, &c->out, body->data ? body->data : "", body->len);
    put(c, &c->out, "\n");
    if (c->out.len > JS_MAX_OUT) return fail_size(c);
    return 0;
}

/* ------------------------------------------------------------------ our own JSON values */

static void *arena(ctx *c, size_t bytes) {
    if (c->n_blocks == c->cap_blocks) {
        size_t cap = c->cap_blocks ? 2 * c->cap_blocks : 32;
        void **nb = realloc(c->blocks, cap * sizeof *nb);
        if (!nb) { c->oom = true; return NULL; }
        c->blocks = nb;
        c->cap_blocks = cap;
    }
    void *p = calloc(1, bytes ? bytes : 1);
    if (!p) { c->oom = true; return NULL; }
    c->blocks[c->n_blocks++] = p;
    return p;
}

/* An empty object with room for cap members. */
static json_value *obj_new(ctx *c, size_t cap) {
    json_value *o = arena(c, sizeof *o);
    if (!o) return NULL;
    o->type = JSON_OBJECT;
    o->keys = arena(c, (cap ? cap : 1) * sizeof *o->keys);
    o->key_lens = arena(c, (cap ? cap : 1) * sizeof *o->key_lens);
    o->items = arena(c, (cap ? cap : 1) * sizeof *o->items);
    return o->keys && o->key_lens && o->items ? o : NULL;
}

static void obj_add(json_value *o, char *key, size_t klen, const json_value *v) {
    o->keys[o->n] = key;
    o->key_lens[o->n] = klen;
    o->items[o->n++] = *v;
}

static json_value *arr_new(ctx *c, size_t cap) {
    json_value *a = arena(c, sizeof *a);
    if (!a) return NULL;
    a->type = JSON_ARRAY;
    a->items = arena(c, (cap ? cap : 1) * sizeof *a->items);
    return a->items ? a : NULL;
}

/* {"allOf": [a, b]} */
static json_value *all_of(ctx *c, const json_value *a, const json_value *b) {
    json_value *arr = arr_new(c, 2), *o = obj_new(c, 1);
    if (!arr || !o) return NULL;
    arr->items[arr->n++] = *a;
    arr->items[arr->n++] = *b;
    obj_add(o, "allOf", 5, arr);
    return o;
}

static bool key_is(const json_value *o, size_t i, const char *k) {
    return o->key_lens[i] == strlen(k) && memcmp(o->keys[i], k, o->key_lens[i]) == 0;
}

/* member by key, comparing lengths (keys may hold NUL bytes) */
static const json_value *get_n(const json_value *o, const char *k, size_t klen) {
    if (!o || o->type != JSON_OBJECT) return NULL;
    for (size_t i = 0; i < o->n; i++)
        if (o->key_lens[i] == klen && memcmp(o->keys[i], k, klen) == 0) return &o->items[i];
    return NULL;
}

static const json_value *get(const json_value *o, const char *k) { return get_n(o, k, strlen(k)); }

static bool json_equal(const json_value *a, const json_value *b) {
    if (a->type != b->type) return false;
    switch (a->type) {
    case JSON_NULL: return true;
    case JSON_BOOL: return a->boolean == b->boolean;
    case JSON_NUMBER: return a->number == b->number;
    case JSON_STRING: return a->len == b->len && memcmp(a->str, b->str, a->len) == 0;
    case JSON_ARRAY:
        if (a->n != b->n) return false;
        for (size_t i = 0; i < a->n; i++) if (!json_equal(&a->items[i], &b->items[i])) return false;
        return true;
    case JSON_OBJECT:
        if (a->n != b->n) return false;
        for (size_t i = 0; i < a->n; i++) {
            const json_value *o = get_n(b, a->keys[i], a->key_lens[i]);
            if (!o || !json_equal(&a->items[i], o)) return false;
        }
        return true;
    }
    return false;
}

/* Compact JSON, numbers in their shortest round-trip form. */
static void put_json(ctx *c, json_buf *b, const json_value *v) {
    if (json_buf_put_value(b, v)) c->oom = true;
}

/* ------------------------------------------------------------------ keywords */

static const char *const annotation_kw[] = {
    "title", "description", "$schema", "$id", "$comment", "examples", "default", "deprecated",
    "readOnly", "writeOnly", "$defs", "definitions", NULL
};
static const char *const object_kw[] = { "properties", "required", "additionalProperties", NULL };
static const char *const array_kw[] = { "items", "prefixItems", "additionalItems", "minItems", "maxItems",
                                        "uniqueItems", NULL };
static const char *const string_kw[] = { "minLength", "maxLength", "pattern", "format", NULL };
static const char *const number_kw[] = { "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", NULL };
static const char *const other_kw[] = { "type", "enum", "const", "anyOf", "oneOf", "allOf", "$ref", NULL };

static bool in_list(const char *const *list, const json_value *o, size_t i) {
    for (; *list; list++) if (key_is(o, i, *list)) return true;
    return false;
}

static bool is_annotation(const json_value *o, size_t i) { return in_list(annotation_kw, o, i); }

static bool is_known(const json_value *o, size_t i) {
    return is_annotation(o, i) || in_list(object_kw, o, i) || in_list(array_kw, o, i) ||
           in_list(string_kw, o, i) || in_list(number_kw, o, i) || in_list(other_kw, o, i);
}

static int check_keywords(ctx *c, const json_value *s) {
    for (size_t i = 0; i < s->n; i++)
        if (!is_known(s, i)) return fail(c, "unsupported keyword \"%s\"", s->keys[i]);
    return 0;
}

/* Some member other than annotations and the named ones. */
static bool has_constraints_except(const json_value *s, const char *a, const char *b) {
    for (size_t i = 0; i < s->n; i++)
        if (!is_annotation(s, i) && !key_is(s, i, a) && !(b && key_is(s, i, b))) return true;
    return false;
}

static bool has_any(const json_value *s, const char *const *list) {
    for (; *list; list++) if (get(s, *list)) return true;
    return false;
}

/* s without the members named a and b */
static json_value *obj_without(ctx *c, const json_value *s, const char *a, const char *b) {
    json_value *o = obj_new(c, s->n);
    if (!o) return NULL;
    for (size_t i = 0; i < s->n; i++)
        if (!key_is(s, i, a) && !(b && key_is(s, i, b))) obj_add(o, s->keys[i], s->key_lens[i], &s->items[i]);
    return o;
}

static int type_bit(ctx *c, const json_value *v, unsigned *bit) {
    static const struct { const char *name; unsigned bit; } types[] = {
        { "object", T_OBJECT }, { "array", T_ARRAY }, { "string", T_STRING }, { "number", T_NUMBER },
        { "integer", T_INTEGER }, { "boolean", T_BOOLEAN }, { "null", T_NULL },
    };
    if (v->type != JSON_STRING) return fail(c, "\"type\" must be a type name or a list of them");
    for (size_t i = 0; i < sizeof types / sizeof types[0]; i++)
        if (v->len == strlen(types[i].name) && !memcmp(v->str, types[i].name, v->len)) {
            *bit = types[i].bit;
            return 0;
        }
    return fail(c, "unknown type \"%s\"", v->str);
}

/* The types a "type" value names; number includes integer. */
static int type_mask_of(ctx *c, const json_value *t, unsigned *mask) {
    unsigned bit = 0;
    *mask = 0;
    if (t->type == JSON_ARRAY) {
        if (!t->n) return fail(c, "\"type\" is an empty list");
        for (size_t i = 0; i < t->n; i++) {
            if (type_bit(c, &t->items[i], &bit)) return -1;
            *mask |= bit;
        }
    } else {
        if (type_bit(c, t, &bit)) return -1;
        *mask = bit;
    }
    if (*mask & T_NUMBER) *mask |= T_INTEGER;
    return 0;
}

/* The types s allows (every one when "type" is absent). */
static int type_mask(ctx *c, const json_value *s, unsigned *mask) {
    const json_value *t = get(s, "type");
    if (!t) { *mask = T_ALL; return 0; }
    return type_mask_of(c, t, mask);
}

static bool is_integral(const json_value *v) {
    return v->type == JSON_NUMBER && (v->is_integer || (isfinite(v->number) && v->number == floor(v->number)));
}

/* A non-negative integer keyword (minLength, maxItems, ...) at most JS_MAX_COUNT; -1 when absent. */
static int count_kw(ctx *c, const json_value *s, const char *key, long *out) {
    const json_value *v = get(s, key);
    *out = -1;
    if (!v) return 0;
    if (!is_integral(v) || v->number < 0) return fail(c, "\"%s\" must be a non-negative integer", key);
    if (v->number > JS_MAX_COUNT) return fail(c, "\"%s\" %.0f is above the supported %d", key, v->number, JS_MAX_COUNT);
    *out = (long)v->number;
    return 0;
}

/* ------------------------------------------------------------------ $ref */

static int resolve_ref(ctx *c, const json_value *ref, const json_value **target) {
    if (ref->type != JSON_STRING) return fail(c, "\"$ref\" must be a string");
    const char *s = ref->str;
    size_t n = ref->len;
    if (!n || s[0] != '#') return fail(c, "$ref \"%s\": only references inside the document (#/...) are supported", s);
    if (n > 1 && s[1] != '/') return fail(c, "$ref \"%s\": anchors are not supported, only JSON pointers", s);
    const json_value *v = c->root;
    size_t i = 1;
    char seg[256];
    while (i < n) {
        i++;   /* the '/' */
        size_t k = 0;
        while (i < n && s[i] != '/') {
            char ch = s[i++];
            if (ch == '~' && i < n && (s[i] == '0' || s[i] == '1')) ch = s[i++] == '0' ? '~' : '/';
            else if (ch == '%' && i + 1 < n && isxdigit((unsigned char)s[i]) && isxdigit((unsigned char)s[i + 1])) {
                char hex[3] = { s[i], s[i + 1], 0 };
                ch = (char)strtol(hex, NULL, 16);
                i += 2;
            }
            if (k + 1 >= sizeof seg) return fail(c, "$ref \"%s\": a segment is too long", s);
            seg[k++] = ch;
        }
        seg[k] = 0;
        const json_value *next = NULL;
        if (v->type == JSON_OBJECT) next = get_n(v, seg, k);
        else if (v->type == JSON_ARRAY && k && k < 10 && strspn(seg, "0123456789") == k) {
            size_t idx = (size_t)strtoul(seg, NULL, 10);
            if (idx < v->n) next = &v->items[idx];
        }
        if (!next) return fail(c, "$ref \"%s\" does not resolve", s);
        v = next;
    }
    *target = v;
    return 0;
}

/* ------------------------------------------------------------------ allOf: merging */

static int normalize(ctx *c, const json_value *s, const json_value **out);

static int merge_type(ctx *c, const json_value *a, const json_value *b, json_value **out) {
    unsigned ma, mb;
    if (type_mask_of(c, a, &ma) || type_mask_of(c, b, &mb)) return -1;
    /* "number" alone allows integers too: keep the narrower word */
    unsigned m = ma & mb;
    bool num_a = false, num_b = false;
    const json_value *lists[2] = { a, b };
    bool *flags[2] = { &num_a, &num_b };
    for (int k = 0; k < 2; k++) {
        const json_value *t = lists[k];
        size_t n = t->type == JSON_ARRAY ? t->n : 1;
        for (size_t i = 0; i < n; i++) {
            const json_value *e = t->type == JSON_ARRAY ? &t->items[i] : t;
            if (e->type == JSON_STRING && !strcmp(e->str, "number")) *flags[k] = true;
        }
    }
    static const char *const names[] = { "object", "array", "string", "number", "integer", "boolean", "null" };
    json_value *arr = arr_new(c, 7);
    if (!arr) return -1;
    for (int i = 0; i < 7; i++) {
        unsigned bit = 1u << i;
        if (!(m & bit)) continue;
        if (bit == T_NUMBER && !(num_a && num_b)) continue;
        if (bit == T_INTEGER && num_a && num_b) continue;
        json_value e = { .type = JSON_STRING, .str = (char *)names[i], .len = strlen(names[i]) };
        arr->items[arr->n++] = e;
    }
    if (!arr->n) return UNSAT("allOf: the branches allow no common type");
    *out = arr;
    return 0;
}

static bool names_declared(const json_value *props, const char *k, size_t klen) {
    return props && props->type == JSON_OBJECT && get_n(props, k, klen) != NULL;
}

/* additionalProperties of x (if not true) must not meet keys y declares that x does not. */
static int check_additional(ctx *c, const json_value *x, const json_value *y) {
    const json_value *ap = get(x, "additionalProperties"), *py = get(y, "properties");
    if (!ap || (ap->type == JSON_BOOL && ap->boolean) || !py || py->type != JSON_OBJECT) return 0;
    const json_value *px = get(x, "properties");
    for (size_t i = 0; i < py->n; i++)
        if (!names_declared(px, py->keys[i], py->key_lens[i]))
            return fail(c, "allOf: property \"%s\" of one branch meets additionalProperties of another",
                        py->keys[i]);
    return 0;
}

static int merge(ctx *c, const json_value *a, const json_value *b, const json_value **out) {
    if (check_additional(c, a, b) || check_additional(c, b, a)) return -1;
    json_value *r = obj_new(c, a->n + b->n);
    if (!r) return fail(c, "out of memory");
    for (size_t i = 0; i < a->n; i++) {
        const json_value *va = &a->items[i], *vb = get_n(b, a->keys[i], a->key_lens[i]);
        const char *k = a->keys[i];
        if (!vb || is_annotation(a, i)) { obj_add(r, a->keys[i], a->key_lens[i], va); continue; }
        json_value *m = NULL;
        if (!strcmp(k, "type")) {
            if (merge_type(c, va, vb, &m)) return -1;
        } else if (!strcmp(k, "required")) {
            if (va->type != JSON_ARRAY || vb->type != JSON_ARRAY) return fail(c, "\"required\" must be a list");
            if (!(m = arr_new(c, va->n + vb->n))) return fail(c, "out of memory");
            for (size_t j = 0; j < va->n; j++) m->items[m->n++] = va->items[j];
            for (size_t j = 0; j < vb->n; j++) m->items[m->n++] = vb->items[j];
        } else if (!strcmp(k, "properties")) {
            if (va->type != JSON_OBJECT || vb->type != JSON_OBJECT) return fail(c, "\"properties\" must be an object");
            if (!(m = obj_new(c, va->n + vb->n))) return fail(c, "out of memory");
            for (size_t j = 0; j < va->n; j++) {
                const json_value *pb = get_n(vb, va->keys[j], va->key_lens[j]);
                const json_value *pv = pb ? all_of(c, &va->items[j], pb) : &va->items[j];
                if (!pv) return fail(c, "out of memory");
                obj_add(m, va->keys[j], va->key_lens[j], pv);
            }
            for (size_t j = 0; j < vb->n; j++)
                if (!get_n(va, vb->keys[j], vb->key_lens[j])) obj_add(m, vb->keys[j], vb->key_lens[j], &vb->items[j]);
        } else if (!strcmp(k, "items") && va->type != JSON_ARRAY && vb->type != JSON_ARRAY) {
            if (!(m = all_of(c, va, vb))) return fail(c, "out of memory");
        } else if (!strcmp(k, "minLength") || !strcmp(k, "minItems") || !strcmp(k, "minimum") ||
                   !strcmp(k, "exclusiveMinimum") || !strcmp(k, "maxLength") || !strcmp(k, "maxItems") ||
                   !strcmp(k, "maximum") || !strcmp(k, "exclusiveMaximum")) {
            if (va->type != JSON_NUMBER || vb->type != JSON_NUMBER) return fail(c, "\"%s\" must be a number", k);
            bool lower = !strncmp(k, "min", 3) || !strcmp(k, "exclusiveMinimum");
            bool take_a = lower ? va->number >= vb->number : va->number <= vb->number;
            obj_add(r, a->keys[i], a->key_lens[i], take_a ? va : vb);
            continue;
        } else if (!json_equal(va, vb)) {
            return fail(c, "allOf: both branches set \"%s\", differently", k);
        } else {
            obj_add(r, a->keys[i], a->key_lens[i], va);
            continue;
        }
        obj_add(r, a->keys[i], a->key_lens[i], m);
    }
    for (size_t i = 0; i < b->n; i++)
        if (!get_n(a, b->keys[i], b->key_lens[i])) obj_add(r, b->keys[i], b->key_lens[i], &b->items[i]);
    *out = r;
    return 0;
}

/* s as one object schema without $ref and allOf (those merged in). */
static int normalize(ctx *c, const json_value *s, const json_value **out) {
    static const json_value empty = { .type = JSON_OBJECT };
    if (s->type == JSON_BOOL) {
        if (!s->boolean) return UNSAT("the schema false matches nothing");
        *out = &empty;
        return 0;
    }
    if (s->type != JSON_OBJECT) return fail(c, "a schema must be an object or a boolean");
    if (check_keywords(c, s)) return -1;
    const json_value *ref = get(s, "$ref"), *all = get(s, "allOf");
    if (!ref && !all) { *out = s; return 0; }
    if (++c->depth > JS_MAX_DEPTH) { c->depth--; return fail(c, "nesting deeper than %d levels (or a $ref cycle)", JS_MAX_DEPTH); }
    int rc = -1;
    const json_value *cur = &empty, *part, *rest = obj_without(c, s, "$ref", "allOf");
    if (!rest) { rc = fail(c, "out of memory"); goto done; }
    if (ref) {
        const json_value *target;
        char saved[sizeof c->path];
        memcpy(saved, c->path, sizeof saved);
        if (resolve_ref(c, ref, &target)) goto done;
        snprintf(c->path, sizeof c->path, "%s", ref->str + 1);
        int r = normalize(c, target, &part);
        memcpy(c->path, saved, sizeof saved);
        if (r || merge(c, cur, part, &cur)) goto done;
    }
    if (all) {
        if (all->type != JSON_ARRAY || !all->n) { rc = fail(c, "\"allOf\" must be a non-empty list"); goto done; }
        for (size_t i = 0; i < all->n; i++) {
            size_t old = path_push_index(c, "allOf", i);
            int r = normalize(c, &all->items[i], &part);
            path_pop(c, old);
            if (r || merge(c, cur, part, &cur)) goto done;
        }
    }
    if (merge(c, cur, rest, &cur)) goto done;
    *out = cur;
    rc = 0;
done:
    c->depth--;
    return rc;
}

/* ------------------------------------------------------------------ repetition */

/* " atom{n}" (" atom" for 1, nothing for 0); opt: " atom{0,n}" (" atom?" for 1) */
static void put_count(ctx *c, json_buf *b, const char *atom, long n, bool opt) {
    if (n <= 0) return;
    put(c, b, " ");
    put(c, b, atom);
    if (n == 1) { if (opt) put(c, b, "?"); }
    else if (opt) putf(c, b, "{0,%ld}", n);
    else putf(c, b, "{%ld}", n);
}

/* " ( atom{100} ){n}" or its optional form, n chunks of JS_CHUNK */
static void put_chunks(ctx *c, json_buf *b, const char *atom, long n, bool opt) {
    if (n <= 0) return;
    put(c, b, n == 1 && !opt ? " " : " ( ");
    put(c, b, atom);
    putf(c, b, "{%d}", JS_CHUNK);
    if (n == 1 && !opt) return;
    put(c, b, " )");
    if (n == 1) put(c, b, "?");
    else if (opt) putf(c, b, "{0,%ld}", n);
    else putf(c, b, "{%ld}", n);
}

/* atom repeated min..max times (max < 0: unbounded), no count above JS_CHUNK written. */
static void put_rep(ctx *c, json_buf *b, const char *atom, long min, long max) {
    put_chunks(c, b, atom, min / JS_CHUNK, false);
    put_count(c, b, atom, min % JS_CHUNK, false);
    if (max < 0) { put(c, b, " "); put(c, b, atom); put(c, b, "*"); return; }
    long k = max - min;
    if (k <= 0) return;
    if (k <= JS_CHUNK) { put_count(c, b, atom, k, true); return; }
    /* 0..k = (0..q-1 chunks, then 0..99) | (q chunks, then 0..r) */
    long q = k / JS_CHUNK, r = k % JS_CHUNK;
    put(c, b, " (");
    put_chunks(c, b, atom, q - 1, true);
    put_count(c, b, atom, JS_CHUNK - 1, true);
    put(c, b, " |");
    put_chunks(c, b, atom, q, false);
    put_count(c, b, atom, r, true);
    put(c, b, " )");
}

/* ------------------------------------------------------------------ character sets (patterns) */

typedef struct cset { uint32_t lo[JS_MAX_RANGES], hi[JS_MAX_RANGES]; int n; bool full; } cset;

static void cset_add(cset *s, uint32_t lo, uint32_t hi) {
    if (s->n == JS_MAX_RANGES) { s->full = true; return; }
    s->lo[s->n] = lo;
    s->hi[s->n++] = hi;
}

/* sorted, merged */
static void cset_norm(cset *s) {
    uint64_t pairs[JS_MAX_RANGES];
    for (int i = 0; i < s->n; i++) pairs[i] = (uint64_t)s->lo[i] << 32 | s->hi[i];
    /* sort by lo (then hi) */
    for (int i = 1; i < s->n; i++)
        for (int j = i; j > 0 && pairs[j - 1] > pairs[j]; j--) { uint64_t t = pairs[j]; pairs[j] = pairs[j - 1]; pairs[j - 1] = t; }
    int m = 0;
    for (int i = 0; i < s->n; i++) {
        uint32_t lo = (uint32_t)(pairs[i] >> 32), hi = (uint32_t)pairs[i];
        if (m && lo <= s->hi[m - 1] + 1) { if (hi > s->hi[m - 1]) s->hi[m - 1] = hi; }
        else { s->lo[m] = lo; s->hi[m++] = hi; }
    }
    s->n = m;
}

static void cset_negate(cset *s) {
    cset_norm(s);
    cset t = { .n = 0 };
    uint32_t next = 0;
    for (int i = 0; i < s->n; i++) {
        if (s->lo[i] > next) cset_add(&t, next, s->lo[i] - 1);
        next = s->hi[i] + 1;
    }
    if (next <= 0x10FFFF) cset_add(&t, next, 0x10FFFF);
    t.full = s->full;
    *s = t;
}

static bool cset_has(const cset *s, uint32_t cp) {
    for (int i = 0; i < s->n; i++) if (cp >= s->lo[i] && cp <= s->hi[i]) return true;
    return false;
}

/* s minus [lo, hi] (s normalized) */
static void cset_remove(cset *s, uint32_t lo, uint32_t hi) {
    cset t = { .n = 0 };
    for (int i = 0; i < s->n; i++) {
        if (s->hi[i] < lo || s->lo[i] > hi) { cset_add(&t, s->lo[i], s->hi[i]); continue; }
        if (s->lo[i] < lo) cset_add(&t, s->lo[i], lo - 1);
        if (s->hi[i] > hi) cset_add(&t, hi + 1, s->hi[i]);
    }
    t.full = s->full;
    *s = t;
}

static void put_class_char(ctx *c, json_buf *b, uint32_t cp) {
    if (cp < 0x80) {
        if (cp < 0x20 || cp == 0x7f || strchr("\\]^-[\"", (int)cp)) putf(c, b, "\\x%02x", cp);
        else { char ch = (char)cp; putn(c, b, &ch, 1); }
    } else if (cp <= 0xFFFF) {
        putf(c, b, "\\u%04x", cp);
    } else {
        char u[4];
        int n = utf8_encode(cp, u);
        putn(c, b, u, (size_t)n);
    }
}

static void put_class(ctx *c, json_buf *b, const cset *s, bool negated) {
    put(c, b, negated ? "[^" : "[");
    for (int i = 0; i < s->n; i++) {
        put_class_char(c, b, s->lo[i]);
        if (s->hi[i] > s->lo[i]) { put(c, b, "-"); put_class_char(c, b, s->hi[i]); }
    }
    put(c, b, "]");
}

/* The JSON spelling of one character as a GBNF literal ("\\\"" for a quote, "\\n" for LF). */
static void put_char_lit(ctx *c, json_buf *b, uint32_t cp) {
    char u[4];
    int n = utf8_encode(cp, u);
    json_buf t = { 0 };
    if (!n || json_buf_put_string(&t, u, (size_t)n)) { c->oom = true; json_buf_free(&t); return; }
    put_lit(c, b, t.data + 1, t.len - 2);
    json_buf_free(&t);
}

/* A primary matching, inside a JSON string, the characters of s: raw where JSON allows them raw,
 * else their escape. */
static int put_set(ctx *c, json_buf *b, cset *s) {
    cset_norm(s);
    if (s->full) return fail(c, "pattern: a character class with more than %d ranges", JS_MAX_RANGES);
    cset raw = *s;
    cset_remove(&raw, 0, 0x1f);
    cset_remove(&raw, '"', '"');
    cset_remove(&raw, '\\', '\\');
    cset_remove(&raw, 0xD800, 0xDFFF);
    json_buf alts = { 0 };
    int n = 0;
    if (raw.n) {
        cset comp = raw;
        cset_negate(&comp);
        cset_remove(&comp, 0xD800, 0xDFFF);
        if (comp.n < raw.n) put_class(c, &alts, &comp, true);
        else put_class(c, &alts, &raw, false);
        n++;
    }
    static const uint32_t short_escapes[] = { '\b', '\t', '\n', '\f', '\r' };   /* other controls: not written */
    for (size_t k = 0; k < sizeof short_escapes / sizeof short_escapes[0]; k++)
        if (cset_has(s, short_escapes[k])) { if (n++) put(c, &alts, " | "); put_char_lit(c, &alts, short_escapes[k]); }
    if (cset_has(s, '"')) { if (n++) put(c, &alts, " | "); put_char_lit(c, &alts, '"'); }
    if (cset_has(s, '\\')) { if (n++) put(c, &alts, " | "); put_char_lit(c, &alts, '\\'); }
    if (!n) { json_buf_free(&alts); return fail(c, "pattern: a character class that matches no character"); }
    if (n > 1) put(c, b, "( ");
    putn(c, b, alts.data, alts.len);
    if (n > 1) put(c, b, " )");
    json_buf_free(&alts);
    return 0;
}

/* ------------------------------------------------------------------ patterns */

typedef struct rx {
    ctx *c;
    const uint32_t *p;
    size_t n, i;
    int depth;
} rx;

static void set_digit(cset *s) { cset_add(s, '0', '9'); }
static void set_word(cset *s) { cset_add(s, '0', '9'); cset_add(s, 'A', 'Z'); cset_add(s, '_', '_'); cset_add(s, 'a', 'z'); }
static void set_space(cset *s) {
    static const uint32_t r[][2] = { { 9, 13 }, { 32, 32 }, { 0xA0, 0xA0 }, { 0x1680, 0x1680 }, { 0x2000, 0x200A },
                                     { 0x2028, 0x2029 }, { 0x202F, 0x202F }, { 0x205F, 0x205F },
                                     { 0x3000, 0x3000 }, { 0xFEFF, 0xFEFF } };
    for (size_t i = 0; i < sizeof r / sizeof r[0]; i++) cset_add(s, r[i][0], r[i][1]);
}

static int hex_digits(rx *r, int count, uint32_t *out) {
    uint32_t v = 0;
    for (int k = 0; k < count; k++) {
        if (r->i >= r->n) return -1;
        uint32_t ch = r->p[r->i];
        int d = ch >= '0' && ch <= '9' ? (int)(ch - '0') : ch >= 'a' && ch <= 'f' ? (int)(ch - 'a' + 10)
              : ch >= 'A' && ch <= 'F' ? (int)(ch - 'A' + 10) : -1;
        if (d < 0) return -1;
        v = v * 16 + (uint32_t)d;
        r->i++;
    }
    *out = v;
    return 0;
}

/* After a backslash: one character (*cp, return 0) or a set added to *set (return 1); -1 refused. */
static int rx_escape(rx *r, bool in_class, uint32_t *cp, cset *set) {
    ctx *c = r->c;
    if (r->i >= r->n) return fail(c, "pattern: a trailing backslash");
    uint32_t e = r->p[r->i++];
    cset t = { .n = 0 };
    switch (e) {
    case 'd': case 'D': set_digit(&t); break;
    case 'w': case 'W': set_word(&t); break;
    case 's': case 'S': set_space(&t); break;
    case 't': *cp = '\t'; return 0;
    case 'n': *cp = '\n'; return 0;
    case 'r': *cp = '\r'; return 0;
    case 'f': *cp = '\f'; return 0;
    case 'v': *cp = '\v'; return 0;
    case '0':
        if (r->i < r->n && r->p[r->i] >= '0' && r->p[r->i] <= '9') return fail(c, "pattern: octal escapes are not supported");
        *cp = 0;
        return 0;
    case 'b':
        if (in_class) { *cp = 8; return 0; }
        return fail(c, "pattern: word boundary \\b is not supported");
    case 'B': return fail(c, "pattern: word boundary \\B is not supported");
    case 'x':
        if (hex_digits(r, 2, cp)) return fail(c, "pattern: \\x needs two hex digits");
        return 0;
    case 'u':
        if (r->i < r->n && r->p[r->i] == '{') return fail(c, "pattern: \\u{...} is not supported");
        if (hex_digits(r, 4, cp)) return fail(c, "pattern: \\u needs four hex digits");
        if (*cp >= 0xD800 && *cp <= 0xDBFF && r->i + 1 < r->n && r->p[r->i] == '\\' && r->p[r->i + 1] == 'u') {
            size_t save = r->i;
            uint32_t lo;
            r->i += 2;
            if (!hex_digits(r, 4, &lo) && lo >= 0xDC00 && lo <= 0xDFFF) {
                *cp = 0x10000 + ((*cp - 0xD800) << 10) + (lo - 0xDC00);
                return 0;
            }
            r->i = save;
        }
        if (*cp >= 0xD800 && *cp <= 0xDFFF) return fail(c, "pattern: a lone surrogate \\u%04x", *cp);
        return 0;
    case 'k': return fail(c, "pattern: backreferences are not supported");
    case 'p': case 'P': return fail(c, "pattern: Unicode property escapes \\%c{...} are not supported", (char)e);
    case 'c': return fail(c, "pattern: control escapes \\c are not supported");
    default:
        if (e >= '1' && e <= '9') return fail(c, "pattern: backreferences are not supported");
        if ((e >= 'a' && e <= 'z') || (e >= 'A' && e <= 'Z') || (e >= '0' && e <= '9'))
            return fail(c, "pattern: unknown escape \\%c", (char)e);
        *cp = e;   /* escaped punctuation (or any other character) stands for itself */
        return 0;
    }
    if (e == 'D' || e == 'W' || e == 'S') cset_negate(&t);
    for (int k = 0; k < t.n; k++) cset_add(set, t.lo[k], t.hi[k]);
    return 1;
}

/* After '[': the class up to its ']'. */
static int rx_class(rx *r, cset *set) {
    ctx *c = r->c;
    bool neg = false;
    if (r->i < r->n && r->p[r->i] == '^') { neg = true; r->i++; }
    for (;;) {
        if (r->i >= r->n) return fail(c, "pattern: an unterminated character class");
        uint32_t ch = r->p[r->i++], lo;
        if (ch == ']') break;
        if (ch == '[' && r->i < r->n && (r->p[r->i] == ':' || r->p[r->i] == '=' || r->p[r->i] == '.'))
            return fail(c, "pattern: POSIX bracket expressions are not supported");
        if (ch == '\\') {
            int k = rx_escape(r, true, &lo, set);
            if (k < 0) return -1;
            if (k == 1) continue;
        } else {
            lo = ch;
        }
        if (r->i + 1 < r->n && r->p[r->i] == '-' && r->p[r->i + 1] != ']') {
            r->i++;
            uint32_t hi = r->p[r->i++];
            if (hi == '\\') {
                cset dummy = { .n = 0 };
                int k = rx_escape(r, true, &hi, &dummy);
                if (k < 0) return -1;
                if (k == 1) return fail(c, "pattern: a class shorthand as the end of a range");
            }
            if (hi < lo) return fail(c, "pattern: a range out of order in a character class");
            cset_add(set, lo, hi);
        } else {
            cset_add(set, lo, lo);
        }
    }
    if (neg) cset_negate(set);
    return 0;
}

/* {m} {m,} {m,n} at r->i (after '{'); 1 with the counts, 0 when not a quantifier (nothing eaten). */
static int rx_braces(rx *r, long *min, long *max) {
    size_t i = r->i;
    long a = 0, b = -1;
    int digits = 0;
    while (i < r->n && r->p[i] >= '0' && r->p[i] <= '9') { if (a < 1000000) a = a * 10 + (long)(r->p[i] - '0'); i++; digits++; }
    if (!digits) return 0;
    if (i < r->n && r->p[i] == '}') { b = a; }
    else if (i < r->n && r->p[i] == ',') {
        i++;
        if (i < r->n && r->p[i] >= '0' && r->p[i] <= '9') {
            b = 0;
            while (i < r->n && r->p[i] >= '0' && r->p[i] <= '9') { if (b < 1000000) b = b * 10 + (long)(r->p[i] - '0'); i++; }
        }
        if (i >= r->n || r->p[i] != '}') return 0;
    } else {
        return 0;
    }
    r->i = i + 1;
    *min = a;
    *max = b;
    return 1;
}

static int rx_alt(rx *r, json_buf *out, bool *nullable);

/* One sequence, up to '|' or ')' or the end; *nullable: it can match the empty string. */
static int rx_seq(rx *r, json_buf *out, bool *nullable) {
    ctx *c = r->c;
    size_t lit_end = SIZE_MAX;   /* where the last unrepeated literal ends in out: the next joins it */
    *nullable = true;
    while (r->i < r->n && r->p[r->i] != '|' && r->p[r->i] != ')') {
        uint32_t ch = r->p[r->i++];
        json_buf atom = { 0 };
        cset set = { .n = 0 };
        uint32_t cp;
        int rc = 0;
        bool atom_nullable = false, literal = false;
        switch (ch) {
        case '^':
            if (r->i == 1) continue;
            return fail(c, "pattern: \"^\" is supported only at the start");
        case '$':
            if (r->i == r->n) continue;
            return fail(c, "pattern: \"$\" is supported only at the end");
        case '*': case '+': case '?':
            return fail(c, "pattern: nothing to repeat before \"%c\"", (char)ch);
        case '(': {
            if (r->i < r->n && r->p[r->i] == '?') {
                uint32_t k = r->i + 1 < r->n ? r->p[r->i + 1] : 0;
                if (k == ':') r->i += 2;
                else if (k == '=' || k == '!') return fail(c, "pattern: lookahead is not supported");
                else if (k == '<' && r->i + 2 < r->n && (r->p[r->i + 2] == '=' || r->p[r->i + 2] == '!'))
                    return fail(c, "pattern: lookbehind is not supported");
                else if (k == '<') {
                    r->i += 2;
                    while (r->i < r->n && r->p[r->i] != '>') r->i++;
                    if (r->i >= r->n) return fail(c, "pattern: an unterminated group name");
                    r->i++;
                } else {
                    return fail(c, "pattern: the group syntax \"(?%c\" is not supported", k >= 0x20 && k < 0x7f ? (char)k : '?');
                }
            }
            if (++r->depth > JS_MAX_DEPTH) return fail(c, "pattern: groups nested deeper than %d", JS_MAX_DEPTH);
            json_buf inner = { 0 };
            rc = rx_alt(r, &inner, &atom_nullable);
            r->depth--;
            if (!rc && (r->i >= r->n || r->p[r->i] != ')')) rc = fail(c, "pattern: a \"(\" without \")\"");
            r->i++;
            if (!rc && inner.len) { put(c, &atom, "( "); putn(c, &atom, inner.data, inner.len); put(c, &atom, " )"); }
            json_buf_free(&inner);
            break;
        }
        case '[':
            rc = rx_class(r, &set);
            if (!rc) rc = put_set(c, &atom, &set);
            break;
        case '.':
            cset_add(&set, '\n', '\n');
            cset_add(&set, '\r', '\r');
            cset_add(&set, 0x2028, 0x2029);
            cset_negate(&set);
            rc = put_set(c, &atom, &set);
            break;
        case '\\': {
            int k = rx_escape(r, false, &cp, &set);
            if (k < 0) rc = -1;
            else if (k == 1) rc = put_set(c, &atom, &set);
            else { put_char_lit(c, &atom, cp); literal = true; }
            break;
        }
        case '{': {
            long a, b;
            size_t save = r->i;
            if (rx_braces(r, &a, &b)) return fail(c, "pattern: nothing to repeat before \"{\"");
            r->i = save;
            put_char_lit(c, &atom, ch);
            literal = true;
            break;
        }
        default:
            put_char_lit(c, &atom, ch);
            literal = true;
            break;
        }
        if (rc) { json_buf_free(&atom); return -1; }
        /* quantifier */
        long min = 1, max = 1;
        bool quant = false;
        if (r->i < r->n) {
            uint32_t q = r->p[r->i];
            if (q == '*') { min = 0; max = -1; quant = true; r->i++; }
            else if (q == '+') { min = 1; max = -1; quant = true; r->i++; }
            else if (q == '?') { min = 0; max = 1; quant = true; r->i++; }
            else if (q == '{') {
                r->i++;
                if (rx_braces(r, &min, &max)) quant = true;
                else r->i--;
            }
            if (quant && r->i < r->n && r->p[r->i] == '?') r->i++;   /* lazy: the same language */
            if (quant && r->i < r->n && (r->p[r->i] == '*' || r->p[r->i] == '+' || r->p[r->i] == '?')) {
                json_buf_free(&atom);
                return fail(c, "pattern: a quantifier after a quantifier");
            }
        }
        if (quant && max >= 0 && max < min) { json_buf_free(&atom); return fail(c, "pattern: {%ld,%ld} out of order", min, max); }
        if (quant && (min > JS_MAX_COUNT || max > JS_MAX_COUNT)) {
            json_buf_free(&atom);
            return fail(c, "pattern: a repetition count above the supported %d", JS_MAX_COUNT);
        }
        if (atom.len && quant && atom_nullable && max < 0) {
            json_buf_free(&atom);
            return fail(c, "pattern: a group that can match the empty string, repeated without bound");
        }
        if (atom.len) {
            if (!quant && literal && lit_end == out->len && atom.len >= 2) {
                out->len--;   /* "ab" + "c" -> "abc" */
                putn(c, out, atom.data + 1, atom.len - 1);
            } else if (!quant) { put(c, out, " "); putn(c, out, atom.data, atom.len); }
            else if (!memchr(atom.data, ' ', atom.len)) put_rep(c, out, atom.data, min, max);
            else {
                /* a rule of its own, so that nested counts do not multiply copies */
                char name[JS_NAME];
                new_name(c, "pattern", name);
                if (emit_rule(c, name, &atom)) { json_buf_free(&atom); return -1; }
                put_rep(c, out, name, min, max);
            }
            if (!(atom_nullable || (quant && min == 0))) *nullable = false;
            lit_end = !quant && literal ? out->len : SIZE_MAX;
        }
        json_buf_free(&atom);
        if (too_big(c, out)) return fail_size(c);
    }
    return 0;
}

/* Alternatives up to ')' or the end; writes nothing when the only match is the empty string. */
static int rx_alt(rx *r, json_buf *out, bool *nullable) {
    json_buf alts = { 0 };
    int n = 0;
    bool empty = false, seq_nullable;
    *nullable = false;
    for (;;) {
        json_buf seq = { 0 };
        if (rx_seq(r, &seq, &seq_nullable)) { json_buf_free(&seq); json_buf_free(&alts); return -1; }
        *nullable |= seq_nullable;
        if (seq.len) {
            if (n++) put(r->c, &alts, " |");
            putn(r->c, &alts, seq.data, seq.len);
        } else {
            empty = true;
        }
        json_buf_free(&seq);
        if (r->i < r->n && r->p[r->i] == '|') { r->i++; continue; }
        break;
    }
    if (n) {
        if (empty) put(r->c, out, "(");
        putn(r->c, out, alts.data + 1, alts.len - 1);   /* without its leading space */
        if (empty) put(r->c, out, " )?");
    }
    json_buf_free(&alts);
    return 0;
}

static int gen_pattern(ctx *c, const json_value *pat, json_buf *b) {
    if (pat->type != JSON_STRING) return fail(c, "\"pattern\" must be a string");
    if (pat->len > 4096) return fail(c, "pattern: longer than 4096 bytes");
    uint32_t *cps = malloc((pat->len + 1) * sizeof *cps);
    if (!cps) return fail(c, "out of memory");
    long n = utf8_to_code_points(pat->str, pat->len, cps, NULL);
    if (n < 0) { free(cps); return fail(c, "pattern: not valid UTF-8"); }
    rx r = { .c = c, .p = cps, .n = n > 0 ? (size_t)n : 0 };
    json_buf inner = { 0 };
    bool nullable;
    int rc = rx_alt(&r, &inner, &nullable);
    if (!rc && r.i < r.n) rc = fail(c, "pattern: a \")\" without \"(\"");
    if (!rc) {
        put(c, b, "\"\\\"\" ");
        if (inner.len) { put(c, b, "( "); putn(c, b, inner.data, inner.len); put(c, b, " ) "); }
        put(c, b, "\"\\\"\"");
    }
    json_buf_free(&inner);
    free(cps);
    return rc;
}

/* ------------------------------------------------------------------ numbers */

static const char nines[] = "9999999999999999999", zeros[] = "0000000000000000000";

/* Alternatives matching the L-digit strings from x to y (x <= y, leading zeros part of them). */
static void digit_range(ctx *c, json_buf *b, const char *x, const char *y, int L) {
    if (!memcmp(x, y, (size_t)L)) { put_lit(c, b, x, (size_t)L); return; }
    if (L == 1) { putf(c, b, "[%c-%c]", x[0], y[0]); return; }
    if (x[0] == y[0]) {
        putf(c, b, "\"%c\" ( ", x[0]);
        digit_range(c, b, x + 1, y + 1, L - 1);
        put(c, b, " )");
        return;
    }
    bool x_low = !memcmp(x + 1, zeros, (size_t)L - 1), y_high = !memcmp(y + 1, nines, (size_t)L - 1);
    char lo = x[0], hi = y[0];
    int n = 0;
    if (!x_low) {
        putf(c, b, "\"%c\" ( ", x[0]);
        digit_range(c, b, x + 1, nines, L - 1);
        put(c, b, " )");
        lo++;
        n++;
    }
    if (!y_high) hi--;
    if (lo <= hi) {
        if (n++) put(c, b, " | ");
        if (lo == hi) putf(c, b, "\"%c\"", lo);
        else putf(c, b, "[%c-%c]", lo, hi);
        if (L - 1 == 1) put(c, b, " [0-9]");
        else putf(c, b, " [0-9]{%d}", L - 1);
    }
    if (!y_high) {
        if (n++) put(c, b, " | ");
        putf(c, b, "\"%c\" ( ", y[0]);
        digit_range(c, b, zeros, y + 1, L - 1);
        put(c, b, " )");
    }
}

static int ndigits(uint64_t v) { int n = 1; while (v >= 10) { v /= 10; n++; } return n; }

static uint64_t pow10u(int n) { uint64_t p = 1; while (n-- > 0) p *= 10; return p; }

/* Alternatives for the integers lo..hi (hi_inf: no end), no leading zeros. */
static void int_digits(ctx *c, json_buf *b, uint64_t lo, uint64_t hi, bool hi_inf) {
    int L0 = ndigits(lo), L1 = hi_inf ? L0 : ndigits(hi);
    char xs[24], ys[24];
    int n = 0;
    for (int L = L0; L <= L1; L++) {
        uint64_t a = L == 1 ? 0 : pow10u(L - 1), z = pow10u(L) - 1;
        if (a < lo) a = lo;
        if (!hi_inf && z > hi) z = hi;
        snprintf(xs, sizeof xs, "%llu", (unsigned long long)a);
        snprintf(ys, sizeof ys, "%llu", (unsigned long long)z);
        if (n++) put(c, b, " | ");
        digit_range(c, b, xs, ys, L);
    }
    if (hi_inf && L0 < 16) putf(c, b, " | [1-9] [0-9]{%d,15}", L0);   /* at most 16 digits, as json-int */
}

typedef struct bound { bool set, excl; double v; } bound;

static int read_bounds(ctx *c, const json_value *s, bound *lo, bound *hi) {
    static const char *const keys[4] = { "minimum", "exclusiveMinimum", "maximum", "exclusiveMaximum" };
    *lo = *hi = (bound){ 0 };
    for (int k = 0; k < 4; k++) {
        const json_value *v = get(s, keys[k]);
        if (!v) continue;
        if (v->type == JSON_BOOL)
            return fail(c, "boolean \"%s\" (draft 4) is not supported: give the bound as a number", keys[k]);
        if (v->type != JSON_NUMBER) return fail(c, "\"%s\" must be a number", keys[k]);
        if (fabs(v->number) > JS_MAX_BOUND) return fail(c, "\"%s\" %g is beyond the supported +-1e15", keys[k], v->number);
        bool excl = k & 1;
        bound *bd = k < 2 ? lo : hi;
        bool tighter = !bd->set || (k < 2 ? v->number > bd->v : v->number < bd->v) || (v->number == bd->v && excl);
        if (tighter) *bd = (bound){ true, excl, v->number };
    }
    return 0;
}

static void gen_integer_range(ctx *c, json_buf *b, bool lo_set, int64_t lo, bool hi_set, int64_t hi) {
    int n = 0;
    if (!lo_set || lo < 0) {   /* negative values */
        uint64_t mlo = hi_set && hi < 0 ? (uint64_t)-hi : 1, mhi = lo_set ? (uint64_t)-lo : 0;
        put(c, b, "\"-\" ( ");
        int_digits(c, b, mlo, mhi, !lo_set);
        put(c, b, " )");
        n++;
    }
    if (!hi_set || hi >= 0) {
        if (n++) put(c, b, " | ");
        int_digits(c, b, lo_set && lo > 0 ? (uint64_t)lo : 0, hi_set ? (uint64_t)hi : 0, !hi_set);
    }
}

/* Alternatives for magnitudes m (no sign, no exponent) with a <= m <= b (excl: strictly). */
static int nonneg_number(ctx *c, json_buf *b, uint64_t a, bool a_excl, uint64_t z, bool z_inf, bool z_excl) {
    static const char frac[] = " ( \".\" [0-9]{1,16} )?", zero_frac[] = " ( \".\" \"0\"{1,16} )?",
                      nonzero_frac[] = " \".\" \"0\"{0,15} [1-9] [0-9]{0,15}";
    int n = 0;
    if (!z_inf && a == z) {
        if (a_excl || z_excl) return 0;
        putf(c, b, "\"%llu\"%s", (unsigned long long)a, zero_frac);
        return 1;
    }
    putf(c, b, "\"%llu\"%s", (unsigned long long)a, a_excl ? nonzero_frac : frac);
    n++;
    if (z_inf || a + 1 <= z - 1) {
        put(c, b, " | ( ");
        int_digits(c, b, a + 1, z_inf ? 0 : z - 1, z_inf);
        put(c, b, " )");
        put(c, b, frac);
        n++;
    }
    if (!z_inf && !z_excl) { putf(c, b, " | \"%llu\"%s", (unsigned long long)z, zero_frac); n++; }
    return n;
}

static int gen_number(ctx *c, const json_value *s, bool integer, json_buf *b) {
    bound lo, hi;
    if (read_bounds(c, s, &lo, &hi)) return -1;
    if (!lo.set && !hi.set) {
        c->prims |= integer ? P_INT : P_NUMBER;
        put(c, b, integer ? "json-int" : "json-number");
        return 0;
    }
    if (integer) {
        int64_t l = 0, h = 0;
        if (lo.set) l = lo.excl ? (int64_t)floor(lo.v) + 1 : (int64_t)ceil(lo.v);
        if (hi.set) h = hi.excl ? (int64_t)ceil(hi.v) - 1 : (int64_t)floor(hi.v);
        if (lo.set && hi.set && l > h) return UNSAT("no integer lies within the bounds");
        put(c, b, "( ");
        gen_integer_range(c, b, lo.set, l, hi.set, h);
        put(c, b, " )");
        return 0;
    }
    if ((lo.set && lo.v != floor(lo.v)) || (hi.set && hi.v != floor(hi.v)))
        return fail(c, "a non-integral bound on a number is not supported (%g)", lo.set && lo.v != floor(lo.v) ? lo.v : hi.v);
    if (lo.set && hi.set && (lo.v > hi.v || (lo.v == hi.v && (lo.excl || hi.excl))))
        return UNSAT("no number lies within the bounds");
    json_buf alts = { 0 };
    int n = 0;
    if (!hi.set || hi.v > 0 || (hi.v == 0 && !hi.excl)) {
        bool from_lo = lo.set && lo.v >= 0;
        n += nonneg_number(c, &alts, from_lo ? (uint64_t)lo.v : 0, from_lo && lo.excl,
                           hi.set ? (uint64_t)hi.v : 0, !hi.set, hi.excl);
    }
    if (!lo.set || lo.v < 0) {
        json_buf neg = { 0 };
        bool below = hi.set && hi.v < 0;
        int k = nonneg_number(c, &neg, below ? (uint64_t)-hi.v : 0, below ? hi.excl : true,
                              lo.set ? (uint64_t)-lo.v : 0, !lo.set, lo.excl);
        if (k) {
            if (n) put(c, &alts, " | ");
            put(c, &alts, "\"-\" ( ");
            putn(c, &alts, neg.data, neg.len);
            put(c, &alts, " )");
            n++;
        }
        json_buf_free(&neg);
    }
    if (!n) { json_buf_free(&alts); return UNSAT("no number lies within the bounds"); }
    put(c, b, "( ");
    putn(c, b, alts.data, alts.len);
    put(c, b, " )");
    json_buf_free(&alts);
    return 0;
}

/* ------------------------------------------------------------------ schemas */

static int gen_body(ctx *c, const json_value *s, json_buf *b);

/* One rule for s; its name in name (a fixed rule's or a $ref's when s is just that). */
static int gen_rule(ctx *c, const json_value *s, const char *hint, char name[JS_NAME]) {
    if (++c->depth > JS_MAX_DEPTH) { c->depth--; return fail(c, "nesting deeper than %d levels", JS_MAX_DEPTH); }
    json_buf body = { 0 };
    int rc = gen_body(c, s, &body);
    if (!rc && c->oom) rc = fail(c, "out of memory");
    if (!rc) {
        if (body.len && body.len < JS_NAME && strspn(body.data, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-") == body.len) {
            memcpy(name, body.data, body.len + 1);   /* just a rule's name */
        } else {
            new_name(c, hint, name);
            rc = emit_rule(c, name, &body);
        }
    }
    json_buf_free(&body);
    c->depth--;
    return rc;
}

static int gen_ref(ctx *c, const json_value *ref, json_buf *b) {
    const json_value *target;
    if (resolve_ref(c, ref, &target)) return -1;
    for (size_t i = 0; i < c->n_refs; i++)
        if (c->refs[i].target == target) {
            if (c->refs[i].open && c->refs[i].guard == c->guard)
                return fail(c, "$ref \"%s\" refers back to itself outside any object or array (left recursion)", ref->str);
            put(c, b, c->refs[i].name);
            return 0;
        }
    if (c->n_refs == c->cap_refs) {
        size_t cap = c->cap_refs ? 2 * c->cap_refs : 16;
        ref_memo *nr = realloc(c->refs, cap * sizeof *nr);
        if (!nr) return fail(c, "out of memory");
        c->refs = nr;
        c->cap_refs = cap;
    }
    size_t idx = c->n_refs++;
    const char *last = strrchr(ref->str, '/');
    char name[JS_NAME];
    new_name(c, last ? last + 1 : "root", name);
    c->refs[idx] = (ref_memo){ .target = target, .open = true, .guard = c->guard };
    memcpy(c->refs[idx].name, name, sizeof name);
    char saved[sizeof c->path];
    memcpy(saved, c->path, sizeof saved);
    snprintf(c->path, sizeof c->path, "%s", ref->str + 1);
    int rc = -1;
    json_buf body = { 0 };
    if (++c->depth > JS_MAX_DEPTH) rc = fail(c, "nesting deeper than %d levels", JS_MAX_DEPTH);
    else if (!(rc = gen_body(c, target, &body))) rc = emit_rule(c, name, &body);
    c->depth--;
    json_buf_free(&body);
    memcpy(c->path, saved, sizeof saved);
    c->refs[idx].open = false;
    if (!rc) put(c, b, name);
    return rc;
}

static int gen_string(ctx *c, const json_value *s, json_buf *b) {
    const json_value *fmt = get(s, "format"), *pat = get(s, "pattern");
    long min, max;
    if (count_kw(c, s, "minLength", &min) || count_kw(c, s, "maxLength", &max)) return -1;
    if (!fmt && !pat && min <= 0 && max < 0) {
        c->prims |= P_STRING;
        put(c, b, "json-string");
        return 0;
    }
    if (fmt && pat) return fail(c, "\"format\" together with \"pattern\" is not supported");
    if ((fmt || pat) && (min >= 0 || max >= 0))
        return fail(c, "\"minLength\"/\"maxLength\" together with \"%s\" is not supported", fmt ? "format" : "pattern");
    if (pat) return gen_pattern(c, pat, b);
    if (fmt) {
        static const struct { const char *name, *rule; unsigned prim; } formats[] = {
            { "date", "fmt-date", P_DATE }, { "time", "fmt-time", P_TIME },
            { "date-time", "fmt-date-time", P_DATETIME }, { "uuid", "fmt-uuid", P_UUID },
        };
        if (fmt->type != JSON_STRING) return fail(c, "\"format\" must be a string");
        for (size_t i = 0; i < sizeof formats / sizeof formats[0]; i++)
            if (!strcmp(fmt->str, formats[i].name) && fmt->len == strlen(formats[i].name)) {
                c->prims |= formats[i].prim;
                putf(c, b, "\"\\\"\" %s \"\\\"\"", formats[i].rule);
                return 0;
            }
        return fail(c, "unsupported format \"%s\" (supported: date, time, date-time, uuid)", fmt->str);
    }
    if (min < 0) min = 0;
    if (max >= 0 && max < min) return UNSAT("\"minLength\" %ld is above \"maxLength\" %ld", min, max);
    c->prims |= P_CHAR;
    put(c, b, "\"\\\"\"");
    put_rep(c, b, "json-char", min, max);
    put(c, b, " \"\\\"\"");
    return 0;
}

typedef struct key_ref { const char *s; size_t n; } key_ref;

static int cmp_key(const void *a, const void *b) {
    const key_ref *x = a, *y = b;
    size_t n = x->n < y->n ? x->n : y->n;
    int r = memcmp(x->s, y->s, n);
    return r ? r : (x->n > y->n) - (x->n < y->n);
}

/* A rule for the key texts (raw characters, no escapes) that extend the common off-byte prefix of
 * keys[0..n) (sorted) to a string none of them is. */
static int gen_notkey(ctx *c, const key_ref *keys, size_t n, size_t off, char name[JS_NAME]) {
    json_buf body = { 0 }, children = { 0 };
    bool terminal = false;
    int rc = 0;
    size_t i = 0;
    cset *excl = calloc(1, sizeof *excl);   /* the characters the class leaves out */
    if (!excl) return fail(c, "out of memory");
    cset_add(excl, 0, 0x1f);
    cset_add(excl, '"', '"');
    cset_add(excl, '\\', '\\');
    while (i < n && keys[i].n == off) { terminal = true; i++; }
    while (i < n && !rc) {
        uint32_t cp;
        int k = utf8_decode(keys[i].s + off, keys[i].n - off, &cp);
        size_t j = i + 1;
        if (k <= 0) { i++; continue; }
        while (j < n && keys[j].n >= off + (size_t)k && !memcmp(keys[j].s + off, keys[i].s + off, (size_t)k)) j++;
        if (cp >= 0x20 && cp != '"' && cp != '\\') {   /* other keys cannot be written without escapes */
            char child[JS_NAME];
            cset_add(excl, cp, cp);
            rc = gen_notkey(c, keys + i, j - i, off + (size_t)k, child);
            if (!rc) {
                put(c, &children, " | ");
                put_lit(c, &children, keys[i].s + off, (size_t)k);
                putf(c, &children, " %s", child);
            }
        }
        i = j;
    }
    if (!rc && excl->full) rc = fail(c, "too many property names to keep additional keys apart from");
    if (!rc) {
        cset_norm(excl);
        put(c, &body, "( ");
        put_class(c, &body, excl, true);
        c->prims |= P_KEYCHAR;
        put(c, &body, " json-keychar*");
        putn(c, &body, children.data ? children.data : "", children.len);
        put(c, &body, terminal ? " )" : " )?");
        new_name(c, "key", name);
        rc = emit_rule(c, name, &body);
    }
    free(excl);
    json_buf_free(&children);
    json_buf_free(&body);
    return rc;
}

typedef struct prop { const char *key; size_t klen; const json_value *schema; bool required, banned; } prop;

static int gen_object(ctx *c, const json_value *s, json_buf *b) {
    const json_value *props = get(s, "properties"), *req = get(s, "required"), *ap = get(s, "additionalProperties");
    if (props && props->type != JSON_OBJECT) return fail(c, "\"properties\" must be an object");
    if (req && req->type != JSON_ARRAY) return fail(c, "\"required\" must be a list of names");
    if (ap && ap->type != JSON_BOOL && ap->type != JSON_OBJECT) return fail(c, "\"additionalProperties\" must be a schema");
    bool ap_false = ap && ap->type == JSON_BOOL && !ap->boolean;
    bool ap_any = !ap || (ap->type == JSON_BOOL && ap->boolean);
    if ((!props || !props->n) && (!req || !req->n) && ap_any) {
        c->prims |= P_OBJECT;
        put(c, b, "json-object");
        return 0;
    }
    size_t np = props ? props->n : 0, nr = req ? req->n : 0;
    if (np + nr > JS_MAX_PROPS) return fail(c, "more than %d properties", JS_MAX_PROPS);
    prop *list = calloc(np + nr + 1, sizeof *list);
    key_ref *keys = calloc(np + nr + 1, sizeof *keys);
    json_buf *kv = calloc(np + nr + 1, sizeof *kv);
    json_buf extra = { 0 }, tail = { 0 }, alts = { 0 };
    int rc = 0;
    size_t k = 0, nkeys = 0;
    if (!list || !keys || !kv) { rc = fail(c, "out of memory"); goto done; }
    for (size_t i = 0; i < np; i++) {
        for (size_t j = 0; j < i; j++)
            if (props->key_lens[j] == props->key_lens[i] && !memcmp(props->keys[j], props->keys[i], props->key_lens[i])) {
                rc = fail(c, "property \"%s\" declared twice", props->keys[i]);
                goto done;
            }
        const json_value *ps = &props->items[i];
        list[k++] = (prop){ props->keys[i], props->key_lens[i], ps, false,
                            ps->type == JSON_BOOL && !ps->boolean };
        keys[nkeys++] = (key_ref){ props->keys[i], props->key_lens[i] };
    }
    for (size_t i = 0; i < nr; i++) {
        const json_value *r = &req->items[i];
        if (r->type != JSON_STRING) { rc = fail(c, "\"required\" must be a list of names"); goto done; }
        size_t j = 0;
        while (j < k && !(list[j].klen == r->len && !memcmp(list[j].key, r->str, r->len))) j++;
        if (j == k) {
            if (ap_false) { rc = UNSAT("required property \"%s\" is excluded by additionalProperties false", r->str); goto done; }
            list[k++] = (prop){ r->str, r->len, ap, false, false };
            keys[nkeys++] = (key_ref){ r->str, r->len };
        }
        if (list[j].banned) { rc = UNSAT("required property \"%s\" has the schema false", r->str); goto done; }
        list[j].required = true;
    }
    c->guard++;
    for (size_t i = 0; i < k && !rc; i++) {
        if (list[i].banned) continue;
        char vname[JS_NAME];
        size_t old = path_push(c, "properties");
        path_push(c, list[i].key);
        if (list[i].schema) rc = gen_rule(c, list[i].schema, list[i].key, vname);
        else { c->prims |= P_VALUE; strcpy(vname, "json-value"); }
        path_pop(c, old);
        if (rc) break;
        put_json_string_lit(c, &kv[i], list[i].key, list[i].klen, ":");
        putf(c, &kv[i], " %s", vname);
    }
    if (!rc && !ap_false) {
        char kname[JS_NAME], vname[JS_NAME];
        if (!nkeys) { c->prims |= P_STRING; strcpy(kname, "json-string"); }
        else {
            for (size_t i = 0; i < nkeys; i++)
                if (keys[i].n > JS_MAX_KEY) {
                    rc = fail(c, "property name longer than %d bytes while additional properties are allowed", JS_MAX_KEY);
                    break;
                }
            if (!rc) {
                qsort(keys, nkeys, sizeof *keys, cmp_key);
                char inner[JS_NAME];
                rc = gen_notkey(c, keys, nkeys, 0, inner);
                if (!rc) {
                    json_buf kb = { 0 };
                    putf(c, &kb, "\"\\\"\" %s \"\\\"\"", inner);
                    new_name(c, "extra-key", kname);
                    rc = emit_rule(c, kname, &kb);
                    json_buf_free(&kb);
                }
            }
        }
        if (!rc) {
            if (ap_any) { c->prims |= P_VALUE; strcpy(vname, "json-value"); }
            else {
                size_t old = path_push(c, "additionalProperties");
                rc = gen_rule(c, ap, "additional", vname);
                path_pop(c, old);
            }
        }
        if (!rc) {
            json_buf eb = { 0 };
            char ename[JS_NAME];
            putf(c, &eb, "%s \":\" %s", kname, vname);
            new_name(c, "extra", ename);
            rc = emit_rule(c, ename, &eb);
            json_buf_free(&eb);
            putf(c, &extra, "%s", ename);
            putf(c, &tail, " ( \",\" %s )*", ename);
        }
    }
    c->guard--;
    if (rc) goto done;
    /* the members after the first one written: "aft-i" rules, members i.. each with its comma */
    char (*aft)[JS_NAME] = calloc(k + 1, sizeof *aft);
    if (!aft) { rc = fail(c, "out of memory"); goto done; }
    for (size_t i = k; i-- > 1 && !rc;) {
        if (list[i].banned) { snprintf(aft[i], JS_NAME, "%s", i + 1 < k ? aft[i + 1] : ""); continue; }
        json_buf ab = { 0 };
        put(c, &ab, list[i].required ? "\",\" " : "( \",\" ");
        putn(c, &ab, kv[i].data, kv[i].len);
        put(c, &ab, list[i].required ? "" : " )?");
        if (i + 1 < k && aft[i + 1][0]) putf(c, &ab, " %s", aft[i + 1]);
        else if (i + 1 >= k || !aft[i + 1][0]) putn(c, &ab, tail.data ? tail.data : "", tail.len);
        new_name(c, "members", aft[i]);
        rc = emit_rule(c, aft[i], &ab);
        json_buf_free(&ab);
    }
    bool optional = true;
    int n = 0;
    for (size_t i = 0; i < k && !rc; i++) {
        if (list[i].banned) continue;
        if (n++) put(c, &alts, " | ");
        putn(c, &alts, kv[i].data, kv[i].len);
        if (i + 1 < k && aft[i + 1][0]) putf(c, &alts, " %s", aft[i + 1]);
        else putn(c, &alts, tail.data ? tail.data : "", tail.len);
        if (list[i].required) { optional = false; break; }
    }
    if (!rc && optional && extra.len) {
        if (n++) put(c, &alts, " | ");
        putn(c, &alts, extra.data, extra.len);
        putn(c, &alts, tail.data, tail.len);
    }
    free(aft);
    if (rc) goto done;
    if (!n) put(c, b, "\"{}\"");
    else {
        put(c, b, "\"{\" ( ");
        putn(c, b, alts.data, alts.len);
        put(c, b, optional ? " )? \"}\"" : " ) \"}\"");
    }
done:
    for (size_t i = 0; kv && i < np + nr; i++) json_buf_free(&kv[i]);
    free(kv);
    free(keys);
    free(list);
    json_buf_free(&extra);
    json_buf_free(&tail);
    json_buf_free(&alts);
    return rc;
}

static int gen_array(ctx *c, const json_value *s, json_buf *b) {
    const json_value *items = get(s, "items"), *prefix = get(s, "prefixItems"), *uniq = get(s, "uniqueItems");
    long min, max;
    if (count_kw(c, s, "minItems", &min) || count_kw(c, s, "maxItems", &max)) return -1;
    if (uniq && uniq->type != JSON_BOOL) return fail(c, "\"uniqueItems\" must be a boolean");
    if (uniq && uniq->boolean) return fail(c, "\"uniqueItems\": true is not supported");
    const char *prefix_kw = "prefixItems", *items_kw = "items";
    if (items && items->type == JSON_ARRAY) {   /* draft 4-2019 tuples */
        if (prefix) return fail(c, "\"items\" as a list together with \"prefixItems\"");
        prefix = items;
        prefix_kw = "items";
        items = get(s, "additionalItems");
        items_kw = "additionalItems";
    }
    if (prefix && prefix->type != JSON_ARRAY) return fail(c, "\"prefixItems\" must be a list of schemas");
    if (items && items->type != JSON_BOOL && items->type != JSON_OBJECT) return fail(c, "\"%s\" must be a schema", items_kw);
    if (!items && !prefix && min <= 0 && max < 0) {
        c->prims |= P_ARRAY;
        put(c, b, "json-array");
        return 0;
    }
    if (min < 0) min = 0;
    size_t k = prefix ? prefix->n : 0;
    if (k > JS_MAX_PREFIX) return fail(c, "more than %d prefix items", JS_MAX_PREFIX);
    if (max >= 0 && max < min) return UNSAT("\"minItems\" %ld is above \"maxItems\" %ld", min, max);
    char pn[JS_MAX_PREFIX][JS_NAME], item[JS_NAME];
    bool item_ok = !(items && items->type == JSON_BOOL && !items->boolean);
    int rc = 0;
    c->guard++;
    for (size_t i = 0; i < k && !rc; i++) {
        const json_value *p = &prefix->items[i];
        if (p->type == JSON_BOOL && !p->boolean) {   /* no element i: at most i elements */
            if (max < 0 || (long)i < max) max = (long)i;
            k = i;
            item_ok = false;
            break;
        }
        size_t old = path_push_index(c, prefix_kw, i);
        rc = gen_rule(c, p, "item", pn[i]);
        path_pop(c, old);
    }
    if (!rc && item_ok && (max < 0 || max > (long)k)) {
        if (!items || (items->type == JSON_BOOL)) { c->prims |= P_VALUE; strcpy(item, "json-value"); }
        else {
            size_t old = path_push(c, items_kw);
            rc = gen_rule(c, items, "item", item);
            path_pop(c, old);
        }
    }
    c->guard--;
    if (rc) return -1;
    if (max >= 0 && max < min) return UNSAT("\"minItems\" %ld cannot be met", min);
    if (!item_ok && min > (long)k) return UNSAT("\"minItems\" %ld cannot be met with %zu items", min, k);
    put(c, b, "\"[\"");
    size_t placed = 0;
    for (size_t i = 0; i < k && (max < 0 || (long)i < max); i++, placed++) {
        if ((long)i >= min) put(c, b, " (");
        putf(c, b, i ? " \",\" %s" : " %s", pn[i]);
    }
    if (placed == k && item_ok && (max < 0 || max > (long)k)) {
        long lo = min > (long)k ? min - (long)k : 0, hi = max < 0 ? -1 : max - (long)k;
        if (k == 0) {
            if (lo == 0) put(c, b, " (");
            putf(c, b, " %s", item);
            char sep[JS_NAME + 16];
            snprintf(sep, sizeof sep, "( \",\" %s )", item);
            put_rep(c, b, sep, lo ? lo - 1 : 0, hi < 0 ? -1 : hi - 1);
            if (lo == 0) put(c, b, " )?");
        } else {
            char sep[JS_NAME + 16];
            snprintf(sep, sizeof sep, "( \",\" %s )", item);
            put_rep(c, b, sep, lo, hi);
        }
    }
    for (size_t i = placed; i-- > 0;)
        if ((long)i >= min) put(c, b, " )?");
    put(c, b, " \"]\"");
    return 0;
}

static bool value_has_type(const json_value *v, unsigned mask) {
    switch (v->type) {
    case JSON_NULL: return mask & T_NULL;
    case JSON_BOOL: return mask & T_BOOLEAN;
    case JSON_STRING: return mask & T_STRING;
    case JSON_ARRAY: return mask & T_ARRAY;
    case JSON_OBJECT: return mask & T_OBJECT;
    case JSON_NUMBER: return (mask & T_NUMBER) || ((mask & T_INTEGER) && is_integral(v));
    }
    return false;
}

static int gen_enum(ctx *c, const json_value *s, json_buf *b) {
    const json_value *en = get(s, "enum"), *cn = get(s, "const");
    for (size_t i = 0; i < s->n; i++)
        if (!is_annotation(s, i) && !key_is(s, i, "type") && !key_is(s, i, "enum") && !key_is(s, i, "const"))
            return fail(c, "\"%s\" together with \"%s\" is not supported", en ? "enum" : "const", s->keys[i]);
    if (en && en->type != JSON_ARRAY) return fail(c, "\"enum\" must be a list");
    if (en && en->n > JS_MAX_ENUM) return fail(c, "\"enum\" with more than %d values", JS_MAX_ENUM);
    unsigned mask;
    if (type_mask(c, s, &mask)) return -1;
    size_t n = cn ? 1 : en->n;
    int written = 0;
    for (size_t i = 0; i < n; i++) {
        const json_value *v = cn ? cn : &en->items[i];
        if (cn && en) {
            bool found = false;
            for (size_t j = 0; j < en->n && !found; j++) found = json_equal(cn, &en->items[j]);
            if (!found) break;
        }
        if (!value_has_type(v, mask)) continue;
        json_buf t = { 0 };
        put_json(c, &t, v);
        if (written++) put(c, b, " | ");
        put_lit(c, b, t.data ? t.data : "", t.len);
        json_buf_free(&t);
        if (too_big(c, b)) return fail_size(c);
    }
    if (!written) return UNSAT("no value of \"%s\" is allowed by the schema's type", cn ? "const" : "enum");
    return 0;
}

/* s has no $ref and no allOf */
static int gen_plain(ctx *c, const json_value *s, json_buf *b) {
    const json_value *any = get(s, "anyOf"), *one = get(s, "oneOf");
    if (any && one) return fail(c, "\"anyOf\" together with \"oneOf\" is not supported");
    if (any || one) {
        /* oneOf is taken as anyOf: a grammar cannot tell that exactly one branch matches */
        const json_value *alts = any ? any : one;
        const char *kw = any ? "anyOf" : "oneOf";
        if (alts->type != JSON_ARRAY || !alts->n) return fail(c, "\"%s\" must be a non-empty list", kw);
        const json_value *rest = has_constraints_except(s, kw, NULL) ? obj_without(c, s, kw, NULL) : NULL;
        if (c->oom) return fail(c, "out of memory");
        for (size_t i = 0; i < alts->n; i++) {
            char name[JS_NAME];
            const json_value *br = &alts->items[i];
            if (br->type == JSON_BOOL && !br->boolean) continue;
            if (rest && !(br = all_of(c, rest, br))) return fail(c, "out of memory");
            size_t old = path_push_index(c, kw, i), out_len = c->out.len, n_refs = c->n_refs;
            int rc = gen_rule(c, br, "alt", name);
            path_pop(c, old);
            if (rc && c->unsat && !c->oom) {   /* a branch nothing satisfies: left out */
                c->out.len = out_len;
                if (c->out.data) c->out.data[out_len] = 0;
                c->n_refs = n_refs;
                continue;
            }
            if (rc) return -1;
            if (b->len) put(c, b, " | ");
            put(c, b, name);
        }
        if (!b->len) return UNSAT("every branch of \"%s\" matches nothing", kw);
        return 0;
    }
    if (get(s, "enum") || get(s, "const")) return gen_enum(c, s, b);
    unsigned mask;
    if (type_mask(c, s, &mask)) return -1;
    if (!get(s, "type") && !has_any(s, object_kw) && !has_any(s, array_kw) && !has_any(s, string_kw) &&
        !has_any(s, number_kw)) {
        c->prims |= P_VALUE;
        put(c, b, "json-value");
        return 0;
    }
    int n = 0;
    for (unsigned bit = 1; bit < T_ALL; bit <<= 1) {
        if (!(mask & bit) || (bit == T_INTEGER && (mask & T_NUMBER))) continue;
        if (n++) put(c, b, " | ");
        int rc = 0;
        switch (bit) {
        case T_OBJECT: rc = gen_object(c, s, b); break;
        case T_ARRAY: rc = gen_array(c, s, b); break;
        case T_STRING: rc = gen_string(c, s, b); break;
        case T_NUMBER: rc = gen_number(c, s, false, b); break;
        case T_INTEGER: rc = gen_number(c, s, true, b); break;
        case T_BOOLEAN: put(c, b, "\"true\" | \"false\""); break;
        case T_NULL: put(c, b, "\"null\""); break;
        }
        if (rc) return -1;
    }
    return 0;
}

static int gen_body(ctx *c, const json_value *s, json_buf *b) {
    if (s->type == JSON_BOOL) {
        if (!s->boolean) return UNSAT("the schema false matches nothing");
        c->prims |= P_VALUE;
        put(c, b, "json-value");
        return 0;
    }
    if (s->type != JSON_OBJECT) return fail(c, "a schema must be an object or a boolean");
    if (check_keywords(c, s)) return -1;
    const json_value *ref = get(s, "$ref");
    if (ref && !has_constraints_except(s, "$ref", NULL)) return gen_ref(c, ref, b);
    if (ref || get(s, "allOf")) {
        const json_value *m;
        if (normalize(c, s, &m)) return -1;
        return gen_plain(c, m, b);
    }
    return gen_plain(c, s, b);
}

/* ------------------------------------------------------------------ the fixed rules */

static const struct { unsigned prim, needs; const char *text; } fixed_rules[] = {
    { P_VALUE, P_OBJECT | P_ARRAY | P_STRING | P_NUMBER,
      "json-value ::= json-object | json-array | json-string | json-number | \"true\" | \"false\" | \"null\"\n" },
    { P_OBJECT, P_STRING | P_VALUE,
      "json-object ::= \"{\" ( json-string \":\" json-value ( \",\" json-string \":\" json-value )* )? \"}\"\n" },
    { P_ARRAY, P_VALUE, "json-array ::= \"[\" ( json-value ( \",\" json-value )* )? \"]\"\n" },
    { P_STRING, P_CHAR, "json-string ::= \"\\\"\" json-char* \"\\\"\"\n" },
    { P_CHAR, 0,
      "# a character of a JSON string: raw (not a quote, backslash or control character) or an escape"
      " (\\u of a surrogate excluded)\n"
      "json-char ::= [^\"\\\\\\x00-\\x1f] | \"\\\\\" ( [\"\\\\/bfnrt] | \"u\" ( [0-9a-cA-Ce-fE-F] [0-9a-fA-F]{3}"
      " | [dD] [0-7] [0-9a-fA-F]{2} ) )\n" },
    { P_NUMBER, P_INT, "json-number ::= json-int ( \".\" [0-9]{1,16} )? ( [eE] ( \"+\" | \"-\" )? [0-9]{1,3} )?\n" },
    { P_INT, 0, "json-int ::= \"-\"? ( \"0\" | [1-9] [0-9]{0,15} )\n" },
    { P_KEYCHAR, 0, "json-keychar ::= [^\"\\\\\\x00-\\x1f]\n" },
    { P_DATETIME, P_DATE | P_TIME, "fmt-date-time ::= fmt-date \"T\" fmt-time\n" },
    { P_DATE, 0,
      "fmt-date ::= fmt-year \"-\" ( ( \"01\" | \"03\" | \"05\" | \"07\" | \"08\" | \"10\" | \"12\" ) \"-\" fmt-day31"
      " | ( \"04\" | \"06\" | \"09\" | \"11\" ) \"-\" fmt-day30 | \"02-\" fmt-day28 ) | fmt-leap-year \"-02-29\"\n"
      "fmt-year ::= [1-9] [0-9]{3} | \"0\" ( [1-9] [0-9]{2} | \"0\" ( [1-9] [0-9] | \"0\" [1-9] ) )\n"
      "fmt-leap-year ::= [0-9]{2} ( [02468] [48] | [13579] [26] | [2468] \"0\" )"
      " | ( [2468] [048] | [13579] [26] | \"0\" [48] ) \"00\"\n"
      "fmt-day31 ::= \"0\" [1-9] | [12] [0-9] | \"3\" [01]\n"
      "fmt-day30 ::= \"0\" [1-9] | [12] [0-9] | \"30\"\n"
      "fmt-day28 ::= \"0\" [1-9] | \"1\" [0-9] | \"2\" [0-8]\n" },
    { P_TIME, 0,
      "fmt-time ::= fmt-hour \":\" [0-5] [0-9] \":\" [0-5] [0-9] ( \".\" [0-9]{1,9} )?"
      " ( \"Z\" | ( \"+\" | \"-\" ) fmt-hour \":\" [0-5] [0-9] )\n"
      "fmt-hour ::= [01] [0-9] | \"2\" [0-3]\n" },
    { P_UUID, 0,
      "fmt-uuid ::= [0-9a-fA-F]{8} \"-\" [0-9a-fA-F]{4} \"-\" [0-9a-fA-F]{4} \"-\" [0-9a-fA-F]{4}"
      " \"-\" [0-9a-fA-F]{12}\n" },
};

int json_schema_to_gbnf(const char *schema, size_t len, char **gbnf, ts_error *err) {
    json_value *root = NULL;
    ts_error perr;
    *gbnf = NULL;
    if (json_parse(schema, len, &root, &perr)) return ts_fail(err, "json schema: %s", perr.msg);
    ctx c = { .root = root, .err = err };
    json_buf body = { 0 }, all = { 0 };
    int rc = gen_body(&c, root, &body);
    if (!rc) {
        unsigned need = c.prims, prev;
        do {
            prev = need;
            for (size_t i = 0; i < sizeof fixed_rules / sizeof fixed_rules[0]; i++)
                if (need & fixed_rules[i].prim) need |= fixed_rules[i].needs;
        } while (need != prev);
        put(&c, &all, "root ::= ");
        putn(&c, &all, body.data ? body.data : "", body.len);
        put(&c, &all, "\n");
        putn(&c, &all, c.out.data ? c.out.data : "", c.out.len);
        for (size_t i = 0; i < sizeof fixed_rules / sizeof fixed_rules[0]; i++)
            if (need & fixed_rules[i].prim) put(&c, &all, fixed_rules[i].text);
        if (c.oom) rc = ts_fail(err, "json schema: out of memory");
        else if (all.len > JS_MAX_OUT) rc = fail_size(&c);
    }
    if (!rc) { *gbnf = all.data; all.data = NULL; }
    json_buf_free(&all);
    json_buf_free(&body);
    json_buf_free(&c.out);
    for (size_t i = 0; i < c.n_blocks; i++) free(c.blocks[i]);
    free(c.blocks);
    free(c.refs);
    json_free(root);
    return rc;
}
