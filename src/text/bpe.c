/* Byte-level BPE (GPT-2 style) and rank-merged SentencePiece-style BPE (tokenizer.json models with
 * byte_fallback, e.g. Gemma 3).
 *
 * Byte-level: the text is normalized and pre-tokenized (the vocabulary's pipeline.c steps, or the
 * hand-written pretokenize.c of a tokenizer.ggml.pre name), each piece's bytes
 * become GPT-2's printable stand-in characters (bytes_to_unicode), and adjacent symbols are merged
 * by merge rank, lowest first, until no listed pair is left.
 *
 * Merging keeps symbols in a doubly linked list and candidate pairs in a min-heap ordered by (rank,
 * left position), which is the order llama.cpp and Hugging Face tokenizers merge in. Merges leave
 * stale heap entries behind; they are recognised on pop because a symbol's id or neighbour changed.
 * Pairs are looked up by token id in a hash table built from v->merges. */
#include "text/bpe.h"
#include "text/spm.h"
#include "text/pretokenize.h"
#include "text/pipeline.h"
#include "core/utf8.h"
#include "core/error.h"
#include <limits.h>
#include <stdlib.h>
#include <string.h>

/* ---- GPT-2 bytes_to_unicode ----------------------------------------------------------------- */

/* Printable Latin-1 bytes stand for themselves; the other 68 bytes, in increasing order, take the
 * code points from U+0100 on. */
static uint32_t byte_to_codepoint(unsigned b) {
    if ((b >= 0x21 && b <= 0x7E) || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE && b <= 0xFF)) return b;
    if (b <= 0x20) return 0x100 + b;                 /* 0x00..0x20: 33 bytes */
    if (b <= 0xA0) return 0x100 + 33 + (b - 0x7F);   /* 0x7F..0xA0: 34 bytes */
    return 0x100 + 67;                               /* 0xAD */
}

/* ---- merge table: (left id, right id) -> rank, merged id ------------------------------------ */

struct bpe_merge_table {
    uint64_t *keys;          /* left << 32 | right; EMPTY_KEY when free */
    int32_t *rank, *merged;
    uint32_t mask;           /* capacity - 1 (capacity is a power of two) */
};

#define EMPTY_KEY UINT64_MAX

static inline uint64_t pair_key(int32_t left, int32_t right) {
    return (uint64_t)(uint32_t)left << 32 | (uint32_t)right;
}
static inline uint32_t pair_slot(uint64_t key, uint32_t mask) {
    return (uint32_t)((key * 0x9E3779B97F4A7C15ull) >> 32) & mask;
}

void bpe_merge_table_free(bpe_merge_table *t) {
    if (!t) return;
    free(t->keys);
    free(t->rank);
    free(t->merged);
    free(t);
}

/* Splits merge i ("left right") as llama.cpp does: at the first space after the first byte. */
static bool split_merge(const char *m, size_t *left_len, const char **right, size_t *right_len) {
    size_t n = strlen(m);
    if (n < 3) return false;
    const char *sp = memchr(m + 1, ' ', n - 1);
    if (!sp || sp + 1 == m + n) return false;
    *left_len = (size_t)(sp - m);
    *right = sp + 1;
    *right_len = n - *left_len - 1;
    return true;
}

int bpe_merge_table_build(const vocab *v, bpe_merge_table **out, ts_error *err) {
    *out = NULL;
    bpe_merge_table *t = calloc(1, sizeof *t);
    if (!t) return ts_fail(err, "out of memory building the BPE merge table");
    uint32_t cap = 16;
    while (cap < 2u * (uint32_t)v->n_merges && cap < (1u << 31)) cap <<= 1;
    t->keys = malloc(cap * sizeof *t->keys);
    t->rank = malloc(cap * sizeof *t->rank);
    t->merged = malloc(cap * sizeof *t->merged);
    if (!t->keys || !t->rank || !t->merged) {
        bpe_merge_table_free(t);
        return ts_fail(err, "out of memory building the BPE merge table (%d merges)", v->n_merges);
    }
    memset(t->keys, 0xff, cap * sizeof *t->keys);
    t->mask = cap - 1;

    char *joined = NULL;
    size_t joined_cap = 0;
    for (int i = 0; i < v->n_merges; i++) {
        const char *m = v->merges[i], *right;
        size_t left_len, right_len;
        if (!m || !split_merge(m, &left_len, &right, &right_len)) continue;   /* malformed: unused */
        int32_t l = vocab_find(v, m, left_len), r = vocab_find(v, right, right_len);
        if (l < 0 || r < 0) continue;
        if (left_len + right_len > joined_cap) {
            joined_cap = 2 * (left_len + right_len);
            char *grown = realloc(joined, joined_cap);
            if (!grown) {
                free(joined);
                bpe_merge_table_free(t);
                return ts_fail(err, "out of memory building the BPE merge table");
            }
            joined = grown;
        }
        memcpy(joined, m, left_len);
        memcpy(joined + left_len, right, right_len);
        int32_t merged = vocab_find(v, joined, left_len + right_len);
        if (merged < 0) continue;      /* a merge whose result is no token can never be emitted */
        uint64_t key = pair_key(l, r);
        uint32_t s = pair_slot(key, t->mask);
        while (t->keys[s] != EMPTY_KEY && t->keys[s] != key) s = (s + 1) & t->mask;
        if (t->keys[s] == key) continue;     /* a repeated pair keeps its first (lowest) rank */
        t->keys[s] = key;
        t->rank[s] = i;
        t->merged[s] = merged;
    }
    free(joined);
    *out = t;
    return 0;
}

/* Rank of merging left+right (and the merged id), or -1 when the pair is not a merge. */
static int32_t merge_rank(const bpe_merge_table *t, int32_t left, int32_t right, int32_t *merged) {
    uint64_t key = pair_key(left, right);
    for (uint32_t s = pair_slot(key, t->mask);; s = (s + 1) & t->mask) {
        if (t->keys[s] == key) { *merged = t->merged[s]; return t->rank[s]; }
        if (t->keys[s] == EMPTY_KEY) return -1;
    }
}

int bpe_prepare(vocab *v, ts_error *err) {
    if (v->merge_table) return 0;
    v->merge_table_free = bpe_merge_table_free;
    return bpe_merge_table_build(v, &v->merge_table, err);
}

void bpe_scores_from_ranks(vocab *v) {
    const float never = -1e9f;
    for (int i = 0; i < v->n; i++) v->score[i] = never;
    const bpe_merge_table *t = v->merge_table;
    if (!t) return;
    for (uint32_t s = 0; s <= t->mask; s++) {
        if (t->keys[s] == EMPTY_KEY) continue;
        float score = -(float)t->rank[s];
        if (score > v->score[t->merged[s]]) v->score[t->merged[s]] = score;
    }
}

/* ---- merging -------------------------------------------------------------------------------- */

typedef struct bpe_symbol { int32_t id, prev, next; } bpe_symbol;   /* id -1: merged away */

typedef struct bpe_candidate {
    int32_t rank, left, right;    /* symbol indices */
    int32_t left_id, right_id;    /* the ids when queued: a changed id makes the entry stale */
    int32_t merged;
} bpe_candidate;

/* Scratch space reused across pieces of one call. */
typedef struct bpe_work {
    bpe_symbol *sym; size_t sym_cap;
    bpe_candidate *heap; size_t heap_n, heap_cap;
} bpe_work;

static bool candidate_before(const bpe_candidate *a, const bpe_candidate *b) {
    if (a->rank != b->rank) return a->rank < b->rank;
    return a->left < b->left;
}

static int heap_push(bpe_work *w, bpe_candidate c) {
    if (w->heap_n == w->heap_cap) {
        size_t cap = w->heap_cap ? 2 * w->heap_cap : 256;
        bpe_candidate *h = realloc(w->heap, cap * sizeof *h);
        if (!h) return -1;
        w->heap = h;
        w->heap_cap = cap;
    }
    size_t i = w->heap_n++;
    while (i > 0) {
        size_t parent = (i - 1) / 2;
        if (!candidate_before(&c, &w->heap[parent])) break;
        w->heap[i] = w->heap[parent];
        i = parent;
    }
    w->heap[i] = c;
    return 0;
}

static bpe_candidate heap_pop(bpe_work *w) {
    bpe_candidate top = w->heap[0], last = w->heap[--w->heap_n];
    size_t i = 0, n = w->heap_n;
    for (;;) {
        size_t child = 2 * i + 1;
        if (child >= n) break;
        if (child + 1 < n && candidate_before(&w->heap[child + 1], &w->heap[child])) child++;
        if (!candidate_before(&w->heap[child], &last)) break;
        w->heap[i] = w->heap[child];
        i = child;
    }
    if (n > 0) w->heap[i] = last;
    return top;
}

static int queue_pair(const bpe_merge_table *t, bpe_work *w, int32_t left, int32_t right) {
    if (left < 0 || right < 0) return 0;
    int32_t l = w->sym[left].id, r = w->sym[right].id, merged;
    if (l < 0 || r < 0) return 0;
    int32_t rank = merge_rank(t, l, r, &merged);
    if (rank < 0) return 0;
    bpe_candidate c = { rank, left, right, l, r, merged };
    return heap_push(w, c);
}

static int reserve_symbols(bpe_work *w, size_t n) {
    if (n <= w->sym_cap) return 0;
    size_t cap = w->sym_cap ? w->sym_cap : 64;
    while (cap < n) cap *= 2;
    bpe_symbol *s = realloc(w->sym, cap * sizeof *s);
    if (!s) return -1;
    w->sym = s;
    w->sym_cap = cap;
    return 0;
}

/* Merges w->sym[0..n) (ids already set, linked in order) by rank. -1 when out of memory. */
static int merge_symbols(const bpe_merge_table *t, bpe_work *w, size_t n) {
    w->heap_n = 0;
    for (size_t i = 0; i < n; i++) {
        w->sym[i].prev = (int32_t)i - 1;
        w->sym[i].next = i + 1 < n ? (int32_t)i + 1 : -1;
    }
    for (size_t i = 1; i < n; i++)
        if (queue_pair(t, w, (int32_t)i - 1, (int32_t)i)) return -1;
    while (w->heap_n > 0) {
        bpe_candidate c = heap_pop(w);
        bpe_symbol *left = &w->sym[c.left], *right = &w->sym[c.right];
        if (left->id != c.left_id || right->id != c.right_id || left->next != c.right) continue;
        left->id = c.merged;
        right->id = -1;
        left->next = right->next;
        if (right->next >= 0) w->sym[right->next].prev = c.left;
        if (queue_pair(t, w, left->prev, c.left) || queue_pair(t, w, c.left, left->next)) return -1;
    }
    return 0;
}

static void emit(int32_t *out, int max_out, int *count, int32_t id) {
    if (*count < max_out) out[*count] = id;
    (*count)++;
}

/* Writes the ids of the surviving symbols (starting at symbol 0). */
static void emit_symbols(const bpe_work *w, int32_t *out, int max_out, int *count) {
    for (int32_t i = 0; i >= 0; i = w->sym[i].next) emit(out, max_out, count, w->sym[i].id);
}

/* ---- encoding ------------------------------------------------------------------------------- */

/* The pieces of cps[0..n) as spans: through the vocabulary's pipeline, or its hand-written
 * pre-tokenizer (contiguous pieces). */
static int split_pieces(const vocab *v, const pretok_info *pre, const uint32_t *cps, size_t n, regex_matches *spans, ts_error *err) {
    if (v->pipeline) return pipeline_split(v->pipeline, cps, n, spans, err);
    pretok_pieces pieces = { 0 };
    int rc = pretokenize(pre->kind, cps, n, &pieces, err);
    spans->n = 0;
    if (!rc && pieces.n > (spans->cap)) {
        regex_match *m = realloc(spans->m, pieces.n * sizeof *m);
        if (m) { spans->m = m; spans->cap = pieces.n; }
        else rc = ts_fail(err, "out of memory tokenizing");
    }
    for (size_t p = 0, start = 0; !rc && p < pieces.n; start = pieces.ends[p++])
        spans->m[spans->n++] = (regex_match){ start, pieces.ends[p] };
    pretokenize_pieces_free(&pieces);
    return rc;
}

/* Symbols for one character: its token, or its bytes as <0xNN> tokens (byte fallback), or unk. */
static int char_symbols(const vocab *v, const char *s, int n, bpe_work *w, size_t *n_sym, ts_error *err) {
    int32_t id = vocab_find(v, s, (size_t)n);
    if (id >= 0) { w->sym[(*n_sym)++].id = id; return 0; }
    int32_t ids[4];
    bool all = true;
    for (int i = 0; i < n; i++) {
        ids[i] = spm_byte_token(v, (unsigned char)s[i]);
        if (ids[i] < 0) all = false;
    }
    if (all) {
        for (int i = 0; i < n; i++) w->sym[(*n_sym)++].id = ids[i];
        return 0;
    }
    if (v->unk < 0) return ts_fail(err, "the vocabulary has no token for \"%.*s\" and no unknown token", n, s);
    if (v->fuse_unk && *n_sym > 0 && w->sym[*n_sym - 1].id == v->unk) return 0;
    w->sym[(*n_sym)++].id = v->unk;
    return 0;
}

/* How a piece's bytes become first symbols: byte-level, each byte's stand-in character (the
 * vocabulary must hold all 256); SentencePiece-style, each character's token or its byte tokens. */
typedef struct symbolizer {
    bool byte_level;
    char byte_char[256][2];
    uint8_t byte_char_len[256];
    int32_t byte_id[256];
} symbolizer;

static void symbolizer_init(const vocab *v, symbolizer *z) {
    z->byte_level = v->kind == VOCAB_BPE_BYTES;
    if (!z->byte_level) return;
    for (unsigned b = 0; b < 256; b++) {
        z->byte_char_len[b] = (uint8_t)utf8_encode(byte_to_codepoint(b), z->byte_char[b]);
        z->byte_id[b] = vocab_find(v, z->byte_char[b], z->byte_char_len[b]);
    }
}

/* The piece text[0..len) as the vocabulary spells it (byte-level: mapped bytes) into mapped; its length */
static size_t spelled(const symbolizer *z, const char *text, size_t len, char *mapped) {
    if (!z->byte_level) { memcpy(mapped, text, len); return len; }
    size_t m = 0;
    for (size_t i = 0; i < len; i++) {
        unsigned char b = (unsigned char)text[i];
        memcpy(mapped + m, z->byte_char[b], z->byte_char_len[b]);
        m += z->byte_char_len[b];
    }
    return m;
}

static int first_symbols(const vocab *v, const symbolizer *z, const char *text, size_t len, bpe_work *w, size_t *n_sym,
                         ts_error *err) {
    *n_sym = 0;
    if (reserve_symbols(w, len)) return ts_fail(err, "out of memory tokenizing");
    if (z->byte_level) {
        for (size_t i = 0; i < len; i++) {
            unsigned char b = (unsigned char)text[i];
            if (z->byte_id[b] < 0) return ts_fail(err, "the vocabulary has no token for byte 0x%02X", b);
            w->sym[(*n_sym)++].id = z->byte_id[b];
        }
        return 0;
    }
    for (size_t off = 0; off < len;) {
        uint32_t cp;
        int k = utf8_decode(text + off, len - off, &cp);
        if (k == 0) k = 1;     /* cannot happen: the text was encoded here */
        if (char_symbols(v, text + off, k, w, n_sym, err)) return -1;
        off += (size_t)k;
    }
    return 0;
}

int bpe_encode_normalized(const vocab *v, const uint32_t *in, size_t n_in, bool at_start, int32_t *out, int max_out,
                          ts_error *err) {
    if (max_out < 0) max_out = 0;
    if (n_in == 0) return 0;
    pretok_info pre = { 0 };
    if (!v->pipeline && pretokenize_lookup(v->pre, &pre, err)) return -1;
    const bool ignore_merges = v->pipeline ? v->ignore_merges : pre.ignore_merges;
    bpe_merge_table *own = NULL;
    const bpe_merge_table *t = v->merge_table;
    if (!t) {     /* not prepared by the loader: build a table for this call only */
        if (bpe_merge_table_build(v, &own, err)) return -1;
        t = own;
    }
    symbolizer z;
    symbolizer_init(v, &z);

    uint32_t *rewritten = NULL;
    const uint32_t *cps = in;
    size_t n = n_in;
    size_t *offs = NULL;
    char *text = NULL, *mapped = NULL;
    regex_matches pieces = { 0 };
    bpe_work w = { 0 };
    int count = 0, rc = 0;
    if (pipeline_rewrites(v->pipeline)) {
        if (pipeline_rewrite(v->pipeline, in, n_in, at_start, &rewritten, &n, err)) { rc = -1; goto done; }
        cps = rewritten;
    }
    /* the code points' UTF-8 and each one's byte offset (offs[n] = the length) */
    offs = malloc((n + 1) * sizeof *offs);
    text = malloc(4 * n + 1);
    mapped = malloc(8 * n + 1);
    if (!offs || !text || !mapped) { rc = ts_fail(err, "out of memory tokenizing %zu code points", n); goto done; }
    size_t len = 0;
    for (size_t i = 0; i < n; i++) {
        offs[i] = len;
        len += (size_t)utf8_encode(cps[i], text + len);
    }
    offs[n] = len;
    if (split_pieces(v, &pre, cps, n, &pieces, err)) { rc = -1; goto done; }

    for (size_t p = 0; p < pieces.n; p++) {
        size_t b0 = offs[pieces.m[p].start], b1 = offs[pieces.m[p].end];
        if (ignore_merges) {            /* the whole piece may be a token as it is */
            int32_t id = vocab_find(v, mapped, spelled(&z, text + b0, b1 - b0, mapped));
            if (id >= 0) { emit(out, max_out, &count, id); continue; }
        }
        size_t n_sym;
        if (first_symbols(v, &z, text + b0, b1 - b0, &w, &n_sym, err)) { rc = -1; goto done; }
        if (n_sym == 0) continue;
        if (merge_symbols(t, &w, n_sym)) { rc = ts_fail(err, "out of memory tokenizing"); goto done; }
        emit_symbols(&w, out, max_out, &count);
    }

done:
    free(rewritten);
    free(offs);
    free(text);
    free(mapped);
    regex_matches_free(&pieces);
    free(w.sym);
    free(w.heap);
    bpe_merge_table_free(own);
    return rc ? rc : count;
}

/* ---- SentencePiece-style text merged by rank, without a pipeline ---------------------------- */

int bpe_encode_spm_segment(const vocab *v, const char *text, size_t len, bool space_prefix,
                           int32_t *out, int max_out, ts_error *err) {
    if (vocab_check_text(text, len, err)) return -1;
    if (len == 0) return 0;
    if (max_out < 0) max_out = 0;

    bpe_merge_table *own = NULL;
    const bpe_merge_table *t = v->merge_table;
    if (!t) {
        if (bpe_merge_table_build(v, &own, err)) return -1;
        t = own;
    }
    symbolizer z;
    symbolizer_init(v, &z);
    char *esc = malloc(3 + 3 * len);
    bpe_work w = { 0 };
    int count = 0, rc = 0;
    size_t n_sym = 0;
    if (!esc) { rc = ts_fail(err, "out of memory tokenizing"); goto done; }
    /* spaces become U+2581, optionally with one in front */
    size_t n_esc = spm_escape_spaces(text, len, space_prefix, esc);
    if (first_symbols(v, &z, esc, n_esc, &w, &n_sym, err)) { rc = -1; goto done; }
    if (merge_symbols(t, &w, n_sym)) { rc = ts_fail(err, "out of memory tokenizing"); goto done; }
    emit_symbols(&w, out, max_out, &count);

done:
    free(esc);
    free(w.sym);
    free(w.heap);
    bpe_merge_table_free(own);
    return rc ? rc : count;
}

/* ---- entry point ---------------------------------------------------------------------------- */

int bpe_encode(const vocab *v, const char *text, size_t len, int32_t *out, int max_out, ts_error *err) {
    if (v->kind == VOCAB_SPM && !v->pipeline) {
        if (v->n_merges == 0) return ts_fail(err, "SentencePiece vocabulary without merges given to the BPE encoder");
        return bpe_encode_spm_segment(v, text, len, v->add_space_prefix, out, max_out, err);
    }
    if (v->kind != VOCAB_BPE_BYTES && v->kind != VOCAB_SPM) return ts_fail(err, "not a BPE vocabulary (kind %d)", v->kind);
    if (vocab_check_text(text, len, err)) return -1;
    if (max_out < 0) max_out = 0;
    if (len == 0) return 0;
    uint32_t *cps = malloc((len + 1) * sizeof *cps), *normalized = NULL;
    size_t n = 0;
    int rc = 0;
    if (!cps) return ts_fail(err, "out of memory tokenizing %zu bytes", len);
    size_t bad;
    long got = utf8_to_code_points(text, len, cps, &bad);
    if (got < 0) rc = ts_fail(err, "invalid UTF-8 at byte %zu", bad);
    else n = (size_t)got;
    if (!rc && pipeline_normalizes(v->pipeline) && pipeline_normalize(v->pipeline, cps, n, &normalized, &n, err)) rc = -1;
    if (!rc) rc = bpe_encode_normalized(v, normalized ? normalized : cps, n, true, out, max_out, err);
    free(cps);
    free(normalized);
    return rc;
}
