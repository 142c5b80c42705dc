/* Safetensors files: an 8-byte little-endian header length N, N bytes of JSON header
 * {name: {"dtype", "shape", "data_offsets"}, "__metadata__": {string: string}}, then the data.
 *
 * Files are mmapped read-only; every header field is checked (known dtype, sizes that match the
 * shape, offsets inside the data, no overlaps, no duplicate names) before a tensor reaches the
 * directory. Errors name the file and, where there is one, the tensor. */
#ifndef TS_IO_SAFETENSORS_H
#define TS_IO_SAFETENSORS_H
#include <stddef.h>
#include "tessera.h"
#include "io/tensor_dir.h"

/* One or more mapped files, one tensor directory over all of them, and the __metadata__. */
typedef struct safetensors safetensors;

/* Opens one safetensors file, whatever its extension (FastFlowLM's model.q4nx is one). */
int safetensors_open(const char *path, safetensors **out, ts_error *err);

/* Opens a model folder: model.safetensors.index.json and the shards its "weight_map" names
 * (each shard file opened once, names may not leave the folder); else model.safetensors; else
 * the folder's only *.safetensors file. Only the tensors the weight_map lists are in the
 * directory; each must exist in the shard it is mapped to. */
int safetensors_open_folder(const char *dir, safetensors **out, ts_error *err);

void safetensors_close(safetensors *s);

/* Drops the mapped pages of [p, p + n) from resident memory once their bytes were copied (a
 * range outside every shard's mapping: nothing). */
void safetensors_release(const safetensors *s, const void *p, size_t n);

/* Tensors in header order (sharded: weight_map order). ne[] is innermost-first: a safetensors
 * shape [rows, cols] gives ne[0] = cols, ne[1] = rows, n_dims = 2 (0 for a scalar). A tensor
 * whose data the file leaves misaligned for its element size is copied, so data is always
 * aligned to the element size. */
const tensor_dir *safetensors_tensors(const safetensors *s);

/* A "__metadata__" value (of the first file when sharded), or NULL when absent. */
const char *safetensors_metadata(const safetensors *s, const char *key);

/* Bytes per element of a type id safetensors can carry (TS_F32, TS_BF16, TS_I8, ...), 0 if none. */
size_t safetensors_type_size(int type);
/* The safetensors dtype string for a type id ("BF16", "I8"), or "?" for none. */
const char *safetensors_type_name(int type);

#endif
