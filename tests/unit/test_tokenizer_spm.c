/* SentencePiece-style tokenizer: a hand-built vocabulary with merges worked out by hand, llama.cpp's
 * own SPM test vectors (llama-spm, phi-3), the prompts of the reference runs, the llama.cpp golden
 * text, round trips, and the error cases (invalid UTF-8, unknown or broken tokenizer metadata). */
#include "check.h"
#include "text/tokenizer.h"
#include "text/spm.h"
#include "text/vocab_gguf.h"
#include "io/gguf.h"
#include "io/gguf_write.h"
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ---------------------------------------------------------------------------------------------- */
/* helpers                                                                                          */


/* Little-endian int32 token file. */
static int32_t *read_tokens(const char *path, int *n) {
    size_t len;
    char *raw = read_all(path, &len);
    if (!raw) return NULL;
    *n = (int)(len / 4);
    int32_t *t = malloc((size_t)(*n > 0 ? *n : 1) * sizeof *t);
    for (int i = 0; i < *n; i++) {
        const unsigned char *b = (const unsigned char *)raw + 4 * i;
        t[i] = (int32_t)((uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 | (uint32_t)b[3] << 24);
    }
    free(raw);
    return t;
}

static bool same_ids(const int32_t *a, int na, const int32_t *b, int nb) {
    if (na != nb) return false;
    for (int i = 0; i < na; i++) if (a[i] != b[i]) return false;
    return true;
}

static void format_ids(const int32_t *ids, int n, char *buf, size_t cap) {
    size_t w = 0;
    buf[0] = '\0';
    for (int i = 0; i < n && w + 16 < cap; i++) w += (size_t)snprintf(buf + w, cap - w, " %d", ids[i]);
}

/* Concatenated tokenizer_token_bytes of ids[0..n); returns a malloc'd buffer and its length. */
static char *detokenize(const vocab *v, const int32_t *ids, int n, size_t *len) {
    size_t cap = 64, w = 0;
    char *out = malloc(cap);
    for (int i = 0; i < n; i++) {
        char piece[256];
        int k = tokenizer_token_bytes(v, ids[i], piece, sizeof piece);
        if (k < 0) k = 0;
        while (w + (size_t)k > cap) out = realloc(out, cap *= 2);
        memcpy(out + w, piece, (size_t)k);
        w += (size_t)k;
    }
    *len = w;
    return out;
}

static bool load_gguf_vocab(const char *rel, vocab *v, ts_error *err) {
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", fixtures_dir(), rel);
    gguf_file *g;
    if (gguf_open(path, &g, err)) return false;
    int rc = vocab_from_gguf(g, v, err);
    gguf_close(g);
    return rc == 0;
}

/* ---------------------------------------------------------------------------------------------- */
/* a hand-built vocabulary                                                                          */

#define SP "\xE2\x96\x81"   /* U+2581, SentencePiece's space mark */

typedef struct hand_token { const char *text; float score; int attr; } hand_token;

static void build_vocab(vocab *v, const hand_token *toks, int n, bool with_byte_tokens) {
    memset(v, 0, sizeof *v);
    v->kind = VOCAB_SPM;
    v->n = n + (with_byte_tokens ? 256 : 0);
    v->text = calloc((size_t)v->n, sizeof *v->text);
    v->len = calloc((size_t)v->n, sizeof *v->len);
    v->score = calloc((size_t)v->n, sizeof *v->score);
    v->attr = calloc((size_t)v->n, sizeof *v->attr);
    for (int i = 0; i < v->n; i++) {
        char name[16];
        const char *s = name;
        if (i < n) { s = toks[i].text; v->score[i] = toks[i].score; v->attr[i] = (uint8_t)toks[i].attr; }
        else { snprintf(name, sizeof name, "<0x%02X>", (unsigned)(i - n) & 0xFFu); v->attr[i] = TOKEN_BYTE; }
        v->text[i] = strdup(s);
        v->len[i] = (uint32_t)strlen(s);
    }
    v->unk = 0; v->bos = 1; v->eos = 2; v->eot = -1; v->pad = -1;
    v->add_bos = true;
    v->add_space_prefix = true;
    ts_error err;
    if (vocab_build_hash(v, &err)) { printf("# %s\n", err.msg); exit(1); }
}

/* Encodes text and compares with the expected ids (which were worked out by hand). */
static void expect_spm(const vocab *v, const char *what, const char *text, const int32_t *want, int n_want) {
    int32_t ids[64];
    ts_error err = { "" };
    int n = spm_encode(v, text, strlen(text), ids, 64, &err);
    char got[512], exp[512];
    format_ids(ids, n > 0 ? n : 0, got, sizeof got);
    format_ids(want, n_want, exp, sizeof exp);
    CHECK(n >= 0 && same_ids(ids, n, want, n_want), "hand vocab: %s -> [%s ] (got [%s ] %s)", what, exp, got,
          err.msg);
}

static void test_hand_vocab(void) {
    enum { UNK, BOS, EOS, SPACE, A, B, C, AB, BC, SP_A, SP_AB, ABC, CC, HELLO_TAG, X };
    static const hand_token toks[] = {
        [UNK] = { "<unk>", 0, TOKEN_UNKNOWN }, [BOS] = { "<s>", 0, TOKEN_CONTROL },
        [EOS] = { "</s>", 0, TOKEN_CONTROL },
        [SPACE] = { SP, -1, TOKEN_NORMAL }, [A] = { "a", -2, TOKEN_NORMAL },
        [B] = { "b", -2, TOKEN_NORMAL }, [C] = { "c", -2, TOKEN_NORMAL },
        [AB] = { "ab", -5, TOKEN_NORMAL }, [BC] = { "bc", -4, TOKEN_NORMAL },
        [SP_A] = { SP "a", -3, TOKEN_NORMAL }, [SP_AB] = { SP "ab", -6, TOKEN_NORMAL },
        [ABC] = { "abc", -7, TOKEN_NORMAL }, [CC] = { "cc", -4, TOKEN_NORMAL },
        [HELLO_TAG] = { "<tag>", 0, TOKEN_USER_DEFINED }, [X] = { "x", -2, TOKEN_NORMAL },
    };
    vocab v;
    build_vocab(&v, toks, (int)(sizeof toks / sizeof toks[0]), true);
    const int byte0 = (int)(sizeof toks / sizeof toks[0]);

    /* "ab": ▁ a b. Pairs ▁a (-3) and ab (-5): ▁a first, then ▁a+b = ▁ab (-6). */
    expect_spm(&v, "\"ab\"", "ab", (int32_t[]){ SP_AB }, 1);
    /* "bc" without prefix pairs: ▁b is no token; bc (-4) merges. */
    expect_spm(&v, "\"bc\"", "bc", (int32_t[]){ SPACE, BC }, 2);
    /* "abc": ▁a (-3) > bc (-4) > ab (-5): ▁a, then bc; ▁a+bc is no token. */
    expect_spm(&v, "\"abc\"", "abc", (int32_t[]){ SP_A, BC }, 2);
    /* Tie: "ccc" pairs cc at 0 and 1 score equally; the leftmost merges, leaving cc c. */
    expect_spm(&v, "\"ccc\" (tie -> leftmost)", "ccc", (int32_t[]){ SPACE, CC, C }, 3);
    /* Spaces become ▁: "x a" = ▁ x ▁ a -> ▁ x ▁a. */
    expect_spm(&v, "\"x a\"", "x a", (int32_t[]){ SPACE, X, SP_A }, 3);
    /* Byte fallback: é = C3 A9 is no token. */
    expect_spm(&v, "\"\xC3\xA9\" (byte fallback)", "\xC3\xA9",
               (int32_t[]){ SPACE, byte0 + 0xC3, byte0 + 0xA9 }, 3);
    expect_spm(&v, "\"\" (empty gives nothing)", "", NULL, 0);

    /* Without the dummy prefix. */
    v.add_space_prefix = false;
    expect_spm(&v, "\"ab\" without space prefix", "ab", (int32_t[]){ AB }, 1);
    v.add_space_prefix = true;

    /* Truncated output still reports the full count. */
    int32_t two[2];
    ts_error err;
    int n = spm_encode(&v, "x a x", 5, two, 2, &err);
    CHECK(n == 5 && two[0] == SPACE && two[1] == X, "hand vocab: max_out 2 writes 2 ids and returns the full count 5 (got %d)", n);

    /* tokenizer_encode(): BOS, special tokens, dummy prefix after a special token. */
    int32_t ids[32];
    const char *text = "ab</s>ab";
    n = tokenizer_encode(&v, text, strlen(text), true, true, ids, 32, &err);
    CHECK(same_ids(ids, n, (int32_t[]){ BOS, SP_AB, EOS, SP_AB }, 4),
          "tokenize: BOS + parse_special splits </s> and re-adds the dummy prefix after it (n=%d)", n);
    n = tokenizer_encode(&v, text, strlen(text), false, false, ids, 32, &err);
    CHECK(n > 4 && ids[0] == SP_AB, "tokenize: without parse_special </s> is plain text (%d ids)", n);
    bool no_eos = true;
    for (int i = 0; i < n && i < 32; i++) if (ids[i] == EOS) no_eos = false;
    CHECK(no_eos, "tokenize: without parse_special no control id appears");
    text = "x<tag>x";
    n = tokenizer_encode(&v, text, strlen(text), false, false, ids, 32, &err);
    CHECK(same_ids(ids, n, (int32_t[]){ SPACE, X, HELLO_TAG, SPACE, X }, 5),
          "tokenize: user-defined tokens split even without parse_special (as llama.cpp) (n=%d)", n);
    v.bos = -1;
    n = tokenizer_encode(&v, "ab", 2, true, false, ids, 32, &err);
    CHECK(same_ids(ids, n, (int32_t[]){ SP_AB }, 1), "tokenize: add_bos with no BOS id adds nothing");
    v.bos = BOS;

    /* Invalid UTF-8. */
    err.msg[0] = '\0';
    n = tokenizer_encode(&v, "ab\xC3(", 4, true, true, ids, 32, &err);
    CHECK(n == -1 && strstr(err.msg, "invalid UTF-8 at byte 2"), "tokenize: invalid UTF-8 is an error (\"%s\")", err.msg);
    n = tokenizer_encode(&v, "\xED\xA0\x80", 3, false, false, ids, 32, &err);   /* a surrogate */
    CHECK(n == -1, "tokenize: an encoded surrogate is invalid UTF-8");

    /* Detokenization of each kind of token. */
    char buf[16];
    int k = tokenizer_token_bytes(&v, SP_AB, buf, sizeof buf);
    CHECK(k == 3 && memcmp(buf, " ab", 3) == 0, "tokenizer_token_bytes: ▁ab -> \" ab\"");
    k = tokenizer_token_bytes(&v, byte0 + 0x0A, buf, sizeof buf);
    CHECK(k == 1 && buf[0] == '\n', "tokenizer_token_bytes: <0x0A> -> newline byte");
    k = tokenizer_token_bytes(&v, EOS, buf, sizeof buf);
    CHECK(k == 0, "tokenizer_token_bytes: control token -> \"\"");
    k = tokenizer_token_bytes(&v, UNK, buf, sizeof buf);
    CHECK(k == 0, "tokenizer_token_bytes: unknown token -> \"\" (llama.cpp, special=false)");
    k = tokenizer_token_bytes(&v, HELLO_TAG, buf, sizeof buf);
    CHECK(k == 5 && memcmp(buf, "<tag>", 5) == 0, "tokenizer_token_bytes: user-defined token -> its text");
    k = tokenizer_token_bytes(&v, SP_AB, buf, 2);
    CHECK(k == -1, "tokenizer_token_bytes: too small a buffer -> -1");
    vocab_free(&v);

    /* No byte tokens: a character outside the vocabulary becomes <unk>. */
    build_vocab(&v, toks, (int)(sizeof toks / sizeof toks[0]), false);
    expect_spm(&v, "\"q\" without byte tokens -> unk", "q", (int32_t[]){ SPACE, UNK }, 2);
    vocab_free(&v);
}

/* GPT-2 byte-level detokenization (the encoder is the BPE work's; the reverse map is ours). */
static void test_bpe_detok(void) {
    static const hand_token toks[] = {
        { "\xC4\xA0hello", 0, TOKEN_NORMAL },   /* Ġhello = " hello" */
        { "\xC4\x8A", 0, TOKEN_NORMAL },         /* Ċ = '\n' (byte 0x0A is the 11th unprintable) */
        { "\xC3\xA9", 0, TOKEN_NORMAL },         /* é stands for byte 0xE9 */
        { "\xC5\x83", 0, TOKEN_NORMAL },         /* U+0143 = the 68th unprintable: 0xAD */
        { "\xC4\xBF", 0, TOKEN_NORMAL },         /* U+013F = 64th: 0x7F + 30 = 0x9D */
        { "<|endoftext|>", 0, TOKEN_CONTROL },
    };
    vocab v;
    build_vocab(&v, toks, 6, false);
    v.kind = VOCAB_BPE_BYTES;
    char buf[32];
    int k = tokenizer_token_bytes(&v, 0, buf, sizeof buf);
    CHECK(k == 6 && memcmp(buf, " hello", 6) == 0, "bpe detok: \xC4\xA0hello -> \" hello\"");
    k = tokenizer_token_bytes(&v, 1, buf, sizeof buf);
    CHECK(k == 1 && buf[0] == '\n', "bpe detok: \xC4\x8A -> newline");
    k = tokenizer_token_bytes(&v, 2, buf, sizeof buf);
    CHECK(k == 1 && (unsigned char)buf[0] == 0xE9, "bpe detok: \xC3\xA9 -> byte 0xE9");
    k = tokenizer_token_bytes(&v, 3, buf, sizeof buf);
    CHECK(k == 1 && (unsigned char)buf[0] == 0xAD, "bpe detok: U+0143 -> byte 0xAD");
    k = tokenizer_token_bytes(&v, 4, buf, sizeof buf);
    CHECK(k == 1 && (unsigned char)buf[0] == 0x9D, "bpe detok: U+013F -> byte 0x9D");
    k = tokenizer_token_bytes(&v, 5, buf, sizeof buf);
    CHECK(k == 0, "bpe detok: control token -> \"\"");
    vocab_free(&v);
}

/* ---------------------------------------------------------------------------------------------- */
/* llama.cpp's test vectors                                                                         */

static void test_vectors(const char *name) {
    char path[1024];
    const char *dir = fixtures_dir();
    vocab v;
    ts_error err = { "" };
    snprintf(path, sizeof path, "tokenizers/gguf/ggml-vocab-%s.gguf", name);
    if (!load_gguf_vocab(path, &v, &err)) {
        CHECK(0, "%s: load vocabulary (%s)", name, err.msg);
        return;
    }
    CHECK(v.kind == VOCAB_SPM && v.n > 0 && v.bos >= 0, "%s: SPM vocabulary, %d tokens, bos %d eos %d unk %d eot %d, space prefix %d",
          name, v.n, v.bos, v.eos, v.unk, v.eot, v.add_space_prefix);

    size_t n_inp, n_out;
    snprintf(path, sizeof path, "%s/tokenizers/gguf/ggml-vocab-%s.gguf.inp", dir, name);
    char *inp = read_all(path, &n_inp);
    snprintf(path, sizeof path, "%s/tokenizers/gguf/ggml-vocab-%s.gguf.out", dir, name);
    char *out = read_all(path, &n_out);
    if (!inp || !out) { CHECK(0, "%s: read .inp/.out", name); free(inp); free(out); vocab_free(&v); return; }

    /* Each case is written as TEXT "\n__ggml_vocab_test__\n"; the .out has one line per case. */
    static const char sep[] = "\n__ggml_vocab_test__\n";
    const size_t sep_len = sizeof sep - 1;
    size_t pos = 0, out_pos = 0;
    int n_cases = 0, n_pass = 0, n_round_trip = 0;
    int32_t *ids = malloc(65536 * sizeof *ids), want[4096];
    while (pos < n_inp) {
        const char *hit = memmem(inp + pos, n_inp - pos, sep, sep_len);
        if (!hit) break;
        const char *text = inp + pos;
        size_t len = (size_t)(hit - text);
        pos = (size_t)(hit - inp) + sep_len;

        char *line_end = memchr(out + out_pos, '\n', n_out - out_pos);
        if (!line_end) { CHECK(0, "%s: .out has fewer lines than .inp has cases", name); break; }
        int n_want = 0;
        for (char *p = out + out_pos; p < line_end && n_want < 4096;) {
            while (p < line_end && *p == ' ') p++;
            if (p >= line_end) break;
            want[n_want++] = (int32_t)strtol(p, &p, 10);
        }
        out_pos = (size_t)(line_end - out) + 1;

        int n = tokenizer_encode(&v, text, len, false, false, ids, 65536, &err);
        bool ok = n >= 0 && same_ids(ids, n, want, n_want);
        char shown[64];
        size_t show = len < 40 ? len : 40;
        for (size_t i = 0; i < show; i++) shown[i] = text[i] == '\n' ? '|' : text[i];
        shown[show] = '\0';
        if (!ok) {
            char got[1024], exp[1024];
            format_ids(ids, n > 0 ? n : 0, got, sizeof got);
            format_ids(want, n_want, exp, sizeof exp);
            printf("# %s case %d \"%s\": want [%s ] got [%s ] %s\n", name, n_cases, shown, exp, got,
                   n < 0 ? err.msg : "");
        }
        CHECK(ok, "%s vector %d: \"%s\" (%d ids)", name, n_cases, shown, n_want);
        n_pass += ok;

        /* Round trip: the pieces spell the text back, after the one dummy-prefix space. */
        if (n >= 0) {
            size_t back_len;
            char *back = detokenize(&v, ids, n, &back_len);
            size_t skip = (v.add_space_prefix && len > 0) ? 1 : 0;
            bool same = back_len == len + skip && (skip == 0 || back[0] == ' ') &&
                        memcmp(back + skip, text, len) == 0;
            if (!same) printf("# %s case %d does not round-trip\n", name, n_cases);
            n_round_trip += same;
            free(back);
        }
        n_cases++;
    }
    CHECK(n_cases == 46 && n_pass == n_cases, "%s: %d/%d vectors match llama.cpp", name, n_pass, n_cases);
    CHECK(n_round_trip == n_cases, "%s: %d/%d cases round-trip through tokenizer_token_bytes", name, n_round_trip, n_cases);
    free(ids);
    free(inp);
    free(out);
    vocab_free(&v);
}

/* ---------------------------------------------------------------------------------------------- */
/* prompts of the reference runs, and the golden text                                               */

static void test_prompt(const char *model, const char *gguf, const char *prompt, const char *token_file,
                        int n_prompt) {
    vocab v;
    ts_error err = { "" };
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", model, gguf);
    if (!load_gguf_vocab(path, &v, &err)) { CHECK(0, "%s: load vocabulary (%s)", model, err.msg); return; }
    snprintf(path, sizeof path, "%s/%s/%s", fixtures_dir(), model, token_file);
    int n_ref;
    int32_t *ref = read_tokens(path, &n_ref);
    int32_t ids[64];
    int n = tokenizer_encode(&v, prompt, strlen(prompt), v.add_bos, false, ids, 64, &err);
    char got[256], exp[256];
    format_ids(ids, n > 0 ? n : 0, got, sizeof got);
    format_ids(ref, ref && n_ref >= n_prompt ? n_prompt : 0, exp, sizeof exp);
    CHECK(ref && n_ref >= n_prompt && v.add_bos && same_ids(ids, n, ref, n_prompt),
          "%s: \"%s\" with BOS -> [%s ] (reference [%s ])", model, prompt, got, exp);
    free(ref);
    vocab_free(&v);
}

static void test_golden_text(const char *model, const char *prompt, int n_prompt) {
    vocab v;
    ts_error err = { "" };
    char path[1024];
    snprintf(path, sizeof path, "%s/%s.gguf", model, model);
    if (!load_gguf_vocab(path, &v, &err)) { CHECK(0, "%s: load vocabulary (%s)", model, err.msg); return; }
    snprintf(path, sizeof path, "%s/%s/ref/golden_llamacpp.tokens.i32", fixtures_dir(), model);
    int n_tok;
    int32_t *tok = read_tokens(path, &n_tok);
    snprintf(path, sizeof path, "%s/%s/ref/golden_llamacpp.txt", fixtures_dir(), model);
    size_t golden_len;
    char *golden = read_all(path, &golden_len);
    if (!tok || !golden || n_tok <= n_prompt) {
        CHECK(0, "%s: read golden tokens and text", model);
    } else {
        /* The golden text is the prompt followed by the generated pieces. */
        size_t gen_len, p_len = strlen(prompt);
        char *gen = detokenize(&v, tok + n_prompt, n_tok - n_prompt, &gen_len);
        bool ok = golden_len >= p_len && memcmp(golden, prompt, p_len) == 0 &&
                  (gen_len == golden_len - p_len) && memcmp(gen, golden + p_len, gen_len) == 0;
        /* The stored file may end with one newline that no token produced. */
        if (!ok && golden_len >= p_len + 1 && golden[golden_len - 1] == '\n')
            ok = gen_len == golden_len - p_len - 1 && memcmp(gen, golden + p_len, gen_len) == 0;
        CHECK(ok, "%s: detokenized golden tokens (%d generated) reproduce golden_llamacpp.txt", model,
              n_tok - n_prompt);
        free(gen);
    }
    free(tok);
    free(golden);
    vocab_free(&v);
}

/* ---------------------------------------------------------------------------------------------- */
/* small GGUF files (written with the GGUF writer) with good and broken tokenizer metadata          */

/* Token list and scores for the small vocabularies below. */
static const char *const small_tokens[] = { "<unk>", "<s>", "</s>", "a", "b" };
static const float small_scores[] = { 0, 0, 0, -3, -4 };

/* Writes w as DIR/NAME.gguf, opens it, loads the vocabulary; -2 when the reader refuses the file. */
static int load_written(gguf_writer *w, const char *dir, const char *name, vocab *v, ts_error *err) {
    char path[1024];
    snprintf(path, sizeof path, "%s/%s.gguf", dir, name);
    int rc = gguf_writer_write(w, path, err);
    gguf_writer_free(w);
    if (rc) return -2;
    gguf_file *g;
    if (gguf_open(path, &g, err)) return -2;
    rc = vocab_from_gguf(g, v, err);
    gguf_close(g);
    return rc;
}

/* A writer holding tokenizer.ggml.model = model and n_tokens of small_tokens. */
static gguf_writer *tokenizer_writer(const char *model, int n_tokens) {
    gguf_writer *w = gguf_writer_new();
    gguf_writer_add_str(w, "general.architecture", "llama");
    if (model) gguf_writer_add_str(w, "tokenizer.ggml.model", model);
    if (n_tokens) gguf_writer_add_str_array(w, "tokenizer.ggml.tokens", small_tokens, NULL, (uint64_t)n_tokens);
    return w;
}

static void test_bad_metadata(void) {
    char dir[] = "/tmp/ts_tok_XXXXXX";
    if (!mkdtemp(dir)) { CHECK(0, "mkdtemp"); return; }
    vocab v;
    ts_error err = { "" };

    int rc = load_written(tokenizer_writer("nonsense", 5), dir, "nonsense", &v, &err);
    CHECK(rc == -1 && strstr(err.msg, "nonsense.gguf") && strstr(err.msg, "\"nonsense\""),
          "tokenizer.ggml.model \"nonsense\" is refused naming file and model (\"%s\")", err.msg);

    err.msg[0] = '\0';
    rc = load_written(tokenizer_writer(NULL, 0), dir, "no_tokenizer", &v, &err);
    CHECK(rc == -1 && strstr(err.msg, "no_tokenizer.gguf") && strstr(err.msg, "tokenizer"),
          "a GGUF without tokenizer metadata is refused (\"%s\")", err.msg);

    err.msg[0] = '\0';
    rc = load_written(tokenizer_writer("llama", 0), dir, "no_tokens", &v, &err);
    CHECK(rc == -1 && strstr(err.msg, "tokenizer.ggml.tokens"), "a llama tokenizer without tokens is refused (\"%s\")", err.msg);

    gguf_writer *w = tokenizer_writer("llama", 5);
    gguf_writer_add_array(w, "tokenizer.ggml.scores", GGUF_F32, small_scores, 4);
    err.msg[0] = '\0';
    rc = load_written(w, dir, "short_scores", &v, &err);
    CHECK(rc == -1 && strstr(err.msg, "scores"), "scores shorter than tokens is refused (\"%s\")", err.msg);

    w = tokenizer_writer("llama", 5);
    gguf_writer_add_array(w, "tokenizer.ggml.token_type", GGUF_I32, (int32_t[]){ 2, 3, 3, 1, 9 }, 5);
    err.msg[0] = '\0';
    rc = load_written(w, dir, "bad_token_type", &v, &err);
    CHECK(rc == -1 && strstr(err.msg, "token_type"), "a token type outside 0..6 is refused (\"%s\")", err.msg);

    w = tokenizer_writer("llama", 5);
    gguf_writer_add_u32(w, "tokenizer.ggml.eos_token_id", 7);
    err.msg[0] = '\0';
    rc = load_written(w, dir, "eos_out_of_range", &v, &err);
    CHECK(rc == -1 && strstr(err.msg, "eos_token_id"), "an EOS id outside the vocabulary is refused (\"%s\")", err.msg);

    w = tokenizer_writer("llama", 5);
    gguf_writer_add_array(w, "tokenizer.ggml.scores", GGUF_F32, small_scores, 5);
    rc = load_written(w, dir, "minimal", &v, &err);
    CHECK(rc == 0 && v.kind == VOCAB_SPM && v.n == 5 && v.bos == 1 && v.eos == 2 && v.unk == 0 &&
          v.add_bos && !v.add_eos && v.add_space_prefix && v.score[4] == -4.0f && v.attr[3] == TOKEN_NORMAL &&
          vocab_find(&v, "b", 1) == 4 && vocab_find(&v, "c", 1) == -1,
          "minimal llama vocabulary: SPM defaults bos 1 eos 2 unk 0, add_bos, space prefix");
    if (rc == 0) vocab_free(&v);

    w = tokenizer_writer("llama", 5);
    gguf_writer_add_u32(w, "tokenizer.ggml.bos_token_id", 3);
    gguf_writer_add_bool(w, "tokenizer.ggml.add_bos_token", false);
    gguf_writer_add_bool(w, "tokenizer.ggml.add_space_prefix", false);
    gguf_writer_add_bool(w, "tokenizer.ggml.add_eos_token", true);
    rc = load_written(w, dir, "stated", &v, &err);
    CHECK(rc == 0 && v.bos == 3 && !v.add_bos && !v.add_space_prefix && v.add_eos,
          "stated bos id and add_* flags override the SPM defaults");
    if (rc == 0) vocab_free(&v);

    w = tokenizer_writer("gpt2", 5);
    err.msg[0] = '\0';
    rc = load_written(w, dir, "gpt2_no_merges", &v, &err);
    CHECK(rc == -1 && strstr(err.msg, "merges"), "gpt2 without merges is refused (\"%s\")", err.msg);

    w = tokenizer_writer("gpt2", 5);
    gguf_writer_add_str_array(w, "tokenizer.ggml.merges", (const char *const[]){ "a b" }, NULL, 1);
    gguf_writer_add_str(w, "tokenizer.ggml.pre", "gpt-2");
    rc = load_written(w, dir, "gpt2", &v, &err);
    CHECK(rc == 0 && v.kind == VOCAB_BPE_BYTES && v.n_merges == 1 && strcmp(v.merges[0], "a b") == 0 &&
          v.pre && strcmp(v.pre, "gpt-2") == 0 && !v.add_bos && !v.add_space_prefix && v.bos == -1,
          "gpt2 vocabulary: merges and pre loaded, no BOS by default, no space prefix");
    if (rc == 0) vocab_free(&v);

    const char *names[] = { "nonsense", "no_tokenizer", "no_tokens", "short_scores", "bad_token_type",
                            "eos_out_of_range", "minimal", "stated", "gpt2_no_merges", "gpt2" };
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        char path[1100];
        snprintf(path, sizeof path, "%s/%s.gguf", dir, names[i]);
        unlink(path);
    }
    rmdir(dir);
}

int main(void) {
    test_hand_vocab();
    test_bpe_detok();
    test_vectors("llama-spm");
    test_vectors("phi-3");
    test_prompt("stories260K", "stories260K.gguf", "Once upon a time", "ref/f32.tokens.i32", 5);
    test_prompt("aidreams260K", "aidreams260K.gguf", "I dreamed", "ref/f32.tokens.i32", 7);
    test_prompt("llama2-tiny-random", "llama-2-tiny-random.gguf", "Hello world, this is a test",
                "ref/f16.tokens.i32", 8);
    test_golden_text("stories260K", "Once upon a time", 5);
    test_golden_text("aidreams260K", "I dreamed", 7);
    test_bad_metadata();
    CHECK_EXIT();
}
