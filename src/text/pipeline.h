/* A BPE tokenizer's text pipeline as data: the normalizer steps and the pre-tokenizer steps
 * of a tokenizer.json (or the regex list of a GGUF pre-tokenizer name), compiled once per
 * vocabulary and run on every encode (bpe.c): text -> normalized code points -> pieces that merges
 * never cross.
 *
 * Normalizers: Sequence, NFC, NFD, NFKC, NFKD, Lowercase, Strip, Replace (String or Regex), Prepend,
 * Precompiled (a SentencePiece charsmap, precompiled.h).
 * Pre-tokenizers: Sequence, Split (String or Regex, every behavior, invert), ByteLevel (its own
 * GPT-2 regex when use_regex), Digits, Punctuation, Whitespace, WhitespaceSplit, Metaspace (as the
 * first step: a rewrite of the text, then a split on its replacement character). Each step splits
 * every current piece on its own (a piece's end is the end of the text for `$` and lookaheads), as
 * Hugging Face tokenizers applies them. Anything else is refused by name. */
#ifndef TS_TEXT_PIPELINE_H
#define TS_TEXT_PIPELINE_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "tessera.h"
#include "io/json.h"
#include "text/regex.h"

typedef struct pipeline pipeline;

/* From a tokenizer.json's "normalizer" and "pre_tokenizer" (either NULL or JSON null: none). The
 * pre-tokenizer may end in ByteLevel (the byte mapping is the encoder's; add_prefix_space is
 * refused). path names the file in errors. */
int  pipeline_from_json(const json_value *normalizer, const json_value *pre_tokenizer, const char *path, pipeline **out,
                        ts_error *err);
/* From a list of regexes applied in turn, each isolating its matches in every current piece (a GGUF
 * pre-tokenizer name's list, as llama.cpp runs it). */
int  pipeline_from_regexes(const char *const *regexes, int n, pipeline **out, ts_error *err);
void pipeline_free(pipeline *p);

/* Whether the pipeline changes the text before splitting. */
bool pipeline_normalizes(const pipeline *p);
/* cps[0..n) normalized into *out (malloc'd, *out_n code points). -1 with err on failure. */
int  pipeline_normalize(const pipeline *p, const uint32_t *cps, size_t n, uint32_t **out, size_t *out_n, ts_error *err);
/* Whether the pre-tokenizer rewrites the text before splitting it (Metaspace). */
bool pipeline_rewrites(const pipeline *p);
/* Metaspace's rewrite of one piece of normalized text (spaces to its replacement character, which is
 * prepended as its scheme says; at_start: the piece begins the input, for prepend_scheme "first"). */
int  pipeline_rewrite(const pipeline *p, const uint32_t *cps, size_t n, bool at_start, uint32_t **out, size_t *out_n,
                      ts_error *err);
/* The pieces of (normalized, rewritten) cps[0..n), in order, as spans (a Removed split leaves gaps). Replaces
 * out's contents; -1 with err (a regex's step limit, out of memory). */
int  pipeline_split(const pipeline *p, const uint32_t *cps, size_t n, regex_matches *out, ts_error *err);

#endif
