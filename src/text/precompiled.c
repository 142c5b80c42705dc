#include "text/precompiled.h"
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include "core/error.h"
#include "core/grapheme.h"
#include "core/utf8.h"

struct precompiled {
    uint32_t *units;    /* the double array */
    size_t n_units;
    char *pool;         /* the replacement strings */
    size_t pool_len;
};

/* ---- the Darts-clone double array (one u32 per unit) ---- */

/* A unit whose leaf bit is set has a value unit below it, at (its index) ^ offset. */
static bool unit_has_leaf(uint32_t u) { return (u >> 8) & 1; }
/* A value unit's value: bit 31 is set in value units, so no label ever equals theirs. */
static uint32_t unit_value(uint32_t u) { return u & 0x7fffffffu; }
/* The byte that leads to a unit; bit 31 kept so that value units never match one. */
static uint32_t unit_label(uint32_t u) { return u & 0x800000ffu; }
/* Where a unit's children are: its index ^ offset ^ byte (offset: bits 10..31, shifted by 8 more
 * when bit 9 is set). */
static size_t unit_offset(uint32_t u) { return (size_t)(u >> 10) << ((u & (1u << 9)) >> 6); }

/* The pool offset of the first (shortest) trie key that is a prefix of key[0..len), or -1: a
 * common-prefix search stopped at its first result (Hugging Face takes results[0]), at a NUL byte,
 * at a mismatch or at a step past the array. At most len steps. */
static int64_t first_prefix(const precompiled *pc, const uint8_t *key, size_t len) {
    size_t node = unit_offset(pc->units[0]);
    for (size_t i = 0; i < len; i++) {
        uint8_t c = key[i];
        if (c == 0) break;
        node ^= c;
        if (node >= pc->n_units) break;
        uint32_t u = pc->units[node];
        if (unit_label(u) != c) break;
        node ^= unit_offset(u);
        if (unit_has_leaf(u)) return unit_value(pc->units[node]);   /* checked at load: in range */
    }
    return -1;
}

/* Every state the search can reach from the root (a unit a byte leads to, each visited once, so the
 * work is at most 255 steps per unit): each leaf's value unit must lie in the array and hold an
 * offset into the pool at a character start, or at the pool's end (an empty string). Hugging Face
 * would panic on such a leaf when a text reached it; here the charsmap is refused up front. */
static int check_trie(const precompiled *pc, ts_error *err) {
    size_t n = pc->n_units;
    uint8_t *seen = calloc(n / 8 + 1, 1);
    size_t *stack = malloc(n * sizeof *stack), top = 0;
    int rc = 0;
    if (!seen || !stack) { rc = ts_fail(err, "precompiled_charsmap: out of memory"); goto done; }
    size_t base = unit_offset(pc->units[0]);
    for (;;) {
        for (unsigned c = 1; c < 256; c++) {
            size_t child = base ^ c;
            if (child >= n || unit_label(pc->units[child]) != c || (seen[child / 8] >> (child % 8) & 1)) continue;
            seen[child / 8] |= (uint8_t)(1u << (child % 8));
            stack[top++] = child;   /* each unit at most once: top <= n */
        }
        if (!top) break;
        size_t child = stack[--top];
        uint32_t u = pc->units[child];
        base = child ^ unit_offset(u);
        if (!unit_has_leaf(u)) continue;
        if (base >= n) {
            rc = ts_fail(err, "precompiled_charsmap: trie unit %zu's value lies past the trie's %zu units", child, n);
            goto done;
        }
        uint32_t v = unit_value(pc->units[base]);
        if (v > pc->pool_len) {
            rc = ts_fail(err, "precompiled_charsmap: replacement offset %u past the %zu-byte string pool", v, pc->pool_len);
            goto done;
        }
        if (v < pc->pool_len && ((unsigned char)pc->pool[v] & 0xc0) == 0x80) {
            rc = ts_fail(err, "precompiled_charsmap: replacement offset %u is inside a UTF-8 character", v);
            goto done;
        }
    }
done:
    free(seen);
    free(stack);
    return rc;
}

int precompiled_from_blob(const uint8_t *blob, size_t len, precompiled **out, ts_error *err) {
    *out = NULL;
    if (len < 4) return ts_fail(err, "precompiled_charsmap is %zu bytes, shorter than its 4-byte header", len);
    uint32_t trie_size = (uint32_t)blob[0] | (uint32_t)blob[1] << 8 | (uint32_t)blob[2] << 16 | (uint32_t)blob[3] << 24;
    if (trie_size > len - 4)
        return ts_fail(err, "precompiled_charsmap: trie of %u bytes past the end (%zu bytes after the header)", trie_size, len - 4);
    if (trie_size == 0 || trie_size % 4)
        return ts_fail(err, "precompiled_charsmap: trie size %u is not a positive multiple of 4", trie_size);
    const char *pool = (const char *)blob + 4 + trie_size;
    size_t pool_len = len - 4 - trie_size, bad;
    if (!utf8_valid(pool, pool_len, &bad))
        return ts_fail(err, "precompiled_charsmap: string pool is not valid UTF-8 (at byte %zu)", bad);

    precompiled *pc = calloc(1, sizeof *pc);
    if (!pc) return ts_fail(err, "precompiled_charsmap: out of memory");
    pc->n_units = trie_size / 4;
    pc->pool_len = pool_len;
    pc->units = malloc(trie_size);
    pc->pool = malloc(pool_len + 1);
    if (!pc->units || !pc->pool) { precompiled_free(pc); return ts_fail(err, "precompiled_charsmap: out of memory"); }
    for (size_t i = 0; i < pc->n_units; i++) {
        const uint8_t *p = blob + 4 + 4 * i;
        pc->units[i] = (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
    }
    memcpy(pc->pool, pool, pool_len);
    pc->pool[pool_len] = '\0';   /* a last string without its NUL ends here */
    if (check_trie(pc, err)) { precompiled_free(pc); return -1; }
    *out = pc;
    return 0;
}

/* ---- base64, as Hugging Face reads it (the base64 crate's STANDARD engine): the standard
 * alphabet, '=' padding to a multiple of 4, no whitespace, unused low bits of the last symbol 0 ---- */

static int b64_value(unsigned char c) {
    if (c >= 'A' && c <= 'Z') return c - 'A';
    if (c >= 'a' && c <= 'z') return c - 'a' + 26;
    if (c >= '0' && c <= '9') return c - '0' + 52;
    if (c == '+') return 62;
    if (c == '/') return 63;
    return -1;
}

static int b64_decode(const char *s, size_t len, uint8_t **out, size_t *out_len, ts_error *err) {
    if (len % 4) return ts_fail(err, "precompiled_charsmap is not valid base64 (%zu characters, not a multiple of 4)", len);
    uint8_t *buf = malloc(len / 4 * 3 + 1);
    if (!buf) return ts_fail(err, "precompiled_charsmap: out of memory");
    size_t m = 0;
    for (size_t i = 0; i < len; i += 4) {
        int v[4], pad = 0;
        for (int k = 0; k < 4; k++) {
            unsigned char c = (unsigned char)s[i + k];
            if (c == '=' && i + 4 == len && k >= 2 && (k == 3 || s[i + 3] == '=')) { v[k] = 0; pad++; continue; }
            v[k] = b64_value(c);
            if (v[k] < 0 || pad) {
                free(buf);
                return ts_fail(err, "precompiled_charsmap is not valid base64 (byte 0x%02x at %zu)", c, i + (size_t)k);
            }
        }
        uint32_t w = (uint32_t)v[0] << 18 | (uint32_t)v[1] << 12 | (uint32_t)v[2] << 6 | (uint32_t)v[3];
        if ((pad == 1 && (v[2] & 3)) || (pad == 2 && (v[1] & 15))) {
            free(buf);
            return ts_fail(err, "precompiled_charsmap is not valid base64 (non-zero trailing bits at %zu)", i + 3 - (size_t)pad);
        }
        buf[m++] = (uint8_t)(w >> 16);
        if (pad < 2) buf[m++] = (uint8_t)(w >> 8);
        if (pad < 1) buf[m++] = (uint8_t)w;
    }
    *out = buf;
    *out_len = m;
    return 0;
}

int precompiled_from_base64(const char *b64, size_t len, precompiled **out, ts_error *err) {
    uint8_t *blob = NULL;
    size_t n = 0;
    *out = NULL;
    if (b64_decode(b64, len, &blob, &n, err)) return -1;
    int rc = precompiled_from_blob(blob, n, out, err);
    free(blob);
    return rc;
}

void precompiled_free(precompiled *pc) {
    if (!pc) return;
    free(pc->units);
    free(pc->pool);
    free(pc);
}

/* ---- normalizing ---- */

typedef struct { uint32_t *cp; size_t n, cap; } cp_buf;

static bool put(cp_buf *b, uint32_t cp) {
    if (b->n == b->cap) {
        size_t cap = b->cap ? b->cap * 2 : 64;
        if (cap > SIZE_MAX / sizeof *b->cp) return false;
        uint32_t *p = realloc(b->cp, cap * sizeof *p);
        if (!p) return false;
        b->cp = p;
        b->cap = cap;
    }
    b->cp[b->n++] = cp;
    return true;
}

/* The pool string at off (up to its NUL or the pool's end) appended as code points; the pool is
 * valid UTF-8 and off a character start (checked at load), so every step decodes. */
static bool put_replacement(const precompiled *pc, size_t off, cp_buf *b) {
    const char *s = pc->pool + off;
    size_t left = strnlen(s, pc->pool_len - off);
    while (left) {
        uint32_t cp;
        int k = utf8_decode(s, left, &cp);
        if (k <= 0) return true;   /* cannot happen after the load's checks */
        if (!put(b, cp)) return false;
        s += k;
        left -= (size_t)k;
    }
    return true;
}

int precompiled_normalize(const precompiled *pc, const uint32_t *cps, size_t n, uint32_t **out, size_t *out_n,
                          ts_error *err) {
    cp_buf b = { 0 };
    *out = NULL;
    *out_n = 0;
    if (n > SIZE_MAX / 2 / sizeof *cps) return ts_fail(err, "Precompiled normalizer: out of memory");
    b.cap = n + n / 4 + 16;
    b.cp = malloc(b.cap * sizeof *b.cp);
    if (!b.cp) return ts_fail(err, "Precompiled normalizer: out of memory");
    for (size_t at = 0; at < n;) {
        size_t end = grapheme_next_break(cps, n, at);
        /* the whole cluster, when its UTF-8 form is shorter than 6 bytes (so at most 5 code points) */
        uint8_t bytes[8];
        size_t blen = 0;
        bool whole = end - at <= 5;
        for (size_t i = at; whole && i < end; i++) {
            char u[4];
            int k = utf8_encode(cps[i], u);
            if (k == 0 || blen + (size_t)k >= 6) whole = false;
            else { memcpy(bytes + blen, u, (size_t)k); blen += (size_t)k; }
        }
        int64_t off = whole ? first_prefix(pc, bytes, blen) : -1;
        if (off >= 0) {
            if (!put_replacement(pc, (size_t)off, &b)) goto oom;
            at = end;
            continue;
        }
        /* else code point by code point */
        for (; at < end; at++) {
            char u[4];
            int k = utf8_encode(cps[at], u);
            off = k ? first_prefix(pc, (const uint8_t *)u, (size_t)k) : -1;
            if (off >= 0 ? !put_replacement(pc, (size_t)off, &b) : !put(&b, cps[at])) goto oom;
        }
    }
    *out = b.cp;
    *out_n = b.n;
    return 0;
oom:
    free(b.cp);
    return ts_fail(err, "Precompiled normalizer: out of memory");
}
