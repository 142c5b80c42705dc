#include "core/error.h"
#include <stdarg.h>
#include <stdio.h>

int ts_fail(ts_error *err, const char *fmt, ...) {
    if (err) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err->msg, sizeof err->msg, fmt, ap);
        va_end(ap);
        /* Messages quote names and strings taken from the input (architectures, token texts, JSON
         * keys); whatever they hold, an error stays one line: control characters become '?'. */
        for (char *p = err->msg; *p; p++)
            if ((unsigned char)*p < 0x20 || *p == 0x7f) *p = '?';
    }
    return -1;
}
