/* FastFlowLM q4nx packs (../shared/SPEC.md, 5): the tile reader on hand-built tiles of both kinds (every element
 * against code * scale + min, pad columns, refusals, the kind decided by the declared width), the
 * fixtures' dequantized tensors bit for bit, and the two fixture packs' logits against llama.cpp
 * and numpy, with greedy tokens and cached decode. */
#include "check.h"
#include "tessera.h"
#include "io/q4nx.h"
#include "kernels/types.h"
#include "kernels/bf16.h"
#include "load/model.h"
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ---- hand-built tiles, written from the byte formulas of ../shared/SPEC.md, 5 ---- */

typedef struct kind_desc { const char *name; int R, C; size_t bytes; int64_t width; } kind_desc;
static const kind_desc TILE = { "tiles", 32, 256, 5120, 5120 };
static const kind_desc QUARTER = { "quarter tiles", 16, 128, 1280, 1280 };

/* Known, varied values per (row, column) of the whole matrix. */
static int code_at(int64_t r, int64_t c) { return (int)((r * 7 + c * 3 + (r * c) / 5) % 16); }
static uint16_t scale_at(int64_t r, int g) { return bf16_from_f32(0.03125f + 0.0071f * (float)(r % 13) + 0.013f * (float)g); }
static uint16_t min_at(int64_t r, int g) { return bf16_from_f32(-0.4f + 0.037f * (float)((r * 3 + g) % 11)); }

static void put_bf16(uint8_t *p, uint16_t v) { p[0] = (uint8_t)v; p[1] = (uint8_t)(v >> 8); }

/* A grid of row_tiles x col_tiles tiles holding the matrix above, columns >= k_real written as
 * pad (scale 0, min 0, code 0). Tiles row-major over (row block, column block). */
static uint8_t *build_tiles(const kind_desc *kd, int row_tiles, int col_tiles, int64_t k_real) {
    const int R = kd->R, C = kd->C, G = C / 32;
    uint8_t *buf = calloc((size_t)row_tiles * col_tiles, kd->bytes);
    for (int rt = 0; rt < row_tiles; rt++)
        for (int ct = 0; ct < col_tiles; ct++) {
            uint8_t *tile = buf + (size_t)(rt * col_tiles + ct) * kd->bytes;
            for (int r = 0; r < R; r++) {
                int64_t row = (int64_t)rt * R + r;
                for (int g = 0; g < G; g++) {
                    int64_t col0 = (int64_t)ct * C + g * 32;
                    bool pad = col0 >= k_real;
                    put_bf16(tile + 2 * (g * R + r), pad ? 0 : scale_at(row, (int)(col0 / 32)));
                    put_bf16(tile + 2 * G * R + 2 * (g * R + r), pad ? 0 : min_at(row, (int)(col0 / 32)));
                }
                for (int c = 0; c < C; c++) {
                    int64_t col = (int64_t)ct * C + c;
                    int code = col >= k_real ? 0 : code_at(row, col);
                    size_t at = 4 * (size_t)G * R + (size_t)(r / 16) * 8 * C + (size_t)c * 8 + (r % 16) / 2;
                    tile[at] |= (uint8_t)(r % 2 ? code << 4 : code);
                }
            }
        }
    return buf;
}

static float expected_value(int64_t r, int64_t c) {
    volatile float product = (float)code_at(r, c) * bf16_to_f32(scale_at(r, (int)(c / 32)));
    return product + bf16_to_f32(min_at(r, (int)(c / 32)));
}

static tensor_entry entry_2d(uint8_t *data, size_t nbytes, int64_t n, int64_t width) {
    tensor_entry t = { .name = "test.weight", .type = TS_I8, .n_dims = 2, .ne = { width, n, 1, 1 },
                       .data = data, .nbytes = nbytes };
    return t;
}

/* Reads t as a rows x k matrix: NULL (and the message in err) when refused. */
static float *read_matrix(const tensor_entry *t, int64_t rows, int64_t k, q4nx_layout *lay, ts_error *err) {
    if (q4nx_layout_of("hand-built", t, rows, k, lay, err) != 0) return NULL;
    size_t bytes = q4nx_repacked_bytes(rows, k);
    uint8_t *q = malloc(bytes);
    float *out = malloc((size_t)(rows * k) * sizeof(float));
    q4nx_repack(t, lay, rows, k, q);
    const type_traits *tt = type_get(TS_Q4NX);
    size_t rb = type_row_bytes(TS_Q4NX, k);
    for (int64_t r = 0; r < rows; r++) tt->dequant_row(q + r * rb, out + r * k, k);
    free(q);
    return out;
}

static void hand_built(const kind_desc *kd, const kind_desc *other) {
    const int R = kd->R, C = kd->C;
    const int64_t rows = 2 * R, k = 2 * C;
    size_t nbytes = 4 * kd->bytes;
    uint8_t *buf = build_tiles(kd, 2, 2, k);
    tensor_entry t = entry_2d(buf, nbytes, 4, kd->width);
    q4nx_layout lay;
    ts_error err = {{0}};

    /* every element of the 2x2 grid */
    float *m = read_matrix(&t, rows, k, &lay, &err);
    CHECK(m && lay.kind == (kd == &TILE ? Q4NX_TILE : Q4NX_QUARTER) && lay.row_tiles == 2 && lay.col_tiles == 2,
          "%s: a 2x2 grid [4, %lld] reads as %lldx%lld (%s)", kd->name, (long long)kd->width, (long long)rows, (long long)k, err.msg);
    if (m) {
        int64_t bad = 0;
        for (int64_t r = 0; r < rows; r++)
            for (int64_t c = 0; c < k; c++) {
                float e = expected_value(r, c);
                if (memcmp(&e, &m[r * k + c], 4) != 0) bad++;
            }
        CHECK(bad == 0, "%s: all %lld elements equal code * scale + min bit for bit (%lld differ)", kd->name, (long long)(rows * k), (long long)bad);
    }
    free(m);

    /* the same bytes declared 3-D [2, 2, width] read the same */
    tensor_entry t3 = t;
    t3.n_dims = 3; t3.ne[0] = kd->width; t3.ne[1] = 2; t3.ne[2] = 2;
    float *m2 = read_matrix(&t3, rows, k, &lay, &err);
    m = read_matrix(&t, rows, k, &lay, &err);
    CHECK(m && m2 && !memcmp(m, m2, (size_t)(rows * k) * 4), "%s: declared [2, 2, %lld] reads the same as [4, %lld]", kd->name, (long long)kd->width, (long long)kd->width);
    free(m2);
    t3.ne[2] = 1; t3.ne[1] = 4;
    CHECK(q4nx_layout_of("hand-built", &t3, rows, k, &lay, &err) != 0 && strstr(err.msg, "test.weight"),
          "%s: declared [1, 4, w] for %lld rows is refused: %s", kd->name, (long long)rows, err.msg);

    /* the same bytes declared as the other kind: refused or different values */
    tensor_entry to = entry_2d(buf, nbytes, (int64_t)(nbytes / other->bytes), other->width);
    float *mo = read_matrix(&to, rows, k, &lay, &err);
    bool differs = !mo || memcmp(mo, m, (size_t)(rows * k) * 4) != 0;
    CHECK(differs, "%s: the same bytes declared [%lld, %lld] (%s) %s", kd->name, (long long)to.ne[1],
          (long long)to.ne[0], other->name, mo ? "read different values" : "are refused");
    free(mo);
    free(m);

    /* refusals, each naming the tensor */
    tensor_entry shortt = t;
    shortt.nbytes = nbytes - 1;
    CHECK(q4nx_layout_of("hand-built", &shortt, rows, k, &lay, &err) != 0 && strstr(err.msg, "test.weight"),
          "%s: one byte short is refused: %s", kd->name, err.msg);
    CHECK(q4nx_layout_of("hand-built", &t, rows, k + 32, &lay, &err) != 0 && strstr(err.msg, "narrower"),
          "%s: a buffer narrower than K is refused: %s", kd->name, err.msg);
    CHECK(q4nx_layout_of("hand-built", &t, rows - 8, k, &lay, &err) != 0 && strstr(err.msg, "grid"),
          "%s: %lld rows (off the %d-row grid) are refused: %s", kd->name, (long long)(rows - 8), R, err.msg);
    tensor_entry wide = entry_2d(buf, nbytes, (int64_t)(nbytes / 2560), 2560);
    CHECK(q4nx_layout_of("hand-built", &wide, rows, k, &lay, &err) != 0 && strstr(err.msg, "2560"),
          "%s: declared width 2560 is refused: %s", kd->name, err.msg);
    tensor_entry flat = t;
    flat.n_dims = 1; flat.ne[0] = (int64_t)nbytes; flat.ne[1] = 1;
    CHECK(q4nx_layout_of("hand-built", &flat, rows, k, &lay, &err) != 0, "%s: a 1-D byte array is refused: %s", kd->name, err.msg);
    CHECK(q4nx_layout_of("hand-built", &t, rows, k - C, &lay, &err) != 0 && strstr(err.msg, "disagree"),
          "%s: K a whole tile narrower than the stored columns is refused: %s", kd->name, err.msg);
    CHECK(q4nx_layout_of("hand-built", &t, rows / 2, k, &lay, &err) != 0,
          "%s: half the rows with the same tiles is refused: %s", kd->name, err.msg);
    tensor_entry f32t = t;
    f32t.type = TS_F32;
    CHECK(q4nx_layout_of("hand-built", &f32t, rows, k, &lay, &err) != 0, "%s: a non-I8 tensor is refused: %s", kd->name, err.msg);
    free(buf);

    /* K off the tile width: the last column tile is padded; pad columns decode to 0 and are dropped */
    const int64_t k_pad = 2 * C - 32;
    buf = build_tiles(kd, 2, 2, k_pad);
    t = entry_2d(buf, nbytes, 4, kd->width);
    m = read_matrix(&t, rows, k_pad, &lay, &err);
    if (m) {
        int64_t bad = 0;
        for (int64_t r = 0; r < rows; r++)
            for (int64_t c = 0; c < k_pad; c++) {
                float e = expected_value(r, c);
                if (memcmp(&e, &m[r * k_pad + c], 4) != 0) bad++;
            }
        CHECK(bad == 0 && lay.stored_k == k && type_row_bytes(TS_Q4NX, k_pad) == (size_t)(k_pad / 32 * 20),
              "%s: K = %lld read from %lld stored columns: every element right, rows of %lld weights (%lld differ)",
              kd->name, (long long)k_pad, (long long)lay.stored_k, (long long)k_pad, (long long)bad);
    } else {
        CHECK(0, "%s: K = %lld with padded tiles: %s", kd->name, (long long)k_pad, err.msg);
    }
    free(m);
    m = read_matrix(&t, rows, k, &lay, &err);   /* reading the stored width shows the pad */
    bool zero = m != NULL;
    for (int64_t r = 0; m && r < rows; r++)
        for (int64_t c = k_pad; c < k; c++) zero &= m[r * k + c] == 0.0f;
    CHECK(zero, "%s: the pad columns decode to 0", kd->name);
    free(m);
    free(buf);
}

/* ---- fixtures ---- */


/* The loaded weight's rows against a row-major [rows][K] f32 file, bit for bit. */
static void dequant_matches(const char *pack, const weight *w, const char *file) {
    char p[1200];
    snprintf(p, sizeof p, "%s/%s/%s", fixtures_dir(), pack, file);
    size_t n;
    float *ref = read_all(p, &n);
    if (!ref || n != (size_t)(w->rows * w->cols) * 4 || w->type != TS_Q4NX) {
        CHECK(0, "%s %s: reference of %zu bytes for a %s %lldx%lld weight", pack, file, n,
              type_name(w->type), (long long)w->rows, (long long)w->cols);
        free(ref);
        return;
    }
    float *row = malloc((size_t)w->cols * 4);
    int64_t bad = 0;
    for (int64_t r = 0; r < w->rows; r++) {
        type_get(w->type)->dequant_row(w->data + r * w->row_bytes, row, w->cols);
        for (int64_t c = 0; c < w->cols; c++) bad += memcmp(&row[c], &ref[r * w->cols + c], 4) != 0;
    }
    CHECK(bad == 0, "%s: %s (%s, %lldx%lld) equals the engine's reading bit for bit (%lld differ)",
          pack, file, w->name, (long long)w->rows, (long long)w->cols, (long long)bad);
    free(row);
    free(ref);
}

static int argmax(const float *v, int n) {
    int b = 0;
    for (int i = 1; i < n; i++) if (v[i] > v[b]) b = i;
    return b;
}

static float top2_gap(const float *v, int n) {
    float a = -INFINITY, b = -INFINITY;
    for (int i = 0; i < n; i++) {
        if (v[i] > a) { b = a; a = v[i]; } else if (v[i] > b) b = v[i];
    }
    return a - b;
}

/* README-gemma: about 5e-3 abs for Gemma3 and q4nx against either reference (llama.cpp's f16 GELU
 * table is most of its difference). The numpy reference computes what this engine computes, in
 * float64, so it is held to far less (measured: 2.7e-6). */
#define TOL_LLAMACPP 5e-3
#define TOL_NUMPY 1e-4

/* Weight bytes per weight of the repacked matrices (the projections and lm_head). */
static double bytes_per_weight(const ts_model *m, size_t *bytes_out) {
    const model_geometry *g = &m->g;
    size_t bytes = 0;
    double weights = 0;
    const weight *ws[64];
    int n = 0;
    ws[n++] = &g->output;
    for (int il = 0; il < g->n_layers && n + 7 <= 64; il++) {
        const layer_geometry *ly = &g->layers[il];
        const weight *lw[] = { &ly->attn.wq, &ly->attn.wk, &ly->attn.wv, &ly->attn.wo, &ly->w_gate, &ly->w_up, &ly->w_down };
        for (int i = 0; i < 7; i++) ws[n++] = lw[i];
    }
    for (int i = 0; i < n; i++) {
        if (!ws[i]->data) continue;
        bytes += ws[i]->row_bytes * (size_t)ws[i]->rows;
        weights += (double)ws[i]->rows * (double)ws[i]->cols;
    }
    *bytes_out = bytes;
    return weights > 0 ? (double)bytes / weights : 0;
}

static void pack_case(const char *pack, int n_prompt, const char *simd) {
    char mp[1024], p[1200];
    snprintf(mp, sizeof mp, "%s/%s", fixtures_dir(), pack);
    ts_load_options opt = { .simd = simd };
    ts_model *m = NULL;
    ts_error err = {{0}};
    if (ts_model_load(mp, &opt, &m, &err) != 0) { CHECK(0, "[%s] %s loads (%s)", simd, pack, err.msg); return; }
    const model_geometry *g = &m->g;
    int nv = ts_model_n_vocab(m);

    if (!strcmp(simd, "scalar")) {
        size_t bytes;
        double bpw = bytes_per_weight(m, &bytes);
        CHECK(bpw > 0 && bpw <= 0.7, "%s: matrices held in %zu bytes, %.4f bytes per weight (<= 0.7)", pack, bytes, bpw);
        printf("# %s: embedding BF16 %lldx%lld (%zu bytes, mapped), %d tensors Q4NX\n", pack,
               (long long)g->tok_embd.rows, (long long)g->tok_embd.cols,
               g->tok_embd.row_bytes * (size_t)g->tok_embd.rows, 1 + 7 * g->n_layers);
        CHECK(g->embed_scale == 1.0f && g->output.data != g->tok_embd.data && g->output.type == TS_Q4NX,
              "%s: embedding not scaled again, lm_head separate and Q4NX", pack);
        bool notes_ok = false;
        for (int i = 0; i < m->n_notes; i++)
            if (strstr(m->notes[i], "model.layers.0.mlp.down_proj.weight: ") && strstr(m->notes[i], "tiles")) notes_ok = true;
        CHECK(notes_ok, "%s: --info notes name the tile kind of down_proj", pack);
        dequant_matches(pack, &g->layers[0].attn.wq, "layer0.q_proj.dequant.f32");
        if (!strcmp(pack, "q4nx-gemma3-full")) dequant_matches(pack, &g->layers[0].w_down, "layer0.down_proj.dequant.f32");
    }

    /* Both references' token files hold the same ids (the prompt and the greedy tokens they
     * agree on), so one run of the engine is compared with both. */
    size_t tn, ln[2];
    snprintf(p, sizeof p, "%s/ref-llamacpp.tokens.i32", mp);
    int32_t *tok = read_all(p, &tn);
    static const char *const refs[] = { "ref-llamacpp", "ref-numpy" };
    float *ref[2];
    for (int ri = 0; ri < 2; ri++) {
        snprintf(p, sizeof p, "%s/%s.logits.f32", mp, refs[ri]);
        ref[ri] = read_all(p, &ln[ri]);
    }
    snprintf(p, sizeof p, "%s/ref-numpy.tokens.i32", mp);
    size_t tn2;
    int32_t *tok2 = read_all(p, &tn2);
    int n_tok = (int)(tn / 4), rows = n_tok - 1;
    bool files_ok = tok && tok2 && tn == tn2 && !memcmp(tok, tok2, tn) && ref[0] && ref[1] &&
                    ln[0] == (size_t)rows * nv * 4 && ln[1] == ln[0];
    CHECK(files_ok, "[%s] %s: reference files readable, %d rows, the same tokens", simd, pack, rows);
    ts_context *c = NULL;
    if (!files_ok || ts_context_new_opts(m, &(ts_context_options){ .n_ctx = 64, .n_threads = 2, .cache_type_k = TS_KV_F32, .cache_type_v = TS_KV_F32 }, &c, &err) != 0) {
        CHECK(files_ok, "[%s] %s: context (%s)", simd, pack, err.msg);
        free(tok); free(tok2); free(ref[0]); free(ref[1]); ts_model_free(m);
        return;
    }
    float *got = malloc((size_t)rows * nv * 4), *seq = malloc((size_t)rows * nv * 4);
    /* teacher forcing: all rows in one batch */
    CHECK(ts_eval(c, tok, rows, got, true, &err) == 0, "[%s] %s: eval (%s)", simd, pack, err.msg);
    for (int ri = 0; ri < 2; ri++) {
        const double TOL = ri == 0 ? TOL_LLAMACPP : TOL_NUMPY;
        double maxd = 0;
        int argmax_bad = 0;
        for (int r = 0; r < rows; r++) {
            const float *a = got + (size_t)r * nv, *b = ref[ri] + (size_t)r * nv;
            for (int i = 0; i < nv; i++) maxd = fmax(maxd, fabs((double)a[i] - b[i]));
            if (top2_gap(b, nv) >= TOL && argmax(a, nv) != argmax(b, nv)) argmax_bad++;
        }
        CHECK(maxd <= TOL && argmax_bad == 0, "[%s] %s vs %s: %d rows, max |diff| %.3g (<= %g), argmax mismatches %d",
              simd, pack, refs[ri], rows, maxd, TOL, argmax_bad);
    }
    /* prefill the prompt as one batch, then greedy decoding one token at a time from the cache:
     * the tokens must be the references' and the logits those of the full re-forward */
    ts_context_truncate(c, 0);
    ts_eval(c, tok, n_prompt, seq, true, &err);
    int same = 0;
    for (int j = n_prompt; j < n_tok; j++) {
        int32_t next = argmax(seq + (size_t)(j - 1) * nv, nv);
        if (next != tok[j]) break;
        same++;
        if (j < rows) ts_eval(c, &next, 1, seq + (size_t)j * nv, true, &err);
    }
    CHECK(same == n_tok - n_prompt, "[%s] %s: greedy generation gives %d/%d of the references' tokens",
          simd, pack, same, n_tok - n_prompt);
    double d = 0;
    for (size_t i = 0; same == n_tok - n_prompt && i < (size_t)rows * nv; i++)
        d = fmax(d, fabs((double)seq[i] - got[i]) / fmax(1.0, fabs(got[i])));
    CHECK(same == n_tok - n_prompt && d <= 1e-6,
          "[%s] %s: prefill + cached decode equals the full re-forward (max rel diff %.3g)", simd, pack, d);
    ts_context_free(c);
    free(got); free(seq); free(tok); free(tok2); free(ref[0]); free(ref[1]);
    ts_model_free(m);
}

/* A pack folder whose config disagrees with the tensors is refused with the tensor's name. */
static void config_disagrees(void) {
    char tmpl[] = "/tmp/tessera-q4nx-XXXXXX";
    char *dir = mkdtemp(tmpl);
    if (!dir) { CHECK(0, "mkdtemp"); return; }
    char src[1024], p[1200];
    snprintf(src, sizeof src, "%s/q4nx-gemma3-quarter", fixtures_dir());
    snprintf(p, sizeof p, "%s/config.json", src);
    size_t n;
    char *cfg = read_all(p, &n);
    char *at = cfg ? strstr(cfg, "\"intermediate_size\": 384") : NULL;
    if (at) memcpy(at, "\"intermediate_size\": 768", 24);   /* twice the ffn the tiles hold */
    char dst[1200], link_to[1200];
    snprintf(dst, sizeof dst, "%s/config.json", dir);
    FILE *f = fopen(dst, "wb");
    if (f && cfg) fwrite(cfg, 1, n, f);
    if (f) fclose(f);
    snprintf(dst, sizeof dst, "%s/model.q4nx", dir);
    snprintf(link_to, sizeof link_to, "%s/model.q4nx", src);
    char abs_target[4096];
    bool linked = realpath(link_to, abs_target) && symlink(abs_target, dst) == 0;
    ts_model *m = NULL;
    ts_error err = {{0}};
    int rc = linked && at ? ts_model_load(dir, NULL, &m, &err) : 0;
    CHECK(at && linked && rc != 0 && strstr(err.msg, "mlp.gate_proj.weight"),
          "a config (ffn 768) that disagrees with the pack's tiles (ffn 384) is refused: %s", err.msg);
    ts_model_free(m);
    unlink(dst);
    snprintf(dst, sizeof dst, "%s/config.json", dir);
    unlink(dst);
    rmdir(dir);
    free(cfg);
}

/* The pack's file named directly loads as the folder does; --quant does not apply to a pack. */
static void load_paths(void) {
    char p[1024];
    snprintf(p, sizeof p, "%s/q4nx-gemma3-quarter/model.q4nx", fixtures_dir());
    ts_model *m = NULL;
    ts_error err = {{0}};
    int rc = ts_model_load(p, NULL, &m, &err);
    CHECK(rc == 0 && m->g.layers[0].attn.wq.type == TS_Q4NX && m->g.embed_scale == 1.0f,
          "a path to model.q4nx loads the pack (%s)", err.msg);
    ts_model_free(m);
    m = NULL;
    snprintf(p, sizeof p, "%s/q4nx-gemma3-quarter", fixtures_dir());
    ts_load_options opt = { .quant = "q8_0" };
    rc = ts_model_load(p, &opt, &m, &err);
    CHECK(rc != 0 && strstr(err.msg, "q4nx"), "--quant on a pack is refused: %s", err.msg);
    ts_model_free(m);
}

int main(void) {
    hand_built(&TILE, &QUARTER);
    hand_built(&QUARTER, &TILE);
    config_disagrees();
    load_paths();
    /* the scalar reference and every SIMD set this CPU runs (the AVX2 Q4NX kernel in src/kernels/q4nx_dot.c) */
    static const char *const sets[] = { "scalar", "avx2", "avx512", "neon" };
    for (int s = 0; s < 4; s++) {
        if (!ts_simd_available(sets[s])) { printf("# kernel set %s: not available here\n", sets[s]); continue; }
        pack_case("q4nx-gemma3-quarter", 24, sets[s]);
        pack_case("q4nx-gemma3-full", 24, sets[s]);
    }
    CHECK_EXIT();
}
