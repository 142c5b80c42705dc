/* Byte-level BPE (GPT-2 style) and rank-merged SentencePiece-style BPE (bpe.c), and the merge
 * table both merge through. */
#ifndef TS_TEXT_BPE_H
#define TS_TEXT_BPE_H
#include "text/vocab.h"

/* Byte-level BPE encode of one text segment (no special-token parsing, no BOS); a VOCAB_SPM
 * vocabulary with merges goes through bpe_encode_spm_segment with v->add_space_prefix. */
int bpe_encode(const vocab *v, const char *text, size_t len, int32_t *out, int max_out, ts_error *err);

/* One piece of text already through the vocabulary's normalizers (code points): the pipeline's
 * rewrite (at_start: the piece begins the input) and split, then each piece merged by rank;
 * byte-level or SentencePiece-style symbols by the vocabulary's kind. */
int bpe_encode_normalized(const vocab *v, const uint32_t *cps, size_t n, bool at_start, int32_t *out, int max_out,
                          ts_error *err);

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
 * by rank through v->merges: tokenizer.json BPE models such as Gemma 3. */
int bpe_encode_spm_segment(const vocab *v, const char *text, size_t len, bool space_prefix,
                           int32_t *out, int max_out, ts_error *err);

#endif
