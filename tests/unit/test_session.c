/* The session API (ts_session_*) on stories260K, against an independent path: a greedy loop written
 * here with ts_eval and an argmax. Checked: the answer and its token count, the prefix cache (a
 * second request reuses exactly the shared prefix and answers the same), the stop flag (as a
 * signal handler would set it), a streaming callback that asks to stop, max_tokens -1 (until the
 * context is full), stop strings, and the sampler's refusals by parameter name. */
#include "tessera.h"
#include "check.h"
#include <math.h>
#include <string.h>

#define N_CTX 64

/* The reference: greedy decoding written directly on a fresh context. */
static int greedy_reference(ts_model *m, const int32_t *prompt, int n_prompt, int n_gen, char *text, size_t cap) {
    ts_error err;
    ts_context *c;
    if (ts_context_new(m, N_CTX, 1, &c, &err) != 0) return -1;
    int nv = ts_model_n_vocab(m);
    float *logits = malloc((size_t)nv * sizeof *logits);
    size_t len = 0;
    int rc = ts_eval(c, prompt, n_prompt, logits, false, &err);
    for (int i = 0; i < n_gen && rc == 0; i++) {
        int32_t best = 0;
        for (int t = 1; t < nv; t++) if (logits[t] > logits[best]) best = t;
        if (ts_token_is_eog(m, best)) break;
        char piece[256];
        int pl = ts_token_text(m, best, piece, sizeof piece);
        if (pl > 0 && len + (size_t)pl < cap) { memcpy(text + len, piece, (size_t)pl); len += (size_t)pl; }
        if (i + 1 < n_gen) rc = ts_eval(c, &best, 1, logits, false, &err);
    }
    text[len] = 0;
    free(logits);
    ts_context_free(c);
    return rc;
}

typedef struct stream { char text[4096]; size_t len; int calls, stop_after; } stream;

static int collect(void *user, const char *text, size_t len) {
    stream *s = user;
    if (s->len + len < sizeof s->text) { memcpy(s->text + s->len, text, len); s->len += len; s->text[s->len] = 0; }
    return ++s->calls == s->stop_after;
}

int main(void) {
    char path[512];
    snprintf(path, sizeof path, "%s/stories260K/stories260K.gguf", fixtures_dir());
    ts_error err = {{0}};
    ts_model *m;
    if (ts_model_load(path, NULL, &m, &err) != 0) { CHECK(0, "load %s: %s", path, err.msg); CHECK_EXIT(); }
    ts_session *s;
    CHECK(ts_session_new(m, N_CTX, 1, &s, &err) == 0 && ts_session_n_ctx(s) == N_CTX, "a session of %d positions", N_CTX);

    const char *a = "Once upon a time", *b = "Once upon a time there was";
    int32_t pa[32], pb[32];
    int na = ts_tokenize(m, a, strlen(a), true, false, pa, 32, &err);
    int nb = ts_tokenize(m, b, strlen(b), true, false, pb, 32, &err);
    int shared = 0;
    while (shared < na && shared < nb && pa[shared] == pb[shared]) shared++;

    /* greedy answer, streamed, equals the reference loop */
    char want[4096];
    CHECK(greedy_reference(m, pa, na, 20, want, sizeof want) == 0, "the reference loop runs");
    stream st = {0};
    ts_gen_request rq = { .prompt = pa, .n_prompt = na, .max_tokens = 20, .sampling = ts_sampler_default_params(),
                          .on_text = collect, .user = &st };
    ts_gen_result r;
    int rc = ts_session_generate(s, &rq, &r, &err);
    CHECK(rc == 0 && r.n_generated == 20 && !strcmp(r.finish_reason, "length"), "20 tokens, finish \"length\" (%s)", err.msg);
    CHECK(rc == 0 && !strcmp(r.text, want), "the answer equals the reference greedy loop: \"%s\"", want);
    CHECK(rc == 0 && !strcmp(st.text, r.text), "the streamed pieces add up to the answer");
    CHECK(rc == 0 && r.n_reused == 0 && r.n_prompt == na, "a fresh session evaluates the whole prompt");
    ts_gen_result_free(&r);

    /* the second prompt shares a prefix: exactly that is reused, and the answer is the reference's */
    CHECK(greedy_reference(m, pb, nb, 12, want, sizeof want) == 0, "the reference loop runs");
    rq = (ts_gen_request){ .prompt = pb, .n_prompt = nb, .max_tokens = 12, .sampling = ts_sampler_default_params() };
    rc = ts_session_generate(s, &rq, &r, &err);
    CHECK(rc == 0 && shared == na && r.n_reused == shared, "the shared prefix is reused: %d of %d positions (want %d)",
          r.n_reused, nb, shared);
    CHECK(rc == 0 && !strcmp(r.text, want), "after reuse the answer equals the reference: \"%s\"", r.text);
    ts_gen_result_free(&r);
    ts_session_reset(s);
    rc = ts_session_generate(s, &rq, &r, &err);
    CHECK(rc == 0 && r.n_reused == 0 && !strcmp(r.text, want), "after ts_session_reset nothing is reused, same answer");
    ts_gen_result_free(&r);

    /* the stop flag, raised before the answer: no token; a callback asking to stop after 3 pieces */
    volatile sig_atomic_t flag = 1;
    rq = (ts_gen_request){ .prompt = pa, .n_prompt = na, .max_tokens = 20, .sampling = ts_sampler_default_params(),
                           .cancel = &flag };
    rc = ts_session_generate(s, &rq, &r, &err);
    CHECK(rc == 0 && r.n_generated == 0 && !strcmp(r.finish_reason, "cancelled"), "a raised stop flag: cancelled, no token");
    ts_gen_result_free(&r);
    stream st3 = { .stop_after = 3 };
    rq = (ts_gen_request){ .prompt = pa, .n_prompt = na, .max_tokens = 20, .sampling = ts_sampler_default_params(),
                           .on_text = collect, .user = &st3 };
    rc = ts_session_generate(s, &rq, &r, &err);
    CHECK(rc == 0 && st3.calls == 3 && r.n_generated < 20 && !strcmp(r.finish_reason, "cancelled"),
          "a callback returning non-zero stops the answer (%d calls, %d tokens)", st3.calls, r.n_generated);
    ts_gen_result_free(&r);

    /* -1: until the context is full: N_CTX - prompt + 1 tokens (the last one is not evaluated) */
    rq = (ts_gen_request){ .prompt = pa, .n_prompt = na, .max_tokens = -1, .sampling = ts_sampler_default_params() };
    rc = ts_session_generate(s, &rq, &r, &err);
    CHECK(rc == 0 && r.n_generated == N_CTX - na + 1 && !strcmp(r.finish_reason, "context"),
          "max_tokens -1: %d tokens, finish \"context\"", r.n_generated);
    ts_gen_result_free(&r);

    /* a stop string ends the answer before it */
    const char *stop[] = { "Lily" };
    rq = (ts_gen_request){ .prompt = pa, .n_prompt = na, .max_tokens = 20, .sampling = ts_sampler_default_params(),
                           .stop = stop, .n_stop = 1 };
    CHECK(greedy_reference(m, pa, na, 20, want, sizeof want) == 0 && strstr(want, "Lily"), "the reference says Lily");
    rc = ts_session_generate(s, &rq, &r, &err);
    CHECK(rc == 0 && !strcmp(r.finish_reason, "stop") && r.len == (size_t)(strstr(want, "Lily") - want) &&
          !memcmp(r.text, want, r.len), "a stop string: the answer ends before it (\"%s\")", r.text);
    ts_gen_result_free(&r);

    /* the sampler's ranges, each refusal naming its field */
    struct { const char *field; ts_sampler_params p; } bad[5];
    for (int i = 0; i < 5; i++) bad[i].p = ts_sampler_default_params();
    bad[0].field = "top_p"; bad[0].p.top_p = -1;
    bad[1].field = "min_p"; bad[1].p.min_p = 5;
    bad[2].field = "repeat_penalty"; bad[2].p.repeat_penalty = -1;
    bad[3].field = "temp"; bad[3].p.temp = NAN;
    bad[4].field = "repeat_last_n"; bad[4].p.repeat_last_n = -2;
    for (int i = 0; i < 5; i++) {
        rq = (ts_gen_request){ .prompt = pa, .n_prompt = na, .max_tokens = 4, .sampling = bad[i].p };
        err.msg[0] = 0;
        rc = ts_session_generate(s, &rq, &r, &err);
        CHECK(rc != 0 && strstr(err.msg, bad[i].field), "a bad %s is refused by name: %s", bad[i].field, err.msg);
    }
    static int32_t too_long[N_CTX + 1];
    rq = (ts_gen_request){ .prompt = too_long, .n_prompt = N_CTX + 1, .max_tokens = 4, .sampling = ts_sampler_default_params() };
    CHECK(ts_session_generate(s, &rq, &r, &err) != 0 && strstr(err.msg, "longer than the context"),
          "a prompt past the context is refused: %s", err.msg);
    CHECK(ts_session_text_limit(s) >= (size_t)N_CTX, "the text limit covers the context (%zu bytes)", ts_session_text_limit(s));

    ts_session_free(s);

    /* a step budget of 5 prompt tokens: three requests started together are evaluated a slice at a
     * time (the later ones waiting their turn) while the first already generates; each answer is
     * still the reference loop's */
    ts_session_options so = { .n_ctx = N_CTX, .n_threads = 1, .n_slots = 3, .step_prompt_tokens = 5 };
    CHECK(ts_session_new_opts(m, &so, &s, &err) == 0, "a session of 3 slots with a step budget of 5 prompt tokens");
    const char *texts[3] = { "Once upon a time", "The little dog ran to the park and", "Lily wanted to" };
    int32_t ids[3][32];
    int nids[3];
    ts_gen_request rqs[3];
    ts_gen_result res[3];
    ts_error rq_err[3];
    int steps = 0, finished = 0, most = 0;
    for (int i = 0; i < 3; i++) {
        nids[i] = ts_tokenize(m, texts[i], strlen(texts[i]), true, false, ids[i], 32, &err);
        most = nids[i] > most ? nids[i] : most;
        rqs[i] = (ts_gen_request){ .prompt = ids[i], .n_prompt = nids[i], .max_tokens = 10, .sampling = ts_sampler_default_params() };
        CHECK(ts_session_submit(s, &rqs[i], &res[i], &rq_err[i], &err) >= 0, "request %d submitted", i);
    }
    ts_gen_done done[3];
    while (finished < 3 && steps < 200) { finished += ts_session_step(s, done); steps++; }
    /* a budget of 5: the prompts alone take more than (their sum) / 5 steps before the last answer starts */
    int total = nids[0] + nids[1] + nids[2];
    CHECK(finished == 3 && steps >= (total + 4) / 5 + 9, "all three finish, over %d steps (prompts of %d tokens in slices of 5)", steps, total);
    for (int i = 0; i < 3 && finished == 3; i++) {
        CHECK(greedy_reference(m, ids[i], nids[i], 10, want, sizeof want) == 0, "the reference loop runs");
        CHECK(!strcmp(res[i].text, want), "request %d, evaluated in slices beside the others, equals the reference: \"%s\"", i, want);
        ts_gen_result_free(&res[i]);
    }
    ts_session_free(s);
    ts_model_free(m);
    CHECK_EXIT();
}
