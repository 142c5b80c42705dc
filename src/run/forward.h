/* The forward pass: one function that reads the geometry table and runs any model in it. */
#ifndef TS_RUN_FORWARD_H
#define TS_RUN_FORWARD_H
#include "run/context.h"

/* Evaluates the batch of c->runs: tokens[0..n) (n <= FORWARD_MAX_BATCH), each run's at its
 * sequence's next positions, and moves the sequences on. Writes the logits of the batch positions
 * rows[0..n_rows), one row after another, into logits. */
int forward_batch(ts_context *c, const int32_t *tokens, int n, const int *rows, int n_rows, float *logits,
                  ts_error *err);

#endif
