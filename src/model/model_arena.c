/* What a loaded model owns besides its containers: allocations freed together, and the loader's
 * layout notes (one line per decision, for --info). */
#include "model/model.h"
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void *model_arena_alloc(model_arena *a, size_t bytes) {
    if (a->n == a->cap) {
        int cap = a->cap ? a->cap * 2 : 32;
        void **p = realloc(a->ptrs, (size_t)cap * sizeof *p);
        if (!p) return NULL;
        a->ptrs = p;
        a->cap = cap;
    }
    void *q = calloc(1, bytes ? bytes : 1);
    if (q) a->ptrs[a->n++] = q;
    return q;
}

bool model_arena_release(model_arena *a, const void *p) {
    for (int i = 0; p && i < a->n; i++)
        if (a->ptrs[i] == p) {
            free(a->ptrs[i]);
            a->ptrs[i] = a->ptrs[--a->n];
            return true;
        }
    return false;
}

void model_arena_free(model_arena *a) {
    for (int i = 0; i < a->n; i++) free(a->ptrs[i]);
    free(a->ptrs);
    memset(a, 0, sizeof *a);
}

void model_note(ts_model *m, const char *fmt, ...) {
    char buf[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    char **n = realloc(m->notes, (size_t)(m->n_notes + 1) * sizeof *n);
    if (!n) return;
    m->notes = n;
    m->notes[m->n_notes] = strdup(buf);
    if (m->notes[m->n_notes]) m->n_notes++;
}

