/* Chat templates through the interpreter: every line of the fixtures' Jinja2 renderings
 * (chat-templates/all/renderings-all.jsonl and chat-templates/renderings.jsonl) rendered byte for
 * byte with ts_chat_render_json, the function `run --render` calls; Jinja semantics the templates
 * lean on, each case's expected text rendered by Jinja2 3.1 as transformers configures it;
 * undefined values Jinja tolerates and those it rejects; raise_exception; and the limits. */
#include "check.h"
#include "template/chat_template.h"
#include "template/jinja.h"
#include "io/json.h"
#include "io/file.h"
#include <string.h>
#include <time.h>

static struct tm fixture_day(void) {
    struct tm t = {0};
    chat_parse_date("2026-11-30", &t);   /* the renderings fixed strftime_now to this day */
    return t;
}

/* ---- the fixtures' renderings ---- */

/* Where a template named in a renderings file lives (relative to the fixtures), and whether it is
 * the "chat_template" of a tokenizer_config.json. */
typedef struct template_ref { const char *name, *path; bool in_config; } template_ref;

static const template_ref older[] = {
    { "qwen3", "chat-templates/qwen3.jinja", false },
    { "gemma-2", "chat-templates/gemma-2.jinja", false },
    { "gemma-4", "chat-templates/gemma-4.jinja", false },
    { "llama-3.2", "chat-templates/llama-3.2.jinja", false },
    { "smollm3", "chat-templates/smollm3.jinja", false },
    { "gemma3", "tokenizers/hf/gemma3/tokenizer_config.json", true },
    { "qwen3-tokenizer-config", "tokenizers/hf/qwen3/tokenizer_config.json", true },
    { "llama-2", "qa-llama/hf/tokenizer_config.json", true },
};

static char *load_template(const char *rel, bool in_config) {
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", fixtures_dir(), rel);
    char *data = NULL;
    size_t len = 0;
    ts_error err = {{0}};
    if (file_read(path, &data, &len, &err) != 0) { printf("# %s\n", err.msg); return NULL; }
    if (!in_config) return data;
    json_value *cfg = NULL;
    char *text = NULL;
    if (json_parse(data, len, &cfg, &err) == 0) {
        const char *s = json_get_str(cfg, "chat_template");
        if (s) text = strdup(s);
        json_free(cfg);
    }
    free(data);
    return text;
}

/* Renders every line of a renderings file; all_dir: templates are all_dir/NAME.jinja, else older[]. */
static void check_renderings(const char *file, const char *all_dir) {
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", fixtures_dir(), file);
    char *data = NULL;
    size_t len = 0;
    ts_error err = {{0}};
    CHECK(file_read(path, &data, &len, &err) == 0, "read %s %s", file, err.msg);
    if (!data) return;
    ts_chat_options opt = { .date = "2026-11-30" };
    char last_name[256] = "";
    char *tmpl = NULL;
    int lines = 0, exact = 0, t_lines = 0, t_exact = 0;
    for (char *line = data; line && *line;) {
        char *nl = strchr(line, '\n');
        size_t line_len = nl ? (size_t)(nl - line) : strlen(line);
        json_value *v = NULL;
        if (json_parse(line, line_len, &v, &err) != 0) { CHECK(0, "%s line %d parses: %s", file, lines + 1, err.msg); break; }
        const char *name = json_get_str(v, "template"), *want = json_get_str(v, "text");
        if (!name || !want) { CHECK(0, "%s line %d has template and text", file, lines + 1); json_free(v); break; }
        if (strcmp(name, last_name) != 0) {
            if (last_name[0]) CHECK(t_exact == t_lines, "%s: %s %d/%d byte for byte", file, last_name, t_exact, t_lines);
            t_lines = t_exact = 0;
            snprintf(last_name, sizeof last_name, "%s", name);
            free(tmpl);
            tmpl = NULL;
            if (all_dir) {
                char rel[512];
                snprintf(rel, sizeof rel, "%s/%s.jinja", all_dir, name);
                tmpl = load_template(rel, false);
            } else
                for (size_t i = 0; i < sizeof older / sizeof older[0]; i++)
                    if (!strcmp(older[i].name, name)) tmpl = load_template(older[i].path, older[i].in_config);
        }
        /* the line itself is the conversation: messages, add_generation_prompt, bos/eos, tools */
        char *out = NULL;
        opt.template_text = tmpl ? tmpl : "";
        int rc = ts_chat_render_json(NULL, line, line_len, &opt, &out, &err);
        bool same = rc == 0 && strcmp(out, want) == 0;
        if (!same) printf("# %s line %d (%s / %s): %s\n", file, lines + 1, name, json_get_str(v, "conversation"),
                          rc == 0 ? "text differs" : err.msg);
        lines++, t_lines++;
        exact += same, t_exact += same;
        free(out);
        json_free(v);
        line = nl ? nl + 1 : NULL;
    }
    if (last_name[0]) CHECK(t_exact == t_lines, "%s: %s %d/%d byte for byte", file, last_name, t_exact, t_lines);
    CHECK(lines > 0 && exact == lines, "%s: %d/%d renderings byte for byte", file, exact, lines);
    free(tmpl);
    free(data);
}

/* ---- more conversations through the fixture templates (texts rendered by Jinja2 3.1) ---- */

typedef struct extra_case {
    const char *name, *bos, *eos;
    bool add_generation_prompt;
    int n;
    ts_chat_message msgs[4];
    const char *text;
} extra_case;

static const extra_case extras[] = {
    { "qwen3", "", "<|im_end|>", false, 4, {{ "user", "Hi" }, { "assistant", "<think>\nplan\n</think>\n\nHello" }, { "user", "More" }, { "assistant", "<think>\nr2\n</think>\n\nDone" }},
      "<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\nHello<|im_end|>\n<|im_start|>user\nMore<|im_end|>\n<|im_start|>assistant\n<think>\nr2\n</think>\n\nDone<|im_end|>\n" },
    { "qwen3", "", "<|im_end|>", true, 4, {{ "system", "S" }, { "user", "<tool_response>x</tool_response>" }, { "assistant", "\n\nplain" }, { "system", "late" }},
      "<|im_start|>system\nS<|im_end|>\n<|im_start|>user\n<tool_response>x</tool_response><|im_end|>\n<|im_start|>assistant\n\n\nplain<|im_end|>\n<|im_start|>system\nlate<|im_end|>\n<|im_start|>assistant\n" },
    { "gemma-4", "<bos>", "<eos>", true, 3, {{ "user", "  q  " }, { "assistant", "a <|channel>thought hidden<channel|> b " }, { "assistant", "c" }},
      "<bos><|turn>user\nq<turn|>\n<|turn>model\na  b<turn|>\nc<turn|>\n<|turn>model\n<|channel>thought\n<channel|>" },
    { "smollm3", "", "<|im_end|>", true, 3, {{ "system", "Be terse. /no_think  " }, { "user", "x" }, { "assistant", "\ny" }},
      "<|im_start|>system\n## Metadata\n\nKnowledge Cutoff Date: June 2025\nReasoning Mode: /no_think\n\n## Custom Instructions\n\nBe terse.\n\n<|im_end|>\n<|im_start|>user\nx<|im_end|>\n<|im_start|>assistant\n<think>\n\n</think>\ny<|im_end|>\n<|im_start|>assistant\n<think>\n\n</think>\n" },
    { "gemma3", "<bos>", "<eos>", true, 4, {{ "system", " sys " }, { "user", "\u3000q\u00a0" }, { "assistant", "a\u2028" }, { "user", "z" }},
      "<bos><start_of_turn>user\n sys \n\nq<end_of_turn>\n<start_of_turn>model\na<end_of_turn>\n<start_of_turn>user\nz<end_of_turn>\n<start_of_turn>model\n" },
    { "llama-2", "<s>", "</s>", true, 4, {{ "system", " sys\n" }, { "user", " u1 " }, { "assistant", " a1 " }, { "user", "u2" }},
      "<s>[INST] <<SYS>>\n sys\n\n<</SYS>>\n\n u1 [/INST] a1 </s><s>[INST] u2 [/INST]" },
    { "llama-3.2", "<|begin_of_text|>", "<|eot_id|>", false, 4, {{ "system", "\tS\n" }, { "user", " u " }, { "assistant", "a" }, { "system", " later " }},
      "<|begin_of_text|><|start_header_id|>system<|end_header_id|>\n\nCutting Knowledge Date: December 2023\nToday Date: 30 Nov 2026\n\nS<|eot_id|><|start_header_id|>user<|end_header_id|>\n\nu<|eot_id|><|start_header_id|>assistant<|end_header_id|>\n\na<|eot_id|><|start_header_id|>system<|end_header_id|>\n\nlater<|eot_id|>" },
};

static void check_extras(void) {
    struct tm day = fixture_day();
    for (size_t k = 0; k < sizeof extras / sizeof extras[0]; k++) {
        const extra_case *e = &extras[k];
        char *tmpl = NULL;
        for (size_t i = 0; i < sizeof older / sizeof older[0]; i++)
            if (!strcmp(older[i].name, e->name)) tmpl = load_template(older[i].path, older[i].in_config);
        json_value *msgs = NULL;
        ts_error err = {{0}};
        char *out = NULL;
        int rc = chat_messages_json(e->msgs, e->n, &msgs, &err);
        if (rc == 0) {
            chat_vars v = { .messages = msgs, .add_generation_prompt = e->add_generation_prompt,
                            .bos_token = e->bos, .eos_token = e->eos };
            rc = chat_render(tmpl, &v, &day, NULL, &out, &err);
        }
        CHECK(rc == 0 && strcmp(out, e->text) == 0, "%s extra case %zu renders as Jinja2 does (%s)", e->name, k,
              rc == 0 ? "rendered" : err.msg);
        free(out);
        json_free(msgs);
        free(tmpl);
    }
}

/* ---- Jinja semantics: template, variables (JSON), Jinja2's rendering ---- */

typedef struct jinja_case { const char *tmpl, *vars, *text; } jinja_case;

static const jinja_case cases[] = {
    /* call blocks: the macro gets caller, a macro of the block's body (with parameters) */
    { "{% macro box(t) %}<{{ t }}:{{ caller() }}>{% endmacro %}{% call box('a') %}inner {{ s|trim }}{% endcall %}|"
      "{% macro each(xs) %}{% for x in xs %}{{ caller(x, loop.index) }};{% endfor %}{% endmacro %}"
      "{% call(v, i) each(l) %}{{ i }}={{ v }}{% endcall %}",
      "{\"s\": \" S \", \"l\": [5, 6]}",
      "<a:inner S>|1=5;2=6;" },
    /* concatenation extending a string in place must leave the shorter values as they were */
    { "{% set a = 'x' ~ 'y' %}{% set b = a ~ '1' %}{% set c = a ~ '2' %}{{ b }}{{ c }}{{ a }}|{% set f = 'up' ~ 'per' %}"
      "{% set g = f ~ 'x' %}{{ ['a']|map(f)|list }}{{ g }}|{% set ns = namespace(s='') %}{% for i in range(5) %}"
      "{% set ns.s = ns.s ~ i %}{% set t = ns.s ~ '!' %}{{ t }}{% endfor %}{{ ns.s }}|{% macro m() %}ab{% endmacro %}"
      "{% set q = m() %}{% set q2 = q ~ 'c' %}{{ q }}{{ q2 }}{{ m() ~ m() }}",
      "{}",
      "xy1xy2xy|['A']upperx|0!01!012!0123!01234!01234|ababcabab" },
    { "{{ 1.0 }} {{ 1e20 }} {{ 1.5e-5 }} {{ 3/2 }} {{ 7//2 }} {{ -7//2 }} {{ -7 % 3 }} {{ 2**10 }} {{ 0.1+0.2 }} {{ 10/4 }}",
      "{}",
      "1.0 1e+20 1.5e-05 1.5 3 -4 2 1024 0.30000000000000004 2.5" },
    { "{{ [1, 'a', none, true, {'k': \"v'\"}] }} {{ (1,) }} {{ ('a', 2.5) }}",
      "{}",
      "[1, 'a', None, True, {'k': \"v'\"}] (1,) ('a', 2.5)" },
    { "{{ x | tojson }}|{{ x | tojson(indent=2) }}|{{ x | tojson(separators=(',', ':')) }}|{{ '\303\251\"\\n' | tojson(ensure_ascii=true) }}",
      "{\"x\": {\"a\": [1, 2.0, null, true], \"b\": \"\\u00fc\", \"c\": {}}}",
      "{\"a\": [1, 2.0, null, true], \"b\": \"\303\274\", \"c\": {}}|{\n  \"a\": [\n    1,\n    2.0,\n    null,\n    true\n  ],\n  \"b\": \"\303\274\",\n  \"c\": {}\n}|{\"a\":[1,2.0,null,true],\"b\":\"\303\274\",\"c\":{}}|\"\\u00e9\\\"\\n\"" },
    { "{% for m in ms %}{{ loop.index }}{{ loop.index0 }}{{ loop.first }}{{ loop.last }}{{ loop.length }}{{ loop.revindex }}{{ loop.previtem|default('-') }}{{ loop.nextitem|default('-') }},{% endfor %}",
      "{\"ms\": [\"a\", \"b\", \"c\"]}",
      "10TrueFalse33-b,21FalseFalse32ac,32FalseTrue31b-," },
    { "{% for m in ms if m != 'b' %}{{ loop.index }}/{{ loop.length }}{{ m }}{% if loop.last %}!{% endif %}{% else %}none{% endfor %}{% for x in [] %}{% else %}empty{% endfor %}",
      "{\"ms\": [\"a\", \"b\", \"c\"]}",
      "1/2a2/2c!empty" },
    { "{% for i in range(10) %}{% if i == 2 %}{% continue %}{% endif %}{% if i == 5 %}{% break %}{% endif %}{{ i }}{% endfor %}",
      "{}",
      "0134" },
    { "{% set ns = namespace(n=0, s='') %}{% for i in range(3) %}{% set ns.n = ns.n + i %}{% set t = i %}{% endfor %}{{ ns.n }}|{{ t is defined }}",
      "{}",
      "3|False" },
    { "{% set x = 1 %}{% if true %}{% set x = 2 %}{% endif %}{{ x }}{% for i in [1] %}{% set x = 3 %}{{ x }}{% endfor %}{{ x }}",
      "{}",
      "232" },
    { "{% macro m(a, b='B', c=none) %}[{{ a }}{{ b }}{{ c }}{{ varargs|length }}{{ kwargs|length }}]{% endmacro %}{{ m(1) }}{{ m(1, 2, 3, 4) }}{{ m(1, c='C', z=1) }}",
      "{}",
      "[1BNone00][12310][1BC01]" },
    { "{{ '  a b  '.strip() }}|{{ 'xxaxx'.strip('x') }}|{{ 'a,b,,c'.split(',') }}|{{ ' a  b '.split() }}|{{ 'a b c'.split(' ', 1) }}|{{ 'a.b.c'.rsplit('.', 1) }}|{{ 'abc'.startswith(('x', 'a')) }}|{{ 'abc'.endswith('bc') }}|{{ 'aXbX'.replace('X', '-') }}|{{ 'Hello'.upper() }}{{ 'Hello'.lower() }}|{{ 'hello world'.title() }}|{{ 'x{}y{}'.format(1, 'z') }}",
      "{}",
      "a b|a|['a', 'b', '', 'c']|['a', 'b']|['a', 'b c']|['a.b', 'c']|True|True|a-b-|HELLOhello|Hello World|x1yz" },
    { "{{ s[0] }}{{ s[-1] }}{{ s[1:3] }}{{ s[::-1] }}{{ s[::2] }}|{{ l[-1] }}{{ l[:2] }}{{ l[5] is defined }}|{{ s|length }}",
      "{\"s\": \"h\\u00e9llo\\ud83e\\udd99\", \"l\": [1, 2, 3]}",
      "h\360\237\246\231\303\251l\360\237\246\231oll\303\251hhlo|3[1, 2]False|6" },
    { "{{ d.get('a') }}{{ d.get('z', 'def') }}{{ d.get('z') }}|{% for k, v in d.items() %}{{ k }}={{ v }};{% endfor %}|{% for k, v in d|dictsort %}{{ k }}{% endfor %}|{{ d|items|list }}|{{ 'a' in d }}{{ 'z' not in d }}",
      "{\"d\": {\"b\": 2, \"a\": 1, \"C\": 3}}",
      "1defNone|b=2;a=1;C=3;|abC|[('b', 2), ('a', 1), ('C', 3)]|TrueTrue" },
    { "{{ l|map(attribute='n')|join(',') }}|{{ l|selectattr('n', 'equalto', 2)|list }}|{{ l|rejectattr('t')|map(attribute='n')|list }}|{{ l|map(attribute='n')|select('odd')|list }}|{{ ['b','A','c']|sort }}|{{ ['b','a','b']|unique|list }}|{{ [3,1,2]|min }}{{ [3,1,2]|max }}|{{ l|sort(attribute='n', reverse=true)|map(attribute='n')|list }}",
      "{\"l\": [{\"n\": 1, \"t\": true}, {\"n\": 2}, {\"n\": 3, \"t\": false}]}",
      "1,2,3|[{'n': 2}]|[2, 3]|[1, 3]|['A', 'b', 'c']|['b', 'a']|13|[3, 2, 1]" },
    { "{{ x is string }}{{ x is mapping }}{{ l is iterable }}{{ l is sequence }}{{ n is none }}{{ u is defined }}{{ u is undefined }}{{ 3 is odd }}{{ 4 is divisibleby 2 }}{{ true is boolean }}{{ 1 is number }}{{ x is not none }}",
      "{\"x\": \"s\", \"l\": [1], \"n\": null}",
      "TrueFalseTrueTrueTrueFalseTrueTrueTrueTrueTrueTrue" },
    { "{{ 'abc' | upper }}{{ ' x ' | trim }}|{{ none | string }}|{{ '5' | int + 1 }}{{ 'x' | int }}{{ 3.7 | int }}|{{ [1,2] | first }}{{ [1,2] | last }}|{{ 'a-b' | replace('-', '+') }}|{{ u | default('d') }}{{ '' | default('e', true) }}|{{ 'ab' | list }}|{{ [1, 2] | reverse | list }}|{{ 1.5 | round }}|{{ [1, 2.5] | sum }}|{{ -3 | abs }}|{{ 'a\\nb' | indent(2) }}|{{ 'hello World' | capitalize }}|{{ '<&>' | e }}",
      "{}",
      "ABCx|None|603|12|a+b|de|['a', 'b']|[2, 1]|2.0|3.5|3|a\n  b|Hello world|&lt;&amp;&gt;" },
    { "{{ 'a' ~ 1 ~ none ~ u }}|{{ 'ab' * 3 }}|{{ [1] + [2] }}|{{ 1 if false }}|{{ 'y' if true else 'n' }}|{{ not 0 }}|{{ 0 or 'x' }}|{{ 'a' and 'b' }}|{{ 1 < 2 <= 2 }}|{{ 'b' > 'a' }}|{{ 1 == 1.0 }}{{ true == 1 }}|{{ [1,2] == [1,2] }}",
      "{}",
      "a1None|ababab|[1, 2]||y|True|x|b|True|True|TrueTrue|True" },
    { "{{ strftime_now('%d %b %Y') }}|{{ strftime_now('%Y-%m-%d') }}",
      "{}",
      "30 Nov 2026|2026-11-30" },
    { "  {% if true %}\n    x\n  {% endif %}\n{%- if true -%}\n  y  \n{%- endif %}\n{# c #}\nz\n{%+ if true %}w{% endif +%}\nv",
      "{}",
      "    x\nyz\nw\nv" },
    { "{% set b %}in {{ 1 + 1 }}{% endset %}[{{ b }}]{% set c | upper %}up{% endset %}{{ c }}",
      "{}",
      "[in 2]UP" },
    { "{{ {'a': 1, 'b': [1, {'c': none}]} }}|{{ 'it\\'s' }}|{{ ['it\\'s', 'q\"', '\\t'] }}|{{ 1e16 }}|{{ 123456789.123 }}|{{ -0.0 }}|{{ 1/3 }}",
      "{}",
      "{'a': 1, 'b': [1, {'c': None}]}|it's|[\"it's\", 'q\"', '\\t']|1e+16|123456789.123|-0.0|0.3333333333333333" },
    { "{% generation %}{% set g = 1 %}gen{{ g }}{% endgeneration %}[{{ g is defined }}]",
      "{}",
      "gen1[False]" },
    { "{{ s | length }}|{{ s | upper }}|{{ s | lower }}|{{ s | title }}|{{ s | capitalize }}",
      "{\"s\": \"Hello World \", \"u8\": \"\346\227\245\346\234\254\350\252\236\360\237\246\231\303\251\", \"l\": [1, 2, 3, 4], \"d\": {\"b\": 2, \"a\": 1, \"C\": [1, null]}, \"objs\": [{\"a\": 1, \"b\": 3}, {\"a\": 0, \"b\": 1}, {\"b\": 2}], \"x\": null, \"messages\": [{\"role\": \"system\", \"content\": \"S\"}, {\"role\": \"user\", \"content\": \"U\"}]}",
      "12|HELLO WORLD |hello world |Hello World |Hello world " },
    { "{{ s.split() }}|{{ s.split(' ') }}|{{ s.split(' ', 1) }}|{{ s.rsplit(' ', 1) }}|{{ s.splitlines() }}",
      "{\"s\": \"Hello World \", \"u8\": \"\346\227\245\346\234\254\350\252\236\360\237\246\231\303\251\", \"l\": [1, 2, 3, 4], \"d\": {\"b\": 2, \"a\": 1, \"C\": [1, null]}, \"objs\": [{\"a\": 1, \"b\": 3}, {\"a\": 0, \"b\": 1}, {\"b\": 2}], \"x\": null, \"messages\": [{\"role\": \"system\", \"content\": \"S\"}, {\"role\": \"user\", \"content\": \"U\"}]}",
      "['Hello', 'World']|['Hello', 'World', '']|['Hello', 'World ']|['Hello World', '']|['Hello World ']" },
    { "{{ s.strip() }}|{{ s.lstrip() }}|{{ s.rstrip() }}|{{ s.strip('H ') }}|{{ '  '.strip() }}|{{ ''.split() }}|{{ ''.split(',') }}",
      "{\"s\": \"Hello World \", \"u8\": \"\346\227\245\346\234\254\350\252\236\360\237\246\231\303\251\", \"l\": [1, 2, 3, 4], \"d\": {\"b\": 2, \"a\": 1, \"C\": [1, null]}, \"objs\": [{\"a\": 1, \"b\": 3}, {\"a\": 0, \"b\": 1}, {\"b\": 2}], \"x\": null, \"messages\": [{\"role\": \"system\", \"content\": \"S\"}, {\"role\": \"user\", \"content\": \"U\"}]}",
      "Hello World|Hello World |Hello World|ello World||[]|['']" },
    { "{{ s.startswith('He') }}|{{ s.endswith('d ') }}|{{ s.find('o') }}|{{ s.rfind('o') }}|{{ s.count('o') }}|{{ s.replace('o', '0', 1) }}|{{ s.replace('', '-') }}",
      "{\"s\": \"Hello World \", \"u8\": \"\346\227\245\346\234\254\350\252\236\360\237\246\231\303\251\", \"l\": [1, 2, 3, 4], \"d\": {\"b\": 2, \"a\": 1, \"C\": [1, null]}, \"objs\": [{\"a\": 1, \"b\": 3}, {\"a\": 0, \"b\": 1}, {\"b\": 2}], \"x\": null, \"messages\": [{\"role\": \"system\", \"content\": \"S\"}, {\"role\": \"user\", \"content\": \"U\"}]}",
      "True|True|4|7|2|Hell0 World |-H-e-l-l-o- -W-o-r-l-d- -" },
    { "{{ s[1:] }}|{{ s[:-1] }}|{{ s[::-1] }}|{{ s[100:] }}|{{ s[-100:2] }}|{{ s[::-2] }}|{{ s[5:1:-1] }}|{{ l[::-1] }}|{{ l[1:-1] }}",
      "{\"s\": \"Hello World \", \"u8\": \"\346\227\245\346\234\254\350\252\236\360\237\246\231\303\251\", \"l\": [1, 2, 3, 4], \"d\": {\"b\": 2, \"a\": 1, \"C\": [1, null]}, \"objs\": [{\"a\": 1, \"b\": 3}, {\"a\": 0, \"b\": 1}, {\"b\": 2}], \"x\": null, \"messages\": [{\"role\": \"system\", \"content\": \"S\"}, {\"role\": \"user\", \"content\": \"U\"}]}",
      "ello World |Hello World| dlroW olleH||He| lo le| oll|[4, 3, 2, 1]|[2, 3]" },
    { "{{ u8 | length }}|{{ u8[1] }}|{{ u8[-1] }}|{{ u8 | upper }}|{{ u8 | reverse }}|{{ u8.find('\346\234\254') }}|{{ u8 | tojson }}|{{ u8 | tojson(ensure_ascii=true) }}",
      "{\"s\": \"Hello World \", \"u8\": \"\346\227\245\346\234\254\350\252\236\360\237\246\231\303\251\", \"l\": [1, 2, 3, 4], \"d\": {\"b\": 2, \"a\": 1, \"C\": [1, null]}, \"objs\": [{\"a\": 1, \"b\": 3}, {\"a\": 0, \"b\": 1}, {\"b\": 2}], \"x\": null, \"messages\": [{\"role\": \"system\", \"content\": \"S\"}, {\"role\": \"user\", \"content\": \"U\"}]}",
      "5|\346\234\254|\303\251|\346\227\245\346\234\254\350\252\236\360\237\246\231\303\211|\303\251\360\237\246\231\350\252\236\346\234\254\346\227\245|1|\"\346\227\245\346\234\254\350\252\236\360\237\246\231\303\251\"|\"\\u65e5\\u672c\\u8a9e\\ud83e\\udd99\\u00e9\"" },
    { "{{ d.keys() | list }}|{{ d.values() | list }}|{{ d.items() | list }}|{{ d | list }}|{{ d | length }}|{{ d.get('b') }}|{{ d['b'] }}|{{ d.b }}|{{ d.zz }}",
      "{\"s\": \"Hello World \", \"u8\": \"\346\227\245\346\234\254\350\252\236\360\237\246\231\303\251\", \"l\": [1, 2, 3, 4], \"d\": {\"b\": 2, \"a\": 1, \"C\": [1, null]}, \"objs\": [{\"a\": 1, \"b\": 3}, {\"a\": 0, \"b\": 1}, {\"b\": 2}], \"x\": null, \"messages\": [{\"role\": \"system\", \"content\": \"S\"}, {\"role\": \"user\", \"content\": \"U\"}]}",
      "['b', 'a', 'C']|[2, 1, [1, None]]|[('b', 2), ('a', 1), ('C', [1, None])]|['b', 'a', 'C']|3|2|2|2|" },
    { "{{ l }}|{{ l | join }}|{{ l | join('-') }}|{{ l | first }}|{{ l | last }}|{{ l | min }}|{{ l | max }}|{{ l | sum }}|{{ l | sort(reverse=true) }}",
      "{\"s\": \"Hello World \", \"u8\": \"\346\227\245\346\234\254\350\252\236\360\237\246\231\303\251\", \"l\": [1, 2, 3, 4], \"d\": {\"b\": 2, \"a\": 1, \"C\": [1, null]}, \"objs\": [{\"a\": 1, \"b\": 3}, {\"a\": 0, \"b\": 1}, {\"b\": 2}], \"x\": null, \"messages\": [{\"role\": \"system\", \"content\": \"S\"}, {\"role\": \"user\", \"content\": \"U\"}]}",
      "[1, 2, 3, 4]|1234|1-2-3-4|1|4|1|4|10|[4, 3, 2, 1]" },
    { "{{ l | map('string') | join(',') }}|{{ l | select('even') | list }}|{{ l | reject('even') | list }}|{{ l | select('gt', 2) | list }}|{{ l | select('in', [1, 2]) | list }}",
      "{\"s\": \"Hello World \", \"u8\": \"\346\227\245\346\234\254\350\252\236\360\237\246\231\303\251\", \"l\": [1, 2, 3, 4], \"d\": {\"b\": 2, \"a\": 1, \"C\": [1, null]}, \"objs\": [{\"a\": 1, \"b\": 3}, {\"a\": 0, \"b\": 1}, {\"b\": 2}], \"x\": null, \"messages\": [{\"role\": \"system\", \"content\": \"S\"}, {\"role\": \"user\", \"content\": \"U\"}]}",
      "1,2,3,4|[2, 4]|[1, 3]|[3, 4]|[1, 2]" },
    { "{{ objs | selectattr('a') | list }}|{{ objs | rejectattr('a') | list }}|{{ objs | selectattr('a', 'equalto', 1) | list }}|{{ objs | map(attribute='a') | list }}|{{ objs | map(attribute='a', default='X') | list }}|{{ objs | sort(attribute='b') | list }}",
      "{\"s\": \"Hello World \", \"u8\": \"\346\227\245\346\234\254\350\252\236\360\237\246\231\303\251\", \"l\": [1, 2, 3, 4], \"d\": {\"b\": 2, \"a\": 1, \"C\": [1, null]}, \"objs\": [{\"a\": 1, \"b\": 3}, {\"a\": 0, \"b\": 1}, {\"b\": 2}], \"x\": null, \"messages\": [{\"role\": \"system\", \"content\": \"S\"}, {\"role\": \"user\", \"content\": \"U\"}]}",
      "[{'a': 1, 'b': 3}]|[{'a': 0, 'b': 1}, {'b': 2}]|[{'a': 1, 'b': 3}]|[1, 0, Undefined]|[1, 0, 'X']|[{'a': 0, 'b': 1}, {'b': 2}, {'a': 1, 'b': 3}]" },
    { "{{ objs | groupby('a') | list if false else 'skip' }}|{{ objs | map(attribute='b') | unique | list }}|{{ objs | min(attribute='b') }}|{{ objs | sum(attribute='b') }}|{{ objs | join(',', attribute='b') }}",
      "{\"s\": \"Hello World \", \"u8\": \"\346\227\245\346\234\254\350\252\236\360\237\246\231\303\251\", \"l\": [1, 2, 3, 4], \"d\": {\"b\": 2, \"a\": 1, \"C\": [1, null]}, \"objs\": [{\"a\": 1, \"b\": 3}, {\"a\": 0, \"b\": 1}, {\"b\": 2}], \"x\": null, \"messages\": [{\"role\": \"system\", \"content\": \"S\"}, {\"role\": \"user\", \"content\": \"U\"}]}",
      "skip|[3, 1, 2]|{'a': 0, 'b': 1}|6|3,1,2" },
    { "{{ 1 + 2 * 3 - 4 / 2 }}|{{ 2 ** 3 ** 2 }}|{{ -2 ** 2 }}|{{ (1, 2) + (3,) }}|{{ [1] * 3 }}|{{ 'a' * 0 }}|{{ 7 % 3 }}|{{ -7 % -3 }}|{{ 7.5 // 2 }}|{{ -7.5 // 2 }}|{{ 7.5 % 2 }}",
      "{\"s\": \"Hello World \", \"u8\": \"\346\227\245\346\234\254\350\252\236\360\237\246\231\303\251\", \"l\": [1, 2, 3, 4], \"d\": {\"b\": 2, \"a\": 1, \"C\": [1, null]}, \"objs\": [{\"a\": 1, \"b\": 3}, {\"a\": 0, \"b\": 1}, {\"b\": 2}], \"x\": null, \"messages\": [{\"role\": \"system\", \"content\": \"S\"}, {\"role\": \"user\", \"content\": \"U\"}]}",
      "5.0|64|4|(1, 2, 3)|[1, 1, 1]||1|-1|3.0|-4.0|1.5" },
    { "{{ 1 == 1.0 }}|{{ 'a' == 'a' }}|{{ [1, 2] == [1, 2] }}|{{ (1, 2) == [1, 2] }}|{{ none == none }}|{{ none is none }}|{{ 1 != 2 }}|{{ 'a' < 'b' }}|{{ [1, 2] < [1, 3] }}|{{ 2 > 1.5 }}",
      "{\"s\": \"Hello World \", \"u8\": \"\346\227\245\346\234\254\350\252\236\360\237\246\231\303\251\", \"l\": [1, 2, 3, 4], \"d\": {\"b\": 2, \"a\": 1, \"C\": [1, null]}, \"objs\": [{\"a\": 1, \"b\": 3}, {\"a\": 0, \"b\": 1}, {\"b\": 2}], \"x\": null, \"messages\": [{\"role\": \"system\", \"content\": \"S\"}, {\"role\": \"user\", \"content\": \"U\"}]}",
      "True|True|True|False|True|True|True|True|True|True" },
    { "{{ 'a' in 'abc' }}|{{ 1 in [1, 2] }}|{{ 'a' in {'a': 1} }}|{{ 'z' not in 'abc' }}|{{ none in [none] }}|{{ '' in 'x' }}",
      "{\"s\": \"Hello World \", \"u8\": \"\346\227\245\346\234\254\350\252\236\360\237\246\231\303\251\", \"l\": [1, 2, 3, 4], \"d\": {\"b\": 2, \"a\": 1, \"C\": [1, null]}, \"objs\": [{\"a\": 1, \"b\": 3}, {\"a\": 0, \"b\": 1}, {\"b\": 2}], \"x\": null, \"messages\": [{\"role\": \"system\", \"content\": \"S\"}, {\"role\": \"user\", \"content\": \"U\"}]}",
      "True|True|True|True|True|True" },
    { "{{ true and 'x' }}|{{ false or [] }}|{{ not none }}|{{ not [] }}|{{ 0 or 0.0 or '' or 'last' }}|{{ none and 1 }}",
      "{\"s\": \"Hello World \", \"u8\": \"\346\227\245\346\234\254\350\252\236\360\237\246\231\303\251\", \"l\": [1, 2, 3, 4], \"d\": {\"b\": 2, \"a\": 1, \"C\": [1, null]}, \"objs\": [{\"a\": 1, \"b\": 3}, {\"a\": 0, \"b\": 1}, {\"b\": 2}], \"x\": null, \"messages\": [{\"role\": \"system\", \"content\": \"S\"}, {\"role\": \"user\", \"content\": \"U\"}]}",
      "x|[]|True|True|last|None" },
    { "{{ 1 if true }}|{{ 1 if false else 2 }}|{{ 'a' if none else 'b' if 1 else 'c' }}",
      "{\"s\": \"Hello World \", \"u8\": \"\346\227\245\346\234\254\350\252\236\360\237\246\231\303\251\", \"l\": [1, 2, 3, 4], \"d\": {\"b\": 2, \"a\": 1, \"C\": [1, null]}, \"objs\": [{\"a\": 1, \"b\": 3}, {\"a\": 0, \"b\": 1}, {\"b\": 2}], \"x\": null, \"messages\": [{\"role\": \"system\", \"content\": \"S\"}, {\"role\": \"user\", \"content\": \"U\"}]}",
      "1|2|b" },
    { "{{ 0.1 }}|{{ 1e-7 }}|{{ 1e22 }}|{{ 123456789012345678 }}|{{ 2.5e-3 }}|{{ 100.0 }}|{{ 1.0e15 }}|{{ 1.5e16 }}|{{ 3.14159 }}|{{ -1.5 }}|{{ 1/7 }}|{{ 2/3 }}",
      "{\"s\": \"Hello World \", \"u8\": \"\346\227\245\346\234\254\350\252\236\360\237\246\231\303\251\", \"l\": [1, 2, 3, 4], \"d\": {\"b\": 2, \"a\": 1, \"C\": [1, null]}, \"objs\": [{\"a\": 1, \"b\": 3}, {\"a\": 0, \"b\": 1}, {\"b\": 2}], \"x\": null, \"messages\": [{\"role\": \"system\", \"content\": \"S\"}, {\"role\": \"user\", \"content\": \"U\"}]}",
      "0.1|1e-07|1e+22|123456789012345678|0.0025|100.0|1000000000000000.0|1.5e+16|3.14159|-1.5|0.14285714285714285|0.6666666666666666" },
    { "{{ 3.7 | round }}|{{ 3.14159 | round(2) }}|{{ 2.5 | round }}|{{ 3.5 | round }}|{{ 3.2 | round(method='ceil') }}|{{ -3.7 | round(method='floor') }}|{{ 10 | float }}|{{ '3.5' | float }}|{{ 'x' | float }}|{{ ' 42 ' | int }}|{{ '1_000' | int }}|{{ '0x1A' | int }}|{{ true | int }}",
      "{\"s\": \"Hello World \", \"u8\": \"\346\227\245\346\234\254\350\252\236\360\237\246\231\303\251\", \"l\": [1, 2, 3, 4], \"d\": {\"b\": 2, \"a\": 1, \"C\": [1, null]}, \"objs\": [{\"a\": 1, \"b\": 3}, {\"a\": 0, \"b\": 1}, {\"b\": 2}], \"x\": null, \"messages\": [{\"role\": \"system\", \"content\": \"S\"}, {\"role\": \"user\", \"content\": \"U\"}]}",
      "4.0|3.14|2.0|4.0|4.0|-4.0|10.0|3.5|0.0|42|1000|0|1" },
    { "{{ 'a-b c(d' | title }}|{{ \"they're bill's\" | title }}|{{ 'HELLO world' | capitalize }}|{{ 'abc' | center(9) if false else '' }}",
      "{\"s\": \"Hello World \", \"u8\": \"\346\227\245\346\234\254\350\252\236\360\237\246\231\303\251\", \"l\": [1, 2, 3, 4], \"d\": {\"b\": 2, \"a\": 1, \"C\": [1, null]}, \"objs\": [{\"a\": 1, \"b\": 3}, {\"a\": 0, \"b\": 1}, {\"b\": 2}], \"x\": null, \"messages\": [{\"role\": \"system\", \"content\": \"S\"}, {\"role\": \"user\", \"content\": \"U\"}]}",
      "A-B C(D|They're Bill's|Hello world|" },
    { "{{ '%s' if false else 'x' }}|{{ '{} and {}'.format('a', 'b') }}|{{ '{0}{1}{0}'.format('a', 'b') }}|{{ '{x}!'.format(x=5) }}|{{ '{{}}'.format() }}|{{ '{!r}'.format('q') }}",
      "{\"s\": \"Hello World \", \"u8\": \"\346\227\245\346\234\254\350\252\236\360\237\246\231\303\251\", \"l\": [1, 2, 3, 4], \"d\": {\"b\": 2, \"a\": 1, \"C\": [1, null]}, \"objs\": [{\"a\": 1, \"b\": 3}, {\"a\": 0, \"b\": 1}, {\"b\": 2}], \"x\": null, \"messages\": [{\"role\": \"system\", \"content\": \"S\"}, {\"role\": \"user\", \"content\": \"U\"}]}",
      "x|a and b|aba|5!|{}|'q'" },
    { "{% for i in range(3) %}{{ loop.cycle('a', 'b') }}{{ loop.revindex0 }}{{ loop.depth }}{% endfor %}|{% for i in range(5, 0, -2) %}{{ i }}{% endfor %}|{{ range(3) | list }}|{{ range(0) | list }}",
      "{\"s\": \"Hello World \", \"u8\": \"\346\227\245\346\234\254\350\252\236\360\237\246\231\303\251\", \"l\": [1, 2, 3, 4], \"d\": {\"b\": 2, \"a\": 1, \"C\": [1, null]}, \"objs\": [{\"a\": 1, \"b\": 3}, {\"a\": 0, \"b\": 1}, {\"b\": 2}], \"x\": null, \"messages\": [{\"role\": \"system\", \"content\": \"S\"}, {\"role\": \"user\", \"content\": \"U\"}]}",
      "a21b11a01|531|[0, 1, 2]|[]" },
    { "{% set ns = namespace(a=1, b=[]) %}{% set ns.a = ns.a + 1 %}{{ ns.a }}{{ ns.b }}{{ ns.c is defined }}|{% set ns2 = namespace({'x': 1}, y=2) %}{{ ns2.x }}{{ ns2.y }}",
      "{\"s\": \"Hello World \", \"u8\": \"\346\227\245\346\234\254\350\252\236\360\237\246\231\303\251\", \"l\": [1, 2, 3, 4], \"d\": {\"b\": 2, \"a\": 1, \"C\": [1, null]}, \"objs\": [{\"a\": 1, \"b\": 3}, {\"a\": 0, \"b\": 1}, {\"b\": 2}], \"x\": null, \"messages\": [{\"role\": \"system\", \"content\": \"S\"}, {\"role\": \"user\", \"content\": \"U\"}]}",
      "2[]False|12" },
    { "{% macro m(x) %}<{{ x }}>{% endmacro %}{{ m('a') }}{{ m() }}{{ m(x=3) }}{{ m | string if false else '' }}|{% macro n() %}{{ varargs }}{{ kwargs }}{% endmacro %}{{ n(1, 2, k=3) }}",
      "{\"s\": \"Hello World \", \"u8\": \"\346\227\245\346\234\254\350\252\236\360\237\246\231\303\251\", \"l\": [1, 2, 3, 4], \"d\": {\"b\": 2, \"a\": 1, \"C\": [1, null]}, \"objs\": [{\"a\": 1, \"b\": 3}, {\"a\": 0, \"b\": 1}, {\"b\": 2}], \"x\": null, \"messages\": [{\"role\": \"system\", \"content\": \"S\"}, {\"role\": \"user\", \"content\": \"U\"}]}",
      "<a><><3>|(1, 2){'k': 3}" },
    { "{{ none | default('x') }}|{{ none | default('x', true) }}|{{ false | default('x') }}|{{ '' | d('e', true) }}|{{ u | default }}|{{ u | default(none) }}",
      "{\"s\": \"Hello World \", \"u8\": \"\346\227\245\346\234\254\350\252\236\360\237\246\231\303\251\", \"l\": [1, 2, 3, 4], \"d\": {\"b\": 2, \"a\": 1, \"C\": [1, null]}, \"objs\": [{\"a\": 1, \"b\": 3}, {\"a\": 0, \"b\": 1}, {\"b\": 2}], \"x\": null, \"messages\": [{\"role\": \"system\", \"content\": \"S\"}, {\"role\": \"user\", \"content\": \"U\"}]}",
      "None|x|False|e||None" },
    { "{{ x is defined }}{{ x is undefined }}{{ x is none }}{{ x is string }}{{ x is number }}{{ x is integer }}{{ x is float }}{{ x is mapping }}{{ x is iterable }}{{ x is sequence }}{{ x is boolean }}{{ x is callable }}",
      "{\"s\": \"Hello World \", \"u8\": \"\346\227\245\346\234\254\350\252\236\360\237\246\231\303\251\", \"l\": [1, 2, 3, 4], \"d\": {\"b\": 2, \"a\": 1, \"C\": [1, null]}, \"objs\": [{\"a\": 1, \"b\": 3}, {\"a\": 0, \"b\": 1}, {\"b\": 2}], \"x\": null, \"messages\": [{\"role\": \"system\", \"content\": \"S\"}, {\"role\": \"user\", \"content\": \"U\"}]}",
      "TrueFalseTrueFalseFalseFalseFalseFalseFalseFalseFalseFalse" },
    { "{{ 5 is odd }}{{ 5 is even }}{{ 6 is divisibleby(3) }}{{ 5 is eq 5 }}{{ 5 is ne 5 }}{{ 5 is lt 6 }}{{ 5 is ge 6 }}{{ 'a' is in 'abc' }}{{ 'ab' is lower }}{{ 'AB' is upper }}{{ none is sameas none }}{{ 'upper' is filter }}{{ 'odd' is test }}{{ 'nope' is filter }}",
      "{\"s\": \"Hello World \", \"u8\": \"\346\227\245\346\234\254\350\252\236\360\237\246\231\303\251\", \"l\": [1, 2, 3, 4], \"d\": {\"b\": 2, \"a\": 1, \"C\": [1, null]}, \"objs\": [{\"a\": 1, \"b\": 3}, {\"a\": 0, \"b\": 1}, {\"b\": 2}], \"x\": null, \"messages\": [{\"role\": \"system\", \"content\": \"S\"}, {\"role\": \"user\", \"content\": \"U\"}]}",
      "TrueFalseTrueTrueFalseTrueFalseTrueTrueTrueTrueTrueTrueFalse" },
    { "{{ [1, [2, 3], {'a': (4, 5)}] }}|{{ {'a': none, 'b': true, 1: 2.5} }}|{{ \"it's\" }}|{{ ['it\\'s', \"q\\\"u\", 'both\\'\"', 'nl\\n', 'tab\\t', 'bs\\\\', '\\x01', '\303\251', '\\u200b', '\\xa0'] }}",
      "{\"s\": \"Hello World \", \"u8\": \"\346\227\245\346\234\254\350\252\236\360\237\246\231\303\251\", \"l\": [1, 2, 3, 4], \"d\": {\"b\": 2, \"a\": 1, \"C\": [1, null]}, \"objs\": [{\"a\": 1, \"b\": 3}, {\"a\": 0, \"b\": 1}, {\"b\": 2}], \"x\": null, \"messages\": [{\"role\": \"system\", \"content\": \"S\"}, {\"role\": \"user\", \"content\": \"U\"}]}",
      "[1, [2, 3], {'a': (4, 5)}]|{'a': None, 'b': True, 1: 2.5}|it's|[\"it's\", 'q\"u', 'both\\'\"', 'nl\\n', 'tab\\t', 'bs\\\\', '\\x01', '\303\251', '\\u200b', '\\xa0']" },
    { "{{ {'a': [1, 2], 'b': {'c': 'd'}} | tojson(indent=2) }}|{{ [] | tojson(indent=2) }}|{{ {} | tojson }}|{{ [1, [2, []]] | tojson(indent=1) }}|{{ 'x' | tojson(indent='\\t') if false else '' }}",
      "{\"s\": \"Hello World \", \"u8\": \"\346\227\245\346\234\254\350\252\236\360\237\246\231\303\251\", \"l\": [1, 2, 3, 4], \"d\": {\"b\": 2, \"a\": 1, \"C\": [1, null]}, \"objs\": [{\"a\": 1, \"b\": 3}, {\"a\": 0, \"b\": 1}, {\"b\": 2}], \"x\": null, \"messages\": [{\"role\": \"system\", \"content\": \"S\"}, {\"role\": \"user\", \"content\": \"U\"}]}",
      "{\n  \"a\": [\n    1,\n    2\n  ],\n  \"b\": {\n    \"c\": \"d\"\n  }\n}|[]|{}|[\n 1,\n [\n  2,\n  []\n ]\n]|" },
    { "{{ {'b': 1, 'a': 2} | tojson(separators=(',', ':'), sort_keys=true) }}|{{ 1.0 | tojson }}|{{ none | tojson }}|{{ 'a\\u2028b\\x00c' | tojson }}|{{ '</script>' | tojson }}|{{ {1: 'a', true: 'b'} | tojson if false else '' }}",
      "{\"s\": \"Hello World \", \"u8\": \"\346\227\245\346\234\254\350\252\236\360\237\246\231\303\251\", \"l\": [1, 2, 3, 4], \"d\": {\"b\": 2, \"a\": 1, \"C\": [1, null]}, \"objs\": [{\"a\": 1, \"b\": 3}, {\"a\": 0, \"b\": 1}, {\"b\": 2}], \"x\": null, \"messages\": [{\"role\": \"system\", \"content\": \"S\"}, {\"role\": \"user\", \"content\": \"U\"}]}",
      "{\"a\":2,\"b\":1}|1.0|null|\"a\342\200\250b\\u0000c\"|\"</script>\"|" },
    { "{{ 'a\\nb\\n\\nc' | indent }}|{{ 'a\\nb' | indent(2, true) }}|{{ 'a\\n\\nb' | indent(2, blank=true) }}|{{ 'x' | indent('>>') }}|{{ 'a\\nb\\n' | indent(1) }}",
      "{\"s\": \"Hello World \", \"u8\": \"\346\227\245\346\234\254\350\252\236\360\237\246\231\303\251\", \"l\": [1, 2, 3, 4], \"d\": {\"b\": 2, \"a\": 1, \"C\": [1, null]}, \"objs\": [{\"a\": 1, \"b\": 3}, {\"a\": 0, \"b\": 1}, {\"b\": 2}], \"x\": null, \"messages\": [{\"role\": \"system\", \"content\": \"S\"}, {\"role\": \"user\", \"content\": \"U\"}]}",
      "a\n    b\n\n    c|  a\n  b|a\n  \n  b|x|a\n b\n" },
    { "{{ '<a href=\"x\">&\\'' | e }}|{{ 'x' | safe }}|{{ [1, 2] | string }}|{{ none | string }}|{{ 1.0 | string }}|{{ (1, 2) | list }}|{{ 'ab' | list }}|{{ {'a': 1} | items | list }}",
      "{\"s\": \"Hello World \", \"u8\": \"\346\227\245\346\234\254\350\252\236\360\237\246\231\303\251\", \"l\": [1, 2, 3, 4], \"d\": {\"b\": 2, \"a\": 1, \"C\": [1, null]}, \"objs\": [{\"a\": 1, \"b\": 3}, {\"a\": 0, \"b\": 1}, {\"b\": 2}], \"x\": null, \"messages\": [{\"role\": \"system\", \"content\": \"S\"}, {\"role\": \"user\", \"content\": \"U\"}]}",
      "&lt;a href=&#34;x&#34;&gt;&amp;&#39;|x|[1, 2]|None|1.0|[1, 2]|['a', 'b']|[('a', 1)]" },
    { "{{ [3, 1, 2] | sort }}|{{ ['b', 'A', 'a', 'B'] | sort }}|{{ ['b', 'A', 'a', 'B'] | sort(case_sensitive=true) }}|{{ ['b', 'A', 'a', 'B'] | unique | list }}|{{ ['B', 'a', 'c'] | min }}|{{ ['B', 'a', 'c'] | max }}",
      "{\"s\": \"Hello World \", \"u8\": \"\346\227\245\346\234\254\350\252\236\360\237\246\231\303\251\", \"l\": [1, 2, 3, 4], \"d\": {\"b\": 2, \"a\": 1, \"C\": [1, null]}, \"objs\": [{\"a\": 1, \"b\": 3}, {\"a\": 0, \"b\": 1}, {\"b\": 2}], \"x\": null, \"messages\": [{\"role\": \"system\", \"content\": \"S\"}, {\"role\": \"user\", \"content\": \"U\"}]}",
      "[1, 2, 3]|['A', 'a', 'b', 'B']|['A', 'B', 'a', 'b']|['b', 'A']|a|c" },
    { "{{ 'abc'.upper().lower() }}|{{ ' x '.strip().title() }}|{{ 'a,b'.split(',') | join(';') }}|{{ ','.join(['a', 'b']) }}|{{ 'a:b:c'.split(':', -1) }}|{{ 'ab12'.isalnum() }}{{ '12'.isdigit() }}{{ 'ab'.isalpha() }}{{ ' '.isspace() }}{{ 'ab'.islower() }}{{ 'AB'.isupper() }}",
      "{\"s\": \"Hello World \", \"u8\": \"\346\227\245\346\234\254\350\252\236\360\237\246\231\303\251\", \"l\": [1, 2, 3, 4], \"d\": {\"b\": 2, \"a\": 1, \"C\": [1, null]}, \"objs\": [{\"a\": 1, \"b\": 3}, {\"a\": 0, \"b\": 1}, {\"b\": 2}], \"x\": null, \"messages\": [{\"role\": \"system\", \"content\": \"S\"}, {\"role\": \"user\", \"content\": \"U\"}]}",
      "abc|X|a;b|a,b|['a', 'b', 'c']|TrueTrueTrueTrueTrueTrue" },
    { "{{ l.index(3) }}|{{ l.count(1) }}|{{ d.copy() }}|{{ 'a-b'.removeprefix('a-') if false else '' }}",
      "{\"s\": \"Hello World \", \"u8\": \"\346\227\245\346\234\254\350\252\236\360\237\246\231\303\251\", \"l\": [1, 2, 3, 4], \"d\": {\"b\": 2, \"a\": 1, \"C\": [1, null]}, \"objs\": [{\"a\": 1, \"b\": 3}, {\"a\": 0, \"b\": 1}, {\"b\": 2}], \"x\": null, \"messages\": [{\"role\": \"system\", \"content\": \"S\"}, {\"role\": \"user\", \"content\": \"U\"}]}",
      "2|1|{'b': 2, 'a': 1, 'C': [1, None]}|" },
    { "{% filter upper %}x{% endfilter %}",
      "{\"s\": \"Hello World \", \"u8\": \"\346\227\245\346\234\254\350\252\236\360\237\246\231\303\251\", \"l\": [1, 2, 3, 4], \"d\": {\"b\": 2, \"a\": 1, \"C\": [1, null]}, \"objs\": [{\"a\": 1, \"b\": 3}, {\"a\": 0, \"b\": 1}, {\"b\": 2}], \"x\": null, \"messages\": [{\"role\": \"system\", \"content\": \"S\"}, {\"role\": \"user\", \"content\": \"U\"}]}",
      "X" },
    { "{% for x in l %}{% if x > 2 %}{% break %}{% endif %}{{ x }}{% else %}E{% endfor %}|{% for x in [] %}{% else %}E{% endfor %}|{% for x in l if x is odd %}{{ loop.index }}{{ loop.last }}{% endfor %}",
      "{\"s\": \"Hello World \", \"u8\": \"\346\227\245\346\234\254\350\252\236\360\237\246\231\303\251\", \"l\": [1, 2, 3, 4], \"d\": {\"b\": 2, \"a\": 1, \"C\": [1, null]}, \"objs\": [{\"a\": 1, \"b\": 3}, {\"a\": 0, \"b\": 1}, {\"b\": 2}], \"x\": null, \"messages\": [{\"role\": \"system\", \"content\": \"S\"}, {\"role\": \"user\", \"content\": \"U\"}]}",
      "12|E|1False2True" },
    { "{% raw %}{{ x }}{% endraw %}",
      "{\"s\": \"Hello World \", \"u8\": \"\346\227\245\346\234\254\350\252\236\360\237\246\231\303\251\", \"l\": [1, 2, 3, 4], \"d\": {\"b\": 2, \"a\": 1, \"C\": [1, null]}, \"objs\": [{\"a\": 1, \"b\": 3}, {\"a\": 0, \"b\": 1}, {\"b\": 2}], \"x\": null, \"messages\": [{\"role\": \"system\", \"content\": \"S\"}, {\"role\": \"user\", \"content\": \"U\"}]}",
      "{{ x }}" },
    { "{{ messages | length }}|{{ messages[0]['role'] }}|{{ messages[-1].content }}|{% for m in messages %}{{ m.role[0] | upper }}{% endfor %}|{{ messages | map(attribute='role') | join('/') }}|{{ messages | selectattr('role', 'equalto', 'user') | list | length }}",
      "{\"s\": \"Hello World \", \"u8\": \"\346\227\245\346\234\254\350\252\236\360\237\246\231\303\251\", \"l\": [1, 2, 3, 4], \"d\": {\"b\": 2, \"a\": 1, \"C\": [1, null]}, \"objs\": [{\"a\": 1, \"b\": 3}, {\"a\": 0, \"b\": 1}, {\"b\": 2}], \"x\": null, \"messages\": [{\"role\": \"system\", \"content\": \"S\"}, {\"role\": \"user\", \"content\": \"U\"}]}",
      "2|system|U|SU|system/user|1" },
    { "{{ strftime_now('%A %d %B %Y %H:%M %j %a %b %-d') }}",
      "{\"s\": \"Hello World \", \"u8\": \"\346\227\245\346\234\254\350\252\236\360\237\246\231\303\251\", \"l\": [1, 2, 3, 4], \"d\": {\"b\": 2, \"a\": 1, \"C\": [1, null]}, \"objs\": [{\"a\": 1, \"b\": 3}, {\"a\": 0, \"b\": 1}, {\"b\": 2}], \"x\": null, \"messages\": [{\"role\": \"system\", \"content\": \"S\"}, {\"role\": \"user\", \"content\": \"U\"}]}",
      "Monday 30 November 2026 00:00 334 Mon Nov 30" },
    { "{{ l | batch(2) | list if false else '' }}{{ 'hello' | truncate(3) if false else '' }}{{ 'a b c' | wordcount if false else '' }}",
      "{\"s\": \"Hello World \", \"u8\": \"\346\227\245\346\234\254\350\252\236\360\237\246\231\303\251\", \"l\": [1, 2, 3, 4], \"d\": {\"b\": 2, \"a\": 1, \"C\": [1, null]}, \"objs\": [{\"a\": 1, \"b\": 3}, {\"a\": 0, \"b\": 1}, {\"b\": 2}], \"x\": null, \"messages\": [{\"role\": \"system\", \"content\": \"S\"}, {\"role\": \"user\", \"content\": \"U\"}]}",
      "" },
    { "a  {% raw -%}  {{ x }} {%- endraw %}  b|{% filter upper | replace('A', '4') %}abc{{ 1 }}{% endfilter %}",
      "{\"s\": \"Hello World \", \"u8\": \"\346\227\245\346\234\254\350\252\236\360\237\246\231\303\251\", \"l\": [1, 2, 3, 4], \"d\": {\"b\": 2, \"a\": 1, \"C\": [1, null]}, \"objs\": [{\"a\": 1, \"b\": 3}, {\"a\": 0, \"b\": 1}, {\"b\": 2}], \"x\": null, \"messages\": [{\"role\": \"system\", \"content\": \"S\"}, {\"role\": \"user\", \"content\": \"U\"}]}",
      "a  {{ x }}  b|4BC1" },
    { "x {%- raw %} y {% endraw -%} z",
      "{\"s\": \"Hello World \", \"u8\": \"\346\227\245\346\234\254\350\252\236\360\237\246\231\303\251\", \"l\": [1, 2, 3, 4], \"d\": {\"b\": 2, \"a\": 1, \"C\": [1, null]}, \"objs\": [{\"a\": 1, \"b\": 3}, {\"a\": 0, \"b\": 1}, {\"b\": 2}], \"x\": null, \"messages\": [{\"role\": \"system\", \"content\": \"S\"}, {\"role\": \"user\", \"content\": \"U\"}]}",
      "x y z" },
    { "{% set g = ['a','b']|map('upper') %}{{ g|list }}{{ g|list }}{{ g is iterable }}{{ g is sequence }}{% if g %}T{% endif %}",
      "{\"s\": \"Hello World \", \"u8\": \"\346\227\245\346\234\254\350\252\236\360\237\246\231\303\251\", \"l\": [1, 2, 3, 4], \"d\": {\"b\": 2, \"a\": 1, \"C\": [1, null]}, \"objs\": [{\"a\": 1, \"b\": 3}, {\"a\": 0, \"b\": 1}, {\"b\": 2}], \"x\": null, \"messages\": [{\"role\": \"system\", \"content\": \"S\"}, {\"role\": \"user\", \"content\": \"U\"}]}",
      "['A', 'B'][]TrueFalseT" },
    { "{{ [1,2,3]|select('odd')|join(',') }}|{{ ({'a':1}|items|list) }}|{{ [3,1]|reverse|list }}|{{ 'abc'|reverse }}|{{ [1,2]|map('string')|first }}|[{{ ([1]|map('string'))[0] }}]",
      "{\"s\": \"Hello World \", \"u8\": \"\346\227\245\346\234\254\350\252\236\360\237\246\231\303\251\", \"l\": [1, 2, 3, 4], \"d\": {\"b\": 2, \"a\": 1, \"C\": [1, null]}, \"objs\": [{\"a\": 1, \"b\": 3}, {\"a\": 0, \"b\": 1}, {\"b\": 2}], \"x\": null, \"messages\": [{\"role\": \"system\", \"content\": \"S\"}, {\"role\": \"user\", \"content\": \"U\"}]}",
      "1,3|[('a', 1)]|[1, 3]|cba|1|[]" },
    { "[{{ 5[0] }}]{{ [1,2][1.5] }}[{{ n[0] }}][{{ l[1:] }}]",
      "{\"n\": 5, \"l\": [1, 2]}",
      "[][][[2]]" },
};

/* renders tmpl with the members of a JSON object as variables */
static int render_with(const char *tmpl, const char *vars_json, const jinja_limits *lim, char **out, ts_error *err) {
    jinja_template *t;
    *out = NULL;
    if (jinja_parse(tmpl, strlen(tmpl), &t, err) != 0) return -1;
    json_value *vars = NULL;
    if (json_parse(vars_json, strlen(vars_json), &vars, err) != 0) { jinja_template_free(t); return -1; }
    jinja_var vv[32];
    int n = 0;
    for (size_t i = 0; i < vars->n && n < 32; i++) vv[n++] = (jinja_var){ vars->keys[i], &vars->items[i] };
    struct tm day = fixture_day();
    size_t len;
    int rc = jinja_render(t, vv, n, &day, lim, out, &len, err);
    json_free(vars);
    jinja_template_free(t);
    return rc;
}

static void check_semantics(void) {
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char *out;
        ts_error err = {{0}};
        int rc = render_with(cases[i].tmpl, cases[i].vars, NULL, &out, &err);
        bool same = rc == 0 && strcmp(out, cases[i].text) == 0;
        char head[64];
        snprintf(head, sizeof head, "%s", cases[i].tmpl);
        for (char *c = head; *c; c++) if (*c == '\n') *c = ' ';
        CHECK(same, "Jinja case %zu renders as Jinja2 does: %s", i, head);
        if (!same) printf("#   got: %s\n#  want: %s\n", rc == 0 ? out : err.msg, cases[i].text);
        free(out);
    }
}

/* ---- errors ---- */

/* renders and expects an error holding want (and a one-line message) */
static void expect_error(const char *tmpl, const jinja_limits *lim, const char *want, const char *what) {
    char *out;
    ts_error err = {{0}};
    int rc = render_with(tmpl, "{\"messages\": [{\"role\": \"user\", \"content\": \"x\"}]}", lim, &out, &err);
    CHECK(rc != 0 && out == NULL && strstr(err.msg, want) && !strchr(err.msg, '\n'), "%s: %s", what, rc ? err.msg : "rendered");
    free(out);
}

static void check_errors(void) {
    char *out;
    ts_error err = {{0}};
    /* Jinja's default Undefined: printing, testing, default(), iterating, length are fine ... */
    int rc = render_with("[{{ u }}{{ u is defined }}{% if u %}x{% endif %}{{ u | default('d') }}{% for x in u %}x{% endfor %}"
                         "{{ u | length }}{{ m.nope }}{{ m.nope is defined }}{{ u == none }}{{ u | string }}]",
                         "{\"m\": {}}", NULL, &out, &err);
    CHECK(rc == 0 && !strcmp(out, "[Falsed0FalseFalse]"), "tolerated uses of undefined values render as Jinja2's (%s)", rc ? err.msg : out);
    free(out);
    /* ... but attributes, items, calls and arithmetic on them fail */
    expect_error("{{ u.attr }}", NULL, "'u' is undefined", "attribute of an undefined value");
    expect_error("{{ u['k'] }}", NULL, "'u' is undefined", "item of an undefined value");
    expect_error("{{ messages[0].nope.deeper }}", NULL, "'dict object' has no attribute 'nope'", "attribute of a missing attribute");
    expect_error("{{ u() }}", NULL, "'u' is undefined", "calling an undefined value");
    expect_error("{{ u + 1 }}", NULL, "'u' is undefined", "arithmetic on an undefined value");
    expect_error("{{ u | tojson }}", NULL, "not JSON serializable", "tojson of an undefined value");
    expect_error("{{ [].append(1) }}", NULL, "access to attribute 'append' of 'list' object is unsafe", "mutating a list (the immutable sandbox)");
    expect_error("{{ raise_exception('Conversation roles must alternate user/assistant/user/assistant/...') }}", NULL,
                 "Conversation roles must alternate", "raise_exception gives its message");
    expect_error("{{ 1 + 'a' }}", NULL, "unsupported operand type(s) for +: 'int' and 'str'", "a type error");
    expect_error("{{ 1 // 0 }}", NULL, "division or modulo by zero", "division by zero");
    expect_error("x\n{% for %}", NULL, "line 2:", "a syntax error names its line");
    expect_error("{% if x %}", NULL, "expected 'endif'", "an unclosed block");
    expect_error("{% endfor %}", NULL, "unexpected 'endfor'", "a stray end tag");
    expect_error("{{ 'unterminated }}", NULL, "unterminated string", "an unterminated string");
    expect_error("{% break %}", NULL, "outside a for loop", "break outside a loop");
    expect_error("{% if a if b else c %}x{% endif %}", NULL, "expected '%}', got 'if'", "an if's test takes no inline if (as in Jinja2)");
    expect_error("{% for x, in [1] %}{% endfor %}", NULL, "expected 'in' in a for loop", "a loop target ending in a comma");
    expect_error("{% import 'x' as y %}", NULL, "cannot load other templates", "import is refused");
    expect_error("\xff", NULL, "not valid UTF-8", "a template that is not UTF-8");

    /* limits, each small here */
    jinja_limits lim = jinja_default_limits();
    lim.max_steps = 10000;
    expect_error("{% for i in range(100000) %}{{ i }}{% endfor %}", &lim, "steps", "the step limit");
    lim = jinja_default_limits();
    lim.max_depth = 10;
    expect_error("{% macro f(n) %}{{ f(n + 1) }}{% endmacro %}{{ f(0) }}", &lim, "nest deeper than 10", "the macro depth limit");
    lim = jinja_default_limits();
    lim.max_output = 1000;
    expect_error("{% for i in range(1000) %}xx{% endfor %}", &lim, "longer than 1000 bytes", "the output limit");
    expect_error("{% set s = 'x' * 5000 %}", &lim, "longer than 1000 bytes", "the output limit on a built string");
    lim = jinja_default_limits();
    lim.max_memory = 4 << 20;
    expect_error("{% set ns = namespace(l=[1]) %}{% for i in range(40) %}{% set ns.l = ns.l + ns.l %}{% endfor %}", &lim,
                 "more than 4 MiB of values", "the memory limit");
    expect_error("{% set ns = namespace(l=[]) %}{% for i in range(300) %}{% set ns.l = [ns.l] %}{% endfor %}{{ ns.l }}", NULL,
                 "nested too deeply", "printing a deeply nested value");
    char deep[2000];
    size_t k = 0;
    k += (size_t)snprintf(deep + k, sizeof deep - k, "{{ ");
    for (int i = 0; i < 240; i++) deep[k++] = '(';
    deep[k++] = '1';
    for (int i = 0; i < 240; i++) deep[k++] = ')';
    snprintf(deep + k, sizeof deep - k, " }}");
    expect_error(deep, NULL, "too deeply", "deeply nested parentheses");
    /* a long operator chain parses into a deep tree without nesting in the text */
    size_t chain_cap = 40000;
    char *chain = malloc(chain_cap);
    k = (size_t)snprintf(chain, chain_cap, "{{ 'a'");
    for (int i = 0; i < 5000; i++) k += (size_t)snprintf(chain + k, chain_cap - k, " ~ 'a'");
    snprintf(chain + k, chain_cap - k, " }}");
    expect_error(chain, NULL, "too deeply", "a 5000-term operator chain");
    free(chain);
    char nested_ifs[4000];
    k = 0;
    for (int i = 0; i < 300; i++) k += (size_t)snprintf(nested_ifs + k, sizeof nested_ifs - k, "{%% if 1 %%}");
    expect_error(nested_ifs, NULL, "too deeply", "deeply nested statements");
}

static void check_dates(void) {
    struct tm t;
    CHECK(chat_parse_date("2024-02-29", &t) == 0 && t.tm_wday == 4 && t.tm_yday == 59, "2024-02-29 is a Thursday, day 60");
    CHECK(chat_parse_date("2023-02-29", &t) != 0 && chat_parse_date("2024-13-01", &t) != 0 &&
          chat_parse_date("2024-1-01", &t) != 0 && chat_parse_date("2024-01-01x", &t) != 0, "bad dates are refused");
    CHECK(chat_starts_with_bos("<s>[INST]", "<s>") && !chat_starts_with_bos("[INST]", "<s>") && !chat_starts_with_bos("x", ""),
          "starts-with-BOS");
}

int main(void) {
    check_renderings("chat-templates/all/renderings-all.jsonl", "chat-templates/all");
    check_renderings("chat-templates/renderings.jsonl", NULL);
    check_extras();
    check_semantics();
    check_errors();
    check_dates();
    CHECK_EXIT();
}
