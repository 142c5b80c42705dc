/* Unicode character properties the pre-tokenizers need: the general category class (\p{L}, \p{N},
 * \p{P}, ...) and the two-letter category (\p{Lu}, \p{Mn}, ...), White_Space (\s), upper/lower case
 * letters, and simple case folding. The data lives in the generated src/core/unicode_tables.c
 * (tools/gen_unicode_tables.py over the Unicode Character Database 15.0). */
#ifndef TS_CORE_UNICODE_H
#define TS_CORE_UNICODE_H
#include <stdbool.h>
#include <stdint.h>

/* The low 3 bits of a code point's flags: the first letter of its general category. */
enum unicode_class {
    UNICODE_UNASSIGNED = 0, UNICODE_LETTER = 1, UNICODE_NUMBER = 2, UNICODE_PUNCTUATION = 3,
    UNICODE_MARK = 4, UNICODE_SYMBOL = 5, UNICODE_SEPARATOR = 6, UNICODE_OTHER = 7
};
#define UNICODE_CLASS_MASK 0x07
#define UNICODE_WHITESPACE 0x08   /* White_Space property (what \s matches) */
#define UNICODE_UPPER      0x10   /* general category Lu */
#define UNICODE_LOWER      0x20   /* general category Ll */

/* Bits 8..12 of a code point's entry: its two-letter general category (Cn for unassigned code points
 * and for values past U+10FFFF). */
enum unicode_category {
    UNICODE_CN, UNICODE_LU, UNICODE_LL, UNICODE_LT, UNICODE_LM, UNICODE_LO, UNICODE_MN, UNICODE_MC,
    UNICODE_ME, UNICODE_ND, UNICODE_NL, UNICODE_NO, UNICODE_PC, UNICODE_PD, UNICODE_PS, UNICODE_PE,
    UNICODE_PI, UNICODE_PF, UNICODE_PO, UNICODE_SM, UNICODE_SC, UNICODE_SK, UNICODE_SO, UNICODE_ZS,
    UNICODE_ZL, UNICODE_ZP, UNICODE_CC, UNICODE_CF, UNICODE_CS, UNICODE_CO, UNICODE_CATEGORY_COUNT
};
#define UNICODE_CATEGORY_SHIFT 8

#define UNICODE_BLOCK 128
extern const uint16_t unicode_stage1[0x110000 / UNICODE_BLOCK];
extern const uint16_t unicode_stage2[][UNICODE_BLOCK];

/* Flags in the low byte, category above (one lookup serves both). */
static inline uint16_t unicode_entry(uint32_t cp) {
    if (cp >= 0x110000) return 0;
    return unicode_stage2[unicode_stage1[cp / UNICODE_BLOCK]][cp % UNICODE_BLOCK];
}
static inline uint8_t unicode_flags(uint32_t cp) { return (uint8_t)unicode_entry(cp); }
static inline int unicode_category(uint32_t cp) { return unicode_entry(cp) >> UNICODE_CATEGORY_SHIFT; }
static inline int  unicode_class(uint32_t cp) { return unicode_flags(cp) & UNICODE_CLASS_MASK; }
static inline bool unicode_is_letter(uint32_t cp) { return unicode_class(cp) == UNICODE_LETTER; }
static inline bool unicode_is_number(uint32_t cp) { return unicode_class(cp) == UNICODE_NUMBER; }
static inline bool unicode_is_punct(uint32_t cp) { return unicode_class(cp) == UNICODE_PUNCTUATION; }
static inline bool unicode_is_mark(uint32_t cp) { return unicode_class(cp) == UNICODE_MARK; }
static inline bool unicode_is_symbol(uint32_t cp) { return unicode_class(cp) == UNICODE_SYMBOL; }
static inline bool unicode_is_space(uint32_t cp) { return (unicode_flags(cp) & UNICODE_WHITESPACE) != 0; }

/* Simple case folding (CaseFolding.txt statuses C and S). A code point's orbit is the set of code
 * points with the same fold, itself included (k K U+212A; s S U+017F). The table lists every code
 * point of an orbit of two or more, sorted, with its fold and the index of the next member round
 * its orbit. */
#define UNICODE_FOLD_ORBIT_MAX 4
extern const uint32_t unicode_fold_count;
extern const uint32_t unicode_fold_cp[], unicode_fold_to[];
extern const uint16_t unicode_fold_next[];

/* Index of cp in unicode_fold_cp, or -1 when its orbit is cp alone. */
static inline int32_t unicode_fold_index(uint32_t cp) {
    uint32_t lo = 0, hi = unicode_fold_count;
    while (lo < hi) {
        uint32_t mid = (lo + hi) / 2;
        if (unicode_fold_cp[mid] < cp) lo = mid + 1;
        else hi = mid;
    }
    return lo < unicode_fold_count && unicode_fold_cp[lo] == cp ? (int32_t)lo : -1;
}
static inline uint32_t unicode_fold(uint32_t cp) {
    int32_t i = unicode_fold_index(cp);
    return i < 0 ? cp : unicode_fold_to[i];
}
/* Writes cp's orbit to out, cp first; returns its size (1..UNICODE_FOLD_ORBIT_MAX). */
static inline int unicode_fold_orbit(uint32_t cp, uint32_t out[UNICODE_FOLD_ORBIT_MAX]) {
    int32_t first = unicode_fold_index(cp);
    out[0] = cp;
    if (first < 0) return 1;
    int n = 1;
    for (uint32_t i = unicode_fold_next[first]; i != (uint32_t)first && n < UNICODE_FOLD_ORBIT_MAX;
         i = unicode_fold_next[i])
        out[n++] = unicode_fold_cp[i];
    return n;
}

#endif
