/* Speculative decoding's costs and gains (build: make build/opt/bench_spec).
 *
 *   bench_spec forward MODEL [THREADS] [ROUNDS] [DEPTH]
 *     The time of one forward over K+1 tokens (all rows of logits, as a verification step) against
 *     one token, K = 1 2 4 8 16 32 63, after DEPTH (default 128) positions of context; each round times
 *     every K back to back (interleaved), each K's time the best of 3 evaluations cut back after.
 *     Prints per K the median over the rounds, their range, and the ratio to one token.
 *
 *   bench_spec gen MODEL PROMPTS [-n N] [-t THREADS] [--rounds R] [--repeat P] [--draft FILE] [--k K] [--spec-n N] [--always]
 *     End to end: every prompt (a line of PROMPTS: plain text, or a JSON object with "system" and
 *     "user", rendered with the model's chat template) answered greedily with N tokens (default 128)
 *     plainly, with prompt lookup and (--draft) with the draft, the modes interleaved per round
 *     (each mode's turn answers the prompts P times over).
 *     Prints per mode and round the decode tokens/s (tokens after the first over their time), the
 *     proposals and the share taken, and checks that every mode's answers are plain decoding's.
 *     --always: the sessions propose every step (ts_session_options.spec_always), not only where
 *     the measured costs say proposals pay.
 * Models are loaded as chat, batch answering and the server load them (TS_WEIGHTS_DECODE: copied
 * when the kernel set keeps some rows in lanes). */
#include "tessera.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static int forward(int argc, char **argv) {
    if (argc < 3) { fprintf(stderr, "usage: bench_spec forward MODEL [THREADS] [ROUNDS] [DEPTH]\n"); return 1; }
    int threads = argc > 3 ? atoi(argv[3]) : 2, rounds = argc > 4 ? atoi(argv[4]) : 7, depth = argc > 5 ? atoi(argv[5]) : 128;
    ts_error err = {{0}};
    ts_model *m;
    if (ts_model_load(argv[2], &(ts_load_options){ .weights = TS_WEIGHTS_DECODE }, &m, &err) != 0) { fprintf(stderr, "error: %s\n", err.msg); return 1; }
    ts_context *c;
    if (ts_context_new(m, depth + 64, threads, &c, &err) != 0) { fprintf(stderr, "error: %s\n", err.msg); return 1; }
    const int nv = ts_model_n_vocab(m);
    enum { NK = 8 };
    const int ks[NK] = { 0, 1, 2, 4, 8, 16, 32, 63 };
    int32_t toks[64];
    int32_t *prompt = malloc((size_t)depth * sizeof *prompt);
    float *logits = malloc((size_t)64 * nv * sizeof *logits);
    srand(7);
    for (int i = 0; i < depth; i++) prompt[i] = 1 + rand() % (nv - 1);
    for (int i = 0; i < 64; i++) toks[i] = 1 + rand() % (nv - 1);
    if (ts_eval(c, prompt, depth, NULL, false, &err) != 0) { fprintf(stderr, "error: %s\n", err.msg); return 1; }
    double *t = calloc((size_t)NK * rounds, sizeof *t);
    for (int warm = 0; warm < 2; warm++) {   /* the weights' first pass */
        ts_eval(c, toks, 1, logits, false, &err);
        ts_context_truncate(c, depth);
    }
    for (int r = 0; r < rounds; r++)
        for (int k = 0; k < NK; k++) {
            double best = 1e9;
            for (int rep = 0; rep < 3; rep++) {
                double t0 = now();
                if (ts_eval(c, toks, ks[k] + 1, logits, ks[k] > 0, &err) != 0) { fprintf(stderr, "error: %s\n", err.msg); return 1; }
                double dt = now() - t0;
                ts_context_truncate(c, depth);
                if (dt < best) best = dt;
            }
            t[k * rounds + r] = best;
        }
    printf("%s: one forward over K+1 tokens (all rows) at depth %d, %d threads, %d rounds (median [min, max] ms)\n",
           argv[2], depth, threads, rounds);
    double base = 0;
    for (int k = 0; k < NK; k++) {
        double *row = t + k * rounds;
        double ratios[64];
        for (int r = 0; r < rounds && r < 64; r++) ratios[r] = row[r] / t[r];   /* to one token in the same round */
        qsort(ratios, (size_t)(rounds < 64 ? rounds : 64), sizeof *ratios, cmp_double);
        qsort(row, (size_t)rounds, sizeof *row, cmp_double);
        double med = row[rounds / 2];
        if (k == 0) base = med;
        printf("  K=%-2d %2d tokens: %7.2f ms [%6.2f, %6.2f]  x%.2f of one token (per-round ratios %.2f .. %.2f), %.2f ms a token\n", ks[k],
               ks[k] + 1, med * 1e3, row[0] * 1e3, row[rounds - 1] * 1e3, med / base, ratios[0], ratios[rounds - 1],
               med * 1e3 / (ks[k] + 1));
    }
    free(t);
    free(prompt);
    free(logits);
    ts_context_free(c);
    ts_model_free(m);
    return 0;
}

/* The string value of "key" in a one-line JSON object (simple escapes), malloc'd, or NULL. */
static char *json_field(const char *line, const char *key) {
    char pat[64];
    snprintf(pat, sizeof pat, "\"%s\": \"", key);
    const char *p = strstr(line, pat);
    if (!p) return NULL;
    p += strlen(pat);
    char *out = malloc(strlen(p) + 1), *w = out;
    for (; *p && *p != '"'; p++) {
        if (*p == '\\' && p[1]) {
            p++;
            *w++ = *p == 'n' ? '\n' : *p == 't' ? '\t' : *p;
        } else {
            *w++ = *p;
        }
    }
    *w = 0;
    return out;
}

typedef struct prompt { int32_t *ids; int n; } prompt;

static int read_prompts(ts_model *m, const char *path, prompt **out, int *n_out) {
    FILE *f = fopen(path, "r");
    if (!f) { fprintf(stderr, "error: %s: cannot open\n", path); return -1; }
    char line[65536];
    int n = 0, cap = 0;
    prompt *ps = NULL;
    ts_error err = {{0}};
    while (fgets(line, sizeof line, f)) {
        line[strcspn(line, "\n")] = 0;
        if (!line[0]) continue;
        char *text = NULL;
        bool has_bos = false, special = false;
        if (line[0] == '{') {
            char *sys = json_field(line, "system"), *user = json_field(line, "user");
            ts_chat_message msgs[2];
            int nm = 0;
            if (sys) msgs[nm++] = (ts_chat_message){ "system", sys };
            msgs[nm++] = (ts_chat_message){ "user", user ? user : "" };
            if (ts_chat_render(m, msgs, nm, true, &text, &has_bos, &err) != 0) { fprintf(stderr, "error: %s\n", err.msg); return -1; }
            free(sys);
            free(user);
            special = true;
        } else {
            text = strdup(line);
        }
        int32_t *ids = malloc(8192 * sizeof *ids);
        int k = ts_tokenize(m, text, strlen(text), !has_bos && ts_add_bos(m), special, ids, 8192, &err);
        free(text);
        if (k <= 0 || k > 8192) { fprintf(stderr, "error: %s: a prompt does not tokenize\n", path); return -1; }
        if (n == cap) ps = realloc(ps, (size_t)(cap = cap ? 2 * cap : 16) * sizeof *ps);
        ps[n++] = (prompt){ ids, k };
    }
    fclose(f);
    *out = ps;
    *n_out = n;
    return 0;
}

static int gen(int argc, char **argv) {
    if (argc < 4) {
        fprintf(stderr, "usage: bench_spec gen MODEL PROMPTS [-n N] [-t THREADS] [--rounds R] [--repeat P] [--draft FILE] [--k K] [--spec-n N] [--always]\n");
        return 1;
    }
    int n_gen = 128, threads = 2, rounds = 3, k = 0, spec_n = 0, repeat = 1;
    const char *draft_path = NULL;
    bool always = false;
    for (int i = 4; i < argc; i += 2) {
        if (!strcmp(argv[i], "--always")) { always = true; i--; continue; }
        if (i + 1 == argc) { fprintf(stderr, "error: %s needs a value\n", argv[i]); return 1; }
        if (!strcmp(argv[i], "-n")) n_gen = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "-t")) threads = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--rounds")) rounds = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--draft")) draft_path = argv[i + 1];
        else if (!strcmp(argv[i], "--k")) k = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--spec-n")) spec_n = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--repeat")) repeat = atoi(argv[i + 1]);
        else { fprintf(stderr, "error: unknown option %s\n", argv[i]); return 1; }
    }
    ts_error err = {{0}};
    ts_model *m, *dm = NULL;
    if (ts_model_load(argv[2], &(ts_load_options){ .weights = TS_WEIGHTS_DECODE }, &m, &err) != 0) { fprintf(stderr, "error: %s\n", err.msg); return 1; }
    if (draft_path && ts_model_load(draft_path, &(ts_load_options){ .weights = TS_WEIGHTS_DECODE }, &dm, &err) != 0) { fprintf(stderr, "error: %s\n", err.msg); return 1; }
    prompt *ps;
    int np;
    if (read_prompts(m, argv[3], &ps, &np) != 0) return 1;
    const int n_modes = dm ? 3 : 2;
    ts_session *s[3] = { 0 };
    for (int mode = 0; mode < n_modes; mode++) {
        ts_session_options so = { .n_ctx = 2048, .n_threads = threads, .n_slots = 1, .spec = mode, .spec_k = mode ? k : 0,
                                  .spec_n = mode == TS_SPEC_NGRAM ? spec_n : 0, .spec_always = always,
                                  .draft = mode == TS_SPEC_DRAFT ? dm : NULL };
        if (ts_session_new_opts(m, &so, &s[mode], &err) != 0) { fprintf(stderr, "error: %s\n", err.msg); return 1; }
    }
    int32_t **ref = calloc((size_t)np, sizeof *ref);
    int *ref_n = calloc((size_t)np, sizeof *ref_n);
    bool all_same = true;
    printf("%s: %d prompts, %d tokens each, greedy, %d threads%s%s%s\n", argv[2], np, n_gen, threads,
           dm ? ", draft " : "", dm ? draft_path : "", always ? ", proposing every step (--always)" : "");
    for (int r = 0; r < rounds; r++) {
        for (int mode = 0; mode < n_modes; mode++) {
            double secs = 0;
            long toks = 0, drafted = 0, accepted = 0;
            for (int ii = 0; ii < np * repeat; ii++) {
                const int i = ii % np;
                ts_gen_request rq = { .prompt = ps[i].ids, .n_prompt = ps[i].n, .max_tokens = n_gen,
                                      .sampling = ts_sampler_default_params() };
                ts_gen_result res;
                ts_session_reset(s[mode]);
                if (ts_session_generate(s[mode], &rq, &res, &err) != 0) { fprintf(stderr, "error: %s\n", err.msg); return 1; }
                secs += res.prompt_seconds + res.gen_seconds - res.first_token_seconds;
                toks += res.n_generated - 1;
                drafted += res.n_drafted;
                accepted += res.n_accepted;
                if (!ref[i]) {
                    ref[i] = malloc(((size_t)res.n_generated + 1) * sizeof **ref);
                    memcpy(ref[i], res.tokens, (size_t)res.n_generated * sizeof **ref);
                    ref_n[i] = res.n_generated;
                } else if (ref_n[i] != res.n_generated || memcmp(ref[i], res.tokens, (size_t)res.n_generated * sizeof **ref)) {
                    all_same = false;
                }
                ts_gen_result_free(&res);
            }
            printf("  round %d  %-5s %8.1f tok/s  (%ld tokens in %.3f s)", r + 1, ts_spec_mode_name(mode), toks / secs, toks, secs);
            if (drafted) printf("  proposed %ld, taken %ld (%.0f%%)", drafted, accepted, 100.0 * accepted / drafted);
            printf("\n");
            fflush(stdout);
        }
    }
    printf("  answers identical to plain decoding: %s\n", all_same ? "yes" : "NO");
    for (int mode = 0; mode < n_modes; mode++) ts_session_free(s[mode]);
    for (int i = 0; i < np; i++) { free(ps[i].ids); free(ref[i]); }
    free(ps);
    free(ref);
    free(ref_n);
    ts_model_free(dm);
    ts_model_free(m);
    return all_same ? 0 : 1;
}

int main(int argc, char **argv) {
    if (argc >= 2 && !strcmp(argv[1], "forward")) return forward(argc, argv);
    if (argc >= 2 && !strcmp(argv[1], "gen")) return gen(argc, argv);
    fprintf(stderr, "usage: bench_spec forward MODEL [THREADS] [ROUNDS] [DEPTH]\n"
                    "       bench_spec gen MODEL PROMPTS [-n N] [-t THREADS] [--rounds R] [--draft FILE] [--k K] [--spec-n N]\n");
    return 1;
}
