/* --verify: three evaluations of one token sequence that must agree. */
#include "cli/verify.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Differences come only from float summation order (batched matmuls may block the sums
 * differently), so they are tiny next to the logits themselves; a layout or cache bug moves
 * logits by a large fraction of their range. */
#define RELATIVE_TOLERANCE 1e-4

static int argmax(const float *row, int n) {
    int best = 0;
    for (int i = 1; i < n; i++) if (row[i] > row[best]) best = i;
    return best;
}

/* The largest |a - b| over n rows, and how many rows disagree on the argmax. */
static double max_diff(const float *a, const float *b, int rows, int nv, int *argmax_mismatch) {
    double worst = 0.0;
    *argmax_mismatch = 0;
    for (int r = 0; r < rows; r++) {
        const float *x = a + (size_t)r * nv, *y = b + (size_t)r * nv;
        for (int i = 0; i < nv; i++) {
            double d = fabs((double)x[i] - (double)y[i]);
            if (!(d <= worst)) worst = d;   /* NaN counts as the worst */
        }
        if (argmax(x, nv) != argmax(y, nv)) (*argmax_mismatch)++;
    }
    return worst;
}

static bool report(FILE *out, const char *name, const float *got, const float *want, int rows, int nv,
                   double scale) {
    int mismatch;
    double d = max_diff(got, want, rows, nv, &mismatch);
    double tol = RELATIVE_TOLERANCE * scale;
    bool pass = d <= tol;
    fprintf(out, "%s %-48s max |logit diff| %.3g over %d rows (tolerance %.3g), argmax differs in %d\n",
            pass ? "PASS" : "FAIL", name, d, rows, tol, mismatch);
    return pass;
}

int run_verify(ts_model *m, const int32_t *prompt, int n_prompt, int n_generate, int n_threads, FILE *out) {
    ts_error err = {{0}};
    const int nv = ts_model_n_vocab(m);
    const int total = n_prompt + n_generate;
    ts_context *ctx[3] = {0};
    int32_t *seq = malloc((size_t)total * sizeof *seq);
    float *decoded = malloc((size_t)total * nv * sizeof(float));     /* prefill + cached decode */
    float *batched = malloc((size_t)total * nv * sizeof(float));     /* one forward of everything */
    float *sequential = malloc((size_t)total * nv * sizeof(float));  /* one token at a time */
    int rc = 1;
    if (!seq || !decoded || !batched || !sequential) { fprintf(stderr, "error: out of memory\n"); goto done; }
    for (int i = 0; i < 3; i++)
        if (ts_context_new(m, total, n_threads, &ctx[i], &err) != 0) goto fail;
    if (ts_context_n_ctx(ctx[0]) < total) {
        fprintf(stderr, "error: %d tokens do not fit the context of %d\n", total, ts_context_n_ctx(ctx[0]));
        goto done;
    }
    memcpy(seq, prompt, (size_t)n_prompt * sizeof *seq);

    /* 1. the way text is generated: batched prefill, then greedy tokens one at a time */
    if (ts_eval(ctx[0], seq, n_prompt, decoded, true, &err) != 0) goto fail;
    for (int i = n_prompt; i < total; i++) {
        seq[i] = argmax(decoded + (size_t)(i - 1) * nv, nv);
        if (ts_eval(ctx[0], &seq[i], 1, decoded + (size_t)i * nv, false, &err) != 0) goto fail;
    }
    /* 2. the whole sequence as one batch */
    if (ts_eval(ctx[1], seq, total, batched, true, &err) != 0) goto fail;
    /* 3. the whole sequence one token at a time */
    for (int i = 0; i < total; i++)
        if (ts_eval(ctx[2], &seq[i], 1, sequential + (size_t)i * nv, false, &err) != 0) goto fail;

    double scale = 1.0;   /* tolerances are relative to the largest logit */
    for (size_t i = 0; i < (size_t)total * nv; i++) if (fabs(batched[i]) > scale) scale = fabs(batched[i]);

    fprintf(out, "verify: %d prompt tokens + %d generated, kernels %s, largest |logit| %.3g\n",
            n_prompt, n_generate, ts_model_simd(m), scale);
    bool all = report(out, "prefill + cached decode vs full re-forward", decoded, batched, total, nv, scale);
    all &= report(out, "batched vs sequential prefill", batched, sequential, total, nv, scale);

    /* 4. the prefix cache's move: forget the tail and evaluate it again (a sliding-window ring may
     * keep less than asked; then more is re-evaluated) */
    int cut = n_prompt / 2 > 0 ? n_prompt / 2 : 1;
    int kept = ts_context_truncate(ctx[0], cut);
    if (ts_eval(ctx[0], seq + kept, total - kept, decoded, true, &err) != 0) goto fail;
    char name[96];
    snprintf(name, sizeof name, "truncate to %d + re-evaluate vs full re-forward", kept);
    all &= report(out, name, decoded, batched + (size_t)kept * nv, total - kept, nv, scale);
    fprintf(out, "%s\n", all ? "all checks passed" : "some checks FAILED");
    rc = all ? 0 : 1;
    goto done;
fail:
    fprintf(stderr, "error: %s\n", err.msg);
done:
    for (int i = 0; i < 3; i++) ts_context_free(ctx[i]);
    free(seq);
    free(decoded);
    free(batched);
    free(sequential);
    return rc;
}
