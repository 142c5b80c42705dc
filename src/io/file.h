/* Whole files: mapped read-only (how every container reads its bytes) or read into memory (the
 * JSON files and text inputs). */
#ifndef TS_IO_FILE_H
#define TS_IO_FILE_H
#include <stddef.h>
#include "tessera.h"

/* Maps path. A file shorter than min_size is refused as "<path>: too small to be <what> (N bytes)". */
int  file_map(const char *path, size_t min_size, const char *what, void **map, size_t *size, ts_error *err);
void file_unmap(void *map, size_t size);
/* Gives back the pages wholly inside [p, p + n) of a mapping made by file_map, once the caller has
 * copied what it needed from them: they leave the process's resident memory (the file's page cache
 * keeps them; a later read maps them again from the file). Ranges outside the mapping are ignored. */
void file_map_release(void *map, size_t size, const void *p, size_t n);

/* Reads a whole file into memory (NUL-terminated; an empty file gives len 0). Directories and
 * files over 4 GiB are refused; errors name the path. */
int  file_read(const char *path, char **data, size_t *len, ts_error *err);

#endif
