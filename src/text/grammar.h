/* Grammars that constrain generated text: GBNF as llama.cpp writes it, compiled once into rules of
 * code-point classes and rule references, and a matcher that follows every way the text so far can
 * be parsed (a set of parse stacks) byte by byte, so a token's bytes can be tried before the token
 * is chosen. The answer (generate/answer.c) masks what the grammar cannot accept.
 *
 * GBNF: `name ::= alternatives`, one rule per line (a rule goes on over newlines inside groups and
 * after `|`); alternation `|`, sequences, groups `( )`, `* + ? {m} {m,} {m,n}`, literals "..." and
 * classes [a-z_] / [^"\\] with the escapes \n \r \t \\ \" \' \[ \] \- \/ \xHH \uHHHH \UHHHHHHHH, `.`
 * (any character), comments from # to the end of the line. The root rule is `root`. Refused, by
 * name: a rule used but not defined or defined twice, left recursion (a rule that can reach itself
 * before reading a character), a grammar that expands (repetition counts) beyond GRAMMAR_MAX_ELEMENTS,
 * and at run time a text that is ambiguous in more than GRAMMAR_MAX_STACKS ways at once. */
#ifndef TS_TEXT_GRAMMAR_H
#define TS_TEXT_GRAMMAR_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "tessera.h"
#include "io/json.h"

#define GRAMMAR_MAX_ELEMENTS (1 << 20)
#define GRAMMAR_MAX_STACKS 1024
#define GRAMMAR_MAX_FRAMES (1 << 24)

typedef struct ts_grammar grammar;

/* Compiles GBNF text (len bytes) whose root rule is `root`. 0, or -1 with err ("grammar: line 3:
 * expected '::='"). */
int  grammar_parse(const char *gbnf, size_t len, grammar **out, ts_error *err);
void grammar_free(grammar *g);
/* 1 when text (n bytes) is a complete sentence of g, 0 when it is not, -1 (err) past the limits. */
int  grammar_accepts_text(const grammar *g, const char *text, size_t n, ts_error *err);

/* GBNF text with every rule name prefixed (literals, classes, counts and comments left as they
 * are), appended to out: grammars made apart (one per tool's arguments) can then share one text.
 * -1 when out of memory. */
int  grammar_prefix_rules(const char *gbnf, size_t len, const char *prefix, json_buf *out);

/* Where a text being generated stands in the grammar. */
typedef struct grammar_matcher grammar_matcher;
int  grammar_matcher_new(const grammar *g, grammar_matcher **out, ts_error *err);
void grammar_matcher_free(grammar_matcher *m);
/* Feeds n bytes: 1 when the grammar accepts them (the matcher moves past them), 0 when it does not
 * (the matcher is unchanged), -1 (err) past the limits. */
int  grammar_matcher_feed(grammar_matcher *m, const char *b, size_t n, ts_error *err);
/* Whether n more bytes would be accepted, the matcher left as it is. -1 (err) past the limits. */
int  grammar_matcher_allows(grammar_matcher *m, const char *b, size_t n, ts_error *err);
/* The text fed so far is a sentence of the grammar. */
bool grammar_matcher_complete(const grammar_matcher *m);
/* Some more bytes could be accepted. */
bool grammar_matcher_can_continue(const grammar_matcher *m);
/* For strings sorted by their bytes (texts[i] of lens[i] bytes; lcp[i] the bytes texts[i] shares
 * with texts[i - 1], lcp[0] = 0), sets allowed[i] to whether the matcher accepts texts[i] whole.
 * Strings with a common beginning share its work. An empty string is not allowed. 0, or -1 (err). */
int  grammar_matcher_allowed_sorted(grammar_matcher *m, const char *const *texts, const uint16_t *lens,
                                    const uint16_t *lcp, int n, uint8_t *allowed, ts_error *err);

#endif
