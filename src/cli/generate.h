/* What every CLI mode shares: turning a prompt (or a conversation) into token ids, and generating
 * an answer in a session whose KV cache is reused across requests that share a prefix. */
#ifndef TS_CLI_GENERATE_H
#define TS_CLI_GENERATE_H
#include "tessera.h"

/* A prompt -> ids. With a recognized chat template (and !raw) the messages are rendered with the
 * generation prompt and special tokens are parsed; otherwise the user contents are sent as plain
 * text. *chat says which happened; *unknown_template is set when the model's template was not
 * recognized (the caller warns). Returns the count, or -1 with err. */
int prompt_to_tokens(const ts_model *m, const ts_chat_message *msgs, int n_msgs, bool raw,
                     int32_t **out, bool *chat, bool *unknown_template, ts_error *err);

/* A context plus the ids its cache holds, so a request sharing a prefix with the previous one
 * re-evaluates only what differs (prefix cache). */
typedef struct session {
    ts_model *m;
    ts_context *ctx;
    int32_t *cached;          /* the ids in ctx's cache, in order */
    int n_cached, cap;
} session;

int  session_init(session *s, ts_model *m, int n_ctx, int n_threads, ts_error *err);
void session_free(session *s);

typedef struct gen_request {
    const int32_t *prompt;
    int n_prompt;
    int max_tokens;
    ts_sampler_params sampling;
    const char *const *stop;  /* stop strings (not included in the answer) */
    int n_stop;
    FILE *dump_logits;        /* NULL, or: one float row per evaluated position (disables reuse) */
    /* streaming: called with each piece of answer text that is final (whole UTF-8 characters) */
    void (*on_text)(void *user, const char *text, size_t len);
    void *user;
    bool heal;                /* token healing: see heal_prompt */
} gen_request;

typedef struct gen_result {
    char *text;               /* the answer (malloc'd, NUL-terminated) */
    size_t len;
    int n_prompt, n_generated, n_reused;   /* n_prompt: positions evaluated (one less when healed);
                                              n_reused: prompt positions taken from the cache */
    int n_healed;             /* bytes of prompt text the first token re-generated (0: no healing);
                                 the answer starts after them, so prompt text + answer reads right */
    const char *finish_reason;   /* "stop" (EOS, end of turn or a stop string), "length" or "context" */
    double prompt_seconds, gen_seconds;
    double first_token_seconds;  /* from the call to the first sampled token (time to first token) */
} gen_result;

/* Token healing. A prompt cut inside a word ("Once upon a ti") ends in a token the model would
 * rarely have produced there (" ti" rather than " time"). When the last token is plain text ending
 * in a letter, digit or non-ASCII character, it is backed up: the prompt is evaluated without it and
 * the first generated token is restricted to tokens whose text starts with the removed text.
 * Returns the removed text's length (written to removed, room for cap bytes), 0 when the prompt is
 * left alone. */
int  heal_prompt(const ts_model *m, const int32_t *prompt, int n_prompt, char *removed, size_t cap);

/* Evaluates the prompt (reusing the cached prefix) and generates up to max_tokens tokens. */
int  generate(session *s, const gen_request *rq, gen_result *res, ts_error *err);
void gen_result_free(gen_result *r);

double now_seconds(void);

#endif
