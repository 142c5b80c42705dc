/* What a loaded model owns besides its containers: allocations freed together, and the loader's
 * layout notes (one line per decision, for --info). */
#include "load/model_arena.h"
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
        size_t *s = realloc(a->sizes, (size_t)cap * sizeof *s);
        if (!s) return NULL;
        a->sizes = s;
        a->cap = cap;
    }
    void *q = calloc(1, bytes ? bytes : 1);
    if (q) { a->ptrs[a->n] = q; a->sizes[a->n++] = bytes; }
    return q;
}

size_t model_arena_size(const model_arena *a, const void *p) {
    for (int i = 0; p && i < a->n; i++) if (a->ptrs[i] == p) return a->sizes[i];
    return 0;
}

void model_arena_release(model_arena *a, const void *p) {
    for (int i = 0; p && i < a->n; i++)
        if (a->ptrs[i] == p) {
            free(a->ptrs[i]);
            a->n--;
            a->ptrs[i] = a->ptrs[a->n];
            a->sizes[i] = a->sizes[a->n];
            return;
        }
}

void model_arena_free(model_arena *a) {
    for (int i = 0; i < a->n; i++) free(a->ptrs[i]);
    free(a->ptrs);
    free(a->sizes);
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

