/* libFuzzer: tokenizer_encode() on arbitrary bytes (valid and invalid UTF-8) with real vocabularies from
 * the fixtures (SentencePiece and byte-level BPE with several pre-tokenizers), loaded once.
 * Byte 0 picks the vocabulary, add_bos, parse_special and the output room; the rest is the text.
 * Checks: ids in range; the count does not depend on the room; a byte-level BPE vocabulary
 * without special-token parsing decodes back to the exact input. */
#include "fuzz_common.h"
#include "io/gguf.h"
#include "text/tokenizer.h"
#include "text/vocab_gguf.h"
#include "core/utf8.h"

static const char *vocab_files[] = {
    "ggml-vocab-llama-spm.gguf", "ggml-vocab-gpt-2.gguf", "ggml-vocab-phi-3.gguf",
    "ggml-vocab-deepseek-llm.gguf", "ggml-vocab-deepseek-coder.gguf", "ggml-vocab-falcon.gguf",
};
#define N_VOCABS (int)(sizeof vocab_files / sizeof vocab_files[0])
static vocab vocabs[N_VOCABS];
static int n_loaded;

int LLVMFuzzerInitialize(int *argc, char ***argv) {
    (void)argc; (void)argv;
    char fix[PATH_MAX], path[PATH_MAX * 2];
    fuzz_fixtures(fix);
    for (int i = 0; i < N_VOCABS; i++) {
        snprintf(path, sizeof path, "%s/tokenizers/gguf/%s", fix, vocab_files[i]);
        gguf_file *g;
        ts_error err;
        if (gguf_open(path, &g, &err) != 0 || vocab_from_gguf(g, &vocabs[n_loaded], &err) != 0) {
            fprintf(stderr, "fuzz_tokenize: %s (set TS_FIXTURES to the fixtures folder)\n", err.msg);
            exit(1);
        }
        gguf_close(g);
        n_loaded++;
    }
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size < 1) return 0;
    const uint8_t ctl = data[0];
    const vocab *v = &vocabs[(ctl & 7) % n_loaded];
    bool add_bos = ctl & 8, special = ctl & 16;
    const char *text = (const char *)data + 1;
    size_t len = size - 1;
    int room_choice[8] = { 0, 1, 2, 3, 16, 64, 1024, 4096 };
    int room = room_choice[ctl >> 5];
    int32_t *ids = malloc(sizeof(int32_t) * (size_t)(room ? room : 1));
    ts_error err;
    int n = tokenizer_encode(v, text, len, add_bos, special, ids, room, &err);
    size_t bad;
    bool valid = utf8_valid(text, len, &bad);
    if (n < 0) {
        if (strchr(err.msg, '\n')) abort();
        free(ids);
        return 0;
    }
    if (!valid) { fprintf(stderr, "invalid UTF-8 was tokenized\n"); abort(); }
    for (int i = 0; i < n && i < room; i++)
        if (ids[i] < 0 || ids[i] >= v->n) abort();
    if (n > room) {   /* the count must be the same with room for everything */
        int32_t *all = malloc(sizeof(int32_t) * (size_t)n);
        int n2 = tokenizer_encode(v, text, len, add_bos, special, all, n, &err);
        if (n2 != n || memcmp(all, ids, sizeof(int32_t) * (size_t)room) != 0) {
            fprintf(stderr, "token count %d with room %d, %d with room %d\n", n, room, n2, n);
            abort();
        }
        free(all);
    } else if (v->kind == VOCAB_BPE_BYTES && !special && !add_bos) {
        size_t cap = len + 64, at = 0;
        char *back = malloc(cap);
        for (int i = 0; i < n; i++) {
            int k = tokenizer_token_bytes(v, ids[i], back + at, cap - at);
            if (k < 0) abort();
            at += (size_t)k;
        }
        if (at != len || memcmp(back, text, len) != 0) {
            fprintf(stderr, "byte-level BPE did not round-trip (%zu bytes in, %zu out)\n", len, at);
            abort();
        }
        free(back);
    }
    free(ids);
    return 0;
}
