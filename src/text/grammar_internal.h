/* The compiled form of a grammar, shared by its compiler (grammar.c) and its matcher
 * (grammar_match.c). Every rule is a list of alternatives; an alternative is a run of elements in
 * one array, ended by G_END. An element reads one code point of a class or stands for a rule. */
#ifndef TS_TEXT_GRAMMAR_INTERNAL_H
#define TS_TEXT_GRAMMAR_INTERNAL_H
#include <stdbool.h>
#include <stdint.h>

enum { G_END, G_CHARS, G_REF };

typedef struct g_elem { int32_t type, arg; } g_elem;   /* arg: the class (G_CHARS) or the rule (G_REF) */

struct ts_grammar {
    g_elem *e;                   /* every alternative's elements, each run ended by G_END */
    int n_e;
    int32_t *alt_start;          /* where each alternative starts in e */
    int32_t *rule_alt, *rule_n_alt;   /* rule r's alternatives: alt_start[rule_alt[r] ...] */
    int n_rules;
    uint32_t *ranges;            /* class c: the inclusive code-point ranges ranges[2k], ranges[2k+1]
                                    for k in [class_at[c], class_at[c] + class_n[c]), sorted */
    int32_t *class_at, *class_n;
    int n_classes;
    int root;
};

static inline bool grammar_class_has(const struct ts_grammar *g, int c, uint32_t cp) {
    const uint32_t *r = g->ranges + 2 * (size_t)g->class_at[c];
    int lo = 0, hi = g->class_n[c];
    while (lo < hi) {   /* the first range whose end is >= cp */
        int mid = (lo + hi) / 2;
        if (r[2 * mid + 1] < cp) lo = mid + 1; else hi = mid;
    }
    return lo < g->class_n[c] && r[2 * lo] <= cp;
}

static inline bool grammar_class_meets(const struct ts_grammar *g, int c, uint32_t from, uint32_t to) {
    const uint32_t *r = g->ranges + 2 * (size_t)g->class_at[c];
    for (int k = 0; k < g->class_n[c]; k++)
        if (r[2 * k] <= to && r[2 * k + 1] >= from) return true;
    return false;
}

#endif
