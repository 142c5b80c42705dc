/* One request's answer (see answer.h): sampling, stop conditions, streaming and token healing. */
#include "generate/answer.h"
#include "generate/sampler.h"
#include "load/model.h"
#include "core/clock.h"
#include "core/error.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define HEAL_MAX_TOKENS 8

void ts_gen_result_free(ts_gen_result *r) {
    free(r->text);
    free(r->tokens);
    free(r->logprobs);
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

/* The model's log-probability of token (log-softmax of the untouched logits) and the k most likely
 * tokens, most likely first (ties: the lower id). */
static void token_logprob(const float *logits, int nv, int32_t token, int k, ts_token_logprob *out) {
    float max = logits[0];
    for (int t = 1; t < nv; t++) if (logits[t] > max) max = logits[t];
    double sum = 0;
    for (int t = 0; t < nv; t++) sum += exp((double)logits[t] - max);
    const float lse = max + (float)log(sum);
    memset(out, 0, sizeof *out);
    out->token = token;
    out->logprob = logits[token] - lse;
    if (k > TS_MAX_TOP_LOGPROBS) k = TS_MAX_TOP_LOGPROBS;
    if (k > nv) k = nv;
    int n = 0;
    for (int t = 0; t < nv; t++) {   /* insertion into a sorted list of at most k */
        if (n == k && (k == 0 || !(logits[t] > logits[out->top_token[n - 1]]))) continue;
        int at = n < k ? n++ : n - 1;
        while (at > 0 && logits[t] > logits[out->top_token[at - 1]]) { out->top_token[at] = out->top_token[at - 1]; at--; }
        out->top_token[at] = t;
    }
    out->n_top = n;
    for (int i = 0; i < n; i++) out->top_logprob[i] = logits[out->top_token[i]] - lse;
}

/* A control token's text as the vocabulary spells it (rq->special_text), or 0. */
static int special_text(const ts_model *m, int32_t tok, char *buf, size_t cap) {
    const vocab *v = &m->voc;
    if (!m->has_vocab || tok < 0 || tok >= v->n || v->attr[tok] != TOKEN_CONTROL || v->len[tok] >= cap) return 0;
    memcpy(buf, v->text[tok], v->len[tok]);
    return (int)v->len[tok];
}

/* --ignore-eos: the end-of-generation tokens (EOS, end of turn and at most 15 more), found once per
 * request; their logits are put out of reach before each sample */
static int eog_tokens(const ts_model *m, int nv, int32_t out[ANSWER_MAX_EOG]) {
    int n = 0;
    for (int t = 0; t < nv && n < ANSWER_MAX_EOG; t++)
        if (ts_token_is_eog(m, t)) out[n++] = t;
    return n;
}

int answer_begin(answer *a, const ts_model *m, const ts_gen_request *rq, ts_gen_result *res, int n_ctx,
                 ts_error *err) {
    memset(a, 0, sizeof *a);
    memset(res, 0, sizeof *res);
    a->m = m;
    a->rq = rq;
    a->res = res;
    if (rq->n_prompt <= 0) return ts_fail(err, "empty prompt");
    if (rq->n_prompt > n_ctx)
        return ts_fail(err, "the prompt has %d tokens, longer than the context of %d", rq->n_prompt, n_ctx);
    a->t0 = clock_seconds();
    const int nv = ts_model_n_vocab(m);
    /* refused here, not by the forward: a request's bad id must not fail the others sharing its step */
    for (int i = 0; i < rq->n_prompt; i++)
        if (rq->prompt[i] < 0 || rq->prompt[i] >= nv)
            return ts_fail(err, "token id %d is out of range (vocabulary of %d)", rq->prompt[i], nv);
    /* a grammar constrains the answer's text; healing would make it spell the prompt's end first */
    int n_backed = rq->heal && !rq->grammar ? heal_prompt(m, rq->prompt, rq->n_prompt, a->healed, sizeof a->healed, &a->n_healed) : 0;
    a->n_eval = rq->n_prompt - n_backed;
    res->n_prompt = a->n_eval;
    res->n_healed = a->n_healed;
    /* the answer can hold at most what the context has room for, whatever max_tokens says */
    int room = n_ctx - a->n_eval + 1;
    a->max_tokens = rq->max_tokens < 0 || rq->max_tokens > room ? room : rq->max_tokens;
    res->finish_reason = rq->max_tokens < 0 || rq->max_tokens > room ? "context" : "length";
    a->n_eog = rq->ignore_eos ? eog_tokens(m, nv, a->eog) : 0;
    a->history = malloc(((size_t)a->n_eval + (size_t)a->max_tokens + 1) * sizeof *a->history);
    res->tokens = malloc(((size_t)a->max_tokens + 1) * sizeof *res->tokens);
    if (rq->logprobs > 0) {
        a->top_logprobs = rq->logprobs - 1;
        a->logits_copy = malloc((size_t)nv * sizeof *a->logits_copy);
        if (!a->logits_copy) { answer_end(a, false, NULL); return ts_fail(err, "out of memory"); }
    }
    if (ts_sampler_new(&rq->sampling, nv, &a->smp, err) != 0) { answer_end(a, false, NULL); return -1; }
    if (rq->grammar && grammar_matcher_new(rq->grammar, &a->gm, err) != 0) { answer_end(a, false, NULL); return -1; }
    if (!a->history || !res->tokens || append(res, &a->cap, "", 0) != 0) {
        answer_end(a, false, NULL);
        return ts_fail(err, "out of memory");
    }
    memcpy(a->history, rq->prompt, (size_t)a->n_eval * sizeof *a->history);
    a->n_hist = a->n_eval;
    return 0;
}

void answer_prompt_done(answer *a, int kept) {
    a->res->n_reused = kept;
    a->t1 = clock_seconds();
    a->res->prompt_seconds = a->t1 - a->t0;
}

int answer_step(answer *a, float *logits, int32_t *next_out, ts_error *err) {
    const ts_gen_request *rq = a->rq;
    ts_gen_result *res = a->res;
    const int nv = ts_model_n_vocab(a->m);
    if (res->n_generated >= a->max_tokens) return 0;
    if (rq->cancel && *rq->cancel) { res->finish_reason = "cancelled"; return 0; }
    bool first = res->n_generated == 0;
    /* the model's own probabilities: kept before healing, --ignore-eos and the sampler change them */
    if (a->logits_copy) memcpy(a->logits_copy, logits, (size_t)nv * sizeof *logits);
    if (a->n_covered < a->n_healed) mask_healed(a->m, logits, nv, a->healed + a->n_covered, a->n_healed - a->n_covered);
    for (int i = 0; i < a->n_eog; i++) logits[a->eog[i]] = -INFINITY;
    int32_t next;
    if (a->gm) {
        /* complete, and nothing can follow: the answer is whole */
        if (grammar_matcher_complete(a->gm) && !grammar_matcher_can_continue(a->gm)) { res->finish_reason = "stop"; return 0; }
        token_texts **tt = a->texts ? a->texts : &a->own_texts;
        if (!*tt && constrain_texts_build(a->m, tt, err) != 0) return -1;
        /* the mask comes after the penalty, as the sampler ranks the tokens */
        sampler_penalize(a->smp, logits, a->history, a->n_hist);
        if (constrain_logits(a->gm, *tt, a->m, logits, sampler_candidates_needed(a->smp), err) != 0) return -1;
        next = ts_sample(a->smp, logits, NULL, 0);
    } else {
        next = ts_sample(a->smp, logits, a->history, a->n_hist);
    }
    if (first) res->first_token_seconds = clock_seconds() - a->t0;
    if (ts_token_is_eog(a->m, next)) { res->finish_reason = "stop"; return 0; }
    if (a->logits_copy) {
        if (res->n_generated == a->n_logprobs_cap) {
            int nc = a->n_logprobs_cap ? a->n_logprobs_cap * 2 : 16;
            ts_token_logprob *t = realloc(res->logprobs, (size_t)nc * sizeof *t);
            if (!t) return ts_fail(err, "out of memory");
            res->logprobs = t;
            a->n_logprobs_cap = nc;
        }
        token_logprob(a->logits_copy, nv, next, a->top_logprobs, &res->logprobs[res->n_generated]);
    }
    res->tokens[res->n_generated++] = next;
    a->history[a->n_hist++] = next;
    char piece[256], text[256 + 16];
    int pl = ts_token_text(a->m, next, piece, sizeof piece);
    if (a->gm && (pl <= 0 || grammar_matcher_feed(a->gm, piece, (size_t)pl, err) != 1))
        return ts_fail(err, "grammar: the sampled token %d does not continue the grammar", next);
    if (pl == 0 && rq->special_text) pl = special_text(a->m, next, piece, sizeof piece);
    /* the healed part is already in the prompt text */
    int skip = pl > 0 && a->n_covered < a->n_healed ? (pl < a->n_healed - a->n_covered ? pl : a->n_healed - a->n_covered) : 0;
    a->n_covered += skip;
    size_t tl = pl > skip ? utf8_stream_push(&a->st, piece + skip, (size_t)(pl - skip), text) : 0;
    if (tl && append(res, &a->cap, text, tl) != 0) return ts_fail(err, "out of memory");
    long at = find_stop(rq, res->text, res->len);
    if (at >= 0) {
        res->len = (size_t)at;
        res->text[at] = 0;
        res->finish_reason = "stop";
        return 0;
    }
    size_t safe = res->len - stop_holdback(rq, res->text, res->len);
    if (rq->on_text && safe > a->streamed) {
        int stop = rq->on_text(rq->user, res->text + a->streamed, safe - a->streamed);
        a->streamed = safe;
        if (stop) { res->finish_reason = "cancelled"; a->text_refused = true; return 0; }
    }
    if (a->gm && grammar_matcher_complete(a->gm) && !grammar_matcher_can_continue(a->gm)) {
        res->finish_reason = "stop";   /* the grammar is complete: nothing may follow */
        return 0;
    }
    if (res->n_generated == a->max_tokens) return 0;   /* the last token need not be evaluated */
    *next_out = next;
    return 1;
}

int answer_end(answer *a, bool ok, ts_error *err) {
    ts_gen_result *res = a->res;
    if (ok) {
        char tail[8];
        size_t w = utf8_stream_flush(&a->st, tail);
        if (w && append(res, &a->cap, tail, w) != 0) { ok = false; ts_fail(err, "out of memory"); }
    }
    if (ok && a->rq->on_text && res->len > a->streamed && !a->text_refused)
        a->rq->on_text(a->rq->user, res->text + a->streamed, res->len - a->streamed);
    if (ok) res->gen_seconds = clock_seconds() - a->t1;
    free(a->history);
    a->history = NULL;
    ts_sampler_free(a->smp);
    a->smp = NULL;
    free(a->logits_copy);
    a->logits_copy = NULL;
    grammar_matcher_free(a->gm);
    a->gm = NULL;
    constrain_texts_free(a->own_texts);
    a->own_texts = NULL;
    if (!ok) ts_gen_result_free(res);
    return ok ? 0 : -1;
}
