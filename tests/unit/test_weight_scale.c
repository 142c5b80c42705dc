/* Per-tensor weight scales (README-iq-grid, NVFP4 "Second-level scale"): a GGUF tensor
 * '<x>.scale' (one F32) beside a matrix '<x>.weight' multiplies every product with it, as llama.cpp
 * does. Checked against an independent path: a copy of iq-grid-tiny's NVFP4 model with random scales
 * on its 15 matrices gives the logits of a copy whose 15 matrices hold scale * dequant(W) as F32
 * (no scale tensors); the scales change the logits (so they are not ignored); and the files
 * llama.cpp refuses are refused by name (a scale on the embedding, one beside a tied head, one of
 * the wrong shape). Gemma 4's router scale, a '.scale' of many values, stays its own role's (test_moe). */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "check.h"
#include "tessera.h"
#include "io/gguf.h"
#include "io/gguf_write.h"
#include "gguf_copy.h"
#include "kernels/types.h"

/* mode: 0 scales as tensors, 1 the scaled matrices as F32, 2 plus 'token_embd.scale', 3 an
 * 'output.scale' of 2 values, 4 tied (no output.weight) with 'output.scale'. */
static int write_variant(const char *src, const char *dst, int mode, const float *scales, ts_error *err) {
    gguf_file *g = NULL;
    if (gguf_open(src, &g, err) != 0) return -1;
    gguf_writer *w = gguf_writer_new();
    copy_metadata(g, w);
    const tensor_dir *d = gguf_tensors(g);
    float **owned = calloc((size_t)d->n, sizeof *owned);
    static const float two[2] = { 1.0f, 1.0f };
    int si = 0;
    for (int i = 0; i < d->n; i++) {
        const tensor_entry *t = &d->t[i];
        if (mode == 4 && !strcmp(t->name, "output.weight")) continue;
        const bool scaled = t->type == TS_NVFP4 && strcmp(t->name, "token_embd.weight") != 0;
        if (!scaled || mode != 1) {
            gguf_writer_add_tensor(w, t->name, t->type, t->n_dims, t->ne, t->data, t->nbytes);
        } else {
            const int64_t k = t->ne[0], rows = t->ne[1];
            owned[i] = malloc(sizeof(float) * k * rows);
            const size_t rb = type_row_bytes(t->type, k);
            for (int64_t r = 0; r < rows; r++) {
                type_get(t->type)->dequant_row(t->data + r * rb, owned[i] + r * k, k);
                for (int64_t j = 0; j < k; j++) owned[i][r * k + j] *= scales[si];
            }
            gguf_writer_add_tensor(w, t->name, TS_F32, t->n_dims, t->ne, owned[i], sizeof(float) * k * rows);
        }
        if (scaled && mode != 1 && !(mode == 4 && !strcmp(t->name, "output.weight"))) {
            char name[300];
            snprintf(name, sizeof name, "%.*s.scale", (int)(strlen(t->name) - 7), t->name);
            if (mode == 3 && !strcmp(t->name, "output.weight"))
                gguf_writer_add_tensor(w, name, TS_F32, 1, (int64_t[]){ 2 }, two, sizeof two);
            else
                gguf_writer_add_tensor(w, name, TS_F32, 1, (int64_t[]){ 1 }, &scales[si], sizeof(float));
        }
        if (scaled) si++;
    }
    if (mode == 2) gguf_writer_add_tensor(w, "token_embd.scale", TS_F32, 1, (int64_t[]){ 1 }, &scales[0], sizeof(float));
    if (mode == 4) {   /* the head tied to the embedding, its scale left behind */
        gguf_writer_add_tensor(w, "output.scale", TS_F32, 1, (int64_t[]){ 1 }, &scales[0], sizeof(float));
    }
    int rc = gguf_writer_write(w, dst, err);
    gguf_writer_free(w);
    for (int i = 0; i < d->n; i++) free(owned[i]);
    free(owned);
    gguf_close(g);
    return rc;
}

/* Logits of every row of the ids under a kernel set, or NULL (err set). */
static float *logits_of(const char *path, const char *simd, const int32_t *ids, int n, int *nv, ts_error *err) {
    ts_load_options opt = { .simd = simd };
    ts_model *m = NULL;
    if (ts_model_load(path, &opt, &m, err) != 0) return NULL;
    *nv = ts_model_n_vocab(m);
    ts_context_options co = { .n_threads = 2, .cache_type_k = TS_KV_F32, .cache_type_v = TS_KV_F32 };
    ts_context *c = NULL;
    float *out = malloc(sizeof(float) * (size_t)n * *nv);
    if (ts_context_new_opts(m, &co, &c, err) != 0 || ts_eval(c, ids, n, out, true, err) != 0) { free(out); out = NULL; }
    ts_context_free(c);
    ts_model_free(m);
    return out;
}

static void compare(const float *a, const float *b, size_t n, double *max_rel, double *min_cos, int nv) {
    *max_rel = 0; *min_cos = 1;
    for (size_t r = 0; r < n / nv; r++) {
        double dot = 0, na = 0, nb = 0;
        for (int i = 0; i < nv; i++) {
            const double x = a[r * nv + i], y = b[r * nv + i];
            double d = fabs(x - y) / fmax(1.0, fabs(y));
            if (d > *max_rel) *max_rel = d;
            dot += x * y; na += x * x; nb += y * y;
        }
        double cs = dot / sqrt(na * nb + 1e-30);
        if (cs < *min_cos) *min_cos = cs;
    }
}

int main(void) {
    char src[1024], tmpl[] = "/tmp/ts_scale_XXXXXX", path[5][1100];
    snprintf(src, sizeof src, "%s/iq-grid-tiny/model-nvfp4.gguf", fixtures_dir());
    if (!mkdtemp(tmpl)) { CHECK(0, "temp dir"); CHECK_EXIT(); }
    float scales[15];
    uint64_t s = 0x243F6A8885A308D3ull;
    for (int i = 0; i < 15; i++) {   /* in [0.5, 2], log-uniform */
        s = s * 6364136223846793005ull + 1442695040888963407ull;
        scales[i] = exp2f((float)((s >> 11) * 0x1p-53) * 2.0f - 1.0f);
    }
    ts_error err = { { 0 } };
    bool written = true;
    for (int mode = 0; mode < 5; mode++) {
        snprintf(path[mode], sizeof path[mode], "%s/variant-%d.gguf", tmpl, mode);
        written &= write_variant(src, path[mode], mode, scales, &err) == 0;
    }
    CHECK(written, "copies of model-nvfp4.gguf with scale tensors written (%s)", err.msg);
    static const int32_t ids[] = { 1, 240, 62, 391, 54, 27, 228, 447, 357, 362, 412, 143, 149, 117, 293, 291, 509, 424, 444, 227 };
    const int n = (int)(sizeof ids / sizeof ids[0]);
    int nv = 0;
    float *scaled = logits_of(path[0], "scalar", ids, n, &nv, &err);
    float *as_f32 = scaled ? logits_of(path[1], "scalar", ids, n, &nv, &err) : NULL;
    float *plain = as_f32 ? logits_of(src, "scalar", ids, n, &nv, &err) : NULL;
    CHECK(scaled && as_f32 && plain, "the scaled copies load and run (%s)", err.msg);
    if (scaled && as_f32 && plain) {
        double rel, cs;
        compare(scaled, as_f32, (size_t)n * nv, &rel, &cs, nv);
        CHECK(rel <= 1e-4, "[scalar] NVFP4 + 15 scale tensors == the same matrices as F32 scale * W (max rel diff %.3g)", rel);
        compare(plain, as_f32, (size_t)n * nv, &rel, &cs, nv);
        CHECK(cs < 0.99, "the scales matter: without them the logits are elsewhere (min cosine %.4f)", cs);
        for (const char *const *set = (const char *const[]){ "avx2", "avx512", "neon", NULL }; *set; set++) {
            if (!ts_simd_available(*set)) continue;
            float *q = logits_of(path[0], *set, ids, n, &nv, &err);
            if (!q) { CHECK(0, "[%s] scaled copy runs (%s)", *set, err.msg); continue; }
            compare(q, as_f32, (size_t)n * nv, &rel, &cs, nv);
            CHECK(cs >= 0.999, "[%s] NVFP4 + scale tensors (8-bit activations) near the F32 scale * W copy (min cosine %.6f)", *set, cs);
            free(q);
        }
    }
    free(scaled); free(as_f32); free(plain);
    /* what llama.cpp refuses */
    static const struct { int mode; const char *what, *needle; } bad[] = {
        { 2, "a scale on the token embedding", "token_embd.scale" },
        { 3, "an output scale of 2 values (no weight scale, and no other role's)", "'output.scale' is not understood" },
        { 4, "an output scale beside a head tied to the embedding", "output.scale" },
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        ts_model *m = NULL;
        ts_error e = { { 0 } };
        int rc = ts_model_load(path[bad[i].mode], &(ts_load_options){ .simd = "scalar" }, &m, &e);
        CHECK(rc != 0 && strstr(e.msg, bad[i].needle) && strstr(e.msg, "variant-"), "refused: %s (%s)", bad[i].what, e.msg);
        ts_model_free(m);
    }
    for (int mode = 0; mode < 5; mode++) unlink(path[mode]);
    rmdir(tmpl);
    CHECK_EXIT();
}
