/* The matrices of a loaded model copied out of the file's pages (resident.c). */
#ifndef TS_MODEL_RESIDENT_H
#define TS_MODEL_RESIDENT_H
#include "load/model.h"

/* Copies the matrices the forward multiplies by (every layer's projections and dense MLP, the
 * routers, the LM head, and a mixture's experts while they fit in the memory available; not an
 * untied embedding table, read a row per token) into one anonymous mapping in 2 MB pages, and
 * points the geometry table at the copy. Decode streams every matrix once per token: from the
 * file's 4 KB pages the 1B decodes ran 20-40% slower on this machine (README, Speed). Copies in
 * slices, dropping each slice's file pages (or the loader's own copy) as it goes, so resident
 * memory stays near the model's size. Without room for the copy the matrices stay where they are.
 * opt's on_progress (if any) hears the bytes copied after each slice. */
void resident_copy_matrices(ts_model *m, const ts_load_options *opt);

/* Bytes backed by 2 MB pages in the mappings that overlap [p, p + n) (their AnonHugePages in
 * /proc/self/smaps), or -1 when that cannot be read. */
long long resident_huge_bytes(const void *p, size_t n);

/* Unmaps the copy (nothing when there is none). */
void resident_free(ts_model *m);

#endif
