/* Mixture-of-experts feed-forward: routing and the expert computation of one layer (moe.c). */
#ifndef TS_RUN_MOE_H
#define TS_RUN_MOE_H
#include <stdbool.h>
#include "load/geometry.h"
#include "load/arch.h"

/* Chooses the layer's n_used of n_experts from one token's router logits by its gating rule (enum
 * moe_gating, the selection bias, the groups): ids in ranking order (ties: the lower id first) and
 * their weights. */
void moe_route(const moe_geometry *moe, const float *logits, int *ids, float *weights);

struct ts_context;
/* out[t] (hidden values per position) = the layer's experts on the n positions of the batch,
 * reading the FFN input c->xn and the residual c->x. */
void moe_forward(struct ts_context *c, const layer_geometry *ly, int il, int n, float *out);

#endif
