/* none and undefined values through every filter, test and method of the template interpreter,
 * against Jinja2 as transformers configures it: tests/unit/jinja_none_vectors.jsonl, written by
 * tools/gen_jinja_none_vectors.py (its header says what is covered and what is left out). The
 * first line holds the variables ({"vars": {...}}); every other line a template and either
 * Jinja2's output, which the engine must render byte for byte, or "error": true, when the engine
 * must fail too (messages are not compared). One check per group of vectors. */
#include "check.h"
#include "template/jinja.h"
#include "template/chat_template.h"
#include "io/json.h"
#include <string.h>

/* renders tmpl with the members of the JSON object vars as variables (as test_chat_template.c) */
static int render_with(const char *tmpl, const json_value *vars, char **out, ts_error *err) {
    jinja_template *t;
    *out = NULL;
    if (jinja_parse(tmpl, strlen(tmpl), &t, err) != 0) return -1;
    jinja_var vv[32];
    int n = 0;
    for (size_t i = 0; i < vars->n && n < 32; i++) vv[n++] = (jinja_var){ vars->keys[i], &vars->items[i] };
    struct tm day = {0};
    chat_parse_date("2026-11-30", &day);
    size_t len;
    int rc = jinja_render(t, vv, n, &day, NULL, out, &len, err);
    jinja_template_free(t);
    return rc;
}

typedef struct group { char name[64]; int total, agree; } group;

int main(void) {
    size_t len;
    char *text = read_all("tests/unit/jinja_none_vectors.jsonl", &len);
    CHECK(text != NULL, "the none/undefined vectors are readable");
    if (!text) CHECK_EXIT();
    group groups[64];
    int ngroups = 0, total = 0, agree = 0, bad_lines = 0;
    json_value *vars = NULL;
    for (char *line = text; *line;) {
        char *eol = strchr(line, '\n');
        if (!eol) eol = line + strlen(line);
        json_value *v = NULL;
        ts_error err = {{0}};
        if (eol == line) { line = *eol ? eol + 1 : eol; continue; }
        if (json_parse(line, (size_t)(eol - line), &v, &err) != 0) { bad_lines++; line = *eol ? eol + 1 : eol; continue; }
        line = *eol ? eol + 1 : eol;
        if (!vars) {
            const json_value *o = json_get(v, "vars");
            if (o && o->type == JSON_OBJECT) { vars = v; continue; }
            bad_lines++;
            json_free(v);
            continue;
        }
        const char *gname = json_get_str(v, "group"), *tmpl = json_get_str(v, "template");
        const json_value *want = json_get(v, "output");
        bool want_error = json_get_bool(v, "error", false);
        if (!gname || !tmpl || (!want_error && (!want || want->type != JSON_STRING))) { bad_lines++; json_free(v); continue; }
        int g;
        for (g = 0; g < ngroups; g++) if (!strcmp(groups[g].name, gname)) break;
        if (g == ngroups && ngroups < 64) {
            snprintf(groups[g].name, sizeof groups[g].name, "%s", gname);
            groups[g].total = groups[g].agree = 0;
            ngroups++;
        }
        if (g == 64) g = 63;   /* more groups than expected: counted with the last */
        char *out = NULL;
        int rc = render_with(tmpl, json_get(vars, "vars"), &out, &err);
        bool same = want_error ? rc != 0
                               : rc == 0 && strlen(out) == want->len && memcmp(out, want->str, want->len) == 0;
        if (!same)
            printf("# [%s] %s\n#   engine: %s%s\n#   jinja2: %s\n", gname, tmpl, rc == 0 ? "" : "error: ",
                   rc == 0 ? out : err.msg, want_error ? "(error)" : want->str);
        groups[g].total++, total++;
        groups[g].agree += same, agree += same;
        free(out);
        json_free(v);
    }
    for (int g = 0; g < ngroups; g++)
        CHECK(groups[g].agree == groups[g].total, "%s: %d/%d agree with Jinja2", groups[g].name, groups[g].agree, groups[g].total);
    CHECK(vars && bad_lines == 0 && total > 1000, "%d vectors read in %d groups (%d malformed lines)", total, ngroups, bad_lines);
    CHECK(agree == total, "every vector agrees with Jinja2 (%d/%d)", agree, total);
    json_free(vars);
    free(text);
    CHECK_EXIT();
}
