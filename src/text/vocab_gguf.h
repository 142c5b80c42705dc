/* A vocabulary from GGUF tokenizer.ggml.* metadata (vocab_gguf.c). */
#ifndef TS_TEXT_VOCAB_GGUF_H
#define TS_TEXT_VOCAB_GGUF_H
#include "text/vocab.h"
#include "io/gguf.h"

/* Reads tokenizer.ggml.{model,pre,tokens,scores,token_type,merges,bos_token_id,eos_token_id,
 * eot_token_id,unknown_token_id,padding_token_id,add_bos_token,add_eos_token,add_space_prefix}.
 * An unknown tokenizer.ggml.model is an error naming the file. */
int vocab_from_gguf(const gguf_file *g, vocab *out, ts_error *err);

#endif
