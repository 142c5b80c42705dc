/* Strict RFC 8259 JSON parser.
 *
 * Byte offsets in error messages are 0-based and point at the first byte that cannot be part of a
 * valid document (for a bad escape or a lone surrogate: the backslash that starts it).
 *
 * A whole document (nodes, strings, member arrays) lives in a chain of arena blocks owned by the
 * root, so a 30 MB tokenizer.json costs a few dozen mallocs and json_free is one walk. Children of
 * the containers being parsed wait on one shared growable stack and are copied into an exactly
 * sized arena array when their container closes: linear time however long the array is. */
#include "io/json.h"
#include <stdarg.h>
#include <stdio.h>
#include "core/error.h"
#include "core/utf8.h"
#include "core/str.h"
#include <errno.h>
#include <fcntl.h>
#include <locale.h>
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---- arena ---- */

typedef struct arena_block {
    struct arena_block *next;
    size_t used, cap;
    max_align_t data[];
} arena_block;

#define ARENA_FIRST_BLOCK ((size_t)64 << 10)
#define ARENA_MAX_BLOCK   ((size_t)32 << 20)
#define HUGE_PAGE         ((size_t)2 << 20)

/* The root node comes first so json_free can get from it back to its arena. */
typedef struct json_doc {
    json_value root;
    arena_block *blocks;
} json_doc;

typedef struct parser {
    const unsigned char *s;
    size_t len, pos;
    int depth;
    arena_block *blocks;
    size_t next_block;
    json_value *vals;       /* children of the open containers, innermost last */
    size_t n_vals, cap_vals;
    char **keys;            /* keys of the open objects' members, parallel to their values */
    size_t *key_lens;
    size_t n_keys, cap_keys;
    locale_t c_locale;      /* made on first use, for the rare number strtod must convert */
    ts_error *err;
} parser;

static void arena_free_blocks(arena_block *b) {
    while (b) {
        arena_block *next = b->next;
        free(b);
        b = next;
    }
}

/* Big blocks are asked for as transparent huge pages: a large tokenizer.json fills ~150 MB of
 * nodes, and faulting that in 4 KiB at a time costs more than parsing it. */
static arena_block *arena_new_block(size_t cap) {
    size_t bytes = sizeof(arena_block) + cap;
    if (bytes < HUGE_PAGE) return malloc(bytes);
    bytes = (bytes + HUGE_PAGE - 1) & ~(HUGE_PAGE - 1);
    arena_block *b = aligned_alloc(HUGE_PAGE, bytes);
    if (b) madvise(b, bytes, MADV_HUGEPAGE);   /* only a hint: failure is harmless */
    return b;
}

/* 8-byte aligned memory from the arena, or NULL when out of memory. */
static void *arena_alloc(parser *p, size_t n) {
    n = (n + 7) & ~(size_t)7;
    if (n == 0) n = 8;
    arena_block *b = p->blocks;
    if (!b || b->cap - b->used < n) {
        size_t cap = p->next_block;
        if (cap < n) cap = n;
        b = arena_new_block(cap);
        if (!b) return NULL;
        b->used = 0;
        b->cap = cap;
        b->next = p->blocks;
        p->blocks = b;
        if (p->next_block < ARENA_MAX_BLOCK) p->next_block *= 2;
    }
    void *mem = (unsigned char *)b->data + b->used;
    b->used += n;
    return mem;
}

/* ---- errors and small helpers ---- */

static int fail_at(parser *p, size_t at, const char *what) {
    return ts_fail(p->err, "byte %zu: %s", at, what);
}

static int out_of_memory(parser *p) {
    return ts_fail(p->err, "byte %zu: out of memory", p->pos);
}

static void skip_ws(parser *p) {
    const unsigned char *s = p->s;
    size_t i = p->pos, len = p->len;
    while (i < len && (s[i] == ' ' || s[i] == '\n' || s[i] == '\r' || s[i] == '\t')) i++;
    p->pos = i;
}

static bool is_digit(unsigned char c) { return c >= '0' && c <= '9'; }

/* Grows a scratch stack to twice its size (huge pages when big, like the arena). */
static void *grow_stack(void *old, size_t old_bytes, size_t new_bytes) {
    if (new_bytes < HUGE_PAGE) return realloc(old, new_bytes);
    new_bytes = (new_bytes + HUGE_PAGE - 1) & ~(HUGE_PAGE - 1);
    void *mem = aligned_alloc(HUGE_PAGE, new_bytes);
    if (!mem) return NULL;
    madvise(mem, new_bytes, MADV_HUGEPAGE);
    if (old_bytes) memcpy(mem, old, old_bytes);
    free(old);
    return mem;
}

static int push_value(parser *p, const json_value *v) {
    if (p->n_vals == p->cap_vals) {
        size_t cap = p->cap_vals ? p->cap_vals * 2 : 256;
        json_value *nv = grow_stack(p->vals, p->n_vals * sizeof *nv, cap * sizeof *nv);
        if (!nv) return out_of_memory(p);
        p->vals = nv;
        p->cap_vals = cap;
    }
    p->vals[p->n_vals++] = *v;
    return 0;
}

static int push_key(parser *p, char *key, size_t len) {
    if (p->n_keys == p->cap_keys) {
        size_t cap = p->cap_keys ? p->cap_keys * 2 : 256;
        char **nk = realloc(p->keys, cap * sizeof *nk);
        if (!nk) return out_of_memory(p);
        p->keys = nk;
        size_t *nl = realloc(p->key_lens, cap * sizeof *nl);
        if (!nl) return out_of_memory(p);
        p->key_lens = nl;
        p->cap_keys = cap;
    }
    p->keys[p->n_keys] = key;
    p->key_lens[p->n_keys] = len;
    p->n_keys++;
    return 0;
}

/* ---- strings ---- */

/* Reads 4 hex digits at i (which must lie before end). */
static int read_hex4(parser *p, size_t i, size_t end, uint32_t *out) {
    uint32_t v = 0;
    *out = 0;   /* on the error paths too: the compiler cannot see that fail_at never returns 0 */
    for (int k = 0; k < 4; k++) {
        if (i + k >= end) return fail_at(p, i + k, "expected 4 hex digits after \\u");
        int h = str_hex_digit(p->s[i + k]);
        if (h < 0) return fail_at(p, i + k, "expected 4 hex digits after \\u");
        v = v << 4 | (uint32_t)h;
    }
    *out = v;
    return 0;
}

/* p->pos is at the opening quote. Decodes into the arena; *out is NUL-terminated. */
static int parse_string(parser *p, char **out, size_t *out_len) {
    const unsigned char *s = p->s;
    size_t start = p->pos, len = p->len;
    size_t i = start + 1;

    /* Pass 1 only finds the closing quote: an escaped character is skipped, whatever it is. */
    while (i < len && s[i] != '"') i += s[i] == '\\' ? 2 : 1;
    if (i >= len) {
        char what[96];
        snprintf(what, sizeof what, "unterminated string (it starts at byte %zu)", start);
        return fail_at(p, len, what);
    }
    size_t end = i;

    /* Pass 2 validates and decodes; the result is never longer than the raw text. */
    char *dst = arena_alloc(p, end - start);
    if (!dst) return out_of_memory(p);
    char *d = dst;
    i = start + 1;
    while (i < end) {
        unsigned char c = s[i];
        if (c >= 0x20 && c < 0x80 && c != '\\') {
            *d++ = (char)c;
            i++;
        } else if (c < 0x20) {
            return fail_at(p, i, "control character in string (it must be escaped)");
        } else if (c >= 0x80) {
            uint32_t cp;
            int n = utf8_decode((const char *)s + i, end - i, &cp);
            if (n == 0) return fail_at(p, i, "invalid UTF-8");
            memcpy(d, s + i, (size_t)n);
            d += n;
            i += (size_t)n;
        } else {
            /* Pass 1 guarantees a character after the backslash before end. */
            unsigned char e = s[i + 1];
            switch (e) {
            case '"': *d++ = '"'; break;
            case '\\': *d++ = '\\'; break;
            case '/': *d++ = '/'; break;
            case 'b': *d++ = '\b'; break;
            case 'f': *d++ = '\f'; break;
            case 'n': *d++ = '\n'; break;
            case 'r': *d++ = '\r'; break;
            case 't': *d++ = '\t'; break;
            case 'u': {
                uint32_t cp;
                if (read_hex4(p, i + 2, end, &cp)) return -1;
                size_t esc_len = 6;
                if (cp >= 0xDC00 && cp <= 0xDFFF)
                    return fail_at(p, i, "lone low surrogate escape (no high surrogate before it)");
                if (cp >= 0xD800 && cp <= 0xDBFF) {
                    uint32_t lo;
                    if (i + 7 >= end || s[i + 6] != '\\' || s[i + 7] != 'u')
                        return fail_at(p, i, "lone high surrogate escape (no \\u low surrogate after it)");
                    if (read_hex4(p, i + 8, end, &lo)) return -1;
                    if (lo < 0xDC00 || lo > 0xDFFF)
                        return fail_at(p, i, "lone high surrogate escape (no \\u low surrogate after it)");
                    cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
                    esc_len = 12;
                }
                d += utf8_encode(cp, d);
                i += esc_len;
                continue;
            }
            default:
                return fail_at(p, i, "invalid escape (expected one of \\\" \\\\ \\/ \\b \\f \\n \\r \\t \\u)");
            }
            i += 2;
        }
    }
    *d = '\0';
    *out = dst;
    *out_len = (size_t)(d - dst);
    p->pos = end + 1;
    return 0;
}

/* ---- numbers ---- */

static const double exact_pow10[23] = {
    1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11,
    1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22
};

/* Correctly rounded conversion of the validated literal s[0..n). Most literals take Clinger's
 * fast path (mantissa and power of ten both exact doubles, so one IEEE operation rounds once);
 * the rest go to strtod in the C locale so a caller's setlocale cannot change the decimal point. */
static int convert_number(parser *p, size_t start, size_t n, double *out) {
    const unsigned char *s = p->s + start;
    size_t i = 0;
    bool neg = false;
    if (s[i] == '-') { neg = true; i++; }
    uint64_t mant = 0;
    int sig_digits = 0;
    long frac_digits = 0;
    bool fast = true;
    for (; i < n && is_digit(s[i]); i++) {
        if (mant == 0 && s[i] == '0') continue;
        if (++sig_digits > 19) { fast = false; break; }
        mant = mant * 10 + (uint64_t)(s[i] - '0');
    }
    if (fast && i < n && s[i] == '.') {
        for (i++; i < n && is_digit(s[i]); i++) {
            frac_digits++;
            if (mant == 0 && s[i] == '0') continue;
            if (++sig_digits > 19) { fast = false; break; }
            mant = mant * 10 + (uint64_t)(s[i] - '0');
        }
    }
    long exp10 = 0;
    if (fast && i < n && (s[i] == 'e' || s[i] == 'E')) {
        bool eneg = false;
        i++;
        if (s[i] == '+' || s[i] == '-') { eneg = s[i] == '-'; i++; }
        for (; i < n; i++) {
            if (exp10 < 100000) exp10 = exp10 * 10 + (s[i] - '0');
        }
        if (eneg) exp10 = -exp10;
    }
    if (fast) {
        long e = exp10 - frac_digits;
        if (mant == 0) { *out = neg ? -0.0 : 0.0; return 0; }
        if (mant <= ((uint64_t)1 << 53) && e >= -22 && e <= 22) {
            double v = (double)mant;
            v = e < 0 ? v / exact_pow10[-e] : v * exact_pow10[e];
            *out = neg ? -v : v;
            return 0;
        }
    }
    char small[64];
    char *buf = n < sizeof small ? small : malloc(n + 1);
    if (!buf) return out_of_memory(p);
    memcpy(buf, s, n);
    buf[n] = '\0';
    if (!p->c_locale) p->c_locale = newlocale(LC_NUMERIC_MASK, "C", (locale_t)0);
    double v = p->c_locale ? strtod_l(buf, NULL, p->c_locale) : strtod(buf, NULL);
    if (buf != small) free(buf);
    if (isinf(v)) return fail_at(p, start, "number out of range for a double");
    *out = v;
    return 0;
}

static int parse_number(parser *p, json_value *v) {
    const unsigned char *s = p->s;
    size_t len = p->len, start = p->pos, i = p->pos;
    bool neg = false;
    if (s[i] == '-') { neg = true; i++; }
    if (i >= len || !is_digit(s[i])) return fail_at(p, i, "expected a digit");
    if (s[i] == '0') {
        i++;
        if (i < len && is_digit(s[i])) return fail_at(p, i, "leading zeros are not allowed");
    } else {
        while (i < len && is_digit(s[i])) i++;
    }
    size_t int_end = i;
    bool integral = true;
    if (i < len && s[i] == '.') {
        i++;
        if (i >= len || !is_digit(s[i])) return fail_at(p, i, "expected a digit after '.'");
        while (i < len && is_digit(s[i])) i++;
        integral = false;
    }
    if (i < len && (s[i] == 'e' || s[i] == 'E')) {
        i++;
        if (i < len && (s[i] == '+' || s[i] == '-')) i++;
        if (i >= len || !is_digit(s[i])) return fail_at(p, i, "expected a digit in the exponent");
        while (i < len && is_digit(s[i])) i++;
        integral = false;
    }
    v->type = JSON_NUMBER;
    p->pos = i;

    if (integral) {
        /* Exact int64 when it fits: magnitude up to 2^63 - 1, or 2^63 when negative. */
        uint64_t mag = 0, limit = neg ? (uint64_t)1 << 63 : ((uint64_t)1 << 63) - 1;
        bool fits = true;
        for (size_t k = start + (neg ? 1 : 0); k < int_end; k++) {
            unsigned d = s[k] - '0';
            if (mag > (limit - d) / 10) { fits = false; break; }
            mag = mag * 10 + d;
        }
        if (fits) {
            v->is_integer = true;
            v->integer = neg ? (int64_t)(0 - mag) : (int64_t)mag;
            v->number = mag == 0 ? (neg ? -0.0 : 0.0) : (double)v->integer;
            return 0;
        }
    }
    return convert_number(p, start, i - start, &v->number);
}

/* ---- values ---- */

static int parse_value(parser *p, json_value *v);

static int enter(parser *p) {
    if (++p->depth > JSON_MAX_DEPTH) {
        char what[64];
        snprintf(what, sizeof what, "nesting deeper than %d levels", JSON_MAX_DEPTH);
        return fail_at(p, p->pos, what);
    }
    p->pos++;
    return 0;
}

static int parse_array(parser *p, json_value *v) {
    if (enter(p)) return -1;
    v->type = JSON_ARRAY;
    size_t base = p->n_vals;
    skip_ws(p);
    if (p->pos < p->len && p->s[p->pos] == ']') {
        p->pos++;
    } else {
        for (;;) {
            json_value item;
            if (parse_value(p, &item) || push_value(p, &item)) return -1;
            skip_ws(p);
            if (p->pos < p->len && p->s[p->pos] == ',') { p->pos++; continue; }
            if (p->pos < p->len && p->s[p->pos] == ']') { p->pos++; break; }
            return fail_at(p, p->pos, "expected ',' or ']'");
        }
    }
    v->n = p->n_vals - base;
    if (v->n) {
        v->items = arena_alloc(p, v->n * sizeof *v->items);
        if (!v->items) return out_of_memory(p);
        memcpy(v->items, p->vals + base, v->n * sizeof *v->items);
    }
    p->n_vals = base;
    p->depth--;
    return 0;
}

static int parse_object(parser *p, json_value *v) {
    if (enter(p)) return -1;
    v->type = JSON_OBJECT;
    size_t vbase = p->n_vals, kbase = p->n_keys;
    skip_ws(p);
    if (p->pos < p->len && p->s[p->pos] == '}') {
        p->pos++;
    } else {
        bool first = true;
        for (;;) {
            skip_ws(p);
            if (p->pos >= p->len || p->s[p->pos] != '"')
                return fail_at(p, p->pos, first ? "expected '\"' (a member name) or '}'"
                                                : "expected '\"' (a member name)");
            first = false;
            char *key;
            size_t key_len;
            if (parse_string(p, &key, &key_len)) return -1;
            skip_ws(p);
            if (p->pos >= p->len || p->s[p->pos] != ':') return fail_at(p, p->pos, "expected ':'");
            p->pos++;
            json_value item;
            if (parse_value(p, &item) || push_value(p, &item) || push_key(p, key, key_len)) return -1;
            skip_ws(p);
            if (p->pos < p->len && p->s[p->pos] == ',') { p->pos++; continue; }
            if (p->pos < p->len && p->s[p->pos] == '}') { p->pos++; break; }
            return fail_at(p, p->pos, "expected ',' or '}'");
        }
    }
    size_t n = p->n_vals - vbase;
    v->n = n;
    if (n) {
        v->items = arena_alloc(p, n * sizeof *v->items);
        v->keys = arena_alloc(p, n * sizeof *v->keys);
        v->key_lens = arena_alloc(p, n * sizeof *v->key_lens);
        if (!v->items || !v->keys || !v->key_lens) return out_of_memory(p);
        memcpy(v->items, p->vals + vbase, n * sizeof *v->items);
        memcpy(v->keys, p->keys + kbase, n * sizeof *v->keys);
        memcpy(v->key_lens, p->key_lens + kbase, n * sizeof *v->key_lens);
    }
    p->n_vals = vbase;
    p->n_keys = kbase;
    p->depth--;
    return 0;
}

static bool literal_at(const parser *p, const char *word, size_t n) {
    return p->len - p->pos >= n && memcmp(p->s + p->pos, word, n) == 0;
}

static int parse_value(parser *p, json_value *v) {
    memset(v, 0, sizeof *v);
    skip_ws(p);
    if (p->pos >= p->len) return fail_at(p, p->pos, "expected a value");
    unsigned char c = p->s[p->pos];
    switch (c) {
    case '{': return parse_object(p, v);
    case '[': return parse_array(p, v);
    case '"':
        v->type = JSON_STRING;
        return parse_string(p, &v->str, &v->len);
    case 't':
        if (!literal_at(p, "true", 4)) break;
        v->type = JSON_BOOL;
        v->boolean = true;
        p->pos += 4;
        return 0;
    case 'f':
        if (!literal_at(p, "false", 5)) break;
        v->type = JSON_BOOL;
        p->pos += 5;
        return 0;
    case 'n':
        if (!literal_at(p, "null", 4)) break;
        v->type = JSON_NULL;
        p->pos += 4;
        return 0;
    default:
        if (c == '-' || is_digit(c)) return parse_number(p, v);
        break;
    }
    return fail_at(p, p->pos, "expected a value");
}

int json_parse(const char *text, size_t len, json_value **out, ts_error *err) {
    *out = NULL;
    /* Small documents (JSONL lines, safetensors headers) get a small first block. */
    size_t first_block = len < ARENA_FIRST_BLOCK / 8 ? 8 * len + 256 : ARENA_FIRST_BLOCK;
    parser p = { .s = (const unsigned char *)text, .len = len, .next_block = first_block,
                 .err = err };
    if (!text && len) return ts_fail(err, "byte 0: no input");
    /* RFC 8259 lets a parser ignore a leading byte order mark; editors on Windows add one. */
    if (len >= 3 && memcmp(text, "\xEF\xBB\xBF", 3) == 0) p.pos = 3;
    json_doc *doc = NULL;
    json_value root;
    int rc = parse_value(&p, &root);
    if (rc == 0) {
        skip_ws(&p);
        if (p.pos != p.len) rc = fail_at(&p, p.pos, "expected the end of the input after the value");
    }
    if (rc == 0) {
        doc = malloc(sizeof *doc);
        if (!doc) rc = out_of_memory(&p);
    }
    free(p.vals);
    free(p.keys);
    free(p.key_lens);
    if (p.c_locale) freelocale(p.c_locale);
    if (rc) {
        arena_free_blocks(p.blocks);
        return -1;
    }
    doc->root = root;
    doc->blocks = p.blocks;
    *out = &doc->root;
    return 0;
}

void json_free(json_value *v) {
    if (!v) return;
    json_doc *doc = (json_doc *)((char *)v - offsetof(json_doc, root));
    arena_free_blocks(doc->blocks);
    free(doc);
}

/* ---- lookups ---- */

const json_value *json_get(const json_value *obj, const char *key) {
    if (!obj || obj->type != JSON_OBJECT || !key) return NULL;
    size_t klen = strlen(key);
    for (size_t i = 0; i < obj->n; i++)
        if (obj->key_lens[i] == klen && memcmp(obj->keys[i], key, klen) == 0) return &obj->items[i];
    return NULL;
}

double json_get_num(const json_value *obj, const char *key, double def) {
    const json_value *v = json_get(obj, key);
    return v && v->type == JSON_NUMBER ? v->number : def;
}

/* An integral number written as 2048.0 or 1e5 also counts, as long as int64 holds it exactly. */
int64_t json_get_int(const json_value *obj, const char *key, int64_t def) {
    const json_value *v = json_get(obj, key);
    if (!v || v->type != JSON_NUMBER) return def;
    if (v->is_integer) return v->integer;
    double d = v->number;
    if (d == floor(d) && d >= -9223372036854775808.0 && d < 9223372036854775808.0) return (int64_t)d;
    return def;
}

bool json_get_bool(const json_value *obj, const char *key, bool def) {
    const json_value *v = json_get(obj, key);
    return v && v->type == JSON_BOOL ? v->boolean : def;
}

const char *json_get_str(const json_value *obj, const char *key) {
    const json_value *v = json_get(obj, key);
    return v && v->type == JSON_STRING ? v->str : NULL;
}

/* ---- writing ---- */

static int buf_reserve(json_buf *b, size_t extra) {
    if (extra > SIZE_MAX - b->len - 1) return -1;
    size_t need = b->len + extra + 1;   /* + the NUL kept after the data */
    if (need <= b->cap) return 0;
    size_t cap = b->cap ? b->cap : 64;
    while (cap < need) cap = cap > SIZE_MAX / 2 ? need : cap * 2;
    char *nd = realloc(b->data, cap);
    if (!nd) return -1;
    b->data = nd;
    b->cap = cap;
    return 0;
}

int json_buf_put(json_buf *b, const char *s, size_t len) {
    if (buf_reserve(b, len)) return -1;
    if (len) memcpy(b->data + b->len, s, len);
    b->len += len;
    b->data[b->len] = '\0';
    return 0;
}

/* Bytes that are not valid UTF-8 have no JSON spelling; each becomes U+FFFD so the output always
 * parses. */
int json_buf_put_string(json_buf *b, const char *s, size_t len) {
    /* Worst case: every byte becomes \u00XX (6) or U+FFFD (3); plus the quotes. */
    if (len > (SIZE_MAX - 2) / 6 || buf_reserve(b, len * 6 + 2)) return -1;
    char *d = b->data + b->len;
    *d++ = '"';
    size_t i = 0;
    while (i < len) {
        unsigned char c = (unsigned char)s[i];
        if (c >= 0x80) {
            uint32_t cp;
            int n = utf8_decode(s + i, len - i, &cp);
            if (n == 0) {
                memcpy(d, "\xEF\xBF\xBD", 3);
                d += 3;
                i++;
            } else {
                memcpy(d, s + i, (size_t)n);
                d += n;
                i += (size_t)n;
            }
            continue;
        }
        i++;
        switch (c) {
        case '"': *d++ = '\\'; *d++ = '"'; break;
        case '\\': *d++ = '\\'; *d++ = '\\'; break;
        case '\n': *d++ = '\\'; *d++ = 'n'; break;
        case '\r': *d++ = '\\'; *d++ = 'r'; break;
        case '\t': *d++ = '\\'; *d++ = 't'; break;
        case '\b': *d++ = '\\'; *d++ = 'b'; break;
        case '\f': *d++ = '\\'; *d++ = 'f'; break;
        default:
            if (c < 0x20) {
                static const char hex[] = "0123456789abcdef";
                memcpy(d, "\\u00", 4);
                d[4] = hex[c >> 4];
                d[5] = hex[c & 15];
                d += 6;
            } else {
                *d++ = (char)c;
            }
        }
    }
    *d++ = '"';
    b->len = (size_t)(d - b->data);
    b->data[b->len] = '\0';
    return 0;
}

int json_buf_printf(json_buf *b, const char *fmt, ...) {
    char tmp[1024];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(tmp, sizeof tmp, fmt, ap);
    va_end(ap);
    return n < 0 || (size_t)n >= sizeof tmp ? -1 : json_buf_put(b, tmp, (size_t)n);
}

int json_buf_put_value(json_buf *b, const json_value *v) {
    switch (v->type) {
    case JSON_NULL: return json_buf_put(b, "null", 4);
    case JSON_BOOL: return v->boolean ? json_buf_put(b, "true", 4) : json_buf_put(b, "false", 5);
    case JSON_NUMBER: {   /* the shortest form that reads back the same */
        char num[40];
        if (v->is_integer) snprintf(num, sizeof num, "%lld", (long long)v->integer);
        else if (v->number == floor(v->number) && fabs(v->number) < 1e15) snprintf(num, sizeof num, "%.0f", v->number);
        else
            for (int prec = 1; prec <= 17; prec++) {
                snprintf(num, sizeof num, "%.*g", prec, v->number);
                if (strtod(num, NULL) == v->number) break;
            }
        return json_buf_put(b, num, strlen(num));
    }
    case JSON_STRING: return json_buf_put_string(b, v->str, v->len);
    case JSON_ARRAY:
    case JSON_OBJECT: {
        bool obj = v->type == JSON_OBJECT;
        if (json_buf_put(b, obj ? "{" : "[", 1) != 0) return -1;
        for (size_t i = 0; i < v->n; i++) {
            if (i && json_buf_put(b, ",", 1) != 0) return -1;
            if (obj && (json_buf_put_string(b, v->keys[i], v->key_lens[i]) != 0 || json_buf_put(b, ":", 1) != 0)) return -1;
            if (json_buf_put_value(b, &v->items[i]) != 0) return -1;
        }
        return json_buf_put(b, obj ? "}" : "]", 1);
    }
    }
    return -1;
}

void json_buf_free(json_buf *b) {
    if (!b) return;
    free(b->data);
    b->data = NULL;
    b->len = b->cap = 0;
}

/* ---- files ---- */

/* read_file is for JSON and text; weights are mmapped, never read whole. */

