/* The Mamba-2 kind's part of the geometry builder (build_mamba2.c). */
#ifndef TS_LOAD_BUILD_MAMBA2_H
#define TS_LOAD_BUILD_MAMBA2_H
#include "load/builder.h"

/* Layer il's Mamba-2 geometry (g->layers[il].mamba) from the state-space sizes and its tensors. */
int build_mamba2_layer(builder *b, int il);

#endif
