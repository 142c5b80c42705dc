#include "core/str.h"
#include <stdlib.h>
#include <string.h>

char *str_copy(const void *s, size_t len) {
    char *c = malloc(len + 1);
    if (!c) return NULL;
    memcpy(c, s, len);
    c[len] = '\0';
    return c;
}
