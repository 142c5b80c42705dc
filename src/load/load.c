/* The public API of a model: loading (the container chosen by the path), freeing, the tokenizer
 * wrappers and the kernel-set queries. */
#include "load/model_arena.h"
#include "load/resident.h"
#include "load/load_gguf.h"
#include "load/load_hf.h"
#include "text/tokenizer.h"
#include "text/vocab_gguf.h"
#include "text/tokenizer_json.h"
#include "text/spm_model.h"
#include "kernels/types.h"
#include "io/safetensors.h"
#include "kernels/cpu.h"
#include "kernels/matmul.h"
#include "core/error.h"
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <dirent.h>

/* A tokenizer on its own: a tokenizer.json, a tokenizer.model, a GGUF's vocabulary, or a folder
 * holding tokenizer.json / tokenizer.model. */
static int load_tokenizer_file(const char *path, vocab *v, ts_error *err) {
    memset(v, 0, sizeof *v);
    struct stat st;
    if (stat(path, &st) != 0) return ts_fail(err, "%s: cannot open (no such file or directory)", path);
    char p[1200];
    size_t n = strlen(path);
    if (S_ISDIR(st.st_mode)) {
        snprintf(p, sizeof p, "%s/tokenizer.json", path);
        if (access(p, R_OK) == 0) return tokenizer_json_read(p, v, err);
        snprintf(p, sizeof p, "%s/tokenizer.model", path);
        if (access(p, R_OK) == 0) return spm_model_read(p, v, err);
        return ts_fail(err, "%s: no tokenizer.json or tokenizer.model in the folder", path);
    }
    if (n >= 5 && !strcmp(path + n - 5, ".json")) return tokenizer_json_read(path, v, err);
    if (n >= 6 && !strcmp(path + n - 6, ".model")) return spm_model_read(path, v, err);
    gguf_file *g;
    if (gguf_open(path, &g, err) != 0) return -1;
    int rc = gguf_has(g, "tokenizer.ggml.model") ? vocab_from_gguf(g, v, err)
                                                  : ts_fail(err, "%s: the GGUF holds no tokenizer", path);
    gguf_close(g);
    return rc;
}

/* --tokenizer: another vocabulary instead of the model's own. */
static int replace_tokenizer(ts_model *m, const char *path, ts_error *err) {
    vocab v;
    if (load_tokenizer_file(path, &v, err) != 0) return -1;
    if (m->g.n_layers > 0 && v.n > m->g.n_vocab) {
        int vn = v.n;
        vocab_free(&v);
        return ts_fail(err, "%s: the tokenizer has %d tokens, the model only %d", path, vn, m->g.n_vocab);
    }
    if (m->has_vocab) vocab_free(&m->voc);
    m->voc = v;
    m->has_vocab = true;
    model_note(m, "tokenizer: replaced by %s (--tokenizer)", path);
    return 0;
}

/* The first file in folder dir whose name ends in suffix, into name (empty when none). */
static void first_with_suffix(const char *dir, const char *suffix, char *name, size_t cap) {
    name[0] = '\0';
    DIR *d = opendir(dir);
    if (!d) return;
    size_t k = strlen(suffix);
    for (struct dirent *e; (e = readdir(d));) {
        size_t n = strlen(e->d_name);
        if (n > k && !strcmp(e->d_name + n - k, suffix)) { snprintf(name, cap, "%s", e->d_name); break; }
    }
    closedir(d);
}

/* Why folder dir, which has no config.json, is not a model folder: what it does hold. */
static int no_config_error(const char *dir, ts_error *err) {
    char name[256];
    first_with_suffix(dir, ".gguf", name, sizeof name);
    if (name[0])
        return ts_fail(err, "%s: a folder without config.json is not a Hugging Face model; it holds GGUF files: give one (e.g. %s/%s)",
                       dir, dir, name);
    first_with_suffix(dir, ".safetensors", name, sizeof name);
    if (name[0]) return ts_fail(err, "%s: safetensors weights (%s) but no config.json beside them: a Hugging Face model folder needs one", dir, name);
    return ts_fail(err, "%s: no config.json, weights or tokenizer here: not a model folder", dir);
}

static bool has_file(const char *dir, const char *name) {
    char p[1200];
    snprintf(p, sizeof p, "%s/%s", dir, name);
    return access(p, F_OK) == 0;
}

/* A path that names only a tokenizer (no weights): tokenizer.json / tokenizer.model, or a folder
 * with one of them and neither config.json nor weights. */
static bool is_tokenizer_only(const char *path, bool is_dir) {
    size_t n = strlen(path);
    if (!is_dir) return (n >= 5 && !strcmp(path + n - 5, ".json")) || (n >= 6 && !strcmp(path + n - 6, ".model"));
    char weights[256], gguf[256];
    if (has_file(path, "config.json")) return false;
    first_with_suffix(path, ".safetensors", weights, sizeof weights);
    first_with_suffix(path, ".gguf", gguf, sizeof gguf);
    if (weights[0] || gguf[0]) return false;
    return has_file(path, "tokenizer.json") || has_file(path, "tokenizer.model");
}

int ts_model_load(const char *path, const ts_load_options *opt, ts_model **out, ts_error *err) {
    *out = NULL;
    const char *simd = opt ? opt->simd : NULL;
    int level = simd_from_name(simd);
    char sets[128];
    if (level < 0) return ts_fail(err, "unknown kernel set '%s' (expected auto, %s)", simd, simd_names(sets, sizeof sets));
    if (!cpu_has_simd(level) || !matmul_kernels(level))
        return ts_fail(err, "kernel set '%s' is not supported by this CPU or build", simd);
    int ctk = opt ? opt->cache_type_k : TS_KV_DEFAULT, ctv = opt ? opt->cache_type_v : TS_KV_DEFAULT;
    if (ctk < TS_KV_DEFAULT || ctk > TS_KV_Q8_0 || ctv < TS_KV_DEFAULT || ctv > TS_KV_Q8_0)
        return ts_fail(err, "unknown KV cache type %d (expected TS_KV_F32, TS_KV_F16 or TS_KV_Q8_0)", ctk > TS_KV_Q8_0 || ctk < 0 ? ctk : ctv);
    struct stat st;
    if (stat(path, &st) != 0) return ts_fail(err, "%s: cannot open (no such file or directory)", path);
    if (!S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode))
        return ts_fail(err, "%s: not a regular file or a folder (a pipe or a device cannot hold a model)", path);
    ts_model *m = calloc(1, sizeof *m);
    if (!m) return ts_fail(err, "%s: out of memory", path);
    snprintf(m->path, sizeof m->path, "%s", path);
    m->simd = level;
    m->cache_type_k = ctk;
    m->cache_type_v = ctv;
    int rc;
    const char *quant = opt ? opt->quant : NULL;
    if (quant && strcmp(quant, "q8_0") != 0 && strcmp(quant, "q4_0") != 0) {
        ts_model_free(m);
        return ts_fail(err, "unknown --quant '%s' (expected q8_0 or q4_0)", quant);
    }
    size_t plen = strlen(path);
    if (is_tokenizer_only(path, S_ISDIR(st.st_mode))) {
        rc = load_tokenizer_file(path, &m->voc, err);
        m->has_vocab = rc == 0;
    } else if (S_ISDIR(st.st_mode)) {
        rc = has_file(path, "config.json") ? load_hf_model(m, path, NULL, quant, err) : no_config_error(path, err);
    } else if ((plen > 12 && !strcmp(path + plen - 12, ".safetensors")) ||
               (plen > 5 && !strcmp(path + plen - 5, ".q4nx"))) {   /* a FastFlowLM pack's file */
        char dir[1024];
        snprintf(dir, sizeof dir, "%s", path);
        char *slash = strrchr(dir, '/');
        if (slash) *slash = 0; else snprintf(dir, sizeof dir, ".");
        if (st.st_size == 0) rc = ts_fail(err, "%s: an empty file (0 bytes)", path);
        else if (!has_file(dir, "config.json"))
            rc = ts_fail(err, "%s: a %s file is read with the config.json of its folder, and %s has none", path,
                         strrchr(path, '.'), dir);
        else rc = load_hf_model(m, dir, path, quant, err);
    } else {
        rc = quant ? ts_fail(err, "%s: --quant applies to Hugging Face folders (a GGUF keeps its own types)", path)
                   : load_gguf_model(m, path, err);
    }
    if (rc == 0 && opt && opt->tokenizer_path) rc = replace_tokenizer(m, opt->tokenizer_path, err);
    if (rc != 0) { ts_model_free(m); return -1; }
    if (m->g.n_layers > 0) {
        resident_place_matrices(m, opt);
    }
    *out = m;
    return 0;
}

void ts_model_free(ts_model *m) {
    if (!m) return;
    if (m->has_vocab) vocab_free(&m->voc);
    if (m->gguf) gguf_close(m->gguf);
    if (m->safetensors) safetensors_close(m->safetensors);
    model_arena_free(&m->arena);
    resident_free(m);
    for (int i = 0; i < m->n_notes; i++) free(m->notes[i]);
    free(m->notes);
    free(m);
}

int ts_model_n_vocab(const ts_model *m) { return m->g.n_vocab; }
bool ts_model_has_tokenizer(const ts_model *m) { return m->has_vocab; }
bool ts_model_has_weights(const ts_model *m) { return m->g.n_layers > 0; }
int ts_model_n_ctx_train(const ts_model *m) { return m->g.n_ctx_train; }

/* ---- tokenizer ---- */

int ts_token_bos(const ts_model *m) { return m->has_vocab ? m->voc.bos : -1; }
int ts_token_eos(const ts_model *m) { return m->has_vocab ? m->voc.eos : -1; }
bool ts_add_bos(const ts_model *m) { return m->has_vocab && m->voc.add_bos && m->voc.bos >= 0; }

bool ts_token_is_eog(const ts_model *m, int32_t tok) {
    if (!m->has_vocab) return false;
    if (tok == m->voc.eos || (m->voc.eot >= 0 && tok == m->voc.eot)) return true;
    for (int i = 0; i < m->n_eog; i++) if (tok == m->eog[i]) return true;
    return false;
}

int ts_tokenize(const ts_model *m, const char *text, size_t len, bool add_bos, bool parse_special,
                int32_t *out, int max_out, ts_error *err) {
    if (!m->has_vocab)
        return ts_fail(err, "%s: the model has no tokenizer (no tokenizer.json or tokenizer.model): give one with --tokenizer FILE, or token ids with --tokens", m->path);
    return tokenizer_encode(&m->voc, text, len, add_bos, parse_special, out, max_out, err);
}

int ts_token_text(const ts_model *m, int32_t tok, char *buf, size_t cap) {
    if (!m->has_vocab || tok < 0 || tok >= m->voc.n) return -1;
    return tokenizer_token_bytes(&m->voc, tok, buf, cap);
}

const char *ts_model_simd(const ts_model *m) { return simd_name(m->simd); }

bool ts_simd_available(const char *name) {
    int level = simd_from_name(name);
    return level >= 0 && cpu_has_simd(level) && matmul_kernels(level) != NULL;
}

