/* GBNF text -> the compiled grammar (grammar_internal.h). Repetition is lowered to rules here:
 * x* becomes S ::= x S | (empty), x{m,n} becomes m copies of x and n - m nested optionals, so the
 * matcher knows only classes, rule references and the ends of alternatives. */
#include "text/grammar.h"
#include "text/grammar_internal.h"
#include "core/error.h"
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_REPEAT 100000        /* the largest count {m,n} may say (the element cap bounds the rest) */
#define MAX_NESTING 256          /* groups within groups */

typedef struct elems { g_elem *v; int n, cap; } elems;
typedef struct rule_def {
    char *name;
    elems body;                  /* alternatives, each ended by G_END */
    int defined_line, used_line; /* 0: not yet */
} rule_def;

typedef struct parser {
    const char *s;
    size_t len, pos;
    int line, depth;
    rule_def *rules;
    int n_rules, cap_rules;
    uint32_t *ranges;            /* classes as they are made */
    int n_ranges, cap_ranges;
    int32_t *class_at, *class_n;
    int n_classes, cap_classes, cap_class_n;
    long n_elems;                /* every element made so far, against GRAMMAR_MAX_ELEMENTS */
    ts_error *err;
    bool oom;
} parser;

static int fail_at(parser *p, const char *fmt, ...) {
    char msg[400];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return ts_fail(p->err, "grammar: line %d: %s", p->line, msg);
}

static int grow(void **v, int *cap, int need, size_t size) {
    if (need <= *cap) return 0;
    int nc = *cap ? *cap * 2 : 16;
    while (nc < need) nc *= 2;
    void *t = realloc(*v, (size_t)nc * size);
    if (!t) return -1;
    *v = t;
    *cap = nc;
    return 0;
}

static int push_elem(parser *p, elems *a, int type, int arg) {
    if (++p->n_elems > GRAMMAR_MAX_ELEMENTS)
        return fail_at(p, "the grammar expands to more than %d elements (repetition counts too large)", GRAMMAR_MAX_ELEMENTS);
    if (grow((void **)&a->v, &a->cap, a->n + 1, sizeof *a->v) != 0) { p->oom = true; return ts_fail(p->err, "grammar: out of memory"); }
    a->v[a->n++] = (g_elem){ type, arg };
    return 0;
}

static int push_elems(parser *p, elems *a, const g_elem *v, int n) {
    for (int i = 0; i < n; i++)
        if (push_elem(p, a, v[i].type, v[i].arg) != 0) return -1;
    return 0;
}

/* The rule of that name (made, undefined, on first mention), or -1 when out of memory. */
static int rule_id(parser *p, const char *name, size_t n) {
    for (int i = 0; i < p->n_rules; i++)
        if (p->rules[i].name && strlen(p->rules[i].name) == n && memcmp(p->rules[i].name, name, n) == 0) return i;
    if (grow((void **)&p->rules, &p->cap_rules, p->n_rules + 1, sizeof *p->rules) != 0) return -1;
    rule_def *r = &p->rules[p->n_rules];
    memset(r, 0, sizeof *r);
    if (name) {
        r->name = malloc(n + 1);
        if (!r->name) return -1;
        memcpy(r->name, name, n);
        r->name[n] = 0;
    }
    return p->n_rules++;
}

/* A rule made for a group or a repetition (no name, defined here). */
static int new_rule(parser *p) {
    int r = rule_id(p, NULL, 0);
    if (r < 0) { p->oom = true; ts_fail(p->err, "grammar: out of memory"); return -1; }
    p->rules[r].defined_line = p->line;
    return r;
}

/* A class of sorted, merged ranges (negated: their complement in 0..0x10FFFF). */
static int add_class(parser *p, uint32_t *r, int n, bool negate) {
    for (int i = 1; i < n; i++)   /* insertion sort by start: classes are short */
        for (int j = i; j > 0 && r[2 * j] < r[2 * j - 2]; j--) {
            uint32_t a = r[2 * j], b = r[2 * j + 1];
            r[2 * j] = r[2 * j - 2]; r[2 * j + 1] = r[2 * j - 1];
            r[2 * j - 2] = a; r[2 * j - 1] = b;
        }
    int m = 0;
    for (int i = 0; i < n; i++) {
        if (m > 0 && r[2 * i] <= r[2 * m - 1] + 1) { if (r[2 * i + 1] > r[2 * m - 1]) r[2 * m - 1] = r[2 * i + 1]; continue; }
        r[2 * m] = r[2 * i]; r[2 * m + 1] = r[2 * i + 1];
        m++;
    }
    if (grow((void **)&p->ranges, &p->cap_ranges, p->n_ranges + m + 1, 2 * sizeof *p->ranges) != 0 ||
        grow((void **)&p->class_at, &p->cap_classes, p->n_classes + 1, sizeof *p->class_at) != 0 ||
        grow((void **)&p->class_n, &p->cap_class_n, p->n_classes + 1, sizeof *p->class_n) != 0) {
        p->oom = true;
        return ts_fail(p->err, "grammar: out of memory");
    }
    int at = p->n_ranges, k = 0;
    if (!negate) {
        for (int i = 0; i < m; i++) { p->ranges[2 * (at + k)] = r[2 * i]; p->ranges[2 * (at + k) + 1] = r[2 * i + 1]; k++; }
    } else {
        uint32_t next = 0;
        for (int i = 0; i < m; i++) {
            if (r[2 * i] > next) { p->ranges[2 * (at + k)] = next; p->ranges[2 * (at + k) + 1] = r[2 * i] - 1; k++; }
            next = r[2 * i + 1] + 1;
        }
        if (next <= 0x10FFFF) { p->ranges[2 * (at + k)] = next; p->ranges[2 * (at + k) + 1] = 0x10FFFF; k++; }
    }
    p->n_ranges += k;
    p->class_at[p->n_classes] = at;
    p->class_n[p->n_classes] = k;
    return p->n_classes++;
}

static bool at_end(const parser *p) { return p->pos >= p->len; }
static int peek(const parser *p) { return at_end(p) ? -1 : (unsigned char)p->s[p->pos]; }

/* Spaces, tabs and comments; newlines too when newline_ok. */
static void skip_space(parser *p, bool newline_ok) {
    while (!at_end(p)) {
        char c = p->s[p->pos];
        if (c == ' ' || c == '\t') p->pos++;
        else if (c == '#') { while (!at_end(p) && p->s[p->pos] != '\n' && p->s[p->pos] != '\r') p->pos++; }
        else if (newline_ok && (c == '\n' || c == '\r')) { if (c == '\n') p->line++; p->pos++; }
        else break;
    }
}

static bool name_char(int c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' || c == '_';
}

static int hex_value(int c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

/* One character of a literal or a class (an escape, or a UTF-8 sequence) -> *cp. */
static int read_char(parser *p, uint32_t *cp) {
    if (at_end(p)) return fail_at(p, "unexpected end of the grammar");
    unsigned char c = (unsigned char)p->s[p->pos];
    if (c == '\\') {
        p->pos++;
        if (at_end(p)) return fail_at(p, "unexpected end of the grammar after '\\'");
        char e = p->s[p->pos++];
        int digits = e == 'x' ? 2 : e == 'u' ? 4 : e == 'U' ? 8 : 0;
        if (digits) {
            uint32_t v = 0;
            for (int i = 0; i < digits; i++) {
                int h = at_end(p) ? -1 : hex_value((unsigned char)p->s[p->pos]);
                if (h < 0) return fail_at(p, "'\\%c' needs %d hex digits", e, digits);
                v = v * 16 + (uint32_t)h;
                p->pos++;
            }
            if (v > 0x10FFFF) return fail_at(p, "'\\%c' names U+%X, beyond Unicode", e, v);
            *cp = v;
            return 0;
        }
        switch (e) {
        case 'n': *cp = '\n'; return 0;
        case 'r': *cp = '\r'; return 0;
        case 't': *cp = '\t'; return 0;
        case '\\': case '"': case '\'': case '[': case ']': case '-': case '/': case '^': *cp = (uint32_t)e; return 0;
        default: return fail_at(p, "unknown escape '\\%c'", e);
        }
    }
    if (c < 0x80) {
        if (c == '\n' || c == '\r') return fail_at(p, "a newline inside a literal or class");
        p->pos++;
        *cp = c;
        return 0;
    }
    int n = c >= 0xF0 && c <= 0xF4 ? 4 : c >= 0xE0 ? 3 : c >= 0xC2 && c <= 0xDF ? 2 : 0;
    if (!n || c > 0xF4) return fail_at(p, "invalid UTF-8");
    uint32_t v = c & (0xFF >> (n + 1));
    if (p->pos + (size_t)n > p->len) return fail_at(p, "invalid UTF-8");
    for (int i = 1; i < n; i++) {
        unsigned char d = (unsigned char)p->s[p->pos + (size_t)i];
        if ((d & 0xC0) != 0x80) return fail_at(p, "invalid UTF-8");
        v = v << 6 | (d & 0x3F);
    }
    static const uint32_t least[5] = { 0, 0, 0x80, 0x800, 0x10000 };
    if (v < least[n] || v > 0x10FFFF || (v >= 0xD800 && v <= 0xDFFF)) return fail_at(p, "invalid UTF-8");
    p->pos += (size_t)n;
    *cp = v;
    return 0;
}

static int parse_alternates(parser *p, int rule, bool nested);

/* One item of a sequence (a literal, a class, a name, a group, `.`) appended to seq. */
static int parse_item(parser *p, elems *seq) {
    int c = peek(p);
    if (c == '"') {
        p->pos++;
        while (peek(p) != '"') {
            uint32_t cp, r[2];
            if (read_char(p, &cp) != 0) return -1;
            r[0] = r[1] = cp;
            int k = add_class(p, r, 1, false);
            if (k < 0 || push_elem(p, seq, G_CHARS, k) != 0) return -1;
        }
        p->pos++;
        return 0;
    }
    if (c == '[') {
        p->pos++;
        bool negate = false;
        if (peek(p) == '^') { negate = true; p->pos++; }
        uint32_t *r = NULL;
        int n = 0, cap = 0;
        while (peek(p) != ']') {
            uint32_t lo, hi;
            if (read_char(p, &lo) != 0) { free(r); return -1; }
            hi = lo;
            if (peek(p) == '-' && p->pos + 1 < p->len && p->s[p->pos + 1] != ']') {
                p->pos++;
                if (read_char(p, &hi) != 0) { free(r); return -1; }
                if (hi < lo) { free(r); return fail_at(p, "a class range runs backwards (U+%X-U+%X)", lo, hi); }
            }
            if (grow((void **)&r, &cap, n + 1, 2 * sizeof *r) != 0) { free(r); p->oom = true; return ts_fail(p->err, "grammar: out of memory"); }
            r[2 * n] = lo; r[2 * n + 1] = hi;
            n++;
        }
        p->pos++;
        int k = add_class(p, r, n, negate);
        free(r);
        return k < 0 ? -1 : push_elem(p, seq, G_CHARS, k);
    }
    if (c == '.') {
        p->pos++;
        uint32_t r[2] = { 0, 0x10FFFF };
        int k = add_class(p, r, 1, false);
        return k < 0 ? -1 : push_elem(p, seq, G_CHARS, k);
    }
    if (c == '(') {
        if (++p->depth > MAX_NESTING) return fail_at(p, "groups nested more than %d deep", MAX_NESTING);
        p->pos++;
        skip_space(p, true);
        int r = new_rule(p);
        if (r < 0 || parse_alternates(p, r, true) != 0) return -1;
        skip_space(p, true);
        if (peek(p) != ')') return fail_at(p, "expected ')'");
        p->pos++;
        p->depth--;
        return push_elem(p, seq, G_REF, r);
    }
    if (name_char(c)) {
        size_t start = p->pos;
        while (name_char(peek(p))) p->pos++;
        int r = rule_id(p, p->s + start, p->pos - start);
        if (r < 0) { p->oom = true; return ts_fail(p->err, "grammar: out of memory"); }
        if (!p->rules[r].used_line) p->rules[r].used_line = p->line;
        return push_elem(p, seq, G_REF, r);
    }
    if (c == '<') return fail_at(p, "token references (<...>) are not supported");
    if (c < 0) return fail_at(p, "unexpected end of the grammar");
    return fail_at(p, "unexpected '%c'", c);
}

/* A count of {m,n}. */
static int read_count(parser *p, long *v) {
    if (!(peek(p) >= '0' && peek(p) <= '9')) return fail_at(p, "expected a number in {m,n}");
    *v = 0;
    while (peek(p) >= '0' && peek(p) <= '9') {
        *v = *v * 10 + (p->s[p->pos++] - '0');
        if (*v > MAX_REPEAT) return fail_at(p, "a repetition count above %d", MAX_REPEAT);
    }
    return 0;
}

/* The item seq[from..] repeated min to max times (max -1: no limit), lowered to rules. */
static int repeat(parser *p, elems *seq, int from, long min, long max) {
    int n = seq->n - from;
    if (n == 0) return 0;   /* an empty item repeated is still empty */
    g_elem *x = malloc((size_t)(n ? n : 1) * sizeof *x);
    if (!x) { p->oom = true; return ts_fail(p->err, "grammar: out of memory"); }
    memcpy(x, seq->v + from, (size_t)n * sizeof *x);
    seq->n = from;
    int rc = 0;
    for (long i = 0; i < min && rc == 0; i++) rc = push_elems(p, seq, x, n);
    if (rc == 0 && max < 0) {          /* S ::= x S | (empty) */
        int s = new_rule(p);
        rc = s < 0 ? -1 : 0;
        if (rc == 0) rc = push_elems(p, &p->rules[s].body, x, n);
        if (rc == 0) rc = push_elem(p, &p->rules[s].body, G_REF, s);
        if (rc == 0) rc = push_elem(p, &p->rules[s].body, G_END, 0);
        if (rc == 0) rc = push_elem(p, &p->rules[s].body, G_END, 0);
        if (rc == 0) rc = push_elem(p, seq, G_REF, s);
    } else if (rc == 0 && max > min) { /* R1 ::= x | (empty); Rk ::= x R(k-1) | (empty) */
        int prev = -1;
        for (long k = 0; k < max - min && rc == 0; k++) {
            int r = new_rule(p);
            if (r < 0) { rc = -1; break; }
            rc = push_elems(p, &p->rules[r].body, x, n);
            if (rc == 0 && prev >= 0) rc = push_elem(p, &p->rules[r].body, G_REF, prev);
            if (rc == 0) rc = push_elem(p, &p->rules[r].body, G_END, 0);
            if (rc == 0) rc = push_elem(p, &p->rules[r].body, G_END, 0);
            prev = r;
        }
        if (rc == 0) rc = push_elem(p, seq, G_REF, prev);
    }
    free(x);
    return rc;
}

/* Items and their repetitions up to `|`, `)`, the end, or (not nested) the end of the line. */
static int parse_sequence(parser *p, elems *seq, bool nested) {
    for (;;) {
        skip_space(p, nested);
        int c = peek(p);
        if (c < 0 || c == '|' || c == ')' || c == '\n' || c == '\r') return 0;
        int from = seq->n;
        if (parse_item(p, seq) != 0) return -1;
        for (;;) {
            skip_space(p, nested);
            c = peek(p);
            long min, max;
            if (c == '*') { p->pos++; min = 0; max = -1; }
            else if (c == '+') { p->pos++; min = 1; max = -1; }
            else if (c == '?') { p->pos++; min = 0; max = 1; }
            else if (c == '{') {
                p->pos++;
                skip_space(p, nested);
                if (read_count(p, &min) != 0) return -1;
                skip_space(p, nested);
                max = min;
                if (peek(p) == ',') {
                    p->pos++;
                    skip_space(p, nested);
                    max = -1;
                    if (peek(p) != '}' && read_count(p, &max) != 0) return -1;
                    skip_space(p, nested);
                }
                if (peek(p) != '}') return fail_at(p, "expected '}'");
                p->pos++;
                if (max >= 0 && max < min) return fail_at(p, "{%ld,%ld}: the maximum is below the minimum", min, max);
            } else break;
            if (repeat(p, seq, from, min, max) != 0) return -1;
        }
    }
}

static int parse_alternates(parser *p, int rule, bool nested) {
    elems seq = { 0 };
    for (;;) {
        seq.n = 0;
        if (parse_sequence(p, &seq, nested) != 0) { free(seq.v); return -1; }
        elems *body = &p->rules[rule].body;   /* after the sequence: parsing it may move the rules */
        if (push_elems(p, body, seq.v, seq.n) != 0 || push_elem(p, body, G_END, 0) != 0) { free(seq.v); return -1; }
        if (peek(p) != '|') break;
        p->pos++;
        skip_space(p, true);
    }
    free(seq.v);
    return 0;
}

static int parse_rules(parser *p) {
    skip_space(p, true);
    while (!at_end(p)) {
        size_t start = p->pos;
        while (name_char(peek(p))) p->pos++;
        if (p->pos == start) return fail_at(p, "expected a rule name");
        int r = rule_id(p, p->s + start, p->pos - start);
        if (r < 0) { p->oom = true; return ts_fail(p->err, "grammar: out of memory"); }
        if (p->rules[r].defined_line)
            return fail_at(p, "rule '%s' is defined twice (first on line %d)", p->rules[r].name, p->rules[r].defined_line);
        p->rules[r].defined_line = p->line;
        skip_space(p, false);
        if (p->pos + 3 > p->len || memcmp(p->s + p->pos, "::=", 3) != 0) return fail_at(p, "expected '::=' after '%s'", p->rules[r].name);
        p->pos += 3;
        skip_space(p, true);
        if (parse_alternates(p, r, false) != 0) return -1;
        skip_space(p, false);
        int c = peek(p);
        if (c >= 0 && c != '\n' && c != '\r') return fail_at(p, c == ')' ? "unbalanced ')'" : "unexpected '%c'", c);
        skip_space(p, true);
    }
    return 0;
}

/* Left recursion: a rule that reaches itself through references each preceded only by rules that
 * can match nothing would expand forever before reading a character. Returns a rule on such a
 * cycle, or -1. */
static int left_recursive_rule(const grammar *g) {
    int n = g->n_rules, found = -1;
    bool *nullable = calloc((size_t)n, sizeof *nullable);
    int *state = calloc((size_t)n, sizeof *state);      /* 0 new, 1 on the path, 2 done */
    int *stack = malloc((size_t)n * 2 * sizeof *stack); /* (rule, next alternative-element cursor) */
    if (!nullable || !state || !stack) { free(nullable); free(state); free(stack); return -2; }
    for (bool changed = true; changed;) {
        changed = false;
        for (int r = 0; r < n; r++) {
            if (nullable[r]) continue;
            for (int a = 0; a < g->rule_n_alt[r] && !nullable[r]; a++) {
                const g_elem *e = g->e + g->alt_start[g->rule_alt[r] + a];
                while (e->type == G_REF && nullable[e->arg]) e++;
                if (e->type == G_END) nullable[r] = changed = true;
            }
        }
    }
    /* depth-first over "r can start with q", cursor = index into the rule's elements */
    for (int root = 0; root < n && found < 0; root++) {
        if (state[root]) continue;
        int sp = 1;
        stack[0] = root; stack[1] = 0;
        state[root] = 1;
        while (sp > 0 && found < 0) {
            int r = stack[2 * (sp - 1)], *cur = &stack[2 * (sp - 1) + 1];
            /* the rule's elements run from its first alternative to the end of its last */
            const g_elem *body = g->e + g->alt_start[g->rule_alt[r]];
            const g_elem *end = g->e + g->alt_start[g->rule_alt[r] + g->rule_n_alt[r] - 1];
            while (end->type != G_END) end++;
            int total = (int)(end - body) + 1;
            /* find the next reference that can come first */
            int next = -1;
            while (*cur < total) {
                int i = (*cur)++;
                if (body[i].type != G_REF) continue;
                /* first in its alternative, or after only nullable references */
                bool first = true;
                for (int j = i - 1; j >= 0 && body[j].type != G_END; j--)
                    if (body[j].type != G_REF || !nullable[body[j].arg]) { first = false; break; }
                if (first) { next = body[i].arg; break; }
            }
            if (next < 0) { state[r] = 2; sp--; continue; }
            if (state[next] == 1) { found = next; break; }
            if (state[next] == 0) {
                state[next] = 1;
                stack[2 * sp] = next; stack[2 * sp + 1] = 0;
                sp++;
            }
        }
    }
    free(nullable); free(state); free(stack);
    return found;
}

void grammar_free(grammar *g) {
    if (!g) return;
    free(g->e); free(g->alt_start); free(g->rule_alt); free(g->rule_n_alt);
    free(g->ranges); free(g->class_at); free(g->class_n);
    free(g);
}

static void parser_free(parser *p) {
    for (int i = 0; i < p->n_rules; i++) { free(p->rules[i].name); free(p->rules[i].body.v); }
    free(p->rules); free(p->ranges); free(p->class_at); free(p->class_n);
}

int grammar_parse(const char *gbnf, size_t len, grammar **out, ts_error *err) {
    *out = NULL;
    parser p = { .s = gbnf, .len = len, .line = 1, .err = err };
    if (memchr(gbnf, 0, len)) return ts_fail(err, "grammar: a NUL byte in the text");
    int rc = parse_rules(&p);
    int root = -1;
    for (int i = 0; rc == 0 && i < p.n_rules; i++) {
        if (!p.rules[i].defined_line) {
            p.line = p.rules[i].used_line;
            rc = fail_at(&p, "rule '%s' is used but not defined", p.rules[i].name);
        }
        if (p.rules[i].name && strcmp(p.rules[i].name, "root") == 0) root = i;
    }
    if (rc == 0 && root < 0) rc = ts_fail(err, "grammar: no rule named 'root'");
    grammar *g = NULL;
    if (rc == 0) {
        g = calloc(1, sizeof *g);
        long n_e = 0, n_alt = 0;
        for (int i = 0; i < p.n_rules; i++) {
            n_e += p.rules[i].body.n;
            for (int k = 0; k < p.rules[i].body.n; k++) n_alt += p.rules[i].body.v[k].type == G_END;
        }
        if (g) {
            g->e = malloc((size_t)(n_e + 1) * sizeof *g->e);
            g->alt_start = malloc((size_t)(n_alt + 1) * sizeof *g->alt_start);
            g->rule_alt = malloc((size_t)p.n_rules * sizeof *g->rule_alt);
            g->rule_n_alt = malloc((size_t)p.n_rules * sizeof *g->rule_n_alt);
        }
        if (!g || !g->e || !g->alt_start || !g->rule_alt || !g->rule_n_alt) rc = ts_fail(err, "grammar: out of memory");
        for (int i = 0; rc == 0 && i < p.n_rules; i++) {
            const elems *b = &p.rules[i].body;
            if (i == 0) n_alt = 0;
            g->rule_alt[i] = (int32_t)n_alt;
            g->rule_n_alt[i] = 0;
            bool starts = true;
            for (int k = 0; k < b->n; k++) {
                if (starts) { g->alt_start[n_alt++] = g->n_e; g->rule_n_alt[i]++; starts = false; }
                g->e[g->n_e++] = b->v[k];
                if (b->v[k].type == G_END) starts = true;
            }
        }
        if (rc == 0) {
            g->e[g->n_e] = (g_elem){ G_END, 0 };
            g->n_rules = p.n_rules;
            g->root = root;
            g->ranges = p.ranges; g->class_at = p.class_at; g->class_n = p.class_n; g->n_classes = p.n_classes;
            p.ranges = NULL; p.class_at = NULL; p.class_n = NULL;
            int lr = left_recursive_rule(g);
            if (lr == -2) rc = ts_fail(err, "grammar: out of memory");
            else if (lr >= 0) {
                /* a made rule (group, repetition) is named by the first named rule that uses it */
                const char *name = p.rules[lr].name;
                for (int i = 0; !name && i < p.n_rules; i++)
                    for (int k = 0; k < p.rules[i].body.n; k++)
                        if (p.rules[i].body.v[k].type == G_REF && p.rules[i].body.v[k].arg == lr && p.rules[i].name) { name = p.rules[i].name; break; }
                rc = ts_fail(err, "grammar: left recursion in rule '%s' (it can reach itself before reading a character)", name ? name : "?");
            }
        }
    }
    parser_free(&p);
    if (rc != 0) { grammar_free(g); return -1; }
    *out = g;
    return 0;
}

int grammar_prefix_rules(const char *gbnf, size_t len, const char *prefix, json_buf *out) {
    size_t i = 0, pl = strlen(prefix);
    while (i < len) {
        char c = gbnf[i];
        size_t start = i;
        if (c == '"' || c == '[') {   /* a literal or a class, escapes included */
            char close = c == '"' ? '"' : ']';
            for (i++; i < len && gbnf[i] != close; i++)
                if (gbnf[i] == '\\' && i + 1 < len) i++;
            if (i < len) i++;
        } else if (c == '{') {        /* a count */
            while (i < len && gbnf[i] != '}') i++;
            if (i < len) i++;
        } else if (c == '#') {        /* a comment */
            while (i < len && gbnf[i] != '\n') i++;
        } else if (name_char((unsigned char)c)) {
            while (i < len && name_char((unsigned char)gbnf[i])) i++;
            if (json_buf_put(out, prefix, pl) != 0) return -1;
        } else {
            i++;
        }
        if (json_buf_put(out, gbnf + start, i - start) != 0) return -1;
    }
    return 0;
}
