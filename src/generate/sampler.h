/* What the answer needs of the sampler besides ts_sample: its steps one at a time, so that a
 * grammar mask can come between the repetition penalty and the choice. */
#ifndef TS_GENERATE_SAMPLER_H
#define TS_GENERATE_SAMPLER_H
#include "tessera.h"

/* The repetition penalty over the recent tokens (ts_sample's first step; ts_sample with recent
 * NULL skips it). */
void sampler_penalize(const ts_sampler *s, float *logits, const int32_t *recent, int n_recent);
/* How many of the most likely tokens the choice can depend on: 1 (greedy), top_k, or 0 (all). */
int  sampler_candidates_needed(const ts_sampler *s);

#endif
