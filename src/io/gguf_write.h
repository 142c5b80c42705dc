/* A small GGUF v3 writer for tests and synthetic benchmark models.
 *
 * Build a file in memory, then write it:
 *     gguf_writer *w = gguf_writer_new();
 *     gguf_writer_add_str(w, "general.architecture", "llama");
 *     gguf_writer_add_u32(w, "llama.block_count", 2);
 *     gguf_writer_add_tensor(w, "token_embd.weight", TS_F32, 2, (int64_t[]){64, 512}, data, nbytes);
 *     if (gguf_writer_write(w, "out.gguf", &err)) ...
 *     gguf_writer_free(w);
 *
 * Errors are sticky: an add that fails (duplicate key or tensor name, bad type, shape or size)
 * returns -1 and remembers the first message; gguf_writer_write then fails with it, so callers may
 * check only the write. Metadata and tensors are written in the order they were added; tensor data
 * is laid out back to back, each tensor padded to the alignment (default 32). */
#ifndef TS_IO_GGUF_WRITE_H
#define TS_IO_GGUF_WRITE_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "tessera.h"

typedef struct gguf_writer gguf_writer;

gguf_writer *gguf_writer_new(void);          /* NULL when out of memory */
void gguf_writer_free(gguf_writer *w);

/* One scalar of value type vtype (enum gguf_vtype, not STRING/ARRAY); value points at it. */
int gguf_writer_add_scalar(gguf_writer *w, const char *key, int vtype, const void *value);
int gguf_writer_add_u8(gguf_writer *w, const char *key, uint8_t v);
int gguf_writer_add_i8(gguf_writer *w, const char *key, int8_t v);
int gguf_writer_add_u16(gguf_writer *w, const char *key, uint16_t v);
int gguf_writer_add_i16(gguf_writer *w, const char *key, int16_t v);
int gguf_writer_add_u32(gguf_writer *w, const char *key, uint32_t v);
int gguf_writer_add_i32(gguf_writer *w, const char *key, int32_t v);
int gguf_writer_add_u64(gguf_writer *w, const char *key, uint64_t v);
int gguf_writer_add_i64(gguf_writer *w, const char *key, int64_t v);
int gguf_writer_add_f32(gguf_writer *w, const char *key, float v);
int gguf_writer_add_f64(gguf_writer *w, const char *key, double v);
int gguf_writer_add_bool(gguf_writer *w, const char *key, bool v);
int gguf_writer_add_str(gguf_writer *w, const char *key, const char *s);               /* NUL-terminated */
int gguf_writer_add_str_n(gguf_writer *w, const char *key, const char *s, size_t len);  /* any bytes */

/* An array of n numbers of type elem_type (host layout, e.g. float[] for GGUF_F32), copied. */
int gguf_writer_add_array(gguf_writer *w, const char *key, int elem_type, const void *elems, uint64_t n);
/* An array of n strings; lens NULL means each is NUL-terminated. */
int gguf_writer_add_str_array(gguf_writer *w, const char *key, const char *const *strs,
                              const size_t *lens, uint64_t n);

/* Sets the data alignment (a power of two up to 1 MiB) and writes it as general.alignment (u32). */
int gguf_writer_set_alignment(gguf_writer *w, uint32_t alignment);

/* A tensor of type (enum ts_type) with n_dims (1..4) dims ne[], innermost first. nbytes must be
 * the type's exact size for that shape. data is NOT copied: it must stay valid until
 * gguf_writer_write; NULL writes zeros. */
int gguf_writer_add_tensor(gguf_writer *w, const char *name, int type, int n_dims, const int64_t *ne,
                           const void *data, size_t nbytes);

/* Writes the file (GGUF version 3). Fails with the first add error, or an I/O error naming path. */
int gguf_writer_write(const gguf_writer *w, const char *path, ts_error *err);

#endif
