/* The gated DeltaNet kind's part of the geometry builder (build_deltanet.c). */
#ifndef TS_LOAD_BUILD_DELTANET_H
#define TS_LOAD_BUILD_DELTANET_H
#include "load/builder.h"

/* Layer il's DeltaNet geometry (g->layers[il].delta) from the state-space sizes and its tensors. */
int build_deltanet_layer(builder *b, int il);

#endif
