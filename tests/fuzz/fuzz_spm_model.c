/* libFuzzer: a SentencePiece tokenizer.model (protobuf); a vocabulary that loads then encodes and
 * decodes a sample text. */
#include "fuzz_common.h"
#include "text/tokenizer.h"
#include "text/spm_model.h"

int LLVMFuzzerInitialize(int *argc, char ***argv) { (void)argc; (void)argv; return 0; }

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    char path[PATH_MAX];
    fuzz_write("tokenizer.model", data, size, path);
    vocab v;
    memset(&v, 0, sizeof v);
    ts_error err;
    if (spm_model_read(path, &v, &err) != 0) {
        if (strchr(err.msg, '\n')) abort();
        return 0;
    }
    static const char text[] = "Hello world! <s> \xc3\xa9t\xc3\xa9 \xe2\x96\x81\xf0\x9f\x98\x80  x";
    int32_t ids[256];
    for (int special = 0; special < 2; special++) {
        int k = tokenizer_encode(&v, text, sizeof text - 1, special, special, ids, 256, &err);
        for (int i = 0; i < k && i < 256; i++) {
            char buf[256];
            if (ids[i] < 0 || ids[i] >= v.n) abort();
            tokenizer_token_bytes(&v, ids[i], buf, sizeof buf);
        }
    }
    vocab_free(&v);
    return 0;
}
