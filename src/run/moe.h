/* Mixture-of-experts feed-forward: routing and the expert computation of one layer (moe.c). */
#ifndef TS_RUN_MOE_H
#define TS_RUN_MOE_H
#include <stdbool.h>
#include "load/geometry.h"
#include "load/arch.h"

/* Chooses n_used of n_experts from one token's router logits by the gating rule (enum
 * moe_gating): ids in ranking order (ties: the lower id first) and their weights. */
void moe_route(const float *logits, int n_experts, int n_used, int gating, bool renorm, int *ids,
               float *weights);

struct ts_context;
/* out[t] (hidden values per position) = the layer's experts on the n positions of the batch,
 * reading the FFN input c->xn and the residual c->x. */
void moe_forward(struct ts_context *c, const layer_geometry *ly, int il, int n, float *out);

#endif
