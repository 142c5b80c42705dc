/* The interactive chat: a conversation kept turn by turn, each turn rendered whole with the
 * model's template and evaluated through the session's prefix cache (only what is new since the
 * last answer is prefilled), the answer streamed. Ctrl-C stops an answer; at the prompt, Ctrl-C
 * twice or Ctrl-D (end of input) ends the chat. */
#ifndef TS_CLI_CHAT_H
#define TS_CLI_CHAT_H
#include "tessera.h"

typedef struct chat_options {
    const char *model_path;          /* for messages */
    const char *template_name;       /* the template's source, for its errors */
    const ts_chat_options *chat;     /* --chat-template, --chat-template-kwargs, --tools, --date */
    const char *system;              /* the first system prompt (NULL: none) */
    const char *first_prompt;        /* NULL, or the first user turn */
    bool raw, heal, verbose, quiet;
    bool ignore_eos;                 /* --ignore-eos */
    const ts_grammar *grammar;       /* --grammar, --json-schema, --json: every answer's shape */
    bool single_turn;                /* -st: end after the first answer */
    bool no_history;                 /* --no-history: no history file (the session keeps its own) */
    int max_tokens;                  /* per answer; -1: until the end of the answer or a full context */
    ts_sampler_params sampling;
    const char *const *stop;
    int n_stop;
    /* Ctrl-C: main's flag and the handler that sets it (installed for the chat's duration) */
    volatile sig_atomic_t *interrupted;
    void (*on_interrupt)(int);
} chat_options;

/* Reads turns from stdin until end of input (or /exit). On a terminal it prompts with "> ".
 * Returns the exit status: 0, or 1 when the last turn failed or stdout could not be written. */
int run_chat(ts_model *m, ts_session *s, const chat_options *o);

#endif
