/* Speculative decoding's proposals (speculate.c): prompt lookup (the tokens that followed the
 * latest earlier occurrence of the sequence's last n-gram) and a draft model (a smaller model with
 * the same vocabulary, greedy in its own context of one sequence per slot). The session
 * (session.c) verifies them: see ts_session_options.spec. */
#ifndef TS_GENERATE_SPECULATE_H
#define TS_GENERATE_SPECULATE_H
#include "tessera.h"

/* The shortest n-gram prompt lookup falls back to. Measured with the session's adaptive proposal
 * length (tools/bench_spec gen): down to 1, qa-llama's answers (names copied from the question)
 * took 135 of 270 proposals against 117 of 241 stopping at 2; stories260K continuing its own
 * stories 166 of 521 against 143 of 317. */
#define SPECULATE_NGRAM_MIN 1

/* Prompt lookup: seq[0..len) is the prompt and the answer so far (its last token not evaluated
 * yet). Finds the latest j < len - L with seq[j..j+L) == seq[len-L..len), for L = n, then shorter
 * down to SPECULATE_NGRAM_MIN, and writes the tokens that followed it (at most k; where they run past len they go on
 * the way they started, the match's period repeated) to out. Returns how many (0: no match). */
int  speculate_ngram(const int32_t *seq, int len, int n, int k, int32_t *out);

/* The draft model's context: one sequence per slot, each holding a prefix of that slot's tokens
 * (ids[s][0..n[s]) as evaluated). */
typedef struct speculate_draft {
    ts_model *m;
    ts_context *ctx;
    int n_seq, n_vocab;
    int32_t **ids;
    int *n;
    float *rows;              /* a row of logits per sequence */
    ts_batch_item *items;
    int *item_seq;
    double step_seconds;      /* the last speculate_draft_propose's steps, but a catch-up on more
                                 tokens than a step proposes */
    int step_proposals;       /* and the proposals they gave */
} speculate_draft;

/* One sequence's proposal: the slot's tokens so far (tokens[0..n_tokens), the last not yet
 * evaluated by the target either), up to k tokens written to out; n_out set. */
typedef struct speculate_want {
    int seq;
    const int32_t *tokens;
    int n_tokens;
    int k;
    int32_t *out;
    int n_out;
} speculate_want;

/* A context for the draft of n_seq sequences of n_ctx positions; -1 (err) when it cannot be made. */
int  speculate_draft_new(speculate_draft *d, ts_model *draft, int n_ctx, int n_threads, int n_seq, ts_error *err);
void speculate_draft_free(speculate_draft *d);
/* Greedy proposals for every want, the sequences evaluated together: each catches up with its
 * tokens (from the longest prefix its cache shares with them), then k - 1 more single steps. -1
 * (err) when an evaluation fails (then nothing is proposed). */
int  speculate_draft_propose(speculate_draft *d, speculate_want *w, int n_want, ts_error *err);
/* Forgets what sequence seq holds. */
void speculate_draft_forget(speculate_draft *d, int seq);

/* ---- How many proposals pay ----
 * Each step the session proposes only as many tokens as are expected to give the most tokens per
 * second, by what the steps have cost so far on this machine: a proposal costs a position of
 * compute whether it is taken or not, so where a forward's time grows with its positions (a small
 * model whose weights stay in cache) proposals rarely pay, and where it hardly grows (a large
 * model, decoding bound by reading its weights) they pay at lower odds. */
#define SPECULATE_WIDTHS 65        /* step widths 1 .. 64 (FORWARD_MAX_BATCH) */
typedef struct speculate_costs {
    double step[SPECULATE_WIDTHS]; /* a decode step's seconds by the positions it evaluates (a
                                      running mean; 0: no step of that width yet) */
    double proposal;               /* a draft's seconds per proposal (0: prompt lookup, or none yet),
                                      not counting a catch-up on more tokens than a step proposes (a
                                      whole prompt, the first time): it says nothing of a step's cost */
} speculate_costs;

void speculate_costs_step(speculate_costs *c, int width, double seconds);
void speculate_costs_proposals(speculate_costs *c, int n, double seconds);
/* The proposal count (0..k_max) with the most expected tokens per second for a step of base_width
 * positions without them that expects base_tokens: k proposals add k positions (and k draft
 * proposals' time) and p + p^2 .. + p^k tokens, a proposal being taken with probability p once the
 * one before it was. A width not measured yet costs what the measured widths around it give
 * (interpolated; above the widest, the widest's): the step then measures it. 0 while base_width
 * itself is not measured (a step without proposals measures it). */
int  speculate_best_k(const speculate_costs *c, int base_width, double base_tokens, int k_max, double p);

#endif
