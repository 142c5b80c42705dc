/* The gated short-convolution kind's part of the geometry builder (build_shortconv.c). */
#ifndef TS_LOAD_BUILD_SHORTCONV_H
#define TS_LOAD_BUILD_SHORTCONV_H
#include "load/builder.h"

/* Layer il's short-convolution geometry (g->layers[il].conv) from the convolution's width and its tensors. */
int build_shortconv_layer(builder *b, int il);

#endif
