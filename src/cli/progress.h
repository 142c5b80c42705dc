/* A progress line on stderr for what takes a while (loading a model, a long prompt): shown only on
 * a terminal, not with --quiet, and only once the work has gone on for half a second; rewritten in
 * place at most ten times a second, and cleared when the work is done. */
#ifndef TS_CLI_PROGRESS_H
#define TS_CLI_PROGRESS_H
#include <stdbool.h>
#include <stddef.h>

typedef struct progress {
    const char *what;      /* "loading", "prompt" */
    const char *unit;      /* "MB", "tokens" */
    double scale;          /* units per count (1 / 1048576 for bytes as MB) */
    bool on;
    bool shown;
    double t0, last;
} progress;

void progress_start(progress *p, const char *what, const char *unit, double scale, bool on);
void progress_update(progress *p, double done, double total);
void progress_end(progress *p);
/* Seconds since progress_start. */
double progress_elapsed(const progress *p);

#endif
