/* One directory of named tensors, whatever container they came from (GGUF, safetensors, q4nx).
 * Data pointers point into the container's mmap (read-only) unless a loader made a copy. */
#ifndef TS_IO_TENSOR_DIR_H
#define TS_IO_TENSOR_DIR_H
#include <stddef.h>
#include <stdint.h>

#define TS_MAX_DIMS 4

typedef struct tensor_entry {
    char *name;                 /* owned, NUL-terminated */
    int type;                   /* enum ts_type */
    int n_dims;
    int64_t ne[TS_MAX_DIMS];    /* ne[0] is the innermost (contiguous) dimension; unused dims are 1 */
    const uint8_t *data;        /* validated: [data, data+nbytes) lies inside the mapped file */
    size_t nbytes;
} tensor_entry;

typedef struct tensor_dir {
    tensor_entry *t;
    int n;
} tensor_dir;

/* NULL when absent. */
const tensor_entry *tensor_dir_find(const tensor_dir *d, const char *name);
void tensor_dir_free(tensor_dir *d);

#endif
