/* Placeholder until the byte-level BPE tokenizer lands (owned by the BPE work). */
#include "text/tokenizer.h"
#include "core/error.h"
int bpe_encode(const vocab *v, const char *text, size_t len, int32_t *out, int max_out, ts_error *err) {
    (void)v; (void)text; (void)len; (void)out; (void)max_out;
    return ts_fail(err, "byte-level BPE tokenizer not implemented yet");
}
