/* Minimal test reporting: each check prints "ok - ..." or "not ok - ..."; tests/run_all.sh counts them. */
#ifndef TS_TEST_CHECK_H
#define TS_TEST_CHECK_H
#include <stdio.h>
#include <stdlib.h>
#include "io/file.h"

static int check_failures_;

#define CHECK(cond, ...) do { \
    if (cond) { printf("ok - "); printf(__VA_ARGS__); printf("\n"); } \
    else { check_failures_++; printf("not ok - "); printf(__VA_ARGS__); \
           printf("  [%s:%d: %s]\n", __FILE__, __LINE__, #cond); } \
    fflush(stdout); } while (0)

/* Fixture root, relative to the repo root (tests run from there); override with TS_FIXTURES. */
static inline const char *fixtures_dir(void) {
    const char *e = getenv("TS_FIXTURES");
    return e && *e ? e : "../shared/fixtures";
}

/* A whole file in memory (NUL-terminated, through the library's file_read), or NULL; *n its size. */
static inline void *read_all(const char *path, size_t *n) {
    char *data;
    ts_error err;
    *n = 0;
    return file_read(path, &data, n, &err) == 0 ? data : NULL;
}

#define CHECK_EXIT() return check_failures_ ? 1 : 0

#endif
