/* libFuzzer: the GBNF compiler and matcher on an arbitrary grammar and text. The input is the
 * grammar, a NUL byte, then the text. Compiles; when it compiles, feeds the text in pieces (1 to 7
 * bytes, by the text's own bytes), asks after each piece whether short strings are allowed, and
 * walks a small sorted list of strings with grammar_matcher_allowed_sorted, checking it against
 * one-at-a-time answers. Checks: errors are one line starting "grammar: "; a refused piece leaves
 * the matcher as it was (the same answers after it); the walk and single tries agree; each input
 * stays within seconds of CPU. */
#include "fuzz_common.h"
#include "text/grammar.h"
#include <time.h>

int LLVMFuzzerInitialize(int *argc, char ***argv) { (void)argc; (void)argv; return 0; }

#define MAX_GRAMMAR 4096
#define MAX_TEXT 256
#define MAX_SECONDS 8.0

static double cpu_seconds(void) {
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void check_error(const char *what, const ts_error *err) {
    if (strncmp(err->msg, "grammar: ", 9) != 0 || strchr(err->msg, '\n')) {
        fprintf(stderr, "%s: bad error message: %s\n", what, err->msg);
        abort();
    }
}

/* sorted by bytes, with their common prefixes */
static const char *const probes[] = { "\"", "\"a", "(", ")", "-", "0", "01", "1", "12", "[", "\\", "]", "a", "ab", "abc",
                                      "b", "x", "{", "{\"", "}", "\xc3", "\xc3\xa9", "\xe2\x82\xac", "\xf0\x9f" };

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    const uint8_t *nul = memchr(data, 0, size);
    size_t glen = nul ? (size_t)(nul - data) : size;
    if (glen > MAX_GRAMMAR) return 0;
    const char *text = nul ? (const char *)nul + 1 : "";
    size_t tlen = nul ? size - glen - 1 : 0;
    if (tlen > MAX_TEXT) tlen = MAX_TEXT;
    double t0 = cpu_seconds();
    grammar *g = NULL;
    ts_error err = {{0}};
    if (grammar_parse((const char *)data, glen, &g, &err) != 0) {
        check_error("parse", &err);
        return 0;
    }
    grammar_matcher *m = NULL;
    if (grammar_matcher_new(g, &m, &err) != 0) { check_error("matcher", &err); grammar_free(g); return 0; }
    enum { NP = sizeof probes / sizeof *probes };
    uint16_t lens[NP], lcp[NP];
    for (int i = 0; i < NP; i++) {
        lens[i] = (uint16_t)strlen(probes[i]);
        lcp[i] = 0;
        if (i) while (lcp[i] < lens[i] && lcp[i] < lens[i - 1] && probes[i][lcp[i]] == probes[i - 1][lcp[i]]) lcp[i]++;
    }
    size_t at = 0;
    while (at <= tlen) {
        uint8_t walk[NP];
        if (grammar_matcher_allowed_sorted(m, probes, lens, lcp, NP, walk, &err) != 0) { check_error("walk", &err); break; }
        for (int i = 0; i < NP; i++) {
            int one = grammar_matcher_allows(m, probes[i], lens[i], &err);
            if (one < 0) { check_error("allows", &err); goto done; }
            if (one != walk[i]) { fprintf(stderr, "walk says %d, a single try %d, for \"%s\"\n", walk[i], one, probes[i]); abort(); }
        }
        if (at == tlen) break;
        size_t piece = 1 + (unsigned char)text[at] % 7;
        if (piece > tlen - at) piece = tlen - at;
        bool complete = grammar_matcher_complete(m), more = grammar_matcher_can_continue(m);
        int rc = grammar_matcher_feed(m, text + at, piece, &err);
        if (rc < 0) { check_error("feed", &err); break; }
        if (rc == 0) {   /* refused: nothing changed */
            if (grammar_matcher_complete(m) != complete || grammar_matcher_can_continue(m) != more) { fprintf(stderr, "a refused piece changed the matcher\n"); abort(); }
            piece = 1;
            if (grammar_matcher_feed(m, text + at, 0, &err) != 1) { fprintf(stderr, "no bytes must be accepted\n"); abort(); }
        }
        at += piece;
        if (cpu_seconds() - t0 > MAX_SECONDS) { fprintf(stderr, "too slow: %.1f s\n", cpu_seconds() - t0); abort(); }
    }
done:
    grammar_matcher_free(m);
    grammar_free(g);
    if (cpu_seconds() - t0 > MAX_SECONDS) { fprintf(stderr, "too slow: %.1f s\n", cpu_seconds() - t0); abort(); }
    return 0;
}
