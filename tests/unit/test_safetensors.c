/* Safetensors reader: the llama-tiny F32/BF16 files against case.json's config and each other,
 * the q4nx packs, hand-made single files and sharded folders, and damaged headers (each refused
 * with a message naming the file). */
#include "io/safetensors.h"
#include "io/json.h"
#include "kernels/types.h"
#include "check.h"
#include "io/file.h"
#include <stdint.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char tmp[] = "/tmp/test_safetensors.XXXXXX";

static json_value *load_json(const char *path) {
    char *data;
    size_t len;
    ts_error err;
    json_value *v = NULL;
    if (file_read(path, &data, &len, &err)) { printf("# %s\n", err.msg); return NULL; }
    if (json_parse(data, len, &v, &err)) printf("# %s: %s\n", path, err.msg);
    free(data);
    return v;
}

/* bf16 from f32 bits, round to nearest, ties to even (NaN stays NaN). */
static uint16_t bf16_round(float f) {
    uint32_t u;
    memcpy(&u, &f, 4);
    if ((u & 0x7FFFFFFF) > 0x7F800000) return (uint16_t)((u >> 16) | 0x40);
    uint32_t lsb = (u >> 16) & 1;
    return (uint16_t)((u + 0x7FFF + lsb) >> 16);
}

/* Counts "data_offsets" in a file's header with a plain substring scan: an independent count. */
static int count_header_tensors(const char *path) {
    FILE *f = fopen(path, "rb");
    if (!f) return -1;
    unsigned char len8[8];
    int count = -1;
    if (fread(len8, 1, 8, f) == 8) {
        uint64_t n = 0;
        for (int i = 7; i >= 0; i--) n = n << 8 | len8[i];
        char *h = malloc(n + 1);
        if (h && fread(h, 1, n, f) == n) {
            h[n] = 0;
            count = 0;
            for (char *p = h; (p = strstr(p, "\"data_offsets\"")) != NULL; p++) count++;
        }
        free(h);
    }
    fclose(f);
    return count;
}

static bool shape_is(const tensor_entry *t, int n_dims, int64_t ne0, int64_t ne1) {
    return t && t->n_dims == n_dims && t->ne[0] == ne0 && t->ne[1] == ne1 && t->ne[2] == 1 &&
           t->ne[3] == 1;
}

static void test_llama_tiny(void) {
    char path[700], dir[512];
    snprintf(dir, sizeof dir, "%s/llama-tiny", fixtures_dir());
    snprintf(path, sizeof path, "%s/case.json", dir);
    json_value *cas = load_json(path);
    const json_value *hf = json_get(cas, "hf_config");
    int64_t vocab = json_get_int(hf, "vocab_size", 0), hidden = json_get_int(hf, "hidden_size", 0);
    int64_t inter = json_get_int(hf, "intermediate_size", 0);
    int64_t layers = json_get_int(hf, "num_hidden_layers", 0);
    int64_t heads = json_get_int(hf, "num_attention_heads", 0);
    int64_t kv_heads = json_get_int(hf, "num_key_value_heads", 0);
    int64_t head_dim = json_get_int(hf, "head_dim", 0);
    bool tied = json_get_bool(hf, "tie_word_embeddings", true);
    CHECK(hf && vocab == 512 && hidden == 256 && layers == 2, "llama-tiny case.json hf_config read");

    safetensors *st = NULL;
    ts_error err = { "" };
    snprintf(path, sizeof path, "%s/hf/model.safetensors", dir);
    int rc = safetensors_open(path, &st, &err);
    CHECK(rc == 0 && st, "open %s: %s", path, rc ? err.msg : "ok");
    if (rc) { json_free(cas); return; }
    const tensor_dir *d = safetensors_tensors(st);
    int expect_n = 3 - (tied ? 1 : 0) + 9 * (int)layers;   /* embed, norm, lm_head + 9 per layer */
    CHECK(d->n == expect_n && d->n == count_header_tensors(path),
          "F32 file has %d tensors (config says %d, header scan %d)", d->n, expect_n,
          count_header_tensors(path));
    const tensor_entry *t = tensor_dir_find(d, "model.embed_tokens.weight");
    CHECK(shape_is(t, 2, hidden, vocab) && t->type == TS_F32 && t->nbytes == (size_t)(vocab * hidden * 4),
          "embed_tokens [%lld, %lld] -> ne0 %lld ne1 %lld, F32", (long long)vocab,
          (long long)hidden, (long long)(t ? t->ne[0] : 0), (long long)(t ? t->ne[1] : 0));
    CHECK(shape_is(tensor_dir_find(d, "lm_head.weight"), 2, hidden, vocab), "lm_head shape");
    CHECK(shape_is(tensor_dir_find(d, "model.norm.weight"), 1, hidden, 1), "final norm is 1-D");
    bool layers_ok = true;
    for (int64_t l = 0; l < layers; l++) {
        char name[128];
        struct { const char *what; int64_t ne0, ne1; int n_dims; } want[] = {
            { "self_attn.q_proj.weight", hidden, heads * head_dim, 2 },
            { "self_attn.k_proj.weight", hidden, kv_heads * head_dim, 2 },
            { "self_attn.v_proj.weight", hidden, kv_heads * head_dim, 2 },
            { "self_attn.o_proj.weight", heads * head_dim, hidden, 2 },
            { "mlp.gate_proj.weight", hidden, inter, 2 },
            { "mlp.up_proj.weight", hidden, inter, 2 },
            { "mlp.down_proj.weight", inter, hidden, 2 },
            { "input_layernorm.weight", hidden, 1, 1 },
            { "post_attention_layernorm.weight", hidden, 1, 1 },
        };
        for (size_t k = 0; k < sizeof want / sizeof want[0]; k++) {
            snprintf(name, sizeof name, "model.layers.%lld.%s", (long long)l, want[k].what);
            const tensor_entry *e = tensor_dir_find(d, name);
            if (!shape_is(e, want[k].n_dims, want[k].ne0, want[k].ne1) ||
                e->nbytes != (size_t)(e->ne[0] * e->ne[1] * 4) || (uintptr_t)e->data % 4) {
                printf("# wrong or missing: %s\n", name);
                layers_ok = false;
            }
        }
    }
    CHECK(layers_ok, "every layer tensor has the shape hf_config implies");
    CHECK(safetensors_metadata(st, "format") && strcmp(safetensors_metadata(st, "format"), "pt") == 0 &&
          safetensors_metadata(st, "nope") == NULL, "__metadata__ format = pt");

    safetensors *bf = NULL;
    snprintf(path, sizeof path, "%s/hf/model-bf16.safetensors", dir);
    rc = safetensors_open(path, &bf, &err);
    CHECK(rc == 0, "open %s: %s", path, rc ? err.msg : "ok");
    if (rc == 0) {
        const tensor_dir *b = safetensors_tensors(bf);
        CHECK(b->n == d->n, "BF16 file has the same tensor count (%d)", b->n);
        int mismatched = 0, wrong_meta = 0;
        size_t compared = 0;
        for (int i = 0; i < d->n; i++) {
            const tensor_entry *f = &d->t[i];
            const tensor_entry *h = tensor_dir_find(b, f->name);
            if (!h || h->type != TS_BF16 || h->n_dims != f->n_dims ||
                memcmp(h->ne, f->ne, sizeof h->ne) != 0 || h->nbytes * 2 != f->nbytes) {
                wrong_meta++;
                continue;
            }
            size_t n = f->nbytes / 4;
            for (size_t k = 0; k < n; k++) {
                float x;
                uint16_t y;
                memcpy(&x, f->data + 4 * k, 4);
                memcpy(&y, h->data + 2 * k, 2);
                if (bf16_round(x) != y) mismatched++;
            }
            compared += n;
        }
        CHECK(wrong_meta == 0, "BF16 tensors have the F32 tensors' names and shapes");
        CHECK(mismatched == 0 && compared > 1000000,
              "%zu BF16 values equal the F32 values rounded to nearest even (%d differ)", compared,
              mismatched);
        safetensors_close(bf);
    }
    safetensors_close(st);

    /* The folder holds model.safetensors and model-bf16.safetensors: the standard name wins. */
    snprintf(path, sizeof path, "%s/hf", dir);
    rc = safetensors_open_folder(path, &st, &err);
    CHECK(rc == 0 && safetensors_tensors(st)->n == expect_n &&
          safetensors_tensors(st)->t[0].type == TS_F32, "open_folder picks model.safetensors: %s",
          rc ? err.msg : "ok");
    safetensors_close(st);
    json_free(cas);
}

static void test_q4nx(const char *pack) {
    char path[512];
    snprintf(path, sizeof path, "%s/%s/config.json", fixtures_dir(), pack);
    json_value *cfg = load_json(path);
    snprintf(path, sizeof path, "%s/%s/model.q4nx", fixtures_dir(), pack);
    safetensors *st = NULL;
    ts_error err = { "" };
    int rc = safetensors_open(path, &st, &err);
    CHECK(rc == 0, "safetensors_open reads %s: %s", path, rc ? err.msg : "ok");
    if (rc) { json_free(cfg); return; }
    const tensor_dir *d = safetensors_tensors(st);
    int n_i8 = 0, n_bf16 = 0, n_other = 0;
    for (int i = 0; i < d->n; i++) {
        const tensor_entry *t = &d->t[i];
        if (t->type == TS_I8) n_i8++;
        else if (t->type == TS_BF16) n_bf16++;
        else n_other++;
        if (i < 4 || i == d->n - 1)
            printf("# %s %s ne=[%lld, %lld] %zu bytes\n", t->name, safetensors_type_name(t->type),
                   (long long)t->ne[0], (long long)t->ne[1], t->nbytes);
    }
    CHECK(d->n == count_header_tensors(path) && n_i8 > 0 && n_bf16 > 0 && n_other == 0,
          "%s: %d tensors, %d I8 + %d BF16, nothing else", pack, d->n, n_i8, n_bf16);
    const tensor_entry *emb = tensor_dir_find(d, "model.embed_tokens.weight");
    const json_value *tc = json_get(cfg, "text_config") ? json_get(cfg, "text_config") : cfg;
    int64_t vocab = json_get_int(tc, "vocab_size", json_get_int(cfg, "vocab_size", -1));
    int64_t hidden = json_get_int(tc, "hidden_size", json_get_int(cfg, "hidden_size", -1));
    CHECK(emb && emb->type == TS_BF16 && emb->ne[0] == hidden && emb->ne[1] == vocab,
          "%s: embed_tokens is BF16 [vocab %lld, hidden %lld] per config.json", pack,
          (long long)vocab, (long long)hidden);
    CHECK(strcmp(safetensors_type_name(TS_I8), "I8") == 0 && safetensors_type_size(TS_I8) == 1 &&
          safetensors_type_size(TS_BF16) == 2 && safetensors_type_size(TS_Q4_K) == 0,
          "type names and sizes");
    safetensors_close(st);
    json_free(cfg);
}

/* ---- hand-made files ---- */

static void write_bytes(const char *path, const void *data, size_t len) {
    FILE *f = fopen(path, "wb");
    if (!f) return;
    if (len) fwrite(data, 1, len, f);
    fclose(f);
}

/* Writes a safetensors file: header as given (length field = its length, or header_len_override
 * when nonzero), then data_len bytes valued i*7+1. Returns the file size. */
static size_t write_st(const char *path, const char *header, uint64_t header_len_override,
                       size_t data_len) {
    size_t hl = strlen(header);
    size_t total = 8 + hl + data_len;
    unsigned char *buf = malloc(total);
    uint64_t n = header_len_override ? header_len_override : hl;
    for (int i = 0; i < 8; i++) buf[i] = (unsigned char)(n >> (8 * i));
    memcpy(buf + 8, header, hl);
    for (size_t i = 0; i < data_len; i++) buf[8 + hl + i] = (unsigned char)(i * 7 + 1);
    write_bytes(path, buf, total);
    free(buf);
    return total;
}

static void tmp_path(char *out, size_t cap, const char *name) {
    snprintf(out, cap, "%s/%s", tmp, name);
}

/* The file must be refused with a message naming it (and `mention`, when given). */
static void expect_fail(const char *what, const char *path, const char *mention) {
    safetensors *st = (safetensors *)1;
    ts_error err = { "" };
    int rc = safetensors_open(path, &st, &err);
    CHECK(rc == -1 && st == NULL && strstr(err.msg, path) && (!mention || strstr(err.msg, mention)),
          "%s is refused: %s", what, rc ? err.msg : "accepted");
    if (rc == 0) safetensors_close(st);
}

static void expect_header_fail(const char *what, const char *header, size_t data_len,
                               const char *mention) {
    char path[600];
    tmp_path(path, sizeof path, "bad.safetensors");
    write_st(path, header, 0, data_len);
    expect_fail(what, path, mention);
    unlink(path);
}

static const char *good_header =
    "{\"w\":{\"dtype\":\"F32\",\"shape\":[2,3],\"data_offsets\":[0,24]},"
    "\"s\":{\"dtype\":\"I8\",\"shape\":[],\"data_offsets\":[24,25]},"
    "\"e\":{\"dtype\":\"BF16\",\"shape\":[0,4],\"data_offsets\":[25,25]},"
    "\"__metadata__\":{\"k\":\"v\",\"format\":\"pt\"}}";

static void test_handmade(void) {
    char path[600];
    ts_error err = { "" };
    safetensors *st = NULL;

    /* Pad the header with spaces to a multiple of 8, as writers do. */
    char header[512];
    snprintf(header, sizeof header, "%s", good_header);
    while (strlen(header) % 8) strcat(header, " ");
    tmp_path(path, sizeof path, "good.safetensors");
    write_st(path, header, 0, 25);
    int rc = safetensors_open(path, &st, &err);
    CHECK(rc == 0, "hand-made file opens: %s", rc ? err.msg : "ok");
    if (rc == 0) {
        const tensor_dir *d = safetensors_tensors(st);
        const tensor_entry *w = tensor_dir_find(d, "w"), *s = tensor_dir_find(d, "s"),
                           *e = tensor_dir_find(d, "e");
        CHECK(d->n == 3 && strcmp(d->t[0].name, "w") == 0 && strcmp(d->t[2].name, "e") == 0,
              "3 tensors in header order");
        CHECK(shape_is(w, 2, 3, 2) && w->nbytes == 24 && w->data[0] == 1 && w->data[23] == (unsigned char)(23 * 7 + 1),
              "F32 [2,3]: ne 3x2, data at offset 0");
        CHECK(s && s->n_dims == 0 && s->ne[0] == 1 && s->nbytes == 1 && s->type == TS_I8 &&
              s->data[0] == (unsigned char)(24 * 7 + 1), "I8 scalar: 0 dims, 1 byte");
        CHECK(e && e->n_dims == 2 && e->ne[0] == 4 && e->ne[1] == 0 && e->nbytes == 0,
              "empty BF16 [0,4] tensor");
        CHECK(safetensors_metadata(st, "k") && strcmp(safetensors_metadata(st, "k"), "v") == 0,
              "metadata k = v");
        safetensors_close(st);
    }

    /* A header length that leaves the F32 data misaligned: the tensor is copied, aligned. */
    snprintf(header, sizeof header, "%s", good_header);
    while (strlen(header) % 8 != 1) strcat(header, " ");
    tmp_path(path, sizeof path, "odd.safetensors");
    write_st(path, header, 0, 25);
    rc = safetensors_open(path, &st, &err);
    const tensor_entry *w = rc ? NULL : tensor_dir_find(safetensors_tensors(st), "w");
    CHECK(w && (uintptr_t)w->data % 4 == 0 && w->data[0] == 1 && w->data[5] == 36,
          "misaligned F32 data is copied to aligned memory: %s", rc ? err.msg : "ok");
    safetensors_close(st);

    /* An empty F32 tensor at an offset that is not a multiple of 4 (found by fuzz_safetensors):
     * its pointer is aligned too, as for every tensor. */
    snprintf(header, sizeof header, "%s", "{\"a\":{\"dtype\":\"I8\",\"shape\":[2],\"data_offsets\":[0,2]},"
                                          "\"e\":{\"dtype\":\"F32\",\"shape\":[0,4],\"data_offsets\":[2,2]}}");
    while (strlen(header) % 8 != 0) strcat(header, " ");
    tmp_path(path, sizeof path, "empty.safetensors");
    write_st(path, header, 0, 2);
    rc = safetensors_open(path, &st, &err);
    const tensor_entry *e = rc ? NULL : tensor_dir_find(safetensors_tensors(st), "e");
    CHECK(e && e->nbytes == 0 && (uintptr_t)e->data % 4 == 0,
          "an empty F32 tensor at an odd offset has an aligned pointer: %s", rc ? err.msg : "ok");
    if (!rc) safetensors_close(st);

    /* Another extension, same format. */
    tmp_path(path, sizeof path, "model.q4nx");
    write_st(path, good_header, 0, 25);
    rc = safetensors_open(path, &st, &err);
    CHECK(rc == 0 && safetensors_tensors(st)->n == 3, "any extension opens");
    safetensors_close(st);

    /* Truncated copies of a good file. */
    tmp_path(path, sizeof path, "good.safetensors");
    char *full;
    size_t full_len;
    if (file_read(path, &full, &full_len, &err) == 0) {
        size_t hl = full_len - 8 - 25;   /* the padded header's length */
        size_t cuts[] = { 0, 1, 7, 8, 9, 8 + hl / 2, 8 + hl - 1, 8 + hl, 8 + hl + 10, full_len - 1 };
        tmp_path(path, sizeof path, "cut.safetensors");
        for (size_t i = 0; i < sizeof cuts / sizeof cuts[0]; i++) {
            char what[64];
            snprintf(what, sizeof what, "file truncated to %zu of %zu bytes", cuts[i], full_len);
            write_bytes(path, full, cuts[i]);
            expect_fail(what, path, NULL);
        }
        unlink(path);
        free(full);
    }

    tmp_path(path, sizeof path, "huge.safetensors");
    write_st(path, good_header, (uint64_t)1 << 62, 25);
    expect_fail("header length 2^62", path, NULL);
    write_st(path, good_header, strlen(good_header) + 26, 25);
    expect_fail("header length one past the file", path, NULL);
    unlink(path);
    expect_fail("a missing file", "/nonexistent/dir/x.safetensors", NULL);
    expect_fail("a directory", tmp, NULL);

    expect_header_fail("invalid JSON", "{\"w\":{\"dtype\":\"F32\",", 0, "byte ");
    expect_header_fail("a header that is an array", "[1,2]", 0, "not a JSON object");
    expect_header_fail("bad UTF-8 in a name",
                       "{\"w\xC0\xAF\":{\"dtype\":\"U8\",\"shape\":[1],\"data_offsets\":[0,1]}}", 1,
                       "UTF-8");
    expect_header_fail("data_offsets past the end",
                       "{\"w\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]}}", 7, "'w'");
    expect_header_fail("end before begin",
                       "{\"w\":{\"dtype\":\"U8\",\"shape\":[0],\"data_offsets\":[4,2]}}", 8, "'w'");
    expect_header_fail("size mismatch with dtype*shape",
                       "{\"w\":{\"dtype\":\"F16\",\"shape\":[3],\"data_offsets\":[0,3]}}", 8, "'w'");
    expect_header_fail("overlapping tensors",
                       "{\"a\":{\"dtype\":\"U8\",\"shape\":[4],\"data_offsets\":[0,4]},"
                       "\"b\":{\"dtype\":\"U8\",\"shape\":[4],\"data_offsets\":[3,7]}}", 8, "overlap");
    expect_header_fail("unknown dtype",
                       "{\"w\":{\"dtype\":\"Q4\",\"shape\":[4],\"data_offsets\":[0,4]}}", 8, "'w'");
    expect_header_fail("dtype in lower case",
                       "{\"w\":{\"dtype\":\"f32\",\"shape\":[1],\"data_offsets\":[0,4]}}", 8, "'w'");
    expect_header_fail("negative dimension",
                       "{\"w\":{\"dtype\":\"U8\",\"shape\":[-4],\"data_offsets\":[0,4]}}", 8, "'w'");
    expect_header_fail("non-integer dimension",
                       "{\"w\":{\"dtype\":\"U8\",\"shape\":[2.5],\"data_offsets\":[0,2]}}", 8, "'w'");
    expect_header_fail("dimension as a string",
                       "{\"w\":{\"dtype\":\"U8\",\"shape\":[\"4\"],\"data_offsets\":[0,4]}}", 8, "'w'");
    expect_header_fail("five dimensions",
                       "{\"w\":{\"dtype\":\"U8\",\"shape\":[1,1,1,1,1],\"data_offsets\":[0,1]}}", 8, "'w'");
    expect_header_fail("shape product overflow",
                       "{\"w\":{\"dtype\":\"F32\",\"shape\":[4294967296,4294967296],\"data_offsets\":[0,0]}}",
                       8, "'w'");
    expect_header_fail("missing data_offsets", "{\"w\":{\"dtype\":\"U8\",\"shape\":[1]}}", 8, "'w'");
    expect_header_fail("three data_offsets",
                       "{\"w\":{\"dtype\":\"U8\",\"shape\":[1],\"data_offsets\":[0,1,2]}}", 8, "'w'");
    expect_header_fail("tensor info that is not an object", "{\"w\":[1]}", 8, "'w'");
    expect_header_fail("duplicate names",
                       "{\"w\":{\"dtype\":\"U8\",\"shape\":[1],\"data_offsets\":[0,1]},"
                       "\"w\":{\"dtype\":\"U8\",\"shape\":[1],\"data_offsets\":[1,2]}}", 8, "twice");
    expect_header_fail("metadata with a number", "{\"__metadata__\":{\"a\":1}}", 0, "__metadata__");
    expect_header_fail("name with a NUL",
                       "{\"a\\u0000b\":{\"dtype\":\"U8\",\"shape\":[1],\"data_offsets\":[0,1]}}", 8, "NUL");
    char bomb[10003];
    bomb[0] = '{';
    memcpy(bomb + 1, "\"a\":", 4);
    memset(bomb + 5, '[', sizeof bomb - 6);
    bomb[sizeof bomb - 1] = 0;
    expect_header_fail("a depth bomb", bomb, 0, "nesting");
}

/* ---- folders ---- */

static void write_text(const char *dir, const char *name, const char *text) {
    char path[700];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    write_bytes(path, text, strlen(text));
}

static void make_dir(char *out, size_t cap, const char *name) {
    snprintf(out, cap, "%s/%s", tmp, name);
    mkdir(out, 0700);
}

static void expect_folder_fail(const char *what, const char *dir, const char *mention) {
    safetensors *st = (safetensors *)1;
    ts_error err = { "" };
    int rc = safetensors_open_folder(dir, &st, &err);
    CHECK(rc == -1 && st == NULL && strstr(err.msg, mention), "%s is refused: %s", what,
          rc ? err.msg : "accepted");
    if (rc == 0) safetensors_close(st);
}

static const char *shard1 =
    "{\"a\":{\"dtype\":\"U8\",\"shape\":[2],\"data_offsets\":[0,2]},"
    "\"b\":{\"dtype\":\"I16\",\"shape\":[1,2],\"data_offsets\":[2,6]},"
    "\"__metadata__\":{\"format\":\"pt\"}}";
static const char *shard2 = "{\"c\":{\"dtype\":\"I32\",\"shape\":[2],\"data_offsets\":[0,8]}}";

static void write_shards(const char *dir) {
    char path[700];
    snprintf(path, sizeof path, "%s/model-00001-of-00002.safetensors", dir);
    write_st(path, shard1, 0, 6);
    snprintf(path, sizeof path, "%s/model-00002-of-00002.safetensors", dir);
    write_st(path, shard2, 0, 8);
}

static void test_folders(void) {
    char dir[600];
    ts_error err = { "" };
    safetensors *st = NULL;

    make_dir(dir, sizeof dir, "sharded");
    write_shards(dir);
    write_text(dir, "model.safetensors.index.json",
               "{\"metadata\":{\"total_size\":14},\"weight_map\":{"
               "\"c\":\"model-00002-of-00002.safetensors\","
               "\"a\":\"model-00001-of-00002.safetensors\","
               "\"b\":\"model-00001-of-00002.safetensors\"}}");
    int rc = safetensors_open_folder(dir, &st, &err);
    CHECK(rc == 0, "sharded folder opens: %s", rc ? err.msg : "ok");
    if (rc == 0) {
        const tensor_dir *d = safetensors_tensors(st);
        const tensor_entry *a = tensor_dir_find(d, "a"), *b = tensor_dir_find(d, "b"),
                           *c = tensor_dir_find(d, "c");
        CHECK(d->n == 3 && strcmp(d->t[0].name, "c") == 0, "3 tensors in weight_map order");
        CHECK(a && b && c && a->type == TS_U8 && b->type == TS_I16 && c->type == TS_I32 &&
              shape_is(b, 2, 2, 1) && a->data[1] == 8 && b->data[0] == 15 && c->data[0] == 1 &&
              c->data[7] == 50, "each tensor points into its own shard");
        CHECK(safetensors_metadata(st, "format") != NULL, "metadata from the first shard");
        safetensors_close(st);
    }

    make_dir(dir, sizeof dir, "missing-shard");
    write_shards(dir);
    write_text(dir, "model.safetensors.index.json",
               "{\"weight_map\":{\"a\":\"model-00001-of-00002.safetensors\","
               "\"c\":\"model-00003-of-00003.safetensors\"}}");
    expect_folder_fail("index naming a missing shard", dir, "model-00003-of-00003.safetensors");

    make_dir(dir, sizeof dir, "escape");
    write_shards(dir);
    write_text(dir, "model.safetensors.index.json",
               "{\"weight_map\":{\"a\":\"../good.safetensors\"}}");
    expect_folder_fail("index naming ../good.safetensors", dir, "../good.safetensors");
    write_text(dir, "model.safetensors.index.json", "{\"weight_map\":{\"a\":\"..\"}}");
    expect_folder_fail("index naming ..", dir, "model.safetensors.index.json");
    write_text(dir, "model.safetensors.index.json",
               "{\"weight_map\":{\"a\":\"/etc/passwd\"}}");
    expect_folder_fail("index naming an absolute path", dir, "/etc/passwd");

    make_dir(dir, sizeof dir, "wrong-shard");
    write_shards(dir);
    write_text(dir, "model.safetensors.index.json",
               "{\"weight_map\":{\"a\":\"model-00002-of-00002.safetensors\"}}");
    expect_folder_fail("a tensor mapped to a shard without it", dir, "'a'");

    make_dir(dir, sizeof dir, "bad-index");
    write_shards(dir);
    write_text(dir, "model.safetensors.index.json", "{\"weight_map\":{\"a\":}");
    expect_folder_fail("an index that is not JSON", dir, "model.safetensors.index.json");
    write_text(dir, "model.safetensors.index.json", "{\"weights\":{}}");
    expect_folder_fail("an index without weight_map", dir, "weight_map");

    make_dir(dir, sizeof dir, "bad-shard");
    write_shards(dir);
    char path[700];
    snprintf(path, sizeof path, "%s/model-00002-of-00002.safetensors", dir);
    write_st(path, shard2, 0, 7);
    write_text(dir, "model.safetensors.index.json",
               "{\"weight_map\":{\"a\":\"model-00001-of-00002.safetensors\","
               "\"c\":\"model-00002-of-00002.safetensors\"}}");
    expect_folder_fail("a damaged shard", dir, "model-00002-of-00002.safetensors");

    make_dir(dir, sizeof dir, "lone");
    snprintf(path, sizeof path, "%s/weights.safetensors", dir);
    write_st(path, shard2, 0, 8);
    rc = safetensors_open_folder(dir, &st, &err);
    CHECK(rc == 0 && safetensors_tensors(st)->n == 1, "a lone weights.safetensors is used: %s",
          rc ? err.msg : "ok");
    safetensors_close(st);
    snprintf(path, sizeof path, "%s/other.safetensors", dir);
    write_st(path, shard2, 0, 8);
    expect_folder_fail("two unrelated .safetensors files", dir, "several");

    make_dir(dir, sizeof dir, "empty");
    expect_folder_fail("an empty folder", dir, dir);
}

int main(void) {
    if (!mkdtemp(tmp)) { CHECK(0, "mkdtemp"); CHECK_EXIT(); }
    test_llama_tiny();
    test_q4nx("q4nx-gemma3-quarter");
    test_q4nx("q4nx-gemma3-full");
    test_handmade();
    test_folders();
    char cmd[200];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmp);
    if (system(cmd) != 0) printf("# could not remove %s\n", tmp);
    CHECK_EXIT();
}
