/* Evaluation: tokens through the forward in chunks of FORWARD_MAX_BATCH positions, logits checked
 * to be finite; cutting a sequence back (truncate) as its layers' states allow. */
#include "run/forward.h"
#include "run/layer_kind.h"
#include "core/error.h"
#include <math.h>

int ts_context_n_ctx(const ts_context *c) { return c->n_ctx; }
int ts_context_pos(const ts_context *c) { return c->pos; }

int ts_context_truncate(ts_context *c, int pos) {
    if (pos < 0) pos = 0;
    if (pos >= c->pos) return c->pos;
    /* each layer's state says where it can continue from (a sliding ring may have lost positions, a
     * recurrent state continues only from a snapshot), until they all agree */
    const model_geometry *g = &c->m->g;
    for (bool moved = true; moved && pos > 0; ) {
        moved = false;
        for (int il = 0; il < g->n_layers && pos > 0; il++) {
            int keep = layer_kind_ops(g->layers[il].kind)->rewind(c, &g->layers[il], il, pos);
            if (keep < pos) { pos = keep; moved = true; }
        }
    }
    recurrent_state_restore(&c->rs, pos);
    c->pos = pos;
    if (pos == 0) c->high_water = 0;
    return pos;
}

static int eval_chunks(ts_context *c, const int32_t *tokens, int n, float *logits, bool all_rows, ts_error *err);

int ts_eval(ts_context *c, const int32_t *tokens, int n, float *logits, bool all_rows, ts_error *err) {
    const model_geometry *g = &c->m->g;
    if (n <= 0) return ts_fail(err, "nothing to evaluate");
    if (n > c->n_ctx - c->pos)
        return ts_fail(err, "%d tokens do not fit in the context (%d of %d positions used)", n,
                       c->pos, c->n_ctx);
    for (int i = 0; i < n; i++)
        if (tokens[i] < 0 || tokens[i] >= g->n_vocab)
            return ts_fail(err, "token id %d is out of range (vocabulary of %d)", tokens[i], g->n_vocab);
    /* recurrent layers keep snapshots of their state inside a prompt's evaluation */
    if (recurrent_state_plan(&c->rs, c->pos, n) != 0) return ts_fail(err, "%s: out of memory for the recurrent state's snapshots", c->m->path);
    int rc = eval_chunks(c, tokens, n, logits, all_rows, err);
    recurrent_state_commit(&c->rs, rc == 0);
    return rc;
}

/* The chunks of an evaluation through the forward. */
static int eval_chunks(ts_context *c, const int32_t *tokens, int n, float *logits, bool all_rows, ts_error *err) {
    const model_geometry *g = &c->m->g;
    for (int done = 0; done < n; ) {
        int chunk = n - done < FORWARD_MAX_BATCH ? n - done : FORWARD_MAX_BATCH;
        bool last = done + chunk == n;
        float *dst = NULL;
        if (logits && all_rows) dst = logits + (size_t)done * g->n_vocab;
        else if (logits && last) dst = logits;
        if (forward_chunk(c, tokens + done, chunk, dst, all_rows, err) != 0) return -1;
        /* a model that computes NaN or infinity (a broken file, an overflow) must not answer */
        size_t count = dst ? (all_rows ? (size_t)chunk : 1) * (size_t)g->n_vocab : 0;
        for (size_t i = 0; i < count; i++)
            if (!isfinite(dst[i]))
                return ts_fail(err, "the model computed a non-finite logit (%g) at position %d",
                               (double)dst[i], c->pos - chunk + (int)(all_rows ? i / (size_t)g->n_vocab : (size_t)chunk - 1));
        done += chunk;
        if (c->pos > c->high_water) c->high_water = c->pos;
    }
    return 0;
}

