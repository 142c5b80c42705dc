/* Chat templates through the Jinja interpreter: the variables a template sees, the date
 * strftime_now() formats, and plain messages as the JSON the template iterates. */
#include "template/chat_template.h"
#include "core/utf8.h"
#include "core/error.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int chat_render(const char *template_text, const chat_vars *v, const struct tm *date,
                const jinja_limits *limits, char **out, ts_error *err) {
    *out = NULL;
    if (!template_text) return ts_fail(err, "no chat template");
    if (!v->messages || v->messages->type != JSON_ARRAY) return ts_fail(err, "the messages must be a JSON array");
    if (v->tools && v->tools->type != JSON_ARRAY && v->tools->type != JSON_NULL) return ts_fail(err, "the tools must be a JSON array");
    if (v->kwargs && v->kwargs->type != JSON_OBJECT) return ts_fail(err, "the extra template variables must be a JSON object");
    jinja_template *t;
    ts_error e2;
    if (jinja_parse(template_text, strlen(template_text), &t, &e2) != 0)
        return ts_fail(err, "chat template: %s", e2.msg);

    const char *bos = v->bos_token ? v->bos_token : "", *eos = v->eos_token ? v->eos_token : "";
    json_value agp = { .type = JSON_BOOL, .boolean = v->add_generation_prompt };
    json_value bos_v = { .type = JSON_STRING, .str = (char *)bos, .len = strlen(bos) };
    json_value eos_v = { .type = JSON_STRING, .str = (char *)eos, .len = strlen(eos) };
    size_t n_extra = v->kwargs ? v->kwargs->n : 0;
    jinja_var *vars = malloc((5 + n_extra) * sizeof *vars);
    if (!vars) { jinja_template_free(t); return ts_fail(err, "out of memory"); }
    int n = 0;
    vars[n++] = (jinja_var){ "messages", v->messages };
    vars[n++] = (jinja_var){ "add_generation_prompt", &agp };
    vars[n++] = (jinja_var){ "bos_token", &bos_v };
    vars[n++] = (jinja_var){ "eos_token", &eos_v };
    if (v->tools) vars[n++] = (jinja_var){ "tools", v->tools };
    for (size_t i = 0; i < n_extra; i++) vars[n++] = (jinja_var){ v->kwargs->keys[i], &v->kwargs->items[i] };

    size_t len;
    int rc = jinja_render(t, vars, n, date, limits, out, &len, &e2);
    free(vars);
    jinja_template_free(t);
    if (rc != 0) return ts_fail(err, "chat template: %s", e2.msg);
    return 0;
}

int chat_parse_date(const char *s, struct tm *out) {
    int y, m, d, used = 0;
    if (!s || sscanf(s, "%4d-%2d-%2d%n", &y, &m, &d, &used) != 3 || used != 10 || s[10] != '\0') return -1;
    static const int days[12] = { 31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31 };
    bool leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
    if (y < 1 || m < 1 || m > 12 || d < 1 || d > days[m - 1] || (m == 2 && d == 29 && !leap)) return -1;
    struct tm t = { .tm_year = y - 1900, .tm_mon = m - 1, .tm_mday = d, .tm_hour = 0 };
    time_t when = timegm(&t);            /* fills in tm_wday and tm_yday */
    if (when == (time_t)-1 && !(y == 1969 && m == 12 && d == 31)) return -1;
    gmtime_r(&when, out);
    return 0;
}

int chat_messages_json(const ts_chat_message *msgs, int n, json_value **out, ts_error *err) {
    *out = NULL;
    json_buf b = {0};
    int rc = json_buf_put(&b, "[", 1);
    for (int i = 0; i < n && rc == 0; i++) {
        const char *role = msgs[i].role ? msgs[i].role : "", *content = msgs[i].content;
        if (!utf8_valid(role, strlen(role), NULL) || (content && !utf8_valid(content, strlen(content), NULL))) {
            json_buf_free(&b);
            return ts_fail(err, "message %d is not valid UTF-8", i + 1);
        }
        if (i) rc |= json_buf_put(&b, ", ", 2);
        rc |= json_buf_put(&b, "{\"role\": ", 9);
        rc |= json_buf_put_string(&b, role, strlen(role));
        rc |= json_buf_put(&b, ", \"content\": ", 13);
        rc |= content ? json_buf_put_string(&b, content, strlen(content)) : json_buf_put(&b, "null", 4);
        /* the other fields: the members of fields_json after these two (the parse below checks them) */
        const char *f = msgs[i].fields_json;
        if (f) {
            f += strspn(f, " \t\r\n");
            size_t fl = strlen(f);
            while (fl && strchr(" \t\r\n", f[fl - 1])) fl--;
            if (fl < 2 || f[0] != '{' || f[fl - 1] != '}') { json_buf_free(&b); return ts_fail(err, "message %d: its fields are not a JSON object", i + 1); }
            if (f[1 + strspn(f + 1, " \t\r\n")] != '}') {
                rc |= json_buf_put(&b, ", ", 2);
                rc |= json_buf_put(&b, f + 1, fl - 2);
            }
        }
        rc |= json_buf_put(&b, "}", 1);
    }
    rc |= json_buf_put(&b, "]", 1);
    if (rc != 0) { json_buf_free(&b); return ts_fail(err, "out of memory"); }
    rc = json_parse(b.data, b.len, out, err);
    json_buf_free(&b);
    return rc;
}

bool chat_starts_with_bos(const char *text, const char *bos_token) {
    if (!text || !bos_token || !*bos_token) return false;
    return strncmp(text, bos_token, strlen(bos_token)) == 0;
}
