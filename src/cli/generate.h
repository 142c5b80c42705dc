/* What every CLI mode shares: turning a prompt (or a conversation) into token ids, and generating
 * an answer in a session whose KV cache is reused across requests that share a prefix. */
#ifndef TS_CLI_GENERATE_H
#define TS_CLI_GENERATE_H
#include "tessera.h"

/* A prompt -> ids. With a chat template (the model's, or chat_opt->template_text) and !raw the messages
 * are rendered with the generation prompt (and chat_opt's tools, variables and date); otherwise the
 * user contents are sent as plain text. Either way text that spells a special token becomes that
 * token, as in llama-cli. *chat says which happened; *unknown_template is set when the model's
 * template does not parse (the caller warns). chat_opt may be NULL. Returns the count, or -1 with err. */
int prompt_to_tokens(const ts_model *m, const ts_chat_message *msgs, int n_msgs, bool raw,
                     const ts_chat_options *chat_opt, int32_t **out, bool *chat, bool *unknown_template,
                     ts_error *err);

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
    int n_prompt, n_generated, n_reused;   /* n_prompt: the prompt tokens the answer follows (fewer
                                              than given when healing backed some up); n_reused: how
                                              many of them were taken from the cache */
    int n_healed;             /* bytes of prompt text generated again by token healing (0: none);
                                 the answer starts after them, so prompt text + answer reads right */
    const char *finish_reason;   /* "stop" (EOS, end of turn or a stop string), "length" or "context" */
    double prompt_seconds, gen_seconds;
    double first_token_seconds;  /* from the call to the first sampled token (time to first token) */
} gen_result;

/* Token healing. A prompt cut inside a word ("Once upon a ti") ends in tokens the model would
 * rarely have produced there (" t" + "i" rather than " time"). The tokens of the prompt's last
 * word (letters, digits, non-ASCII; the first may carry the space before the word; at most
 * HEAL_MAX_TOKENS) are backed up: the prompt is evaluated without them, and generation must spell
 * the removed text again (each token's text starts with what is left of it, or is a beginning of
 * it) before it goes on freely. Returns the number of tokens backed up (0: the prompt does not end
 * in a word) and the removed text in removed (*n_removed bytes, at most cap). */
#define HEAL_MAX_TOKENS 8
int  heal_prompt(const ts_model *m, const int32_t *prompt, int n_prompt, char *removed, size_t cap,
                 int *n_removed);

/* Evaluates the prompt (reusing the cached prefix) and generates up to max_tokens tokens. */
int  generate(session *s, const gen_request *rq, gen_result *res, ts_error *err);
void gen_result_free(gen_result *r);

double now_seconds(void);

#endif
