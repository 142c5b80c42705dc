/* Grammar masks over the vocabulary (see constrain.h). */
#include "generate/constrain.h"
#include "core/error.h"
#include "text/json_schema.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define PIECE_MAX 256
#define FIRST_TRIES 64           /* the most likely tokens tried one by one before the whole walk */

void constrain_texts_free(token_texts *t) {
    if (!t) return;
    free(t->id); free(t->text); free(t->len); free(t->lcp); free(t->at_of_id); free(t->allowed); free(t->bytes);
    free(t);
}

static int by_text(const void *a, const void *b, void *ctx) {
    const token_texts *t = ctx;
    int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
    const char *tx = t->text[x], *ty = t->text[y];
    size_t lx = t->len[x], ly = t->len[y];
    int c = memcmp(tx, ty, lx < ly ? lx : ly);
    if (c) return c;
    if (lx != ly) return lx < ly ? -1 : 1;
    return x < y ? -1 : 1;
}

int constrain_texts_build(const ts_model *m, token_texts **out, ts_error *err) {
    *out = NULL;
    const int nv = ts_model_n_vocab(m);
    token_texts *t = calloc(1, sizeof *t);
    if (!t) return ts_fail(err, "out of memory");
    size_t cap = 1 << 16, used = 0;
    size_t *off = malloc((size_t)nv * sizeof *off);
    t->bytes = malloc(cap);
    t->id = malloc((size_t)nv * sizeof *t->id);
    t->text = malloc((size_t)nv * sizeof *t->text);
    t->len = malloc((size_t)nv * sizeof *t->len);
    t->lcp = malloc((size_t)nv * sizeof *t->lcp);
    t->at_of_id = malloc((size_t)nv * sizeof *t->at_of_id);
    t->allowed = malloc((size_t)nv);
    bool ok = off && t->bytes && t->id && t->text && t->len && t->lcp && t->at_of_id && t->allowed;
    /* first indexed by token id (text, len), then sorted into place */
    for (int32_t id = 0; ok && id < nv; id++) {
        char piece[PIECE_MAX];
        int pl = ts_token_text(m, id, piece, sizeof piece);
        t->at_of_id[id] = -1;
        if (pl <= 0 || pl >= PIECE_MAX) continue;   /* prints nothing, or longer than any grammar step needs */
        if (used + (size_t)pl > cap) {
            char *b = realloc(t->bytes, cap *= 2);
            if (!b) { ok = false; break; }
            t->bytes = b;
        }
        memcpy(t->bytes + used, piece, (size_t)pl);
        off[t->n] = used;
        t->len[t->n] = (uint16_t)pl;
        t->id[t->n++] = id;
        used += (size_t)pl;
    }
    if (!ok) { free(off); constrain_texts_free(t); return ts_fail(err, "out of memory"); }
    /* sort indices into the id-ordered arrays, then lay the arrays out in sorted order */
    int32_t *order = malloc((size_t)(t->n ? t->n : 1) * sizeof *order);
    const char **text_by_idx = malloc((size_t)(t->n ? t->n : 1) * sizeof *text_by_idx);
    uint16_t *len_by_idx = malloc((size_t)(t->n ? t->n : 1) * sizeof *len_by_idx);
    int32_t *id_by_idx = malloc((size_t)(t->n ? t->n : 1) * sizeof *id_by_idx);
    if (!order || !text_by_idx || !len_by_idx || !id_by_idx) {
        free(off); free(order); free(text_by_idx); free(len_by_idx); free(id_by_idx);
        constrain_texts_free(t);
        return ts_fail(err, "out of memory");
    }
    for (int i = 0; i < t->n; i++) { order[i] = i; t->text[i] = t->bytes + off[i]; }
    qsort_r(order, (size_t)t->n, sizeof *order, by_text, t);
    for (int i = 0; i < t->n; i++) { text_by_idx[i] = t->text[order[i]]; len_by_idx[i] = t->len[order[i]]; id_by_idx[i] = t->id[order[i]]; }
    for (int i = 0; i < t->n; i++) {
        t->text[i] = text_by_idx[i];
        t->len[i] = len_by_idx[i];
        t->id[i] = id_by_idx[i];
        t->at_of_id[t->id[i]] = i;
        uint16_t k = 0;
        if (i) while (k < t->len[i] && k < t->len[i - 1] && t->text[i][k] == t->text[i - 1][k]) k++;
        t->lcp[i] = k;
    }
    free(off); free(order); free(text_by_idx); free(len_by_idx); free(id_by_idx);
    *out = t;
    return 0;
}

/* Whether token id may come next. */
static int token_allowed(grammar_matcher *gm, const token_texts *tt, const ts_model *m, int32_t id, bool complete,
                         ts_error *err) {
    if (ts_token_is_eog(m, id)) return complete;
    int at = tt->at_of_id[id];
    if (at < 0) return 0;
    return grammar_matcher_allows(gm, tt->text[at], tt->len[at], err);
}

/* a ranks before b: the higher logit, then the lower id (the sampler's order) */
static bool before(const float *logits, int32_t a, int32_t b) {
    return logits[a] > logits[b] || (logits[a] == logits[b] && a < b);
}

int constrain_logits(grammar_matcher *gm, const token_texts *tt, const ts_model *m, float *logits, int need,
                     ts_error *err) {
    const int nv = ts_model_n_vocab(m);
    const bool complete = grammar_matcher_complete(gm);
    if (need > 0 && need <= FIRST_TRIES / 2) {
        /* the FIRST_TRIES most likely tokens: a heap whose root ranks last */
        int32_t heap[FIRST_TRIES], kept[FIRST_TRIES / 2];
        int n = 0;
        for (int32_t t = 0; t < nv; t++) {
            if (n < FIRST_TRIES) {
                int i = n++;
                heap[i] = t;
                while (i > 0 && before(logits, heap[(i - 1) / 2], heap[i])) { int32_t x = heap[i]; heap[i] = heap[(i - 1) / 2]; heap[(i - 1) / 2] = x; i = (i - 1) / 2; }
            } else if (before(logits, t, heap[0])) {
                heap[0] = t;
                for (int i = 0;;) {
                    int l = 2 * i + 1, r = l + 1, w = i;
                    if (l < n && before(logits, heap[w], heap[l])) w = l;
                    if (r < n && before(logits, heap[w], heap[r])) w = r;
                    if (w == i) break;
                    int32_t x = heap[i]; heap[i] = heap[w]; heap[w] = x;
                    i = w;
                }
            }
        }
        for (int i = 1; i < n; i++)   /* most likely first */
            for (int j = i; j > 0 && before(logits, heap[j], heap[j - 1]); j--) { int32_t x = heap[j]; heap[j] = heap[j - 1]; heap[j - 1] = x; }
        int found = 0;
        for (int i = 0; i < n && found < need; i++) {
            int a = token_allowed(gm, tt, m, heap[i], complete, err);
            if (a < 0) return -1;
            if (a) kept[found++] = heap[i];
        }
        if (found == need) {   /* the sampler can use only these: the rest go */
            float keep[FIRST_TRIES / 2];
            for (int i = 0; i < found; i++) keep[i] = logits[kept[i]];
            for (int t = 0; t < nv; t++) logits[t] = -INFINITY;
            for (int i = 0; i < found; i++) logits[kept[i]] = keep[i];
            return 0;
        }
    }
    if (grammar_matcher_allowed_sorted(gm, tt->text, tt->len, tt->lcp, tt->n, tt->allowed, err) != 0) return -1;
    int n_ok = 0;
    for (int32_t t = 0; t < nv; t++) {
        bool ok = ts_token_is_eog(m, t) ? complete : tt->at_of_id[t] >= 0 && tt->allowed[tt->at_of_id[t]];
        if (ok) n_ok++;
        else logits[t] = -INFINITY;
    }
    if (n_ok == 0) return ts_fail(err, "grammar: no token of the vocabulary can continue the answer");
    return 0;
}

int ts_grammar_from_gbnf(const char *text, size_t len, ts_grammar **out, ts_error *err) {
    return grammar_parse(text, len, out, err);
}

void ts_grammar_free(ts_grammar *g) { grammar_free(g); }

int ts_grammar_from_json_schema(const char *schema, size_t len, ts_grammar **out, ts_error *err) {
    char *gbnf = NULL;
    *out = NULL;
    if (json_schema_to_gbnf(schema, len, &gbnf, err) != 0) return -1;
    int rc = grammar_parse(gbnf, strlen(gbnf), out, err);
    free(gbnf);
    return rc;
}
