/* Hugging Face tokenizers' "Precompiled" normalizer: a SentencePiece model's compiled normalization
 * rules (tokenizer.json: {"type": "Precompiled", "precompiled_charsmap": "<base64>"}), applied as
 * Hugging Face applies them, which is not quite as SentencePiece does.
 *
 * The charsmap: a little-endian u32 trie_size (bytes), a Darts-clone double-array trie of
 * trie_size / 4 u32 units mapping UTF-8 source strings to byte offsets, then the pool of replacement
 * strings (UTF-8, each ended by a NUL byte or by the end of the blob).
 *
 * transform(chunk): a common-prefix search of the chunk's UTF-8 bytes in the trie (stopping at a
 * NUL byte); the FIRST result, i.e. the SHORTEST source that is a prefix of the chunk, gives the
 * replacement of the WHOLE chunk: the pool string at its offset. No result: no replacement.
 * (spm_precompiled's Precompiled::transform.)
 *
 * normalize (tokenizers' normalizers/precompiled.rs): for each extended grapheme cluster of the text
 * (core/grapheme.h): when its UTF-8 form is shorter than 6 bytes and transform(cluster) gives a
 * replacement, the cluster becomes that replacement; otherwise each code point of the cluster
 * becomes transform(its UTF-8 form), or stays as it is when that gives none.
 *
 * SentencePiece itself instead replaces the LONGEST source that prefixes the rest of the text, across
 * cluster boundaries. The two differ when a source matches only the start of a cluster under 6 bytes
 * (Hugging Face replaces the whole cluster, dropping the rest: with the sources "Ａ" -> "A" and
 * "Ａ" U+0301 -> "Á", the cluster "Ａ" U+0301 becomes "A"), when a source spans two clusters or
 * covers several code points of a cluster of 6 bytes or more (Hugging Face never tries it). This
 * module gives Hugging Face's result.
 *
 * Clusters are Unicode 15.0's (core/grapheme.h: no rule GB9c). A newer unicode-segmentation also
 * joins Indic conjuncts (consonant, virama, consonant): such a cluster is 9 bytes or more, so goes
 * code point by code point, whereas 15.0 starts a new cluster at the second consonant, which may be
 * under 6 bytes and be looked up whole. The results differ only if a source is a proper prefix of
 * that piece (the consonant and a mark after it).
 *
 * A charsmap is checked when it is loaded, so that normalizing cannot read outside it: every leaf
 * the trie can reach must hold a pool offset at a character start (or at the pool's end: an empty
 * replacement), and the pool must be valid UTF-8 (as Hugging Face requires). A trie step that leads
 * past the array counts as a mismatch. */
#ifndef TS_TEXT_PRECOMPILED_H
#define TS_TEXT_PRECOMPILED_H
#include <stddef.h>
#include <stdint.h>
#include "tessera.h"

typedef struct precompiled precompiled;

/* From the base64 text of a precompiled_charsmap (standard alphabet, '=' padding required, no
 * whitespace: the encoding Hugging Face reads). -1 with err (one line, "precompiled_charsmap ...")
 * for bad base64 or a malformed charsmap. */
int  precompiled_from_base64(const char *b64, size_t len, precompiled **out, ts_error *err);
/* The same from the decoded bytes. */
int  precompiled_from_blob(const uint8_t *blob, size_t len, precompiled **out, ts_error *err);
void precompiled_free(precompiled *pc);

/* cps[0..n) normalized into *out (malloc'd, *out_n code points; a valid pointer even when empty).
 * Values that are not Unicode scalar values (surrogates, past U+10FFFF) are kept and never match.
 * -1 with err only when out of memory. */
int  precompiled_normalize(const precompiled *pc, const uint32_t *cps, size_t n, uint32_t **out, size_t *out_n,
                           ts_error *err);

#endif
