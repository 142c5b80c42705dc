/* The vocabulary every tokenizer kind shares: token strings, scores, attributes, special ids, and a
 * string -> id hash. Filled from GGUF metadata (tokenizer.ggml.*, vocab_gguf.c), a tokenizer.json
 * (tokenizer_json.c) or a SentencePiece tokenizer.model (spm_model.c). */
#ifndef TS_TEXT_VOCAB_H
#define TS_TEXT_VOCAB_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "tessera.h"

/* Token attributes, numbered as GGUF's tokenizer.ggml.token_type. */
enum token_attr {
    TOKEN_UNDEFINED = 0, TOKEN_NORMAL = 1, TOKEN_UNKNOWN = 2, TOKEN_CONTROL = 3,
    TOKEN_USER_DEFINED = 4, TOKEN_UNUSED = 5, TOKEN_BYTE = 6
};

enum vocab_kind {
    VOCAB_SPM,        /* SentencePiece-style BPE: merge by score, byte fallback, U+2581 for spaces */
    VOCAB_BPE_BYTES   /* byte-level BPE (gpt2): pre-tokenizer split, bytes->unicode map, merge by rank */
};

enum { VOCAB_LSTRIP = 1, VOCAB_RSTRIP = 2 };

typedef struct vocab {
    int kind;                 /* enum vocab_kind */
    int n;                    /* number of tokens */
    char **text;              /* token strings as stored (owned, NUL-terminated) */
    uint32_t *len;            /* their byte lengths */
    float *score;             /* SPM merge scores (0 when absent) */
    uint8_t *attr;            /* enum token_attr */
    /* tokenizer.json added tokens: VOCAB_LSTRIP / VOCAB_RSTRIP per token (the whitespace beside a
     * match goes with it); NULL when no token has them */
    uint8_t *strip;
    /* tokenizer.json added tokens marked "normalized", when the pipeline normalizes: their content
     * through the normalizers (owned, NUL-terminated), matched in the normalized text rather than
     * the input; NULL for the others, and NULL as a whole when there are none */
    char **norm_text;
    /* open-addressing hash: text -> id */
    int32_t *hash_ids;
    uint32_t hash_cap;        /* power of two */
    /* BPE merges: "left right" pairs with rank = index (owned); NULL/0 for SPM */
    char **merges;
    int n_merges;
    char *pre;                /* pre-tokenizer name (tokenizer.ggml.pre), owned, may be NULL */
    /* byte-level: the normalizer and pre-tokenizer as steps (pipeline.h: a tokenizer.json's, or a
     * GGUF name's regex list), owned; NULL: the hand-written pre-tokenizer of `pre` */
    struct pipeline *pipeline;
    bool ignore_merges;       /* with a pipeline: a piece that is itself a token is emitted whole */
    bool fuse_unk;            /* tokenizer.json: consecutive unknown characters make one unknown token */
    int32_t bos, eos, eot, unk, pad;   /* -1 when absent */
    bool add_bos, add_eos;
    bool add_space_prefix;    /* SPM: prepend U+2581 to the text */
    /* BPE merge lookup (left id, right id) -> rank, built by bpe_prepare() in text/bpe.h;
     * owned (freed by merge_table_free, which vocab_free calls), NULL until prepared (the encoder
     * then builds one per call) */
    struct bpe_merge_table *merge_table;
    void (*merge_table_free)(struct bpe_merge_table *t);
} vocab;

/* Builds v->hash_ids from v->text (call after filling text/len). */
int  vocab_build_hash(vocab *v, ts_error *err);
/* id of the token whose text is exactly s[0..len), or -1. */
int32_t vocab_find(const vocab *v, const char *s, size_t len);
void vocab_free(vocab *v);
/* Sets v->eot, when not stated, to the first well-known end-of-turn token the vocabulary holds
 * ("<|eot_id|>", "<|im_end|>", "<end_of_turn>", "<|end|>", "<turn|>"). */
void vocab_find_eot(vocab *v);
/* 0 when an encoder may take text[0..len): valid UTF-8 of at most INT_MAX / 4 bytes; else -1 and
 * err says which. */
int  vocab_check_text(const char *text, size_t len, ts_error *err);

#endif
