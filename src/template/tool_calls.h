/* Tool calls in a model's generated text -> OpenAI `tool_calls`. Each way a chat template renders an
 * assistant message's tool calls is a row of a table (tool_calls.c): its markers and the syntax of the
 * call between them (a JSON object, a name then JSON arguments, XML-like key/value markup, gpt-oss's
 * harmony headers, Python calls, Gemma 4's object notation). The row a model uses is found from its
 * template: a probe assistant message with a known tool call is rendered, and of the rows whose parser
 * gets that call back, the one leaving the least text outside the calls is the template's format. */
#ifndef TS_TEMPLATE_TOOL_CALLS_H
#define TS_TEMPLATE_TOOL_CALLS_H
#include <stddef.h>
#include <stdint.h>
#include "tessera.h"
#include "io/json.h"

typedef struct tool_call {
    char *id;          /* "call_" + 24 letters and digits (Mistral's formats: 9 letters and digits, which its templates require) */
    char *name;
    char *arguments;   /* a JSON object, compact ("{}" when the call has none) */
} tool_call;

typedef struct tool_calls {
    tool_call *calls;
    int n;
    char *content;     /* the text outside the calls ("" when there is none), NUL-terminated; whitespace next to a call dropped */
    size_t content_len;   /* its length (the text may hold NUL bytes) */
} tool_calls;

typedef struct tool_format tool_format;   /* a row of the table */

/* The format template_text renders tool calls in, or NULL (err untouched) when it renders none this
 * table knows. The probe is rendered with arguments as an object and as a JSON string, content "" and
 * null. When no row reads it back, a row whose template marker the text holds is taken (Kimi K2, whose
 * template raises on calls in the sandbox; Granite 3.x and LFM2.5-Instruct, whose system prompts ask
 * for calls their templates never render). NULL with err filled only when the template cannot render
 * a generation prompt at all. bos/eos: the special tokens' text (NULL: ""). */
const tool_format *tool_format_detect(const char *template_text, const char *bos, const char *eos, ts_error *err);
/* Where the assistant's part of full begins, given the rendering of the conversation before it with
 * the generation prompt: their common prefix, moved back to the start of a marker it cuts
 * ("<|START_" of "<|START_ACTION|>"). */
size_t tool_format_assistant_start(const char *prompt, const char *full);

/* The table: tool_format_count() rows, tool_format_at(i) for i in [0, count); by name (NULL if none). */
int tool_format_count(void);
const tool_format *tool_format_at(int i);
const tool_format *tool_format_by_name(const char *name);
const char *tool_format_name(const tool_format *f);

/* The text that starts a call (or the section of calls) in this format: what the engine may switch to
 * a grammar for the calls after. "{" for Llama's bare JSON; "to=functions." for harmony (a name and
 * the header follow); "" when the generation prompt already opens the call (functionary v3.2). */
const char *tool_format_start_marker(const tool_format *f);

/* A GBNF expression for one call of the tool `name` written as the template lays it out, its
 * arguments the rule args_rule, appended to b: what tool_choice "required" makes the model write.
 * 0; -1 when the format offers no such call (its markers are control tokens, or its syntax is not a
 * JSON object); -2 when out of memory. */
int tool_format_call_gbnf(const tool_format *f, const char *name, const char *args_rule, json_buf *b);

/* Parses text[0..len), the text the model generated after the generation prompt. 0 with *out filled
 * (n = 0 and content = the text when it holds no call), or -1 with err (one line) when a call's start
 * marker is there but its body does not parse; *out is then empty. tools: the request's tool list (a
 * JSON array of {"type": "function", "function": {"name", "parameters"}}, or NULL): the parameters'
 * schema types decide whether an XML-style value is a string or JSON. id_seed: the ids are a hash of
 * it and the call's index (the same seed and text give the same ids). Free with tool_calls_free. */
int tool_calls_parse(const tool_format *f, const char *text, size_t len, const json_value *tools,
                     uint64_t id_seed, tool_calls *out, ts_error *err);
void tool_calls_free(tool_calls *c);
/* Keeps the first n calls (the others freed). */
void tool_calls_keep(tool_calls *c, int n);

/* For streaming: how many leading bytes of text are surely plain content, i.e. no start marker of f
 * begins inside them (a marker cut off by the end of text counts as beginning there) and they do not
 * end in whitespace (dropped if a call follows), so what is streamed stays a prefix of the parsed
 * content. Once generation ends, the parse's content is the rest. 0 for a format
 * whose call opens with the generated text itself (functionary v3.2, Llama's bare JSON once the text's
 * first non-blank byte is '{' or the text is still blank). */
size_t tool_calls_safe_prefix(const tool_format *f, const char *text, size_t len);

#endif
