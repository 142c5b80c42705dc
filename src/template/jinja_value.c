/* Values of the Jinja interpreter with Python's semantics: the arena they live in, truthiness,
 * equality and ordering, str() and repr() (what {{ }} prints for numbers, lists and dicts), and
 * the conversion of JSON input (messages, tools, extra variables) into values. */
#include "template/jinja_internal.h"
#include "core/utf8.h"
#include "core/error.h"
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_VALUE_DEPTH 256       /* nesting of lists/dicts that repr, json and == walk */

/* ---- arena ---- */

typedef struct jinja_block {
    struct jinja_block *next;
    size_t size, used;
    max_align_t data[];
} jinja_block;

#define BLOCK_SIZE ((size_t)64 << 10)
#define BIG_ALLOC ((size_t)16 << 10)      /* allocations this big get a block of their own */

static void arena_took(jinja_arena *a, size_t n) {
    a->used += n;
    if (a->used > a->peak) a->peak = a->used;
}

void *jinja_arena_alloc(jinja_arena *a, size_t n) {
    if (n > SIZE_MAX / 2) return NULL;
    n = (n + 15) & ~(size_t)15;
    jinja_block *b = a->blocks;
    if (b && b->size - b->used >= n) {
        void *p = (char *)b->data + b->used;
        b->used += n;
        return p;
    }
    if (n >= BIG_ALLOC) {
        /* on a list of its own, so the current block keeps its room */
        if (a->limit && (n + sizeof *b > a->limit || a->used > a->limit - n - sizeof *b)) return NULL;
        jinja_block *nb = calloc(1, sizeof *nb + n);
        if (!nb) return NULL;
        nb->size = nb->used = n;
        nb->next = a->big;
        a->big = nb;
        arena_took(a, n + sizeof *nb);
        return nb->data;
    }
    if (a->limit && a->used + BLOCK_SIZE + sizeof *b > a->limit) return NULL;
    jinja_block *nb = a->spare;
    if (nb) a->spare = NULL;
    else if (!(nb = calloc(1, sizeof *nb + BLOCK_SIZE))) return NULL;
    nb->size = BLOCK_SIZE;
    nb->used = n;
    nb->next = b;
    a->blocks = nb;
    arena_took(a, BLOCK_SIZE + sizeof *nb);
    return nb->data;
}

jinja_mark jinja_arena_mark(const jinja_arena *a) {
    return (jinja_mark){ .block = a->blocks, .big = a->big, .used = a->blocks ? a->blocks->used : 0 };
}

void jinja_arena_release(jinja_arena *a, jinja_mark m) {
    while (a->big != m.big) {
        jinja_block *b = a->big;
        a->big = b->next;
        a->used -= b->size + sizeof *b;
        free(b);
    }
    while (a->blocks != m.block) {
        jinja_block *b = a->blocks;
        a->blocks = b->next;
        a->used -= b->size + sizeof *b;
        if (a->spare) free(b);
        else {
            /* kept for the next block, so a loop whose iterations cross a block boundary does not
               go to malloc every time; memory in blocks stays zeroed past used */
            memset(b->data, 0, b->used);
            b->used = 0;
            b->next = NULL;
            a->spare = b;
        }
    }
    if (m.block && m.block->used > m.used) {
        memset((char *)m.block->data + m.used, 0, m.block->used - m.used);
        m.block->used = m.used;
    }
}

void jinja_arena_free(jinja_arena *a) {
    for (jinja_block *b = a->blocks, *next; b; b = next) { next = b->next; free(b); }
    for (jinja_block *b = a->big, *next; b; b = next) { next = b->next; free(b); }
    free(a->spare);
    a->blocks = a->big = a->spare = NULL;
    a->used = 0;
}

void jinja_fail(jinja_run *r, const char *fmt, ...) {
    char msg[400];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (r->raised) ts_fail(r->err, "%s", msg);
    else ts_fail(r->err, "line %d: %s", r->line, msg);
    longjmp(r->fail, 1);
}

void jinja_fail_memory(jinja_run *r) {
    size_t m = r->lim.max_memory;
    if (m % (1u << 20) == 0) jinja_fail(r, "more than %zu MiB of values (the cap on memory)", m >> 20);
    jinja_fail(r, "more than %zu bytes of values (the cap on memory)", m);
}

void *jinja_alloc(jinja_run *r, size_t n) {
    void *p = jinja_arena_alloc(&r->arena, n);
    if (!p) jinja_fail_memory(r);
    return p;
}

void jinja_charge(jinja_run *r, uint64_t steps) {
    r->steps += steps;
    if (r->steps > r->lim.max_steps)
        jinja_fail(r, "the render took more than %" PRIu64 " steps (a loop that does not end?)", r->lim.max_steps);
}

/* ---- growable text ---- */

/* A string buffer: text that jbufs write and string values point into. used says how far the
 * text goes; whoever appends exactly there may extend it in place (values of shorter prefixes
 * keep their bytes). */
typedef struct strbuf { size_t cap, used; char data[]; } strbuf;

static strbuf *strbuf_of(const char *text) { return (strbuf *)(void *)(text - offsetof(strbuf, data)); }

/* a buffer of room for need bytes (and a NUL) holding old[0..n) */
static char *strbuf_new(jinja_run *r, size_t need, const char *old, size_t n) {
    size_t cap = need < 47 ? 47 : need;
    strbuf *sb = jinja_alloc(r, sizeof *sb + cap + 1);
    sb->cap = cap + 1;
    if (n) memcpy(sb->data, old, n);
    sb->used = n;
    sb->data[n] = '\0';
    return sb->data;
}

/* room for a string growing to n bytes and beyond: twice n, but no more than a string may hold */
static size_t grown(jinja_run *r, size_t n) {
    size_t max = r->lim.max_output;
    return n <= max / 2 ? 2 * n : n > max ? n : max;
}

void jinja_fail_output(jinja_run *r, bool output) {
    if (output) jinja_fail(r, "the rendering is longer than %zu bytes (the cap on output)", r->lim.max_output);
    jinja_fail(r, "a string would be longer than %zu bytes (the cap on output)", r->lim.max_output);
}

/* ---- output buffers: malloc'd, counted in the arena's used ---- */

typedef struct jheap { struct jheap *prev, *next; size_t cap; char data[]; } jheap;

static void heap_put(jinja_run *r, jbuf *b, const char *p, size_t n) {
    if (b->n + n + 1 > b->cap) {
        jheap *h = b->p ? (jheap *)(void *)(b->p - offsetof(jheap, data)) : NULL;
        size_t cap = grown(r, b->n + n) + 1, old = h ? h->cap + sizeof *h : 0;
        if (cap < 256) cap = 256;
        jinja_arena *a = &r->arena;
        /* while it moves, the old block and the new one may both be held */
        if (a->limit && (cap + sizeof *h > a->limit || a->used > a->limit - cap - sizeof *h)) jinja_fail_memory(r);
        jheap *nh = realloc(h, sizeof *nh + cap);
        if (!nh) jinja_fail_memory(r);
        if (!h) {
            nh->prev = NULL;
            nh->next = r->heaps;
            if (r->heaps) r->heaps->prev = nh;
            r->heaps = nh;
        } else {
            if (nh->prev) nh->prev->next = nh; else r->heaps = nh;
            if (nh->next) nh->next->prev = nh;
        }
        nh->cap = cap;
        arena_took(a, cap + sizeof *nh);
        a->used -= old;
        b->p = nh->data;
        b->cap = cap;
    }
    if (n) memcpy(b->p + b->n, p, n);
    b->n += n;
    b->p[b->n] = '\0';
}

void jinja_buf_release(jinja_run *r, jbuf *b) {
    if (!b->heap || !b->p) return;
    jheap *h = (jheap *)(void *)(b->p - offsetof(jheap, data));
    if (h->prev) h->prev->next = h->next; else r->heaps = h->next;
    if (h->next) h->next->prev = h->prev;
    r->arena.used -= h->cap + sizeof *h;
    free(h);
    b->p = NULL;
    b->n = b->cap = 0;
}

void jinja_buf_free_all(jinja_run *r) {
    for (jheap *h = r->heaps, *next; h; h = next) {
        next = h->next;
        r->arena.used -= h->cap + sizeof *h;
        free(h);
    }
    r->heaps = NULL;
}

jv jinja_buf_take(jinja_run *r, jbuf *b) {
    if (!b->n) { jinja_buf_release(r, b); return jinja_str_static(""); }
    jv v = { .type = JV_STR, .grow = true };
    v.s.p = strbuf_new(r, b->n, b->p, b->n);
    v.s.n = b->n;
    jinja_buf_release(r, b);
    return v;
}

void jinja_buf_put(jinja_run *r, jbuf *b, const char *p, size_t n) {
    if (n > r->lim.max_output || b->n > r->lim.max_output - n) jinja_fail_output(r, b->heap);
    /* text written costs steps (one a call, and one for 64 bytes): printing or
       converting a big value (repr, tojson, join) is work though it is one expression */
    r->written += 64 + n;
    if (r->written >= 4096) { jinja_charge(r, r->written / 64); r->written %= 64; }
    if (b->heap) { heap_put(r, b, p, n); return; }
    /* a concatenation may have extended the text past b's end: then b continues in a copy */
    if (!b->p || b->n + n + 1 > b->cap || strbuf_of(b->p)->used != b->n) {
        b->p = strbuf_new(r, b->n + n > b->cap ? grown(r, b->n + n) : b->cap, b->p, b->n);
        b->cap = strbuf_of(b->p)->cap - 1;
    }
    if (n) memcpy(b->p + b->n, p, n);
    b->n += n;
    b->p[b->n] = '\0';
    strbuf_of(b->p)->used = b->n;
}

jv jinja_concat(jinja_run *r, jv a, const char *p, size_t n) {
    if (n > r->lim.max_output || a.s.n > r->lim.max_output - n) jinja_fail_output(r, false);
    if (a.grow) {
        strbuf *sb = strbuf_of(a.s.p);
        if (sb->used == a.s.n && sb->cap - sb->used > n) {
            memcpy(sb->data + sb->used, p, n);
            sb->used += n;
            sb->data[sb->used] = '\0';
            a.s.n += n;
            return a;
        }
    }
    jinja_charge(r, (a.s.n + n) / 4096);
    char *text = strbuf_new(r, grown(r, a.s.n + n), a.s.p, a.s.n);
    memcpy(text + a.s.n, p, n);
    text[a.s.n + n] = '\0';
    strbuf_of(text)->used = a.s.n + n;
    jv v = { .type = JV_STR, .grow = true };
    v.s.p = text;
    v.s.n = a.s.n + n;
    return v;
}

const char *jinja_cstr(jinja_run *r, jv s) {
    if (s.s.p[s.s.n] == '\0') return s.s.p;
    return jinja_str(r, s.s.p, s.s.n).s.p;
}
void jinja_buf_putc(jinja_run *r, jbuf *b, char c) { jinja_buf_put(r, b, &c, 1); }
void jinja_buf_puts(jinja_run *r, jbuf *b, const char *s) { jinja_buf_put(r, b, s, strlen(s)); }

jv jinja_buf_value(jbuf *b) {
    jv v = { .type = JV_STR, .grow = b->p != NULL };
    v.s.p = b->p ? b->p : "";
    v.s.n = b->n;
    return v;
}

/* ---- constructors ---- */

jv jinja_undefined(const char *hint) { jv v = { .type = JV_UNDEFINED }; v.s.p = hint; v.s.n = 0; return v; }
jv jinja_none(void) { return (jv){ .type = JV_NONE }; }
jv jinja_bool(bool b) { jv v = { .type = JV_BOOL }; v.b = b; return v; }
jv jinja_int(int64_t i) { jv v = { .type = JV_INT }; v.i = i; return v; }
jv jinja_float(double f) { jv v = { .type = JV_FLOAT }; v.f = f; return v; }

jv jinja_str(jinja_run *r, const char *p, size_t n) {
    char *s = jinja_alloc(r, n + 1);
    if (n) memcpy(s, p, n);
    jv v = { .type = JV_STR };
    v.s.p = s;
    v.s.n = n;
    return v;
}
jv jinja_str_from_c(jinja_run *r, const char *s) { return jinja_str(r, s, strlen(s)); }
jv jinja_str_static(const char *s) { jv v = { .type = JV_STR }; v.s.p = s; v.s.n = strlen(s); return v; }

jv jinja_list_new(jinja_run *r, size_t cap, bool tuple) {
    jlist *l = jinja_alloc(r, sizeof *l);
    if (cap) {
        if (cap > SIZE_MAX / sizeof(jv)) jinja_fail(r, "a list is too long");
        l->items = jinja_alloc(r, cap * sizeof(jv));
    }
    l->cap = cap;
    l->tuple = tuple;
    l->born = r->epoch;
    jv v = { .type = JV_LIST };
    v.list = l;
    return v;
}

void jinja_list_push(jinja_run *r, jlist *l, jv v) {
    jinja_note_store(r, l->born, v);
    if (l->n == l->cap) {
        jinja_note_grow(r, l->born);
        size_t cap = l->cap ? l->cap * 2 : 4;
        jv *items = jinja_alloc(r, cap * sizeof *items);
        if (l->n) memcpy(items, l->items, l->n * sizeof *items);
        l->items = items;
        l->cap = cap;
    }
    l->items[l->n++] = v;
}

jv jinja_dict_new(jinja_run *r, size_t cap) {
    jdict *d = jinja_alloc(r, sizeof *d);
    if (cap) {
        if (cap > SIZE_MAX / sizeof(jv)) jinja_fail(r, "a dict is too long");
        d->keys = jinja_alloc(r, cap * sizeof(jv));
        d->vals = jinja_alloc(r, cap * sizeof(jv));
    }
    d->cap = cap;
    d->born = r->epoch;
    jv v = { .type = JV_DICT };
    v.dict = d;
    return v;
}

jv jinja_iterator(jv list) {
    list.list->iterator = true;
    return list;
}

bool jinja_dict_get(const jdict *d, jv key, jv *out) {
    for (size_t i = 0; i < d->n; i++)
        if (jinja_equal(d->keys[i], key)) { if (out) *out = d->vals[i]; return true; }
    return false;
}

bool jinja_dict_get_str(const jdict *d, const char *key, jv *out) {
    size_t n = strlen(key);
    for (size_t i = 0; i < d->n; i++)
        if (d->keys[i].type == JV_STR && d->keys[i].s.n == n && memcmp(d->keys[i].s.p, key, n) == 0) {
            if (out) *out = d->vals[i];
            return true;
        }
    return false;
}

jv jinja_dict_items(jinja_run *r, const jdict *d) {
    jv out = jinja_list_new(r, d->n, false);
    for (size_t i = 0; i < d->n; i++) {
        jv pair = jinja_list_new(r, 2, true);
        jinja_list_push(r, pair.list, d->keys[i]);
        jinja_list_push(r, pair.list, d->vals[i]);
        jinja_list_push(r, out.list, pair);
    }
    return out;
}

/* a key already there keeps its place and takes the new value, as in Python */
void jinja_dict_set(jinja_run *r, jdict *d, jv key, jv val) {
    for (size_t i = 0; i < d->n; i++)
        if (jinja_equal(d->keys[i], key)) { jinja_note_store(r, d->born, val); d->vals[i] = val; return; }
    jinja_charge(r, d->n / 64);
    jinja_note_store(r, d->born, key);
    jinja_note_store(r, d->born, val);
    if (d->n == d->cap) {
        jinja_note_grow(r, d->born);
        size_t cap = d->cap ? d->cap * 2 : 4;
        jv *k = jinja_alloc(r, cap * sizeof *k), *v = jinja_alloc(r, cap * sizeof *v);
        if (d->n) { memcpy(k, d->keys, d->n * sizeof *k); memcpy(v, d->vals, d->n * sizeof *v); }
        d->keys = k;
        d->vals = v;
        d->cap = cap;
    }
    d->keys[d->n] = key;
    d->vals[d->n++] = val;
}

jv jinja_from_json(jinja_run *r, const json_value *j) {
    jv v = { .type = JV_NONE };
    switch (j->type) {
    case JSON_NULL: return jinja_none();
    case JSON_BOOL: return jinja_bool(j->boolean);
    case JSON_NUMBER: return j->is_integer ? jinja_int(j->integer) : jinja_float(j->number);
    case JSON_STRING:
        v.type = JV_STR;
        v.s.p = j->str;
        v.s.n = j->len;
        return v;
    case JSON_ARRAY:
        v = jinja_list_new(r, j->n, false);
        for (size_t i = 0; i < j->n; i++) jinja_list_push(r, v.list, jinja_from_json(r, &j->items[i]));
        return v;
    case JSON_OBJECT:
        v = jinja_dict_new(r, j->n);
        for (size_t i = 0; i < j->n; i++) {
            jv key = { .type = JV_STR };
            key.s.p = j->keys[i];
            key.s.n = j->key_lens[i];
            jinja_dict_set(r, v.dict, key, jinja_from_json(r, &j->items[i]));
        }
        return v;
    }
    return jinja_none();
}

/* ---- Python semantics ---- */

bool jinja_truthy(jv v) {
    switch (v.type) {
    case JV_UNDEFINED: case JV_NONE: return false;
    case JV_BOOL: return v.b;
    case JV_INT: return v.i != 0;
    case JV_FLOAT: return v.f != 0.0;
    case JV_STR: return v.s.n != 0;
    case JV_LIST: return v.list->iterator || v.list->n != 0;
    case JV_DICT: return v.dict->n != 0;
    default: return true;
    }
}

const char *jinja_type_name(jv v) {
    switch (v.type) {
    case JV_UNDEFINED: return "Undefined";
    case JV_NONE: return "NoneType";
    case JV_BOOL: return "bool";
    case JV_INT: return "int";
    case JV_FLOAT: return "float";
    case JV_STR: return "str";
    case JV_LIST: return v.list->iterator ? "generator" : v.list->tuple ? "tuple" : "list";
    case JV_DICT: return "dict";
    case JV_NAMESPACE: return "Namespace";
    case JV_MACRO: return "Macro";
    case JV_FUNC: return "builtin_function_or_method";
    case JV_LOOP: return "LoopContext";
    }
    return "object";
}

static bool is_number(jv v) { return v.type == JV_BOOL || v.type == JV_INT || v.type == JV_FLOAT; }
static int64_t as_int(jv v) { return v.type == JV_BOOL ? (int64_t)v.b : v.i; }

/* numeric comparison of Python numbers (bool counts as int) */
static int num_cmp(jv a, jv b) {
    if (a.type != JV_FLOAT && b.type != JV_FLOAT) {
        int64_t x = as_int(a), y = as_int(b);
        return x < y ? -1 : x > y;
    }
    double x = a.type == JV_FLOAT ? a.f : (double)as_int(a), y = b.type == JV_FLOAT ? b.f : (double)as_int(b);
    if (x != x || y != y) return 2;   /* NaN: unordered, unequal */
    return x < y ? -1 : x > y;
}

static bool equal_at(jv a, jv b, int depth) {
    if (is_number(a) && is_number(b)) return num_cmp(a, b) == 0;
    if (a.type != b.type) return false;
    switch (a.type) {
    case JV_UNDEFINED: case JV_NONE: return true;
    case JV_STR: return a.s.n == b.s.n && memcmp(a.s.p, b.s.p, a.s.n) == 0;
    case JV_LIST:
        if (a.list == b.list) return true;
        if (a.list->iterator || b.list->iterator) return false;
        if (a.list->tuple != b.list->tuple || a.list->n != b.list->n || depth > MAX_VALUE_DEPTH) return false;
        for (size_t i = 0; i < a.list->n; i++) if (!equal_at(a.list->items[i], b.list->items[i], depth + 1)) return false;
        return true;
    case JV_DICT:
        if (a.dict == b.dict) return true;
        if (a.dict->n != b.dict->n || depth > MAX_VALUE_DEPTH) return false;
        for (size_t i = 0; i < a.dict->n; i++) {
            size_t j;
            for (j = 0; j < b.dict->n; j++) if (equal_at(a.dict->keys[i], b.dict->keys[j], depth + 1)) break;
            if (j == b.dict->n || !equal_at(a.dict->vals[i], b.dict->vals[j], depth + 1)) return false;
        }
        return true;
    case JV_NAMESPACE: return a.dict == b.dict;
    case JV_MACRO: return a.macro == b.macro;
    case JV_FUNC: return a.func == b.func;
    case JV_LOOP: return a.loop == b.loop;
    default: return false;
    }
}

bool jinja_equal(jv a, jv b) { return equal_at(a, b, 0); }

static int compare_at(jinja_run *r, jv a, jv b, int depth) {
    if (is_number(a) && is_number(b)) {
        int c = num_cmp(a, b);
        return c == 2 ? 0 : c;
    }
    if (a.type == JV_STR && b.type == JV_STR) {
        /* UTF-8 byte order is code point order */
        size_t n = a.s.n < b.s.n ? a.s.n : b.s.n;
        int c = memcmp(a.s.p, b.s.p, n);
        return c ? (c < 0 ? -1 : 1) : a.s.n < b.s.n ? -1 : a.s.n > b.s.n;
    }
    if (a.type == JV_LIST && b.type == JV_LIST && a.list->tuple == b.list->tuple && !a.list->iterator &&
        !b.list->iterator && depth < MAX_VALUE_DEPTH) {
        size_t n = a.list->n < b.list->n ? a.list->n : b.list->n;
        for (size_t i = 0; i < n; i++) {
            if (jinja_equal(a.list->items[i], b.list->items[i])) continue;
            return compare_at(r, a.list->items[i], b.list->items[i], depth + 1);
        }
        return a.list->n < b.list->n ? -1 : a.list->n > b.list->n;
    }
    if (a.type == JV_UNDEFINED) jinja_fail(r, "%s", a.s.p ? a.s.p : "undefined value");
    if (b.type == JV_UNDEFINED) jinja_fail(r, "%s", b.s.p ? b.s.p : "undefined value");
    jinja_fail(r, "'<' not supported between instances of '%s' and '%s'", jinja_type_name(a), jinja_type_name(b));
}

int jinja_compare(jinja_run *r, jv a, jv b) { return compare_at(r, a, b, 0); }

/* ---- strings as code points ---- */

int jinja_decode(const char *p, size_t n, uint32_t *cp) {
    int k = utf8_decode(p, n, cp);
    if (k <= 0) { *cp = 0xfffd; return 1; }
    return k;
}

size_t jinja_str_length(const char *p, size_t n) {
    size_t count = 0;
    for (size_t i = 0; i < n; i++) count += ((unsigned char)p[i] & 0xc0) != 0x80;
    return count;
}

size_t jinja_str_offset(const char *p, size_t n, size_t index) {
    size_t i = 0;
    while (index && i < n) {
        i++;
        while (i < n && ((unsigned char)p[i] & 0xc0) == 0x80) i++;
        index--;
    }
    return i;
}

/* str.isspace() */
bool jinja_isspace(uint32_t cp) {
    return (cp >= 0x09 && cp <= 0x0d) || (cp >= 0x1c && cp <= 0x20) || cp == 0x85 || cp == 0xa0 ||
           cp == 0x1680 || (cp >= 0x2000 && cp <= 0x200a) || cp == 0x2028 || cp == 0x2029 ||
           cp == 0x202f || cp == 0x205f || cp == 0x3000;
}

/* ---- str() and repr() ---- */

/* Python's float repr: the shortest digits that read back the same, in fixed notation for
 * decimal exponents -4 < e <= 16, else as 1.5e-05 / 1e+16. */
static void write_float(jinja_run *r, jbuf *b, double f) {
    if (f != f) { jinja_buf_puts(r, b, "nan"); return; }
    if (isinf(f)) { jinja_buf_puts(r, b, f < 0 ? "-inf" : "inf"); return; }
    char buf[64];
    for (int prec = 1; prec <= 17; prec++) {
        snprintf(buf, sizeof buf, "%.*e", prec - 1, f);
        if (strtod(buf, NULL) == f) break;
    }
    /* buf: [-]d[.ddd]e[+-]xx */
    char digits[32];
    int nd = 0;
    const char *p = buf;
    bool neg = *p == '-';
    if (neg) p++;
    for (; *p && *p != 'e'; p++) if (*p != '.') digits[nd++] = *p;
    int exp10 = atoi(p + 1);
    while (nd > 1 && digits[nd - 1] == '0') nd--;
    int decpt = exp10 + 1;
    char out[64];
    int k = 0;
    if (neg) out[k++] = '-';
    if (decpt > 16 || decpt < -3) {
        out[k++] = digits[0];
        if (nd > 1) { out[k++] = '.'; for (int i = 1; i < nd; i++) out[k++] = digits[i]; }
        k += snprintf(out + k, sizeof out - (size_t)k, "e%+03d", decpt - 1);
    } else if (decpt <= 0) {
        out[k++] = '0';
        out[k++] = '.';
        for (int i = 0; i < -decpt; i++) out[k++] = '0';
        for (int i = 0; i < nd; i++) out[k++] = digits[i];
    } else {
        for (int i = 0; i < decpt; i++) out[k++] = i < nd ? digits[i] : '0';
        out[k++] = '.';
        if (decpt >= nd) out[k++] = '0';
        for (int i = decpt; i < nd; i++) out[k++] = digits[i];
    }
    jinja_buf_put(r, b, out, (size_t)k);
}

/* str.isprintable() for one code point, approximately: controls, format characters, separators
 * other than the space, surrogates and private use are not printable */
static bool printable(uint32_t cp) {
    if (cp < 0x20 || (cp >= 0x7f && cp <= 0xa0) || cp == 0xad) return false;
    if (cp == 0x1680 || (cp >= 0x2000 && cp <= 0x200f) || (cp >= 0x2028 && cp <= 0x202f) ||
        (cp >= 0x205f && cp <= 0x206f) || cp == 0x3000 || cp == 0xfeff || (cp >= 0xfff9 && cp <= 0xfffb))
        return false;
    if ((cp >= 0xd800 && cp <= 0xf8ff) || cp >= 0xf0000 || (cp >= 0xe0000 && cp <= 0xe007f)) return false;
    return true;
}

static void write_str_repr(jinja_run *r, jbuf *b, const char *p, size_t n) {
    bool single = memchr(p, '\'', n) != NULL, dbl = memchr(p, '"', n) != NULL;
    char q = single && !dbl ? '"' : '\'';
    jinja_buf_putc(r, b, q);
    for (size_t i = 0; i < n;) {
        uint32_t cp;
        int k = jinja_decode(p + i, n - i, &cp);
        char esc[16];
        if (cp == (uint32_t)q || cp == '\\') { esc[0] = '\\'; esc[1] = (char)cp; jinja_buf_put(r, b, esc, 2); }
        else if (cp == '\n') jinja_buf_puts(r, b, "\\n");
        else if (cp == '\r') jinja_buf_puts(r, b, "\\r");
        else if (cp == '\t') jinja_buf_puts(r, b, "\\t");
        else if (printable(cp)) jinja_buf_put(r, b, p + i, (size_t)k);
        else if (cp <= 0xff) { snprintf(esc, sizeof esc, "\\x%02x", cp); jinja_buf_puts(r, b, esc); }
        else if (cp <= 0xffff) { snprintf(esc, sizeof esc, "\\u%04x", cp); jinja_buf_puts(r, b, esc); }
        else { snprintf(esc, sizeof esc, "\\U%08x", cp); jinja_buf_puts(r, b, esc); }
        i += (size_t)k;
    }
    jinja_buf_putc(r, b, q);
}

static void write_value(jinja_run *r, jbuf *b, jv v, bool repr, int depth) {
    char num[32];
    if (depth > MAX_VALUE_DEPTH) jinja_fail(r, "a value is nested too deeply to print");
    switch (v.type) {
    case JV_UNDEFINED: if (repr) jinja_buf_puts(r, b, "Undefined"); return;
    case JV_NONE: jinja_buf_puts(r, b, "None"); return;
    case JV_BOOL: jinja_buf_puts(r, b, v.b ? "True" : "False"); return;
    case JV_INT: snprintf(num, sizeof num, "%" PRId64, v.i); jinja_buf_puts(r, b, num); return;
    case JV_FLOAT: write_float(r, b, v.f); return;
    case JV_STR:
        if (repr) write_str_repr(r, b, v.s.p, v.s.n);
        else jinja_buf_put(r, b, v.s.p, v.s.n);
        return;
    case JV_LIST:
        if (v.list->iterator) { jinja_buf_puts(r, b, "<generator object>"); return; }
        jinja_buf_putc(r, b, v.list->tuple ? '(' : '[');
        for (size_t i = 0; i < v.list->n; i++) {
            if (i) jinja_buf_puts(r, b, ", ");
            write_value(r, b, v.list->items[i], true, depth + 1);
        }
        if (v.list->tuple && v.list->n == 1) jinja_buf_putc(r, b, ',');
        jinja_buf_putc(r, b, v.list->tuple ? ')' : ']');
        return;
    case JV_NAMESPACE:
    case JV_DICT:
        if (v.type == JV_NAMESPACE) jinja_buf_puts(r, b, "<Namespace ");
        jinja_buf_putc(r, b, '{');
        for (size_t i = 0; i < v.dict->n; i++) {
            if (i) jinja_buf_puts(r, b, ", ");
            write_value(r, b, v.dict->keys[i], true, depth + 1);
            jinja_buf_puts(r, b, ": ");
            write_value(r, b, v.dict->vals[i], true, depth + 1);
        }
        jinja_buf_putc(r, b, '}');
        if (v.type == JV_NAMESPACE) jinja_buf_putc(r, b, '>');
        return;
    case JV_MACRO:
        jinja_buf_puts(r, b, "<Macro '");
        jinja_buf_puts(r, b, v.macro->def->name);
        jinja_buf_puts(r, b, "'>");
        return;
    case JV_FUNC:
        jinja_buf_puts(r, b, "<built-in method ");
        jinja_buf_puts(r, b, v.func->name);
        jinja_buf_putc(r, b, '>');
        return;
    case JV_LOOP:
        snprintf(num, sizeof num, "<LoopContext %zu/%zu>", v.loop->index0 + 1, v.loop->items->n);
        jinja_buf_puts(r, b, num);
        return;
    }
}

void jinja_write_str(jinja_run *r, jbuf *b, jv v) { write_value(r, b, v, false, 0); }
void jinja_write_repr(jinja_run *r, jbuf *b, jv v) { write_value(r, b, v, true, 0); }

jv jinja_to_str(jinja_run *r, jv v) {
    if (v.type == JV_STR) return v;
    jbuf b = {0};
    write_value(r, &b, v, false, 0);
    return jinja_buf_value(&b);
}

/* ---- json.dumps ---- */

static void json_string(jinja_run *r, jbuf *b, const char *p, size_t n, bool ensure_ascii) {
    jinja_buf_putc(r, b, '"');
    size_t run = 0;   /* bytes copied as they are, pending */
    for (size_t i = 0; i < n;) {
        unsigned char c = (unsigned char)p[i];
        char esc[16];
        const char *e = NULL;
        size_t adv = 1;
        if (c == '"') e = "\\\"";
        else if (c == '\\') e = "\\\\";
        else if (c == '\n') e = "\\n";
        else if (c == '\r') e = "\\r";
        else if (c == '\t') e = "\\t";
        else if (c == '\b') e = "\\b";
        else if (c == '\f') e = "\\f";
        else if (c < 0x20) { snprintf(esc, sizeof esc, "\\u%04x", c); e = esc; }
        else if (c >= 0x80 && ensure_ascii) {
            uint32_t cp;
            adv = (size_t)jinja_decode(p + i, n - i, &cp);
            if (cp >= 0x10000) {
                cp -= 0x10000;
                snprintf(esc, sizeof esc, "\\u%04x\\u%04x", 0xd800 + (cp >> 10), 0xdc00 + (cp & 0x3ff));
            } else snprintf(esc, sizeof esc, "\\u%04x", cp);
            e = esc;
        }
        if (e) {
            if (run) jinja_buf_put(r, b, p + i - run, run);
            run = 0;
            jinja_buf_puts(r, b, e);
        } else run += adv;
        i += adv;
    }
    if (run) jinja_buf_put(r, b, p + n - run, run);
    jinja_buf_putc(r, b, '"');
}

typedef struct json_style {
    bool ensure_ascii, sort_keys;
    const char *indent, *item_sep, *key_sep;
} json_style;

static void newline_indent(jinja_run *r, jbuf *b, const json_style *st, int level) {
    jinja_buf_putc(r, b, '\n');
    for (int i = 0; i < level; i++) jinja_buf_puts(r, b, st->indent);
}

static void json_value_out(jinja_run *r, jbuf *b, jv v, const json_style *st, int level) {
    char num[32];
    if (level > MAX_VALUE_DEPTH) jinja_fail(r, "a value is nested too deeply for tojson");
    switch (v.type) {
    case JV_NONE: jinja_buf_puts(r, b, "null"); return;
    case JV_BOOL: jinja_buf_puts(r, b, v.b ? "true" : "false"); return;
    case JV_INT: snprintf(num, sizeof num, "%" PRId64, v.i); jinja_buf_puts(r, b, num); return;
    case JV_FLOAT:
        if (v.f != v.f) jinja_buf_puts(r, b, "NaN");
        else if (isinf(v.f)) jinja_buf_puts(r, b, v.f < 0 ? "-Infinity" : "Infinity");
        else write_float(r, b, v.f);
        return;
    case JV_STR: json_string(r, b, v.s.p, v.s.n, st->ensure_ascii); return;
    case JV_LIST:
        if (v.list->iterator) jinja_fail(r, "Object of type generator is not JSON serializable");
        if (!v.list->n) { jinja_buf_puts(r, b, "[]"); return; }
        jinja_buf_putc(r, b, '[');
        for (size_t i = 0; i < v.list->n; i++) {
            if (i) jinja_buf_puts(r, b, st->item_sep);
            if (st->indent) newline_indent(r, b, st, level + 1);
            json_value_out(r, b, v.list->items[i], st, level + 1);
        }
        if (st->indent) newline_indent(r, b, st, level);
        jinja_buf_putc(r, b, ']');
        return;
    case JV_DICT: {
        if (!v.dict->n) { jinja_buf_puts(r, b, "{}"); return; }
        size_t n = v.dict->n;
        jv *order = jinja_alloc(r, n * sizeof *order);   /* indices, as ints, in output order */
        for (size_t i = 0; i < n; i++) order[i] = jinja_int((int64_t)i);
        if (st->sort_keys) {
            /* insertion sort by key (dicts in templates are small) */
            for (size_t i = 1; i < n; i++)
                for (size_t j = i; j > 0 && jinja_compare(r, v.dict->keys[order[j - 1].i], v.dict->keys[order[j].i]) > 0; j--) {
                    jv t = order[j]; order[j] = order[j - 1]; order[j - 1] = t;
                }
        }
        jinja_buf_putc(r, b, '{');
        for (size_t k = 0; k < n; k++) {
            size_t i = (size_t)order[k].i;
            jv key = v.dict->keys[i];
            if (k) jinja_buf_puts(r, b, st->item_sep);
            if (st->indent) newline_indent(r, b, st, level + 1);
            if (key.type == JV_STR) json_string(r, b, key.s.p, key.s.n, st->ensure_ascii);
            else if (is_number(key) || key.type == JV_NONE) {
                jbuf k2 = {0};
                json_value_out(r, &k2, key, st, level + 1);
                json_string(r, b, k2.p, k2.n, st->ensure_ascii);
            } else jinja_fail(r, "keys must be str, int, float, bool or None, not %s", jinja_type_name(key));
            jinja_buf_puts(r, b, st->key_sep);
            json_value_out(r, b, v.dict->vals[i], st, level + 1);
        }
        if (st->indent) newline_indent(r, b, st, level);
        jinja_buf_putc(r, b, '}');
        return;
    }
    case JV_UNDEFINED:
    default:
        jinja_fail(r, "Object of type %s is not JSON serializable", jinja_type_name(v));
    }
}

void jinja_write_json(jinja_run *r, jbuf *b, jv v, bool ensure_ascii, const char *indent,
                   const char *item_sep, const char *key_sep, bool sort_keys) {
    json_style st = { ensure_ascii, sort_keys, indent, item_sep, key_sep };
    json_value_out(r, b, v, &st, 0);
}

/* ---- arguments, iteration, messages ---- */

const char *jinja_hint(jinja_run *r, const char *fmt, ...) {
    char buf[300];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    if (n < 0) n = 0;
    if ((size_t)n >= sizeof buf) n = sizeof buf - 1;
    char *s = jinja_alloc(r, (size_t)n + 1);
    memcpy(s, buf, (size_t)n);
    return s;
}

jv jinja_arg(const jargs *a, int i, const char *name, jv def) {
    if (i >= 0 && i < a->npos) return a->pos[i];
    for (int k = 0; name && k < a->nkw; k++) if (strcmp(a->kw[k], name) == 0) return a->kwv[k];
    return def;
}

jlist *jinja_iterate(jinja_run *r, jv v) {
    jv out;
    switch (v.type) {
    case JV_LIST: {
        if (!v.list->iterator) return v.list;
        /* a generator is used up by iterating it */
        jlist *items = jinja_alloc(r, sizeof *items);
        *items = *v.list;
        items->iterator = false;
        items->born = r->epoch;
        v.list->n = 0;
        return items;
    }
    case JV_UNDEFINED: return jinja_list_new(r, 0, false).list;
    case JV_DICT:
        out = jinja_list_new(r, v.dict->n, false);
        for (size_t i = 0; i < v.dict->n; i++) jinja_list_push(r, out.list, v.dict->keys[i]);
        return out.list;
    case JV_STR:
        out = jinja_list_new(r, v.s.n, false);
        for (size_t i = 0; i < v.s.n;) {
            uint32_t cp;
            int k = jinja_decode(v.s.p + i, v.s.n - i, &cp);
            jinja_list_push(r, out.list, jinja_str(r, v.s.p + i, (size_t)k));
            i += (size_t)k;
        }
        return out.list;
    default:
        jinja_fail(r, "'%s' object is not iterable", jinja_type_name(v));
    }
}

_Noreturn void jinja_fail_undefined(jinja_run *r, jv u) {
    jinja_fail(r, "%s", u.s.p ? u.s.p : "undefined value");
}
