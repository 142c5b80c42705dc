/* The latent-attention kind's run part (mla_layer.c). */
#ifndef TS_RUN_MLA_LAYER_H
#define TS_RUN_MLA_LAYER_H
#include "run/context.h"

/* c->tmp = the latent-attention sublayer of layer il on the normed input c->xn of the batch's n
 * positions (c->runs), in the absorbed form: each position's latent [c | k_pe] goes into its
 * sequence's cache first, then every head attends over the cached latents. */
void mla_layer_forward(ts_context *c, const layer_geometry *ly, int il, int n);

#endif
