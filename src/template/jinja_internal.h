/* What the parts of the Jinja interpreter share: the arena, the syntax tree, values and the
 * render state. Not a public header: template/jinja.h is the interface. */
#ifndef TS_TEMPLATE_JINJA_INTERNAL_H
#define TS_TEMPLATE_JINJA_INTERNAL_H
#include "template/jinja.h"
#include <setjmp.h>
#include <stdbool.h>
#include <stdint.h>

/* ---- arena: everything a parse or a render allocates ----
 *
 * A render releases memory as it goes: each statement and each loop iteration runs in a region
 * (jinja_region_enter / jinja_region_exit in jinja_eval.c) whose allocations are freed when it
 * ends, unless something older took a reference to them while it ran (see jinja_note_store). The
 * arena is a stack: a mark says where it stood, and a release frees what came after. */

typedef struct jinja_arena {
    struct jinja_block *blocks;  /* blocks allocations are carved from, newest first */
    struct jinja_block *big;     /* blocks of one big allocation each, newest first */
    struct jinja_block *spare;   /* a released block kept (zeroed) for the next one needed */
    size_t used, limit;          /* bytes taken from malloc now (blocks and output buffers), and the most allowed */
    size_t peak;                 /* the most used at once */
} jinja_arena;

typedef struct jinja_mark { struct jinja_block *block, *big; size_t used; } jinja_mark;

/* NULL when the limit would be passed or malloc fails. Memory is zeroed. */
void *jinja_arena_alloc(jinja_arena *a, size_t n);
void  jinja_arena_free(jinja_arena *a);
/* where the arena stands, and freeing everything allocated since (marks are released innermost first) */
jinja_mark jinja_arena_mark(const jinja_arena *a);
void  jinja_arena_release(jinja_arena *a, jinja_mark m);

/* ---- values ---- */

typedef enum jv_type {
    JV_UNDEFINED, JV_NONE, JV_BOOL, JV_INT, JV_FLOAT, JV_STR, JV_LIST, JV_DICT,
    JV_NAMESPACE,    /* namespace(): a dict whose members are attributes, assignable with set */
    JV_MACRO, JV_FUNC, JV_LOOP
} jv_type;

typedef struct jlist jlist;
typedef struct jdict jdict;
typedef struct jmacro jmacro;
typedef struct jfunc jfunc;
typedef struct jloop jloop;

typedef struct jv {
    jv_type type;
    bool grow;                    /* JV_STR: the text sits at the start of a string buffer that
                                     concatenation may extend in place (see jinja_concat) */
    union {
        bool b;
        int64_t i;
        double f;
        struct { const char *p; size_t n; } s;   /* JV_STR (UTF-8; p[n] readable, not always NUL:
                                                    jinja_cstr for a C string);
                                                    JV_UNDEFINED: what was missing, for errors */
        jlist *list;
        jdict *dict;                             /* JV_DICT and JV_NAMESPACE */
        jmacro *macro;
        jfunc *func;
        jloop *loop;
    };
} jv;

/* iterator: what Jinja's map/select/unique/... return, a Python generator: iterable, always true,
   no len(), no indexing, not JSON serializable;
   born: the render's epoch when it was made (jinja_note_store) */
struct jlist { jv *items; size_t n, cap; bool tuple, iterator; uint64_t born; };
struct jdict { jv *keys, *vals; size_t n, cap; uint64_t born; };      /* insertion-ordered */

/* call arguments: positional, then keyword */
typedef struct jargs {
    const jv *pos; int npos;
    const char *const *kw; const jv *kwv; int nkw;
} jargs;

typedef struct jinja_run jinja_run;
typedef jv (*jinja_builtin)(jinja_run *r, jv self, const jargs *a);
struct jfunc { const char *name; jv self; jinja_builtin fn; };   /* a global or a bound method */

struct jloop {
    const jlist *items;
    size_t index0;
    int depth;
};

/* ---- syntax tree ---- */

typedef enum node_kind {
    /* expressions */
    N_CONST,      /* value */
    N_NAME,       /* name */
    N_LIST,       /* kids[0..n) */
    N_TUPLE,      /* kids[0..n) */
    N_DICT,       /* kids: key, value, key, value, ... */
    N_ATTR,       /* a.name */
    N_ITEM,       /* a[b] */
    N_SLICE,      /* a[b:c:d], each of b, c, d may be NULL */
    N_CALL,       /* a(kids[0..npos), names[i]=kids[npos+i]) */
    N_FILTER,     /* a | name(kids...), same argument layout as N_CALL; a NULL in a filter block */
    N_TEST,       /* a is [not] name(kids...); negated in op */
    N_UNARY,      /* op: '-', '+', '!' (not) */
    N_BINARY,     /* a op b: + - * / // % ** ~ == != < <= > >= in notin */
    N_AND, N_OR,  /* a and b, a or b */
    N_COND,       /* b if a else c (c may be NULL) */
    /* statements */
    S_BODY,       /* kids[0..n) in order */
    S_TEXT,       /* value (a string) */
    S_OUTPUT,     /* {{ a }} */
    S_IF,         /* if a: b (S_BODY) else c (S_BODY or S_IF for elif, may be NULL) */
    S_FOR,        /* for names[0..nnames) in a [if c]: b (S_BODY) else d */
    S_SET,        /* names[0..nnames) = a (several names: unpacking) */
    S_SET_ATTR,   /* name.names[0] = a */
    S_SET_BLOCK,  /* name = rendering of b, through the filters in a (N_FILTER chain on NULL) */
    S_MACRO,      /* macro name(names[i] = kids[i] or NULL) body b */
    S_SCOPE,      /* b in a scope of its own ({% generation %}) */
    S_CALL_BLOCK, /* the call a (N_CALL) with caller = the macro b (S_MACRO named "caller"), printed */
    S_FILTER_BLOCK, /* the rendering of b through the filters in a (as S_SET_BLOCK), printed */
    S_BREAK, S_CONTINUE
} node_kind;

enum {   /* N_BINARY operators beyond single characters */
    OP_FLOORDIV = 256, OP_POW, OP_EQ, OP_NE, OP_LE, OP_GE, OP_IN, OP_NOTIN
};

typedef struct node node;
struct node {
    node_kind kind;
    int op;
    int line;
    node *a, *b, *c, *d;
    node **kids;
    int n, npos;                  /* kids count; for calls, how many are positional */
    const char *name;             /* N_NAME, N_ATTR, N_FILTER, N_TEST, S_SET_ATTR/BLOCK, S_MACRO */
    const char **names;           /* keyword names, targets, macro parameters */
    int nnames;
    jv value;                     /* N_CONST, S_TEXT */
};

struct jmacro { const node *def; struct jscope *closure; };

struct jinja_template {
    jinja_arena arena;
    node *root;                   /* S_BODY */
};

/* lexing and parsing */
typedef enum tok_kind {
    T_TEXT, T_VAR_BEGIN, T_VAR_END, T_BLOCK_BEGIN, T_BLOCK_END,
    T_NAME, T_STRING, T_INT, T_FLOAT, T_OP, T_EOF
} tok_kind;

typedef struct token {
    tok_kind kind;
    int line;
    const char *p; size_t n;      /* T_TEXT: the text after whitespace control; T_STRING: decoded;
                                     T_NAME, T_OP: the spelling */
    int64_t i; double f;          /* T_INT, T_FLOAT */
} token;

/* Splits template text into tokens (in the arena). -1 with "line N: ..." in err. */
int jinja_lex(const char *text, size_t len, jinja_arena *a, token **out, int *n_out, ts_error *err);
/* Builds the syntax tree from tokens. */
int jinja_build(const token *toks, int n, jinja_arena *a, node **root, ts_error *err);

/* ---- render state ---- */

/* p: the text of a string buffer in the arena; or, for an output buffer (heap: what {{ }} and text
   write to: the render's, a macro call's or a captured block's), of a malloc'd block counted in the
   arena's used and freed when the render ends or jinja_buf_take takes its text */
typedef struct jbuf { char *p; size_t n, cap; bool heap; } jbuf;

typedef struct jscope jscope;

struct jinja_run {
    jmp_buf fail;                 /* jinja_fail longjmps here */
    ts_error *err;
    jinja_arena arena;
    jinja_limits lim;
    uint64_t steps;
    uint64_t written;             /* bytes put in buffers (and 64 a call) not yet charged as steps */
    int depth;                    /* macro calls */
    int nesting;                  /* eval/exec recursion */
    int line;                     /* of the node being evaluated, for error messages */
    bool raised;                  /* the error came from raise_exception() */
    jbuf *out;
    struct jheap *heaps;          /* the output buffers' blocks (jbuf.heap), to free at the end */
    struct tm today;
    /* regions (jinja_eval.c): objects record the epoch they were made in (born); a region begins a
       new epoch, reg_mark, and reg_low is the oldest birth of an object older than the region that
       took a reference during it (UINT64_MAX: none), which keeps the region's memory */
    uint64_t epoch, reg_mark, reg_low;
};

_Noreturn void jinja_fail(jinja_run *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void *jinja_alloc(jinja_run *r, size_t n);          /* never NULL: fails the render instead */
void jinja_charge(jinja_run *r, uint64_t steps);     /* counts work; fails past max_steps */
_Noreturn void jinja_fail_memory(jinja_run *r);          /* past max_memory */
_Noreturn void jinja_fail_output(jinja_run *r, bool output);   /* a string (or the output) past max_output */

/* the write barrier: an object born in epoch born takes a reference to v (a value other than a
   number, a bool or none may point into the current region's memory) */
static inline void jinja_note_store(jinja_run *r, uint64_t born, jv v) {
    if (born >= r->reg_low || born >= r->reg_mark) return;
    /* any other value may point into this region or an enclosing one begun after born (a list
       older than this region may still be newer than an enclosing one): all are kept */
    if (v.type == JV_NONE || v.type == JV_BOOL || v.type == JV_INT || v.type == JV_FLOAT) return;
    r->reg_low = born;
}
/* an object born in epoch born points to memory allocated now (its items grew) */
static inline void jinja_note_grow(jinja_run *r, uint64_t born) {
    if (born < r->reg_low && born < r->reg_mark) r->reg_low = born;
}

/* values (jinja_value.c) */
jv   jinja_undefined(const char *hint);
jv   jinja_none(void);
jv   jinja_bool(bool b);
jv   jinja_int(int64_t i);
jv   jinja_float(double f);
jv   jinja_str(jinja_run *r, const char *p, size_t n);        /* copies */
jv   jinja_str_from_c(jinja_run *r, const char *s);
jv   jinja_str_static(const char *s);                          /* no copy: s must outlive the render */
jv   jinja_list_new(jinja_run *r, size_t cap, bool tuple);
jv   jinja_dict_new(jinja_run *r, size_t cap);
void jinja_list_push(jinja_run *r, jlist *l, jv v);
void jinja_dict_set(jinja_run *r, jdict *d, jv key, jv val);
bool jinja_dict_get(const jdict *d, jv key, jv *out);
bool jinja_dict_get_str(const jdict *d, const char *key, jv *out);
/* the (key, value) tuples of d in order, as a list: dict.items() and the items / dictsort filters */
jv   jinja_dict_items(jinja_run *r, const jdict *d);
jv   jinja_from_json(jinja_run *r, const json_value *j);

bool jinja_truthy(jv v);
bool jinja_equal(jv a, jv b);
/* <0, 0, >0; fails the render for values Python cannot order */
int  jinja_compare(jinja_run *r, jv a, jv b);
const char *jinja_type_name(jv v);                             /* Python's type name, for errors */

/* a + b of strings (b: p[0..n)); when a ends its buffer's text, b is appended in place, so
   `set s = s ~ piece` in a loop costs the pieces, not the square of their total */
jv   jinja_concat(jinja_run *r, jv a, const char *p, size_t n);
/* the text of a string value as a NUL-terminated C string (copied when needed) */
const char *jinja_cstr(jinja_run *r, jv s);

/* str() and repr() as Python writes them */
void jinja_write_str(jinja_run *r, jbuf *b, jv v);
void jinja_write_repr(jinja_run *r, jbuf *b, jv v);
jv   jinja_to_str(jinja_run *r, jv v);
/* json.dumps(v, ensure_ascii, indent (NULL: none), separators, sort_keys) */
void jinja_write_json(jinja_run *r, jbuf *b, jv v, bool ensure_ascii, const char *indent,
                   const char *item_sep, const char *key_sep, bool sort_keys);

/* growable text */
void jinja_buf_put(jinja_run *r, jbuf *b, const char *p, size_t n);
void jinja_buf_putc(jinja_run *r, jbuf *b, char c);
void jinja_buf_puts(jinja_run *r, jbuf *b, const char *s);
jv   jinja_buf_value(jbuf *b);                                   /* the text as a string value (not heap) */
/* the text of an output buffer (heap) as a string value in the arena; frees the buffer */
jv   jinja_buf_take(jinja_run *r, jbuf *b);
void jinja_buf_release(jinja_run *r, jbuf *b);                   /* frees an output buffer */
void jinja_buf_free_all(jinja_run *r);                           /* frees every output buffer */

/* strings as Python sees them: code points, whitespace */
size_t jinja_str_length(const char *p, size_t n);                /* code points */
size_t jinja_str_offset(const char *p, size_t n, size_t index);  /* byte offset of code point index */
bool   jinja_isspace(uint32_t cp);
int    jinja_decode(const char *p, size_t n, uint32_t *cp);  /* bytes of the code point (1 on bad) */

/* Python string operations shared by methods and filters (jinja_methods.c) */
typedef enum jcase { CASE_UPPER, CASE_LOWER, CASE_TITLE, CASE_CAPITALIZE } jcase;
jv jinja_str_case(jinja_run *r, jv s, jcase mode);                       /* str(s), case-mapped */
jv jinja_str_strip(jinja_run *r, jv s, jv chars, bool lead, bool trail); /* chars none: whitespace */
jv jinja_str_replace(jinja_run *r, jv s, jv old, jv rep, int64_t count); /* count < 0: all */

/* an argument: positional index i, else keyword name, else def (jinja_value.c) */
jv   jinja_arg(const jargs *a, int i, const char *name, jv def);
/* fails with the message an undefined value carries (using it further than printing or testing) */
_Noreturn void jinja_fail_undefined(jinja_run *r, jv u);
/* a message for an undefined value, formatted into the run's arena (jinja_value.c) */
const char *jinja_hint(jinja_run *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* filters, tests, methods and globals (jinja_filters.c, jinja_methods.c) */
jv   jinja_apply_filter(jinja_run *r, const char *name, jv v, const jargs *a);
bool jinja_apply_test(jinja_run *r, const char *name, jv v, const jargs *a);
/* obj.name as a bound method (true), or false when obj has no such method */
bool jinja_method(jinja_run *r, jv obj, const char *name, jv *out);
/* the global functions: range, namespace, dict, raise_exception, strftime_now */
bool jinja_global(jinja_run *r, const char *name, jv *out);
/* attribute / item access the way Jinja's sandbox does it (undefined for missing ones;
 * jinja_methods.c, beside the methods they find) */
jv   jinja_getattr(jinja_run *r, jv obj, const char *name);
jv   jinja_getitem(jinja_run *r, jv obj, jv key);
/* calls a macro or function value */
jv   jinja_call(jinja_run *r, jv fn, const jargs *a);
/* the same items as a generator (see struct jlist) */
jv   jinja_iterator(jv list);
/* the list a value iterates as (strings by code point, dicts by key); fails for non-iterables */
jlist *jinja_iterate(jinja_run *r, jv v);

#endif
