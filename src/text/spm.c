/* SentencePiece-style BPE, as llama.cpp runs it on GGUF "llama" vocabularies: spaces become U+2581,
 * the text is split into UTF-8 characters, and the adjacent pair whose concatenation is the
 * highest-scoring vocabulary token is merged (ties: leftmost) until no pair forms a token. What is
 * left unmerged and is not a token falls back to <0xNN> byte tokens.
 *
 * Symbols form a doubly linked list over the escaped text; candidate pairs sit in a max-heap. A
 * merge leaves stale heap entries behind, recognised on pop by their byte length no longer being
 * the sum of the two symbols' lengths (a symbol only ever grows, or drops to 0 when absorbed). */
#include "text/spm.h"
#include "core/utf8.h"
#include "core/error.h"
#include "core/str.h"
#include <limits.h>
#include <stdlib.h>
#include <string.h>

typedef struct spm_symbol {
    int32_t start, n;       /* bytes of the escaped text; n == 0 once merged into its left neighbour */
    int32_t prev, next;     /* neighbours in the list, -1 at the ends */
} spm_symbol;

typedef struct spm_pair {
    float score;            /* score of the token the two symbols would form */
    int32_t left, right;    /* symbol indices */
    int32_t size;           /* byte length of the pair when it was queued */
} spm_pair;

typedef struct pair_heap { spm_pair *items; size_t n; } pair_heap;

/* True when a should be merged before b: higher score first, then the leftmost. */
static bool pair_before(const spm_pair *a, const spm_pair *b) {
    if (a->score != b->score) return a->score > b->score;
    return a->left < b->left;
}

static void heap_push(pair_heap *h, spm_pair p) {
    size_t i = h->n++;
    while (i > 0) {
        size_t parent = (i - 1) / 2;
        if (!pair_before(&p, &h->items[parent])) break;
        h->items[i] = h->items[parent];
        i = parent;
    }
    h->items[i] = p;
}

static spm_pair heap_pop(pair_heap *h) {
    spm_pair top = h->items[0];
    spm_pair last = h->items[--h->n];
    size_t i = 0;
    for (;;) {
        size_t child = 2 * i + 1;
        if (child >= h->n) break;
        if (child + 1 < h->n && pair_before(&h->items[child + 1], &h->items[child])) child++;
        if (!pair_before(&h->items[child], &last)) break;
        h->items[i] = h->items[child];
        i = child;
    }
    if (h->n > 0) h->items[i] = last;
    return top;
}

/* Queues symbols left+right if together they spell a token. */
static void try_pair(const vocab *v, const char *text, const spm_symbol *sym, int32_t left,
                     int32_t right, pair_heap *h) {
    if (left < 0 || right < 0) return;
    int32_t size = sym[left].n + sym[right].n;
    int32_t id = vocab_find(v, text + sym[left].start, (size_t)size);
    if (id < 0) return;
    spm_pair p = { v->score[id], left, right, size };
    heap_push(h, p);
}

static void emit(int32_t *out, int max_out, int *count, int32_t id) {
    if (*count < max_out) out[*count] = id;
    (*count)++;
}

/* A symbol that is not a token: one <0xNN> token per byte (or the byte itself as a token, or unk). */
static int emit_bytes(const vocab *v, const char *s, int32_t n, int32_t *out, int max_out, int *count,
                      ts_error *err) {
    for (int32_t i = 0; i < n; i++) {
        unsigned char b = (unsigned char)s[i];
        int32_t id = spm_byte_token(v, b);
        if (id < 0) id = vocab_find(v, s + i, 1);
        if (id < 0) id = v->unk;
        if (id < 0) return ts_fail(err, "the vocabulary has no token for byte 0x%02X and no unknown token", b);
        emit(out, max_out, count, id);
    }
    return 0;
}

int spm_encode_segment(const vocab *v, const char *text, size_t len, bool space_prefix,
                       int32_t *out, int max_out, ts_error *err) {
    if (vocab_check_text(text, len, err)) return -1;
    if (len == 0) return 0;

    char *esc = malloc(3 + 3 * len);
    spm_symbol *sym = malloc((3 + len) * sizeof *sym);
    pair_heap heap = { malloc(3 * (3 + len) * sizeof *heap.items), 0 };
    int count = 0, rc = 0;
    if (!esc || !sym || !heap.items) { rc = ts_fail(err, "out of memory tokenizing %zu bytes", len); goto done; }

    /* optional dummy prefix, then every ' ' as U+2581 */
    size_t n_esc = spm_escape_spaces(text, len, space_prefix, esc);

    /* One symbol per character. */
    int32_t n_sym = 0;
    for (size_t off = 0; off < n_esc;) {
        uint32_t cp;
        int n = utf8_decode(esc + off, n_esc - off, &cp);
        if (n == 0) n = 1;     /* cannot happen after validation; keeps the walk moving regardless */
        sym[n_sym].start = (int32_t)off;
        sym[n_sym].n = n;
        sym[n_sym].prev = n_sym - 1;
        off += (size_t)n;
        sym[n_sym].next = off == n_esc ? -1 : n_sym + 1;
        n_sym++;
    }

    for (int32_t i = 1; i < n_sym; i++) try_pair(v, esc, sym, i - 1, i, &heap);
    while (heap.n > 0) {
        spm_pair p = heap_pop(&heap);
        spm_symbol *left = &sym[p.left], *right = &sym[p.right];
        if (left->n == 0 || right->n == 0 || left->n + right->n != p.size) continue;   /* stale */
        left->n += right->n;
        right->n = 0;
        left->next = right->next;
        if (right->next >= 0) sym[right->next].prev = p.left;
        try_pair(v, esc, sym, left->prev, p.left, &heap);
        try_pair(v, esc, sym, p.left, left->next, &heap);
    }

    for (int32_t i = 0; i >= 0; i = sym[i].next) {
        int32_t id = vocab_find(v, esc + sym[i].start, (size_t)sym[i].n);
        if (id >= 0) emit(out, max_out, &count, id);
        else if (emit_bytes(v, esc + sym[i].start, sym[i].n, out, max_out, &count, err)) { rc = -1; goto done; }
    }

done:
    free(esc);
    free(sym);
    free(heap.items);
    return rc ? rc : count;
}

int spm_encode(const vocab *v, const char *text, size_t len, int32_t *out, int max_out, ts_error *err) {
    return spm_encode_segment(v, text, len, v->add_space_prefix, out, max_out, err);
}

/* ---- the SentencePiece text conventions (spm.h), shared with bpe.c, tokenizer.c, tokenizer_json.c */

size_t spm_escape_spaces(const char *text, size_t len, bool space_prefix, char *out) {
    size_t n = 0;
    if (space_prefix) { memcpy(out, SPM_SPACE_MARK, 3); n = 3; }
    for (size_t i = 0; i < len; i++) {
        if (text[i] == ' ') { memcpy(out + n, SPM_SPACE_MARK, 3); n += 3; }
        else out[n++] = text[i];
    }
    return n;
}

int32_t spm_byte_token(const vocab *v, unsigned char b) {
    static const char hex[] = "0123456789ABCDEF";
    char name[6] = { '<', '0', 'x', hex[b >> 4], hex[b & 15], '>' };
    return vocab_find(v, name, sizeof name);
}

int spm_byte_of_token(const char *s, size_t len) {
    if (len != 6 || memcmp(s, "<0x", 3) != 0 || s[5] != '>') return -1;
    int hi = str_hex_digit(s[3]), lo = str_hex_digit(s[4]);
    return hi < 0 || lo < 0 ? -1 : hi * 16 + lo;
}
