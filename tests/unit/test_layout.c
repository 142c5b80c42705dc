/* The Llama GGUF Q/K row order (../shared/SPEC.md, 1.1): the loader must restore split-half order for float
 * tensors and for raw quantized row blocks alike. The truth is the Hugging Face safetensors file of
 * the same weights (llama-tiny ships both). */
#include "check.h"
#include "io/gguf.h"
#include "io/safetensors.h"
#include "kernels/matmul.h"
#include "kernels/simd.h"
#include "kernels/types.h"
#include "load/layout.h"
#include "load/model.h"
#include <math.h>
#include <string.h>

static char *fx(const char *rel) {
    static char buf[4][1024];
    static int k;
    k = (k + 1) % 4;
    snprintf(buf[k], sizeof buf[k], "%s/%s", fixtures_dir(), rel);
    return buf[k];
}

/* llama.cpp's converter, written from README-llama.md's formula, independently of the loader:
 * W_gguf = W_hf.reshape(H, 2, D/2, C).swapaxes(1, 2).reshape(H*D, C) */
static void permute_like_converter(float *dst, const float *src, int rows, int cols, int heads) {
    int d = rows / heads;
    for (int h = 0; h < heads; h++)
        for (int s = 0; s < 2; s++)
            for (int j = 0; j < d / 2; j++)     /* src index (h, s, j) lands at (h, j, s) */
                memcpy(dst + (size_t)(h * d + j * 2 + s) * cols, src + (size_t)(h * d + s * (d / 2) + j) * cols,
                       (size_t)cols * sizeof(float));
}

static double max_abs_diff(const float *a, const float *b, size_t n) {
    double m = 0;
    for (size_t i = 0; i < n; i++) if (fabs((double)a[i] - b[i]) > m) m = fabs((double)a[i] - b[i]);
    return m;
}

static void dequant_matrix(const tensor_entry *t, const uint8_t *data, float *out) {
    const type_traits *tt = type_get(t->type);
    size_t rb = type_row_bytes(t->type, t->ne[0]);
    for (int64_t r = 0; r < t->ne[1]; r++) tt->dequant_row(data + r * rb, out + r * t->ne[0], t->ne[0]);
}

int main(void) {
    ts_error err = {{0}};
    safetensors *hf = NULL;
    CHECK(safetensors_open(fx("llama-tiny/hf/model.safetensors"), &hf, &err) == 0, "open HF safetensors (%s)", err.msg);
    if (!hf) CHECK_EXIT();
    const tensor_dir *hd = safetensors_tensors(hf);
    const char *files[] = { "llama-tiny/model-f32.gguf", "llama-tiny/model-q8_0.gguf", "llama-tiny/model-q4_k_m.gguf",
                            "llama-tiny/model-q5_0.gguf", "llama-tiny/model-q6_k.gguf" };
    const struct { const char *gguf, *hf; int heads; } qk[] = {
        { "blk.%d.attn_q.weight", "model.layers.%d.self_attn.q_proj.weight", 4 },   /* n_heads */
        { "blk.%d.attn_k.weight", "model.layers.%d.self_attn.k_proj.weight", 2 },   /* n_kv_heads */
    };
    for (size_t f = 0; f < sizeof files / sizeof files[0]; f++) {
        gguf_file *g = NULL;
        if (gguf_open(fx(files[f]), &g, &err) != 0) { CHECK(0, "open %s (%s)", files[f], err.msg); continue; }
        ts_model *m = NULL;
        ts_model_load(fx(files[f]), NULL, &m, &err);
        for (int layer = 0; layer < 2; layer++)
            for (int w = 0; w < 2; w++) {
                char gn[96], hn[96];
                snprintf(gn, sizeof gn, qk[w].gguf, layer);
                snprintf(hn, sizeof hn, qk[w].hf, layer);
                const tensor_entry *gt = tensor_dir_find(gguf_tensors(g), gn), *ht = tensor_dir_find(hd, hn);
                if (!gt || !ht) { CHECK(0, "%s: %s present", files[f], gn); continue; }
                int rows = (int)gt->ne[1], cols = (int)gt->ne[0];
                size_t rb = type_row_bytes(gt->type, cols), n = (size_t)rows * cols;
                uint8_t *raw = malloc(rows * rb);
                float *a = malloc(n * 4), *b = malloc(n * 4), *perm = malloc(n * 4);
                const float *truth = (const float *)ht->data;
                /* raw rows moved whole, then dequantized */
                CHECK(layout_unpermute_qk_rows(raw, gt->data, rows, rb, qk[w].heads, gn, &err) == 0, "%s %s: un-permute", files[f], gn);
                dequant_matrix(gt, raw, a);
                /* dequantized first, then un-permuted as floats: must be the same numbers exactly */
                dequant_matrix(gt, gt->data, perm);
                CHECK(layout_unpermute_qk_rows((uint8_t *)b, (const uint8_t *)perm, rows, (size_t)cols * 4, qk[w].heads, gn, &err) == 0, "float un-permute");
                CHECK(memcmp(a, b, n * 4) == 0, "%s %s (%s, %d heads): raw-row un-permutation == float un-permutation", files[f], gn, type_name(gt->type), qk[w].heads);
                double d_fixed = max_abs_diff(a, truth, n), d_stored = max_abs_diff(perm, truth, n);
                /* against HF: exact for F32; within quantization error for the rest, and far closer
                 * than the stored (permuted) order */
                bool ok = gt->type == TS_F32 ? d_fixed == 0 : d_fixed < 0.25 * d_stored;
                CHECK(ok, "%s %s: un-permuted rows match the HF tensor (max diff %.3g; stored order %.3g)", files[f], gn, d_fixed, d_stored);
                if (gt->type == TS_F32) {
                    permute_like_converter(b, truth, rows, cols, qk[w].heads);
                    CHECK(memcmp(b, gt->data, n * 4) == 0, "%s: the converter's permutation of the HF rows gives the GGUF rows", gn);
                }
                /* the model loader attached the same un-permuted rows */
                if (m) {
                    const weight *lw = w == 0 ? &m->g.layers[layer].attn.wq : &m->g.layers[layer].attn.wk;
                    const type_kernels *tk = matmul_kernels(m->simd)->types[gt->type];
                    const size_t prb = lw->lanes ? lanes_packed_row_bytes(tk, rb, cols) : rb;
                    uint8_t *want = malloc(rows * prb);
                    if (lw->lanes)   /* a copy kept them in lanes: the same rows, rearranged so */
                        for (int r = 0; r < rows; r += 16) tk->lanes_pack(raw + (size_t)r * rb, rb, cols, want + (size_t)r * prb);
                    else
                        memcpy(want, raw, rows * rb);
                    CHECK(lw->row_bytes == prb && memcmp(lw->data, want, rows * prb) == 0,
                          "%s %s: the loaded model holds the un-permuted rows%s", files[f], gn, lw->lanes ? " (in lanes)" : "");
                    free(want);
                }
                free(raw); free(a); free(b); free(perm);
            }
        ts_model_free(m);
        gguf_close(g);
    }
    /* shapes that cannot be split into heads of pairs are refused, naming the tensor */
    uint8_t buf[64] = {0}, out[64];
    CHECK(layout_unpermute_qk_rows(out, buf, 6, 4, 4, "blk.7.attn_q.weight", &err) != 0 && strstr(err.msg, "blk.7.attn_q.weight"),
          "6 rows with 4 heads refused: %s", err.msg);
    CHECK(layout_unpermute_qk_rows(out, buf, 10, 4, 2, "blk.0.attn_k.weight", &err) != 0 && strstr(err.msg, "blk.0.attn_k.weight"),
          "10 rows with 2 heads (head_dim 5, not pairs) refused");
    CHECK(layout_unpermute_qk_rows(out, buf, 12, 4, 2, "blk.0.attn_k.weight", &err) == 0, "12 rows with 2 heads (head_dim 6) accepted");
    CHECK(layout_unpermute_qk_rows(out, buf, 8, 4, 0, "x", &err) != 0, "0 heads refused");
    /* safetensors and non-Llama GGUFs are not touched */
    ts_model *m = NULL;
    if (ts_model_load(fx("llama-tiny/hf"), NULL, &m, &err) == 0) {
        const tensor_entry *ht = tensor_dir_find(hd, "model.layers.0.self_attn.q_proj.weight");
        CHECK(m->g.layers[0].attn.wq.data && memcmp(m->g.layers[0].attn.wq.data, ht->data, ht->nbytes) == 0, "HF folder: q_proj rows used as stored");
        ts_model_free(m);
    } else CHECK(0, "load llama-tiny/hf (%s)", err.msg);
    if (ts_model_load(fx("qwen3-tiny/model-q8_0.gguf"), NULL, &m, &err) == 0) {
        gguf_file *g = NULL;
        gguf_open(fx("qwen3-tiny/model-q8_0.gguf"), &g, &err);
        const tensor_entry *t = tensor_dir_find(gguf_tensors(g), "blk.0.attn_q.weight");
        CHECK(t && m->g.layers[0].attn.wq.row_bytes * m->g.layers[0].attn.wq.rows == t->nbytes &&
              memcmp(m->g.layers[0].attn.wq.data, t->data, t->nbytes) == 0, "qwen3 GGUF: attn_q rows as stored, not permuted");
        gguf_close(g);
        ts_model_free(m);
    }
    safetensors_close(hf);
    CHECK_EXIT();
}
