/* Pre-tokenizers for byte-level BPE: split text (as code points) into the pieces that BPE merges
 * never cross. Each kind reproduces the regex list llama.cpp uses for a tokenizer.ggml.pre name,
 * written out by hand as matchers over Unicode categories (no regex engine).
 *
 * As in llama.cpp, a kind is a sequence of expressions applied one after the other: each
 * expression splits every current piece into its matches and the unmatched stretches between them
 * (a piece's end acts as the end of the text for lookaheads and `$`). */
#ifndef TS_TEXT_PRETOKENIZE_H
#define TS_TEXT_PRETOKENIZE_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "tessera.h"

typedef enum pretok_kind {
    PRETOK_DEFAULT,          /* llama.cpp's fallback list (tokenizer.ggml.pre missing or "default") */
    PRETOK_GPT2,             /* GPT-2's regex */
    PRETOK_LLAMA3,           /* Llama 3: case-insensitive contractions, digits in threes */
    PRETOK_QWEN2,            /* as Llama 3 but single digits */
    PRETOK_SEED_CODER,       /* as Qwen2 without newlines after punctuation */
    PRETOK_FALCON,           /* punctuation runs, GPT-2, digits in threes */
    PRETOK_DEEPSEEK_LLM,
    PRETOK_DEEPSEEK_CODER,
    PRETOK_DEEPSEEK3,        /* DeepSeek V3, Hunyuan dense */
    PRETOK_STARCODER,        /* single digits, then GPT-2 (also refact, command-r, smollm, ...) */
    PRETOK_PORO,             /* " ?[^(\s|.,!?…。，、।۔،)]+" (also bloom, gpt3-finnish) */
    PRETOK_VIKING,           /* poro, then single digits */
    PRETOK_TEKKEN,           /* Mistral tekken: case-split letter runs */
    PRETOK_GPT4O,            /* tekken-like with contractions suffix and digits in threes */
    PRETOK_COUNT
} pretok_kind;

/* What a tokenizer.ggml.pre name selects. */
typedef struct pretok_info {
    pretok_kind kind;
    bool ignore_merges;      /* a piece that is itself a token is emitted whole (llama3, tekken) */
} pretok_info;

/* Looks up a pre-tokenizer name; NULL or "" or "default" give PRETOK_DEFAULT. Unknown names are an
 * error naming them. */
int pretokenize_lookup(const char *name, pretok_info *out, ts_error *err);
/* Whether a tokenizer.ggml.pre name is a list of regexes for the regex engine (pipeline.h) rather than
 * a hand-written kind: then its regexes, their count and whether whole pieces that are tokens skip
 * the merges. */
bool pretokenize_regexes(const char *name, const char *const **regexes, int *n, bool *ignore_merges);
/* A canonical name for a kind (one pretokenize_lookup accepts). */
const char *pretokenize_name(pretok_kind kind);

/* Pieces of a text: piece i spans code points [i ? ends[i-1] : 0, ends[i]). */
typedef struct pretok_pieces { size_t *ends; size_t n, cap; } pretok_pieces;

/* Splits cps[0..n) per kind, replacing out's contents. -1 only when out of memory. */
int  pretokenize(pretok_kind kind, const uint32_t *cps, size_t n, pretok_pieces *out, ts_error *err);
void pretokenize_pieces_free(pretok_pieces *p);

#endif
