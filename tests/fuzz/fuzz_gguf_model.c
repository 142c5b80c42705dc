/* libFuzzer: a GGUF file through ts_model_load (the geometry derivation, shape checks, Q/K
 * un-permutation, norms and the vocabulary), then what a user's first command does with a model
 * that loaded: --info, tokenizing, the chat template, and a two-token evaluation. */
#include "fuzz_common.h"
#include "tessera.h"

static FILE *devnull;

int LLVMFuzzerInitialize(int *argc, char ***argv) {
    (void)argc; (void)argv;
    devnull = fopen("/dev/null", "w");
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    char path[PATH_MAX];
    fuzz_write("model.gguf", data, size, path);
    ts_load_options opt = { .simd = "scalar" };
    ts_model *m;
    ts_error err;
    if (ts_model_load(path, &opt, &m, &err) != 0) {
        if (strchr(err.msg, '\n')) abort();
        return 0;
    }
    ts_model_print_info(m, devnull);
    int32_t ids[64];
    static const char text[] = "Hello world, <|im_end|> \xe2\x96\x81x";
    int n = ts_tokenize(m, text, sizeof text - 1, true, true, ids, 64, &err);
    char buf[64];
    for (int i = 0; i < n && i < 64; i++) ts_token_text(m, ids[i], buf, sizeof buf);
    ts_chat_message msgs[] = { { "system", "Be brief." }, { "user", "Hi" } };
    char *chat = NULL;
    bool has_bos;
    if (ts_chat_family(m) && ts_chat_render(m, msgs, 2, true, &chat, &has_bos, &err) == 0) free(chat);
    /* Small enough to stay fast: the point is that a file which loads does not crash the forward. */
    ts_context *c;
    if (ts_model_n_vocab(m) > 0 && ts_model_n_vocab(m) <= 4096 &&
        ts_context_new(m, 8, 1, &c, &err) == 0) {
        int32_t toks[2] = { 0, ts_model_n_vocab(m) - 1 };
        ts_eval(c, toks, 2, NULL, false, &err);
        ts_context_free(c);
    }
    ts_model_free(m);
    return 0;
}
