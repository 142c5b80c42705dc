/* A request's fields read from JSON (see request.h). */
#include "cli/request.h"
#include "core/error.h"
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

void request_fields_free(request_fields *f) {
    free(f->msgs);
    free(f->tokens);
    for (int i = 0; i < f->n_texts; i++) free(f->texts[i]);
    free(f->texts);
    ts_grammar_free(f->grammar);
    free(f->tools_json);
    memset(f, 0, sizeof *f);
}

int request_get_text(const json_value *obj, const char *key, const char **out, ts_error *err) {
    const json_value *v = json_get(obj, key);
    *out = NULL;
    if (!v) return 0;
    if (v->type != JSON_STRING) return ts_fail(err, "\"%s\" must be a string", key);
    if (strlen(v->str) != v->len) return ts_fail(err, "\"%s\" contains a NUL character", key);
    *out = v->str;
    return 1;
}

int request_add_message(request_fields *f, const char *role, const char *content) {
    if (f->n_msgs == f->cap_msgs) {
        int nc = f->cap_msgs ? f->cap_msgs * 2 : 4;
        ts_chat_message *t = realloc(f->msgs, (size_t)nc * sizeof *t);
        if (!t) return -1;
        f->msgs = t;
        f->cap_msgs = nc;
    }
    f->msgs[f->n_msgs++] = (ts_chat_message){ role, content };
    return 0;
}

static int put(json_buf *b, const char *s) { return json_buf_put(b, s, strlen(s)); }

/* Keeps text (len bytes) as the request's own, NUL-terminated. */
static const char *own_text(request_fields *f, const char *text, size_t len) {
    char *copy = strndup(text, len);
    char **t = realloc(f->texts, (size_t)(f->n_texts + 1) * sizeof *t);
    if (!copy || !t) { free(copy); if (t) f->texts = t; return NULL; }
    f->texts = t;
    f->texts[f->n_texts++] = copy;
    return copy;
}

/* A message's content given as parts ([{"type": "text", "text": ...}, ...]): the texts joined,
 * owned by the request. Other kinds of part (images, audio) are refused. */
static int join_text_parts(request_fields *f, const json_value *parts, size_t msg, const char **out, ts_error *err) {
    json_buf b = {0};
    for (size_t i = 0; i < parts->n; i++) {
        const json_value *p = &parts->items[i], *type = json_get(p, "type"), *text = json_get(p, "text");
        if (p->type != JSON_OBJECT || !type || type->type != JSON_STRING || strcmp(type->str, "text") != 0) {
            json_buf_free(&b);
            return ts_fail(err, "message %zu: only text content parts are supported", msg);
        }
        if (!text || text->type != JSON_STRING || strlen(text->str) != text->len) {
            json_buf_free(&b);
            return ts_fail(err, "message %zu: a text part needs a \"text\" string", msg);
        }
        if (json_buf_put(&b, text->str, text->len) != 0) { json_buf_free(&b); return ts_fail(err, "out of memory"); }
    }
    *out = own_text(f, b.data ? b.data : "", b.len);
    json_buf_free(&b);
    return *out ? 0 : ts_fail(err, "out of memory");
}

/* A message's fields besides role and content, as the template sees them: tool_calls (a call's
 * arguments given as a JSON string become the object it holds, as templates expect), tool_call_id
 * and name. *out: a JSON object text (owned by f), or NULL when there are none. */
static int message_fields(request_fields *f, const json_value *msg, size_t i, const char **out, ts_error *err) {
    const json_value *calls = json_get(msg, "tool_calls"), *id = json_get(msg, "tool_call_id"), *name = json_get(msg, "name");
    *out = NULL;
    if (calls && calls->type == JSON_NULL) calls = NULL;
    if (id && id->type == JSON_NULL) id = NULL;
    if (name && name->type == JSON_NULL) name = NULL;
    if (!calls && !id && !name) return 0;
    if ((id && id->type != JSON_STRING) || (name && name->type != JSON_STRING))
        return ts_fail(err, "message %zu: \"tool_call_id\" and \"name\" must be strings", i);
    if (calls && calls->type != JSON_ARRAY) return ts_fail(err, "message %zu: \"tool_calls\" must be an array", i);
    json_buf b = {0};
    int rc = put(&b, "{");
    if (calls) {
        rc |= put(&b, "\"tool_calls\":[");
        for (size_t k = 0; k < calls->n && rc == 0; k++) {
            const json_value *c = &calls->items[k], *fn = json_get(c, "function");
            const json_value *fname = fn ? json_get(fn, "name") : NULL, *args = fn ? json_get(fn, "arguments") : NULL, *cid = json_get(c, "id");
            if (c->type != JSON_OBJECT || !fn || fn->type != JSON_OBJECT || !fname || fname->type != JSON_STRING ||
                (args && args->type != JSON_STRING && args->type != JSON_OBJECT)) {
                json_buf_free(&b);
                return ts_fail(err, "message %zu: tool call %zu needs \"function\": {\"name\", \"arguments\"}", i, k + 1);
            }
            json_value *parsed = NULL;
            ts_error e2;
            if (args && args->type == JSON_STRING && (json_parse(args->str, args->len, &parsed, &e2) != 0 || parsed->type != JSON_OBJECT)) {
                json_free(parsed);
                json_buf_free(&b);
                return ts_fail(err, "message %zu: tool call %zu: \"arguments\" must hold a JSON object", i, k + 1);
            }
            if (k) rc |= put(&b, ",");
            rc |= put(&b, "{");
            if (cid && cid->type == JSON_STRING) {
                rc |= put(&b, "\"id\":");
                rc |= json_buf_put_string(&b, cid->str, cid->len);
                rc |= put(&b, ",");
            }
            rc |= put(&b, "\"type\":\"function\",\"function\":{\"name\":");
            rc |= json_buf_put_string(&b, fname->str, fname->len);
            rc |= put(&b, ",\"arguments\":");
            rc |= parsed ? json_buf_put_value(&b, parsed) : args ? json_buf_put_value(&b, args) : put(&b, "{}");
            rc |= put(&b, "}}");
            json_free(parsed);
        }
        rc |= put(&b, "]");
    }
    if (id) {
        rc |= put(&b, calls ? ",\"tool_call_id\":" : "\"tool_call_id\":");
        rc |= json_buf_put_string(&b, id->str, id->len);
    }
    if (name) {
        rc |= put(&b, calls || id ? ",\"name\":" : "\"name\":");
        rc |= json_buf_put_string(&b, name->str, name->len);
    }
    rc |= put(&b, "}");
    if (rc == 0 && !(*out = own_text(f, b.data, b.len))) rc = -1;
    json_buf_free(&b);
    return rc ? ts_fail(err, "out of memory") : 0;
}

int request_parse_messages(request_fields *f, const json_value *req, const char *system, ts_error *err) {
    const json_value *msgs = json_get(req, "messages");
    const char *prompt, *user, *own_system;
    if (msgs) {
        if (msgs->type != JSON_ARRAY || msgs->n == 0) return ts_fail(err, "\"messages\" must be a non-empty array");
        for (size_t i = 0; i < msgs->n; i++) {
            const json_value *item = &msgs->items[i];
            const char *role = NULL, *content = NULL;
            if (item->type != JSON_OBJECT) return ts_fail(err, "\"messages\" must hold objects");
            const json_value *parts = json_get(item, "content");
            if (request_get_text(item, "role", &role, err) <= 0)
                return ts_fail(err, "message %zu needs \"role\" and \"content\" strings", i + 1);
            const json_value *calls = json_get(item, "tool_calls");
            bool only_calls = calls && calls->type == JSON_ARRAY && calls->n > 0 && (!parts || parts->type == JSON_NULL);
            if (parts && parts->type == JSON_ARRAY) {   /* OpenAI's content parts: the text ones, joined */
                if (join_text_parts(f, parts, i + 1, &content, err) != 0) return -1;
            } else if (only_calls) {
                content = "";   /* templates test and search content as a string, as llama.cpp gives it */
            } else if (request_get_text(item, "content", &content, err) <= 0) {
                return ts_fail(err, "message %zu needs \"role\" and \"content\" strings", i + 1);
            }
            const char *fields = NULL;
            if (message_fields(f, item, i + 1, &fields, err) != 0) return -1;
            if (request_add_message(f, role, content) != 0) return ts_fail(err, "out of memory");
            f->msgs[f->n_msgs - 1].fields_json = fields;
        }
        return 0;
    }
    int has_prompt = request_get_text(req, "prompt", &prompt, err);
    if (has_prompt < 0) return -1;
    if (has_prompt) {
        if ((system && request_add_message(f, "system", system) != 0) || request_add_message(f, "user", prompt) != 0)
            return ts_fail(err, "out of memory");
        return 0;
    }
    int has_user = request_get_text(req, "user", &user, err);
    if (has_user < 0) return -1;
    if (!has_user) return ts_fail(err, "the line has no \"prompt\", \"messages\" or \"user\"");
    int has_system = request_get_text(req, "system", &own_system, err);
    if (has_system < 0) return -1;
    if (has_system) system = own_system;
    if ((system && request_add_message(f, "system", system) != 0) || request_add_message(f, "user", user) != 0)
        return ts_fail(err, "out of memory");
    return 0;
}

int request_parse_tokens(request_fields *f, const json_value *v, const char *name, ts_error *err) {
    if (v->type != JSON_ARRAY || v->n == 0 || v->n > INT_MAX / 2) return ts_fail(err, "\"%s\" must be a non-empty array of token ids", name);
    free(f->tokens);
    if (!(f->tokens = malloc(v->n * sizeof *f->tokens))) return ts_fail(err, "out of memory");
    for (size_t i = 0; i < v->n; i++) {
        const json_value *t = &v->items[i];
        if (t->type != JSON_NUMBER || !t->is_integer || t->integer < 0 || t->integer > INT32_MAX)
            return ts_fail(err, "\"%s\" must hold token ids (whole numbers >= 0)", name);
        f->tokens[i] = (int32_t)t->integer;
    }
    f->n_tokens = (int)v->n;
    return 0;
}

/* A number in [lo, hi] for a sampling key (-1 with err naming it otherwise); 0 when absent or null
 * (OpenAI's clients send null for "the default"). */
static int get_number(const json_value *req, const char *key, double lo, double hi, const char *range, double *out, ts_error *err) {
    const json_value *v = json_get(req, key);
    if (!v || v->type == JSON_NULL) return 0;
    if (v->type != JSON_NUMBER || !(v->number >= lo && v->number <= hi))
        return ts_fail(err, "\"%s\" must be a number %s", key, range);
    *out = v->number;
    return 1;
}

/* A member that is there and not null. */
static const json_value *given(const json_value *req, const char *key) {
    const json_value *v = json_get(req, key);
    return v && v->type != JSON_NULL ? v : NULL;
}

/* A schema given as a JSON value, compiled (its errors named after key). */
static int schema_grammar(request_fields *f, const json_value *schema, const char *key, ts_error *err) {
    json_buf b = {0};
    if (json_buf_put_value(&b, schema) != 0) { json_buf_free(&b); return ts_fail(err, "out of memory"); }
    int rc = ts_grammar_from_json_schema(b.data, b.len, &f->grammar, err);
    json_buf_free(&b);
    if (rc != 0) {
        ts_error e = *err;
        return ts_fail(err, "\"%s\": %s", key, e.msg);
    }
    return 0;
}

static int parse_shape(request_fields *f, const json_value *req, ts_error *err) {
    const json_value *rf = given(req, "response_format"), *js = given(req, "json_schema"), *gr = given(req, "grammar");
    if ((rf != NULL) + (js != NULL) + (gr != NULL) > 1)
        return ts_fail(err, "give one of \"response_format\", \"json_schema\" and \"grammar\"");
    ts_grammar_free(f->grammar);
    f->grammar = NULL;
    if (gr) {
        if (gr->type != JSON_STRING) return ts_fail(err, "\"grammar\" must be a string of GBNF");
        if (ts_grammar_from_gbnf(gr->str, gr->len, &f->grammar, err) != 0) {
            ts_error e = *err;
            return ts_fail(err, "\"grammar\": %s", e.msg);
        }
        return 0;
    }
    if (js) {
        if (js->type != JSON_OBJECT && js->type != JSON_BOOL) return ts_fail(err, "\"json_schema\" must be a JSON schema (an object)");
        return schema_grammar(f, js, "json_schema", err);
    }
    if (!rf) return 0;
    const char *type = rf->type == JSON_OBJECT ? json_get_str(rf, "type") : NULL;
    if (!type) return ts_fail(err, "\"response_format\" must be an object with a \"type\"");
    if (!strcmp(type, "text")) return 0;
    if (!strcmp(type, "json_object")) {
        static const char object[] = "{\"type\": \"object\"}";
        return ts_grammar_from_json_schema(object, sizeof object - 1, &f->grammar, err);
    }
    if (strcmp(type, "json_schema") != 0)
        return ts_fail(err, "\"response_format.type\" must be \"text\", \"json_object\" or \"json_schema\" (got \"%s\")", type);
    const json_value *wrap = json_get(rf, "json_schema"), *schema = wrap ? json_get(wrap, "schema") : NULL;
    if (!wrap || wrap->type != JSON_OBJECT || !schema || (schema->type != JSON_OBJECT && schema->type != JSON_BOOL))
        return ts_fail(err, "\"response_format\" of type json_schema needs \"json_schema\": {\"schema\": {...}}");
    return schema_grammar(f, schema, "response_format.json_schema.schema", err);
}

int request_parse_settings(request_fields *f, const json_value *req, ts_error *err) {
    const json_value *v;
    if (parse_shape(f, req, err) != 0) return -1;
    if ((v = given(req, "ignore_eos"))) {
        if (v->type != JSON_BOOL) return ts_fail(err, "\"ignore_eos\" must be true or false");
        f->ignore_eos = v->boolean;
    }
    double x = 0;
    int got;
    if ((got = get_number(req, "top_p", 0, 1, "in [0, 1]", &x, err)) < 0) return -1;
    if (got) f->sampling.top_p = (float)x;
    if ((got = get_number(req, "min_p", 0, 1, "in [0, 1]", &x, err)) < 0) return -1;
    if (got) f->sampling.min_p = (float)x;
    if ((got = get_number(req, "repeat_penalty", 1e-6, 1e6, "> 0", &x, err)) < 0) return -1;
    if (got) f->sampling.repeat_penalty = (float)x;
    if ((got = get_number(req, "top_k", 0, INT_MAX, "a whole number >= 0", &x, err)) < 0) return -1;
    if (got && x != floor(x)) return ts_fail(err, "\"top_k\" must be a whole number >= 0");
    if (got) f->sampling.top_k = (int)x;
    /* OpenAI's newer name wins over the older one */
    const char *max_key = "max_completion_tokens";
    if ((v = given(req, max_key)) || (v = given(req, max_key = "max_tokens"))) {
        /* a whole number however written (1e12 too); more than an int means "until the context is full" */
        if (v->type != JSON_NUMBER || !(v->number >= 0) || v->number != floor(v->number))
            return ts_fail(err, "\"%s\" must be a non-negative integer", max_key);
        f->max_tokens = v->is_integer ? (v->integer > INT_MAX ? INT_MAX : (int)v->integer)
                                      : (v->number > INT_MAX ? INT_MAX : (int)v->number);
    }
    if ((v = given(req, "temperature"))) {
        if (v->type != JSON_NUMBER || !(v->number >= 0) || v->number > 1e6)
            return ts_fail(err, "\"temperature\" must be a non-negative number");
        f->sampling.temp = (float)v->number;
    }
    if ((v = given(req, "seed"))) {
        if (v->type != JSON_NUMBER || !v->is_integer || v->integer < 0)
            return ts_fail(err, "\"seed\" must be a non-negative integer");
        f->sampling.seed = (uint64_t)v->integer;
        f->own_seed = true;
    }
    if ((v = given(req, "stop"))) {
        const json_value *items = v->type == JSON_ARRAY ? v->items : v;
        size_t n = v->type == JSON_ARRAY ? v->n : 1;
        if (n > REQUEST_MAX_STOP) return ts_fail(err, "\"stop\" holds more than %d strings", REQUEST_MAX_STOP);
        f->n_stop = 0;
        for (size_t i = 0; i < n; i++) {
            if (items[i].type != JSON_STRING || strlen(items[i].str) != items[i].len)
                return ts_fail(err, "\"stop\" must be a string or an array of strings");
            if (items[i].len) f->stop[f->n_stop++] = items[i].str;   /* an empty one stops nothing */
        }
    }
    return 0;
}
