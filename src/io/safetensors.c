/* Safetensors reader: single files (any extension) and Hugging Face folders, plain or sharded. */
#include "io/safetensors.h"
#include "io/file.h"
#include "core/error.h"
#include "core/str.h"
#include "io/json.h"
#include "core/tensor_type.h"
#include <dirent.h>
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* A real header is a few hundred KB even for thousands of tensors; more is a damaged file. */
#define MAX_HEADER_BYTES ((uint64_t)100 << 20)

static const struct dtype_info {
    const char *name;
    int type;
    size_t size;
} dtypes[] = {
    { "F32", TS_F32, 4 },   { "F16", TS_F16, 2 },   { "BF16", TS_BF16, 2 }, { "F64", TS_F64, 8 },
    { "I8", TS_I8, 1 },     { "U8", TS_U8, 1 },     { "I16", TS_I16, 2 },   { "U16", TS_U16, 2 },
    { "I32", TS_I32, 4 },   { "U32", TS_U32, 4 },   { "I64", TS_I64, 8 },   { "U64", TS_U64, 8 },
    { "BOOL", TS_BOOL, 1 }, { "F8_E4M3", TS_F8_E4M3, 1 }, { "F8_E5M2", TS_F8_E5M2, 1 },
};
#define N_DTYPES (sizeof dtypes / sizeof dtypes[0])

size_t safetensors_type_size(int type) {
    for (size_t i = 0; i < N_DTYPES; i++)
        if (dtypes[i].type == type) return dtypes[i].size;
    return 0;
}

const char *safetensors_type_name(int type) {
    for (size_t i = 0; i < N_DTYPES; i++)
        if (dtypes[i].type == type) return dtypes[i].name;
    return "?";
}

static const struct dtype_info *dtype_by_name(const char *s, size_t len) {
    for (size_t i = 0; i < N_DTYPES; i++)
        if (strlen(dtypes[i].name) == len && memcmp(dtypes[i].name, s, len) == 0) return &dtypes[i];
    return NULL;
}

/* One mapped file and the tensors its header declares, in header order. */
typedef struct shard {
    char *path;
    void *map;
    size_t size;
    tensor_entry *t;
    int n;
    const tensor_entry **by_name;   /* t sorted by name, for duplicate checks and lookups */
} shard;

struct safetensors {
    shard *shards;
    int n_shards;
    tensor_dir dir;
    char **meta_keys, **meta_vals;
    int n_meta;
    void **copies;                  /* aligned copies of tensors the file left misaligned */
    int n_copies;
};

void safetensors_release(const safetensors *s, const void *p, size_t n) {
    for (int i = 0; s && i < s->n_shards; i++) file_map_release(s->shards[i].map, s->shards[i].size, p, n);
}

static char *join_path(const char *dir, const char *name) {
    size_t a = strlen(dir), b = strlen(name);
    char *p = malloc(a + b + 2);
    if (!p) return NULL;
    memcpy(p, dir, a);
    size_t n = a;
    if (a && dir[a - 1] != '/') p[n++] = '/';
    memcpy(p + n, name, b + 1);
    return p;
}

static int cmp_entry_name(const void *a, const void *b) {
    return strcmp((*(const tensor_entry *const *)a)->name, (*(const tensor_entry *const *)b)->name);
}

static const tensor_entry *shard_find(const shard *sh, const char *name) {
    tensor_entry key = { .name = (char *)name };
    const tensor_entry *kp = &key;
    const tensor_entry **hit = bsearch(&kp, sh->by_name, (size_t)sh->n, sizeof *sh->by_name,
                                       cmp_entry_name);
    return hit ? *hit : NULL;
}

static void shard_free(shard *sh) {
    for (int i = 0; i < sh->n; i++) free(sh->t[i].name);
    free(sh->t);
    free(sh->by_name);
    file_unmap(sh->map, sh->size);
    free(sh->path);
    memset(sh, 0, sizeof *sh);
}

static bool is_uint(const json_value *v) {
    return v && v->type == JSON_NUMBER && v->is_integer && v->integer >= 0;
}

typedef struct span { uint64_t begin, end; int index; } span;

static int cmp_span(const void *a, const void *b) {
    const span *x = a, *y = b;
    if (x->begin != y->begin) return x->begin < y->begin ? -1 : 1;
    if (x->end != y->end) return x->end < y->end ? -1 : 1;
    return 0;
}

/* Fills entry from one header member; begin/end are the data offsets. */
static int parse_tensor(const char *path, const char *name, const json_value *info,
                        uint64_t data_size, tensor_entry *e, uint64_t *begin, uint64_t *end,
                        ts_error *err) {
    if (info->type != JSON_OBJECT)
        return ts_fail(err, "%s: tensor '%s': expected an object with dtype, shape and data_offsets",
                       path, name);
    const json_value *dtype = json_get(info, "dtype");
    const json_value *shape = json_get(info, "shape");
    const json_value *offsets = json_get(info, "data_offsets");
    if (!dtype || dtype->type != JSON_STRING)
        return ts_fail(err, "%s: tensor '%s': missing \"dtype\" string", path, name);
    const struct dtype_info *dt = dtype_by_name(dtype->str, dtype->len);
    if (!dt) {
        if (strlen(dtype->str) != dtype->len)
            return ts_fail(err, "%s: tensor '%s': unknown dtype", path, name);
        return ts_fail(err, "%s: tensor '%s': unknown dtype \"%s\"", path, name, dtype->str);
    }
    if (!shape || shape->type != JSON_ARRAY)
        return ts_fail(err, "%s: tensor '%s': missing \"shape\" array", path, name);
    if (shape->n > TS_MAX_DIMS)
        return ts_fail(err, "%s: tensor '%s': %zu dimensions (at most %d are supported)", path, name,
                       shape->n, TS_MAX_DIMS);
    uint64_t count = 1;
    e->n_dims = (int)shape->n;
    for (int d = 0; d < TS_MAX_DIMS; d++) e->ne[d] = 1;
    for (size_t d = 0; d < shape->n; d++) {
        const json_value *dim = &shape->items[d];
        if (!is_uint(dim))
            return ts_fail(err, "%s: tensor '%s': shape[%zu] is not a non-negative integer", path,
                           name, d);
        if (__builtin_mul_overflow(count, (uint64_t)dim->integer, &count))
            return ts_fail(err, "%s: tensor '%s': shape overflows 64 bits", path, name);
        e->ne[shape->n - 1 - d] = dim->integer;   /* safetensors lists the outermost first */
    }
    uint64_t nbytes;
    if (__builtin_mul_overflow(count, (uint64_t)dt->size, &nbytes))
        return ts_fail(err, "%s: tensor '%s': size overflows 64 bits", path, name);
    if (!offsets || offsets->type != JSON_ARRAY || offsets->n != 2 ||
        !is_uint(&offsets->items[0]) || !is_uint(&offsets->items[1]))
        return ts_fail(err, "%s: tensor '%s': \"data_offsets\" must be [begin, end] "
                       "(non-negative integers)", path, name);
    *begin = (uint64_t)offsets->items[0].integer;
    *end = (uint64_t)offsets->items[1].integer;
    if (*end < *begin)
        return ts_fail(err, "%s: tensor '%s': data_offsets end %llu is before begin %llu", path,
                       name, (unsigned long long)*end, (unsigned long long)*begin);
    if (*end > data_size)
        return ts_fail(err, "%s: tensor '%s': data_offsets end %llu is past the end of the data "
                       "(%llu bytes)", path, name, (unsigned long long)*end,
                       (unsigned long long)data_size);
    if (*end - *begin != nbytes)
        return ts_fail(err, "%s: tensor '%s': data_offsets span %llu bytes but %s shape needs %llu",
                       path, name, (unsigned long long)(*end - *begin), dt->name,
                       (unsigned long long)nbytes);
    e->type = dt->type;
    e->nbytes = (size_t)nbytes;
    return 0;
}

/* Validates the header and fills sh's tensors; data is the start of the data buffer. */
static int parse_header(shard *sh, const json_value *root, const uint8_t *data,
                        uint64_t data_size, span **spans_out,
                        json_value const **metadata, ts_error *err) {
    const char *path = sh->path;
    if (root->type != JSON_OBJECT) return ts_fail(err, "%s: header is not a JSON object", path);
    *metadata = NULL;
    size_t n_tensors = 0;
    for (size_t i = 0; i < root->n; i++) {
        if (strcmp(root->keys[i], "__metadata__") == 0 && root->key_lens[i] == 12) {
            if (*metadata) return ts_fail(err, "%s: \"__metadata__\" appears twice", path);
            *metadata = &root->items[i];
        } else {
            n_tensors++;
        }
    }
    if (*metadata) {
        const json_value *m = *metadata;
        if (m->type != JSON_OBJECT)
            return ts_fail(err, "%s: \"__metadata__\" is not an object", path);
        for (size_t i = 0; i < m->n; i++)
            if (m->items[i].type != JSON_STRING)
                return ts_fail(err, "%s: \"__metadata__\" value of '%s' is not a string", path,
                               m->keys[i]);
    }
    if (n_tensors > INT32_MAX) return ts_fail(err, "%s: too many tensors", path);

    sh->t = calloc(n_tensors ? n_tensors : 1, sizeof *sh->t);
    span *spans = calloc(n_tensors ? n_tensors : 1, sizeof *spans);
    *spans_out = spans;
    if (!sh->t || !spans) return ts_fail(err, "%s: out of memory", path);
    for (size_t i = 0; i < root->n; i++) {
        if (&root->items[i] == *metadata) continue;
        const char *name = root->keys[i];
        if (strlen(name) != root->key_lens[i])
            return ts_fail(err, "%s: a tensor name contains a NUL character", path);
        tensor_entry *e = &sh->t[sh->n];
        span *sp = &spans[sh->n];
        if (parse_tensor(path, name, &root->items[i], data_size, e, &sp->begin, &sp->end, err))
            return -1;
        e->data = data + sp->begin;   /* parse_tensor checked begin <= end <= data_size */
        e->name = str_copy(name, root->key_lens[i]);
        if (!e->name) return ts_fail(err, "%s: out of memory", path);
        sp->index = sh->n;
        sh->n++;
    }

    sh->by_name = malloc((sh->n ? sh->n : 1) * sizeof *sh->by_name);
    if (!sh->by_name) return ts_fail(err, "%s: out of memory", path);
    for (int i = 0; i < sh->n; i++) sh->by_name[i] = &sh->t[i];
    qsort(sh->by_name, (size_t)sh->n, sizeof *sh->by_name, cmp_entry_name);
    for (int i = 1; i < sh->n; i++)
        if (strcmp(sh->by_name[i - 1]->name, sh->by_name[i]->name) == 0)
            return ts_fail(err, "%s: tensor '%s' appears twice in the header", path,
                           sh->by_name[i]->name);

    /* Empty tensors occupy no bytes, so they cannot overlap anything. */
    qsort(spans, (size_t)sh->n, sizeof *spans, cmp_span);
    const span *prev = NULL;
    for (int i = 0; i < sh->n; i++) {
        if (spans[i].begin == spans[i].end) continue;
        if (prev && spans[i].begin < prev->end)
            return ts_fail(err, "%s: tensors '%s' and '%s' overlap (bytes %llu..%llu and %llu..%llu)",
                           path, sh->t[prev->index].name, sh->t[spans[i].index].name,
                           (unsigned long long)prev->begin, (unsigned long long)prev->end,
                           (unsigned long long)spans[i].begin, (unsigned long long)spans[i].end);
        prev = &spans[i];
    }
    return 0;
}

/* Maps path and validates its header; sh owns everything it points to, even on failure. */
static int shard_open(shard *sh, const char *path, const json_value **metadata_out,
                      json_value **header_out, ts_error *err) {
    memset(sh, 0, sizeof *sh);
    *header_out = NULL;
    sh->path = str_copy(path, strlen(path));
    if (!sh->path) return ts_fail(err, "%s: out of memory", path);
    void *map;
    if (file_map(path, 8, "a safetensors file", &map, &sh->size, err) != 0) return -1;
    sh->map = map;

    const uint8_t *bytes = map;
    uint64_t header_len = 0;
    for (int i = 7; i >= 0; i--) header_len = header_len << 8 | bytes[i];
    if (header_len > sh->size - 8)
        return ts_fail(err, "%s: header length %llu is larger than the file (%zu bytes) allows; "
                       "truncated or not a safetensors file", path,
                       (unsigned long long)header_len, sh->size);
    if (header_len > MAX_HEADER_BYTES)
        return ts_fail(err, "%s: header length %llu is implausibly large (limit %llu)", path,
                       (unsigned long long)header_len, (unsigned long long)MAX_HEADER_BYTES);
    ts_error jerr;
    json_value *root;
    if (json_parse((const char *)bytes + 8, (size_t)header_len, &root, &jerr))
        return ts_fail(err, "%s: header JSON (starting at byte 8): %s", path, jerr.msg);
    *header_out = root;

    uint64_t data_size = sh->size - 8 - header_len;
    span *spans = NULL;
    int rc = parse_header(sh, root, bytes + 8 + header_len, data_size, &spans, metadata_out, err);
    free(spans);
    return rc;
}

/* Copies each tensor the file left misaligned for its element size (only when a header length is
 * not a multiple of 8), so kernels may load elements through typed pointers. An empty tensor's
 * pointer is moved down to the alignment instead (still inside the page-aligned mapping; nothing
 * is read through it), so the promise holds for every tensor (found by fuzz_safetensors). */
static int align_tensors(safetensors *s, ts_error *err) {
    for (int i = 0; i < s->dir.n; i++) {
        tensor_entry *e = &s->dir.t[i];
        size_t align = safetensors_type_size(e->type);
        if (align <= 1 || (uintptr_t)e->data % align == 0) continue;
        if (e->nbytes == 0) {
            e->data -= (uintptr_t)e->data % align;
            continue;
        }
        void **nc = realloc(s->copies, (size_t)(s->n_copies + 1) * sizeof *nc);
        if (!nc) return ts_fail(err, "tensor '%s': out of memory", e->name);
        s->copies = nc;
        void *copy = malloc(e->nbytes);
        if (!copy) return ts_fail(err, "tensor '%s': out of memory for an aligned copy", e->name);
        memcpy(copy, e->data, e->nbytes);
        s->copies[s->n_copies++] = copy;
        e->data = copy;
    }
    return 0;
}

static int copy_metadata(safetensors *s, const json_value *m, const char *path, ts_error *err) {
    if (!m || m->n == 0) return 0;
    s->meta_keys = calloc(m->n, sizeof *s->meta_keys);
    s->meta_vals = calloc(m->n, sizeof *s->meta_vals);
    if (!s->meta_keys || !s->meta_vals) return ts_fail(err, "%s: out of memory", path);
    for (size_t i = 0; i < m->n; i++) {
        s->meta_keys[i] = str_copy(m->keys[i], m->key_lens[i]);
        s->meta_vals[i] = str_copy(m->items[i].str, m->items[i].len);
        s->n_meta++;
        if (!s->meta_keys[i] || !s->meta_vals[i]) return ts_fail(err, "%s: out of memory", path);
    }
    return 0;
}

void safetensors_close(safetensors *s) {
    if (!s) return;
    tensor_dir_free(&s->dir);
    for (int i = 0; i < s->n_shards; i++) shard_free(&s->shards[i]);
    free(s->shards);
    for (int i = 0; i < s->n_meta; i++) {
        free(s->meta_keys[i]);
        free(s->meta_vals[i]);
    }
    free(s->meta_keys);
    free(s->meta_vals);
    for (int i = 0; i < s->n_copies; i++) free(s->copies[i]);
    free(s->copies);
    free(s);
}

int safetensors_open(const char *path, safetensors **out, ts_error *err) {
    *out = NULL;
    safetensors *s = calloc(1, sizeof *s);
    if (!s || !(s->shards = calloc(1, sizeof *s->shards))) {
        free(s);
        return ts_fail(err, "%s: out of memory", path);
    }
    s->n_shards = 1;
    shard *sh = &s->shards[0];
    const json_value *metadata = NULL;
    json_value *header = NULL;
    int rc = shard_open(sh, path, &metadata, &header, err);
    if (rc == 0) rc = copy_metadata(s, metadata, path, err);
    json_free(header);
    if (rc == 0) {
        /* The directory takes the shard's entries (and their names) over. */
        s->dir.t = sh->t;
        s->dir.n = sh->n;
        sh->t = NULL;
        sh->n = 0;
        free(sh->by_name);
        sh->by_name = NULL;
        rc = align_tensors(s, err);
    }
    if (rc) {
        safetensors_close(s);
        return -1;
    }
    *out = s;
    return 0;
}

/* ---- folders ---- */

static bool is_regular_file(const char *path) {
    struct stat st;
    return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

/* A shard name from the index must name a file directly inside the folder. */
static bool safe_file_name(const char *name, size_t len) {
    if (len == 0 || strlen(name) != len) return false;
    if (strcmp(name, ".") == 0 || strcmp(name, "..") == 0) return false;
    return strchr(name, '/') == NULL && strchr(name, '\\') == NULL;
}

static int cmp_str(const void *a, const void *b) {
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static int open_sharded(const char *dir, const char *index_path, safetensors **out, ts_error *err) {
    char *text = NULL;
    size_t len = 0;
    json_value *index = NULL;
    const char **files = NULL;
    safetensors *s = NULL;
    int rc = -1;
    ts_error jerr;

    if (file_read(index_path, &text, &len, err)) goto done;
    if (json_parse(text, len, &index, &jerr)) {
        ts_fail(err, "%s: %s", index_path, jerr.msg);
        goto done;
    }
    const json_value *map = json_get(index, "weight_map");
    if (!map || map->type != JSON_OBJECT) {
        ts_fail(err, "%s: no \"weight_map\" object", index_path);
        goto done;
    }
    if (map->n == 0 || map->n > INT32_MAX) {
        ts_fail(err, "%s: \"weight_map\" lists %zu tensors", index_path, map->n);
        goto done;
    }
    files = malloc(map->n * sizeof *files);
    if (!files) {
        ts_fail(err, "%s: out of memory", index_path);
        goto done;
    }
    for (size_t i = 0; i < map->n; i++) {
        const json_value *f = &map->items[i];
        if (strlen(map->keys[i]) != map->key_lens[i]) {
            ts_fail(err, "%s: a tensor name contains a NUL character", index_path);
            goto done;
        }
        if (f->type != JSON_STRING) {
            ts_fail(err, "%s: tensor '%s': the file name is not a string", index_path, map->keys[i]);
            goto done;
        }
        if (!safe_file_name(f->str, f->len)) {
            ts_fail(err, "%s: tensor '%s': file name \"%s\" is not a plain file name in the folder",
                    index_path, map->keys[i], f->str);
            goto done;
        }
        files[i] = f->str;
    }
    /* Each distinct shard once, in name order. */
    qsort(files, map->n, sizeof *files, cmp_str);
    size_t n_files = 0;
    for (size_t i = 0; i < map->n; i++)
        if (n_files == 0 || strcmp(files[n_files - 1], files[i]) != 0) files[n_files++] = files[i];

    s = calloc(1, sizeof *s);
    if (!s || !(s->shards = calloc(n_files, sizeof *s->shards)) ||
        !(s->dir.t = calloc(map->n, sizeof *s->dir.t))) {
        ts_fail(err, "%s: out of memory", index_path);
        goto done;
    }
    for (size_t i = 0; i < n_files; i++) {
        char *path = join_path(dir, files[i]);
        if (!path) {
            ts_fail(err, "%s: out of memory", index_path);
            goto done;
        }
        const json_value *metadata = NULL;
        json_value *header = NULL;
        int shard_rc = shard_open(&s->shards[i], path, &metadata, &header, err);
        s->n_shards++;
        if (shard_rc == 0 && i == 0) shard_rc = copy_metadata(s, metadata, path, err);
        json_free(header);
        free(path);
        if (shard_rc) goto done;
    }
    for (size_t i = 0; i < map->n; i++) {
        const char *name = map->keys[i];
        const char *file = map->items[i].str;
        const char **hit = bsearch(&file, files, n_files, sizeof *files, cmp_str);
        const shard *sh = &s->shards[hit - files];
        const tensor_entry *src = shard_find(sh, name);
        if (!src) {
            ts_fail(err, "%s: tensor '%s' is mapped to %s, which has no such tensor", index_path,
                    name, file);
            goto done;
        }
        tensor_entry *e = &s->dir.t[s->dir.n];
        *e = *src;
        e->name = str_copy(name, strlen(name));
        if (!e->name) {
            ts_fail(err, "%s: out of memory", index_path);
            goto done;
        }
        s->dir.n++;
    }
    /* The weight_map is a JSON object, so a repeated name would be a duplicate key. */
    const tensor_entry **sorted = malloc((size_t)s->dir.n * sizeof *sorted);
    if (!sorted) {
        ts_fail(err, "%s: out of memory", index_path);
        goto done;
    }
    for (int i = 0; i < s->dir.n; i++) sorted[i] = &s->dir.t[i];
    qsort(sorted, (size_t)s->dir.n, sizeof *sorted, cmp_entry_name);
    int dup = -1;
    for (int i = 1; i < s->dir.n && dup < 0; i++)
        if (strcmp(sorted[i - 1]->name, sorted[i]->name) == 0) dup = i;
    if (dup >= 0) ts_fail(err, "%s: tensor '%s' appears twice in the weight_map", index_path,
                          sorted[dup]->name);
    free(sorted);
    if (dup >= 0) goto done;
    if (align_tensors(s, err)) goto done;
    *out = s;
    s = NULL;
    rc = 0;
done:
    safetensors_close(s);
    free(files);
    json_free(index);
    free(text);
    return rc;
}

int safetensors_open_folder(const char *dir, safetensors **out, ts_error *err) {
    *out = NULL;
    struct stat st;
    if (stat(dir, &st) != 0) return ts_fail(err, "%s: cannot open: %s", dir, strerror(errno));
    if (!S_ISDIR(st.st_mode)) return ts_fail(err, "%s: not a folder", dir);

    char *path = join_path(dir, "model.safetensors.index.json");
    if (!path) return ts_fail(err, "%s: out of memory", dir);
    if (is_regular_file(path)) {
        int rc = open_sharded(dir, path, out, err);
        free(path);
        return rc;
    }
    free(path);
    path = join_path(dir, "model.safetensors");
    if (!path) return ts_fail(err, "%s: out of memory", dir);
    if (is_regular_file(path)) {
        int rc = safetensors_open(path, out, err);
        free(path);
        return rc;
    }
    free(path);

    /* No standard name: accept a lone *.safetensors file, refuse to guess among several. */
    DIR *d = opendir(dir);
    if (!d) return ts_fail(err, "%s: cannot list: %s", dir, strerror(errno));
    char *found = NULL, *second = NULL;
    struct dirent *de;
    while ((de = readdir(d)) != NULL) {
        size_t n = strlen(de->d_name);
        if (n <= 12 || strcmp(de->d_name + n - 12, ".safetensors") != 0) continue;
        char *p = join_path(dir, de->d_name);
        if (!p) break;
        if (!is_regular_file(p)) {
            free(p);
            continue;
        }
        if (!found) {
            found = p;
        } else {
            second = p;
            break;
        }
    }
    closedir(d);
    int rc;
    if (second)
        rc = ts_fail(err, "%s: several .safetensors files (%s, %s, ...) and no "
                     "model.safetensors.index.json to say which to load", dir, found, second);
    else if (!found)
        rc = ts_fail(err, "%s: no model.safetensors, model.safetensors.index.json or other "
                     ".safetensors file", dir);
    else
        rc = safetensors_open(found, out, err);
    free(found);
    free(second);
    return rc;
}

const tensor_dir *safetensors_tensors(const safetensors *s) {
    return &s->dir;
}

const char *safetensors_metadata(const safetensors *s, const char *key) {
    for (int i = 0; i < s->n_meta; i++)
        if (strcmp(s->meta_keys[i], key) == 0) return s->meta_vals[i];
    return NULL;
}
