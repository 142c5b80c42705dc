/* The layer kinds' run parts, by enum layer_kind: what the forward calls for a layer's mixer and
 * what a rewind of the sequence asks of its state. A new kind adds its run/KIND_layer.c and one row
 * here (and its builder part, load/build_KIND.c, one row in load/build.c). */
#ifndef TS_RUN_LAYER_KIND_H
#define TS_RUN_LAYER_KIND_H
#include "run/context.h"

typedef struct layer_kind_run {
    const char *name;
    /* c->tmp = the mixer of layer il on c->xn, the n positions of the batch's runs (c->runs; a
     * run of one position is a decode step), updating each run's sequence state */
    void (*forward)(ts_context *c, const layer_geometry *ly, int il, int n);
    /* The position <= pos from which the layer's state in sequence s can continue after s is cut
     * back to pos positions (0: only from the start) */
    int (*rewind)(const ts_context *c, const sequence *s, const layer_geometry *ly, int il, int pos);
    /* Floats of fixed-size per-sequence state (recurrent kinds; attention's grows with the
     * positions and lives in the KV cache: 0) */
    size_t (*state_floats)(const layer_geometry *ly);
} layer_kind_run;

const layer_kind_run *layer_kind_ops(int kind);

#endif
