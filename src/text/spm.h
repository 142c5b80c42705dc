/* SentencePiece-style BPE merged by score, as llama.cpp runs GGUF "llama" vocabularies (spm.c), and
 * the SentencePiece text conventions every tokenizer here shares: a space is written U+2581, and a
 * byte no token spells falls back to a "<0xNN>" token. */
#ifndef TS_TEXT_SPM_H
#define TS_TEXT_SPM_H
#include "text/vocab.h"

/* U+2581 LOWER ONE EIGHTH BLOCK, which SentencePiece writes for a space (3 bytes of UTF-8). */
#define SPM_SPACE_MARK "\xE2\x96\x81"

/* Encode of one text segment (no special-token parsing, no BOS), the dummy prefix "▁" added when
 * the vocabulary asks for it. */
int spm_encode(const vocab *v, const char *text, size_t len, int32_t *out, int max_out, ts_error *err);
/* spm_encode with the dummy-prefix choice made by the caller: tokenizer_encode() prefixes "▁" (when
 * the vocabulary asks for it) to the first text segment and to each one that follows a special
 * token, as llama.cpp does; spm_encode itself treats its text as the first segment. */
int spm_encode_segment(const vocab *v, const char *text, size_t len, bool space_prefix,
                       int32_t *out, int max_out, ts_error *err);

/* text[0..len) with every ' ' written as U+2581, and one U+2581 in front when space_prefix, into
 * out (room for 3 + 3 * len bytes); returns the length written. */
size_t spm_escape_spaces(const char *text, size_t len, bool space_prefix, char *out);
/* The id of byte b's fallback token "<0xNN>" (upper-case hex, as SentencePiece names them), or -1
 * when the vocabulary has none. */
int32_t spm_byte_token(const vocab *v, unsigned char b);
/* The byte a token text "<0xNN>" stands for (hex digits of either case), or -1 for any other text. */
int spm_byte_of_token(const char *s, size_t len);

#endif
