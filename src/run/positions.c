/* Per-position steps across the pool (see positions.h). */
#include "run/positions.h"

typedef struct position_job { ts_context *c; const layer_geometry *ly; int il, n; position_fn fn; } position_job;

static void position_task(void *ctx, int ith, int nth) {
    const position_job *j = ctx;
    long lo, hi;
    split_range(j->n, ith, nth, &lo, &hi);
    for (long t = lo; t < hi; t++) j->fn(j->c, j->ly, j->il, (int)t);
}

void positions_each(ts_context *c, const layer_geometry *ly, int il, int n, position_fn fn) {
    if (n == 1) { fn(c, ly, il, 0); return; }   /* decode: not worth waking the pool */
    position_job j = { c, ly, il, n, fn };
    thread_pool_run(c->pool, position_task, &j);
}

