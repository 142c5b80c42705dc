/* The chat's line editor on a terminal: raw-mode editing of the input (UTF-8 aware, long lines
 * wrap), history (in memory, and a history file unless it is turned off), bracketed paste (a pasted
 * block is one turn) and """ blocks. The terminal is raw only while a turn is being read, and is
 * put back on every way out of it (a return, an error, a terminating signal). */
#ifndef TS_CLI_LINE_EDIT_H
#define TS_CLI_LINE_EDIT_H
#include <signal.h>
#include <stdbool.h>
#include <stddef.h>

typedef struct line_editor line_editor;

/* True when stdin and stdout are both terminals (the editor is for them only). */
bool line_edit_usable(void);

/* A turn is refused past limit bytes. With use_file, the history file
 * ($XDG_STATE_HOME/tessera/history, else ~/.local/state/tessera/history) is read and appended to.
 * NULL when out of memory. */
line_editor *line_edit_open(size_t limit, bool use_file);
void line_edit_close(line_editor *e);

/* Reads one turn after prompt: 1: a turn in *text (malloc'd, *len bytes, NUL-ended; it joins the
 * history); 3: the turn was longer than the limit; 0: end of input (Ctrl-D on an empty line);
 * 2: Ctrl-C (or SIGINT, which sets *intr); -1: an error (errno). On return the terminal is as it
 * was, and the cursor is at the start of a line for 1 and 3, at the end of the input otherwise. */
int line_edit_read(line_editor *e, const char *prompt, const volatile sig_atomic_t *intr, char **text, size_t *len);

/* The history file's path (malloc'd), or NULL when neither XDG_STATE_HOME nor HOME is set. */
char *line_edit_history_path(void);

#endif
