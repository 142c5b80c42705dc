/* Sessions on models with recurrent layers, whose state cannot be cut back like a KV cache: a
 * token-exact three-turn chat (each turn's prompt = the turns so far with the answers as they were
 * generated) evaluates only the new tokens after the first turn; a prompt sent again continues from
 * the snapshot before its last token; a prompt that departs inside an answer rewinds to the
 * snapshot at the end of the previous prompt; after the snapshots are replaced a rewind starts
 * over. Every answer equals a greedy loop on a fresh context over the whole prompt (the
 * independent path). */
#include "tessera.h"
#include "check.h"
#include <string.h>

#define N_CTX 256
#define MAX_ANSWER 6

/* The reference: a fresh context, the whole prompt, greedy; the answer's ids. */
static int reference(ts_model *m, const int32_t *prompt, int n_prompt, int32_t *ids, int *n_ids) {
    ts_error err;
    ts_context *c;
    if (ts_context_new(m, N_CTX, 1, &c, &err) != 0) return -1;
    int nv = ts_model_n_vocab(m);
    float *logits = malloc((size_t)nv * sizeof *logits);
    *n_ids = 0;
    int rc = ts_eval(c, prompt, n_prompt, logits, false, &err);
    for (int i = 0; i < MAX_ANSWER && rc == 0; i++) {
        int32_t best = 0;
        for (int t = 1; t < nv; t++) if (logits[t] > logits[best]) best = t;
        if (ts_token_is_eog(m, best)) break;
        ids[(*n_ids)++] = best;
        if (i + 1 < MAX_ANSWER) rc = ts_eval(c, &best, 1, logits, false, &err);
    }
    free(logits);
    ts_context_free(c);
    return rc;
}

/* One request through the session, checked against the reference; its answer's ids appended to
 * conv (the conversation so far). Returns the reused count, -1 on failure. */
static int turn(ts_session *s, ts_model *m, const char *label, int32_t *conv, int *n_conv, bool append_answer) {
    int32_t ids[MAX_ANSWER];
    int n_ids;
    if (reference(m, conv, *n_conv, ids, &n_ids) != 0) { CHECK(0, "%s: the reference runs", label); return -1; }
    ts_error err = {{0}};
    ts_gen_request rq = { .prompt = conv, .n_prompt = *n_conv, .max_tokens = MAX_ANSWER, .sampling = ts_sampler_default_params() };
    ts_gen_result r;
    if (ts_session_generate(s, &rq, &r, &err) != 0) { CHECK(0, "%s: %s", label, err.msg); return -1; }
    CHECK(r.n_generated == n_ids && !memcmp(r.tokens, ids, (size_t)n_ids * sizeof *ids),
          "%s: the answer's ids equal a fresh context's (%d tokens, %d reused)",
          label, r.n_generated, r.n_reused);
    int reused = r.n_reused;
    ts_gen_result_free(&r);
    if (append_answer) {
        memcpy(conv + *n_conv, ids, (size_t)n_ids * sizeof *ids);
        *n_conv += n_ids;
    }
    return reused;
}

static void run_model(const char *rel) {
    char path[1024], label[1200];
    snprintf(path, sizeof path, "%s/%s", fixtures_dir(), rel);
    ts_error err = {{0}};
    ts_model *m;
    if (ts_model_load(path, NULL, &m, &err) != 0) { CHECK(0, "load %s: %s", path, err.msg); return; }
    ts_session *s;
    if (ts_session_new(m, N_CTX, 2, &s, &err) != 0) { CHECK(0, "%s: session: %s", rel, err.msg); ts_model_free(m); return; }

    /* three turns; each user turn's ids follow the conversation so far, answers as generated */
    static const int32_t users[3][5] = { { 300, 12, 77, 401, 9 }, { 45, 230, 18 }, { 99, 310, 6, 71 } };
    static const int n_users[3] = { 5, 3, 4 };
    int32_t conv[N_CTX];
    int n_conv = 0, evaluated = 0, prompt_len[3];
    for (int k = 0; k < 3; k++) {
        memcpy(conv + n_conv, users[k], (size_t)n_users[k] * sizeof(int32_t));
        n_conv += n_users[k];
        prompt_len[k] = n_conv;
        snprintf(label, sizeof label, "%s: chat turn %d", rel, k + 1);
        int reused = turn(s, m, label, conv, &n_conv, true);
        int answer = n_conv - prompt_len[k];
        /* the cache holds the prompt and the answer but its last token (sampled, not evaluated) */
        CHECK(reused == evaluated, "%s: %d positions reused (want %d): only the new tokens are evaluated", label, reused, evaluated);
        evaluated = prompt_len[k] + (answer == MAX_ANSWER ? answer - 1 : answer);
    }
    /* the third prompt sent again: the session keeps all but its last token, whose logits it needs;
     * the recurrent state continues from the snapshot taken just before that token */
    int n = prompt_len[2];
    snprintf(label, sizeof label, "%s: the third prompt again", rel);
    int reused = turn(s, m, label, conv, &n, false);
    CHECK(reused == prompt_len[2] - 1, "%s: reuses %d (want %d, the snapshot before the last token)", label, reused, prompt_len[2] - 1);
    /* a prompt departing after the second answer's first token: back to the snapshot at the end of
     * the second prompt */
    int32_t alt[N_CTX];
    int n_alt = prompt_len[1] + 1;
    memcpy(alt, conv, (size_t)n_alt * sizeof *alt);
    alt[n_alt] = conv[n_alt] == 123 ? 124 : 123;
    alt[n_alt + 1] = 45;
    n_alt += 2;
    snprintf(label, sizeof label, "%s: a prompt departing inside an answer", rel);
    reused = turn(s, m, label, alt, &n_alt, false);
    CHECK(reused == prompt_len[1], "%s: reuses %d (want %d, the snapshot at the end of the second prompt)", label, reused, prompt_len[1]);
    /* the first prompt's snapshots were replaced since (at most 4 are kept): a prompt that shares
     * only it starts over */
    n_alt = prompt_len[0];
    memcpy(alt, conv, (size_t)n_alt * sizeof *alt);
    alt[n_alt++] = 7; alt[n_alt++] = 8; alt[n_alt++] = 9;
    snprintf(label, sizeof label, "%s: a prompt sharing only the first turn, its snapshots replaced", rel);
    reused = turn(s, m, label, alt, &n_alt, false);
    CHECK(reused == 0, "%s: reuses %d (want 0: no snapshot left at or before %d)", label, reused, prompt_len[0]);
    ts_session_free(s);
    ts_model_free(m);
}

int main(void) {
    run_model("qwen35-tiny/model-f32.gguf");
    run_model("qwen35-tiny/hf");
    run_model("qwen35moe-tiny/model-q8_0.gguf");
    run_model("lfm2-tiny/model-q4_k_m.gguf");
    run_model("granite-hybrid-tiny/model-q8_0.gguf");
    run_model("granite-hybrid-tiny/hf");
    run_model("granite-hybrid-moe-tiny/model-f32.gguf");
    CHECK_EXIT();
}
