/* A vocabulary from a Hugging Face tokenizer.json (tokenizer_json.c). */
#ifndef TS_TEXT_TOKENIZER_JSON_H
#define TS_TEXT_TOKENIZER_JSON_H
#include "text/vocab.h"

/* Reads a Hugging Face tokenizer.json (model type BPE: byte-level with a known pre-tokenizer, or
 * SentencePiece-style with byte fallback) and, when present, tokenizer_config.json in the same
 * folder (add_bos_token, add_eos_token, bos/eos/pad tokens). Errors name the file. */
int tokenizer_json_read(const char *path, vocab *out, ts_error *err);

#endif
