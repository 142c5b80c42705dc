/* Reading a text file line by line with a bound on the line length: a longer line is kept only up
 * to the bound (and flagged), the rest of it is read past without being stored, so one huge line
 * costs no more memory than the bound. */
#ifndef TS_CLI_LINES_H
#define TS_CLI_LINES_H
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

typedef struct line_reader {
    FILE *f;
    size_t limit;            /* the longest line kept whole, in bytes */
    char *text;              /* the line just read (NUL-terminated, without its newline) */
    size_t len;              /* its length (at most limit) */
    bool too_long;           /* the line was longer than limit: text holds its first limit bytes */
    bool ended;              /* the line ended in '\n' (false: the file's last line has none) */
    int number;              /* its number in the file, from 1 */
    char *block;             /* read buffer */
    size_t block_pos, block_len, cap;
} line_reader;

/* f stays the caller's. Returns 0, or -1 when out of memory. */
int  lines_open(line_reader *r, FILE *f, size_t limit);
/* 1: a line is in r->text; 0: end of file; -1: a read error (errno says which). */
int  lines_next(line_reader *r);
void lines_close(line_reader *r);

#endif
