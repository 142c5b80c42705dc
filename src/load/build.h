/* The geometry builder: one arch row + the hyper-parameters a container reader found + the
 * container's tensors -> the geometry table (model_geometry). Head checks, the sliding pattern,
 * RoPE tables, shared KV, per-layer embeddings and the tensor shapes are all decided here, once,
 * whatever the container; and every tensor of the file must be consumed here or be one the
 * container says may be left (with the reason), else the model is refused. */
#ifndef TS_MODEL_BUILD_H
#define TS_MODEL_BUILD_H
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

int build_geometry(ts_model *m, const arch_desc *a, const model_hparams *hp, tensor_source *src,
                   ts_error *err);

#endif
