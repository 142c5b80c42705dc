/* Token sampling: repetition penalty, then greedy argmax (temp <= 0) or top-k -> temperature
 * softmax -> top-p -> min-p -> a draw from a seeded PCG generator. */
#include "generate/sampler.h"
#include "core/error.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>

struct ts_sampler {
    ts_sampler_params p;
    int n_vocab;
    uint64_t rng;
    struct candidate { float logit, prob; int32_t id; } *cand;
};

ts_sampler_params ts_sampler_default_params(void) {
    return (ts_sampler_params){ .temp = 0.0f, .top_k = 40, .top_p = 0.95f, .min_p = 0.05f,
                                .repeat_penalty = 1.0f, .repeat_last_n = 64, .seed = 0 };
}

int ts_sampler_new(const ts_sampler_params *p, int n_vocab, ts_sampler **out, ts_error *err) {
    *out = NULL;
    if (n_vocab <= 0) return ts_fail(err, "a sampler needs a vocabulary (got %d tokens)", n_vocab);
    /* written so that NaN fails every range */
    if (!isfinite(p->temp)) return ts_fail(err, "sampler: temp must be a finite number (got %g)", p->temp);
    if (!(p->top_p >= 0.0f && p->top_p <= 1.0f)) return ts_fail(err, "sampler: top_p must be in [0, 1] (got %g)", p->top_p);
    if (!(p->min_p >= 0.0f && p->min_p <= 1.0f)) return ts_fail(err, "sampler: min_p must be in [0, 1] (got %g)", p->min_p);
    if (!(p->repeat_penalty > 0.0f) || !isfinite(p->repeat_penalty))
        return ts_fail(err, "sampler: repeat_penalty must be a finite number > 0 (got %g)", p->repeat_penalty);
    if (p->repeat_last_n < -1) return ts_fail(err, "sampler: repeat_last_n must be -1 (all) or >= 0 (got %d)", p->repeat_last_n);
    ts_sampler *s = calloc(1, sizeof *s);
    if (!s) return ts_fail(err, "out of memory for a sampler");
    s->p = *p;
    s->n_vocab = n_vocab;
    s->rng = p->seed * 6364136223846793005ULL + 1442695040888963407ULL;
    s->cand = malloc((size_t)n_vocab * sizeof *s->cand);
    if (!s->cand) { free(s); return ts_fail(err, "out of memory for a sampler of %d tokens", n_vocab); }
    *out = s;
    return 0;
}

void ts_sampler_free(ts_sampler *s) {
    if (!s) return;
    free(s->cand);
    free(s);
}

/* PCG32: a uniform float in [0, 1). */
static float next_uniform(ts_sampler *s) {
    uint64_t old = s->rng;
    s->rng = old * 6364136223846793005ULL + 1442695040888963407ULL;
    uint32_t xs = (uint32_t)(((old >> 18) ^ old) >> 27), rot = (uint32_t)(old >> 59);
    uint32_t r = (xs >> rot) | (xs << ((-rot) & 31));
    return (float)(r >> 8) / 16777216.0f;
}

static int by_logit_desc(const void *a, const void *b) {
    const struct candidate *x = a, *y = b;
    if (x->logit != y->logit) return x->logit < y->logit ? 1 : -1;
    return x->id - y->id;   /* lowest id first among equals */
}

/* The top k of the n logits as candidates in cand[0..k) (in heap order; the caller sorts them): the
 * same k, by the same order, as sorting all n and keeping the first k. A heap of the k kept, whose
 * root sorts last among them, so that most logits cost one comparison: sorting a 128K vocabulary
 * per token took longer than the forward of a 1B model (decode at temperature 0.8: 29 against
 * 67 tok/s at 0). */
static void sift_down(struct candidate *h, int k, int i) {
    for (;;) {
        int last = i, l = 2 * i + 1, r = l + 1;
        if (l < k && by_logit_desc(&h[l], &h[last]) > 0) last = l;
        if (r < k && by_logit_desc(&h[r], &h[last]) > 0) last = r;
        if (last == i) return;
        struct candidate t = h[i];
        h[i] = h[last];
        h[last] = t;
        i = last;
    }
}
static void keep_top_k(struct candidate *cand, const float *logits, int n, int k) {
    for (int i = 0; i < k; i++) cand[i] = (struct candidate){ logits[i], 0.0f, i };
    for (int i = k / 2 - 1; i >= 0; i--) sift_down(cand, k, i);
    for (int i = k; i < n; i++) {
        const struct candidate c = { logits[i], 0.0f, i };
        if (by_logit_desc(&c, &cand[0]) < 0) {
            cand[0] = c;
            sift_down(cand, k, 0);
        }
    }
}

void sampler_penalize(const ts_sampler *s, float *logits, const int32_t *recent, int n_recent) {
    const ts_sampler_params *p = &s->p;
    if (p->repeat_penalty == 1.0f || !recent) return;
    int from = n_recent - p->repeat_last_n;
    if (from < 0 || p->repeat_last_n < 0) from = 0;
    /* each distinct token is penalized once */
    for (int i = from; i < n_recent; i++) {
        int32_t t = recent[i];
        if (t < 0 || t >= s->n_vocab) continue;
        bool seen = false;
        for (int j = from; j < i; j++) if (recent[j] == t) { seen = true; break; }
        if (seen) continue;
        logits[t] = logits[t] > 0 ? logits[t] / p->repeat_penalty : logits[t] * p->repeat_penalty;
    }
}

int sampler_candidates_needed(const ts_sampler *s) {
    if (s->p.temp <= 0.0f) return 1;
    return s->p.top_k > 0 ? s->p.top_k : 0;
}

int32_t ts_sample(ts_sampler *s, float *logits, const int32_t *recent, int n_recent) {
    const ts_sampler_params *p = &s->p;
    sampler_penalize(s, logits, recent, n_recent);
    if (p->temp <= 0.0f) {
        int32_t best = 0;
        for (int i = 1; i < s->n_vocab; i++) if (logits[i] > logits[best]) best = i;
        return best;
    }
    int n = s->n_vocab;
    if (p->top_k > 0 && p->top_k < n) {
        keep_top_k(s->cand, logits, n, p->top_k);
        n = p->top_k;
    } else {
        for (int i = 0; i < n; i++) s->cand[i] = (struct candidate){ logits[i], 0.0f, i };
    }
    qsort(s->cand, (size_t)n, sizeof *s->cand, by_logit_desc);
    float maxl = s->cand[0].logit;
    double sum = 0.0;
    for (int i = 0; i < n; i++) {
        s->cand[i].prob = expf((s->cand[i].logit - maxl) / p->temp);
        sum += s->cand[i].prob;
    }
    for (int i = 0; i < n; i++) s->cand[i].prob = (float)(s->cand[i].prob / sum);
    if (p->top_p < 1.0f) {   /* 0 keeps the most likely token */
        double cum = 0.0;
        for (int i = 0; i < n; i++) {
            cum += s->cand[i].prob;
            if (cum >= p->top_p) { n = i + 1; break; }
        }
    }
    if (p->min_p > 0.0f) {
        float floor_p = s->cand[0].prob * p->min_p;
        int keep = 1;
        while (keep < n && s->cand[keep].prob >= floor_p) keep++;
        n = keep;
    }
    double total = 0.0;
    for (int i = 0; i < n; i++) total += s->cand[i].prob;
    double r = next_uniform(s) * total, acc = 0.0;
    for (int i = 0; i < n; i++) {
        acc += s->cand[i].prob;
        if (r < acc) return s->cand[i].id;
    }
    return s->cand[n - 1].id;
}
