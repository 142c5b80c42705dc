/* `build/opt/bench_grammar VOCAB...`: what a grammar mask costs per token on real vocabularies (a
 * GGUF, or a folder with tokenizer.json). For a JSON schema grammar in several states (the start,
 * inside a string, after a key, in a number, between members) it times the full mask (every token
 * tried, the sorted walk) and the quick path (greedy: the most likely tokens tried one by one, on
 * logits that favour an allowed token as a trained model's do, and on random logits, which fall back
 * to the walk when none of the 64 most likely is allowed). Compare with a decoded token's time. */
#include "tessera.h"
#include "generate/constrain.h"
#include "load/model.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static const char SCHEMA[] = "{\"type\":\"object\",\"properties\":{\"name\":{\"type\":\"string\"},\"age\":{\"type\":\"integer\"},"
                             "\"tags\":{\"type\":\"array\",\"items\":{\"enum\":[\"red\",\"green\"]}}},\"required\":[\"name\",\"age\",\"tags\"]}";

int main(int argc, char **argv) {
    if (argc < 2) { fprintf(stderr, "usage: bench_grammar VOCAB...\n"); return 1; }
    static const char *states[] = { "", "{\"name\":\"Ad", "{\"name\":\"Ada\",\"age\":", "{\"name\":\"Ada\",\"age\":4", "{\"name\":\"Ada\",\"age\":42,\"tags\":[" };
    static const char *state_names[] = { "start", "in a string", "after a key", "in a number", "in an array" };
    ts_error err;
    ts_grammar *g;
    if (ts_grammar_from_json_schema(SCHEMA, sizeof SCHEMA - 1, &g, &err) != 0) { fprintf(stderr, "%s\n", err.msg); return 1; }
    for (int v = 1; v < argc; v++) {
        ts_model *m;
        ts_load_options lo = {0};
        if (ts_model_load(argv[v], &lo, &m, &err) != 0) { fprintf(stderr, "%s\n", err.msg); return 1; }
        if (!m->g.n_vocab) m->g.n_vocab = m->voc.n;   /* a vocabulary file: its tokens stand for the logits' */
        const int nv = ts_model_n_vocab(m);
        double t0 = now();
        token_texts *tt;
        if (constrain_texts_build(m, &tt, &err) != 0) { fprintf(stderr, "%s\n", err.msg); return 1; }
        printf("%s: %d tokens, sorted in %.1f ms\n", argv[v], nv, (now() - t0) * 1e3);
        float *logits = malloc((size_t)nv * sizeof *logits);
        uint64_t r = 1;
        for (size_t s = 0; s < sizeof states / sizeof *states; s++) {
            grammar_matcher *gm;
            if (grammar_matcher_new(g, &gm, &err) != 0 || grammar_matcher_feed(gm, states[s], strlen(states[s]), &err) != 1) { fprintf(stderr, "state\n"); return 1; }
            const int reps = 20;
            double full = 0, quick_good = 0, quick_random = 0;
            int allowed = 0;
            for (int k = 0; k < reps; k++) {
                for (int t = 0; t < nv; t++) { r = r * 6364136223846793005ULL + 1; logits[t] = (float)(r >> 40) / 16777216.0f; }
                float *copy = malloc((size_t)nv * sizeof *copy);
                memcpy(copy, logits, (size_t)nv * sizeof *copy);
                double a = now();
                constrain_logits(gm, tt, m, copy, 0, &err);
                full += now() - a;
                if (k == 0) { allowed = 0; for (int t = 0; t < nv; t++) allowed += copy[t] != -INFINITY; }
                /* a trained model's most likely token is usually one the grammar allows: make it so */
                int32_t best = 0;
                for (int t = 0; t < nv; t++) if (copy[t] != -INFINITY) { best = t; break; }
                memcpy(copy, logits, (size_t)nv * sizeof *copy);
                copy[best] = 10.0f;
                a = now();
                constrain_logits(gm, tt, m, copy, 1, &err);
                quick_good += now() - a;
                memcpy(copy, logits, (size_t)nv * sizeof *copy);
                a = now();
                constrain_logits(gm, tt, m, copy, 1, &err);
                quick_random += now() - a;
                free(copy);
            }
            printf("  %-12s %6d allowed | full mask %7.2f ms | greedy, likely token allowed %6.3f ms | greedy, random logits %7.2f ms\n",
                   state_names[s], allowed, full / reps * 1e3, quick_good / reps * 1e3, quick_random / reps * 1e3);
            grammar_matcher_free(gm);
        }
        free(logits);
        constrain_texts_free(tt);
        ts_model_free(m);
    }
    ts_grammar_free(g);
    return 0;
}
