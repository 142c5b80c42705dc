/* The builder's tensor helpers (see builder.h). */
#include "load/builder.h"
#include "load/model_arena.h"
#include "load/layout.h"
#include "core/error.h"
#include "core/tensor_type.h"
#include <math.h>
#include <stdio.h>
#include <string.h>

const tensor_entry *builder_find_expert(builder *b, int role, int layer, int expert, char *name, size_t cap) {
    name[0] = 0;
    if (!b->src->name(b->src, role, layer, expert, name, cap)) return NULL;
    return tensor_dir_find(b->src->dir, name);
}

const tensor_entry *builder_find(builder *b, int role, int layer, char *name, size_t cap) {
    return builder_find_expert(b, role, layer, -1, name, cap);
}

void builder_consume(builder *b, const tensor_entry *t) {
    b->used[t - b->src->dir->t] = true;
}

/* A GGUF matrix '<x>.weight' with a single value '<x>.scale' beside it (NVFP4 checkpoints carry one
 * per matrix): llama.cpp multiplies the product's result by it, so the matrix is scale * W. A
 * '<x>.scale' of several values is another role's tensor (Gemma 4's router input scale), left to
 * it. The embeddings are read by rows and take none (llama.cpp loads none for them), so a
 * 'token_embd.scale', or an 'output.scale' beside a tied head, is left over and refuses the file. */
static int attach_weight_scale(builder *b, weight *w, int role, const char *name) {
    const size_t n = strlen(name);
    if (!b->src->weight_scales || role == ROLE_TOKEN_EMBD || role == ROLE_PLE_EMBD || n < 7 || strcmp(name + n - 7, ".weight") != 0) return 0;
    char sname[300];
    snprintf(sname, sizeof sname, "%.*s.scale", (int)(n - 7), name);
    const tensor_entry *s = tensor_dir_find(b->src->dir, sname);
    int64_t count = 1;
    for (int i = 0; s && i < s->n_dims; i++) count *= s->ne[i];
    if (!s || count != 1) return 0;
    if (s->type != TS_F32)
        return ts_fail(b->err, "%s: tensor '%s' (the scale of '%s') must be F32, not %s", b->src->path, sname, name,
                       type_name(s->type));
    float v;
    memcpy(&v, s->data, sizeof v);
    if (!isfinite(v) || v == 0.0f)
        return ts_fail(b->err, "%s: tensor '%s' (the scale of '%s') is %g", b->src->path, sname, name, (double)v);
    w->scale = v;
    builder_consume(b, s);
    return 0;
}

int builder_matrix_expert(builder *b, weight *w, int role, int layer, int expert, int64_t rows,
                          int64_t cols, bool required) {
    char name[256];
    const tensor_entry *t = builder_find_expert(b, role, layer, expert, name, sizeof name);
    memset(w, 0, sizeof *w);
    if (!t) return required ? ts_fail(b->err, "%s: tensor '%s' is missing", b->src->path, name) : 0;
    if (b->src->matrix(b->src, t, role, rows, cols, w, b->err) != 0) return -1;
    builder_consume(b, t);
    return attach_weight_scale(b, w, role, t->name);
}

int builder_matrix(builder *b, weight *w, int role, int layer, int64_t rows, int64_t cols, bool required) {
    return builder_matrix_expert(b, w, role, layer, -1, rows, cols, required);
}

int builder_vector(builder *b, const float **out, int role, int layer, int64_t n, bool norm,
                      bool required) {
    char name[256];
    const tensor_entry *t = builder_find(b, role, layer, name, sizeof name);
    *out = NULL;
    if (!t) return required ? ts_fail(b->err, "%s: tensor '%s' is missing", b->src->path, name) : 0;
    int64_t count = 1;
    for (int i = 0; i < t->n_dims; i++) count *= t->ne[i];
    if (count != n)
        return ts_fail(b->err, "%s: tensor '%s' has %lld values, expected %lld", b->src->path, name,
                       (long long)count, (long long)n);
    if (b->src->vector(b->src, t, n, norm, out, b->err) != 0) return -1;
    builder_consume(b, t);
    return 0;
}

int builder_conv_taps(builder *b, const float **out, int role, int layer, int64_t channels, int K) {
    /* a [K, channels] tensor has the right count and the wrong order */
    char name[256];
    const tensor_entry *t = builder_find(b, role, layer, name, sizeof name);
    if (t && t->ne[0] != K)
        return ts_fail(b->err, "%s: tensor '%s' holds %lld taps per channel; the convolution reads %d positions",
                       b->src->path, name, (long long)t->ne[0], K);
    const float *taps;
    if (builder_vector(b, &taps, role, layer, channels * K, false, true)) return -1;
    float *tm = model_arena_alloc(&b->m->arena, (size_t)(channels * K) * sizeof(float));
    if (!tm) return ts_fail(b->err, "%s: out of memory", b->src->path);
    for (int64_t ch = 0; ch < channels; ch++)
        for (int j = 0; j < K; j++) tm[j * channels + ch] = taps[ch * K + j];
    *out = tm;
    return 0;
}

int builder_decay_rates(builder *b, const float **out, int layer, int n) {
    const float *a;
    if (builder_vector(b, &a, ROLE_SSM_A, layer, n, false, true)) return -1;
    if (b->rules->ssm_a_log) {   /* -exp(A_log), in float as the converter computes it */
        float *neg = model_arena_alloc(&b->m->arena, (size_t)n * sizeof(float));
        if (!neg) return ts_fail(b->err, "%s: out of memory", b->src->path);
        for (int h = 0; h < n; h++) neg[h] = -expf(a[h]);
        a = neg;
    }
    for (int h = 0; h < n; h++)
        if (!(a[h] < 0))
            return ts_fail(b->err, "%s: layer %d: the decay rate of head %d is %g; it must be negative", b->src->path, layer, h, (double)a[h]);
    *out = a;
    return 0;
}

/* The copy replaces the file's rows: the container may give their pages back. */
int builder_unpermute(builder *b, weight *w, int n_heads) {
    uint8_t *dst = model_arena_alloc(&b->m->arena, (size_t)w->rows * w->row_bytes);
    if (!dst) return ts_fail(b->err, "%s: out of memory", b->src->path);
    ts_error e2;
    if (layout_unpermute_qk_rows(dst, w->data, w->rows, w->row_bytes, n_heads, w->name, &e2) != 0)
        return ts_fail(b->err, "%s: %s", b->src->path, e2.msg);
    /* the copy replaces the file's rows: they need not count twice in resident memory */
    if (b->src->release) b->src->release(b->src, w->data, (size_t)w->rows * w->row_bytes);
    w->data = dst;
    return 0;
}

