/* libFuzzer: a Hugging Face folder through ts_model_load: config.json (part 1) and its geometry
 * rules, model.safetensors (part 2), tokenizer_config.json (part 3), parts split at
 * FUZZ_PART_MARK. A model that loads is printed, and evaluated for two tokens. */
#include "fuzz_common.h"
#include "tessera.h"

static FILE *devnull;

int LLVMFuzzerInitialize(int *argc, char ***argv) {
    (void)argc; (void)argv;
    devnull = fopen("/dev/null", "w");
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    static const char *names[3] = { "config.json", "model.safetensors", "tokenizer_config.json" };
    fuzz_part parts[3];
    int n = fuzz_split(data, size, parts, 3);
    char path[PATH_MAX];
    for (int i = 0; i < 3; i++) {
        if (i < n) fuzz_write(names[i], parts[i].data, parts[i].len, path);
        else fuzz_remove(names[i]);
    }
    ts_load_options opt = { .simd = "scalar" };
    ts_model *m;
    ts_error err;
    if (ts_model_load(fuzz_scratch(), &opt, &m, &err) != 0) {
        if (strchr(err.msg, '\n')) abort();
        return 0;
    }
    ts_model_print_info(m, devnull);
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
