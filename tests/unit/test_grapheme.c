/* Extended grapheme clusters (core/grapheme.h) against the Unicode Character Database's own
 * conformance file: every line of GraphemeBreakTest-15.0.0.txt, checked in without its comments as
 * tests/unit/grapheme_break_vectors.txt (tools/gen_grapheme.py writes it, so the test needs no
 * /usr/share/unicode). Each line's boundaries must be exactly the ones grapheme_next_break finds
 * walking from 0. Then a few properties and sequences by hand: emoji ZWJ sequences, flags, Hangul,
 * the Indic conjunct that Unicode 15.0 still splits (no GB9c), values past U+10FFFF. */
#include "check.h"
#include "core/grapheme.h"
#include <stdbool.h>
#include <string.h>

#define MAX_CPS 64

/* One test line: its code points and, for each position 0..n, whether a boundary is expected there. */
typedef struct { uint32_t cp[MAX_CPS]; bool brk[MAX_CPS + 1]; size_t n; } case_line;

static const char DIVIDE[] = "\xc3\xb7", NO_DIVIDE[] = "\xc3\x97";   /* U+00F7, U+00D7 in UTF-8 */

/* "÷ 0020 × 0308 ÷" -> case; false if the line is malformed */
static bool parse_line(const char *s, const char *end, case_line *c) {
    c->n = 0;
    bool want_mark = true;
    while (s < end) {
        if (*s == ' ' || *s == '\t') { s++; continue; }
        if (want_mark) {
            bool div = (size_t)(end - s) >= 2 && memcmp(s, DIVIDE, 2) == 0;
            bool nodiv = (size_t)(end - s) >= 2 && memcmp(s, NO_DIVIDE, 2) == 0;
            if (!div && !nodiv) return false;
            c->brk[c->n] = div;
            s += 2;
            want_mark = false;
        } else {
            char *next;
            unsigned long v = strtoul(s, &next, 16);
            if (next == s || c->n >= MAX_CPS) return false;
            c->cp[c->n++] = (uint32_t)v;
            s = next;
            want_mark = true;
        }
    }
    return want_mark == false && c->n > 0;   /* ends with a mark */
}

/* Whether walking cps[0..n) with grapheme_next_break finds exactly the expected boundaries. */
static bool boundaries_match(const case_line *c) {
    bool got[MAX_CPS + 1] = { false };
    got[0] = true;
    for (size_t at = 0; at < c->n;) {
        size_t end = grapheme_next_break(c->cp, c->n, at);
        if (end <= at || end > c->n) return false;
        got[end] = true;
        at = end;
    }
    for (size_t i = 0; i <= c->n; i++)
        if (got[i] != c->brk[i]) return false;
    return true;
}

/* The cluster lengths of cps[0..n), written to lens; returns their count. */
static size_t clusters(const uint32_t *cps, size_t n, size_t *lens, size_t max) {
    size_t k = 0;
    for (size_t at = 0; at < n && k < max;) {
        size_t end = grapheme_next_break(cps, n, at);
        lens[k++] = end - at;
        at = end;
    }
    return k;
}

static bool same_lens(const size_t *a, size_t na, const size_t *b, size_t nb) {
    return na == nb && memcmp(a, b, na * sizeof *a) == 0;
}

int main(void) {
    size_t len;
    char *text = read_all("tests/unit/grapheme_break_vectors.txt", &len);
    CHECK(text != NULL, "the grapheme break vectors are readable");
    if (!text) CHECK_EXIT();
    int lines = 0, bad_lines = 0, failed = 0;
    for (char *line = text; *line;) {
        char *eol = strchr(line, '\n');
        if (!eol) eol = line + strlen(line);
        if (*line != '#' && eol > line) {
            case_line c;
            if (!parse_line(line, eol, &c)) bad_lines++;
            else {
                lines++;
                if (!boundaries_match(&c)) {
                    if (failed < 10) printf("# fails: %.*s\n", (int)(eol - line), line);
                    failed++;
                }
            }
        }
        line = *eol ? eol + 1 : eol;
    }
    free(text);
    CHECK(lines >= 600 && bad_lines == 0, "%d conformance lines read (%d malformed)", lines, bad_lines);
    CHECK(failed == 0, "every conformance line's boundaries are found (%d of %d fail)", failed, lines);

    /* properties */
    CHECK(grapheme_props(0x0D) == GRAPHEME_CR && grapheme_props(0x0A) == GRAPHEME_LF &&
          grapheme_props(0x00) == GRAPHEME_CONTROL && grapheme_props('a') == GRAPHEME_OTHER,
          "CR, LF, NUL (Control) and 'a' (Other)");
    CHECK(grapheme_props(0x0301) == GRAPHEME_EXTEND && grapheme_props(0x200D) == GRAPHEME_ZWJ &&
          grapheme_props(0x0903) == GRAPHEME_SPACING_MARK && grapheme_props(0x0600) == GRAPHEME_PREPEND,
          "U+0301 Extend, U+200D ZWJ, U+0903 SpacingMark, U+0600 Prepend");
    CHECK(grapheme_props(0x1100) == GRAPHEME_L && grapheme_props(0x1161) == GRAPHEME_V &&
          grapheme_props(0x11A8) == GRAPHEME_T && grapheme_props(0xAC00) == GRAPHEME_LV &&
          grapheme_props(0xAC01) == GRAPHEME_LVT && grapheme_props(0xD7A3) == GRAPHEME_LVT,
          "Hangul jamo L, V, T and syllables LV (U+AC00), LVT (U+AC01, U+D7A3)");
    CHECK(grapheme_props(0x1F600) == GRAPHEME_EXT_PICT && grapheme_props(0x00A9) == GRAPHEME_EXT_PICT &&
          grapheme_props(0x1F1E6) == GRAPHEME_REGIONAL_INDICATOR && grapheme_props(0x1F3FB) == GRAPHEME_EXTEND,
          "U+1F600 and U+00A9 Extended_Pictographic, U+1F1E6 Regional_Indicator, U+1F3FB (skin tone) Extend");
    CHECK(grapheme_props(0x110000) == GRAPHEME_OTHER && grapheme_props(0xFFFFFFFF) == GRAPHEME_OTHER &&
          grapheme_props(0x10FFFF) == GRAPHEME_OTHER && grapheme_props(0xE0001) == GRAPHEME_CONTROL,
          "values past U+10FFFF are Other; U+10FFFF Other; U+E0001 Control");

    /* sequences */
    static const uint32_t empty[1] = { 0 };
    CHECK(grapheme_next_break(empty, 0, 0) == 0 && grapheme_next_break(empty, 1, 1) == 1 &&
          grapheme_next_break(empty, 1, 5) == 1, "start at or past the end returns n");
    {   /* family: man ZWJ woman ZWJ girl; thumbs up + skin tone; then 'x' */
        static const uint32_t s[] = { 0x1F468, 0x200D, 0x1F469, 0x200D, 0x1F467, 0x1F44D, 0x1F3FD, 'x' };
        size_t got[8], want[] = { 5, 2, 1 };
        CHECK(same_lens(got, clusters(s, 8, got, 8), want, 3), "emoji ZWJ sequence and modifier sequence are one cluster each");
    }
    {   /* ZWJ after a non-pictographic letter does not glue the next pictograph (GB11 needs ExtPict first) */
        static const uint32_t s[] = { 'a', 0x200D, 0x1F469 };
        size_t got[3], want[] = { 2, 1 };
        CHECK(same_lens(got, clusters(s, 3, got, 3), want, 2), "a ZWJ U+1F469: break before the pictograph");
    }
    {   /* seven regional indicators: pairs, then one alone */
        static const uint32_t s[] = { 0x1F1E6, 0x1F1E7, 0x1F1E8, 0x1F1E9, 0x1F1EA, 0x1F1EB, 0x1F1EC };
        size_t got[7], want[] = { 2, 2, 2, 1 };
        CHECK(same_lens(got, clusters(s, 7, got, 7), want, 4), "7 regional indicators: 2+2+2+1");
    }
    {   /* CR LF is one cluster; CR CR two; a combining mark after LF stands alone */
        static const uint32_t s[] = { 0x0D, 0x0A, 0x0D, 0x0D, 0x0A, 0x0301 };
        size_t got[6], want[] = { 2, 1, 2, 1 };
        CHECK(same_lens(got, clusters(s, 6, got, 6), want, 4), "CR LF | CR | CR LF | U+0301");
    }
    {   /* Hangul: L V T as one syllable, LV T, then LVT L */
        static const uint32_t s[] = { 0x1100, 0x1161, 0x11A8, 0xAC00, 0x11A8, 0xAC01, 0x1100 };
        size_t got[7], want[] = { 3, 2, 1, 1 };
        CHECK(same_lens(got, clusters(s, 7, got, 7), want, 4), "Hangul L V T | LV T | LVT | L");
    }
    {   /* Devanagari KA VIRAMA SSA: Unicode 15.0 breaks after the virama (GB9c, 15.1, would not) */
        static const uint32_t s[] = { 0x0915, 0x094D, 0x0937, 0x093F };
        size_t got[4], want[] = { 2, 2 };
        CHECK(same_lens(got, clusters(s, 4, got, 4), want, 2), "U+0915 U+094D | U+0937 U+093F (no GB9c in 15.0)");
    }
    {   /* prepend + letter; e + two combining marks; a value past U+10FFFF takes marks like any Other */
        static const uint32_t s[] = { 0x0600, 'a', 'e', 0x0301, 0x0302, 0x110000, 0x0301 };
        size_t got[7], want[] = { 2, 3, 2 };
        CHECK(same_lens(got, clusters(s, 7, got, 7), want, 3), "Prepend a | e U+0301 U+0302 | U+110000 U+0301");
    }
    {   /* start is taken as the start of the text, even inside a cluster */
        static const uint32_t s[] = { 'e', 0x0301, 0x0302, 'f' };
        CHECK(grapheme_next_break(s, 4, 1) == 3 && grapheme_next_break(s, 4, 3) == 4,
              "a walk may start anywhere: from U+0301 the cluster ends before 'f'");
    }
    CHECK_EXIT();
}
