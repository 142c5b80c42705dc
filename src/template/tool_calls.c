/* Tool calls in generated text: the table of formats (one row per way templates render calls), the
 * parsers of the syntaxes the rows name, detection by rendering a probe call, and the streaming
 * helper. Everything a row states is text the templates render; the code knows syntaxes, not models. */
#include "template/tool_calls.h"
#include "template/chat_template.h"
#include "core/error.h"
#include "core/str.h"
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- the table ---- */

enum syntax {
    SYN_JSON,      /* call_open JSON call_close: an object {name, arguments} or an array of them */
    SYN_NAMED,     /* call_open [... name_open] NAME [... args_open] JSON-arguments [args_close] [call_close] */
    SYN_XML,       /* call_open [name_open] NAME name_close (key_open KEY key_close [attrs value_open] VALUE value_close)* [func_close] call_close */
    SYN_HARMONY,   /* gpt-oss: a message whose header holds "to=functions.NAME", its body the JSON arguments, ended by <|call|> */
    SYN_PYCALL,    /* call_open [NAME(k=v, ...), ...] call_close with Python literals */
    SYN_GEMMA,     /* call_open name_open NAME {k:v,...} call_close, strings between <|"|> */
};

enum {
    F_BARE = 1,      /* a call may also stand at the text's start with no marker (JSON object first) */
    F_OPENED = 2,    /* the generation prompt ends with call_open: the text starts inside a call */
    F_TRIM_NL = 4,   /* XML values: one newline after the opening and before the closing tag is layout */
    F_ID9 = 8,       /* ids of 9 letters and digits (Mistral's templates refuse any other) */
    F_NESTED = 16,   /* XML: the parameter's name is the tag (key_open NAME key_close VALUE key_open /NAME key_close),
                        values nest the same way (<item> for list items) */
    F_JSON_TOO = 32, /* NAMED: a JSON object or array right after call_open is read as SYN_JSON (older form) */
};

struct tool_format {
    const char *name;
    enum syntax syntax;
    unsigned flags;
    const char *section_open, *section_close;   /* around all calls (optional) */
    const char *call_open, *call_close;         /* around one call (call_close optional when reading) */
    const char *name_open, *name_close;         /* NAMED: skipped to before the name; XML: around the name */
    const char *args_open, *args_close;         /* NAMED: before and after the JSON arguments */
    const char *name_keys, *args_keys;          /* JSON: member names, '|'-separated, first found wins */
    const char *key_open, *key_close, *value_open, *value_close, *func_close;   /* XML */
    const char *string_attr;                    /* XML: attribute text marking a value as a string */
    const char *content_name;                   /* a call of this name is plain content (functionary's "all") */
    const char *template_marker;                /* when the probe finds no row: a template holding this text uses the row */
    const char *forced_open, *forced_close;     /* JSON: around a call the engine makes the model write
                                                   (tool_choice required), as the template lays it out;
                                                   NULL: not offered (markers that are control tokens) */
};

/* Whitespace inside a marker matches any run of whitespace (also none) in the text. Rows are tried in
 * this order by tool_format_detect: a row that also reads another row's text comes after it. */
static const tool_format formats[] = {
    /* Hermes 2 Pro / 3, Qwen2.5, Qwen3, QwQ, MiMo-VL, Granite 4.x, Reka Edge */
    { .name = "hermes", .syntax = SYN_JSON, .call_open = "<tool_call>", .call_close = "</tool_call>",
      .name_keys = "name", .args_keys = "arguments|parameters",
      .forced_open = "<tool_call>\n", .forced_close = "\n</tool_call>" },
    /* Qwen3-Coder, Qwen3.5, Nemotron 3 Nano, Step 3.5 */
    { .name = "qwen3-coder", .syntax = SYN_XML, .flags = F_TRIM_NL, .call_open = "<tool_call>",
      .call_close = "</tool_call>", .name_open = "<function=", .name_close = ">", .key_open = "<parameter=",
      .key_close = ">", .value_close = "</parameter>", .func_close = "</function>" },
    /* GLM-4.5/4.6/4.7, Laguna */
    { .name = "glm", .syntax = SYN_XML, .call_open = "<tool_call>", .call_close = "</tool_call>",
      .key_open = "<arg_key>", .key_close = "</arg_key>", .value_open = "<arg_value>", .value_close = "</arg_value>" },
    /* Mistral Nemo / 7B v0.3 and earlier: a JSON array after [TOOL_CALLS] */
    { .name = "mistral-json", .syntax = SYN_JSON, .flags = F_ID9, .call_open = "[TOOL_CALLS]",
      .name_keys = "name", .args_keys = "arguments|parameters" },
    /* Mistral Small 3.2, Devstral, Ministral 3, Magistral: [TOOL_CALLS]name[CALL_ID]id[ARGS]{...} */
    { .name = "mistral", .syntax = SYN_NAMED, .flags = F_ID9 | F_JSON_TOO, .call_open = "[TOOL_CALLS]", .args_open = "[ARGS]" },
    /* gpt-oss */
    { .name = "harmony", .syntax = SYN_HARMONY, .call_open = "to=functions." },
    /* Kimi K2 */
    { .name = "kimi-k2", .syntax = SYN_NAMED, .section_open = "<|tool_calls_section_begin|>",
      .section_close = "<|tool_calls_section_end|>", .call_open = "<|tool_call_begin|>", .call_close = "<|tool_call_end|>",
      .name_open = "functions.", .args_open = "<|tool_call_argument_begin|>",
      .template_marker = "<|tool_calls_section_begin|>" },   /* its template raises on calls in a sandbox (list.append) */
    /* DeepSeek R1 (and its distills), V3 */
    { .name = "deepseek-r1", .syntax = SYN_NAMED, .section_open = "<｜tool▁calls▁begin｜>",
      .section_close = "<｜tool▁calls▁end｜>", .call_open = "<｜tool▁call▁begin｜>", .call_close = "<｜tool▁call▁end｜>",
      .name_open = "<｜tool▁sep｜>", .args_open = "```json", .args_close = "```" },
    /* DeepSeek V3.1, V3-0324, R1-0528: the name first, then the JSON arguments after <｜tool▁sep｜> (no fence) */
    { .name = "deepseek-v3.1", .syntax = SYN_NAMED, .section_open = "<｜tool▁calls▁begin｜>",
      .section_close = "<｜tool▁calls▁end｜>", .call_open = "<｜tool▁call▁begin｜>", .call_close = "<｜tool▁call▁end｜>",
      .args_open = "<｜tool▁sep｜>" },
    /* DeepSeek V3.2 */
    { .name = "deepseek-v3.2", .syntax = SYN_XML, .section_open = "<｜DSML｜function_calls>",
      .section_close = "</｜DSML｜function_calls>", .call_open = "<｜DSML｜invoke name=\"", .call_close = "</｜DSML｜invoke>",
      .name_close = "\">", .key_open = "<｜DSML｜parameter name=\"", .key_close = "\"", .value_open = ">",
      .value_close = "</｜DSML｜parameter>", .string_attr = "string=\"true\"" },
    /* DeepSeek V4 */
    { .name = "deepseek-v4", .syntax = SYN_XML, .section_open = "<｜DSML｜tool_calls>",
      .section_close = "</｜DSML｜tool_calls>", .call_open = "<｜DSML｜invoke name=\"", .call_close = "</｜DSML｜invoke>",
      .name_close = "\">", .key_open = "<｜DSML｜parameter name=\"", .key_close = "\"", .value_open = ">",
      .value_close = "</｜DSML｜parameter>", .string_attr = "string=\"true\"" },
    /* MiniMax M2 */
    { .name = "minimax-m2", .syntax = SYN_XML, .section_open = "<minimax:tool_call>", .section_close = "</minimax:tool_call>",
      .call_open = "<invoke name=\"", .call_close = "</invoke>", .name_close = "\">",
      .key_open = "<parameter name=\"", .key_close = "\">", .value_close = "</parameter>" },
    /* MiniMax M3: ]<]minimax[>[ before every tag */
    { .name = "minimax-m3", .syntax = SYN_XML, .flags = F_NESTED, .section_open = "]<]minimax[>[<tool_call>",
      .section_close = "]<]minimax[>[</tool_call>", .call_open = "]<]minimax[>[<invoke name=\"",
      .call_close = "]<]minimax[>[</invoke>", .name_close = "\">", .key_open = "]<]minimax[>[<", .key_close = ">" },
    /* Hunyuan (Hy3) */
    { .name = "hunyuan", .syntax = SYN_XML, .section_open = "<tool_calls:opensource>", .section_close = "</tool_calls:opensource>",
      .call_open = "<tool_call:opensource>", .call_close = "</tool_call:opensource>", .name_close = "<tool_sep:opensource>",
      .key_open = "<arg_key:opensource>", .key_close = "</arg_key:opensource>", .value_open = "<arg_value:opensource>",
      .value_close = "</arg_value:opensource>" },
    /* MiniCPM 5 */
    { .name = "minicpm", .syntax = SYN_XML, .call_open = "<function name=\"", .call_close = "</function>",
      .name_close = "\">", .key_open = "<param name=\"", .key_close = "\">", .value_close = "</param>" },
    /* Solar Open */
    { .name = "solar", .syntax = SYN_NAMED, .section_open = "<|tool_calls|>", .section_close = "<|calls|>",
      .call_open = "<|tool_call:begin|>", .call_close = "<|tool_call:end|>", .name_open = "<|tool_call:name|>",
      .args_open = "<|tool_call:args|>" },
    /* Command R7B, Command A (Cohere2) */
    { .name = "command-r", .syntax = SYN_JSON, .call_open = "<|START_ACTION|>", .call_close = "<|END_ACTION|>",
      .name_keys = "tool_name|name", .args_keys = "parameters|arguments" },
    /* Apriel 1.5/1.6 */
    { .name = "apriel", .syntax = SYN_JSON, .call_open = "<tool_calls>", .call_close = "</tool_calls>",
      .name_keys = "name", .args_keys = "arguments|parameters" },
    /* Nemotron Nano v2 */
    { .name = "nemotron-v2", .syntax = SYN_JSON, .call_open = "<TOOLCALL>", .call_close = "</TOOLCALL>",
      .name_keys = "name", .args_keys = "arguments|parameters" },
    /* Granite 3.x (the system prompt asks for it; its template renders no calls) */
    { .name = "granite-3", .syntax = SYN_JSON, .call_open = "<|tool_call|>",
      .name_keys = "name", .args_keys = "arguments|parameters", .template_marker = "respond only with <|tool_call|>" },
    /* GigaChat 3.1 */
    { .name = "gigachat-3.1", .syntax = SYN_JSON, .call_open = "<|function_call|>",
      .name_keys = "name", .args_keys = "arguments|parameters" },
    /* GigaChat 3 */
    { .name = "gigachat-3", .syntax = SYN_JSON, .call_open = "<|message_sep|> function call<|role_sep|>",
      .name_keys = "name", .args_keys = "arguments|parameters" },
    /* LFM2 / LFM2.5: Python calls */
    { .name = "lfm2", .syntax = SYN_PYCALL, .call_open = "<|tool_call_start|>", .call_close = "<|tool_call_end|>",
      .template_marker = "\"List of tools: [\"" },   /* LFM2.5-Instruct's template lists tools but renders no calls */
    /* Gemma 4 */
    { .name = "gemma4", .syntax = SYN_GEMMA, .call_open = "<|tool_call>", .call_close = "<tool_call|>",
      .name_open = "call:" },
    /* functionary v3.2: the generation prompt ends with ">>>"; ">>>all" is plain content */
    { .name = "functionary-v3.2", .syntax = SYN_NAMED, .flags = F_OPENED, .call_open = ">>>",
      .content_name = "all" },
    /* Llama 3.1 / 3.2 / 3.3: a bare JSON object, or one after <|python_tag|> */
    { .name = "llama3-json", .syntax = SYN_JSON, .flags = F_BARE, .call_open = "<|python_tag|>",
      .name_keys = "name", .args_keys = "parameters|arguments", .forced_open = "", .forced_close = "" },
};
#define N_FORMATS ((int)(sizeof formats / sizeof formats[0]))

int tool_format_count(void) { return N_FORMATS; }
const tool_format *tool_format_at(int i) { return i >= 0 && i < N_FORMATS ? &formats[i] : NULL; }
const char *tool_format_name(const tool_format *f) { return f ? f->name : NULL; }

const tool_format *tool_format_by_name(const char *name) {
    for (int i = 0; name && i < N_FORMATS; i++)
        if (!strcmp(formats[i].name, name)) return &formats[i];
    return NULL;
}

const char *tool_format_start_marker(const tool_format *f) {
    if (!f) return NULL;
    if (f->flags & F_OPENED) return "";
    if (f->flags & F_BARE) return "{";
    return f->section_open ? f->section_open : f->call_open;
}

/* ---- text helpers ---- */

static bool is_ws(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

static const char *skip_ws(const char *p, const char *end) {
    while (p < end && is_ws(*p)) p++;
    return p;
}

enum { NO_MATCH, MATCH, PARTIAL };

/* Matches marker lit at p: whitespace in lit matches any run of whitespace (or none). MATCH sets *after;
 * PARTIAL: the text ended while it still matched. */
static int match_lit(const char *p, const char *end, const char *lit, const char **after) {
    while (*lit) {
        if (is_ws(*lit)) {
            while (is_ws(*lit)) lit++;
            p = skip_ws(p, end);
            continue;
        }
        if (p >= end) return PARTIAL;
        if (*p != *lit) return NO_MATCH;
        p++, lit++;
    }
    *after = p;
    return MATCH;
}

static bool starts(const char *p, const char *end, const char *lit, const char **after) {
    return lit && *lit && match_lit(p, end, lit, after) == MATCH;
}

/* The first match of lit in [p, end): its start (*after: its end), or NULL. */
static const char *find_lit(const char *p, const char *end, const char *lit, const char **after) {
    if (!lit || !*lit) return NULL;
    for (; p < end; p++) {
        const char *q = memchr(p, (unsigned char)lit[0], (size_t)(end - p));
        if (!q) return NULL;
        p = q;
        if (match_lit(p, end, lit, after) == MATCH) return p;
    }
    return NULL;
}

/* The last exact occurrence of lit in [lo, hi), or NULL. */
static const char *rfind_exact(const char *lo, const char *hi, const char *lit) {
    size_t n = strlen(lit), span = (size_t)(hi - lo);
    if (span < n) return NULL;
    for (size_t i = span - n + 1; i-- > 0;)
        if (memcmp(lo + i, lit, n) == 0) return lo + i;
    return NULL;
}

/* Function and parameter names: letters, digits, _ - . / and any non-ASCII byte. */
static bool is_name_char(char c) {
    unsigned char u = (unsigned char)c;
    return (u >= 'a' && u <= 'z') || (u >= 'A' && u <= 'Z') || (u >= '0' && u <= '9') || u == '_' || u == '-' ||
           u == '.' || u == '/' || u >= 0x80;
}

static const char *name_run(const char *p, const char *end) {
    while (p < end && is_name_char(*p)) p++;
    return p;
}

/* The end of the JSON value starting at p (brackets balanced outside strings), or NULL. The value is
 * checked by json_parse afterwards. */
static const char *json_end(const char *p, const char *end) {
    if (p >= end) return NULL;
    if (*p == '"') {
        for (p++; p < end; p++) {
            if (*p == '\\') { p++; continue; }
            if (*p == '"') return p + 1;
        }
        return NULL;
    }
    if (*p == '{' || *p == '[') {
        int depth = 0;
        for (; p < end; p++) {
            if (*p == '"') {
                const char *q = json_end(p, end);
                if (!q) return NULL;
                p = q - 1;
            } else if (*p == '{' || *p == '[') {
                if (++depth > JSON_MAX_DEPTH) return NULL;
            } else if (*p == '}' || *p == ']') {
                if (--depth == 0) return p + 1;
            }
        }
        return NULL;
    }
    const char *q = p;
    while (q < end && (is_name_char(*q) || *q == '+') && (unsigned char)*q < 0x80) q++;
    return q > p ? q : NULL;
}

/* ---- JSON output ---- */


/* ---- the parser's state ---- */

typedef struct pstate {
    const tool_format *f;
    const char *text, *end;
    const json_value *tools;
    json_buf content;
    tool_call *calls;
    int n, cap;
    ts_error *err;
} pstate;

#define MAX_CALLS 256
#define MAX_NAME 256

static int oom(pstate *ps) { return ts_fail(ps->err, "tool calls: out of memory"); }

/* Adds a call; args: JSON text that must be an object (written back compact). */
static int add_call(pstate *ps, const char *name, size_t name_len, const char *args, size_t args_len) {
    if (name_len == 0 || name_len > MAX_NAME) return ts_fail(ps->err, "tool call: a name of %zu bytes", name_len);
    if (ps->n >= MAX_CALLS) return ts_fail(ps->err, "tool calls: more than %d calls", MAX_CALLS);
    json_value *v = NULL;
    ts_error e;
    if (json_parse(args, args_len, &v, &e) != 0)
        return ts_fail(ps->err, "tool call %.*s: arguments are not JSON (%s)", (int)(name_len > 64 ? 64 : name_len), name, e.msg);
    if (v->type == JSON_STRING) {   /* arguments given as a JSON string holding the object */
        json_value *inner = NULL;
        int rc = json_parse(v->str, v->len, &inner, &e);
        json_free(v);
        if (rc != 0) return ts_fail(ps->err, "tool call %.*s: arguments string is not JSON (%s)", (int)(name_len > 64 ? 64 : name_len), name, e.msg);
        v = inner;
    }
    if (v->type != JSON_OBJECT) {
        json_free(v);
        return ts_fail(ps->err, "tool call %.*s: arguments are not a JSON object", (int)(name_len > 64 ? 64 : name_len), name);
    }
    json_buf b = {0};
    int rc = json_buf_put_value(&b, v);
    json_free(v);
    if (rc || !b.data) { json_buf_free(&b); return oom(ps); }
    if (ps->n == ps->cap) {
        int cap = ps->cap ? ps->cap * 2 : 4;
        tool_call *c = realloc(ps->calls, (size_t)cap * sizeof *c);
        if (!c) { json_buf_free(&b); return oom(ps); }
        ps->calls = c, ps->cap = cap;
    }
    char *nm = str_copy(name, name_len);
    if (!nm) { json_buf_free(&b); return oom(ps); }
    ps->calls[ps->n++] = (tool_call){ .id = NULL, .name = nm, .arguments = b.data };
    return 0;
}

/* Content before a call: trailing whitespace dropped. */
static int put_content(pstate *ps, const char *p, const char *q, bool before_call) {
    if (before_call) while (q > p && is_ws(q[-1])) q--;
    if (q > p && json_buf_put(&ps->content, p, (size_t)(q - p))) return oom(ps);
    return 0;
}

/* The tool's schema type of parameter key: true when it is "string" (alone, or with "null"). */
static bool param_is_string(const json_value *tools, const char *name, size_t name_len, const char *key, size_t key_len) {
    if (!tools || tools->type != JSON_ARRAY) return false;
    for (size_t i = 0; i < tools->n; i++) {
        const json_value *fn = json_get(&tools->items[i], "function");
        if (!fn) fn = &tools->items[i];
        const json_value *nm = json_get(fn, "name");
        if (!nm || nm->type != JSON_STRING || nm->len != name_len || memcmp(nm->str, name, name_len)) continue;
        const json_value *props = json_get(json_get(fn, "parameters"), "properties");
        if (!props || props->type != JSON_OBJECT) return false;
        for (size_t k = 0; k < props->n; k++) {
            if (props->key_lens[k] != key_len || memcmp(props->keys[k], key, key_len)) continue;
            const json_value *t = json_get(&props->items[k], "type");
            if (!t) return false;
            if (t->type == JSON_STRING) return !strcmp(t->str, "string");
            if (t->type != JSON_ARRAY) return false;
            bool str = false;
            for (size_t j = 0; j < t->n; j++) {
                if (t->items[j].type != JSON_STRING) return false;
                if (!strcmp(t->items[j].str, "string")) str = true;
                else if (strcmp(t->items[j].str, "null")) return false;
            }
            return str;
        }
        return false;
    }
    return false;
}

/* ---- SYN_JSON ---- */

static const json_value *get_any(const json_value *obj, const char *keys) {
    char k[64];
    for (const char *p = keys; p && *p;) {
        const char *bar = strchr(p, '|');
        size_t n = bar ? (size_t)(bar - p) : strlen(p);
        if (n < sizeof k) {
            memcpy(k, p, n);
            k[n] = 0;
            const json_value *v = json_get(obj, k);
            if (v) return v;
        }
        p = bar ? bar + 1 : NULL;
    }
    return NULL;
}

static int json_call_object(pstate *ps, const json_value *o) {
    if (o->type != JSON_OBJECT) return ts_fail(ps->err, "tool call: not a JSON object");
    const json_value *fn = json_get(o, "function");
    const json_value *holder = fn && fn->type == JSON_OBJECT ? fn : o;
    const json_value *name = get_any(holder, ps->f->name_keys ? ps->f->name_keys : "name");
    if (!name || name->type != JSON_STRING) return ts_fail(ps->err, "tool call: no \"name\"");
    const json_value *args = get_any(holder, ps->f->args_keys ? ps->f->args_keys : "arguments|parameters");
    json_buf b = {0};
    int rc = args ? json_buf_put_value(&b, args) : json_buf_put(&b, "{}", 2);
    if (rc) { json_buf_free(&b); return oom(ps); }
    rc = add_call(ps, name->str, name->len, b.data, b.len);
    json_buf_free(&b);
    return rc;
}

/* A JSON object or array of call objects at p; returns the end (after call_close) or NULL. */
static const char *parse_json_call(pstate *ps, const char *p) {
    p = skip_ws(p, ps->end);
    const char *e = json_end(p, ps->end);
    if (!e) { ts_fail(ps->err, "tool call: the call is not JSON"); return NULL; }
    json_value *v = NULL;
    ts_error je;
    if (json_parse(p, (size_t)(e - p), &v, &je) != 0) { ts_fail(ps->err, "tool call: the call is not JSON (%s)", je.msg); return NULL; }
    int rc = 0;
    if (v->type == JSON_ARRAY) {
        if (v->n == 0) rc = ts_fail(ps->err, "tool call: an empty list of calls");
        for (size_t i = 0; i < v->n && rc == 0; i++) rc = json_call_object(ps, &v->items[i]);
    } else {
        rc = json_call_object(ps, v);
    }
    json_free(v);
    if (rc) return NULL;
    const char *after;
    const char *q = skip_ws(e, ps->end);
    if (starts(q, ps->end, ps->f->call_close, &after)) return after;
    return e;
}

/* ---- SYN_NAMED ---- */

static const char *parse_named_call(pstate *ps, const char *p) {
    const tool_format *f = ps->f;
    const char *end = ps->end, *after;
    const char *lim = end;
    if (f->call_close) {
        const char *c = find_lit(p, end, f->call_close, &after);
        if (c) lim = c;
    }
    if (f->name_open) {
        const char *q = find_lit(p, lim, f->name_open, &after);
        if (q && q - p <= 64) p = after;
    }
    while (p < end && (*p == ' ' || *p == '\t')) p++;
    if ((f->flags & F_JSON_TOO) && p < end && (*p == '[' || *p == '{')) return parse_json_call(ps, p);
    const char *name = p, *name_end = name_run(p, end);
    if (name_end == name) { ts_fail(ps->err, "tool call: no function name after the marker"); return NULL; }
    if (f->content_name && (size_t)(name_end - name) == strlen(f->content_name) &&
        !memcmp(name, f->content_name, (size_t)(name_end - name)) && name_end < end && *name_end == '\n') {
        const char *c0 = name_end + 1, *nx = find_lit(c0, end, f->call_open, &after);
        if (put_content(ps, c0, nx ? nx : end, nx != NULL)) return NULL;
        return nx ? nx : end;
    }
    p = name_end;
    if (f->args_open) {
        const char *q = find_lit(p, lim, f->args_open, &after);
        if (!q || q - p > 128) { ts_fail(ps->err, "tool call %.*s: no arguments marker", (int)(name_end - name > 64 ? 64 : name_end - name), name); return NULL; }
        p = after;
    }
    p = skip_ws(p, end);
    const char *e = json_end(p, end);
    if (!e) { ts_fail(ps->err, "tool call %.*s: the arguments are not JSON", (int)(name_end - name > 64 ? 64 : name_end - name), name); return NULL; }
    if (add_call(ps, name, (size_t)(name_end - name), p, (size_t)(e - p))) return NULL;
    const char *q = skip_ws(e, end);
    if (starts(q, end, f->args_close, &after)) e = after, q = skip_ws(after, end);
    if (starts(q, end, f->call_close, &after)) e = after;
    return e;
}

/* ---- SYN_XML ---- */

typedef struct vreader { const char *p, *end; int depth; } vreader;
static int py_value(vreader *r, json_buf *b);

/* A parameter's value: a string, or (when it parses and as_string is false) JSON, or a Python literal
 * as templates print values with Jinja's str() (True, ['a', 'b']). */
static int put_leaf(pstate *ps, json_buf *b, const char *val, size_t val_len, bool as_string) {
    if (!as_string) {
        json_value *v = NULL;
        ts_error e;
        if (json_parse(val, val_len, &v, &e) == 0) {
            int rc = json_buf_put_value(b, v);
            json_free(v);
            return rc ? oom(ps) : 0;
        }
        json_buf py = {0};
        vreader r = { val, val + val_len, 0 };
        if (py_value(&r, &py) == 0 && skip_ws(r.p, r.end) == r.end) {
            int rc = json_buf_put(b, py.data, py.len);
            json_buf_free(&py);
            return rc ? oom(ps) : 0;
        }
        json_buf_free(&py);
    }
    return json_buf_put_string(b, val, val_len) ? oom(ps) : 0;
}

/* Appends "key":value; str_hint: 1 a string, 0 JSON if it parses, -1 the tool's schema decides. */
static int put_param(pstate *ps, json_buf *b, const char *name, size_t name_len, const char *key, size_t key_len,
                     const char *val, size_t val_len, int str_hint) {
    if (b->len > 1 && json_buf_put(b, ",", 1)) return oom(ps);
    if (json_buf_put_string(b, key, key_len) || json_buf_put(b, ":", 1)) return oom(ps);
    bool as_string = str_hint == 1 || (str_hint < 0 && param_is_string(ps->tools, name, name_len, key, key_len));
    return put_leaf(ps, b, val, val_len, as_string);
}

/* F_NESTED: the tag closing an element opened at p (key_open '/'), or NULL; *tag: where its name starts. */
static bool at_close_tag(const tool_format *f, const char *p, const char *end, const char **tag) {
    const char *after;
    if (!starts(p, end, f->key_open, &after) || after >= end || *after != '/') return false;
    *tag = after + 1;
    return true;
}

/* F_NESTED: the value at p (child elements, or text) as JSON into b; returns where its closing tag
 * starts, or NULL with err. */
static const char *nested_value(pstate *ps, json_buf *b, const char *p, int depth, bool as_string) {
    const tool_format *f = ps->f;
    const char *end = ps->end, *after, *tag;
    if (depth > 32) { ts_fail(ps->err, "tool call: values nested too deep"); return NULL; }
    const char *q = skip_ws(p, end);
    if (starts(q, end, f->key_open, &after) && !at_close_tag(f, q, end, &tag)) {
        json_buf obj = {0}, arr = {0};
        bool array = true;
        int n = 0;
        for (;; n++) {
            q = skip_ws(q, end);
            if (at_close_tag(f, q, end, &tag)) break;
            if (!starts(q, end, f->key_open, &after)) { ts_fail(ps->err, "tool call: expected a tag"); goto fail; }
            const char *t0 = after, *t1 = find_lit(t0, end, f->key_close, &after);
            if (!t1 || t1 - t0 > MAX_NAME || t1 == t0) { ts_fail(ps->err, "tool call: a tag without its end"); goto fail; }
            json_buf v = {0};
            const char *c = nested_value(ps, &v, after, depth + 1, false);
            if (!c) { json_buf_free(&v); goto fail; }
            if (!at_close_tag(f, c, end, &tag) || end - tag < t1 - t0 || memcmp(tag, t0, (size_t)(t1 - t0)) ||
                !starts(tag + (t1 - t0), end, f->key_close, &after)) {
                json_buf_free(&v);
                ts_fail(ps->err, "tool call: <%.*s> not closed", (int)(t1 - t0), t0);
                goto fail;
            }
            q = after;
            if (t1 - t0 != 4 || memcmp(t0, "item", 4)) array = false;
            int rc = json_buf_put(&arr, n ? "," : "", n ? 1 : 0) || json_buf_put(&arr, v.data, v.len) ||
                     json_buf_put(&obj, n ? "," : "", n ? 1 : 0) || json_buf_put_string(&obj, t0, (size_t)(t1 - t0)) ||
                     json_buf_put(&obj, ":", 1) || json_buf_put(&obj, v.data, v.len);
            json_buf_free(&v);
            if (rc) { oom(ps); goto fail; }
        }
        json_buf *w = array ? &arr : &obj;
        int rc = json_buf_put(b, array ? "[" : "{", 1) || (w->len && json_buf_put(b, w->data, w->len)) ||
                 json_buf_put(b, array ? "]" : "}", 1);
        json_buf_free(&obj);
        json_buf_free(&arr);
        if (rc) { oom(ps); return NULL; }
        return q;
    fail:
        json_buf_free(&obj);
        json_buf_free(&arr);
        return NULL;
    }
    const char *c = p;
    for (;;) {
        c = find_lit(c, end, f->key_open, &after);
        if (!c) { ts_fail(ps->err, "tool call: a value without its closing tag"); return NULL; }
        if (at_close_tag(f, c, end, &tag)) break;
        c = after;
    }
    return put_leaf(ps, b, p, (size_t)(c - p), as_string) ? NULL : c;
}

static const char *parse_xml_call(pstate *ps, const char *p) {
    const tool_format *f = ps->f;
    const char *end = ps->end, *after;
    if (f->name_open) {
        if (!starts(skip_ws(p, end), end, f->name_open, &after)) { ts_fail(ps->err, "tool call: no %s", f->name_open); return NULL; }
        p = after;
    }
    const char *name, *name_end;
    if (f->name_close) {
        const char *q = find_lit(p, end, f->name_close, &after);
        if (!q || q - p > MAX_NAME) { ts_fail(ps->err, "tool call: no end of the function name"); return NULL; }
        name = skip_ws(p, q), name_end = q;
        while (name_end > name && is_ws(name_end[-1])) name_end--;
        if (name_run(name, name_end) != name_end) { ts_fail(ps->err, "tool call: a function name with markup"); return NULL; }
        p = after;
    } else {
        name = skip_ws(p, end), name_end = name_run(name, end);
        p = name_end;
    }
    if (name_end == name) { ts_fail(ps->err, "tool call: no function name"); return NULL; }
    json_buf b = {0};
    if (json_buf_put(&b, "{", 1)) { oom(ps); return NULL; }
    for (;;) {
        p = skip_ws(p, end);
        if (starts(p, end, f->func_close, &after)) { p = after; continue; }
        if (starts(p, end, f->call_close, &after)) { p = after; break; }
        if (p >= end) break;
        if (!starts(p, end, f->key_open, &after)) { ts_fail(ps->err, "tool call %.*s: unexpected text in the call", (int)(name_end - name), name); goto fail; }
        const char *key = after, *key_end = find_lit(key, end, f->key_close, &after);
        if (!key_end || key_end - key > MAX_NAME) { ts_fail(ps->err, "tool call %.*s: a parameter name without its end", (int)(name_end - name), name); goto fail; }
        p = after;
        if (f->flags & F_NESTED) {
            const char *tag;
            if (b.len > 1 && json_buf_put(&b, ",", 1)) { oom(ps); goto fail; }
            if (json_buf_put_string(&b, key, (size_t)(key_end - key)) || json_buf_put(&b, ":", 1)) { oom(ps); goto fail; }
            const char *c = nested_value(ps, &b, p, 0, param_is_string(ps->tools, name, (size_t)(name_end - name), key, (size_t)(key_end - key)));
            if (!c) goto fail;
            if (!at_close_tag(f, c, end, &tag) || end - tag < key_end - key || memcmp(tag, key, (size_t)(key_end - key)) ||
                !starts(tag + (key_end - key), end, f->key_close, &after)) {
                ts_fail(ps->err, "tool call %.*s: <%.*s> not closed", (int)(name_end - name), name, (int)(key_end - key), key);
                goto fail;
            }
            p = after;
            continue;
        }
        int hint = -1;
        if (f->value_open) {
            const char *v0 = find_lit(p, end, f->value_open, &after);
            if (!v0 || v0 - p > 128) { ts_fail(ps->err, "tool call %.*s: a parameter without its value", (int)(name_end - name), name); goto fail; }
            if (f->string_attr && v0 > p) {
                const char *a;
                hint = find_lit(p, v0, f->string_attr, &a) ? 1 : 0;
            }
            p = after;
        }
        const char *ve = find_lit(p, end, f->value_close, &after);
        if (!ve) { ts_fail(ps->err, "tool call %.*s: a parameter value without its end", (int)(name_end - name), name); goto fail; }
        const char *v0 = p, *v1 = ve;
        if (f->flags & F_TRIM_NL) {
            if (v0 < v1 && *v0 == '\n') v0++;
            if (v1 > v0 && v1[-1] == '\n') v1--;
        }
        const char *k0 = skip_ws(key, key_end), *k1 = key_end;
        while (k1 > k0 && is_ws(k1[-1])) k1--;
        if (put_param(ps, &b, name, (size_t)(name_end - name), k0, (size_t)(k1 - k0), v0, (size_t)(v1 - v0), hint)) goto fail;
        p = after;
    }
    if (json_buf_put(&b, "}", 1)) { oom(ps); goto fail; }
    if (add_call(ps, name, (size_t)(name_end - name), b.data, b.len)) goto fail;
    json_buf_free(&b);
    return p;
fail:
    json_buf_free(&b);
    return NULL;
}

/* ---- values in Python and Gemma notation, written as JSON ---- */

static void vskip(vreader *r) { r->p = skip_ws(r->p, r->end); }

/* A bare token (number, true, ...) up to a delimiter; JSON literals and numbers kept, Python's
 * True/False/None (which Jinja prints for booleans and none) as JSON; other words: an error in Python
 * notation, a string in Gemma's. */
static int put_bare(json_buf *b, const char *s, size_t n, bool python) {
    {
        if (n == 4 && !memcmp(s, "True", 4)) return json_buf_put(b, "true", 4);
        if (n == 5 && !memcmp(s, "False", 5)) return json_buf_put(b, "false", 5);
        if (n == 4 && !memcmp(s, "None", 4)) return json_buf_put(b, "null", 4);
    }
    json_value *v = NULL;
    ts_error e;
    if (n && json_parse(s, n, &v, &e) == 0 && v->type != JSON_STRING && v->type != JSON_ARRAY && v->type != JSON_OBJECT) {
        json_free(v);
        return json_buf_put(b, s, n);
    }
    if (v) json_free(v);
    if (python) return -2;   /* Python: an unknown bare word is an error */
    return json_buf_put_string(b, s, n);
}

/* A Python string literal ('...' or "...", with escapes) as a JSON string. */
static int py_string(vreader *r, json_buf *b) {
    char q = *r->p++;
    json_buf s = {0};
    int rc = 0;
    while (r->p < r->end && *r->p != q && rc == 0) {
        char c = *r->p++;
        if (c == '\\' && r->p < r->end) {
            char x = *r->p++;
            const char *rep = NULL;
            switch (x) {
            case 'n': rep = "\n"; break;
            case 't': rep = "\t"; break;
            case 'r': rep = "\r"; break;
            case '0': rep = ""; break;
            default: break;
            }
            rc = rep ? json_buf_put(&s, rep, strlen(rep)) : json_buf_put(&s, &x, 1);
        } else {
            rc = json_buf_put(&s, &c, 1);
        }
    }
    if (rc == 0 && r->p >= r->end) rc = -2;
    if (rc == 0) {
        r->p++;
        rc = json_buf_put_string(b, s.data ? s.data : "", s.len);
    }
    json_buf_free(&s);
    return rc;
}

static int py_value(vreader *r, json_buf *b) {
    vskip(r);
    if (r->p >= r->end || ++r->depth > 64) return -2;
    int rc = 0;
    char c = *r->p;
    if (c == '\'' || c == '"') {
        rc = py_string(r, b);
    } else if (c == '[' || c == '(' || c == '{') {
        bool obj = c == '{';
        char close = c == '[' ? ']' : c == '(' ? ')' : '}';
        r->p++;
        rc = json_buf_put(b, obj ? "{" : "[", 1);
        for (int i = 0; rc == 0; i++) {
            vskip(r);
            if (r->p < r->end && *r->p == close) { r->p++; break; }
            if (i) {
                if (r->p >= r->end || *r->p != ',') { rc = -2; break; }
                r->p++;
                vskip(r);
                if (r->p < r->end && *r->p == close) { r->p++; break; }
                rc = json_buf_put(b, ",", 1);
                if (rc) break;
            }
            if (obj) {
                vskip(r);
                if (r->p >= r->end || (*r->p != '\'' && *r->p != '"')) { rc = -2; break; }
                if ((rc = py_string(r, b))) break;
                vskip(r);
                if (r->p >= r->end || *r->p != ':') { rc = -2; break; }
                r->p++;
                if ((rc = json_buf_put(b, ":", 1))) break;
            }
            rc = py_value(r, b);
        }
        if (rc == 0) rc = json_buf_put(b, obj ? "}" : "]", 1);
    } else {
        const char *s = r->p;
        while (r->p < r->end && !is_ws(*r->p) && *r->p != ',' && *r->p != ')' && *r->p != ']' && *r->p != '}') r->p++;
        rc = put_bare(b, s, (size_t)(r->p - s), true);
    }
    r->depth--;
    return rc;
}

/* [name(k=v, ...), ...] (the brackets optional); returns the end (after call_close) or NULL. */
static const char *parse_py_calls(pstate *ps, const char *p) {
    vreader r = { p, ps->end, 0 };
    vskip(&r);
    bool list = r.p < r.end && *r.p == '[';
    if (list) r.p++;
    for (int i = 0;; i++) {
        vskip(&r);
        if (list && r.p < r.end && *r.p == ']') { r.p++; break; }
        if (i) {
            if (!list) break;
            if (r.p >= r.end || *r.p != ',') { ts_fail(ps->err, "tool call: expected ',' or ']' between calls"); return NULL; }
            r.p++;
            vskip(&r);
        }
        const char *name = r.p, *name_end = name_run(r.p, r.end);
        r.p = name_end;
        vskip(&r);
        if (name_end == name || r.p >= r.end || *r.p != '(') { ts_fail(ps->err, "tool call: expected NAME(...)"); return NULL; }
        r.p++;
        json_buf b = {0};
        int rc = json_buf_put(&b, "{", 1);
        for (int k = 0; rc == 0; k++) {
            vskip(&r);
            if (r.p < r.end && *r.p == ')') { r.p++; break; }
            if (k) {
                if (r.p >= r.end || *r.p != ',') { rc = -2; break; }
                r.p++;
                vskip(&r);
                if (r.p < r.end && *r.p == ')') { r.p++; break; }
                if ((rc = json_buf_put(&b, ",", 1))) break;
            }
            const char *key = r.p, *key_end = name_run(r.p, r.end);
            r.p = key_end;
            vskip(&r);
            if (key_end == key || r.p >= r.end || *r.p != '=') { rc = -2; break; }
            r.p++;
            if ((rc = json_buf_put_string(&b, key, (size_t)(key_end - key))) || (rc = json_buf_put(&b, ":", 1))) break;
            rc = py_value(&r, &b);
        }
        if (rc == 0) rc = json_buf_put(&b, "}", 1);
        if (rc) {
            json_buf_free(&b);
            if (rc == -2) ts_fail(ps->err, "tool call %.*s: the arguments do not parse", (int)(name_end - name > 64 ? 64 : name_end - name), name);
            else oom(ps);
            return NULL;
        }
        rc = add_call(ps, name, (size_t)(name_end - name), b.data, b.len);
        json_buf_free(&b);
        if (rc) return NULL;
        if (!list) break;
    }
    const char *after, *q = skip_ws(r.p, ps->end);
    return starts(q, ps->end, ps->f->call_close, &after) ? after : r.p;
}

#define GQ "<|\"|>"

static int gemma_value(vreader *r, json_buf *b) {
    vskip(r);
    if (r->p >= r->end || ++r->depth > 64) return -2;
    const char *after;
    int rc;
    if (starts(r->p, r->end, GQ, &after)) {
        const char *e = find_lit(after, r->end, GQ, &r->p);
        if (!e) return -2;
        rc = json_buf_put_string(b, after, (size_t)(e - after));
    } else if (*r->p == '{' || *r->p == '[') {
        bool obj = *r->p == '{';
        r->p++;
        rc = json_buf_put(b, obj ? "{" : "[", 1);
        for (int i = 0; rc == 0; i++) {
            vskip(r);
            if (r->p < r->end && *r->p == (obj ? '}' : ']')) { r->p++; break; }
            if (i) {
                if (r->p >= r->end || *r->p != ',') { rc = -2; break; }
                r->p++;
                if ((rc = json_buf_put(b, ",", 1))) break;
                vskip(r);
            }
            if (obj) {
                const char *k0, *k1;
                if (starts(r->p, r->end, GQ, &after)) {
                    k0 = after;
                    k1 = find_lit(after, r->end, GQ, &r->p);
                    if (!k1) { rc = -2; break; }
                } else {
                    k0 = r->p;
                    while (r->p < r->end && *r->p != ':' && *r->p != '}' && *r->p != ',') r->p++;
                    k1 = r->p;
                    while (k1 > k0 && is_ws(k1[-1])) k1--;
                }
                vskip(r);
                if (k1 == k0 || r->p >= r->end || *r->p != ':') { rc = -2; break; }
                r->p++;
                if ((rc = json_buf_put_string(b, k0, (size_t)(k1 - k0))) || (rc = json_buf_put(b, ":", 1))) break;
            }
            rc = gemma_value(r, b);
        }
        if (rc == 0) rc = json_buf_put(b, obj ? "}" : "]", 1);
    } else {
        const char *s = r->p;
        while (r->p < r->end && *r->p != ',' && *r->p != '}' && *r->p != ']' && !starts(r->p, r->end, GQ, &after)) r->p++;
        const char *e = r->p;
        while (e > s && is_ws(e[-1])) e--;
        rc = e > s ? put_bare(b, s, (size_t)(e - s), false) : -2;
    }
    r->depth--;
    return rc;
}

static const char *parse_gemma_call(pstate *ps, const char *p) {
    const char *after, *end = ps->end;
    p = skip_ws(p, end);
    if (starts(p, end, ps->f->name_open, &after)) p = after;
    const char *name = p, *name_end = name_run(p, end);
    if (name_end == name) { ts_fail(ps->err, "tool call: no function name"); return NULL; }
    vreader r = { skip_ws(name_end, end), end, 0 };
    if (r.p >= end || *r.p != '{') { ts_fail(ps->err, "tool call %.*s: no '{' after the name", (int)(name_end - name > 64 ? 64 : name_end - name), name); return NULL; }
    json_buf b = {0};
    int rc = gemma_value(&r, &b);
    if (rc == 0) rc = add_call(ps, name, (size_t)(name_end - name), b.data, b.len);
    else if (rc == -2) ts_fail(ps->err, "tool call %.*s: the arguments do not parse", (int)(name_end - name > 64 ? 64 : name_end - name), name);
    else oom(ps);
    json_buf_free(&b);
    if (rc) return NULL;
    const char *q = skip_ws(r.p, end);
    return starts(q, end, ps->f->call_close, &after) ? after : r.p;
}

/* ---- SYN_HARMONY ---- */

static int parse_harmony(pstate *ps) {
    static const char *const stops[] = { "<|message|>", "<|end|>", "<|call|>", "<|return|>" };
    const char *p = ps->text, *end = ps->end, *after;
    const char *to = ps->f->call_open;
    for (;;) {
        const char *t = find_lit(p, end, to, &after);
        if (!t) return put_content(ps, p, end, false);
        /* inside a header: the last marker before it is not <|message|> */
        const char *h = p;
        bool in_body = false;
        for (int i = 0; i < 4; i++) {
            const char *r = rfind_exact(p, t, stops[i]);
            if (r && r + strlen(stops[i]) > h) h = r + strlen(stops[i]), in_body = i == 0;
        }
        if (in_body) {
            if (put_content(ps, p, after, false)) return -1;
            p = after;
            continue;
        }
        const char *s = rfind_exact(h, t, "<|start|>");
        if (s) h = s;
        const char *name = after, *name_end = name_run(after, end);
        if (name_end == name) return ts_fail(ps->err, "tool call: no function name after %s", to);
        const char *m = find_lit(name_end, end, "<|message|>", &after);
        if (!m) return ts_fail(ps->err, "tool call %.*s: no <|message|>", (int)(name_end - name > 64 ? 64 : name_end - name), name);
        const char *a = skip_ws(after, end), *e = json_end(a, end);
        if (!e) return ts_fail(ps->err, "tool call %.*s: the arguments are not JSON", (int)(name_end - name > 64 ? 64 : name_end - name), name);
        if (put_content(ps, p, h, true) || add_call(ps, name, (size_t)(name_end - name), a, (size_t)(e - a))) return -1;
        const char *q = skip_ws(e, end);
        if (starts(q, end, "<|call|>", &after) || starts(q, end, "<|end|>", &after)) q = after;
        p = skip_ws(q, end);
    }
}

/* ---- the driver ---- */

static const char *parse_one(pstate *ps, const char *p) {
    switch (ps->f->syntax) {
    case SYN_JSON: return parse_json_call(ps, p);
    case SYN_NAMED: return parse_named_call(ps, p);
    case SYN_XML: return parse_xml_call(ps, p);
    case SYN_PYCALL: return parse_py_calls(ps, p);
    case SYN_GEMMA: return parse_gemma_call(ps, p);
    case SYN_HARMONY: break;
    }
    ts_fail(ps->err, "tool calls: unknown syntax");
    return NULL;
}

/* Llama's bare form: JSON objects (separated by ';' or whitespace) at the start; NULL when the start
 * is not such a call (then it is content, not an error). */
static const char *parse_bare(pstate *ps) {
    const char *p = skip_ws(ps->text, ps->end);
    if (p >= ps->end || *p != '{') return NULL;
    ts_error quiet;
    ts_error *saved = ps->err;
    ps->err = &quiet;
    const char *q = NULL;
    while (p < ps->end && *p == '{') {
        const char *r = parse_json_call(ps, p);
        if (!r) break;
        q = r;
        p = skip_ws(r, ps->end);
        if (p < ps->end && *p == ';') p = skip_ws(p + 1, ps->end);
    }
    ps->err = saved;
    if (!q) {
        for (int i = 0; i < ps->n; i++) { free(ps->calls[i].name); free(ps->calls[i].arguments); }
        ps->n = 0;
    }
    return q;
}

static int parse_all(pstate *ps) {
    const tool_format *f = ps->f;
    if (f->syntax == SYN_HARMONY) return parse_harmony(ps);
    const char *p = ps->text, *end = ps->end, *after;
    if ((f->flags & F_OPENED) && skip_ws(p, end) < end) {
        p = parse_one(ps, p);
        if (!p) return -1;
        p = skip_ws(p, end);
    } else if (f->flags & F_BARE) {
        const char *q = parse_bare(ps);
        if (q) p = skip_ws(q, end);
    }
    while (p < end) {
        const char *s_after = NULL, *c_after = NULL;
        const char *s = find_lit(p, end, f->section_open, &s_after);
        const char *c = find_lit(p, s ? s : end, f->call_open, &c_after);
        if (!s && !c) return put_content(ps, p, end, false);
        const char *m = c ? c : s;
        if (put_content(ps, p, m, true)) return -1;
        if (c) {
            p = parse_one(ps, c_after);
            if (!p) return -1;
        } else {
            int before = ps->n;
            p = s_after;
            for (;;) {
                p = skip_ws(p, end);
                if (starts(p, end, f->call_open, &after)) {
                    p = parse_one(ps, after);
                    if (!p) return -1;
                } else if (starts(p, end, f->section_close, &after)) {
                    p = after;
                    break;
                } else {
                    break;
                }
            }
            if (ps->n == before) return ts_fail(ps->err, "tool calls: %s holds no call", f->section_open);
        }
        p = skip_ws(p, end);
    }
    return 0;
}

static uint64_t splitmix(uint64_t *s) {
    uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

static char *make_id(uint64_t seed, int index, bool nine) {
    static const char digits[] = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ";
    char buf[40];
    size_t n = 0;
    if (!nine) { memcpy(buf, "call_", 5); n = 5; }
    uint64_t s = seed ^ ((uint64_t)(index + 1) * 0xD1B54A32D192ED03ull);
    int want = nine ? 9 : 24;
    uint64_t r = 0;
    for (int i = 0; i < want; i++) {
        if (i % 10 == 0) r = splitmix(&s);
        buf[n++] = digits[r % 62];
        r /= 62;
    }
    return str_copy(buf, n);
}

int tool_calls_parse(const tool_format *f, const char *text, size_t len, const json_value *tools,
                     uint64_t id_seed, tool_calls *out, ts_error *err) {
    memset(out, 0, sizeof *out);
    if (!f) return ts_fail(err, "tool calls: no format");
    if (!text) text = "", len = 0;
    pstate ps = { .f = f, .text = text, .end = text + len, .tools = tools, .err = err };
    int rc = parse_all(&ps);
    if (rc == 0 && ps.n == 0 && !(f->flags & F_OPENED)) {   /* no call: the text as it was */
        ps.content.len = 0;
        if (len && json_buf_put(&ps.content, text, len)) rc = oom(&ps);
    }
    if (rc == 0 && !ps.content.data) {
        ps.content.data = str_copy("", 0);
        if (!ps.content.data) rc = oom(&ps);
    }
    for (int i = 0; rc == 0 && i < ps.n; i++) {
        ps.calls[i].id = make_id(id_seed, i, f->flags & F_ID9);
        if (!ps.calls[i].id) rc = oom(&ps);
    }
    if (rc) {
        for (int i = 0; i < ps.n; i++) { free(ps.calls[i].id); free(ps.calls[i].name); free(ps.calls[i].arguments); }
        free(ps.calls);
        json_buf_free(&ps.content);
        return -1;
    }
    out->calls = ps.calls;
    out->n = ps.n;
    out->content = ps.content.data;
    out->content_len = ps.content.len;
    return 0;
}

void tool_calls_keep(tool_calls *c, int n) {
    for (int i = n; i < c->n; i++) { free(c->calls[i].id); free(c->calls[i].name); free(c->calls[i].arguments); }
    if (n < c->n) c->n = n;
}

void tool_calls_free(tool_calls *c) {
    if (!c) return;
    tool_calls_keep(c, 0);
    free(c->calls);
    free(c->content);
    memset(c, 0, sizeof *c);
}

size_t tool_calls_safe_prefix(const tool_format *f, const char *text, size_t len) {
    if (!f || !text) return 0;
    if (f->flags & F_OPENED) return 0;
    const char *end = text + len, *after;
    if (f->flags & F_BARE) {
        const char *q = skip_ws(text, end);
        if (q >= end || *q == '{') return 0;
    }
    const char *marks[4] = { f->section_open, f->call_open, NULL, NULL };
    if (f->syntax == SYN_HARMONY) marks[2] = "<|start|>", marks[3] = "<|channel|>";
    const char *stop = end;
    for (const char *p = text; p < end && stop == end; p++) {
        for (int i = 0; i < 4; i++) {
            if (!marks[i] || *p != marks[i][0]) continue;
            if (match_lit(p, end, marks[i], &after) != NO_MATCH) { stop = p; break; }
        }
    }
    /* whitespace before a call is dropped from the content: hold back a trailing run */
    while (stop > text && is_ws(stop[-1])) stop--;
    return (size_t)(stop - text);
}

/* ---- detection ---- */

#define PROBE_NAME "tessera_probe_fn"
#define PROBE_VALUE "tessera probe value"

size_t tool_format_assistant_start(const char *prompt, const char *full) {
    size_t i = 0;
    while (prompt[i] && prompt[i] == full[i]) i++;
    for (size_t j = i; j > 0 && i - j < 48; j--) {
        char c = full[j - 1];
        if (c == '>' || c == ']' || c == '\n') break;
        if (c == '<' || c == '[') { i = j - 1; break; }
    }
    return i;
}

const tool_format *tool_format_detect(const char *template_text, const char *bos, const char *eos, ts_error *err) {
    static const char tools_json[] =
        "[{\"type\": \"function\", \"function\": {\"name\": \"" PROBE_NAME "\", \"description\": \"A probe.\", "
        "\"parameters\": {\"type\": \"object\", \"properties\": {\"where\": {\"type\": \"string\"}}, \"required\": [\"where\"]}}}]";
    static const char user_json[] = "[{\"role\": \"user\", \"content\": \"Hello.\"}]";
    static const char *const variants[] = {
        "\"content\": \"\", \"tool_calls\": [{\"id\": \"call12345\", \"type\": \"function\", \"function\": {\"name\": \"" PROBE_NAME "\", \"arguments\": {\"where\": \"" PROBE_VALUE "\"}}}]",
        "\"content\": \"\", \"tool_calls\": [{\"id\": \"call12345\", \"type\": \"function\", \"function\": {\"name\": \"" PROBE_NAME "\", \"arguments\": \"{\\\"where\\\": \\\"" PROBE_VALUE "\\\"}\"}}]",
        "\"content\": null, \"tool_calls\": [{\"id\": \"call12345\", \"type\": \"function\", \"function\": {\"name\": \"" PROBE_NAME "\", \"arguments\": {\"where\": \"" PROBE_VALUE "\"}}}]",
        "\"content\": null, \"tool_calls\": [{\"id\": \"call12345\", \"type\": \"function\", \"function\": {\"name\": \"" PROBE_NAME "\", \"arguments\": \"{\\\"where\\\": \\\"" PROBE_VALUE "\\\"}\"}}]",
    };
    json_value *tools = NULL, *user = NULL;
    ts_error e;
    const tool_format *found = NULL;
    char *prompt = NULL;
    if (json_parse(tools_json, sizeof tools_json - 1, &tools, &e) || json_parse(user_json, sizeof user_json - 1, &user, &e)) {
        ts_fail(err, "tool format probe: %s", e.msg);
        goto done;
    }
    struct tm day;
    chat_parse_date("2026-11-30", &day);
    chat_vars pv = { .messages = user, .add_generation_prompt = true, .bos_token = bos, .eos_token = eos, .tools = tools };
    const json_value *with = tools;
    if (chat_render(template_text, &pv, &day, NULL, &prompt, &e) != 0) {   /* some raise on tools (then: without) */
        pv.tools = with = NULL;
        if (chat_render(template_text, &pv, &day, NULL, &prompt, err) != 0) goto done;
    }
    for (size_t v = 0; v < sizeof variants / sizeof variants[0] && !found; v++) {
        char conv[1024];
        snprintf(conv, sizeof conv, "[{\"role\": \"user\", \"content\": \"Hello.\"}, {\"role\": \"assistant\", %s}]", variants[v]);
        json_value *msgs = NULL;
        if (json_parse(conv, strlen(conv), &msgs, &e)) continue;
        chat_vars cv = { .messages = msgs, .add_generation_prompt = false, .bos_token = bos, .eos_token = eos, .tools = with };
        char *full = NULL;
        if (chat_render(template_text, &cv, &day, NULL, &full, &e) == 0 && strstr(full, PROBE_NAME)) {
            size_t at = tool_format_assistant_start(prompt, full);
            const char *part = full + at;
            size_t best = (size_t)-1;   /* of the rows that get the probe back, the one leaving the least content */
            for (int i = 0; i < N_FORMATS; i++) {
                tool_calls tc;
                if (tool_calls_parse(&formats[i], part, strlen(part), tools, 0, &tc, &e) != 0) continue;
                if (tc.n >= 1 && !strcmp(tc.calls[0].name, PROBE_NAME) && strstr(tc.calls[0].arguments, PROBE_VALUE) &&
                    strlen(tc.content) < best)
                    found = &formats[i], best = strlen(tc.content);
                tool_calls_free(&tc);
            }
        }
        free(full);
        json_free(msgs);
    }
    for (int i = 0; i < N_FORMATS && !found && prompt; i++)
        if (formats[i].template_marker && strstr(template_text, formats[i].template_marker)) found = &formats[i];
done:
    free(prompt);
    json_free(tools);
    json_free(user);
    return found;
}

/* text as a GBNF literal */
static int put_literal(json_buf *b, const char *text, size_t n) {
    int bad = json_buf_put(b, "\"", 1);
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)text[i];
        if (c == '"' || c == '\\') bad |= json_buf_put(b, "\\", 1) || json_buf_put(b, (const char *)&text[i], 1);
        else if (c < 0x20) bad |= json_buf_printf(b, "\\x%02x", c);
        else bad |= json_buf_put(b, (const char *)&text[i], 1);
    }
    return bad | json_buf_put(b, "\"", 1);
}

/* The first of a '|'-separated list of keys. */
static size_t first_key(const char *keys) { return strcspn(keys, "|"); }

int tool_format_call_gbnf(const tool_format *f, const char *name, const char *args_rule, json_buf *b) {
    if (!f->forced_open || f->syntax != SYN_JSON) return -1;
    json_buf obj = {0};
    int bad = json_buf_put(&obj, f->forced_open, strlen(f->forced_open)) || json_buf_put(&obj, "{\"", 2) ||
              json_buf_put(&obj, f->name_keys, first_key(f->name_keys)) || json_buf_put(&obj, "\": ", 3) ||
              json_buf_put_string(&obj, name, strlen(name)) || json_buf_put(&obj, ", \"", 3) ||
              json_buf_put(&obj, f->args_keys, first_key(f->args_keys)) || json_buf_put(&obj, "\": ", 3);
    bad |= !bad && (put_literal(b, obj.data, obj.len) || json_buf_printf(b, " %s ", args_rule) || put_literal(b, "}", 1));
    if (!bad && *f->forced_close) bad |= json_buf_put(b, " ", 1) || put_literal(b, f->forced_close, strlen(f->forced_close));
    json_buf_free(&obj);
    return bad ? -2 : 0;
}
