/* Grammar-constrained sampling: the tokens whose text the grammar cannot accept next are masked
 * before the sampler sees the logits. The vocabulary's texts are sorted once (token_texts), so the
 * tokens that begin alike are tried together; but first only the most likely tokens are tried one
 * by one, which is all greedy decoding and top-k sampling need in the common case. */
#ifndef TS_GENERATE_CONSTRAIN_H
#define TS_GENERATE_CONSTRAIN_H
#include "tessera.h"
#include "text/grammar.h"

typedef struct token_texts {
    int n;                       /* tokens with a text (those that print nothing are left out) */
    int32_t *id;                 /* sorted by text */
    const char **text;
    uint16_t *len, *lcp;         /* lcp[i]: bytes text[i] shares with text[i - 1] */
    int32_t *at_of_id;           /* the sorted index of each token id, -1 when it has no text */
    uint8_t *allowed;            /* scratch for the walk */
    char *bytes;
} token_texts;

int  constrain_texts_build(const ts_model *m, token_texts **out, ts_error *err);
void constrain_texts_free(token_texts *t);

/* Masks (-inf) in logits (n_vocab of them, as the sampler will rank them) every token the matcher
 * cannot accept: end-of-generation tokens unless the text is complete, tokens that print nothing,
 * tokens whose bytes the grammar refuses. need: how many of the most likely allowed tokens the
 * sampler can use (1 greedy, top_k, 0 all): when that many are found among the most likely tokens
 * the rest are masked without trying them. 0, or -1 (err) when no token is allowed or past the
 * grammar's limits. */
int  constrain_logits(grammar_matcher *gm, const token_texts *tt, const ts_model *m, float *logits, int need,
                      ts_error *err);

#endif
