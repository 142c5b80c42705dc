/* SentencePiece tokenizer.model reader: the Llama-2 model of qa-llama/hf against the same vocabulary
 * in GGUF form (qa-llama-q8_0.gguf, ggml-vocab-llama-spm.gguf): every token, score and type, the
 * special ids, the encodings of the eval prompts, llama.cpp's prompt tokens and test vectors. Then
 * small hand-encoded models (field mapping, defaults, skipping unknown fields) and damaged files. */
#include "check.h"
#include "text/tokenizer.h"
#include "text/spm_model.h"
#include "text/vocab_gguf.h"
#include "io/gguf.h"
#include "io/json.h"
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define SP "\xE2\x96\x81"   /* U+2581 */


static bool write_all(const char *path, const void *data, size_t len) {
    FILE *f = fopen(path, "wb");
    if (!f) return false;
    bool ok = fwrite(data, 1, len, f) == len;
    return fclose(f) == 0 && ok;
}

static bool same_ids(const int32_t *a, int na, const int32_t *b, int nb) {
    if (na != nb) return false;
    for (int i = 0; i < na; i++) if (a[i] != b[i]) return false;
    return true;
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
/* the real model against the GGUF vocabularies                                                     */

/* Same tokens, scores, types and special ids; returns true when all agree. */
static bool compare_vocabs(const char *what, const vocab *a, const vocab *b) {
    CHECK(a->n == b->n && a->kind == b->kind, "%s: same size (%d vs %d) and kind", what, a->n, b->n);
    if (a->n != b->n) return false;
    int bad_text = 0, bad_score = 0, bad_attr = 0, first_bad = -1;
    for (int i = 0; i < a->n; i++) {
        bool text_ok = a->len[i] == b->len[i] && memcmp(a->text[i], b->text[i], a->len[i]) == 0 &&
                       a->text[i][a->len[i]] == '\0';
        bool score_ok = a->score[i] == b->score[i];
        bool attr_ok = a->attr[i] == b->attr[i];
        bad_text += !text_ok;
        bad_score += !score_ok;
        bad_attr += !attr_ok;
        if ((!text_ok || !score_ok || !attr_ok) && first_bad < 0) first_bad = i;
    }
    if (first_bad >= 0)
        printf("# %s: first difference at token %d: \"%s\" %g %d vs \"%s\" %g %d\n", what, first_bad,
               a->text[first_bad], a->score[first_bad], a->attr[first_bad], b->text[first_bad],
               b->score[first_bad], b->attr[first_bad]);
    CHECK(bad_text == 0, "%s: all %d token texts identical (%d differ)", what, a->n, bad_text);
    CHECK(bad_score == 0, "%s: all scores identical (%d differ)", what, bad_score);
    CHECK(bad_attr == 0, "%s: all token types identical (%d differ)", what, bad_attr);
    bool specials = a->bos == b->bos && a->eos == b->eos && a->unk == b->unk && a->eot == b->eot &&
                    a->add_bos == b->add_bos && a->add_eos == b->add_eos &&
                    a->add_space_prefix == b->add_space_prefix;
    CHECK(specials, "%s: bos %d/%d eos %d/%d unk %d/%d eot %d/%d add_bos %d/%d add_eos %d/%d "
          "space prefix %d/%d agree", what, a->bos, b->bos, a->eos, b->eos, a->unk, b->unk, a->eot, b->eot,
          a->add_bos, b->add_bos, a->add_eos, b->add_eos, a->add_space_prefix, b->add_space_prefix);
    return bad_text == 0 && bad_score == 0 && bad_attr == 0 && specials;
}

/* Encodes text with both vocabularies; true when the ids agree. */
static bool same_encoding(const vocab *a, const vocab *b, const char *text, size_t len, bool add_bos,
                          bool parse_special, int *n_out) {
    int32_t ids_a[1024], ids_b[1024];
    ts_error err;
    int na = tokenizer_encode(a, text, len, add_bos, parse_special, ids_a, 1024, &err);
    int nb = tokenizer_encode(b, text, len, add_bos, parse_special, ids_b, 1024, &err);
    *n_out = na;
    return na > 0 && na <= 1024 && same_ids(ids_a, na, ids_b, nb);
}

/* The Llama-2 chat prompt of the fixture's README (BOS is added by tokenize). */
static size_t render_prompt(const char *system, const char *user, char *buf, size_t cap) {
    int n = snprintf(buf, cap, "[INST] <<SYS>>\n%s\n<</SYS>>\n\n%s [/INST]", system, user);
    return n < 0 || (size_t)n >= cap ? 0 : (size_t)n;
}

static void test_eval_prompts(const vocab *model, const vocab *gguf) {
    char path[1024];
    snprintf(path, sizeof path, "%s/qa-llama/eval-dev.jsonl", fixtures_dir());
    size_t len;
    char *jsonl = read_all(path, &len);
    if (!jsonl) { CHECK(0, "read %s", path); return; }
    int n_questions = 0, n_same_user = 0, n_same_prompt = 0, min_len = 1 << 30, max_len = 0;
    for (char *line = jsonl; line < jsonl + len;) {
        char *nl = memchr(line, '\n', (size_t)(jsonl + len - line));
        size_t line_len = nl ? (size_t)(nl - line) : (size_t)(jsonl + len - line);
        json_value *q;
        ts_error err;
        if (line_len > 0 && json_parse(line, line_len, &q, &err) == 0) {
            const char *user = json_get_str(q, "user"), *system = json_get_str(q, "system");
            if (user && system) {
                int n;
                n_same_user += same_encoding(model, gguf, user, strlen(user), false, false, &n);
                char prompt[4096];
                size_t plen = render_prompt(system, user, prompt, sizeof prompt);
                bool same = plen > 0 && same_encoding(model, gguf, prompt, plen, true, true, &n);
                n_same_prompt += same;
                if (same && n < min_len) min_len = n;
                if (same && n > max_len) max_len = n;
                n_questions++;
            }
            json_free(q);
        }
        line += line_len + 1;
    }
    free(jsonl);
    CHECK(n_questions == 30 && n_same_user == n_questions,
          "eval-dev: %d/%d \"user\" strings encode to the same ids with tokenizer.model and the GGUF",
          n_same_user, n_questions);
    CHECK(n_same_prompt == n_questions,
          "eval-dev: %d/%d rendered chat prompts (BOS + [INST] <<SYS>>...) encode identically (%d-%d tokens)",
          n_same_prompt, n_questions, min_len, max_len);
}

/* llama.cpp's own prompt tokens for the first question (ref/f32.tokens.i32, first 56 ids). */
static void test_reference_prompt(const vocab *model) {
    char path[1024];
    snprintf(path, sizeof path, "%s/qa-llama/ref/f32.tokens.i32", fixtures_dir());
    size_t len;
    char *raw = read_all(path, &len);
    enum { N_PROMPT = 56 };
    if (!raw || len < 4 * N_PROMPT) { CHECK(0, "read %s", path); free(raw); return; }
    int32_t ref[N_PROMPT];
    for (int i = 0; i < N_PROMPT; i++) {
        const unsigned char *b = (const unsigned char *)raw + 4 * i;
        ref[i] = (int32_t)((uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 | (uint32_t)b[3] << 24);
    }
    free(raw);
    char prompt[1024];
    size_t plen = render_prompt("You are a helpful assistant. Answer briefly.",
                                "Facts: The owner of the newspaper Rowan is Cedric Yeboah. Name the owner of Rowan.",
                                prompt, sizeof prompt);
    int32_t ids[256];
    ts_error err = { "" };
    int n = tokenizer_encode(model, prompt, plen, model->add_bos, true, ids, 256, &err);
    CHECK(same_ids(ids, n, ref, N_PROMPT),
          "tokenizer.model vocab reproduces llama.cpp's 56 prompt tokens of the reference question (%d ids) %s",
          n, err.msg);
}

/* llama.cpp's llama-spm test vectors, run through the tokenizer.model vocabulary. */
static void test_vectors(const vocab *v) {
    char path[1024];
    size_t n_inp, n_out;
    snprintf(path, sizeof path, "%s/tokenizers/gguf/ggml-vocab-llama-spm.gguf.inp", fixtures_dir());
    char *inp = read_all(path, &n_inp);
    snprintf(path, sizeof path, "%s/tokenizers/gguf/ggml-vocab-llama-spm.gguf.out", fixtures_dir());
    char *out = read_all(path, &n_out);
    if (!inp || !out) { CHECK(0, "read llama-spm .inp/.out"); free(inp); free(out); return; }
    static const char sep[] = "\n__ggml_vocab_test__\n";
    const size_t sep_len = sizeof sep - 1;
    size_t pos = 0, out_pos = 0;
    int n_cases = 0, n_pass = 0;
    int32_t *ids = malloc(65536 * sizeof *ids), want[4096];
    while (pos < n_inp) {
        const char *hit = memmem(inp + pos, n_inp - pos, sep, sep_len);
        if (!hit) break;
        const char *text = inp + pos;
        size_t len = (size_t)(hit - text);
        pos = (size_t)(hit - inp) + sep_len;
        char *line_end = memchr(out + out_pos, '\n', n_out - out_pos);
        if (!line_end) break;
        int n_want = 0;
        for (char *p = out + out_pos; p < line_end && n_want < 4096;) {
            while (p < line_end && *p == ' ') p++;
            if (p >= line_end) break;
            want[n_want++] = (int32_t)strtol(p, &p, 10);
        }
        out_pos = (size_t)(line_end - out) + 1;
        ts_error err;
        int n = tokenizer_encode(v, text, len, false, false, ids, 65536, &err);
        bool ok = n >= 0 && same_ids(ids, n, want, n_want);
        if (!ok) printf("# llama-spm vector %d differs\n", n_cases);
        n_pass += ok;
        n_cases++;
    }
    CHECK(n_cases == 46 && n_pass == n_cases,
          "tokenizer.model vocab: %d/%d llama-spm vectors match llama.cpp", n_pass, n_cases);
    free(ids);
    free(inp);
    free(out);
}

static void test_real_model(void) {
    char path[1024];
    snprintf(path, sizeof path, "%s/qa-llama/hf/tokenizer.model", fixtures_dir());
    vocab model, q8, spm;
    ts_error err = { "" };
    if (spm_model_read(path, &model, &err)) { CHECK(0, "load %s (%s)", path, err.msg); return; }
    CHECK(model.kind == VOCAB_SPM && model.n == 32000 && model.bos == 1 && model.eos == 2 &&
          model.unk == 0 && model.pad == -1 && model.add_bos && !model.add_eos && model.add_space_prefix,
          "tokenizer.model: 32000 SPM pieces, unk 0 bos 1 eos 2 pad none, add_bos, space prefix");
    CHECK(model.attr[0] == TOKEN_UNKNOWN && model.attr[1] == TOKEN_CONTROL && model.attr[3] == TOKEN_BYTE &&
          strcmp(model.text[3], "<0x00>") == 0 && model.attr[259] == TOKEN_NORMAL &&
          strcmp(model.text[259], SP SP) == 0 && model.score[259] == -1e9f,
          "tokenizer.model: <unk> unknown, <s> control, <0x00> a byte token, id 259 is \"" SP SP "\" at -1e9");

    if (load_gguf_vocab("qa-llama/qa-llama-q8_0.gguf", &q8, &err)) {
        compare_vocabs("tokenizer.model vs qa-llama-q8_0.gguf", &model, &q8);
        test_eval_prompts(&model, &q8);
        vocab_free(&q8);
    } else {
        CHECK(0, "load qa-llama-q8_0.gguf vocabulary (%s)", err.msg);
    }
    if (load_gguf_vocab("tokenizers/gguf/ggml-vocab-llama-spm.gguf", &spm, &err)) {
        compare_vocabs("tokenizer.model vs ggml-vocab-llama-spm.gguf", &model, &spm);
        vocab_free(&spm);
    } else {
        CHECK(0, "load ggml-vocab-llama-spm.gguf vocabulary (%s)", err.msg);
    }
    test_reference_prompt(&model);
    test_vectors(&model);
    vocab_free(&model);
}

/* ---------------------------------------------------------------------------------------------- */
/* hand-encoded models                                                                              */

typedef struct pb_buf { uint8_t data[4096]; size_t len; } pb_buf;

static void put_byte(pb_buf *b, uint8_t x) { if (b->len < sizeof b->data) b->data[b->len++] = x; }
static void put_varint(pb_buf *b, uint64_t v) {
    do { put_byte(b, (uint8_t)((v & 0x7f) | (v > 0x7f ? 0x80 : 0))); v >>= 7; } while (v);
}
static void put_tag(pb_buf *b, uint32_t field, int wire) { put_varint(b, (uint64_t)field << 3 | (uint32_t)wire); }
static void put_bytes(pb_buf *b, uint32_t field, const void *data, size_t len) {
    put_tag(b, field, 2);
    put_varint(b, len);
    for (size_t i = 0; i < len; i++) put_byte(b, ((const uint8_t *)data)[i]);
}
static void put_message(pb_buf *b, uint32_t field, const pb_buf *m) { put_bytes(b, field, m->data, m->len); }
static void put_uint(pb_buf *b, uint32_t field, uint64_t v) { put_tag(b, field, 0); put_varint(b, v); }
static void put_float(pb_buf *b, uint32_t field, float f) {
    uint32_t bits;
    memcpy(&bits, &f, 4);
    put_tag(b, field, 5);
    for (int i = 0; i < 4; i++) put_byte(b, (uint8_t)(bits >> (8 * i)));
}

/* A piece; type 0 leaves the type out (NORMAL by default). */
static void put_piece(pb_buf *model, const char *text, float score, int type) {
    pb_buf p = { .len = 0 };
    put_bytes(&p, 1, text, strlen(text));
    put_float(&p, 2, score);
    if (type) put_uint(&p, 3, (uint64_t)type);
    put_message(model, 1, &p);
}

/* The hand model: pieces, then a trainer spec and a normalizer spec built by the caller. */
static void hand_pieces(pb_buf *m) {
    put_piece(m, "<unk>", 0, 2);
    put_piece(m, "<s>", 0, 3);
    put_piece(m, "</s>", 0, 3);
    put_piece(m, SP "a", -1.5f, 0);          /* no type: NORMAL */
    put_piece(m, "<0x41>", 0, 6);            /* SentencePiece BYTE */
    put_piece(m, "x", -7, 5);                /* SentencePiece UNUSED */
    put_piece(m, "<tag>", 0, 4);
    put_piece(m, "<|im_end|>", 0, 3);
}

static pb_buf trainer_spec(int64_t model_type, int64_t unk, int64_t bos, int64_t eos, int64_t pad) {
    pb_buf t = { .len = 0 };
    put_bytes(&t, 1, "input.txt", 9);                  /* unknown to the reader: skipped */
    if (model_type) put_uint(&t, 3, (uint64_t)model_type);
    put_float(&t, 10, 0.9995f);                        /* an unknown fixed32 */
    put_uint(&t, 35, 1);
    put_uint(&t, 40, (uint64_t)unk);                   /* negative: sign-extended ten-byte varint */
    put_uint(&t, 41, (uint64_t)bos);
    put_uint(&t, 42, (uint64_t)eos);
    put_uint(&t, 43, (uint64_t)pad);
    put_tag(&t, 99, 1);                                /* an unknown fixed64 */
    for (int i = 0; i < 8; i++) put_byte(&t, 0xEE);
    put_uint(&t, 536870911, 5);                        /* the largest field number */
    return t;
}

static int write_and_load(const char *dir, const char *name, const void *data, size_t len, vocab *v,
                          ts_error *err, char *path, size_t path_cap) {
    snprintf(path, path_cap, "%s/%s", dir, name);
    if (!write_all(path, data, len)) return -2;
    err->msg[0] = '\0';
    int rc = spm_model_read(path, v, err);
    unlink(path);
    return rc;
}

/* A model that must be refused with a message naming the file and containing `needle`. */
static void expect_refused(const char *dir, const char *what, const pb_buf *m, const char *needle) {
    vocab v;
    ts_error err;
    char path[1024];
    int rc = write_and_load(dir, "bad.model", m->data, m->len, &v, &err, path, sizeof path);
    if (rc == 0) vocab_free(&v);
    CHECK(rc == -1 && strstr(err.msg, path) && (!needle || strstr(err.msg, needle)),
          "%s is refused (\"%s\")", what, err.msg);
}

static void test_hand_models(const char *dir) {
    pb_buf m = { .len = 0 }, t = trainer_spec(2, 0, 1, 2, (uint64_t)-1), norm = { .len = 0 };
    put_bytes(&norm, 1, "identity", 8);
    put_uint(&norm, 3, 0);                             /* add_dummy_prefix false */
    put_uint(&norm, 4, 0);
    hand_pieces(&m);
    put_message(&m, 2, &t);
    size_t after_trainer = m.len;
    put_message(&m, 3, &norm);
    size_t after_normalizer = m.len;
    put_bytes(&m, 77, "x", 1);                         /* unknown top-level field */

    vocab v;
    ts_error err;
    char path[1024];
    int rc = write_and_load(dir, "hand.model", m.data, m.len, &v, &err, path, sizeof path);
    CHECK(rc == 0, "hand model loads (%s)", err.msg);
    if (rc == 0) {
        static const uint8_t want_attr[] = { TOKEN_UNKNOWN, TOKEN_CONTROL, TOKEN_CONTROL, TOKEN_NORMAL,
                                             TOKEN_BYTE, TOKEN_UNUSED, TOKEN_USER_DEFINED, TOKEN_CONTROL };
        bool attrs = v.n == 8;
        for (int i = 0; attrs && i < 8; i++) attrs = v.attr[i] == want_attr[i];
        CHECK(attrs, "hand model: piece types BYTE 6, UNUSED 5 etc. as GGUF token types, absent -> NORMAL");
        CHECK(v.n == 8 && v.len[3] == 4 && strcmp(v.text[3], SP "a") == 0 && v.score[3] == -1.5f &&
              v.score[5] == -7.0f && vocab_find(&v, "<tag>", 5) == 6,
              "hand model: texts, lengths, scores and the hash");
        CHECK(v.unk == 0 && v.bos == 1 && v.eos == 2 && v.pad == -1 && v.eot == 7 && v.add_bos &&
              !v.add_eos && !v.add_space_prefix,
              "hand model: ids from the trainer spec (pad -1 as a ten-byte varint), eot <|im_end|>, "
              "add_dummy_prefix false");
        int32_t ids[8];
        int n = tokenizer_encode(&v, "Aa", 2, true, false, ids, 8, &err);
        CHECK(n == 3 && ids[0] == 1 && ids[1] == 4 && ids[2] == 0,
              "hand model: \"Aa\" without space prefix -> <s> <0x41> <unk> (n=%d)", n);
        vocab_free(&v);
    }

    /* Cut at every byte: only the cuts at the two top-level field boundaries after the trainer spec
     * leave a complete model; the others break a field or lose the trainer spec (-> UNIGRAM). */
    snprintf(path, sizeof path, "%s/hand_cut.model", dir);
    int n_ok = 0, n_cuts = 0;
    if (write_all(path, m.data, m.len)) {
        for (size_t cut = m.len; cut-- > 0; n_cuts++) {
            err.msg[0] = '\0';
            if (truncate(path, (off_t)cut)) break;
            rc = spm_model_read(path, &v, &err);
            bool complete = cut == after_trainer || cut == after_normalizer;
            bool ok = complete ? rc == 0 && v.n == 8 && v.add_space_prefix == (cut == after_trainer)
                               : rc == -1 && strstr(err.msg, path);
            if (rc == 0) vocab_free(&v);
            if (!ok) printf("# hand model cut at %zu: rc %d \"%s\"\n", cut, rc, err.msg);
            n_ok += ok;
        }
        unlink(path);
    }
    CHECK(n_cuts == (int)m.len && n_ok == n_cuts, "hand model cut at each of its %zu bytes: %d/%d fail naming "
          "the file, or load at the two field boundaries after the trainer spec", m.len, n_ok, n_cuts);

    /* No normalizer spec and default ids: add_dummy_prefix defaults to true; bos -1 disables BOS. */
    m.len = 0;
    hand_pieces(&m);
    pb_buf t2 = { .len = 0 };
    put_uint(&t2, 3, 2);
    put_uint(&t2, 41, (uint64_t)-1);
    put_message(&m, 2, &t2);
    rc = write_and_load(dir, "defaults.model", m.data, m.len, &v, &err, path, sizeof path);
    CHECK(rc == 0 && v.unk == 0 && v.bos == -1 && v.eos == 2 && v.pad == -1 && v.add_space_prefix,
          "defaults: unk 0, eos 2, pad none, bos_id -1 means no BOS, add_dummy_prefix true (%s)", err.msg);
    if (rc == 0) vocab_free(&v);

    /* refusals */
    m.len = 0;
    hand_pieces(&m);
    t = trainer_spec(1, 0, 1, 2, (uint64_t)-1);
    put_message(&m, 2, &t);
    expect_refused(dir, "a UNIGRAM model", &m, "UNIGRAM");

    m.len = 0;
    hand_pieces(&m);
    expect_refused(dir, "a model without trainer spec (model type defaults to UNIGRAM)", &m, "UNIGRAM");

    m.len = 0;
    hand_pieces(&m);
    t = trainer_spec(2, 0, 1, 8, (uint64_t)-1);
    put_message(&m, 2, &t);
    expect_refused(dir, "eos_id past the vocabulary", &m, "eos_id");

    m.len = 0;
    t = trainer_spec(2, 0, 1, 2, (uint64_t)-1);
    put_message(&m, 2, &t);
    expect_refused(dir, "a model without pieces", &m, "no pieces");

    pb_buf bad_piece[6];
    for (int i = 0; i < 6; i++) { bad_piece[i].len = 0; hand_pieces(&bad_piece[i]); }
    put_piece(&bad_piece[0], "\xC3(", 0, 1);
    put_piece(&bad_piece[1], "", 0, 1);
    put_piece(&bad_piece[2], "q", 0, 7);
    put_uint(&bad_piece[3], 1, 5);                                 /* piece with varint wire type */
    { pb_buf p = { .len = 0 }; put_bytes(&p, 1, "q", 1); put_uint(&p, 2, 3); put_message(&bad_piece[4], 1, &p); }
    put_tag(&bad_piece[5], 9, 3);                                  /* a group start */
    static const char *const bad_what[] = { "a piece that is not UTF-8", "an empty piece", "piece type 7",
                                            "pieces field with wire type 0", "a score with wire type 0",
                                            "wire type 3 (group)" };
    static const char *const bad_needle[] = { "UTF-8", "empty", "type 7", "wire type", "wire type", "wire type" };
    for (int i = 0; i < 6; i++) {
        put_message(&bad_piece[i], 2, &t);
        expect_refused(dir, bad_what[i], &bad_piece[i], bad_needle[i]);
    }
}

/* ---------------------------------------------------------------------------------------------- */
/* damaged files                                                                                    */

static uint64_t rng_state = 0x9E3779B97F4A7C15ull;
static uint32_t next_random(void) {
    rng_state = rng_state * 6364136223846793005ull + 1442695040888963407ull;
    return (uint32_t)(rng_state >> 33);
}

/* Loads data[0..len) from a file; true when it fails naming the file (or, if may_load, loads). */
static bool fails_naming_file(const char *dir, const void *data, size_t len, bool may_load) {
    vocab v;
    ts_error err;
    char path[1024];
    int rc = write_and_load(dir, "damaged.model", data, len, &v, &err, path, sizeof path);
    if (rc == 0) { vocab_free(&v); return may_load; }
    return rc == -1 && strstr(err.msg, path) != NULL;
}

static void test_damaged(const char *dir) {
    char path[1024];
    snprintf(path, sizeof path, "%s/qa-llama/hf/tokenizer.model", fixtures_dir());
    size_t size;
    char *real = read_all(path, &size);
    if (!real || size < 1000) { CHECK(0, "read %s", path); free(real); return; }

    /* The normalizer spec is the last top-level field; cutting the file right before it leaves a
     * complete model (with the default dummy prefix), every other cut breaks a field or drops the
     * trainer spec (then the model type defaults to UNIGRAM). */
    const char *id_at = memmem(real + size - 200, 200, "\x0a\x08identity", 10);
    size_t norm_start = id_at ? (size_t)(id_at - real) - 2 : 0;
    CHECK(id_at && (uint8_t)real[norm_start] == 0x1A, "located the normalizer spec at byte %zu", norm_start);
    /* Cuts from the longest down: the file is written once and shortened with truncate(). */
    size_t cuts[300];
    int n_cuts = 0, n_ok = 0;
    for (size_t cut = size - 1; cut > size - 40; cut--) cuts[n_cuts++] = cut;    /* normalizer spec */
    for (size_t cut = size - 40; cut > size - 300; cut -= 7) cuts[n_cuts++] = cut; /* trainer spec */
    for (int k = 99; k >= 1; k--) cuts[n_cuts++] = 64 + (size - 364) * (size_t)k / 100 + (size_t)k % 7;
    for (size_t cut = 64; cut-- > 0;) cuts[n_cuts++] = cut;                      /* the first pieces */
    char cut_path[1024];
    snprintf(cut_path, sizeof cut_path, "%s/cut.model", dir);
    if (!write_all(cut_path, real, size)) { CHECK(0, "write %s", cut_path); free(real); return; }
    for (int i = 0; i < n_cuts; i++) {
        vocab v;
        ts_error err = { "" };
        if (truncate(cut_path, (off_t)cuts[i])) { printf("# truncate failed\n"); continue; }
        int rc = spm_model_read(cut_path, &v, &err);
        bool loaded_right = rc == 0 && v.n == 32000 && v.add_space_prefix;
        if (rc == 0) vocab_free(&v);
        bool ok = cuts[i] == norm_start ? loaded_right : rc == -1 && strstr(err.msg, cut_path);
        if (!ok) printf("# cut at %zu: rc %d \"%s\"\n", cuts[i], rc, err.msg);
        n_ok += ok;
    }
    unlink(cut_path);
    CHECK(n_ok == n_cuts, "%d/%d truncations of tokenizer.model fail naming the file (the one at a field "
          "boundary loads)", n_ok, n_cuts);

    /* Varints: eleven bytes, a ten-byte one past 64 bits, one cut off; a length past the end. */
    static const uint8_t long_varint[] = { 0x28, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x01 };
    static const uint8_t wide_varint[] = { 0x28, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x02 };
    static const uint8_t open_varint[] = { 0x28, 0xFF, 0xFF };
    static const uint8_t long_piece[] = { 0x0A, 100, 0x0A, 0x01, 'a' };
    static const uint8_t huge_length[] = { 0x0A, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x7F, 0x00 };
    static const uint8_t field_zero[] = { 0x02, 0x00 };
    vocab v;
    ts_error err;
    char p[1024];
    struct { const char *what, *needle; const uint8_t *data; size_t len; } cases[] = {
        { "an 11-byte varint", "varint", long_varint, sizeof long_varint },
        { "a 10-byte varint past 64 bits", "varint", wide_varint, sizeof wide_varint },
        { "a truncated varint", "truncated varint", open_varint, sizeof open_varint },
        { "a length past the end", "past the end", long_piece, sizeof long_piece },
        { "a 2^63-ish length", "past the end", huge_length, sizeof huge_length },
        { "field number 0", "field", field_zero, sizeof field_zero },
        { "an empty file", "empty", (const uint8_t *)"", 0 },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        int rc = write_and_load(dir, "case.model", cases[i].data, cases[i].len, &v, &err, p, sizeof p);
        if (rc == 0) vocab_free(&v);
        CHECK(rc == -1 && strstr(err.msg, p) && strstr(err.msg, cases[i].needle), "%s is refused (\"%s\")",
              cases[i].what, err.msg);
    }
    snprintf(p, sizeof p, "%s/missing.model", dir);
    err.msg[0] = '\0';
    int rc = spm_model_read(p, &v, &err);
    CHECK(rc == -1 && strstr(err.msg, p), "a missing file is refused naming it (\"%s\")", err.msg);

    /* Random bytes, and the real file with bytes overwritten (which may still load). */
    uint8_t noise[4096];
    int n_random_ok = 0, n_random = 200;
    for (int i = 0; i < n_random; i++) {
        size_t len = 1 + next_random() % sizeof noise;
        for (size_t j = 0; j < len; j++) noise[j] = (uint8_t)next_random();
        n_random_ok += fails_naming_file(dir, noise, len, false);
    }
    CHECK(n_random_ok == n_random, "%d/%d files of random bytes are refused naming the file", n_random_ok, n_random);
    int n_mut_ok = 0, n_mut = 40;
    for (int i = 0; i < n_mut; i++) {
        char *copy = malloc(size);
        memcpy(copy, real, size);
        for (int k = 0; k < 8; k++) copy[next_random() % size] = (char)next_random();
        n_mut_ok += fails_naming_file(dir, copy, size, true);
        free(copy);
    }
    CHECK(n_mut_ok == n_mut, "%d/%d corrupted copies of tokenizer.model load or fail naming the file",
          n_mut_ok, n_mut);
    free(real);
}

int main(void) {
    test_real_model();
    char dir[] = "/tmp/ts_spm_model_XXXXXX";
    if (!mkdtemp(dir)) { CHECK(0, "mkdtemp"); CHECK_EXIT(); }
    test_hand_models(dir);
    test_damaged(dir);
    rmdir(dir);
    CHECK_EXIT();
}
