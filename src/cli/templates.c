/* The chat-template options and --render. */
#include "cli/templates.h"
#include "core/error.h"
#include "io/file.h"
#include "io/json.h"
#include "template/chat_template.h"
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

void template_setup_free(template_setup *c) {
    free(c->template_text);
    free(c->tools_text);
    memset(c, 0, sizeof *c);
}

/* A template file: Jinja text, or a tokenizer_config.json whose "chat_template" is the template
 * (a string, or a list of {"name", "template"} of which "default" is taken). */
static int read_template_file(const char *path, char **out, ts_error *err) {
    char *data;
    size_t len;
    *out = NULL;
    if (file_read(path, &data, &len, err) != 0) return -1;
    size_t i = 0;
    while (i < len && strchr(" \t\r\n", data[i])) i++;
    json_value *cfg;
    ts_error e2;
    if (i < len && data[i] == '{' && json_parse(data, len, &cfg, &e2) == 0) {
        const json_value *t = json_get(cfg, "chat_template");
        const char *text = t && t->type == JSON_STRING ? t->str : NULL;
        if (t && t->type == JSON_ARRAY)
            for (size_t k = 0; k < t->n; k++) {
                const char *name = json_get_str(&t->items[k], "name");
                if (name && !strcmp(name, "default")) text = json_get_str(&t->items[k], "template");
            }
        char *copy = text ? strdup(text) : NULL;
        json_free(cfg);
        free(data);
        if (!text) return ts_fail(err, "%s: a JSON file without a \"chat_template\"", path);
        if (!copy) return ts_fail(err, "out of memory");
        *out = copy;
        return 0;
    }
    *out = data;
    return 0;
}

int template_setup_load(const cli_options *o, template_setup *c) {
    ts_error err = {{0}};
    memset(c, 0, sizeof *c);
    if (o->chat_template) {
        if (read_template_file(o->chat_template, &c->template_text, &err) != 0) { fprintf(stderr, "error: %s\n", err.msg); return -1; }
        c->opt.template_text = c->template_text;
    }
    if (o->chat_kwargs) {
        json_value *v;
        if (json_parse(o->chat_kwargs, strlen(o->chat_kwargs), &v, &err) != 0) {
            fprintf(stderr, "error: --chat-template-kwargs: %s\n", err.msg);
            return -1;
        }
        bool object = v->type == JSON_OBJECT;
        json_free(v);
        if (!object) { fprintf(stderr, "error: --chat-template-kwargs expects a JSON object\n"); return -1; }
        c->opt.kwargs_json = o->chat_kwargs;
    }
    if (o->tools) {
        size_t len;
        json_value *v;
        if (file_read(o->tools, &c->tools_text, &len, &err) != 0) { fprintf(stderr, "error: %s\n", err.msg); return -1; }
        if (json_parse(c->tools_text, len, &v, &err) != 0) { fprintf(stderr, "error: %s: %s\n", o->tools, err.msg); return -1; }
        bool array = v->type == JSON_ARRAY;
        json_free(v);
        if (!array) { fprintf(stderr, "error: %s: the tools must be a JSON array\n", o->tools); return -1; }
        c->opt.tools_json = c->tools_text;
    }
    if (o->date) {
        struct tm day;
        if (chat_parse_date(o->date, &day) != 0) { fprintf(stderr, "error: --date expects a date YYYY-MM-DD, got '%s'\n", o->date); return -1; }
        c->opt.date = o->date;
    }
    return 0;
}

/* --render: the conversation through the template, printed as it is. */
int template_render(const cli_options *o, const template_setup *c) {
    ts_error err = {{0}};
    ts_model *m = NULL;
    char *conv = NULL, *out = NULL;
    size_t len;
    int rc = 1;
    if (file_read(o->render, &conv, &len, &err) != 0) { fprintf(stderr, "error: %s\n", err.msg); return 1; }
    if (o->model_path) {
        ts_load_options lo = { .tokenizer_path = o->tokenizer, .simd = o->simd, .quant = o->quant,
                           .cache_type_k = o->cache_type_k, .cache_type_v = o->cache_type_v,
                           .weights = TS_WEIGHTS_IN_PLACE };   /* only its templates and vocabulary are read */
        if (ts_model_load(o->model_path, &lo, &m, &err) != 0) { fprintf(stderr, "error: %s\n", err.msg); free(conv); return 1; }
    }
    if (ts_chat_render_json(m, conv, len, &c->opt, &out, &err) != 0) {
        /* a fault of the template is the template file's (or the model's), not the conversation's */
        bool in_template = !strncmp(err.msg, "chat template:", 14);
        fprintf(stderr, "error: %s: %s\n", in_template ? (o->chat_template ? o->chat_template : o->model_path) : o->render, err.msg);
    }
    else {
        size_t n = strlen(out);
        if (fwrite(out, 1, n, stdout) != n || fflush(stdout) != 0) fprintf(stderr, "error: stdout: write failed: %s\n", strerror(errno));
        else rc = 0;
    }
    free(out);
    free(conv);
    ts_model_free(m);
    return rc;
}
