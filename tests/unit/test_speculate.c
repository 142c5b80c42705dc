/* Speculative decoding is lossless: on every fixture model that generates (dense, sliding-window,
 * mixture-of-experts and hybrid recurrent ones), answers with prompt lookup (ngram) and with a draft
 * model (stories260K-q8_0, a random model, or the model drafting for itself) are token for token
 * those of plain decoding, greedy and seeded sampling alike (the sampler draws one number per
 * emitted token either way), with the same log-probabilities; several slots speculating side by
 * side give each request's single-slot plain answer; a conversation continued after a speculative
 * answer (drafted positions left in the cache) too. Proposals are taken on a repetitive text; a
 * draft of another vocabulary, out-of-range K and n are refused by name; on_logits requests decode
 * plainly. The sessions propose every step (spec_always), so that every step is verified; several
 * slots proposing only where the measured costs say it pays answer the same too, and the choice of
 * how many proposals pay (speculate_best_k) is checked on costs given to it. */
#include "tessera.h"
#include "check.h"
#include "generate/speculate.h"
#include <math.h>
#include <string.h>

#define N_CTX 256
#define MAX_GEN 64

typedef struct outcome {
    int32_t tok[MAX_GEN + 1];
    float lp[MAX_GEN + 1];
    int n, drafted, accepted, has_lp;
    const char *finish;
} outcome;

static ts_model *load(const char *rel) {
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", fixtures_dir(), rel);
    ts_error err = {{0}};
    ts_model *m = NULL;
    if (ts_model_load(path, NULL, &m, &err) != 0) { CHECK(0, "load %s: %s", rel, err.msg); return NULL; }
    return m;
}

static ts_session *session(ts_model *m, int slots, int spec, int k, ts_model *draft, const char *label) {
    ts_session_options so = { .n_ctx = N_CTX, .n_threads = 1, .n_slots = slots, .spec = spec, .spec_k = k, .draft = draft,
                              .spec_always = true };
    ts_session *s = NULL;
    ts_error err = {{0}};
    if (ts_session_new_opts(m, &so, &s, &err) != 0) { CHECK(0, "%s: session: %s", label, err.msg); return NULL; }
    return s;
}

static void keep(outcome *o, const ts_gen_result *r) {
    memset(o, 0, sizeof *o);
    o->n = r->n_generated < MAX_GEN ? r->n_generated : MAX_GEN;
    memcpy(o->tok, r->tokens, (size_t)o->n * sizeof *o->tok);
    o->has_lp = r->logprobs != NULL;
    for (int i = 0; i < o->n && r->logprobs; i++) o->lp[i] = r->logprobs[i].logprob;
    o->drafted = r->n_drafted;
    o->accepted = r->n_accepted;
    o->finish = r->finish_reason;
}

static ts_gen_request request(const int32_t *prompt, int n, int max, bool sampled, uint64_t seed) {
    ts_gen_request rq = { .prompt = prompt, .n_prompt = n, .max_tokens = max, .sampling = ts_sampler_default_params(),
                          .ignore_eos = true, .logprobs = 2 };
    if (sampled) {
        rq.sampling.temp = 0.9f;
        rq.sampling.top_k = 40;
        rq.sampling.top_p = 0.95f;
        rq.sampling.repeat_penalty = 1.1f;
        rq.sampling.seed = seed;
    }
    return rq;
}

static int gen(ts_session *s, const int32_t *prompt, int n, int max, bool sampled, uint64_t seed, outcome *o) {
    ts_gen_request rq = request(prompt, n, max, sampled, seed);
    ts_gen_result r;
    ts_error err = {{0}};
    if (ts_session_generate(s, &rq, &r, &err) != 0) { CHECK(0, "generate: %s", err.msg); return -1; }
    keep(o, &r);
    ts_gen_result_free(&r);
    return 0;
}

static bool same(const outcome *a, const outcome *b) {
    if (a->n != b->n || memcmp(a->tok, b->tok, (size_t)a->n * sizeof *a->tok) != 0) return false;
    for (int i = 0; i < a->n; i++) if (a->lp[i] != b->lp[i]) return false;
    return a->finish == b->finish || (a->finish && b->finish && !strcmp(a->finish, b->finish));
}

/* prompts: a repetitive one (lookups find matches), and a plain one */
static int32_t p_rep[64], p_plain[16];
static int n_rep, n_plain;

static void make_prompts(int nv) {
    n_rep = 0;
    p_rep[n_rep++] = 1;
    for (int r = 0; r < 3; r++) for (int i = 0; i < 12; i++) p_rep[n_rep++] = (37 + 11 * i) % nv;
    n_plain = 0;
    for (int i = 0; i < 9; i++) p_plain[n_plain++] = (5 + 53 * i * i) % nv;
}

/* One model: plain, ngram and draft answers agree, greedy and sampled; a continued conversation. */
static void run_model(const char *rel, const char *draft_rel, bool self_draft, bool full) {
    ts_model *m = load(rel);
    if (!m) return;
    ts_model *dm = draft_rel ? load(draft_rel) : NULL;
    make_prompts(ts_model_n_vocab(m));
    char label[256];
    ts_session *plain = session(m, 1, TS_SPEC_OFF, 0, NULL, rel);
    ts_session *spec[3] = { session(m, 1, TS_SPEC_NGRAM, 0, NULL, rel),
                            dm ? session(m, 1, TS_SPEC_DRAFT, 0, dm, rel) : NULL,
                            self_draft ? session(m, 1, TS_SPEC_DRAFT, 5, m, rel) : NULL };
    const char *names[3] = { "ngram", "draft", "self-draft" };
    const int32_t *prompts[2] = { p_rep, p_plain };
    const int n_prompts[2] = { n_rep, n_plain };
    for (int pi = 0; plain && pi < 1 + full; pi++) {
        for (int sampled = 0; sampled < 2 - pi; sampled++) {   /* sampled: the repetitive prompt */
            outcome ref, got;
            const int max = sampled ? 24 : 32;
            if (gen(plain, prompts[pi], n_prompts[pi], max, sampled, 1234 + pi, &ref) != 0) continue;
            for (int k = 0; k < 3; k++) {
                if (!spec[k]) continue;
                snprintf(label, sizeof label, "%s: %s, %s prompt, %s", rel, names[k], pi ? "plain" : "repetitive",
                         sampled ? "sampled (seed)" : "greedy");
                if (gen(spec[k], prompts[pi], n_prompts[pi], max, sampled, 1234 + pi, &got) != 0) continue;
                CHECK(same(&ref, &got), "%s: %d tokens and their logprobs equal plain decoding's (%d of %d proposed taken)",
                      label, got.n, got.accepted, got.drafted);
                if (k == 2 && !sampled) {
                    /* without --ignore-eos's mask the draft's argmax is the answer's greedy token */
                    ts_gen_request rq = request(prompts[pi], n_prompts[pi], max, false, 0);
                    rq.ignore_eos = false;
                    ts_gen_result r;
                    ts_error err = {{0}};
                    if (ts_session_generate(spec[k], &rq, &r, &err) == 0) {
                        CHECK(r.n_drafted > 0 && r.n_accepted >= r.n_drafted - 1,
                              "%s: a model drafting for itself has every proposal taken (%d of %d)", label, r.n_accepted, r.n_drafted);
                        ts_gen_result_free(&r);
                    }
                }
            }
        }
    }
    /* a conversation: the second prompt continues the first answer (the cache holds drafted
     * positions past it, and recurrent states must rewind) */
    for (int k = 0; plain && full && k < 2; k++) {
        if (!spec[k]) continue;
        int32_t conv[N_CTX];
        outcome a1, a2, b1, b2;
        memcpy(conv, p_rep, (size_t)n_rep * sizeof *conv);
        if (gen(plain, conv, n_rep, 20, false, 0, &a1) != 0 || gen(spec[k], conv, n_rep, 20, false, 0, &b1) != 0) continue;
        int n = n_rep;
        memcpy(conv + n, a1.tok, (size_t)a1.n * sizeof *conv);
        n += a1.n;
        for (int i = 0; i < 5; i++) conv[n++] = p_plain[i];
        if (gen(plain, conv, n, 24, false, 0, &a2) != 0 || gen(spec[k], conv, n, 24, false, 0, &b2) != 0) continue;
        snprintf(label, sizeof label, "%s: %s, a conversation's second turn", rel, names[k]);
        CHECK(same(&a1, &b1) && same(&a2, &b2), "%s equals plain decoding's (%d tokens)", label, b2.n);
    }
    for (int k = 0; k < 3; k++) ts_session_free(spec[k]);
    ts_session_free(plain);
    ts_model_free(dm);
    ts_model_free(m);
}

/* Several slots speculating side by side: each request's answer is its single-slot plain one. */
static void run_slots(const char *rel, const char *draft_rel) {
    ts_model *m = load(rel);
    if (!m) return;
    ts_model *dm = draft_rel ? load(draft_rel) : NULL;
    make_prompts(ts_model_n_vocab(m));
    int32_t p3[8] = { 1, 40, 41, 42, 40, 41, 42, 40 };
    const int32_t *prompts[3] = { p_rep, p_plain, p3 };
    const int n_prompts[3] = { n_rep, n_plain, 8 };
    ts_session *plain = session(m, 1, TS_SPEC_OFF, 0, NULL, rel);
    outcome ref[3][2];
    for (int i = 0; plain && i < 3; i++)
        for (int sm = 0; sm < 2; sm++) gen(plain, prompts[i], n_prompts[i], 24, sm, 77 + i, &ref[i][sm]);
    for (int run = 0; plain && run < 4; run++) {   /* ngram, draft; proposing every step, then where it pays */
        const int mode = run % 2 ? TS_SPEC_DRAFT : TS_SPEC_NGRAM;
        const bool always = run < 2;
        if (mode == TS_SPEC_DRAFT && !dm) continue;
        ts_session *s = NULL;
        ts_session_options so = { .n_ctx = N_CTX, .n_threads = 1, .n_slots = 3, .spec = mode, .spec_always = always,
                                  .draft = mode == TS_SPEC_DRAFT ? dm : NULL };
        ts_error serr = {{0}};
        if (ts_session_new_opts(m, &so, &s, &serr) != 0) { CHECK(0, "%s: session: %s", rel, serr.msg); continue; }
        for (int sm = 0; sm < 2; sm++) {
            ts_gen_request rq[3];
            ts_gen_result res[3];
            ts_error rq_err[3], err;
            int slot_of[3], ok = 1;
            for (int i = 0; i < 3; i++) {
                rq[i] = request(prompts[i], n_prompts[i], 24, sm, 77 + i);
                slot_of[i] = ts_session_submit(s, &rq[i], &res[i], &rq_err[i], &err);
                if (slot_of[i] < 0) { CHECK(0, "%s: submit: %s", rel, err.msg); ok = 0; }
            }
            ts_gen_done done[3];
            int finished = 0, rc_all = 0;
            while (ok && finished < 3) {
                int nd = ts_session_step(s, done);
                for (int d = 0; d < nd; d++) { finished++; rc_all |= done[d].rc; }
            }
            bool all = ok && rc_all == 0;
            int drafted = 0;
            for (int i = 0; all && i < 3; i++) {
                outcome o;
                keep(&o, &res[i]);
                drafted += o.drafted;
                all = same(&o, &ref[i][sm]);
            }
            CHECK(all, "%s: 3 slots speculating (%s, %s, %s) answer as 3 single-slot plain runs (%d proposed)", rel,
                  ts_spec_mode_name(mode), always ? "every step" : "where it pays", sm ? "sampled" : "greedy", drafted);
            for (int i = 0; ok && rc_all == 0 && i < 3; i++) ts_gen_result_free(&res[i]);
        }
        ts_session_free(s);
    }
    ts_session_free(plain);
    ts_model_free(dm);
    ts_model_free(m);
}

static int on_logits_rows;
static int count_rows(void *user, const float *rows, int n_rows, int n_vocab) {
    (void)user; (void)rows; (void)n_vocab;
    on_logits_rows += n_rows;
    return 0;
}

/* Refusals, acceptance on a story, on_logits. */
static void run_misc(void) {
    ts_model *m = load("stories260K/stories260K.gguf");
    ts_model *other = load("aidreams260K/aidreams260K.gguf");
    ts_model *big = load("qa-llama/qa-llama-q8_0.gguf");
    if (!m || !other || !big) { ts_model_free(m); ts_model_free(other); ts_model_free(big); return; }
    ts_error err = {{0}};
    ts_session *s = NULL;
    ts_session_options so = { .n_ctx = N_CTX, .n_threads = 1, .spec = TS_SPEC_DRAFT, .draft = other };
    CHECK(ts_session_new_opts(m, &so, &s, &err) != 0 && strstr(err.msg, "aidreams260K.gguf") && strstr(err.msg, "vocabulary differs"),
          "a draft of the same size but other token texts is refused by name: %s", err.msg);
    so.draft = big;
    CHECK(ts_session_new_opts(m, &so, &s, &err) != 0 && strstr(err.msg, "32000 tokens") && strstr(err.msg, "qa-llama"),
          "a draft of another vocabulary size is refused by name: %s", err.msg);
    so.draft = NULL;
    CHECK(ts_session_new_opts(m, &so, &s, &err) != 0, "draft mode without a draft is refused: %s", err.msg);
    so = (ts_session_options){ .n_ctx = N_CTX, .n_threads = 1, .spec = TS_SPEC_NGRAM, .spec_k = TS_SPEC_MAX_K + 1 };
    CHECK(ts_session_new_opts(m, &so, &s, &err) != 0 && strstr(err.msg, "33"), "K out of range is refused: %s", err.msg);
    so.spec_k = 0;
    so.spec_n = -2;
    CHECK(ts_session_new_opts(m, &so, &s, &err) != 0 && strstr(err.msg, "-2"), "n out of range is refused: %s", err.msg);
    so = (ts_session_options){ .n_ctx = N_CTX, .n_threads = 1, .spec = TS_SPEC_NGRAM, .draft = m };
    CHECK(ts_session_new_opts(m, &so, &s, &err) != 0, "a draft with ngram mode is refused: %s", err.msg);
    CHECK(ts_spec_mode_from_name("ngram") == TS_SPEC_NGRAM && ts_spec_mode_from_name("draft") == TS_SPEC_DRAFT &&
          ts_spec_mode_from_name("off") == TS_SPEC_OFF && ts_spec_mode_from_name("x") == -1, "mode names");

    /* a story continues with repeated phrases: prompt lookup proposes, and some are taken */
    so = (ts_session_options){ .n_ctx = N_CTX, .n_threads = 1, .spec = TS_SPEC_NGRAM, .spec_always = true };
    if (ts_session_new_opts(m, &so, &s, &err) == 0) {
        int32_t ids[64];
        const char *text = "Once upon a time, there was a little girl named Lily. She loved to play. Once upon a time";
        int n = ts_tokenize(m, text, strlen(text), true, false, ids, 64, &err);
        ts_gen_request rq = { .prompt = ids, .n_prompt = n, .max_tokens = 120, .sampling = ts_sampler_default_params() };
        ts_gen_result r;
        if (ts_session_generate(s, &rq, &r, &err) == 0) {
            CHECK(r.n_drafted > 0 && r.n_accepted > 0 && r.n_accepted <= r.n_drafted,
                  "stories260K, ngram: %d of %d proposed tokens taken over %d generated", r.n_accepted, r.n_drafted, r.n_generated);
            ts_gen_result_free(&r);
        } else {
            CHECK(0, "generate: %s", err.msg);
        }
        /* on_logits: every row, so plain decoding */
        on_logits_rows = 0;
        rq.on_logits = count_rows;
        rq.max_tokens = 20;
        if (ts_session_generate(s, &rq, &r, &err) == 0) {
            CHECK(r.n_drafted == 0 && on_logits_rows == n + r.n_generated - 1,
                  "on_logits: decoded plainly, %d rows for %d prompt tokens and %d generated", on_logits_rows, n, r.n_generated);
            ts_gen_result_free(&r);
        }
        ts_session_free(s);
    }
    ts_model_free(m);
    ts_model_free(other);
    ts_model_free(big);
}

/* speculate_best_k on step costs given to it (seconds by width) */
static void run_best_k(void) {
    speculate_costs c = { { 0 } };
    CHECK(speculate_best_k(&c, 1, 1, 8, 0.9) == 0, "no step measured: none proposed (a plain step measures one)");
    c.step[1] = 1;
    CHECK(speculate_best_k(&c, 1, 1, 8, 0.5) == 8, "only one token's step measured: the wider ones are guessed as cheap, K proposed");
    for (int w = 1; w < SPECULATE_WIDTHS; w++) c.step[w] = w;   /* a forward's time grows with its positions */
    int most = 0;
    for (double p = 0.05; p < 1; p += 0.1) { int k = speculate_best_k(&c, 1, 1, 8, p); if (k > most) most = k; }
    CHECK(most == 0, "a step's time growing with its positions: no proposals pay at any odds (at most %d)", most);
    for (int w = 1; w < SPECULATE_WIDTHS; w++) c.step[w] = 1;   /* a forward's time the same at any width */
    CHECK(speculate_best_k(&c, 1, 1, 8, 0.3) == 8 && speculate_best_k(&c, 3, 3, 6, 0.3) == 6,
          "a step's time the same at any width: K proposed (one slot, and the third of three)");
    c.proposal = 1;   /* a draft as slow as the model */
    CHECK(speculate_best_k(&c, 1, 1, 8, 0.95) == 0, "a draft that takes a step's time per proposal: none pay");
    /* the 1B Q4_K_M's measured forwards (ms at 1, 2, 3, 5 and 9 positions; 4, 6-8 interpolated) */
    speculate_costs b = { { 0 } };
    b.step[1] = 35.0; b.step[2] = 39.5; b.step[3] = 42.5; b.step[5] = 48.5; b.step[9] = 69.4;
    const int low = speculate_best_k(&b, 1, 1, 8, 0.1), mid = speculate_best_k(&b, 1, 1, 8, 0.5), high = speculate_best_k(&b, 1, 1, 8, 0.9);
    CHECK(low == 0 && mid >= 1 && mid <= 4 && high >= 6,
          "the 1B's costs: none at odds 0.1 (%d), a few at 0.5 (%d), most of K at 0.9 (%d)", low, mid, high);
}

/* A draft's cost per proposal is taken from its steps, not from a catch-up on a whole prompt */
static void run_draft_steps(void) {
    ts_model *dm = load("stories260K/stories260K-q8_0.gguf");
    if (!dm) return;
    speculate_draft d;
    ts_error err = {{0}};
    if (speculate_draft_new(&d, dm, N_CTX, 1, 1, &err) != 0) { CHECK(0, "draft context: %s", err.msg); ts_model_free(dm); return; }
    int32_t toks[64], out[8];
    for (int i = 0; i < 20; i++) toks[i] = 1 + (7 * i) % 300;
    speculate_want w = { 0, toks, 20, 4, out, 0 };
    int rc1 = speculate_draft_propose(&d, &w, 1, &err);
    const int first = d.step_proposals, got1 = w.n_out;
    toks[20] = out[0];   /* the model took the first proposal and sampled another token */
    toks[21] = 5;
    w = (speculate_want){ 0, toks, 22, 4, out, 0 };
    int rc2 = speculate_draft_propose(&d, &w, 1, &err);
    CHECK(rc1 == 0 && rc2 == 0 && got1 == 4 && first == 3 && d.step_proposals == 4 && d.step_seconds > 0,
          "a draft's proposals counted for its cost: 3 of 4 after a 20-token prompt's catch-up (%d), all 4 after "
          "following a step (%d)", first, d.step_proposals);
    speculate_draft_free(&d);
    ts_model_free(dm);
}

int main(void) {
    const char *stories_q8 = "stories260K/stories260K-q8_0.gguf";
    run_best_k();
    run_draft_steps();
    run_misc();
    run_model("stories260K/stories260K.gguf", stories_q8, true, true);
    run_model("stories260K/stories260K.gguf", "smollm3-tiny/model-q8_0.gguf", false, false);   /* a random draft */
    run_model("qa-llama/qa-llama-q8_0.gguf", "llama2-tiny-random/llama-2-tiny-random.gguf", false, false);
    run_model("llama-tiny/model-q4_k_m.gguf", NULL, false, true);
    run_model("gemma2-tiny/model-f32.gguf", stories_q8, true, true);          /* sliding window 6 */
    run_model("gemma3-tiny/model-q8_0.gguf", stories_q8, false, true);        /* sliding rings */
    run_model("olmo3-tiny/model-f32.gguf", NULL, false, true);                /* sliding window 5, YaRN */
    run_model("gemma4-ple-tiny/model-f32.gguf", NULL, false, true);           /* per-layer embeddings */
    run_model("gemma4-moe-tiny/model-f32.gguf", NULL, false, true);
    run_model("phi3-tiny/model-q8_0.gguf", NULL, false, true);
    run_model("qwen2-tiny/model-q4_k_m.gguf", NULL, false, true);
    run_model("smollm3-tiny/model-q8_0.gguf", NULL, false, true);
    run_model("granite-tiny/model-q8_0.gguf", NULL, false, true);
    run_model("mistral3-tiny/model-f32.gguf", NULL, false, true);
    run_model("qwen3moe-tiny/model-q8_0.gguf", stories_q8, false, true);      /* experts */
    run_model("mixtral-tiny/model-q8_0.gguf", NULL, false, true);
    run_model("gpt-oss-tiny/model-mxfp4_moe.gguf", NULL, false, true);        /* sinks, sliding, experts */
    run_model("qwen35-tiny/model-q8_0.gguf", "lfm2-tiny/model-q8_0.gguf", true, true);   /* DeltaNet; a recurrent draft */
    run_model("qwen35moe-tiny/model-q8_0.gguf", NULL, false, true);
    run_model("lfm2-tiny/model-q8_0.gguf", NULL, true, true);                 /* short convolutions */
    run_model("granite-hybrid-tiny/model-q4_k_m.gguf", stories_q8, false, true);   /* Mamba-2 */
    run_model("granite-hybrid-moe-tiny/model-f32.gguf", NULL, false, true);
    run_slots("stories260K/stories260K.gguf", "stories260K/stories260K-q8_0.gguf");
    run_slots("gemma3-tiny/model-q8_0.gguf", "stories260K/stories260K-q8_0.gguf");
    run_slots("qwen35-tiny/model-q8_0.gguf", "granite-hybrid-tiny/model-q8_0.gguf");
    run_slots("granite-hybrid-tiny/model-q4_k_m.gguf", "stories260K/stories260K-q8_0.gguf");
    CHECK_EXIT();
}
