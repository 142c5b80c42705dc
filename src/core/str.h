/* Byte strings the readers copy out of files and JSON documents into structures they own. */
#ifndef TS_CORE_STR_H
#define TS_CORE_STR_H
#include <stddef.h>

/* A malloc'd copy of s[0..len) with a NUL after it (s may itself hold NUL bytes, and need not end
 * in one); NULL when out of memory. */
char *str_copy(const void *s, size_t len);
/* The value of hex digit c (0-9, a-f, A-F), or -1 for any other character. */
int str_hex_digit(int c);

#endif
