/* `run serve MODEL`: an OpenAI-compatible HTTP server on libc sockets and poll, one thread for the
 * connections and the session's steps (the model loads in a second one while /health says 503). */
#ifndef TS_CLI_SERVER_H
#define TS_CLI_SERVER_H
#include "tessera.h"
#include <signal.h>

typedef struct server_options {
    const char *model_path;
    const char *model_id;          /* the name /v1/models lists and responses carry */
    const char *host;              /* the address to bind (default 127.0.0.1) */
    int port;                      /* 0: any free port (the one bound is printed) */
    const char *api_key;           /* NULL: no key asked */
    int n_parallel;                /* slots; 0: ts_default_slots */
    int n_ctx, n_threads;
    int max_connections;           /* open connections at most (the oldest idle one makes room) */
    int max_queue;                 /* requests waiting for a slot at most (429 beyond) */
    int timeout;                   /* seconds: a request must arrive within it, an idle connection
                                      is closed after it, a stalled reader too */
    int max_tokens;                /* a request's default max_tokens (-1: until the end or a full context) */
    ts_sampler_params sampling;    /* the defaults of what a request leaves out */
    bool heal, verbose, quiet;
    const ts_chat_options *chat;   /* the chat template and its variables */
    ts_load_options load;
    int spec, spec_k, spec_n;      /* speculative decoding (ts_session_options) */
    bool spec_always;
    const char *model_draft;       /* NULL, or the draft model's file (loaded with the model) */
    const ts_grammar *grammar;     /* --grammar, --json-schema, --json: the shape of answers whose request gives none */
    const volatile sig_atomic_t *stop;   /* raised by SIGTERM / SIGINT: 1 drains, 2 cancels */
} server_options;

/* Serves until stopped; the exit status (0 after a graceful stop, 1 when it could not start). */
int run_server(const server_options *o);

#endif
