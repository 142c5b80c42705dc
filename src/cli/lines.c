/* Bounded line reading: blocks of the file are scanned for '\n'; only up to limit bytes of a line
 * are copied out. */
#include "cli/lines.h"
#include <stdlib.h>
#include <string.h>

#define BLOCK_SIZE 65536

int lines_open(line_reader *r, FILE *f, size_t limit) {
    memset(r, 0, sizeof *r);
    r->f = f;
    r->limit = limit;
    r->block = malloc(BLOCK_SIZE);
    r->cap = 256;
    r->text = malloc(r->cap);
    if (!r->block || !r->text) { lines_close(r); return -1; }
    r->text[0] = 0;
    return 0;
}

void lines_close(line_reader *r) {
    free(r->block);
    free(r->text);
    memset(r, 0, sizeof *r);
}

/* Keeps up to the limit of p[0..n). */
static int keep(line_reader *r, const char *p, size_t n) {
    if (r->len + n > r->limit) {
        r->too_long = true;
        n = r->limit - r->len;
    }
    if (r->len + n + 1 > r->cap) {
        size_t nc = r->cap;
        while (nc < r->len + n + 1) nc *= 2;
        char *t = realloc(r->text, nc);
        if (!t) return -1;
        r->text = t;
        r->cap = nc;
    }
    memcpy(r->text + r->len, p, n);
    r->len += n;
    r->text[r->len] = 0;
    return 0;
}

int lines_next(line_reader *r) {
    r->len = 0;
    r->text[0] = 0;
    r->too_long = false;
    r->ended = false;
    bool any = false;
    for (;;) {
        if (r->block_pos == r->block_len) {
            r->block_pos = 0;
            r->block_len = fread(r->block, 1, BLOCK_SIZE, r->f);
            if (r->block_len == 0) {
                if (ferror(r->f)) return -1;
                if (!any) return 0;
                break;   /* a last line without a newline */
            }
        }
        any = true;
        const char *p = r->block + r->block_pos;
        size_t avail = r->block_len - r->block_pos;
        const char *nl = memchr(p, '\n', avail);
        size_t n = nl ? (size_t)(nl - p) : avail;
        if (keep(r, p, n) != 0) return -1;
        r->block_pos += n + (nl != NULL);
        if (nl) { r->ended = true; break; }
    }
    r->number++;
    return 1;
}
