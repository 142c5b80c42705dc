/* The -o file of --batch: opened under an exclusive lock (a second writer fails, or waits with
 * --wait-lock), emptied for a fresh run, or for --resume read back: the answers it holds are kept,
 * the lines whose answer was an error (and a partial last line) are taken out so they are
 * answered again. */
#ifndef TS_CLI_ANSWERS_H
#define TS_CLI_ANSWERS_H
#include "tessera.h"
#include "cli/ids.h"

typedef struct answers_file {
    const char *path;
    FILE *f;                 /* for appending answers */
} answers_file;

/* What --resume found. */
typedef struct answers_resume {
    key_set answered;        /* keys of the lines answered (sorted) */
    int n_redo;              /* error lines of this run's input, taken out to be answered again */
    int n_kept_errors;       /* error lines of other lines (not in this run's input), kept */
    bool dropped_partial;    /* a partial last line was taken out */
} answers_resume;

/* Opens and locks path. resume NULL: the file is emptied. Else it is read back: inputs are the keys
 * of the lines this run is to answer (sorted), deciding which error lines are taken out. */
int  answers_open(answers_file *a, const char *path, bool wait, bool quiet, const key_set *inputs,
                  answers_resume *resume, ts_error *err);
/* Closes (and unlocks) the file; -1 when a write failed. */
int  answers_close(answers_file *a, ts_error *err);
void answers_resume_free(answers_resume *r);

#endif
