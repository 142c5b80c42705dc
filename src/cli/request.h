/* A request's fields as a JSON object gives them: the prompt (messages, a prompt text, token ids)
 * and the generation settings (max_tokens, sampling, stop strings). One reading for a --batch
 * line, an OpenAI Batch body and a request to the server, so that one key means one thing. */
#ifndef TS_CLI_REQUEST_H
#define TS_CLI_REQUEST_H
#include "tessera.h"
#include "io/json.h"

#define REQUEST_MAX_STOP 16

typedef struct request_fields {
    ts_chat_message *msgs;          /* the conversation (contents point into the JSON or texts) */
    int n_msgs, cap_msgs;
    char **texts;                   /* message contents joined from parts (owned) */
    int n_texts;
    int32_t *tokens;                /* the prompt as ids (no template), else NULL */
    int n_tokens;
    bool raw;                       /* the prompt is text to send as it is (a completion's) */
    int max_tokens;                 /* < 0: until the end of the answer or a full context */
    ts_sampler_params sampling;
    bool own_seed;                  /* the request gives its seed */
    const char *stop[REQUEST_MAX_STOP];
    int n_stop;
    bool ignore_eos;
    ts_grammar *grammar;            /* response_format, json_schema or grammar (owned), else NULL */
    const json_value *tools;        /* "tools" (chat): a JSON array of functions, else NULL */
    char *tools_json;               /* it as text, for the template (owned) */
    bool no_tool_calls;             /* "tool_choice": "none": the answer is not read for calls */
    bool one_tool_call;             /* "parallel_tool_calls": false: the first call only */
    const char *forced_tool;        /* "tool_choice": "required" (""), or the function it names: the
                                       answer is one call, made so by a grammar (openai_tool_grammar) */
} request_fields;

void request_fields_free(request_fields *f);
/* A string member without NUL bytes: 1 found, 0 absent, -1 (err) of another type. */
int  request_get_text(const json_value *obj, const char *key, const char **out, ts_error *err);
int  request_add_message(request_fields *f, const char *role, const char *content);
/* "messages" (contents as strings or text parts), else "prompt" (after system), else "system" +
 * "user" (system: the default system turn, or NULL). */
int  request_parse_messages(request_fields *f, const json_value *req, const char *system, ts_error *err);
/* v as a non-empty array of token ids (name: the key, for messages). */
int  request_parse_tokens(request_fields *f, const json_value *v, const char *name, ts_error *err);
/* max_completion_tokens / max_tokens, temperature, top_p, top_k, min_p, repeat_penalty, seed, stop,
 * ignore_eos: each checked against its range, naming the key; absent keys keep f's values. And the
 * answer's shape: OpenAI's response_format ({"type": "json_schema", "json_schema": {"schema"}},
 * {"type": "json_object"} or {"type": "text"}), llama.cpp's json_schema (a schema) and grammar
 * (GBNF text): at most one of them; a schema or grammar that cannot be used is refused. */
int  request_parse_settings(request_fields *f, const json_value *req, ts_error *err);

#endif
