/* SentencePiece-style BPE merged by score, as llama.cpp runs GGUF "llama" vocabularies (spm.c). */
#ifndef TS_TEXT_SPM_H
#define TS_TEXT_SPM_H
#include "text/vocab.h"

/* Encode of one text segment (no special-token parsing, no BOS), the dummy prefix "▁" added when
 * the vocabulary asks for it. */
int spm_encode(const vocab *v, const char *text, size_t len, int32_t *out, int max_out, ts_error *err);
/* spm_encode with the dummy-prefix choice made by the caller: tokenizer_encode() prefixes "▁" (when
 * the vocabulary asks for it) to the first text segment and to each one that follows a special
 * token, as llama.cpp does; spm_encode itself treats its text as the first segment. */
int spm_encode_segment(const vocab *v, const char *text, size_t len, bool space_prefix,
                       int32_t *out, int max_out, ts_error *err);

#endif
