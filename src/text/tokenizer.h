/* Text <-> token ids: the entry point that picks the encoder from the vocabulary's kind (spm.h,
 * bpe.h) and splits out special tokens, and the bytes each token prints as. The vocabulary comes
 * from vocab_gguf.h, tokenizer_json.h or spm_model.h. */
#ifndef TS_TEXT_TOKENIZER_H
#define TS_TEXT_TOKENIZER_H
#include "text/vocab.h"

/* Encodes UTF-8 text (invalid UTF-8 is an error). parse_special: text equal to a control or
 * user-defined token is emitted as that single token. Returns the count (which may exceed max_out;
 * only max_out ids are written) or -1. */
int tokenizer_encode(const vocab *v, const char *text, size_t len, bool add_bos, bool parse_special,
             int32_t *out, int max_out, ts_error *err);

/* The bytes a token prints as: byte tokens <0xNN> give that byte, U+2581 becomes ' ' (SPM), the
 * byte-level BPE unicode map is undone (BPE), control tokens give "". Writes into buf (cap bytes),
 * returns the length (or -1 if cap is too small). */
int tokenizer_token_bytes(const vocab *v, int32_t id, char *buf, size_t cap);

#endif
