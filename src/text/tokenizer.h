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
int tokenizer_encode(const vocab *v, const char *text, size_t len, bool add_bos, bool parse_special,
             int32_t *out, int max_out, ts_error *err);

/* SentencePiece-style encode of one text segment (no special-token parsing, no BOS). */
int spm_encode(const vocab *v, const char *text, size_t len, int32_t *out, int max_out, ts_error *err);
/* spm_encode with the dummy-prefix choice made by the caller: tokenizer_encode() prefixes "▁" (when the
 * vocabulary asks for it) to the first text segment and to each one that follows a special token,
 * as llama.cpp does; spm_encode itself treats its text as the first segment. */
int spm_encode_segment(const vocab *v, const char *text, size_t len, bool space_prefix,
                       int32_t *out, int max_out, ts_error *err);
/* Byte-level BPE encode of one text segment (no special-token parsing, no BOS). */
int bpe_encode(const vocab *v, const char *text, size_t len, int32_t *out, int max_out, ts_error *err);

/* ---- BPE merges (bpe.c) ---- */
typedef struct bpe_merge_table bpe_merge_table;
/* Builds the (left id, right id) -> (rank, merged id) table from v->merges. */
int  bpe_merge_table_build(const vocab *v, bpe_merge_table **out, ts_error *err);
void bpe_merge_table_free(bpe_merge_table *t);
/* Builds v->merge_table once (loaders call it; bpe_encode builds a temporary one per call
 * otherwise); vocab_free frees it. */
int  bpe_prepare(vocab *v, ts_error *err);
/* Scores for a score-merging (SentencePiece-style) encoder from the prepared merge table: the
 * earlier a token's first merge, the higher its score; -1e9 for tokens no merge produces. */
void bpe_scores_from_ranks(vocab *v);
/* SentencePiece-style text (spaces as U+2581, optional leading one, <0xNN> byte fallback) merged
 * by rank through v->merges: tokenizer.json BPE models such as Gemma 3. bpe_encode uses it for a
 * VOCAB_SPM vocabulary that has merges, with v->add_space_prefix. */
int bpe_encode_spm_segment(const vocab *v, const char *text, size_t len, bool space_prefix,
                           int32_t *out, int max_out, ts_error *err);

/* Reads a Hugging Face tokenizer.json (model type BPE: byte-level with a known pre-tokenizer, or
 * SentencePiece-style with byte fallback) and, when present, tokenizer_config.json in the same
 * folder (add_bos_token, add_eos_token, bos/eos/pad tokens). Errors name the file. */
int tokenizer_json_read(const char *path, vocab *out, ts_error *err);

/* Reads a SentencePiece tokenizer.model (protobuf ModelProto; BPE model type only): pieces, scores
 * and types, unk/bos/eos/pad ids from the trainer spec, add_space_prefix from the normalizer's
 * add_dummy_prefix; add_bos true, as for a GGUF "llama" vocabulary. Errors name the file. */
int spm_model_read(const char *path, vocab *out, ts_error *err);

/* The bytes a token prints as: byte tokens <0xNN> give that byte, U+2581 becomes ' ' (SPM), the
 * byte-level BPE unicode map is undone (BPE), control tokens give "". Writes into buf (cap bytes),
 * returns the length (or -1 if cap is too small). */
int tokenizer_token_bytes(const vocab *v, int32_t id, char *buf, size_t cap);

#endif
