/* Unicode normalization as UAX #15 defines it: decompose every code point fully (canonical
 * mappings, plus compatibility ones for NFK*; Hangul syllables by arithmetic), put each run of
 * non-starters in canonical order (a stable sort by combining class), then for NFC / NFKC compose
 * each unblocked pair that has a primary composite. */
#include "core/unicode_norm.h"
#include "core/unicode_norm_tables.h"
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

/* Hangul syllables: S = SBASE + (L - LBASE) * NCOUNT + (V - VBASE) * TCOUNT + (T - TBASE) */
enum { SBASE = 0xAC00, LBASE = 0x1100, VBASE = 0x1161, TBASE = 0x11A7, LCOUNT = 19, VCOUNT = 21, TCOUNT = 28,
       NCOUNT = VCOUNT * TCOUNT, SCOUNT = LCOUNT * NCOUNT };

uint8_t unicode_ccc(uint32_t cp) {
    return cp < 0x110000 ? unicode_ccc_blocks[unicode_ccc_stage1[cp / 128]][cp % 128] : 0;
}

/* Index of cp in unicode_decomp_cp, or -1 */
static int decomp_index(uint32_t cp) {
    int lo = 0, hi = unicode_decomp_count - 1;
    while (lo <= hi) {
        int mid = (lo + hi) / 2;
        if (unicode_decomp_cp[mid] == cp) return mid;
        if (unicode_decomp_cp[mid] < cp) lo = mid + 1;
        else hi = mid - 1;
    }
    return -1;
}

/* The primary composite of (a, b), or 0 */
static uint32_t compose_pair(uint32_t a, uint32_t b) {
    if (a >= LBASE && a < LBASE + LCOUNT && b >= VBASE && b < VBASE + VCOUNT)
        return SBASE + ((a - LBASE) * VCOUNT + (b - VBASE)) * TCOUNT;
    if (a >= SBASE && a < SBASE + SCOUNT && (a - SBASE) % TCOUNT == 0 && b > TBASE && b < TBASE + TCOUNT)
        return a + (b - TBASE);
    if (a >= 0x110000 || b >= 0x110000) return 0;
    const uint64_t key = (uint64_t)a << 21 | b;
    int lo = 0, hi = unicode_compose_count - 1;
    while (lo <= hi) {
        int mid = (lo + hi) / 2;
        if (unicode_compose_key[mid] == key) return unicode_compose_value[mid];
        if (unicode_compose_key[mid] < key) lo = mid + 1;
        else hi = mid - 1;
    }
    return 0;
}

/* Whether every code point of cps is unchanged by the form: below the first one any mapping or
 * combining class touches (U+00A0 has a compatibility mapping, U+00C0 a canonical one, U+0300 is
 * the first non-starter) */
static bool quick_yes(unicode_form form, const uint32_t *cps, size_t n) {
    const uint32_t limit = form == UNICODE_NFC ? 0x300 : form == UNICODE_NFD ? 0xC0 : 0xA0;
    for (size_t i = 0; i < n; i++)
        if (cps[i] >= limit) return false;
    return true;
}

/* Appends cp's full decomposition to out[*m] (room checked by the caller: at most 18 code points,
 * the longest mapping), keeping runs of non-starters in canonical order. */
static void decompose_one(uint32_t cp, bool compat, uint32_t *out, size_t *m) {
    uint32_t buf[18];
    int len = 0;
    if (cp >= SBASE && cp < SBASE + SCOUNT) {
        const uint32_t s = cp - SBASE;
        buf[len++] = LBASE + s / NCOUNT;
        buf[len++] = VBASE + s % NCOUNT / TCOUNT;
        if (s % TCOUNT) buf[len++] = TBASE + s % TCOUNT;
    } else {
        const int i = decomp_index(cp);
        const int canon = i >= 0 ? unicode_decomp_canon_len[i] : 0;
        if (i >= 0 && compat) {
            len = unicode_decomp_compat_len[i];
            memcpy(buf, unicode_decomp_pool + unicode_decomp_start[i] + canon, (size_t)len * sizeof *buf);
        } else if (canon) {
            len = canon;
            memcpy(buf, unicode_decomp_pool + unicode_decomp_start[i], (size_t)len * sizeof *buf);
        } else {
            buf[len++] = cp;
        }
    }
    for (int k = 0; k < len; k++) {
        /* insertion into the current run of non-starters: after every one of a lower or equal class */
        const uint8_t c = unicode_ccc(buf[k]);
        size_t at = *m;
        if (c)
            while (at > 0 && unicode_ccc(out[at - 1]) > c) at--;
        memmove(out + at + 1, out + at, (*m - at) * sizeof *out);
        out[at] = buf[k];
        (*m)++;
    }
}

/* Canonical composition in place: each character after the last starter joins it when nothing
 * between blocks it (no character of the same or a higher class, nor a starter). */
static size_t compose(uint32_t *s, size_t m) {
    if (m == 0) return 0;
    size_t starter = 0, w = 1;
    bool have_starter = unicode_ccc(s[0]) == 0;
    int last_ccc = have_starter ? 0 : 256;
    for (size_t r = 1; r < m; r++) {
        const uint32_t cp = s[r];
        const int c = unicode_ccc(cp);
        const bool blocked = w - 1 != starter && last_ccc >= c;
        uint32_t comp;
        if (have_starter && !blocked && (comp = compose_pair(s[starter], cp)) != 0) {
            s[starter] = comp;
            continue;
        }
        if (c == 0) { starter = w; have_starter = true; }
        last_ccc = c;
        s[w++] = cp;
    }
    return w;
}

int unicode_normalize(unicode_form form, const uint32_t *cps, size_t n, uint32_t **out, size_t *out_n) {
    *out = NULL;
    *out_n = 0;
    if (quick_yes(form, cps, n)) {
        uint32_t *copy = malloc((n ? n : 1) * sizeof *copy);
        if (!copy) return -1;
        if (n) memcpy(copy, cps, n * sizeof *copy);
        *out = copy;
        *out_n = n;
        return 0;
    }
    const bool compat = form == UNICODE_NFKC || form == UNICODE_NFKD;
    size_t cap = n + 18, m = 0;
    uint32_t *s = malloc(cap * sizeof *s);
    if (!s) return -1;
    for (size_t i = 0; i < n; i++) {
        if (m + 18 > cap) {
            cap = cap * 2 + 18;
            uint32_t *t = realloc(s, cap * sizeof *s);
            if (!t) { free(s); return -1; }
            s = t;
        }
        decompose_one(cps[i], compat, s, &m);
    }
    if (form == UNICODE_NFC || form == UNICODE_NFKC) m = compose(s, m);
    *out = s;
    *out_n = m;
    return 0;
}

int unicode_lowercase(const uint32_t *cps, size_t n, uint32_t **out, size_t *out_n) {
    uint32_t *s = malloc((2 * n + 1) * sizeof *s);
    if (!s) return -1;
    size_t m = 0;
    for (size_t i = 0; i < n; i++) {
        const uint32_t cp = cps[i];
        int lo = 0, hi = unicode_lower_count - 1, at = -1;
        if (cp >= 'A' && cp <= 'Z') { s[m++] = cp + 32; continue; }
        while (cp >= 0x80 && lo <= hi) {
            int mid = (lo + hi) / 2;
            if (unicode_lower_cp[mid] == cp) { at = mid; break; }
            if (unicode_lower_cp[mid] < cp) lo = mid + 1;
            else hi = mid - 1;
        }
        if (at < 0) { s[m++] = cp; continue; }
        s[m++] = unicode_lower_first[at];
        if (unicode_lower_second[at]) s[m++] = unicode_lower_second[at];
    }
    *out = s;
    *out_n = m;
    return 0;
}
