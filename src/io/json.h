/* Strict JSON (RFC 8259) parser: UTF-8 validated, depth-limited, errors carry the byte offset.
 * Used for config.json, tokenizer.json, safetensors headers, q4nx packs and JSONL batch files. */
#ifndef TS_IO_JSON_H
#define TS_IO_JSON_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "tessera.h"

#define JSON_MAX_DEPTH 128

typedef enum json_type {
    JSON_NULL, JSON_BOOL, JSON_NUMBER, JSON_STRING, JSON_ARRAY, JSON_OBJECT
} json_type;

typedef struct json_value json_value;
struct json_value {
    json_type type;
    bool boolean;
    double number;
    bool is_integer;          /* the literal had no fraction/exponent and fits in int64 */
    int64_t integer;          /* exact value when is_integer */
    char *str;                /* JSON_STRING: decoded UTF-8, NUL-terminated (may contain \0: use len) */
    size_t len;               /* string length in bytes */
    json_value *items;        /* JSON_ARRAY elements / JSON_OBJECT values */
    char **keys;              /* JSON_OBJECT keys (decoded, NUL-terminated), in file order */
    size_t *key_lens;
    size_t n;                 /* element / member count */
};

/* Parses exactly one JSON value (surrounding whitespace allowed). On error: -1 and a message like
 * "byte 1234: expected ',' or '}'" (0-based offset of the first offending byte; for a bad escape
 * the backslash). A leading UTF-8 BOM is skipped; numbers beyond the double range are errors.
 * *out must be freed with json_free (the whole tree lives in one arena owned by the root). */
int  json_parse(const char *text, size_t len, json_value **out, ts_error *err);
void json_free(json_value *v);

/* Object member by key (first match), or NULL (also NULL when obj is not an object). */
const json_value *json_get(const json_value *obj, const char *key);
/* Convenience getters: return def when absent or of another type. json_get_int also accepts an
 * integral non-integer literal that int64 holds exactly (2048.0, 1e5). */
double      json_get_num(const json_value *obj, const char *key, double def);
int64_t     json_get_int(const json_value *obj, const char *key, int64_t def);
bool        json_get_bool(const json_value *obj, const char *key, bool def);
const char *json_get_str(const json_value *obj, const char *key);   /* NULL when absent */

/* Appends s as a JSON string literal (quotes and escapes) to a growable buffer. The buffer stays
 * NUL-terminated; bytes of s that are not valid UTF-8 are written as U+FFFD. Return -1 only when
 * out of memory. Start from a zeroed json_buf. */
typedef struct json_buf { char *data; size_t len, cap; } json_buf;
int  json_buf_put(json_buf *b, const char *s, size_t len);           /* raw bytes */
int  json_buf_put_string(json_buf *b, const char *s, size_t len);    /* quoted, escaped */
/* printf-formatted text, raw (at most 1023 bytes per call; longer output fails) */
int  json_buf_printf(json_buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* v written back as compact JSON, numbers in their shortest form that reads back the same (its
 * depth is the parser's, at most JSON_MAX_DEPTH) */
int  json_buf_put_value(json_buf *b, const json_value *v);
void json_buf_free(json_buf *b);


#endif
