/* libFuzzer: the safetensors reader. One part: a single file. Several parts (FUZZ_PART_MARK):
 * a folder of model.safetensors.index.json (part 1) and the shards it may name,
 * model-00001-of-00002.safetensors and model-00002-of-00002.safetensors (parts 2 and 3). */
#include "fuzz_common.h"
#include "io/safetensors.h"

static unsigned touch(const safetensors *s) {
    const tensor_dir *d = safetensors_tensors(s);
    unsigned sum = 0;
    for (int i = 0; i < d->n; i++) {
        const tensor_entry *t = &d->t[i];
        size_t es = safetensors_type_size(t->type);
        if (es == 0) abort();                                  /* only known dtypes get in */
        if ((uintptr_t)t->data % es != 0) abort();             /* promised: aligned to the element */
        uint64_t count = 1;
        for (int k = 0; k < t->n_dims; k++) count *= (uint64_t)t->ne[k];
        if (count * es != t->nbytes) abort();                  /* shape and bytes agree */
        if (t->nbytes) sum += t->data[0] + t->data[t->nbytes - 1];
        sum += (unsigned)strlen(safetensors_type_name(t->type));
    }
    const char *v = safetensors_metadata(s, "format");
    if (v) sum += (unsigned)strlen(v);
    return sum;
}

int LLVMFuzzerInitialize(int *argc, char ***argv) { (void)argc; (void)argv; return 0; }

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    fuzz_part parts[3];
    int n = fuzz_split(data, size, parts, 3);
    char path[PATH_MAX];
    safetensors *s;
    ts_error err;
    int rc;
    if (n == 1) {
        rc = safetensors_open(fuzz_write("one.safetensors", data, size, path), &s, &err);
    } else {
        static const char *names[3] = { "model.safetensors.index.json",
                                        "model-00001-of-00002.safetensors",
                                        "model-00002-of-00002.safetensors" };
        char dir[PATH_MAX];
        for (int i = 0; i < 3; i++) {
            if (i < n) fuzz_write(names[i], parts[i].data, parts[i].len, path);
            else fuzz_remove(names[i]);
        }
        fuzz_remove("one.safetensors");   /* the folder must not fall back on another file */
        snprintf(dir, sizeof dir, "%s", fuzz_scratch());
        rc = safetensors_open_folder(dir, &s, &err);
    }
    if (rc != 0) {
        if (strchr(err.msg, '\n')) abort();
        return 0;
    }
    volatile unsigned sink = touch(s);
    (void)sink;
    safetensors_close(s);
    return 0;
}
