/* The data of extended grapheme cluster segmentation (grapheme.c), generated into grapheme_tables.c
 * by tools/gen_grapheme.py from the Unicode Character Database. */
#ifndef TS_CORE_GRAPHEME_TABLES_H
#define TS_CORE_GRAPHEME_TABLES_H
#include <stdint.h>

/* grapheme_blocks[grapheme_stage1[cp / 128]][cp % 128]: the Grapheme_Cluster_Break value in the low
 * 4 bits, 0x10 for Extended_Pictographic (enum grapheme_break and GRAPHEME_EXT_PICT in grapheme.h) */
extern const uint8_t grapheme_stage1[0x110000 / 128];
extern const uint8_t grapheme_blocks[][128];

#endif
