/* The feed-forward part of the geometry builder (build_ffn.c). */
#ifndef TS_LOAD_BUILD_FFN_H
#define TS_LOAD_BUILD_FFN_H
#include "load/builder.h"

/* The dense MLP of layer il; its width follows the tensors (the config's for q4nx tiles). */
int build_ffn_dense(builder *b, int il);
/* The mixture of experts of layer il (which has a router tensor). */
int build_ffn_experts(builder *b, int il);

#endif
