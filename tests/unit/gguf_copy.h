/* Tests that rewrite a fixture GGUF (a key changed or dropped, a tensor dropped or replaced) copy
 * its metadata with this. */
#ifndef TS_TESTS_GGUF_COPY_H
#define TS_TESTS_GGUF_COPY_H
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "io/gguf.h"
#include "io/gguf_write.h"

/* Every metadata key of g, as it is, but the keys listed in skip (NULL-terminated; NULL: none). */
static inline void copy_metadata_except(const gguf_file *g, gguf_writer *w, const char *const *skip) {
    for (uint64_t i = 0; i < gguf_n_keys(g); i++) {
        const char *key = gguf_key_at(g, i);
        bool skipped = false;
        for (const char *const *s = skip; s && *s && !skipped; s++) skipped = !strcmp(*s, key);
        if (skipped) continue;
        int type = gguf_key_type(g, key);
        if (type == GGUF_STRING) {
            const char *s; size_t len;
            gguf_get_str(g, key, &s, &len);
            gguf_writer_add_str_n(w, key, s, len);
        } else if (type == GGUF_ARRAY) {
            int et; uint64_t n;
            gguf_get_arr(g, key, &et, &n);
            if (et == GGUF_STRING) {
                const char **strs = malloc(n * sizeof *strs);
                size_t *lens = malloc(n * sizeof *lens);
                for (uint64_t j = 0; j < n; j++) gguf_arr_str(g, key, j, &strs[j], &lens[j]);
                gguf_writer_add_str_array(w, key, strs, lens, n);
                free(strs); free(lens);
            } else {
                const int size = gguf_scalar_size((uint32_t)et);
                uint8_t *elems = malloc(n * (size_t)size + 1);
                for (uint64_t j = 0; j < n; j++) {
                    int64_t v = 0; double f = 0;
                    uint8_t *p = elems + j * size;
                    if (et == GGUF_F32) { gguf_arr_f64(g, key, j, &f); float x = (float)f; memcpy(p, &x, 4); }
                    else if (et == GGUF_F64) { gguf_arr_f64(g, key, j, &f); memcpy(p, &f, 8); }
                    else { gguf_arr_i64(g, key, j, &v); memcpy(p, &v, (size_t)size); }   /* little-endian */
                }
                gguf_writer_add_array(w, key, et, elems, n);
                free(elems);
            }
        } else if (type == GGUF_F32) {
            float f; gguf_get_f32(g, key, &f); gguf_writer_add_f32(w, key, f);
        } else if (type == GGUF_BOOL) {
            bool v; gguf_get_bool(g, key, &v); gguf_writer_add_bool(w, key, v);
        } else {
            int64_t v = 0; gguf_get_i64(g, key, &v);
            uint8_t raw[8];
            memcpy(raw, &v, 8);
            gguf_writer_add_scalar(w, key, type, raw);
        }
    }
}

static inline void copy_metadata(const gguf_file *g, gguf_writer *w) { copy_metadata_except(g, w, NULL); }

#endif
