/* GGUF v2/v3 reader over mmap. Every count, length, type, dimension, offset and size is validated
 * against the file before use; a bad file gives one error line naming the file and the problem. */
#ifndef TS_IO_GGUF_H
#define TS_IO_GGUF_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "tessera.h"
#include "io/tensor_dir.h"

/* Metadata value types, numbered as in the GGUF format. */
enum gguf_vtype {
    GGUF_U8 = 0, GGUF_I8 = 1, GGUF_U16 = 2, GGUF_I16 = 3, GGUF_U32 = 4, GGUF_I32 = 5,
    GGUF_F32 = 6, GGUF_BOOL = 7, GGUF_STRING = 8, GGUF_ARRAY = 9, GGUF_U64 = 10, GGUF_I64 = 11,
    GGUF_F64 = 12
};

/* Bytes of one scalar of a value type; 0 for STRING and ARRAY (their length varies), -1 for a
 * number that is no type. */
int gguf_scalar_size(uint32_t type);

typedef struct gguf_file gguf_file;

int  gguf_open(const char *path, gguf_file **out, ts_error *err);
/* The same reader over a buffer the caller keeps alive until gguf_close (fuzzing, tests); name
 * stands for the path in messages. */
int  gguf_open_memory(const void *data, size_t len, const char *name, gguf_file **out, ts_error *err);
void gguf_close(gguf_file *g);
/* The bytes [p, p + n) of the mapped file are no longer read (copied into the model): their pages
 * leave resident memory (file_map_release). Nothing for gguf_open_memory buffers. */
void gguf_release(const gguf_file *g, const void *p, size_t n);

const char *gguf_path(const gguf_file *g);
uint32_t gguf_version(const gguf_file *g);
/* The tensors (names, types, shapes, data pointers into the mmap). Owned by g. */
const tensor_dir *gguf_tensors(const gguf_file *g);
/* The data alignment in use (general.alignment or the default 32) and the file offset where the
 * data section starts (tensor offsets are relative to it). For diagnostics and tests. */
uint32_t gguf_alignment(const gguf_file *g);
uint64_t gguf_data_offset(const gguf_file *g);

/* ---- metadata lookups: false when the key is absent or has an incompatible type ---- */
bool gguf_has(const gguf_file *g, const char *key);
int  gguf_key_type(const gguf_file *g, const char *key);      /* enum gguf_vtype, -1 if absent */
/* Any integer type (or bool) whose value fits. */
bool gguf_get_i64(const gguf_file *g, const char *key, int64_t *out);
/* F32 or F64 (or an integer, converted). */
bool gguf_get_f32(const gguf_file *g, const char *key, float *out);
bool gguf_get_bool(const gguf_file *g, const char *key, bool *out);
/* A string value: pointer into the mmap (not NUL-terminated) and its length. */
bool gguf_get_str(const gguf_file *g, const char *key, const char **s, size_t *len);

/* Arrays. gguf_get_arr: element type and count. */
bool gguf_get_arr(const gguf_file *g, const char *key, int *elem_type, uint64_t *n);
/* Element i of a numeric array (any integer/bool type converted to i64, float types to f64). */
bool gguf_arr_i64(const gguf_file *g, const char *key, uint64_t i, int64_t *out);
bool gguf_arr_f64(const gguf_file *g, const char *key, uint64_t i, double *out);
/* Element i of a string array (pointer into the mmap, not NUL-terminated). */
bool gguf_arr_str(const gguf_file *g, const char *key, uint64_t i, const char **s, size_t *len);

/* Iteration over all keys (for --info and diagnostics). */
uint64_t gguf_n_keys(const gguf_file *g);
const char *gguf_key_at(const gguf_file *g, uint64_t i);   /* NUL-terminated copy owned by g */

#endif
