/* The sampler (ts_sampler_*, src/generate/sampler.c) against the semantics llama.cpp documents for
 * its options, checked on small hand-made logits:
 *   temp <= 0          greedy: the argmax (lowest id on a tie), whatever the other options;
 *   temp T > 0         a draw from softmax(logit / T);
 *   top_k K > 0        only the K highest logits are candidates (K <= 0 or >= n_vocab: off);
 *   top_p P < 1        the fewest most likely candidates whose probabilities sum to >= P (0: the top one);
 *   min_p M > 0        only candidates with p >= M * p(most likely);
 *   repeat_penalty R   each distinct token among the last repeat_last_n (-1: all, 0: none) has its
 *                      logit divided by R when positive, multiplied by R otherwise.
 * Sampled frequencies are compared with the probabilities computed here from the softmax: a count
 * must lie within 5 standard deviations of N p (binomial), and tokens the rules exclude must never
 * come. The seeds are fixed, so each run draws the same samples; the bounds are wide enough that any
 * seed passes them but for a one-in-millions chance, and narrow enough that a wrong temperature, a
 * missing renormalization or an off-by-one cut fails by dozens of deviations.
 *
 * top_p and min_p are checked at temperature 1 only: llama.cpp's default chain applies the
 * temperature after them, tessera's before them, and the two agree only at T = 1. */
#include "tessera.h"
#include "check.h"
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#define NV 8          /* vocabulary of the hand-made logits */
#define DRAWS 20000

/* Logits with distinct, well separated probabilities (softmax at T = 1, by id: .089 .442 .040 .242
 * .016 .133 .030 .008), stored out of order so that "the top k" is not "the first k". */
static const float base_logits[NV] = { 0.5f, 2.1f, -0.3f, 1.5f, -1.2f, 0.9f, -0.6f, -1.9f };

static ts_sampler_params params(float temp, int top_k, float top_p, float min_p) {
    ts_sampler_params p = ts_sampler_default_params();
    p.temp = temp;
    p.top_k = top_k;
    p.top_p = top_p;
    p.min_p = min_p;
    p.repeat_penalty = 1.0f;
    p.seed = 1234;
    return p;
}

/* The probabilities the rules give: softmax(logits / temp) over the candidates keep[] marks,
 * renormalized; 0 elsewhere. */
static void expected_probs(const float *logits, double temp, const bool *keep, double *p) {
    double mx = -INFINITY, sum = 0.0;
    for (int i = 0; i < NV; i++) if (keep[i] && logits[i] > mx) mx = logits[i];
    for (int i = 0; i < NV; i++) {
        p[i] = keep[i] ? exp((logits[i] - mx) / temp) : 0.0;
        sum += p[i];
    }
    for (int i = 0; i < NV; i++) p[i] /= sum;
}

/* Draws DRAWS tokens with p (fresh logits each time, no history) and compares the counts with
 * want[]. Returns the worst deviation in standard deviations (-1 if a token with p = 0 came). */
static double draw_and_compare(const ts_sampler_params *p, const float *logits, const double *want,
                               int *counts) {
    ts_sampler *s;
    ts_error err;
    memset(counts, 0, NV * sizeof *counts);
    if (ts_sampler_new(p, NV, &s, &err) != 0) return 1e9;
    for (int d = 0; d < DRAWS; d++) {
        float l[NV];
        memcpy(l, logits, sizeof l);
        int32_t t = ts_sample(s, l, NULL, 0);
        if (t < 0 || t >= NV) { ts_sampler_free(s); return 1e9; }
        counts[t]++;
    }
    ts_sampler_free(s);
    double worst = 0.0;
    for (int i = 0; i < NV; i++) {
        if (want[i] == 0.0) {
            if (counts[i] != 0) return -1.0;
            continue;
        }
        double mean = DRAWS * want[i], sd = sqrt(DRAWS * want[i] * (1.0 - want[i]));
        double dev = fabs(counts[i] - mean) / (sd > 0.5 ? sd : 0.5);
        if (dev > worst) worst = dev;
    }
    return worst;
}

static void check_frequencies(const char *what, const ts_sampler_params *p, const float *logits,
                              double temp, const bool *keep) {
    double want[NV];
    int counts[NV];
    expected_probs(logits, temp, keep, want);
    double worst = draw_and_compare(p, logits, want, counts);
    CHECK(worst >= 0.0 && worst <= 5.0,
          "%s: %d draws match softmax within 5 sd (worst %.2f sd; counts %d %d %d %d %d %d %d %d)", what,
          DRAWS, worst, counts[0], counts[1], counts[2], counts[3], counts[4], counts[5], counts[6], counts[7]);
}

static int32_t argmax(const float *l, int n) {
    int32_t best = 0;
    for (int i = 1; i < n; i++) if (l[i] > l[best]) best = i;
    return best;
}

/* One draw from fresh logits with a history (the penalty's input). */
static int32_t sample_once(const ts_sampler_params *p, const float *logits, int n, const int32_t *recent,
                           int n_recent) {
    ts_sampler *s;
    ts_error err;
    float l[64];
    if (ts_sampler_new(p, n, &s, &err) != 0) return -2;
    memcpy(l, logits, (size_t)n * sizeof *l);
    int32_t t = ts_sample(s, l, recent, n_recent);
    ts_sampler_free(s);
    return t;
}

static void test_greedy(void) {
    /* random logits: temp 0 and temp < 0 pick the argmax, whatever top_k/top_p/min_p say */
    uint64_t x = 88172645463325252ull;
    int agree = 0, trials = 200;
    for (int trial = 0; trial < trials; trial++) {
        float l[37];
        for (int i = 0; i < 37; i++) {
            x ^= x << 13; x ^= x >> 7; x ^= x << 17;
            l[i] = (float)((double)(x >> 11) / 9007199254740992.0 * 20.0 - 10.0);
        }
        ts_sampler_params p = params(trial % 2 ? 0.0f : -1.0f, trial % 5, (float)(trial % 3) / 2.0f, 0.5f);
        p.seed = (uint64_t)trial;
        agree += sample_once(&p, l, 37, NULL, 0) == argmax(l, 37);
    }
    CHECK(agree == trials, "greedy (temp 0 and -1, any top_k/top_p/min_p) is the argmax in %d of %d random cases", agree, trials);

    float tie[6] = { 1.0f, 3.0f, -2.0f, 3.0f, 3.0f, 0.0f };
    ts_sampler_params p = params(0.0f, 0, 1.0f, 0.0f);
    CHECK(sample_once(&p, tie, 6, NULL, 0) == 1, "greedy: a tie goes to the lowest id");

    /* the defaults are greedy (README: temperature 0) and valid */
    ts_sampler_params d = ts_sampler_default_params();
    CHECK(d.temp <= 0.0f && sample_once(&d, base_logits, NV, NULL, 0) == argmax(base_logits, NV),
          "the default parameters are greedy");
}

static void test_temperature(void) {
    bool all[NV];
    for (int i = 0; i < NV; i++) all[i] = true;
    ts_sampler_params p = params(1.0f, 0, 1.0f, 0.0f);
    check_frequencies("temp 1, no filter", &p, base_logits, 1.0, all);
    p = params(0.5f, 0, 1.0f, 0.0f);
    check_frequencies("temp 0.5 (sharper)", &p, base_logits, 0.5, all);
    p = params(2.0f, 0, 1.0f, 0.0f);
    check_frequencies("temp 2 (flatter)", &p, base_logits, 2.0, all);

    /* a temperature the sampler did not apply would fail against the other one by far */
    double want[NV];
    int counts[NV];
    expected_probs(base_logits, 1.0, all, want);
    p = params(2.0f, 0, 1.0f, 0.0f);
    CHECK(draw_and_compare(&p, base_logits, want, counts) > 20.0,
          "temp 2 draws are far (> 20 sd) from the temp 1 probabilities (the check can tell them apart)");

    /* equal logits: equal chances */
    float flat[NV] = { 0 };
    p = params(0.8f, 0, 1.0f, 0.0f);
    check_frequencies("equal logits", &p, flat, 0.8, all);
}

static void test_top_k(void) {
    /* ids by logit, highest first: 1 3 5 0 2 6 4 7 */
    bool keep[NV] = { false };
    keep[1] = keep[3] = keep[5] = true;
    ts_sampler_params p = params(1.0f, 3, 1.0f, 0.0f);
    check_frequencies("top_k 3", &p, base_logits, 1.0, keep);
    p = params(0.7f, 3, 1.0f, 0.0f);
    check_frequencies("top_k 3 at temp 0.7", &p, base_logits, 0.7, keep);

    bool one[NV] = { false };
    one[1] = true;
    p = params(5.0f, 1, 1.0f, 0.0f);
    check_frequencies("top_k 1 (the argmax even at temp 5)", &p, base_logits, 5.0, one);

    bool all[NV];
    for (int i = 0; i < NV; i++) all[i] = true;
    p = params(1.0f, NV + 5, 1.0f, 0.0f);
    check_frequencies("top_k above the vocabulary (off)", &p, base_logits, 1.0, all);
    p = params(1.0f, -3, 1.0f, 0.0f);
    check_frequencies("top_k < 0 (off)", &p, base_logits, 1.0, all);
}

/* top_k on a large vocabulary with many equal logits: the sampler keeps the top k without sorting
 * the whole vocabulary; its draws must be those of the whole-vocabulary path (top_k off) on the
 * same logits with every token outside the top k set to -inf, the top k chosen here by sorting
 * (highest logit first, lowest id first among equals), with the same seed. */
#define NV_BIG 5000
static int by_logit_then_id(const void *a, const void *b) {
    const int x = *(const int *)a, y = *(const int *)b;
    const float lx = (float)(x * 7919 % 13) * 0.25f, ly = (float)(y * 7919 % 13) * 0.25f;
    if (lx != ly) return lx < ly ? 1 : -1;
    return x - y;
}
static void test_top_k_large(void) {
    static float logits[NV_BIG], masked[NV_BIG], l[NV_BIG];
    static int order[NV_BIG];
    for (int i = 0; i < NV_BIG; i++) {
        logits[i] = (float)(i * 7919 % 13) * 0.25f;   /* 13 values: hundreds of tokens share each */
        order[i] = i;
    }
    qsort(order, NV_BIG, sizeof *order, by_logit_then_id);
    const int ks[4] = { 1, 7, 40, 1000 };
    const float temps[2] = { 0.8f, 1.5f };
    int mismatched = 0, cases = 0;
    for (int ki = 0; ki < 4; ki++)
        for (int ti = 0; ti < 2; ti++) {
            for (int i = 0; i < NV_BIG; i++) masked[i] = -INFINITY;
            for (int i = 0; i < ks[ki]; i++) masked[order[i]] = logits[order[i]];
            ts_sampler_params pk = params(temps[ti], ks[ki], ti ? 1.0f : 0.95f, ti ? 0.0f : 0.05f);
            ts_sampler_params pf = pk;
            pf.top_k = 0;
            ts_sampler *sk, *sf;
            ts_error err;
            if (ts_sampler_new(&pk, NV_BIG, &sk, &err) != 0 || ts_sampler_new(&pf, NV_BIG, &sf, &err) != 0) {
                CHECK(0, "samplers for %d tokens: %s", NV_BIG, err.msg);
                return;
            }
            for (int d = 0; d < 200; d++) {
                memcpy(l, logits, sizeof l);
                const int32_t a = ts_sample(sk, l, NULL, 0);
                memcpy(l, masked, sizeof l);
                const int32_t b = ts_sample(sf, l, NULL, 0);
                mismatched += a != b;
            }
            cases++;
            ts_sampler_free(sk);
            ts_sampler_free(sf);
        }
    CHECK(mismatched == 0, "top_k 1, 7, 40, 1000 of %d tokens with ties: %d cases x 200 draws equal those of the whole "
          "vocabulary with the rest at -inf (%d differ)", NV_BIG, cases, mismatched);
}

static void test_top_p(void) {
    /* softmax at T = 1, sorted: p1 .442, p3 .242, p5 .133, p0 .089, ...; cumulative .442 .684 .817
     * .906 ...: top_p 0.8 keeps 1 3 5 (.684 < .8 <= .817); 0.6 keeps 1 3 (.442 < .6 <= .684) */
    double pr[NV];
    bool all[NV];
    for (int i = 0; i < NV; i++) all[i] = true;
    expected_probs(base_logits, 1.0, all, pr);
    CHECK(pr[1] < 0.58 && pr[1] + pr[3] > 0.62 && pr[1] + pr[3] < 0.78 && pr[1] + pr[3] + pr[5] > 0.81,
          "the top_p cuts below are clear of the cumulative sums (%.3f %.3f %.3f)", pr[1], pr[1] + pr[3],
          pr[1] + pr[3] + pr[5]);
    bool keep3[NV] = { false }, keep2[NV] = { false }, keep1[NV] = { false };
    keep3[1] = keep3[3] = keep3[5] = true;
    keep2[1] = keep2[3] = true;
    keep1[1] = true;
    ts_sampler_params p = params(1.0f, 0, 0.8f, 0.0f);
    check_frequencies("top_p 0.8", &p, base_logits, 1.0, keep3);
    p = params(1.0f, 0, 0.6f, 0.0f);
    check_frequencies("top_p 0.6", &p, base_logits, 1.0, keep2);
    p = params(1.0f, 0, 0.0f, 0.0f);
    check_frequencies("top_p 0 (only the most likely)", &p, base_logits, 1.0, keep1);
    p = params(1.0f, 0, 1.0f, 0.0f);
    check_frequencies("top_p 1 (off)", &p, base_logits, 1.0, all);
    /* after top_k: top_k 2 leaves 1 and 3 (.646 and .354 renormalized); top_p 0.6 keeps only 1 */
    p = params(1.0f, 2, 0.6f, 0.0f);
    check_frequencies("top_k 2 then top_p 0.6 (on the renormalized two)", &p, base_logits, 1.0, keep1);
}

static void test_min_p(void) {
    /* p / p(max) at T = 1 is exp(l - 2.1): 1 (id 1), .549 (3), .301 (5), .202 (0), .091 (2), ... */
    bool keep[NV] = { false }, keep1[NV] = { false }, all[NV];
    keep[1] = keep[3] = keep[5] = true;
    keep1[1] = true;
    for (int i = 0; i < NV; i++) all[i] = true;
    ts_sampler_params p = params(1.0f, 0, 1.0f, 0.25f);
    check_frequencies("min_p 0.25", &p, base_logits, 1.0, keep);
    keep[0] = true;
    p = params(1.0f, 0, 1.0f, 0.15f);
    check_frequencies("min_p 0.15", &p, base_logits, 1.0, keep);
    p = params(1.0f, 0, 1.0f, 1.0f);
    check_frequencies("min_p 1 (only the most likely)", &p, base_logits, 1.0, keep1);
    p = params(1.0f, 0, 1.0f, 0.0f);
    check_frequencies("min_p 0 (off)", &p, base_logits, 1.0, all);
}

static void test_repeat_penalty(void) {
    ts_sampler_params p = params(0.0f, 0, 1.0f, 0.0f);
    p.repeat_penalty = 1.5f;
    p.repeat_last_n = 64;
    /* positive logit divided: 2.0 / 1.5 = 1.33 < 1.5 */
    float pos[3] = { 2.0f, 1.5f, -1.0f };
    int32_t r0[1] = { 0 };
    CHECK(sample_once(&p, pos, 3, r0, 1) == 1 && sample_once(&p, pos, 3, NULL, 0) == 0,
          "repeat_penalty divides a recent token's positive logit (2 / 1.5 < 1.5)");
    /* negative logit multiplied: -1.0 * 1.5 = -1.5 < -1.2 */
    float neg[3] = { -1.0f, -1.2f, -3.0f };
    CHECK(sample_once(&p, neg, 3, r0, 1) == 1 && sample_once(&p, neg, 3, NULL, 0) == 0,
          "repeat_penalty multiplies a recent token's negative logit (-1 * 1.5 < -1.2)");
    /* below 1 it favours repeats: 1.0 / 0.5 = 2 > 1.5 */
    float fav[3] = { 1.0f, 1.5f, 0.0f };
    p.repeat_penalty = 0.5f;
    CHECK(sample_once(&p, fav, 3, r0, 1) == 0, "repeat_penalty 0.5 raises a recent token (1 / 0.5 > 1.5)");

    /* once per distinct token: [0 0 0] with penalty 2 gives 2 / 2 = 1 > 0.8 (three times: 0.25) */
    float once[2] = { 2.0f, 0.8f };
    int32_t r000[3] = { 0, 0, 0 };
    p.repeat_penalty = 2.0f;
    CHECK(sample_once(&p, once, 2, r000, 3) == 0, "a token repeated in the history is penalized once");

    /* the window: the last repeat_last_n tokens only */
    float win[4] = { 2.0f, 1.5f, 0.0f, 0.0f };
    int32_t hist[4] = { 0, 2, 3, 2 };
    p.repeat_penalty = 1.5f;
    p.repeat_last_n = 3;
    CHECK(sample_once(&p, win, 4, hist, 4) == 0, "repeat_last_n 3: a token 4 back is not penalized");
    p.repeat_last_n = 4;
    CHECK(sample_once(&p, win, 4, hist, 4) == 1, "repeat_last_n 4: the same token is penalized");
    p.repeat_last_n = -1;
    CHECK(sample_once(&p, win, 4, hist, 4) == 1, "repeat_last_n -1: the whole history counts");
    p.repeat_last_n = 0;
    CHECK(sample_once(&p, win, 4, hist, 4) == 0, "repeat_last_n 0: no penalty");
    p.repeat_last_n = 64;
    p.repeat_penalty = 1.0f;
    CHECK(sample_once(&p, win, 4, hist, 4) == 0, "repeat_penalty 1: no penalty");

    /* ids outside the vocabulary in the history are ignored */
    int32_t odd[3] = { -1, 99, 4 };
    p.repeat_penalty = 1.5f;
    CHECK(sample_once(&p, win, 4, odd, 3) == 0, "history ids outside the vocabulary are ignored");

    /* the penalty feeds the softmax: temp 1 frequencies follow the penalized logits */
    float pen[NV];
    memcpy(pen, base_logits, sizeof pen);
    pen[1] /= 2.0f;          /* 2.1 -> 1.05 */
    pen[2] *= 2.0f;          /* -0.3 -> -0.6 */
    int32_t h[2] = { 1, 2 };
    ts_sampler_params q = params(1.0f, 0, 1.0f, 0.0f);
    q.repeat_penalty = 2.0f;
    q.repeat_last_n = -1;
    bool all[NV];
    for (int i = 0; i < NV; i++) all[i] = true;
    double want[NV];
    expected_probs(pen, 1.0, all, want);
    ts_sampler *s;
    ts_error err;
    int counts[NV] = { 0 };
    double worst = 1e9;
    if (ts_sampler_new(&q, NV, &s, &err) == 0) {
        for (int d = 0; d < DRAWS; d++) {
            float l[NV];
            memcpy(l, base_logits, sizeof l);
            int32_t t = ts_sample(s, l, h, 2);
            if (t >= 0 && t < NV) counts[t]++;
        }
        ts_sampler_free(s);
        worst = 0.0;
        for (int i = 0; i < NV; i++) {
            double sd = sqrt(DRAWS * want[i] * (1.0 - want[i]));
            double dev = fabs(counts[i] - DRAWS * want[i]) / (sd > 0.5 ? sd : 0.5);
            if (dev > worst) worst = dev;
        }
    }
    CHECK(worst <= 5.0, "repeat_penalty 2 at temp 1: frequencies follow softmax of the penalized logits (worst %.2f sd)", worst);
}

static void test_seed(void) {
    ts_sampler_params p = params(1.3f, 0, 0.95f, 0.02f);
    int32_t a[300], b[300], c[300];
    ts_sampler *sa, *sb, *sc;
    ts_error err;
    p.seed = 42;
    int ok = ts_sampler_new(&p, NV, &sa, &err) == 0 && ts_sampler_new(&p, NV, &sb, &err) == 0;
    p.seed = 43;
    ok = ok && ts_sampler_new(&p, NV, &sc, &err) == 0;
    CHECK(ok, "three samplers created");
    if (!ok) return;
    int same_ab = 0, same_ac = 0;
    for (int i = 0; i < 300; i++) {
        float l[NV];
        memcpy(l, base_logits, sizeof l); a[i] = ts_sample(sa, l, NULL, 0);
        memcpy(l, base_logits, sizeof l); b[i] = ts_sample(sb, l, NULL, 0);
        memcpy(l, base_logits, sizeof l); c[i] = ts_sample(sc, l, NULL, 0);
        same_ab += a[i] == b[i];
        same_ac += a[i] == c[i];
    }
    CHECK(same_ab == 300, "the same seed reproduces the same 300 draws (%d equal)", same_ab);
    /* independent draws from this distribution agree with probability sum p^2 ~ .3 each */
    CHECK(same_ac < 200, "another seed gives another sequence (%d of 300 equal)", same_ac);
    ts_sampler_free(sa);
    ts_sampler_free(sb);
    ts_sampler_free(sc);
}

static void test_bad_params(void) {
    struct { const char *field; ts_sampler_params p; } bad[16];
    int n = 0;
    for (int i = 0; i < 16; i++) bad[i].p = ts_sampler_default_params();
    bad[n].field = "temp"; bad[n++].p.temp = NAN;
    bad[n].field = "temp"; bad[n++].p.temp = INFINITY;
    bad[n].field = "top_p"; bad[n++].p.top_p = -0.01f;
    bad[n].field = "top_p"; bad[n++].p.top_p = 1.01f;
    bad[n].field = "top_p"; bad[n++].p.top_p = NAN;
    bad[n].field = "min_p"; bad[n++].p.min_p = -0.5f;
    bad[n].field = "min_p"; bad[n++].p.min_p = 2.0f;
    bad[n].field = "min_p"; bad[n++].p.min_p = NAN;
    bad[n].field = "repeat_penalty"; bad[n++].p.repeat_penalty = 0.0f;
    bad[n].field = "repeat_penalty"; bad[n++].p.repeat_penalty = -1.0f;
    bad[n].field = "repeat_penalty"; bad[n++].p.repeat_penalty = NAN;
    bad[n].field = "repeat_penalty"; bad[n++].p.repeat_penalty = INFINITY;
    bad[n].field = "repeat_last_n"; bad[n++].p.repeat_last_n = -2;
    for (int i = 0; i < n; i++) {
        ts_sampler *s = (ts_sampler *)&bad[i];   /* not NULL: the failure must clear it */
        ts_error err = { "" };
        int rc = ts_sampler_new(&bad[i].p, NV, &s, &err);
        CHECK(rc != 0 && s == NULL && strstr(err.msg, bad[i].field) != NULL,
              "bad parameter %d refused, naming %s (\"%s\")", i, bad[i].field, err.msg);
        if (rc == 0) ts_sampler_free(s);
    }
    ts_sampler *s;
    ts_error err = { "" };
    ts_sampler_params d = ts_sampler_default_params();
    CHECK(ts_sampler_new(&d, 0, &s, &err) != 0 && s == NULL && err.msg[0], "a vocabulary of 0 tokens is refused (\"%s\")", err.msg);

    /* the ends of each range are accepted */
    ts_sampler_params edge[5];
    for (int i = 0; i < 5; i++) edge[i] = ts_sampler_default_params();
    edge[0].top_p = 0.0f; edge[0].min_p = 1.0f;
    edge[1].top_p = 1.0f; edge[1].min_p = 0.0f;
    edge[2].repeat_last_n = -1;
    edge[3].repeat_last_n = 0; edge[3].top_k = -7;
    edge[4].temp = -1.0f; edge[4].repeat_penalty = 1e-3f;
    int accepted = 0;
    for (int i = 0; i < 5; i++) {
        if (ts_sampler_new(&edge[i], NV, &s, &err) == 0) { accepted++; ts_sampler_free(s); }
    }
    CHECK(accepted == 5, "the ends of the ranges are accepted (%d of 5)", accepted);
}

int main(void) {
    test_greedy();
    test_temperature();
    test_top_k();
    test_top_k_large();
    test_top_p();
    test_min_p();
    test_repeat_penalty();
    test_seed();
    test_bad_params();
    CHECK_EXIT();
}
