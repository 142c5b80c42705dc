/* The attention kind's part of the geometry builder (build_attention.c). */
#ifndef TS_LOAD_BUILD_ATTENTION_H
#define TS_LOAD_BUILD_ATTENTION_H
#include "load/builder.h"

/* Layer il's attention geometry (g->layers[il].attn) from the hyper-parameters and its tensors;
 * layers before il are built (shared KV reads them). */
int build_attention_layer(builder *b, int il);

#endif
