/* Whole files: mapped read-only (how every container reads its bytes) or read into memory (the
 * JSON files and text inputs). */
#ifndef TS_IO_FILE_H
#define TS_IO_FILE_H
#include <stddef.h>
#include "tessera.h"

/* Maps path. A file shorter than min_size is refused as "<path>: too small to be <what> (N bytes)". */
int  file_map(const char *path, size_t min_size, const char *what, void **map, size_t *size, ts_error *err);
void file_unmap(void *map, size_t size);

/* Reads a whole file into memory (NUL-terminated; an empty file gives len 0). Directories and
 * files over 4 GiB are refused; errors name the path. */
int  file_read(const char *path, char **data, size_t *len, ts_error *err);

#endif
