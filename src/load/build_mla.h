/* The latent-attention kind's part of the geometry builder (build_mla.c). */
#ifndef TS_LOAD_BUILD_MLA_H
#define TS_LOAD_BUILD_MLA_H
#include "load/builder.h"

/* Layer il's latent-attention geometry (g->layers[il].mla, and its cache's view in .attn) from the
 * latent sizes and its tensors. */
int build_mla_layer(builder *b, int il);

#endif
