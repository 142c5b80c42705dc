/* A whole regular file mapped read-only: how every container reads its bytes. */
#ifndef TS_IO_MAPPED_FILE_H
#define TS_IO_MAPPED_FILE_H
#include <stddef.h>
#include "tessera.h"

/* Maps path. A file shorter than min_size is refused as "<path>: too small to be <what> (N bytes)". */
int  map_file(const char *path, size_t min_size, const char *what, void **map, size_t *size, ts_error *err);
void unmap_file(void *map, size_t size);

#endif
