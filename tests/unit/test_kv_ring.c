/* Sliding-window layers keep only window + batch - 1 positions (a ring buffer). Over sequences much
 * longer than the ring, the logits must equal those of a context whose sliding layers keep every
 * position, both for batched prefill and for one-token-at-a-time decode, with every KV cache type. */
#include "check.h"
#include "run/context_new.h"
#include <string.h>

static void run(const char *rel, int n_tok, int cache_type) {
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", fixtures_dir(), rel);
    ts_model *m = NULL;
    ts_error err = {{0}};
    if (ts_model_load(path, NULL, &m, &err) != 0) { CHECK(0, "%s: load (%s)", rel, err.msg); return; }
    int nv = ts_model_n_vocab(m);
    int32_t *tok = malloc((size_t)n_tok * sizeof *tok);
    uint32_t seed = 12345;
    for (int i = 0; i < n_tok; i++) { seed = seed * 1664525u + 1013904223u; tok[i] = (int32_t)(seed >> 8) % nv; }
    tok[0] = 1;
    float *a = malloc((size_t)n_tok * nv * sizeof(float)), *b = malloc((size_t)n_tok * nv * sizeof(float));
    ts_context *ring = NULL, *full = NULL;
    ts_context_options opt = { .n_ctx = 512, .n_threads = 2, .cache_type_k = cache_type, .cache_type_v = cache_type };
    if (context_new(m, &opt, true, &ring, &err) != 0 || context_new(m, &opt, false, &full, &err) != 0) {
        CHECK(0, "%s: %s cache: context (%s)", rel, ts_kv_type_name(cache_type), err.msg);
        ts_context_free(ring); free(a); free(b); free(tok); ts_model_free(m);
        return;
    }
    char label[1100];
    snprintf(label, sizeof label, "%s (%s cache)", rel, ts_kv_type_name(cache_type));
    rel = label;
    int ring_slots = 0;
    for (int il = 0; il < ring->seqs[0].kv.n_layers; il++)
        if (m->g.layers[il].attn.window > 0) ring_slots = ring->seqs[0].kv.slots[il];
    CHECK(ring_slots > 0 && ring_slots < n_tok && full->seqs[0].kv.slots[0] == 512,
          "%s: sliding layers keep %d positions (window + batch - 1), fewer than the %d evaluated", rel, ring_slots, n_tok);
    ts_eval(ring, tok, n_tok, a, true, &err);
    ts_eval(full, tok, n_tok, b, true, &err);
    CHECK(memcmp(a, b, (size_t)n_tok * nv * sizeof(float)) == 0, "%s: batched prefill over %d positions: ring == full cache", rel, n_tok);
    ts_context_truncate(ring, 0);
    for (int i = 0; i < n_tok; i++) ts_eval(ring, tok + i, 1, a + (size_t)i * nv, true, &err);
    CHECK(memcmp(a, b, (size_t)n_tok * nv * sizeof(float)) == 0, "%s: one-token decode over %d positions: ring == full cache", rel, n_tok);
    /* going back: a short step back keeps the ring's contents, a long one must re-evaluate */
    int kept = ts_context_truncate(ring, n_tok - 10);
    CHECK(kept == n_tok - 10, "%s: truncating 10 positions back keeps %d", rel, kept);
    ts_eval(ring, tok + kept, n_tok - kept, a, true, &err);
    CHECK(memcmp(a, b + (size_t)kept * nv, (size_t)(n_tok - kept) * nv * sizeof(float)) == 0,
          "%s: re-evaluating after a short truncation == full cache", rel);
    kept = ts_context_truncate(ring, 20);
    CHECK(kept == 0, "%s: truncating to 20 of %d (beyond the ring) keeps nothing (%d)", rel, n_tok, kept);
    ts_context_free(ring);
    ts_context_free(full);
    free(a); free(b); free(tok);
    ts_model_free(m);
}

int main(void) {
    const int types[] = { TS_KV_F32, TS_KV_F16, TS_KV_Q8_0 };
    for (int i = 0; i < 3; i++) {
        run("gemma3-tiny/model-f32.gguf", 200, types[i]);
        run("gemma4-ple-tiny/model-f32.gguf", 200, types[i]);
    }
    CHECK_EXIT();
}
