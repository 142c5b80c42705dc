/* --verify: the engine checks itself on a loaded model. The same token sequence is evaluated three
 * ways that must agree (up to float summation order):
 *   1. prefill + cached decode (the way text is generated) vs one batched forward of the whole
 *      sequence (catches a decode step that feeds the wrong token or reads the cache wrongly);
 *   2. the batched forward vs one token at a time (batched and sequential prefill);
 *   3. truncating the cache and re-evaluating the rest (what the prefix cache does) vs the batched
 *      forward.
 * Each check prints its largest logit difference and PASS/FAIL. */
#ifndef TS_CLI_VERIFY_H
#define TS_CLI_VERIFY_H
#include "tessera.h"

/* prompt: the ids to start from; n_generate greedy tokens follow. Writes the report to out and
 * returns the exit status (0: every check passed). */
int run_verify(ts_model *m, const int32_t *prompt, int n_prompt, int n_generate, int n_threads, FILE *out);

#endif
