/* Tool calls in generated text (template/tool_calls.h): for every template of the fixtures'
 * chat-templates/all/ that renders an assistant message's tool calls, the calls rendered (one, then
 * two) are parsed back from the rendering with the format tool_format_detect finds for it, and must
 * come back with the same names and arguments (compared as JSON values); every prefix of each
 * rendering parses or fails cleanly. Then the parser's own cases: text without calls, content around
 * calls, malformed calls, ids, schema types of XML values, the streaming safe prefix. */
#include "check.h"
#include "template/tool_calls.h"
#include "template/chat_template.h"
#include "io/json.h"
#include "io/file.h"
#include <dirent.h>
#include <string.h>
#include <time.h>

static const char tools_json[] =
    "[{\"type\": \"function\", \"function\": {\"name\": \"get_weather\", \"description\": \"Get the weather\","
    " \"parameters\": {\"type\": \"object\", \"properties\": {\"city\": {\"type\": \"string\"},"
    " \"days\": {\"type\": \"integer\"}, \"zip\": {\"type\": \"string\"}, \"hourly\": {\"type\": \"boolean\"}},"
    " \"required\": [\"city\"]}}},"
    " {\"type\": \"function\", \"function\": {\"name\": \"get_time\", \"description\": \"Get the time\","
    " \"parameters\": {\"type\": \"object\", \"properties\": {\"tz\": {\"type\": \"string\"},"
    " \"fields\": {\"type\": \"array\", \"items\": {\"type\": \"string\"}}}}}}]";

static const char *const call_names[2] = { "get_weather", "get_time" };
static const char *const call_args[2] = {
    "{\"city\": \"Paris\", \"days\": 3, \"zip\": \"75001\", \"hourly\": true}",
    "{\"tz\": \"Europe/Paris\", \"fields\": [\"hour\", \"minute\"]}",
};

/* Same JSON value: numbers as doubles, objects regardless of member order. */
static bool json_same(const json_value *a, const json_value *b) {
    if (a->type != b->type || a->n != b->n) return false;
    switch (a->type) {
    case JSON_NULL: return true;
    case JSON_BOOL: return a->boolean == b->boolean;
    case JSON_NUMBER: return a->number == b->number;
    case JSON_STRING: return a->len == b->len && !memcmp(a->str, b->str, a->len);
    case JSON_ARRAY:
        for (size_t i = 0; i < a->n; i++) if (!json_same(&a->items[i], &b->items[i])) return false;
        return true;
    case JSON_OBJECT:
        for (size_t i = 0; i < a->n; i++) {
            const json_value *o = json_get(b, a->keys[i]);
            if (!o || !json_same(&a->items[i], o)) return false;
        }
        return true;
    }
    return false;
}

static bool same_json_text(const char *x, const char *y) {
    json_value *a = NULL, *b = NULL;
    ts_error e;
    bool ok = json_parse(x, strlen(x), &a, &e) == 0 && json_parse(y, strlen(y), &b, &e) == 0 && json_same(a, b);
    json_free(a);
    json_free(b);
    return ok;
}

/* bos/eos of a template, from the renderings file (the first line naming it). */
static void special_tokens(const char *renderings, const char *name, char *bos, char *eos, size_t cap) {
    bos[0] = eos[0] = 0;
    if (!renderings) return;
    char key[340];
    snprintf(key, sizeof key, "{\"template\": \"%s\",", name);
    const char *line = strstr(renderings, key);
    if (!line) return;
    const char *nl = strchr(line, '\n');
    json_value *v = NULL;
    ts_error e;
    if (json_parse(line, nl ? (size_t)(nl - line) : strlen(line), &v, &e) != 0) return;
    const char *b = json_get_str(v, "bos_token"), *s = json_get_str(v, "eos_token");
    snprintf(bos, cap, "%s", b ? b : "");
    snprintf(eos, cap, "%s", s ? s : "");
    json_free(v);
}

/* The conversation [user, assistant with ncalls calls]: content "" or null, arguments objects or strings. */
static json_value *conversation(int ncalls, bool null_content, bool string_args) {
    json_buf b = {0};
    json_buf_put(&b, "[{\"role\": \"user\", \"content\": \"What is the weather?\"}, {\"role\": \"assistant\", \"content\": ", 87);
    const char *c = null_content ? "null" : "\"\"";
    json_buf_put(&b, c, strlen(c));
    json_buf_put(&b, ", \"tool_calls\": [", 17);
    for (int i = 0; i < ncalls; i++) {
        json_buf_printf(&b, "%s{\"id\": \"call%05d\", \"type\": \"function\", \"function\": {\"name\": \"%s\", \"arguments\": ",
                        i ? ", " : "", 1234 + i, call_names[i]);
        if (string_args) json_buf_put_string(&b, call_args[i], strlen(call_args[i]));
        else json_buf_put(&b, call_args[i], strlen(call_args[i]));
        json_buf_put(&b, "}}", 2);
    }
    json_buf_put(&b, "]}]", 3);
    json_value *v = NULL;
    ts_error e;
    if (json_parse(b.data, b.len, &v, &e) != 0) printf("# conversation: %s\n", e.msg);
    json_buf_free(&b);
    return v;
}

/* Renders the assistant's part for ncalls calls (the first variant that shows the first call's name);
 * NULL if none does. */
static char *assistant_part(const char *tmpl, const char *bos, const char *eos, const json_value *tools,
                            const char *prompt, int ncalls) {
    struct tm day;
    chat_parse_date("2026-11-30", &day);
    for (int v = 0; v < 4; v++) {
        json_value *msgs = conversation(ncalls, v >= 2, v & 1);
        if (!msgs) continue;
        chat_vars cv = { .messages = msgs, .bos_token = bos, .eos_token = eos, .tools = tools };
        char *full = NULL;
        ts_error e;
        char *part = NULL;
        if (chat_render(tmpl, &cv, &day, NULL, &full, &e) == 0) {
            const char *p = full + tool_format_assistant_start(prompt, full);
            if (strstr(p, call_names[0])) part = strdup(p);
        }
        free(full);
        json_free(msgs);
        if (part) return part;
    }
    return NULL;
}

/* Parses part with f and compares with the calls whose names it shows; every prefix of part must
 * parse or fail cleanly. Returns how many calls matched, or -1 on a mismatch (reason printed). */
static int round_trip(const tool_format *f, const char *part, const json_value *tools, int ncalls) {
    int shown = 0;
    for (int i = 0; i < ncalls; i++) if (strstr(part, call_names[i])) shown = i + 1;
    tool_calls tc;
    ts_error e = {{0}};
    if (tool_calls_parse(f, part, strlen(part), tools, 7, &tc, &e) != 0) {
        printf("# parse failed: %s\n# text: %s\n", e.msg, part);
        return -1;
    }
    int rc = shown;
    if (tc.n != shown) {
        printf("# %d calls parsed, %d rendered\n# text: %s\n", tc.n, shown, part);
        rc = -1;
    }
    for (int i = 0; i < tc.n && i < shown && rc >= 0; i++) {
        if (strcmp(tc.calls[i].name, call_names[i]) || !same_json_text(tc.calls[i].arguments, call_args[i])) {
            printf("# call %d: %s %s, want %s %s\n# text: %s\n", i, tc.calls[i].name, tc.calls[i].arguments,
                   call_names[i], call_args[i], part);
            rc = -1;
        }
    }
    if (rc >= 0 && (strstr(tc.content, call_names[0]) || strstr(tc.content, call_names[1]))) {
        printf("# the content keeps a call: %s\n", tc.content);
        rc = -1;
    }
    tool_calls_free(&tc);
    size_t len = strlen(part);
    for (size_t k = 0; k < len; k++) {   /* truncated generations: no crash, no leak */
        tool_calls t2;
        ts_error e2;
        if (tool_calls_parse(f, part, k, tools, 7, &t2, &e2) == 0) tool_calls_free(&t2);
        else if (strchr(e2.msg, '\n')) { printf("# a two-line error: %s\n", e2.msg); rc = -1; }
    }
    return rc;
}

static int name_cmp(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

static void fixture_templates(void) {
    char dir[1024], path[1400];
    snprintf(dir, sizeof dir, "%s/chat-templates/all", fixtures_dir());
    DIR *dh = opendir(dir);
    CHECK(dh != NULL, "open %s", dir);
    if (!dh) return;
    char *names[256];
    int n = 0;
    for (struct dirent *d; (d = readdir(dh)) && n < 256;) {
        size_t l = strlen(d->d_name);
        if (l > 6 && !strcmp(d->d_name + l - 6, ".jinja")) names[n++] = strdup(d->d_name);
    }
    closedir(dh);
    qsort(names, (size_t)n, sizeof names[0], name_cmp);
    snprintf(path, sizeof path, "%s/renderings-all.jsonl", dir);
    size_t rlen;
    char *renderings = read_all(path, &rlen);
    json_value *tools = NULL;
    ts_error e;
    json_parse(tools_json, sizeof tools_json - 1, &tools, &e);
    json_value *user = NULL;
    const char *uj = "[{\"role\": \"user\", \"content\": \"What is the weather?\"}]";
    json_parse(uj, strlen(uj), &user, &e);
    struct tm day;
    chat_parse_date("2026-11-30", &day);
    int with_calls = 0, by_text = 0, without = 0, bad = 0;
    for (int t = 0; t < n; t++) {
        char name[300];
        snprintf(name, sizeof name, "%.*s", (int)strlen(names[t]) - 6, names[t]);
        snprintf(path, sizeof path, "%s/%s", dir, names[t]);
        size_t tl;
        char *tmpl = read_all(path, &tl);
        char bos[64], eos[64];
        special_tokens(renderings, name, bos, eos, sizeof bos);
        ts_error err = {{0}};
        const tool_format *f = tool_format_detect(tmpl, bos, eos, &err);
        chat_vars pv = { .messages = user, .add_generation_prompt = true, .bos_token = bos, .eos_token = eos, .tools = tools };
        char *prompt = NULL;
        const json_value *with = tools;
        if (chat_render(tmpl, &pv, &day, NULL, &prompt, &e) != 0) {   /* a template that raises on tools: without */
            pv.tools = with = NULL;
            free(prompt);
            prompt = NULL;
        }
        if (!prompt && chat_render(tmpl, &pv, &day, NULL, &prompt, &e) != 0) {
            CHECK(0, "%s: renders the generation prompt (%s)", name, e.msg);
            bad++;
            free(tmpl);
            continue;
        }
        char *p1 = assistant_part(tmpl, bos, eos, with, prompt, 1);
        char *p2 = assistant_part(tmpl, bos, eos, with, prompt, 2);
        if (!f) {
            CHECK(!p1 && !p2, "%s: renders no tool calls%s", name, err.msg[0] ? err.msg : "");
            if (p1 || p2) { printf("# renders: %s\n", p1 ? p1 : p2); bad++; }
            else without++;
        } else if (!p1 && !p2) {
            CHECK(1, "%s: %s (from the template's text: its rendering of calls %s)", name, tool_format_name(f),
                  strstr(tmpl, "tool_calls") ? "fails in the sandbox" : "shows none, its system prompt asks for them");
            by_text++;
        } else {
            int r1 = p1 ? round_trip(f, p1, tools, 1) : -2;
            int r2 = p2 ? round_trip(f, p2, tools, 2) : -2;
            char what[200];
            snprintf(what, sizeof what, "%s%s%s", r1 == 1 ? "1 call" : r1 == -2 ? "1 call not rendered" : "1 call FAILS",
                     r2 == 2 ? ", 2 calls" : r2 == 1 ? ", 2 calls (renders only the first)" : r2 == -2 ? ", 2 calls not rendered" : ", 2 calls FAIL",
                     "");
            bool ok = r1 == 1 && (r2 >= 1 || r2 == -2);
            CHECK(ok, "%s: %s (%s round-trip)", name, tool_format_name(f), what);
            if (ok) with_calls++;
            else bad++;
        }
        free(p1);
        free(p2);
        free(prompt);
        free(tmpl);
    }
    printf("# %d templates: %d round-trip their tool calls, %d have a format from their text alone, %d render none, %d fail\n",
           n, with_calls, by_text, without, bad);
    for (int t = 0; t < n; t++) free(names[t]);
    free(renderings);
    json_free(tools);
    json_free(user);
}

/* ---- the parser's own cases ---- */

static int parse(const char *fmt, const char *text, tool_calls *tc, ts_error *e) {
    return tool_calls_parse(tool_format_by_name(fmt), text, strlen(text), NULL, 1, tc, e);
}

static void no_calls(void) {
    const char *text = "Hello, world. 3 < 4 and [x] {y}.\n";
    int ok = 0, all = 0;
    for (int i = 0; i < tool_format_count(); i++) {
        const tool_format *f = tool_format_at(i);
        if (!strcmp(tool_format_name(f), "functionary-v3.2")) continue;
        tool_calls tc;
        ts_error e;
        all++;
        if (tool_calls_parse(f, text, strlen(text), NULL, 1, &tc, &e) == 0 && tc.n == 0 && !strcmp(tc.content, text)) ok++;
        else printf("# %s\n", tool_format_name(f));
        tool_calls_free(&tc);
    }
    CHECK(ok == all, "text without calls: n = 0 and the content intact in every format (%d/%d)", ok, all);
    tool_calls tc;
    ts_error e;
    CHECK(parse("functionary-v3.2", "all\nJust text.", &tc, &e) == 0 && tc.n == 0 && !strcmp(tc.content, "Just text."),
          "functionary: >>>all is content");
    tool_calls_free(&tc);
    CHECK(parse("llama3-json", "{\"answer\": 42}", &tc, &e) == 0 && tc.n == 0 && !strcmp(tc.content, "{\"answer\": 42}"),
          "llama3-json: a JSON answer that is not a call stays content");
    tool_calls_free(&tc);
    CHECK(parse("hermes", "", &tc, &e) == 0 && tc.n == 0 && tc.content && !strcmp(tc.content, ""), "empty text: no calls, content \"\"");
    tool_calls_free(&tc);
}

static void content_kept(void) {
    tool_calls tc;
    ts_error e;
    int rc = parse("hermes", "Let me check.\n\n<tool_call>\n{\"name\": \"f\", \"arguments\": {\"a\": 1}}\n</tool_call>\nDone.", &tc, &e);
    CHECK(rc == 0 && tc.n == 1 && !strcmp(tc.content, "Let me check.Done.") && !strcmp(tc.calls[0].arguments, "{\"a\":1}"),
          "hermes: content before and after a call kept, arguments compact (%s)", rc == 0 ? tc.content : e.msg);
    tool_calls_free(&tc);
    rc = parse("harmony", "<|channel|>analysis<|message|>Need the weather.<|end|><|start|>assistant<|channel|>commentary"
                          " to=functions.get_weather <|constrain|>json<|message|>{\"city\":\"Paris\"}<|call|>", &tc, &e);
    CHECK(rc == 0 && tc.n == 1 && !strcmp(tc.calls[0].name, "get_weather") &&
          !strcmp(tc.content, "<|channel|>analysis<|message|>Need the weather.<|end|>"),
          "harmony: the generated form (channel first, <|constrain|>), the analysis message kept as content");
    tool_calls_free(&tc);
    rc = parse("kimi-k2", "<|tool_calls_section_begin|><|tool_call_begin|>functions.get_weather:0<|tool_call_argument_begin|>"
                          "{\"city\": \"Paris\", \"days\": 3}<|tool_call_end|><|tool_call_begin|>functions.get_time:1"
                          "<|tool_call_argument_begin|>{\"tz\": \"Europe/Paris\"}<|tool_call_end|><|tool_calls_section_end|><|im_end|>", &tc, &e);
    CHECK(rc == 0 && tc.n == 2 && !strcmp(tc.calls[1].name, "get_time") && !strcmp(tc.calls[0].arguments, "{\"city\":\"Paris\",\"days\":3}")
          && !strcmp(tc.content, "<|im_end|>"),
          "kimi-k2: the calls its template renders under Jinja2 without the sandbox");
    tool_calls_free(&tc);
    rc = parse("deepseek-v3.1", "Sure.<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>get_weather<｜tool▁sep｜>{\"city\": \"Paris\"}"
                                "<｜tool▁call▁end｜><｜tool▁calls▁end｜>", &tc, &e);
    CHECK(rc == 0 && tc.n == 1 && !strcmp(tc.calls[0].name, "get_weather") && !strcmp(tc.content, "Sure."),
          "deepseek-v3.1: name, <｜tool▁sep｜>, JSON");
    tool_calls_free(&tc);
    rc = parse("gemma4", "<|tool_call>call:f{a:None,b:True}<tool_call|>", &tc, &e);
    CHECK(rc == 0 && tc.n == 1 && !strcmp(tc.calls[0].arguments, "{\"a\":null,\"b\":true}"),
          "gemma4: None and True as Jinja prints them");
    tool_calls_free(&tc);
    rc = parse("llama3-json", "<|python_tag|>{\"name\": \"f\", \"parameters\": {\"q\": \"x\"}}", &tc, &e);
    CHECK(rc == 0 && tc.n == 1 && !strcmp(tc.calls[0].name, "f") && !strcmp(tc.calls[0].arguments, "{\"q\":\"x\"}"),
          "llama3-json: <|python_tag|> form");
    tool_calls_free(&tc);
    rc = parse("llama3-json", "{\"name\": \"f\", \"parameters\": {}}; {\"name\": \"g\", \"parameters\": {\"n\": 2.5}}", &tc, &e);
    CHECK(rc == 0 && tc.n == 2 && !strcmp(tc.calls[1].arguments, "{\"n\":2.5}"), "llama3-json: two bare objects");
    tool_calls_free(&tc);
    rc = parse("mistral", "[TOOL_CALLS][{\"name\": \"f\", \"arguments\": {}}]", &tc, &e);
    CHECK(rc == 0 && tc.n == 1 && !strcmp(tc.calls[0].arguments, "{}"), "mistral: the older JSON array form too");
    tool_calls_free(&tc);
    rc = parse("lfm2", "<|tool_call_start|>[f(a='it\\'s', b=[1, 2.5, None], c={'k': True})]<|tool_call_end|>ok", &tc, &e);
    CHECK(rc == 0 && tc.n == 1 && same_json_text(tc.calls[0].arguments, "{\"a\":\"it's\",\"b\":[1,2.5,null],\"c\":{\"k\":true}}")
          && !strcmp(tc.content, "ok"), "lfm2: Python literals (%s)", rc == 0 && tc.n ? tc.calls[0].arguments : e.msg);
    tool_calls_free(&tc);
    rc = parse("gemma4", "<|tool_call>call:f{a:<|\"|>x, y<|\"|>,b:{c:[1,<|\"|>z<|\"|>]},d:false}<tool_call|>", &tc, &e);
    CHECK(rc == 0 && tc.n == 1 && same_json_text(tc.calls[0].arguments, "{\"a\":\"x, y\",\"b\":{\"c\":[1,\"z\"]},\"d\":false}"),
          "gemma4: nested values (%s)", rc == 0 && tc.n ? tc.calls[0].arguments : e.msg);
    tool_calls_free(&tc);
}

static void xml_types(void) {
    json_value *tools = NULL;
    ts_error e;
    json_parse(tools_json, sizeof tools_json - 1, &tools, &e);
    const char *text = "<tool_call>\n<function=get_weather>\n<parameter=zip>\n75001\n</parameter>\n"
                       "<parameter=days>\n3\n</parameter>\n<parameter=city>\nNew\nYork\n</parameter>\n</function>\n</tool_call>";
    tool_calls tc;
    int rc = tool_calls_parse(tool_format_by_name("qwen3-coder"), text, strlen(text), tools, 1, &tc, &e);
    CHECK(rc == 0 && tc.n == 1 && !strcmp(tc.calls[0].arguments, "{\"zip\":\"75001\",\"days\":3,\"city\":\"New\\nYork\"}"),
          "qwen3-coder: a string-typed parameter stays a string, an integer one is JSON (%s)", rc == 0 ? tc.calls[0].arguments : e.msg);
    tool_calls_free(&tc);
    rc = tool_calls_parse(tool_format_by_name("qwen3-coder"), text, strlen(text), NULL, 1, &tc, &e);
    CHECK(rc == 0 && tc.n == 1 && !strcmp(tc.calls[0].arguments, "{\"zip\":75001,\"days\":3,\"city\":\"New\\nYork\"}"),
          "qwen3-coder: without tools, values that parse as JSON are JSON");
    tool_calls_free(&tc);
    json_free(tools);
}

static void malformed(void) {
    static const char *const bodies[] = { "", "\x01{\"oops", "{\"name\": 1}", "[]", "{\"name\": \"f\", \"arguments\": 5}",
                                          "f(", "call:f{a:", "\xff\xfe", "{\"name\": \"f\", \"arguments\": \"{bad\"}" };
    int errors = 0, all = 0, twoline = 0;
    for (int i = 0; i < tool_format_count(); i++) {
        const tool_format *f = tool_format_at(i);
        const char *m = tool_format_start_marker(f);
        for (size_t b = 0; b < sizeof bodies / sizeof bodies[0]; b++) {
            char text[256];
            snprintf(text, sizeof text, "Hi %s%s", m, bodies[b]);
            tool_calls tc;
            ts_error e;
            int rc = tool_calls_parse(f, text, strlen(text), NULL, 1, &tc, &e);
            all++;
            if (rc != 0) { errors++; if (strchr(e.msg, '\n')) twoline++; }
            else tool_calls_free(&tc);
        }
    }
    CHECK(twoline == 0 && errors > all / 2, "malformed calls: errors, not crashes (%d of %d refused, one line each)", errors, all);
    tool_calls tc;
    ts_error e;
    CHECK(parse("hermes", "<tool_call>\n{\"name\": \"f\", \"arguments\": {\"a\": }\n</tool_call>", &tc, &e) == -1 && tc.n == 0,
          "hermes: a call whose JSON does not parse is an error: %s", e.msg);
    CHECK(parse("qwen3-coder", "<tool_call>\n<function=f>\n<parameter=a>\n1\n</tool_call>", &tc, &e) == -1,
          "qwen3-coder: a parameter without its end is an error: %s", e.msg);
    CHECK(parse("kimi-k2", "<|tool_calls_section_begin|>oops", &tc, &e) == -1, "kimi-k2: a section with no call is an error: %s", e.msg);
    CHECK(parse("llama3-json", "<|python_tag|>{\"nam", &tc, &e) == -1, "llama3-json: a broken call after <|python_tag|> is an error");
}

static void ids(void) {
    tool_calls a, b, c;
    ts_error e;
    const char *text = "<tool_call>{\"name\": \"f\", \"arguments\": {}}</tool_call><tool_call>{\"name\": \"g\", \"arguments\": {}}</tool_call>";
    const tool_format *h = tool_format_by_name("hermes");
    tool_calls_parse(h, text, strlen(text), NULL, 42, &a, &e);
    tool_calls_parse(h, text, strlen(text), NULL, 42, &b, &e);
    tool_calls_parse(h, text, strlen(text), NULL, 43, &c, &e);
    CHECK(a.n == 2 && !strncmp(a.calls[0].id, "call_", 5) && strlen(a.calls[0].id) == 29 && strcmp(a.calls[0].id, a.calls[1].id) &&
          !strcmp(a.calls[0].id, b.calls[0].id) && !strcmp(a.calls[1].id, b.calls[1].id) && strcmp(a.calls[0].id, c.calls[0].id),
          "ids: call_ + 24, distinct per call, the same for the same seed, another for another seed (%s %s)",
          a.n ? a.calls[0].id : "", a.n > 1 ? a.calls[1].id : "");
    tool_calls_free(&a); tool_calls_free(&b); tool_calls_free(&c);
    const char *mt = "[TOOL_CALLS]f[ARGS]{}";
    tool_calls_parse(tool_format_by_name("mistral"), mt, strlen(mt), NULL, 42, &a, &e);
    bool alnum = a.n == 1 && strlen(a.calls[0].id) == 9;
    for (int i = 0; alnum && i < 9; i++) {
        char ch = a.calls[0].id[i];
        alnum = (ch >= '0' && ch <= '9') || (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z');
    }
    CHECK(alnum, "ids: Mistral's formats get 9 letters and digits (%s)", a.n ? a.calls[0].id : "");
    tool_calls_free(&a);
}

static void safe_prefix(void) {
    const tool_format *h = tool_format_by_name("hermes"), *l = tool_format_by_name("llama3-json"),
                      *m = tool_format_by_name("mistral"), *fn = tool_format_by_name("functionary-v3.2"),
                      *g = tool_format_by_name("gigachat-3");
#define SP(f, s) tool_calls_safe_prefix(f, s, strlen(s))
    CHECK(SP(h, "Hello") == 5 && SP(h, "Hello <tool") == 5 && SP(h, "Hello <tool_call>\n{") == 5 && SP(h, "a < b") == 5 &&
          SP(h, "x <tool_cal!") == 12 && SP(h, "") == 0 && SP(h, "Hi \n") == 2,
          "safe prefix (hermes): plain text up to a marker, a marker's beginning at the end or trailing whitespace");
    CHECK(SP(l, "{\"na") == 0 && SP(l, "  ") == 0 && SP(l, "Hello {") == 7 && SP(l, "Hi <|python") == 2,
          "safe prefix (llama3-json): nothing while the text may be a bare call, else up to <|python_tag|>");
    CHECK(SP(m, "ok [TOOL_") == 2 && SP(m, "ok [x]") == 6, "safe prefix (mistral)");
    CHECK(SP(fn, "all\nHi") == 0, "safe prefix (functionary): nothing (the text starts inside a call)");
    CHECK(SP(g, "Hi <|message_sep|>\n\nfunc") == 2 && SP(g, "Hi <|message_sep|>\n\nhello") == 25,
          "safe prefix: whitespace in a marker matches any run");
#undef SP
    CHECK(!strcmp(tool_format_start_marker(h), "<tool_call>") && !strcmp(tool_format_start_marker(l), "{") &&
          !strcmp(tool_format_start_marker(fn), "") && !strcmp(tool_format_start_marker(tool_format_by_name("kimi-k2")), "<|tool_calls_section_begin|>"),
          "start markers");
}

int main(void) {
    fixture_templates();
    no_calls();
    content_kept();
    xml_types();
    malformed();
    ids();
    safe_prefix();
    CHECK_EXIT();
}
