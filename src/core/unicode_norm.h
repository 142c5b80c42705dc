/* Unicode normalization (UAX #15): NFC, NFD, NFKC and NFKD of a code point array, for the
 * normalizers of tokenizer.json files (src/text). The data (canonical combining classes, full
 * decompositions, primary composites) is generated into src/core/unicode_norm_tables.c by
 * tools/gen_unicode_norm.py from the Unicode Character Database, the same version as unicode.h's. */
#ifndef TS_CORE_UNICODE_NORM_H
#define TS_CORE_UNICODE_NORM_H
#include <stddef.h>
#include <stdint.h>

typedef enum unicode_form { UNICODE_NFC, UNICODE_NFD, UNICODE_NFKC, UNICODE_NFKD } unicode_form;

/* cps[0..n) in normal form `form` into a new array *out (malloc'd, *out_n code points; a valid
 * pointer even when n is 0). -1 only when out of memory. Text that is already in the form (all of
 * it below U+0300 for NFC) costs one pass and a copy. */
int unicode_normalize(unicode_form form, const uint32_t *cps, size_t n, uint32_t **out, size_t *out_n);

/* cps[0..n) lowercased code point by code point with the full mappings (as Rust's char::to_lowercase:
 * U+0130 becomes i + U+0307; no final-sigma context), into *out as unicode_normalize. */
int unicode_lowercase(const uint32_t *cps, size_t n, uint32_t **out, size_t *out_n);

/* The canonical combining class of a code point (0 for starters and for anything past U+10FFFF). */
uint8_t unicode_ccc(uint32_t cp);

#endif
