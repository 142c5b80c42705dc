/* OpenAI's request bodies and response objects (see openai.h). */
#include "cli/openai.h"
#include "core/error.h"
#include "text/grammar.h"
#include "text/json_schema.h"
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const json_value *given(const json_value *obj, const char *key) {
    const json_value *v = json_get(obj, key);
    return v && v->type != JSON_NULL ? v : NULL;
}

/* A completion's prompt: a string, one string in an array, or token ids. */
static int parse_completion_prompt(request_fields *f, const json_value *v, ts_error *err) {
    if (v && v->type == JSON_ARRAY && v->n == 1 && v->items[0].type == JSON_STRING) v = &v->items[0];
    if (v && v->type == JSON_ARRAY && v->n == 1 && v->items[0].type == JSON_ARRAY) v = &v->items[0];
    if (v && v->type == JSON_ARRAY) {
        if (v->n > 1 && (v->items[0].type == JSON_STRING || v->items[0].type == JSON_ARRAY))
            return ts_fail(err, "\"prompt\" holds several prompts: send one per request");
        return request_parse_tokens(f, v, "prompt", err);
    }
    if (!v || v->type != JSON_STRING || strlen(v->str) != v->len)
        return ts_fail(err, "\"prompt\" must be a string or an array of token ids");
    if (request_add_message(f, "user", v->str) != 0) return ts_fail(err, "out of memory");
    f->raw = true;
    return 0;
}

/* "tools" (functions with a name and optional description and parameters), "tool_choice" ("auto",
 * "none", "required" or naming a function: openai_tool_grammar makes the call) and
 * "parallel_tool_calls". */
static int parse_tools(const json_value *body, request_fields *f, ts_error *err) {
    const json_value *tools = given(body, "tools"), *choice = given(body, "tool_choice"), *par = given(body, "parallel_tool_calls");
    if (tools) {
        if (tools->type != JSON_ARRAY) return ts_fail(err, "\"tools\" must be an array");
        for (size_t i = 0; i < tools->n; i++) {
            const json_value *t = &tools->items[i], *fn = json_get(t, "function");
            const char *type = json_get_str(t, "type");
            const json_value *name = fn ? json_get(fn, "name") : NULL, *params = fn ? json_get(fn, "parameters") : NULL;
            if (t->type != JSON_OBJECT || !type || strcmp(type, "function") != 0 || !fn || fn->type != JSON_OBJECT ||
                !name || name->type != JSON_STRING || name->len == 0 || (params && params->type != JSON_OBJECT && params->type != JSON_NULL))
                return ts_fail(err, "\"tools\" item %zu must be {\"type\": \"function\", \"function\": {\"name\", \"parameters\"?}}", i + 1);
        }
        json_buf b = {0};
        if (json_buf_put_value(&b, tools) != 0) { json_buf_free(&b); return ts_fail(err, "out of memory"); }
        free(f->tools_json);
        f->tools_json = b.data;
        f->tools = tools->n ? tools : NULL;
    }
    if (choice) {
        const char *c = choice->type == JSON_STRING ? choice->str : NULL;
        const json_value *fn = choice->type == JSON_OBJECT ? json_get(choice, "function") : NULL;
        const char *named = fn ? json_get_str(fn, "name") : NULL;
        if (c && !strcmp(c, "none")) f->no_tool_calls = true;
        else if (c && !strcmp(c, "required")) f->forced_tool = "";
        else if (named) f->forced_tool = named;
        else if (!c || strcmp(c, "auto") != 0)
            return ts_fail(err, "\"tool_choice\" must be \"auto\", \"none\", \"required\" or {\"type\": \"function\", \"function\": {\"name\"}}");
        if (f->forced_tool && !f->tools) return ts_fail(err, "\"tool_choice\" asks for a call but there are no \"tools\"");
        if (named) {
            bool found = false;
            for (size_t i = 0; i < f->tools->n && !found; i++)
                found = !strcmp(json_get_str(json_get(&f->tools->items[i], "function"), "name"), named);
            if (!found) return ts_fail(err, "\"tool_choice\" names \"%.60s\", which is not among the tools", named);
        }
    }
    if (par) {
        if (par->type != JSON_BOOL) return ts_fail(err, "\"parallel_tool_calls\" must be true or false");
        f->one_tool_call = !par->boolean;
    }
    return 0;
}

int openai_parse_body(const json_value *body, int api, request_fields *f, openai_options *x, ts_error *err) {
    const json_value *v;
    memset(x, 0, sizeof *x);
    x->n = 1;
    if (!body || body->type != JSON_OBJECT) return ts_fail(err, "the request body must be a JSON object");
    /* what structured output and tool calls will bring: refused until then, never ignored */
    static const char *const later[] = { "functions", "function_call",
                                         "logit_bias", "audio", "modalities", "prediction", "suffix" };
    for (size_t i = 0; i < sizeof later / sizeof later[0]; i++)
        if (given(body, later[i])) return ts_fail(err, "\"%s\" is not supported yet", later[i]);
    if ((v = given(body, "model"))) {
        if (v->type != JSON_STRING) return ts_fail(err, "\"model\" must be a string");
        x->model = v->str;
    }
    if ((v = given(body, "n"))) {
        if (v->type != JSON_NUMBER || !v->is_integer || v->integer < 1 || v->integer > OPENAI_MAX_N)
            return ts_fail(err, "\"n\" must be a whole number in [1, %d]", OPENAI_MAX_N);
        x->n = (int)v->integer;
    }
    if ((v = given(body, "stream"))) {
        if (v->type != JSON_BOOL) return ts_fail(err, "\"stream\" must be true or false");
        x->stream = v->boolean;
    }
    if ((v = given(body, "stream_options"))) {
        if (v->type != JSON_OBJECT) return ts_fail(err, "\"stream_options\" must be an object");
        const json_value *u = given(v, "include_usage");
        if (u && u->type != JSON_BOOL) return ts_fail(err, "\"stream_options.include_usage\" must be true or false");
        x->include_usage = u && u->boolean;
    }
    if ((v = given(body, "echo")) && (v->type != JSON_BOOL || v->boolean))
        return ts_fail(err, "\"echo\" is not supported");
    if (api == OPENAI_CHAT) {
        /* logprobs: true/false, top_logprobs: 0..20 alternatives */
        const json_value *top = given(body, "top_logprobs");
        if ((v = given(body, "logprobs"))) {
            if (v->type != JSON_BOOL) return ts_fail(err, "\"logprobs\" must be true or false");
            if (v->boolean) x->logprobs = 1;
        }
        if (top) {
            if (top->type != JSON_NUMBER || !top->is_integer || top->integer < 0 || top->integer > TS_MAX_TOP_LOGPROBS)
                return ts_fail(err, "\"top_logprobs\" must be a whole number in [0, %d]", TS_MAX_TOP_LOGPROBS);
            if (!x->logprobs && top->integer > 0) return ts_fail(err, "\"top_logprobs\" needs \"logprobs\": true");
            if (x->logprobs) x->logprobs = 1 + (int)top->integer;
        }
        if (parse_tools(body, f, err) != 0) return -1;
        if (!given(body, "messages")) return ts_fail(err, "\"messages\" is required");
        if (request_parse_messages(f, body, NULL, err) != 0) return -1;
    } else {
        /* the legacy form: logprobs is the number of alternatives, 0..5 */
        if ((v = given(body, "logprobs"))) {
            if (v->type != JSON_NUMBER || !v->is_integer || v->integer < 0 || v->integer > 5)
                return ts_fail(err, "\"logprobs\" must be a whole number in [0, 5]");
            x->logprobs = 1 + (int)v->integer;
        }
        if (given(body, "tools") || given(body, "tool_choice")) return ts_fail(err, "\"tools\" are for /v1/chat/completions");
        if (parse_completion_prompt(f, json_get(body, "prompt"), err) != 0) return -1;
    }
    return request_parse_settings(f, body, err);
}

const char *openai_finish_reason(const ts_gen_result *res) {
    return !strcmp(res->finish_reason, "stop") ? "stop" : "length";
}

static int put(json_buf *b, const char *s) { return json_buf_put(b, s, strlen(s)); }


int openai_tokens_in_text(const ts_gen_result *res, const ts_model *m) {
    size_t at = 0;
    char piece[256];
    for (int i = 0; i < res->n_generated; i++) {
        if (at >= res->len + (size_t)res->n_healed) return i;
        int pl = ts_token_text(m, res->tokens[i], piece, sizeof piece);
        at += pl > 0 ? (size_t)pl : 0;
    }
    return res->n_generated;
}

/* A token as OpenAI shows it: its text (invalid UTF-8 replaced), its bytes and its logprob. */
static int put_token(json_buf *b, const ts_model *m, int32_t token, float logprob, bool chat) {
    char piece[256];
    int pl = ts_token_text(m, token, piece, sizeof piece);
    if (pl < 0) pl = 0;
    int bad = json_buf_put_string(b, piece, (size_t)pl);
    if (!chat) return bad;
    bad |= json_buf_printf(b, ", \"logprob\": %.9g, \"bytes\": [", logprob);
    for (int i = 0; i < pl; i++) bad |= json_buf_printf(b, i ? ", %u" : "%u", (unsigned char)piece[i]);
    return bad | put(b, "]");
}

/* A choice's logprobs for tokens [from, to): chat's {"content": [...], "refusal": null} or the
 * legacy {"tokens", "token_logprobs", "top_logprobs", "text_offset"}. */
static int put_logprobs(json_buf *b, int api, const ts_gen_result *res, int from, int to, const ts_model *m) {
    int bad = 0;
    if (api == OPENAI_CHAT) {
        bad |= put(b, "{\"content\": [");
        for (int i = from; i < to; i++) {
            const ts_token_logprob *lp = &res->logprobs[i];
            bad |= put(b, i > from ? ", {\"token\": " : "{\"token\": ") || put_token(b, m, lp->token, lp->logprob, true) ||
                   put(b, ", \"top_logprobs\": [");
            for (int k = 0; k < lp->n_top; k++)
                bad |= put(b, k ? ", {\"token\": " : "{\"token\": ") ||
                       put_token(b, m, lp->top_token[k], lp->top_logprob[k], true) || put(b, "}");
            bad |= put(b, "]}");
        }
        return bad | put(b, "], \"refusal\": null}");
    }
    char piece[256];
    size_t offset = 0;
    for (int i = 0; i < from; i++) {
        int pl = ts_token_text(m, res->tokens[i], piece, sizeof piece);
        offset += pl > 0 ? (size_t)pl : 0;
    }
    bad |= put(b, "{\"tokens\": [");
    for (int i = from; i < to; i++) bad |= put(b, i > from ? ", " : "") || put_token(b, m, res->logprobs[i].token, 0, false);
    bad |= put(b, "], \"token_logprobs\": [");
    for (int i = from; i < to; i++) bad |= json_buf_printf(b, i > from ? ", %.9g" : "%.9g", res->logprobs[i].logprob);
    bad |= put(b, "], \"top_logprobs\": [");
    for (int i = from; i < to; i++) {
        const ts_token_logprob *lp = &res->logprobs[i];
        bad |= put(b, i > from ? ", {" : "{");
        for (int k = 0; k < lp->n_top; k++)
            bad |= put(b, k ? ", " : "") || put_token(b, m, lp->top_token[k], 0, false) || json_buf_printf(b, ": %.9g", lp->top_logprob[k]);
        bad |= put(b, "}");
    }
    bad |= put(b, "], \"text_offset\": [");
    for (int i = from; i < to; i++) {
        bad |= json_buf_printf(b, i > from ? ", %zu" : "%zu", offset);
        int pl = ts_token_text(m, res->tokens[i], piece, sizeof piece);
        offset += pl > 0 ? (size_t)pl : 0;
    }
    return bad | put(b, "]}");
}

static int put_head(json_buf *b, int api, const char *id, const char *model, long long created, bool chunk) {
    const char *object = api == OPENAI_CHAT ? (chunk ? "chat.completion.chunk" : "chat.completion") : "text_completion";
    return put(b, "{\"id\": ") || json_buf_put_string(b, id, strlen(id)) ||
           json_buf_printf(b, ", \"object\": \"%s\", \"created\": %lld, \"model\": ", object, created) ||
           json_buf_put_string(b, model, strlen(model)) || put(b, ", \"system_fingerprint\": null");
}

static int put_usage(json_buf *b, const ts_gen_result *const *res, int n) {
    long completion = 0;
    for (int i = 0; i < n; i++) completion += res[i]->n_generated;
    /* the prompt is one prompt, whatever n */
    return json_buf_printf(b, "\"usage\": {\"prompt_tokens\": %d, \"completion_tokens\": %ld, \"total_tokens\": %ld, "
                "\"prompt_tokens_details\": {\"cached_tokens\": %d}}", res[0]->n_prompt, completion,
                res[0]->n_prompt + completion, res[0]->n_reused);
}

int openai_read_tool_calls(const tool_format *fmt, const request_fields *f, const ts_gen_result *res, uint64_t seed,
                           tool_calls *out) {
    memset(out, 0, sizeof *out);
    ts_error err;
    if (!fmt || !f->tools || f->no_tool_calls || tool_calls_parse(fmt, res->text, res->len, f->tools, seed, out, &err) != 0 ||
        out->n == 0) {
        tool_calls_free(out);
        return 0;
    }
    if (f->one_tool_call) tool_calls_keep(out, 1);   /* parallel_tool_calls false: the first only */
    return 1;
}

int openai_tool_grammar(const tool_format *fmt, request_fields *f, ts_error *err) {
    if (!f->forced_tool) return 0;
    if (f->grammar) return ts_fail(err, "\"tool_choice\" asking for a call cannot go with a grammar or response_format");
    if (!fmt) return ts_fail(err, "\"tool_choice\" asks for a call, but the chat template writes none the engine knows");
    json_buf g = {0}, alts = {0};
    int rc = 0, n = 0;
    for (size_t i = 0; i < f->tools->n && rc == 0; i++) {
        const json_value *fn = json_get(&f->tools->items[i], "function"), *params = json_get(fn, "parameters");
        const char *name = json_get_str(fn, "name");
        if (*f->forced_tool && strcmp(name, f->forced_tool) != 0) continue;
        /* the arguments: the parameters' schema (none: any object), its rules named apart per tool */
        json_buf schema = {0};
        char *gbnf = NULL, prefix[32], args_rule[48];
        snprintf(prefix, sizeof prefix, "tool%zu-", i);
        snprintf(args_rule, sizeof args_rule, "%sroot", prefix);
        if (params && params->type == JSON_OBJECT ? json_buf_put_value(&schema, params) != 0 : put(&schema, "{\"type\": \"object\"}") != 0)
            rc = ts_fail(err, "out of memory");
        else if (json_schema_to_gbnf(schema.data, schema.len, &gbnf, err) != 0) {
            ts_error e = *err;
            rc = ts_fail(err, "tool \"%.60s\": its parameters: %s", name, e.msg);
        } else if (grammar_prefix_rules(gbnf, strlen(gbnf), prefix, &g) != 0 || put(&g, "\n") != 0 ||
                   (n && put(&alts, " | ") != 0)) {
            rc = ts_fail(err, "out of memory");
        } else {
            int r = tool_format_call_gbnf(fmt, name, args_rule, &alts);
            if (r == -1) rc = ts_fail(err, "\"tool_choice\" asks for a call, which the %s format cannot be made to write", tool_format_name(fmt));
            else if (r != 0) rc = ts_fail(err, "out of memory");
            n++;
        }
        free(gbnf);
        json_buf_free(&schema);
    }
    if (rc == 0 && (put(&g, "root ::= ") != 0 || json_buf_put(&g, alts.data, alts.len) != 0 || put(&g, "\n") != 0))
        rc = ts_fail(err, "out of memory");
    if (rc == 0) rc = ts_grammar_from_gbnf(g.data, g.len, &f->grammar, err);
    json_buf_free(&g);
    json_buf_free(&alts);
    return rc ? -1 : 0;
}

/* The tool_calls array of a message or a delta (index: each call's place, for deltas). */
static int put_tool_calls(json_buf *b, const tool_calls *c, bool index) {
    int bad = put(b, "\"tool_calls\": [");
    for (int k = 0; k < c->n; k++) {
        const tool_call *t = &c->calls[k];
        bad |= put(b, k ? ", {" : "{") || (index && json_buf_printf(b, "\"index\": %d, ", k)) ||
               put(b, "\"id\": ") || json_buf_put_string(b, t->id, strlen(t->id)) ||
               put(b, ", \"type\": \"function\", \"function\": {\"name\": ") || json_buf_put_string(b, t->name, strlen(t->name)) ||
               put(b, ", \"arguments\": ") || json_buf_put_string(b, t->arguments, strlen(t->arguments)) || put(b, "}}");
    }
    return bad | put(b, "]");
}

int openai_put_completion(json_buf *b, int api, const char *id, const char *model, long long created,
                          const ts_gen_result *const *res, const tool_calls *const *calls, int n, const ts_model *m,
                          bool logprobs) {
    int bad = put_head(b, api, id, model, created, false) || put(b, ", \"choices\": [");
    for (int i = 0; i < n; i++) {
        const ts_gen_result *r = res[i];
        const tool_calls *tc = calls && calls[i] && calls[i]->n ? calls[i] : NULL;
        bad |= put(b, i ? ", " : "");
        if (api == OPENAI_CHAT && tc) {
            bad |= json_buf_printf(b, "{\"index\": %d, \"message\": {\"role\": \"assistant\", \"content\": ", i) ||
                   (tc->content_len ? json_buf_put_string(b, tc->content, tc->content_len) : put(b, "null")) ||
                   put(b, ", ") || put_tool_calls(b, tc, false) || put(b, ", \"refusal\": null}, \"logprobs\": ");
        } else if (api == OPENAI_CHAT)
            bad |= json_buf_printf(b, "{\"index\": %d, \"message\": {\"role\": \"assistant\", \"content\": ", i) ||
                   json_buf_put_string(b, r->text, r->len) || put(b, ", \"refusal\": null}, \"logprobs\": ");
        else
            bad |= put(b, "{\"text\": ") || json_buf_put_string(b, r->text, r->len) ||
                   json_buf_printf(b, ", \"index\": %d, \"logprobs\": ", i);
        if (logprobs && r->logprobs) bad |= put_logprobs(b, api, r, 0, openai_tokens_in_text(r, m), m);
        else bad |= put(b, "null");
        bad |= json_buf_printf(b, ", \"finish_reason\": \"%s\"}", tc ? "tool_calls" : openai_finish_reason(r));
    }
    bad |= put(b, "], ") || put_usage(b, res, n) || put(b, "}");
    return bad ? -1 : 0;
}

int openai_put_chunk(json_buf *b, int api, const char *id, const char *model, long long created, int index,
                     bool first, const char *text, size_t len, const char *finish, const ts_gen_result *res,
                     int lp_from, int lp_to, const ts_model *m) {
    int bad = put_head(b, api, id, model, created, true) || json_buf_printf(b, ", \"choices\": [{\"index\": %d, ", index);
    if (api == OPENAI_CHAT) {
        bad |= put(b, "\"delta\": {");
        if (first) bad |= put(b, "\"role\": \"assistant\"");
        if (len || (first && !finish)) bad |= put(b, first ? ", \"content\": " : "\"content\": ") || json_buf_put_string(b, text, len);
        bad |= put(b, "}, ");
    } else {
        bad |= put(b, "\"text\": ") || json_buf_put_string(b, text, len) || put(b, ", ");
    }
    bad |= put(b, "\"logprobs\": ");
    if (res && res->logprobs && lp_to > lp_from) bad |= put_logprobs(b, api, res, lp_from, lp_to, m);
    else bad |= put(b, "null");
    bad |= put(b, ", \"finish_reason\": ");
    bad |= finish ? json_buf_printf(b, "\"%s\"", finish) : put(b, "null");
    bad |= put(b, "}]}");
    return bad ? -1 : 0;
}

int openai_put_tool_calls_chunk(json_buf *b, const char *id, const char *model, long long created, int index,
                                bool first, const tool_calls *calls) {
    int bad = put_head(b, OPENAI_CHAT, id, model, created, true) || json_buf_printf(b, ", \"choices\": [{\"index\": %d, ", index) ||
              put(b, "\"delta\": {") || (first && put(b, "\"role\": \"assistant\", \"content\": null, ")) ||
              put_tool_calls(b, calls, true) || put(b, "}, \"logprobs\": null, \"finish_reason\": null}]}");
    return bad ? -1 : 0;
}

int openai_put_usage_chunk(json_buf *b, int api, const char *id, const char *model, long long created,
                           const ts_gen_result *const *res, int n) {
    return put_head(b, api, id, model, created, true) || put(b, ", \"choices\": [], ") || put_usage(b, res, n) ||
           put(b, "}") ? -1 : 0;
}

int openai_put_error(json_buf *b, const char *message, const char *type, const char *code) {
    int bad = put(b, "{\"error\": {\"message\": ") || json_buf_put_string(b, message, strlen(message)) ||
              json_buf_printf(b, ", \"type\": \"%s\", \"param\": null, \"code\": ", type);
    bad |= code ? json_buf_printf(b, "\"%s\"", code) : put(b, "null");
    return bad || put(b, "}}") ? -1 : 0;
}
