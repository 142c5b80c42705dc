/* A small backtracking regex engine for pre-tokenizer patterns (tokenizer.json `Split` regexes,
 * GGUF pre-tokenizer lists), with the semantics of Oniguruma in its default (Ruby) syntax, which is
 * what Hugging Face tokenizers runs them with. A pattern is compiled once; matching runs over code
 * points, and a compiled regex may be shared by threads (every call brings its own scratch).
 *
 * Supported: literals (UTF-8), `.` (any code point but \n), classes `[...]` `[^...]` with ranges,
 * \p{X} \P{X} \p{^X} for the general categories (L, Lu, ... and their long names, Letter,
 * Uppercase_Letter, ...; also LC / L& / Cased_Letter and Any), \s \S \d \D \w \W \h \H, escapes
 * \t \n \r \f \v \a \e \0 \xHH \x{H...} \uHHHH and escaped punctuation; groups ( ) (?: ) (no
 * captures), (?i: ) (?-i: ) (?i) (?-i) (an isolated option reaches the end of its group, alternatives
 * included, as in Oniguruma), lookahead (?= ) (?! ), comments (?# ); quantifiers * + ? {m,n} {m,}
 * {m} {,n}, lazy with a trailing ?; anchors ^ $ as Oniguruma's Ruby syntax has them (line start: the
 * text's start or after a \n that is not the last code point; line end: before a \n or at the end),
 * \A \z (the text's start and end) and \Z (the end, or before a final \n).
 *   \s = White_Space (U+0009-000D, U+0085 and the Z categories); \d = Nd; \w = L, M, Nd and Pc;
 *   (?i) uses simple case folding (a code point matches every member of its fold orbit: k, K and
 *   U+212A); Oniguruma's multi-character folds (ß against "ss") are not applied.
 * Refused at compile time, by name: lookbehind, backreferences, atomic groups, possessive
 * quantifiers, named groups, conditionals, script and binary properties (\p{Han}), \b \B \G \K \R
 * \X and the like, POSIX brackets, nested classes and &&, flags other than i; and malformed
 * patterns (unbalanced parentheses, bad ranges, {3,1}, a trailing \, invalid UTF-8, nesting deeper
 * than REGEX_MAX_DEPTH, patterns over REGEX_MAX_PATTERN bytes or expanding to more than
 * REGEX_MAX_PROGRAM instructions).
 *
 * Work is bounded: each call (regex_search or regex_find_all) has a step budget of 4 x program size x
 * the text from `from` on, plus 100,000. Past it, the call goes on from the attempt it was in with
 * the (instruction, position) pairs that failed remembered, which makes patterns without loops that
 * can match empty linear ((a|a)*b finds no match in 10,000 a's at once); past a second budget of the
 * same size, the call fails with "regex: step limit exceeded" ((a*)*b on 10,000 a's). */
#ifndef TS_TEXT_REGEX_H
#define TS_TEXT_REGEX_H
#include <stddef.h>
#include <stdint.h>
#include "tessera.h"

#define REGEX_MAX_PATTERN 65536   /* bytes */
#define REGEX_MAX_DEPTH   64      /* nested groups and stacked quantifiers */
#define REGEX_MAX_REPEAT  1000    /* bound of {m,n} */
#define REGEX_MAX_PROGRAM 20000   /* instructions once repeats are expanded */

typedef struct regex regex;

/* Compiles pattern[0..len) (UTF-8). On error: -1 and a one-line message naming the problem and its
 * byte offset, e.g. `regex: unsupported construct "(?<=" (lookbehind) at offset 12`. */
int  regex_compile(const char *pattern, size_t len, regex **out, ts_error *err);
void regex_free(regex *re);

/* Leftmost-first search of cps[0..n) for a match starting at `from` or later: 1 and [*start, *end)
 * when found, 0 when there is none, -1 (err: step limit or out of memory) when the work cap is hit.
 * The whole array is the text: n is its end for $, \z and lookaheads, and ^ may look at cps[from-1]. */
int  regex_search(const regex *re, const uint32_t *cps, size_t n, size_t from, size_t *start,
                  size_t *end, ts_error *err);

/* Every match of cps[0..n) in order, as Hugging Face's Split finds them (the onig crate's
 * find_iter): each search starts where the previous match ended; an empty match is reported and the
 * next search starts one code point after it, except that the first empty match found after a
 * non-empty one is dropped (so `\d*` over "a1bbb2" gives [0,0) [1,2) [3,3) [4,4) [5,6)). Replaces
 * out's contents; -1 (err) as regex_search, with out holding the matches found before. */
typedef struct regex_match { size_t start, end; } regex_match;
typedef struct regex_matches { regex_match *m; size_t n, cap; } regex_matches;
int  regex_find_all(const regex *re, const uint32_t *cps, size_t n, regex_matches *out, ts_error *err);
void regex_matches_free(regex_matches *m);

/* regex_find_all with the memoizing program alone (what a call falls back to once its first budget
 * is spent): the same matches, more slowly; for tests that compare the two programs. */
int  regex_find_all_slow(const regex *re, const uint32_t *cps, size_t n, regex_matches *out, ts_error *err);

#endif
