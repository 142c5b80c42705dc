/* The matrices of a loaded model copied out of the file's pages (resident.c). */
#ifndef TS_MODEL_RESIDENT_H
#define TS_MODEL_RESIDENT_H
#include "load/model.h"

/* Where the matrices the forward multiplies by are read from (every layer's projections and dense
 * MLP, the routers, the LM head, and a mixture's experts while they fit in the memory available;
 * not an untied embedding table, read a row per token). Decode streams every matrix once per
 * token, and from 4 KB pages the 1B decodes ran 20-40% slower on this machine than from 2 MB ones
 * (README, Speed). opt->weights says:
 * - TS_WEIGHTS_IN_PLACE: the file's pages, as mapped;
 * - TS_WEIGHTS_COPY: one anonymous mapping in 2 MB pages, copied in slices, dropping each slice's
 *   file pages (or the loader's own copy) as it goes so resident memory stays near the model's size;
 * - TS_WEIGHTS_AUTO: the file's pages are faulted in, and read in place when the kernel maps at
 *   least 3/4 of them 2 MB at a time (then the loader's own buffers are copied only when they are
 *   more than an eighth of the matrices), else copied.
 * Without room for a copy the matrices stay where they are. opt's on_progress (if any) hears the
 * bytes faulted in, then the bytes copied, each rising to its total. --info's notes say which. */
void resident_place_matrices(ts_model *m, const ts_load_options *opt);

/* Bytes mapped 2 MB at a time in the mappings that overlap [p, p + n) (their AnonHugePages and
 * FilePmdMapped in /proc/self/smaps), or -1 when that cannot be read. */
long long resident_huge_bytes(const void *p, size_t n);

/* Unmaps the copy (nothing when there is none). */
void resident_free(ts_model *m);

#endif
