/* Unicode normalization against the Unicode Character Database's own conformance vectors (a sample
 * of NormalizationTest.txt, tests/unit/normalization_vectors.txt, written by
 * tools/gen_unicode_norm.py): for every line c1..c5, as the file's header states,
 *   c2 == NFC(c1) == NFC(c2) == NFC(c3),   c4 == NFC(c4) == NFC(c5)
 *   c3 == NFD(c1) == NFD(c2) == NFD(c3),   c5 == NFD(c4) == NFD(c5)
 *   c4 == NFKC(c1 .. c5),                  c5 == NFKD(c1 .. c5)
 * plus the forms of empty and ASCII text, and a code point past U+10FFFF left alone. */
#include "check.h"
#include "core/unicode_norm.h"
#include <string.h>

typedef struct { uint32_t cp[64]; size_t n; } seq;

/* "0044 0307" -> code points; false on a malformed column */
static bool parse_seq(const char *s, const char *end, seq *out) {
    out->n = 0;
    while (s < end) {
        while (s < end && *s == ' ') s++;
        if (s >= end) break;
        char *next;
        unsigned long v = strtoul(s, &next, 16);
        if (next == s || out->n >= 64) return false;
        out->cp[out->n++] = (uint32_t)v;
        s = next;
    }
    return out->n > 0;
}

static bool same_form(unicode_form form, const seq *in, const seq *want) {
    uint32_t *got;
    size_t n;
    if (unicode_normalize(form, in->cp, in->n, &got, &n) != 0) return false;
    bool ok = n == want->n && memcmp(got, want->cp, n * sizeof *got) == 0;
    free(got);
    return ok;
}

int main(void) {
    size_t len;
    char *text = read_all("tests/unit/normalization_vectors.txt", &len);
    CHECK(text != NULL, "the normalization vectors are readable");
    if (!text) CHECK_EXIT();
    int lines = 0, bad_lines = 0, failed[4] = { 0 };
    static const char *names[4] = { "NFC", "NFD", "NFKC", "NFKD" };
    for (char *line = text; *line;) {
        char *eol = strchr(line, '\n');
        if (!eol) eol = line + strlen(line);
        if (*line != '#' && eol > line) {
            seq c[5];
            char *col = line;
            bool ok = true;
            for (int i = 0; i < 5 && ok; i++) {
                char *semi = memchr(col, ';', (size_t)(eol - col));
                char *stop = semi ? semi : eol;
                ok = parse_seq(col, stop, &c[i]);
                col = semi ? semi + 1 : eol;
            }
            if (!ok) { bad_lines++; }
            else {
                lines++;
                for (int i = 0; i < 3; i++) {
                    failed[UNICODE_NFC] += !same_form(UNICODE_NFC, &c[i], &c[1]);
                    failed[UNICODE_NFD] += !same_form(UNICODE_NFD, &c[i], &c[2]);
                }
                for (int i = 3; i < 5; i++) {
                    failed[UNICODE_NFC] += !same_form(UNICODE_NFC, &c[i], &c[3]);
                    failed[UNICODE_NFD] += !same_form(UNICODE_NFD, &c[i], &c[4]);
                }
                for (int i = 0; i < 5; i++) {
                    failed[UNICODE_NFKC] += !same_form(UNICODE_NFKC, &c[i], &c[3]);
                    failed[UNICODE_NFKD] += !same_form(UNICODE_NFKD, &c[i], &c[4]);
                }
            }
        }
        line = *eol ? eol + 1 : eol;
    }
    free(text);
    CHECK(lines > 1500 && bad_lines == 0, "%d conformance lines read (%d malformed)", lines, bad_lines);
    for (int f = 0; f < 4; f++)
        CHECK(failed[f] == 0, "%s: every conformance line's relations hold (%d fail)", names[f], failed[f]);

    /* empty and ASCII text come back as they are; so does a value past U+10FFFF */
    seq ascii = { { 'H', 'i', ' ', '!', 0x7f }, 5 }, empty = { { 0 }, 0 }, beyond = { { 0x110000, 0x301 }, 2 };
    bool all = true;
    for (int f = 0; f < 4; f++)
        all &= same_form((unicode_form)f, &ascii, &ascii) && same_form((unicode_form)f, &empty, &empty);
    CHECK(all, "empty and ASCII text are their own normal forms");
    CHECK(same_form(UNICODE_NFC, &beyond, &beyond) && unicode_ccc(0x110000) == 0 && unicode_ccc(0x301) == 230,
          "a value past U+10FFFF has no mapping and class 0; U+0301 has class 230");
    CHECK_EXIT();
}
