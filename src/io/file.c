#include "io/file.h"
#include "core/error.h"
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

int file_map(const char *path, size_t min_size, const char *what, void **map, size_t *size, ts_error *err) {
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
        else {
            /* pages not cached yet are read in 2 MB folios, which the kernel then maps 2 MB at a
             * time: decode reads them as fast as a copy in 2 MB pages (load/resident.c) */
            madvise(m, (size_t)st.st_size, MADV_HUGEPAGE);
            *map = m;
            *size = (size_t)st.st_size;
            rc = 0;
        }
    }
    close(fd);   /* a mapping outlives its descriptor */
    return rc;
}

void file_unmap(void *map, size_t size) {
    if (map) munmap(map, size);
}

void file_map_release(void *map, size_t size, const void *p, size_t n) {
    const uintptr_t base = (uintptr_t)map, lo = (uintptr_t)p;
    if (!map || lo < base || n > size || lo - base > size - n) return;
    const uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
    uintptr_t first = (lo + page - 1) / page * page, end = (lo + n) / page * page;
    if (end > first) madvise((void *)first, end - first, MADV_DONTNEED);
}

#define READ_FILE_MAX ((uint64_t)4 << 30)

int file_read(const char *path, char **data, size_t *len, ts_error *err) {
    *data = NULL;
    *len = 0;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return ts_fail(err, "%s: cannot open: %s", path, strerror(errno));
    struct stat st;
    if (fstat(fd, &st) != 0) {
        int e = errno;
        close(fd);
        return ts_fail(err, "%s: cannot stat: %s", path, strerror(e));
    }
    if (S_ISDIR(st.st_mode)) {
        close(fd);
        return ts_fail(err, "%s: is a directory, not a file", path);
    }
    if ((uint64_t)st.st_size > READ_FILE_MAX || (uint64_t)st.st_size >= SIZE_MAX) {
        close(fd);
        return ts_fail(err, "%s: too large (%lld bytes; the limit is 4 GiB)", path,
                       (long long)st.st_size);
    }
    /* The size is only a hint: pipes report 0 and a file may grow while it is read. */
    size_t cap = S_ISREG(st.st_mode) ? (size_t)st.st_size + 1 : 65536;
    size_t n = 0;
    char *buf = malloc(cap);
    if (!buf) {
        close(fd);
        return ts_fail(err, "%s: out of memory for %zu bytes", path, cap);
    }
    for (;;) {
        /* Full: probe for one more byte before doubling, so an exact-size buffer stays exact. */
        bool full = n + 1 == cap;
        char probe;
        ssize_t r = full ? read(fd, &probe, 1) : read(fd, buf + n, cap - 1 - n);
        if (r < 0 && errno == EINTR) continue;
        if (r == 0) break;
        if (r < 0) {
            int e = errno;
            free(buf);
            close(fd);
            return ts_fail(err, "%s: read error: %s", path, strerror(e));
        }
        if (!full) {
            n += (size_t)r;
            continue;
        }
        if ((uint64_t)n >= READ_FILE_MAX) {
            free(buf);
            close(fd);
            return ts_fail(err, "%s: too large (the limit is 4 GiB)", path);
        }
        size_t ncap = cap * 2;
        char *nb = realloc(buf, ncap);
        if (!nb) {
            free(buf);
            close(fd);
            return ts_fail(err, "%s: out of memory for %zu bytes", path, ncap);
        }
        buf = nb;
        cap = ncap;
        buf[n++] = probe;
    }
    close(fd);
    buf[n] = '\0';
    *data = buf;
    *len = n;
    return 0;
}
