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

/* The rule as README-moe.md / README-mla.md state it, in double: scores (softmax over all, or a
 * sigmoid each; gpt-oss: the logits), selection scores = score + bias, groups scored by their two
 * best selection scores and the topk_group best kept, the k best selection scores among the kept
 * experts, weights = the unbiased scores (gpt-oss: a softmax over the k logits), renormalized
 * (their sum clamped at 2^-14 as llama.cpp does), times the routed scale. Returns false when the choice is ambiguous (a gap under 1e-5 where it
 * decides), so float rounding may pick either. */
static bool reference_route(const moe_geometry *moe, const float *logits, int *ids, double *w) {
    const int n = moe->n_experts, k = moe->n_used, gating = moe->gating;
    scored s[MOE_MAX_EXPERTS];
    double score[MOE_MAX_EXPERTS], max = logits[0], sum = 0;
    for (int e = 1; e < n; e++) if (logits[e] > max) max = logits[e];
    for (int e = 0; e < n; e++) sum += exp(logits[e] - max);
    for (int e = 0; e < n; e++)
        score[e] = gating == GATING_TOPK_SOFTMAX ? logits[e] : gating == GATING_SIGMOID_TOPK ? 1.0 / (1.0 + exp(-(double)logits[e]))
                 : exp(logits[e] - max) / sum;
    bool kept[MOE_MAX_EXPERTS];
    for (int e = 0; e < n; e++) kept[e] = true;
    double sel[MOE_MAX_EXPERTS];
    for (int e = 0; e < n; e++) sel[e] = score[e] + (moe->select_bias ? moe->select_bias[e] : 0.0);
    if (moe->n_group > 1) {
        const int G = moe->n_group, per = n / G;
        scored gs[MOE_MAX_EXPERTS];
        for (int g = 0; g < G; g++) {
            scored in[MOE_MAX_EXPERTS];
            for (int i = 0; i < per; i++) in[i] = (scored){ sel[g * per + i], g * per + i };
            qsort(in, (size_t)per, sizeof in[0], by_score);
            gs[g] = (scored){ in[0].v + in[1].v, g };
        }
        qsort(gs, (size_t)G, sizeof gs[0], by_score);
        if (moe->topk_group < G && gs[moe->topk_group - 1].v - gs[moe->topk_group].v < 1e-5) return false;
        for (int i = moe->topk_group; i < G; i++)
            for (int e = gs[i].id * per; e < (gs[i].id + 1) * per; e++) kept[e] = false;
    }
    /* the dropped experts: out of the race (llama.cpp's -inf), or scoring 0 (transformers) */
    int m = 0;
    for (int e = 0; e < n; e++)
        if (kept[e] || moe->dropped_groups_zero) s[m++] = (scored){ kept[e] ? sel[e] : 0.0, e };
    qsort(s, (size_t)m, sizeof s[0], by_score);
    for (int j = 0; j + 1 < m && j < k; j++)
        if (s[j].v != s[j + 1].v && s[j].v - s[j + 1].v < 1e-5) return false;   /* a near-tie float may order either way */
    double total = 0;
    for (int j = 0; j < k; j++) {
        ids[j] = s[j].id;
        w[j] = gating == GATING_TOPK_SOFTMAX ? exp(logits[s[j].id] - logits[s[0].id]) : score[s[j].id];
        total += w[j];
    }
    if (gating != GATING_TOPK_SOFTMAX && total < 6.103515625e-5) total = 6.103515625e-5;   /* llama.cpp's clamp */
    if (gating == GATING_TOPK_SOFTMAX || moe->renorm) for (int j = 0; j < k; j++) w[j] /= total;
    if (gating != GATING_TOPK_SOFTMAX) for (int j = 0; j < k; j++) w[j] *= moe->routed_scale;
    return true;
}

static void routing_rule(void) {
    uint64_t rng = 12345;
    int bad_ids = 0, cases = 0, ambiguous = 0, grouped = 0;
    double worst = 0;
    for (int trial = 0; trial < 6000; trial++) {
        int n = 2 + trial % 127, k = 1 + (trial / 7) % (n < 8 ? n : 8);
        const int gatings[3] = { GATING_SOFTMAX_TOPK, GATING_TOPK_SOFTMAX, GATING_SIGMOID_TOPK };
        float logits[MOE_MAX_EXPERTS], bias[MOE_MAX_EXPERTS];
        moe_geometry moe = { .n_experts = n, .n_used = k, .gating = gatings[trial % 3], .renorm = (trial / 3) % 2,
                             .n_group = 1, .topk_group = 1, .routed_scale = 1.0f };
        for (int e = 0; e < n; e++) {
            rng = rng * 6364136223846793005ULL + 1442695040888963407ULL;
            logits[e] = (float)((int)(rng >> 40) % 2000) / 250.0f - 4.0f;   /* coarse: ties happen */
            bias[e] = (float)((int)(rng >> 20) % 64) / 32.0f - 1.0f;
        }
        /* DeepSeek's selection on the softmax and sigmoid rules: a bias, groups, a scale */
        if (moe.gating != GATING_TOPK_SOFTMAX && (trial / 6) % 2) {
            moe.select_bias = bias;
            moe.routed_scale = 2.5f;
            for (int G = 8; G >= 2; G /= 2)
                if (n % G == 0 && n / G >= 2) {
                    moe.n_group = G;
                    moe.topk_group = 1 + trial % G;
                    moe.dropped_groups_zero = (trial / 12) % 2;
                    if (moe.topk_group * (n / G) < k) moe.topk_group = (k + n / G - 1) / (n / G);
                    grouped++;
                    break;
                }
        }
        int ids[64], ref_ids[64];
        float w[64];
        double ref_w[64];
        moe_route(&moe, logits, ids, w);
        if (!reference_route(&moe, logits, ref_ids, ref_w)) { ambiguous++; continue; }
        cases++;
        for (int j = 0; j < k; j++) {
            if (ids[j] != ref_ids[j]) { bad_ids++; break; }
            double d = fabs(w[j] - ref_w[j]) / fmax(ref_w[j], 1e-30);
            if (d > worst) worst = d;
        }
    }
    CHECK(bad_ids == 0 && cases > 5000 && grouped > 500,
          "routing: the chosen experts and their order equal the reference's in %d/%d random cases (ties included; %d with groups; %d near-ties skipped)",
          cases - bad_ids, cases, grouped, ambiguous);
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
    /* one row per layer, or (README-mla) per layer of routing.moe_layers */
    const json_value *moe_layers = json_get(json_get(root, "routing"), "moe_layers");
    int layers_equal = 0, layers = (int)usage->n, with_experts = 0;
    for (int il = 0; il < m->g.n_layers; il++) with_experts += m->g.layers[il].moe.n_experts > 0;
    for (int l = 0; l < layers; l++) {
        const int il = moe_layers && l < (int)moe_layers->n ? (int)moe_layers->items[l].integer : l;
        if (il < 0 || il >= m->g.n_layers) continue;
        const json_value *row = &usage->items[l];
        bool same = row->type == JSON_ARRAY && (int)row->n == m->g.layers[il].moe.n_experts;
        for (size_t e = 0; same && e < row->n; e++) same = row->items[e].integer == c->expert_usage[(long)il * MOE_MAX_EXPERTS + e];
        layers_equal += same;
    }
    CHECK(layers_equal == layers && layers == with_experts,
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
        weight *every[LAYER_MAX_MATRICES];   /* the kind's, the dense MLP's, the router's, the shared expert's */
        const int nm = layer_matrices((layer_geometry *)ly, every);
        for (int i = 0; i < nm; i++) want += matrix_bytes(every[i]);
        if (ly->moe.n_experts == 0) continue;
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
    decode_reads_only_chosen_experts("deepseek2-tiny/model-q8_0.gguf");
    decode_reads_only_chosen_experts("glm4moe-tiny/model-q4_k_m.gguf");
    static const char *const sets[] = { "scalar", "avx2", "avx512" };
    static const char *const files[][2] = {
        { "qwen3moe-tiny", "model-f32.gguf" }, { "qwen3moe-tiny", "hf" }, { "qwen3moe-tiny", "model-q8_0.gguf" },
        { "mixtral-tiny", "model-f32.gguf" }, { "mixtral-tiny", "hf" }, { "mixtral-tiny", "model-q8_0.gguf" },
        { "gpt-oss-tiny", "model-f32.gguf" }, { "gpt-oss-tiny", "hf" }, { "gpt-oss-tiny", "model-mxfp4_moe.gguf" },
        { "gemma4-moe-tiny", "model-f32.gguf" }, { "gemma4-moe-tiny", "hf" },
        { "deepseek2-tiny", "model-f32.gguf" }, { "deepseek2-tiny", "hf" }, { "deepseek2-tiny", "model-q8_0.gguf" },
        { "glm4moe-tiny", "model-f32.gguf" }, { "glm4moe-tiny", "hf" }, { "glm4moe-tiny", "model-q8_0.gguf" },
    };
    for (size_t s = 0; s < sizeof sets / sizeof sets[0]; s++) {
        if (!ts_simd_available(sets[s])) continue;
        for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) usage_matches(files[i][0], files[i][1], sets[s]);
    }
    CHECK_EXIT();
}
