/* The gated short-convolution kind's run part (shortconv_layer.c). */
#ifndef TS_RUN_SHORTCONV_LAYER_H
#define TS_RUN_SHORTCONV_LAYER_H
#include "run/context.h"

/* c->tmp = the short-convolution sublayer of layer il on c->xn, n positions at c->pos..,
 * moving the layer's window of past inputs on one position at a time. */
void shortconv_layer_forward(ts_context *c, const layer_geometry *ly, int il, int n);
/* The position <= pos its state can be restored at (a snapshot's, or 0). */
int shortconv_layer_rewind(const ts_context *c, const sequence *s, const layer_geometry *ly, int il, int pos);
/* The state's floats: the last K - 1 gated inputs of every channel. */
size_t shortconv_layer_state_floats(const layer_geometry *ly);

#endif
