/* Running a parsed template: statements, expressions, scopes and macro calls, with Jinja2's
 * scoping (a for loop's body and a macro call get scopes of their own, so `set` inside them does
 * not leak out; `if` does not), its default Undefined (printing or testing a missing value is
 * fine, using it any further fails), and the render's limits. */
#include "template/jinja_internal.h"
#include "core/error.h"
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { FLOW_NEXT, FLOW_BREAK, FLOW_CONTINUE };

/* ---- scopes ---- */

struct jscope {
    jscope *parent;
    const char **names;
    jv *vals;
    int n, cap;
    uint64_t born;                /* epoch (jinja_note_store) */
};

static jscope *scope_new(jinja_run *r, jscope *parent) {
    jscope *s = jinja_alloc(r, sizeof *s);
    s->parent = parent;
    s->born = r->epoch;
    return s;
}

static bool scope_lookup(const jscope *s, const char *name, jv *out) {
    for (; s; s = s->parent)
        for (int i = s->n - 1; i >= 0; i--)
            if (strcmp(s->names[i], name) == 0) { *out = s->vals[i]; return true; }
    return false;
}

/* room for cap names */
static void scope_reserve(jinja_run *r, jscope *s, int cap) {
    if (s->cap >= cap) return;
    jinja_note_grow(r, s->born);
    const char **names = jinja_alloc(r, (size_t)cap * sizeof *names);
    jv *vals = jinja_alloc(r, (size_t)cap * sizeof *vals);
    if (s->n) { memcpy(names, s->names, (size_t)s->n * sizeof *names); memcpy(vals, s->vals, (size_t)s->n * sizeof *vals); }
    s->names = names;
    s->vals = vals;
    s->cap = cap;
}

static void scope_set(jinja_run *r, jscope *s, const char *name, jv v) {
    for (int i = 0; i < s->n; i++)
        if (strcmp(s->names[i], name) == 0) { jinja_note_store(r, s->born, v); s->vals[i] = v; return; }
    jinja_note_store(r, s->born, v);   /* names are the template's, or C literals */
    if (s->n == s->cap) scope_reserve(r, s, s->cap ? s->cap * 2 : 8);
    s->names[s->n] = name;
    s->vals[s->n++] = v;
}

/* ---- regions ----
 *
 * Each statement of a body and each iteration of a loop runs in a region: what it allocates is
 * freed when it ends (the list range() made for an inner loop, concatenations, filter results,
 * a macro call's scope and arguments), unless an object older than the region took a reference to
 * something while it ran (set into an enclosing scope, a namespace attribute): the write barrier,
 * jinja_note_store, records that, and the region's memory then stays with the enclosing one.
 * Output goes to malloc'd buffers outside the arena (jbuf.heap), so printing escapes nothing. A
 * failed render unwinds without ending its regions: the whole arena is freed then. */

typedef struct region { jinja_mark m; uint64_t mark, low; } region;

static void region_enter(jinja_run *r, region *g) {
    g->m = jinja_arena_mark(&r->arena);
    g->mark = r->reg_mark;
    g->low = r->reg_low;
    r->reg_mark = ++r->epoch;
    r->reg_low = UINT64_MAX;
}

/* true when the region's memory was freed */
static bool region_exit(jinja_run *r, region *g) {
    bool free = r->reg_low >= r->reg_mark;
    if (free) jinja_arena_release(&r->arena, g->m);
    /* a reference the region's objects gave to older ones, the enclosing region gave too */
    r->reg_mark = g->mark;
    if (g->low < r->reg_low) r->reg_low = g->low;
    return free;
}

/* ---- helpers ---- */

/* 'name' quoted for messages, shortened */
#define QS(p, n) (int)((n) < 60 ? (n) : 60), (p)

/* ---- slicing ---- */

static int64_t slice_bound(jinja_run *r, jv v, int64_t def, int64_t len, bool negative_step) {
    if (v.type == JV_NONE) return def;
    if (v.type != JV_INT && v.type != JV_BOOL) jinja_fail(r, "slice indices must be integers or None");
    int64_t i = v.type == JV_BOOL ? v.b : v.i;
    if (i < 0) {
        i += len;
        if (i < 0) i = negative_step ? -1 : 0;
    } else if (i >= len) i = negative_step ? len - 1 : len;
    return i;
}

static jv slice(jinja_run *r, jv obj, jv vstart, jv vstop, jv vstep) {
    if (obj.type == JV_UNDEFINED) jinja_fail_undefined(r, obj);
    /* Jinja slices with a plain Python subscript (not its forgiving getitem): errors are errors */
    if (obj.type == JV_DICT) jinja_fail(r, "unhashable type: 'slice'");
    if ((obj.type != JV_LIST && obj.type != JV_STR) || (obj.type == JV_LIST && obj.list->iterator))
        jinja_fail(r, "'%s' object is not subscriptable", jinja_type_name(obj));
    jv bounds[3] = { vstart, vstop, vstep };
    for (int k = 0; k < 3; k++)
        if (bounds[k].type != JV_NONE && bounds[k].type != JV_INT && bounds[k].type != JV_BOOL)
            jinja_fail(r, "slice indices must be integers or None or have an __index__ method");
    int64_t step = 1;
    if (vstep.type != JV_NONE) {
        if (vstep.type != JV_INT && vstep.type != JV_BOOL) jinja_fail(r, "slice indices must be integers or None");
        step = vstep.type == JV_BOOL ? vstep.b : vstep.i;
        if (step == 0) jinja_fail(r, "slice step cannot be zero");
        if (step == INT64_MIN) step = -INT64_MAX;
    }
    /* strings slice by code point: offsets[i] is where code point i starts */
    size_t *offsets = NULL;
    int64_t len;
    if (obj.type == JV_LIST) len = (int64_t)obj.list->n;
    else {
        len = (int64_t)jinja_str_length(obj.s.p, obj.s.n);
        offsets = jinja_alloc(r, ((size_t)len + 1) * sizeof *offsets);
        size_t k = 0;
        for (size_t i = 0; i < obj.s.n; i++) if (((unsigned char)obj.s.p[i] & 0xc0) != 0x80) offsets[k++] = i;
        offsets[k] = obj.s.n;
    }
    bool neg = step < 0;
    int64_t start = slice_bound(r, vstart, neg ? len - 1 : 0, len, neg);
    int64_t stop = slice_bound(r, vstop, neg ? -1 : len, len, neg);
    int64_t count = 0;
    if (!neg && stop > start) count = (stop - start - 1) / step + 1;
    if (neg && start > stop) count = (start - stop - 1) / (-step) + 1;
    jinja_charge(r, (uint64_t)count / 16);
    if (obj.type == JV_LIST) {
        jv out = jinja_list_new(r, (size_t)count, obj.list->tuple);
        for (int64_t k = 0, i = start; k < count; k++, i += step) jinja_list_push(r, out.list, obj.list->items[i]);
        return out;
    }
    jbuf b = {0};
    if (step == 1 && count > 0) jinja_buf_put(r, &b, obj.s.p + offsets[start], offsets[start + count] - offsets[start]);
    else
        for (int64_t k = 0, i = start; k < count; k++, i += step)
            jinja_buf_put(r, &b, obj.s.p + offsets[i], offsets[i + 1] - offsets[i]);
    return jinja_buf_value(&b);
}

/* ---- operators ---- */

static bool is_num(jv v) { return v.type == JV_INT || v.type == JV_FLOAT || v.type == JV_BOOL; }
static int64_t ival(jv v) { return v.type == JV_BOOL ? v.b : v.i; }
static double fval(jv v) { return v.type == JV_FLOAT ? v.f : (double)ival(v); }

static const char *op_name(int op) {
    switch (op) {
    case OP_FLOORDIV: return "//";
    case OP_POW: return "**";
    case '+': return "+"; case '-': return "-"; case '*': return "*"; case '/': return "/"; case '%': return "%";
    default: return "?";
    }
}

static _Noreturn void fail_operands(jinja_run *r, int op, jv a, jv b) {
    if (a.type == JV_UNDEFINED) jinja_fail_undefined(r, a);
    if (b.type == JV_UNDEFINED) jinja_fail_undefined(r, b);
    jinja_fail(r, "unsupported operand type(s) for %s: '%s' and '%s'", op_name(op), jinja_type_name(a), jinja_type_name(b));
}

static jv repeat(jinja_run *r, jv seq, int64_t times) {
    if (times < 0) times = 0;
    if (seq.type == JV_STR) {
        if (seq.s.n && (uint64_t)times > r->lim.max_output / seq.s.n) jinja_fail_output(r, false);
        jbuf b = {0};
        jinja_charge(r, (uint64_t)times * seq.s.n / 256);
        for (int64_t i = 0; i < times; i++) jinja_buf_put(r, &b, seq.s.p, seq.s.n);
        return b.p ? jinja_buf_value(&b) : jinja_str_static("");
    }
    if (seq.list->n && (uint64_t)times > (r->lim.max_memory / sizeof(jv)) / seq.list->n) jinja_fail_memory(r);
    jv out = jinja_list_new(r, (size_t)times * seq.list->n, seq.list->tuple);
    jinja_charge(r, (uint64_t)times * seq.list->n / 16);
    for (int64_t i = 0; i < times; i++)
        for (size_t k = 0; k < seq.list->n; k++) jinja_list_push(r, out.list, seq.list->items[k]);
    return out;
}

static jv arith(jinja_run *r, int op, jv a, jv b) {
    if (is_num(a) && is_num(b)) {
        bool ints = a.type != JV_FLOAT && b.type != JV_FLOAT;
        int64_t x = ival(a), y = ival(b), z;
        double fx = fval(a), fy = fval(b);
        switch (op) {
        case '+':
            if (!ints) return jinja_float(fx + fy);
            if (__builtin_add_overflow(x, y, &z)) jinja_fail(r, "integer overflow");
            return jinja_int(z);
        case '-':
            if (!ints) return jinja_float(fx - fy);
            if (__builtin_sub_overflow(x, y, &z)) jinja_fail(r, "integer overflow");
            return jinja_int(z);
        case '*':
            if (!ints) return jinja_float(fx * fy);
            if (__builtin_mul_overflow(x, y, &z)) jinja_fail(r, "integer overflow");
            return jinja_int(z);
        case '/':
            if (fy == 0.0) jinja_fail(r, "division by zero");
            return jinja_float(fx / fy);
        case OP_FLOORDIV:
        case '%':
            if (ints) {
                if (y == 0) jinja_fail(r, "integer division or modulo by zero");
                if (x == INT64_MIN && y == -1) jinja_fail(r, "integer overflow");
                int64_t q = x / y, m = x % y;
                if (m != 0 && ((m < 0) != (y < 0))) { q--; m += y; }
                return jinja_int(op == '%' ? m : q);
            } else {
                if (fy == 0.0) jinja_fail(r, "float division by zero");
                /* Python's float divmod */
                double m = fmod(fx, fy), d = (fx - m) / fy;
                if (m != 0 && ((m < 0) != (fy < 0))) { m += fy; d -= 1.0; }
                double fd = floor(d);
                if (d - fd > 0.5) fd += 1.0;
                return jinja_float(op == '%' ? m : fd);
            }
        case OP_POW:
            if (ints && y >= 0) {
                int64_t acc = 1, base = x;
                for (int64_t e = y; e > 0; e >>= 1) {
                    if ((e & 1) && __builtin_mul_overflow(acc, base, &acc)) jinja_fail(r, "integer overflow");
                    if (e > 1 && __builtin_mul_overflow(base, base, &base)) jinja_fail(r, "integer overflow");
                }
                return jinja_int(acc);
            }
            return jinja_float(pow(fx, fy));
        }
    }
    if (op == '+' && a.type == JV_STR && b.type == JV_STR) return jinja_concat(r, a, b.s.p, b.s.n);
    if (op == '+' && a.type == JV_LIST && b.type == JV_LIST && a.list->tuple == b.list->tuple && !a.list->iterator &&
        !b.list->iterator) {
        jv out = jinja_list_new(r, a.list->n + b.list->n, a.list->tuple);
        jinja_charge(r, (a.list->n + b.list->n) / 16);
        for (size_t i = 0; i < a.list->n; i++) jinja_list_push(r, out.list, a.list->items[i]);
        for (size_t i = 0; i < b.list->n; i++) jinja_list_push(r, out.list, b.list->items[i]);
        return out;
    }
    bool seq_a = a.type == JV_STR || (a.type == JV_LIST && !a.list->iterator);
    bool seq_b = b.type == JV_STR || (b.type == JV_LIST && !b.list->iterator);
    if (op == '*' && seq_a && (b.type == JV_INT || b.type == JV_BOOL)) return repeat(r, a, ival(b));
    if (op == '*' && seq_b && (a.type == JV_INT || a.type == JV_BOOL)) return repeat(r, b, ival(a));
    if (op == '%' && a.type == JV_STR) jinja_fail(r, "printf-style string formatting with %% is not supported");
    fail_operands(r, op, a, b);
}

static bool contains(jinja_run *r, jv container, jv item) {
    switch (container.type) {
    case JV_STR:
        if (item.type != JV_STR) jinja_fail(r, "'in <string>' requires string as left operand, not %s", jinja_type_name(item));
        if (item.s.n == 0) return true;
        jinja_charge(r, container.s.n / 4096);
        return memmem(container.s.p, container.s.n, item.s.p, item.s.n) != NULL;
    case JV_LIST:
        jinja_charge(r, container.list->n / 16);
        for (size_t i = 0; i < container.list->n; i++) if (jinja_equal(container.list->items[i], item)) return true;
        return false;
    case JV_DICT:
        jinja_charge(r, container.dict->n / 16);
        return jinja_dict_get(container.dict, item, NULL);
    case JV_UNDEFINED: return false;
    default:
        jinja_fail(r, "argument of type '%s' is not iterable", jinja_type_name(container));
    }
}

/* comparing two lists or dicts walks them: steps for their length */
static void charge_walk(jinja_run *r, jv a, jv b) {
    if (a.type == JV_LIST && b.type == JV_LIST) jinja_charge(r, a.list->n < b.list->n ? a.list->n : b.list->n);
    else if (a.type == JV_DICT && b.type == JV_DICT) jinja_charge(r, a.dict->n < b.dict->n ? a.dict->n : b.dict->n);
}

static jv binary_op(jinja_run *r, int op, jv a, jv b) {
    if (op == OP_EQ || op == OP_NE || op == '<' || op == '>' || op == OP_LE || op == OP_GE) charge_walk(r, a, b);
    switch (op) {
    case '~': {
        jv sa = jinja_to_str(r, a), sb = jinja_to_str(r, b);
        return jinja_concat(r, sa, sb.s.p, sb.s.n);
    }
    case OP_EQ: return jinja_bool(jinja_equal(a, b));
    case OP_NE: return jinja_bool(!jinja_equal(a, b));
    case '<': return jinja_bool(jinja_compare(r, a, b) < 0);
    case '>': return jinja_bool(jinja_compare(r, a, b) > 0);
    case OP_LE: return jinja_bool(jinja_compare(r, a, b) <= 0);
    case OP_GE: return jinja_bool(jinja_compare(r, a, b) >= 0);
    case OP_IN: return jinja_bool(contains(r, b, a));
    case OP_NOTIN: return jinja_bool(!contains(r, b, a));
    default: return arith(r, op, a, b);
    }
}

/* ---- evaluation ---- */

static jv eval(jinja_run *r, const node *x, jscope *sc);
static int exec(jinja_run *r, const node *x, jscope *sc);

static jargs eval_args(jinja_run *r, const node *x, jscope *sc) {
    jargs a = { .npos = x->npos, .nkw = x->n - x->npos, .kw = x->names };
    jv *vals = x->n ? jinja_alloc(r, (size_t)x->n * sizeof *vals) : NULL;
    for (int i = 0; i < x->n; i++) vals[i] = eval(r, x->kids[i], sc);
    a.pos = vals;
    a.kwv = vals ? vals + x->npos : NULL;
    return a;
}

static jv apply_filter_node(jinja_run *r, const node *x, jscope *sc, jv input) {
    jargs a = eval_args(r, x, sc);
    r->line = x->line;
    return jinja_apply_filter(r, x->name, input, &a);
}

/* a filter chain of a block set, applied to the block's text: innermost filter first */
static jv apply_chain(jinja_run *r, const node *x, jscope *sc, jv input) {
    if (!x) return input;
    return apply_filter_node(r, x, sc, apply_chain(r, x->a, sc, input));
}

/* {% set name | filters %}...{% endset %} and {% filter ... %}...{% endfilter %}: the body x->b
 * rendered in a scope of its own into a buffer, then the chain x->a applied to that text */
static jv filtered_block(jinja_run *r, const node *x, jscope *sc) {
    jbuf out = { .heap = true }, *saved = r->out;
    r->out = &out;
    exec(r, x->b, scope_new(r, sc));
    r->out = saved;
    return apply_chain(r, x->a, sc, jinja_buf_take(r, &out));
}

static jv call_macro(jinja_run *r, const jmacro *m, const jargs *a) {
    const node *def = m->def;
    if (r->depth >= r->lim.max_depth)
        jinja_fail(r, "macro calls nest deeper than %d (the cap on call depth)", r->lim.max_depth);
    r->depth++;
    jscope *sc = scope_new(r, m->closure);
    int np = def->nnames;
    bool *bound = np ? jinja_alloc(r, (size_t)np * sizeof *bound) : NULL;
    jv varargs = jinja_list_new(r, 0, true), kwargs = jinja_dict_new(r, 0);
    for (int i = 0; i < a->npos; i++) {
        if (i < np) { scope_set(r, sc, def->names[i], a->pos[i]); bound[i] = true; }
        else jinja_list_push(r, varargs.list, a->pos[i]);
    }
    for (int k = 0; k < a->nkw; k++) {
        int i;
        for (i = 0; i < np; i++) if (strcmp(def->names[i], a->kw[k]) == 0) break;
        if (i == np && strcmp(a->kw[k], "caller") == 0) { scope_set(r, sc, "caller", a->kwv[k]); continue; }
        if (i == np) { jinja_dict_set(r, kwargs.dict, jinja_str_from_c(r, a->kw[k]), a->kwv[k]); continue; }
        if (bound[i]) jinja_fail(r, "macro '%s' got multiple values for argument '%s'", def->name, a->kw[k]);
        scope_set(r, sc, def->names[i], a->kwv[k]);
        bound[i] = true;
    }
    for (int i = 0; i < np; i++) {
        if (bound[i]) continue;
        jv v = def->kids[i] ? eval(r, def->kids[i], sc)
                            : jinja_undefined(jinja_hint(r, "parameter '%s' was not provided", def->names[i]));
        scope_set(r, sc, def->names[i], v);
    }
    scope_set(r, sc, "varargs", varargs);
    scope_set(r, sc, "kwargs", kwargs);
    jbuf out = { .heap = true }, *saved = r->out;
    r->out = &out;
    exec(r, def->b, sc);
    r->out = saved;
    r->depth--;
    return jinja_buf_take(r, &out);
}

jv jinja_call(jinja_run *r, jv fn, const jargs *a) {
    switch (fn.type) {
    case JV_MACRO: return call_macro(r, fn.macro, a);
    case JV_FUNC: return fn.func->fn(r, fn.func->self, a);
    case JV_UNDEFINED: jinja_fail_undefined(r, fn);
    default: jinja_fail(r, "'%s' object is not callable", jinja_type_name(fn));
    }
}

static jv eval_node(jinja_run *r, const node *x, jscope *sc) {
    r->line = x->line;
    jinja_charge(r, 1);
    jv v, a, b;
    switch (x->kind) {
    case N_CONST: return x->value;
    case N_NAME:
        if (scope_lookup(sc, x->name, &v)) return v;
        if (jinja_global(r, x->name, &v)) return v;
        return jinja_undefined(jinja_hint(r, "'%s' is undefined", x->name));
    case N_LIST:
    case N_TUPLE:
        v = jinja_list_new(r, (size_t)x->n, x->kind == N_TUPLE);
        for (int i = 0; i < x->n; i++) jinja_list_push(r, v.list, eval(r, x->kids[i], sc));
        return v;
    case N_DICT:
        v = jinja_dict_new(r, (size_t)x->n / 2);
        for (int i = 0; i + 1 < x->n; i += 2) {
            jv key = eval(r, x->kids[i], sc);
            if (key.type == JV_LIST && !key.list->tuple) jinja_fail(r, "unhashable type: 'list'");
            if (key.type == JV_DICT) jinja_fail(r, "unhashable type: 'dict'");
            jinja_dict_set(r, v.dict, key, eval(r, x->kids[i + 1], sc));
        }
        return v;
    case N_ATTR:
        a = eval(r, x->a, sc);
        r->line = x->line;
        return jinja_getattr(r, a, x->name);
    case N_ITEM:
        a = eval(r, x->a, sc);
        b = eval(r, x->b, sc);
        r->line = x->line;
        return jinja_getitem(r, a, b);
    case N_SLICE: {
        a = eval(r, x->a, sc);
        jv start = x->b ? eval(r, x->b, sc) : jinja_none(), stop = x->c ? eval(r, x->c, sc) : jinja_none();
        jv step = x->d ? eval(r, x->d, sc) : jinja_none();
        r->line = x->line;
        return slice(r, a, start, stop, step);
    }
    case N_CALL: {
        jv fn = eval(r, x->a, sc);
        jargs args = eval_args(r, x, sc);
        r->line = x->line;
        return jinja_call(r, fn, &args);
    }
    case N_FILTER:
        return apply_filter_node(r, x, sc, eval(r, x->a, sc));
    case N_TEST: {
        a = eval(r, x->a, sc);
        jargs args = eval_args(r, x, sc);
        r->line = x->line;
        bool t = jinja_apply_test(r, x->name, a, &args);
        return jinja_bool(x->op ? !t : t);
    }
    case N_UNARY:
        a = eval(r, x->a, sc);
        if (x->op == '!') return jinja_bool(!jinja_truthy(a));
        if (a.type == JV_UNDEFINED) jinja_fail_undefined(r, a);
        if (a.type == JV_FLOAT) return jinja_float(x->op == '-' ? -a.f : a.f);
        if (a.type == JV_INT || a.type == JV_BOOL) {
            int64_t i = ival(a);
            if (x->op == '-' && i == INT64_MIN) jinja_fail(r, "integer overflow");
            return jinja_int(x->op == '-' ? -i : i);
        }
        jinja_fail(r, "bad operand type for unary %c: '%s'", x->op, jinja_type_name(a));
    case N_BINARY:
        a = eval(r, x->a, sc);
        b = eval(r, x->b, sc);
        r->line = x->line;
        return binary_op(r, x->op, a, b);
    case N_AND:
        a = eval(r, x->a, sc);
        return jinja_truthy(a) ? eval(r, x->b, sc) : a;
    case N_OR:
        a = eval(r, x->a, sc);
        return jinja_truthy(a) ? a : eval(r, x->b, sc);
    case N_COND:
        if (jinja_truthy(eval(r, x->a, sc))) return eval(r, x->b, sc);
        return x->c ? eval(r, x->c, sc) : jinja_undefined("the inline if-expression evaluated to false and no else section was defined");
    default:
        jinja_fail(r, "internal error: a statement where an expression belongs");
    }
}

/* binds for-loop or set targets: one name takes the value, several unpack it */
static void bind_targets(jinja_run *r, jscope *sc, const char *const *names, int n, jv v) {
    if (n == 1) { scope_set(r, sc, names[0], v); return; }
    jlist *items = jinja_iterate(r, v);
    if ((int)items->n != n)
        jinja_fail(r, (int)items->n > n ? "too many values to unpack (expected %d)" : "not enough values to unpack (expected %d)", n);
    for (int i = 0; i < n; i++) scope_set(r, sc, names[i], items->items[i]);
}

static int exec_for(jinja_run *r, const node *x, jscope *sc) {
    jlist *items = jinja_iterate(r, eval(r, x->a, sc));
    if (x->c) {
        jv kept = jinja_list_new(r, items->n, false);
        for (size_t i = 0; i < items->n; i++) {
            region g;
            region_enter(r, &g);
            r->line = x->line;
            jinja_charge(r, 1);
            jscope *it = scope_new(r, sc);
            bind_targets(r, it, x->names, x->nnames, items->items[i]);
            bool keep = jinja_truthy(eval(r, x->c, it));
            region_exit(r, &g);
            /* kept has room for every item, and the items are older than kept */
            if (keep) kept.list->items[kept.list->n++] = items->items[i];
        }
        items = kept.list;
    }
    if (items->n == 0) return x->d ? exec(r, x->d, sc) : FLOW_NEXT;
    jloop *lp = jinja_alloc(r, sizeof *lp);
    lp->items = items;
    lp->depth = 1;
    jv loop = { .type = JV_LOOP };
    loop.loop = lp;
    /* Every iteration starts from the same scope, emptied (a macro defined in a loop body sees the
       latest iteration's names, as in Jinja2). While the iterations' regions are freed it counts
       as born in each iteration's region (what the body sets in it goes when the iteration ends),
       and it has room made before the loop for a few names, so that an iteration need not
       allocate; room it grows in an iteration goes back to what it was. Once an iteration's
       memory is kept (something older took a reference to it, maybe to a macro whose closure is
       this scope), the scope counts as born before the loop again, so every later iteration
       setting a name in it is kept too. */
    jscope *it = scope_new(r, sc);
    scope_reserve(r, it, 8);
    uint64_t born = it->born;
    bool pinned = false;
    for (size_t i = 0; i < items->n; i++) {
        region g;
        region_enter(r, &g);
        if (!pinned) it->born = r->reg_mark;
        it->n = 0;
        const char **names = it->names;
        jv *vals = it->vals;
        int cap = it->cap;
        r->line = x->line;
        jinja_charge(r, 1);
        bind_targets(r, it, x->names, x->nnames, items->items[i]);
        lp->index0 = i;
        scope_set(r, it, "loop", loop);
        int flow = exec(r, x->b, it);
        if (region_exit(r, &g)) {
            if (!pinned) {
                it->n = 0;   /* its values were freed */
                it->names = names;
                it->vals = vals;
                it->cap = cap;
            }
        } else {
            pinned = true;
            it->born = born;
        }
        if (flow == FLOW_BREAK) break;
    }
    return FLOW_NEXT;
}

static int exec_node(jinja_run *r, const node *x, jscope *sc) {
    r->line = x->line;
    jinja_charge(r, 1);
    switch (x->kind) {
    case S_BODY:
        for (int i = 0; i < x->n; i++) {
            if (x->kids[i]->kind == S_TEXT) { exec(r, x->kids[i], sc); continue; }   /* allocates nothing */
            region g;
            region_enter(r, &g);
            int flow = exec(r, x->kids[i], sc);
            region_exit(r, &g);
            if (flow != FLOW_NEXT) return flow;
        }
        return FLOW_NEXT;
    case S_TEXT:
        jinja_buf_put(r, r->out, x->value.s.p, x->value.s.n);
        return FLOW_NEXT;
    case S_OUTPUT: {
        jv v = eval(r, x->a, sc);
        r->line = x->line;
        jinja_write_str(r, r->out, v);
        return FLOW_NEXT;
    }
    case S_IF:
        if (jinja_truthy(eval(r, x->a, sc))) return exec(r, x->b, sc);
        return x->c ? exec(r, x->c, sc) : FLOW_NEXT;
    case S_FOR:
        return exec_for(r, x, sc);
    case S_SET:
        bind_targets(r, sc, x->names, x->nnames, eval(r, x->a, sc));
        return FLOW_NEXT;
    case S_SET_ATTR: {
        jv ns;
        if (!scope_lookup(sc, x->name, &ns) || ns.type != JV_NAMESPACE)
            jinja_fail(r, "cannot assign attribute on non-namespace object");
        jv v = eval(r, x->a, sc);
        jinja_dict_set(r, ns.dict, jinja_str_from_c(r, x->names[0]), v);
        return FLOW_NEXT;
    }
    case S_SET_BLOCK:
        scope_set(r, sc, x->name, filtered_block(r, x, sc));
        return FLOW_NEXT;
    case S_MACRO: {
        jmacro *m = jinja_alloc(r, sizeof *m);
        m->def = x;
        m->closure = sc;
        jv v = { .type = JV_MACRO };
        v.macro = m;
        scope_set(r, sc, x->name, v);
        return FLOW_NEXT;
    }
    case S_FILTER_BLOCK: {
        jv v = filtered_block(r, x, sc);
        r->line = x->line;
        jinja_write_str(r, r->out, v);
        return FLOW_NEXT;
    }
    case S_SCOPE:
        return exec(r, x->b, scope_new(r, sc));
    case S_CALL_BLOCK: {
        jmacro *m = jinja_alloc(r, sizeof *m);
        m->def = x->b;
        m->closure = sc;
        jv caller = { .type = JV_MACRO };
        caller.macro = m;
        const node *call = x->a;
        jv fn = eval(r, call->a, sc);
        jargs args = eval_args(r, call, sc);
        /* the same arguments and one more keyword: caller */
        int nkw = args.nkw + 1;
        const char **kw = jinja_alloc(r, (size_t)nkw * sizeof *kw);
        jv *vals = jinja_alloc(r, (size_t)(args.npos + nkw) * sizeof *vals);
        for (int i = 0; i < args.npos; i++) vals[i] = args.pos[i];
        for (int i = 0; i < args.nkw; i++) { kw[i] = args.kw[i]; vals[args.npos + i] = args.kwv[i]; }
        kw[nkw - 1] = "caller";
        vals[args.npos + nkw - 1] = caller;
        jargs with_caller = { .pos = vals, .npos = args.npos, .kw = kw, .kwv = vals + args.npos, .nkw = nkw };
        r->line = x->line;
        jv v = jinja_call(r, fn, &with_caller);
        r->line = x->line;
        jinja_write_str(r, r->out, v);
        return FLOW_NEXT;
    }
    case S_BREAK: return FLOW_BREAK;
    case S_CONTINUE: return FLOW_CONTINUE;
    default:
        jinja_fail(r, "internal error: an expression where a statement belongs");
    }
}

/* Nesting of evaluation, bounded so that long operator chains (a ~ b ~ c ~ ..., which parse into
   deep trees without nesting in the text) and macro calls cannot exhaust the C stack. */
#define MAX_EVAL_NESTING 3000

static jv eval(jinja_run *r, const node *x, jscope *sc) {
    if (++r->nesting > MAX_EVAL_NESTING) jinja_fail(r, "the template nests too deeply (%d levels)", MAX_EVAL_NESTING);
    jv v = eval_node(r, x, sc);
    r->nesting--;
    return v;
}

static int exec(jinja_run *r, const node *x, jscope *sc) {
    if (++r->nesting > MAX_EVAL_NESTING) jinja_fail(r, "the template nests too deeply (%d levels)", MAX_EVAL_NESTING);
    int flow = exec_node(r, x, sc);
    r->nesting--;
    return flow;
}

/* ---- the public face ---- */

jinja_limits jinja_default_limits(void) {
    return (jinja_limits){ .max_steps = 20u * 1000 * 1000, .max_depth = 64,
                           .max_output = (size_t)16 << 20, .max_memory = (size_t)64 << 20 };
}

int jinja_parse(const char *text, size_t len, jinja_template **out, ts_error *err) {
    *out = NULL;
    jinja_template *t = calloc(1, sizeof *t);
    if (!t) return ts_fail(err, "out of memory");
    token *toks;
    int n;
    if (jinja_lex(text, len, &t->arena, &toks, &n, err) != 0 || jinja_build(toks, n, &t->arena, &t->root, err) != 0) {
        jinja_template_free(t);
        return -1;
    }
    *out = t;
    return 0;
}

void jinja_template_free(jinja_template *t) {
    if (!t) return;
    jinja_arena_free(&t->arena);
    free(t);
}

int jinja_render(const jinja_template *t, const jinja_var *vars, int n_vars, const struct tm *today,
                 const jinja_limits *limits, char **out, size_t *out_len, ts_error *err) {
    return jinja_render_usage(t, vars, n_vars, today, limits, out, out_len, err, NULL);
}

int jinja_render_usage(const jinja_template *t, const jinja_var *vars, int n_vars, const struct tm *today,
                       const jinja_limits *limits, char **out, size_t *out_len, ts_error *err, jinja_usage *usage) {
    *out = NULL;
    if (usage) *usage = (jinja_usage){0};
    if (out_len) *out_len = 0;
    jinja_run *r = calloc(1, sizeof *r);
    if (!r) return ts_fail(err, "out of memory");
    r->err = err;
    r->lim = limits ? *limits : jinja_default_limits();
    r->arena.limit = r->lim.max_memory;
    r->reg_low = UINT64_MAX;
    if (today) r->today = *today;
    else {
        time_t now = time(NULL);
        localtime_r(&now, &r->today);
    }
    jbuf text = { .heap = true };
    r->out = &text;
    int rc = -1;
    if (setjmp(r->fail) == 0) {
        jscope *globals = scope_new(r, NULL);
        for (int i = 0; i < n_vars; i++) scope_set(r, globals, vars[i].name, jinja_from_json(r, vars[i].value));
        exec(r, t->root, scope_new(r, globals));
        char *s = malloc(text.n + 1);
        if (!s) ts_fail(err, "out of memory");
        else {
            if (text.n) memcpy(s, text.p, text.n);
            s[text.n] = '\0';
            *out = s;
            if (out_len) *out_len = text.n;
            rc = 0;
        }
    }
    jinja_buf_free_all(r);
    if (usage) *usage = (jinja_usage){ .steps = r->steps, .peak_memory = r->arena.peak };
    jinja_arena_free(&r->arena);
    free(r);
    return rc;
}
