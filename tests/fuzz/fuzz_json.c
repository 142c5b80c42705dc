/* libFuzzer: the JSON parser on arbitrary bytes. A document that parses is walked, looked up and
 * written back out with json_buf_put_string; what is written must parse again to the same tree. */
#include "fuzz_common.h"
#include "io/json.h"
#include <math.h>

static int write_value(json_buf *b, const json_value *v) {
    char num[64];
    switch (v->type) {
    case JSON_NULL: return json_buf_put(b, "null", 4);
    case JSON_BOOL: return v->boolean ? json_buf_put(b, "true", 4) : json_buf_put(b, "false", 5);
    case JSON_NUMBER:
        if (v->is_integer) snprintf(num, sizeof num, "%lld", (long long)v->integer);
        else snprintf(num, sizeof num, "%.17g", v->number);
        return json_buf_put(b, num, strlen(num));
    case JSON_STRING: return json_buf_put_string(b, v->str, v->len);
    case JSON_ARRAY:
    case JSON_OBJECT: {
        bool obj = v->type == JSON_OBJECT;
        if (json_buf_put(b, obj ? "{" : "[", 1)) return -1;
        for (size_t i = 0; i < v->n; i++) {
            if (i && json_buf_put(b, ",", 1)) return -1;
            if (obj && (json_buf_put_string(b, v->keys[i], v->key_lens[i]) || json_buf_put(b, ":", 1)))
                return -1;
            if (write_value(b, &v->items[i])) return -1;
        }
        return json_buf_put(b, obj ? "}" : "]", 1);
    }
    }
    return -1;
}

/* Same tree (numbers compared as doubles; strings byte for byte). */
static bool same(const json_value *a, const json_value *b) {
    if (a->type != b->type || a->n != b->n) return false;
    switch (a->type) {
    case JSON_NULL: return true;
    case JSON_BOOL: return a->boolean == b->boolean;
    case JSON_NUMBER: return a->number == b->number || (isnan(a->number) && isnan(b->number));
    case JSON_STRING: return a->len == b->len && memcmp(a->str, b->str, a->len) == 0;
    case JSON_ARRAY: case JSON_OBJECT:
        for (size_t i = 0; i < a->n; i++) {
            if (a->type == JSON_OBJECT && (a->key_lens[i] != b->key_lens[i] ||
                                           memcmp(a->keys[i], b->keys[i], a->key_lens[i]) != 0))
                return false;
            if (!same(&a->items[i], &b->items[i])) return false;
        }
        return true;
    }
    return false;
}

int LLVMFuzzerInitialize(int *argc, char ***argv) { (void)argc; (void)argv; return 0; }

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    json_value *v;
    ts_error err;
    if (json_parse((const char *)data, size, &v, &err) != 0) {
        if (strchr(err.msg, '\n')) abort();
        return 0;
    }
    if (v->type == JSON_OBJECT && v->n > 0) {
        volatile double sink = json_get_num(v, v->keys[0], 0) + (double)json_get_int(v, v->keys[0], 0)
                             + json_get_bool(v, v->keys[0], false);
        const char *s = json_get_str(v, v->keys[0]);
        if (s) sink += (double)strlen(s);
        /* a key that is there is found (json_get takes C strings: keys holding NUL can't be named) */
        if (strlen(v->keys[0]) == v->key_lens[0] && json_get(v, v->keys[0]) == NULL) abort();
        (void)sink;
    }
    json_buf out = { 0 };
    if (write_value(&out, v) == 0) {
        json_value *again;
        if (json_parse(out.data, out.len, &again, &err) != 0) {
            fprintf(stderr, "re-parse of the written JSON failed: %s\n", err.msg);
            abort();
        }
        if (!same(v, again)) { fprintf(stderr, "re-parsed JSON differs\n"); abort(); }
        json_free(again);
    }
    json_buf_free(&out);
    json_free(v);
    return 0;
}
