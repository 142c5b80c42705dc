/* Text -> ids (special-token splitting, then the vocabulary's own encoder per text segment) and
 * id -> printable bytes. Both follow llama.cpp's behaviour on GGUF vocabularies. */
#include "text/tokenizer.h"
#include "text/spm.h"
#include "text/bpe.h"
#include "text/pipeline.h"
#include "core/utf8.h"
#include "core/error.h"
#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------------------------------------- */
/* special-token splitting                                                                         */

/* A piece of the input: raw text to encode (id < 0), or one special token. */
typedef struct fragment { int32_t id; size_t off, len; } fragment;

typedef struct fragment_list { fragment *items; size_t n, cap; } fragment_list;

static int fragments_add(fragment_list *l, int32_t id, size_t off, size_t len) {
    if (l->n == l->cap) {
        size_t cap = l->cap ? 2 * l->cap : 16;
        fragment *items = realloc(l->items, cap * sizeof *items);
        if (!items) return -1;
        l->items = items;
        l->cap = cap;
    }
    l->items[l->n++] = (fragment){ id, off, len };
    return 0;
}

/* Tokens matched verbatim in the text: user-defined ones always, control and unknown ones only when
 * parse_special (llama.cpp does the same, so vocabularies with added tokens encode as upstream).
 * Tokens with a normalized content are matched only in normalized text, the others only in the input. */
static bool splits_text(const vocab *v, int32_t id, bool parse_special, bool normalized) {
    if (v->len[id] == 0 || (v->norm_text && v->norm_text[id]) != normalized) return false;
    int a = v->attr[id];
    if (a == TOKEN_USER_DEFINED) return true;
    return parse_special && (a == TOKEN_CONTROL || a == TOKEN_UNKNOWN);
}

typedef struct special_ref { uint32_t len; int32_t id; } special_ref;

/* The whitespace an added token's lstrip / rstrip takes (ASCII: what precedes and follows tokens in
 * practice) */
static bool is_space_byte(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f'; }

static int by_length_desc(const void *a, const void *b) {
    const special_ref *x = a, *y = b;
    if (x->len != y->len) return x->len < y->len ? 1 : -1;
    return (x->id > y->id) - (x->id < y->id);
}

/* Splits text into fragments, one special token at a time from the longest to the shortest, each
 * cutting every raw fragment it occurs in (llama.cpp's partition order). */
static int split_special(const vocab *v, const char *text, size_t len, bool parse_special, bool normalized,
                         fragment_list *frags, ts_error *err) {
    int n_special = 0;
    for (int32_t id = 0; id < v->n; id++) n_special += splits_text(v, id, parse_special, normalized);
    special_ref *specials = NULL;
    fragment_list next = { 0 };
    int rc = 0;
    if (fragments_add(frags, -1, 0, len)) goto oom;
    if (n_special == 0) return 0;
    specials = malloc((size_t)n_special * sizeof *specials);
    if (!specials) goto oom;
    n_special = 0;
    for (int32_t id = 0; id < v->n; id++)
        if (splits_text(v, id, parse_special, normalized))
            specials[n_special++] = (special_ref){ normalized ? (uint32_t)strlen(v->norm_text[id]) : v->len[id], id };
    qsort(specials, (size_t)n_special, sizeof *specials, by_length_desc);

    for (int s = 0; s < n_special; s++) {
        const char *tok = normalized ? v->norm_text[specials[s].id] : v->text[specials[s].id];
        size_t tok_len = specials[s].len;
        next.n = 0;
        for (size_t f = 0; f < frags->n; f++) {
            fragment fr = frags->items[f];
            if (fr.id >= 0 || fr.len < tok_len) {
                if (fragments_add(&next, fr.id, fr.off, fr.len)) goto oom;
                continue;
            }
            size_t pos = fr.off, end = fr.off + fr.len;
            const uint8_t strip = v->strip ? v->strip[specials[s].id] : 0;
            for (;;) {
                const char *hit = memmem(text + pos, end - pos, tok, tok_len);
                if (!hit) break;
                size_t at = (size_t)(hit - text), after = at + tok_len;
                /* an added token's lstrip / rstrip: the whitespace beside it goes with it */
                if (strip & VOCAB_LSTRIP)
                    while (at > pos && is_space_byte(text[at - 1])) at--;
                if (strip & VOCAB_RSTRIP)
                    while (after < end && is_space_byte(text[after])) after++;
                if (at > pos && fragments_add(&next, -1, pos, at - pos)) goto oom;
                if (fragments_add(&next, specials[s].id, at, after - at)) goto oom;
                pos = after;
            }
            if (end > pos && fragments_add(&next, -1, pos, end - pos)) goto oom;
        }
        fragment_list swap = *frags;
        *frags = next;
        next = swap;
    }
    goto done;
oom:
    rc = ts_fail(err, "out of memory splitting special tokens");
done:
    free(specials);
    free(next.items);
    return rc;
}

/* ---------------------------------------------------------------------------------------------- */

/* One stretch of input text between special tokens, through a vocabulary's pipeline: normalized as a
 * whole, cut at the added tokens matched in normalized text, and each piece pre-tokenized and merged
 * (at_start: the stretch begins the input). Returns the count written or to be written, or -1. */
static int encode_section(const vocab *v, const char *text, size_t len, bool at_start, bool parse_special, int32_t *out,
                          int max_out, ts_error *err) {
    if (vocab_check_text(text, len, err)) return -1;
    uint32_t *cps = malloc((len + 1) * sizeof *cps), *normalized = NULL;
    char *ntext = NULL;
    fragment_list frags = { 0 };
    size_t n = 0;
    int count = 0, rc = 0;
    if (!cps) return ts_fail(err, "out of memory tokenizing %zu bytes", len);
    n = (size_t)utf8_to_code_points(text, len, cps, NULL);   /* valid: checked */
    if (pipeline_normalizes(v->pipeline)) {
        if (pipeline_normalize(v->pipeline, cps, n, &normalized, &n, err)) { rc = -1; goto done; }
        free(cps);
        cps = normalized;
    }
    if (!v->norm_text) {
        rc = bpe_encode_normalized(v, cps, n, at_start, out, max_out, err);
        goto done;
    }
    /* the normalized text as UTF-8, cut at the normalized added tokens */
    if (!(ntext = malloc(4 * n + 1))) { rc = ts_fail(err, "out of memory tokenizing"); goto done; }
    const size_t nlen = utf8_from_code_points(cps, n, ntext);
    if (split_special(v, ntext, nlen, parse_special, true, &frags, err)) { rc = -1; goto done; }
    for (size_t f = 0; f < frags.n; f++) {
        fragment fr = frags.items[f];
        int room = count < max_out ? max_out - count : 0;
        if (fr.id >= 0) {
            if (room) out[count] = fr.id;
            count++;
            continue;
        }
        const size_t m = (size_t)utf8_to_code_points(ntext + fr.off, fr.len, cps, NULL);
        int k = bpe_encode_normalized(v, cps, m, at_start && fr.off == 0, room ? out + count : NULL, room, err);
        if (k < 0) { rc = -1; goto done; }
        count += k;
    }
    rc = count;
done:
    free(cps);
    free(ntext);
    free(frags.items);
    return rc;
}

int tokenizer_encode(const vocab *v, const char *text, size_t len, bool add_bos, bool parse_special,
             int32_t *out, int max_out, ts_error *err) {
    size_t bad;
    if (!utf8_valid(text, len, &bad)) return ts_fail(err, "invalid UTF-8 at byte %zu", bad);
    if (max_out < 0) max_out = 0;
    int count = 0;
    if (add_bos && v->bos >= 0) {
        if (count < max_out) out[count] = v->bos;
        count++;
    }
    if (len == 0) return count;

    fragment_list frags = { 0 };
    if (split_special(v, text, len, parse_special, false, &frags, err)) { free(frags.items); return -1; }

    bool prev_special = true;    /* SPM's dummy prefix goes before the first text and after specials */
    for (size_t f = 0; f < frags.n; f++) {
        fragment fr = frags.items[f];
        if (fr.id >= 0) {
            if (count < max_out) out[count] = fr.id;
            count++;
            prev_special = true;
            continue;
        }
        int room = count < max_out ? max_out - count : 0;
        int32_t *dst = room ? out + count : NULL;
        int n;
        if (v->pipeline)    /* tokenizer.json, or a GGUF pre-tokenizer given as regexes */
            n = encode_section(v, text + fr.off, fr.len, fr.off == 0, parse_special, dst, room, err);
        else if (v->kind == VOCAB_SPM && v->n_merges > 0)   /* merged by rank */
            n = bpe_encode_spm_segment(v, text + fr.off, fr.len, v->add_space_prefix && prev_special,
                                       dst, room, err);
        else if (v->kind == VOCAB_SPM)
            n = spm_encode_segment(v, text + fr.off, fr.len, v->add_space_prefix && prev_special,
                                   dst, room, err);
        else
            n = bpe_encode(v, text + fr.off, fr.len, dst, room, err);
        if (n < 0) { free(frags.items); return -1; }
        count += n;
        prev_special = false;
    }
    free(frags.items);
    return count;
}

/* ---------------------------------------------------------------------------------------------- */
/* ids -> bytes                                                                                     */

/* GPT-2's bytes_to_unicode, inverted: printable bytes stand for themselves; the other 68 bytes, in
 * increasing order, were shifted to U+0100 onwards. -1 for a code point outside the map. */
static int byte_from_unicode(uint32_t cp) {
    if ((cp >= 0x21 && cp <= 0x7E) || (cp >= 0xA1 && cp <= 0xAC) || (cp >= 0xAE && cp <= 0xFF))
        return (int)cp;
    if (cp < 0x100 || cp >= 0x100 + 68) return -1;
    int n = (int)(cp - 0x100);
    if (n < 33) return n;                 /* 0x00..0x20 */
    if (n < 67) return 0x7F + (n - 33);   /* 0x7F..0xA0 */
    return 0xAD;
}

static int copy_out(const char *s, size_t n, char *buf, size_t cap) {
    if (n > cap) return -1;
    memcpy(buf, s, n);
    return (int)n;
}

int tokenizer_token_bytes(const vocab *v, int32_t id, char *buf, size_t cap) {
    if (id < 0 || id >= v->n) return 0;
    const char *t = v->text[id];
    size_t n = v->len[id];
    switch (v->attr[id]) {
    case TOKEN_USER_DEFINED:
        return copy_out(t, n, buf, cap);
    case TOKEN_BYTE: {
        int b = spm_byte_of_token(t, n);
        if (b >= 0) {
            char c = (char)b;
            return copy_out(&c, 1, buf, cap);
        }
        return copy_out(t, n, buf, cap);
    }
    case TOKEN_NORMAL:
        break;
    default:            /* control, unknown, unused, undefined: print nothing (llama.cpp) */
        return 0;
    }

    size_t w = 0;
    if (v->kind == VOCAB_SPM) {
        for (size_t i = 0; i < n;) {
            if (i + 3 <= n && memcmp(t + i, SPM_SPACE_MARK, 3) == 0) {
                if (w + 1 > cap) return -1;
                buf[w++] = ' ';
                i += 3;
            } else {
                if (w + 1 > cap) return -1;
                buf[w++] = t[i++];
            }
        }
        return (int)w;
    }
    for (size_t i = 0; i < n;) {
        uint32_t cp;
        int k = utf8_decode(t + i, n - i, &cp);
        int b = k ? byte_from_unicode(cp) : -1;
        if (k == 0) k = 1;
        if (b >= 0) {
            if (w + 1 > cap) return -1;
            buf[w++] = (char)b;
        } else {        /* outside the byte map: keep the character as it is */
            if (w + (size_t)k > cap) return -1;
            memcpy(buf + w, t + i, (size_t)k);
            w += (size_t)k;
        }
        i += (size_t)k;
    }
    return (int)w;
}
