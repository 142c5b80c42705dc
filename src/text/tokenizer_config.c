/* tokenizer_config.json (see tokenizer_config.h). */
#include "text/tokenizer_config.h"
#include "core/error.h"
#include "io/file.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static config_token named_token(const json_value *root, const char *key) {
    config_token t = { 0 };
    const json_value *v = json_get(root, key);
    if (!v) return t;
    t.present = true;
    t.null = v->type == JSON_NULL;
    if (v->type == JSON_OBJECT) v = json_get(v, "content");
    if (v && v->type == JSON_STRING) t.text = v->str;
    return t;
}

int tokenizer_config_read(const char *dir, tokenizer_config *out, ts_error *err) {
    memset(out, 0, sizeof *out);
    snprintf(out->path, sizeof out->path, "%s/tokenizer_config.json", dir);
    if (access(out->path, F_OK) != 0) return 0;
    char *text; size_t len;
    if (file_read(out->path, &text, &len, err) != 0) return -1;
    ts_error e2;
    int rc = json_parse(text, len, &out->root, &e2);
    free(text);
    if (rc != 0) return ts_fail(err, "%s: %s", out->path, e2.msg);
    if (out->root->type != JSON_OBJECT) {
        tokenizer_config_free(out);
        return ts_fail(err, "%s: not a JSON object", out->path);
    }
    const json_value *r = out->root;
    out->bos = named_token(r, "bos_token");
    out->eos = named_token(r, "eos_token");
    out->pad = named_token(r, "pad_token");
    out->unk = named_token(r, "unk_token");
    const json_value *b = json_get(r, "add_bos_token"), *e = json_get(r, "add_eos_token");
    out->has_add_bos = b && b->type == JSON_BOOL;
    out->add_bos = out->has_add_bos && b->boolean;
    out->has_add_eos = e && e->type == JSON_BOOL;
    out->add_eos = out->has_add_eos && e->boolean;
    const json_value *tmpl = json_get(r, "chat_template");
    if (tmpl && tmpl->type == JSON_STRING) out->chat_template = tmpl->str;
    else if (tmpl && tmpl->type == JSON_ARRAY)   /* [{name, template}, ...]: the "default" one */
        for (size_t i = 0; i < tmpl->n; i++) {
            const char *name = json_get_str(&tmpl->items[i], "name");
            if (name && !strcmp(name, "default")) out->chat_template = json_get_str(&tmpl->items[i], "template");
        }
    return 0;
}

void tokenizer_config_free(tokenizer_config *c) {
    json_free(c->root);
    c->root = NULL;
}
