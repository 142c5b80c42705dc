/* Tokens -> syntax tree, by recursive descent with Jinja2's grammar and operator precedence
 * (loosest first): `x if c else y`, or, and, not, comparisons and `in`, + -, ~, * / // %, **,
 * unary - +, then postfix .attr [item] (call) and the filter/test chain `| f` `is t`. */
#include "template/jinja_internal.h"
#include "core/error.h"
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#define MAX_NESTING 200           /* expression and statement nesting, against stack exhaustion */

typedef struct parser {
    const token *t;
    int n, pos;
    jinja_arena *arena;
    ts_error *err;
    jmp_buf fail;
    int depth;
    int loops;                    /* enclosing for loops, for break/continue */
} parser;

static _Noreturn void perr(parser *P, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static _Noreturn void perr(parser *P, const char *fmt, ...) {
    char msg[400];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    ts_fail(P->err, "line %d: %s", P->t[P->pos].line, msg);
    longjmp(P->fail, 1);
}

static void *palloc(parser *P, size_t n) {
    void *p = jinja_arena_alloc(P->arena, n);
    if (!p) perr(P, "out of memory");
    return p;
}

static node *mk(parser *P, node_kind kind) {
    node *x = palloc(P, sizeof *x);
    x->kind = kind;
    x->line = P->t[P->pos].line;
    return x;
}

static const token *cur(parser *P) { return &P->t[P->pos]; }
static const token *peek(parser *P, int k) { return &P->t[P->pos + k < P->n ? P->pos + k : P->n - 1]; }
static void advance(parser *P) { if (P->pos < P->n - 1) P->pos++; }

static bool tok_is(const token *t, tok_kind kind, const char *s) {
    return t->kind == kind && (!s || (t->n == strlen(s) && memcmp(t->p, s, t->n) == 0));
}
static bool is_op(parser *P, const char *s) { return tok_is(cur(P), T_OP, s); }
static bool is_name(parser *P, const char *s) { return tok_is(cur(P), T_NAME, s); }
static bool skip_op(parser *P, const char *s) { if (is_op(P, s)) { advance(P); return true; } return false; }
static bool skip_name(parser *P, const char *s) { if (is_name(P, s)) { advance(P); return true; } return false; }

static const char *describe(const token *t, char *buf, size_t cap) {
    switch (t->kind) {
    case T_TEXT: return "template text";
    case T_VAR_BEGIN: return "'{{'";
    case T_VAR_END: return "'}}'";
    case T_BLOCK_BEGIN: return "'{%'";
    case T_BLOCK_END: return "'%}'";
    case T_STRING: return "a string";
    case T_INT: case T_FLOAT: return "a number";
    case T_EOF: return "the end of the template";
    default: snprintf(buf, cap, "'%.*s'", (int)(t->n < 40 ? t->n : 40), t->p); return buf;
    }
}

static void expect_op(parser *P, const char *s) {
    char buf[64];
    if (!skip_op(P, s)) perr(P, "expected '%s', got %s", s, describe(cur(P), buf, sizeof buf));
}

static void expect_kind(parser *P, tok_kind kind, const char *what) {
    char buf[64];
    if (cur(P)->kind != kind) perr(P, "expected %s, got %s", what, describe(cur(P), buf, sizeof buf));
    advance(P);
}

static const char *name_of(parser *P, const token *t) {
    char *s = palloc(P, t->n + 1);
    memcpy(s, t->p, t->n);
    return s;
}

static const char *expect_identifier(parser *P) {
    char buf[64];
    if (cur(P)->kind != T_NAME) perr(P, "expected a name, got %s", describe(cur(P), buf, sizeof buf));
    const char *s = name_of(P, cur(P));
    advance(P);
    return s;
}

/* growable child list */
typedef struct kids { node **v; int n, cap; } kids;
static void kids_add(parser *P, kids *k, node *x) {
    if (k->n == k->cap) {
        int cap = k->cap ? k->cap * 2 : 4;
        node **v = palloc(P, (size_t)cap * sizeof *v);
        if (k->n) memcpy(v, k->v, (size_t)k->n * sizeof *v);
        k->v = v;
        k->cap = cap;
    }
    k->v[k->n++] = x;
}
typedef struct names { const char **v; int n, cap; } names;
static void names_add(parser *P, names *k, const char *s) {
    if (k->n == k->cap) {
        int cap = k->cap ? k->cap * 2 : 4;
        const char **v = palloc(P, (size_t)cap * sizeof *v);
        if (k->n) memcpy(v, k->v, (size_t)k->n * sizeof *v);
        k->v = v;
        k->cap = cap;
    }
    k->v[k->n++] = s;
}

static void enter(parser *P) { if (++P->depth > MAX_NESTING) perr(P, "the template nests too deeply"); }
static void leave(parser *P) { P->depth--; }

/* ---- expressions ---- */

static node *parse_expression(parser *P, bool with_condexpr);
static node *parse_tuple(parser *P, bool with_condexpr, bool explicit_parens, const char *extra_end);
static node *parse_unary(parser *P, bool with_filter);
static node *parse_primary(parser *P);
static node *parse_postfix(parser *P, node *x);

static node *binary(parser *P, int op, node *a, node *b) {
    node *x = mk(P, N_BINARY);
    x->op = op;
    x->a = a;
    x->b = b;
    return x;
}

/* (args) of a call, filter or test into x: positional first, then name=value */
static void parse_call_args(parser *P, node *x) {
    kids pos = {0}, kw = {0};
    names kwn = {0};
    expect_op(P, "(");
    while (!is_op(P, ")")) {
        if (pos.n + kw.n) expect_op(P, ",");
        if (is_op(P, ")")) break;
        if (is_op(P, "*") || is_op(P, "**")) perr(P, "*args and **kwargs in calls are not supported");
        if (cur(P)->kind == T_NAME && tok_is(peek(P, 1), T_OP, "=")) {
            names_add(P, &kwn, expect_identifier(P));
            advance(P);
            kids_add(P, &kw, parse_expression(P, true));
        } else {
            if (kw.n) perr(P, "a positional argument follows keyword arguments");
            kids_add(P, &pos, parse_expression(P, true));
        }
    }
    advance(P);
    x->npos = pos.n;
    x->n = pos.n + kw.n;
    x->kids = palloc(P, (size_t)(x->n ? x->n : 1) * sizeof *x->kids);
    for (int i = 0; i < pos.n; i++) x->kids[i] = pos.v[i];
    for (int i = 0; i < kw.n; i++) x->kids[pos.n + i] = kw.v[i];
    x->names = kwn.v;
    x->nnames = kwn.n;
}

static const char *dotted_name(parser *P) {
    const char *s = expect_identifier(P);
    while (is_op(P, ".") && peek(P, 1)->kind == T_NAME) {
        advance(P);
        const char *more = expect_identifier(P);
        size_t a = strlen(s), b = strlen(more);
        char *j = palloc(P, a + b + 2);
        memcpy(j, s, a);
        j[a] = '.';
        memcpy(j + a + 1, more, b);
        s = j;
    }
    return s;
}

/* a filter "name" or "name(args)" applied to x, the '|' before it already read */
static node *filter_node(parser *P, node *x) {
    node *f = mk(P, N_FILTER);
    f->a = x;
    f->name = dotted_name(P);
    if (is_op(P, "(")) parse_call_args(P, f);
    return f;
}

static node *parse_filter(parser *P, node *x) {
    advance(P);   /* '|' */
    return filter_node(P, x);
}

static node *parse_test(parser *P, node *x) {
    advance(P);   /* 'is' */
    node *t = mk(P, N_TEST);
    t->a = x;
    t->op = skip_name(P, "not");
    t->name = dotted_name(P);
    const token *c = cur(P);
    if (is_op(P, "(")) parse_call_args(P, t);
    else if ((c->kind == T_NAME || c->kind == T_STRING || c->kind == T_INT || c->kind == T_FLOAT ||
              tok_is(c, T_OP, "(") || tok_is(c, T_OP, "[") || tok_is(c, T_OP, "{")) &&
             !tok_is(c, T_NAME, "else") && !tok_is(c, T_NAME, "or") && !tok_is(c, T_NAME, "and")) {
        if (tok_is(c, T_NAME, "is")) perr(P, "you cannot chain multiple tests with 'is'");
        node *arg = parse_postfix(P, parse_primary(P));
        t->kids = palloc(P, sizeof *t->kids);
        t->kids[0] = arg;
        t->n = t->npos = 1;
    }
    return t;
}

/* one filter of a {% filter %} tag: "name(args)" without the leading '|' of the first */
static node *parse_filter_chain_step(parser *P, node *x) {
    if (x) expect_op(P, "|");
    return filter_node(P, x);
}

static node *parse_filter_expr(parser *P, node *x) {
    while (1) {
        if (is_op(P, "|")) x = parse_filter(P, x);
        else if (is_name(P, "is")) x = parse_test(P, x);
        else if (is_op(P, "(")) {
            node *c = mk(P, N_CALL);
            c->a = x;
            parse_call_args(P, c);
            x = c;
        } else return x;
    }
}

/* inside [...]: an expression or a slice */
static node *parse_subscribed(parser *P, node *obj) {
    node *parts[3] = { NULL, NULL, NULL };
    if (!is_op(P, ":")) {
        node *e = parse_expression(P, true);
        if (!is_op(P, ":")) {
            node *x = mk(P, N_ITEM);
            x->a = obj;
            x->b = e;
            return x;
        }
        parts[0] = e;
    }
    advance(P);   /* ':' */
    if (!is_op(P, "]") && !is_op(P, ":")) parts[1] = parse_expression(P, true);
    if (skip_op(P, ":") && !is_op(P, "]")) parts[2] = parse_expression(P, true);
    node *x = mk(P, N_SLICE);
    x->a = obj;
    x->b = parts[0];
    x->c = parts[1];
    x->d = parts[2];
    return x;
}

static node *parse_postfix(parser *P, node *x) {
    char buf[64];
    while (1) {
        if (is_op(P, ".")) {
            advance(P);
            const token *t = cur(P);
            if (t->kind == T_NAME) {
                node *a = mk(P, N_ATTR);
                a->a = x;
                a->name = expect_identifier(P);
                x = a;
            } else if (t->kind == T_INT) {
                node *a = mk(P, N_ITEM);
                a->a = x;
                a->b = mk(P, N_CONST);
                a->b->value = jinja_int(t->i);
                advance(P);
                x = a;
            } else perr(P, "expected a name after '.', got %s", describe(t, buf, sizeof buf));
        } else if (is_op(P, "[")) {
            advance(P);
            x = parse_subscribed(P, x);
            if (is_op(P, ",")) perr(P, "tuple subscripts are not supported");
            expect_op(P, "]");
        } else if (is_op(P, "(")) {
            node *c = mk(P, N_CALL);
            c->a = x;
            parse_call_args(P, c);
            x = c;
        } else return x;
    }
}

static node *parse_primary(parser *P) {
    char buf[64];
    const token *t = cur(P);
    node *x;
    enter(P);
    if (t->kind == T_NAME) {
        x = mk(P, N_CONST);
        if (tok_is(t, T_NAME, "true") || tok_is(t, T_NAME, "True")) x->value = jinja_bool(true);
        else if (tok_is(t, T_NAME, "false") || tok_is(t, T_NAME, "False")) x->value = jinja_bool(false);
        else if (tok_is(t, T_NAME, "none") || tok_is(t, T_NAME, "None")) x->value = jinja_none();
        else { x->kind = N_NAME; x->name = name_of(P, t); }
        advance(P);
    } else if (t->kind == T_STRING) {
        /* adjacent literals join, as in Python */
        size_t total = 0;
        int k = 0;
        while (peek(P, k)->kind == T_STRING) total += peek(P, k++)->n;
        char *s = palloc(P, total + 1);
        size_t at = 0;
        for (int i = 0; i < k; i++) { memcpy(s + at, cur(P)->p, cur(P)->n); at += cur(P)->n; advance(P); }
        x = mk(P, N_CONST);
        x->value.type = JV_STR;
        x->value.s.p = s;
        x->value.s.n = total;
    } else if (t->kind == T_INT || t->kind == T_FLOAT) {
        x = mk(P, N_CONST);
        x->value = t->kind == T_INT ? jinja_int(t->i) : jinja_float(t->f);
        advance(P);
    } else if (tok_is(t, T_OP, "(")) {
        advance(P);
        x = parse_tuple(P, true, true, NULL);
        expect_op(P, ")");
    } else if (tok_is(t, T_OP, "[")) {
        advance(P);
        kids k = {0};
        while (!is_op(P, "]")) {
            if (k.n) expect_op(P, ",");
            if (is_op(P, "]")) break;
            kids_add(P, &k, parse_expression(P, true));
        }
        advance(P);
        x = mk(P, N_LIST);
        x->kids = k.v;
        x->n = k.n;
    } else if (tok_is(t, T_OP, "{")) {
        advance(P);
        kids k = {0};
        while (!is_op(P, "}")) {
            if (k.n) expect_op(P, ",");
            if (is_op(P, "}")) break;
            kids_add(P, &k, parse_expression(P, true));
            expect_op(P, ":");
            kids_add(P, &k, parse_expression(P, true));
        }
        advance(P);
        x = mk(P, N_DICT);
        x->kids = k.v;
        x->n = k.n;
    } else perr(P, "unexpected %s", describe(t, buf, sizeof buf));
    leave(P);
    return x;
}

static node *parse_unary(parser *P, bool with_filter) {
    node *x;
    enter(P);
    if (is_op(P, "-") || is_op(P, "+")) {
        x = mk(P, N_UNARY);
        x->op = cur(P)->p[0];
        advance(P);
        x->a = parse_unary(P, false);
    } else x = parse_primary(P);
    x = parse_postfix(P, x);
    if (with_filter) x = parse_filter_expr(P, x);
    leave(P);
    return x;
}

static node *parse_pow(parser *P) {
    node *x = parse_unary(P, true);
    while (skip_op(P, "**")) x = binary(P, OP_POW, x, parse_unary(P, true));
    return x;
}

static node *parse_math2(parser *P) {
    node *x = parse_pow(P);
    while (1) {
        int op = is_op(P, "*") ? '*' : is_op(P, "/") ? '/' : is_op(P, "//") ? OP_FLOORDIV : is_op(P, "%") ? '%' : 0;
        if (!op) return x;
        advance(P);
        x = binary(P, op, x, parse_pow(P));
    }
}

static node *parse_concat(parser *P) {
    node *x = parse_math2(P);
    while (skip_op(P, "~")) x = binary(P, '~', x, parse_math2(P));
    return x;
}

static node *parse_math1(parser *P) {
    node *x = parse_concat(P);
    while (is_op(P, "+") || is_op(P, "-")) {
        int op = cur(P)->p[0];
        advance(P);
        x = binary(P, op, x, parse_concat(P));
    }
    return x;
}

/* a < b < c chains are evaluated pairwise from the left (templates do not chain comparisons) */
static node *parse_compare(parser *P) {
    node *x = parse_math1(P);
    while (1) {
        int op = 0;
        if (is_op(P, "==")) op = OP_EQ;
        else if (is_op(P, "!=")) op = OP_NE;
        else if (is_op(P, "<")) op = '<';
        else if (is_op(P, ">")) op = '>';
        else if (is_op(P, "<=")) op = OP_LE;
        else if (is_op(P, ">=")) op = OP_GE;
        else if (is_name(P, "in")) op = OP_IN;
        else if (is_name(P, "not") && tok_is(peek(P, 1), T_NAME, "in")) { op = OP_NOTIN; advance(P); }
        if (!op) return x;
        advance(P);
        x = binary(P, op, x, parse_math1(P));
    }
}

static node *parse_not(parser *P) {
    if (skip_name(P, "not")) {
        enter(P);
        node *x = mk(P, N_UNARY);
        x->op = '!';
        x->a = parse_not(P);
        leave(P);
        return x;
    }
    return parse_compare(P);
}

/* "and" and "or": a left-associative chain of operands of the next tighter level */
static node *parse_chain(parser *P, const char *op, node_kind kind, node *(*operand)(parser *)) {
    node *x = operand(P);
    while (skip_name(P, op)) {
        node *y = mk(P, kind);
        y->a = x;
        y->b = operand(P);
        x = y;
    }
    return x;
}

static node *parse_and(parser *P) { return parse_chain(P, "and", N_AND, parse_not); }
static node *parse_or(parser *P) { return parse_chain(P, "or", N_OR, parse_and); }

static node *parse_condexpr(parser *P) {
    enter(P);
    node *x = parse_or(P);
    while (skip_name(P, "if")) {
        node *c = mk(P, N_COND);
        c->b = x;
        c->a = parse_or(P);
        c->c = skip_name(P, "else") ? parse_condexpr(P) : NULL;
        x = c;
    }
    leave(P);
    return x;
}

static node *parse_expression(parser *P, bool with_condexpr) {
    return with_condexpr ? parse_condexpr(P) : parse_or(P);
}

static bool tuple_end(parser *P, const char *extra_end) {
    const token *t = cur(P);
    return t->kind == T_VAR_END || t->kind == T_BLOCK_END || t->kind == T_EOF || tok_is(t, T_OP, ")") ||
           (extra_end && tok_is(t, T_NAME, extra_end));
}

/* an expression, or several separated by commas (a tuple) */
static node *parse_tuple(parser *P, bool with_condexpr, bool explicit_parens, const char *extra_end) {
    kids k = {0};
    bool is_tuple = false;
    enter(P);
    while (1) {
        if (k.n) expect_op(P, ",");
        if (tuple_end(P, extra_end)) break;
        kids_add(P, &k, parse_expression(P, with_condexpr));
        if (is_op(P, ",")) is_tuple = true;
        else break;
    }
    leave(P);
    if (!is_tuple) {
        if (k.n) return k.v[0];
        if (!explicit_parens) {
            char buf[64];
            perr(P, "expected an expression, got %s", describe(cur(P), buf, sizeof buf));
        }
    }
    node *x = mk(P, N_TUPLE);
    x->kids = k.v;
    x->n = k.n;
    return x;
}

/* ---- statements ---- */

static node *parse_body(parser *P, const char *const *ends);

/* the names an assignment or loop binds: a, or a, b, or (a, b) */
static void parse_targets(parser *P, names *out) {
    bool paren = skip_op(P, "(");
    while (1) {
        names_add(P, out, expect_identifier(P));
        if (!skip_op(P, ",")) break;
        if (paren && is_op(P, ")")) break;
    }
    if (paren) expect_op(P, ")");
}

static void end_tag(parser *P) { expect_kind(P, T_BLOCK_END, "'%}'"); }

/* at "{% name": checks the name and moves past it and the tag end */
static void close_with(parser *P, const char *name) {
    char buf[64];
    if (!skip_name(P, name)) perr(P, "expected '%s', got %s", name, describe(cur(P), buf, sizeof buf));
    end_tag(P);
}

static node *parse_if(parser *P) {
    static const char *const ends[] = { "elif", "else", "endif", NULL };
    node *x = mk(P, S_IF);
    x->a = parse_tuple(P, false, false, NULL);   /* Jinja: no `a if b else c` as an if's test */
    end_tag(P);
    x->b = parse_body(P, ends);
    if (skip_name(P, "elif")) x->c = parse_if(P);
    else if (skip_name(P, "else")) {
        static const char *const endif[] = { "endif", NULL };
        end_tag(P);
        x->c = parse_body(P, endif);
        close_with(P, "endif");
    } else close_with(P, "endif");
    return x;
}

static node *parse_for(parser *P) {
    static const char *const ends[] = { "else", "endfor", NULL };
    static const char *const endfor[] = { "endfor", NULL };
    node *x = mk(P, S_FOR);
    names t = {0};
    parse_targets(P, &t);
    x->names = t.v;
    x->nnames = t.n;
    if (!skip_name(P, "in")) perr(P, "expected 'in' in a for loop");
    x->a = parse_tuple(P, false, false, "recursive");
    if (skip_name(P, "if")) x->c = parse_expression(P, true);
    if (is_name(P, "recursive")) perr(P, "recursive loops are not supported");
    end_tag(P);
    P->loops++;
    x->b = parse_body(P, ends);
    P->loops--;
    if (skip_name(P, "else")) {
        end_tag(P);
        x->d = parse_body(P, endfor);
    }
    close_with(P, "endfor");
    return x;
}

static node *parse_set(parser *P) {
    static const char *const ends[] = { "endset", NULL };
    node *x = mk(P, S_SET);
    if (cur(P)->kind == T_NAME && tok_is(peek(P, 1), T_OP, ".") && peek(P, 2)->kind == T_NAME) {
        x->kind = S_SET_ATTR;
        x->name = expect_identifier(P);
        advance(P);
        x->names = palloc(P, sizeof *x->names);
        x->names[0] = expect_identifier(P);
        x->nnames = 1;
        expect_op(P, "=");
        x->a = parse_tuple(P, true, false, NULL);
        end_tag(P);
        return x;
    }
    names t = {0};
    parse_targets(P, &t);
    x->names = t.v;
    x->nnames = t.n;
    if (skip_op(P, "=")) {
        x->a = parse_tuple(P, true, false, NULL);
        end_tag(P);
        return x;
    }
    if (t.n != 1) perr(P, "a block set assigns one name");
    x->kind = S_SET_BLOCK;
    x->name = t.v[0];
    node *chain = NULL;
    while (is_op(P, "|")) chain = parse_filter(P, chain);
    x->a = chain;
    end_tag(P);
    x->b = parse_body(P, ends);
    close_with(P, "endset");
    return x;
}

/* "(a, b=default, ...)" of a macro or call block into x->names / x->kids */
static void parse_params(parser *P, node *x) {
    names params = {0};
    kids defaults = {0};
    expect_op(P, "(");
    while (!is_op(P, ")")) {
        if (params.n) expect_op(P, ",");
        if (is_op(P, ")")) break;
        names_add(P, &params, expect_identifier(P));
        node *def = NULL;
        if (skip_op(P, "=")) def = parse_expression(P, true);
        else if (defaults.n && defaults.v[defaults.n - 1]) perr(P, "a macro parameter without a default follows one with a default");
        kids_add(P, &defaults, def);
    }
    advance(P);
    x->names = params.v;
    x->nnames = params.n;
    x->kids = defaults.v;
    x->n = defaults.n;
}

/* a macro's body: loop controls inside do not reach loops around the definition */
static node *parse_macro_body(parser *P, const char *end) {
    const char *const ends[] = { end, NULL };
    int loops = P->loops;
    P->loops = 0;
    node *body = parse_body(P, ends);
    P->loops = loops;
    close_with(P, end);
    return body;
}

static node *parse_macro(parser *P) {
    node *x = mk(P, S_MACRO);
    x->name = expect_identifier(P);
    parse_params(P, x);
    end_tag(P);
    x->b = parse_macro_body(P, "endmacro");
    return x;
}

/* {% call(params) m(args) %}body{% endcall %}: m called with `caller`, a macro of the body */
static node *parse_call_block(parser *P) {
    node *x = mk(P, S_CALL_BLOCK);
    node *caller = mk(P, S_MACRO);
    caller->name = "caller";
    if (is_op(P, "(")) parse_params(P, caller);
    x->a = parse_expression(P, true);
    if (x->a->kind != N_CALL) perr(P, "a call block needs a call, as in {%% call m() %%}");
    end_tag(P);
    caller->b = parse_macro_body(P, "endcall");
    x->b = caller;
    return x;
}

static node *parse_statement(parser *P) {
    char buf[64];
    const token *t = cur(P);
    if (t->kind != T_NAME) perr(P, "expected a statement name, got %s", describe(t, buf, sizeof buf));
    const char *name = name_of(P, t);
    advance(P);
    enter(P);
    node *x;
    if (!strcmp(name, "if")) x = parse_if(P);
    else if (!strcmp(name, "for")) x = parse_for(P);
    else if (!strcmp(name, "set")) x = parse_set(P);
    else if (!strcmp(name, "macro")) x = parse_macro(P);
    else if (!strcmp(name, "call")) x = parse_call_block(P);
    else if (!strcmp(name, "break") || !strcmp(name, "continue")) {
        if (!P->loops) perr(P, "'%s' outside a for loop", name);
        x = mk(P, name[0] == 'b' ? S_BREAK : S_CONTINUE);
        end_tag(P);
    } else if (!strcmp(name, "filter")) {
        /* {% filter f | g %}...{% endfilter %}: the body's text through the filters */
        static const char *const ends[] = { "endfilter", NULL };
        x = mk(P, S_FILTER_BLOCK);
        node *chain = NULL;
        do chain = parse_filter_chain_step(P, chain); while (is_op(P, "|"));
        x->a = chain;
        end_tag(P);
        x->b = parse_body(P, ends);
        close_with(P, "endfilter");
    } else if (!strcmp(name, "generation")) {
        static const char *const ends[] = { "endgeneration", NULL };
        end_tag(P);
        x = mk(P, S_SCOPE);
        x->b = parse_body(P, ends);
        close_with(P, "endgeneration");
    } else if (!strcmp(name, "include") || !strcmp(name, "import") || !strcmp(name, "from") ||
               !strcmp(name, "extends") || !strcmp(name, "block")) {
        perr(P, "'%s' is not supported: a chat template cannot load other templates", name);
    } else perr(P, "unknown statement '%s'", name);
    leave(P);
    return x;
}

static bool in_list(const token *t, const char *const *ends) {
    for (int i = 0; ends && ends[i]; i++) if (tok_is(t, T_NAME, ends[i])) return true;
    return false;
}

/* statements up to "{% end" for one of ends (left at that name), or to the end of the template */
static node *parse_body(parser *P, const char *const *ends) {
    kids k = {0};
    node *body = mk(P, S_BODY);
    enter(P);
    while (1) {
        const token *t = cur(P);
        if (t->kind == T_EOF) {
            if (ends) {
                int last = 0;
                while (ends[last + 1]) last++;
                perr(P, "unexpected end of template: expected '%s'", ends[last]);
            }
            break;
        }
        if (t->kind == T_TEXT) {
            node *x = mk(P, S_TEXT);
            x->value.type = JV_STR;
            x->value.s.p = t->p;
            x->value.s.n = t->n;
            kids_add(P, &k, x);
            advance(P);
        } else if (t->kind == T_VAR_BEGIN) {
            advance(P);
            node *x = mk(P, S_OUTPUT);
            x->a = parse_tuple(P, true, false, NULL);
            expect_kind(P, T_VAR_END, "'}}'");
            kids_add(P, &k, x);
        } else if (t->kind == T_BLOCK_BEGIN) {
            if (in_list(peek(P, 1), ends)) { advance(P); break; }
            const token *nt = peek(P, 1);
            if (nt->kind == T_NAME && ((nt->n > 3 && memcmp(nt->p, "end", 3) == 0) || tok_is(nt, T_NAME, "elif") ||
                                       tok_is(nt, T_NAME, "else"))) {
                advance(P);
                perr(P, "unexpected '%.*s'", (int)(nt->n < 40 ? nt->n : 40), nt->p);
            }
            advance(P);
            kids_add(P, &k, parse_statement(P));
        } else {
            char buf[64];
            perr(P, "unexpected %s", describe(t, buf, sizeof buf));
        }
    }
    leave(P);
    body->kids = k.v;
    body->n = k.n;
    return body;
}

int jinja_build(const token *toks, int n, jinja_arena *a, node **root, ts_error *err) {
    parser P = { .t = toks, .n = n, .arena = a, .err = err };
    if (setjmp(P.fail)) return -1;
    *root = parse_body(&P, NULL);
    return 0;
}
