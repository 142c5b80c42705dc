/* Per-position steps of a layer, run across the thread pool for a batch: each position is computed
 * by one thread with the same operations, so any split gives the same bits. */
#ifndef TS_RUN_POSITIONS_H
#define TS_RUN_POSITIONS_H
#include "run/context.h"

typedef void (*position_fn)(ts_context *c, const layer_geometry *ly, int il, int t);

/* fn(c, ly, il, t) for t in [0, n): on the caller's thread for one position (decode), else across the pool. */
void positions_each(ts_context *c, const layer_geometry *ly, int il, int n, position_fn fn);

#endif
