/* Text <-> token ids. One entry point per tokenizer kind, chosen from the vocabulary's kind. */
#ifndef TS_TEXT_TOKENIZER_H
#define TS_TEXT_TOKENIZER_H
#include "text/vocab.h"
#include "io/gguf.h"

/* Reads tokenizer.ggml.{model,pre,tokens,scores,token_type,merges,bos_token_id,eos_token_id,
 * eot_token_id,unknown_token_id,padding_token_id,add_bos_token,add_eos_token,add_space_prefix}.
 * An unknown tokenizer.ggml.model is an error naming the file. */
int vocab_from_gguf(const gguf_file *g, vocab *out, ts_error *err);

/* Encodes UTF-8 text (invalid UTF-8 is an error). parse_special: text equal to a control or
 * user-defined token is emitted as that single token. Returns the count (which may exceed max_out;
 * only max_out ids are written) or -1. */
int tokenize(const vocab *v, const char *text, size_t len, bool add_bos, bool parse_special,
             int32_t *out, int max_out, ts_error *err);

/* SentencePiece-style encode of one text segment (no special-token parsing, no BOS). */
int spm_encode(const vocab *v, const char *text, size_t len, int32_t *out, int max_out, ts_error *err);
/* spm_encode with the dummy-prefix choice made by the caller: tokenize() prefixes "▁" (when the
 * vocabulary asks for it) to the first text segment and to each one that follows a special token,
 * as llama.cpp does; spm_encode itself treats its text as the first segment. */
int spm_encode_segment(const vocab *v, const char *text, size_t len, bool space_prefix,
                       int32_t *out, int max_out, ts_error *err);
/* Byte-level BPE encode of one text segment (no special-token parsing, no BOS). */
int bpe_encode(const vocab *v, const char *text, size_t len, int32_t *out, int max_out, ts_error *err);

/* The bytes a token prints as: byte tokens <0xNN> give that byte, U+2581 becomes ' ' (SPM), the
 * byte-level BPE unicode map is undone (BPE), control tokens give "". Writes into buf (cap bytes),
 * returns the length (or -1 if cap is too small). */
int token_to_bytes(const vocab *v, int32_t id, char *buf, size_t cap);

#endif
