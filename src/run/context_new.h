/* Making contexts (context_new.c); ts_context_new and ts_context_free in tessera.h. */
#ifndef TS_RUN_CONTEXT_NEW_H
#define TS_RUN_CONTEXT_NEW_H
#include "run/context.h"

/* ts_context_new_opts with a choice: sliding_rings false gives sliding layers a full-length cache
 * (tests use it as the independent path for the ring buffers). opt NULL: the defaults. */
int context_new(ts_model *m, const ts_context_options *opt, bool sliding_rings, ts_context **out,
                ts_error *err);

/* Starts counting, per layer, how often each expert is chosen (c->expert_usage; for tests). */
int context_trace_experts(ts_context *c, ts_error *err);

#endif
