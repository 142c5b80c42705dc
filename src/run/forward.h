/* The forward pass: one function that reads the geometry table and runs any model in it. */
#ifndef TS_RUN_FORWARD_H
#define TS_RUN_FORWARD_H
#include "run/context.h"

/* Evaluates tokens[0..n) at positions c->pos.. (n <= FORWARD_MAX_BATCH); writes the logits of
 * the positions asked for: all rows, or the last one only. */
int forward_chunk(ts_context *c, const int32_t *tokens, int n, float *logits, bool all_rows,
                  ts_error *err);

#endif
