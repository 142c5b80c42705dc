#include "core/grapheme.h"
#include <stdbool.h>
#include "core/grapheme_tables.h"

uint8_t grapheme_props(uint32_t cp) {
    if (cp >= 0x110000) return GRAPHEME_OTHER;
    return grapheme_blocks[grapheme_stage1[cp / 128]][cp % 128];
}

static bool is_control(int b) { return b == GRAPHEME_CR || b == GRAPHEME_LF || b == GRAPHEME_CONTROL; }

/* Rule GB11's context, as a state carried from code point to code point: what the text up to and
 * including the previous code point ends with. */
enum { PICT_NONE, PICT_SEEN /* ExtPict Extend* */, PICT_ZWJ /* ExtPict Extend* ZWJ */ };

/* Whether there is no boundary between a code point of break value prev and the next one (break value
 * cur, Extended_Pictographic when cur_pict); pict is GB11's state before the next one, ri the number
 * of Regional_Indicators in a row that end with prev. The rules in UAX #29's order, first match
 * wins (GB1, GB2: the ends of the text, are the caller's). */
static bool no_break(int prev, int cur, bool cur_pict, int pict, size_t ri) {
    if (prev == GRAPHEME_CR && cur == GRAPHEME_LF) return true;                          /* GB3 */
    if (is_control(prev)) return false;                                                  /* GB4 */
    if (is_control(cur)) return false;                                                   /* GB5 */
    if (prev == GRAPHEME_L && (cur == GRAPHEME_L || cur == GRAPHEME_V || cur == GRAPHEME_LV ||
                               cur == GRAPHEME_LVT)) return true;                        /* GB6 */
    if ((prev == GRAPHEME_LV || prev == GRAPHEME_V) && (cur == GRAPHEME_V || cur == GRAPHEME_T))
        return true;                                                                     /* GB7 */
    if ((prev == GRAPHEME_LVT || prev == GRAPHEME_T) && cur == GRAPHEME_T) return true;  /* GB8 */
    if (cur == GRAPHEME_EXTEND || cur == GRAPHEME_ZWJ) return true;                      /* GB9 */
    if (cur == GRAPHEME_SPACING_MARK) return true;                                       /* GB9a */
    if (prev == GRAPHEME_PREPEND) return true;                                           /* GB9b */
    /* GB9c (Unicode 15.1, Indic_Conjunct_Break) is not in the 15.0 data: see grapheme.h */
    if (pict == PICT_ZWJ && cur_pict) return true;                                       /* GB11 */
    if (prev == GRAPHEME_REGIONAL_INDICATOR && cur == GRAPHEME_REGIONAL_INDICATOR && ri % 2 == 1)
        return true;                                                                     /* GB12, GB13 */
    return false;                                                                        /* GB999 */
}

size_t grapheme_next_break(const uint32_t *cps, size_t n, size_t start) {
    if (start >= n) return n;
    uint8_t p = grapheme_props(cps[start]);
    int prev = p & GRAPHEME_BREAK_MASK;
    int pict = p & GRAPHEME_EXT_PICT ? PICT_SEEN : PICT_NONE;
    size_t ri = prev == GRAPHEME_REGIONAL_INDICATOR;
    for (size_t i = start + 1; i < n; i++) {
        uint8_t q = grapheme_props(cps[i]);
        int cur = q & GRAPHEME_BREAK_MASK;
        bool cur_pict = (q & GRAPHEME_EXT_PICT) != 0;
        if (!no_break(prev, cur, cur_pict, pict, ri)) return i;
        if (cur_pict) pict = PICT_SEEN;
        else if (pict == PICT_SEEN && cur == GRAPHEME_EXTEND) pict = PICT_SEEN;
        else if (pict == PICT_SEEN && cur == GRAPHEME_ZWJ) pict = PICT_ZWJ;
        else pict = PICT_NONE;
        ri = cur == GRAPHEME_REGIONAL_INDICATOR ? ri + 1 : 0;
        prev = cur;
    }
    return n;
}
