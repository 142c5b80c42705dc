/* Generation sessions: a context whose KV cache is kept between requests (prefix cache), and the
 * generation loop every CLI mode shares: sampling, stop conditions, streaming, token healing and
 * a stop flag a signal handler can set. */
#include "tessera.h"
#include "core/error.h"
#include "core/utf8.h"
#include "load/model.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define HEAL_MAX_TOKENS 8

struct ts_session {
    ts_model *m;
    ts_context *ctx;
    int32_t *cached;          /* the ids in ctx's cache, in order */
    int n_cached;
    size_t longest_token;     /* bytes of the longest token string the vocabulary holds */
};

static double seconds_now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

int ts_session_new(ts_model *m, int n_ctx, int n_threads, ts_session **out, ts_error *err) {
    *out = NULL;
    ts_session *s = calloc(1, sizeof *s);
    if (!s) return ts_fail(err, "out of memory for a session");
    s->m = m;
    if (ts_context_new(m, n_ctx, n_threads, &s->ctx, err) != 0) { free(s); return -1; }
    /* Warm up: one evaluation reads every weight once, so the first pass over the mapped file is
     * paid here rather than by the first prompt; then the context starts over. On the machine
     * this was measured on, the first pass over a 400 MB mapping took 0.25-0.3 s against 0.02 s
     * for every later one, even with the pages mapped in advance (MAP_POPULATE). */
    int32_t tok = 0;
    if (ts_eval(s->ctx, &tok, 1, NULL, false, err) != 0 || ts_context_truncate(s->ctx, 0) != 0) {
        ts_session_free(s);
        return -1;
    }
    s->cached = malloc(((size_t)ts_context_n_ctx(s->ctx) + 1) * sizeof *s->cached);
    if (!s->cached) { ts_session_free(s); return ts_fail(err, "out of memory for a session"); }
    /* token strings as stored are at least as long as the text they stand for (SentencePiece's
     * space mark, byte-level BPE's byte characters and "<0x0A>" pieces are longer) */
    s->longest_token = 1;
    if (m->has_vocab)
        for (int i = 0; i < m->voc.n; i++) if (m->voc.len[i] > s->longest_token) s->longest_token = m->voc.len[i];
    *out = s;
    return 0;
}

void ts_session_free(ts_session *s) {
    if (!s) return;
    ts_context_free(s->ctx);
    free(s->cached);
    free(s);
}

int ts_session_n_ctx(const ts_session *s) { return ts_context_n_ctx(s->ctx); }

void ts_session_reset(ts_session *s) {
    s->n_cached = ts_context_truncate(s->ctx, 0);
}

size_t ts_session_text_limit(const ts_session *s) {
    /* each token covers at most longest_token bytes of text; twice that, for normalizers that drop
     * or fold characters, plus room for a template's own text */
    return (size_t)ts_context_n_ctx(s->ctx) * s->longest_token * 2 + 4096;
}

void ts_gen_result_free(ts_gen_result *r) {
    free(r->text);
    free(r->tokens);
    memset(r, 0, sizeof *r);
}

/* Appends to the answer buffer. */
static int append(ts_gen_result *r, size_t *cap, const char *p, size_t n) {
    if (r->len + n + 1 > *cap) {
        size_t nc = (*cap ? *cap * 2 : 256) + n;
        char *t = realloc(r->text, nc);
        if (!t) return -1;
        r->text = t;
        *cap = nc;
    }
    memcpy(r->text + r->len, p, n);
    r->len += n;
    r->text[r->len] = 0;
    return 0;
}

/* The earliest position in text where a stop string starts, or -1. */
static long find_stop(const ts_gen_request *rq, const char *text, size_t len) {
    long best = -1;
    for (int i = 0; i < rq->n_stop; i++) {
        size_t sl = strlen(rq->stop[i]);
        if (sl == 0 || sl > len) continue;
        for (size_t p = 0; p + sl <= len; p++)
            if (memcmp(text + p, rq->stop[i], sl) == 0) { if (best < 0 || (long)p < best) best = (long)p; break; }
    }
    return best;
}

/* How many trailing bytes of text could still grow into a stop string (held back from streaming). */
static size_t stop_holdback(const ts_gen_request *rq, const char *text, size_t len) {
    size_t hold = 0;
    for (int i = 0; i < rq->n_stop; i++) {
        size_t sl = strlen(rq->stop[i]);
        for (size_t k = sl > 1 ? sl - 1 : 0; k > hold; k--)
            if (k <= len && memcmp(text + len - k, rq->stop[i], k) == 0) { hold = k; break; }
    }
    return hold;
}

/* Letters, digits and anything non-ASCII continue a word. */
static bool word_byte(unsigned char c) {
    return c >= 0x80 || (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

/* Token healing: backs up the tokens of the prompt's last word (word characters; the first may
 * carry the space before the word; at least one token is kept to evaluate). Returns how many, and
 * their text in removed (*n_removed bytes, at most cap). */
static int heal_prompt(const ts_model *m, const int32_t *prompt, int n_prompt, char *removed, size_t cap,
                       int *n_removed) {
    *n_removed = 0;
    int n_back = 0;
    size_t len = 0;
    while (n_back < HEAL_MAX_TOKENS && n_back < n_prompt - 1) {
        int32_t t = prompt[n_prompt - 1 - n_back];
        char piece[256];
        if (t == ts_token_bos(m) || ts_token_is_eog(m, t)) break;
        int pl = ts_token_text(m, t, piece, sizeof piece);
        /* control tokens print nothing; a lone byte-fallback token is not a whole character */
        if (pl <= 0 || !utf8_valid(piece, (size_t)pl, NULL) || len + (size_t)pl > cap) break;
        bool leading_space = piece[0] == ' ';
        bool word = pl > leading_space;
        for (int i = leading_space; i < pl && word; i++) word = word_byte((unsigned char)piece[i]);
        if (!word) break;
        memmove(removed + pl, removed, len);
        memcpy(removed, piece, (size_t)pl);
        len += (size_t)pl;
        n_back++;
        if (leading_space) break;   /* the start of the word */
    }
    *n_removed = (int)len;
    return n_back;
}

/* While healing, a token may only spell the next part of the removed text: its text starts with
 * what is left of it, or is a (non-empty) beginning of it. */
static void mask_healed(const ts_model *m, float *logits, int nv, const char *rest, int n_rest) {
    char piece[256];
    for (int t = 0; t < nv; t++) {
        int pl = ts_token_text(m, t, piece, sizeof piece);
        int n = pl < n_rest ? pl : n_rest;
        if (pl <= 0 || memcmp(piece, rest, (size_t)n) != 0) logits[t] = -INFINITY;
    }
}

/* Prompt tokens per evaluation when the prefill's progress is followed: big enough that the matrix
 * tiles stay full, small enough for a line a second on a slow machine. */
#define PREFILL_SLICE 512

/* --ignore-eos: the end-of-generation tokens (EOS, end of turn and at most 8 more), found once per
 * request; their logits are put out of reach before each sample */
#define MAX_EOG 16
static int eog_tokens(const ts_model *m, int nv, int32_t out[MAX_EOG]) {
    int n = 0;
    for (int t = 0; t < nv && n < MAX_EOG; t++)
        if (ts_token_is_eog(m, t)) out[n++] = t;
    return n;
}

int ts_session_generate(ts_session *s, const ts_gen_request *rq, ts_gen_result *res, ts_error *err) {
    memset(res, 0, sizeof *res);
    const int nv = ts_model_n_vocab(s->m);
    const int n_ctx = ts_context_n_ctx(s->ctx);
    if (rq->n_prompt <= 0) return ts_fail(err, "empty prompt");
    if (rq->n_prompt > n_ctx)
        return ts_fail(err, "the prompt has %d tokens, longer than the context of %d", rq->n_prompt, n_ctx);
    double t0 = seconds_now();
    char healed[256];
    int n_healed = 0, n_covered = 0;   /* healed bytes, and how many of them are generated again */
    int n_backed = rq->heal ? heal_prompt(s->m, rq->prompt, rq->n_prompt, healed, sizeof healed, &n_healed) : 0;
    const int n_eval = rq->n_prompt - n_backed;
    /* prefix cache: keep what the cache shares with this prompt, minus at least the last token
     * (its logits are needed) */
    int common = 0;
    if (!rq->on_logits)
        while (common < s->n_cached && common < n_eval - 1 && s->cached[common] == rq->prompt[common]) common++;
    int kept = ts_context_truncate(s->ctx, common);
    s->n_cached = kept;
    res->n_reused = kept;
    res->n_prompt = n_eval;
    res->n_healed = n_healed;

    /* the answer can hold at most what the context has room for, whatever max_tokens says */
    int room = n_ctx - n_eval + 1;
    int max_tokens = rq->max_tokens < 0 || rq->max_tokens > room ? room : rq->max_tokens;
    size_t rows = rq->on_logits ? (size_t)(n_eval - kept) : 1;
    float *logits = malloc(rows * (size_t)nv * sizeof(float));
    ts_sampler *smp = NULL;
    int32_t *history = malloc(((size_t)n_eval + (size_t)max_tokens + 1) * sizeof *history);
    int32_t eog[MAX_EOG];
    const int n_eog = rq->ignore_eos ? eog_tokens(s->m, nv, eog) : 0;
    res->tokens = malloc(((size_t)max_tokens + 1) * sizeof *res->tokens);
    size_t cap = 0;
    int rc = -1;
    if (ts_sampler_new(&rq->sampling, nv, &smp, err) != 0) goto out;
    if (!logits || !history || !res->tokens || append(res, &cap, "", 0) != 0) { ts_fail(err, "out of memory"); goto out; }
    memcpy(history, rq->prompt, (size_t)n_eval * sizeof *history);

    /* the prompt, in slices when someone follows its progress (batched prefill equals one pass) */
    const int todo = n_eval - kept, slice = rq->on_prefill && !rq->on_logits ? PREFILL_SLICE : todo;
    for (int done = 0; done < todo; done += slice) {
        const int n = todo - done < slice ? todo - done : slice;
        if (ts_eval(s->ctx, rq->prompt + kept + done, n, logits, rq->on_logits != NULL, err) != 0) goto out;
        if (rq->on_prefill) rq->on_prefill(rq->user, done + n, todo);
    }
    memcpy(s->cached + kept, rq->prompt + kept, (size_t)(n_eval - kept) * sizeof *s->cached);
    s->n_cached = n_eval;
    if (rq->on_logits && rq->on_logits(rq->user, logits, (int)rows, nv) != 0) {
        ts_fail(err, "writing the logits failed");
        goto out;
    }
    float *last = logits + (rows - 1) * (size_t)nv;
    double t1 = seconds_now();
    res->prompt_seconds = t1 - t0;

    utf8_stream st = {{0}, 0};
    size_t streamed = 0;   /* bytes of res->text already handed to on_text */
    bool text_refused = false;   /* on_text asked to stop */
    int n_hist = n_eval;
    res->finish_reason = rq->max_tokens < 0 || rq->max_tokens > room ? "context" : "length";
    while (res->n_generated < max_tokens) {
        if (rq->cancel && *rq->cancel) { res->finish_reason = "cancelled"; break; }
        bool first = res->n_generated == 0;
        if (n_covered < n_healed) mask_healed(s->m, last, nv, healed + n_covered, n_healed - n_covered);
        for (int i = 0; i < n_eog; i++) last[eog[i]] = -INFINITY;
        int32_t next = ts_sample(smp, last, history, n_hist);
        if (first) res->first_token_seconds = seconds_now() - t0;
        if (ts_token_is_eog(s->m, next)) { res->finish_reason = "stop"; break; }
        res->tokens[res->n_generated++] = next;
        history[n_hist++] = next;
        char piece[256], text[256 + 16];
        int pl = ts_token_text(s->m, next, piece, sizeof piece);
        /* the healed part is already in the prompt text */
        int skip = pl > 0 && n_covered < n_healed ? (pl < n_healed - n_covered ? pl : n_healed - n_covered) : 0;
        n_covered += skip;
        size_t tl = pl > skip ? utf8_stream_push(&st, piece + skip, (size_t)(pl - skip), text) : 0;
        if (tl && append(res, &cap, text, tl) != 0) { ts_fail(err, "out of memory"); goto out; }
        long at = find_stop(rq, res->text, res->len);
        if (at >= 0) {
            res->len = (size_t)at;
            res->text[at] = 0;
            res->finish_reason = "stop";
            break;
        }
        size_t safe = res->len - stop_holdback(rq, res->text, res->len);
        if (rq->on_text && safe > streamed) {
            int stop = rq->on_text(rq->user, res->text + streamed, safe - streamed);
            streamed = safe;
            if (stop) { res->finish_reason = "cancelled"; text_refused = true; break; }
        }
        if (res->n_generated == max_tokens) break;              /* the last token need not be evaluated */
        if (ts_eval(s->ctx, &next, 1, logits, false, err) != 0) goto out;
        s->cached[s->n_cached++] = next;
        last = logits;
        if (rq->on_logits && rq->on_logits(rq->user, logits, 1, nv) != 0) {
            ts_fail(err, "writing the logits failed");
            goto out;
        }
    }
    char tail[8];
    size_t w = utf8_stream_flush(&st, tail);
    if (w && append(res, &cap, tail, w) != 0) { ts_fail(err, "out of memory"); goto out; }
    if (rq->on_text && res->len > streamed && !text_refused)
        rq->on_text(rq->user, res->text + streamed, res->len - streamed);
    res->gen_seconds = seconds_now() - t1;
    rc = 0;
out:
    free(logits);
    free(history);
    ts_sampler_free(smp);
    if (rc != 0) ts_gen_result_free(res);
    return rc;
}
