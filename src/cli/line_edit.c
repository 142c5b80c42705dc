/* The chat's line editor (see line_edit.h). The input is redrawn whole after each change (carriage
 * return to the prompt's row, clear to the end of the screen, prompt and text, cursor put back),
 * which keeps wrapped and multi-line input right without tracking what the screen holds. */
#include "cli/line_edit.h"
#include "core/utf8.h"
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#define HISTORY_MAX 1000
#define PASTE_END "\x1b[201~"

struct line_editor {
    size_t limit;
    char *hist_path;             /* NULL: no history file */
    char **hist;                 /* oldest first, each NUL-ended */
    int n_hist;
    /* input, read in blocks */
    unsigned char in[4096];
    size_t in_pos, in_len;
    /* the line being edited */
    char *buf;
    size_t len, cap, pos, room;  /* room: the most bytes it may hold */
    bool too_long;               /* something typed or pasted did not fit */
    const char *prompt;
    bool drawn, at_fresh_line;
    int cur_row;                 /* the cursor's row below the prompt's */
    int hidx;                    /* the history entry shown; n_hist: the new line */
    char *saved;                 /* the new line while history is browsed */
    /* Ctrl-R */
    bool searching;
    char query[256];
    size_t qlen;
    int match;
};

/* ---- the terminal: raw while a turn is read, put back on any way out ---- */

static struct termios g_orig;
static volatile sig_atomic_t g_raw;
static const int g_sigs[] = { SIGTERM, SIGHUP, SIGQUIT, SIGABRT };
#define N_SIGS ((int)(sizeof g_sigs / sizeof g_sigs[0]))
static struct sigaction g_old[N_SIGS];
static bool g_installed[N_SIGS];

static void restore_terminal(void) {
    if (g_raw) {
        (void)!write(STDOUT_FILENO, "\x1b[?2004l", 8);
        tcsetattr(STDIN_FILENO, TCSANOW, &g_orig);
        g_raw = 0;
    }
}

/* A terminating signal while raw: the terminal is put back, and the signal does what it did before. */
static void on_fatal(int sig) {
    restore_terminal();
    for (int i = 0; i < N_SIGS; i++)
        if (g_sigs[i] == sig && g_installed[i]) { sigaction(sig, &g_old[i], NULL); g_installed[i] = false; }
    raise(sig);   /* blocked until this handler returns */
}

static int raw_on(void) {
    if (tcgetattr(STDIN_FILENO, &g_orig) != 0) return -1;
    for (int i = 0; i < N_SIGS; i++) {
        struct sigaction sa = {0}, old;
        if (sigaction(g_sigs[i], NULL, &old) != 0 || old.sa_handler == SIG_IGN) continue;
        sa.sa_handler = on_fatal;
        sigemptyset(&sa.sa_mask);
        g_old[i] = old;
        g_installed[i] = sigaction(g_sigs[i], &sa, NULL) == 0;
    }
    struct termios raw = g_orig;
    raw.c_iflag &= ~(tcflag_t)(BRKINT | ICRNL | INPCK | ISTRIP | IXON);
    raw.c_oflag &= ~(tcflag_t)OPOST;   /* line breaks are written as \r\n */
    raw.c_cflag |= CS8;
    raw.c_lflag &= ~(tcflag_t)(ECHO | ICANON | IEXTEN | ISIG);
    raw.c_cc[VMIN] = 1;
    raw.c_cc[VTIME] = 0;
    g_raw = 1;
    if (tcsetattr(STDIN_FILENO, TCSANOW, &raw) != 0) {
        int err = errno;
        g_raw = 0;
        for (int i = 0; i < N_SIGS; i++)
            if (g_installed[i]) { sigaction(g_sigs[i], &g_old[i], NULL); g_installed[i] = false; }
        errno = err;
        return -1;
    }
    (void)!write(STDOUT_FILENO, "\x1b[?2004h", 8);   /* bracketed paste */
    return 0;
}

static void raw_off(void) {
    int err = errno;
    restore_terminal();
    for (int i = 0; i < N_SIGS; i++)
        if (g_installed[i]) { sigaction(g_sigs[i], &g_old[i], NULL); g_installed[i] = false; }
    errno = err;
}

bool line_edit_usable(void) {
    return isatty(STDIN_FILENO) && isatty(STDOUT_FILENO);
}

static int term_width(void) {
    struct winsize ws;
    if (ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col >= 8) return ws.ws_col;
    return 80;
}

static int write_all(const char *s, size_t n) {
    while (n) {
        ssize_t w = write(STDOUT_FILENO, s, n);
        if (w < 0) { if (errno == EINTR) continue; return -1; }
        s += w;
        n -= (size_t)w;
    }
    return 0;
}

/* ---- input ---- */

enum { GOT_BYTE = 1, GOT_EOF = 0, GOT_ERROR = -1, GOT_TIMEOUT = -2, GOT_INTR = -3 };

/* The next input byte; timeout_ms < 0 waits for ever. SIGINT is let in only while ppoll waits (as in
 * the plain reading), so a kill -INT at the prompt is seen. */
static int get_byte(line_editor *e, const volatile sig_atomic_t *intr, int timeout_ms, unsigned char *c) {
    for (;;) {
        if (e->in_pos < e->in_len) { *c = e->in[e->in_pos++]; return GOT_BYTE; }
        struct pollfd p = { .fd = STDIN_FILENO, .events = POLLIN };
        struct timespec ts = { timeout_ms / 1000, (long)(timeout_ms % 1000) * 1000000L };
        sigset_t block, orig;
        sigemptyset(&block);
        sigaddset(&block, SIGINT);
        sigprocmask(SIG_BLOCK, &block, &orig);
        int r = 0;
        while (!*intr && (r = ppoll(&p, 1, timeout_ms < 0 ? NULL : &ts, &orig)) < 0 && errno == EINTR) {}
        sigprocmask(SIG_SETMASK, &orig, NULL);
        if (*intr) return GOT_INTR;
        if (r < 0) return GOT_ERROR;
        if (r == 0) return GOT_TIMEOUT;
        ssize_t n = read(STDIN_FILENO, e->in, sizeof e->in);
        if (n < 0) { if (errno == EINTR || errno == EAGAIN) continue; return GOT_ERROR; }
        if (n == 0) return GOT_EOF;
        e->in_pos = 0;
        e->in_len = (size_t)n;
    }
}

/* ---- UTF-8 ---- */

/* The length of the character at s[i] (1 for a byte that does not start a valid one). */
static size_t char_len(const char *s, size_t n, size_t i) {
    uint32_t cp;
    int k = utf8_decode(s + i, n - i, &cp);
    return k ? (size_t)k : 1;
}

static int cp_width(uint32_t c) {
    if ((c >= 0x300 && c <= 0x36F) || (c >= 0x200B && c <= 0x200F) || c == 0xFE0F) return 0;
    if ((c >= 0x1100 && c <= 0x115F) || (c >= 0x2E80 && c <= 0x303E) || (c >= 0x3041 && c <= 0x33FF) ||
        (c >= 0x3400 && c <= 0x4DBF) || (c >= 0x4E00 && c <= 0x9FFF) || (c >= 0xA000 && c <= 0xA4CF) ||
        (c >= 0xAC00 && c <= 0xD7A3) || (c >= 0xF900 && c <= 0xFAFF) || (c >= 0xFE30 && c <= 0xFE4F) ||
        (c >= 0xFF00 && c <= 0xFF60) || (c >= 0xFFE0 && c <= 0xFFE6) || (c >= 0x1F300 && c <= 0x1F64F) ||
        (c >= 0x1F900 && c <= 0x1F9FF) || (c >= 0x20000 && c <= 0x3FFFD))
        return 2;
    return 1;
}

/* The start of the character before position i. */
static size_t prev_char(const char *s, size_t n, size_t i) {
    if (i == 0) return 0;
    for (size_t k = 1; k <= 4 && k <= i; k++) {
        size_t st = i - k;
        if (((unsigned char)s[st] & 0xC0) != 0x80 || k == 4 || st == 0) {
            if (char_len(s, n, st) == k) return st;
            break;
        }
    }
    return i - 1;
}

static bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n'; }

/* ---- drawing ---- */

typedef struct sbuf { char *p; size_t n, cap; bool failed; } sbuf;

static void sb_add(sbuf *b, const char *s, size_t n) {
    if (b->failed || n == 0) return;
    if (b->n + n > b->cap) {
        size_t c = (b->n + n) * 2 + 64;
        char *t = realloc(b->p, c);
        if (!t) { b->failed = true; return; }
        b->p = t;
        b->cap = c;
    }
    memcpy(b->p + b->n, s, n);
    b->n += n;
}

static void sb_printf(sbuf *b, const char *fmt, int v) {
    char t[32];
    int k = snprintf(t, sizeof t, fmt, v);
    sb_add(b, t, (size_t)k);
}

typedef struct layout { int width, row, col; } layout;

/* Draws the character s[0..k) at the layout's place (wrapping as the terminal does). */
static void put_char(sbuf *b, layout *l, const char *s, size_t k) {
    if (k == 1 && s[0] == '\n') { sb_add(b, "\r\n", 2); l->row++; l->col = 0; return; }
    int w;
    const char *show = s;
    if (k == 1 && ((unsigned char)s[0] < 0x20 || s[0] == 0x7F)) { show = s[0] == '\t' ? " " : "?"; k = 1; w = 1; }
    else if (k == 1 && (unsigned char)s[0] >= 0x80) { show = "?"; w = 1; }
    else {
        uint32_t cp = (unsigned char)s[0];
        utf8_decode(s, k, &cp);   /* k is a whole character's length (char_len) */
        w = cp_width(cp);
    }
    if (l->col + w > l->width) { l->row++; l->col = 0; }   /* the terminal wraps first */
    sb_add(b, show, k);
    l->col += w;
}

/* Redraws the prompt and the line, the cursor at e->pos. */
static int refresh(line_editor *e) {
    sbuf b = {0};
    if (e->drawn) {
        if (e->cur_row > 0) sb_printf(&b, "\x1b[%dA", e->cur_row);
        sb_add(&b, "\r\x1b[J", 4);
    }
    layout l = { term_width(), 0, 0 };
    char sprompt[300];
    const char *prompt = e->prompt;
    if (e->searching) {
        snprintf(sprompt, sizeof sprompt, "(reverse-i-search)`%.*s': ", (int)e->qlen, e->query);
        prompt = sprompt;
    }
    size_t pn = strlen(prompt);
    for (size_t i = 0; i < pn; i += char_len(prompt, pn, i)) put_char(&b, &l, prompt + i, char_len(prompt, pn, i));
    int crow = l.row, ccol = l.col;
    for (size_t i = 0; i < e->len;) {
        if (i == e->pos) { crow = l.row; ccol = l.col; }
        size_t k = char_len(e->buf, e->len, i);
        put_char(&b, &l, e->buf + i, k);
        i += k;
    }
    if (e->pos >= e->len) { crow = l.row; ccol = l.col; }
    e->at_fresh_line = false;
    if (l.col >= l.width) {   /* the terminal waits to wrap: make it so the cursor can be there */
        sb_add(&b, "\r\n", 2);
        if (crow == l.row && ccol >= l.width) { crow++; ccol = 0; }
        l.row++;
        l.col = 0;
        e->at_fresh_line = true;
    }
    if (ccol >= l.width) { crow++; ccol = 0; }
    if (crow != l.row || ccol != l.col) {
        if (l.row > crow) sb_printf(&b, "\x1b[%dA", l.row - crow);
        sb_add(&b, "\r", 1);
        if (ccol > 0) sb_printf(&b, "\x1b[%dC", ccol);
    }
    e->cur_row = crow;
    e->drawn = true;
    int rc = b.failed ? (errno = ENOMEM, -1) : write_all(b.p, b.n);
    free(b.p);
    return rc;
}

/* ---- editing ---- */

static void insert(line_editor *e, const char *s, size_t n) {
    if (e->len + n > e->room) { e->too_long = true; return; }
    if (e->len + n + 1 > e->cap) {
        size_t c = (e->len + n + 1) * 2;
        if (c < 256) c = 256;
        char *t = realloc(e->buf, c);
        if (!t) { e->too_long = true; return; }
        e->buf = t;
        e->cap = c;
    }
    memmove(e->buf + e->pos + n, e->buf + e->pos, e->len - e->pos);
    memcpy(e->buf + e->pos, s, n);
    e->len += n;
    e->pos += n;
}

static void erase(line_editor *e, size_t from, size_t to) {
    memmove(e->buf + from, e->buf + to, e->len - to);
    e->len -= to - from;
    if (e->pos >= to) e->pos -= to - from;
    else if (e->pos > from) e->pos = from;
}

static void set_line(line_editor *e, const char *s) {
    e->len = e->pos = 0;
    e->too_long = false;
    if (s) insert(e, s, strlen(s));
    e->too_long = false;
}

static size_t word_left(line_editor *e, size_t i) {
    while (i > 0 && is_space(e->buf[i - 1])) i--;
    while (i > 0 && !is_space(e->buf[i - 1])) i--;
    return i;
}

static size_t word_right(line_editor *e, size_t i) {
    while (i < e->len && is_space(e->buf[i])) i++;
    while (i < e->len && !is_space(e->buf[i])) i++;
    return i;
}

static void history_move(line_editor *e, int to) {
    if (to < 0 || to > e->n_hist || to == e->hidx) return;
    if (e->hidx == e->n_hist) {   /* keep the new line */
        free(e->saved);
        e->saved = malloc(e->len + 1);
        if (e->saved) { memcpy(e->saved, e->buf ? e->buf : "", e->len); e->saved[e->len] = 0; }
    }
    e->hidx = to;
    set_line(e, to == e->n_hist ? e->saved : e->hist[to]);
}

/* Ctrl-R: the newest entry at or before `from` that holds the query. */
static void search(line_editor *e, int from) {
    for (int i = from; i >= 0; i--) {
        const char *h = e->hist[i];
        const char *m = e->qlen ? memmem(h, strlen(h), e->query, e->qlen) : h;
        if (m) {
            e->match = i;
            set_line(e, h);
            e->pos = (size_t)(m - h);
            return;
        }
    }
}

/* Reads a bracketed paste (after its ESC[200~) into the line: its line breaks kept (CR LF and CR
 * as LF), other control characters dropped. */
static int paste(line_editor *e, const volatile sig_atomic_t *intr) {
    sbuf b = {0};
    size_t matched = 0, mlen = strlen(PASTE_END);
    bool after_cr = false;
    int r;
    for (;;) {
        unsigned char c;
        if ((r = get_byte(e, intr, -1, &c)) != GOT_BYTE) break;
        if (c == (unsigned char)PASTE_END[matched]) {
            if (++matched == mlen) break;
            continue;
        }
        matched = c == (unsigned char)PASTE_END[0];   /* the partial marker was text (ESC: dropped) */
        if (matched) continue;
        if (c == '\n' && after_cr) { after_cr = false; continue; }
        after_cr = c == '\r';
        if (c == '\r') c = '\n';
        if (c < 0x20 && c != '\n' && c != '\t') continue;
        if (c == 0x7F) continue;
        if (b.n <= e->room) sb_add(&b, (const char *)&c, 1);
    }
    if (b.failed) e->too_long = true;
    else if (b.n) insert(e, b.p, b.n);
    free(b.p);
    return r;
}

enum { KEY_NONE, KEY_ENTER, KEY_EOF, KEY_CTRL_C, KEY_ERROR };

static int edit_result(int got) {
    return got == GOT_EOF ? KEY_EOF : got == GOT_INTR ? KEY_CTRL_C : KEY_ERROR;
}

/* An escape sequence (after ESC). */
static int escape(line_editor *e, const volatile sig_atomic_t *intr) {
    unsigned char c;
    int r = get_byte(e, intr, 50, &c);
    if (r == GOT_TIMEOUT) return KEY_NONE;   /* ESC alone */
    if (r != GOT_BYTE) return edit_result(r);
    if (c == '[' || c == 'O') {
        char seq[16];
        size_t n = 0;
        unsigned char f;
        for (;;) {
            if ((r = get_byte(e, intr, 50, &f)) == GOT_TIMEOUT) return KEY_NONE;
            if (r != GOT_BYTE) return edit_result(r);
            if (f >= 0x40 && f <= 0x7E) break;
            if (n < sizeof seq - 1) seq[n++] = (char)f;
        }
        seq[n] = 0;
        bool word = strstr(seq, ";5") || strstr(seq, ";3");   /* Ctrl- or Alt-arrow */
        switch (f) {
        case 'A': history_move(e, e->hidx - 1); break;
        case 'B': history_move(e, e->hidx + 1); break;
        case 'C': e->pos = word ? word_right(e, e->pos) : e->pos < e->len ? e->pos + char_len(e->buf, e->len, e->pos) : e->pos; break;
        case 'D': e->pos = word ? word_left(e, e->pos) : prev_char(e->buf, e->len, e->pos); break;
        case 'H': e->pos = 0; break;
        case 'F': e->pos = e->len; break;
        case '~':
            if (!strcmp(seq, "1") || !strcmp(seq, "7")) e->pos = 0;
            else if (!strcmp(seq, "4") || !strcmp(seq, "8")) e->pos = e->len;
            else if (!strcmp(seq, "3") && e->pos < e->len) erase(e, e->pos, e->pos + char_len(e->buf, e->len, e->pos));
            else if (!strcmp(seq, "200")) { r = paste(e, intr); if (r != GOT_BYTE) return edit_result(r); }
            break;
        }
        return KEY_NONE;
    }
    switch (c) {   /* Alt- */
    case 'b': case 'B': e->pos = word_left(e, e->pos); break;
    case 'f': case 'F': e->pos = word_right(e, e->pos); break;
    case 'd': case 'D': erase(e, e->pos, word_right(e, e->pos)); break;
    case 0x7F: case 0x08: erase(e, word_left(e, e->pos), e->pos); break;
    }
    return KEY_NONE;
}

/* Edits one line after prompt, in at most room bytes. KEY_ENTER: e->buf[0..len) is the line. */
static int edit_line(line_editor *e, const char *prompt, const volatile sig_atomic_t *intr, size_t room) {
    e->prompt = prompt;
    e->room = room;
    e->drawn = false;
    e->cur_row = 0;
    e->hidx = e->n_hist;
    e->searching = false;
    set_line(e, NULL);
    if (!e->buf && !(e->buf = malloc(e->cap = 256))) return KEY_ERROR;
    if (refresh(e) != 0) return KEY_ERROR;
    for (;;) {
        unsigned char c;
        int r = get_byte(e, intr, -1, &c);
        if (r != GOT_BYTE) return edit_result(r);
        int key = KEY_NONE;
        if (e->searching) {
            if (c == 0x12) { if (e->match > 0) search(e, e->match - 1); goto next; }
            if (c == 0x7F || c == 0x08) {
                if (e->qlen) { e->qlen--; while (e->qlen && ((unsigned char)e->query[e->qlen] & 0xC0) == 0x80) e->qlen--; }
                search(e, e->n_hist - 1);
                goto next;
            }
            if (c == 0x07) { e->searching = false; set_line(e, e->saved); e->hidx = e->n_hist; goto next; }   /* Ctrl-G */
            if (c >= 0x20) {
                if (e->qlen < sizeof e->query - 1) e->query[e->qlen++] = (char)c;
                search(e, e->match);
                goto next;
            }
            e->searching = false;   /* any other key takes the match and does what it does */
            e->hidx = e->match;
        }
        switch (c) {
        case '\r': case '\n': key = KEY_ENTER; break;
        case 0x03: key = KEY_CTRL_C; break;
        case 0x04:
            if (e->len == 0) key = KEY_EOF;
            else if (e->pos < e->len) erase(e, e->pos, e->pos + char_len(e->buf, e->len, e->pos));
            break;
        case 0x01: e->pos = 0; break;
        case 0x05: e->pos = e->len; break;
        case 0x02: e->pos = prev_char(e->buf, e->len, e->pos); break;
        case 0x06: if (e->pos < e->len) e->pos += char_len(e->buf, e->len, e->pos); break;
        case 0x7F: case 0x08: if (e->pos > 0) erase(e, prev_char(e->buf, e->len, e->pos), e->pos); break;
        case 0x0B: erase(e, e->pos, e->len); break;
        case 0x15: erase(e, 0, e->pos); break;
        case 0x17: erase(e, word_left(e, e->pos), e->pos); break;
        case 0x10: history_move(e, e->hidx - 1); break;
        case 0x0E: history_move(e, e->hidx + 1); break;
        case 0x0C:
            if (write_all("\x1b[H\x1b[2J", 7) != 0) return KEY_ERROR;
            e->drawn = false;
            e->cur_row = 0;
            break;
        case 0x12:
            if (e->n_hist == 0) break;
            free(e->saved);
            e->saved = malloc(e->len + 1);
            if (e->saved) { memcpy(e->saved, e->buf, e->len); e->saved[e->len] = 0; }
            e->searching = true;
            e->qlen = 0;
            e->match = e->n_hist - 1;
            search(e, e->match);
            break;
        case 0x1A:   /* Ctrl-Z: the terminal as it was while the chat is stopped, then the line again */
            raw_off();
            raise(SIGTSTP);
            if (raw_on() != 0) return KEY_ERROR;
            e->drawn = false;
            e->cur_row = 0;
            break;
        case 0x1B: key = escape(e, intr); break;
        case '\t': insert(e, "\t", 1); break;
        default:
            if (c < 0x20) break;
            if (c < 0x80) { insert(e, (const char *)&c, 1); break; }
            {   /* a UTF-8 character: its bytes together, or none */
                char u[4] = { (char)c };
                size_t need = c >= 0xC2 && c <= 0xDF ? 2 : c >= 0xE0 && c <= 0xEF ? 3 : c >= 0xF0 && c <= 0xF4 ? 4 : 0;
                if (!need) break;
                size_t got = 1;
                while (got < need) {
                    unsigned char d;
                    r = get_byte(e, intr, 100, &d);
                    if (r == GOT_TIMEOUT) break;
                    if (r != GOT_BYTE) return edit_result(r);
                    if ((d & 0xC0) != 0x80) { e->in_pos--; break; }   /* not part of it: read it again */
                    u[got++] = (char)d;
                }
                if (got == need) insert(e, u, need);
            }
        }
        if (key != KEY_NONE) {
            if (key == KEY_ENTER && e->searching) e->searching = false;
            e->pos = e->len;
            if (refresh(e) != 0) return KEY_ERROR;
            return key;
        }
    next:
        if (e->in_pos == e->in_len && refresh(e) != 0) return KEY_ERROR;   /* typed ahead: draw once */
    }
}

/* ---- history ---- */

char *line_edit_history_path(void) {
    const char *x = getenv("XDG_STATE_HOME"), *home = getenv("HOME");
    char *p;
    if (x && x[0] == '/') {
        if (!(p = malloc(strlen(x) + 32))) return NULL;
        sprintf(p, "%s/tessera/history", x);
    } else if (home && *home) {
        if (!(p = malloc(strlen(home) + 48))) return NULL;
        sprintf(p, "%s/.local/state/tessera/history", home);
    } else {
        return NULL;
    }
    return p;
}

/* One entry as a line: backslash, LF and CR escaped. */
static void escape_entry(sbuf *b, const char *s) {
    for (; *s; s++) {
        if (*s == '\\') sb_add(b, "\\\\", 2);
        else if (*s == '\n') sb_add(b, "\\n", 2);
        else if (*s == '\r') sb_add(b, "\\r", 2);
        else sb_add(b, s, 1);
    }
    sb_add(b, "\n", 1);
}

static void unescape_entry(char *s) {
    char *o = s;
    for (char *i = s; *i; i++) {
        if (*i == '\\' && (i[1] == 'n' || i[1] == 'r' || i[1] == '\\')) {
            i++;
            *o++ = *i == 'n' ? '\n' : *i == 'r' ? '\r' : '\\';
        } else {
            *o++ = *i;
        }
    }
    *o = 0;
}

static void history_push(line_editor *e, char *s) {
    if (e->n_hist == HISTORY_MAX) {
        free(e->hist[0]);
        memmove(e->hist, e->hist + 1, (HISTORY_MAX - 1) * sizeof *e->hist);
        e->n_hist--;
    }
    e->hist[e->n_hist++] = s;
}

static void history_warn(line_editor *e, const char *what) {
    fprintf(stderr, "warning: history file %s: %s: %s (the chat goes on without it)\n", e->hist_path, what, strerror(errno));
    free(e->hist_path);
    e->hist_path = NULL;
}

static int write_history_file(line_editor *e, const char *path, int flags) {
    sbuf b = {0};
    for (int i = 0; i < e->n_hist; i++) escape_entry(&b, e->hist[i]);
    if (b.failed) { free(b.p); errno = ENOMEM; return -1; }
    int fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC | flags, 0600);
    if (fd < 0) { free(b.p); return -1; }
    size_t off = 0;
    int rc = 0;
    while (off < b.n) {
        ssize_t w = write(fd, b.p + off, b.n - off);
        if (w < 0) { if (errno == EINTR) continue; rc = -1; break; }
        off += (size_t)w;
    }
    if (close(fd) != 0) rc = -1;
    free(b.p);
    return rc;
}

static void history_load(line_editor *e) {
    /* the directory, made as mkdir -p would (owner only) */
    char *dir = strdup(e->hist_path);
    if (!dir) return;
    for (char *p = dir + 1; *p; p++) {
        if (*p != '/') continue;
        *p = 0;
        if (mkdir(dir, 0700) != 0 && errno != EEXIST) { free(dir); history_warn(e, "cannot make its directory"); return; }
        *p = '/';
    }
    free(dir);
    FILE *f = fopen(e->hist_path, "re");
    if (!f) { if (errno != ENOENT) history_warn(e, "cannot read it"); return; }
    char *line = NULL;
    size_t cap = 0;
    ssize_t n;
    long lines = 0;
    while ((n = getline(&line, &cap, f)) >= 0) {
        lines++;
        if (n > 0 && line[n - 1] == '\n') line[--n] = 0;
        unescape_entry(line);
        if (!*line || strlen(line) > e->limit) continue;
        char *s = strdup(line);
        if (!s) break;
        history_push(e, s);
    }
    free(line);
    fclose(f);
    if (lines > HISTORY_MAX) {   /* keep the file to its last entries */
        size_t pl = strlen(e->hist_path);
        char *tmp = malloc(pl + 16);
        if (!tmp) return;
        snprintf(tmp, pl + 16, "%s.%ld", e->hist_path, (long)getpid());
        if (write_history_file(e, tmp, O_TRUNC | O_EXCL) != 0 || rename(tmp, e->hist_path) != 0) unlink(tmp);
        free(tmp);
    }
}

static void history_add(line_editor *e, const char *text) {
    if (!*text) return;
    if (e->n_hist && !strcmp(e->hist[e->n_hist - 1], text)) return;
    char *s = strdup(text);
    if (!s) return;
    history_push(e, s);
    if (!e->hist_path) return;
    sbuf b = {0};
    escape_entry(&b, text);
    int fd = b.failed ? -1 : open(e->hist_path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0600);
    if (fd < 0) { free(b.p); history_warn(e, "cannot write it"); return; }
    size_t off = 0;
    while (off < b.n) {
        ssize_t w = write(fd, b.p + off, b.n - off);
        if (w < 0) { if (errno == EINTR) continue; break; }
        off += (size_t)w;
    }
    close(fd);
    free(b.p);
}

line_editor *line_edit_open(size_t limit, bool use_file) {
    line_editor *e = calloc(1, sizeof *e);
    if (!e) return NULL;
    e->limit = limit;
    if (!(e->hist = calloc(HISTORY_MAX, sizeof *e->hist))) { free(e); return NULL; }
    if (use_file && (e->hist_path = line_edit_history_path())) history_load(e);
    return e;
}

void line_edit_close(line_editor *e) {
    if (!e) return;
    for (int i = 0; i < e->n_hist; i++) free(e->hist[i]);
    free(e->hist);
    free(e->hist_path);
    free(e->buf);
    free(e->saved);
    free(e);
}

/* ---- a turn ---- */

int line_edit_read(line_editor *e, const char *prompt, const volatile sig_atomic_t *intr, char **text, size_t *len) {
    *text = NULL;
    *len = 0;
    if (raw_on() != 0) return -1;
    sbuf acc = {0};
    int rc;
    for (bool first = true;; first = false) {
        size_t room = e->limit > acc.n ? e->limit - acc.n : 0;
        int key = edit_line(e, first ? prompt : "... ", intr, room);
        if (key == KEY_ENTER && write_all(e->at_fresh_line ? "" : "\r\n", e->at_fresh_line ? 0 : 2) != 0) key = KEY_ERROR;
        if (key != KEY_ENTER) { rc = key == KEY_EOF ? 0 : key == KEY_CTRL_C ? 2 : -1; break; }
        if (e->too_long) { rc = 3; break; }
        sb_add(&acc, e->buf, e->len);
        if (acc.failed) { errno = ENOMEM; rc = -1; break; }
        if (acc.n > e->limit) { rc = 3; break; }
        if (acc.n >= 3 && !memcmp(acc.p, "\"\"\"", 3)) {   /* a """ block: until a line ending in """ */
            if (acc.n >= 6 && !memcmp(acc.p + acc.n - 3, "\"\"\"", 3)) {
                size_t from = 3, to = acc.n - 3;
                if (from < to && acc.p[from] == '\n') from++;
                if (from < to && acc.p[to - 1] == '\n') to--;
                memmove(acc.p, acc.p + from, to - from);
                acc.n = to - from;
                rc = 1;
                break;
            }
        } else if (acc.n && acc.p[acc.n - 1] == '\\') {   /* a backslash continues the turn */
            acc.n--;
        } else {
            rc = 1;
            break;
        }
        sb_add(&acc, "\n", 1);
    }
    raw_off();
    if (rc == 1) {
        sb_add(&acc, "", 1);   /* the NUL */
        if (acc.failed) { free(acc.p); errno = ENOMEM; return -1; }
        *text = acc.p;
        *len = acc.n - 1;
        history_add(e, acc.p);
        return 1;
    }
    free(acc.p);
    return rc;
}
