/* The statistics line on stderr after an answer: the load time (one-shot runs), prompt tokens (how
 * many came from the cache), prefill speed, time to first token, generation speed, healing, and the
 * seed of a sampled answer. */
#ifndef TS_CLI_STATS_H
#define TS_CLI_STATS_H
#include "tessera.h"

/* prefix: NULL, or e.g. "turn 2: "; n_backed: prompt tokens healing backed up; load_seconds: the
 * model's load time, shown first (< 0: not shown). */
void stats_print(FILE *f, const char *prefix, const ts_gen_result *res, int n_backed, const ts_sampler_params *sampling,
                 double load_seconds);

#endif
