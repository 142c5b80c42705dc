/* A weight matrix as the kernels read it. */
#ifndef TS_KERNELS_WEIGHT_H
#define TS_KERNELS_WEIGHT_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* A weight matrix stored as `rows` independent rows of `cols` weights each (y = W x has `rows`
 * outputs). data is either inside a container's mmap or an owned, layout-normalized copy. */
typedef struct weight {
    int type;               /* enum ts_type */
    int64_t rows, cols;
    size_t row_bytes;
    const uint8_t *data;    /* NULL when the model has no such tensor */
    const char *name;       /* the container's tensor name, for messages and --info */
    bool lanes;             /* its rows rearranged 16 at a time by its type's lanes_pack (simd.h):
                               read only by the kernel set that packed them */
    float scale;            /* 0: none; else every product's result times it (a GGUF '<name>.scale'
                               tensor: NVFP4 checkpoints' second-level scale) */
} weight;

#endif
