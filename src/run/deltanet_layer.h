/* The gated DeltaNet kind's run part (deltanet_layer.c). */
#ifndef TS_RUN_DELTANET_LAYER_H
#define TS_RUN_DELTANET_LAYER_H
#include "run/context.h"

/* c->tmp = the DeltaNet sublayer of layer il on c->xn, n positions at c->pos.., advancing the
 * layer's state (its convolution window and its heads' matrices) one position at a time. */
void deltanet_layer_forward(ts_context *c, const layer_geometry *ly, int il, int n);
/* The position <= pos its state can be restored at (a snapshot's, or 0). */
int deltanet_layer_rewind(const ts_context *c, const sequence *s, const layer_geometry *ly, int il, int pos);
/* The state's floats: the convolution window ((K - 1) x C) and a dk x dv matrix per value head. */
size_t deltanet_layer_state_floats(const layer_geometry *ly);

#endif
