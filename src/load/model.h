/* What a loaded model is inside: the containers it came from, the geometry table built from them,
 * the tokenizer, and the owned buffers the loader made (norms as f32, un-permuted Q/K rows). Types
 * only: the arena and the notes are model_arena.h, loading is load.c (ts_model_load). */
#ifndef TS_LOAD_MODEL_H
#define TS_LOAD_MODEL_H
#include "tessera.h"
#include "load/geometry.h"
#include "text/vocab.h"
#include "io/gguf.h"

/* Owned allocations of a model, freed together. */
typedef struct model_arena { void **ptrs; size_t *sizes; int n, cap; } model_arena;

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

#endif
