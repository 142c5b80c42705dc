/* The interactive chat. */
#include "cli/chat.h"
#include "cli/line_edit.h"
#include "cli/prompt.h"
#include "cli/stats.h"
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The conversation: the system prompt and the turns so far (owned strings). */
typedef struct conversation {
    char *system;
    ts_chat_message *turns;
    int n, cap;
    ts_chat_message *view;   /* system + turns, as the template gets them */
} conversation;

static int conversation_add(conversation *c, const char *role, const char *content, size_t len) {
    if (c->n == c->cap) {
        int nc = c->cap ? c->cap * 2 : 8;
        ts_chat_message *t = realloc(c->turns, (size_t)nc * sizeof *t);
        ts_chat_message *v = t ? realloc(c->view, ((size_t)nc + 1) * sizeof *v) : NULL;
        if (t) c->turns = t;
        if (!v) return -1;
        c->view = v;
        c->cap = nc;
    }
    char *copy = malloc(len + 1);
    if (!copy) return -1;
    memcpy(copy, content, len);
    copy[len] = 0;
    c->turns[c->n++] = (ts_chat_message){ role, copy };
    return 0;
}

static void conversation_pop(conversation *c) {
    free((char *)c->turns[--c->n].content);
}

static void conversation_clear(conversation *c) {
    while (c->n) conversation_pop(c);
}

static void conversation_free(conversation *c) {
    conversation_clear(c);
    free(c->turns);
    free(c->view);
    free(c->system);
    memset(c, 0, sizeof *c);
}

/* The messages the template renders; returns their count. */
static int conversation_view(conversation *c) {
    int n = 0;
    if (c->system) c->view[n++] = (ts_chat_message){ "system", c->system };
    for (int i = 0; i < c->n; i++) c->view[n++] = c->turns[i];
    return n;
}

/* Writes answer text to stdout; a failed write stops the answer. */
typedef struct chat_output { bool failed; int error; } chat_output;

static int print_piece(void *user, const char *text, size_t len) {
    chat_output *out = user;
    if (out->failed) return 1;
    if (fwrite(text, 1, len, stdout) != len || fflush(stdout) != 0) {
        out->failed = true;
        out->error = errno;
        return 1;
    }
    return 0;
}

/* One line of input into *line (without its newline), kept only up to limit bytes: a longer line is
 * read to its end and dropped (a chat turn cannot be longer than the context holds, and a 200 MB
 * line must not take 200 MB). 1: a line; 3: a line longer than limit; 0: end of input; 2: Ctrl-C at
 * the prompt; -1: a read error. On a terminal the wait is a ppoll, which a signal interrupts even
 * though the handler restarts other calls (so a Ctrl-C during an answer never breaks a write);
 * SIGINT is blocked from the flag's check until ppoll waits, so none is lost in between. */
static int read_line(bool tty, const volatile sig_atomic_t *intr, size_t limit, char **line, size_t *cap) {
    if (tty) {
        struct pollfd p = { .fd = STDIN_FILENO, .events = POLLIN };
        sigset_t block, orig;
        sigemptyset(&block);
        sigaddset(&block, SIGINT);
        sigprocmask(SIG_BLOCK, &block, &orig);
        int r = 0;
        while (!*intr && (r = ppoll(&p, 1, NULL, &orig)) < 0 && errno == EINTR) {}
        sigprocmask(SIG_SETMASK, &orig, NULL);
        if (*intr) return 2;
        if (r < 0) return -1;
    }
    size_t n = 0;
    bool any = false, too_long = false;
    char chunk[1 << 14];
    for (;;) {
        if (!fgets(chunk, sizeof chunk, stdin)) {
            if (*intr) { clearerr(stdin); return 2; }
            if (ferror(stdin)) return -1;
            if (!any) return 0;
            break;
        }
        any = true;
        size_t k = strlen(chunk);
        bool end = k > 0 && chunk[k - 1] == '\n';
        if (!too_long && n + k > limit + 2) too_long = true;   /* + the line break */
        if (!too_long) {
            if (n + k + 1 > *cap) {
                size_t c = (n + k + 1) * 2;
                char *t = realloc(*line, c);
                if (!t) return -1;
                *line = t;
                *cap = c;
            }
            memcpy(*line + n, chunk, k + 1);
            n += k;
        }
        if (end) break;
    }
    if (too_long) return 3;
    if (!*line) { if (!(*line = malloc(1))) return -1; *cap = 1; }
    (*line)[n] = 0;
    if (n > 0 && (*line)[n - 1] == '\n') (*line)[--n] = 0;
    if (n > 0 && (*line)[n - 1] == '\r') (*line)[--n] = 0;
    return 1;
}

/* A turn: lines ending in a backslash continue on the next line. Same returns as read_line (3: the
 * turn is longer than limit; it ends at the line that made it so). */
static int read_turn(bool tty, const volatile sig_atomic_t *intr, size_t limit, char **text, size_t *len) {
    char *line = NULL;
    size_t cap = 0;
    *text = NULL;
    *len = 0;
    int rc;
    bool too_long = false;
    for (;;) {
        rc = read_line(tty, intr, *len < limit ? limit - *len : 0, &line, &cap);
        if (rc == 3) { too_long = true; rc = 1; break; }   /* the turn ends there (its lines past it are turns) */
        if (rc != 1) break;
        size_t l = strlen(line);
        bool more = l > 0 && line[l - 1] == '\\';
        if (more) line[l - 1] = '\n';   /* the backslash stands for the line break */
        char *t = realloc(*text, *len + l + 1);
        if (!t) { rc = -1; break; }
        *text = t;
        memcpy(*text + *len, line, l);
        *len += l;
        (*text)[*len] = 0;
        if (!more) break;
    }
    free(line);
    if (rc == 1 && too_long) rc = 3;
    if (rc != 1) { free(*text); *text = NULL; }
    return rc;
}

static void print_help(void) {
    fprintf(stderr,
        "  /clear          forget the conversation (the system prompt stays)\n"
        "  /system TEXT    set the system prompt (/system alone removes it); the conversation is\n"
        "                  kept and read again with it\n"
        "  /help           this list\n"
        "  /exit           end the chat (also Ctrl-D, or Ctrl-C twice at the prompt)\n"
        "  Ctrl-C during an answer stops it. A line ending in \\ continues on the next line;\n"
        "  a line starting with // sends the text after the first /.\n"
        "  On a terminal: Left/Right, Home/End (Ctrl-A/E), Alt-B/F or Ctrl-Left/Right by words,\n"
        "  Backspace/Delete, Ctrl-W/U/K delete, Up/Down and Ctrl-R recall earlier turns, Ctrl-L\n"
        "  clears the screen; a paste is one turn, and so is a block from a line starting with\n"
        "  \"\"\" to a line ending with \"\"\".\n");
}

/* A command line ("/..."). Returns 1 to end the chat, 0 to go on. */
static int command(conversation *c, ts_session *s, const char *text) {
    const char *arg = strchr(text, ' ');
    size_t name_len = arg ? (size_t)(arg - text) : strlen(text);
    while (arg && *arg == ' ') arg++;
#define NAMED(s) (name_len == strlen(s) && !memcmp(text, s, name_len))
    if (NAMED("/exit") || NAMED("/quit") || NAMED("/bye")) return 1;
    if (NAMED("/help") || NAMED("/?")) print_help();
    else if (NAMED("/clear")) {
        conversation_clear(c);
        ts_session_reset(s);
        fprintf(stderr, "(conversation cleared)\n");
    } else if (NAMED("/system")) {
        free(c->system);
        c->system = arg && *arg ? strdup(arg) : NULL;
        fprintf(stderr, c->system ? "(system prompt set)\n" : "(system prompt removed)\n");
    } else {
        fprintf(stderr, "unknown command %.*s (see /help)\n", (int)name_len, text);
    }
#undef NAMED
    return 0;
}

/* Renders the conversation and answers its last user turn. Returns 0, or -1 after an error
 * message (the turn is then taken back). */
/* Warnings said once per chat. */
typedef struct chat_warnings { bool template_unparsed, system_ignored; } chat_warnings;

static int answer_turn(ts_model *m, ts_session *s, const chat_options *o, conversation *c, int turn,
                       chat_warnings *warned, chat_output *out) {
    ts_error err = {{0}};
    int32_t *ids = NULL;
    bool chat, unknown_template;
    int n_msgs = conversation_view(c);
    int n = prompt_to_tokens(m, c->view, n_msgs, o->raw, o->chat, ts_session_text_limit(s), "the conversation",
                             o->template_name, &ids, &chat, &unknown_template, &err);
    if (unknown_template && !warned->template_unparsed) {
        fprintf(stderr, "warning: %s: the chat template does not parse; the conversation goes as plain text (--chat-template FILE gives another)\n", o->model_path);
        warned->template_unparsed = true;
    }
    if (n < 0) { fprintf(stderr, "error: %s\n", err.msg); return -1; }
    if (n >= 0 && c->system && !chat && !warned->system_ignored) {
        fprintf(stderr, "warning: %s: a system prompt needs a chat template; ignored\n", o->model_path);
        warned->system_ignored = true;
    }
    if (n > ts_session_n_ctx(s)) {
        fprintf(stderr, "error: the conversation has %d tokens, more than the context of %d: /clear starts a new one\n",
                n, ts_session_n_ctx(s));
        free(ids);
        return -1;
    }
    ts_gen_request rq = { .prompt = ids, .n_prompt = n, .max_tokens = o->max_tokens, .sampling = o->sampling,
                          .stop = o->stop, .n_stop = o->n_stop, .heal = o->heal, .ignore_eos = o->ignore_eos, .grammar = o->grammar, .on_text = print_piece,
                          .user = out, .cancel = o->interrupted };
    ts_gen_result res = {0};
    int rc = ts_session_generate(s, &rq, &res, &err);
    free(ids);
    print_piece(out, "\n", 1);
    if (rc != 0) { fprintf(stderr, "error: %s: %s\n", o->model_path, err.msg); return -1; }
    /* the answer joins the conversation, a stopped one as far as it got */
    if (conversation_add(c, "assistant", res.text, res.len) != 0) {
        fprintf(stderr, "error: out of memory\n");
        ts_gen_result_free(&res);
        return -1;
    }
    if (o->verbose && !o->quiet) {
        char prefix[32];
        snprintf(prefix, sizeof prefix, "turn %d: ", turn);
        stats_print(stderr, prefix, &res, n - res.n_prompt, &o->sampling, -1);
    } else if (!strcmp(res.finish_reason, "context") && !o->quiet) {
        fprintf(stderr, "(the context is full: /clear starts a new conversation)\n");
    }
    ts_gen_result_free(&res);
    return 0;
}

int run_chat(ts_model *m, ts_session *s, const chat_options *o) {
    bool tty = isatty(STDIN_FILENO);
    conversation c = {0};
    if (o->system && !(c.system = strdup(o->system))) { fprintf(stderr, "error: out of memory\n"); return 1; }
    struct sigaction sa = {0}, old;
    sa.sa_handler = o->on_interrupt;
    sa.sa_flags = SA_RESTART;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, &old);
    if (tty && !o->quiet)
        fprintf(stderr, "chat with %s: /help for commands; Ctrl-C stops an answer; Ctrl-D or Ctrl-C twice ends\n",
                o->model_path);

    chat_output out = {0};
    chat_warnings warned = {0};
    /* exit status: 1 when the chat could not go on, or when its last turn could not be answered (a
     * refused turn that later ones follow is reported, and the chat goes on) */
    bool failed = false, last_failed = false;
    const size_t limit = ts_session_text_limit(s);
    int turn = 0, interrupts = 0;   /* consecutive Ctrl-Cs at the prompt */
    const char *first = o->first_prompt;
    /* on a terminal (stdin and stdout), the line editor; else plain lines */
    line_editor *editor = tty && line_edit_usable() ? line_edit_open(limit, !o->no_history) : NULL;
    for (;;) {
        char *text = NULL;
        size_t len = 0;
        if (first) {
            if (!(text = strdup(first))) { failed = true; break; }
            len = strlen(text);
            first = NULL;
        } else {
            int r;
            if (editor) {
                if (fflush(stdout) != 0) { out.failed = true; out.error = errno; break; }
                r = line_edit_read(editor, "> ", o->interrupted, &text, &len);
            } else {
                if (tty) print_piece(&out, "> ", 2);
                if (out.failed) break;
                r = read_turn(tty, o->interrupted, limit, &text, &len);
            }
            if (r == 3) {
                fprintf(stderr, "error: the turn is longer than %zu bytes, more than the context can hold; skipped\n", limit);
                last_failed = true;
                continue;
            }
            if (r == 2) {
                *o->interrupted = 0;   /* before the hint: a Ctrl-C after it is the second one */
                if (++interrupts >= 2) { print_piece(&out, "\n", 1); break; }
                print_piece(&out, "\n", 1);
                fprintf(stderr, "(Ctrl-C again or Ctrl-D to end the chat)\n");
                continue;
            }
            if (r == 0) { if (tty) print_piece(&out, "\n", 1); break; }
            if (r < 0) {
                fprintf(stderr, editor ? "error: terminal: %s\n" : "error: stdin: read error: %s\n", strerror(errno));
                failed = true;
                break;
            }
        }
        interrupts = 0;
        bool empty = strspn(text, " \t\n") == len;
        if (text[0] == '/' && text[1] != '/') {
            int end = command(&c, s, text);
            free(text);
            if (end) break;
            continue;
        }
        if (empty) { free(text); continue; }
        const char *content = text[0] == '/' ? text + 1 : text;
        if (conversation_add(&c, "user", content, strlen(content)) != 0) {
            free(text);
            fprintf(stderr, "error: out of memory\n");
            failed = true;
            break;
        }
        free(text);
        turn++;
        last_failed = answer_turn(m, s, o, &c, turn, &warned, &out) != 0;
        if (last_failed) {
            conversation_pop(&c);   /* the turn that could not be answered is taken back */
            turn--;
        }
        *o->interrupted = 0;   /* a Ctrl-C that stopped the answer is spent */
        if (out.failed || o->single_turn) break;
    }
    sigaction(SIGINT, &old, NULL);
    line_edit_close(editor);
    conversation_free(&c);
    if (out.failed) {
        fprintf(stderr, "error: stdout: write failed: %s\n", strerror(out.error));
        return 1;
    }
    return failed || last_failed ? 1 : 0;
}
