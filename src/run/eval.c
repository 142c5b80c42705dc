/* Evaluation: tokens through the forward in batches of at most FORWARD_MAX_BATCH positions, logits
 * checked to be finite; several sequences' tokens packed into the same batches (the weights read
 * once for all of them); cutting a sequence back (truncate), or starting one from another's prefix
 * (copy), as its layers' states allow. */
#include "run/forward.h"
#include "run/layer_kind.h"
#include "core/error.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>

int ts_context_n_ctx(const ts_context *c) { return c->n_ctx; }
uint64_t ts_context_weight_bytes(const ts_context *c) { return c->weight_bytes; }
int ts_context_pos(const ts_context *c) { return c->seqs[0].pos; }
int ts_seq_pos(const ts_context *c, int seq) { return seq >= 0 && seq < c->n_seq ? c->seqs[seq].pos : -1; }

/* The latest position <= pos from which sequence s can continue: each layer's state says where (a
 * sliding ring may have lost positions, a recurrent state continues only from a snapshot), until
 * they all agree. */
static int resumable(const ts_context *c, const sequence *s, int pos) {
    const model_geometry *g = &c->m->g;
    for (bool moved = true; moved && pos > 0; ) {
        moved = false;
        for (int il = 0; il < g->n_layers && pos > 0; il++) {
            int keep = layer_kind_ops(g->layers[il].kind)->rewind(c, s, &g->layers[il], il, pos);
            if (keep < pos) { pos = keep; moved = true; }
        }
    }
    return pos;
}

int ts_seq_truncate(ts_context *c, int seq, int pos) {
    if (seq < 0 || seq >= c->n_seq) return -1;
    sequence *s = &c->seqs[seq];
    if (pos < 0) pos = 0;
    if (pos >= s->pos) return s->pos;
    pos = resumable(c, s, pos);
    recurrent_state_restore(&s->rs, pos);
    s->pos = pos;
    if (pos == 0) s->high_water = 0;
    return pos;
}

int ts_context_truncate(ts_context *c, int pos) { return ts_seq_truncate(c, 0, pos); }

int ts_seq_copy(ts_context *c, int dst, int src, int pos) {
    if (dst < 0 || dst >= c->n_seq || src < 0 || src >= c->n_seq) return -1;
    if (dst == src) return ts_seq_truncate(c, dst, pos);
    sequence *d = &c->seqs[dst];
    const sequence *s = &c->seqs[src];
    if (pos > s->pos) pos = s->pos;
    if (pos < 0) pos = 0;
    if (pos < s->pos) pos = resumable(c, s, pos);   /* all of src's positions: its live state */
    kv_cache_copy(&d->kv, &s->kv, &c->m->g, c->n_ctx, pos);
    recurrent_state_copy(&d->rs, &s->rs, pos, s->pos);
    d->pos = pos;
    d->high_water = pos > 0 ? s->high_water : 0;   /* what src's rings were written up to */
    return pos;
}

bool ts_context_copies_any_prefix(const ts_context *c) {
    const model_geometry *g = &c->m->g;
    for (int il = 0; il < g->n_layers; il++)
        if (layer_kind_ops(g->layers[il].kind)->state_floats(&g->layers[il]) > 0) return false;
    return true;
}

/* One request of an evaluation: n tokens for sequence s, the logits of every position (all_rows)
 * or of the last one into logits (NULL: none). */
typedef struct eval_item { sequence *s; const int32_t *tokens; int n; float *logits; bool all_rows; } eval_item;

static int check_item(const ts_context *c, const eval_item *it, ts_error *err) {
    const model_geometry *g = &c->m->g;
    if (it->n <= 0) return ts_fail(err, "nothing to evaluate");
    if (it->n > c->n_ctx - it->s->pos)
        return ts_fail(err, "%d tokens do not fit in the context (%d of %d positions used)", it->n, it->s->pos, c->n_ctx);
    for (int i = 0; i < it->n; i++)
        if (it->tokens[i] < 0 || it->tokens[i] >= g->n_vocab)
            return ts_fail(err, "token id %d is out of range (vocabulary of %d)", it->tokens[i], g->n_vocab);
    return 0;
}

/* A model that computes NaN or infinity (a broken file, an overflow) must not answer. */
static int check_finite(const ts_context *c, const float *row, int pos, ts_error *err) {
    /* all exponent bits set is infinity or NaN: one pass the compiler vectorizes (isfinite per
     * value was 8% of a 9-position forward of a 32,000-token model), then the value for the message */
    uint32_t any = 0;
    for (int i = 0; i < c->m->g.n_vocab; i++) {
        uint32_t b;
        memcpy(&b, &row[i], sizeof b);
        any |= (uint32_t)((b & 0x7f800000u) == 0x7f800000u);
    }
    for (int i = 0; any && i < c->m->g.n_vocab; i++)
        if (!isfinite(row[i]))
            return ts_fail(err, "the model computed a non-finite logit (%g) at position %d", (double)row[i], pos);
    return 0;
}

/* The items' tokens in batches: each batch takes the next positions of the items in order (an item
 * longer than a batch's room goes on in the next), one run per item. rows: room for
 * FORWARD_MAX_BATCH row indices; scratch: room for FORWARD_MAX_BATCH rows of logits, or NULL when
 * the only item writes its own. */
static int eval_items(ts_context *c, eval_item *items, int n_items, float *scratch, ts_error *err) {
    const size_t nv = (size_t)c->m->g.n_vocab;
    int32_t tokens[FORWARD_MAX_BATCH];
    int rows[FORWARD_MAX_BATCH], row_pos[FORWARD_MAX_BATCH];
    float *row_dst[FORWARD_MAX_BATCH];
    int item = 0, done = 0;   /* the next token: items[item].tokens[done] */
    while (item < n_items) {
        int n = 0, n_rows = 0;
        float *out = scratch;
        c->n_runs = 0;
        for (; item < n_items && n < FORWARD_MAX_BATCH; item++, done = 0) {
            const eval_item *it = &items[item];
            int take = it->n - done < FORWARD_MAX_BATCH - n ? it->n - done : FORWARD_MAX_BATCH - n;
            c->runs[c->n_runs++] = (batch_run){ it->s, n, take };
            memcpy(tokens + n, it->tokens + done, (size_t)take * sizeof *tokens);
            for (int i = 0; i < take && it->logits; i++) {
                if (!it->all_rows && done + i != it->n - 1) continue;
                rows[n_rows] = n + i;
                row_dst[n_rows] = it->logits + (it->all_rows ? (size_t)(done + i) * nv : 0);
                row_pos[n_rows++] = it->s->pos + i;
            }
            if (!scratch && it->logits) out = it->logits + (it->all_rows ? (size_t)done * nv : 0);
            n += take;
            done += take;
            if (done < it->n) break;   /* the batch is full: this item goes on in the next */
        }
        if (forward_batch(c, tokens, n, rows, n_rows, out, err) != 0) return -1;
        for (int r = 0; r < n_rows; r++) {
            const float *row = out + (size_t)r * nv;
            if (check_finite(c, row, row_pos[r], err) != 0) return -1;
            if (scratch) memcpy(row_dst[r], row, nv * sizeof(float));
        }
        for (int r = 0; r < c->n_runs; r++)
            if (c->runs[r].seq->pos > c->runs[r].seq->high_water) c->runs[r].seq->high_water = c->runs[r].seq->pos;
    }
    return 0;
}

/* Checks, plans the recurrent layers' snapshots (they are taken inside an evaluation), evaluates. */
static int eval(ts_context *c, eval_item *items, int n_items, float *scratch, ts_error *err) {
    for (int i = 0; i < n_items; i++) {
        if (check_item(c, &items[i], err) != 0) return -1;
        for (int j = 0; j < i; j++)
            if (items[j].s == items[i].s) return ts_fail(err, "sequence %d appears twice in one evaluation", (int)(items[i].s - c->seqs));
    }
    int rc = 0;
    for (int i = 0; i < n_items && rc == 0; i++)
        if (recurrent_state_plan(&items[i].s->rs, items[i].s->pos, items[i].n) != 0)
            rc = ts_fail(err, "%s: out of memory for the recurrent state's snapshots", c->m->path);
    if (rc == 0) rc = eval_items(c, items, n_items, scratch, err);
    for (int i = 0; i < n_items; i++) recurrent_state_commit(&items[i].s->rs, rc == 0);
    return rc;
}

int ts_eval(ts_context *c, const int32_t *tokens, int n, float *logits, bool all_rows, ts_error *err) {
    eval_item it = { &c->seqs[0], tokens, n, logits, all_rows };
    return eval(c, &it, 1, NULL, err);
}

int ts_eval_batch(ts_context *c, const ts_batch_item *items, int n_items, ts_error *err) {
    if (n_items <= 0) return ts_fail(err, "nothing to evaluate");
    if (n_items > c->batch_items_cap) {
        eval_item *t = realloc(c->batch_items, (size_t)n_items * sizeof *t);
        if (!t) return ts_fail(err, "out of memory");
        c->batch_items = t;
        c->batch_items_cap = n_items;
    }
    eval_item *its = c->batch_items;
    long with_logits = 0;   /* rows of logits asked for */
    for (int i = 0; i < n_items; i++) {
        if (items[i].seq < 0 || items[i].seq >= c->n_seq)
            return ts_fail(err, "sequence %d does not exist (the context holds %d)", items[i].seq, c->n_seq);
        its[i] = (eval_item){ &c->seqs[items[i].seq], items[i].tokens, items[i].n, items[i].logits, items[i].all_rows };
        if (items[i].logits) with_logits += items[i].all_rows && items[i].n > 0 ? items[i].n : 1;
    }
    /* a batch's logits rows go to their items after each forward */
    int rows = with_logits < FORWARD_MAX_BATCH ? (int)with_logits : FORWARD_MAX_BATCH;
    if (rows > c->batch_rows_cap) {
        float *t = realloc(c->batch_rows, (size_t)rows * (size_t)c->m->g.n_vocab * sizeof(float));
        if (!t) return ts_fail(err, "out of memory for the logits of %d sequences", rows);
        c->batch_rows = t;
        c->batch_rows_cap = rows;
    }
    return eval(c, its, n_items, rows > 0 ? c->batch_rows : NULL, err);
}
