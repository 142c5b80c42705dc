/* The grammar matcher: where a text stands in a grammar is the set of parse stacks it can be in.
 * A stack is a chain of frames (an element to go on at, and the frame to return to when its
 * alternative ends); frames are shared and hash-consed, so a stack is named by its top frame and a
 * set of stacks is a set of ids. Every top is at a class element: references are expanded (and
 * finished alternatives popped) as soon as a character is read. The empty stack (id 0) means the
 * root is complete. Characters are code points; bytes of a partial UTF-8 sequence keep the stacks
 * whose next class can still take a code point that begins so.
 *
 * Trying a token's bytes makes frames that are forgotten afterwards: frames are made in order and
 * undone in reverse (each is at the head of its hash chain when it is undone). */
#include "text/grammar.h"
#include "text/grammar_internal.h"
#include "core/error.h"
#include <stdlib.h>
#include <string.h>

typedef struct utf8_part { uint32_t value; int8_t need, len; } utf8_part;   /* need: bytes still to come */

struct grammar_matcher {
    const grammar *g;
    int32_t *f_pos, *f_parent, *f_next;   /* frames; 0 is the empty stack */
    int n_f, cap_f;
    int32_t *bucket;
    int n_bucket;                         /* a power of two */
    int32_t *tops;                        /* the current state's stacks */
    int n_tops, cap_tops;
    utf8_part part;
    /* scratch */
    int32_t *work;                        /* (pos, parent) pairs to expand */
    int cap_work;
    uint64_t *seen;                       /* (pos, parent) pairs expanded in this step, by stamp */
    uint32_t *seen_stamp, stamp;
    int n_seen_slots, n_seen;
    int32_t *lv;                          /* the walk's states, one after another (allowed_sorted) */
    int cap_lv;
    bool over;                            /* a limit was passed */
};

static int grow(void **v, int *cap, long need, size_t size) {
    if (need <= *cap) return 0;
    long nc = *cap ? *cap : 64;
    while (nc < need) nc *= 2;
    void *t = realloc(*v, (size_t)nc * size);
    if (!t) return -1;
    *v = t;
    *cap = (int)nc;
    return 0;
}

static uint32_t hash2(int32_t a, int32_t b) {
    uint64_t h = (uint64_t)(uint32_t)a * 0x9E3779B97F4A7C15ULL ^ (uint64_t)(uint32_t)b * 0xC2B2AE3D27D4EB4FULL;
    return (uint32_t)(h >> 32) ^ (uint32_t)h;
}

static int rehash(grammar_matcher *m, int n_bucket) {
    int32_t *b = malloc((size_t)n_bucket * sizeof *b);
    if (!b) return -1;
    memset(b, 0xff, (size_t)n_bucket * sizeof *b);
    for (int i = 1; i < m->n_f; i++) {   /* in order: the newest frame heads its chain */
        uint32_t h = hash2(m->f_pos[i], m->f_parent[i]) & (uint32_t)(n_bucket - 1);
        m->f_next[i] = b[h];
        b[h] = i;
    }
    free(m->bucket);
    m->bucket = b;
    m->n_bucket = n_bucket;
    return 0;
}

/* The frame (pos, parent), made when new; -1 past the limit or out of memory. */
static int32_t frame(grammar_matcher *m, int32_t pos, int32_t parent) {
    uint32_t h = hash2(pos, parent) & (uint32_t)(m->n_bucket - 1);
    for (int32_t i = m->bucket[h]; i >= 0; i = m->f_next[i])
        if (m->f_pos[i] == pos && m->f_parent[i] == parent) return i;
    if (m->n_f >= GRAMMAR_MAX_FRAMES) { m->over = true; return -1; }
    if (m->n_f == m->cap_f) {
        int cap = m->cap_f;
        if (grow((void **)&m->f_pos, &cap, m->n_f + 1, sizeof *m->f_pos) != 0) { m->over = true; return -1; }
        int cap2 = m->cap_f, cap3 = m->cap_f;
        if (grow((void **)&m->f_parent, &cap2, cap, sizeof *m->f_parent) != 0 ||
            grow((void **)&m->f_next, &cap3, cap, sizeof *m->f_next) != 0) { m->over = true; return -1; }
        m->cap_f = cap;
    }
    int32_t id = m->n_f++;
    m->f_pos[id] = pos;
    m->f_parent[id] = parent;
    m->f_next[id] = m->bucket[h];
    m->bucket[h] = id;
    if (m->n_f > m->n_bucket && rehash(m, m->n_bucket * 2) != 0) { m->over = true; return -1; }
    return id;
}

/* Forgets the frames made after the first n. */
static void frames_undo(grammar_matcher *m, int n) {
    while (m->n_f > n) {
        int32_t id = --m->n_f;
        uint32_t h = hash2(m->f_pos[id], m->f_parent[id]) & (uint32_t)(m->n_bucket - 1);
        m->bucket[h] = m->f_next[id];
    }
}

#define MAX_VISITS (1 << 18)      /* (pos, parent) pairs one character may expand */

static bool seen_insert(uint64_t *keys, uint32_t *stamps, int n_slots, uint32_t stamp, uint64_t key) {
    uint32_t mask = (uint32_t)n_slots - 1;
    for (uint32_t h = hash2((int32_t)(key >> 32), (int32_t)key) & mask;; h = (h + 1) & mask) {
        if (stamps[h] != stamp) { stamps[h] = stamp; keys[h] = key; return true; }
        if (keys[h] == key) return false;
    }
}

/* Marks (pos, parent) as expanded in this step: 1, or 0 when it already was, -1 past the limit. */
static int first_visit(grammar_matcher *m, int32_t pos, int32_t parent) {
    if (2 * (m->n_seen + 1) > m->n_seen_slots) {   /* keep the table at most half full */
        if (m->n_seen >= MAX_VISITS) { m->over = true; return -1; }
        int n = m->n_seen_slots * 2;
        uint64_t *k = malloc((size_t)n * sizeof *k);
        uint32_t *st = calloc((size_t)n, sizeof *st);
        if (!k || !st) { free(k); free(st); m->over = true; return -1; }
        for (int i = 0; i < m->n_seen_slots; i++)
            if (m->seen_stamp[i] == m->stamp) seen_insert(k, st, n, 1, m->seen[i]);
        free(m->seen); free(m->seen_stamp);
        m->seen = k; m->seen_stamp = st; m->n_seen_slots = n;
        m->stamp = 1;
    }
    uint64_t key = (uint64_t)(uint32_t)pos << 32 | (uint32_t)parent;
    if (!seen_insert(m->seen, m->seen_stamp, m->n_seen_slots, m->stamp, key)) return 0;
    m->n_seen++;
    return 1;
}

static void new_step(grammar_matcher *m) {
    m->n_seen = 0;
    if (++m->stamp == 0) {   /* wrapped: clear the stamps */
        memset(m->seen_stamp, 0, (size_t)m->n_seen_slots * sizeof *m->seen_stamp);
        m->stamp = 1;
    }
}

/* Expands the work list into stacks topped by class elements, appended to out (*n_out of them,
 * room for cap): references are entered, ended alternatives return to their parent frame. */
static int expand(grammar_matcher *m, int n_work, int32_t *out, int *n_out, int cap) {
    const grammar *g = m->g;
    while (n_work > 0) {
        n_work--;
        int32_t pos = m->work[2 * n_work], parent = m->work[2 * n_work + 1];
        int v = first_visit(m, pos, parent);
        if (v < 0) return -1;
        if (v == 0) continue;
        const g_elem *e = &g->e[pos];
        if (e->type == G_CHARS || (e->type == G_END && parent == 0)) {
            int32_t id = e->type == G_END ? 0 : frame(m, pos, parent);
            if (id < 0) return -1;
            if (*n_out >= cap || *n_out >= GRAMMAR_MAX_STACKS) { m->over = true; return -1; }
            out[(*n_out)++] = id;
            continue;
        }
        int need = e->type == G_END ? 1 : g->rule_n_alt[e->arg];
        if (n_work + need > MAX_VISITS || grow((void **)&m->work, &m->cap_work, 2L * (n_work + need), sizeof *m->work) != 0) {
            m->over = true;
            return -1;
        }
        if (e->type == G_END) {
            m->work[2 * n_work] = m->f_pos[parent];
            m->work[2 * n_work + 1] = m->f_parent[parent];
            n_work++;
            continue;
        }
        /* what follows the reference (nothing: return straight to the parent) */
        int32_t cont = g->e[pos + 1].type == G_END ? parent : frame(m, pos + 1, parent);
        if (cont < 0) return -1;
        for (int a = g->rule_n_alt[e->arg] - 1; a >= 0; a--) {
            m->work[2 * n_work] = g->alt_start[g->rule_alt[e->arg] + a];
            m->work[2 * n_work + 1] = cont;
            n_work++;
        }
    }
    return 0;
}

/* The stacks after reading code point cp from the stacks in (n_in): appended to out. */
static int step_char(grammar_matcher *m, const int32_t *in, int n_in, uint32_t cp, int32_t *out, int *n_out, int cap) {
    new_step(m);
    int n_work = 0;
    for (int i = 0; i < n_in; i++) {
        int32_t t = in[i];
        if (t == 0 || !grammar_class_has(m->g, m->g->e[m->f_pos[t]].arg, cp)) continue;
        if (grow((void **)&m->work, &m->cap_work, 2L * (n_work + 1), sizeof *m->work) != 0) { m->over = true; return -1; }
        m->work[2 * n_work] = m->f_pos[t] + 1;
        m->work[2 * n_work + 1] = m->f_parent[t];
        n_work++;
    }
    return expand(m, n_work, out, n_out, cap);
}

/* One byte: the stacks from in (n_in, with part) into out (room for cap) and *part updated.
 * Returns how many stacks remain (0: the byte is not accepted), or -1 past the limits. */
static int step_byte(grammar_matcher *m, const int32_t *in, int n_in, utf8_part *part, unsigned char b, int32_t *out, int cap) {
    int n_out = 0;
    if (part->need == 0 && b < 0x80) {
        if (step_char(m, in, n_in, b, out, &n_out, cap) != 0) return -1;
        return n_out;
    }
    if (part->need == 0) {
        int len = b >= 0xC2 && b <= 0xDF ? 2 : b >= 0xE0 && b <= 0xEF ? 3 : b >= 0xF0 && b <= 0xF4 ? 4 : 0;
        if (!len) return 0;
        part->len = (int8_t)len;
        part->need = (int8_t)(len - 1);
        part->value = b & (0x7F >> len);
    } else {
        if ((b & 0xC0) != 0x80) return 0;
        part->value = part->value << 6 | (b & 0x3F);
        part->need--;
    }
    static const uint32_t least[5] = { 0, 0, 0x80, 0x800, 0x10000 };   /* below: an overlong form */
    if (part->need == 0) {
        uint32_t cp = part->value;
        if (cp < least[part->len] || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return 0;
        if (step_char(m, in, n_in, cp, out, &n_out, cap) != 0) return -1;
        return n_out;
    }
    /* a character begun: keep the stacks that can still take one that begins so */
    uint32_t from = part->value << (6 * part->need), to = from | ((1u << (6 * part->need)) - 1);
    if (from < least[part->len]) from = least[part->len];
    if (to > 0x10FFFF) to = 0x10FFFF;
    if (from > to) return 0;
    for (int i = 0; i < n_in; i++)
        if (in[i] != 0 && grammar_class_meets(m->g, m->g->e[m->f_pos[in[i]]].arg, from, to)) {
            if (n_out >= cap) { m->over = true; return -1; }
            out[n_out++] = in[i];
        }
    return n_out;
}

static int fail_limits(grammar_matcher *m, ts_error *err) {
    return ts_fail(err, m->n_f >= GRAMMAR_MAX_FRAMES ? "grammar: the text needs more than %d parse frames"
                                                     : "grammar: the text can be read in more than %d ways at once (an ambiguous grammar)",
                   m->n_f >= GRAMMAR_MAX_FRAMES ? GRAMMAR_MAX_FRAMES : GRAMMAR_MAX_STACKS);
}

int grammar_matcher_new(const grammar *g, grammar_matcher **out, ts_error *err) {
    *out = NULL;
    grammar_matcher *m = calloc(1, sizeof *m);
    if (!m) return ts_fail(err, "grammar: out of memory");
    m->g = g;
    m->n_seen_slots = 1024;
    m->seen = malloc((size_t)m->n_seen_slots * sizeof *m->seen);
    m->seen_stamp = calloc((size_t)m->n_seen_slots, sizeof *m->seen_stamp);
    bool ok = m->seen && m->seen_stamp && rehash(m, 1024) == 0 &&
              grow((void **)&m->f_pos, &m->cap_f, 1024, sizeof *m->f_pos) == 0;
    if (ok) {
        m->f_parent = malloc((size_t)m->cap_f * sizeof *m->f_parent);
        m->f_next = malloc((size_t)m->cap_f * sizeof *m->f_next);
        m->tops = malloc(GRAMMAR_MAX_STACKS * sizeof *m->tops);
        ok = m->f_parent && m->f_next && m->tops;
    }
    if (!ok) { grammar_matcher_free(m); return ts_fail(err, "grammar: out of memory"); }
    m->cap_tops = GRAMMAR_MAX_STACKS;
    m->f_pos[0] = m->f_parent[0] = 0;   /* frame 0: the empty stack */
    m->n_f = 1;
    /* the start: every alternative of the root, returning nowhere */
    new_step(m);
    int n_work = g->rule_n_alt[g->root];
    if (grow((void **)&m->work, &m->cap_work, 2L * n_work, sizeof *m->work) != 0) { grammar_matcher_free(m); return ts_fail(err, "grammar: out of memory"); }
    for (int a = 0; a < n_work; a++) {
        m->work[2 * a] = g->alt_start[g->rule_alt[g->root] + a];
        m->work[2 * a + 1] = 0;
    }
    if (expand(m, n_work, m->tops, &m->n_tops, m->cap_tops) != 0) {
        fail_limits(m, err);
        grammar_matcher_free(m);
        return -1;
    }
    *out = m;
    return 0;
}

void grammar_matcher_free(grammar_matcher *m) {
    if (!m) return;
    free(m->f_pos); free(m->f_parent); free(m->f_next); free(m->bucket);
    free(m->tops); free(m->work); free(m->seen); free(m->seen_stamp); free(m->lv);
    free(m);
}

bool grammar_matcher_complete(const grammar_matcher *m) {
    if (m->part.need) return false;
    for (int i = 0; i < m->n_tops; i++) if (m->tops[i] == 0) return true;
    return false;
}

bool grammar_matcher_can_continue(const grammar_matcher *m) {
    for (int i = 0; i < m->n_tops; i++) if (m->tops[i] != 0) return true;
    return false;
}

/* Reads n bytes from the current state into the scratch levels: 1 (accepted; the final state is
 * the last level, *at its start, *n its size, *part its partial character), 0, or -1. */
static int try_bytes(grammar_matcher *m, const char *b, size_t n, int *at, int *n_last, utf8_part *part) {
    if (grow((void **)&m->lv, &m->cap_lv, 2L * GRAMMAR_MAX_STACKS, sizeof *m->lv) != 0) { m->over = true; return -1; }
    const int32_t *in = m->tops;
    int n_in = m->n_tops, cur = 0;
    *part = m->part;
    for (size_t i = 0; i < n; i++) {
        int32_t *out = m->lv + (size_t)cur * GRAMMAR_MAX_STACKS;
        int k = step_byte(m, in, n_in, part, (unsigned char)b[i], out, GRAMMAR_MAX_STACKS);
        if (k <= 0) return k;
        in = out;
        n_in = k;
        cur ^= 1;
    }
    *at = n ? (cur ^ 1) * GRAMMAR_MAX_STACKS : -1;
    *n_last = n_in;
    return 1;
}

int grammar_matcher_feed(grammar_matcher *m, const char *b, size_t n, ts_error *err) {
    int mark = m->n_f, at, k;
    utf8_part part;
    int rc = try_bytes(m, b, n, &at, &k, &part);
    if (rc < 0) { frames_undo(m, mark); return fail_limits(m, err); }
    if (rc == 0) { frames_undo(m, mark); return 0; }
    if (at >= 0) {
        memcpy(m->tops, m->lv + at, (size_t)k * sizeof *m->tops);
        m->n_tops = k;
        m->part = part;
    }
    return 1;
}

int grammar_matcher_allows(grammar_matcher *m, const char *b, size_t n, ts_error *err) {
    int mark = m->n_f, at, k;
    utf8_part part;
    int rc = try_bytes(m, b, n, &at, &k, &part);
    frames_undo(m, mark);
    return rc < 0 ? fail_limits(m, err) : rc;
}

int grammar_matcher_allowed_sorted(grammar_matcher *m, const char *const *texts, const uint16_t *lens,
                                   const uint16_t *lcp, int n, uint8_t *allowed, ts_error *err) {
    /* level d: the state after the first d bytes of the current text, at lv_at[d] (n_at[d] stacks),
     * with the frames made before it (mark[d]) */
    int max_len = 1;
    for (int i = 0; i < n; i++) if (lens[i] + 1 > max_len) max_len = lens[i] + 1;
    int *lv_at = malloc(max_len * sizeof *lv_at), *n_at = malloc(max_len * sizeof *n_at), *mark = malloc(max_len * sizeof *mark);
    utf8_part *parts = malloc(max_len * sizeof *parts);
    if (!lv_at || !n_at || !mark || !parts || grow((void **)&m->lv, &m->cap_lv, m->n_tops + 1, sizeof *m->lv) != 0) {
        free(lv_at); free(n_at); free(mark); free(parts);
        return ts_fail(err, "grammar: out of memory");
    }
    const int base_frames = m->n_f;
    memcpy(m->lv, m->tops, (size_t)m->n_tops * sizeof *m->lv);
    lv_at[0] = 0; n_at[0] = m->n_tops; mark[0] = m->n_f; parts[0] = m->part;
    int depth = 0;          /* levels 0..depth hold the current text's first bytes */
    int dead = max_len;      /* the current text's first `dead` bytes are not accepted (max_len: none) */
    int rc = 0;
    for (int i = 0; i < n && rc == 0; i++) {
        int common = i == 0 ? 0 : lcp[i];
        if (common >= dead) { allowed[i] = 0; continue; }   /* it begins with a refused beginning */
        dead = max_len;
        if (depth > common) { depth = common; frames_undo(m, mark[depth]); }
        int len = lens[i];
        bool ok = len > 0;
        while (ok && depth < len) {
            int from = lv_at[depth] + n_at[depth];
            if (grow((void **)&m->lv, &m->cap_lv, (long)from + GRAMMAR_MAX_STACKS, sizeof *m->lv) != 0) { m->over = true; rc = -1; break; }
            utf8_part part = parts[depth];
            int k = step_byte(m, m->lv + lv_at[depth], n_at[depth], &part, (unsigned char)texts[i][depth], m->lv + from, GRAMMAR_MAX_STACKS);
            if (k < 0) { rc = -1; break; }
            if (k == 0) { ok = false; dead = depth + 1; frames_undo(m, mark[depth]); break; }
            depth++;
            lv_at[depth] = from; n_at[depth] = k; parts[depth] = part; mark[depth] = m->n_f;
        }
        allowed[i] = ok && rc == 0;
    }
    frames_undo(m, base_frames);
    free(lv_at); free(n_at); free(mark); free(parts);
    return rc < 0 ? fail_limits(m, err) : 0;
}

int grammar_accepts_text(const grammar *g, const char *text, size_t n, ts_error *err) {
    grammar_matcher *m;
    if (grammar_matcher_new(g, &m, err) != 0) return -1;
    int rc = grammar_matcher_feed(m, text, n, err);
    if (rc == 1) rc = grammar_matcher_complete(m);
    grammar_matcher_free(m);
    return rc;
}
