/* GGUF reader and writer: real fixture files (facts checked against case.json, the README, the
 * llama2.c checkpoint and the HF safetensors of the same weights), a writer round trip, and a
 * corpus of damaged files that must each be refused with a one-line message naming the file.
 *
 * With TS_BAD_GGUF_DIR set, the damaged files are kept in that directory (for CLI shell tests). */
#include "check.h"
#include "io/gguf.h"
#include "io/gguf_write.h"
#include "io/file.h"
#include "kernels/types.h"
#include "core/utf8.h"
#include <fcntl.h>
#include <math.h>
#include <stdint.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* ------------------------------------------------------------------ small file helpers */

typedef struct buf { uint8_t *p; size_t n, cap; } buf;

static size_t b_put(buf *b, const void *src, size_t n) {
    if (b->n + n > b->cap) {
        b->cap = (b->n + n) * 2 + 64;
        b->p = realloc(b->p, b->cap);
        if (!b->p) { perror("realloc"); exit(2); }
    }
    memcpy(b->p + b->n, src, n);
    b->n += n;
    return b->n - n;
}
static size_t b_u32(buf *b, uint32_t v) { return b_put(b, &v, 4); }
static size_t b_u64(buf *b, uint64_t v) { return b_put(b, &v, 8); }
static size_t b_f32(buf *b, float v) { return b_put(b, &v, 4); }
/* Returns the position of the u64 length. */
static size_t b_str(buf *b, const char *s) { size_t at = b_u64(b, strlen(s)); b_put(b, s, strlen(s)); return at; }
static void b_pad(buf *b, size_t align) { while (b->n % align) b_put(b, "", 1); }

static int write_bytes(const char *path, const void *p, size_t n) {
    FILE *f = fopen(path, "wb");
    if (!f) return -1;
    size_t w = fwrite(p, 1, n, f);
    return fclose(f) == 0 && w == n ? 0 : -1;
}


static char tmpdir[256];

static void tmp_path(char *out, size_t cap, const char *name) { snprintf(out, cap, "%s/%s", tmpdir, name); }

static bool str_eq(const char *s, size_t len, const char *want) {
    return len == strlen(want) && memcmp(s, want, len) == 0;
}

static int64_t get_i(const gguf_file *g, const char *key) {
    int64_t v;
    return gguf_get_i64(g, key, &v) ? v : INT64_MIN;
}

static bool tensor_is(const gguf_file *g, const char *name, int type, int n_dims, int64_t ne0, int64_t ne1,
                      size_t nbytes) {
    const tensor_entry *t = tensor_dir_find(gguf_tensors(g), name);
    return t && t->type == type && t->n_dims == n_dims && t->ne[0] == ne0 && t->ne[1] == ne1 &&
           t->ne[2] == 1 && t->ne[3] == 1 && t->nbytes == nbytes;
}

/* ------------------------------------------------------------------ real fixtures */

/* A tensor's bytes in a safetensors file, found by a plain search of its JSON header. */
static const uint8_t *safetensors_find(const uint8_t *file, size_t size, const char *name, size_t *nbytes) {
    uint64_t hlen;
    if (size < 8) return NULL;
    memcpy(&hlen, file, 8);
    if (hlen > size - 8) return NULL;
    char *json = malloc(hlen + 1);
    memcpy(json, file + 8, hlen);
    json[hlen] = 0;
    char quoted[256];
    snprintf(quoted, sizeof quoted, "\"%s\"", name);
    const char *at = strstr(json, quoted), *offs = at ? strstr(at, "\"data_offsets\"") : NULL;
    unsigned long long a, b;
    const uint8_t *res = NULL;
    if (offs && sscanf(offs, "\"data_offsets\" : [ %llu , %llu ]", &a, &b) == 2 && a <= b &&
        b <= size - 8 - hlen) {
        res = file + 8 + hlen + a;
        *nbytes = (size_t)(b - a);
    }
    free(json);
    return res;
}

static void test_llama_tiny(void) {
    char path[512];
    ts_error err = {{0}};
    gguf_file *g = NULL;
    snprintf(path, sizeof path, "%s/llama-tiny/model-f32.gguf", fixtures_dir());
    int rc = gguf_open(path, &g, &err);
    CHECK(rc == 0 && g, "llama-tiny f32 opens (%s)", rc ? err.msg : "ok");
    if (rc) return;
    /* hf_config in case.json: hidden 256, 2 layers, 4 heads, 2 kv heads, ffn 512, vocab 512. */
    CHECK(gguf_version(g) == 3, "llama-tiny f32: GGUF version 3");
    const char *s; size_t len;
    CHECK(gguf_get_str(g, "general.architecture", &s, &len) && str_eq(s, len, "llama"), "llama-tiny: architecture llama");
    CHECK(get_i(g, "llama.embedding_length") == 256, "llama-tiny: embedding_length 256");
    CHECK(get_i(g, "llama.block_count") == 2, "llama-tiny: block_count 2");
    CHECK(get_i(g, "llama.attention.head_count") == 4 && get_i(g, "llama.attention.head_count_kv") == 2,
          "llama-tiny: head counts 4/2");
    CHECK(get_i(g, "llama.feed_forward_length") == 512 && get_i(g, "llama.context_length") == 512,
          "llama-tiny: ffn 512, context 512");
    float eps = 0, theta = 0;
    CHECK(gguf_get_f32(g, "llama.attention.layer_norm_rms_epsilon", &eps) && fabsf(eps - 1e-5f) < 1e-10f &&
          gguf_get_f32(g, "llama.rope.freq_base", &theta) && theta == 10000.0f,
          "llama-tiny: rms eps 1e-5, rope theta 10000 (%g, %g)", eps, theta);
    int et; uint64_t n;
    CHECK(gguf_get_arr(g, "tokenizer.ggml.tokens", &et, &n) && et == GGUF_STRING && n == 512,
          "llama-tiny: 512 tokens");
    CHECK(gguf_arr_str(g, "tokenizer.ggml.tokens", 1, &s, &len) && str_eq(s, len, "<s>"), "llama-tiny: token 1 is <s>");
    bool add_bos = false;
    CHECK(get_i(g, "tokenizer.ggml.bos_token_id") == 1 && get_i(g, "tokenizer.ggml.eos_token_id") == 2 &&
          gguf_get_bool(g, "tokenizer.ggml.add_bos_token", &add_bos) && add_bos,
          "llama-tiny: bos 1, eos 2, add_bos true");
    const tensor_dir *td = gguf_tensors(g);
    CHECK(td->n == 21, "llama-tiny f32: 21 tensors (case.json tensor_types F32: 21), got %d", td->n);
    CHECK(tensor_is(g, "token_embd.weight", TS_F32, 2, 256, 512, 256 * 512 * 4) &&
          tensor_is(g, "output.weight", TS_F32, 2, 256, 512, 256 * 512 * 4) &&
          tensor_is(g, "blk.1.attn_q.weight", TS_F32, 2, 256, 256, 256 * 256 * 4) &&
          tensor_is(g, "blk.0.attn_k.weight", TS_F32, 2, 256, 128, 256 * 128 * 4) &&
          tensor_is(g, "blk.0.ffn_down.weight", TS_F32, 2, 512, 256, 512 * 256 * 4) &&
          tensor_is(g, "output_norm.weight", TS_F32, 1, 256, 1, 256 * 4),
          "llama-tiny f32: tensor shapes follow hf_config");
    CHECK(gguf_data_offset(g) % 32 == 0 && gguf_alignment(g) == 32, "llama-tiny: data section 32-aligned");

    /* The same weights as HF safetensors: unpermuted tensors must be byte-identical. */
    snprintf(path, sizeof path, "%s/llama-tiny/hf/model.safetensors", fixtures_dir());
    size_t st_size = 0;
    uint8_t *st = read_all(path, &st_size);
    static const char *pairs[][2] = {
        {"token_embd.weight", "model.embed_tokens.weight"}, {"output.weight", "lm_head.weight"},
        {"output_norm.weight", "model.norm.weight"}, {"blk.1.ffn_down.weight", "model.layers.1.mlp.down_proj.weight"},
        {"blk.0.attn_v.weight", "model.layers.0.self_attn.v_proj.weight"},
        {"blk.1.ffn_norm.weight", "model.layers.1.post_attention_layernorm.weight"},
    };
    int same = 0;
    for (size_t i = 0; st && i < sizeof pairs / sizeof pairs[0]; i++) {
        const tensor_entry *t = tensor_dir_find(td, pairs[i][0]);
        size_t nb = 0;
        const uint8_t *ref = safetensors_find(st, st_size, pairs[i][1], &nb);
        if (t && ref && nb == t->nbytes && memcmp(ref, t->data, nb) == 0) same++;
        else printf("# %s differs from safetensors %s\n", pairs[i][0], pairs[i][1]);
    }
    CHECK(same == 6, "llama-tiny f32: 6 tensors byte-identical to hf/model.safetensors (%d)", same);
    free(st);
    gguf_close(g);

    /* Q4_K_M: per_tensor_types from case.json; sizes from the block formats (Q4_K 144 bytes and
     * Q6_K 210 bytes per 256 weights). */
    static const struct { const char *name; int type; } q4km[] = {
        {"output.weight", TS_Q6_K}, {"output_norm.weight", TS_F32}, {"token_embd.weight", TS_Q4_K},
        {"blk.0.attn_k.weight", TS_Q4_K}, {"blk.0.attn_norm.weight", TS_F32}, {"blk.0.attn_output.weight", TS_Q4_K},
        {"blk.0.attn_q.weight", TS_Q4_K}, {"blk.0.attn_v.weight", TS_Q4_K}, {"blk.0.ffn_down.weight", TS_Q4_K},
        {"blk.0.ffn_gate.weight", TS_Q4_K}, {"blk.0.ffn_norm.weight", TS_F32}, {"blk.0.ffn_up.weight", TS_Q4_K},
        {"blk.1.attn_k.weight", TS_Q4_K}, {"blk.1.attn_norm.weight", TS_F32}, {"blk.1.attn_output.weight", TS_Q4_K},
        {"blk.1.attn_q.weight", TS_Q4_K}, {"blk.1.attn_v.weight", TS_Q6_K}, {"blk.1.ffn_down.weight", TS_Q6_K},
        {"blk.1.ffn_gate.weight", TS_Q4_K}, {"blk.1.ffn_norm.weight", TS_F32}, {"blk.1.ffn_up.weight", TS_Q4_K},
    };
    snprintf(path, sizeof path, "%s/llama-tiny/model-q4_k_m.gguf", fixtures_dir());
    rc = gguf_open(path, &g, &err);
    CHECK(rc == 0, "llama-tiny q4_k_m opens (%s)", rc ? err.msg : "ok");
    if (rc) return;
    td = gguf_tensors(g);
    int match = 0, sized = 0;
    for (size_t i = 0; i < sizeof q4km / sizeof q4km[0]; i++) {
        const tensor_entry *t = tensor_dir_find(td, q4km[i].name);
        if (t && t->type == q4km[i].type) match++;
        else printf("# %s: type %d, expected %d\n", q4km[i].name, t ? t->type : -1, q4km[i].type);
        if (!t) continue;
        int64_t ne = t->ne[0] * t->ne[1] * t->ne[2] * t->ne[3];
        size_t want = t->type == TS_F32 ? (size_t)ne * 4 : t->type == TS_Q4_K ? (size_t)ne / 256 * 144
                                                                               : (size_t)ne / 256 * 210;
        if (t->nbytes == want) sized++;
    }
    CHECK(td->n == 21 && match == 21, "llama-tiny q4_k_m: per_tensor_types match case.json (%d/21)", match);
    CHECK(sized == 21, "llama-tiny q4_k_m: byte sizes match the block formats (%d/21)", sized);
    CHECK(tensor_is(g, "blk.0.attn_k.weight", TS_Q4_K, 2, 256, 128, 128 * 144), "llama-tiny q4_k_m: attn_k 256x128 Q4_K");
    gguf_close(g);
}

static void test_stories(void) {
    char path[512], bin_path[512];
    ts_error err = {{0}};
    gguf_file *g = NULL;
    snprintf(path, sizeof path, "%s/stories260K/stories260K.gguf", fixtures_dir());
    int rc = gguf_open(path, &g, &err);
    CHECK(rc == 0, "stories260K opens (%s)", rc ? err.msg : "ok");
    if (rc) return;
    /* README-llama.md: GQA 8/4, head_dim 8, ffn 172; the llama2.c .bin header says dim 64, 5 layers. */
    CHECK(get_i(g, "llama.embedding_length") == 64 && get_i(g, "llama.block_count") == 5 &&
          get_i(g, "llama.attention.head_count") == 8 && get_i(g, "llama.attention.head_count_kv") == 4 &&
          get_i(g, "llama.feed_forward_length") == 172, "stories260K: dim 64, 5 layers, heads 8/4, ffn 172");
    const tensor_dir *td = gguf_tensors(g);
    CHECK(td->n == 48, "stories260K: 48 tensors (case.json F32: 48), got %d", td->n);
    CHECK(tensor_is(g, "blk.0.ffn_down.weight", TS_F32, 2, 172, 64, 172 * 64 * 4) &&
          tensor_is(g, "blk.4.attn_k.weight", TS_F32, 2, 64, 32, 64 * 32 * 4), "stories260K: ffn_down 172x64, attn_k 64x32");

    /* The GGUF tensors are byte copies of the llama2.c checkpoint (README-llama.md): a 28-byte
     * header, token embeddings (512x64), rms_att (5x64), ..., rms_final (64). */
    snprintf(bin_path, sizeof bin_path, "%s/stories260K/stories260K.bin", fixtures_dir());
    size_t bin_size = 0;
    uint8_t *bin = read_all(bin_path, &bin_size);
    const size_t emb = 512 * 64, rms_att = 5 * 64, wq = 5 * 64 * 64, wkv = 5 * 64 * 32, rms_ffn = 5 * 64,
                 w13 = 5 * 64 * 172;
    size_t final_at = 28 + 4 * (emb + rms_att + wq + 2 * wkv + wq + rms_ffn + 3 * w13);
    const tensor_entry *te = tensor_dir_find(td, "token_embd.weight");
    const tensor_entry *tn = tensor_dir_find(td, "output_norm.weight");
    const tensor_entry *ta = tensor_dir_find(td, "blk.1.attn_norm.weight");
    CHECK(bin && bin_size > final_at + 256 && te && tn && ta &&
          te->nbytes == emb * 4 && memcmp(te->data, bin + 28, emb * 4) == 0 &&
          memcmp(tn->data, bin + final_at, 256) == 0 &&
          memcmp(ta->data, bin + 28 + 4 * (emb + 64), 256) == 0,
          "stories260K: token_embd, output_norm, blk.1.attn_norm equal the llama2.c checkpoint bytes");
    free(bin);
    gguf_close(g);
}

static void test_vocab_only(void) {
    char path[512];
    ts_error err = {{0}};
    gguf_file *g = NULL;
    snprintf(path, sizeof path, "%s/tokenizers/gguf/ggml-vocab-llama-spm.gguf", fixtures_dir());
    int rc = gguf_open(path, &g, &err);
    CHECK(rc == 0, "vocab-only llama-spm opens (%s)", rc ? err.msg : "ok");
    if (rc) return;
    CHECK(gguf_tensors(g)->n == 0, "llama-spm: no tensors");
    int et; uint64_t n;
    CHECK(gguf_get_arr(g, "tokenizer.ggml.tokens", &et, &n) && et == GGUF_STRING && n == 32000,
          "llama-spm: 32000 tokens (llama.vocab_size %lld)", (long long)get_i(g, "llama.vocab_size"));
    const char *s; size_t len;
    /* Llama SPM vocab: 0 <unk>, 1 <s>, 2 </s>, then 256 byte tokens <0x00>.. (so <0x0A> is 13). */
    CHECK(gguf_arr_str(g, "tokenizer.ggml.tokens", 0, &s, &len) && str_eq(s, len, "<unk>") &&
          gguf_arr_str(g, "tokenizer.ggml.tokens", 1, &s, &len) && str_eq(s, len, "<s>") &&
          gguf_arr_str(g, "tokenizer.ggml.tokens", 2, &s, &len) && str_eq(s, len, "</s>") &&
          gguf_arr_str(g, "tokenizer.ggml.tokens", 13, &s, &len) && str_eq(s, len, "<0x0A>"),
          "llama-spm: tokens 0,1,2,13 = <unk> <s> </s> <0x0A>");
    CHECK(!gguf_arr_str(g, "tokenizer.ggml.tokens", 32000, &s, &len), "llama-spm: token 32000 is out of range");
    /* Every token indexable, each non-empty; 32000 lookups must be instant. */
    clock_t t0 = clock();
    size_t total = 0, empty = 0;
    for (uint64_t i = 0; i < n; i++) {
        if (!gguf_arr_str(g, "tokenizer.ggml.tokens", i, &s, &len)) { empty++; continue; }
        total += len;
        if (len == 0) empty++;
    }
    double ms = 1000.0 * (double)(clock() - t0) / CLOCKS_PER_SEC;
    CHECK(empty == 0 && total > 32000, "llama-spm: all 32000 tokens readable and non-empty (%zu bytes, %.1f ms)", total, ms);
    int64_t tt = 0;
    double score = 1;
    CHECK(gguf_get_arr(g, "tokenizer.ggml.scores", &et, &n) && et == GGUF_F32 && n == 32000 &&
          gguf_arr_i64(g, "tokenizer.ggml.token_type", 1, &tt) && tt == 3 &&
          gguf_arr_f64(g, "tokenizer.ggml.scores", 1, &score) && score == 0.0,
          "llama-spm: 32000 f32 scores, token 1 is a control token (type 3)");
    gguf_close(g);
}

/* ------------------------------------------------------------------ writer round trip */

static void fill_bytes(uint8_t *p, size_t n, uint32_t seed) {
    for (size_t i = 0; i < n; i++) { seed = seed * 1664525u + 1013904223u; p[i] = (uint8_t)(seed >> 24); }
}

static void test_writer_round_trip(char *out_path, size_t out_cap) {
    gguf_writer *w = gguf_writer_new();
    int bad = 0;
    bad |= gguf_writer_add_str(w, "general.architecture", "test-arch");
    bad |= gguf_writer_add_u8(w, "v.u8", 250);
    bad |= gguf_writer_add_i8(w, "v.i8", -120);
    bad |= gguf_writer_add_u16(w, "v.u16", 65000);
    bad |= gguf_writer_add_i16(w, "v.i16", -32000);
    bad |= gguf_writer_add_u32(w, "v.u32", 4000000000u);
    bad |= gguf_writer_add_i32(w, "v.i32", -2000000000);
    bad |= gguf_writer_add_u64(w, "v.u64", UINT64_MAX);
    bad |= gguf_writer_add_u64(w, "v.u64small", 1ull << 40);
    bad |= gguf_writer_add_i64(w, "v.i64", INT64_MIN);
    bad |= gguf_writer_add_f32(w, "v.f32", 0.15625f);
    bad |= gguf_writer_add_f64(w, "v.f64", 3.141592653589793);
    bad |= gguf_writer_add_bool(w, "v.bool", true);
    bad |= gguf_writer_add_str(w, "v.empty", "");
    bad |= gguf_writer_add_str(w, "v.utf8", "na\xC3\xAFve \xE2\x96\x81 \xF0\x9F\x98\x80");
    bad |= gguf_writer_add_str_n(w, "v.nul", "a\0b", 3);
    const float f32s[] = {1.5f, -2.25f, 1e30f};
    const int16_t i16s[] = {-1, 2, -3, 4};
    const double f64s[] = {0.1, -1e300};
    const uint64_t u64s[] = {0, 1ull << 63};
    const int8_t i8s[] = {-128, 127};
    const uint8_t bools[] = {1, 0, 1};
    bad |= gguf_writer_add_array(w, "a.f32", GGUF_F32, f32s, 3);
    bad |= gguf_writer_add_array(w, "a.i16", GGUF_I16, i16s, 4);
    bad |= gguf_writer_add_array(w, "a.f64", GGUF_F64, f64s, 2);
    bad |= gguf_writer_add_array(w, "a.u64", GGUF_U64, u64s, 2);
    bad |= gguf_writer_add_array(w, "a.i8", GGUF_I8, i8s, 2);
    bad |= gguf_writer_add_array(w, "a.bool", GGUF_BOOL, bools, 3);
    bad |= gguf_writer_add_array(w, "a.empty", GGUF_U32, NULL, 0);
    const char *strs[] = {"<unk>", "", "\xE2\x96\x81the", "x\0y"};
    const size_t lens[] = {5, 0, 6, 3};
    bad |= gguf_writer_add_str_array(w, "a.str", strs, lens, 4);

    /* Tensors of several types; sizes from the block formats: Q8_0 34 bytes / 32, Q4_K 144 / 256,
     * Q6_K 210 / 256, F16 and BF16 2 bytes. */
    static uint8_t d_f32[7 * 3 * 4], d_f16[32 * 2 * 2], d_q80[3 * 2 * 34], d_q4k[2 * 144], d_q6k[256 / 256 * 210 * 3],
                   d_bf16[5 * 2], d_4d[2 * 3 * 4 * 5 * 4];
    fill_bytes(d_f32, sizeof d_f32, 1); fill_bytes(d_f16, sizeof d_f16, 2); fill_bytes(d_q80, sizeof d_q80, 3);
    fill_bytes(d_q4k, sizeof d_q4k, 4); fill_bytes(d_q6k, sizeof d_q6k, 5); fill_bytes(d_bf16, sizeof d_bf16, 6);
    fill_bytes(d_4d, sizeof d_4d, 7);
    bad |= gguf_writer_add_tensor(w, "t.f32", TS_F32, 2, (int64_t[]){7, 3}, d_f32, sizeof d_f32);
    bad |= gguf_writer_add_tensor(w, "t.f16", TS_F16, 2, (int64_t[]){32, 2}, d_f16, sizeof d_f16);
    bad |= gguf_writer_add_tensor(w, "t.q8_0", TS_Q8_0, 3, (int64_t[]){64, 3, 1}, d_q80, sizeof d_q80);
    bad |= gguf_writer_add_tensor(w, "t.q4_k", TS_Q4_K, 2, (int64_t[]){256, 2}, d_q4k, sizeof d_q4k);
    bad |= gguf_writer_add_tensor(w, "t.q6_k", TS_Q6_K, 2, (int64_t[]){256, 3}, d_q6k, sizeof d_q6k);
    bad |= gguf_writer_add_tensor(w, "t.bf16", TS_BF16, 1, (int64_t[]){5}, d_bf16, sizeof d_bf16);
    bad |= gguf_writer_add_tensor(w, "t.4d", TS_F32, 4, (int64_t[]){2, 3, 4, 5}, d_4d, sizeof d_4d);
    bad |= gguf_writer_add_tensor(w, "t.zeros", TS_F32, 1, (int64_t[]){3}, NULL, 12);
    CHECK(bad == 0, "writer: every add succeeds");

    tmp_path(out_path, out_cap, "roundtrip.gguf");
    ts_error err = {{0}};
    int rc = gguf_writer_write(w, out_path, &err);
    CHECK(rc == 0, "writer: writes %s (%s)", out_path, rc ? err.msg : "ok");
    gguf_writer_free(w);

    gguf_file *g = NULL;
    rc = gguf_open(out_path, &g, &err);
    CHECK(rc == 0, "writer round trip: file opens (%s)", rc ? err.msg : "ok");
    if (rc) return;
    int64_t v;
    CHECK(get_i(g, "v.u8") == 250 && get_i(g, "v.i8") == -120 && get_i(g, "v.u16") == 65000 &&
          get_i(g, "v.i16") == -32000 && get_i(g, "v.u32") == 4000000000ll && get_i(g, "v.i32") == -2000000000 &&
          get_i(g, "v.u64small") == (1ll << 40) && get_i(g, "v.i64") == INT64_MIN,
          "round trip: integer scalars of every width");
    CHECK(!gguf_get_i64(g, "v.u64", &v), "round trip: u64 max does not fit an i64 and is refused");
    CHECK(gguf_key_type(g, "v.u8") == GGUF_U8 && gguf_key_type(g, "v.i64") == GGUF_I64 &&
          gguf_key_type(g, "v.f64") == GGUF_F64 && gguf_key_type(g, "v.bool") == GGUF_BOOL &&
          gguf_key_type(g, "a.str") == GGUF_ARRAY && gguf_key_type(g, "v.utf8") == GGUF_STRING &&
          gguf_key_type(g, "absent") == -1, "round trip: value types");
    float f = 0; bool b = false;
    CHECK(gguf_get_f32(g, "v.f32", &f) && f == 0.15625f && gguf_get_f32(g, "v.f64", &f) && f == 3.14159265f &&
          gguf_get_bool(g, "v.bool", &b) && b, "round trip: f32, f64, bool");
    const char *s; size_t len;
    CHECK(gguf_get_str(g, "v.empty", &s, &len) && len == 0 &&
          gguf_get_str(g, "v.utf8", &s, &len) && str_eq(s, len, "na\xC3\xAFve \xE2\x96\x81 \xF0\x9F\x98\x80") &&
          gguf_get_str(g, "v.nul", &s, &len) && len == 3 && memcmp(s, "a\0b", 3) == 0 &&
          gguf_get_str(g, "general.architecture", &s, &len) && str_eq(s, len, "test-arch"),
          "round trip: strings (empty, UTF-8, embedded NUL)");
    CHECK(!gguf_get_str(g, "v.u8", &s, &len) && !gguf_get_i64(g, "v.utf8", &v) && !gguf_get_i64(g, "a.f32", &v) &&
          !gguf_get_f32(g, "v.utf8", &f) && !gguf_get_arr(g, "v.u8", &(int){0}, &(uint64_t){0}) &&
          !gguf_has(g, "absent") && gguf_has(g, "v.u8"), "round trip: lookups of the wrong type or absent keys fail");
    int et; uint64_t n; double d; int ok_arr = 1;
    ok_arr &= gguf_get_arr(g, "a.f32", &et, &n) && et == GGUF_F32 && n == 3;
    for (int i = 0; i < 3; i++) ok_arr &= gguf_arr_f64(g, "a.f32", i, &d) && d == (double)f32s[i];
    ok_arr &= gguf_get_arr(g, "a.i16", &et, &n) && et == GGUF_I16 && n == 4;
    for (int i = 0; i < 4; i++) ok_arr &= gguf_arr_i64(g, "a.i16", i, &v) && v == i16s[i];
    for (int i = 0; i < 2; i++) ok_arr &= gguf_arr_f64(g, "a.f64", i, &d) && d == f64s[i];
    ok_arr &= gguf_arr_i64(g, "a.u64", 0, &v) && v == 0 && !gguf_arr_i64(g, "a.u64", 1, &v);  /* 2^63 > INT64_MAX */
    ok_arr &= gguf_arr_f64(g, "a.u64", 1, &d) && d == 9223372036854775808.0;
    ok_arr &= gguf_arr_i64(g, "a.i8", 0, &v) && v == -128 && gguf_arr_i64(g, "a.i8", 1, &v) && v == 127;
    ok_arr &= gguf_arr_i64(g, "a.bool", 0, &v) && v == 1 && gguf_arr_i64(g, "a.bool", 1, &v) && v == 0;
    ok_arr &= gguf_get_arr(g, "a.empty", &et, &n) && et == GGUF_U32 && n == 0 && !gguf_arr_i64(g, "a.empty", 0, &v);
    ok_arr &= !gguf_arr_i64(g, "a.f32", 0, &v) && !gguf_arr_i64(g, "a.i16", 4, &v) && !gguf_arr_str(g, "a.f32", 0, &s, &len);
    CHECK(ok_arr, "round trip: numeric arrays (values, bounds, type mismatches)");
    int ok_str = gguf_get_arr(g, "a.str", &et, &n) && et == GGUF_STRING && n == 4;
    for (int i = 0; ok_str && i < 4; i++)
        ok_str = gguf_arr_str(g, "a.str", i, &s, &len) && len == lens[i] && memcmp(s, strs[i], len) == 0;
    CHECK(ok_str && !gguf_arr_str(g, "a.str", 4, &s, &len) && !gguf_arr_i64(g, "a.str", 0, &v),
          "round trip: string array (empty element, NUL inside, bounds)");
    /* Keys come back in the order they were written. */
    CHECK(gguf_n_keys(g) == 24 && strcmp(gguf_key_at(g, 0), "general.architecture") == 0 &&
          strcmp(gguf_key_at(g, 1), "v.u8") == 0 && strcmp(gguf_key_at(g, 23), "a.str") == 0 &&
          gguf_key_at(g, 24) == NULL, "round trip: %llu keys in order", (unsigned long long)gguf_n_keys(g));

    const tensor_dir *td = gguf_tensors(g);
    struct { const char *name; int type; const uint8_t *data; size_t n; int n_dims; int64_t ne[4]; } want[] = {
        {"t.f32", TS_F32, d_f32, sizeof d_f32, 2, {7, 3, 1, 1}},
        {"t.f16", TS_F16, d_f16, sizeof d_f16, 2, {32, 2, 1, 1}},
        {"t.q8_0", TS_Q8_0, d_q80, sizeof d_q80, 3, {64, 3, 1, 1}},
        {"t.q4_k", TS_Q4_K, d_q4k, sizeof d_q4k, 2, {256, 2, 1, 1}},
        {"t.q6_k", TS_Q6_K, d_q6k, sizeof d_q6k, 2, {256, 3, 1, 1}},
        {"t.bf16", TS_BF16, d_bf16, sizeof d_bf16, 1, {5, 1, 1, 1}},
        {"t.4d", TS_F32, d_4d, sizeof d_4d, 4, {2, 3, 4, 5}},
    };
    int ok_t = td->n == 8;
    for (size_t i = 0; ok_t && i < sizeof want / sizeof want[0]; i++) {
        const tensor_entry *t = tensor_dir_find(td, want[i].name);
        ok_t = t && t->type == want[i].type && t->n_dims == want[i].n_dims && t->nbytes == want[i].n &&
               memcmp(t->ne, want[i].ne, sizeof t->ne) == 0 && memcmp(t->data, want[i].data, want[i].n) == 0 &&
               (size_t)(t->data - td->t[0].data) % 32 == 0;
        if (!ok_t) printf("# tensor %s differs\n", want[i].name);
    }
    const tensor_entry *z = tensor_dir_find(td, "t.zeros");
    ok_t = ok_t && z && z->nbytes == 12 && memcmp(z->data, "\0\0\0\0\0\0\0\0\0\0\0\0", 12) == 0;
    CHECK(ok_t, "round trip: 8 tensors (F32, F16, Q8_0, Q4_K, Q6_K, BF16, 4-D, zeros): shapes, types, bytes, 32-aligned");
    CHECK(tensor_dir_find(td, "t.missing") == NULL, "round trip: absent tensor not found");
    gguf_close(g);

    /* general.alignment 64 via the writer. */
    w = gguf_writer_new();
    gguf_writer_add_u32(w, "x", 1);
    gguf_writer_set_alignment(w, 64);
    gguf_writer_add_tensor(w, "a", TS_F32, 1, (int64_t[]){3}, d_f32, 12);
    gguf_writer_add_tensor(w, "b", TS_F32, 1, (int64_t[]){5}, d_f32, 20);
    char p64[512];
    tmp_path(p64, sizeof p64, "align64.gguf");
    rc = gguf_writer_write(w, p64, &err);
    gguf_writer_free(w);
    rc = rc ? rc : gguf_open(p64, &g, &err);
    CHECK(rc == 0, "writer: alignment 64 file opens (%s)", rc ? err.msg : "ok");
    if (rc == 0) {
        td = gguf_tensors(g);
        CHECK(gguf_alignment(g) == 64 && get_i(g, "general.alignment") == 64 && gguf_data_offset(g) % 64 == 0 &&
              td->n == 2 && td->t[1].data - td->t[0].data == 64 && memcmp(td->t[1].data, d_f32, 20) == 0,
              "writer: general.alignment 64 honoured (second tensor 64 bytes after the first)");
        gguf_close(g);
    }
    unlink(p64);

    /* Writer errors are values and sticky. */
    w = gguf_writer_new();
    int r1 = gguf_writer_add_u32(w, "k", 1), r2 = gguf_writer_add_u32(w, "k", 2);
    int r3 = gguf_writer_add_tensor(w, "t", TS_Q8_0, 1, (int64_t[]){33}, d_q80, 34);
    int r4 = gguf_writer_set_alignment(w, 48);
    char pbad[512];
    tmp_path(pbad, sizeof pbad, "never.gguf");
    err.msg[0] = 0;
    rc = gguf_writer_write(w, pbad, &err);
    gguf_writer_free(w);
    CHECK(r1 == 0 && r2 == -1 && r3 == -1 && r4 == -1 && rc == -1 && strstr(err.msg, "duplicate") &&
          strstr(err.msg, pbad) && access(pbad, F_OK) != 0,
          "writer: duplicate key / bad row / bad alignment refused; write fails with the first error (%s)", err.msg);
    w = gguf_writer_new();
    r1 = gguf_writer_add_tensor(w, "t", TS_F32, 2, (int64_t[]){4, 4}, d_f32, 60);
    gguf_writer_free(w);
    CHECK(r1 == -1, "writer: tensor with the wrong byte count refused");
}

/* A 150000-string vocabulary: every element reachable in O(1). */
static void test_big_string_array(void) {
    enum { N_BIG = 150000 };
    char (*big)[16] = malloc(N_BIG * sizeof *big);
    const char **bigp = malloc(N_BIG * sizeof *bigp);
    for (int i = 0; i < N_BIG; i++) { snprintf(big[i], 16, "tok%d", i); bigp[i] = big[i]; }
    gguf_writer *w = gguf_writer_new();
    gguf_writer_add_str_array(w, "tokenizer.ggml.tokens", bigp, NULL, N_BIG);
    char path[512];
    tmp_path(path, sizeof path, "big.gguf");
    ts_error err = {{0}};
    gguf_file *g = NULL;
    int rc = gguf_writer_write(w, path, &err);
    gguf_writer_free(w);
    rc = rc ? rc : gguf_open(path, &g, &err);
    CHECK(rc == 0, "150000-token file opens (%s)", rc ? err.msg : "ok");
    if (rc == 0) {
        clock_t t0 = clock();
        int et; uint64_t n; const char *s; size_t len;
        int ok = gguf_get_arr(g, "tokenizer.ggml.tokens", &et, &n) && n == N_BIG;
        for (int i = N_BIG - 1; ok && i >= 0; i--)
            ok = gguf_arr_str(g, "tokenizer.ggml.tokens", (uint64_t)i, &s, &len) && str_eq(s, len, big[i]);
        double ms = 1000.0 * (double)(clock() - t0) / CLOCKS_PER_SEC;
        CHECK(ok, "150000-string array: every element read back, in reverse order (%.1f ms)", ms);
        gguf_close(g);
    }
    unlink(path);
    free(big);
    free(bigp);
}

/* ------------------------------------------------------------------ damaged files */

typedef struct corpus {
    const char *keep_dir;   /* TS_BAD_GGUF_DIR, or NULL */
    int files;
} corpus;

/* One printable line: valid UTF-8 without control characters. */
static bool printable_utf8(const char *msg) {
    for (const unsigned char *p = (const unsigned char *)msg; *p; p++) if (*p < 0x20 || *p == 0x7F) return false;
    return utf8_valid(msg, strlen(msg), NULL);
}

/* True when gguf_open refuses path properly: -1, no handle, a one-line message naming the path
 * (and containing `expect` if given). */
static bool open_refused(const char *path, const char *name, const char *expect) {
    ts_error err;
    memset(&err, 0, sizeof err);
    gguf_file *g = (gguf_file *)&err;   /* must be reset to NULL */
    int rc = gguf_open(path, &g, &err);
    bool ok = rc == -1 && g == NULL && err.msg[0] && strstr(err.msg, path) && printable_utf8(err.msg) &&
              (!expect || strstr(err.msg, expect));
    if (rc == 0) gguf_close(g);
    if (!ok) printf("# %s: rc %d, message: %s\n", name, rc, err.msg);
    return ok;
}

/* Writes bytes as `name` (into TS_BAD_GGUF_DIR if set and keep, else the temp dir) and checks that
 * gguf_open refuses it. */
static bool refused(corpus *c, const char *name, const uint8_t *p, size_t n, const char *expect, bool keep) {
    char path[600];
    bool kept = c->keep_dir && keep;
    if (kept) snprintf(path, sizeof path, "%s/%s.gguf", c->keep_dir, name);
    else tmp_path(path, sizeof path, "damaged.gguf");
    if (write_bytes(path, p, n)) { printf("# cannot write %s\n", path); return false; }
    c->files++;
    bool ok = open_refused(path, name, expect);
    if (!kept) unlink(path);
    return ok;
}

typedef struct patch { size_t pos; int width; uint64_t value; } patch;

/* One damaged variant of a valid file: up to two fields overwritten. */
static void damage_case(corpus *c, const char *prefix, const buf *base, const char *name, const char *expect,
                        patch p1, patch p2) {
    uint8_t *copy = malloc(base->n);
    memcpy(copy, base->p, base->n);
    patch ps[2] = {p1, p2};
    for (int i = 0; i < 2; i++) {
        if (ps[i].width == 0) continue;
        uint8_t le[8];
        for (int k = 0; k < 8; k++) le[k] = (uint8_t)(ps[i].value >> (8 * k));
        memcpy(copy + ps[i].pos, le, (size_t)ps[i].width);
    }
    char full[200], msg[64] = "";
    snprintf(full, sizeof full, "%s-%s", prefix, name);
    if (expect) snprintf(msg, sizeof msg, " ('%s' in message)", expect);
    CHECK(refused(c, full, copy, base->n, expect, true), "damaged %s refused%s", full, msg);
    free(copy);
}

#define P(pos, w, v) ((patch){(pos), (w), (uint64_t)(v)})
#define NOP ((patch){0, 0, 0})

/* Truncations at every byte below `every_below`, at every 13th byte from there to `header_end`,
 * then at about `spread` points up to `max_len` (exclusive); all must be refused. One file is cut
 * shorter step by step (ftruncate), which keeps thousands of cases fast; a handful are also kept
 * in TS_BAD_GGUF_DIR. */
static void truncations(corpus *c, const char *prefix, const buf *base, size_t every_below, size_t header_end,
                        size_t max_len, int spread) {
    size_t *points = malloc((every_below + header_end / 13 + (size_t)spread + 4) * sizeof *points);
    int np = 0;
    for (size_t k = 0; k < max_len;
         k += k < every_below ? 1 : k < header_end ? 13 : (max_len - header_end) / (size_t)spread + 1)
        points[np++] = k;
    char path[600];
    tmp_path(path, sizeof path, "truncated.gguf");
    int fd = -1;
    if (write_bytes(path, base->p, base->n) == 0) fd = open(path, O_WRONLY);
    int failed = 0;
    char first_bad[64] = "";
    size_t kept_at[] = {0, 3, 7, 16, 25, every_below / 2, every_below - 1, max_len - 1};
    for (int i = np - 1; fd >= 0 && i >= 0; i--) {
        size_t k = points[i];
        char name[160];
        snprintf(name, sizeof name, "%s-truncated-at-%zu", prefix, k);
        bool ok = ftruncate(fd, (off_t)k) == 0 && open_refused(path, name, NULL);
        c->files++;
        for (size_t j = 0; j < sizeof kept_at / sizeof kept_at[0]; j++)
            if (kept_at[j] == k && c->keep_dir) { refused(c, name, base->p, k, NULL, true); break; }
        if (!ok && !failed++) snprintf(first_bad, sizeof first_bad, "(first failure at %zu)", k);
    }
    if (fd >= 0) close(fd);
    unlink(path);
    CHECK(fd >= 0 && failed == 0, "damaged %s: %d truncations (every byte below %zu, every 13th to %zu, then spread"
          " to %zu) all refused %s", prefix, np, every_below, header_end, max_len, first_bad);
    free(points);
}

/* A small valid file assembled by hand from the format description (independent of the writer). */
typedef struct mini {
    buf b;
    size_t key0_len, str_val_len, align_val, align_type, k1_type, k2_name, nums_type, nums_count,
           toks_count, toks_s1_len, ta_name, tb_name, ta_ndims, ta_dim0, ta_dim1, ta_type, ta_off,
           tb_dim0, tb_type, tb_off, infos_end, data_start;
} mini;

static void build_mini(mini *m) {
    buf *b = &m->b;
    b_put(b, "GGUF", 4);
    b_u32(b, 3);
    b_u64(b, 2);    /* tensors */
    b_u64(b, 6);    /* kv pairs */
    m->key0_len = b_str(b, "general.architecture"); b_u32(b, GGUF_STRING); m->str_val_len = b_str(b, "mini");
    b_str(b, "general.alignment"); m->align_type = b_u32(b, GGUF_U32); m->align_val = b_u32(b, 32);
    b_str(b, "k1"); m->k1_type = b_u32(b, GGUF_U32); b_u32(b, 7);
    m->k2_name = b_str(b, "k2") + 8; b_u32(b, GGUF_F32); b_f32(b, 0.5f);
    b_str(b, "nums"); b_u32(b, GGUF_ARRAY); m->nums_type = b_u32(b, GGUF_U32); m->nums_count = b_u64(b, 3);
    b_u32(b, 1); b_u32(b, 2); b_u32(b, 3);
    b_str(b, "toks"); b_u32(b, GGUF_ARRAY); b_u32(b, GGUF_STRING); m->toks_count = b_u64(b, 3);
    b_str(b, "<unk>"); m->toks_s1_len = b_str(b, "<s>"); b_str(b, "x");
    /* ta: F32 32x2 at 0 (256 bytes); tb: Q8_0 64 at 256 (2 blocks of 34 bytes). */
    m->ta_name = b_str(b, "ta") + 8; m->ta_ndims = b_u32(b, 2); m->ta_dim0 = b_u64(b, 32); m->ta_dim1 = b_u64(b, 2);
    m->ta_type = b_u32(b, TS_F32); m->ta_off = b_u64(b, 0);
    m->tb_name = b_str(b, "tb") + 8; b_u32(b, 1); m->tb_dim0 = b_u64(b, 64); m->tb_type = b_u32(b, TS_Q8_0);
    m->tb_off = b_u64(b, 256);
    m->infos_end = b->n;
    b_pad(b, 32);
    m->data_start = b->n;
    for (int i = 0; i < 64; i++) b_f32(b, (float)i * 0.5f);
    uint8_t q[68];
    fill_bytes(q, sizeof q, 9);
    b_put(b, q, sizeof q);   /* the file ends exactly where tb ends */
}

static void test_damaged_mini(corpus *c) {
    mini m = {0};
    build_mini(&m);
    const buf *b = &m.b;
    /* Positive control: the undamaged file reads back what was assembled. */
    char path[512];
    tmp_path(path, sizeof path, "mini.gguf");
    write_bytes(path, b->p, b->n);
    gguf_file *g = NULL;
    ts_error err = {{0}};
    int rc = gguf_open(path, &g, &err);
    CHECK(rc == 0, "hand-assembled mini file opens (%s)", rc ? err.msg : "ok");
    if (rc == 0) {
        const char *s; size_t len; float f; int64_t v;
        const tensor_entry *ta = tensor_dir_find(gguf_tensors(g), "ta"), *tb = tensor_dir_find(gguf_tensors(g), "tb");
        CHECK(gguf_get_str(g, "general.architecture", &s, &len) && str_eq(s, len, "mini") &&
              get_i(g, "k1") == 7 && gguf_get_f32(g, "k2", &f) && f == 0.5f &&
              gguf_arr_i64(g, "nums", 2, &v) && v == 3 && gguf_arr_str(g, "toks", 1, &s, &len) && str_eq(s, len, "<s>") &&
              ta && ta->nbytes == 256 && ta->data == tb->data - 256 && memcmp(ta->data, b->p + m.data_start, 256) == 0 &&
              tb && tb->nbytes == 68 && memcmp(tb->data, b->p + m.data_start + 256, 68) == 0 &&
              gguf_data_offset(g) == m.data_start,
              "mini: metadata, tensor sizes (Q8_0 = 34 bytes per 32) and data positions as assembled");
        gguf_close(g);
    }
    unlink(path);

    const uint64_t big = UINT64_MAX, half = 1ull << 63, past = b->n + 1;
    const char *x = "mini";
    damage_case(c, x, b, "bad-magic", "not a GGUF file", P(0, 1, 'X'), NOP);
    damage_case(c, x, b, "version-0", "version 0", P(4, 4, 0), NOP);
    damage_case(c, x, b, "version-1", "version 1", P(4, 4, 1), NOP);
    damage_case(c, x, b, "version-99", "version 99", P(4, 4, 99), NOP);
    damage_case(c, x, b, "version-big-endian", "big-endian", P(4, 4, 0x03000000), NOP);
    damage_case(c, x, b, "n-tensors-2^64-1", "tensors", P(8, 8, big), NOP);
    damage_case(c, x, b, "n-tensors-2^63", "tensors", P(8, 8, half), NOP);
    damage_case(c, x, b, "n-tensors-filesize+1", "tensors", P(8, 8, past), NOP);
    damage_case(c, x, b, "n-tensors-3", NULL, P(8, 8, 3), NOP);
    damage_case(c, x, b, "n-kv-2^64-1", "metadata keys", P(16, 8, big), NOP);
    damage_case(c, x, b, "n-kv-2^63", "metadata keys", P(16, 8, half), NOP);
    damage_case(c, x, b, "n-kv-filesize+1", "metadata keys", P(16, 8, past), NOP);
    damage_case(c, x, b, "n-kv-and-n-tensors-together-too-many", "metadata keys", P(16, 8, b->n / 24), P(8, 8, b->n / 48));
    damage_case(c, x, b, "key-len-2^64-1", "string length", P(m.key0_len, 8, big), NOP);
    damage_case(c, x, b, "key-len-2^63", "string length", P(m.key0_len, 8, half), NOP);
    damage_case(c, x, b, "key-len-filesize+1", "string length", P(m.key0_len, 8, past), NOP);
    damage_case(c, x, b, "key-empty", "empty", P(m.key0_len, 8, 0), NOP);
    damage_case(c, x, b, "key-not-utf8", "UTF-8", P(m.key0_len + 8, 1, 0xFF), NOP);
    damage_case(c, x, b, "key-overlong-utf8", "UTF-8", P(m.k2_name, 2, 0x80C0), NOP);
    damage_case(c, x, b, "key-with-nul", "NUL", P(m.key0_len + 9, 1, 0), NOP);
    damage_case(c, x, b, "key-with-newline-then-bad-type", "key 'k?' has unknown value type 13",
                P(m.k1_type - 1, 1, '\n'), P(m.k1_type, 4, 13));
    damage_case(c, x, b, "key-duplicate", "duplicate metadata key 'k1'", P(m.k2_name + 1, 1, '1'), NOP);
    damage_case(c, x, b, "string-value-len-2^64-1", "string length", P(m.str_val_len, 8, big), NOP);
    damage_case(c, x, b, "string-value-len-filesize+1", "string length", P(m.str_val_len, 8, past), NOP);
    damage_case(c, x, b, "value-type-13", "unknown value type 13", P(m.k1_type, 4, 13), NOP);
    damage_case(c, x, b, "value-type-2^32-1", "unknown value type", P(m.k1_type, 4, 0xFFFFFFFFu), NOP);
    damage_case(c, x, b, "nested-array", "array of arrays", P(m.nums_type, 4, GGUF_ARRAY), NOP);
    damage_case(c, x, b, "array-elem-type-13", "unknown value type", P(m.nums_type, 4, 13), NOP);
    damage_case(c, x, b, "array-count-2^64-1", "elements", P(m.nums_count, 8, big), NOP);
    damage_case(c, x, b, "array-count-2^62-times-4-wraps", "elements", P(m.nums_count, 8, 1ull << 62), NOP);
    damage_case(c, x, b, "array-count-4GiB-of-u32", "elements", P(m.nums_count, 8, 1ull << 30), NOP);
    damage_case(c, x, b, "array-count-filesize", "elements", P(m.nums_count, 8, b->n), NOP);
    damage_case(c, x, b, "array-u64-8GiB", "elements", P(m.nums_type, 4, GGUF_U64), P(m.nums_count, 8, 1ull << 30));
    damage_case(c, x, b, "string-array-count-2^64-1", "strings", P(m.toks_count, 8, big), NOP);
    damage_case(c, x, b, "string-array-count-2^61", "strings", P(m.toks_count, 8, 1ull << 61), NOP);
    damage_case(c, x, b, "string-array-count-2^28", "strings", P(m.toks_count, 8, 1ull << 28), NOP);
    damage_case(c, x, b, "string-array-elem-len-2^64-1", "string length", P(m.toks_s1_len, 8, big), NOP);
    damage_case(c, x, b, "alignment-0", "general.alignment is 0", P(m.align_val, 4, 0), NOP);
    damage_case(c, x, b, "alignment-3", "general.alignment is 3", P(m.align_val, 4, 3), NOP);
    damage_case(c, x, b, "alignment-48", "general.alignment is 48", P(m.align_val, 4, 48), NOP);
    damage_case(c, x, b, "alignment-2^21", "general.alignment", P(m.align_val, 4, 1u << 21), NOP);
    damage_case(c, x, b, "alignment-2^31", "general.alignment", P(m.align_val, 4, 1u << 31), NOP);
    damage_case(c, x, b, "alignment-is-f32", "general.alignment", P(m.align_type, 4, GGUF_F32), NOP);
    damage_case(c, x, b, "alignment-i32-negative", "general.alignment is -32", P(m.align_type, 4, GGUF_I32),
                P(m.align_val, 4, (uint32_t)-32));
    damage_case(c, x, b, "tensor-name-len-2^64-1", "string length", P(m.ta_name - 8, 8, big), NOP);
    damage_case(c, x, b, "tensor-name-empty", "empty", P(m.ta_name - 8, 8, 0), NOP);
    damage_case(c, x, b, "tensor-name-not-utf8", "UTF-8", P(m.ta_name, 1, 0xFE), NOP);
    damage_case(c, x, b, "tensor-name-with-nul", "NUL", P(m.ta_name + 1, 1, 0), NOP);
    damage_case(c, x, b, "tensor-name-duplicate", "duplicate tensor name 'ta'", P(m.tb_name + 1, 1, 'a'), NOP);
    damage_case(c, x, b, "n-dims-0", "0 dimensions", P(m.ta_ndims, 4, 0), NOP);
    damage_case(c, x, b, "n-dims-5", "5 dimensions", P(m.ta_ndims, 4, 5), NOP);
    damage_case(c, x, b, "n-dims-2^32-1", "dimensions", P(m.ta_ndims, 4, 0xFFFFFFFFu), NOP);
    damage_case(c, x, b, "dim-0", "dimension 0 = 0", P(m.ta_dim0, 8, 0), NOP);
    damage_case(c, x, b, "dim-negative", "must be positive", P(m.ta_dim1, 8, (uint64_t)-4), NOP);
    damage_case(c, x, b, "dim-2^64-1", "must be positive", P(m.ta_dim0, 8, big), NOP);
    damage_case(c, x, b, "dims-product-overflows", "overflows", P(m.ta_dim0, 8, 1ull << 32), P(m.ta_dim1, 8, 1ull << 32));
    damage_case(c, x, b, "dims-product-2^63", "overflows", P(m.ta_dim0, 8, 1ull << 32), P(m.ta_dim1, 8, 1ull << 31));
    damage_case(c, x, b, "byte-size-overflows", "too large", P(m.ta_dim0, 8, 1ull << 62), P(m.ta_dim1, 8, 1));
    damage_case(c, x, b, "tensor-gigabytes", "past the end", P(m.ta_dim0, 8, 1ull << 28), P(m.ta_dim1, 8, 4));
    damage_case(c, x, b, "tensor-type-99", "'ta' has unknown or unsupported type id 99", P(m.ta_type, 4, 99), NOP);
    damage_case(c, x, b, "tensor-type-4-removed", "type id 4", P(m.ta_type, 4, 4), NOP);
    damage_case(c, x, b, "tensor-type-36-removed", "type id 36", P(m.ta_type, 4, 36), NOP);
    damage_case(c, x, b, "tensor-type-64-internal", "type id 64", P(m.ta_type, 4, 64), NOP);
    damage_case(c, x, b, "tensor-type-80-q4nx", "type id 80", P(m.ta_type, 4, 80), NOP);
    damage_case(c, x, b, "tensor-type-2^31", "type id 2147483648", P(m.ta_type, 4, 1u << 31), NOP);
    damage_case(c, x, b, "row-not-whole-blocks", "block size", P(m.tb_dim0, 8, 33), NOP);
    /* the low-bit types: a row of 64 is no whole IQ2_XXS super-block; 512 IQ1_S weights (100
     * bytes) and 128 NVFP4 weights (72) run past the 68 bytes the file has */
    damage_case(c, x, b, "iq2_xxs-row-not-whole-blocks", "IQ2_XXS block size 256", P(m.tb_type, 4, TS_IQ2_XXS), NOP);
    damage_case(c, x, b, "iq1_s-truncated", "past the end", P(m.tb_type, 4, TS_IQ1_S), P(m.tb_dim0, 8, 512));
    damage_case(c, x, b, "nvfp4-truncated", "past the end", P(m.tb_type, 4, TS_NVFP4), P(m.tb_dim0, 8, 128));
    damage_case(c, x, b, "offset-unaligned", "not a multiple of the alignment", P(m.tb_off, 8, 257), NOP);
    damage_case(c, x, b, "offset-past-end", "past the end", P(m.tb_off, 8, 1ull << 40), NOP);
    damage_case(c, x, b, "offset-2^64-32", "past the end", P(m.tb_off, 8, (uint64_t)-32), NOP);
    damage_case(c, x, b, "offset-just-past-end", "past the end", P(m.tb_off, 8, 288), NOP);
    damage_case(c, x, b, "tensors-overlap", "overlap", P(m.tb_off, 8, 224), NOP);
    damage_case(c, x, b, "tensors-same-offset", "overlap", P(m.tb_off, 8, 0), NOP);
    truncations(c, x, b, b->n, b->n, b->n, 1);
    free(m.b.p);
}

/* Damage to a writer-made file and to a real fixture: fixed-position header fields, the first key,
 * and truncations through the header region and the data. */
static void test_damaged_file(corpus *c, const char *prefix, const char *src) {
    buf b = {0};
    size_t n = 0;
    uint8_t *p = read_all(src, &n);
    if (!p || n < 64) { CHECK(0, "read %s for damage tests", src); free(p); return; }
    b_put(&b, p, n);
    free(p);
    gguf_file *g = NULL;
    ts_error err = {{0}};
    int rc = gguf_open(src, &g, &err);
    CHECK(rc == 0, "%s: the undamaged file opens (%s)", prefix, rc ? err.msg : "ok");
    if (rc) { free(b.p); return; }
    uint64_t data_at = gguf_data_offset(g);
    uint32_t align = gguf_alignment(g);
    gguf_close(g);

    uint64_t key0_len;
    memcpy(&key0_len, b.p + 24, 8);
    const size_t key0_type = 32 + (size_t)key0_len;
    const uint64_t big = UINT64_MAX;
    damage_case(c, prefix, &b, "bad-magic", "not a GGUF file", P(0, 4, 0x46554746 /* "FGUF" */), NOP);
    damage_case(c, prefix, &b, "version-1", "version 1", P(4, 4, 1), NOP);
    damage_case(c, prefix, &b, "version-99", "version 99", P(4, 4, 99), NOP);
    damage_case(c, prefix, &b, "n-tensors-2^64-1", NULL, P(8, 8, big), NOP);
    damage_case(c, prefix, &b, "n-tensors-filesize", NULL, P(8, 8, b.n), NOP);
    damage_case(c, prefix, &b, "n-kv-2^63", NULL, P(16, 8, 1ull << 63), NOP);
    damage_case(c, prefix, &b, "n-kv-filesize+1", NULL, P(16, 8, b.n + 1), NOP);
    damage_case(c, prefix, &b, "key0-len-2^64-1", "string length", P(24, 8, big), NOP);
    damage_case(c, prefix, &b, "key0-len-filesize+1", "string length", P(24, 8, b.n + 1), NOP);
    damage_case(c, prefix, &b, "key0-type-99", "unknown value type 99", P(key0_type, 4, 99), NOP);
    /* Tensor data lies in the last bytes (padding after it is less than the alignment), so every
     * truncation below size - alignment cuts it. */
    size_t header_end = (size_t)data_at + 64 < b.n ? (size_t)data_at + 64 : b.n;
    truncations(c, prefix, &b, header_end < 2048 ? header_end : 2048, header_end, b.n - align, 200);
    free(b.p);
}

/* Reads everything an opened file offers (under the sanitizers, any out-of-bounds read shows). */
static void touch_everything(const gguf_file *g) {
    volatile uint64_t sink = 0;
    for (uint64_t i = 0; i < gguf_n_keys(g); i++) {
        const char *key = gguf_key_at(g, i), *s;
        size_t len;
        int64_t v; float f; bool b; double d; int et; uint64_t n;
        if (gguf_get_i64(g, key, &v)) sink += (uint64_t)v;
        if (gguf_get_f32(g, key, &f)) sink += (uint64_t)(f == f);
        if (gguf_get_bool(g, key, &b)) sink += b;
        if (gguf_get_str(g, key, &s, &len) && len) sink += (uint8_t)s[len - 1];
        if (gguf_get_arr(g, key, &et, &n) && n > 0) {
            if (gguf_arr_i64(g, key, n - 1, &v)) sink += (uint64_t)v;
            if (gguf_arr_f64(g, key, n - 1, &d)) sink += (uint64_t)(d == d);
            for (uint64_t k = 0; k < n && k < 64; k++)
                if (gguf_arr_str(g, key, k, &s, &len) && len) sink += (uint8_t)s[len - 1];
        }
    }
    const tensor_dir *td = gguf_tensors(g);
    for (int i = 0; i < td->n; i++) sink += td->t[i].data[0] + td->t[i].data[td->t[i].nbytes - 1];
    (void)sink;
}

/* Random damage: 1-4 random bytes of the mini file overwritten, 3000 times. Each result must either
 * open (and then be fully readable) or be refused with a proper message. */
static void test_random_mutations(void) {
    mini m = {0};
    build_mini(&m);
    char path[512];
    tmp_path(path, sizeof path, "mutated.gguf");
    uint8_t *copy = malloc(m.b.n);
    write_bytes(path, m.b.p, m.b.n);
    int fd = open(path, O_WRONLY);
    uint32_t seed = 12345;
    int opened = 0, refused_ok = 0, bad = 0;
    for (int iter = 0; iter < 3000; iter++) {
        memcpy(copy, m.b.p, m.b.n);
        int flips = 1 + iter % 4;
        for (int k = 0; k < flips; k++) {
            seed = seed * 1664525u + 1013904223u;
            size_t at = (seed >> 8) % (uint32_t)m.data_start;   /* damage the header region */
            seed = seed * 1664525u + 1013904223u;
            copy[at] = (uint8_t)(iter & 1 ? seed >> 24 : copy[at] ^ (1u << ((seed >> 24) & 7)));
        }
        if (pwrite(fd, copy, m.b.n, 0) != (ssize_t)m.b.n) { bad++; break; }
        gguf_file *g = NULL;
        ts_error err = {{0}};
        if (gguf_open(path, &g, &err) == 0) {
            touch_everything(g);
            gguf_close(g);
            opened++;
        } else if (err.msg[0] && strstr(err.msg, path) && printable_utf8(err.msg)) {
            refused_ok++;
        } else if (!bad++) {
            printf("# mutation %d: bad message: %s\n", iter, err.msg);
        }
    }
    close(fd);
    unlink(path);
    free(copy);
    free(m.b.p);
    CHECK(fd >= 0 && bad == 0, "3000 random header mutations: %d opened and read fully, %d refused with a proper message",
          opened, refused_ok);
}

static void test_not_files(corpus *c) {
    ts_error err = {{0}};
    gguf_file *g = NULL;
    char path[512];
    tmp_path(path, sizeof path, "does-not-exist.gguf");
    CHECK(gguf_open(path, &g, &err) == -1 && strstr(err.msg, path) && g == NULL, "missing file refused (%s)", err.msg);
    CHECK(gguf_open(tmpdir, &g, &err) == -1 && strstr(err.msg, tmpdir), "directory refused (%s)", err.msg);
    CHECK(refused(c, "empty-file", (const uint8_t *)"", 0, NULL, true), "empty file refused");
    CHECK(refused(c, "header-only-23-bytes", (const uint8_t *)"GGUF\3\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0", 23, NULL, true),
          "23-byte file refused");
    /* The smallest valid file: header, no keys, no tensors. */
    tmp_path(path, sizeof path, "minimal.gguf");
    write_bytes(path, "GGUF\2\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0", 24);
    int rc = gguf_open(path, &g, &err);
    CHECK(rc == 0 && gguf_version(g) == 2 && gguf_n_keys(g) == 0 && gguf_tensors(g)->n == 0,
          "24-byte v2 file with nothing in it opens (%s)", rc ? err.msg : "ok");
    if (rc == 0) gguf_close(g);
    unlink(path);
}

/* file_map_release: the released pages of a mapping read back as the file's bytes (they are mapped
 * again on access), partial pages at the edges and ranges outside the mapping are left alone. */
static void test_map_release(void) {
    char path[512];
    tmp_path(path, sizeof path, "release.bin");
    const size_t n = 5 * 4096 + 123;
    unsigned char *want = malloc(n);
    for (size_t i = 0; i < n; i++) want[i] = (unsigned char)(i * 131 + 7);
    FILE *f = fopen(path, "wb");
    bool written = f && fwrite(want, 1, n, f) == n;
    if (f) fclose(f);
    void *map = NULL;
    size_t size = 0;
    ts_error err;
    if (!written || file_map(path, 1, "a test file", &map, &size, &err) != 0) {
        CHECK(0, "file_map_release: cannot write and map %s", path);
        free(want);
        return;
    }
    const unsigned char *m = map;
    bool same_before = size == n && memcmp(m, want, n) == 0;
    file_map_release(map, size, m + 100, n - 200);           /* pages 1..4 wholly inside */
    file_map_release(map, size, m + n - 10, 4096);           /* runs past the end: ignored */
    file_map_release(map, size, want, 16);                   /* not in the mapping: ignored */
    CHECK(same_before && memcmp(m, want, n) == 0,
          "file_map_release: a released range of a mapped file reads back as the file's bytes");
    file_unmap(map, size);
    unlink(path);
    free(want);
}

int main(void) {
    snprintf(tmpdir, sizeof tmpdir, "/tmp/test_gguf_XXXXXX");
    if (!mkdtemp(tmpdir)) { perror("mkdtemp"); return 2; }
    corpus c = {0};
    const char *keep = getenv("TS_BAD_GGUF_DIR");
    if (keep && *keep) {
        mkdir(keep, 0755);
        c.keep_dir = keep;
    }

    test_llama_tiny();
    test_stories();
    test_vocab_only();
    char written[512];
    test_writer_round_trip(written, sizeof written);
    test_big_string_array();
    test_map_release();
    test_not_files(&c);
    test_damaged_mini(&c);
    test_random_mutations();
    test_damaged_file(&c, "writer", written);
    char fixture[512];
    snprintf(fixture, sizeof fixture, "%s/stories260K/stories260K-q8_0.gguf", fixtures_dir());
    test_damaged_file(&c, "stories260K-q8_0", fixture);
    printf("# %d damaged files tried%s%s\n", c.files, c.keep_dir ? ", kept in " : "", c.keep_dir ? c.keep_dir : "");

    unlink(written);
    if (rmdir(tmpdir) != 0) printf("# temp dir %s not empty\n", tmpdir);
    CHECK_EXIT();
}
