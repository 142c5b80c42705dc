/* How --batch knows its lines: by their id, compared as JSON values (1, 1.0 and 1e0 are one number;
 * the string "1" is another id), or by their line number when they have none. */
#ifndef TS_CLI_IDS_H
#define TS_CLI_IDS_H
#include "io/json.h"

/* Writes an id as JSON: a string quoted, a number in one spelling per value (integral values as
 * integers), null for NULL. -1 when out of memory. */
int   ids_put(json_buf *b, const json_value *id);
/* The key of a line: the id's JSON text, or "null@LINE" for a line without one (NULL, JSON null).
 * malloc'd; NULL when out of memory. */
char *ids_key(const json_value *id, int line_number);

/* A set of keys: add them all, sort, then look up. */
typedef struct key_set { char **keys; size_t n, cap; } key_set;
int  key_set_add(key_set *k, char *key);   /* takes key (frees it on failure); -1: out of memory */
void key_set_sort(key_set *k);
bool key_set_has(const key_set *k, const char *key);
void key_set_free(key_set *k);

#endif
