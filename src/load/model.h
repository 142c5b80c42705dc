/* What a loaded model is inside: the containers it came from, the geometry table built from them,
 * the tokenizer, and the owned buffers the loader made (norms as f32, un-permuted Q/K rows). */
#ifndef TS_MODEL_MODEL_H
#define TS_MODEL_MODEL_H
#include "tessera.h"
#include "load/geometry.h"
#include "text/vocab.h"
#include "io/gguf.h"

/* Owned allocations of a model, freed together. */
typedef struct model_arena { void **ptrs; size_t *sizes; int n, cap; } model_arena;
void *model_arena_alloc(model_arena *a, size_t bytes);   /* zeroed; NULL on failure */
size_t model_arena_size(const model_arena *a, const void *p);   /* bytes of allocation p; 0: not one */
void  model_arena_release(model_arena *a, const void *p);       /* frees allocation p early */
void  model_arena_free(model_arena *a);

struct ts_model {
    char path[1024];
    model_geometry g;
    vocab voc;
    bool has_vocab;
    char *chat_template;         /* owned copy, NULL when none */
    int32_t eog[8];              /* more end-of-generation ids (config.json's eos_token_id list) */
    int n_eog;
    gguf_file *gguf;             /* when loaded from a GGUF */
    struct safetensors *safetensors;   /* when loaded from a folder */
    int simd;                    /* enum simd_level: the kernel set its contexts use */
    int cache_type_k, cache_type_v;   /* enum ts_kv_type: its contexts' default KV cache types */
    model_arena arena;
    void *resident;              /* the matrices' copy in 2 MB pages (resident_copy_matrices), or NULL */
    size_t resident_bytes;       /* its mapping's size */
    /* Layout decisions the loader made, one line each, for --info. */
    char **notes;
    int n_notes;
};

/* Appends a line to the model's layout notes. */
void model_note(ts_model *m, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Container loaders: fill m->g (and m->voc when the container has a vocabulary). */
int load_gguf_model(ts_model *m, const char *path, ts_error *err);
/* A Hugging Face folder (weights_file NULL: the folder's safetensors; else that one file, with the
 * config and tokenizer of its folder). quant: NULL, or "q8_0" / "q4_0" to re-encode the matrices. */
int load_hf_model(ts_model *m, const char *dir, const char *weights_file, const char *quant,
                  ts_error *err);

#endif
