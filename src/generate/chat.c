/* The public face of chat templates: the model's (or a given) template, the vocabulary's BOS/EOS
 * text, and the caller's tools, extra variables and date, handed to the interpreter. */
#include "load/model.h"
#include "template/chat_template.h"
#include "template/tool_calls.h"
#include "core/error.h"
#include <stdlib.h>
#include <string.h>

const char *ts_chat_family(const ts_model *m) {
    if (!m->chat_template) return NULL;
    jinja_template *t;
    ts_error err;
    if (jinja_parse(m->chat_template, strlen(m->chat_template), &t, &err) != 0) return "unknown";
    jinja_template_free(t);
    return "jinja";
}

/* The text of a special token as the template sees it ("<s>"), or "". */
static const char *token_string(const ts_model *m, int id) {
    return m && m->has_vocab && id >= 0 && id < m->voc.n ? m->voc.text[id] : "";
}

static int parse_json(const char *text, json_type want, const char *what, json_value **out, ts_error *err) {
    *out = NULL;
    if (!text) return 0;
    ts_error e2;
    if (json_parse(text, strlen(text), out, &e2) != 0) return ts_fail(err, "%s: %s", what, e2.msg);
    if ((*out)->type != want) {
        json_free(*out);
        *out = NULL;
        return ts_fail(err, "%s must be a JSON %s", what, want == JSON_ARRAY ? "array" : "object");
    }
    return 0;
}

/* Renders with the options' template, tools, extra variables and date over v. */
static int render(const ts_model *m, chat_vars *v, const ts_chat_options *opt, char **out, ts_error *err) {
    const char *tmpl = opt && opt->template_text ? opt->template_text : m ? m->chat_template : NULL;
    if (!tmpl) return ts_fail(err, "the model has no chat template");
    struct tm day, *date = NULL;
    if (opt && opt->date) {
        if (chat_parse_date(opt->date, &day) != 0) return ts_fail(err, "the date '%.40s' is not a YYYY-MM-DD date", opt->date);
        date = &day;
    }
    json_value *tools = NULL, *kwargs = NULL;
    if (parse_json(opt ? opt->tools_json : NULL, JSON_ARRAY, "the tools", &tools, err) != 0 ||
        parse_json(opt ? opt->kwargs_json : NULL, JSON_OBJECT, "the chat template variables", &kwargs, err) != 0) {
        json_free(tools);
        return -1;
    }
    if (tools) v->tools = tools;
    v->kwargs = kwargs;
    int rc = chat_render(tmpl, v, date, NULL, out, err);
    json_free(tools);
    json_free(kwargs);
    return rc;
}

int ts_chat_render_opts(const ts_model *m, const ts_chat_message *msgs, int n, bool add_generation_prompt,
                        const ts_chat_options *opt, char **out, bool *has_bos, ts_error *err) {
    *out = NULL;
    json_value *messages;
    if (chat_messages_json(msgs, n, &messages, err) != 0) return -1;
    chat_vars v = { .messages = messages, .add_generation_prompt = add_generation_prompt,
                    .bos_token = token_string(m, m->has_vocab ? m->voc.bos : -1),
                    .eos_token = token_string(m, m->has_vocab ? m->voc.eos : -1) };
    int rc = render(m, &v, opt, out, err);
    json_free(messages);
    if (rc == 0) *has_bos = chat_starts_with_bos(*out, v.bos_token);
    return rc;
}

int ts_chat_render(const ts_model *m, const ts_chat_message *msgs, int n, bool add_generation_prompt,
                   char **out, bool *has_bos, ts_error *err) {
    return ts_chat_render_opts(m, msgs, n, add_generation_prompt, NULL, out, has_bos, err);
}

int ts_chat_render_json(const ts_model *m, const char *conversation_json, size_t len,
                        const ts_chat_options *opt, char **out, ts_error *err) {
    *out = NULL;
    json_value *conv;
    ts_error e2;
    if (json_parse(conversation_json, len, &conv, &e2) != 0) return ts_fail(err, "the conversation: %s", e2.msg);
    int rc = -1;
    const json_value *agp = json_get(conv, "add_generation_prompt"), *tools = json_get(conv, "tools");
    const json_value *bos = json_get(conv, "bos_token"), *eos = json_get(conv, "eos_token");
    chat_vars v = { .messages = json_get(conv, "messages") };
    if (conv->type != JSON_OBJECT) ts_fail(err, "the conversation must be a JSON object");
    else if (!v.messages || v.messages->type != JSON_ARRAY) ts_fail(err, "the conversation needs a \"messages\" array");
    else if (agp && agp->type != JSON_BOOL) ts_fail(err, "\"add_generation_prompt\" must be true or false");
    else if ((bos && bos->type != JSON_STRING) || (eos && eos->type != JSON_STRING)) ts_fail(err, "\"bos_token\" and \"eos_token\" must be strings");
    else if (tools && tools->type != JSON_ARRAY && tools->type != JSON_NULL) ts_fail(err, "\"tools\" must be an array");
    else {
        v.add_generation_prompt = agp && agp->boolean;
        v.bos_token = m ? token_string(m, m->has_vocab ? m->voc.bos : -1) : bos ? bos->str : "";
        v.eos_token = m ? token_string(m, m->has_vocab ? m->voc.eos : -1) : eos ? eos->str : "";
        v.tools = tools;   /* absent: undefined in the template; null: none */
        rc = render(m, &v, opt, out, err);
    }
    json_free(conv);
    return rc;
}

const char *ts_chat_tool_format(const ts_model *m, const ts_chat_options *opt) {
    const char *tmpl = opt && opt->template_text ? opt->template_text : m ? m->chat_template : NULL;
    if (!tmpl) return NULL;
    ts_error err;
    const tool_format *f = tool_format_detect(tmpl, token_string(m, m && m->has_vocab ? m->voc.bos : -1),
                                              token_string(m, m && m->has_vocab ? m->voc.eos : -1), &err);
    return f ? tool_format_name(f) : NULL;
}
