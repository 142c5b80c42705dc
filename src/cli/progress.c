/* The progress line (progress.h). */
#include "cli/progress.h"
#include "core/clock.h"
#include <stdio.h>

void progress_start(progress *p, const char *what, const char *unit, double scale, bool on) {
    *p = (progress){ .what = what, .unit = unit, .scale = scale, .on = on, .t0 = clock_seconds() };
}

void progress_update(progress *p, double done, double total) {
    if (!p->on || total <= 0) return;
    double now = clock_seconds(), elapsed = now - p->t0;
    if (elapsed < 0.5 || (p->shown && now - p->last < 0.1 && done < total)) return;
    double rate = done / elapsed, left = rate > 0 ? (total - done) / rate : 0;
    fprintf(stderr, "\r\033[K%s: %3.0f%% (%.0f of %.0f %s, %.0f %s/s, %.1f s left)", p->what, 100.0 * done / total,
            done * p->scale, total * p->scale, p->unit, rate * p->scale, p->unit, left);
    fflush(stderr);
    p->shown = true;
    p->last = now;
}

void progress_end(progress *p) {
    if (p->shown) fprintf(stderr, "\r\033[K");
    p->shown = false;
}

double progress_elapsed(const progress *p) { return clock_seconds() - p->t0; }
