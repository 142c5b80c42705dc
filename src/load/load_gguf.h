/* The GGUF container reader (load_gguf.c). */
#ifndef TS_LOAD_LOAD_GGUF_H
#define TS_LOAD_LOAD_GGUF_H
#include "load/model.h"

/* Fills m->g (and m->voc when the file has a vocabulary; a vocab-only GGUF fills only that). */
int load_gguf_model(ts_model *m, const char *path, ts_error *err);

#endif
