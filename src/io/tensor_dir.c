#include "io/tensor_dir.h"
#include <stdlib.h>
#include <string.h>

/* Linear: a model has a few hundred tensors and each is looked up once at load time. */
const tensor_entry *tensor_dir_find(const tensor_dir *d, const char *name) {
    if (!d || !name) return NULL;
    for (int i = 0; i < d->n; i++)
        if (d->t[i].name && strcmp(d->t[i].name, name) == 0) return &d->t[i];
    return NULL;
}

void tensor_dir_free(tensor_dir *d) {
    if (!d) return;
    for (int i = 0; i < d->n; i++) free(d->t[i].name);
    free(d->t);
    d->t = NULL;
    d->n = 0;
}
