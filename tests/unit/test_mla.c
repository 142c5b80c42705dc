/* DeepSeek-style files the fixtures do not ship (README-mla.md), made by rewriting deepseek2-tiny:
 *   - partial or inconsistent files are refused by name: a missing attn_kv_a_mqa, a group count
 *     that does not divide the experts, no key_length_mla (an older conversion), q/k sizes that do
 *     not match the tensors;
 *   - a GGUF without attention.q_lora_rank and one stating 0 are read alike (plain q: here the
 *     q_a/q_b tensors are then left over, so both refuse the same way);
 *   - where llama.cpp and transformers compute different functions, each container gets its own:
 *     a GGUF without expert_gating_func is softmax-gated (llama.cpp) and a folder without
 *     scoring_func, or with "softmax", stays sigmoid (transformers' DeepseekV3 never reads it); a GGUF without yarn_log_multiplier multiplies cos/sin
 *     by mscale(s, 1) and the attention scale by its square; a folder with mscale != mscale_all_dim
 *     multiplies cos/sin by their ratio; yarn_beta_* in a deepseek2 GGUF change nothing;
 *   - the ones that change the function change the logits (by more than 0.5 against llama.cpp's
 *     reference, whose max |logit| is 7.9), the ones that should not leave them bit for bit. */
#include "check.h"
#include "tessera.h"
#include "load/model.h"
#include "io/gguf.h"
#include "io/gguf_write.h"
#include "io/file.h"
#include "gguf_copy.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <limits.h>
#include <sys/stat.h>
#include <unistd.h>

static char dir[64];

/* A copy of src without the tensor drop (NULL: none) and the keys skip, with u32 key set_key = set_val
 * (NULL: none) added. */
static int rewrite(const char *src, const char *dst, const char *drop, const char *const *skip, const char *set_key,
                   uint32_t set_val, float set_f32) {
    ts_error err = {{0}};
    gguf_file *g = NULL;
    if (gguf_open(src, &g, &err) != 0) { CHECK(0, "open %s: %s", src, err.msg); return -1; }
    gguf_writer *w = gguf_writer_new();
    copy_metadata_except(g, w, skip);
    if (set_key && set_f32 != 0) gguf_writer_add_f32(w, set_key, set_f32);
    else if (set_key) gguf_writer_add_u32(w, set_key, set_val);
    const tensor_dir *d = gguf_tensors(g);
    for (int i = 0; i < d->n; i++) {
        const tensor_entry *t = &d->t[i];
        if (drop && !strcmp(t->name, drop)) continue;
        gguf_writer_add_tensor(w, t->name, t->type, t->n_dims, t->ne, t->data, t->nbytes);
    }
    int rc = gguf_writer_write(w, dst, &err);
    if (rc) CHECK(0, "write %s: %s", dst, err.msg);
    gguf_writer_free(w);
    gguf_close(g);
    return rc;
}

static void refused(const char *what, const char *path, const char *want) {
    ts_model *m = NULL;
    ts_error err = {{0}};
    int rc = ts_model_load(path, NULL, &m, &err);
    CHECK(rc != 0 && strstr(err.msg, path) && strstr(err.msg, want), "%s: refused naming the file and '%s': %s", what, want,
          rc ? err.msg : "loaded");
    ts_model_free(m);
}

/* The model's logits on the reference's tokens (n_rows x vocab, malloc'd), NULL on failure. */
static float *logits_of(const char *path, int *n_rows, int *nv) {
    char tp[1024];
    snprintf(tp, sizeof tp, "%s/deepseek2-tiny/ref-llamacpp-f32.tokens.i32", fixtures_dir());
    size_t n = 0;
    int32_t *tok = read_all(tp, &n);
    ts_model *m = NULL;
    ts_context *c = NULL;
    ts_error err = {{0}};
    float *out = NULL;
    if (tok && ts_model_load(path, NULL, &m, &err) == 0 && ts_context_new(m, 64, 2, &c, &err) == 0) {
        *n_rows = (int)(n / 4) - 1;
        *nv = ts_model_n_vocab(m);
        out = malloc((size_t)*n_rows * *nv * sizeof(float));
        if (ts_eval(c, tok, *n_rows, out, true, &err) != 0) { free(out); out = NULL; }
    }
    if (!out) CHECK(0, "%s: %s", path, err.msg);
    ts_context_free(c);
    ts_model_free(m);
    free(tok);
    return out;
}

static double max_diff(const float *a, const float *b, size_t n) {
    double d = 0;
    for (size_t i = 0; i < n; i++) if (fabs(a[i] - b[i]) > d) d = fabs(a[i] - b[i]);
    return d;
}

/* the logits of a variant against the unchanged file's: moved > 0.5, or identical */
static void moves(const char *what, const char *path, const float *base, bool should_move) {
    int rows = 0, nv = 0;
    float *got = logits_of(path, &rows, &nv);
    if (!got) return;
    double d = max_diff(got, base, (size_t)rows * nv);
    if (should_move) CHECK(d > 0.5, "%s: the logits move (max |diff| %.3g against the unchanged file)", what, d);
    else CHECK(d == 0, "%s: the logits are bit for bit the unchanged file's (max |diff| %.3g)", what, d);
    free(got);
}

static ts_model *load_ok(const char *what, const char *path) {
    ts_model *m = NULL;
    ts_error err = {{0}};
    if (ts_model_load(path, NULL, &m, &err) != 0) { CHECK(0, "%s: load (%s)", what, err.msg); return NULL; }
    return m;
}

static bool has_note(const ts_model *m, const char *part) {
    for (int i = 0; i < m->n_notes; i++) if (strstr(m->notes[i], part)) return true;
    return false;
}

static void gguf_variants(const float *base) {
    char src[1024], p[256];
    snprintf(src, sizeof src, "%s/deepseek2-tiny/model-f32.gguf", fixtures_dir());
    snprintf(p, sizeof p, "%s/no_kv_a.gguf", dir);
    if (!rewrite(src, p, "blk.1.attn_kv_a_mqa.weight", NULL, NULL, 0, 0))
        refused("no blk.1.attn_kv_a_mqa", p, "tensor 'blk.1.attn_kv_a_mqa.weight' is missing");
    static const char *const groups[] = { "deepseek2.expert_group_count", NULL };
    snprintf(p, sizeof p, "%s/groups3.gguf", dir);
    if (!rewrite(src, p, NULL, groups, "deepseek2.expert_group_count", 3, 0))
        refused("3 expert groups for 16 experts", p, "16 experts cannot be split into 3 groups");
    static const char *const kmla[] = { "deepseek2.attention.key_length_mla", NULL };
    snprintf(p, sizeof p, "%s/no_key_mla.gguf", dir);
    if (!rewrite(src, p, NULL, kmla, NULL, 0, 0)) refused("no key_length_mla", p, "older conversion");
    static const char *const vlen[] = { "deepseek2.attention.value_length", NULL };
    snprintf(p, sizeof p, "%s/bad_value_length.gguf", dir);
    if (!rewrite(src, p, NULL, vlen, "deepseek2.attention.value_length", 48, 0))
        refused("value_length 48 (the latent is 64)", p, "are not the latent cache's 80 / 64");

    /* q_lora_rank missing and 0 mean the same: a plain attn_q, which this file lacks */
    static const char *const qlora[] = { "deepseek2.attention.q_lora_rank", NULL };
    char p0[256];
    snprintf(p, sizeof p, "%s/no_q_lora.gguf", dir);
    snprintf(p0, sizeof p0, "%s/q_lora_0.gguf", dir);
    if (!rewrite(src, p, NULL, qlora, NULL, 0, 0) && !rewrite(src, p0, NULL, qlora, "deepseek2.attention.q_lora_rank", 0, 0)) {
        refused("no attention.q_lora_rank", p, "tensor 'blk.0.attn_q.weight' is missing");
        refused("attention.q_lora_rank 0", p0, "tensor 'blk.0.attn_q.weight' is missing");
    }

    /* llama.cpp's readings of what a deepseek2 GGUF leaves out */
    static const char *const gating[] = { "deepseek2.expert_gating_func", NULL };
    snprintf(p, sizeof p, "%s/no_gating.gguf", dir);
    if (!rewrite(src, p, NULL, gating, NULL, 0, 0)) {
        ts_model *m = load_ok("no expert_gating_func", p);
        if (m) CHECK(m->g.layers[1].moe.gating == GATING_SOFTMAX_TOPK && m->g.layers[1].moe.select_bias,
                     "no expert_gating_func: softmax gating (llama.cpp's reading), the selection bias kept");
        ts_model_free(m);
        moves("no expert_gating_func", p, base, true);
    }
    static const char *const ylm[] = { "deepseek2.rope.scaling.yarn_log_multiplier", NULL };
    snprintf(p, sizeof p, "%s/no_yarn_log_mul.gguf", dir);
    if (!rewrite(src, p, NULL, ylm, NULL, 0, 0)) {
        ts_model *m = load_ok("no yarn_log_multiplier", p);
        const double ms = 0.1 * log(40.0) + 1.0;
        if (m) {
            const attention_geometry *a = &m->g.layers[0].attn;
            CHECK(fabs(a->rope_mscale - ms) < 1e-6 && fabs(a->scale - ms * ms / sqrt(48.0)) < 1e-6,
                  "no yarn_log_multiplier: cos/sin x %.6f and the scale %.6f (mscale(40, 1) = %.6f, and its square / sqrt(48))",
                  (double)a->rope_mscale, (double)a->scale, ms);
        }
        ts_model_free(m);
        moves("no yarn_log_multiplier", p, base, true);
    }
    static const char *const beta[] = { "deepseek2.rope.scaling.yarn_beta_fast", NULL };
    snprintf(p, sizeof p, "%s/beta_fast_4.gguf", dir);
    if (!rewrite(src, p, NULL, beta, "deepseek2.rope.scaling.yarn_beta_fast", 0, 4.0f)) {
        ts_model *m = load_ok("yarn_beta_fast 4", p);
        if (m) CHECK(has_note(m, "yarn_beta_fast/slow ignored"), "yarn_beta_fast 4: --info says it is ignored, as llama.cpp does");
        ts_model_free(m);
        moves("yarn_beta_fast 4 (llama.cpp uses 32 for deepseek2)", p, base, false);
    }
}

/* A copy of the folder with its config.json rewritten by edit (the weights linked). */
static int folder_with_config(const char *name, const char *from, const char *to, char *out, size_t cap) {
    char hf[1024], cfg[1200], st[1200];
    snprintf(hf, sizeof hf, "%s/deepseek2-tiny/hf", fixtures_dir());
    snprintf(out, cap, "%s/%s", dir, name);
    mkdir(out, 0755);
    snprintf(cfg, sizeof cfg, "%s/config.json", hf);
    size_t n = 0;
    char *text = read_all(cfg, &n);
    char *at = text ? strstr(text, from) : NULL;
    if (!at) { CHECK(0, "%s: '%s' not in config.json", name, from); free(text); return -1; }
    snprintf(cfg, sizeof cfg, "%s/config.json", out);
    FILE *f = fopen(cfg, "w");
    fprintf(f, "%.*s%s%s", (int)(at - text), text, to, at + strlen(from));
    fclose(f);
    free(text);
    snprintf(cfg, sizeof cfg, "%s/model.safetensors", hf);
    snprintf(st, sizeof st, "%s/model.safetensors", out);
    char target[PATH_MAX];
    if (!realpath(cfg, target)) { CHECK(0, "%s: %s", name, cfg); return -1; }
    unlink(st);
    return symlink(target, st);
}

static void hf_variants(void) {
    char hf[1024], p[256];
    snprintf(hf, sizeof hf, "%s/deepseek2-tiny/hf", fixtures_dir());
    int rows = 0, nv = 0;
    float *base = logits_of(hf, &rows, &nv);
    if (!base) return;
    /* transformers' DeepseekV3 gates by sigmoid whatever scoring_func says or leaves out */
    if (!folder_with_config("no_scoring", "\"scoring_func\": \"sigmoid\",", "", p, sizeof p)) {
        ts_model *m = load_ok("folder without scoring_func", p);
        if (m) CHECK(m->g.layers[1].moe.gating == GATING_SIGMOID_TOPK, "folder without scoring_func: sigmoid gating (transformers)");
        ts_model_free(m);
        moves("folder without scoring_func", p, base, false);
    }
    if (!folder_with_config("softmax_scoring", "\"scoring_func\": \"sigmoid\",", "\"scoring_func\": \"softmax\",", p, sizeof p)) {
        ts_model *m = load_ok("folder with scoring_func softmax", p);
        if (m) CHECK(m->g.layers[1].moe.gating == GATING_SIGMOID_TOPK && has_note(m, "scoring_func (transformers' DeepseekV3"),
                     "folder with scoring_func softmax: still sigmoid, as transformers' DeepseekV3 computes, and --info says why");
        ts_model_free(m);
        moves("folder with scoring_func softmax", p, base, false);
    }
    /* mscale 0.5, mscale_all_dim 1: cos/sin x mscale(40, 0.5) / mscale(40, 1), the scale unchanged */
    if (!folder_with_config("mscale_half", "\"mscale\": 1.0,", "\"mscale\": 0.5,", p, sizeof p)) {
        ts_model *m = load_ok("folder with mscale 0.5", p);
        const double ratio = (0.05 * log(40.0) + 1.0) / (0.1 * log(40.0) + 1.0), full = 0.1 * log(40.0) + 1.0;
        if (m) {
            const attention_geometry *a = &m->g.layers[0].attn;
            CHECK(fabs(a->rope_mscale - ratio) < 1e-6 && fabs(a->scale - full * full / sqrt(48.0)) < 1e-6,
                  "folder with mscale 0.5: cos/sin x %.6f (%.6f) and the scale %.6f (transformers)", (double)a->rope_mscale, ratio,
                  (double)a->scale);
        }
        ts_model_free(m);
        moves("folder with mscale 0.5", p, base, true);
    }
    /* q_lora_rank null: a plain q_proj, which this folder lacks: its q_a/q_b tensors are refused */
    if (!folder_with_config("no_q_lora", "\"q_lora_rank\": 64,", "\"q_lora_rank\": null,", p, sizeof p))
        refused("folder with q_lora_rank null", p, "self_attn.q_proj.weight' is missing");
    free(base);
}

int main(void) {
    snprintf(dir, sizeof dir, "/tmp/ts-mla-XXXXXX");
    if (!mkdtemp(dir)) { CHECK(0, "mkdtemp"); CHECK_EXIT(); }
    char src[1024];
    snprintf(src, sizeof src, "%s/deepseek2-tiny/model-f32.gguf", fixtures_dir());
    int rows = 0, nv = 0;
    float *base = logits_of(src, &rows, &nv);
    if (base) gguf_variants(base);
    free(base);
    hf_variants();
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0) CHECK(0, "cleanup");
    CHECK_EXIT();
}
