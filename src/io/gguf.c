/* GGUF v2/v3 reader. The file is mapped read-only; the metadata index and the tensor directory
 * point into the mapping. Nothing is trusted: every count, length and offset is checked against
 * the bytes that are actually left in the file before it is used or allocated for. */
#include "io/gguf.h"
#include "io/file.h"
#include "core/error.h"
#include "core/str.h"
#include "core/tensor_type.h"
#include "core/utf8.h"
#include <inttypes.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#define GGUF_DEFAULT_ALIGNMENT 32
#define GGUF_MAX_ALIGNMENT (1u << 20)
/* Lower bounds on the encoded size of one key/value pair (u64 key length, u32 type, a value)
 * and of one tensor info (u64 name length, u32 n_dims, one u64 dim, u32 type, u64 offset):
 * they bound the header counts by the file size before anything is allocated. */
#define MIN_KV_BYTES 12
#define MIN_TENSOR_INFO_BYTES 24

typedef struct gguf_kv {
    char *key;                  /* NUL-terminated copy */
    int type;                   /* enum gguf_vtype */
    const uint8_t *value;       /* scalar: its bytes; string: its u64 length; array: first element */
    int elem_type;              /* arrays only */
    uint64_t n;                 /* arrays only: element count */
    const uint8_t **strings;    /* string arrays only: where each element (its u64 length) starts */
} gguf_kv;

struct gguf_file {
    char *path;
    uint8_t *map;
    size_t size;
    bool borrowed;              /* gguf_open_memory: map is the caller's buffer, not an mmap */
    uint32_t version;
    uint32_t alignment;
    uint64_t data_offset;
    gguf_kv *kv;
    uint64_t n_kv;              /* pairs read completely */
    uint64_t kv_cap;            /* entries allocated (zeroed), what gguf_close frees */
    uint64_t *key_slots;        /* open-addressing hash of keys: kv index + 1, 0 = empty */
    uint64_t key_mask;
    tensor_dir tensors;
};

/* ---------------------------------------------------------------- little helpers */

int gguf_scalar_size(uint32_t type) {
    switch (type) {
    case GGUF_U8: case GGUF_I8: case GGUF_BOOL: return 1;
    case GGUF_U16: case GGUF_I16: return 2;
    case GGUF_U32: case GGUF_I32: case GGUF_F32: return 4;
    case GGUF_U64: case GGUF_I64: case GGUF_F64: return 8;
    case GGUF_STRING: case GGUF_ARRAY: return 0;
    default: return -1;
    }
}

static uint16_t rd16(const uint8_t *p) { uint16_t v; memcpy(&v, p, 2); return v; }
static uint32_t rd32(const uint8_t *p) { uint32_t v; memcpy(&v, p, 4); return v; }
static uint64_t rd64(const uint8_t *p) { uint64_t v; memcpy(&v, p, 8); return v; }

/* A scalar integer (or bool) value as i64; false for other types or a u64 above INT64_MAX. */
static bool scalar_i64(const uint8_t *p, int type, int64_t *out) {
    switch (type) {
    case GGUF_U8: case GGUF_BOOL: *out = p[0]; return true;
    case GGUF_I8: *out = (int8_t)p[0]; return true;
    case GGUF_U16: *out = rd16(p); return true;
    case GGUF_I16: *out = (int16_t)rd16(p); return true;
    case GGUF_U32: *out = rd32(p); return true;
    case GGUF_I32: *out = (int32_t)rd32(p); return true;
    case GGUF_I64: *out = (int64_t)rd64(p); return true;
    case GGUF_U64: {
        uint64_t v = rd64(p);
        if (v > (uint64_t)INT64_MAX) return false;
        *out = (int64_t)v;
        return true;
    }
    default: return false;
    }
}

/* A scalar number as f64: float types directly, integer types converted. */
static bool scalar_f64(const uint8_t *p, int type, double *out) {
    if (type == GGUF_F32) { float f; memcpy(&f, p, 4); *out = f; return true; }
    if (type == GGUF_F64) { memcpy(out, p, 8); return true; }
    if (type == GGUF_U64) { *out = (double)rd64(p); return true; }
    int64_t v;
    if (!scalar_i64(p, type, &v)) return false;
    *out = (double)v;
    return true;
}

static uint64_t hash_bytes(const void *s, size_t len) {
    const unsigned char *p = s;
    uint64_t h = 1469598103934665603ull;            /* FNV-1a */
    for (size_t i = 0; i < len; i++) { h ^= p[i]; h *= 1099511628211ull; }
    return h;
}

/* A name for an error message: at most ~60 bytes, with control characters and bytes that are not
 * UTF-8 shown as '?', so the message stays one printable line whatever the file holds. */
static const char *shown(char buf[80], const uint8_t *s, uint64_t len) {
    size_t in = 0, out = 0;
    while (in < len && out < 60) {
        uint32_t cp;
        int n = utf8_decode((const char *)s + in, len - in, &cp);
        if (n == 0 || cp < 0x20 || cp == 0x7F) {
            buf[out++] = '?';
            in += n ? (size_t)n : 1;
        } else {
            memcpy(buf + out, s + in, (size_t)n);
            out += (size_t)n;
            in += (size_t)n;
        }
    }
    strcpy(buf + out, in < len ? "..." : "");
    return buf;
}

/* ---------------------------------------------------------------- bounded reading */

typedef struct reader {
    const uint8_t *base;
    uint64_t size, pos;
    const char *path;
    ts_error *err;
} reader;

static uint64_t left(const reader *r) { return r->size - r->pos; }

/* Takes n bytes at the cursor; `what` names the field for the error message. */
static int take(reader *r, uint64_t n, const char *what, const uint8_t **out) {
    if (n > left(r)) {
        ts_fail(r->err, "%s: truncated: %s at byte %" PRIu64 " needs %" PRIu64
                " bytes but the file ends at %" PRIu64, r->path, what, r->pos, n, r->size);
        return -1;   /* spelled out so the compiler sees *out is set whenever 0 is returned */
    }
    *out = r->base + r->pos;
    r->pos += n;
    return 0;
}

static int take_u32(reader *r, const char *what, uint32_t *v) {
    const uint8_t *p;
    if (take(r, 4, what, &p)) return -1;
    *v = rd32(p);
    return 0;
}

static int take_u64(reader *r, const char *what, uint64_t *v) {
    const uint8_t *p;
    if (take(r, 8, what, &p)) return -1;
    *v = rd64(p);
    return 0;
}

static int take_string(reader *r, const char *what, const uint8_t **s, uint64_t *len) {
    uint64_t at = r->pos;
    if (take_u64(r, what, len)) return -1;
    if (*len > left(r))
        return ts_fail(r->err, "%s: %s: string length %" PRIu64 " at byte %" PRIu64
                       " runs past the end of the file (%" PRIu64 " bytes)",
                       r->path, what, *len, at, r->size);
    *s = r->base + r->pos;
    r->pos += *len;
    return 0;
}

/* Keys and tensor names must be non-empty UTF-8 without NUL (they become C strings). */
static int check_name(reader *r, const char *what, const uint8_t *s, uint64_t len) {
    char buf[80];
    if (len == 0) return ts_fail(r->err, "%s: %s is empty", r->path, what);
    if (memchr(s, 0, len))
        return ts_fail(r->err, "%s: %s '%s' contains a NUL byte", r->path, what, shown(buf, s, len));
    size_t bad;
    if (!utf8_valid((const char *)s, len, &bad))
        return ts_fail(r->err, "%s: %s '%s' is not valid UTF-8 (byte %zu)", r->path, what,
                       shown(buf, s, len), bad);
    return 0;
}

/* ---------------------------------------------------------------- metadata */

static const gguf_kv *find_kv(const gguf_file *g, const char *key) {
    if (!g || !key || !g->key_slots) return NULL;
    size_t len = strlen(key);
    for (uint64_t h = hash_bytes(key, len) & g->key_mask;; h = (h + 1) & g->key_mask) {
        uint64_t slot = g->key_slots[h];
        if (slot == 0) return NULL;
        if (strcmp(g->kv[slot - 1].key, key) == 0) return &g->kv[slot - 1];
    }
}

/* Reads the value of kv->type (a known type) at the cursor into kv; refuses arrays of arrays. */
static int read_value(reader *r, gguf_kv *kv, const char *what) {
    const uint8_t *p;
    char ctx[200];   /* what (< 160) plus a suffix */
    if (kv->type == GGUF_STRING) {
        uint64_t len;
        kv->value = r->base + r->pos;
        return take_string(r, what, &p, &len);
    }
    if (kv->type != GGUF_ARRAY) {
        if (take(r, (uint64_t)gguf_scalar_size(kv->type), what, &p)) return -1;
        kv->value = p;
        return 0;
    }
    uint32_t et;
    snprintf(ctx, sizeof ctx, "%s (array element type)", what);
    if (take_u32(r, ctx, &et)) return -1;
    if (et == GGUF_ARRAY)
        return ts_fail(r->err, "%s: %s is an array of arrays, which GGUF readers do not support",
                       r->path, what);
    int esize = gguf_scalar_size(et);
    if (esize < 0)
        return ts_fail(r->err, "%s: %s is an array of unknown value type %" PRIu32, r->path, what, et);
    snprintf(ctx, sizeof ctx, "%s (array length)", what);
    if (take_u64(r, ctx, &kv->n)) return -1;
    kv->elem_type = (int)et;
    kv->value = r->base + r->pos;
    if (et != GGUF_STRING) {
        if (kv->n > left(r) / (uint64_t)esize)
            return ts_fail(r->err, "%s: %s declares %" PRIu64 " elements of %d bytes at byte %" PRIu64
                           " but only %" PRIu64 " bytes are left in the file",
                           r->path, what, kv->n, esize, r->pos, left(r));
        r->pos += kv->n * (uint64_t)esize;
        return 0;
    }
    /* Each string takes at least its 8-byte length, which bounds the index allocation by the file. */
    if (kv->n > left(r) / 8)
        return ts_fail(r->err, "%s: %s declares %" PRIu64 " strings at byte %" PRIu64
                       " but only %" PRIu64 " bytes are left in the file",
                       r->path, what, kv->n, r->pos, left(r));
    if (kv->n > 0) {
        kv->strings = malloc((size_t)kv->n * sizeof *kv->strings);
        if (!kv->strings)
            return ts_fail(r->err, "%s: out of memory indexing %s (%" PRIu64 " strings)",
                           r->path, what, kv->n);
    }
    for (uint64_t i = 0; i < kv->n; i++) {
        uint64_t len;
        kv->strings[i] = r->base + r->pos;
        if (take_string(r, what, &p, &len)) return -1;
    }
    return 0;
}

static int read_metadata(reader *r, gguf_file *g, uint64_t n_kv) {
    char buf[80], what[160];
    g->kv = calloc(n_kv ? n_kv : 1, sizeof *g->kv);
    g->kv_cap = g->kv ? n_kv : 0;
    uint64_t slots = 16;
    while (slots < 2 * n_kv) slots *= 2;
    g->key_slots = calloc(slots, sizeof *g->key_slots);
    if (!g->kv || !g->key_slots)
        return ts_fail(r->err, "%s: out of memory for %" PRIu64 " metadata keys", r->path, n_kv);
    g->key_mask = slots - 1;
    for (uint64_t i = 0; i < n_kv; i++) {
        gguf_kv *kv = &g->kv[i];
        const uint8_t *key;
        uint64_t key_len;
        uint32_t type;
        snprintf(what, sizeof what, "metadata key #%" PRIu64, i);
        if (take_string(r, what, &key, &key_len) || check_name(r, what, key, key_len)) return -1;
        shown(buf, key, key_len);
        snprintf(what, sizeof what, "the type of key '%s'", buf);
        if (take_u32(r, what, &type)) return -1;
        if (gguf_scalar_size(type) < 0)
            return ts_fail(r->err, "%s: key '%s' has unknown value type %" PRIu32, r->path, buf, type);
        kv->type = (int)type;
        snprintf(what, sizeof what, "the value of key '%s'", buf);
        if (read_value(r, kv, what)) return -1;

        uint64_t h = hash_bytes(key, (size_t)key_len) & g->key_mask;
        for (; g->key_slots[h]; h = (h + 1) & g->key_mask) {
            const char *other = g->kv[g->key_slots[h] - 1].key;
            if (strlen(other) == key_len && memcmp(other, key, key_len) == 0)
                return ts_fail(r->err, "%s: duplicate metadata key '%s'", r->path, buf);
        }
        if (!(kv->key = str_copy(key, (size_t)key_len)))
            return ts_fail(r->err, "%s: out of memory", r->path);
        g->key_slots[h] = i + 1;
        g->n_kv = i + 1;
    }
    return 0;
}

static int read_alignment(reader *r, gguf_file *g) {
    g->alignment = GGUF_DEFAULT_ALIGNMENT;
    const gguf_kv *kv = find_kv(g, "general.alignment");
    if (!kv) return 0;
    int64_t a;
    if (kv->type == GGUF_BOOL || kv->type == GGUF_F32 || kv->type == GGUF_F64 || gguf_scalar_size(kv->type) <= 0)
        return ts_fail(r->err, "%s: general.alignment has value type %d, expected an integer",
                       r->path, kv->type);
    if (!scalar_i64(kv->value, kv->type, &a))   /* a u64 above INT64_MAX */
        return ts_fail(r->err, "%s: general.alignment is out of range; it must be a power of two"
                       " from 1 to %u", r->path, GGUF_MAX_ALIGNMENT);
    if (a <= 0 || a > GGUF_MAX_ALIGNMENT || (a & (a - 1)) != 0)
        return ts_fail(r->err, "%s: general.alignment is %" PRId64 "; it must be a power of two"
                       " from 1 to %u", r->path, a, GGUF_MAX_ALIGNMENT);
    g->alignment = (uint32_t)a;
    return 0;
}

/* ---------------------------------------------------------------- tensors */

typedef struct span { uint64_t offset, nbytes; int index; } span;

static int span_cmp(const void *a, const void *b) {
    const span *x = a, *y = b;
    if (x->offset != y->offset) return x->offset < y->offset ? -1 : 1;
    return x->index - y->index;
}

static int read_tensor_info(reader *r, gguf_file *g, int i, span *sp) {
    tensor_entry *t = &g->tensors.t[i];
    const uint8_t *name;
    uint64_t name_len;
    char what[160], buf[80];
    const char *path = r->path;
    snprintf(what, sizeof what, "tensor #%d name", i);
    if (take_string(r, what, &name, &name_len) || check_name(r, what, name, name_len)) return -1;
    shown(buf, name, name_len);
    if (!(t->name = str_copy(name, (size_t)name_len))) return ts_fail(r->err, "%s: out of memory", path);

    uint32_t n_dims;
    snprintf(what, sizeof what, "the dimension count of tensor '%s'", buf);
    if (take_u32(r, what, &n_dims)) return -1;
    if (n_dims < 1 || n_dims > TS_MAX_DIMS)
        return ts_fail(r->err, "%s: tensor '%s' has %" PRIu32 " dimensions (1 to %d are supported)",
                       path, buf, n_dims, TS_MAX_DIMS);
    t->n_dims = (int)n_dims;
    int64_t n_elems = 1;
    for (int d = 0; d < TS_MAX_DIMS; d++) t->ne[d] = 1;
    for (int d = 0; d < (int)n_dims; d++) {
        uint64_t ne;
        snprintf(what, sizeof what, "dimension %d of tensor '%s'", d, buf);
        if (take_u64(r, what, &ne)) return -1;
        if (ne == 0 || ne > (uint64_t)INT64_MAX)
            return ts_fail(r->err, "%s: tensor '%s' has dimension %d = %" PRId64
                           " (must be positive)", path, buf, d, (int64_t)ne);
        if ((int64_t)ne > INT64_MAX / n_elems)
            return ts_fail(r->err, "%s: tensor '%s' has too many elements (the dimensions' product"
                           " overflows 64 bits)", path, buf);
        n_elems *= (int64_t)ne;
        t->ne[d] = (int64_t)ne;
    }

    uint32_t type;
    snprintf(what, sizeof what, "the type of tensor '%s'", buf);
    if (take_u32(r, what, &type)) return -1;
    /* only the ggml type ids GGUF defines (ids from TS_FIRST_INTERNAL up are tessera's own:
     * safetensors dtypes, Q4NX) */
    int block_size = type < TS_FIRST_INTERNAL ? type_block_size((int)type) : 0;
    if (block_size == 0)
        return ts_fail(r->err, "%s: tensor '%s' has unknown or unsupported type id %" PRIu32,
                       path, buf, type);
    t->type = (int)type;
    if (t->ne[0] % block_size != 0)
        return ts_fail(r->err, "%s: tensor '%s' has rows of %" PRId64 " weights, not a multiple of"
                       " the %s block size %d", path, buf, t->ne[0], type_name((int)type), block_size);
    uint64_t row_bytes = type_row_bytes((int)type, t->ne[0]);
    uint64_t n_rows = (uint64_t)(n_elems / t->ne[0]);
    if (row_bytes == 0 || n_rows > UINT64_MAX / row_bytes || row_bytes * n_rows > SIZE_MAX)
        return ts_fail(r->err, "%s: tensor '%s' is too large (its byte size overflows)", path, buf);
    t->nbytes = (size_t)(row_bytes * n_rows);

    uint64_t offset;
    snprintf(what, sizeof what, "the data offset of tensor '%s'", buf);
    if (take_u64(r, what, &offset)) return -1;
    if (offset % g->alignment != 0)
        return ts_fail(r->err, "%s: tensor '%s' data offset %" PRIu64 " is not a multiple of the"
                       " alignment %" PRIu32, path, buf, offset, g->alignment);
    sp->offset = offset;
    sp->nbytes = t->nbytes;
    sp->index = i;
    return 0;
}

static int read_tensors(reader *r, gguf_file *g, uint64_t n_tensors) {
    const char *path = r->path;
    char buf[80], buf2[80];
    g->tensors.t = calloc(n_tensors ? n_tensors : 1, sizeof *g->tensors.t);
    g->tensors.n = (int)n_tensors;
    span *spans = calloc(n_tensors ? n_tensors : 1, sizeof *spans);
    uint64_t slots = 16;
    while (slots < 2 * n_tensors) slots *= 2;
    uint64_t *name_slots = calloc(slots, sizeof *name_slots);   /* duplicate-name check */
    int rc = -1;
    if (!g->tensors.t || !spans || !name_slots) {
        ts_fail(r->err, "%s: out of memory for %" PRIu64 " tensors", path, n_tensors);
        goto done;
    }
    for (int i = 0; i < (int)n_tensors; i++) {
        if (read_tensor_info(r, g, i, &spans[i])) goto done;
        const char *name = g->tensors.t[i].name;
        uint64_t h = hash_bytes(name, strlen(name)) & (slots - 1);
        for (; name_slots[h]; h = (h + 1) & (slots - 1)) {
            if (strcmp(g->tensors.t[name_slots[h] - 1].name, name) == 0) {
                ts_fail(r->err, "%s: duplicate tensor name '%s'", path,
                        shown(buf, (const uint8_t *)name, strlen(name)));
                goto done;
            }
        }
        name_slots[h] = (uint64_t)i + 1;
    }

    /* The data section starts at the next multiple of the alignment; a file without tensors may
     * end before it. pos <= size and alignment <= 1 MiB, so this cannot overflow. */
    g->data_offset = (r->pos + g->alignment - 1) / g->alignment * g->alignment;
    for (int i = 0; i < (int)n_tensors; i++) {
        tensor_entry *t = &g->tensors.t[i];
        uint64_t off = spans[i].offset;
        if (g->data_offset > r->size || off > r->size - g->data_offset ||
            t->nbytes > r->size - g->data_offset - off) {
            ts_fail(r->err, "%s: tensor '%s' data [offset %" PRIu64 " + %" PRIu64 ", %zu bytes)"
                    " runs past the end of the file (%" PRIu64 " bytes)", path,
                    shown(buf, (const uint8_t *)t->name, strlen(t->name)),
                    g->data_offset, off, t->nbytes, r->size);
            goto done;
        }
        t->data = r->base + g->data_offset + off;
    }
    qsort(spans, n_tensors, sizeof *spans, span_cmp);
    for (uint64_t k = 0; k + 1 < n_tensors; k++) {
        if (spans[k + 1].offset < spans[k].offset + spans[k].nbytes) {
            const tensor_entry *a = &g->tensors.t[spans[k].index], *b = &g->tensors.t[spans[k + 1].index];
            ts_fail(r->err, "%s: tensors '%s' [%" PRIu64 ", %" PRIu64 ") and '%s' [%" PRIu64
                    ", %" PRIu64 ") overlap in the data section", path,
                    shown(buf, (const uint8_t *)a->name, strlen(a->name)),
                    spans[k].offset, spans[k].offset + spans[k].nbytes,
                    shown(buf2, (const uint8_t *)b->name, strlen(b->name)),
                    spans[k + 1].offset, spans[k + 1].offset + spans[k + 1].nbytes);
            goto done;
        }
    }
    rc = 0;
done:
    free(spans);
    free(name_slots);
    return rc;
}

/* ---------------------------------------------------------------- open / close */

static int parse(gguf_file *g, ts_error *err) {
    reader r = { g->map, g->size, 0, g->path, err };
    const uint8_t *magic;
    if (take(&r, 4, "the magic", &magic)) return -1;
    if (memcmp(magic, "GGUF", 4) != 0)
        return ts_fail(err, "%s: not a GGUF file (magic bytes %02x %02x %02x %02x, expected 'GGUF')",
                       g->path, magic[0], magic[1], magic[2], magic[3]);
    if (take_u32(&r, "the version", &g->version)) return -1;
    if (g->version != 2 && g->version != 3) {
        uint32_t swapped = __builtin_bswap32(g->version);
        return ts_fail(err, "%s: unsupported GGUF version %" PRIu32 " (only versions 2 and 3 are"
                       " supported)%s", g->path, g->version,
                       swapped == 2 || swapped == 3 ? "; this looks like a big-endian GGUF file" : "");
    }
    uint64_t n_tensors, n_kv;
    if (take_u64(&r, "the tensor count", &n_tensors) || take_u64(&r, "the metadata count", &n_kv))
        return -1;
    uint64_t rest = left(&r);
    if (n_kv > rest / MIN_KV_BYTES || n_tensors > rest / MIN_TENSOR_INFO_BYTES ||
        n_kv * MIN_KV_BYTES + n_tensors * MIN_TENSOR_INFO_BYTES > rest)
        return ts_fail(err, "%s: header declares %" PRIu64 " metadata keys and %" PRIu64
                       " tensors, more than the %" PRIu64 " bytes after the header can hold",
                       g->path, n_kv, n_tensors, rest);
    if (n_tensors > INT_MAX)
        return ts_fail(err, "%s: too many tensors (%" PRIu64 ")", g->path, n_tensors);
    if (read_metadata(&r, g, n_kv) || read_alignment(&r, g)) return -1;
    return read_tensors(&r, g, n_tensors);
}

/* A gguf_file over map[0..size) (name: the path in messages), parsed into *out. A borrowed map is
 * the caller's; any other is unmapped by gguf_close, and here on failure. */
static int open_map(const char *name, uint8_t *map, size_t size, bool borrowed, gguf_file **out, ts_error *err) {
    gguf_file *g = calloc(1, sizeof *g);
    if (!g || !(g->path = strdup(name))) {
        free(g);
        if (!borrowed) file_unmap(map, size);
        return ts_fail(err, "%s: out of memory", name);
    }
    g->map = map;
    g->size = size;
    g->borrowed = borrowed;
    if (parse(g, err)) {
        gguf_close(g);
        return -1;
    }
    *out = g;
    return 0;
}

int gguf_open(const char *path, gguf_file **out, ts_error *err) {
    *out = NULL;
    void *map;
    size_t size;
    if (file_map(path, 24, "a GGUF file (the header alone is 24 bytes)", &map, &size, err) != 0) return -1;
    return open_map(path, map, size, false, out, err);
}

int gguf_open_memory(const void *data, size_t len, const char *name, gguf_file **out, ts_error *err) {
    *out = NULL;
    if (len < 24)
        return ts_fail(err, "%s: too small to be a GGUF file (%zu bytes; the header alone is 24)",
                       name, len);
    return open_map(name, (uint8_t *)data, len, true, out, err);   /* only read, never written */
}

void gguf_release(const gguf_file *g, const void *p, size_t n) {
    if (g && !g->borrowed) file_map_release(g->map, g->size, p, n);
}

void gguf_close(gguf_file *g) {
    if (!g) return;
    if (g->kv) {
        /* Frees partly read pairs too: one may own a string index but no key yet. */
        for (uint64_t i = 0; i < g->kv_cap; i++) {
            free(g->kv[i].key);
            free(g->kv[i].strings);
        }
    }
    free(g->kv);
    free(g->key_slots);
    tensor_dir_free(&g->tensors);
    if (!g->borrowed) file_unmap(g->map, g->size);
    free(g->path);
    free(g);
}

/* ---------------------------------------------------------------- accessors */

const char *gguf_path(const gguf_file *g) { return g->path; }
uint32_t gguf_version(const gguf_file *g) { return g->version; }
const tensor_dir *gguf_tensors(const gguf_file *g) { return &g->tensors; }
uint32_t gguf_alignment(const gguf_file *g) { return g->alignment; }
uint64_t gguf_data_offset(const gguf_file *g) { return g->data_offset; }

bool gguf_has(const gguf_file *g, const char *key) { return find_kv(g, key) != NULL; }

int gguf_key_type(const gguf_file *g, const char *key) {
    const gguf_kv *kv = find_kv(g, key);
    return kv ? kv->type : -1;
}

bool gguf_get_i64(const gguf_file *g, const char *key, int64_t *out) {
    const gguf_kv *kv = find_kv(g, key);
    return kv && scalar_i64(kv->value, kv->type, out);
}

bool gguf_get_f32(const gguf_file *g, const char *key, float *out) {
    const gguf_kv *kv = find_kv(g, key);
    double v;
    if (!kv || kv->type == GGUF_BOOL || !scalar_f64(kv->value, kv->type, &v)) return false;
    *out = (float)v;
    return true;
}

bool gguf_get_bool(const gguf_file *g, const char *key, bool *out) {
    const gguf_kv *kv = find_kv(g, key);
    int64_t v;
    if (!kv || !scalar_i64(kv->value, kv->type, &v)) return false;   /* bool, or an integer flag */
    *out = v != 0;
    return true;
}

bool gguf_get_str(const gguf_file *g, const char *key, const char **s, size_t *len) {
    const gguf_kv *kv = find_kv(g, key);
    if (!kv || kv->type != GGUF_STRING) return false;
    *len = (size_t)rd64(kv->value);
    *s = (const char *)kv->value + 8;
    return true;
}

bool gguf_get_arr(const gguf_file *g, const char *key, int *elem_type, uint64_t *n) {
    const gguf_kv *kv = find_kv(g, key);
    if (!kv || kv->type != GGUF_ARRAY) return false;
    *elem_type = kv->elem_type;
    *n = kv->n;
    return true;
}

/* Element i of a numeric array, or NULL. */
static const uint8_t *numeric_elem(const gguf_file *g, const char *key, uint64_t i, int *type) {
    const gguf_kv *kv = find_kv(g, key);
    if (!kv || kv->type != GGUF_ARRAY || i >= kv->n || gguf_scalar_size(kv->elem_type) <= 0) return NULL;
    *type = kv->elem_type;
    return kv->value + i * (uint64_t)gguf_scalar_size(kv->elem_type);
}

bool gguf_arr_i64(const gguf_file *g, const char *key, uint64_t i, int64_t *out) {
    int type;
    const uint8_t *p = numeric_elem(g, key, i, &type);
    return p && scalar_i64(p, type, out);
}

bool gguf_arr_f64(const gguf_file *g, const char *key, uint64_t i, double *out) {
    int type;
    const uint8_t *p = numeric_elem(g, key, i, &type);
    return p && type != GGUF_BOOL && scalar_f64(p, type, out);
}

bool gguf_arr_str(const gguf_file *g, const char *key, uint64_t i, const char **s, size_t *len) {
    const gguf_kv *kv = find_kv(g, key);
    if (!kv || kv->type != GGUF_ARRAY || kv->elem_type != GGUF_STRING || i >= kv->n) return false;
    *len = (size_t)rd64(kv->strings[i]);
    *s = (const char *)kv->strings[i] + 8;
    return true;
}

uint64_t gguf_n_keys(const gguf_file *g) { return g->n_kv; }

const char *gguf_key_at(const gguf_file *g, uint64_t i) {
    return i < g->n_kv ? g->kv[i].key : NULL;
}
