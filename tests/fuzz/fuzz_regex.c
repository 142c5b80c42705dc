/* libFuzzer: the regex engine on an arbitrary pattern and text. Bytes 0-1: the pattern's length L
 * (little-endian, at most 1024); then L bytes of pattern; the rest is the text (UTF-8 where valid,
 * other bytes taken as U+0080-00FF; at most 512 code points). Compiles, then finds all matches
 * with both programs (regex_find_all and regex_find_all_slow) and searches once.
 * Checks: errors are one line starting "regex: "; matches lie in the text, in order, without
 * overlap, each search starting past an empty match; the two programs agree; regex_search finds
 * the first match; each call stays within seconds of CPU (the step cap). */
#include "fuzz_common.h"
#include "text/regex.h"
#include "core/utf8.h"
#include <time.h>

int LLVMFuzzerInitialize(int *argc, char ***argv) { (void)argc; (void)argv; return 0; }

#define MAX_PATTERN 1024
#define MAX_TEXT 512
#define MAX_SECONDS 8.0   /* far above any bounded call (ASan, a 20,000-instruction program), far below a hang */

static double cpu_seconds(void) {
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void check_error(const char *what, const ts_error *err) {
    if (strncmp(err->msg, "regex: ", 7) != 0 || strchr(err->msg, '\n')) {
        fprintf(stderr, "%s: bad error message: %s\n", what, err->msg);
        abort();
    }
}

static void check_run_error(const char *what, const ts_error *err) {
    check_error(what, err);
    if (strcmp(err->msg, "regex: step limit exceeded") && strcmp(err->msg, "regex: out of memory") &&
        strcmp(err->msg, "regex: backtrack stack limit exceeded")) {
        fprintf(stderr, "%s: unexpected error: %s\n", what, err->msg);
        abort();
    }
}

static void check_time(const char *what, double t0) {
    double dt = cpu_seconds() - t0;
    if (dt > MAX_SECONDS) {
        fprintf(stderr, "%s took %.1f s: the step cap does not bound the work\n", what, dt);
        abort();
    }
}

static void check_matches(const regex_matches *m, size_t n) {
    for (size_t i = 0; i < m->n; i++) {
        const regex_match *a = &m->m[i];
        bool bad = a->start > a->end || a->end > n;
        if (i) {
            const regex_match *p = &m->m[i - 1];
            bad |= a->start < p->end || (p->start == p->end && a->start <= p->start);
        }
        if (bad) {
            fprintf(stderr, "match %zu [%zu,%zu) out of order or bounds (text %zu)\n", i, a->start, a->end, n);
            abort();
        }
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size < 2) return 0;
    size_t plen = (size_t)data[0] | (size_t)data[1] << 8;
    if (plen > MAX_PATTERN || plen > size - 2) plen = size - 2 < MAX_PATTERN ? size - 2 : MAX_PATTERN;
    const char *pattern = (const char *)data + 2;
    const char *text = pattern + plen;
    size_t tlen = size - 2 - plen, n = 0;
    uint32_t cps[MAX_TEXT];
    for (size_t i = 0; i < tlen && n < MAX_TEXT;) {
        int k = utf8_decode(text + i, tlen - i, &cps[n]);
        if (k <= 0) { cps[n] = (unsigned char)text[i]; k = 1; }
        i += (size_t)k;
        n++;
    }

    regex *re;
    ts_error err;
    if (regex_compile(pattern, plen, &re, &err) != 0) {
        check_error("regex_compile", &err);
        return 0;
    }
    regex_matches fast = { 0 }, slow = { 0 };
    double t0 = cpu_seconds();
    int rf = regex_find_all(re, cps, n, &fast, &err);
    check_time("regex_find_all", t0);
    if (rf) check_run_error("regex_find_all", &err);
    else check_matches(&fast, n);

    t0 = cpu_seconds();
    int rs = regex_find_all_slow(re, cps, n, &slow, &err);
    check_time("regex_find_all_slow", t0);
    if (rs) check_run_error("regex_find_all_slow", &err);
    else check_matches(&slow, n);

    if (rf == 0 && rs == 0) {
        bool same = fast.n == slow.n;
        for (size_t i = 0; same && i < fast.n; i++)
            same = fast.m[i].start == slow.m[i].start && fast.m[i].end == slow.m[i].end;
        if (!same) {
            fprintf(stderr, "the fast and memo programs disagree (%zu and %zu matches)\n", fast.n, slow.n);
            abort();
        }
    }

    size_t s = 0, e = 0;
    t0 = cpu_seconds();
    int r = regex_search(re, cps, n, 0, &s, &e, &err);
    check_time("regex_search", t0);
    if (r < 0) check_run_error("regex_search", &err);
    if (rf == 0 && r >= 0 && (r == 1) != (fast.n > 0)) {
        /* find_all drops no first match: a search finds one exactly when find_all does */
        fprintf(stderr, "regex_search says %d, find_all found %zu matches\n", r, fast.n);
        abort();
    }
    if (rf == 0 && r == 1 && (s != fast.m[0].start || e != fast.m[0].end)) {
        fprintf(stderr, "regex_search [%zu,%zu) is not find_all's first match [%zu,%zu)\n", s, e,
                fast.m[0].start, fast.m[0].end);
        abort();
    }
    regex_matches_free(&fast);
    regex_matches_free(&slow);
    regex_free(re);
    return 0;
}
