/* The regex engine of regex.h: a recursive-descent parser builds a small tree (alternatives that
 * share a leading literal share it: 's|'t becomes '(?:s|t)), which is compiled into two programs
 * for a backtracking machine:
 *   fast: consecutive code point tests and greedy repeats of one ([^\r\n\p{L}\p{N}]?\p{L}+) are one
 *         SEQ instruction of runs, each consuming greedily and giving back through one stack frame
 *         (none when what follows cannot start on what it would give back, or cannot fail);
 *   memo: every loop spelled out as SPLIT/JMP, so that each (instruction, position) pair stands for
 *         one state of the search and failed states can be remembered in a bitmap.
 * In both, an alternation is one SWITCH that tries, in order, only the alternatives that can start
 * on the code point at hand (and, for X?R, on the next one), and a lookahead of one code point test
 * ((?!\S)) is one instruction. In the fast program, a SWITCH runs an alternative that is one SEQ to
 * the end of the pattern in place, and pushes the frame of the alternatives left only once one is
 * needed; find-all goes from such a match straight to the next search (where the tokenizer regexes
 * spend most of their time). A call runs the fast program under a step budget; if that runs out, it
 * goes on from the same start position with the memo program, which visits each memoizable state
 * at most once (states inside a loop that can match empty, or inside a lookahead, depend on more
 * than the position and are not memoized), under a second budget.
 *
 * Oniguruma details followed here: a loop iteration that matched empty ends the loop (it does not
 * fail); `{n}?` is `(?:X{n})?`, not a lazy {n}; an unmatched `{` is a literal; `]` first in a class
 * is a literal; \xHH above 7F are UTF-8 bytes (several \xHH form one code point). */
#include "text/regex.h"
#include "core/error.h"
#include "core/unicode.h"
#include "core/utf8.h"
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- category masks ---------------------------------------------------------------------------- */

#define CAT(x) (1u << UNICODE_##x)
#define CATS_ALL ((1u << UNICODE_CATEGORY_COUNT) - 1)
#define CATS_L (CAT(LU) | CAT(LL) | CAT(LT) | CAT(LM) | CAT(LO))
#define CATS_M (CAT(MN) | CAT(MC) | CAT(ME))
#define CATS_N (CAT(ND) | CAT(NL) | CAT(NO))
#define CATS_P (CAT(PC) | CAT(PD) | CAT(PS) | CAT(PE) | CAT(PI) | CAT(PF) | CAT(PO))
#define CATS_S (CAT(SM) | CAT(SC) | CAT(SK) | CAT(SO))
#define CATS_Z (CAT(ZS) | CAT(ZL) | CAT(ZP))
#define CATS_C (CAT(CC) | CAT(CF) | CAT(CS) | CAT(CO) | CAT(CN))
#define CATS_WORD (CATS_L | CATS_M | CAT(ND) | CAT(PC))   /* \w, as Oniguruma's [[:word:]] */

/* \p{...} names: compared lower-cased with ' ', '_' and '-' dropped, as Oniguruma does. */
static const struct { const char *name; uint32_t cats; } properties[] = {
    { "l", CATS_L }, { "letter", CATS_L }, { "lc", CAT(LU) | CAT(LL) | CAT(LT) },
    { "l&", CAT(LU) | CAT(LL) | CAT(LT) }, { "casedletter", CAT(LU) | CAT(LL) | CAT(LT) },
    { "lu", CAT(LU) }, { "uppercaseletter", CAT(LU) }, { "ll", CAT(LL) }, { "lowercaseletter", CAT(LL) },
    { "lt", CAT(LT) }, { "titlecaseletter", CAT(LT) }, { "lm", CAT(LM) }, { "modifierletter", CAT(LM) },
    { "lo", CAT(LO) }, { "otherletter", CAT(LO) },
    { "m", CATS_M }, { "mark", CATS_M }, { "combiningmark", CATS_M }, { "mn", CAT(MN) },
    { "nonspacingmark", CAT(MN) }, { "mc", CAT(MC) }, { "spacingmark", CAT(MC) }, { "me", CAT(ME) },
    { "enclosingmark", CAT(ME) },
    { "n", CATS_N }, { "number", CATS_N }, { "nd", CAT(ND) }, { "decimalnumber", CAT(ND) },
    { "nl", CAT(NL) }, { "letternumber", CAT(NL) }, { "no", CAT(NO) }, { "othernumber", CAT(NO) },
    { "p", CATS_P }, { "punctuation", CATS_P }, { "pc", CAT(PC) }, { "connectorpunctuation", CAT(PC) },
    { "pd", CAT(PD) }, { "dashpunctuation", CAT(PD) }, { "ps", CAT(PS) }, { "openpunctuation", CAT(PS) },
    { "pe", CAT(PE) }, { "closepunctuation", CAT(PE) }, { "pi", CAT(PI) },
    { "initialpunctuation", CAT(PI) }, { "pf", CAT(PF) }, { "finalpunctuation", CAT(PF) },
    { "po", CAT(PO) }, { "otherpunctuation", CAT(PO) },
    { "s", CATS_S }, { "symbol", CATS_S }, { "sm", CAT(SM) }, { "mathsymbol", CAT(SM) },
    { "sc", CAT(SC) }, { "currencysymbol", CAT(SC) }, { "sk", CAT(SK) }, { "modifiersymbol", CAT(SK) },
    { "so", CAT(SO) }, { "othersymbol", CAT(SO) },
    { "z", CATS_Z }, { "separator", CATS_Z }, { "zs", CAT(ZS) }, { "spaceseparator", CAT(ZS) },
    { "zl", CAT(ZL) }, { "lineseparator", CAT(ZL) }, { "zp", CAT(ZP) }, { "paragraphseparator", CAT(ZP) },
    { "c", CATS_C }, { "other", CATS_C }, { "cc", CAT(CC) }, { "control", CAT(CC) }, { "cf", CAT(CF) },
    { "format", CAT(CF) }, { "cs", CAT(CS) }, { "surrogate", CAT(CS) }, { "co", CAT(CO) },
    { "privateuse", CAT(CO) }, { "cn", CAT(CN) }, { "unassigned", CAT(CN) },
    { "any", CATS_ALL },
};

/* ---- compiled form ----------------------------------------------------------------------------- */

enum { SPACE_IN = 1, SPACE_OUT = 2 };

/* A set of code points: categories, White_Space (or its complement) and ranges, possibly negated and
 * closed under case folding; the answers for ASCII are precomputed. */
typedef struct re_class {
    uint8_t in_ascii[128];    /* the final answer for code points below 128, for matching */
    uint64_t member;          /* without ranges and case folding: the final answer beyond ASCII by
                                 bit category * 2 + White_Space */
    bool plain;               /* no ranges beyond ASCII, no case folding: member is the answer there */
    uint32_t ascii[4];        /* in_ascii as bits, for analysis */
    uint32_t cats;            /* general categories in the set (bit = enum unicode_category) */
    uint8_t space;            /* SPACE_IN: White_Space code points are in; SPACE_OUT: the others are */
    bool negated, icase;      /* icase: a code point is in when a member of its fold orbit is */
    uint32_t range0, nranges; /* sorted disjoint [lo, hi] pairs in regex.ranges */
} re_class;

enum op {
    OP_CHAR,      /* a: code point */
    OP_CLASS,     /* a: class */
    OP_ANY,       /* any code point but \n */
    OP_SEQ,       /* a: first step, b: steps; each step a greedy run of one class; c: 1 if next is MATCH */
    OP_RUN_LAZY,  /* a: class, b: min, c: max (UINT32_MAX: no bound); lazy */
    OP_SPLIT,     /* try a, then b; guard: class a's branch must start with, or -1; c: 1 if b is MATCH */
    OP_SWITCH,    /* a: switch table; try, in order, the alternatives that can start here */
    OP_JMP,       /* a */
    OP_SAVE,      /* a: slot = position (start of an iteration of a loop that can match empty) */
    OP_PROGRESS,  /* a: slot; b: the loop's exit, taken when the iteration matched empty */
    OP_LOOK,      /* a: continuation after OP_LOOK_END; b: 1 for a negative lookahead */
    OP_AHEAD,     /* a lookahead of one code point test: a: class; b: 1 for negative */
    OP_LOOK_END,
    OP_BOL, OP_EOL, OP_BOT, OP_EOT, OP_EOT_NL,   /* ^ $ \A \z \Z */
    OP_MATCH
};

typedef struct re_inst {
    uint8_t op;
    bool memo;        /* what follows depends on (instruction, position) only */
    int32_t guard;
    uint32_t a, b, c;
    uint32_t next;    /* the instruction after this one (JMPs are threaded away) */
} re_inst;

/* budget_len: len with each OP_AHEAD counted as the LOOK, test and LOOK_END it stands for, so that
 * the step budgets (see regex.h) do not shrink with that shortcut. */
typedef struct program { re_inst *code; uint32_t len, n_slots, budget_len; } program;

/* A step of a SEQ: min to max code points of class cls, as many as possible. keep: a frame to give
 * code points back may be needed (not when what follows cannot start on one of them, nor when
 * nothing after it can fail). next: the class of the code points the later steps of the SEQ must
 * start on (up to the first that cannot match empty), or -1; giving back skips the positions
 * outside it, and no frame is pushed when there are none. */
typedef struct re_step {
    uint32_t cls, min;
    size_t max;
    bool keep;
    int32_t next;
    const re_class *k, *follow;   /* &classes[cls], &classes[next] or NULL, set once classes stop moving */
} re_step;

/* An alternation of up to 64 alternatives: which ones can start on a given code point, so that
 * one instruction picks them instead of a chain of SPLITs. */
#define SWITCH_MAX 64
typedef struct re_switch {
    uint32_t n;           /* alternatives */
    uint64_t always;      /* alternatives that may match empty or start with anything */
    uint64_t simple;      /* alternatives that are one SEQ straight to MATCH that never gives back:
                             run in place, without a frame, from their steps below */
    uint64_t checked;     /* alternatives that are one SEQ whose runs may give back, to MATCH or to an
                             optional part that cannot start on what follows (tail below): run in
                             place as long as no frame is needed */
    uint64_t slow;        /* alternatives whose first code points include ranges beyond ASCII */
    uint64_t ascii[128];
    uint64_t cat[UNICODE_CATEGORY_COUNT][2];   /* [category][White_Space] */
    uint32_t target[SWITCH_MAX];
    int32_t guard[SWITCH_MAX];                 /* slow ones: their first code point class */
    /* An alternative X?R (X one code point test, R not matching empty) that the code point at hand
     * could start only as X needs R's first code points next: these masks hold such alternatives
     * for the code point at hand, rest[] the classes of R's first code points. */
    uint64_t next_ascii[128];
    uint64_t next_cat[UNICODE_CATEGORY_COUNT][2];
    int32_t rest[SWITCH_MAX];
    const re_step *seq[SWITCH_MAX];            /* simple and checked ones: their SEQ's steps, seq_len of them */
    uint32_t seq_len[SWITCH_MAX];
    const re_class *tail_class[SWITCH_MAX];    /* checked ones: the class an optional part after the
                                                  SEQ starts with, or NULL (MATCH follows) */
    /* ... and the alternatives whose R can start on a code point, as tables (rest_slow: R's class
     * has ranges beyond ASCII and is tested in full) */
    uint64_t rest_ascii[128];
    uint64_t rest_cat[UNICODE_CATEGORY_COUNT][2];
    uint64_t rest_slow;
} re_switch;

struct regex {
    program fast, memo;
    re_switch *switches;
    uint32_t n_switches, cap_switches;
    re_step *steps;
    uint32_t n_steps, cap_steps;
    re_class *classes;
    uint32_t n_classes, cap_classes;
    uint32_t (*ranges)[2];
    uint32_t n_ranges, cap_ranges;
    int32_t first;    /* class of the code points a match can start with; -1: no filter */
};

static bool in_ranges(const uint32_t (*r)[2], uint32_t n, uint32_t c) {
    uint32_t lo = 0, hi = n;
    while (lo < hi) {
        uint32_t mid = (lo + hi) / 2;
        if (c < r[mid][0]) hi = mid;
        else if (c > r[mid][1]) lo = mid + 1;
        else return true;
    }
    return false;
}

/* Membership before negation and case closure. */
static bool class_raw(const regex *re, const re_class *k, uint32_t c) {
    uint16_t e = unicode_entry(c);
    if ((k->cats >> (e >> UNICODE_CATEGORY_SHIFT)) & 1) return true;
    if (k->space && (k->space & ((e & UNICODE_WHITESPACE) ? SPACE_IN : SPACE_OUT))) return true;
    return k->nranges && in_ranges(re->ranges + k->range0, k->nranges, c);
}

static bool class_full(const regex *re, const re_class *k, uint32_t c) {
    bool in = class_raw(re, k, c);
    if (!in && k->icase) {
        uint32_t orbit[UNICODE_FOLD_ORBIT_MAX];
        int m = unicode_fold_orbit(c, orbit);
        for (int i = 1; i < m && !in; i++) in = class_raw(re, k, orbit[i]);
    }
    return in != k->negated;
}

static inline unsigned member_bit(uint16_t e) {
    return (unsigned)(e >> UNICODE_CATEGORY_SHIFT) << 1 | ((e & UNICODE_WHITESPACE) != 0);
}

static inline bool class_has(const regex *re, const re_class *k, uint32_t c) {
    if (c < 128) return k->in_ascii[c];
    if (!k->plain) return class_full(re, k, c);
    return (k->member >> member_bit(unicode_entry(c))) & 1;
}

/* Fills the matching tables of class k from its ascii bits, ranges and case folding. */
static void class_seal(const regex *re, re_class *k) {
    for (uint32_t c = 0; c < 128; c++) k->in_ascii[c] = (k->ascii[c >> 5] >> (c & 31)) & 1;
    k->plain = !k->icase && (!k->nranges || re->ranges[k->range0 + k->nranges - 1][1] < 128);
}

/* The end of the run of class k's code points in cps[q..lim). */
static inline size_t class_run(const regex *re, const re_class *k, const uint32_t *cps, size_t q, size_t lim) {
    while (q < lim && class_has(re, k, cps[q])) q++;
    return q;
}

/* ---- parse tree -------------------------------------------------------------------------------- */

enum node_kind { N_EMPTY, N_CHAR, N_CLASS, N_ANY, N_ASSERT, N_CAT, N_ALT, N_REPEAT, N_LOOK };
#define INF UINT32_MAX

typedef struct node {
    uint8_t kind;
    bool flag;            /* N_REPEAT: greedy; N_LOOK: negative */
    uint32_t v;           /* N_CHAR: code point; N_CLASS: class; N_ASSERT: op */
    uint32_t min, max;    /* N_REPEAT */
    int32_t child, next;  /* first child (N_CAT, N_ALT, N_REPEAT, N_LOOK); next sibling */
} node;

typedef struct parser {
    const char *src;
    size_t len, pos;
    ts_error *err;
    regex *re;
    node *nodes;
    uint32_t n_nodes, cap_nodes;
    uint32_t (*tmp)[2];   /* ranges of the class being built */
    size_t n_tmp, cap_tmp;
    uint32_t cats;        /* ... and its categories and White_Space items */
    uint8_t space;
} parser;

#define ERR (-1)
#define NOTHING (-2)      /* a comment: no atom */

static int fail_at(parser *ps, size_t at, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int fail_at(parser *ps, size_t at, const char *fmt, ...) {
    char msg[160];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return ts_fail(ps->err, "regex: %s at offset %zu", msg, at);
}

static int unsupported(parser *ps, size_t at, const char *construct, const char *what) {
    return fail_at(ps, at, "unsupported construct \"%s\" (%s)", construct, what);
}

static int peek(const parser *ps, size_t k) {
    return ps->pos + k < ps->len ? (unsigned char)ps->src[ps->pos + k] : -1;
}

/* The pattern is valid UTF-8 (checked first), so decoding cannot fail. */
static uint32_t take_cp(parser *ps) {
    uint32_t c = 0;
    int k = utf8_decode(ps->src + ps->pos, ps->len - ps->pos, &c);
    ps->pos += k > 0 ? (size_t)k : 1;
    return c;
}

static void *grow(void *p, uint32_t *cap, size_t elem, uint32_t need) {
    if (need <= *cap) return p;
    uint32_t c = *cap ? *cap : 16;
    while (c < need) c *= 2;
    void *q = realloc(p, (size_t)c * elem);
    if (q) *cap = c;
    return q;
}

static int32_t new_node(parser *ps, int kind) {
    node *nodes = grow(ps->nodes, &ps->cap_nodes, sizeof *nodes, ps->n_nodes + 1);
    if (!nodes) return fail_at(ps, ps->pos, "out of memory");
    ps->nodes = nodes;
    nodes[ps->n_nodes] = (node){ .kind = (uint8_t)kind, .child = -1, .next = -1 };
    return (int32_t)ps->n_nodes++;
}

static int32_t leaf(parser *ps, int kind, uint32_t v) {
    int32_t n = new_node(ps, kind);
    if (n >= 0) ps->nodes[n].v = v;
    return n;
}

/* Appends child to a node's list of children; *last tracks its last child. */
static void add_child(parser *ps, int32_t parent, int32_t *last, int32_t child) {
    if (*last < 0) ps->nodes[parent].child = child;
    else ps->nodes[*last].next = child;
    *last = child;
}

/* ---- classes ----------------------------------------------------------------------------------- */

static int tmp_range(parser *ps, uint32_t lo, uint32_t hi) {
    if (ps->n_tmp == ps->cap_tmp) {
        size_t cap = ps->cap_tmp ? 2 * ps->cap_tmp : 32;
        void *t = realloc(ps->tmp, cap * sizeof *ps->tmp);
        if (!t) return fail_at(ps, ps->pos, "out of memory");
        ps->tmp = t;
        ps->cap_tmp = cap;
    }
    ps->tmp[ps->n_tmp][0] = lo;
    ps->tmp[ps->n_tmp][1] = hi;
    ps->n_tmp++;
    return 0;
}

static int cmp_range(const void *a, const void *b) {
    const uint32_t *x = a, *y = b;
    return x[0] < y[0] ? -1 : x[0] > y[0];
}

/* Turns the set being built (ps->tmp, ps->cats, ps->space) into a class; returns its index. */
static int32_t make_class(regex *re, uint32_t (*tmp)[2], size_t n_tmp, uint32_t cats, uint8_t space,
                          bool negated, bool icase) {
    if (n_tmp) qsort(tmp, n_tmp, sizeof *tmp, cmp_range);
    size_t m = 0;
    for (size_t i = 0; i < n_tmp; i++) {
        if (m && tmp[i][0] <= tmp[m - 1][1] + 1) {
            if (tmp[i][1] > tmp[m - 1][1]) tmp[m - 1][1] = tmp[i][1];
        } else {
            tmp[m][0] = tmp[i][0];
            tmp[m][1] = tmp[i][1];
            m++;
        }
    }
    if (m) {
        uint32_t (*ranges)[2] = grow(re->ranges, &re->cap_ranges, sizeof *ranges, re->n_ranges + (uint32_t)m);
        if (!ranges) return ERR;
        re->ranges = ranges;
        memcpy(ranges + re->n_ranges, tmp, m * sizeof *tmp);
    }
    re_class *classes = grow(re->classes, &re->cap_classes, sizeof *classes, re->n_classes + 1);
    if (!classes) return ERR;
    re->classes = classes;
    re_class *k = &classes[re->n_classes];
    *k = (re_class){ .cats = cats, .space = space, .negated = negated, .icase = icase,
                     .range0 = re->n_ranges, .nranges = (uint32_t)m };
    re->n_ranges += (uint32_t)m;
    for (uint32_t c = 0; c < 128; c++)
        if (class_full(re, k, c)) k->ascii[c >> 5] |= 1u << (c & 31);
    for (int cat = 0; cat < UNICODE_CATEGORY_COUNT; cat++)
        for (int ws = 0; ws < 2; ws++)
            if ((((cats >> cat) & 1) || (space & (ws ? SPACE_IN : SPACE_OUT))) != negated)
                k->member |= (uint64_t)1 << (cat * 2 + ws);
    class_seal(re, k);
    return (int32_t)re->n_classes++;
}

static int32_t finish_class(parser *ps, bool negated, bool icase) {
    int32_t k = make_class(ps->re, ps->tmp, ps->n_tmp, ps->cats, ps->space, negated, icase);
    ps->n_tmp = 0;
    ps->cats = 0;
    ps->space = 0;
    return k < 0 ? fail_at(ps, ps->pos, "out of memory") : k;
}

/* A literal under (?i): its fold orbit as a class (or the code point itself when alone). */
static int32_t literal(parser *ps, uint32_t c, bool icase) {
    uint32_t orbit[UNICODE_FOLD_ORBIT_MAX];
    int m = icase ? unicode_fold_orbit(c, orbit) : 1;
    if (m == 1) return leaf(ps, N_CHAR, c);
    for (int i = 0; i < m; i++)
        if (tmp_range(ps, orbit[i], orbit[i])) return ERR;
    int32_t k = finish_class(ps, false, false);
    return k < 0 ? ERR : leaf(ps, N_CLASS, (uint32_t)k);
}

/* ---- escapes ----------------------------------------------------------------------------------- */

enum { ESC_CHAR, ESC_SET, ESC_ASSERT };

static int hex_value(int c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

static bool valid_cp(uint32_t c) { return c <= 0x10FFFF && !(c >= 0xD800 && c <= 0xDFFF); }

/* \xHH (one or two hex digits) at ps->pos (after the "\x"); -1 if none. */
static int hex_byte(parser *ps) {
    int v = hex_value(peek(ps, 0));
    if (v < 0) return -1;
    ps->pos++;
    int w = hex_value(peek(ps, 0));
    if (w >= 0) { v = v * 16 + w; ps->pos++; }
    return v;
}

/* After "\x": \x{H...}, or \xHH, where bytes above 7F must continue as \xHH escapes into one UTF-8
 * sequence (Oniguruma reads them as bytes of the pattern's encoding). */
static int hex_escape(parser *ps, size_t at, uint32_t *out) {
    if (peek(ps, 0) == '{') {
        ps->pos++;
        uint32_t v = 0;
        int digits = 0, h;
        while ((h = hex_value(peek(ps, 0))) >= 0 && digits < 8) { v = v * 16 + (uint32_t)h; ps->pos++; digits++; }
        if (!digits || peek(ps, 0) != '}') return fail_at(ps, at, "bad \\x{...} escape");
        ps->pos++;
        if (!valid_cp(v)) return fail_at(ps, at, "invalid code point \\x{%X}", v);
        *out = v;
        return 0;
    }
    int b = hex_byte(ps);
    if (b < 0) return fail_at(ps, at, "bad \\x escape");
    if (b < 0x80) { *out = (uint32_t)b; return 0; }
    char bytes[4] = { (char)b };
    int need = b >= 0xF0 ? 4 : b >= 0xE0 ? 3 : b >= 0xC0 ? 2 : 1;
    for (int i = 1; i < need; i++) {
        if (peek(ps, 0) != '\\' || peek(ps, 1) != 'x') break;
        ps->pos += 2;
        int c = hex_byte(ps);
        if (c < 0) return fail_at(ps, at, "bad \\x escape");
        bytes[i] = (char)c;
    }
    if (utf8_decode(bytes, (size_t)need, out) != need)
        return fail_at(ps, at, "\\xHH escapes that do not form UTF-8");
    return 0;
}

/* \p{...} / \P{...} / \p{^...} after the "p" or "P": adds the categories to the set being built. */
static int property(parser *ps, size_t at, bool negate) {
    if (peek(ps, 0) != '{') return fail_at(ps, at, "\\p must be followed by {name}");
    ps->pos++;
    if (peek(ps, 0) == '^') { negate = !negate; ps->pos++; }
    size_t start = ps->pos;
    while (ps->pos < ps->len && ps->src[ps->pos] != '}') ps->pos++;
    if (ps->pos >= ps->len) return fail_at(ps, at, "unterminated \\p{");
    size_t len = ps->pos - start;
    ps->pos++;
    char name[40];
    size_t w = 0;
    if (len >= sizeof name) len = sizeof name - 1;   /* too long for any name: no match below */
    for (size_t i = 0; i < len; i++) {
        char c = ps->src[start + i];
        if (c == ' ' || c == '_' || c == '-') continue;
        name[w++] = (char)(c >= 'A' && c <= 'Z' ? c + 32 : c);
    }
    name[w] = 0;
    for (size_t i = 0; i < sizeof properties / sizeof properties[0]; i++) {
        if (strcmp(properties[i].name, name) == 0) {
            ps->cats |= negate ? CATS_ALL & ~properties[i].cats : properties[i].cats;
            return 0;
        }
    }
    return fail_at(ps, at, "unsupported property \"%.*s\" (general categories only)", (int)len, ps->src + start);
}

/* One escape at ps->pos (the backslash). A single code point comes back in *cp (ESC_CHAR); a set
 * (\d \s \w \h \p and their negations) is added to ps's set being built (ESC_SET); \A \z \Z give
 * ESC_ASSERT with the op in *cp (outside classes only). */
static int escape(parser *ps, bool in_class, uint32_t *cp) {
    size_t at = ps->pos;
    ps->pos++;
    if (ps->pos >= ps->len) return fail_at(ps, at, "trailing backslash");
    uint32_t c = take_cp(ps);
    char name[3] = { '\\', (char)c, 0 };
    switch (c) {
    case 't': *cp = '\t'; return ESC_CHAR;
    case 'n': *cp = '\n'; return ESC_CHAR;
    case 'r': *cp = '\r'; return ESC_CHAR;
    case 'f': *cp = '\f'; return ESC_CHAR;
    case 'v': *cp = '\v'; return ESC_CHAR;
    case 'a': *cp = 7; return ESC_CHAR;
    case 'e': *cp = 27; return ESC_CHAR;
    case '0': {           /* \0, \0n, \0nn: octal */
        uint32_t v = 0;
        for (int i = 0; i < 2 && peek(ps, 0) >= '0' && peek(ps, 0) <= '7'; i++) v = v * 8 + (uint32_t)(ps->src[ps->pos++] - '0');
        *cp = v;
        return ESC_CHAR;
    }
    case 'x': return hex_escape(ps, at, cp) ? ERR : ESC_CHAR;
    case 'u': {
        uint32_t v = 0;
        for (int i = 0; i < 4; i++) {
            int h = hex_value(peek(ps, 0));
            if (h < 0) return fail_at(ps, at, "\\u needs four hex digits");
            v = v * 16 + (uint32_t)h;
            ps->pos++;
        }
        if (!valid_cp(v)) return fail_at(ps, at, "invalid code point \\u%04X", v);
        *cp = v;
        return ESC_CHAR;
    }
    case 'd': ps->cats |= CAT(ND); return ESC_SET;
    case 'D': ps->cats |= CATS_ALL & ~CAT(ND); return ESC_SET;
    case 'w': ps->cats |= CATS_WORD; return ESC_SET;
    case 'W': ps->cats |= CATS_ALL & ~CATS_WORD; return ESC_SET;
    case 's': ps->space |= SPACE_IN; return ESC_SET;
    case 'S': ps->space |= SPACE_OUT; return ESC_SET;
    case 'h':
        if (tmp_range(ps, '0', '9') || tmp_range(ps, 'A', 'F') || tmp_range(ps, 'a', 'f')) return ERR;
        return ESC_SET;
    case 'H':
        if (tmp_range(ps, 0, '0' - 1) || tmp_range(ps, '9' + 1, 'A' - 1) || tmp_range(ps, 'F' + 1, 'a' - 1) ||
            tmp_range(ps, 'f' + 1, 0x10FFFF)) return ERR;
        return ESC_SET;
    case 'p': case 'P': return property(ps, at, c == 'P') ? ERR : ESC_SET;
    case 'A': case 'z': case 'Z':
        if (in_class) break;
        *cp = c == 'A' ? OP_BOT : c == 'z' ? OP_EOT : OP_EOT_NL;
        return ESC_ASSERT;
    case 'b':
        if (in_class) { *cp = 8; return ESC_CHAR; }   /* backspace inside a class */
        return unsupported(ps, at, name, "word boundary");
    case 'B': return unsupported(ps, at, name, "word boundary");
    case 'G': return unsupported(ps, at, name, "search start anchor");
    case 'K': return unsupported(ps, at, name, "keep");
    case 'R': return unsupported(ps, at, name, "general newline");
    case 'N': case 'O': return unsupported(ps, at, name, "newline class");
    case 'X': case 'y': case 'Y': return unsupported(ps, at, name, "grapheme cluster");
    case 'k': return unsupported(ps, at, name, "named backreference");
    case 'g': return unsupported(ps, at, name, "subexpression call");
    case 'Q': case 'E': return unsupported(ps, at, name, "quoting");
    case 'c': case 'C': case 'M': return unsupported(ps, at, name, "control or meta escape");
    case 'o': return unsupported(ps, at, name, "octal code point");
    default: break;
    }
    if (c >= '1' && c <= '9') return unsupported(ps, at, name, "backreference");
    if (c < 128 && ((c | 0x20) - 'a' < 26 || c - '0' < 10))
        return fail_at(ps, at, "unknown escape \"%s\"", name);
    *cp = c;              /* escaped punctuation, space or non-ASCII: itself */
    return ESC_CHAR;
}

/* A class [...] at ps->pos. */
static int32_t parse_class(parser *ps, bool icase) {
    size_t open = ps->pos++;
    bool negated = false;
    if (peek(ps, 0) == '^') { negated = true; ps->pos++; }
    for (bool first = true;; first = false) {
        if (ps->pos >= ps->len) return fail_at(ps, open, "unterminated character class");
        size_t at = ps->pos;
        int c = peek(ps, 0);
        if (c == ']' && !first) { ps->pos++; break; }
        if (c == '[')
            return peek(ps, 1) == ':' ? unsupported(ps, at, "[:", "POSIX bracket")
                                      : unsupported(ps, at, "[", "nested character class");
        if (c == '&' && peek(ps, 1) == '&') return unsupported(ps, at, "&&", "class intersection");
        uint32_t lo;
        int kind = ESC_CHAR;
        if (c == '\\') {
            kind = escape(ps, true, &lo);
            if (kind == ERR) return ERR;
        } else {
            lo = take_cp(ps);
        }
        if (peek(ps, 0) == '-' && peek(ps, 1) != ']' && peek(ps, 1) >= 0) {
            if (kind != ESC_CHAR) return fail_at(ps, at, "bad character range (a set cannot start a range)");
            ps->pos++;
            uint32_t hi;
            if (peek(ps, 0) == '\\') {
                int hk = escape(ps, true, &hi);
                if (hk == ERR) return ERR;
                if (hk != ESC_CHAR) return fail_at(ps, at, "bad character range (a set cannot end a range)");
            } else if (peek(ps, 0) == '[') {
                return unsupported(ps, ps->pos, "[", "nested character class");
            } else {
                hi = take_cp(ps);
            }
            if (lo > hi) return fail_at(ps, at, "bad character range \"%.*s\"", (int)(ps->pos - at), ps->src + at);
            if (tmp_range(ps, lo, hi)) return ERR;
        } else if (kind == ESC_CHAR) {
            if (tmp_range(ps, lo, lo)) return ERR;
        }
    }
    int32_t k = finish_class(ps, negated, icase);
    return k < 0 ? ERR : leaf(ps, N_CLASS, (uint32_t)k);
}

/* ---- groups, atoms, quantifiers ---------------------------------------------------------------- */

static int32_t parse_alt(parser *ps, bool icase, int depth);

/* Skips a (?#...) comment at ps->pos; 1 if there was one. */
static int skip_comment(parser *ps) {
    if (peek(ps, 0) != '(' || peek(ps, 1) != '?' || peek(ps, 2) != '#') return 0;
    size_t at = ps->pos;
    while (ps->pos < ps->len && ps->src[ps->pos] != ')') ps->pos++;
    if (ps->pos >= ps->len) return fail_at(ps, at, "unterminated comment");
    ps->pos++;
    return 1;
}

/* The flags of "(?i-i" at ps->pos (after "(?"); sets *icase. Stops before ':' or ')'. */
static int parse_flags(parser *ps, size_t at, bool *icase) {
    bool on = true;
    while (ps->pos < ps->len) {
        int c = peek(ps, 0);
        if (c == ':' || c == ')') return 0;
        if (c == '-' && on) { on = false; ps->pos++; continue; }
        if (c == 'i') { *icase = on; ps->pos++; continue; }
        if (c >= 'a' && c <= 'z') {
            const char *why = c == 'm' ? "flag m (dot matches newline in Oniguruma)" : c == 'x' ? "flag x (extended)" : "flag";
            char g[5] = { '(', '?', (char)c, 0 };
            return unsupported(ps, ps->pos, g, why);
        }
        return fail_at(ps, at, "bad group syntax");
    }
    return fail_at(ps, at, "missing )");
}

/* A group at ps->pos ("("). *isolated: it was "(?i)" alone, whose effect reaches the end of the
 * enclosing group: the caller parses that rest with *icase. */
static int32_t parse_group(parser *ps, bool *icase, int depth, bool *isolated) {
    size_t at = ps->pos;
    *isolated = false;
    if (depth >= REGEX_MAX_DEPTH) return fail_at(ps, at, "nesting deeper than %d", REGEX_MAX_DEPTH);
    ps->pos++;
    int32_t look = -1;
    bool inner_icase = *icase;
    if (peek(ps, 0) == '?') {
        int c = peek(ps, 1), d = peek(ps, 2);
        char g[5] = { '(', '?', (char)(c > 0 ? c : 0), 0, 0 };
        if (c == '=' || c == '!') {
            ps->pos += 2;
            look = new_node(ps, N_LOOK);
            if (look < 0) return ERR;
            ps->nodes[look].flag = c == '!';
        } else if (c == ':') {
            ps->pos += 2;
        } else if (c == '<' && (d == '=' || d == '!')) {
            g[3] = (char)d;
            return unsupported(ps, at, g, d == '=' ? "lookbehind" : "negative lookbehind");
        } else if (c == '<' || c == '\'' || c == 'P') {
            return unsupported(ps, at, g, "named group");
        } else if (c == '>') { return unsupported(ps, at, g, "atomic group");
        } else if (c == '(') { return unsupported(ps, at, g, "conditional");
        } else if (c == '~') { return unsupported(ps, at, g, "absent operator");
        } else if (c == '@') { return unsupported(ps, at, g, "capture history");
        } else if (c == '{') { return unsupported(ps, at, g, "code");
        } else if (c == '|') { return unsupported(ps, at, g, "branch reset");
        } else if (c == '-' || (c >= 'a' && c <= 'z')) {
            ps->pos++;    /* to the flags */
            if (parse_flags(ps, at, &inner_icase)) return ERR;
            if (peek(ps, 0) == ')') {
                ps->pos++;
                *icase = inner_icase;
                *isolated = true;
                return NOTHING;
            }
            ps->pos++;    /* ':' */
        } else {
            return c < 0 ? fail_at(ps, at, "missing )") : unsupported(ps, at, g, "unknown group");
        }
    }
    int32_t body = parse_alt(ps, inner_icase, depth + 1);
    if (body < 0) return ERR;
    if (peek(ps, 0) != ')') return fail_at(ps, at, "missing )");
    ps->pos++;
    if (look < 0) return body;
    ps->nodes[look].child = body;
    return look;
}

/* {m,n} {m,} {m} {,n} at ps->pos; 1 with the bounds, 0 when it is no interval (a literal '{'). */
static int parse_interval(parser *ps, uint32_t *min, uint32_t *max, bool *exact) {
    size_t at = ps->pos, p = ps->pos + 1;
    uint64_t v[2] = { 0, 0 };
    int digits[2] = { 0, 0 }, part = 0;
    for (; p < ps->len; p++) {
        char c = ps->src[p];
        if (c >= '0' && c <= '9') {
            if (v[part] <= REGEX_MAX_REPEAT) v[part] = v[part] * 10 + (uint64_t)(c - '0');
            digits[part]++;
        } else if (c == ',' && part == 0) {
            part = 1;
        } else if (c == '}') {
            break;
        } else {
            return 0;
        }
    }
    if (p >= ps->len || (!digits[0] && !digits[1])) return 0;
    *exact = part == 0;
    *min = (uint32_t)(digits[0] ? v[0] : 0);
    *max = part == 0 ? *min : digits[1] ? (uint32_t)(v[1] > REGEX_MAX_REPEAT ? REGEX_MAX_REPEAT + 1 : v[1]) : INF;
    if (v[0] > REGEX_MAX_REPEAT || (*max != INF && *max > REGEX_MAX_REPEAT))
        return fail_at(ps, at, "repeat count above %d", REGEX_MAX_REPEAT);
    if (*max != INF && *min > *max) return fail_at(ps, at, "bad repeat range \"%.*s\"", (int)(p + 1 - at), ps->src + at);
    ps->pos = p + 1;
    return 1;
}

/* Quantifiers after an atom (they stack, as in Oniguruma: a{2}+ is (?:a{2})+). */
static int32_t parse_quantifiers(parser *ps, int32_t atom) {
    for (int stacked = 0;; stacked++) {
        int sk = skip_comment(ps);
        if (sk < 0) return ERR;
        if (sk) { stacked--; continue; }
        size_t at = ps->pos;
        int c = peek(ps, 0);
        uint32_t min, max;
        bool exact = false;
        if (c == '*') { min = 0; max = INF; ps->pos++; }
        else if (c == '+') { min = 1; max = INF; ps->pos++; }
        else if (c == '?') { min = 0; max = 1; ps->pos++; }
        else if (c == '{') {
            int r = parse_interval(ps, &min, &max, &exact);
            if (r < 0) return ERR;
            if (r == 0) return atom;
        } else {
            return atom;
        }
        if (atom == NOTHING) return fail_at(ps, at, "nothing to repeat");
        int k = ps->nodes[atom].kind;
        if (k == N_LOOK || k == N_ASSERT) return fail_at(ps, at, "quantifier after a lookahead or anchor");
        if (stacked >= REGEX_MAX_DEPTH) return fail_at(ps, at, "nesting deeper than %d", REGEX_MAX_DEPTH);
        bool greedy = true;
        if (!exact && peek(ps, 0) == '?') { greedy = false; ps->pos++; }
        else if (c != '{' && peek(ps, 0) == '+') {
            char q[3] = { (char)c, '+', 0 };
            return unsupported(ps, at, q, "possessive quantifier");
        }
        int32_t r = new_node(ps, N_REPEAT);
        if (r < 0) return ERR;
        ps->nodes[r].child = atom;
        ps->nodes[r].min = min;
        ps->nodes[r].max = max;
        ps->nodes[r].flag = greedy;
        atom = r;
    }
}

/* One atom at ps->pos (not '|' or ')'), or NOTHING for a comment; *isolated as parse_group. */
static int32_t parse_atom(parser *ps, bool *icase, int depth, bool *isolated) {
    size_t at = ps->pos;
    *isolated = false;
    int c = peek(ps, 0);
    switch (c) {
    case '(': {
        int sk = skip_comment(ps);
        if (sk) return sk < 0 ? ERR : NOTHING;
        return parse_group(ps, icase, depth, isolated);
    }
    case '[': return parse_class(ps, *icase);
    case '.': ps->pos++; return new_node(ps, N_ANY);
    case '^': ps->pos++; return leaf(ps, N_ASSERT, OP_BOL);
    case '$': ps->pos++; return leaf(ps, N_ASSERT, OP_EOL);
    case '*': case '+': case '?': return fail_at(ps, at, "nothing to repeat");
    case '{': {
        uint32_t a, b;
        bool e;
        int r = parse_interval(ps, &a, &b, &e);
        if (r != 0) return r < 0 ? ERR : fail_at(ps, at, "nothing to repeat");
        ps->pos++;
        return literal(ps, '{', *icase);
    }
    case '\\': {
        uint32_t cp;
        int kind = escape(ps, false, &cp);
        if (kind == ERR) return ERR;
        if (kind == ESC_ASSERT) return leaf(ps, N_ASSERT, cp);
        if (kind == ESC_SET) {
            int32_t k = finish_class(ps, false, *icase);
            return k < 0 ? ERR : leaf(ps, N_CLASS, (uint32_t)k);
        }
        return literal(ps, cp, *icase);
    }
    default:
        return literal(ps, take_cp(ps), *icase);
    }
}

/* A sequence up to '|', ')' or the end. */
static int32_t parse_seq(parser *ps, bool icase, int depth) {
    int32_t cat = new_node(ps, N_CAT), last = -1;
    if (cat < 0) return ERR;
    while (ps->pos < ps->len && peek(ps, 0) != '|' && peek(ps, 0) != ')') {
        bool isolated;
        int32_t atom = parse_atom(ps, &icase, depth, &isolated);
        if (atom == ERR) return ERR;
        if (isolated) {   /* (?i) or (?-i): the rest of the group, alternatives included */
            int32_t rest = parse_alt(ps, icase, depth + 1);
            if (rest < 0) return ERR;
            add_child(ps, cat, &last, rest);
            break;
        }
        atom = parse_quantifiers(ps, atom);
        if (atom == ERR) return ERR;
        if (atom != NOTHING) add_child(ps, cat, &last, atom);
    }
    return cat;
}

static int32_t parse_alt(parser *ps, bool icase, int depth) {
    if (depth > REGEX_MAX_DEPTH) return fail_at(ps, ps->pos, "nesting deeper than %d", REGEX_MAX_DEPTH);
    int32_t first = parse_seq(ps, icase, depth);
    if (first < 0 || peek(ps, 0) != '|') return first;
    int32_t alt = new_node(ps, N_ALT), last = -1;
    if (alt < 0) return ERR;
    add_child(ps, alt, &last, first);
    while (peek(ps, 0) == '|') {
        ps->pos++;
        int32_t next = parse_seq(ps, icase, depth);
        if (next < 0) return ERR;
        add_child(ps, alt, &last, next);
    }
    return alt;
}

/* The literal code point an alternative starts with (its N_CHAR node), or -1. */
static int32_t leading_char(const node *t, int32_t c) {
    if (t[c].kind == N_CHAR) return c;
    if (t[c].kind == N_CAT && t[c].child >= 0 && t[t[c].child].kind == N_CHAR) return t[c].child;
    return -1;
}

/* Consecutive alternatives starting with the same literal share it: 's|'t|'re becomes '(?:s|t|re),
 * the same matches in the same order, with one alternation picking by the next code point. */
static int factor(parser *ps, int32_t i, int depth) {
    if (depth > 4 * REGEX_MAX_DEPTH) return 0;   /* deeper than any parse tree: a long shared prefix */
    for (int32_t c = ps->nodes[i].child; c >= 0; c = ps->nodes[c].next)
        if (factor(ps, c, depth + 1)) return -1;
    if (ps->nodes[i].kind != N_ALT) return 0;
    int32_t prev = -1;   /* the alternative before the run */
    for (int32_t c = ps->nodes[i].child; c >= 0;) {
        int32_t lead = leading_char(ps->nodes, c), end = ps->nodes[c].next, k = 1;
        while (lead >= 0 && end >= 0 && leading_char(ps->nodes, end) >= 0 &&
               ps->nodes[leading_char(ps->nodes, end)].v == ps->nodes[lead].v) {
            end = ps->nodes[end].next;
            k++;
        }
        if (k < 2) { prev = c; c = end; continue; }
        /* alternatives c .. (before end) become CAT(lead, ALT(rest, ...)) */
        int32_t alt = new_node(ps, N_ALT), last = -1;
        if (alt < 0) return -1;
        for (int32_t a = c; a != end;) {
            int32_t next = ps->nodes[a].next, rest = new_node(ps, N_CAT);
            if (rest < 0) return -1;
            int32_t l = leading_char(ps->nodes, a);
            ps->nodes[rest].child = ps->nodes[a].kind == N_CAT ? ps->nodes[l].next : -1;
            add_child(ps, alt, &last, rest);
            a = next;
        }
        int32_t cat = new_node(ps, N_CAT), head = new_node(ps, N_CHAR);
        if (cat < 0 || head < 0) return -1;
        ps->nodes[head].v = ps->nodes[lead].v;
        ps->nodes[cat].child = head;
        ps->nodes[head].next = alt;
        ps->nodes[cat].next = end;
        if (prev < 0) ps->nodes[i].child = cat;
        else ps->nodes[prev].next = cat;
        if (factor(ps, alt, depth + 1)) return -1;
        prev = cat;
        c = end;
    }
    if (ps->nodes[ps->nodes[i].child].next < 0) {   /* one alternative left: no alternation */
        int32_t only = ps->nodes[i].child;
        int32_t next = ps->nodes[i].next;
        ps->nodes[i] = ps->nodes[only];
        ps->nodes[i].next = next;
    }
    return 0;
}

/* ---- analysis ---------------------------------------------------------------------------------- */

static bool nullable(const node *t, int32_t i) {
    const node *n = &t[i];
    switch (n->kind) {
    case N_CHAR: case N_CLASS: case N_ANY: return false;
    case N_CAT:
        for (int32_t c = n->child; c >= 0; c = t[c].next)
            if (!nullable(t, c)) return false;
        return true;
    case N_ALT:
        for (int32_t c = n->child; c >= 0; c = t[c].next)
            if (nullable(t, c)) return true;
        return false;
    case N_REPEAT: return n->min == 0 || nullable(t, n->child);
    default: return true;   /* empty, anchors, lookaheads */
    }
}

static bool single(const node *n) { return n->kind == N_CHAR || n->kind == N_CLASS || n->kind == N_ANY; }

/* Node i, or the item it holds when it is a sequence of one (a group's body is parsed as a
 * sequence: (?!\S) holds one). */
static int32_t sole_item(const node *t, int32_t i) {
    while (t[i].kind == N_CAT && t[i].child >= 0 && t[t[i].child].next < 0) i = t[i].child;
    return i;
}

/* Instructions node i compiles to (saturating above REGEX_MAX_PROGRAM). */
static uint64_t size_of(const node *t, int32_t i, bool fast) {
    const node *n = &t[i];
    uint64_t s = 0, k = 0;
    switch (n->kind) {
    case N_EMPTY: return 0;
    case N_CAT: case N_ALT:
        for (int32_t c = n->child; c >= 0; c = t[c].next, k++) s += size_of(t, c, fast);
        s += n->kind == N_ALT && k ? 2 * (k - 1) : 0;
        break;
    case N_LOOK: s = size_of(t, n->child, fast) + 2; break;
    case N_REPEAT: {
        if (fast && single(&t[n->child])) return 1;
        uint64_t body = size_of(t, n->child, fast);
        s = n->min * body;
        if (n->max == INF) s += body + 2 + (nullable(t, n->child) ? 2 : 0);
        else s += (uint64_t)(n->max - n->min) * (body + 1);
        break;
    }
    default: return 1;
    }
    return s > REGEX_MAX_PROGRAM ? REGEX_MAX_PROGRAM + 1 : s;
}

/* The code points a match of node i can start with, gathered as a superset: exact for ASCII; for
 * the rest, the categories and ranges of the classes involved (all code points once a negated or
 * case-insensitive class or `.` is involved). */
typedef struct first_set {
    uint32_t ascii[4];
    uint32_t cats;
    uint8_t space;
    uint32_t (*r)[2];
    size_t n, cap;
    bool oom;
} first_set;

static void first_range(first_set *f, uint32_t lo, uint32_t hi) {
    if (f->n == f->cap) {
        size_t cap = f->cap ? 2 * f->cap : 16;
        void *r = realloc(f->r, cap * sizeof *f->r);
        if (!r) { f->oom = true; return; }
        f->r = r;
        f->cap = cap;
    }
    f->r[f->n][0] = lo;
    f->r[f->n][1] = hi;
    f->n++;
}

/* Adds node i's first code points; returns whether it can match empty (then what follows counts too). */
static bool first_add(const regex *re, const node *t, int32_t i, first_set *f) {
    const node *n = &t[i];
    switch (n->kind) {
    case N_CHAR:
        if (n->v < 128) f->ascii[n->v >> 5] |= 1u << (n->v & 31);
        else first_range(f, n->v, n->v);
        return false;
    case N_ANY:
        memset(f->ascii, 0xFF, sizeof f->ascii);
        f->ascii['\n' >> 5] &= ~(1u << ('\n' & 31));
        f->cats = CATS_ALL;
        return false;
    case N_CLASS: {
        const re_class *k = &re->classes[n->v];
        for (int w = 0; w < 4; w++) f->ascii[w] |= k->ascii[w];
        if (k->negated || k->icase) {
            f->cats = CATS_ALL;
        } else {
            f->cats |= k->cats;
            f->space |= k->space;
            for (uint32_t j = 0; j < k->nranges; j++)
                if (re->ranges[k->range0 + j][1] >= 128) first_range(f, re->ranges[k->range0 + j][0], re->ranges[k->range0 + j][1]);
        }
        return false;
    }
    case N_CAT:
        for (int32_t c = n->child; c >= 0; c = t[c].next)
            if (!first_add(re, t, c, f)) return false;
        return true;
    case N_ALT: {
        bool empty = false;
        for (int32_t c = n->child; c >= 0; c = t[c].next) empty |= first_add(re, t, c, f);
        return empty;
    }
    case N_REPEAT: return first_add(re, t, n->child, f) || n->min == 0;
    default: return true;
    }
}

/* Set f as a class (freeing f), or -1 when empty (it can match empty) or f holds everything. */
static int32_t first_set_class(regex *re, first_set *f, bool empty, bool *oom) {
    int32_t k = -1;
    bool all = f->cats == CATS_ALL;
    for (int w = 0; w < 4; w++) all = all && f->ascii[w] == 0xFFFFFFFFu;
    if (f->oom) *oom = true;
    else if (!empty && !all) {
        k = make_class(re, f->r, f->n, f->cats, f->space, false, false);
        if (k >= 0) {   /* exact for ASCII */
            memcpy(re->classes[k].ascii, f->ascii, sizeof f->ascii);
            class_seal(re, &re->classes[k]);
        }
        else *oom = true;
    }
    free(f->r);
    return k;
}

/* The first-code-point class of node i (with list: of i and its next siblings in sequence), or -1
 * when it can match empty or start with anything. */
static int32_t first_class(regex *re, const node *t, int32_t i, bool list, bool *oom) {
    first_set f = { 0 };
    bool empty = true;
    for (int32_t c = i; c >= 0 && empty; c = list ? t[c].next : -1) empty = first_add(re, t, c, &f);
    return first_set_class(re, &f, empty, oom);
}

/* ---- code generation --------------------------------------------------------------------------- */

typedef struct emitter {
    regex *re;
    const node *t;
    program *pr;
    bool fast, oom;
    int unsafe;          /* > 0 inside a loop body that can match empty or a lookahead: no memo */
    int32_t *classes;    /* per node: its guard class (first code points) or RUN class; -2 unknown */
} emitter;

static uint32_t emit(emitter *e, int op, uint32_t a, uint32_t b, uint32_t c) {
    program *p = e->pr;
    p->code[p->len] = (re_inst){ .op = (uint8_t)op, .memo = e->unsafe == 0, .guard = -1, .a = a, .b = b, .c = c };
    return p->len++;
}

/* The class a single-code-point node i tests, for a run. */
static int32_t single_class(emitter *e, int32_t i) {
    const node *n = &e->t[i];
    if (n->kind == N_CLASS) return (int32_t)n->v;
    if (e->classes[i] == -2) {
        uint32_t r[1][2] = { { n->kind == N_CHAR ? n->v : '\n', n->kind == N_CHAR ? n->v : '\n' } };
        e->classes[i] = make_class(e->re, r, 1, 0, 0, n->kind == N_ANY, false);
    }
    return e->classes[i];
}

/* A SPLIT preferring node i's branch skips it when the code point at hand cannot start it. */
static void guard(emitter *e, uint32_t split, int32_t i) {
    if (e->classes[i] == -2) e->classes[i] = first_class(e->re, e->t, i, false, &e->oom);
    e->pr->code[split].guard = e->classes[i];
}

/* In the fast program, node i is a step of a SEQ: one code point test or a greedy repeat of one. */
static bool seq_item(const emitter *e, int32_t i) {
    const node *n = &e->t[i];
    return e->fast && (single(n) || (n->kind == N_REPEAT && n->flag && single(&e->t[n->child])));
}

static void add_step(emitter *e, int32_t i) {
    const node *n = &e->t[i];
    bool rep = n->kind == N_REPEAT;
    int32_t k = single_class(e, rep ? n->child : i);
    regex *re = e->re;
    re_step *st = grow(re->steps, &re->cap_steps, sizeof *st, re->n_steps + 1);
    if (k < 0 || !st) { e->oom = true; return; }
    re->steps = st;
    st[re->n_steps++] = (re_step){ (uint32_t)k, rep ? n->min : 1, !rep ? 1 : n->max == INF ? SIZE_MAX : n->max, true, -1, NULL, NULL };
}

/* The code points the steps after step node i of a run (ending before node end) can start with, up
 * to the first step that cannot match empty: a code point given back by step i that is not one of
 * them cannot help. -1 when there is no such step among the next FOLLOW_MAX or it is everything. */
#define FOLLOW_MAX 8
static int32_t follow_class(emitter *e, int32_t i, int32_t end) {
    first_set f = { 0 };
    bool empty = true;
    int k = 0;
    for (int32_t c = e->t[i].next; c != end && empty && k < FOLLOW_MAX; c = e->t[c].next, k++)
        empty = first_add(e->re, e->t, c, &f);
    return first_set_class(e->re, &f, empty, &e->oom);
}

/* Whether no code point is in both classes (false when unsure: ranges or case folding beyond ASCII). */
static bool disjoint(const regex *re, const re_class *a, const re_class *b) {
    for (int w = 0; w < 4; w++)
        if (a->ascii[w] & b->ascii[w]) return false;
    if (!a->plain || !b->plain) return false;
    return (a->member & b->member) == 0;
}

/* The switch table of alternation node i (targets filled in by the caller), or -1 when it has more
 * than SWITCH_MAX alternatives. */
static int32_t switch_table(emitter *e, int32_t i) {
    const node *t = e->t;
    uint32_t k = 0;
    for (int32_t c = t[i].child; c >= 0; c = t[c].next) k++;
    regex *re = e->re;
    re_switch *ws = k <= SWITCH_MAX ? grow(re->switches, &re->cap_switches, sizeof *ws, re->n_switches + 1) : NULL;
    if (!ws) {
        if (k <= SWITCH_MAX) e->oom = true;
        return -1;
    }
    re->switches = ws;
    re_switch *w = &ws[re->n_switches];
    memset(w, 0, sizeof *w);
    w->n = k;
    k = 0;
    for (int32_t c = t[i].child; c >= 0; c = t[c].next, k++) {
        if (e->classes[c] == -2) e->classes[c] = first_class(re, t, c, false, &e->oom);
        uint64_t bit = (uint64_t)1 << k;
        int32_t g = e->classes[c];
        w->guard[k] = g;
        if (g < 0) { w->always |= bit; continue; }
        const re_class *f = &re->classes[g];   /* plain: categories, White_Space, ranges */
        for (uint32_t ch = 0; ch < 128; ch++)
            if ((f->ascii[ch >> 5] >> (ch & 31)) & 1) w->ascii[ch] |= bit;
        for (int cat = 0; cat < UNICODE_CATEGORY_COUNT; cat++)
            for (int sp = 0; sp < 2; sp++)
                if (((f->cats >> cat) & 1) || (f->space & (sp ? SPACE_IN : SPACE_OUT))) w->cat[cat][sp] |= bit;
        if (!f->plain) w->slow |= bit;
        /* X?R: where the code point cannot start R, R must start on the next one */
        int32_t x = t[c].kind == N_CAT ? t[c].child : -1;
        if (x < 0 || t[x].kind != N_REPEAT || t[x].min != 0 || t[x].max != 1 || !single(&t[t[x].child]) || t[x].next < 0)
            continue;
        int32_t r = first_class(re, t, t[x].next, true, &e->oom);
        if (r < 0) continue;
        const re_class *rc = &re->classes[r];
        w->rest[k] = r;
        for (uint32_t ch = 0; ch < 128; ch++) {
            if (!((rc->ascii[ch >> 5] >> (ch & 31)) & 1)) w->next_ascii[ch] |= bit;
            else w->rest_ascii[ch] |= bit;
        }
        for (int cat = 0; cat < UNICODE_CATEGORY_COUNT; cat++)
            for (int sp = 0; sp < 2; sp++) {
                bool in = (rc->member >> (cat * 2 + sp)) & 1;
                if (rc->plain && !in) w->next_cat[cat][sp] |= bit;
                if (in) w->rest_cat[cat][sp] |= bit;
            }
        if (!rc->plain) w->rest_slow |= bit;
    }
    for (uint32_t ch = 0; ch < 128; ch++) w->ascii[ch] |= w->always;
    for (int cat = 0; cat < UNICODE_CATEGORY_COUNT; cat++) {
        w->cat[cat][0] |= w->always;
        w->cat[cat][1] |= w->always;
    }
    return (int32_t)re->n_switches++;
}

static void emit_node(emitter *e, int32_t i) {
    const node *t = e->t, *n = &t[i];
    re_inst *code = e->pr->code;
    switch (n->kind) {
    case N_EMPTY: break;
    case N_CHAR: emit(e, OP_CHAR, n->v, 0, 0); break;
    case N_CLASS: emit(e, OP_CLASS, n->v, 0, 0); break;
    case N_ANY: emit(e, OP_ANY, 0, 0, 0); break;
    case N_ASSERT: emit(e, (int)n->v, 0, 0, 0); break;
    case N_CAT:
        for (int32_t c = n->child; c >= 0;) {
            if (!seq_item(e, c)) {
                emit_node(e, c);
                c = t[c].next;
                continue;
            }
            uint32_t first = e->re->n_steps, count = 0;
            int32_t run = c;
            for (; c >= 0 && seq_item(e, c); c = t[c].next, count++) add_step(e, c);
            for (uint32_t j = first; !e->oom && j + 1 < first + count; j++, run = t[run].next) {
                re_step *st = e->re->steps;
                st[j].next = st[j + 1].min > 0 ? (int32_t)st[j + 1].cls : follow_class(e, run, c);
                st = e->re->steps;
                if (st[j].next >= 0 && disjoint(e->re, &e->re->classes[st[j].cls], &e->re->classes[st[j].next]))
                    st[j].keep = false;   /* [^\p{L}]?\p{L}+: no giving back */
            }
            emit(e, OP_SEQ, first, count, 0);
        }
        break;
    case N_ALT: {
        uint32_t jumps = UINT32_MAX;   /* the JMPs to the end, chained through their targets */
        int32_t w = switch_table(e, i);
        if (w >= 0) {
            emit(e, OP_SWITCH, (uint32_t)w, 0, 0);
            uint32_t k = 0;
            for (int32_t c = n->child; c >= 0; c = t[c].next, k++) {
                e->re->switches[w].target[k] = e->pr->len;
                emit_node(e, c);
                if (t[c].next >= 0) jumps = emit(e, OP_JMP, jumps, 0, 0);
            }
        }
        for (int32_t c = n->child; w < 0 && c >= 0; c = t[c].next) {
            if (t[c].next < 0) { emit_node(e, c); break; }
            uint32_t split = emit(e, OP_SPLIT, 0, 0, 0);
            code[split].a = split + 1;
            guard(e, split, c);
            emit_node(e, c);
            jumps = emit(e, OP_JMP, jumps, 0, 0);
            code[split].b = e->pr->len;
        }
        while (jumps != UINT32_MAX) {
            uint32_t prev = code[jumps].a;
            code[jumps].a = e->pr->len;
            jumps = prev;
        }
        break;
    }
    case N_LOOK: {
        int32_t body = sole_item(t, n->child);
        if (single(&t[body])) {   /* (?!\S): one test, no frames */
            int32_t k = single_class(e, body);
            if (k < 0) e->oom = true;
            else emit(e, OP_AHEAD, (uint32_t)k, n->flag, 0);
            e->pr->budget_len += 2;
            break;
        }
        uint32_t look = emit(e, OP_LOOK, 0, n->flag, 0);
        e->unsafe++;
        emit_node(e, n->child);
        emit(e, OP_LOOK_END, 0, 0, 0);
        e->unsafe--;
        code[look].a = e->pr->len;
        break;
    }
    case N_REPEAT: {
        const node *body = &t[n->child];
        if (seq_item(e, i)) {
            emit(e, OP_SEQ, e->re->n_steps, 1, 0);
            add_step(e, i);
            break;
        }
        if (e->fast && single(body)) {
            int32_t k = single_class(e, n->child);
            if (k < 0) { e->oom = true; break; }
            emit(e, OP_RUN_LAZY, (uint32_t)k, n->min, n->max);
            break;
        }
        for (uint32_t r = 0; r < n->min; r++) emit_node(e, n->child);
        if (n->max == INF) {
            bool empty = nullable(t, n->child);
            uint32_t loop = emit(e, OP_SPLIT, 0, 0, 0), progress = 0, slot = 0;
            uint32_t start = e->pr->len;
            if (empty) {
                slot = e->pr->n_slots++;
                emit(e, OP_SAVE, slot, 0, 0);
                e->unsafe++;
            }
            emit_node(e, n->child);
            if (empty) {
                progress = emit(e, OP_PROGRESS, slot, 0, 0);
                e->unsafe--;
            }
            emit(e, OP_JMP, loop, 0, 0);
            uint32_t out = e->pr->len;
            if (empty) code[progress].b = out;
            code[loop].a = n->flag ? start : out;
            code[loop].b = n->flag ? out : start;
            if (n->flag) guard(e, loop, n->child);
        } else {
            uint32_t first = e->pr->len, count = n->max - n->min;
            for (uint32_t r = 0; r < count; r++) {
                emit(e, OP_SPLIT, 0, 0, 0);
                emit_node(e, n->child);
            }
            uint32_t end = e->pr->len, body_len = count ? (end - first) / count : 0;
            for (uint32_t r = 0; r < count; r++) {
                uint32_t split = first + r * body_len;
                code[split].a = n->flag ? split + 1 : end;
                code[split].b = n->flag ? end : split + 1;
                if (n->flag) guard(e, split, n->child);
            }
        }
        break;
    }
    }
}

/* Where a jump to pc really goes (a chain of JMPs has no cycle: every loop holds a SPLIT). */
static uint32_t resolve(const re_inst *code, uint32_t pc) {
    while (code[pc].op == OP_JMP) pc = code[pc].a;
    return pc;
}

/* Whether the program from pc always reaches MATCH, from any position (depth bounds the look
 * through SPLITs, whose branches may loop back; a guarded branch may be skipped). */
static bool infallible(const regex *re, const re_inst *code, uint32_t pc, int depth) {
    const re_inst *in = &code[pc];
    switch (in->op) {
    case OP_MATCH: return true;
    case OP_SPLIT:
        return depth > 0 && (infallible(re, code, in->b, depth - 1) ||
                             (in->guard < 0 && infallible(re, code, in->a, depth - 1)));
    case OP_SEQ:
        for (uint32_t j = 0; j < in->b; j++)
            if (re->steps[in->a + j].min) return false;
        return depth > 0 && infallible(re, code, in->next, depth - 1);
    case OP_RUN_LAZY: return in->b == 0 && depth > 0 && infallible(re, code, in->next, depth - 1);
    default: return false;
    }
}

static int compile_program(regex *re, const node *t, uint32_t n_nodes, int32_t root, bool fast, program *out) {
    uint64_t size = size_of(t, root, fast) + 1;
    out->code = calloc(size, sizeof *out->code);
    int32_t *classes = malloc(n_nodes * sizeof *classes);
    if (!out->code || !classes) { free(classes); return -1; }
    for (uint32_t i = 0; i < n_nodes; i++) classes[i] = -2;
    emitter e = { .re = re, .t = t, .pr = out, .fast = fast, .classes = classes };
    emit_node(&e, root);
    emit(&e, OP_MATCH, 0, 0, 0);
    out->budget_len += out->len;
    free(classes);
    re_inst *code = out->code;
    for (uint32_t pc = 0; pc < out->len; pc++) {   /* fewer dispatches: no JMP is ever run */
        re_inst *in = &code[pc];
        if (in->op != OP_MATCH && in->op != OP_JMP) in->next = resolve(code, pc + 1);
        if (in->op == OP_SPLIT) { in->a = resolve(code, in->a); in->b = resolve(code, in->b); }
        if (in->op == OP_PROGRESS) in->b = resolve(code, in->b);
        if (in->op == OP_LOOK) in->a = resolve(code, in->a);
        if (in->op == OP_SEQ && code[in->next].op == OP_MATCH) in->c = 1;   /* saves a dispatch per match */
        if (in->op == OP_SPLIT) in->c = code[in->b].op == OP_MATCH;
        if (in->op == OP_SWITCH)
            for (uint32_t k = 0; k < re->switches[in->a].n; k++)
                re->switches[in->a].target[k] = resolve(code, re->switches[in->a].target[k]);
    }
    for (uint32_t pc = 0; !e.oom && pc < out->len; pc++) {
        re_inst *in = &code[pc];
        if (in->op == OP_SEQ) {
            /* A run's frame is only popped when something after it fails: not when the later
             * steps may all match empty and what follows the SEQ cannot fail. */
            bool rest_infallible = infallible(re, code, in->next, 8);
            for (uint32_t j = in->b; j-- > 0;) {
                re_step *st = &re->steps[in->a + j];
                if (rest_infallible) st->keep = false;
                rest_infallible = rest_infallible && st->min == 0;
            }
        }
    }
    for (uint32_t pc = 0; !e.oom && pc < out->len; pc++) {
        re_switch *w = code[pc].op == OP_SWITCH ? &re->switches[code[pc].a] : NULL;
        for (uint32_t k = 0; w && k < w->n; k++) {
            const re_inst *alt = &code[w->target[k]];
            if (alt->op != OP_SEQ) continue;
            bool simple = alt->c;
            for (uint32_t j = 0; simple && j < alt->b; j++) simple = !re->steps[alt->a + j].keep;
            const re_inst *after = &code[alt->next];   /* (?i:'s|'t|...)? after o200k's words */
            bool tail = !alt->c && after->op == OP_SPLIT && after->c && after->guard >= 0;
            if (simple) w->simple |= (uint64_t)1 << k;
            else if (alt->c || tail) w->checked |= (uint64_t)1 << k;
        }
    }
    return e.oom ? -1 : 0;
}

void regex_free(regex *re) {
    if (!re) return;
    free(re->switches);
    free(re->steps);
    free(re->fast.code);
    free(re->memo.code);
    free(re->classes);
    free(re->ranges);
    free(re);
}

int regex_compile(const char *pattern, size_t len, regex **out, ts_error *err) {
    *out = NULL;
    if (len > REGEX_MAX_PATTERN) return ts_fail(err, "regex: pattern longer than %d bytes", REGEX_MAX_PATTERN);
    size_t bad;
    if (!utf8_valid(pattern, len, &bad)) return ts_fail(err, "regex: invalid UTF-8 at offset %zu", bad);
    regex *re = calloc(1, sizeof *re);
    if (!re) return ts_fail(err, "regex: out of memory");
    parser ps = { .src = pattern, .len = len, .err = err, .re = re };
    int32_t root = parse_alt(&ps, false, 0);
    if (root >= 0 && ps.pos < ps.len) root = fail_at(&ps, ps.pos, "unmatched )");
    if (root >= 0 && factor(&ps, root, 0)) root = fail_at(&ps, ps.pos, "out of memory");
    int rc = root < 0 ? -1 : 0;
    if (rc == 0) {
        uint64_t fast = size_of(ps.nodes, root, true), memo = size_of(ps.nodes, root, false);
        if (fast > REGEX_MAX_PROGRAM || memo > REGEX_MAX_PROGRAM)
            rc = ts_fail(err, "regex: pattern too large (over %d instructions once repeats are expanded)", REGEX_MAX_PROGRAM);
    }
    if (rc == 0) {
        bool oom = false;
        re->first = first_class(re, ps.nodes, root, false, &oom);
        if (oom || compile_program(re, ps.nodes, ps.n_nodes, root, true, &re->fast) ||
            compile_program(re, ps.nodes, ps.n_nodes, root, false, &re->memo))
            rc = ts_fail(err, "regex: out of memory");
        for (uint32_t i = 0; rc == 0 && i < re->n_steps; i++) {
            re->steps[i].k = &re->classes[re->steps[i].cls];
            re->steps[i].follow = re->steps[i].next >= 0 ? &re->classes[re->steps[i].next] : NULL;
        }
        for (uint32_t i = 0; rc == 0 && i < re->n_switches; i++) {
            re_switch *w = &re->switches[i];
            for (uint32_t k = 0; k < w->n; k++)
                if (((w->simple | w->checked) >> k) & 1) {
                    const re_inst *alt = &re->fast.code[w->target[k]], *after = &re->fast.code[alt->next];
                    w->seq[k] = re->steps + alt->a;
                    w->seq_len[k] = alt->b;
                    w->tail_class[k] = alt->c ? NULL : &re->classes[after->guard];
                }
        }
    }
    free(ps.nodes);
    free(ps.tmp);
    if (rc) { regex_free(re); return -1; }
    *out = re;
    return 0;
}

/* ---- matching ---------------------------------------------------------------------------------- */

#if defined(__GNUC__) || defined(__clang__)
#define ALWAYS_INLINE inline __attribute__((always_inline))
#define UNLIKELY(x) __builtin_expect(!!(x), 0)
#else
#define ALWAYS_INLINE inline
#define UNLIKELY(x) (x)
#endif

/* Work caps (see regex.h), per call of regex_search or regex_find_all: steps are instructions
 * run, code points consumed by runs and frames popped. The first budget is generous for linear
 * patterns (a few steps per code point, for a program of one instruction); the memo budget covers
 * one visit per (instruction, position) four times over. */
#define STEP_FLOOR   100000
#define STEP_FACTOR  4
#define MEMO_MAX_BITS ((size_t)1 << 28)   /* 32 MB of memo bits at most */
#define STACK_MAX    ((size_t)1 << 22)    /* backtrack frames */
#define GIVE_BACK_LOOK 16                 /* code points a run checks before it pushes a frame */

enum { R_STEPS = -1, R_NOMEM = -2, R_STACK = -3 };

enum frame_kind { F_ALT, F_SWITCH, F_RUN, F_LAZY, F_UNDO, F_LOOK };
typedef struct frame { uint32_t kind, pc; size_t a, b; } frame;
/* F_ALT: resume at pc, position a.
 * F_RUN | step << 8: a run of the SEQ at pc may give back down to a; it stands at b; after it the
 * SEQ goes on from that step. F_SWITCH: the switch at pc, at position a, has the alternatives of
 * mask b left to try.
 * F_LAZY: the lazy RUN at pc stands at a and may take up to b. F_UNDO: slot pc had value a.
 * F_LOOK: the lookahead at pc started at a; b is the enclosing lookahead's frame (SIZE_MAX: none). */

#define LOCAL_FRAMES 64
#define LOCAL_SLOTS 16

/* The state of one call: backtrack stack, slots, the budget, the find-all state, and in memo mode
 * the bitmap of failed (instruction, position) pairs for positions memo_base .. + memo_window - 1. */
typedef struct scratch {
    frame *st;
    size_t cap;
    size_t *slots;
    uint8_t *memo;
    size_t memo_base, memo_window;
    uint64_t steps, budget;
    regex_matches *out;     /* find-all: where matches go (NULL: stop at the first) */
    bool skip_next_empty;   /* find-all: the last match was not empty */
    frame local[LOCAL_FRAMES];
    size_t local_slots[LOCAL_SLOTS];
} scratch;

static int scratch_init(scratch *sc, const regex *re, size_t n, size_t from, regex_matches *out) {
    memset(sc, 0, offsetof(scratch, local));
    sc->st = sc->local;
    sc->cap = LOCAL_FRAMES;
    sc->slots = sc->local_slots;
    sc->out = out;
    sc->budget = STEP_FLOOR + (uint64_t)STEP_FACTOR * re->fast.budget_len * (n - (from < n ? from : n) + 1);
    uint32_t slots = re->fast.n_slots > re->memo.n_slots ? re->fast.n_slots : re->memo.n_slots;
    if (slots > LOCAL_SLOTS && !(sc->slots = malloc(slots * sizeof *sc->slots))) {
        sc->slots = sc->local_slots;
        return -1;
    }
    return 0;
}

static void scratch_free(scratch *sc) {
    if (sc->st != sc->local) free(sc->st);
    if (sc->slots != sc->local_slots) free(sc->slots);
    free(sc->memo);
}

static int grow_stack(scratch *sc) {
    if (sc->cap >= STACK_MAX) return R_STACK;
    size_t cap = sc->cap * 2;
    frame *st = sc->st == sc->local ? malloc(cap * sizeof *st) : realloc(sc->st, cap * sizeof *st);
    if (!st) return R_NOMEM;
    if (sc->st == sc->local) memcpy(st, sc->local, sizeof sc->local);
    sc->st = st;
    sc->cap = cap;
    return 0;
}

static int add_match(regex_matches *out, size_t s, size_t e) {
    if (out->n == out->cap) {
        size_t cap = out->cap ? 2 * out->cap : 64;
        regex_match *m = realloc(out->m, cap * sizeof *m);
        if (!m) return R_NOMEM;
        out->m = m;
        out->cap = cap;
    }
    out->m[out->n++] = (regex_match){ s, e };
    return 0;
}

/* Index of the lowest set bit of m (m != 0): the compiler's builtin where there is one, else by de
 * Bruijn multiplication. */
static inline int lowest_bit(uint64_t m) {
#if defined(__GNUC__) || defined(__clang__)
    return __builtin_ctzll(m);
#else
    static const uint8_t pos[64] = {
        0, 1, 48, 2, 57, 49, 28, 3, 61, 58, 50, 42, 38, 29, 17, 4, 62, 55, 59, 36, 53, 51, 43, 22,
        45, 39, 33, 30, 24, 18, 12, 5, 63, 47, 56, 27, 60, 41, 37, 16, 54, 35, 52, 21, 44, 32, 23, 11,
        46, 26, 40, 15, 34, 20, 31, 10, 25, 14, 19, 9, 13, 8, 7, 6 };
    return pos[((m & (0 - m)) * 0x03F79D71B4CB0A89ull) >> 58];
#endif
}

/* The alternatives of switch w that can start at pos. */
static inline uint64_t viable(const regex *re, const re_switch *w, const uint32_t *cps, size_t n, size_t pos) {
    if (pos >= n) return w->always;
    uint32_t c = cps[pos];
    uint64_t m, next;
    if (c < 128) {
        m = w->ascii[c];
        next = w->next_ascii[c] & m;
    } else {
        uint16_t e = unicode_entry(c);
        m = w->cat[e >> UNICODE_CATEGORY_SHIFT][(e & UNICODE_WHITESPACE) != 0];
        for (uint64_t s = w->slow & ~m; s; s &= s - 1) {
            int i = lowest_bit(s);
            if (class_has(re, &re->classes[w->guard[i]], c)) m |= (uint64_t)1 << i;
        }
        next = w->next_cat[e >> UNICODE_CATEGORY_SHIFT][(e & UNICODE_WHITESPACE) != 0] & m;
    }
    if (next) {   /* X?R where only X can take c: R must start at pos + 1 */
        uint64_t ok = 0;
        if (pos + 1 < n) {
            uint32_t d = cps[pos + 1];
            if (d < 128) {
                ok = w->rest_ascii[d];
            } else {
                uint16_t e = unicode_entry(d);
                ok = w->rest_cat[e >> UNICODE_CATEGORY_SHIFT][(e & UNICODE_WHITESPACE) != 0];
                for (uint64_t s = next & w->rest_slow & ~ok; s; s &= s - 1) {
                    int i = lowest_bit(s);
                    if (class_has(re, &re->classes[w->rest[i]], d)) ok |= (uint64_t)1 << i;
                }
            }
        }
        m &= ~(next & ~ok);
    }
    return m;
}

#define PUSH(k, p, x, y) do { \
        if (UNLIKELY(sp == sc->cap) && (r = grow_stack(sc)) != 0) goto stop; \
        sc->st[sp++] = (frame){ (k), (p), (x), (y) }; } while (0)

/* Where a frame for step st, whose run went from pos to q, must start giving back: below the last
 * position of the run that can start what follows (q when that is not known or the run is long; a
 * look at no more code points than were just counted). No frame is needed when that is pos + min
 * (' ' in o200k's [^\r\n\p{L}\p{N}]? before letters). */
static inline size_t give_back_top(const regex *re, const re_step *st, const uint32_t *cps, size_t pos, size_t q) {
    size_t top = q, bottom = pos + st->min;
    if (st->follow && q - bottom <= GIVE_BACK_LOOK)
        while (top > bottom && !class_has(re, st->follow, cps[top - 1])) top--;
    return top;
}

/* Runs program pr at each start position from *from on. Without sc->out: 1 with [*from, *end) at
 * the first match, 0 when there is none. With sc->out: every match goes there, onig's find_iter way
 * (an empty match is reported and the next search starts one code point later, except that the
 * first empty match after a non-empty one is dropped), and the result is 0 at the end of the text.
 * R_* when a cap is hit, with *from the start position of the attempt it was hit in. */
static ALWAYS_INLINE int run(const regex *re, const program *pr, scratch *sc, const uint32_t *cps, size_t n,
                             size_t *from, size_t *end, bool memo) {
    const re_inst *code = pr->code, *in;
    const re_class *classes = re->classes;
    const re_class *first = re->first >= 0 ? &classes[re->first] : NULL;
    size_t s = *from, sp, look, pos;
    uint64_t steps = sc->steps;
    const uint64_t budget = sc->budget;
    uint32_t pc, resume = 0;   /* resume: the step a SEQ goes on from after a backtrack */
    /* A SWITCH's frame for the alternatives left (pend, of the switch at pend_pc at pend_pos) is
     * pushed only when the SEQ it went to pushes a frame or goes on to another instruction: a SEQ
     * that fails first moves to the next alternative without touching the stack. */
    uint64_t pend = 0;
    uint32_t pend_pc = 0;
    size_t pend_pos = 0;
    int r = 0;
attempt:
    if (first) {   /* the pattern cannot match empty: it starts on a code point of `first` */
        while (s < n && !class_has(re, first, cps[s])) s++;
        if (s == n) goto stop;
    }
    pos = s;
    pc = 0;
    sp = 0;
    look = SIZE_MAX;
    for (;;) {
        in = &code[pc];
        if (UNLIKELY(++steps > budget)) { r = R_STEPS; goto stop; }
        if (memo && in->memo && pos - sc->memo_base < sc->memo_window) {
            size_t bit = (size_t)pc * sc->memo_window + (pos - sc->memo_base);
            if (sc->memo[bit >> 3] & (1u << (bit & 7))) goto fail;
            sc->memo[bit >> 3] |= (uint8_t)(1u << (bit & 7));
        }
        switch (in->op) {
        case OP_CHAR:
            if (pos >= n || cps[pos] != in->a) goto fail;
            pos++;
            pc = in->next;
            continue;
        case OP_CLASS:
            if (pos >= n || !class_has(re, &classes[in->a], cps[pos])) goto fail;
            pos++;
            pc = in->next;
            continue;
        case OP_ANY:
            if (pos >= n || cps[pos] == '\n') goto fail;
            pos++;
            pc = in->next;
            continue;
        case OP_SEQ:
            pend = 0;
        seq: {
            const re_step *first_step = re->steps + in->a, *last = first_step + in->b;
            for (const re_step *st = first_step + resume; st < last; st++) {
                size_t lim = n - pos < st->max ? n : pos + st->max;
                size_t q = class_run(re, st->k, cps, pos, lim);
                steps += q - pos;
                if (q - pos < st->min) goto seq_fail;
                if (st->keep && q - pos > st->min) {
                    size_t top = give_back_top(re, st, cps, pos, q), bottom = pos + st->min;
                    if (top > bottom) {
                        if (pend) { PUSH(F_SWITCH, pend_pc, pend_pos, pend); pend = 0; }
                        PUSH(F_RUN | (uint32_t)(st - first_step + 1) << 8, pc, bottom, top);
                    }
                }
                pos = q;
            }
            resume = 0;
            if (in->c) goto match;
            pc = in->next;
            in = &code[pc];
            if (in->op == OP_SPLIT && in->c && in->guard >= 0 &&   /* as (?i:'s|...)? after a word */
                (pos >= n || !class_has(re, &classes[in->guard], cps[pos]))) { ++steps; goto match; }
            if (pend) { PUSH(F_SWITCH, pend_pc, pend_pos, pend); pend = 0; }
            if (in->op == OP_SPLIT) { ++steps; goto split; }
            continue;
        seq_fail:
            if (!pend) goto fail;
            if (UNLIKELY(++steps > budget)) { r = R_STEPS; goto stop; }   /* as the switch's frame popped */
            int i = lowest_bit(pend);
            pend &= pend - 1;
            pos = pend_pos;
            pc = re->switches[code[pend_pc].a].target[i];
            in = &code[pc];
            if (in->op == OP_SEQ) { ++steps; goto seq; }
            if (pend) { PUSH(F_SWITCH, pend_pc, pend_pos, pend); pend = 0; }
            continue;
        }
        case OP_RUN_LAZY: {
            const re_class *k = &classes[in->a];
            size_t q = pos;
            while (q - pos < in->b && q < n && class_has(re, k, cps[q])) q++;
            steps += q - pos;
            if (q - pos < in->b) goto fail;
            size_t lim = in->c == INF || n - pos < in->c ? n : pos + in->c;
            if (q < lim) PUSH(F_LAZY, pc, q, lim);
            pos = q;
            pc = in->next;
            continue;
        }
        case OP_SPLIT:
        split:
            if (in->guard >= 0 && (pos >= n || !class_has(re, &classes[in->guard], cps[pos]))) {
                if (in->c) goto match;
                pc = in->b;
                continue;
            }
            PUSH(F_ALT, in->b, pos, 0);
            pc = in->a;
            continue;
        case OP_SWITCH: {
            const re_switch *w = &re->switches[in->a];
            uint64_t m = viable(re, w, cps, n, pos);
            int i;
            for (;;) {
                if (!m) goto fail;
                i = lowest_bit(m);
                m &= m - 1;
                size_t q = pos;
                if ((w->simple >> i) & 1) {
                    /* one SEQ straight to MATCH that never gives back: matches here or not at all */
                    const re_step *st = w->seq[i], *last = st + w->seq_len[i];
                    ++steps;
                    for (; st < last; st++) {
                        size_t p = q, lim = n - p < st->max ? n : p + st->max;
                        q = class_run(re, st->k, cps, p, lim);
                        if (q - p < st->min) break;
                    }
                    steps += q - pos;
                    if (st < last) goto next_alternative;
                } else if ((w->checked >> i) & 1) {
                    /* the same while no run needs a frame and the optional tail cannot start; else
                     * the SEQ instruction goes on from the step at hand */
                    const re_step *st = w->seq[i], *last = st + w->seq_len[i];
                    size_t p = q;
                    ++steps;
                    for (; st < last; st++) {
                        p = q;
                        size_t lim = n - p < st->max ? n : p + st->max;
                        q = class_run(re, st->k, cps, p, lim);
                        if (q - p < st->min) break;
                        if (st->keep && q - p > st->min && give_back_top(re, st, cps, p, q) > p + st->min) break;
                    }
                    steps += q - pos;
                    if (st < last && q - p < st->min) goto next_alternative;
                    if (st < last || (w->tail_class[i] && q < n && class_has(re, w->tail_class[i], cps[q]))) {
                        steps -= st < last ? q - p : 0;   /* counted again there */
                        pend = m;
                        pend_pc = pc;
                        pend_pos = pos;
                        pc = w->target[i];
                        in = &code[pc];
                        resume = (uint32_t)(st - w->seq[i]);
                        pos = st < last ? p : q;
                        goto seq;
                    }
                    if (w->tail_class[i]) ++steps;   /* as the SPLIT */
                } else {
                    break;
                }
                {   /* matched */
                    if (q == pos || pc != 0 || !sc->out || first) { pos = q; goto match; }
                    /* a non-empty match of the top-level alternation (run only at an attempt's start:
                     * no frames, no lookahead): find-all goes on from its end, here rather than
                     * through match and attempt */
                    sc->skip_next_empty = true;
                    if ((r = add_match(sc->out, s, q)) != 0) goto stop;
                    s = pos = q;
                    if (UNLIKELY(++steps > budget)) { r = R_STEPS; goto stop; }   /* as the next dispatch */
                    m = viable(re, w, cps, n, pos);
                    continue;
                }
            next_alternative:
                if (m && ++steps > budget) { r = R_STEPS; goto stop; }   /* as a frame popped */
            }
            uint32_t at = pc;
            pc = w->target[i];
            in = &code[pc];
            if (in->op == OP_SEQ) {   /* the usual case, without a dispatch nor a frame yet */
                pend = m;
                pend_pc = at;
                pend_pos = pos;
                ++steps;
                goto seq;
            }
            if (m) PUSH(F_SWITCH, at, pos, m);
            continue;
        }
        case OP_JMP: pc = in->a; continue;
        case OP_SAVE:
            PUSH(F_UNDO, in->a, sc->slots[in->a], 0);
            sc->slots[in->a] = pos;
            pc = in->next;
            continue;
        case OP_PROGRESS: pc = sc->slots[in->a] == pos ? in->b : in->next; continue;
        case OP_AHEAD:
            if ((pos < n && class_has(re, &classes[in->a], cps[pos])) == !in->b) { pc = in->next; continue; }
            goto fail;
        case OP_LOOK:
            PUSH(F_LOOK, pc, pos, look);
            look = sp - 1;
            pc = in->next;
            continue;
        case OP_LOOK_END: {   /* the lookahead's body matched: drop its alternatives */
            frame f = sc->st[look];
            sp = look;
            look = f.b;
            pos = f.a;
            if (code[f.pc].b) goto fail;
            pc = code[f.pc].a;
            continue;
        }
        case OP_BOL: if (pos == 0 || (cps[pos - 1] == '\n' && pos < n)) { pc = in->next; continue; } goto fail;
        case OP_EOL: if (pos == n || cps[pos] == '\n') { pc = in->next; continue; } goto fail;
        case OP_BOT: if (pos == 0) { pc = in->next; continue; } goto fail;
        case OP_EOT: if (pos == n) { pc = in->next; continue; } goto fail;
        case OP_EOT_NL: if (pos == n || (pos + 1 == n && cps[pos] == '\n')) { pc = in->next; continue; } goto fail;
        case OP_MATCH: goto match;
        }
    fail:
        resume = 0;
        for (;;) {
            if (sp == 0) {   /* no match from s: the next start */
                if (++s > n) goto stop;
                goto attempt;
            }
            if (UNLIKELY(++steps > budget)) { r = R_STEPS; goto stop; }
            frame *f = &sc->st[sp - 1];
            if (f->kind == F_ALT) { pc = f->pc; pos = f->a; sp--; break; }
            if (f->kind == F_SWITCH) {
                int i = lowest_bit(f->b);
                f->b &= f->b - 1;
                pos = f->a;
                pc = re->switches[code[f->pc].a].target[i];
                if (!f->b) sp--;
                break;
            }
            if ((f->kind & 0xFF) == F_RUN) {
                resume = f->kind >> 8;
                int32_t next = re->steps[code[f->pc].a + resume - 1].next;
                size_t p = f->b - 1;
                if (next >= 0) {   /* give back to where the next step can start, at once */
                    const re_class *k = &classes[next];
                    while (p > f->a && !class_has(re, k, cps[p])) p--;
                    steps += f->b - 1 - p;
                    if (!class_has(re, k, cps[p])) { sp--; resume = 0; continue; }
                }
                pos = f->b = p;
                pc = f->pc;
                if (f->b == f->a) sp--;
                break;
            }
            if (f->kind == F_LAZY) {
                const re_inst *lz = &code[f->pc];
                if (f->a < f->b && class_has(re, &classes[lz->a], cps[f->a])) {
                    pos = ++f->a;
                    pc = lz->next;
                    if (f->a == f->b) sp--;
                    break;
                }
                sp--;
                continue;
            }
            if (f->kind == F_UNDO) { sc->slots[f->pc] = f->a; sp--; continue; }
            /* F_LOOK: its body found no match */
            sp--;
            look = f->b;
            if (code[f->pc].b) { pos = f->a; pc = code[f->pc].a; break; }
        }
    }
match:
    if (!sc->out) {
        *from = s;
        *end = pos;
        r = 1;
        goto stop;
    }
    if (memo && pos - sc->memo_base < sc->memo_window) {
        /* The states of the successful path were marked too. Positions only grow along a path and
         * the next search starts at pos or later, so only those at pos could be met again. */
        for (size_t i = 0, bit = pos - sc->memo_base; i < pr->len; i++, bit += sc->memo_window)
            sc->memo[bit >> 3] &= (uint8_t)~(1u << (bit & 7));
    }
    if (s == pos) {
        bool skip = sc->skip_next_empty;
        sc->skip_next_empty = false;
        s = pos + 1;
        if (!skip && (r = add_match(sc->out, pos, pos)) != 0) goto stop;
    } else {
        sc->skip_next_empty = true;
        if ((r = add_match(sc->out, s, pos)) != 0) goto stop;
        s = pos;
    }
    if (s > n) goto stop;
    goto attempt;
stop:
    if (r < 0) *from = s;
    sc->steps = steps;
    return r;
}

/* run's two instances: memo known at compile time keeps its test out of the fast program's loop. */
static int run_fast(const regex *re, scratch *sc, const uint32_t *cps, size_t n, size_t *from, size_t *end) {
    return run(re, &re->fast, sc, cps, n, from, end, false);
}

static int run_memo(const regex *re, scratch *sc, const uint32_t *cps, size_t n, size_t *from, size_t *end) {
    return run(re, &re->memo, sc, cps, n, from, end, true);
}

/* Memo mode from position s on: the bitmap (for as many positions as MEMO_MAX_BITS allows) and
 * the second budget. */
static int enter_memo(const regex *re, scratch *sc, size_t n, size_t s) {
    size_t span = n - s + 1, window = MEMO_MAX_BITS / re->memo.len;
    if (window > span) window = span;
    sc->memo = calloc(((size_t)re->memo.len * window + 7) / 8, 1);
    if (!sc->memo) return R_NOMEM;
    sc->memo_base = s;
    sc->memo_window = window;
    sc->steps = 0;
    sc->budget = STEP_FLOOR + (uint64_t)STEP_FACTOR * re->memo.budget_len * span;
    return 0;
}

/* Matching from *from on (see run). When the fast program runs out of budget, matching goes on
 * from the start position of that attempt with the memo program, for the rest of the call. */
static int search(const regex *re, scratch *sc, const uint32_t *cps, size_t n, size_t *from, size_t *end) {
    if (*from > n) return 0;
    int r = run_fast(re, sc, cps, n, from, end);
    if (r != R_STEPS) return r;
    if ((r = enter_memo(re, sc, n, *from)) != 0) return r;
    return run_memo(re, sc, cps, n, from, end);
}

static int result_error(int r, ts_error *err) {
    if (r == R_NOMEM) return ts_fail(err, "regex: out of memory");
    if (r == R_STACK) return ts_fail(err, "regex: backtrack stack limit exceeded");
    return ts_fail(err, "regex: step limit exceeded");
}

int regex_search(const regex *re, const uint32_t *cps, size_t n, size_t from, size_t *start,
                 size_t *end, ts_error *err) {
    scratch sc;
    int r = scratch_init(&sc, re, n, from, NULL) ? R_NOMEM : search(re, &sc, cps, n, &from, end);
    scratch_free(&sc);
    if (r == 1) *start = from;
    return r < 0 ? result_error(r, err) : r;
}

int regex_find_all(const regex *re, const uint32_t *cps, size_t n, regex_matches *out, ts_error *err) {
    out->n = 0;
    scratch sc;
    size_t from = 0, end;
    int r = scratch_init(&sc, re, n, 0, out) ? R_NOMEM : search(re, &sc, cps, n, &from, &end);
    scratch_free(&sc);
    return r < 0 ? result_error(r, err) : 0;
}

int regex_find_all_slow(const regex *re, const uint32_t *cps, size_t n, regex_matches *out, ts_error *err) {
    out->n = 0;
    scratch sc;
    size_t from = 0, end;
    int r = scratch_init(&sc, re, n, 0, out) ? R_NOMEM : enter_memo(re, &sc, n, 0);
    if (r == 0) r = run_memo(re, &sc, cps, n, &from, &end);
    scratch_free(&sc);
    return r < 0 ? result_error(r, err) : 0;
}

void regex_matches_free(regex_matches *m) {
    free(m->m);
    m->m = NULL;
    m->n = m->cap = 0;
}
