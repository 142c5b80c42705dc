/* Grammar masks over real vocabularies (generate/constrain.h): GPT-2's 50k byte-level BPE (tokens
 * that are pieces of UTF-8 characters) and Llama's 32k SentencePiece. The sorted walk says of every
 * token what trying its bytes alone says; the quick path (the most likely tokens tried one by one)
 * keeps exactly the tokens the full mask followed by top-k would keep, for greedy and top-k, on
 * random logits in several grammar states. */
#include "check.h"
#include "json_gbnf.h"
#include "generate/constrain.h"
#include "load/model.h"
#include <math.h>
#include <string.h>

static uint64_t rng = 88172645463325252ULL;
static float next_logit(void) {
    rng ^= rng << 13; rng ^= rng >> 7; rng ^= rng << 17;
    return (float)((rng >> 11) % 100000) / 10000.0f;   /* ties happen too */
}

/* The tokens the full mask keeps, then the `need` best of them (the sampler's order). */
static int best_allowed(const float *masked, int nv, int need, int32_t *out) {
    int n = 0;
    for (int k = 0; k < need; k++) {
        int best = -1;
        for (int t = 0; t < nv; t++) {
            if (masked[t] == -INFINITY) continue;
            bool taken = false;
            for (int j = 0; j < n && !taken; j++) taken = out[j] == t;
            if (!taken && (best < 0 || masked[t] > masked[best])) best = t;
        }
        if (best < 0) break;
        out[n++] = best;
    }
    return n;
}

static void test_vocab(const char *path, const char *name) {
    ts_model *m;
    ts_error err;
    ts_load_options lo = {0};
    if (ts_model_load(path, &lo, &m, &err) != 0) { CHECK(0, "%s: loads (%s)", name, err.msg); return; }
    /* a vocabulary file has no output layer: its tokens stand for the logits' */
    if (!m->g.n_vocab) m->g.n_vocab = m->voc.n;
    grammar *g;
    token_texts *tt;
    if (grammar_parse(JSON_GBNF, strlen(JSON_GBNF), &g, &err) != 0 || constrain_texts_build(m, &tt, &err) != 0) {
        CHECK(0, "%s: grammar and texts (%s)", name, err.msg);
        ts_model_free(m);
        return;
    }
    const int nv = ts_model_n_vocab(m);
    /* states: the start, inside a string (after a partial UTF-8 character too), after a key, in a number */
    static const char *prefixes[] = { "", "{\"k", "[\"\xe2\x82", "{\"a\": ", "[1", "{\"a\": [true, " };
    int walk_bad = 0, quick_bad = 0, n_states = 0;
    float *logits = malloc((size_t)nv * sizeof *logits), *masked = malloc((size_t)nv * sizeof *masked);
    for (size_t p = 0; p < sizeof prefixes / sizeof *prefixes; p++) {
        grammar_matcher *gm;
        if (grammar_matcher_new(g, &gm, &err) != 0 || grammar_matcher_feed(gm, prefixes[p], strlen(prefixes[p]), &err) != 1) {
            CHECK(0, "%s: state \"%s\"", name, prefixes[p]);
            continue;
        }
        n_states++;
        if (grammar_matcher_allowed_sorted(gm, tt->text, tt->len, tt->lcp, tt->n, tt->allowed, &err) != 0) walk_bad++;
        for (int i = 0; i < tt->n; i++)
            if (grammar_matcher_allows(gm, tt->text[i], tt->len[i], &err) != tt->allowed[i]) walk_bad++;
        /* the quick path against the full mask, for greedy (1) and top-k (5, 40) */
        for (int trial = 0; trial < 3; trial++) {
            static const int needs[3] = { 1, 5, 40 };
            for (int t = 0; t < nv; t++) logits[t] = next_logit();
            memcpy(masked, logits, (size_t)nv * sizeof *masked);
            if (constrain_logits(gm, tt, m, masked, 0, &err) != 0) { quick_bad++; continue; }
            int32_t want[40], got[40];
            int nw = best_allowed(masked, nv, needs[trial], want);
            memcpy(masked, logits, (size_t)nv * sizeof *masked);
            if (constrain_logits(gm, tt, m, masked, needs[trial], &err) != 0) { quick_bad++; continue; }
            int ng = best_allowed(masked, nv, needs[trial], got);
            if (ng != nw || memcmp(want, got, (size_t)nw * sizeof *want) != 0) quick_bad++;
        }
        grammar_matcher_free(gm);
    }
    CHECK(walk_bad == 0 && n_states == 6, "%s: the sorted walk agrees with every token tried alone in 6 states (%d tokens)", name, tt->n);
    CHECK(quick_bad == 0, "%s: the quick path keeps what the full mask and top-k keep (greedy, k 5, k 40, 6 states)", name);
    free(logits);
    free(masked);
    constrain_texts_free(tt);
    grammar_free(g);
    ts_model_free(m);
}

int main(void) {
    char path[1024];
    snprintf(path, sizeof path, "%s/tokenizers/gguf/ggml-vocab-gpt-2.gguf", fixtures_dir());
    test_vocab(path, "gpt-2 (byte-level BPE)");
    snprintf(path, sizeof path, "%s/tokenizers/gguf/ggml-vocab-llama-spm.gguf", fixtures_dir());
    test_vocab(path, "llama (SentencePiece)");
    CHECK_EXIT();
}
