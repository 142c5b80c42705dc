/* Byte-level BPE and tokenizer.json loading against llama.cpp's tokenizer conformance vectors
 * (fixtures/tokenizers: each .inp string must encode, without BOS and without special-token
 * parsing, to exactly the ids on the matching .out line). */
#include "check.h"
#include "io/file.h"
#include "text/tokenizer.h"
#include "text/spm.h"
#include "text/bpe.h"
#include "text/vocab_gguf.h"
#include "text/tokenizer_json.h"
#include "text/pretokenize.h"
#include "core/utf8.h"
#include "core/unicode_norm.h"
#include "io/gguf.h"
#include "io/json.h"
#include "io/gguf_write.h"
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define SEPARATOR "\n__ggml_vocab_test__\n"

typedef struct vectors {
    char **text; size_t *len; int n;
    int32_t **ids; int *n_ids;
} vectors;

static void vectors_free(vectors *t) {
    for (int i = 0; i < t->n; i++) { free(t->text[i]); free(t->ids[i]); }
    free(t->text); free(t->len); free(t->ids); free(t->n_ids);
    memset(t, 0, sizeof *t);
}

/* Strings separated by SEPARATOR lines (a trailing separator ends the list) + one id line each. */
static int load_vectors(const char *inp_path, const char *out_path, vectors *t) {
    ts_error err;
    char *inp, *out;
    size_t inp_len, out_len;
    memset(t, 0, sizeof *t);
    if (file_read(inp_path, &inp, &inp_len, &err)) { printf("# %s\n", err.msg); return -1; }
    if (file_read(out_path, &out, &out_len, &err)) { printf("# %s\n", err.msg); free(inp); return -1; }
    size_t sep = strlen(SEPARATOR);
    if (inp_len >= sep && memcmp(inp + inp_len - sep, SEPARATOR, sep) == 0) inp_len -= sep;
    int cap = 64;
    t->text = malloc(cap * sizeof *t->text);
    t->len = malloc(cap * sizeof *t->len);
    t->ids = calloc(cap, sizeof *t->ids);
    t->n_ids = calloc(cap, sizeof *t->n_ids);
    size_t pos = 0;
    for (;;) {
        const char *hit = memmem(inp + pos, inp_len - pos, SEPARATOR, sep);
        size_t end = hit ? (size_t)(hit - inp) : inp_len;
        if (t->n == cap) { printf("# too many vectors\n"); break; }
        t->text[t->n] = malloc(end - pos + 1);
        memcpy(t->text[t->n], inp + pos, end - pos);
        t->text[t->n][end - pos] = '\0';
        t->len[t->n] = end - pos;
        t->n++;
        if (!hit) break;
        pos = end + sep;
    }
    char *line = out;
    for (int i = 0; i < t->n; i++) {
        char *nl = strchr(line, '\n');
        if (!nl) { printf("# %s: fewer lines than strings\n", out_path); break; }
        *nl = '\0';
        t->ids[i] = malloc((strlen(line) / 2 + 2) * sizeof *t->ids[i]);
        char *p = line, *e;
        for (;;) {
            long v = strtol(p, &e, 10);
            if (e == p) break;
            t->ids[i][t->n_ids[i]++] = (int32_t)v;
            p = e;
        }
        line = nl + 1;
    }
    free(inp);
    free(out);
    return 0;
}

/* Concatenated token bytes, for the round trip. */
static char *decode(const vocab *v, const int32_t *ids, int n, size_t *len) {
    size_t cap = 64, w = 0;
    char *s = malloc(cap);
    for (int i = 0; i < n; i++) {
        char buf[512];
        int k = tokenizer_token_bytes(v, ids[i], buf, sizeof buf);
        if (k < 0) k = 0;
        while (w + (size_t)k + 1 > cap) s = realloc(s, cap *= 2);
        memcpy(s + w, buf, (size_t)k);
        w += (size_t)k;
    }
    s[w] = '\0';
    *len = w;
    return s;
}

/* Encodes every vector through tokenizer_encode() (no BOS, no special parsing) and, as a second path,
 * bpe_encode directly; checks the counts and the decode round trip. */
static void check_vectors(const char *name, const vocab *v, const vectors *t) {
    int match = 0, direct_match = 0, round_trips = 0;
    char failing[512] = "";
    for (int i = 0; i < t->n; i++) {
        ts_error err;
        int32_t ids[4096], direct[4096];
        int n = tokenizer_encode(v, t->text[i], t->len[i], false, false, ids, 4096, &err);
        int nd = bpe_encode(v, t->text[i], t->len[i], direct, 4096, &err);
        bool ok = n == t->n_ids[i] && memcmp(ids, t->ids[i], (size_t)n * sizeof *ids) == 0;
        match += ok;
        direct_match += nd == t->n_ids[i] && memcmp(direct, t->ids[i], (size_t)nd * sizeof *ids) == 0;
        if (!ok) {
            size_t l = strlen(failing);
            snprintf(failing + l, sizeof failing - l, " %d", i);
            printf("#   %s[%d] expected:", name, i);
            for (int k = 0; k < t->n_ids[i]; k++) printf(" %d", t->ids[i][k]);
            printf("\n#   %s[%d] got:     ", name, i);
            if (n < 0) printf(" error: %s", err.msg);
            for (int k = 0; k < n && k < 4096; k++) printf(" %d", ids[k]);
            printf("\n");
        }
        if (n >= 0) {
            size_t dl;
            char *back = decode(v, ids, n, &dl);
            round_trips += dl == t->len[i] && memcmp(back, t->text[i], dl) == 0;
            free(back);
        }
    }
    CHECK(match == t->n, "%s: %d/%d vectors match%s%s", name, match, t->n, *failing ? "; failing:" : "", failing);
    CHECK(direct_match == t->n, "%s: bpe_encode directly: %d/%d vectors match", name, direct_match, t->n);
    CHECK(round_trips == t->n, "%s: decode(encode(s)) == s for %d/%d", name, round_trips, t->n);
}

static void test_gguf(const char *name) {
    char path[512], inp[600], out[600];
    snprintf(path, sizeof path, "%s/tokenizers/gguf/ggml-vocab-%s.gguf", fixtures_dir(), name);
    snprintf(inp, sizeof inp, "%s.inp", path);
    snprintf(out, sizeof out, "%s.out", path);
    ts_error err;
    gguf_file *g;
    vocab v;
    if (gguf_open(path, &g, &err)) { CHECK(0, "%s: open: %s", name, err.msg); return; }
    if (vocab_from_gguf(g, &v, &err)) { CHECK(0, "%s: vocab: %s", name, err.msg); gguf_close(g); return; }
    CHECK(v.kind == VOCAB_BPE_BYTES && bpe_prepare(&v, &err) == 0, "%s: byte-level BPE vocab, pre \"%s\", %d merges",
          name, v.pre ? v.pre : "(none)", v.n_merges);
    vectors t;
    if (load_vectors(inp, out, &t) == 0) check_vectors(name, &v, &t);
    vectors_free(&t);
    vocab_free(&v);
    gguf_close(g);
}

/* Copies fixtures/tokenizers/hf/NAME into a fresh temporary folder (tokenizer.json gunzipped). */
static int stage_hf(const char *name, char *dir, size_t cap) {
    snprintf(dir, cap, "/tmp/tessera_bpe_XXXXXX");
    if (!mkdtemp(dir)) return -1;
    char cmd[2048];
    snprintf(cmd, sizeof cmd,
             "gzip -dc '%s/tokenizers/hf/%s/tokenizer.json.gz' > '%s/tokenizer.json' && "
             "cp '%s/tokenizers/hf/%s/tokenizer_config.json' '%s/'",
             fixtures_dir(), name, dir, fixtures_dir(), name, dir);
    return system(cmd) == 0 ? 0 : -1;
}

static void unstage(const char *dir) {
    char p[600];
    snprintf(p, sizeof p, "%s/tokenizer.json", dir); unlink(p);
    snprintf(p, sizeof p, "%s/tokenizer_config.json", dir); unlink(p);
    rmdir(dir);
}

static double seconds_now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* ~100 KB of the vectors' text, encoded in one call. */
static void check_speed(const char *name, const vocab *v, const vectors *t) {
    size_t cap = 100 * 1024, w = 0;
    char *text = malloc(cap + 4096);
    while (w < cap)
        for (int i = 0; i < t->n && w < cap; i++) { memcpy(text + w, t->text[i], t->len[i]); w += t->len[i]; text[w++] = '\n'; }
    int32_t *ids = malloc(w * sizeof *ids);
    ts_error err;
    double t0 = seconds_now();
    int n = bpe_encode(v, text, w, ids, (int)w, &err);
    double dt = seconds_now() - t0;
    size_t dl = 0;
    char *back = n > 0 ? decode(v, ids, n, &dl) : NULL;
    CHECK(n > 0 && dl == w && memcmp(back, text, w) == 0,
          "%s: %zu bytes -> %d tokens in %.3f s (this build), round trip exact", name, w, n, dt);
    CHECK(dt < 5.0, "%s: 100 KB encodes in under 5 s even under sanitizers (%.3f s)", name, dt);
    free(back);
    free(ids);
    free(text);
}

static void test_hf(const char *name, int expect_kind) {
    char dir[256], path[300], inp[600], out[600];
    if (stage_hf(name, dir, sizeof dir)) { CHECK(0, "%s: staging the tokenizer in a temporary folder", name); return; }
    snprintf(path, sizeof path, "%s/tokenizer.json", dir);
    snprintf(inp, sizeof inp, "%s/tokenizers/hf/%s/tests.inp", fixtures_dir(), name);
    snprintf(out, sizeof out, "%s/tokenizers/hf/%s/tests.out", fixtures_dir(), name);
    ts_error err;
    vocab v;
    if (tokenizer_json_read(path, &v, &err)) {
        CHECK(0, "%s: tokenizer_json_read: %s", name, err.msg);
        unstage(dir);
        return;
    }
    CHECK(v.kind == expect_kind, "%s: tokenizer.json loads as kind %d (pre \"%s\", %d tokens, %d merges)", name,
          v.kind, v.pre ? v.pre : "", v.n, v.n_merges);
    vectors t;
    if (load_vectors(inp, out, &t) == 0) {
        check_vectors(name, &v, &t);
        check_speed(name, &v, &t);
    }
    if (strcmp(name, "qwen3") == 0) {
        CHECK(!v.add_bos && v.bos == -1 && v.eos == vocab_find(&v, "<|im_end|>", 10) && v.eos == 151645,
              "qwen3: tokenizer_config: no BOS, eos <|im_end|> (%d)", v.eos);
        CHECK(v.attr[151643] == TOKEN_CONTROL && v.attr[151667] == TOKEN_USER_DEFINED,
              "qwen3: special added tokens are control, others user-defined");
        int32_t ids[8];
        int n = tokenizer_encode(&v, "a<think>b", 9, false, false, ids, 8, &err);
        CHECK(n == 3 && ids[1] == 151667, "qwen3: user-defined <think> is split out of the text");
    } else {
        CHECK(v.add_bos && v.bos == 2 && !v.add_space_prefix && v.unk == 3 && v.attr[3] == TOKEN_UNKNOWN,
              "gemma3: add_bos, bos <bos> = 2, no space prefix, unk 3 (bos %d)", v.bos);
        /* The score-merging SPM encoder with merge-derived scores, for comparison. */
        int same = 0;
        for (int i = 0; i < t.n; i++) {
            int32_t a[4096];
            int n = spm_encode_segment(&v, t.text[i], t.len[i], false, a, 4096, &err);
            same += n == t.n_ids[i] && memcmp(a, t.ids[i], (size_t)n * sizeof *a) == 0;
        }
        printf("# gemma3: spm_encode (scores from merge ranks) matches %d/%d\n", same, t.n);
    }
    vectors_free(&t);
    vocab_free(&v);
    unstage(dir);
}

/* Pre-tokenizer splits worked out by hand from the regexes. */
static void expect_split(pretok_kind kind, const char *text, const char *expect) {
    uint32_t cps[256];
    size_t n = 0, len = strlen(text);
    for (size_t i = 0; i < len;) i += (size_t)utf8_decode(text + i, len - i, &cps[n++]);
    pretok_pieces p = { 0 };
    ts_error err;
    char got[1024] = "";
    if (pretokenize(kind, cps, n, &p, &err) == 0) {
        size_t start = 0, w = 0;
        for (size_t i = 0; i < p.n; i++) {
            got[w++] = '|';
            for (size_t k = start; k < p.ends[i]; k++) w += (size_t)utf8_encode(cps[k], got + w);
            start = p.ends[i];
        }
        got[w++] = '|';
        got[w] = '\0';
    }
    CHECK(strcmp(got, expect) == 0, "%s split of \"%s\": %s", pretokenize_name(kind), text, got);
    pretokenize_pieces_free(&p);
}

static void test_pretokenizers(void) {
    expect_split(PRETOK_LLAMA3, "I'M 12345 ok!!\n\n  x", "|I|'M| |123|45| ok|!!\n\n| | x|");
    expect_split(PRETOK_QWEN2, "ab12 'Ll", "|ab|1|2| '|Ll|");
    expect_split(PRETOK_STARCODER, "x 2024 y", "|x| |2|0|2|4| y|");
    expect_split(PRETOK_TEKKEN, "HelloWORLDfoo", "|Hello|WORLDfoo|");
    expect_split(PRETOK_GPT2, "a  b\t\tc  ", "|a| | b|\t|\t|c|  |");
    expect_split(PRETOK_FALCON, "x=1234567", "|x|=|123|456|7|");
    expect_split(PRETOK_DEEPSEEK_LLM, "ab 12\n  ", "|ab| |12|\n|  |");

    pretok_info info;
    ts_error err;
    CHECK(pretokenize_lookup("llama-bpe", &info, &err) == 0 && info.kind == PRETOK_LLAMA3 && info.ignore_merges,
          "llama-bpe is llama3 with ignore_merges");
    CHECK(pretokenize_lookup("smollm", &info, &err) == 0 && info.kind == PRETOK_STARCODER, "smollm splits like starcoder");
    CHECK(pretokenize_lookup("no-such-pre", &info, &err) == -1 && strstr(err.msg, "no-such-pre"),
          "unknown pre-tokenizer is an error naming it: %s", err.msg);
}

static void test_invalid_utf8(void) {
    char path[512];
    snprintf(path, sizeof path, "%s/tokenizers/gguf/ggml-vocab-gpt-2.gguf", fixtures_dir());
    ts_error err;
    gguf_file *g;
    vocab v;
    if (gguf_open(path, &g, &err) || vocab_from_gguf(g, &v, &err)) { CHECK(0, "gpt-2: %s", err.msg); return; }
    int32_t ids[16];
    const char bad[] = "ok \xC3\x28 no";
    CHECK(bpe_encode(&v, bad, sizeof bad - 1, ids, 16, &err) == -1 && strstr(err.msg, "UTF-8"),
          "invalid UTF-8 is an error: %s", err.msg);
    CHECK(bpe_encode(&v, "\xE2\x82", 2, ids, 16, &err) == -1, "a truncated character is an error");
    int n = bpe_encode(&v, "Hello world", 11, ids, 1, &err);
    CHECK(n == 2 && ids[0] == 15496, "max_out smaller than the count: returns the full count (%d)", n);
    free(v.pre);
    v.pre = strdup("no-such-pre");
    CHECK(bpe_encode(&v, "x", 1, ids, 16, &err) == -1 && strstr(err.msg, "no-such-pre"),
          "a vocabulary with an unknown pre-tokenizer refuses to encode: %s", err.msg);
    vocab_free(&v);
    gguf_close(g);
}

static int write_text(const char *path, const char *text) {
    FILE *f = fopen(path, "wb");
    if (!f) return -1;
    fputs(text, f);
    return fclose(f);
}

/* Small hand-written tokenizer.json files: merges as "a b" strings, and the refusals. */
static void test_json_forms(void) {
    char dir[] = "/tmp/tessera_bpe_XXXXXX", path[64];
    if (!mkdtemp(dir)) { CHECK(0, "mkdtemp"); return; }
    snprintf(path, sizeof path, "%s/tokenizer.json", dir);
    ts_error err;
    vocab v;
    int32_t ids[16];

    write_text(path, "{\"model\": {\"type\": \"BPE\", \"vocab\": {\"a\": 0, \"b\": 1, \"ab\": 2, \"\\u0120\": 3},"
                     " \"merges\": [\"a b\"]}, \"pre_tokenizer\": {\"type\": \"ByteLevel\"},"
                     " \"added_tokens\": [{\"id\": 4, \"content\": \"<s>\", \"special\": true}]}");
    if (tokenizer_json_read(path, &v, &err) == 0) {
        int n = tokenizer_encode(&v, "ab a", 4, false, false, ids, 16, &err);
        CHECK(v.kind == VOCAB_BPE_BYTES && v.pipeline && n == 3 && ids[0] == 2 && ids[1] == 3 &&
              ids[2] == 0, "\"a b\" merges, plain ByteLevel (GPT-2's split): \"ab a\" -> 2 3 0 (n %d)", n);
        CHECK(v.n == 5 && v.attr[4] == TOKEN_CONTROL && v.bos == -1, "added special token is control; no BOS named");
        vocab_free(&v);
    } else {
        CHECK(0, "small tokenizer.json: %s", err.msg);
    }

    /* A word that is a token: Llama 3 emits it whole (model.ignore_merges), Qwen2 merges (none here). */
    write_text(path, "{\"model\": {\"type\": \"BPE\", \"ignore_merges\": true, \"vocab\": {\"a\": 0, \"b\": 1, \"c\": 2, \"abc\": 3}, \"merges\": []}, \"pre_tokenizer\": {\"type\": \"Sequence\", \"pretokenizers\": [{\"type\": \"Split\", \"pattern\": {\"Regex\": \"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\\\r\\\\n\\\\p{L}\\\\p{N}]?\\\\p{L}+|\\\\p{N}{1,3}| ?[^\\\\s\\\\p{L}\\\\p{N}]+[\\\\r\\\\n]*|\\\\s*[\\\\r\\\\n]+|\\\\s+(?!\\\\S)|\\\\s+\"}, \"behavior\": \"Isolated\", \"invert\": false}, {\"type\": \"ByteLevel\", \"add_prefix_space\": false, \"trim_offsets\": true, \"use_regex\": false}]}}");
    if (tokenizer_json_read(path, &v, &err) == 0) {
        int n = bpe_encode(&v, "abc", 3, ids, 16, &err);
        CHECK(v.ignore_merges && n == 1 && ids[0] == 3, "llama3 regex, ignore_merges: whole-word token without merges (n %d)", n);
        vocab_free(&v);
    } else {
        CHECK(0, "llama3 tokenizer.json: %s", err.msg);
    }
    write_text(path, "{\"model\": {\"type\": \"BPE\", \"vocab\": {\"a\": 0, \"b\": 1, \"c\": 2, \"abc\": 3}, \"merges\": []}, \"pre_tokenizer\": {\"type\": \"Sequence\", \"pretokenizers\": [{\"type\": \"Split\", \"pattern\": {\"Regex\": \"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\\\r\\\\n\\\\p{L}\\\\p{N}]?\\\\p{L}+|\\\\p{N}| ?[^\\\\s\\\\p{L}\\\\p{N}]+[\\\\r\\\\n]*|\\\\s*[\\\\r\\\\n]+|\\\\s+(?!\\\\S)|\\\\s+\"}, \"behavior\": \"Isolated\", \"invert\": false}, {\"type\": \"ByteLevel\", \"add_prefix_space\": false, \"trim_offsets\": true, \"use_regex\": false}]}}");
    if (tokenizer_json_read(path, &v, &err) == 0) {
        int n = bpe_encode(&v, "abc", 3, ids, 16, &err);
        CHECK(!v.ignore_merges && n == 3 && ids[0] == 0 && ids[2] == 2, "qwen2 regex: no merges, three byte tokens (n %d)", n);
        vocab_free(&v);
    } else {
        CHECK(0, "qwen2 tokenizer.json: %s", err.msg);
    }

    /* Any split regex is run (no table of known ones); what the engine or the pipeline does not know
     * is refused by name */
    write_text(path, "{\"model\": {\"type\": \"BPE\", \"vocab\": {\"a\": 0, \"b\": 1, \"\\u0120\": 2, \"ab\": 3}, \"merges\": [\"a b\"]},"
                     " \"pre_tokenizer\": {\"type\": \"Sequence\", \"pretokenizers\": [{\"type\": \"Split\","
                     " \"pattern\": {\"Regex\": \"[a-z]\"}, \"behavior\": \"Isolated\", \"invert\": false},"
                     " {\"type\": \"ByteLevel\", \"use_regex\": false}]}}");
    if (tokenizer_json_read(path, &v, &err) == 0) {
        int n = bpe_encode(&v, "ab ba", 5, ids, 16, &err);
        CHECK(n == 5 && ids[0] == 0 && ids[1] == 1 && ids[2] == 2, "a new split regex [a-z] isolates every letter: no merge across pieces (n %d)", n);
        vocab_free(&v);
    } else {
        CHECK(0, "[a-z] split: %s", err.msg);
    }
    /* added tokens' lstrip / rstrip: the whitespace beside a match goes with the token */
    write_text(path, "{\"model\": {\"type\": \"BPE\", \"vocab\": {\"a\": 0, \"b\": 1, \"\\u0120\": 2, \"\\u0120b\": 3},"
                     " \"merges\": [\"\\u0120 b\"]}, \"pre_tokenizer\": {\"type\": \"ByteLevel\"}, \"added_tokens\": ["
                     "{\"id\": 4, \"content\": \"<m>\", \"special\": true, \"lstrip\": true},"
                     "{\"id\": 5, \"content\": \"<r>\", \"special\": true, \"rstrip\": true},"
                     "{\"id\": 6, \"content\": \"<p>\", \"special\": true}]}");
    if (tokenizer_json_read(path, &v, &err) == 0) {
        int32_t want[3][5] = { { 0, 4, 3 }, { 0, 2, 5, 1 }, { 0, 2, 6, 3 } };
        const int want_n[3] = { 3, 4, 4 };
        const char *texts[3] = { "a <m> b", "a <r> b", "a <p> b" };
        int good = 0;
        for (int i = 0; i < 3; i++) {
            int n = tokenizer_encode(&v, texts[i], strlen(texts[i]), false, true, ids, 16, &err);
            good += n == want_n[i] && memcmp(ids, want[i], (size_t)n * sizeof *ids) == 0;
        }
        CHECK(good == 3, "added tokens: lstrip takes the space before (a <m> b -> a <m> \u0120b), rstrip the one after, neither keeps both (%d/3)", good);
        vocab_free(&v);
    } else {
        CHECK(0, "lstrip/rstrip tokenizer.json: %s", err.msg);
    }
    static const struct { const char *json, *names; } refused[] = {
        { "\"pre_tokenizer\": {\"type\": \"Sequence\", \"pretokenizers\": [{\"type\": \"Split\", \"pattern\": {\"Regex\": \"(?<=a)b\"},"
          " \"behavior\": \"Isolated\"}, {\"type\": \"ByteLevel\", \"use_regex\": false}]}", "lookbehind" },
        { "\"pre_tokenizer\": {\"type\": \"Sequence\", \"pretokenizers\": [{\"type\": \"BertPreTokenizer\"}, {\"type\": \"ByteLevel\"}]}",
          "BertPreTokenizer" },
        { "\"normalizer\": {\"type\": \"BertNormalizer\"}, \"pre_tokenizer\": {\"type\": \"ByteLevel\"}", "BertNormalizer" },
        { "\"pre_tokenizer\": {\"type\": \"Sequence\", \"pretokenizers\": [{\"type\": \"Split\", \"pattern\": {\"Regex\": \"a\"},"
          " \"behavior\": \"Sideways\"}, {\"type\": \"ByteLevel\"}]}", "Sideways" },
    };
    for (size_t i = 0; i < sizeof refused / sizeof refused[0]; i++) {
        char json[1024];
        snprintf(json, sizeof json, "{\"model\": {\"type\": \"BPE\", \"vocab\": {\"a\": 0}, \"merges\": []}, %s}", refused[i].json);
        write_text(path, json);
        CHECK(tokenizer_json_read(path, &v, &err) == -1 && strstr(err.msg, path) && strstr(err.msg, refused[i].names),
              "refused by name (%s): %s", refused[i].names, err.msg);
    }

    /* fuse_unk: a run of characters the vocabulary lacks is one unknown token (SentencePiece-style, no
     * byte fallback) */
    for (int fuse = 0; fuse < 2; fuse++) {
        char json[512];
        snprintf(json, sizeof json, "{\"model\": {\"type\": \"BPE\", \"unk_token\": \"<unk>\", \"fuse_unk\": %s, \"vocab\": {\"<unk>\": 0,"
                 " \"a\": 1, \"b\": 2}, \"merges\": []}, \"decoder\": {\"type\": \"Fuse\"}}", fuse ? "true" : "false");
        write_text(path, json);
        if (tokenizer_json_read(path, &v, &err) == 0) {
            int n = tokenizer_encode(&v, "axyzb", 5, false, false, ids, 16, &err);
            CHECK(fuse ? n == 3 && ids[1] == 0 && ids[2] == 2 : n == 5 && ids[1] == 0 && ids[3] == 0,
                  "fuse_unk %s: \"axyzb\" -> %s (n %d)", fuse ? "true" : "false", fuse ? "a <unk> b" : "a <unk> <unk> <unk> b", n);
            vocab_free(&v);
        } else {
            CHECK(0, "fuse_unk tokenizer.json: %s", err.msg);
        }
    }
    static const struct { const char *model, *names; } refused_model[] = {
        { "\"dropout\": 0.1", "model.dropout" }, { "\"end_of_word_suffix\": \"</w>\"", "end_of_word_suffix" },
        { "\"continuing_subword_prefix\": \"##\"", "continuing_subword_prefix" },
    };
    for (size_t i = 0; i < sizeof refused_model / sizeof refused_model[0]; i++) {
        char json[512];
        snprintf(json, sizeof json, "{\"model\": {\"type\": \"BPE\", %s, \"vocab\": {\"a\": 0}, \"merges\": []}}", refused_model[i].model);
        write_text(path, json);
        CHECK(tokenizer_json_read(path, &v, &err) == -1 && strstr(err.msg, refused_model[i].names),
              "refused by name (%s): %s", refused_model[i].names, err.msg);
    }

    /* post-processors: a Sequence holding ByteLevel and TemplateProcessing (Llama 3's) gives BOS;
     * one that adds other tokens is refused by name */
    write_text(path, "{\"model\": {\"type\": \"BPE\", \"vocab\": {\"a\": 0, \"<s>\": 1}, \"merges\": []}, \"pre_tokenizer\": {\"type\": \"ByteLevel\"},"
                     " \"post_processor\": {\"type\": \"Sequence\", \"processors\": [{\"type\": \"ByteLevel\"}, {\"type\": \"TemplateProcessing\","
                     " \"single\": [{\"SpecialToken\": {\"id\": \"<s>\", \"type_id\": 0}}, {\"Sequence\": {\"id\": \"A\", \"type_id\": 0}}]}]}}");
    if (tokenizer_json_read(path, &v, &err) == 0) {
        CHECK(v.bos == 1 && v.add_bos, "post_processor Sequence [ByteLevel, TemplateProcessing]: BOS <s> added (bos %d)", v.bos);
        vocab_free(&v);
    } else {
        CHECK(0, "post_processor Sequence: %s", err.msg);
    }
    write_text(path, "{\"model\": {\"type\": \"BPE\", \"vocab\": {\"a\": 0}, \"merges\": []}, \"pre_tokenizer\": {\"type\": \"ByteLevel\"},"
                     " \"post_processor\": {\"type\": \"RobertaProcessing\", \"sep\": [\"</s>\", 2], \"cls\": [\"<s>\", 0]}}");
    CHECK(tokenizer_json_read(path, &v, &err) == -1 && strstr(err.msg, "RobertaProcessing"), "refused by name (RobertaProcessing): %s", err.msg);

    write_text(path, "{\"model\": {\"type\": \"Unigram\", \"vocab\": []}}");
    CHECK(tokenizer_json_read(path, &v, &err) == -1 && strstr(err.msg, "Unigram"),
          "a non-BPE model is refused: %s", err.msg);

    write_text(path, "{\"model\": ");
    CHECK(tokenizer_json_read(path, &v, &err) == -1 && strstr(err.msg, path), "truncated JSON: %s", err.msg);
    unlink(path);
    rmdir(dir);
}

/* fixtures/tokenizers/hf/NAME/encode.jsonl: {"text", "ids"} per line (Hugging Face's ids, no BOS) as
 * vectors; -1 when unreadable. */
static int load_jsonl(const char *name, vectors *t) {
    char path[600];
    snprintf(path, sizeof path, "%s/tokenizers/hf/%s/encode.jsonl", fixtures_dir(), name);
    size_t len;
    char *text = read_all(path, &len);
    if (!text) return -1;
    memset(t, 0, sizeof *t);
    int cap = 128;
    t->text = calloc((size_t)cap, sizeof *t->text); t->len = calloc((size_t)cap, sizeof *t->len);
    t->ids = calloc((size_t)cap, sizeof *t->ids); t->n_ids = calloc((size_t)cap, sizeof *t->n_ids);
    int rc = 0;
    for (char *line = text; *line && t->n < cap;) {
        char *eol = strchr(line, '\n');
        size_t n = eol ? (size_t)(eol - line) : strlen(line);
        json_value *root;
        ts_error err;
        if (n && json_parse(line, n, &root, &err) == 0) {
            const json_value *s = json_get(root, "text"), *ids = json_get(root, "ids");
            if (s && s->type == JSON_STRING && ids && ids->type == JSON_ARRAY) {
                int i = t->n++;
                t->text[i] = malloc(s->len + 1);
                memcpy(t->text[i], s->str, s->len);
                t->text[i][s->len] = '\0';
                t->len[i] = s->len;
                t->ids[i] = malloc((ids->n + 1) * sizeof *t->ids[i]);
                t->n_ids[i] = (int)ids->n;
                for (size_t k = 0; k < ids->n; k++) t->ids[i][k] = (int32_t)ids->items[k].integer;
            } else {
                rc = -1;
            }
            json_free(root);
        } else if (n) {
            rc = -1;
        }
        line = eol ? eol + 1 : line + n;
    }
    free(text);
    return rc;
}

/* text[0..*len) in NFC (malloc'd, *len updated), NULL on invalid UTF-8 */
static char *nfc_of(const char *text, size_t *len) {
    uint32_t *cps = malloc((*len + 1) * sizeof *cps), *norm = NULL;
    size_t n = 0, m = 0;
    for (size_t i = 0; i < *len;) {
        int k = utf8_decode(text + i, *len - i, &cps[n++]);
        if (!k) { free(cps); return NULL; }
        i += (size_t)k;
    }
    char *out = NULL;
    if (unicode_normalize(UNICODE_NFC, cps, n, &norm, &m) == 0 && (out = malloc(4 * m + 1))) {
        size_t w = 0;
        for (size_t i = 0; i < m; i++) w += (size_t)utf8_encode(norm[i], out + w);
        *len = w;
    }
    free(cps);
    free(norm);
    return out;
}

/* How many of the vectors v encodes (no BOS; added tokens in the text recognised, as Hugging Face
 * always does) to exactly their ids, the text first in NFC when nfc; the first mismatch is printed. */
static int matching(const char *name, const vocab *v, const vectors *t, bool nfc) {
    int ok = 0;
    int32_t ids[8192];
    for (int i = 0; i < t->n; i++) {
        ts_error err;
        char *text = t->text[i];
        size_t len = t->len[i];
        if (nfc) text = nfc_of(t->text[i], &len);
        int n = text ? tokenizer_encode(v, text, len, false, true, ids, 8192, &err) : -1;
        if (nfc) free(text);
        bool same = n == t->n_ids[i] && memcmp(ids, t->ids[i], (size_t)n * sizeof *ids) == 0;
        if (!same && ok == i) printf("# %s: string %d (%.60s) -> %d ids, expected %d\n", name, i, t->text[i], n, t->n_ids[i]);
        ok += same;
    }
    return ok;
}

/* The real tokenizers of the next families (Hugging Face's ids): llama3, gpt-oss (o200k: marks inside
 * words), DeepSeek V3 (an empty normalizer Sequence, three Split steps before ByteLevel). */
static void test_hf_jsonl(const char *name) {
    char dir[256], path[300];
    vectors t;
    if (load_jsonl(name, &t)) { CHECK(0, "%s: encode.jsonl readable", name); return; }
    if (stage_hf(name, dir, sizeof dir)) { CHECK(0, "%s: staging the tokenizer", name); vectors_free(&t); return; }
    snprintf(path, sizeof path, "%s/tokenizer.json", dir);
    vocab v;
    ts_error err;
    if (tokenizer_json_read(path, &v, &err) == 0) {
        int ok = matching(name, &v, &t, false);
        CHECK(t.n >= 60 && ok == t.n, "%s tokenizer.json: %d/%d encode.jsonl strings give Hugging Face's ids", name, ok, t.n);
        check_speed(name, &v, &t);
        vocab_free(&v);
    } else {
        CHECK(0, "%s: tokenizer_json_read: %s", name, err.msg);
    }
    unstage(dir);
    vectors_free(&t);
}

/* Qwen3.5's split: qwen3's tokenizer.json with its Split regex replaced by split-regex.txt (as the
 * fixture README says), against qwen35-split/encode.jsonl; then the same vocabulary written as a GGUF
 * with tokenizer.ggml.pre = "qwen35" gives the same ids. */
static void test_qwen35(void) {
    char dir[256], path[300], rpath[600];
    vectors t;
    if (load_jsonl("qwen35-split", &t)) { CHECK(0, "qwen35-split: encode.jsonl readable"); return; }
    if (stage_hf("qwen3", dir, sizeof dir)) { CHECK(0, "qwen35: staging qwen3's tokenizer"); vectors_free(&t); return; }
    snprintf(path, sizeof path, "%s/tokenizer.json", dir);
    snprintf(rpath, sizeof rpath, "%s/tokenizers/hf/qwen35-split/split-regex.txt", fixtures_dir());
    size_t jlen, rlen;
    char *json = read_all(path, &jlen), *re = read_all(rpath, &rlen);
    char *at = json ? strstr(json, "\"Regex\":") : NULL;
    if (!json || !re || !at) { CHECK(0, "qwen35: qwen3's tokenizer.json has a Split regex"); goto done; }
    while (rlen && (re[rlen - 1] == '\n' || re[rlen - 1] == '\r')) rlen--;
    /* the old regex string: from the quote after "Regex": to its closing quote */
    char *q0 = strchr(at + 8, '"'), *q1 = q0 + 1;
    while (*q1 && *q1 != '"') q1 += *q1 == '\\' ? 2 : 1;
    FILE *f = fopen(path, "wb");
    fwrite(json, 1, (size_t)(q0 + 1 - json), f);
    for (size_t i = 0; i < rlen; i++) {   /* JSON-escaped */
        if (re[i] == '\\' || re[i] == '"') fputc('\\', f);
        fputc(re[i], f);
    }
    fputs(q1, f);
    fclose(f);

    vocab v, g;
    ts_error err;
    if (tokenizer_json_read(path, &v, &err)) { CHECK(0, "qwen35-split tokenizer.json: %s", err.msg); goto done; }
    int ok = matching("qwen35-split", &v, &t, false);
    CHECK(t.n >= 60 && ok == t.n, "qwen35-split tokenizer.json: %d/%d encode.jsonl strings give Hugging Face's ids", ok, t.n);

    /* the same tokens and merges as a GGUF vocabulary named "qwen35" */
    gguf_writer *w = gguf_writer_new();
    gguf_writer_add_str(w, "general.architecture", "qwen2");
    gguf_writer_add_str(w, "tokenizer.ggml.model", "gpt2");
    gguf_writer_add_str(w, "tokenizer.ggml.pre", "qwen35");
    size_t *lens = malloc((size_t)v.n * sizeof *lens);
    int32_t *types = malloc((size_t)v.n * sizeof *types);
    for (int i = 0; i < v.n; i++) { lens[i] = v.len[i]; types[i] = v.attr[i]; }
    gguf_writer_add_str_array(w, "tokenizer.ggml.tokens", (const char *const *)v.text, lens, (uint64_t)v.n);
    gguf_writer_add_array(w, "tokenizer.ggml.token_type", GGUF_I32, types, (uint64_t)v.n);
    gguf_writer_add_str_array(w, "tokenizer.ggml.merges", (const char *const *)v.merges, NULL, (uint64_t)v.n_merges);
    char gpath[320];
    snprintf(gpath, sizeof gpath, "%s/qwen35.gguf", dir);
    int wrc = gguf_writer_write(w, gpath, &err);
    gguf_writer_free(w);
    free(lens);
    free(types);
    gguf_file *gf = NULL;
    if (wrc == 0 && gguf_open(gpath, &gf, &err) == 0 && vocab_from_gguf(gf, &g, &err) == 0) {
        /* a GGUF vocabulary has no normalizer (llama.cpp applies none): given the text in NFC, as
         * qwen3's tokenizer.json normalizes it, it must give the same ids */
        int gok = matching("qwen35 GGUF", &g, &t, true);
        CHECK(g.pipeline && gok == t.n, "GGUF tokenizer.ggml.pre = \"qwen35\" (the regex engine) on the NFC text: %d/%d strings give the tokenizer.json's ids",
              gok, t.n);
        vocab_free(&g);
    } else {
        CHECK(0, "qwen35 GGUF vocabulary: %s", err.msg);
    }
    if (gf) gguf_close(gf);
    unlink(gpath);
    vocab_free(&v);
done:
    free(json);
    free(re);
    unstage(dir);
    vectors_free(&t);
}


/* ---- SentencePiece-style pipelines (Metaspace, Prepend) on Gemma 3's vocabulary -------------------- */

/* json with the value of the first "key": (an object or null) replaced by value; malloc'd. */
static char *with_value(const char *json, const char *key, const char *value) {
    char pat[64];
    snprintf(pat, sizeof pat, "\"%s\":", key);
    const char *at = strstr(json, pat);
    if (!at) return NULL;
    const char *v = at + strlen(pat);
    while (*v == ' ' || *v == '\n') v++;
    const char *end = v;
    if (strncmp(v, "null", 4) == 0) end = v + 4;
    else {   /* a balanced object; strings skipped */
        int depth = 0;
        for (; *end; end++) {
            if (*end == '"') { for (end++; *end && *end != '"'; end += *end == '\\' ? 2 : 1) {} continue; }
            if (*end == '{') depth++;
            if (*end == '}' && --depth == 0) { end++; break; }
        }
    }
    size_t a = (size_t)(v - json), n = strlen(value), rest = strlen(end);
    char *out = malloc(a + n + rest + 1);
    memcpy(out, json, a);
    memcpy(out + a, value, n);
    memcpy(out + a + n, end, rest + 1);
    return out;
}

static int encode_all(const vocab *v, const char *text, int32_t *ids, int cap) {
    ts_error err;
    return tokenizer_encode(v, text, strlen(text), false, true, ids, cap, &err);
}

static bool same_ids(const int32_t *a, int na, const int32_t *b, int nb) {
    return na >= 0 && na == nb && memcmp(a, b, (size_t)na * sizeof *a) == 0;
}

/* Each variant is held to Gemma 3's own tokenizer.json (spaces replaced by U+2581, no prefix; its
 * ids are the fixture's, 46/46 above) on texts the variant's documented rewrite turns into: */
static void test_spm_pipelines(void) {
    char dir[256], path[300];
    if (stage_hf("gemma3", dir, sizeof dir)) { CHECK(0, "staging gemma3"); return; }
    snprintf(path, sizeof path, "%s/tokenizer.json", dir);
    size_t len;
    char *json = read_all(path, &len);
    vocab base;
    ts_error err;
    if (!json || tokenizer_json_read(path, &base, &err)) { CHECK(0, "gemma3 tokenizer.json"); free(json); unstage(dir); return; }
    enum { ALWAYS, FIRST, NEVER, SPLIT, LEGACY, N_VARIANTS };
    static const char *const pre[N_VARIANTS] = {
        "{\"type\": \"Metaspace\", \"replacement\": \"\u2581\", \"prepend_scheme\": \"always\", \"split\": false}",
        "{\"type\": \"Metaspace\", \"replacement\": \"\u2581\", \"prepend_scheme\": \"first\", \"split\": false}",
        "{\"type\": \"Metaspace\", \"replacement\": \"\u2581\", \"prepend_scheme\": \"never\", \"split\": false}",
        "{\"type\": \"Metaspace\", \"replacement\": \"\u2581\", \"add_prefix_space\": true}",   /* older form: always, split */
        "null" };
    static const char legacy_norm[] = "{\"type\": \"Sequence\", \"normalizers\": [{\"type\": \"Prepend\", \"prepend\": \"\u2581\"},"
                                      " {\"type\": \"Replace\", \"pattern\": {\"String\": \" \"}, \"content\": \"\u2581\"}]}";
    vocab var[N_VARIANTS];
    int loaded = 0;
    for (int i = 0; i < N_VARIANTS; i++) {
        char *a = with_value(json, "normalizer", i == LEGACY ? legacy_norm : "null");
        char *b = a ? with_value(a, "pre_tokenizer", pre[i]) : NULL;
        if (b) write_text(path, b);
        loaded += b && tokenizer_json_read(path, &var[i], &err) == 0;
        if (!b || loaded != i + 1) CHECK(0, "gemma3 variant %d: %s", i, b ? err.msg : "edit");
        free(a);
        free(b);
        if (loaded != i + 1) break;
    }
    static const char *const texts[] = { "Hello world", " Hello  world", "x  y   z ", "a-b,c d", "\u65e5\u672c\u8a9e \u30c6\u30ad\u30b9\u30c8",
                                         "  two leading", "caf\u00e9 na\u00efve \U0001F600 ok", "end " };
    const int n_texts = (int)(sizeof texts / sizeof texts[0]);
    int agree[N_VARIANTS + 2] = { 0 };
    int32_t got[512], want[512], part[512];
    for (int t = 0; loaded == N_VARIANTS && t < n_texts; t++) {
        char buf[256];
        const char *s = texts[t];
        /* always: a space in front unless the text starts with one; never: the text; the legacy
         * Prepend normalizer: a space in front always; first: as always at the start of the input */
        snprintf(buf, sizeof buf, "%s%s", s[0] == ' ' ? "" : " ", s);
        int nw = encode_all(&base, buf, want, 512);
        agree[ALWAYS] += same_ids(got, encode_all(&var[ALWAYS], s, got, 512), want, nw);
        agree[FIRST] += same_ids(got, encode_all(&var[FIRST], s, got, 512), want, nw);
        agree[NEVER] += same_ids(got, encode_all(&var[NEVER], s, got, 512), want, encode_all(&base, s, want, 512));
        snprintf(buf, sizeof buf, " %s", s);
        agree[LEGACY] += same_ids(got, encode_all(&var[LEGACY], s, got, 512), want, encode_all(&base, buf, want, 512));
        /* split: each word with its leading U+2581 on its own (MergedWithNext), no merge across */
        snprintf(buf, sizeof buf, "%s%s", s[0] == ' ' ? "" : " ", s);
        nw = 0;
        for (const char *w = buf; *w;) {
            const char *e = w + 1;
            while (*e && *e != ' ') e++;
            char word[256];
            snprintf(word, sizeof word, "%.*s", (int)(e - w), w);
            int k = encode_all(&base, word, part, 512);
            if (k > 0) { memcpy(want + nw, part, (size_t)k * sizeof *part); nw += k; }
            w = e;
        }
        agree[SPLIT] += same_ids(got, encode_all(&var[SPLIT], s, got, 512), want, nw);
        /* after a special token: "first" adds nothing, "always" adds its space again */
        snprintf(buf, sizeof buf, "<start_of_turn>%s", s);
        int sot = vocab_find(&base, "<start_of_turn>", 15);
        want[0] = sot;
        nw = 1 + encode_all(&base, s, want + 1, 511);
        agree[N_VARIANTS] += same_ids(got, encode_all(&var[FIRST], buf, got, 512), want, nw);
        int na = encode_all(&var[ALWAYS], s, want + 1, 511);
        agree[N_VARIANTS + 1] += same_ids(got, encode_all(&var[ALWAYS], buf, got, 512), want, na + 1);
    }
    /* Gemma's "\t" and "\n" are added tokens: the text between them is a section of its own, and
     * "always" (like the Prepend normalizer) puts a space in front of every section */
    {
        int32_t tab = vocab_find(&base, "\t", 1), w1[8], w2[8];
        int n1 = encode_all(&base, " a", w1, 8), n2 = encode_all(&base, " b", w2, 8);
        int ng = loaded == N_VARIANTS ? encode_all(&var[ALWAYS], "a\tb", got, 512) : -1;
        CHECK(tab >= 0 && n1 == 1 && n2 == 1 && ng == 3 && got[0] == w1[0] && got[1] == tab && got[2] == w2[0],
              "gemma3 vocabulary: Metaspace always prefixes each section between added tokens (a<tab>b -> \u2581a <tab> \u2581b)");
        ng = loaded == N_VARIANTS ? encode_all(&var[FIRST], "a\tb", got, 512) : -1;
        n2 = encode_all(&base, "b", w2, 8);
        CHECK(ng == 3 && got[0] == w1[0] && got[1] == tab && got[2] == w2[0],
              "gemma3 vocabulary: Metaspace first prefixes only the section at the start of the input");
    }
    static const char *const what[N_VARIANTS + 2] = {
        "Metaspace always = a space put in front unless there is one", "Metaspace first = always, at the start of the input",
        "Metaspace never = Gemma's Replace alone", "Metaspace with split = each word encoded apart",
        "Prepend + Replace normalizers = a space put in front always", "Metaspace first adds no space after a special token",
        "Metaspace always adds it after a special token too" };
    for (int i = 0; i < N_VARIANTS + 2; i++)
        CHECK(loaded == N_VARIANTS && agree[i] == n_texts, "gemma3 vocabulary: %s (%d/%d texts)", what[i], agree[i], n_texts);
    for (int i = 0; i < loaded; i++) vocab_free(&var[i]);

    /* what a SentencePiece-style file may not hold is refused by name */
    static const struct { const char *key, *value, *names; } refused[] = {
        { "pre_tokenizer", "{\"type\": \"Sequence\", \"pretokenizers\": [{\"type\": \"Digits\"}, {\"type\": \"Metaspace\"}]}", "Metaspace pre-tokenizer after" },
        { "pre_tokenizer", "{\"type\": \"Metaspace\", \"prepend_scheme\": \"sometimes\"}", "sometimes" },
        { "decoder", "{\"type\": \"WordPiece\", \"prefix\": \"##\"}", "WordPiece" },
        { "decoder", "{\"type\": \"Replace\", \"pattern\": {\"String\": \"_\"}, \"content\": \" \"}", "Replace" },
        { "normalizer", "{\"type\": \"Precompiled\", \"precompiled_charsmap\": \"!!\"}", "precompiled_charsmap is not valid base64" },
    };
    for (size_t i = 0; i < sizeof refused / sizeof refused[0]; i++) {
        char *a = with_value(json, refused[i].key, refused[i].value);
        vocab v;
        if (a) write_text(path, a);
        CHECK(a && tokenizer_json_read(path, &v, &err) == -1 && strstr(err.msg, refused[i].names),
              "gemma3 with %s %s: refused by name: %s", refused[i].key, refused[i].names, err.msg);
        free(a);
    }

    /* a Precompiled normalizer (the charsmap SentencePiece compiled from tests/unit/precompiled_vectors.txt's
     * rules: U+FB01 -> "fi", "e" U+0301 -> U+00E9, U+FF21 -> "A") before Gemma's Replace: the ids of
     * the text those rules give */
    size_t vlen;
    char *vec = read_all("tests/unit/precompiled_vectors.txt", &vlen);
    char *map = vec ? strstr(vec, "\ncharsmap ") : NULL;
    if (map) {
        map += 10;
        *strchr(map, '\n') = '\0';
        char *norm = malloc(strlen(map) + 256);
        sprintf(norm, "{\"type\": \"Sequence\", \"normalizers\": [{\"type\": \"Precompiled\", \"precompiled_charsmap\": \"%s\"},"
                      " {\"type\": \"Replace\", \"pattern\": {\"String\": \" \"}, \"content\": \"\u2581\"}]}", map);
        char *a = with_value(json, "normalizer", norm);
        vocab v;
        if (a) write_text(path, a);
        if (a && tokenizer_json_read(path, &v, &err) == 0) {
            int ng = encode_all(&v, "\uFB01ne cafe\u0301 \uFF21", got, 512);
            int nw = encode_all(&base, "fine caf\u00e9 A", want, 512);
            int nr = encode_all(&base, "\uFB01ne cafe\u0301 \uFF21", part, 512);
            CHECK(same_ids(got, ng, want, nw) && !same_ids(part, nr, want, nw),
                  "gemma3 vocabulary with a Precompiled normalizer: the ligature, the decomposed accent and the full-width letter map as its rules say");
            vocab_free(&v);
        } else {
            CHECK(0, "gemma3 with a Precompiled normalizer: %s", a ? err.msg : "edit");
        }
        free(a);
        free(norm);
    } else {
        CHECK(0, "tests/unit/precompiled_vectors.txt has its charsmap");
    }
    free(vec);
    vocab_free(&base);
    free(json);
    unstage(dir);
}

/* Added tokens marked "normalized" are found in the normalized text (Lowercase here), the others in
 * the input, as Hugging Face's AddedVocabulary does. */
static void test_normalized_added_tokens(void) {
    char dir[] = "/tmp/tessera_bpe_XXXXXX", path[64];
    if (!mkdtemp(dir)) { CHECK(0, "mkdtemp"); return; }
    snprintf(path, sizeof path, "%s/tokenizer.json", dir);
    ts_error err;
    int32_t ids[32];
    for (int normalized = 0; normalized < 2; normalized++) {
        char json[1024];
        snprintf(json, sizeof json,
                 "{\"model\": {\"type\": \"BPE\", \"vocab\": {\"a\": 0, \"b\": 1, \"c\": 2, \"d\": 3, \"\\u0120\": 4}, \"merges\": []},"
                 " \"normalizer\": {\"type\": \"Lowercase\"}, \"pre_tokenizer\": {\"type\": \"ByteLevel\"},"
                 " \"decoder\": {\"type\": \"ByteLevel\"}, \"added_tokens\": ["
                 "{\"id\": 5, \"content\": \"AB\", \"special\": false, \"normalized\": %s},"
                 "{\"id\": 6, \"content\": \"CD\", \"special\": false, \"normalized\": false}]}", normalized ? "true" : "false");
        write_text(path, json);
        vocab v;
        if (tokenizer_json_read(path, &v, &err)) { CHECK(0, "normalized added tokens: %s", err.msg); continue; }
        /* "ab AB cd CD": CD only where the input has it; AB (lowercased to "ab") at both "ab"s when
         * normalized, only at the input's "AB" when not */
        static const int32_t want_norm[] = { 5, 4, 5, 4, 2, 3, 4, 6 }, want_raw[] = { 0, 1, 4, 5, 4, 2, 3, 4, 6 };
        int n = tokenizer_encode(&v, "ab AB cd CD", 11, false, false, ids, 32, &err);
        CHECK(normalized ? same_ids(ids, n, want_norm, 8) : same_ids(ids, n, want_raw, 9),
              "added token \"AB\" with normalized %s: %s", normalized ? "true matches the lowercased text twice" : "false matches the input once",
              n < 0 ? err.msg : "");
        vocab_free(&v);
    }
    unlink(path);
    rmdir(dir);
}

int main(void) {
    test_pretokenizers();
    test_gguf("gpt-2");
    test_gguf("falcon");
    test_gguf("deepseek-coder");
    test_gguf("deepseek-llm");
    test_invalid_utf8();
    test_json_forms();
    test_hf("qwen3", VOCAB_BPE_BYTES);
    test_hf("gemma3", VOCAB_SPM);
    test_hf_jsonl("llama3");
    test_hf_jsonl("gptoss");
    test_hf_jsonl("deepseek_v3");
    test_qwen35();
    test_spm_pipelines();
    test_normalized_added_tokens();
    CHECK_EXIT();
}
