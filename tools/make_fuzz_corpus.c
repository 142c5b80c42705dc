/* Seed corpus for the libFuzzer harnesses (tests/fuzz/) and the hand-made GGUF regression cases.
 *
 *   make_fuzz_corpus corpus OUT FIXTURES   writes OUT/NAME/... for every harness NAME
 *   make_fuzz_corpus regress OUT            writes OUT/<bug class>.bin (tests/regress/gguf; GGUF bytes, named .bin so no model-file name is tracked)
 *
 * Seeds are small synthetic files (a few KB: tiny models of random weights, short vocabularies,
 * JSON snippets); only the chat templates are copied from the fixtures. Multi-file inputs join
 * their files with the marker line of tests/fuzz/fuzz_common.h. */
#include "io/gguf.h"
#include "io/gguf_write.h"
#include "io/json.h"
#include "kernels/types.h"
#include "load/arch.h"
#include "load/hparams.h"
#include "template/tool_calls.h"
#include <errno.h>
#include <stdarg.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define PART_MARK "\n--tessera-part--\n"

/* ------------------------------------------------------------------ growable byte buffer */

typedef struct bytes { unsigned char *p; size_t len, cap; } bytes;

static void put(bytes *b, const void *s, size_t n) {
    if (b->len + n > b->cap) {
        size_t cap = b->cap ? b->cap : 1024;
        while (cap < b->len + n) cap *= 2;
        b->p = realloc(b->p, cap);
        if (!b->p) { perror("realloc"); exit(1); }
        b->cap = cap;
    }
    memcpy(b->p + b->len, s, n);
    b->len += n;
}
static void put_s(bytes *b, const char *s) { put(b, s, strlen(s)); }
static void put_f(bytes *b, const char *fmt, ...) {
    char tmp[4096];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(tmp, sizeof tmp, fmt, ap);
    va_end(ap);
    put(b, tmp, (size_t)n);
}
static void put_u32(bytes *b, uint32_t v) { put(b, &v, 4); }
static void put_u64(bytes *b, uint64_t v) { put(b, &v, 8); }
static void put_gstr(bytes *b, const char *s) { put_u64(b, strlen(s)); put_s(b, s); }

static void mkdirs(const char *path) {
    char tmp[1024];
    snprintf(tmp, sizeof tmp, "%s", path);
    for (char *p = tmp + 1; *p; p++)
        if (*p == '/') { *p = 0; mkdir(tmp, 0755); *p = '/'; }
    if (mkdir(tmp, 0755) != 0 && errno != EEXIST) { perror(tmp); exit(1); }
}

static void save(const char *dir, const char *name, const void *data, size_t len) {
    char path[1200];
    mkdirs(dir);
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "wb");
    if (!f || (len && fwrite(data, 1, len, f) != len) || fclose(f) != 0) { perror(path); exit(1); }
}
static void save_b(const char *dir, const char *name, const bytes *b) { save(dir, name, b->p, b->len); }
static void save_s(const char *dir, const char *name, const char *s) { save(dir, name, s, strlen(s)); }

static bytes read_all(const char *path) {
    bytes b = { 0 };
    FILE *f = fopen(path, "rb");
    if (!f) { perror(path); exit(1); }
    char tmp[4096];
    size_t n;
    while ((n = fread(tmp, 1, sizeof tmp, f)) > 0) put(&b, tmp, n);
    fclose(f);
    return b;
}

/* Deterministic small weights. */
static uint32_t rng = 12345;
static float rnd(void) { rng = rng * 1664525u + 1013904223u; return ((rng >> 8) / 16777216.0f - 0.5f) * 0.2f; }

/* ------------------------------------------------------------------ GGUF seeds */

/* A tiny model of an architecture: hidden 32, one layer (two for gemma3), 2 heads (1 KV head),
 * head_dim 16, ffn 64, vocab 16, F32 (matrices in mtype); with a vocabulary and a chat template. */
static const char *spm_tokens[16] = { "<unk>", "<s>", "</s>", "<0x0A>", "\xe2\x96\x81", "a", "b",
    "\xe2\x96\x81" "a", "ab", "<|im_end|>", "H", "e", "l", "o", "\xe2\x96\x81" "H", "ll" };

/* Byte-level BPE (GPT-2): byte b is written as one code point, b itself for the printable bytes
 * 33-126, 161-172, 174-255, and 256, 257, ... for the others in byte order. */
static void byte_char(int byte, char out[4]) {
    int cp = byte, extra = 0;
    bool printable = (byte >= 33 && byte <= 126) || (byte >= 161 && byte <= 172) || byte >= 174;
    if (!printable) {
        for (int b = 0; b < byte; b++)
            if (!((b >= 33 && b <= 126) || (b >= 161 && b <= 172) || b >= 174)) extra++;
        cp = 256 + extra;
    }
    if (cp < 0x80) { out[0] = (char)cp; out[1] = 0; }
    else { out[0] = (char)(0xc0 | cp >> 6); out[1] = (char)(0x80 | (cp & 0x3f)); out[2] = 0; }
}

/* 256 byte tokens, then the merged ones, then the specials: BPE_N tokens. */
static const char *bpe_merged[] = { "ll", "\xc4\xa0w", "He", "llo", "or", "\xc4\xa0wor", "\xc4\xa0\xc4\xa0" };
static const char *bpe_merges[] = { "l l", "\xc4\xa0 w", "H e", "ll o", "o r", "\xc4\xa0w or", "\xc4\xa0 \xc4\xa0" };
#define BPE_MERGED 7
#define BPE_N (256 + BPE_MERGED + 3)
static char bpe_store[BPE_N][16];
static const char *bpe_tokens[BPE_N];

static void make_bpe_tokens(void) {
    for (int i = 0; i < 256; i++) byte_char(i, bpe_store[i]);
    for (int i = 0; i < BPE_MERGED; i++) snprintf(bpe_store[256 + i], 16, "%s", bpe_merged[i]);
    snprintf(bpe_store[256 + BPE_MERGED], 16, "<|endoftext|>");
    snprintf(bpe_store[257 + BPE_MERGED], 16, "<|im_start|>");
    snprintf(bpe_store[258 + BPE_MERGED], 16, "<|im_end|>");
    for (int i = 0; i < BPE_N; i++) bpe_tokens[i] = bpe_store[i];
}

/* The vocabulary of a tiny model: 16 SentencePiece tokens, or BPE_N byte-level ones. */
static int add_vocab(gguf_writer *w, bool bpe) {
    int n = bpe ? BPE_N : 16;
    float scores[BPE_N];
    int32_t types[BPE_N];
    for (int i = 0; i < n; i++) { scores[i] = -(float)i; types[i] = 1; }
    if (bpe) {
        for (int i = 256 + BPE_MERGED; i < n; i++) types[i] = 3;
    } else {
        types[0] = 2; types[1] = 3; types[2] = 3; types[3] = 6; types[9] = 3;
    }
    gguf_writer_add_str(w, "tokenizer.ggml.model", bpe ? "gpt2" : "llama");
    if (bpe) gguf_writer_add_str(w, "tokenizer.ggml.pre", "qwen2");
    gguf_writer_add_str_array(w, "tokenizer.ggml.tokens", bpe ? bpe_tokens : spm_tokens, NULL, (uint64_t)n);
    gguf_writer_add_array(w, "tokenizer.ggml.scores", GGUF_F32, scores, (uint64_t)n);
    gguf_writer_add_array(w, "tokenizer.ggml.token_type", GGUF_I32, types, (uint64_t)n);
    if (bpe) gguf_writer_add_str_array(w, "tokenizer.ggml.merges", bpe_merges, NULL, BPE_MERGED);
    gguf_writer_add_u32(w, "tokenizer.ggml.bos_token_id", bpe ? 256 + BPE_MERGED : 1);
    gguf_writer_add_u32(w, "tokenizer.ggml.eos_token_id", bpe ? 258 + BPE_MERGED : 2);
    gguf_writer_add_bool(w, "tokenizer.ggml.add_bos_token", !bpe);
    return n;
}

static void add_f32(gguf_writer *w, const char *name, int64_t ne0, int64_t ne1, int type, bool ones) {
    int64_t ne[2] = { ne0, ne1 };
    int n_dims = ne1 > 1 ? 2 : 1;
    size_t n = (size_t)(ne0 * ne1);
    float *f = malloc(n * sizeof *f);
    for (size_t i = 0; i < n; i++) f[i] = ones ? 1.0f : rnd();
    size_t nbytes = type_row_bytes(type, ne0) * (size_t)ne1;
    void *data = f;
    if (type != TS_F32) {
        data = malloc(nbytes);
        for (int64_t r = 0; r < ne1; r++)
            type_get(type)->quantize_row(f + r * ne0, (uint8_t *)data + r * type_row_bytes(type, ne0), ne0);
    }
    gguf_writer_add_tensor(w, name, type, n_dims, ne, data, nbytes);
    /* the writer keeps the pointer until it writes: leak on purpose, the program is short-lived */
}

/* The seed's options beyond its architecture: layers, and a sliding window or a RoPE scaling to
 * exercise those keys. */
typedef struct tiny_opts { int layers; int window, sliding_period; const char *rope_scaling; } tiny_opts;

/* A tiny model of an architecture, its tensors named and chosen by the engine's architecture table
 * (load/arch.c: the norm layout, q/k norms, the GGUF names), so the seeds follow the table. */
static int write_tiny_gguf(const char *dir, const char *name, const char *arch, int mtype,
                           bool with_vocab, bool bpe, const char *tmpl, tiny_opts o) {
    const int H = 32, NH = 2, NKV = 1, HD = 16, FF = 64;
    int V = 16;
    const arch_desc *a = arch_by_gguf_name(arch, strlen(arch));
    if (!a) { fprintf(stderr, "make_fuzz_corpus: unknown architecture %s\n", arch); return 1; }
    const int layers = o.layers > 0 ? o.layers : 1;
    gguf_writer *w = gguf_writer_new();
    char k[128];
    gguf_writer_add_str(w, "general.architecture", arch);
#define AK(key) (snprintf(k, sizeof k, "%s.%s", arch, key), k)
    gguf_writer_add_u32(w, AK("embedding_length"), H);
    gguf_writer_add_u32(w, AK("block_count"), layers);
    gguf_writer_add_u32(w, AK("context_length"), 64);
    gguf_writer_add_u32(w, AK("feed_forward_length"), FF);
    gguf_writer_add_u32(w, AK("attention.head_count"), NH);
    gguf_writer_add_u32(w, AK("attention.head_count_kv"), NKV);
    gguf_writer_add_u32(w, AK("attention.key_length"), HD);
    gguf_writer_add_f32(w, AK("attention.layer_norm_rms_epsilon"), 1e-6f);
    gguf_writer_add_f32(w, AK("rope.freq_base"), 10000.0f);
    if (o.window > 0) {
        gguf_writer_add_u32(w, AK("attention.sliding_window"), (uint32_t)o.window);
        gguf_writer_add_u32(w, AK("attention.sliding_window_pattern"), (uint32_t)o.sliding_period);
        gguf_writer_add_f32(w, AK("rope.freq_base_swa"), 10000.0f);
    }
    if (o.rope_scaling) {
        gguf_writer_add_str(w, AK("rope.scaling.type"), o.rope_scaling);
        gguf_writer_add_f32(w, AK("rope.scaling.factor"), 2.0f);
    }
#undef AK
    if (with_vocab) V = add_vocab(w, bpe);
    if (tmpl) gguf_writer_add_str(w, "tokenizer.chat_template", tmpl);
    add_f32(w, "token_embd.weight", H, V, mtype, false);
    add_f32(w, "output_norm.weight", H, 1, TS_F32, true);
    /* the roles an attention layer with a dense MLP has in this family, with their shapes (ne0, ne1) */
    const bool pre = a->norms != NORMS_POST, post = a->norms != NORMS_PRE, qk = a->qk_norm == QK_NORM_HEAD;
    const struct { int role; bool present, matrix; int64_t ne0, ne1; } roles[] = {
        { ROLE_ATTN_NORM, pre, false, H, 1 }, { ROLE_FFN_NORM, pre, false, H, 1 },
        { ROLE_POST_ATTN_NORM, post, false, H, 1 }, { ROLE_POST_FFN_NORM, post, false, H, 1 },
        { ROLE_ATTN_Q_NORM, qk, false, HD, 1 }, { ROLE_ATTN_K_NORM, qk, false, HD, 1 },
        { ROLE_ATTN_Q, true, true, H, NH * HD }, { ROLE_ATTN_K, true, true, H, NKV * HD },
        { ROLE_ATTN_V, true, true, H, NKV * HD }, { ROLE_ATTN_OUT, true, true, NH * HD, H },
        { ROLE_FFN_GATE, true, true, H, FF }, { ROLE_FFN_UP, true, true, H, FF }, { ROLE_FFN_DOWN, true, true, FF, H },
    };
    for (int il = 0; il < layers; il++)
        for (size_t r = 0; r < sizeof roles / sizeof roles[0]; r++) {
            const char *fmt = arch_tensor_name(&a->gguf, CONTAINER_GGUF, roles[r].role);
            if (!roles[r].present || !fmt) continue;
            char n[64];
            snprintf(n, sizeof n, fmt, il);
            add_f32(w, n, roles[r].ne0, roles[r].ne1, roles[r].matrix ? mtype : TS_F32, !roles[r].matrix);
        }
    char path[1200];
    mkdirs(dir);
    snprintf(path, sizeof path, "%s/%s", dir, name);
    ts_error err;
    int rc = gguf_writer_write(w, path, &err);
    if (rc) fprintf(stderr, "%s\n", err.msg);
    gguf_writer_free(w);
    return rc;
}

/* Metadata of every value type, a string array and a numeric array, general.alignment, tensors
 * of several block types: what the reader's accessors and size rules see. */
static int write_metadata_gguf(const char *dir, const char *name) {
    gguf_writer *w = gguf_writer_new();
    gguf_writer_set_alignment(w, 64);
    gguf_writer_add_u8(w, "u8", 200); gguf_writer_add_i8(w, "i8", -3);
    gguf_writer_add_u16(w, "u16", 60000); gguf_writer_add_i16(w, "i16", -300);
    gguf_writer_add_u32(w, "u32", 4000000000u); gguf_writer_add_i32(w, "i32", -70000);
    gguf_writer_add_u64(w, "u64", UINT64_MAX); gguf_writer_add_i64(w, "i64", INT64_MIN);
    gguf_writer_add_f32(w, "f32", 1.5f); gguf_writer_add_f64(w, "f64", -2.25);
    gguf_writer_add_bool(w, "bool", true); gguf_writer_add_str(w, "str", "h\xc3\xa9llo");
    const char *strs[3] = { "a", "", "\xe2\x96\x81x" };
    gguf_writer_add_str_array(w, "strs", strs, NULL, 3);
    int16_t nums[4] = { 1, -2, 3, -4 };
    gguf_writer_add_array(w, "nums", GGUF_I16, nums, 4);
    gguf_writer_add_str(w, "general.architecture", "llama");
    add_f32(w, "a.f16", 32, 2, TS_F16, false);
    add_f32(w, "b.q8_0", 32, 2, TS_Q8_0, false);
    add_f32(w, "c.q4_k", 256, 1, TS_Q4_K, false);
    add_f32(w, "d.q4_0", 64, 1, TS_Q4_0, false);
    char path[1200];
    mkdirs(dir);
    snprintf(path, sizeof path, "%s/%s", dir, name);
    ts_error err;
    int rc = gguf_writer_write(w, path, &err);
    if (rc) fprintf(stderr, "%s\n", err.msg);
    gguf_writer_free(w);
    return rc;
}

/* One tensor of 2 rows in each type the kernels read (random bytes: every block is valid, and the
 * decoders must hold on any), for the GGUF harness's decoders; rows of 256, a whole block of every
 * type. */
static int write_types_gguf(const char *dir, const char *name) {
    gguf_writer *w = gguf_writer_new();
    gguf_writer_add_str(w, "general.architecture", "llama");
    for (int t = 0; t < TS_FIRST_INTERNAL; t++) {
        if (!type_get(t) || t == TS_Q8_K) continue;
        const int64_t ne[2] = { 256, 2 };
        const size_t nb = 2 * type_row_bytes(t, 256);
        uint8_t *data = malloc(nb);   /* kept until the write: leaked on purpose, as add_f32 */
        for (size_t i = 0; i < nb; i++) { (void)rnd(); data[i] = (uint8_t)(rng >> 16); }
        char tn[64];
        snprintf(tn, sizeof tn, "t.%s", type_name(t));
        gguf_writer_add_tensor(w, tn, t, 2, ne, data, nb);
    }
    char path[1200];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    ts_error err;
    int rc = gguf_writer_write(w, path, &err);
    if (rc) fprintf(stderr, "%s\n", err.msg);
    gguf_writer_free(w);
    return rc;
}

static int gguf_seeds(const char *out) {
    char d1[1100], d2[1100];
    snprintf(d1, sizeof d1, "%s/gguf", out);
    snprintf(d2, sizeof d2, "%s/gguf_model", out);
    const char *chatml = "{% for message in messages %}{{'<|im_start|>' + message['role'] + '\\n' + "
                         "message['content'] + '<|im_end|>' + '\\n'}}{% endfor %}{% if add_generation_prompt %}"
                         "{{ '<|im_start|>assistant\\n' }}{% endif %}";
    int rc = 0;
    for (int i = 0; i < 2; i++) {
        const char *d = i ? d2 : d1;
        rc |= write_tiny_gguf(d, "llama-f32.gguf", "llama", TS_F32, true, false, chatml, (tiny_opts){ .rope_scaling = "linear" });
        rc |= write_tiny_gguf(d, "llama-q8_0.gguf", "llama", TS_Q8_0, false, false, NULL, (tiny_opts){ .rope_scaling = "linear" });
        rc |= write_tiny_gguf(d, "qwen3-bpe.gguf", "qwen3", TS_Q8_0, true, true, chatml, (tiny_opts){ 0 });
        rc |= write_tiny_gguf(d, "gemma3.gguf", "gemma3", TS_Q4_0, true, false, NULL, (tiny_opts){ .layers = 2, .window = 8, .sliding_period = 2 });
    }
    rc |= write_metadata_gguf(d1, "metadata.gguf");
    rc |= write_types_gguf(d1, "types.gguf");
    return rc;
}

/* ------------------------------------------------------------------ safetensors */

typedef struct st_tensor { const char *name, *dtype; int n_dims; int64_t shape[3]; } st_tensor;

static size_t dtype_size(const char *dt) {
    return !strcmp(dt, "F32") || !strcmp(dt, "I32") ? 4 : !strcmp(dt, "I8") || !strcmp(dt, "U8") ? 1 : 2;
}

/* A safetensors file of the tensors (random contents), optionally with __metadata__. */
static bytes safetensors_file(const st_tensor *t, int n, const char *metadata) {
    bytes hdr = { 0 }, data = { 0 }, out = { 0 };
    put_s(&hdr, "{");
    if (metadata) put_f(&hdr, "\"__metadata__\":%s,", metadata);
    for (int i = 0; i < n; i++) {
        size_t count = 1;
        for (int d = 0; d < t[i].n_dims; d++) count *= (size_t)t[i].shape[d];
        size_t nb = count * dtype_size(t[i].dtype);
        put_f(&hdr, "%s\"%s\":{\"dtype\":\"%s\",\"shape\":[", i ? "," : "", t[i].name, t[i].dtype);
        for (int d = 0; d < t[i].n_dims; d++) put_f(&hdr, "%s%lld", d ? "," : "", (long long)t[i].shape[d]);
        put_f(&hdr, "],\"data_offsets\":[%zu,%zu]}", data.len, data.len + nb);
        for (size_t k = 0; k < count; k++) {
            float f = rnd() + (strstr(t[i].name, "norm") ? 1.0f : 0.0f);
            if (!strcmp(t[i].dtype, "F32")) put(&data, &f, 4);
            else if (dtype_size(t[i].dtype) == 2) { uint32_t u; memcpy(&u, &f, 4); uint16_t h = (uint16_t)(u >> 16); put(&data, &h, 2); }
            else { uint8_t c = (uint8_t)(rng >> 13); put(&data, &c, 1); }
        }
    }
    put_s(&hdr, "}");
    while (hdr.len % 8) put_s(&hdr, " ");
    put_u64(&out, hdr.len);
    put(&out, hdr.p, hdr.len);
    put(&out, data.p, data.len);
    free(hdr.p); free(data.p);
    return out;
}

/* The tensors of a tiny HF model: hidden 32, 1 layer, 2 heads of 16 (1 KV head), ffn 64, vocab 16. */
static int hf_tensors(st_tensor *t, bool qk_norm, bool gemma, const char *dtype) {
    int n = 0;
    t[n++] = (st_tensor){ "model.embed_tokens.weight", dtype, 2, { 16, 32 } };
    t[n++] = (st_tensor){ "model.norm.weight", dtype, 1, { 32 } };
    t[n++] = (st_tensor){ "model.layers.0.input_layernorm.weight", dtype, 1, { 32 } };
    t[n++] = (st_tensor){ "model.layers.0.post_attention_layernorm.weight", dtype, 1, { 32 } };
    if (gemma) {
        t[n++] = (st_tensor){ "model.layers.0.pre_feedforward_layernorm.weight", dtype, 1, { 32 } };
        t[n++] = (st_tensor){ "model.layers.0.post_feedforward_layernorm.weight", dtype, 1, { 32 } };
    }
    if (qk_norm) {
        t[n++] = (st_tensor){ "model.layers.0.self_attn.q_norm.weight", dtype, 1, { 16 } };
        t[n++] = (st_tensor){ "model.layers.0.self_attn.k_norm.weight", dtype, 1, { 16 } };
    }
    t[n++] = (st_tensor){ "model.layers.0.self_attn.q_proj.weight", dtype, 2, { 32, 32 } };
    t[n++] = (st_tensor){ "model.layers.0.self_attn.k_proj.weight", dtype, 2, { 16, 32 } };
    t[n++] = (st_tensor){ "model.layers.0.self_attn.v_proj.weight", dtype, 2, { 16, 32 } };
    t[n++] = (st_tensor){ "model.layers.0.self_attn.o_proj.weight", dtype, 2, { 32, 32 } };
    t[n++] = (st_tensor){ "model.layers.0.mlp.gate_proj.weight", dtype, 2, { 64, 32 } };
    t[n++] = (st_tensor){ "model.layers.0.mlp.up_proj.weight", dtype, 2, { 64, 32 } };
    t[n++] = (st_tensor){ "model.layers.0.mlp.down_proj.weight", dtype, 2, { 32, 64 } };
    return n;
}

static int safetensors_seeds(const char *out) {
    char d[1100];
    snprintf(d, sizeof d, "%s/safetensors", out);
    st_tensor t[20];
    int n = hf_tensors(t, false, false, "BF16");
    bytes b = safetensors_file(t, n, "{\"format\":\"pt\"}");
    save_b(d, "llama-bf16.safetensors", &b);
    free(b.p);
    st_tensor mixed[] = { { "a", "F32", 2, { 3, 5 } }, { "b", "F16", 1, { 7 } }, { "c", "I8", 3, { 2, 2, 3 } },
                          { "scalar", "F32", 0, { 0 } }, { "empty", "BF16", 2, { 0, 4 } } };
    b = safetensors_file(mixed, 5, NULL);
    save_b(d, "mixed.safetensors", &b);
    free(b.p);
    /* sharded: index.json, then the two shards */
    bytes s = { 0 };
    put_s(&s, "{\"metadata\":{\"total_size\":120},\"weight_map\":{\"x\":\"model-00001-of-00002.safetensors\","
              "\"y\":\"model-00002-of-00002.safetensors\",\"z\":\"model-00002-of-00002.safetensors\"}}");
    put_s(&s, PART_MARK);
    st_tensor s1[] = { { "x", "F32", 2, { 2, 4 } } }, s2[] = { { "y", "BF16", 1, { 8 } }, { "z", "F16", 2, { 2, 2 } } };
    b = safetensors_file(s1, 1, NULL); put(&s, b.p, b.len); free(b.p);
    put_s(&s, PART_MARK);
    b = safetensors_file(s2, 2, "{\"format\":\"pt\"}"); put(&s, b.p, b.len); free(b.p);
    save_b(d, "sharded.bin", &s);
    free(s.p);
    return 0;
}

/* ------------------------------------------------------------------ JSON, HF config */

static const char *json_docs[] = {
    "{\"a\": [1, -2.5e3, true, false, null, \"x\\u00e9\\n\\\"\\ud83d\\ude00\"], \"b\": {\"c\": {}}}",
    "[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[1]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]",
    "\xef\xbb\xbf {\"k\": 9223372036854775807, \"m\": -9223372036854775808, \"f\": 1e308, \"z\": -0.0}",
    "\"\\t\\b\\f\\r\\/\\\\ h\xc3\xa9llo \xf0\x9f\x98\x80\"",
    "{\"architectures\":[\"LlamaForCausalLM\"],\"hidden_size\":2048,\"rope_scaling\":{\"factor\":32.0,"
    "\"rope_type\":\"llama3\"},\"torch_dtype\":\"bfloat16\",\"eos_token_id\":[128001,128008]}",
    "12345678901234567890123",
    "[\"\", {}, [], 0, 0.5, 1E-7, 2e+2]",
};

static const char *hf_configs[] = {
    "{\"model_type\":\"llama\",\"hidden_size\":32,\"num_hidden_layers\":1,\"num_attention_heads\":2,"
    "\"num_key_value_heads\":1,\"intermediate_size\":64,\"vocab_size\":16,\"rms_norm_eps\":1e-5,"
    "\"max_position_embeddings\":64,\"rope_theta\":10000.0,\"tie_word_embeddings\":true,"
    "\"rope_scaling\":{\"type\":\"linear\",\"factor\":2.0},\"bos_token_id\":1,\"eos_token_id\":2}",
    "{\"model_type\":\"qwen3\",\"hidden_size\":32,\"num_hidden_layers\":1,\"num_attention_heads\":2,"
    "\"num_key_value_heads\":1,\"head_dim\":16,\"intermediate_size\":64,\"vocab_size\":16,"
    "\"max_position_embeddings\":64,\"tie_word_embeddings\":true,\"sliding_window\":null}",
    "{\"model_type\":\"gemma3_text\",\"hidden_size\":32,\"num_hidden_layers\":1,\"num_attention_heads\":2,"
    "\"num_key_value_heads\":1,\"head_dim\":16,\"intermediate_size\":64,\"vocab_size\":16,"
    "\"query_pre_attn_scalar\":16,\"sliding_window\":8,\"sliding_window_pattern\":6,"
    "\"rope_local_base_freq\":10000.0,\"final_logit_softcapping\":30.0}",
    "{\"model_type\":\"gemma4\",\"text_config\":{\"model_type\":\"gemma4_text\",\"hidden_size\":32,"
    "\"num_hidden_layers\":1,\"num_attention_heads\":2,\"num_key_value_heads\":1,\"head_dim\":16,"
    "\"global_head_dim\":16,\"intermediate_size\":64,\"vocab_size\":16,\"sliding_window\":8,"
    "\"layer_types\":[\"full_attention\"],\"num_kv_shared_layers\":0,\"hidden_size_per_layer_input\":0,"
    "\"rope_parameters\":{\"full_attention\":{\"rope_theta\":1000000.0,\"partial_rotary_factor\":0.25},"
    "\"sliding_attention\":{\"rope_theta\":10000.0}}}}",
};

static int json_seeds(const char *out) {
    char d[1100], name[64];
    snprintf(d, sizeof d, "%s/json", out);
    for (size_t i = 0; i < sizeof json_docs / sizeof json_docs[0]; i++) {
        snprintf(name, sizeof name, "doc%zu.json", i);
        save_s(d, name, json_docs[i]);
    }
    for (size_t i = 0; i < sizeof hf_configs / sizeof hf_configs[0]; i++) {
        snprintf(name, sizeof name, "config%zu.json", i);
        save_s(d, name, hf_configs[i]);
    }
    snprintf(d, sizeof d, "%s/hf_config", out);
    static const bool qk[] = { false, true, true, true }, gem[] = { false, false, true, true };
    for (size_t i = 0; i < sizeof hf_configs / sizeof hf_configs[0]; i++) {
        bytes s = { 0 };
        put_s(&s, hf_configs[i]);
        put_s(&s, PART_MARK);
        st_tensor t[20];
        int n = hf_tensors(t, qk[i], gem[i], i == 1 ? "F32" : "BF16");
        bytes b = safetensors_file(t, n, NULL);
        put(&s, b.p, b.len);
        free(b.p);
        if (i == 0) {
            put_s(&s, PART_MARK);
            put_s(&s, "{\"add_bos_token\":true,\"bos_token\":\"<s>\",\"chat_template\":\"{{ bos_token }}\"}");
        }
        snprintf(name, sizeof name, "folder%zu.bin", i);
        save_b(d, name, &s);
        free(s.p);
    }
    return 0;
}

/* ------------------------------------------------------------------ tokenizers */

/* Normalizer and pre-tokenizer of byte-level tokenizer.json seeds: GPT-2's ByteLevel, Qwen2's Split +
 * ByteLevel, then the pipeline's other steps (pipeline.h): NFC, Strip, Replace by regex, Prepend,
 * Precompiled;
 * DeepSeek V3's three Splits, every Split behavior, invert, Digits, Punctuation, Whitespace. */
static const char *byte_level_norm[] = {
    "null", "null",
    "{\"type\":\"Sequence\",\"normalizers\":[{\"type\":\"NFC\"},{\"type\":\"Strip\",\"strip_left\":true,\"strip_right\":false},"
    "{\"type\":\"Replace\",\"pattern\":{\"Regex\":\"\\\\s{2,}\"},\"content\":\" \"},{\"type\":\"Prepend\",\"prepend\":\"_\"}]}",
    "{\"type\":\"Sequence\",\"normalizers\":[]}",
    /* NFKD, then the Precompiled charsmap of tests/unit/precompiled_vectors.txt */
    "{\"type\":\"Sequence\",\"normalizers\":[{\"type\":\"NFKD\"},{\"type\":\"Precompiled\",\"precompiled_charsmap\":\""
    "AAQAAAAwAAANDQAAAQAAgMwYAgCBBQAAFQAAgIEFAAAPAACAgCgCAIsNAAAAAACArBwCAIAJAACBdQAACQAAgAUAAIAMAACA"
    "oQ0AAAMAAICBHQAAEgAAgJToAgCdXAIAuD0AAAMAAIAYAAAAGwAAALysAgAdAAAAHAAAAB8AAAAeAAAAIQAAACAAAAAjAAAA"
    "IgAAACUAAAAkAAAAJwAAACYAAAApAAAAKAAAACsAAAAqAAAALQAAACwAAAAvAAAALgAAADEAAAAwAAAAMwAAADIAAAA1AAAA"
    "NAAAADcAAAA2AAAAOQAAADgAAAA7AAAAOgAAAD0AAAA8AAAAPwAAAD4AAABBAAAAQAAAAEMAAABCAAAARQAAAEQAAABHAAAA"
    "RgAAAEkAAABIAAAASwAAAEoAAABNAAAATAAAAE8AAABOAAAAUQAAAFAAAABTAAAAUgAAAFUAAABUAAAAVwAAAFYAAABZAAAA"
    "WAAAAFsAAABaAAAAXQAAAFwAAABfAAAAXgAAAGEAAABgAAAAbLUBAGIAAABlAAAAZAAAAGcAAABmAAAAaQAAAGWYAgBrAAAA"
    "agAAAG0AAABsAAAAbwAAAG4AAABxAAAAcAAAAHMAAAByAAAAdQAAAHQAAAB3AAAAdgAAAHkAAAB4AAAAewAAAHoAAAB9AAAA"
    "fAAAAH8AAAB+AAAAgQAAAIAAAACDAAAAggAAAIUAAACEAAAAhwAAAIYAAACJAAAAiAAAAIsAAACKAAAAjQAAAIwAAACPAAAA"
    "jgAAAJEAAACQAAAAkwAAAJIAAACVAAAAlAAAAJcAAACWAAAAmQAAAJgAAACbAAAAmgAAAJ0AAACcAAAAnwAAAJ4AAAChAAAA"
    "oAAAAKMAAACiAAAApQAAAKQAAACnAAAApgAAAKkAAACoAAAAqwAAAKoAAACtAAAArAAAAK8AAACuAAAAsQAAALAAAACzAAAA"
    "sgAAALUAAAC0AAAAtwAAALYAAAC5AAAAuAAAALsAAAC6AAAAvQAAALwAAAC/AAAAvgAAAMwcAQDAAAAAwwAAAMIAAADFAAAA"
    "xAAAAMcAAADGAAAAyQAAAMgAAADLAAAAygAAAM0AAADMAAAAzwAAAM4AAADRAAAA0AAAANMAAADSAAAA1QAAANQAAADXAAAA"
    "1gAAANkAAADYAAAA2wAAANoAAADdAAAA3AAAAMwwAQDeAAAA4QAAAOAAAADjAAAA7xABAOUAAADkAAAA5wAAAOYAAADpAAAA"
    "6AAAAOsAAADqAAAA7QAAAOwAAADimAEA7gAAAPEAAADwAAAA8wAAAPIAAAD1AAAA9AAAAPcAAAD2AAAA+QAAAPgAAAD7AAAA"
    "+gAAAPDcAQD8AAAA/wAAAP4AAAAACgBBAEZGTABmZgBmaQDCtADDgQDDqQA="
    "\"}]}",
};
static const char *byte_level_pre[] = {
    "{\"type\":\"ByteLevel\",\"add_prefix_space\":false,\"trim_offsets\":true,\"use_regex\":true}",
    "{\"type\":\"Sequence\",\"pretokenizers\":[{\"type\":\"Split\","
    "\"pattern\":{\"Regex\":\"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\\\r\\\\n\\\\p{L}\\\\p{N}]?\\\\p{L}+|\\\\p{N}| ?[^\\\\s\\\\p{L}\\\\p{N}]+[\\\\r\\\\n]*|\\\\s*[\\\\r\\\\n]+|\\\\s+(?!\\\\S)|\\\\s+\"},"
    "\"behavior\":\"Isolated\",\"invert\":false},{\"type\":\"ByteLevel\",\"add_prefix_space\":false,\"trim_offsets\":false,\"use_regex\":false}]}",
    "{\"type\":\"Sequence\",\"pretokenizers\":[{\"type\":\"Split\",\"pattern\":{\"Regex\":\"\\\\p{N}{1,3}\"},\"behavior\":\"Isolated\",\"invert\":false},"
    "{\"type\":\"Split\",\"pattern\":{\"Regex\":\"[\u4e00-\u9fa5\u3040-\u309f\u30a0-\u30ff]+\"},\"behavior\":\"Isolated\",\"invert\":false},"
    "{\"type\":\"Split\",\"pattern\":{\"Regex\":\"[^\\r\\n\\\\p{L}\\\\p{P}\\\\p{S}]?[\\\\p{L}\\\\p{M}]+| ?[\\\\p{P}\\\\p{S}]+[\\r\\n]*|\\\\s*[\\r\\n]+|\\\\s+(?!\\\\S)|\\\\s+\"},"
    "\"behavior\":\"Isolated\",\"invert\":false},{\"type\":\"ByteLevel\",\"add_prefix_space\":false,\"use_regex\":false}]}",
    "{\"type\":\"Sequence\",\"pretokenizers\":[{\"type\":\"Split\",\"pattern\":{\"String\":\" \"},\"behavior\":\"MergedWithNext\",\"invert\":false},"
    "{\"type\":\"Split\",\"pattern\":{\"String\":\"-\"},\"behavior\":\"MergedWithPrevious\",\"invert\":true},"
    "{\"type\":\"Split\",\"pattern\":{\"Regex\":\"o+\"},\"behavior\":\"Contiguous\",\"invert\":false},"
    "{\"type\":\"Split\",\"pattern\":{\"Regex\":\"x\"},\"behavior\":\"Removed\",\"invert\":false},{\"type\":\"ByteLevel\",\"use_regex\":true}]}",
    "{\"type\":\"Sequence\",\"pretokenizers\":[{\"type\":\"Digits\",\"individual_digits\":true},{\"type\":\"Punctuation\",\"behavior\":\"Contiguous\"},"
    "{\"type\":\"Whitespace\"},{\"type\":\"WhitespaceSplit\"},{\"type\":\"ByteLevel\",\"use_regex\":false}]}",
};

/* A byte-level BPE tokenizer.json over the BPE_N tokens of make_bpe_tokens (merges as "a b"
 * strings or as pairs). */
static bytes byte_level_tokenizer_json(const char *norm, const char *pre, bool pair_merges) {
    json_buf j = { 0 };
    char num[32];
    json_buf_put(&j, "{\"added_tokens\":[", strlen("{\"added_tokens\":["));
    for (int i = 256 + BPE_MERGED; i < BPE_N; i++) {
        snprintf(num, sizeof num, "%s{\"id\":%d,\"content\":", i > 256 + BPE_MERGED ? "," : "", i);
        json_buf_put(&j, num, strlen(num));
        json_buf_put_string(&j, bpe_tokens[i], strlen(bpe_tokens[i]));
        json_buf_put(&j, ",\"special\":true}", strlen(",\"special\":true}"));
    }
    json_buf_put(&j, "],\"normalizer\":", strlen("],\"normalizer\":"));
    json_buf_put(&j, norm, strlen(norm));
    json_buf_put(&j, ",\"pre_tokenizer\":", strlen(",\"pre_tokenizer\":"));
    json_buf_put(&j, pre, strlen(pre));
    json_buf_put(&j, ",\"model\":{\"type\":\"BPE\",\"vocab\":{", strlen(",\"model\":{\"type\":\"BPE\",\"vocab\":{"));
    for (int i = 0; i < 256 + BPE_MERGED; i++) {
        if (i) json_buf_put(&j, ",", strlen(","));
        json_buf_put_string(&j, bpe_tokens[i], strlen(bpe_tokens[i]));
        snprintf(num, sizeof num, ":%d", i);
        json_buf_put(&j, num, strlen(num));
    }
    json_buf_put(&j, "},\"merges\":[", strlen("},\"merges\":["));
    for (int i = 0; i < BPE_MERGED; i++) {
        if (i) json_buf_put(&j, ",", strlen(","));
        const char *sp = strchr(bpe_merges[i], ' ');
        if (pair_merges) {
            json_buf_put(&j, "[", strlen("["));
            json_buf_put_string(&j, bpe_merges[i], (size_t)(sp - bpe_merges[i]));
            json_buf_put(&j, ",", strlen(","));
            json_buf_put_string(&j, sp + 1, strlen(sp + 1));
            json_buf_put(&j, "]", strlen("]"));
        } else {
            json_buf_put_string(&j, bpe_merges[i], strlen(bpe_merges[i]));
        }
    }
    json_buf_put(&j, "]}}", strlen("]}}"));
    bytes out = { 0 };
    put(&out, j.data, j.len);
    json_buf_free(&j);
    return out;
}

static const char *tokenizer_jsons[] = {
    /* SentencePiece-style BPE with byte fallback (Gemma 3 / Llama 2 tokenizer.json) */
    "{\"added_tokens\":[{\"id\":0,\"content\":\"<pad>\",\"special\":true},{\"id\":1,\"content\":\"<eos>\",\"special\":true},"
    "{\"id\":2,\"content\":\"<bos>\",\"special\":true}],\"normalizer\":{\"type\":\"Replace\",\"pattern\":{\"String\":\" \"},"
    "\"content\":\"\\u2581\"},\"pre_tokenizer\":{\"type\":\"Split\",\"pattern\":{\"String\":\" \"},\"behavior\":\"MergedWithPrevious\",\"invert\":false},"
    "\"post_processor\":{\"type\":\"TemplateProcessing\",\"single\":[{\"SpecialToken\":{\"id\":\"<bos>\",\"type_id\":0}},"
    "{\"Sequence\":{\"id\":\"A\",\"type_id\":0}}]},\"model\":{\"type\":\"BPE\",\"unk_token\":\"<unk>\",\"byte_fallback\":true,"
    "\"vocab\":{\"<pad>\":0,\"<eos>\":1,\"<bos>\":2,\"<unk>\":3,\"<0x0A>\":4,\"<0xC3>\":5,\"<0xA9>\":6,\"\\u2581\":7,\"a\":8,\"b\":9,"
    "\"\\u2581a\":10,\"ab\":11,\"\\u2581ab\":12},\"merges\":[\"\\u2581 a\",\"a b\",\"\\u2581a b\"]}}",
    /* Llama-style: Prepend + Replace normalizers, no pre-tokenizer */
    "{\"added_tokens\":[{\"id\":0,\"content\":\"<unk>\",\"special\":true},{\"id\":1,\"content\":\"<s>\",\"special\":true},"
    "{\"id\":2,\"content\":\"</s>\",\"special\":true}],\"normalizer\":{\"type\":\"Sequence\",\"normalizers\":["
    "{\"type\":\"Prepend\",\"prepend\":\"\\u2581\"},{\"type\":\"Replace\",\"pattern\":{\"String\":\" \"},\"content\":\"\\u2581\"}]},"
    "\"pre_tokenizer\":null,\"model\":{\"type\":\"BPE\",\"byte_fallback\":true,\"vocab\":{\"<unk>\":0,\"<s>\":1,\"</s>\":2,"
    "\"<0x0A>\":3,\"\\u2581\":4,\"H\":5,\"i\":6,\"\\u2581H\":7,\"\\u2581Hi\":8},\"merges\":[\"\\u2581 H\",\"\\u2581H i\"]}}",
    /* Mistral-style: a Metaspace pre-tokenizer (first, split), a Lowercase normalizer and an added
     * token matched in normalized text, its decoder */
    "{\"added_tokens\":[{\"id\":0,\"content\":\"<unk>\",\"special\":true},{\"id\":1,\"content\":\"<s>\",\"special\":true},"
    "{\"id\":9,\"content\":\"HI\",\"special\":false,\"normalized\":true}],\"normalizer\":{\"type\":\"Lowercase\"},"
    "\"pre_tokenizer\":{\"type\":\"Metaspace\",\"replacement\":\"\\u2581\",\"prepend_scheme\":\"first\",\"split\":true},"
    "\"decoder\":{\"type\":\"Metaspace\",\"replacement\":\"\\u2581\",\"prepend_scheme\":\"first\",\"split\":true},"
    "\"model\":{\"type\":\"BPE\",\"byte_fallback\":true,\"vocab\":{\"<unk>\":0,\"<s>\":1,\"</s>\":2,"
    "\"<0x0A>\":3,\"\\u2581\":4,\"h\":5,\"i\":6,\"\\u2581h\":7,\"\\u2581hi\":8},\"merges\":[\"\\u2581 h\",\"\\u2581h i\"]}}",
};

static const char *tokenizer_configs[] = {
    "{\"add_bos_token\":false,\"eos_token\":\"<|endoftext|>\",\"chat_template\":\"x\"}",
    "{\"add_bos_token\":true,\"bos_token\":{\"content\":\"<bos>\",\"lstrip\":false},\"eos_token\":\"<eos>\"}",
};

/* A SentencePiece ModelProto: pieces (field 1: piece 1, score 2, type 3), trainer_spec (field 2:
 * model_type 3 = BPE(2), unk 40, bos 41, eos 42, pad 43), normalizer_spec (field 3: add_dummy_prefix 3). */
static void pb_varint(bytes *b, uint64_t v) {
    do { uint8_t c = (uint8_t)(v & 0x7f); v >>= 7; if (v) c |= 0x80; put(b, &c, 1); } while (v);
}
static void pb_bytes(bytes *b, int field, const void *s, size_t n) {
    pb_varint(b, (uint64_t)field << 3 | 2);
    pb_varint(b, n);
    put(b, s, n);
}
static void pb_int(bytes *b, int field, int64_t v) { pb_varint(b, (uint64_t)field << 3); pb_varint(b, (uint64_t)v); }

static bytes spm_model(int n_pieces, bool with_specs) {
    static const char *pieces[] = { "<unk>", "<s>", "</s>", "<0x0A>", "<0xE2>", "\xe2\x96\x81", "H", "e", "l", "o",
                                    "\xe2\x96\x81H", "ll", "\xe2\x96\x81He", "<|user|>" };
    bytes m = { 0 };
    for (int i = 0; i < n_pieces && i < 14; i++) {
        bytes p = { 0 };
        pb_bytes(&p, 1, pieces[i], strlen(pieces[i]));
        float score = -(float)i;
        pb_varint(&p, 2 << 3 | 5);
        put(&p, &score, 4);
        int type = i == 0 ? 2 : i < 3 ? 3 : i < 5 ? 6 : i == 13 ? 4 : 1;
        pb_int(&p, 3, type);
        pb_bytes(&m, 1, p.p, p.len);
        free(p.p);
    }
    if (with_specs) {
        bytes t = { 0 };
        pb_int(&t, 3, 2);
        pb_int(&t, 40, 0); pb_int(&t, 41, 1); pb_int(&t, 42, 2); pb_int(&t, 43, -1);
        pb_bytes(&m, 2, t.p, t.len);
        free(t.p);
        bytes nspec = { 0 };
        pb_bytes(&nspec, 1, "identity", 8);
        pb_int(&nspec, 3, 1);
        pb_bytes(&m, 3, nspec.p, nspec.len);
        free(nspec.p);
    }
    return m;
}

static int tokenizer_seeds(const char *out) {
    char d[1100], name[64];
    snprintf(d, sizeof d, "%s/tokenizer_json", out);
    const size_t n_byte_level = sizeof byte_level_pre / sizeof byte_level_pre[0];
    for (size_t i = 0; i < n_byte_level + sizeof tokenizer_jsons / sizeof tokenizer_jsons[0]; i++) {
        bytes t = { 0 };
        if (i < n_byte_level) t = byte_level_tokenizer_json(byte_level_norm[i], byte_level_pre[i], i == 1);
        else put_s(&t, tokenizer_jsons[i - n_byte_level]);
        snprintf(name, sizeof name, "tokenizer%zu.json", i);
        save_b(d, name, &t);
        if (i == 0 || i == n_byte_level) {
            bytes s = { 0 };
            put(&s, t.p, t.len);
            put_s(&s, PART_MARK);
            put_s(&s, tokenizer_configs[i ? 1 : 0]);
            snprintf(name, sizeof name, "with-config%zu.bin", i);
            save_b(d, name, &s);
            free(s.p);
        }
        free(t.p);
    }
    snprintf(d, sizeof d, "%s/spm_model", out);
    bytes m = spm_model(14, true);
    save_b(d, "tokenizer.model", &m);
    free(m.p);
    m = spm_model(6, false);
    save_b(d, "pieces-only.model", &m);
    free(m.p);

    /* tokenize: control byte (vocab, add_bos, parse_special, room) + text */
    snprintf(d, sizeof d, "%s/tokenize", out);
    static const char *texts[] = { "Hello world", " leading  spaces\tand\nnewlines\n\n", "<s>Hi</s><|im_end|>",
        "caf\xc3\xa9 \xe2\x82\xac 123456 \xf0\x9f\x98\x80 \xe4\xbd\xa0\xe5\xa5\xbd", "'s 've don't I'M",
        "bad \xc3 utf8 \xed\xa0\x80 \xf4\x90\x80\x80", "<0x0A>\xe2\x96\x81\xe2\x96\x81x" };
    for (size_t i = 0; i < sizeof texts / sizeof texts[0]; i++)
        for (int v = 0; v < 6; v++) {
            bytes s = { 0 };
            uint8_t ctl = (uint8_t)(v | (i % 2 ? 8 : 0) | (i == 2 ? 16 : 0) | ((i % 4) << 5));
            put(&s, &ctl, 1);
            put_s(&s, texts[i]);
            snprintf(name, sizeof name, "text%zu-v%d.bin", i, v);
            save_b(d, name, &s);
            free(s.p);
        }
    return 0;
}

/* ------------------------------------------------------------------ chat templates, q4nx */

static int chat_seeds(const char *out, const char *fixtures) {
    char d[1100], name[300], path[1200];
    snprintf(d, sizeof d, "%s/chat_template", out);
    /* the fixtures' templates (the older five and the fifty in all/), with a conversation holding
       a tool call and a tool answer, so the fuzzer starts inside the templates' tool branches */
    static const char conv[] =
        "{\"messages\": [{\"role\": \"system\", \"content\": \"You are terse.\"}, {\"role\": \"user\", \"content\": \"Hi \\u00e9\"},"
        " {\"role\": \"assistant\", \"content\": \"\", \"tool_calls\": [{\"type\": \"function\", \"function\":"
        " {\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}}]},"
        " {\"role\": \"tool\", \"content\": \"sunny\"}, {\"role\": \"assistant\", \"content\": \"<think>\\nhm\\n</think>\\n\\nSunny.\"},"
        " {\"role\": \"user\", \"content\": \"  again  \"}],"
        " \"tools\": [{\"type\": \"function\", \"function\": {\"name\": \"get_weather\", \"description\": \"Get the weather\","
        " \"parameters\": {\"type\": \"object\", \"properties\": {\"city\": {\"type\": \"string\"}}, \"required\": [\"city\"]}}}],"
        " \"enable_thinking\": false}";
    static const char *older[] = { "gemma-2.jinja", "gemma-4.jinja", "llama-3.2.jinja", "qwen3.jinja", "smollm3.jinja" };
    for (size_t i = 0; i < sizeof older / sizeof older[0] + 1; i++) {
        char dir[1200];
        if (i < sizeof older / sizeof older[0]) snprintf(dir, sizeof dir, "%s/chat-templates", fixtures);
        else snprintf(dir, sizeof dir, "%s/chat-templates/all", fixtures);
        DIR *dh = opendir(dir);
        if (!dh) continue;
        for (struct dirent *e; (e = readdir(dh));) {
            size_t n = strlen(e->d_name);
            if (n < 7 || strcmp(e->d_name + n - 6, ".jinja") != 0) continue;
            if (i < sizeof older / sizeof older[0] && strcmp(e->d_name, older[i]) != 0) continue;
            if (snprintf(path, sizeof path, "%s/%s", dir, e->d_name) >= (int)sizeof path) continue;
            bytes t = read_all(path);
            bytes s = { 0 };
            uint8_t ctl = 1 | 2;
            put(&s, &ctl, 1);
            put(&s, t.p, t.len);
            put_s(&s, PART_MARK);
            put_s(&s, conv);
            snprintf(name, sizeof name, "%s%s.bin", i < sizeof older / sizeof older[0] ? "" : "all-", e->d_name);
            save_b(d, name, &s);
            free(s.p); free(t.p);
        }
        closedir(dh);
    }
    /* small templates over the interpreter's features */
    static const char *small[] = {
        "{% for m in messages %}{{ loop.index }}{{ m.role | upper }}: {{ m.content | trim }}{% if not loop.last %}\n{% endif %}{% endfor %}",
        "{% set ns = namespace(x=0) %}{% for i in range(5) if i is odd %}{% set ns.x = ns.x + i %}{% endfor %}{{ ns.x }}",
        "{% macro f(a, b='x') %}{{ a ~ b }}{{ varargs }}{{ kwargs }}{% endmacro %}{{ f(1) }}{{ f(1, 2, 3, k=4) }}",
        "{{ tools | tojson(indent=2) }}{{ messages | map(attribute='role') | unique | list }}{{ {'a': [1, 2.5, none]} }}",
        "{{ 'a,b'.split(',') }}{{ 'xyx'.strip('x') }}{{ 'abc'[::-1] }}{{ '{}-{}'.format(1, 2) }}{{ messages[-1]['content'][1:] }}",
        "{%- if messages[0].role == 'system' -%}{{ raise_exception('no system') }}{%- endif -%}",
        "{{ strftime_now('%d %b %Y') }}{% for k, v in messages[0] | dictsort %}{{ k }}={{ v }}{% endfor %}",
        "{% macro each(xs) %}{% for x in xs %}{{ caller(x) }}{% endfor %}{% endmacro %}{% call(m) each(messages) %}"
        "{{ m.role }}{% endcall %}{% filter upper %}{% raw %}{{ raw }}{% endraw %}{% endfilter %}",
        "{% set ns = namespace(s='') %}{% for m in messages | selectattr('role', 'in', ['user', 'assistant']) %}"
        "{% set ns.s = ns.s ~ m.content[:3] %}{% endfor %}{{ ns.s }}{{ tools | map(attribute='function') | list | tojson }}",
    };
    for (size_t i = 0; i < sizeof small / sizeof small[0]; i++) {
        bytes s = { 0 };
        uint8_t ctl = (uint8_t)(i & 3);
        put(&s, &ctl, 1);
        put_s(&s, small[i]);
        put_s(&s, PART_MARK);
        put_s(&s, conv);
        snprintf(name, sizeof name, "small%zu.bin", i);
        save_b(d, name, &s);
        free(s.p);
    }
    return 0;
}

static int q4nx_seeds(const char *out) {
    char d[1100];
    snprintf(d, sizeof d, "%s/q4nx", out);
    /* header: ctl, width16, rows16, k16, ne1_16, pad to 18; then tiles */
    struct { uint8_t ctl; uint16_t rows, k, ne1; size_t tiles, tile_bytes; const char *name; } s[] = {
        { 0x00, 32, 256, 1, 1, 5120, "tile-2d.bin" },          /* 32 x 256: one tile */
        { 0x01, 32, 64, 1, 2, 1280, "quarter-2d.bin" },        /* 32 x 64: two quarter tiles */
        { 0x05, 16, 160, 2, 2, 1280, "quarter-3d.bin" },       /* 16 x 160: 1 x 2 quarter tiles */
        { 0x04, 64, 512, 2, 4, 5120, "tile-3d.bin" },          /* 64 x 512: 2 x 2 tiles */
    };
    for (size_t i = 0; i < sizeof s / sizeof s[0]; i++) {
        bytes b = { 0 };
        put(&b, &s[i].ctl, 1);
        uint16_t w = 0, ne1 = (uint16_t)(s[i].ne1 - 1);
        put(&b, &w, 2); put(&b, &s[i].rows, 2); put(&b, &s[i].k, 2); put(&b, &ne1, 2);
        while (b.len < 18) put(&b, "", 1);
        for (size_t k = 0; k < s[i].tiles * s[i].tile_bytes; k++) { uint8_t c = (uint8_t)(rng >> 11); rnd(); put(&b, &c, 1); }
        save_b(d, s[i].name, &b);
        free(b.p);
    }
    return 0;
}

/* ------------------------------------------------------------------ regexes */

/* fuzz_regex: the pattern's length (2 bytes, little-endian), the pattern, the text. The real
 * pre-tokenizer patterns (tokenizer.json Split regexes; DeepSeek V3's third also with the raw CR/LF
 * its JSON decodes to) and hostile ones, each against a mixed-script text and a run of a's. */
static int regex_seeds(const char *out) {
    char d[1100], name[64];
    snprintf(d, sizeof d, "%s/regex", out);
    static const char *patterns[] = {
        "'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)|\\s+",
        "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+",
        "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?[\\p{L}\\p{M}]+|\\p{N}| ?[^\\s\\p{L}\\p{M}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+",
        "[^\\r\\n\\p{L}\\p{N}]?[\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}]*[\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?|"
        "[^\\r\\n\\p{L}\\p{N}]?[\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}]+[\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?|"
        "\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n/]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+",
        "\\p{N}{1,3}",
        "[\xe4\xb8\x80-\xe9\xbe\xa5\xe3\x81\x80-\xe3\x82\x9f\xe3\x82\xa0-\xe3\x83\xbf]+",
        "[!\"#$%&'()*+,\\-./:;<=>?@\\[\\\\\\]^_`{|}~][A-Za-z]+|[^\r\n\\p{L}\\p{P}\\p{S}]?[\\p{L}\\p{M}]+| ?[\\p{P}\\p{S}]+[\r\n]*|\\s*[\r\n]+|\\s+(?!\\S)|\\s+",
        "[!\"#$%&'()*+,\\-./:;<=>?@\\[\\\\\\]^_`{|}~][A-Za-z]+|[^\\r\\n\\p{L}\\p{P}\\p{S}]?[\\p{L}\\p{M}]+| ?[\\p{P}\\p{S}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+",
        "\\s+$", "^\\s*\\w+|\\d+?\\z|\\A.", "(?i)[\\p{Lu}k\\x{17F}]+|(?-i:S)", "\\x{1F600}|\\u00e9|\\xC3\\xA9|[\\h\\W]{2,}?",
        "(a|a)*b", "(a*)*b", "(?:a+)+b", "((a*)*)*b", "(a|aa)*?c", "\\s*[\\r\\n]+x|\\s", "(?:(?:a|b|c){5}){5}",
        "a{0,1000}", "(?=a)*", "(?<=a)b", "[z-a]", "(?:(?=(?!a)b)|c)*d", "x*", "|a|(?=b)", "(?#c)a{2}?{3}",
    };
    static const char *texts[] = {
        "It's 2024: I'M sure they'll PANIC!  \n\n\t x\xc2\xa0y \xe4\xb8\xad\xe6\x96\x87\xe3\x81\xae "
        "\xe0\xa4\xa8\xe0\xa4\xae\xe0\xa4\xb8\xe0\xa5\x8d\xe0\xa4\xa4\xe0\xa5\x87 caf\xc3\xa9 \xf0\x9f\x98\x80 1234567\r\n",
        "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaab",
    };
    for (size_t p = 0; p < sizeof patterns / sizeof patterns[0]; p++)
        for (size_t t = 0; t < 2; t++) {
            bytes b = { 0 };
            uint16_t len = (uint16_t)strlen(patterns[p]);
            put(&b, &len, 2);
            put_s(&b, patterns[p]);
            put_s(&b, texts[t]);
            snprintf(name, sizeof name, "pattern%02zu-text%zu.bin", p, t);
            save_b(d, name, &b);
            free(b.p);
        }
    return 0;
}

/* ------------------------------------------------------------------ JSON Schemas */

/* fuzz_json_schema: the schemas of tests/data/schemas/ (read from the repository root, where
 * `make fuzz` runs this) and small ones over every keyword the converter knows and some it refuses. */
static int json_schema_seeds(const char *out) {
    char d[1100], name[300], path[1400];
    snprintf(d, sizeof d, "%s/json_schema", out);
    static const char *schemas[] = {
        "{}", "true", "false",
        "{\"type\":[\"string\",\"null\"],\"minLength\":2,\"maxLength\":250}",
        "{\"type\":\"integer\",\"exclusiveMinimum\":-13,\"maximum\":65535}",
        "{\"type\":\"number\",\"minimum\":-10,\"exclusiveMaximum\":10}",
        "{\"type\":\"string\",\"pattern\":\"^(foo|ba[rz])+\\\\d{2,3}[^\\\\s\\\"]?(x|)\\\\.\\\\w*$\"}",
        "{\"type\":\"string\",\"format\":\"date-time\"}",
        "{\"enum\":[\"a\",1,null,true,[1,2],{\"k\":\"v\"}],\"type\":[\"string\",\"integer\"]}",
        "{\"type\":\"object\",\"properties\":{\"ab\":{\"type\":\"integer\"},\"ac\":false,\"\\u00e9\":{}},"
        "\"required\":[\"ab\",\"zz\"],\"additionalProperties\":{\"type\":\"string\"}}",
        "{\"type\":\"array\",\"prefixItems\":[{\"const\":1},{\"type\":\"boolean\"}],\"items\":{\"type\":\"null\"},"
        "\"minItems\":1,\"maxItems\":150}",
        "{\"$defs\":{\"n\":{\"type\":\"object\",\"properties\":{\"c\":{\"type\":\"array\",\"items\":{\"$ref\":\"#/$defs/n\"}}}}},"
        "\"$ref\":\"#/$defs/n\"}",
        "{\"allOf\":[{\"$ref\":\"#/definitions/b\"},{\"properties\":{\"x\":{\"minimum\":3}},\"required\":[\"x\"]}],"
        "\"definitions\":{\"b\":{\"type\":\"object\",\"properties\":{\"x\":{\"type\":\"integer\",\"maximum\":9}}}}}",
        "{\"type\":\"object\",\"properties\":{\"a\":{}},\"anyOf\":[{\"required\":[\"a\"]},{\"oneOf\":[{\"type\":\"null\"}]}]}",
        "{\"$ref\":\"#\"}", "{\"patternProperties\":{\"x\":{}}}", "{\"type\":\"string\",\"pattern\":\"(a)\\\\1\"}",
    };
    for (size_t i = 0; i < sizeof schemas / sizeof schemas[0]; i++) {
        snprintf(name, sizeof name, "schema%02zu.json", i);
        save_s(d, name, schemas[i]);
    }
    DIR *dh = opendir("tests/data/schemas");
    if (!dh) return 0;
    for (struct dirent *e; (e = readdir(dh));) {
        size_t n = strlen(e->d_name);
        if (n < 6 || strcmp(e->d_name + n - 5, ".json") != 0) continue;
        snprintf(path, sizeof path, "tests/data/schemas/%s", e->d_name);
        bytes t = read_all(path);
        snprintf(name, sizeof name, "file-%s", e->d_name);
        save_b(d, name, &t);
        free(t.p);
    }
    closedir(dh);
    return 0;
}

/* ------------------------------------------------------------------ GBNF grammars */

/* fuzz_gbnf: a grammar, a NUL byte, a text to feed: the grammars of the unit tests and of JSON
 * schemas, texts they accept and refuse, and refused grammars. */
static int gbnf_seeds(const char *out) {
    char d[1100];
    snprintf(d, sizeof d, "%s/gbnf", out);
    static const struct { const char *name, *grammar, *text; } s[] = {
        { "json.bin", "root ::= value\nvalue ::= object | array | string | number | \"true\" | \"false\" | \"null\"\n"
          "object ::= \"{\" ws ( string ws \":\" ws value ws ( \",\" ws string ws \":\" ws value ws )* )? \"}\"\n"
          "array ::= \"[\" ws ( value ws ( \",\" ws value ws )* )? \"]\"\n"
          "string ::= \"\\\"\" ( [^\"\\\\\\x00-\\x1f] | \"\\\\\" ( [\"\\\\/bfnrt] | \"u\" [0-9a-fA-F]{4} ) )* \"\\\"\"\n"
          "number ::= \"-\"? ( \"0\" | [1-9] [0-9]* ) ( \".\" [0-9]+ )? ( [eE] [-+]? [0-9]+ )?\nws ::= [ \\t\\n]*\n",
          "{\"a\": [1, -2.5e3, \"x\\u00e9\", null]}" },
        { "list.bin", "root ::= \"[\" item (\",\" \" \"? item){0,4} \"]\"\nitem ::= [a-z]{1,8} | \"-\"? [0-9]{1,3}\n", "[ab, -12,x]" },
        { "utf8.bin", "root ::= \"h\\u00e9\" [\\u20ac\\U0001F600]+ .\n", "h\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80!" },
        { "nullable.bin", "root ::= a b c \"!\"\na ::= \"a\"?\nb ::= \"\" | \"b\"\nc ::= (\"c\")*\n", "abccc!" },
        { "ambiguous.bin", "root ::= x* \"!\"\nx ::= \"a\" | \"a\" | \"a\" y\ny ::= \"\" | x\n", "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa!" },
        { "nested.bin", "root ::= \"(\" root \")\" | \"\"\n", "((((()))))" },
        { "left.bin", "root ::= a\na ::= b? root \"x\"\nb ::= \"b\"\n", "bx" },
        { "undefined.bin", "root ::= item # no item\n", "x" },
        { "counts.bin", "root ::= (\"ab\" | [^a-c]){2,5} \"x\"{0,3}\n", "abqabxx" },
    };
    for (size_t i = 0; i < sizeof s / sizeof s[0]; i++) {
        size_t gl = strlen(s[i].grammar), tl = strlen(s[i].text);
        char *b = malloc(gl + 1 + tl);
        if (!b) return 1;
        memcpy(b, s[i].grammar, gl);
        b[gl] = 0;
        memcpy(b + gl + 1, s[i].text, tl);
        save(d, s[i].name, b, gl + 1 + tl);
        free(b);
    }
    return 0;
}

/* ------------------------------------------------------------------ HTTP requests */

/* fuzz_http: byte 0 picks the split point (odd: also byte by byte), byte 1 the limits (odd: small
 * ones), then the connection's bytes: requests of every framing, pipelined ones, and refused ones. */
static int http_seeds(const char *out) {
    char d[1100];
    snprintf(d, sizeof d, "%s/http", out);
    static const struct { const char *name, *text; } s[] = {
        { "get.bin", "\x81\x02GET /v1/models?limit=2 HTTP/1.1\r\nHost: localhost:8080\r\nAccept: */*\r\n\r\n" },
        { "post-length.bin", "\x40\x02POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
          "Content-Length: 45\r\nExpect: 100-continue\r\n\r\n{\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}" },
        { "chunked.bin", "\x93\x01POST /v1/completions HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n"
          "4;a=b;q=\"x\\\"y\"\r\n{\"a\"\r\n3 ; z\r\n:1}\r\n0\r\nX-Trailer: t\r\nX-Other: 2\r\n\r\n" },
        { "pipelined.bin", "\x20\x02GET /health HTTP/1.1\r\n\r\nPOST /v1/embeddings HTTP/1.1\r\nContent-Length: 2\r\n"
          "Connection: close\r\n\r\n{}\r\nGET / HTTP/1.0\nConnection: keep-alive\n\n" },
        { "leading-lf.bin", "\x05\x01\r\n\nOPTIONS * HTTP/1.1\nHost: a\n\n" },
        { "te-and-length.bin", "\x60\x02POST / HTTP/1.1\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n" },
        { "te-gzip.bin", "\x60\x02POST / HTTP/1.1\r\nTransfer-Encoding: gzip, chunked\r\n\r\n" },
        { "obs-fold.bin", "\x31\x02GET / HTTP/1.1\r\nX-A: a\r\n b\r\nHost : x\r\n\r\n" },
        { "bare-cr.bin", "\x11\x02GET /\r HTTP/1.1\r\n\r\n" },
        { "huge-length.bin", "\x70\x01POST / HTTP/1.1\r\nContent-Length: 1073741824\r\n\r\nxx" },
        { "chunk-overflow.bin", "\x51\x02POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\nffffffffffffffffff1\r\nx\r\n" },
        { "version.bin", "\x07\x02GET / HTTP/2.0\r\n\r\n" },
        { "many-headers.bin", "\x99\x01GET / HTTP/1.1\r\nA: 1\r\nB: 2\r\nC: 3\r\nD: 4\r\nE: 5\r\nF: 6\r\nG: 7\r\n\r\n" },
    };
    for (size_t i = 0; i < sizeof s / sizeof s[0]; i++) save_s(d, s[i].name, s[i].text);
    return 0;
}

/* ------------------------------------------------------------------ OpenAI request bodies */

/* fuzz_openai_request: byte 0 picks the endpoint ('b', even: /v1/chat/completions; 'a', odd:
 * /v1/completions), the rest is the JSON body: chat bodies with every field the reader knows, text
 * parts, stop arrays, logprobs, nulls; completions with each prompt form; refused ones (tools,
 * response_format, images, several prompts, wrong types, 17 stop strings). */
static int openai_request_seeds(const char *out) {
    char d[1100];
    snprintf(d, sizeof d, "%s/openai_request", out);
    static const struct { const char *name, *text; } s[] = {
        { "chat-minimal.bin", "b{\"model\":\"m\",\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}" },
        { "chat-full.bin", "b{\"model\":\"tiny\",\"messages\":[{\"role\":\"system\",\"content\":\"Be brief.\"},"
          "{\"role\":\"user\",\"content\":\"Hello\"},{\"role\":\"assistant\",\"content\":\"Hi!\"},{\"role\":\"user\",\"content\":\"More\"}],"
          "\"max_completion_tokens\":32,\"max_tokens\":8,\"temperature\":0.7,\"top_p\":0.9,\"top_k\":40,\"min_p\":0.05,"
          "\"repeat_penalty\":1.1,\"seed\":42,\"stop\":[\"\\n\\n\",\"END\",\"\"],\"n\":3,\"stream\":true,"
          "\"stream_options\":{\"include_usage\":true},\"logprobs\":true,\"top_logprobs\":5,\"ignore_eos\":false,\"user\":\"u1\"}" },
        { "chat-parts.bin", "b{\"messages\":[{\"role\":\"user\",\"content\":[{\"type\":\"text\",\"text\":\"Part one, \"},"
          "{\"type\":\"text\",\"text\":\"part two.\"}]}],\"stop\":\"###\"}" },
        { "chat-nulls.bin", "b{\"messages\":[{\"role\":\"user\",\"content\":\"x\"}],\"model\":null,\"n\":null,\"stream\":null,"
          "\"stream_options\":null,\"logprobs\":null,\"top_logprobs\":null,\"max_tokens\":null,\"max_completion_tokens\":null,"
          "\"temperature\":null,\"top_p\":null,\"seed\":null,\"stop\":null,\"tools\":null,\"response_format\":null,\"unknown\":{\"a\":[1]}}" },
        { "chat-image.bin", "b{\"messages\":[{\"role\":\"user\",\"content\":[{\"type\":\"text\",\"text\":\"What is it?\"},"
          "{\"type\":\"image_url\",\"image_url\":{\"url\":\"data:image/png;base64,AAAA\"}}]}]}" },
        { "chat-tools.bin", "b{\"messages\":[{\"role\":\"user\",\"content\":\"weather?\"}],\"tools\":[{\"type\":\"function\","
          "\"function\":{\"name\":\"get_weather\",\"parameters\":{\"type\":\"object\"}}}],\"tool_choice\":\"auto\"}" },
        { "chat-response-format.bin", "b{\"messages\":[{\"role\":\"user\",\"content\":\"json\"}],\"response_format\":{\"type\":\"json_object\"}}" },
        { "chat-top-logprobs-alone.bin", "b{\"messages\":[{\"role\":\"user\",\"content\":\"a\"}],\"top_logprobs\":3}" },
        { "chat-wrong-types.bin", "b{\"messages\":[{\"role\":\"user\",\"content\":\"a\"}],\"n\":\"2\",\"stream\":1,\"temperature\":\"hot\","
          "\"seed\":-1,\"stop\":[1,2],\"max_tokens\":1.5,\"logprobs\":1}" },
        { "chat-stop-17.bin", "b{\"messages\":[{\"role\":\"user\",\"content\":\"a\"}],\"stop\":[\"a\",\"b\",\"c\",\"d\",\"e\",\"f\",\"g\","
          "\"h\",\"i\",\"j\",\"k\",\"l\",\"m\",\"n\",\"o\",\"p\",\"q\"]}" },
        { "chat-ranges.bin", "b{\"messages\":[{\"role\":\"user\",\"content\":\"a\"}],\"n\":16,\"top_p\":1,\"min_p\":0,\"top_k\":0,"
          "\"temperature\":0,\"max_tokens\":1e12,\"top_logprobs\":20,\"logprobs\":true,\"seed\":18446744073709551615}" },
        { "chat-nul.bin", "b{\"messages\":[{\"role\":\"user\\u0000\",\"content\":\"a\\u0000b\"}],\"stop\":[\"x\\u0000y\"]}" },
        { "completion-string.bin", "a{\"model\":\"m\",\"prompt\":\"Once upon a time\",\"max_tokens\":16,\"logprobs\":2,\"echo\":false,"
          "\"stop\":[\".\"],\"n\":2,\"stream\":false,\"seed\":7,\"temperature\":1.0}" },
        { "completion-array-string.bin", "a{\"prompt\":[\"Just one\"],\"logprobs\":0,\"stream\":true,\"stream_options\":{\"include_usage\":false}}" },
        { "completion-ids.bin", "a{\"prompt\":[1,15043,29892,3186],\"max_tokens\":4,\"logprobs\":5}" },
        { "completion-nested-ids.bin", "a{\"prompt\":[[1,2,3]],\"max_completion_tokens\":0}" },
        { "completion-several.bin", "a{\"prompt\":[\"one\",\"two\"]}" },
        { "completion-several-ids.bin", "a{\"prompt\":[[1,2],[3,4]]}" },
        { "completion-refused.bin", "a{\"prompt\":\"x\",\"suffix\":\"y\",\"echo\":true,\"logprobs\":6,\"logit_bias\":{\"50256\":-100}}" },
        { "completion-bad-ids.bin", "a{\"prompt\":[1,-2,3.5,2147483648]}" },
        { "not-an-object.bin", "b[{\"role\":\"user\",\"content\":\"hi\"}]" },
    };
    for (size_t i = 0; i < sizeof s / sizeof s[0]; i++) save_s(d, s[i].name, s[i].text);
    return 0;
}

/* ------------------------------------------------------------------ hand-made GGUF regressions */

/* A GGUF header: magic, version 3, counts. */
static void ghdr(bytes *b, uint64_t n_tensors, uint64_t n_kv) {
    put_s(b, "GGUF"); put_u32(b, 3); put_u64(b, n_tensors); put_u64(b, n_kv);
}
static void gkv_u32(bytes *b, const char *key, uint32_t v) { put_gstr(b, key); put_u32(b, GGUF_U32); put_u32(b, v); }
/* A tensor info of n_dims dims of type, at offset. */
static void gtensor(bytes *b, const char *name, uint32_t n_dims, const uint64_t *ne, uint32_t type, uint64_t off) {
    put_gstr(b, name); put_u32(b, n_dims);
    for (uint32_t i = 0; i < n_dims && i < 8; i++) put_u64(b, ne[i]);
    put_u32(b, type); put_u64(b, off);
}
static void pad_to(bytes *b, size_t align, size_t extra) {
    while (b->len % align) put(b, "", 1);
    for (size_t i = 0; i < extra; i++) put(b, "\x11", 1);
}

static int regress_cases(const char *dir) {
    bytes b;
#define CASE(name, ...) do { b = (bytes){ 0 }; __VA_ARGS__; save_b(dir, name, &b); free(b.p); } while (0)
    uint64_t one[4] = { 32, 1, 1, 1 };
    /* n_dims above the maximum (4), and absurd */
    CASE("n_dims-5.bin", { ghdr(&b, 1, 0); uint64_t ne[5] = { 32, 1, 1, 1, 1 }; gtensor(&b, "t", 5, ne, TS_F32, 0); pad_to(&b, 32, 128); });
    CASE("n_dims-4294967295.bin", { ghdr(&b, 1, 0); put_gstr(&b, "t"); put_u32(&b, UINT32_MAX); put_u64(&b, 32); put_u64(&b, 1); pad_to(&b, 32, 128); });
    /* the dimensions' product overflows 64 bits; the product fits but the byte size does not */
    CASE("dims-product-overflow.bin", { ghdr(&b, 1, 0); uint64_t ne[4] = { 1ull << 32, 1ull << 32, 2, 1 }; gtensor(&b, "t", 3, ne, TS_F32, 0); pad_to(&b, 32, 64); });
    CASE("dims-product-wraps-to-small.bin", { ghdr(&b, 1, 0); uint64_t ne[4] = { 1ull << 33, 1ull << 31, 1ull << 1, 1 }; gtensor(&b, "t", 3, ne, TS_F32, 0); pad_to(&b, 32, 64); });
    CASE("bytesize-overflow-f32.bin", { ghdr(&b, 1, 0); uint64_t ne[4] = { (1ull << 62) + 32, 1, 1, 1 }; gtensor(&b, "t", 1, ne, TS_F32, 0); pad_to(&b, 32, 64); });
    CASE("bytesize-overflow-rows.bin", { ghdr(&b, 1, 0); uint64_t ne[4] = { 1024, 1ull << 53, 1, 1 }; gtensor(&b, "t", 2, ne, TS_F64, 0); pad_to(&b, 32, 64); });
    CASE("bytesize-overflow-q8_0.bin", { ghdr(&b, 1, 0); uint64_t ne[4] = { 32, 1ull << 59, 1, 1 }; gtensor(&b, "t", 2, ne, TS_Q8_0, 0); pad_to(&b, 32, 64); });
    CASE("dim-negative.bin", { ghdr(&b, 1, 0); uint64_t ne[4] = { 32, UINT64_MAX, 1, 1 }; gtensor(&b, "t", 2, ne, TS_F32, 0); pad_to(&b, 32, 64); });
    CASE("dim-zero.bin", { ghdr(&b, 1, 0); uint64_t ne[4] = { 32, 0, 1, 1 }; gtensor(&b, "t", 2, ne, TS_F32, 0); pad_to(&b, 32, 64); });
    /* tensor offsets past the end, wrapping, and overlapping */
    CASE("offset-past-end.bin", { ghdr(&b, 1, 0); gtensor(&b, "t", 1, one, TS_F32, 4096); pad_to(&b, 32, 128); });
    CASE("offset-plus-size-wraps.bin", { ghdr(&b, 1, 0); gtensor(&b, "t", 1, one, TS_F32, UINT64_MAX - 31); pad_to(&b, 32, 128); });
    CASE("offset-end-one-byte-short.bin", { ghdr(&b, 1, 0); gtensor(&b, "t", 1, one, TS_F32, 0); pad_to(&b, 32, 127); });
    CASE("offsets-overlap.bin", { ghdr(&b, 2, 0); gtensor(&b, "a", 1, one, TS_F32, 0); gtensor(&b, "b", 1, one, TS_F32, 96); uint64_t ne2[4] = { 64, 1, 1, 1 }; gtensor(&b, "c", 1, ne2, TS_F32, 64); pad_to(&b, 32, 512); });
    CASE("offsets-same.bin", { ghdr(&b, 2, 0); gtensor(&b, "a", 1, one, TS_F32, 0); gtensor(&b, "b", 1, one, TS_F32, 0); pad_to(&b, 32, 256); });
    /* general.alignment 0, not a power of two, huge, of the wrong type */
    CASE("alignment-0.bin", { ghdr(&b, 1, 1); gkv_u32(&b, "general.alignment", 0); gtensor(&b, "t", 1, one, TS_F32, 0); pad_to(&b, 32, 128); });
    CASE("alignment-48.bin", { ghdr(&b, 1, 1); gkv_u32(&b, "general.alignment", 48); gtensor(&b, "t", 1, one, TS_F32, 0); pad_to(&b, 48, 128); });
    CASE("alignment-2pow31.bin", { ghdr(&b, 1, 1); gkv_u32(&b, "general.alignment", 1u << 31); gtensor(&b, "t", 1, one, TS_F32, 0); pad_to(&b, 32, 128); });
    CASE("alignment-u64-max.bin", { ghdr(&b, 1, 1); put_gstr(&b, "general.alignment"); put_u32(&b, GGUF_U64); put_u64(&b, UINT64_MAX); gtensor(&b, "t", 1, one, TS_F32, 0); pad_to(&b, 32, 128); });
    CASE("alignment-i32-negative.bin", { ghdr(&b, 1, 1); put_gstr(&b, "general.alignment"); put_u32(&b, GGUF_I32); put_u32(&b, (uint32_t)-32); gtensor(&b, "t", 1, one, TS_F32, 0); pad_to(&b, 32, 128); });
    CASE("alignment-string.bin", { ghdr(&b, 1, 1); put_gstr(&b, "general.alignment"); put_u32(&b, GGUF_STRING); put_gstr(&b, "32"); gtensor(&b, "t", 1, one, TS_F32, 0); pad_to(&b, 32, 128); });
    /* string and array lengths near 2^64 */
    CASE("key-length-2pow64-1.bin", { ghdr(&b, 0, 1); put_u64(&b, UINT64_MAX); put_s(&b, "general.architecture"); pad_to(&b, 32, 64); });
    CASE("string-length-2pow64-8.bin", { ghdr(&b, 0, 1); put_gstr(&b, "general.architecture"); put_u32(&b, GGUF_STRING); put_u64(&b, UINT64_MAX - 7); put_s(&b, "llama"); pad_to(&b, 32, 64); });
    CASE("array-u8-length-2pow64-1.bin", { ghdr(&b, 0, 1); put_gstr(&b, "a"); put_u32(&b, GGUF_ARRAY); put_u32(&b, GGUF_U8); put_u64(&b, UINT64_MAX); pad_to(&b, 32, 64); });
    CASE("array-u32-length-times-4-wraps.bin", { ghdr(&b, 0, 1); put_gstr(&b, "a"); put_u32(&b, GGUF_ARRAY); put_u32(&b, GGUF_U32); put_u64(&b, 1ull << 62); pad_to(&b, 32, 64); });
    CASE("array-u64-length-times-8-wraps.bin", { ghdr(&b, 0, 1); put_gstr(&b, "a"); put_u32(&b, GGUF_ARRAY); put_u32(&b, GGUF_U64); put_u64(&b, (1ull << 61) + 1); pad_to(&b, 32, 64); });
    CASE("array-string-count-2pow61.bin", { ghdr(&b, 0, 1); put_gstr(&b, "tokenizer.ggml.tokens"); put_u32(&b, GGUF_ARRAY); put_u32(&b, GGUF_STRING); put_u64(&b, 1ull << 61); put_gstr(&b, "a"); pad_to(&b, 32, 64); });
    CASE("array-string-element-length-huge.bin", { ghdr(&b, 0, 1); put_gstr(&b, "tokenizer.ggml.tokens"); put_u32(&b, GGUF_ARRAY); put_u32(&b, GGUF_STRING); put_u64(&b, 2); put_gstr(&b, "a"); put_u64(&b, UINT64_MAX - 1); pad_to(&b, 32, 64); });
    /* arrays nested in arrays */
    CASE("array-of-arrays.bin", { ghdr(&b, 0, 1); put_gstr(&b, "a"); put_u32(&b, GGUF_ARRAY); put_u32(&b, GGUF_ARRAY); put_u64(&b, 1); put_u32(&b, GGUF_U8); put_u64(&b, 1); put(&b, "\x01", 1); pad_to(&b, 32, 32); });
    CASE("array-of-arrays-deep.bin", { ghdr(&b, 0, 1); put_gstr(&b, "a"); put_u32(&b, GGUF_ARRAY); for (int i = 0; i < 40; i++) { put_u32(&b, GGUF_ARRAY); put_u64(&b, 1); } put_u32(&b, GGUF_U8); put_u64(&b, 1); pad_to(&b, 32, 32); });
    CASE("array-of-unknown-type.bin", { ghdr(&b, 0, 1); put_gstr(&b, "a"); put_u32(&b, GGUF_ARRAY); put_u32(&b, 13); put_u64(&b, 1); pad_to(&b, 32, 32); });
    /* metadata declaring gigabytes from a file of a few hundred bytes */
    CASE("kv-count-2pow40.bin", { ghdr(&b, 0, 1ull << 40); gkv_u32(&b, "a", 1); pad_to(&b, 32, 200); });
    CASE("tensor-count-2pow33.bin", { ghdr(&b, 1ull << 33, 0); gtensor(&b, "t", 1, one, TS_F32, 0); pad_to(&b, 32, 200); });
    CASE("tensor-count-int-max-plus-1.bin", { ghdr(&b, (1ull << 31), 0); pad_to(&b, 32, 200); });
    CASE("counts-2pow64-1.bin", { ghdr(&b, UINT64_MAX, UINT64_MAX); pad_to(&b, 32, 200); });
    CASE("tokens-1e9-strings.bin", { ghdr(&b, 0, 2); put_gstr(&b, "tokenizer.ggml.model"); put_u32(&b, GGUF_STRING); put_gstr(&b, "llama");
          put_gstr(&b, "tokenizer.ggml.tokens"); put_u32(&b, GGUF_ARRAY); put_u32(&b, GGUF_STRING); put_u64(&b, 1000000000); for (int i = 0; i < 20; i++) put_gstr(&b, "x"); });
    CASE("tensor-declares-4GiB.bin", { ghdr(&b, 1, 1); put_gstr(&b, "general.architecture"); put_u32(&b, GGUF_STRING); put_gstr(&b, "llama");
          uint64_t ne[4] = { 65536, 16384, 1, 1 }; gtensor(&b, "token_embd.weight", 2, ne, TS_F32, 0); pad_to(&b, 32, 64); });
    CASE("scores-array-1e9-f32.bin", { ghdr(&b, 0, 1); put_gstr(&b, "tokenizer.ggml.scores"); put_u32(&b, GGUF_ARRAY); put_u32(&b, GGUF_F32); put_u64(&b, 1000000000); pad_to(&b, 32, 64); });
    CASE("block-count-2pow31.bin", { ghdr(&b, 1, 3); put_gstr(&b, "general.architecture"); put_u32(&b, GGUF_STRING); put_gstr(&b, "llama");
          gkv_u32(&b, "llama.block_count", 1u << 31); gkv_u32(&b, "llama.embedding_length", 32); gtensor(&b, "token_embd.weight", 1, one, TS_F32, 0); pad_to(&b, 32, 128); });
    /* strings from the file quoted in an error message must not break it into several lines */
    CASE("arch-with-newline.bin", { ghdr(&b, 1, 1); put_gstr(&b, "general.architecture"); put_u32(&b, GGUF_STRING); put_gstr(&b, "lla\nma\r\x1b[2J");
          gtensor(&b, "token_embd.weight", 1, one, TS_F32, 0); pad_to(&b, 32, 128); });
    CASE("tokenizer-model-with-newline.bin", { ghdr(&b, 0, 2); put_gstr(&b, "general.architecture"); put_u32(&b, GGUF_STRING); put_gstr(&b, "llama");
          put_gstr(&b, "tokenizer.ggml.model"); put_u32(&b, GGUF_STRING); put_gstr(&b, "ab\ncd"); pad_to(&b, 32, 32); });
#undef CASE
    return 0;
}

/* tool_calls: byte 0 the format's row, byte 1 odd: with the harness's tool list; then a text as the
 * fixtures' templates render calls (2 calls, nested arguments), plus content, truncations and broken ones */
static int tool_calls_seeds(const char *out) {
    char d[1100], name[300];
    snprintf(d, sizeof d, "%s/tool_calls", out);
    static const struct { const char *format, *text; } s[] = {
        { "hermes", "<think>\n\n</think>\n\n<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\", \"days\": 3, \"nested\": {\"k\": [1, true, null]}}}\n</tool_call>\n<tool_call>\n{\"name\": \"get_time\", \"arguments\": {\"tz\": \"Europe/Paris\", \"fields\": [\"hour\", \"minute\"]}}\n</tool_call><|im_end|>\n" },
        { "qwen3-coder", "<tool_call>\n<function=get_weather>\n<parameter=city>\nParis\n</parameter>\n<parameter=days>\n3\n</parameter>\n<parameter=nested>\n{\"k\": [1, true, null]}\n</parameter>\n</function>\n</tool_call>\n<tool_call>\n<function=get_time>\n<parameter=tz>\nEurope/Paris\n</parameter>\n<parameter=fields>\n[\"hour\", \"minute\"]\n</parameter>\n</function>\n</tool_call><|im_end|>\n" },
        { "glm", "</think><tool_call>get_weather<arg_key>city</arg_key><arg_value>Paris</arg_value><arg_key>days</arg_key><arg_value>3</arg_value><arg_key>nested</arg_key><arg_value>{\"k\": [1, true, null]}</arg_value></tool_call><tool_call>get_time<arg_key>tz</arg_key><arg_value>Europe/Paris</arg_value><arg_key>fields</arg_key><arg_value>[\"hour\", \"minute\"]</arg_value></tool_call>" },
        { "mistral-json", "[TOOL_CALLS][{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\", \"days\": 3, \"nested\": {\"k\": [1, true, null]}}, \"id\": \"abcDEF120\"}, {\"name\": \"get_time\", \"arguments\": {\"tz\": \"Europe/Paris\", \"fields\": [\"hour\", \"minute\"]}, \"id\": \"abcDEF121\"}]</s>" },
        { "mistral", "[TOOL_CALLS]get_weather[CALL_ID]abcDEF120[ARGS]{\"city\": \"Paris\", \"days\": 3, \"nested\": {\"k\": [1, true, null]}}[TOOL_CALLS]get_time[CALL_ID]abcDEF121[ARGS]{\"tz\": \"Europe/Paris\", \"fields\": [\"hour\", \"minute\"]}</s>" },
        { "deepseek-r1", "<\xef""\xbd""\x9c""tool\xe2""\x96""\x81""calls\xe2""\x96""\x81""begin\xef""\xbd""\x9c""><\xef""\xbd""\x9c""tool\xe2""\x96""\x81""call\xe2""\x96""\x81""begin\xef""\xbd""\x9c"">function<\xef""\xbd""\x9c""tool\xe2""\x96""\x81""sep\xef""\xbd""\x9c"">get_weather\n```json\n{\"city\": \"Paris\", \"days\": 3, \"nested\": {\"k\": [1, true, null]}}\n```<\xef""\xbd""\x9c""tool\xe2""\x96""\x81""call\xe2""\x96""\x81""end\xef""\xbd""\x9c"">\n<\xef""\xbd""\x9c""tool\xe2""\x96""\x81""call\xe2""\x96""\x81""begin\xef""\xbd""\x9c"">function<\xef""\xbd""\x9c""tool\xe2""\x96""\x81""sep\xef""\xbd""\x9c"">get_time\n```json\n{\"tz\": \"Europe/Paris\", \"fields\": [\"hour\", \"minute\"]}\n```<\xef""\xbd""\x9c""tool\xe2""\x96""\x81""call\xe2""\x96""\x81""end\xef""\xbd""\x9c""><\xef""\xbd""\x9c""tool\xe2""\x96""\x81""calls\xe2""\x96""\x81""end\xef""\xbd""\x9c""><\xef""\xbd""\x9c""end\xe2""\x96""\x81""of\xe2""\x96""\x81""sentence\xef""\xbd""\x9c""><\xef""\xbd""\x9c""Assistant\xef""\xbd""\x9c""><\xef""\xbd""\x9c""end\xe2""\x96""\x81""of\xe2""\x96""\x81""sentence\xef""\xbd""\x9c"">" },
        { "deepseek-v3.2", "</think>\n\n<\xef""\xbd""\x9c""DSML\xef""\xbd""\x9c""function_calls>\n<\xef""\xbd""\x9c""DSML\xef""\xbd""\x9c""invoke name=\"get_weather\">\n<\xef""\xbd""\x9c""DSML\xef""\xbd""\x9c""parameter name=\"city\" string=\"true\">Paris</\xef""\xbd""\x9c""DSML\xef""\xbd""\x9c""parameter>\n<\xef""\xbd""\x9c""DSML\xef""\xbd""\x9c""parameter name=\"days\" string=\"false\">3</\xef""\xbd""\x9c""DSML\xef""\xbd""\x9c""parameter>\n<\xef""\xbd""\x9c""DSML\xef""\xbd""\x9c""parameter name=\"nested\" string=\"false\">{\"k\": [1, true, null]}</\xef""\xbd""\x9c""DSML\xef""\xbd""\x9c""parameter>\n</\xef""\xbd""\x9c""DSML\xef""\xbd""\x9c""invoke>\n<\xef""\xbd""\x9c""DSML\xef""\xbd""\x9c""invoke name=\"get_time\">\n<\xef""\xbd""\x9c""DSML\xef""\xbd""\x9c""parameter name=\"tz\" string=\"true\">Europe/Paris</\xef""\xbd""\x9c""DSML\xef""\xbd""\x9c""parameter>\n<\xef""\xbd""\x9c""DSML\xef""\xbd""\x9c""parameter name=\"fields\" string=\"false\">[\"hour\", \"minute\"]</\xef""\xbd""\x9c""DSML\xef""\xbd""\x9c""parameter>\n</\xef""\xbd""\x9c""DSML\xef""\xbd""\x9c""invoke>\n</\xef""\xbd""\x9c""DSML\xef""\xbd""\x9c""function_calls><\xef""\xbd""\x9c""end\xe2""\x96""\x81""of\xe2""\x96""\x81""sentence\xef""\xbd""\x9c"">" },
        { "deepseek-v4", "\n\n<\xef""\xbd""\x9c""DSML\xef""\xbd""\x9c""tool_calls>\n<\xef""\xbd""\x9c""DSML\xef""\xbd""\x9c""invoke name=\"get_weather\">\n<\xef""\xbd""\x9c""DSML\xef""\xbd""\x9c""parameter name=\"city\" string=\"true\">Paris</\xef""\xbd""\x9c""DSML\xef""\xbd""\x9c""parameter>\n<\xef""\xbd""\x9c""DSML\xef""\xbd""\x9c""parameter name=\"days\" string=\"false\">3</\xef""\xbd""\x9c""DSML\xef""\xbd""\x9c""parameter>\n<\xef""\xbd""\x9c""DSML\xef""\xbd""\x9c""parameter name=\"nested\" string=\"false\">{\"k\": [1, true, null]}</\xef""\xbd""\x9c""DSML\xef""\xbd""\x9c""parameter>\n</\xef""\xbd""\x9c""DSML\xef""\xbd""\x9c""invoke>\n<\xef""\xbd""\x9c""DSML\xef""\xbd""\x9c""invoke name=\"get_time\">\n<\xef""\xbd""\x9c""DSML\xef""\xbd""\x9c""parameter name=\"tz\" string=\"true\">Europe/Paris</\xef""\xbd""\x9c""DSML\xef""\xbd""\x9c""parameter>\n<\xef""\xbd""\x9c""DSML\xef""\xbd""\x9c""parameter name=\"fields\" string=\"false\">[\"hour\", \"minute\"]</\xef""\xbd""\x9c""DSML\xef""\xbd""\x9c""parameter>\n</\xef""\xbd""\x9c""DSML\xef""\xbd""\x9c""invoke>\n</\xef""\xbd""\x9c""DSML\xef""\xbd""\x9c""tool_calls><\xef""\xbd""\x9c""end\xe2""\x96""\x81""of\xe2""\x96""\x81""sentence\xef""\xbd""\x9c"">" },
        { "minimax-m2", "\n<minimax:tool_call>\n<invoke name=\"get_weather\">\n<parameter name=\"city\">Paris</parameter>\n<parameter name=\"days\">3</parameter>\n<parameter name=\"nested\">{\"k\": [1, true, null]}</parameter>\n</invoke>\n<invoke name=\"get_time\">\n<parameter name=\"tz\">Europe/Paris</parameter>\n<parameter name=\"fields\">[\"hour\", \"minute\"]</parameter>\n</invoke>\n</minimax:tool_call>[e~[\n" },
        { "minimax-m3", "</mm:think>]<]minimax[>[<tool_call>\n]<]minimax[>[<invoke name=\"get_weather\">]<]minimax[>[<city>Paris]<]minimax[>[</city>]<]minimax[>[<days>3]<]minimax[>[</days>]<]minimax[>[<nested>]<]minimax[>[<k>]<]minimax[>[<item>1]<]minimax[>[</item>]<]minimax[>[<item>true]<]minimax[>[</item>]<]minimax[>[<item>]<]minimax[>[</item>]<]minimax[>[</k>]<]minimax[>[</nested>]<]minimax[>[</invoke>\n]<]minimax[>[<invoke name=\"get_time\">]<]minimax[>[<tz>Europe/Paris]<]minimax[>[</tz>]<]minimax[>[<fields>]<]minimax[>[<item>hour]<]minimax[>[</item>]<]minimax[>[<item>minute]<]minimax[>[</item>]<]minimax[>[</fields>]<]minimax[>[</invoke>\n]<]minimax[>[</tool_call>[e~[\n" },
        { "hunyuan", "<tool_calls:opensource>\n<tool_call:opensource>get_weather<tool_sep:opensource>\n<arg_key:opensource>city</arg_key:opensource>\n<arg_value:opensource>Paris</arg_value:opensource>\n<arg_key:opensource>days</arg_key:opensource>\n<arg_value:opensource>3</arg_value:opensource>\n<arg_key:opensource>nested</arg_key:opensource>\n<arg_value:opensource>{\"k\": [1, true, null]}</arg_value:opensource>\n</tool_call:opensource>\n<tool_call:opensource>get_time<tool_sep:opensource>\n<arg_key:opensource>tz</arg_key:opensource>\n<arg_value:opensource>Europe/Paris</arg_value:opensource>\n<arg_key:opensource>fields</arg_key:opensource>\n<arg_value:opensource>[\"hour\", \"minute\"]</arg_value:opensource>\n</tool_call:opensource>\n</tool_calls:opensource><\xef""\xbd""\x9c""hy_eos:opensource\xef""\xbd""\x9c"">" },
        { "minicpm", "<function name=\"get_weather\"><param name=\"city\">Paris</param><param name=\"days\">3</param><param name=\"nested\">{'k': [1, True, None]}</param></function>\n<function name=\"get_time\"><param name=\"tz\">Europe/Paris</param><param name=\"fields\">['hour', 'minute']</param></function><|im_end|>\n" },
        { "solar", "<|tool_calls|><|tool_call:begin|>abcDEF120<|tool_call:name|>get_weather<|tool_call:args|>{\"city\": \"Paris\", \"days\": 3, \"nested\": {\"k\": [1, true, null]}}<|tool_call:end|><|tool_call:begin|>abcDEF121<|tool_call:name|>get_time<|tool_call:args|>{\"tz\": \"Europe/Paris\", \"fields\": [\"hour\", \"minute\"]}<|tool_call:end|><|calls|>" },
        { "command-r", "<|START_ACTION|>[\n    {\"tool_call_id\": \"0\", \"tool_name\": \"get_weather\", \"parameters\": {\"city\": \"Paris\", \"days\": 3, \"nested\": {\"k\": [1, true, null]}}},\n    {\"tool_call_id\": \"1\", \"tool_name\": \"get_time\", \"parameters\": {\"tz\": \"Europe/Paris\", \"fields\": [\"hour\", \"minute\"]}}\n]<|END_ACTION|><|END_OF_TURN_TOKEN|>" },
        { "apriel", "\n<tool_calls>[{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\", \"days\": 3, \"nested\": {\"k\": [1, true, null]}}}, {\"name\": \"get_time\", \"arguments\": {\"tz\": \"Europe/Paris\", \"fields\": [\"hour\", \"minute\"]}}]</tool_calls>" },
        { "nemotron-v2", "<TOOLCALL>[{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\", \"days\": 3, \"nested\": {\"k\": [1, true, null]}}}, {\"name\": \"get_time\", \"arguments\": {\"tz\": \"Europe/Paris\", \"fields\": [\"hour\", \"minute\"]}}]</TOOLCALL><SPECIAL_12>\n\n" },
        { "gigachat-3.1", "<|function_call|>{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\", \"days\": 3, \"nested\": {\"k\": [1, true, null]}}}<|message_sep|>\n\n" },
        { "gigachat-3", "<|message_sep|>\n\nfunction call<|role_sep|>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\", \"days\": 3, \"nested\": {\"k\": [1, true, null]}}}<|message_sep|>\n\n" },
        { "lfm2", "<|tool_call_start|>[get_weather(city='Paris', days=3, nested={\"k\": [1, true, null]}), get_time(tz='Europe/Paris', fields=['hour', 'minute'])]<|tool_call_end|><|im_end|>\n" },
        { "gemma4", "<|tool_call>call:get_weather{city:<|\"|>Paris<|\"|>,days:3,nested:{k:[1,true,None]}}<tool_call|><|tool_call>call:get_time{fields:[<|\"|>hour<|\"|>,<|\"|>minute<|\"|>],tz:<|\"|>Europe/Paris<|\"|>}<tool_call|><|tool_response>" },
        { "functionary-v3.2", "get_weather\n{\"city\": \"Paris\", \"days\": 3, \"nested\": {\"k\": [1, true, null]}}>>>get_time\n{\"tz\": \"Europe/Paris\", \"fields\": [\"hour\", \"minute\"]}<|eot_id|>" },
        { "llama3-json", "{\"name\": \"get_weather\", \"parameters\": {\"city\": \"Paris\", \"days\": 3, \"nested\": {\"k\": [1, true, null]}}}<|eot_id|>" },
        { "harmony", "<|channel|>analysis<|message|>Need the weather.<|end|><|start|>assistant<|channel|>commentary to=functions.get_weather <|constrain|>json<|message|>{\"city\": \"Paris\", \"days\": 3}<|call|>" },
        { "harmony", " to=functions.get_weather<|channel|>commentary json<|message|>{\"city\": \"Paris\"}<|call|>" },
        { "hermes", "Let me check.\n<tool_call>\n{\"name\": \"f\", \"arguments\": {\"a\": }\n</tool_call>" },
        { "kimi-k2", "<|tool_calls_section_begin|><|tool_call_begin|>functions.get_weather:0<|tool_call_argument_begin|>{\"city\": \"Paris\"}<|tool_call_end|><|tool_call_begin|>functions.get_time:1<|tool_call_argument_begin|>{\"tz\": \"UTC\"}<|tool_call_end|><|tool_calls_section_end|>" },
        { "granite-3", "<|tool_call|>[{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}]" },
        { "llama3-json", "<|python_tag|>{\"name\": \"get_time\", \"parameters\": {\"tz\": \"UTC\"}}" },
        { "functionary-v3.2", "all\nJust text.>>>get_time\n{\"tz\": \"UTC\"}" },
        { "qwen3-coder", "Sure.\n<tool_call>\n<function=get_weather>\n<parameter=zip>\n75001\n</parameter>\n<parameter=city>\nNew\nYork\n</parameter>\n</function>\n</tool_call>" },
    };
    for (size_t i = 0; i < sizeof s / sizeof s[0]; i++) {
        int row = -1;
        for (int r = 0; r < tool_format_count(); r++)
            if (!strcmp(tool_format_name(tool_format_at(r)), s[i].format)) row = r;
        if (row < 0) { fprintf(stderr, "make_fuzz_corpus: no tool format %s\n", s[i].format); return 1; }
        size_t n = strlen(s[i].text);
        for (int v = 0; v < 3; v++) {   /* with tools, without, and cut in the middle */
            bytes b = { 0 };
            uint8_t ctl[2] = { (uint8_t)row, (uint8_t)(v != 1) };
            put(&b, ctl, 2);
            put(&b, s[i].text, v == 2 ? n / 2 : n);
            snprintf(name, sizeof name, "%s-%zu-%d.bin", s[i].format, i, v);
            save_b(d, name, &b);
            free(b.p);
        }
    }
    return 0;
}

int main(int argc, char **argv) {
    if (argc == 4 && !strcmp(argv[1], "corpus")) {
        const char *out = argv[2];
        make_bpe_tokens();
        int rc = gguf_seeds(out) | safetensors_seeds(out) | json_seeds(out) | tokenizer_seeds(out) |
                 chat_seeds(out, argv[3]) | q4nx_seeds(out) | regex_seeds(out) | http_seeds(out) |
                 openai_request_seeds(out) | tool_calls_seeds(out) | json_schema_seeds(out) | gbnf_seeds(out);
        return rc ? 1 : 0;
    }
    if (argc == 3 && !strcmp(argv[1], "regress")) return regress_cases(argv[2]);
    fprintf(stderr, "usage: make_fuzz_corpus corpus OUT FIXTURES | make_fuzz_corpus regress OUT\n");
    return 2;
}
