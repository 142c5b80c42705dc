/* Errors are values: a function that can fail returns -1 (or NULL) and fills a ts_error. */
#ifndef TS_CORE_ERROR_H
#define TS_CORE_ERROR_H
#include "tessera.h"

/* Formats msg into err (if err is non-NULL) and returns -1, so callers can `return ts_fail(...)`. */
int ts_fail(ts_error *err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
