/* The data of Unicode normalization (unicode_norm.c), generated into unicode_norm_tables.c by
 * tools/gen_unicode_norm.py from the Unicode Character Database. */
#ifndef TS_CORE_UNICODE_NORM_TABLES_H
#define TS_CORE_UNICODE_NORM_TABLES_H
#include <stdint.h>

/* canonical combining class: unicode_ccc_blocks[unicode_ccc_stage1[cp / 128]][cp % 128] */
extern const uint8_t unicode_ccc_stage1[0x110000 / 128];
extern const uint8_t unicode_ccc_blocks[][128];
/* the code points with a decomposition, ascending, and their full decompositions in the pool */
extern const int unicode_decomp_count;
extern const uint32_t unicode_decomp_cp[], unicode_decomp_pool[];
extern const uint16_t unicode_decomp_start[];
extern const uint8_t unicode_decomp_canon_len[], unicode_decomp_compat_len[];
/* primary composites: key first << 21 | second, ascending, and the composite */
extern const int unicode_compose_count;
extern const uint64_t unicode_compose_key[];
extern const uint32_t unicode_compose_value[];
/* full lowercase mappings: code points ascending, the first and the second (or 0) code point */
extern const int unicode_lower_count;
extern const uint32_t unicode_lower_cp[], unicode_lower_first[], unicode_lower_second[];

#endif
