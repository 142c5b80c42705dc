/* Several sequences in one context (ts_eval_batch): every sequence's logits, prompt and greedy
 * decode, are bit for bit those of the same tokens on a fresh single-sequence context (the
 * independent path), whatever else shares the batch: sequences start at different steps, prompts
 * of 1 to 300 tokens are split across forwards next to other sequences' decode steps, and the
 * models cover every kind of layer state (full and sliding attention with rings of 8, shared KV,
 * sinks, experts, per-layer embeddings, DeltaNet, Mamba-2, short convolutions) and the f32, f16
 * and q8_0 caches. Then ts_seq_copy: a sequence started from a copy of another's prefix continues
 * exactly like a fresh evaluation of the whole. */
#include "tessera.h"
#include "check.h"
#include <string.h>

#define N_CTX 512
#define N_SEQ 6
#define N_DECODE 10

static const int prompt_len[N_SEQ] = { 3, 17, 300, 1, 40, 64 };

/* A prompt's ids: a fixed pseudo-random walk over the vocabulary. */
static void make_prompt(int seq, int n, int nv, int32_t *out) {
    uint32_t x = 2654435761u * (uint32_t)(seq + 1);
    for (int i = 0; i < n; i++) { x = x * 1664525u + 1013904223u; out[i] = (int32_t)((x >> 8) % (uint32_t)nv); }
}

static int32_t argmax(const float *l, int nv) {
    int32_t best = 0;
    for (int t = 1; t < nv; t++) if (l[t] > l[best]) best = t;
    return best;
}

typedef struct seq_ref {
    int32_t tokens[N_CTX];      /* the prompt, then the greedy answer */
    int n_prompt;
    float *logits;              /* (N_DECODE + 1) rows: after the prompt, then after each answer token */
} seq_ref;

/* The reference: a fresh context per sequence. */
static int reference(ts_model *m, const ts_context_options *base, seq_ref *r, ts_error *err) {
    const int nv = ts_model_n_vocab(m);
    ts_context_options o = *base;
    o.n_seq = 1;
    ts_context *c;
    if (ts_context_new_opts(m, &o, &c, err) != 0) return -1;
    int rc = ts_eval(c, r->tokens, r->n_prompt, r->logits, false, err);
    for (int i = 0; i < N_DECODE && rc == 0; i++) {
        r->tokens[r->n_prompt + i] = argmax(r->logits + (size_t)i * nv, nv);
        rc = ts_eval(c, &r->tokens[r->n_prompt + i], 1, r->logits + (size_t)(i + 1) * nv, false, err);
    }
    ts_context_free(c);
    return rc;
}

static void run_model(const char *rel, int cache_type) {
    char path[1024], label[1200];
    snprintf(path, sizeof path, "%s/%s", fixtures_dir(), rel);
    snprintf(label, sizeof label, "%s (%s cache)", rel, ts_kv_type_name(cache_type));
    ts_error err = {{0}};
    ts_model *m;
    if (ts_model_load(path, NULL, &m, &err) != 0) { CHECK(0, "load %s: %s", path, err.msg); return; }
    const int nv = ts_model_n_vocab(m);
    const ts_context_options opt = { .n_ctx = N_CTX, .n_threads = 2, .cache_type_k = cache_type, .cache_type_v = cache_type };
    static seq_ref ref[N_SEQ];
    float *got = malloc((size_t)N_SEQ * nv * sizeof *got);
    for (int s = 0; s < N_SEQ; s++) {
        ref[s].n_prompt = prompt_len[s];
        make_prompt(s, prompt_len[s], nv, ref[s].tokens);
        ref[s].logits = malloc((size_t)(N_DECODE + 1) * nv * sizeof(float));
        if (reference(m, &opt, &ref[s], &err) != 0) CHECK(0, "%s: reference %d: %s", label, s, err.msg);
    }

    /* all of them in one context: sequence s starts at step s; each step evaluates the prompt of the
     * ones starting and one token of the others */
    ts_context_options o = opt;
    o.n_seq = N_SEQ + 1;   /* and one more for the copy */
    ts_context *c = NULL;
    int mismatches = 0, forwards = 0;
    if (ts_context_new_opts(m, &o, &c, &err) != 0) { CHECK(0, "%s: %s", label, err.msg); goto done; }
    CHECK(ts_context_n_seq(c) == N_SEQ + 1, "%s: the context holds %d sequences", label, N_SEQ + 1);
    for (int step = 0; step < N_SEQ + N_DECODE; step++) {
        ts_batch_item items[N_SEQ];
        int n = 0, which[N_SEQ], row[N_SEQ];
        for (int s = N_SEQ - 1; s >= 0; s--) {   /* in reverse: the order of items must not matter either */
            int k = step - s;   /* 0: the prompt; k > 0: the k-th answer token */
            if (k < 0 || k > N_DECODE) continue;
            const int32_t *toks = k == 0 ? ref[s].tokens : &ref[s].tokens[ref[s].n_prompt + k - 1];
            items[n] = (ts_batch_item){ s, toks, k == 0 ? ref[s].n_prompt : 1, got + (size_t)n * nv };
            which[n] = s;
            row[n++] = k;
        }
        if (ts_eval_batch(c, items, n, &err) != 0) { CHECK(0, "%s: step %d: %s", label, step, err.msg); goto done; }
        forwards++;
        for (int i = 0; i < n; i++)
            if (memcmp(got + (size_t)i * nv, ref[which[i]].logits + (size_t)row[i] * nv, (size_t)nv * sizeof(float))) {
                if (!mismatches) printf("# %s: sequence %d row %d differs\n", label, which[i], row[i]);
                mismatches++;
            }
    }
    CHECK(mismatches == 0, "%s: %d sequences' prompt and decode logits in shared batches equal their own contexts' bit for bit over %d steps (%d rows differ)",
          label, N_SEQ, forwards, mismatches);
    for (int s = 0; s < N_SEQ; s++)
        CHECK(ts_seq_pos(c, s) == ref[s].n_prompt + N_DECODE, "%s: sequence %d holds its %d positions", label, s,
              ref[s].n_prompt + N_DECODE);

    /* a copy of sequence 2's prefix (cut inside its prompt, at its end: a recurrent state's
     * snapshot, and all of it: the live state), continued */
    const int cuts[3] = { 250, ref[2].n_prompt, ref[2].n_prompt + N_DECODE };
    for (int k = 0; k < 3; k++) {
        int kept = ts_seq_copy(c, N_SEQ, 2, cuts[k]);
        CHECK(kept >= 0 && kept <= cuts[k], "%s: copy of %d positions keeps %d", label, cuts[k], kept);
        if (kept < 0) continue;
        /* the rest of sequence 2's tokens plus one more, against a fresh evaluation of them all */
        int32_t toks[N_CTX];
        int total = ref[2].n_prompt + N_DECODE;
        memcpy(toks, ref[2].tokens, (size_t)total * sizeof *toks);
        toks[total++] = 7 % nv;
        ts_context *fresh;
        float *a = malloc((size_t)nv * sizeof *a), *b = malloc((size_t)nv * sizeof *b);
        ts_batch_item it = { N_SEQ, toks + kept, total - kept, a };
        if (ts_eval_batch(c, &it, 1, &err) != 0) CHECK(0, "%s: after the copy: %s", label, err.msg);
        else if (ts_context_new_opts(m, &opt, &fresh, &err) != 0) CHECK(0, "%s: %s", label, err.msg);
        else {
            if (ts_eval(fresh, toks, total, b, false, &err) != 0) CHECK(0, "%s: %s", label, err.msg);
            else CHECK(!memcmp(a, b, (size_t)nv * sizeof *a), "%s: a sequence copied from another's first %d positions (of %d asked) and continued equals a fresh evaluation",
                       label, kept, cuts[k]);
            ts_context_free(fresh);
        }
        free(a);
        free(b);
        if (k > 0) CHECK(kept == cuts[k], "%s: %s can be copied (%d positions)", label,
                         k == 1 ? "a whole prompt" : "all of a sequence's positions", kept);
    }
    /* misuse is refused */
    ts_batch_item twice[2] = { { 0, ref[0].tokens, 1, NULL }, { 0, ref[0].tokens, 1, NULL } };
    CHECK(ts_eval_batch(c, twice, 2, &err) != 0 && strstr(err.msg, "twice"), "%s: a sequence twice in one batch is refused (%s)", label, err.msg);
    ts_batch_item none = { N_SEQ + 1, ref[0].tokens, 1, NULL };
    CHECK(ts_eval_batch(c, &none, 1, &err) != 0 && strstr(err.msg, "does not exist"), "%s: an unknown sequence is refused (%s)", label, err.msg);
done:
    ts_context_free(c);
    for (int s = 0; s < N_SEQ; s++) free(ref[s].logits);
    free(got);
    ts_model_free(m);
}

int main(void) {
    run_model("llama-tiny/model-f32.gguf", TS_KV_F32);
    run_model("llama-tiny/model-q4_k_m.gguf", TS_KV_F16);
    run_model("llama-tiny/model-q8_0.gguf", TS_KV_Q8_0);
    run_model("gemma3-tiny/model-f32.gguf", TS_KV_F16);     /* sliding rings of 8 */
    run_model("gemma4-tiny/model-f32.gguf", TS_KV_F16);     /* shared KV, v = k */
    run_model("gemma4-ple-tiny/model-f32.gguf", TS_KV_F16); /* per-layer embeddings */
    run_model("gpt-oss-tiny/model-f32.gguf", TS_KV_F16);    /* sinks, sliding, experts */
    run_model("qwen3moe-tiny/model-q8_0.gguf", TS_KV_Q8_0); /* experts */
    run_model("qwen35-tiny/model-f32.gguf", TS_KV_F16);     /* DeltaNet + gated attention */
    run_model("lfm2-tiny/model-q8_0.gguf", TS_KV_F16);      /* short convolutions */
    run_model("granite-hybrid-tiny/model-q8_0.gguf", TS_KV_F16);   /* Mamba-2 */
    CHECK_EXIT();
}
