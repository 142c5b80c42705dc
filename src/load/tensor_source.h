/* What a container reader hands the geometry builder: its tensors, how it names each role and
 * turns an entry into a matrix or a vector, and the family's rules in that container. */
#ifndef TS_LOAD_TENSOR_SOURCE_H
#define TS_LOAD_TENSOR_SOURCE_H
#include "load/model.h"
#include "load/arch.h"
#include "load/hparams.h"
#include "io/tensor_dir.h"

/* How a container names and converts its tensors. */
typedef struct tensor_source {
    const tensor_dir *dir;
    const char *path;          /* for messages */
    const container_rules *rules;   /* the family's conventions in this container */
    bool vocab_exact;          /* the tokenizer has exactly as many tokens as the embedding rows */
    bool weight_scales;        /* a matrix '<name>.weight' may have a per-tensor '<name>.scale' (GGUF) */
    void *ctx;
    /* The container's name of a role (layer substituted; expert too, for names of one tensor per
     * expert), or NULL when it has none. */
    const char *(*name)(const struct tensor_source *s, int role, int layer, int expert, char *buf, size_t cap);
    /* An entry in a role as a matrix of rows x cols (rows < 0: any), its shape checked. */
    int (*matrix)(const struct tensor_source *s, const tensor_entry *t, int role, int64_t rows,
                  int64_t cols, weight *w, ts_error *err);
    /* An entry as n floats (owned by the model); norm: the container's norm convention applies. */
    int (*vector)(const struct tensor_source *s, const tensor_entry *t, int64_t n, bool norm,
                  const float **out, ts_error *err);
    /* Why a tensor nobody consumed may be left in the file, or NULL when it may not. */
    const char *(*ignorable)(const struct tensor_source *s, const char *name);
    /* Optional: the container's bytes [p, p + n) were copied into the model and are not read again
     * (un-permuted Q/K rows), so a mapped file's pages need not stay resident beside the copy. */
    void (*release)(const struct tensor_source *s, const void *p, size_t n);
} tensor_source;

#endif
