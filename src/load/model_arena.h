/* A model's owned allocations, freed together, and its layout notes (model_arena.c). */
#ifndef TS_LOAD_MODEL_ARENA_H
#define TS_LOAD_MODEL_ARENA_H
#include "load/model.h"

void *model_arena_alloc(model_arena *a, size_t bytes);   /* zeroed; NULL on failure */
size_t model_arena_size(const model_arena *a, const void *p);   /* bytes of allocation p; 0: not one */
void  model_arena_release(model_arena *a, const void *p);       /* frees allocation p early */
void  model_arena_free(model_arena *a);

/* Appends a line to the model's layout notes (for --info). */
void model_note(ts_model *m, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
