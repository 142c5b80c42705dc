/* Jinja template text -> tokens, with Jinja2's whitespace control as transformers configures it:
 * line breaks normalised to "\n" and one trailing line break dropped (keep_trailing_newline off),
 * `-` on a tag strips all whitespace on that side, trim_blocks drops the first newline after a
 * block or comment tag, lstrip_blocks drops the spaces and tabs before a block or comment tag that
 * begins its line, and `+` turns either of the last two off for that tag. */
#include "template/jinja_internal.h"
#include "core/utf8.h"
#include "core/str.h"
#include "core/error.h"
#include <stdlib.h>
#include <string.h>

typedef struct lexer {
    const char *s;
    size_t n, pos;
    int line;
    jinja_arena *arena;
    token *toks;
    int ntok, cap;
    ts_error *err;
    char stack[256];              /* open brackets inside a tag */
    int depth;
} lexer;

static int lex_fail(lexer *L, const char *msg) { return ts_fail(L->err, "line %d: %s", L->line, msg); }

static token *push(lexer *L, tok_kind kind, const char *p, size_t n) {
    if (L->ntok == L->cap) {
        int cap = L->cap ? L->cap * 2 : 256;
        token *t = jinja_arena_alloc(L->arena, (size_t)cap * sizeof *t);
        if (!t) return NULL;
        if (L->ntok) memcpy(t, L->toks, (size_t)L->ntok * sizeof *t);
        L->toks = t;
        L->cap = cap;
    }
    token *t = &L->toks[L->ntok++];
    *t = (token){ .kind = kind, .line = L->line, .p = p, .n = n };
    return t;
}

/* Line breaks as Python's str.splitlines() knows them: the byte length of the one at s[i], or 0. */
static int line_break_at(const char *s, size_t n, size_t i) {
    unsigned char c = (unsigned char)s[i];
    if (c == '\r') return i + 1 < n && s[i + 1] == '\n' ? 2 : 1;
    if (c == '\n' || c == '\v' || c == '\f' || (c >= 0x1c && c <= 0x1e)) return 1;
    if (c == 0xc2 && i + 1 < n && (unsigned char)s[i + 1] == 0x85) return 2;
    if (c == 0xe2 && i + 2 < n && (unsigned char)s[i + 1] == 0x80 &&
        ((unsigned char)s[i + 2] == 0xa8 || (unsigned char)s[i + 2] == 0xa9)) return 3;
    return 0;
}

/* "\n".join(text.splitlines()): every line break becomes "\n", a final one is dropped. */
static char *normalise_newlines(jinja_arena *a, const char *s, size_t n, size_t *out_n) {
    char *o = jinja_arena_alloc(a, n + 1);
    if (!o) return NULL;
    size_t k = 0;
    for (size_t i = 0; i < n;) {
        int b = line_break_at(s, n, i);
        if (b) { o[k++] = '\n'; i += (size_t)b; }
        else o[k++] = s[i++];
    }
    if (k && o[k - 1] == '\n') k--;
    o[k] = '\0';
    *out_n = k;
    return o;
}

static bool is_ws(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f'; }

/* Length of text[0..n) without trailing whitespace (Python's rstrip(): Unicode whitespace too). */
static size_t rstrip_len(const char *p, size_t n) {
    while (n) {
        size_t start = n - 1;
        while (start > 0 && ((unsigned char)p[start] & 0xc0) == 0x80) start--;
        uint32_t cp;
        int k = jinja_decode(p + start, n - start, &cp);
        if ((size_t)k != n - start || !jinja_isspace(cp)) break;
        n = start;
    }
    return n;
}

static size_t lstrip_len(const char *p, size_t n) {
    size_t i = 0;
    while (i < n) {
        uint32_t cp;
        int k = jinja_decode(p + i, n - i, &cp);
        if (!jinja_isspace(cp)) break;
        i += (size_t)k;
    }
    return i;
}

static void count_lines(lexer *L, size_t from, size_t to) {
    for (size_t i = from; i < to; i++) L->line += L->s[i] == '\n';
}

/* A string literal's body with Python's escapes decoded (unknown escapes stay as written). */
static int decode_string(lexer *L, const char *p, size_t n, token *t) {
    char *o = jinja_arena_alloc(L->arena, n + 1);   /* decoding never lengthens */
    if (!o) return lex_fail(L, "out of memory");
    size_t k = 0;
    for (size_t i = 0; i < n;) {
        if (p[i] != '\\' || i + 1 >= n) { o[k++] = p[i++]; continue; }
        char c = p[i + 1];
        i += 2;
        switch (c) {
        case '\n': break;
        case '\\': o[k++] = '\\'; break;
        case '\'': o[k++] = '\''; break;
        case '"': o[k++] = '"'; break;
        case 'a': o[k++] = '\a'; break;
        case 'b': o[k++] = '\b'; break;
        case 'f': o[k++] = '\f'; break;
        case 'n': o[k++] = '\n'; break;
        case 'r': o[k++] = '\r'; break;
        case 't': o[k++] = '\t'; break;
        case 'v': o[k++] = '\v'; break;
        case 'x': case 'u': case 'U': {
            int digits = c == 'x' ? 2 : c == 'u' ? 4 : 8;
            uint32_t cp = 0;
            for (int d = 0; d < digits; d++) {
                int h = i + (size_t)d < n ? str_hex_digit(p[i + (size_t)d]) : -1;
                if (h < 0) return lex_fail(L, "truncated \\x, \\u or \\U escape in a string");
                cp = cp * 16 + (uint32_t)h;
            }
            i += (size_t)digits;
            /* a surrogate pair written as two \u escapes stands for one character */
            if (cp >= 0xd800 && cp < 0xdc00 && i + 6 <= n && p[i] == '\\' && p[i + 1] == 'u') {
                uint32_t lo = 0;
                int d;
                for (d = 0; d < 4 && str_hex_digit(p[i + 2 + (size_t)d]) >= 0; d++) lo = lo * 16 + (uint32_t)str_hex_digit(p[i + 2 + (size_t)d]);
                if (d == 4 && lo >= 0xdc00 && lo < 0xe000) { cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00); i += 6; }
            }
            char enc[4];
            int e = utf8_encode(cp, enc);
            if (e <= 0) return lex_fail(L, "a string escape stands for no valid character");
            memcpy(o + k, enc, (size_t)e);
            k += (size_t)e;
            break;
        }
        case 'N': return lex_fail(L, "\\N{...} escapes are not supported");
        default:
            if (c >= '0' && c <= '7') {
                uint32_t cp = (uint32_t)(c - '0');
                for (int d = 0; d < 2 && i < n && p[i] >= '0' && p[i] <= '7'; d++) cp = cp * 8 + (uint32_t)(p[i++] - '0');
                k += (size_t)utf8_encode(cp, o + k);
            } else {
                o[k++] = '\\';
                o[k++] = c;
            }
        }
    }
    o[k] = '\0';
    t->p = o;
    t->n = k;
    return 0;
}

/* A number: digits with optional underscores, a fraction and an exponent. */
static int lex_number(lexer *L) {
    const char *s = L->s;
    size_t i = L->pos, n = L->n;
    char buf[128];
    size_t k = 0;
    bool is_float = false;
#define DIGITS() do { while (i < n && ((s[i] >= '0' && s[i] <= '9') || (s[i] == '_' && i + 1 < n && s[i + 1] >= '0' && s[i + 1] <= '9'))) { if (s[i] != '_' && k < sizeof buf - 1) buf[k++] = s[i]; i++; } } while (0)
    DIGITS();
    if (i + 1 < n && s[i] == '.' && s[i + 1] >= '0' && s[i + 1] <= '9') {
        is_float = true;
        buf[k++] = s[i++];
        DIGITS();
    }
    if (i < n && (s[i] == 'e' || s[i] == 'E')) {
        size_t j = i + 1;
        if (j < n && (s[j] == '+' || s[j] == '-')) j++;
        if (j < n && s[j] >= '0' && s[j] <= '9') {
            is_float = true;
            while (i < j && k < sizeof buf - 1) buf[k++] = s[i++];
            DIGITS();
        }
    }
#undef DIGITS
    if (k >= sizeof buf - 1) return lex_fail(L, "a number literal is too long");
    buf[k] = '\0';
    token *t = push(L, is_float ? T_FLOAT : T_INT, s + L->pos, i - L->pos);
    if (!t) return lex_fail(L, "out of memory");
    if (is_float) t->f = strtod(buf, NULL);
    else {
        char *end;
        unsigned long long v = strtoull(buf, &end, 10);
        if (k > 18 || v > (unsigned long long)INT64_MAX) return lex_fail(L, "an integer literal is too large");
        t->i = (int64_t)v;
    }
    L->pos = i;
    return 0;
}

static const char *const ops2[] = { "//", "**", "==", "!=", "<=", ">=" };
static const char ops1[] = "+-/*%~[](){}<>=.:|,;";

/* The tokens of one {{ }} or {% %} tag, up to and including its end. */
static int lex_tag(lexer *L, bool block) {
    const char *s = L->s;
    char end1 = block ? '%' : '}';
    L->depth = 0;
    while (1) {
        while (L->pos < L->n && is_ws(s[L->pos])) { L->line += s[L->pos] == '\n'; L->pos++; }
        if (L->pos >= L->n) return lex_fail(L, block ? "unclosed block tag: expected '%}'" : "unclosed tag: expected '}}'");
        size_t i = L->pos, left = L->n - i;
        if (L->depth == 0) {
            /* the end of the tag, with its whitespace control */
            int sign = 0;
            size_t at = i;
            if ((s[i] == '-' || s[i] == '+') && left >= 3 && s[i + 1] == end1 && s[i + 2] == '}') { sign = s[i]; at = i + 1; }
            if (at + 1 < L->n && s[at] == end1 && s[at + 1] == '}' && (sign != '+' || block)) {
                if (!push(L, block ? T_BLOCK_END : T_VAR_END, s + i, 0)) return lex_fail(L, "out of memory");
                L->pos = at + 2;
                size_t from = L->pos;
                if (sign == '-') L->pos += lstrip_len(s + L->pos, L->n - L->pos);
                else if (block && sign != '+' && L->pos < L->n && s[L->pos] == '\n') L->pos++;   /* trim_blocks */
                count_lines(L, from, L->pos);
                return L->pos > from && s[L->pos - 1] == '\n';   /* the tag ended its line */
            }
        }
        char c = s[i];
        if (c == '\'' || c == '"') {
            size_t j = i + 1;
            while (j < L->n && s[j] != c) j += s[j] == '\\' ? 2 : 1;
            if (j >= L->n) return lex_fail(L, "unterminated string literal");
            token *t = push(L, T_STRING, NULL, 0);
            if (!t || decode_string(L, s + i + 1, j - i - 1, t) != 0) return t ? -1 : lex_fail(L, "out of memory");
            count_lines(L, i, j);
            L->pos = j + 1;
        } else if (c >= '0' && c <= '9') {
            if (lex_number(L) != 0) return -1;
        } else if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_') {
            size_t j = i;
            while (j < L->n && ((s[j] >= 'a' && s[j] <= 'z') || (s[j] >= 'A' && s[j] <= 'Z') || s[j] == '_' || (s[j] >= '0' && s[j] <= '9'))) j++;
            if (!push(L, T_NAME, s + i, j - i)) return lex_fail(L, "out of memory");
            L->pos = j;
        } else {
            size_t len = 0;
            for (size_t k = 0; k < sizeof ops2 / sizeof ops2[0] && !len; k++)
                if (left >= 2 && s[i] == ops2[k][0] && s[i + 1] == ops2[k][1]) len = 2;
            if (!len && strchr(ops1, c) && c) len = 1;
            if (!len) {
                char msg[64];
                snprintf(msg, sizeof msg, "unexpected character '%c' in a tag", (c >= 32 && c < 127) ? c : '?');
                return lex_fail(L, msg);
            }
            if (len == 1 && (c == '(' || c == '[' || c == '{')) {
                if (L->depth == (int)sizeof L->stack) return lex_fail(L, "brackets nest too deeply");
                L->stack[L->depth++] = c == '(' ? ')' : c == '[' ? ']' : '}';
            } else if (len == 1 && (c == ')' || c == ']' || c == '}')) {
                if (L->depth == 0 || L->stack[L->depth - 1] != c) {
                    char msg[48];
                    snprintf(msg, sizeof msg, "unexpected '%c'", c);
                    return lex_fail(L, msg);
                }
                L->depth--;
            }
            if (!push(L, T_OP, s + i, len)) return lex_fail(L, "out of memory");
            L->pos = i + len;
        }
    }
}

static bool tok_is_raw(const token *t) { return t->kind == T_NAME && t->n == 3 && memcmp(t->p, "raw", 3) == 0; }

/* After "{% raw %}" (whose whitespace control lex_tag applied): the text up to "{% endraw %}" as
 * it is, in place of the raw tag's tokens. Returns 1 when the endraw tag ended its line (as
 * lex_tag does), 0 otherwise, -1 on error. */
static int lex_raw(lexer *L) {
    const char *s = L->s;
    if (L->toks[L->ntok - 3].kind != T_BLOCK_BEGIN) return lex_fail(L, "unexpected 'raw'");
    L->ntok -= 3;
    for (size_t i = L->pos; i + 1 < L->n; i++) {
        if (s[i] != '{' || s[i + 1] != '%') continue;
        size_t j = i + 2;
        char sign = j < L->n && (s[j] == '-' || s[j] == '+') ? s[j++] : 0;
        while (j < L->n && is_ws(s[j])) j++;
        if (j + 6 > L->n || memcmp(s + j, "endraw", 6) != 0) continue;
        j += 6;
        while (j < L->n && is_ws(s[j])) j++;
        char esign = j < L->n && (s[j] == '-' || s[j] == '+') ? s[j++] : 0;
        if (j + 1 >= L->n || s[j] != '%' || s[j + 1] != '}') continue;
        size_t text_n = i - L->pos;
        if (sign == '-') text_n = rstrip_len(s + L->pos, text_n);
        if (text_n && !push(L, T_TEXT, s + L->pos, text_n)) return lex_fail(L, "out of memory");
        count_lines(L, L->pos, j + 2);
        L->pos = j + 2;
        size_t from = L->pos;
        if (esign == '-') L->pos += lstrip_len(s + L->pos, L->n - L->pos);
        else if (esign != '+' && L->pos < L->n && s[L->pos] == '\n') L->pos++;
        count_lines(L, from, L->pos);
        return L->pos > from && s[L->pos - 1] == '\n';
    }
    return lex_fail(L, "unclosed raw block: expected '{% endraw %}'");
}

int jinja_lex(const char *text, size_t len, jinja_arena *a, token **out, int *n_out, ts_error *err) {
    lexer L = { .line = 1, .arena = a, .err = err };
    if (!utf8_valid(text, len, NULL)) return ts_fail(err, "the template is not valid UTF-8");
    L.s = normalise_newlines(a, text, len, &L.n);
    if (!L.s) return ts_fail(err, "out of memory");
    bool line_starting = true;
    while (L.pos < L.n) {
        /* the text up to the next tag */
        const char *s = L.s;
        size_t i = L.pos, tag = L.n;
        char kind = 0;
        for (const char *q = memchr(s + i, '{', L.n - i); q; q = q + 1 < s + L.n ? memchr(q + 1, '{', (size_t)(s + L.n - q - 1)) : NULL) {
            if (q + 1 < s + L.n && (q[1] == '{' || q[1] == '%' || q[1] == '#')) { tag = (size_t)(q - s); kind = q[1]; break; }
        }
        size_t text_n = tag - i;
        char sign = tag + 2 < L.n && (s[tag + 2] == '-' || s[tag + 2] == '+') ? s[tag + 2] : 0;
        if (kind && sign == '-') text_n = rstrip_len(s + i, text_n);
        else if (kind && kind != '{' && sign != '+') {
            /* lstrip_blocks: only whitespace between the line start and the tag */
            size_t l_pos = 0;
            for (size_t k = text_n; k > 0; k--) if (s[i + k - 1] == '\n') { l_pos = k; break; }
            if ((l_pos > 0 || line_starting) && rstrip_len(s + i + l_pos, text_n - l_pos) == 0) text_n = l_pos;
        }
        if (text_n && !push(&L, T_TEXT, s + i, text_n)) return ts_fail(err, "out of memory");
        count_lines(&L, i, tag);
        if (!kind) break;
        L.pos = tag + 2 + (sign ? 1 : 0);
        if (kind == '#') {
            const char *e = NULL;
            for (size_t k = L.pos; k + 1 < L.n; k++) if (s[k] == '#' && s[k + 1] == '}') { e = s + k; break; }
            if (!e) return lex_fail(&L, "unclosed comment: expected '#}'");
            size_t at = (size_t)(e - s);
            char esign = at > L.pos && (s[at - 1] == '-' || s[at - 1] == '+') ? s[at - 1] : 0;
            count_lines(&L, L.pos, at + 2);
            L.pos = at + 2;
            size_t from = L.pos;
            if (esign == '-') L.pos += lstrip_len(s + L.pos, L.n - L.pos);
            else if (esign != '+' && L.pos < L.n && s[L.pos] == '\n') L.pos++;
            count_lines(&L, from, L.pos);
            line_starting = L.pos > from && s[L.pos - 1] == '\n';
            continue;
        }
        if (!push(&L, kind == '%' ? T_BLOCK_BEGIN : T_VAR_BEGIN, s + tag, 0)) return ts_fail(err, "out of memory");
        int r = lex_tag(&L, kind == '%');
        if (r < 0) return -1;
        line_starting = r == 1;
        if (kind == '%' && L.ntok >= 3 && tok_is_raw(&L.toks[L.ntok - 2])) {
            r = lex_raw(&L);
            if (r < 0) return -1;
            line_starting = r == 1;
        }
    }
    if (!push(&L, T_EOF, NULL, 0)) return ts_fail(err, "out of memory");
    *out = L.toks;
    *n_out = L.ntok;
    return 0;
}
