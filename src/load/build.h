/* The geometry builder: one arch row + the hyper-parameters a container reader found + the
 * container's tensors -> the geometry table (model_geometry). Head checks, the sliding pattern,
 * RoPE tables, shared KV, per-layer embeddings and the tensor shapes are all decided here, once,
 * whatever the container; and every tensor of the file must be consumed here or be one the
 * container says may be left (with the reason), else the model is refused. */
#ifndef TS_LOAD_BUILD_H
#define TS_LOAD_BUILD_H
#include "load/tensor_source.h"

/* The geometry table of m (m->g) from the family, the stated hyper-parameters and the tensors. */
int build_geometry(ts_model *m, const arch_desc *a, const model_hparams *hp, tensor_source *src,
                   ts_error *err);

#endif
