/* Batch line keys. */
#include "cli/ids.h"
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int ids_put(json_buf *b, const json_value *id) {
    char num[64];
    if (!id || id->type == JSON_NULL) return json_buf_put(b, "null", 4);
    if (id->type == JSON_STRING) return json_buf_put_string(b, id->str, id->len);
    if (id->is_integer) snprintf(num, sizeof num, "%" PRId64, id->integer);
    else if (id->number == floor(id->number) && fabs(id->number) < 9.2e18)
        snprintf(num, sizeof num, "%" PRId64, (int64_t)id->number);   /* 1.0, 1e1 */
    else {   /* the shortest text that reads back as the same number (0.1, not 0.10000000000000001) */
        for (int digits = 15; digits <= 17; digits++) {
            snprintf(num, sizeof num, "%.*g", digits, id->number);
            if (strtod(num, NULL) == id->number) break;
        }
    }
    return json_buf_put(b, num, strlen(num));
}

char *ids_key(const json_value *id, int line_number) {
    if (!id || id->type == JSON_NULL) {
        char buf[32];
        snprintf(buf, sizeof buf, "null@%d", line_number);
        return strdup(buf);
    }
    json_buf b = {0};
    if (ids_put(&b, id) != 0) { json_buf_free(&b); return NULL; }
    return b.data;
}

int key_set_add(key_set *k, char *key) {
    if (!key) return -1;
    if (k->n == k->cap) {
        size_t nc = k->cap ? k->cap * 2 : 64;
        char **t = realloc(k->keys, nc * sizeof *t);
        if (!t) { free(key); return -1; }
        k->keys = t;
        k->cap = nc;
    }
    k->keys[k->n++] = key;
    return 0;
}

static int cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

void key_set_sort(key_set *k) {
    if (k->n) qsort(k->keys, k->n, sizeof *k->keys, cmp_str);
}

bool key_set_has(const key_set *k, const char *key) {
    return k->n && bsearch(&key, k->keys, k->n, sizeof *k->keys, cmp_str) != NULL;
}

void key_set_free(key_set *k) {
    for (size_t i = 0; i < k->n; i++) free(k->keys[i]);
    free(k->keys);
    memset(k, 0, sizeof *k);
}
