/* Chat templates: a model's Jinja chat template (tokenizer.chat_template in a GGUF, chat_template
 * in tokenizer_config.json) rendered by the interpreter in template/jinja.h with the variables Hugging
 * Face transformers gives it: messages, tools, add_generation_prompt, bos_token, eos_token and
 * any extra ones (enable_thinking, ...). */
#ifndef TS_TEMPLATE_CHAT_TEMPLATE_H
#define TS_TEMPLATE_CHAT_TEMPLATE_H
#include <stdbool.h>
#include <time.h>
#include "tessera.h"
#include "io/json.h"
#include "template/jinja.h"

typedef struct chat_vars {
    const json_value *messages;          /* a JSON array of message objects ({"role", "content", ...}) */
    bool add_generation_prompt;          /* end with the header of an assistant turn */
    const char *bos_token, *eos_token;   /* the special tokens' text ("<s>"); NULL means "" */
    const json_value *tools;             /* a JSON array (or null), or NULL: `tools` stays undefined */
    const json_value *kwargs;            /* a JSON object of extra variables, or NULL */
} chat_vars;

/* Renders template text with v into a malloc'd NUL-terminated string (*out, free with free()).
 * date: what strftime_now() formats (NULL: today). limits NULL: jinja_default_limits(). Returns 0,
 * or -1 with err: a template that does not parse ("chat template: line N: ..."), one that raises
 * (its message), or one that fails while rendering. */
int chat_render(const char *template_text, const chat_vars *v, const struct tm *date,
                const jinja_limits *limits, char **out, ts_error *err);

/* "YYYY-MM-DD" -> a date (weekday and day of year filled in); -1 when it is not a real date. */
int chat_parse_date(const char *s, struct tm *out);

/* A JSON array of {"role", "content"} objects for plain string messages (roles and contents must be
 * valid UTF-8); free with json_free. */
int chat_messages_json(const ts_chat_message *msgs, int n, json_value **out, ts_error *err);

/* True when text begins with bos_token (a non-empty one). */
bool chat_starts_with_bos(const char *text, const char *bos_token);

#endif
