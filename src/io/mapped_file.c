#include "io/mapped_file.h"
#include "core/error.h"
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

int map_file(const char *path, size_t min_size, const char *what, void **map, size_t *size, ts_error *err) {
    *map = NULL;
    *size = 0;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return ts_fail(err, "%s: cannot open: %s", path, strerror(errno));
    struct stat st;
    int rc = -1;
    if (fstat(fd, &st) != 0) ts_fail(err, "%s: cannot stat: %s", path, strerror(errno));
    else if (!S_ISREG(st.st_mode)) ts_fail(err, "%s: not a regular file", path);
    else if ((uint64_t)st.st_size < min_size)
        ts_fail(err, "%s: too small to be %s (%lld bytes)", path, what, (long long)st.st_size);
    else if ((uint64_t)st.st_size > SIZE_MAX) ts_fail(err, "%s: too large to map", path);
    else {
        void *m = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
        if (m == MAP_FAILED) ts_fail(err, "%s: cannot mmap %lld bytes: %s", path, (long long)st.st_size, strerror(errno));
        else { *map = m; *size = (size_t)st.st_size; rc = 0; }
    }
    close(fd);   /* a mapping outlives its descriptor */
    return rc;
}

void unmap_file(void *map, size_t size) {
    if (map) munmap(map, size);
}
