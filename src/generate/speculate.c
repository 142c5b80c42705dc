/* Speculative decoding's proposals (see speculate.h) and the draft model's checks. */
#include "generate/speculate.h"
#include "core/clock.h"
#include "core/error.h"
#include "load/model.h"
#include <stdlib.h>
#include <string.h>

int ts_spec_mode_from_name(const char *name) {
    if (!strcmp(name, "off")) return TS_SPEC_OFF;
    if (!strcmp(name, "ngram")) return TS_SPEC_NGRAM;
    if (!strcmp(name, "draft")) return TS_SPEC_DRAFT;
    return -1;
}

const char *ts_spec_mode_name(int mode) {
    return mode == TS_SPEC_NGRAM ? "ngram" : mode == TS_SPEC_DRAFT ? "draft" : "off";
}

/* A token's text for a message: at most 24 bytes, anything but printable ASCII as \xNN. */
static const char *shown(const char *t, size_t len, char *buf, size_t cap) {
    size_t w = 0;
    for (size_t i = 0; i < len && i < 24 && w + 5 < cap; i++) {
        unsigned char c = (unsigned char)t[i];
        if (c >= 0x20 && c < 0x7f && c != '\'') buf[w++] = (char)c;
        else w += (size_t)snprintf(buf + w, cap - w, "\\x%02x", c);
    }
    buf[w] = 0;
    return buf;
}

int ts_spec_check_draft(const ts_model *m, const ts_model *draft, ts_error *err) {
    if (!ts_model_has_weights(draft)) return ts_fail(err, "%s: the draft model has no weights", draft->path);
    if (draft->g.n_vocab != m->g.n_vocab)
        return ts_fail(err, "%s: the draft's vocabulary has %d tokens, the model's %d: a draft must have the model's vocabulary",
                       draft->path, draft->g.n_vocab, m->g.n_vocab);
    if (draft->has_vocab != m->has_vocab)
        return ts_fail(err, "%s: %s has no tokenizer, so the vocabularies cannot be compared", draft->path,
                       draft->has_vocab ? "the model" : "the draft");
    if (!m->has_vocab) return 0;
    if (draft->voc.n != m->voc.n)
        return ts_fail(err, "%s: the draft's tokenizer has %d tokens, the model's %d: a draft must have the model's vocabulary",
                       draft->path, draft->voc.n, m->voc.n);
    for (int i = 0; i < m->voc.n; i++) {
        if (draft->voc.len[i] == m->voc.len[i] && !memcmp(draft->voc.text[i], m->voc.text[i], m->voc.len[i])) continue;
        char a[128], b[128];
        return ts_fail(err, "%s: the draft's vocabulary differs from the model's (token %d is '%s' in the draft, '%s' in the model)",
                       draft->path, i, shown(draft->voc.text[i], draft->voc.len[i], a, sizeof a),
                       shown(m->voc.text[i], m->voc.len[i], b, sizeof b));
    }
    return 0;
}

int speculate_ngram(const int32_t *seq, int len, int n, int k, int32_t *out) {
    if (k <= 0 || len < 2) return 0;
    if (n > len - 1) n = len - 1;
    for (int l = n; l >= SPECULATE_NGRAM_MIN; l--) {
        const int32_t *tail = seq + len - l;
        for (int j = len - l - 1; j >= 0; j--) {
            if (seq[j + l - 1] != tail[l - 1] || memcmp(seq + j, tail, (size_t)l * sizeof *seq) != 0) continue;
            /* what followed the match; past the end, the proposal itself (the period repeated) */
            const int start = j + l;
            for (int t = 0; t < k; t++) out[t] = start + t < len ? seq[start + t] : out[start + t - len];
            return k;
        }
    }
    return 0;
}

static int argmax(const float *row, int nv) {
    int best = 0;
    for (int t = 1; t < nv; t++) if (row[t] > row[best]) best = t;
    return best;
}

int speculate_draft_new(speculate_draft *d, ts_model *draft, int n_ctx, int n_threads, int n_seq, ts_error *err) {
    memset(d, 0, sizeof *d);
    d->m = draft;
    d->n_seq = n_seq;
    d->n_vocab = ts_model_n_vocab(draft);
    ts_context_options co = { .n_ctx = n_ctx, .n_threads = n_threads, .n_seq = n_seq };
    if (ts_context_new_opts(draft, &co, &d->ctx, err) != 0) return -1;
    /* the first pass over the draft's weights, paid here (as the session does for its model) */
    int32_t tok = 0;
    if (ts_eval(d->ctx, &tok, 1, NULL, false, err) != 0) { speculate_draft_free(d); return -1; }
    ts_context_truncate(d->ctx, 0);
    d->ids = calloc((size_t)n_seq, sizeof *d->ids);
    d->n = calloc((size_t)n_seq, sizeof *d->n);
    d->rows = malloc((size_t)n_seq * (size_t)d->n_vocab * sizeof *d->rows);
    d->items = calloc((size_t)n_seq, sizeof *d->items);
    d->item_seq = calloc((size_t)n_seq, sizeof *d->item_seq);
    bool ok = d->ids && d->n && d->rows && d->items && d->item_seq;
    for (int i = 0; ok && i < n_seq; i++) ok = (d->ids[i] = malloc(((size_t)n_ctx + 1) * sizeof **d->ids)) != NULL;
    if (!ok) { speculate_draft_free(d); return ts_fail(err, "out of memory for the draft model's context"); }
    return 0;
}

void speculate_draft_free(speculate_draft *d) {
    for (int i = 0; d->ids && i < d->n_seq; i++) free(d->ids[i]);
    free(d->ids);
    free(d->n);
    free(d->rows);
    free(d->items);
    free(d->item_seq);
    ts_context_free(d->ctx);
    memset(d, 0, sizeof *d);
}

void speculate_draft_forget(speculate_draft *d, int seq) {
    d->n[seq] = ts_seq_truncate(d->ctx, seq, 0);
}

int speculate_draft_propose(speculate_draft *d, speculate_want *w, int n_want, ts_error *err) {
    const size_t nv = (size_t)d->n_vocab;
    int n_items = 0, longest = 0;
    for (int i = 0; i < n_want; i++) {
        speculate_want *x = &w[i];
        int s = x->seq;
        x->n_out = 0;
        if (x->k <= 0 || x->n_tokens <= 0) continue;
        /* the longest prefix the draft's cache shares, leaving the last token to evaluate */
        int common = 0;
        while (common < d->n[s] && common < x->n_tokens - 1 && d->ids[s][common] == x->tokens[common]) common++;
        d->n[s] = ts_seq_truncate(d->ctx, s, common);
        d->items[n_items] = (ts_batch_item){ s, x->tokens + d->n[s], x->n_tokens - d->n[s], d->rows + (size_t)s * nv, false };
        d->item_seq[n_items++] = i;
        if (x->k > longest) longest = x->k;
    }
    /* the catch-up counts as a proposal's step where it only follows the last step's tokens (as
     * every step's does while proposing), not where it makes up for many (a prompt, steps without
     * proposals) */
    int widest = 0;
    for (int j = 0; j < n_items; j++) if (d->items[j].n > widest) widest = d->items[j].n;
    const bool follows = widest <= longest + 1;
    d->step_seconds = 0;
    d->step_proposals = 0;
    for (int t = 0; t < longest && n_items > 0; t++) {
        const double t0 = clock_seconds();
        if (ts_eval_batch(d->ctx, d->items, n_items, err) != 0) {
            for (int i = 0; i < n_want; i++) { w[i].n_out = 0; speculate_draft_forget(d, w[i].seq); }
            return -1;
        }
        int kept = 0;
        for (int j = 0; j < n_items; j++) {
            speculate_want *x = &w[d->item_seq[j]];
            int s = x->seq;
            memcpy(d->ids[s] + d->n[s], d->items[j].tokens, (size_t)d->items[j].n * sizeof **d->ids);
            d->n[s] += d->items[j].n;
            x->out[x->n_out] = argmax(d->rows + (size_t)s * nv, (int)nv);
            x->n_out++;
            if (x->n_out == x->k) continue;   /* its last proposal need not be evaluated */
            d->items[kept] = (ts_batch_item){ s, &x->out[x->n_out - 1], 1, d->rows + (size_t)s * nv, false };
            d->item_seq[kept++] = d->item_seq[j];
        }
        if (t > 0 || follows) {   /* a proposal per sequence in it */
            d->step_seconds += clock_seconds() - t0;
            d->step_proposals += n_items;
        }
        n_items = kept;
    }
    return 0;
}

/* ---- How many proposals pay ---- */

/* A running mean that follows the machine's speed as it drifts */
static double running_mean(double mean, double x) { return mean > 0 ? 0.75 * mean + 0.25 * x : x; }

void speculate_costs_step(speculate_costs *c, int width, double seconds) {
    if (width >= 1 && width < SPECULATE_WIDTHS && seconds > 0) c->step[width] = running_mean(c->step[width], seconds);
}

void speculate_costs_proposals(speculate_costs *c, int n, double seconds) {
    if (n > 0 && seconds > 0) c->proposal = running_mean(c->proposal, seconds / n);
}

/* The cost of a step of w positions: measured, or interpolated between the measured widths around
 * it, or the widest measured below it */
static double step_cost(const speculate_costs *c, int w) {
    if (c->step[w] > 0) return c->step[w];
    int a = w - 1, b = w + 1;
    while (a > 0 && !(c->step[a] > 0)) a--;
    while (b < SPECULATE_WIDTHS && !(c->step[b] > 0)) b++;
    if (a == 0) return 0;
    if (b == SPECULATE_WIDTHS) return c->step[a];
    return c->step[a] + (c->step[b] - c->step[a]) * (w - a) / (b - a);
}

int speculate_best_k(const speculate_costs *c, int base_width, double base_tokens, int k_max, double p) {
    if (base_width < 1 || base_width >= SPECULATE_WIDTHS || !(c->step[base_width] > 0)) return 0;   /* measure it first */
    int best = 0;
    double best_rate = base_tokens / c->step[base_width], tokens = base_tokens, taken = 1;
    for (int k = 1; k <= k_max && base_width + k < SPECULATE_WIDTHS; k++) {
        taken *= p;
        tokens += taken;
        const double rate = tokens / (step_cost(c, base_width + k) + k * c->proposal);
        if (rate > best_rate) { best_rate = rate; best = k; }
    }
    return best;
}
