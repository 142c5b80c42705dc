/* GGUF v3 writer: metadata values are encoded when added; tensors are written at write time. */
#include "io/gguf_write.h"
#include "io/gguf.h"
#include "io/tensor_dir.h"
#include "core/tensor_type.h"
#include "core/error.h"
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define WRITER_MAX_ALIGNMENT (1u << 20)

typedef struct bytes { uint8_t *p; size_t n, cap; } bytes;

typedef struct wkv {
    char *key;
    int type;
    bytes value;        /* the encoded value, as it follows the type in the file */
} wkv;

typedef struct wtensor {
    char *name;
    int type, n_dims;
    int64_t ne[TS_MAX_DIMS];
    const void *data;   /* borrowed; NULL = zeros */
    size_t nbytes;
} wtensor;

struct gguf_writer {
    wkv *kv;
    int n_kv, cap_kv;
    wtensor *t;
    int n_t, cap_t;
    uint32_t alignment;
    bool failed;
    ts_error first_error;
};

static int wfail(gguf_writer *w, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int wfail(gguf_writer *w, const char *fmt, ...) {
    if (!w->failed) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(w->first_error.msg, sizeof w->first_error.msg, fmt, ap);
        va_end(ap);
        w->failed = true;
    }
    return -1;
}

static bool put(bytes *b, const void *src, size_t n) {
    if (n == 0) return true;   /* src may be NULL then */
    if (n > SIZE_MAX - b->n) return false;
    if (b->n + n > b->cap) {
        size_t cap = b->cap ? b->cap : 64;
        while (cap < b->n + n) {
            if (cap > SIZE_MAX / 2) { cap = b->n + n; break; }
            cap *= 2;
        }
        uint8_t *p = realloc(b->p, cap);
        if (!p) return false;
        b->p = p;
        b->cap = cap;
    }
    memcpy(b->p + b->n, src, n);
    b->n += n;
    return true;
}

/* The file is little-endian, and so is every host tessera targets: plain copies. */
static bool put_u32(bytes *b, uint32_t v) { return put(b, &v, 4); }
static bool put_u64(bytes *b, uint64_t v) { return put(b, &v, 8); }
static bool put_str(bytes *b, const char *s, size_t len) { return put_u64(b, len) && put(b, s, len); }

gguf_writer *gguf_writer_new(void) {
    gguf_writer *w = calloc(1, sizeof *w);
    if (w) w->alignment = 32;
    return w;
}

void gguf_writer_free(gguf_writer *w) {
    if (!w) return;
    for (int i = 0; i < w->n_kv; i++) { free(w->kv[i].key); free(w->kv[i].value.p); }
    for (int i = 0; i < w->n_t; i++) free(w->t[i].name);
    free(w->kv);
    free(w->t);
    free(w);
}

static int find_key(const gguf_writer *w, const char *key) {
    for (int i = 0; i < w->n_kv; i++)
        if (strcmp(w->kv[i].key, key) == 0) return i;
    return -1;
}

/* A new, empty pair for key (which must be new); NULL after recording an error. */
static wkv *new_kv(gguf_writer *w, const char *key, int type) {
    if (!key || !*key) { wfail(w, "gguf writer: empty metadata key"); return NULL; }
    if (find_key(w, key) >= 0) { wfail(w, "gguf writer: duplicate metadata key '%s'", key); return NULL; }
    if (w->n_kv == w->cap_kv) {
        int cap = w->cap_kv ? 2 * w->cap_kv : 16;
        wkv *p = realloc(w->kv, (size_t)cap * sizeof *p);
        if (!p) { wfail(w, "gguf writer: out of memory"); return NULL; }
        w->kv = p;
        w->cap_kv = cap;
    }
    wkv *kv = &w->kv[w->n_kv];
    memset(kv, 0, sizeof *kv);
    if (!(kv->key = strdup(key))) { wfail(w, "gguf writer: out of memory"); return NULL; }
    kv->type = type;
    w->n_kv++;
    return kv;
}

int gguf_writer_add_scalar(gguf_writer *w, const char *key, int vtype, const void *value) {
    int size = gguf_scalar_size((uint32_t)vtype);
    if (size <= 0) return wfail(w, "gguf writer: key '%s': %d is not a scalar value type", key, vtype);
    wkv *kv = new_kv(w, key, vtype);
    if (!kv) return -1;
    if (!put(&kv->value, value, (size_t)size)) return wfail(w, "gguf writer: out of memory");
    return 0;
}

int gguf_writer_add_u8(gguf_writer *w, const char *key, uint8_t v) { return gguf_writer_add_scalar(w, key, GGUF_U8, &v); }
int gguf_writer_add_i8(gguf_writer *w, const char *key, int8_t v) { return gguf_writer_add_scalar(w, key, GGUF_I8, &v); }
int gguf_writer_add_u16(gguf_writer *w, const char *key, uint16_t v) { return gguf_writer_add_scalar(w, key, GGUF_U16, &v); }
int gguf_writer_add_i16(gguf_writer *w, const char *key, int16_t v) { return gguf_writer_add_scalar(w, key, GGUF_I16, &v); }
int gguf_writer_add_u32(gguf_writer *w, const char *key, uint32_t v) { return gguf_writer_add_scalar(w, key, GGUF_U32, &v); }
int gguf_writer_add_i32(gguf_writer *w, const char *key, int32_t v) { return gguf_writer_add_scalar(w, key, GGUF_I32, &v); }
int gguf_writer_add_u64(gguf_writer *w, const char *key, uint64_t v) { return gguf_writer_add_scalar(w, key, GGUF_U64, &v); }
int gguf_writer_add_i64(gguf_writer *w, const char *key, int64_t v) { return gguf_writer_add_scalar(w, key, GGUF_I64, &v); }
int gguf_writer_add_f32(gguf_writer *w, const char *key, float v) { return gguf_writer_add_scalar(w, key, GGUF_F32, &v); }
int gguf_writer_add_f64(gguf_writer *w, const char *key, double v) { return gguf_writer_add_scalar(w, key, GGUF_F64, &v); }

int gguf_writer_add_bool(gguf_writer *w, const char *key, bool v) {
    uint8_t b = v ? 1 : 0;
    return gguf_writer_add_scalar(w, key, GGUF_BOOL, &b);
}

int gguf_writer_add_str_n(gguf_writer *w, const char *key, const char *s, size_t len) {
    wkv *kv = new_kv(w, key, GGUF_STRING);
    if (!kv) return -1;
    if (!put_str(&kv->value, s, len)) return wfail(w, "gguf writer: out of memory");
    return 0;
}

int gguf_writer_add_str(gguf_writer *w, const char *key, const char *s) {
    return gguf_writer_add_str_n(w, key, s, strlen(s));
}

int gguf_writer_add_array(gguf_writer *w, const char *key, int elem_type, const void *elems, uint64_t n) {
    int size = gguf_scalar_size((uint32_t)elem_type);
    if (size <= 0)
        return wfail(w, "gguf writer: key '%s': %d is not a numeric element type", key, elem_type);
    if (n > SIZE_MAX / (uint64_t)size) return wfail(w, "gguf writer: key '%s': array too large", key);
    wkv *kv = new_kv(w, key, GGUF_ARRAY);
    if (!kv) return -1;
    if (!put_u32(&kv->value, (uint32_t)elem_type) || !put_u64(&kv->value, n) ||
        !put(&kv->value, elems, (size_t)n * (size_t)size))
        return wfail(w, "gguf writer: out of memory");
    return 0;
}

int gguf_writer_add_str_array(gguf_writer *w, const char *key, const char *const *strs,
                              const size_t *lens, uint64_t n) {
    wkv *kv = new_kv(w, key, GGUF_ARRAY);
    if (!kv) return -1;
    if (!put_u32(&kv->value, GGUF_STRING) || !put_u64(&kv->value, n))
        return wfail(w, "gguf writer: out of memory");
    for (uint64_t i = 0; i < n; i++)
        if (!put_str(&kv->value, strs[i], lens ? lens[i] : strlen(strs[i])))
            return wfail(w, "gguf writer: out of memory");
    return 0;
}

int gguf_writer_set_alignment(gguf_writer *w, uint32_t alignment) {
    if (alignment == 0 || alignment > WRITER_MAX_ALIGNMENT || (alignment & (alignment - 1)))
        return wfail(w, "gguf writer: alignment %" PRIu32 " is not a power of two up to %u",
                     alignment, WRITER_MAX_ALIGNMENT);
    w->alignment = alignment;
    int i = find_key(w, "general.alignment");
    if (i < 0) return gguf_writer_add_u32(w, "general.alignment", alignment);
    wkv *kv = &w->kv[i];
    kv->type = GGUF_U32;
    kv->value.n = 0;
    if (!put_u32(&kv->value, alignment)) return wfail(w, "gguf writer: out of memory");
    return 0;
}

int gguf_writer_add_tensor(gguf_writer *w, const char *name, int type, int n_dims, const int64_t *ne,
                           const void *data, size_t nbytes) {
    if (!name || !*name) return wfail(w, "gguf writer: empty tensor name");
    for (int i = 0; i < w->n_t; i++)
        if (strcmp(w->t[i].name, name) == 0)
            return wfail(w, "gguf writer: duplicate tensor name '%s'", name);
    if (!type_block_size(type)) return wfail(w, "gguf writer: tensor '%s': unsupported type %d", name, type);
    if (n_dims < 1 || n_dims > TS_MAX_DIMS)
        return wfail(w, "gguf writer: tensor '%s': %d dimensions", name, n_dims);
    uint64_t rows = 1;
    for (int d = 0; d < n_dims; d++) {
        if (ne[d] <= 0) return wfail(w, "gguf writer: tensor '%s': dimension %d is %" PRId64, name, d, ne[d]);
        if (d > 0) {
            if ((uint64_t)ne[d] > UINT64_MAX / rows)
                return wfail(w, "gguf writer: tensor '%s': too many rows", name);
            rows *= (uint64_t)ne[d];
        }
    }
    uint64_t row_bytes = type_row_bytes(type, ne[0]);
    if (row_bytes == 0)
        return wfail(w, "gguf writer: tensor '%s': a row of %" PRId64 " is not whole %s blocks",
                     name, ne[0], type_name(type));
    if (rows > UINT64_MAX / row_bytes || row_bytes * rows != nbytes)
        return wfail(w, "gguf writer: tensor '%s': %zu data bytes given, the shape needs %" PRIu64,
                     name, nbytes, rows <= UINT64_MAX / row_bytes ? row_bytes * rows : UINT64_MAX);
    if (w->n_t == w->cap_t) {
        int cap = w->cap_t ? 2 * w->cap_t : 16;
        wtensor *p = realloc(w->t, (size_t)cap * sizeof *p);
        if (!p) return wfail(w, "gguf writer: out of memory");
        w->t = p;
        w->cap_t = cap;
    }
    wtensor *t = &w->t[w->n_t];
    memset(t, 0, sizeof *t);
    if (!(t->name = strdup(name))) return wfail(w, "gguf writer: out of memory");
    t->type = type;
    t->n_dims = n_dims;
    for (int d = 0; d < TS_MAX_DIMS; d++) t->ne[d] = d < n_dims ? ne[d] : 1;
    t->data = data;
    t->nbytes = nbytes;
    w->n_t++;
    return 0;
}

static uint64_t pad_to(uint64_t n, uint64_t align) { return (n + align - 1) / align * align; }

/* Writes n zero bytes. */
static bool put_zeros(FILE *f, uint64_t n) {
    static const uint8_t zeros[4096];
    while (n > 0) {
        size_t k = n < sizeof zeros ? (size_t)n : sizeof zeros;
        if (fwrite(zeros, 1, k, f) != k) return false;
        n -= k;
    }
    return true;
}

int gguf_writer_write(const gguf_writer *w, const char *path, ts_error *err) {
    if (w->failed) return ts_fail(err, "%s: %s", path, w->first_error.msg);
    bytes head = {0};
    bool ok = put(&head, "GGUF", 4) && put_u32(&head, 3) && put_u64(&head, (uint64_t)w->n_t) &&
              put_u64(&head, (uint64_t)w->n_kv);
    for (int i = 0; ok && i < w->n_kv; i++)
        ok = put_str(&head, w->kv[i].key, strlen(w->kv[i].key)) && put_u32(&head, (uint32_t)w->kv[i].type) &&
             put(&head, w->kv[i].value.p, w->kv[i].value.n);
    uint64_t offset = 0;
    for (int i = 0; ok && i < w->n_t; i++) {
        const wtensor *t = &w->t[i];
        ok = put_str(&head, t->name, strlen(t->name)) && put_u32(&head, (uint32_t)t->n_dims);
        for (int d = 0; ok && d < t->n_dims; d++) ok = put_u64(&head, (uint64_t)t->ne[d]);
        ok = ok && put_u32(&head, (uint32_t)t->type) && put_u64(&head, offset);
        offset = pad_to(offset + t->nbytes, w->alignment);
    }
    if (!ok) {
        free(head.p);
        return ts_fail(err, "%s: out of memory building the GGUF header", path);
    }
    FILE *f = fopen(path, "wb");
    if (!f) {
        int e = errno;
        free(head.p);
        return ts_fail(err, "%s: cannot create: %s", path, strerror(e));
    }
    /* Tensor data follows the header at the next multiple of the alignment, each tensor padded. */
    ok = fwrite(head.p, 1, head.n, f) == head.n;
    if (w->n_t > 0) ok = ok && put_zeros(f, pad_to(head.n, w->alignment) - head.n);
    for (int i = 0; ok && i < w->n_t; i++) {
        const wtensor *t = &w->t[i];
        ok = t->data ? fwrite(t->data, 1, t->nbytes, f) == t->nbytes : put_zeros(f, t->nbytes);
        ok = ok && put_zeros(f, pad_to(t->nbytes, w->alignment) - t->nbytes);
    }
    int e = errno;
    free(head.p);
    if (fclose(f) != 0 && ok) { ok = false; e = errno; }
    if (!ok) return ts_fail(err, "%s: write failed: %s", path, strerror(e));
    return 0;
}
