/* libFuzzer: tokenizer.json loading (part 1) with an optional tokenizer_config.json beside it
 * (part 2, split at FUZZ_PART_MARK); a vocabulary that loads then encodes and decodes a sample. */
#include "fuzz_common.h"
#include "text/tokenizer.h"
#include "text/tokenizer_json.h"

int LLVMFuzzerInitialize(int *argc, char ***argv) { (void)argc; (void)argv; return 0; }

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    fuzz_part parts[2];
    int n = fuzz_split(data, size, parts, 2);
    char path[PATH_MAX], cfg[PATH_MAX];
    fuzz_write("tokenizer.json", parts[0].data, parts[0].len, path);
    if (n > 1) fuzz_write("tokenizer_config.json", parts[1].data, parts[1].len, cfg);
    else fuzz_remove("tokenizer_config.json");
    vocab v;
    memset(&v, 0, sizeof v);
    ts_error err;
    if (tokenizer_json_read(path, &v, &err) != 0) {
        if (strchr(err.msg, '\n')) abort();
        return 0;
    }
    static const char text[] = "Hello world! it's 2024 <s> \xc3\xa9t\xc3\xa9 \xe2\x96\x81\xf0\x9f\x98\x80 <|im_end|>\n\n";
    int32_t ids[256];
    for (int special = 0; special < 2; special++) {
        int k = tokenizer_encode(&v, text, sizeof text - 1, true, special, ids, 256, &err);
        for (int i = 0; i < k && i < 256; i++) {
            char buf[256];
            if (ids[i] < 0 || ids[i] >= v.n) abort();
            tokenizer_token_bytes(&v, ids[i], buf, sizeof buf);
        }
    }
    vocab_free(&v);
    return 0;
}
