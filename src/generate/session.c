/* Generation sessions: a context of one or more sequences ("slots") whose KV caches are kept
 * between requests (the prefix cache), and the loop every CLI mode shares. Requests run in slots;
 * each step evaluates, in one batch, the prompt of every request that is starting and the last
 * sampled token of every one that is generating, so the weights are read once per step for all of
 * them, and a request that finishes frees its slot for the next at once (continuous batching).
 * What a request computes does not depend on what shares its steps (ts_eval_batch), so one request
 * alone and the same request among others give the same answer. */
#include "tessera.h"
#include "generate/answer.h"
#include "generate/speculate.h"
#include "core/clock.h"
#include "core/error.h"
#include "load/model.h"
#include "run/context.h"
#include <limits.h>
#include <stdlib.h>
#include <string.h>

/* Prompt tokens per step when the prefill's progress is followed: big enough that the matrix
 * tiles stay full, small enough for a line a second on a slow machine. */
#define PREFILL_SLICE 512

/* A slot's request waits (SLOT_WAIT) while another slot evaluates a prompt it shares a prefix
 * with, then starts from a copy of that prefix: lines that start alike (a batch's system prompt)
 * evaluate the shared part once, even when they all start at the same moment. */
enum { SLOT_FREE, SLOT_WAIT, SLOT_PREFILL, SLOT_DECODE };

#define SPEC_EXPLORE_STEPS 16
#define SPEC_EXPLORE_MAX 256

typedef struct slot {
    int phase;
    int32_t *cached;          /* the ids in the slot's sequence, in order */
    int n_cached;
    unsigned long last_used;  /* when it last took a request (the least recent is reused first) */
    /* the request under way */
    const ts_gen_request *rq;
    ts_error *rq_err;
    answer a;
    int kept, done, todo;     /* prompt positions from the cache, evaluated, to evaluate */
    int wait_for;             /* SLOT_WAIT: the slot whose prompt evaluation it waits for */
    int32_t next;             /* the token to evaluate next (decoding) */
    float *logits;            /* one row, a row per prompt position (on_logits), or a row per
                                 position of a speculative step (spec_k + 1) */
    bool spec;                /* the request decodes speculatively (not with on_logits) */
    int n_prop;               /* this step's proposals: cached[n_cached + 1 ..], after next */
    int k_cur;                /* proposals wanted next step: one more than the last step took
                                 after a rejection, twice as many after a full acceptance (up to
                                 spec_k): rejected positions cost compute */
    double taken, missed;     /* the request's proposals taken, and rejections (counts that fade
                                 by a tenth a step): the odds a proposal is taken, for
                                 speculate_best_k */
    int idle, explore_after;  /* steps since the last proposals, and how many make it propose anyway
                                 (SPEC_EXPLORE_STEPS, doubled by each time it does, up to
                                 SPEC_EXPLORE_MAX: proposals that do not pay are tried ever less) */
    uint64_t decode_bytes0;   /* the context's weight bytes when the first token was sampled */
    int decode_steps;         /* evaluations since then */
    int redo;                 /* after a rejection the state had to go back further (a recurrent
                                 layer continues only from a snapshot): cached[n_cached ..] + redo
                                 is evaluated again before the next step */
} slot;

struct ts_session {
    ts_model *m;
    ts_context *ctx;
    int n_slots;
    int step_prompt_tokens;      /* prompt tokens a step evaluates at most (0: no limit) */
    slot *slots;
    unsigned long clock;
    size_t longest_token;     /* bytes of the longest token string the vocabulary holds */
    bool copies_anywhere;     /* no recurrent layer: a prefix can be copied at any position */
    ts_batch_item *items;     /* a step's batch, one per slot */
    int *item_slot;
    /* speculative decoding (ts_session_options.spec) */
    int spec, spec_k, spec_n;
    bool spec_always;
    speculate_draft draft;    /* TS_SPEC_DRAFT: the draft model's context, one sequence per slot */
    speculate_want *wants;
    speculate_costs costs;    /* what decode steps have cost, by width: how many proposals pay */
    token_texts *texts;       /* the vocabulary sorted for grammar masks, made by the first grammar */
};

/* The speculative decoding options, checked. */
static int check_spec(const ts_model *m, const ts_session *s, const ts_model *draft, ts_error *err) {
    if (s->spec < TS_SPEC_OFF || s->spec > TS_SPEC_DRAFT) return ts_fail(err, "unknown speculative decoding mode %d", s->spec);
    if (s->spec_k < 1 || s->spec_k > TS_SPEC_MAX_K)
        return ts_fail(err, "speculative decoding proposes 1 to %d tokens a step, not %d", TS_SPEC_MAX_K, s->spec_k);
    if (s->spec_n < 1 || s->spec_n > TS_SPEC_MAX_N)
        return ts_fail(err, "prompt lookup matches n-grams of 1 to %d tokens, not %d", TS_SPEC_MAX_N, s->spec_n);
    if (s->spec == TS_SPEC_DRAFT && !draft) return ts_fail(err, "speculative decoding by a draft model needs the draft model");
    if (s->spec != TS_SPEC_DRAFT && draft)
        return ts_fail(err, "%s: a draft model goes with speculative decoding by a draft (TS_SPEC_DRAFT)", draft->path);
    return s->spec == TS_SPEC_DRAFT ? ts_spec_check_draft(m, draft, err) : 0;
}

int ts_session_new_opts(ts_model *m, const ts_session_options *opt, ts_session **out, ts_error *err) {
    *out = NULL;
    ts_session *s = calloc(1, sizeof *s);
    if (!s) return ts_fail(err, "out of memory for a session");
    s->m = m;
    s->n_slots = opt && opt->n_slots > 0 ? opt->n_slots : 1;
    s->step_prompt_tokens = opt && opt->step_prompt_tokens > 0 ? opt->step_prompt_tokens : 0;
    s->spec = opt ? opt->spec : TS_SPEC_OFF;
    s->spec_k = opt && opt->spec_k ? opt->spec_k : TS_SPEC_DEFAULT_K;
    s->spec_n = opt && opt->spec_n ? opt->spec_n : TS_SPEC_DEFAULT_N;
    s->spec_always = opt && opt->spec_always;
    if (check_spec(m, s, opt ? opt->draft : NULL, err) != 0) { free(s); return -1; }
    ts_context_options co = { .n_ctx = opt ? opt->n_ctx : 0, .n_threads = opt ? opt->n_threads : 0, .n_seq = s->n_slots };
    if (ts_context_new_opts(m, &co, &s->ctx, err) != 0) { free(s); return -1; }
    /* Warm up: one evaluation reads every weight once, so the first pass over the mapped file is
     * paid here rather than by the first prompt; then the context starts over. On the machine
     * this was measured on, the first pass over a 400 MB mapping took 0.25-0.3 s against 0.02 s
     * for every later one, even with the pages mapped in advance (MAP_POPULATE). */
    int32_t tok = 0;
    if (ts_eval(s->ctx, &tok, 1, NULL, false, err) != 0 || ts_context_truncate(s->ctx, 0) != 0) {
        ts_session_free(s);
        return -1;
    }
    s->slots = calloc((size_t)s->n_slots, sizeof *s->slots);
    s->items = calloc((size_t)s->n_slots, sizeof *s->items);
    s->item_slot = calloc((size_t)s->n_slots, sizeof *s->item_slot);
    s->wants = calloc((size_t)s->n_slots, sizeof *s->wants);
    bool ok = s->slots && s->items && s->item_slot && s->wants;
    for (int i = 0; ok && i < s->n_slots; i++)
        ok = (s->slots[i].cached = malloc(((size_t)ts_context_n_ctx(s->ctx) + 1) * sizeof(int32_t))) != NULL;
    if (!ok) { ts_session_free(s); return ts_fail(err, "out of memory for a session"); }
    if (s->spec == TS_SPEC_DRAFT &&
        speculate_draft_new(&s->draft, opt->draft, ts_context_n_ctx(s->ctx), opt->n_threads, s->n_slots, err) != 0) {
        ts_session_free(s);
        return -1;
    }
    /* token strings as stored are at least as long as the text they stand for (SentencePiece's
     * space mark, byte-level BPE's byte characters and "<0x0A>" pieces are longer) */
    s->copies_anywhere = ts_context_copies_any_prefix(s->ctx);
    s->longest_token = 1;
    if (m->has_vocab)
        for (int i = 0; i < m->voc.n; i++) if (m->voc.len[i] > s->longest_token) s->longest_token = m->voc.len[i];
    *out = s;
    return 0;
}

int ts_session_new(ts_model *m, int n_ctx, int n_threads, ts_session **out, ts_error *err) {
    ts_session_options o = { .n_ctx = n_ctx, .n_threads = n_threads, .n_slots = 1 };
    return ts_session_new_opts(m, &o, out, err);
}

static void slot_abandon(slot *sl) {
    if (sl->phase != SLOT_FREE) answer_end(&sl->a, false, NULL);
    free(sl->logits);
    sl->logits = NULL;
    sl->phase = SLOT_FREE;
}

void ts_session_free(ts_session *s) {
    if (!s) return;
    for (int i = 0; s->slots && i < s->n_slots; i++) {
        slot_abandon(&s->slots[i]);
        free(s->slots[i].cached);
    }
    free(s->slots);
    free(s->items);
    free(s->item_slot);
    free(s->wants);
    constrain_texts_free(s->texts);
    if (s->draft.ctx) speculate_draft_free(&s->draft);
    ts_context_free(s->ctx);
    free(s);
}

int ts_session_n_ctx(const ts_session *s) { return ts_context_n_ctx(s->ctx); }
int ts_session_n_slots(const ts_session *s) { return s->n_slots; }

int ts_session_n_free(const ts_session *s) {
    int n = 0;
    for (int i = 0; i < s->n_slots; i++) n += s->slots[i].phase == SLOT_FREE;
    return n;
}

void ts_session_reset(ts_session *s) {
    for (int i = 0; i < s->n_slots; i++) {
        if (s->slots[i].phase != SLOT_FREE) continue;
        s->slots[i].n_cached = ts_seq_truncate(s->ctx, i, 0);
        if (s->draft.ctx) speculate_draft_forget(&s->draft, i);
    }
}

size_t ts_session_text_limit(const ts_session *s) {
    /* each token covers at most longest_token bytes of text; twice that, for normalizers that drop
     * or fold characters, plus room for a template's own text */
    return (size_t)ts_context_n_ctx(s->ctx) * s->longest_token * 2 + 4096;
}

/* How much of the prompt (its first n_eval tokens) a slot's cache shares, leaving at least the last
 * token to evaluate (its logits are needed). */
static int common_prefix(const int32_t *a, int n_a, const int32_t *prompt, int n_eval) {
    int common = 0;
    while (common < n_a && common < n_eval - 1 && a[common] == prompt[common]) common++;
    return common;
}

static int shared_prefix(const slot *sl, const int32_t *prompt, int n_eval) {
    return common_prefix(sl->cached, sl->n_cached, prompt, n_eval);
}

/* The slot's cache made to start from the longest prefix of its prompt any slot holds: its own,
 * cut back, or another's, copied. Sets sl->kept. */
static void take_prefix(ts_session *s, int dst, bool use_cache) {
    slot *d = &s->slots[dst];
    const int32_t *prompt = d->rq->prompt;
    const int n_eval = d->a.n_eval;
    int own = use_cache ? shared_prefix(d, prompt, n_eval) : 0, src = -1, src_common = own;
    for (int i = 0; i < s->n_slots && use_cache; i++) {
        int common = i == dst ? 0 : shared_prefix(&s->slots[i], prompt, n_eval);
        if (common > src_common) { src = i; src_common = common; }
    }
    if (src >= 0) {
        int k = ts_seq_copy(s->ctx, dst, src, src_common);
        if (k < 0) k = ts_seq_truncate(s->ctx, dst, 0);
        else memcpy(d->cached, s->slots[src].cached, (size_t)k * sizeof *d->cached);
        d->n_cached = k;
    } else {
        d->n_cached = ts_seq_truncate(s->ctx, dst, own);
    }
    d->kept = d->n_cached;
    d->done = 0;
    d->todo = n_eval - d->kept;
}

/* The free slot for a prompt: the one whose cache shares the most of it, the least recently used
 * among equals. *wait_for: a slot evaluating a prompt that shares more with this one than any
 * cache holds (the new request waits for it and copies), or -1. */
static int place(const ts_session *s, const int32_t *prompt, int n_eval, bool use_cache, int *wait_for) {
    int dst = -1, dst_common = -1, best = 0, pending = 0;
    *wait_for = -1;
    for (int i = 0; i < s->n_slots; i++) {
        const slot *sl = &s->slots[i];
        int common = use_cache ? shared_prefix(sl, prompt, n_eval) : 0;
        if (sl->phase == SLOT_FREE &&
            (common > dst_common || (common == dst_common && sl->last_used < s->slots[dst].last_used))) {
            dst = i;
            dst_common = common;
        }
        if (common > best) best = common;
        if (use_cache && sl->phase == SLOT_PREFILL) {
            int will = common_prefix(sl->rq->prompt, sl->a.n_eval, prompt, n_eval);
            if (will > pending) { pending = will; *wait_for = i; }
        }
    }
    if (!s->copies_anywhere || pending <= best) *wait_for = -1;
    return dst;
}

int ts_session_submit(ts_session *s, const ts_gen_request *rq, ts_gen_result *res, ts_error *rq_err, ts_error *err) {
    if (ts_session_n_free(s) == 0) return ts_fail(err, "every slot of the session is busy");
    answer a;
    if (answer_begin(&a, s->m, rq, res, ts_context_n_ctx(s->ctx), err) != 0) return -1;
    int wait_for;
    int i = place(s, rq->prompt, a.n_eval, !rq->on_logits, &wait_for);
    slot *sl = &s->slots[i];
    const size_t nv = (size_t)ts_model_n_vocab(s->m);
    /* on_logits: a row per prompt position (no cache is used then, nor speculation) */
    size_t rows = rq->on_logits ? (size_t)a.n_eval : 1;
    if (s->spec != TS_SPEC_OFF && !rq->on_logits && rows < (size_t)s->spec_k + 1) rows = (size_t)s->spec_k + 1;
    if (!(sl->logits = malloc(rows * nv * sizeof(float)))) {
        answer_end(&a, false, NULL);
        return ts_fail(err, "out of memory for the logits of a request");
    }
    sl->a = a;
    sl->a.res = res;
    sl->a.texts = &s->texts;
    sl->rq = rq;
    sl->rq_err = rq_err;
    sl->spec = s->spec != TS_SPEC_OFF && !rq->on_logits;
    sl->n_prop = sl->redo = 0;
    sl->k_cur = s->spec_k;
    sl->taken = sl->missed = 0;
    sl->idle = 0;
    sl->explore_after = SPEC_EXPLORE_STEPS;
    sl->last_used = ++s->clock;
    sl->wait_for = wait_for;
    if (wait_for >= 0) {
        sl->phase = SLOT_WAIT;
    } else {
        sl->phase = SLOT_PREFILL;
        take_prefix(s, i, !rq->on_logits);
    }
    return i;
}

/* Ends slot i's request: 0 complete, or failed with msg. */
static void finish(ts_session *s, int i, const char *msg, ts_gen_done *done, int *n_done) {
    slot *sl = &s->slots[i];
    int rc = 0;
    ts_error e = {{0}};
    if (msg) snprintf(e.msg, sizeof e.msg, "%s", msg);
    if (sl->decode_steps > 0)
        sl->a.res->decode_weight_bytes = (double)(ts_context_weight_bytes(s->ctx) - sl->decode_bytes0) / sl->decode_steps;
    if (answer_end(&sl->a, msg == NULL, &e) != 0) rc = -1;
    if (rc != 0 && sl->rq_err) *sl->rq_err = e;
    free(sl->logits);
    sl->logits = NULL;
    sl->phase = SLOT_FREE;
    done[(*n_done)++] = (ts_gen_done){ i, rc };
}

/* After slot i's latest evaluation: the prompt's bookkeeping, the logits handed on, the next token
 * sampled. */
static void advance(ts_session *s, int i, int n_evaluated, ts_gen_done *done, int *n_done) {
    slot *sl = &s->slots[i];
    const ts_gen_request *rq = sl->rq;
    const int nv = ts_model_n_vocab(s->m);
    float *last = sl->logits;
    ts_error e = {{0}};
    if (sl->phase == SLOT_PREFILL) {
        memcpy(sl->cached + sl->kept + sl->done, rq->prompt + sl->kept + sl->done, (size_t)n_evaluated * sizeof *sl->cached);
        sl->done += n_evaluated;
        sl->n_cached = sl->kept + sl->done;
        if (rq->on_prefill) rq->on_prefill(rq->user, sl->done, sl->todo);
        if (sl->done < sl->todo) return;
        answer_prompt_done(&sl->a, sl->kept);
        if (rq->on_logits && rq->on_logits(rq->user, sl->logits, sl->todo, nv) != 0) {
            finish(s, i, "writing the logits failed", done, n_done);
            return;
        }
        if (rq->on_logits) last = sl->logits + (size_t)(sl->todo - 1) * nv;
        sl->phase = SLOT_DECODE;
        sl->decode_bytes0 = ts_context_weight_bytes(s->ctx);
        sl->decode_steps = 0;
    } else {
        sl->decode_steps++;
        sl->cached[sl->n_cached++] = sl->next;
        if (rq->on_logits && rq->on_logits(rq->user, sl->logits, 1, nv) != 0) {
            finish(s, i, "writing the logits failed", done, n_done);
            return;
        }
    }
    int r = answer_step(&sl->a, last, &sl->next, &e);
    if (r < 0) finish(s, i, e.msg, done, n_done);
    else if (r == 0) finish(s, i, NULL, done, n_done);
}

/* ---- speculative decoding ----
 * A generating slot's step evaluates [next, d1 .. dk] (the proposals) with a row of logits each.
 * Row r is what plain decoding would have had after next, d1 .. dr (ts_eval_batch gives every row
 * the bits of a one-token evaluation), so handing the rows in order to answer_step samples exactly
 * the tokens (and draws exactly the random numbers) plain decoding would: while its token is the
 * proposal the next row is valid too; the first other token is the next one and the positions
 * after it are cut back. A finished answer leaves every evaluated position in the cache (cached
 * names them all, the prefix cache sees them as they are). */

/* Proposals this step may have for slot i: the room in the context and in the answer (each row
 * gives a token, and the answer's last token is not evaluated), and a share of one forward batch
 * among the slots generating. */
static int proposal_room(const ts_session *s, const slot *sl, int n_decoding) {
    int k = s->spec_k;
    int share = FORWARD_MAX_BATCH / (n_decoding > 0 ? n_decoding : 1) - 1;
    if (k > share) k = share;
    int answer_left = sl->a.max_tokens - sl->a.res->n_generated - 1;
    if (k > answer_left) k = answer_left;
    int ctx_left = ts_context_n_ctx(s->ctx) - sl->n_cached - 1;
    if (k > ctx_left) k = ctx_left;
    return k > 0 ? k : 0;
}

/* Every generating slot's proposals for this step, written after its next token in cached: as many
 * as the room, the adaptive length (k_cur) and, for prompt lookup, the match allow, cut to the
 * count expected to pay (speculate_best_k, the slots taken in turn, each with the step's positions
 * and expected tokens so far); a slot for which none have paid for explore_after steps proposes
 * anyway, so that its odds and the step's costs are measured again. */
static void propose(ts_session *s) {
    int n_decoding = 0, n_want = 0;
    for (int i = 0; i < s->n_slots; i++) {
        s->slots[i].n_prop = 0;
        n_decoding += s->slots[i].phase == SLOT_DECODE;
    }
    int width = n_decoding;
    double tokens = n_decoding;
    for (int i = 0; i < s->n_slots; i++) {
        slot *sl = &s->slots[i];
        if (sl->phase != SLOT_DECODE || !sl->spec) continue;
        int k = proposal_room(s, sl, n_decoding);
        if (k > sl->k_cur) k = sl->k_cur;
        if (k == 0) continue;
        sl->cached[sl->n_cached] = sl->next;
        int32_t *out = sl->cached + sl->n_cached + 1;
        if (s->spec == TS_SPEC_NGRAM && (k = speculate_ngram(sl->cached, sl->n_cached + 1, s->spec_n, k, out)) == 0) continue;
        const double p = (sl->taken + 1) / (sl->taken + sl->missed + 2);
        int n = s->spec_always ? k : speculate_best_k(&s->costs, width, tokens, k, p);
        if (n == 0 && ++sl->idle < sl->explore_after) continue;
        if (n == 0) {
            n = k;
            if (sl->explore_after < SPEC_EXPLORE_MAX) sl->explore_after *= 2;
        } else {
            sl->explore_after = SPEC_EXPLORE_STEPS;
        }
        sl->idle = 0;
        width += n;
        double q = 1;
        for (int j = 0; j < n; j++) tokens += q *= p;
        if (s->spec == TS_SPEC_NGRAM) sl->n_prop = n;
        else s->wants[n_want++] = (speculate_want){ i, sl->cached, sl->n_cached + 1, n, out, 0 };
    }
    if (n_want == 0) return;
    ts_error e = {{0}};
    if (speculate_draft_propose(&s->draft, s->wants, n_want, &e) != 0) return;   /* plain steps then */
    for (int j = 0; j < n_want; j++) s->slots[s->wants[j].seq].n_prop = s->wants[j].n_out;
    speculate_costs_proposals(&s->costs, s->draft.step_proposals, s->draft.step_seconds);
}

/* Slot i's sequence cut back to its first n positions. A recurrent layer continues only from a
 * snapshot (taken at the end, and one before the end, of each evaluation of several tokens): the
 * positions from the one it lands on to n are evaluated again (redo), at least two of them so that
 * the evaluation leaves a snapshot at n for the next rejection to land on. */
static void cut_back(ts_session *s, int i, int n) {
    slot *sl = &s->slots[i];
    int got = ts_seq_truncate(s->ctx, i, n);
    if (got == n - 1 && n >= 2) got = ts_seq_truncate(s->ctx, i, n - 2);
    sl->n_cached = got;
    sl->redo = n - got;
}

/* After a speculative step of slot i (cached[n_cached] = next, then n_prop proposals evaluated):
 * the rows sampled in order while they agree with the proposals. */
static void verify(ts_session *s, int i, ts_gen_done *done, int *n_done) {
    slot *sl = &s->slots[i];
    const size_t nv = (size_t)ts_model_n_vocab(s->m);
    const int k = sl->n_prop, p = sl->n_cached;
    const int32_t *prop = sl->cached + p + 1;
    ts_gen_result *res = sl->a.res;
    sl->n_cached = p + 1 + k;   /* what the sequence holds now */
    sl->n_prop = 0;
    sl->decode_steps++;
    res->n_drafted += k;
    sl->taken *= 0.9;
    sl->missed *= 0.9;
    for (int r = 0; r <= k; r++) {
        ts_error e = {{0}};
        int32_t tok = -1;
        const int before = res->n_generated;
        int rc = answer_step(&sl->a, sl->logits + (size_t)r * nv, &tok, &e);
        if (rc < 0) { finish(s, i, e.msg, done, n_done); return; }
        if (rc == 0) {
            /* complete (the last token taken need not be evaluated, or an end was sampled) */
            if (r < k && res->n_generated > before && res->tokens[res->n_generated - 1] == prop[r]) res->n_accepted++;
            finish(s, i, NULL, done, n_done);
            return;
        }
        if (r < k && tok == prop[r]) { res->n_accepted++; sl->taken++; continue; }
        sl->k_cur = r == k ? (2 * k < s->spec_k ? 2 * k : s->spec_k) : r + 1;
        sl->next = tok;
        if (r < k) {
            sl->missed++;
            cut_back(s, i, p + 1 + r);
        }
        return;
    }
}

/* The positions cut_back could not keep, evaluated again for every slot that needs it (one batch). */
static void redo(ts_session *s, ts_gen_done *done, int *n_done) {
    int n = 0;
    for (int i = 0; i < s->n_slots; i++) {
        slot *sl = &s->slots[i];
        if (sl->phase != SLOT_DECODE || sl->redo == 0) continue;
        s->items[n] = (ts_batch_item){ i, sl->cached + sl->n_cached, sl->redo, NULL, false };
        s->item_slot[n++] = i;
    }
    if (n == 0) return;
    ts_error e = {{0}};
    int rc = ts_eval_batch(s->ctx, s->items, n, &e);
    for (int k = 0; k < n; k++) {
        slot *sl = &s->slots[s->item_slot[k]];
        if (rc == 0) sl->n_cached += sl->redo;
        sl->redo = 0;
        if (rc != 0) finish(s, s->item_slot[k], e.msg, done, n_done);
    }
}

int ts_session_step(ts_session *s, ts_gen_done *done) {
    const size_t nv = (size_t)ts_model_n_vocab(s->m);
    int n = 0, n_done = 0;
    for (int i = 0; i < s->n_slots; i++) {   /* waits that are over: the prefix is there to copy */
        slot *sl = &s->slots[i];
        if (sl->phase != SLOT_WAIT || s->slots[sl->wait_for].phase == SLOT_PREFILL) continue;
        sl->phase = SLOT_PREFILL;
        take_prefix(s, i, true);
    }
    if (s->spec != TS_SPEC_OFF) propose(s);
    int budget = s->step_prompt_tokens > 0 ? s->step_prompt_tokens : INT_MAX;
    bool prompt_step = false;   /* the step evaluates prompt positions too */
    for (int i = 0; i < s->n_slots; i++) {
        slot *sl = &s->slots[i];
        if (sl->phase == SLOT_PREFILL) {
            /* the whole prompt at once, or in slices when someone follows its progress or the
             * step's prompt budget runs out (the slots after it wait for the next step) */
            int left = sl->todo - sl->done;
            int take = sl->rq->on_prefill && !sl->rq->on_logits && left > PREFILL_SLICE ? PREFILL_SLICE : left;
            if (take > budget) take = budget;
            if (take == 0) continue;
            budget -= take;
            float *dst = sl->rq->on_logits ? sl->logits + (size_t)sl->done * nv : sl->logits;
            s->items[n] = (ts_batch_item){ i, sl->rq->prompt + sl->kept + sl->done, take, dst, sl->rq->on_logits != NULL };
            prompt_step = true;
        } else if (sl->phase == SLOT_DECODE && sl->n_prop > 0) {
            /* next and the proposals after it, a row of logits each */
            s->items[n] = (ts_batch_item){ i, sl->cached + sl->n_cached, 1 + sl->n_prop, sl->logits, true };
        } else if (sl->phase == SLOT_DECODE) {
            s->items[n] = (ts_batch_item){ i, &sl->next, 1, sl->logits, false };
        } else {
            continue;
        }
        s->item_slot[n++] = i;
    }
    if (n == 0) return 0;
    ts_error e = {{0}};
    const double t0 = clock_seconds();
    if (ts_eval_batch(s->ctx, s->items, n, &e) != 0) {
        /* one forward for all of them: each fails with its message (their caches are cut back
         * to what the slots record at the next request) */
        for (int k = 0; k < n; k++) finish(s, s->item_slot[k], e.msg, done, &n_done);
        return n_done;
    }
    int width = 0;
    for (int k = 0; k < n; k++) width += s->items[k].n;
    for (int k = 0; k < n; k++) {
        slot *sl = &s->slots[s->item_slot[k]];
        if (sl->phase == SLOT_DECODE && sl->n_prop > 0) verify(s, s->item_slot[k], done, &n_done);
        else advance(s, s->item_slot[k], s->items[k].n, done, &n_done);
    }
    redo(s, done, &n_done);
    /* what a decode step of this width costs: the forward, the rows sampled, a recurrent state's
     * positions evaluated again after a rejection */
    if (s->spec != TS_SPEC_OFF && !prompt_step) speculate_costs_step(&s->costs, width, clock_seconds() - t0);
    return n_done;
}

void ts_session_cancel(ts_session *s, int i) {
    if (i >= 0 && i < s->n_slots) slot_abandon(&s->slots[i]);
}

int ts_session_generate(ts_session *s, const ts_gen_request *rq, ts_gen_result *res, ts_error *err) {
    if (ts_session_n_free(s) != s->n_slots) return ts_fail(err, "the session has requests under way");
    ts_error rq_err = {{0}};
    int i = ts_session_submit(s, rq, res, &rq_err, err);
    if (i < 0) return -1;
    ts_gen_done *done = malloc((size_t)s->n_slots * sizeof *done);
    if (!done) { slot_abandon(&s->slots[i]); return ts_fail(err, "out of memory"); }
    for (;;) {
        int n = ts_session_step(s, done);
        for (int k = 0; k < n; k++) {
            if (done[k].slot != i) continue;
            int rc = done[k].rc;
            free(done);
            if (rc != 0) *err = rq_err;
            return rc;
        }
    }
}
