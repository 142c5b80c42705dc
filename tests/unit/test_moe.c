/* Mixture of experts: the routing rule against a plain reference (every expert scored, sorted,
 * weighed in double precision), and the experts each fixture model chooses on every layer against
 * the counts its case.json records (README-moe.md). */
#include "check.h"
#include "run/context_new.h"
#include "run/moe.h"
#include "io/json.h"
#include "io/file.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* The reference: experts ranked by (score desc, id asc) with a full sort; weights in double. */
typedef struct { double v; int id; } scored;
static int by_score(const void *a, const void *b) {
    const scored *x = a, *y = b;
    if (x->v != y->v) return x->v > y->v ? -1 : 1;
    return x->id - y->id;
}

static void reference_route(const float *logits, int n, int k, int gating, bool renorm, int *ids, double *w) {
    scored s[MOE_MAX_EXPERTS];
    double max = logits[0], sum = 0;
    for (int e = 1; e < n; e++) if (logits[e] > max) max = logits[e];
    for (int e = 0; e < n; e++) { s[e].id = e; s[e].v = gating == GATING_TOPK_SOFTMAX ? logits[e] : exp(logits[e] - max); sum += exp(logits[e] - max); }
    if (gating == GATING_SOFTMAX_TOPK) for (int e = 0; e < n; e++) s[e].v /= sum;
    qsort(s, (size_t)n, sizeof s[0], by_score);
    double total = 0;
    for (int j = 0; j < k; j++) {
        ids[j] = s[j].id;
        w[j] = gating == GATING_TOPK_SOFTMAX ? exp(logits[s[j].id] - logits[s[0].id]) : s[j].v;
        total += w[j];
    }
    if (gating == GATING_TOPK_SOFTMAX || renorm) for (int j = 0; j < k; j++) w[j] /= total;
}

static void routing_rule(void) {
    uint64_t rng = 12345;
    int bad_ids = 0, cases = 0;
    double worst = 0;
    for (int trial = 0; trial < 3000; trial++) {
        int n = 2 + trial % 127, k = 1 + (trial / 7) % (n < 8 ? n : 8);
        int gating = trial % 2 ? GATING_TOPK_SOFTMAX : GATING_SOFTMAX_TOPK;
        bool renorm = (trial / 2) % 2;
        float logits[MOE_MAX_EXPERTS];
        for (int e = 0; e < n; e++) {
            rng = rng * 6364136223846793005ULL + 1442695040888963407ULL;
            logits[e] = (float)((int)(rng >> 40) % 2000) / 250.0f - 4.0f;   /* coarse: ties happen */
        }
        int ids[64], ref_ids[64];
        float w[64];
        double ref_w[64];
        moe_route(logits, n, k, gating, renorm, ids, w);
        reference_route(logits, n, k, gating, renorm, ref_ids, ref_w);
        cases++;
        for (int j = 0; j < k; j++) {
            if (ids[j] != ref_ids[j]) { bad_ids++; break; }
            double d = fabs(w[j] - ref_w[j]) / fmax(ref_w[j], 1e-30);
            if (d > worst) worst = d;
        }
    }
    CHECK(bad_ids == 0, "routing: the chosen experts and their order equal the reference's in %d/%d random cases (ties included)", cases - bad_ids, cases);
    CHECK(worst < 2e-6, "routing: weights within 2e-6 (relative) of the double-precision reference (worst %.2g)", worst);
}

/* The fixture's per-layer expert usage on its F32 tokens against the engine's, for one model file
 * under one kernel set. */
static void usage_matches(const char *dir, const char *model, const char *simd) {
    const char *fx = getenv("TS_FIXTURES") ? getenv("TS_FIXTURES") : "../shared/fixtures";
    char path[1024], cj[1024], tp[1024];
    snprintf(path, sizeof path, "%s/%s/%s", fx, dir, model);
    snprintf(cj, sizeof cj, "%s/%s/case.json", fx, dir);
    snprintf(tp, sizeof tp, "%s/%s/ref-llamacpp-f32.tokens.i32", fx, dir);
    char *text, *tok_bytes; size_t len, tok_len;
    ts_error err = {{0}};
    json_value *root = NULL;
    if (file_read(cj, &text, &len, &err) != 0 || file_read(tp, &tok_bytes, &tok_len, &err) != 0) { CHECK(0, "%s: %s", dir, err.msg); return; }
    int rc = json_parse(text, len, &root, &err);
    free(text);
    const json_value *usage = rc == 0 ? json_get(json_get(root, "routing"), "expert_usage_per_layer_f32") : NULL;
    ts_load_options opt = { .simd = simd };
    ts_model *m = NULL;
    ts_context *c = NULL;
    if (!usage || usage->type != JSON_ARRAY || ts_model_load(path, &opt, &m, &err) != 0 ||
        ts_context_new(m, 0, 2, &c, &err) != 0 || context_trace_experts(c, &err) != 0) {
        CHECK(0, "%s/%s: %s", dir, model, err.msg[0] ? err.msg : "no routing.expert_usage_per_layer_f32");
        goto out;
    }
    int n_tok = (int)(tok_len / 4);
    int32_t *tok = (int32_t *)tok_bytes;
    if (ts_eval(c, tok, n_tok - 1, NULL, false, &err) != 0) { CHECK(0, "%s/%s: eval (%s)", dir, model, err.msg); goto out; }
    int layers_equal = 0, layers = (int)usage->n;
    for (int l = 0; l < layers && l < m->g.n_layers; l++) {
        const json_value *row = &usage->items[l];
        bool same = row->type == JSON_ARRAY && (int)row->n == m->g.layers[l].moe.n_experts;
        for (size_t e = 0; same && e < row->n; e++) same = row->items[e].integer == c->expert_usage[(long)l * MOE_MAX_EXPERTS + e];
        layers_equal += same;
    }
    CHECK(layers_equal == layers && layers == m->g.n_layers,
          "[%s] %s/%s: on %d tokens every layer chooses its experts as often as case.json records (%d/%d layers)",
          simd, dir, model, n_tok - 1, layers_equal, layers);
out:
    ts_context_free(c);
    ts_model_free(m);
    json_free(root);
    free(tok_bytes);
}

static uint64_t matrix_bytes(const weight *w) { return w->data ? (uint64_t)w->rows * w->row_bytes : 0; }

/* A decoded token reads its attention, the routers, exactly its chosen experts and the head: the
 * bytes the products read equal that sum, and the unchosen experts are never touched. */
static void decode_reads_only_chosen_experts(const char *model) {
    const char *fx = getenv("TS_FIXTURES") ? getenv("TS_FIXTURES") : "../shared/fixtures";
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", fx, model);
    ts_model *m = NULL;
    ts_context *c = NULL;
    ts_error err = {{0}};
    if (ts_model_load(path, NULL, &m, &err) != 0 || ts_context_new(m, 64, 2, &c, &err) != 0) { CHECK(0, "%s: %s", model, err.msg); goto out; }
    int32_t prompt[6] = { 1, 50, 100, 7, 30, 60 }, next = 90;
    if (ts_eval(c, prompt, 6, NULL, false, &err) != 0) { CHECK(0, "%s: %s", model, err.msg); goto out; }
    c->weight_bytes = 0;
    float *logits = malloc((size_t)ts_model_n_vocab(m) * sizeof(float));
    int rc = ts_eval(c, &next, 1, logits, false, &err);
    free(logits);
    if (rc != 0) { CHECK(0, "%s: %s", model, err.msg); goto out; }
    const model_geometry *g = &m->g;
    uint64_t want = 0, all_experts = 0, chosen = 0;
    for (int il = 0; il < g->n_layers; il++) {
        const layer_geometry *ly = &g->layers[il];
        want += matrix_bytes(&ly->attn.wq) + matrix_bytes(&ly->attn.wk) + matrix_bytes(&ly->attn.wv) + matrix_bytes(&ly->attn.wo);
        want += matrix_bytes(&ly->w_gate) + matrix_bytes(&ly->w_up) + matrix_bytes(&ly->w_down);
        if (ly->moe.n_experts == 0) continue;
        want += matrix_bytes(&ly->moe.router);
        uint64_t per_expert = matrix_bytes(&ly->moe.gate[0]) + matrix_bytes(&ly->moe.up[0]) + matrix_bytes(&ly->moe.down[0]);
        chosen += (uint64_t)ly->moe.n_used * per_expert;
        all_experts += (uint64_t)ly->moe.n_experts * per_expert;
    }
    want += chosen + matrix_bytes(&g->output);
    CHECK(c->weight_bytes == want, "%s: one decoded token reads %llu weight bytes = attention + routers + its %llu bytes of chosen experts (of %llu) + head: %llu",
          model, (unsigned long long)c->weight_bytes, (unsigned long long)chosen, (unsigned long long)all_experts, (unsigned long long)want);
out:
    ts_context_free(c);
    ts_model_free(m);
}

int main(void) {
    routing_rule();
    decode_reads_only_chosen_experts("qwen3moe-tiny/model-q4_k_m.gguf");
    decode_reads_only_chosen_experts("gemma4-moe-tiny/model-f32.gguf");
    static const char *const sets[] = { "scalar", "avx2", "avx512" };
    static const char *const files[][2] = {
        { "qwen3moe-tiny", "model-f32.gguf" }, { "qwen3moe-tiny", "hf" }, { "qwen3moe-tiny", "model-q8_0.gguf" },
        { "mixtral-tiny", "model-f32.gguf" }, { "mixtral-tiny", "hf" }, { "mixtral-tiny", "model-q8_0.gguf" },
        { "gpt-oss-tiny", "model-f32.gguf" }, { "gpt-oss-tiny", "hf" }, { "gpt-oss-tiny", "model-mxfp4_moe.gguf" },
        { "gemma4-moe-tiny", "model-f32.gguf" }, { "gemma4-moe-tiny", "hf" },
    };
    for (size_t s = 0; s < sizeof sets / sizeof sets[0]; s++) {
        if (!ts_simd_available(sets[s])) continue;
        for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) usage_matches(files[i][0], files[i][1], sets[s]);
    }
    CHECK_EXIT();
}
