/* Unicode character properties the pre-tokenizers need: the general category class (\p{L}, \p{N},
 * \p{P}, ...), White_Space (\s), and upper/lower case letters. The data lives in the generated
 * src/core/unicode_tables.c (tools/gen_unicode_tables.py over the Unicode Character Database). */
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

#define UNICODE_BLOCK 128
extern const uint16_t unicode_stage1[0x110000 / UNICODE_BLOCK];
extern const uint8_t unicode_stage2[][UNICODE_BLOCK];

static inline uint8_t unicode_flags(uint32_t cp) {
    if (cp >= 0x110000) return 0;
    return unicode_stage2[unicode_stage1[cp / UNICODE_BLOCK]][cp % UNICODE_BLOCK];
}
static inline int  unicode_class(uint32_t cp) { return unicode_flags(cp) & UNICODE_CLASS_MASK; }
static inline bool unicode_is_letter(uint32_t cp) { return unicode_class(cp) == UNICODE_LETTER; }
static inline bool unicode_is_number(uint32_t cp) { return unicode_class(cp) == UNICODE_NUMBER; }
static inline bool unicode_is_punct(uint32_t cp) { return unicode_class(cp) == UNICODE_PUNCTUATION; }
static inline bool unicode_is_mark(uint32_t cp) { return unicode_class(cp) == UNICODE_MARK; }
static inline bool unicode_is_symbol(uint32_t cp) { return unicode_class(cp) == UNICODE_SYMBOL; }
static inline bool unicode_is_space(uint32_t cp) { return (unicode_flags(cp) & UNICODE_WHITESPACE) != 0; }

#endif
