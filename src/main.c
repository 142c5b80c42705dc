/* The command line: ./run MODEL "prompt" [options]. One user of the tessera API. */
#include "tessera.h"
#include "text/utf8.h"
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

typedef struct cli_options {
    const char *model_path;
    const char *prompt;
    const char *tokens_csv;      /* --tokens 1,2,3 */
    const char *dump_logits;     /* --dump-logits FILE */
    int n_predict;               /* -n */
    int n_threads;               /* -t */
    int n_ctx;                   /* -c; 0 = the model's, capped by memory */
    bool info, quiet;
    ts_sampler_params sampling;
} cli_options;

static void usage(FILE *f) {
    fprintf(f,
        "usage: run MODEL [PROMPT] [options]\n"
        "  MODEL is a GGUF file.\n"
        "  -p, --prompt TEXT       the prompt (or give it as the second argument)\n"
        "  -n, --n-predict N       tokens to generate (default 256)\n"
        "  -t, --threads N         threads (default: all cores)\n"
        "  -c, --ctx-size N        context length (default: the model's, capped by memory)\n"
        "  --temp T                sampling temperature (default 0: greedy)\n"
        "  --top-k K, --top-p P, --min-p P, --repeat-penalty R, --repeat-last-n N, --seed S\n"
        "  --tokens 1,2,3          feed these token ids instead of a text prompt\n"
        "  --dump-logits FILE      write float32 logits, one row of n_vocab per evaluated position\n"
        "  --info                  print the geometry table and layout decisions\n"
        "  --quiet                 no statistics line on stderr\n");
}

static double now_seconds(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static int parse_int(const char *opt, const char *s, long lo, long hi, int *out) {
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno || end == s || *end || v < lo || v > hi) {
        fprintf(stderr, "error: %s expects an integer in [%ld, %ld], got '%s'\n", opt, lo, hi, s);
        return -1;
    }
    *out = (int)v;
    return 0;
}

static int parse_float(const char *opt, const char *s, float *out) {
    char *end;
    errno = 0;
    float v = strtof(s, &end);
    if (errno || end == s || *end || !isfinite(v)) {
        fprintf(stderr, "error: %s expects a number, got '%s'\n", opt, s);
        return -1;
    }
    *out = v;
    return 0;
}

static int parse_args(int argc, char **argv, cli_options *o) {
    memset(o, 0, sizeof *o);
    o->n_predict = 256;
    o->sampling = ts_sampler_default_params();
    o->sampling.seed = (uint64_t)time(NULL);
    int positional = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *val = i + 1 < argc ? argv[i + 1] : NULL;
#define NEED_VALUE() do { if (!val) { fprintf(stderr, "error: %s needs a value\n", a); return -1; } i++; } while (0)
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) { usage(stdout); exit(0); }
        else if (!strcmp(a, "-p") || !strcmp(a, "--prompt")) { NEED_VALUE(); o->prompt = val; }
        else if (!strcmp(a, "-n") || !strcmp(a, "--n-predict")) { NEED_VALUE(); if (parse_int(a, val, 0, INT_MAX, &o->n_predict)) return -1; }
        else if (!strcmp(a, "-t") || !strcmp(a, "--threads")) { NEED_VALUE(); if (parse_int(a, val, 1, 256, &o->n_threads)) return -1; }
        else if (!strcmp(a, "-c") || !strcmp(a, "--ctx-size")) { NEED_VALUE(); if (parse_int(a, val, 0, 1 << 24, &o->n_ctx)) return -1; }
        else if (!strcmp(a, "--temp")) { NEED_VALUE(); if (parse_float(a, val, &o->sampling.temp)) return -1; }
        else if (!strcmp(a, "--top-k")) { NEED_VALUE(); if (parse_int(a, val, 0, INT_MAX, &o->sampling.top_k)) return -1; }
        else if (!strcmp(a, "--top-p")) { NEED_VALUE(); if (parse_float(a, val, &o->sampling.top_p)) return -1; }
        else if (!strcmp(a, "--min-p")) { NEED_VALUE(); if (parse_float(a, val, &o->sampling.min_p)) return -1; }
        else if (!strcmp(a, "--repeat-penalty")) { NEED_VALUE(); if (parse_float(a, val, &o->sampling.repeat_penalty)) return -1; }
        else if (!strcmp(a, "--repeat-last-n")) { NEED_VALUE(); if (parse_int(a, val, -1, INT_MAX, &o->sampling.repeat_last_n)) return -1; }
        else if (!strcmp(a, "--seed")) {
            NEED_VALUE();
            char *end; errno = 0;
            unsigned long long s = strtoull(val, &end, 10);
            if (errno || end == val || *end) { fprintf(stderr, "error: --seed expects an integer, got '%s'\n", val); return -1; }
            o->sampling.seed = s;
        }
        else if (!strcmp(a, "--tokens")) { NEED_VALUE(); o->tokens_csv = val; }
        else if (!strcmp(a, "--dump-logits")) { NEED_VALUE(); o->dump_logits = val; }
        else if (!strcmp(a, "--info")) o->info = true;
        else if (!strcmp(a, "--quiet")) o->quiet = true;
        else if (a[0] == '-' && a[1] != 0) { fprintf(stderr, "error: unknown option '%s' (see --help)\n", a); return -1; }
        else if (positional == 0) { o->model_path = a; positional++; }
        else if (positional == 1 && !o->prompt) { o->prompt = a; positional++; }
        else { fprintf(stderr, "error: unexpected argument '%s'\n", a); return -1; }
#undef NEED_VALUE
    }
    if (!o->model_path) { usage(stderr); return -1; }
    return 0;
}

/* "1,2,3" -> ids. */
static int parse_token_list(const char *csv, int32_t **out, int *n) {
    size_t cap = 16, cnt = 0;
    int32_t *ids = malloc(cap * sizeof *ids);
    if (!ids) return -1;
    const char *p = csv;
    while (*p) {
        char *end; errno = 0;
        long v = strtol(p, &end, 10);
        if (errno || end == p || v < 0 || v > INT32_MAX || (*end && *end != ',')) {
            fprintf(stderr, "error: --tokens expects comma-separated token ids, got '%s'\n", csv);
            free(ids);
            return -1;
        }
        if (cnt == cap) {
            cap *= 2;
            int32_t *t = realloc(ids, cap * sizeof *ids);
            if (!t) { free(ids); return -1; }
            ids = t;
        }
        ids[cnt++] = (int32_t)v;
        p = *end ? end + 1 : end;
    }
    if (cnt == 0) { fprintf(stderr, "error: --tokens is empty\n"); free(ids); return -1; }
    *out = ids;
    *n = (int)cnt;
    return 0;
}

/* Prints a token's bytes, holding back incomplete UTF-8 characters. */
static void emit_token(const ts_model *m, int32_t tok, utf8_stream *st) {
    char piece[256], out[256 + 16];
    int len = ts_token_text(m, tok, piece, sizeof piece);
    if (len <= 0) return;
    size_t w = utf8_stream_push(st, piece, (size_t)len, out);
    fwrite(out, 1, w, stdout);
    fflush(stdout);
}

int main(int argc, char **argv) {
    cli_options o;
    if (parse_args(argc, argv, &o) != 0) return 1;

    ts_error err = {{0}};
    ts_model *m = NULL;
    ts_load_options lo = { .tokenizer_path = NULL, .n_threads = o.n_threads };
    if (ts_model_load(o.model_path, &lo, &m, &err) != 0) {
        fprintf(stderr, "error: %s\n", err.msg);
        return 1;
    }
    if (o.info) {
        ts_model_print_info(m, stdout);
        if (!o.prompt && !o.tokens_csv) { ts_model_free(m); return 0; }
    }
    int rc = 1;
    int32_t *tokens = NULL;
    int n_prompt = 0;
    ts_context *c = NULL;
    ts_sampler *smp = NULL;
    float *logits = NULL;
    FILE *dump = NULL;

    if (o.tokens_csv) {
        if (parse_token_list(o.tokens_csv, &tokens, &n_prompt) != 0) goto done;
    } else {
        const char *text = o.prompt ? o.prompt : "";
        size_t len = strlen(text);
        bool bos = ts_add_bos(m);
        int cap = (int)(len + 8 > 1 << 26 ? 1 << 26 : len + 8);
        tokens = malloc((size_t)cap * sizeof *tokens);
        if (!tokens) { fprintf(stderr, "error: out of memory\n"); goto done; }
        n_prompt = ts_tokenize(m, text, len, bos, tokens, cap, &err);
        if (n_prompt < 0) { fprintf(stderr, "error: %s: %s\n", o.model_path, err.msg); goto done; }
        if (n_prompt > cap) { fprintf(stderr, "error: prompt too long\n"); goto done; }
        if (n_prompt == 0) { fprintf(stderr, "error: the prompt is empty and the model adds no BOS token\n"); goto done; }
    }

    if (ts_context_new(m, o.n_ctx, o.n_threads, &c, &err) != 0) { fprintf(stderr, "error: %s\n", err.msg); goto done; }
    int n_ctx = ts_context_n_ctx(c);
    if (n_prompt > n_ctx) {
        fprintf(stderr, "error: %s: the prompt has %d tokens, longer than the context of %d\n",
                o.model_path, n_prompt, n_ctx);
        goto done;
    }
    int n_vocab = ts_model_n_vocab(m);
    smp = ts_sampler_new(&o.sampling, n_vocab);
    size_t rows = o.dump_logits ? (size_t)n_prompt : 1;
    logits = malloc(rows * (size_t)n_vocab * sizeof(float));
    if (!smp || !logits) { fprintf(stderr, "error: out of memory\n"); goto done; }
    if (o.dump_logits && !(dump = fopen(o.dump_logits, "wb"))) {
        fprintf(stderr, "error: %s: cannot open for writing: %s\n", o.dump_logits, strerror(errno));
        goto done;
    }

    /* echo the prompt, as llama-cli and llama2.c do */
    utf8_stream st = {{0}, 0};
    if (o.tokens_csv) {
        for (int i = 0; i < n_prompt; i++) emit_token(m, tokens[i], &st);
    } else if (o.prompt) {
        fputs(o.prompt, stdout);
        fflush(stdout);
    }

    double t0 = now_seconds();
    if (ts_eval(c, tokens, n_prompt, logits, o.dump_logits != NULL, &err) != 0) {
        fprintf(stderr, "error: %s: %s\n", o.model_path, err.msg);
        goto done;
    }
    if (dump && fwrite(logits, sizeof(float), rows * n_vocab, dump) != rows * n_vocab) {
        fprintf(stderr, "error: %s: write failed\n", o.dump_logits);
        goto done;
    }
    float *last = logits + (rows - 1) * (size_t)n_vocab;
    double t1 = now_seconds();

    int32_t *history = realloc(tokens, ((size_t)n_prompt + o.n_predict + 1) * sizeof *tokens);
    if (!history) { fprintf(stderr, "error: out of memory\n"); goto done; }
    tokens = history;
    int n_gen = 0, n_hist = n_prompt;
    while (n_gen < o.n_predict) {
        int32_t next = ts_sample(smp, last, tokens, n_hist);
        if (ts_token_is_eog(m, next)) break;
        n_gen++;
        tokens[n_hist++] = next;
        emit_token(m, next, &st);
        if (n_gen == o.n_predict) break;                 /* no need to evaluate the last token */
        if (ts_context_pos(c) >= n_ctx) { fprintf(stderr, "\nwarning: context full (%d tokens)\n", n_ctx); break; }
        if (ts_eval(c, &next, 1, logits, false, &err) != 0) {
            fprintf(stderr, "error: %s: %s\n", o.model_path, err.msg);
            goto done;
        }
        last = logits;
        if (dump && fwrite(logits, sizeof(float), n_vocab, dump) != (size_t)n_vocab) {
            fprintf(stderr, "error: %s: write failed\n", o.dump_logits);
            goto done;
        }
    }
    char tail[8];
    size_t w = utf8_stream_flush(&st, tail);
    fwrite(tail, 1, w, stdout);
    fputc('\n', stdout);
    fflush(stdout);
    double t2 = now_seconds();
    if (!o.quiet)
        fprintf(stderr, "prompt: %d tokens, %.1f tok/s | generation: %d tokens, %.1f tok/s\n",
                n_prompt, n_prompt / (t1 - t0 + 1e-9), n_gen,
                n_gen > 1 ? (n_gen - 1) / (t2 - t1 + 1e-9) : 0.0);
    rc = 0;
done:
    if (dump && fclose(dump) != 0 && rc == 0) { fprintf(stderr, "error: %s: write failed\n", o.dump_logits); rc = 1; }
    free(logits);
    free(tokens);
    ts_sampler_free(smp);
    ts_context_free(c);
    ts_model_free(m);
    return rc;
}
