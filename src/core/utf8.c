#include "core/utf8.h"
#include <string.h>

int utf8_decode(const char *str, size_t len, uint32_t *cp) {
    const unsigned char *s = (const unsigned char *)str;
    if (len == 0) return 0;
    unsigned c = s[0];
    if (c < 0x80) { *cp = c; return 1; }
    int n; uint32_t v, min;
    if ((c & 0xE0) == 0xC0) { n = 2; v = c & 0x1F; min = 0x80; }
    else if ((c & 0xF0) == 0xE0) { n = 3; v = c & 0x0F; min = 0x800; }
    else if ((c & 0xF8) == 0xF0) { n = 4; v = c & 0x07; min = 0x10000; }
    else return 0;
    if (len < (size_t)n) return 0;
    for (int i = 1; i < n; i++) {
        if ((s[i] & 0xC0) != 0x80) return 0;
        v = (v << 6) | (s[i] & 0x3F);
    }
    if (v < min || v > 0x10FFFF || (v >= 0xD800 && v <= 0xDFFF)) return 0;
    *cp = v;
    return n;
}

int utf8_encode(uint32_t cp, char *out) {
    unsigned char *o = (unsigned char *)out;
    if (cp < 0x80) { o[0] = (unsigned char)cp; return 1; }
    if (cp < 0x800) { o[0] = 0xC0 | (cp >> 6); o[1] = 0x80 | (cp & 0x3F); return 2; }
    if (cp >= 0xD800 && cp <= 0xDFFF) return 0;
    if (cp < 0x10000) {
        o[0] = 0xE0 | (cp >> 12); o[1] = 0x80 | ((cp >> 6) & 0x3F); o[2] = 0x80 | (cp & 0x3F);
        return 3;
    }
    if (cp <= 0x10FFFF) {
        o[0] = 0xF0 | (cp >> 18); o[1] = 0x80 | ((cp >> 12) & 0x3F);
        o[2] = 0x80 | ((cp >> 6) & 0x3F); o[3] = 0x80 | (cp & 0x3F);
        return 4;
    }
    return 0;
}

long utf8_to_code_points(const char *s, size_t len, uint32_t *out, size_t *bad_offset) {
    long n = 0;
    for (size_t i = 0; i < len; n++) {
        int k = utf8_decode(s + i, len - i, &out[n]);
        if (k == 0) { if (bad_offset) *bad_offset = i; return -1; }
        i += (size_t)k;
    }
    return n;
}

size_t utf8_from_code_points(const uint32_t *cps, size_t n, char *out) {
    size_t len = 0;
    for (size_t i = 0; i < n; i++) len += (size_t)utf8_encode(cps[i], out + len);
    return len;
}

bool utf8_valid(const char *s, size_t len, size_t *bad_offset) {
    size_t i = 0;
    while (i < len) {
        uint32_t cp;
        int n = utf8_decode(s + i, len - i, &cp);
        if (n == 0) { if (bad_offset) *bad_offset = i; return false; }
        i += (size_t)n;
    }
    return true;
}

/* Length a lead byte announces, 0 if it cannot start a character. */
static int lead_length(unsigned char c) {
    if (c < 0x80) return 1;
    if ((c & 0xE0) == 0xC0) return 2;
    if ((c & 0xF0) == 0xE0) return 3;
    if ((c & 0xF8) == 0xF0) return 4;
    return 0;
}

static const char REPLACEMENT[3] = { (char)0xEF, (char)0xBF, (char)0xBD };

size_t utf8_stream_push(utf8_stream *st, const char *in, size_t len, char *out) {
    size_t w = 0;
    for (size_t i = 0; i < len; i++) {
        st->pending[st->n++] = in[i];
        for (;;) {
            int need = lead_length((unsigned char)st->pending[0]);
            uint32_t cp;
            if (need == 0) {                       /* stray byte: replace it, keep the rest */
                memcpy(out + w, REPLACEMENT, 3); w += 3;
                memmove(st->pending, st->pending + 1, (size_t)--st->n);
            } else if (st->n >= need) {
                if (utf8_decode(st->pending, (size_t)need, &cp) == need) {
                    memcpy(out + w, st->pending, (size_t)need); w += (size_t)need;
                    st->n -= need;
                    memmove(st->pending, st->pending + need, (size_t)st->n);
                } else {                           /* malformed: drop the lead byte */
                    memcpy(out + w, REPLACEMENT, 3); w += 3;
                    memmove(st->pending, st->pending + 1, (size_t)--st->n);
                }
            } else {
                /* incomplete: but a non-continuation byte after the lead means it never completes */
                bool broken = false;
                for (int k = 1; k < st->n; k++)
                    if (((unsigned char)st->pending[k] & 0xC0) != 0x80) broken = true;
                if (!broken) break;
                memcpy(out + w, REPLACEMENT, 3); w += 3;
                memmove(st->pending, st->pending + 1, (size_t)--st->n);
            }
            if (st->n == 0) break;
        }
    }
    return w;
}

size_t utf8_stream_flush(utf8_stream *st, char *out) {
    if (st->n == 0) return 0;
    st->n = 0;
    memcpy(out, REPLACEMENT, 3);
    return 3;
}
