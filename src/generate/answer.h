/* One request's answer as it is generated (answer.c): token healing, sampling, end-of-generation
 * and stop strings, the streamed text, the result. The session (session.c) feeds it the logits of
 * each evaluated position, whichever other answers share the forward. */
#ifndef TS_GENERATE_ANSWER_H
#define TS_GENERATE_ANSWER_H
#include "tessera.h"
#include "core/utf8.h"
#include "generate/constrain.h"

#define ANSWER_MAX_EOG 16

typedef struct answer {
    const ts_model *m;
    const ts_gen_request *rq;
    ts_gen_result *res;
    int n_eval;                  /* the prompt tokens to evaluate (healing backs up the last few) */
    int max_tokens;              /* what the context has room for, at most what was asked */
    ts_sampler *smp;
    int32_t *history;            /* the prompt, then the answer: what the repeat penalty sees */
    int n_hist;
    char healed[256];            /* the prompt text healing removed, to be generated again */
    int n_healed, n_covered;
    int32_t eog[ANSWER_MAX_EOG]; /* --ignore-eos: the end-of-generation tokens put out of reach */
    int n_eog;
    utf8_stream st;
    size_t cap, streamed;        /* the text buffer's size; bytes of it handed to on_text */
    bool text_refused;           /* on_text asked to stop */
    float *logits_copy;          /* rq->logprobs: the logits as the model gave them */
    int top_logprobs, n_logprobs_cap;
    double t0, t1;               /* the request's start, and when its prompt was evaluated */
    grammar_matcher *gm;         /* rq->grammar: where the answer stands in it */
    token_texts **texts;         /* the vocabulary sorted for grammar masks: the session's (built on
                                    first use; NULL: the answer's own) */
    token_texts *own_texts;
} answer;

/* Starts an answer to rq into res for a context of n_ctx positions: heals the prompt, allocates
 * the sampler and buffers. -1 (err) on a prompt that is empty or too long, or out of memory. */
int  answer_begin(answer *a, const ts_model *m, const ts_gen_request *rq, ts_gen_result *res, int n_ctx,
                  ts_error *err);
/* The prompt is evaluated (kept of its positions came from the cache). */
void answer_prompt_done(answer *a, int kept);
/* Given the logits of the latest position (modified), samples the next token: 1 with *next set
 * when the answer goes on (next must be evaluated), 0 when it is complete, -1 (err) on failure. */
int  answer_step(answer *a, float *logits, int32_t *next, ts_error *err);
/* Finishes a complete answer (the text's tail, the last streamed piece, the timings): 0, or -1
 * (err). Frees what answer_begin allocated but the result; on failure (or when the answer is
 * abandoned, ok false) the result is freed too. */
int  answer_end(answer *a, bool ok, ts_error *err);

#endif
