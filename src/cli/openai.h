/* OpenAI's API shapes: a /v1/chat/completions or /v1/completions request body read into a request
 * (what the engine cannot do yet refused by name, never ignored), and the response objects written
 * back: whole completions, streamed chunks, errors. Used by the server and by OpenAI Batch lines. */
#ifndef TS_CLI_OPENAI_H
#define TS_CLI_OPENAI_H
#include "tessera.h"
#include "cli/request.h"
#include "io/json.h"
#include "template/tool_calls.h"

enum { OPENAI_CHAT = 1, OPENAI_COMPLETIONS = 2 };
#define OPENAI_MAX_N 16

/* What a body asks for besides the request fields. */
typedef struct openai_options {
    const char *model;              /* "model", or NULL */
    int n;                          /* choices (1..OPENAI_MAX_N) */
    bool stream, include_usage;     /* stream; stream_options.include_usage */
    int logprobs;                   /* 0: none; 1 + k: each token's, with k alternatives */
} openai_options;

/* Reads body (an object) for endpoint api into f (whose settings hold the defaults) and x. -1
 * (err) on a wrong type or value, naming the key, and on what is not supported (tools,
 * response_format, ...). */
int  openai_parse_body(const json_value *body, int api, request_fields *f, openai_options *x, ts_error *err);

/* "stop" or "length" (an answer cut by max_tokens or the context); "tool_calls" is the caller's. */
const char *openai_finish_reason(const ts_gen_result *res);

/* The tool calls in an answer to a request that gave tools (f->tools, not "tool_choice": "none"),
 * written in the template's format (tool_format_by_name of ts_chat_tool_format; NULL: none is read): 1 with *out filled
 * (the first call only with "parallel_tool_calls": false; free with tool_calls_free), 0 when there
 * are none (*out empty). A call that does not parse is left as text: the answer is never lost.
 * seed: the calls' ids derive from it. */
int  openai_read_tool_calls(const tool_format *fmt, const request_fields *f, const ts_gen_result *res, uint64_t seed,
                            tool_calls *out);
/* tool_choice "required" or naming a function (f->forced_tool): f->grammar made to let the model
 * write exactly one call of the tools (or the named one) in the template's format (NULL: none),
 * its arguments following the tool's parameter schema. 0 (also when no call is forced), or -1 (err):
 * the format cannot be made to write one, a schema is refused, a grammar was given too. */
int  openai_tool_grammar(const tool_format *fmt, request_fields *f, ts_error *err);
/* The response of a whole completion: {"id", "object", "created", "model", "choices": [...],
 * "usage"}. Choice i is res[i], and its tool calls calls[i] when calls and calls[i] hold any (then
 * content is the text outside them or null, and finish_reason "tool_calls"); logprobs: put each
 * choice's (m names the tokens). */
int  openai_put_completion(json_buf *b, int api, const char *id, const char *model, long long created,
                           const ts_gen_result *const *res, const tool_calls *const *calls, int n, const ts_model *m,
                           bool logprobs);
/* A chat chunk whose delta carries a choice's tool calls, whole (first: the delta also says the role). */
int  openai_put_tool_calls_chunk(json_buf *b, const char *id, const char *model, long long created, int index,
                                 bool first, const tool_calls *calls);
/* One chunk of a stream (the JSON object, without "data: "): choice index's delta text (first:
 * the chat delta carries the role), its logprobs for tokens [lp_from, lp_to) of res when res is
 * given, and its finish reason when finish is given. */
int  openai_put_chunk(json_buf *b, int api, const char *id, const char *model, long long created, int index,
                      bool first, const char *text, size_t len, const char *finish, const ts_gen_result *res,
                      int lp_from, int lp_to, const ts_model *m);
/* The usage chunk that ends a stream with include_usage: empty choices. */
int  openai_put_usage_chunk(json_buf *b, int api, const char *id, const char *model, long long created,
                            const ts_gen_result *const *res, int n);
/* {"error": {"message", "type", "param", "code"}} */
int  openai_put_error(json_buf *b, const char *message, const char *type, const char *code);
/* How many of res's tokens made its text (a stop string's tokens are generated, then cut). */
int  openai_tokens_in_text(const ts_gen_result *res, const ts_model *m);

#endif
