/* Chat templates: family recognition of Jinja chat templates and exact C renderings of them.
 *
 * Recognition compares a normalised form of the template with each family's signature: the whole
 * template, except for holes over branches a plain conversation never runs (tools, tool calls,
 * images), which may hold anything that stays inside its branch. Normalising applies Jinja's
 * whitespace control the way transformers configures it (trim_blocks, lstrip_blocks, `-` markers,
 * one trailing newline dropped), drops comments, removes layout whitespace inside tags, writes
 * every string literal in one quoting style and turns x['name'] into x.name. So a template is
 * recognised whatever its indentation or quoting, but not when a piece that shapes the output
 * differs (another default system prompt, another date line, another generation prompt). */
#include "text/chat_template.h"
#include "core/utf8.h"
#include "core/error.h"
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------------------------------------- */
/* growable output string                                                                          */

typedef struct sbuf { char *data; size_t len, cap; bool oom; } sbuf;

static void sb_put(sbuf *b, const char *s, size_t n) {
    if (b->oom) return;
    if (b->len + n + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 256;
        while (cap < b->len + n + 1) cap *= 2;
        char *p = realloc(b->data, cap);
        if (!p) { b->oom = true; return; }
        b->data = p;
        b->cap = cap;
    }
    if (n) memcpy(b->data + b->len, s, n);
    b->len += n;
    b->data[b->len] = '\0';
}
static void sb_str(sbuf *b, const char *s) { sb_put(b, s, strlen(s)); }
static void sb_chr(sbuf *b, char c) { sb_put(b, &c, 1); }

/* ---------------------------------------------------------------------------------------------- */
/* Python string operations the templates use (str.strip() and friends, split, replace)           */

typedef struct span { const char *p; size_t n; } span;

static span span_of(const char *s) { return (span){ s, strlen(s) }; }

/* str.isspace() of one code point: Python's whitespace set, which `trim` and strip() remove. */
static bool py_isspace(uint32_t cp) {
    return (cp >= 0x09 && cp <= 0x0d) || (cp >= 0x1c && cp <= 0x20) || cp == 0x85 || cp == 0xa0 ||
           cp == 0x1680 || (cp >= 0x2000 && cp <= 0x200a) || cp == 0x2028 || cp == 0x2029 ||
           cp == 0x202f || cp == 0x205f || cp == 0x3000;
}

/* str.strip() / lstrip() / rstrip() without arguments (Unicode whitespace); s is valid UTF-8. */
static span py_strip(span s, bool lead, bool trail) {
    uint32_t cp;
    while (lead && s.n) {
        int k = utf8_decode(s.p, s.n, &cp);
        if (k <= 0 || !py_isspace(cp)) break;
        s.p += k;
        s.n -= (size_t)k;
    }
    while (trail && s.n) {
        size_t start = s.n - 1;
        while (start > 0 && ((unsigned char)s.p[start] & 0xc0) == 0x80) start--;
        int k = utf8_decode(s.p + start, s.n - start, &cp);
        if (k <= 0 || (size_t)k != s.n - start || !py_isspace(cp)) break;
        s.n = start;
    }
    return s;
}

/* str.strip('\n') and its one-sided forms. */
static span strip_newlines(span s, bool lead, bool trail) {
    while (lead && s.n && s.p[0] == '\n') { s.p++; s.n--; }
    while (trail && s.n && s.p[s.n - 1] == '\n') s.n--;
    return s;
}

static const char *span_find(span s, const char *needle) {
    return memmem(s.p, s.n, needle, strlen(needle));
}
static const char *span_find_last(span s, const char *needle) {
    size_t k = strlen(needle);
    for (size_t i = s.n >= k ? s.n - k + 1 : 0; i-- > 0;)
        if (memcmp(s.p + i, needle, k) == 0) return s.p + i;
    return NULL;
}
static bool span_starts(span s, const char *prefix) {
    size_t k = strlen(prefix);
    return s.n >= k && memcmp(s.p, prefix, k) == 0;
}
static bool span_ends(span s, const char *suffix) {
    size_t k = strlen(suffix);
    return s.n >= k && memcmp(s.p + s.n - k, suffix, k) == 0;
}
static void sb_span(sbuf *b, span s) { sb_put(b, s.p, s.n); }

/* str.replace(old, new) into a fresh buffer: every non-overlapping occurrence, left to right. */
static void py_replace(sbuf *out, span s, const char *old, const char *repl) {
    size_t k = strlen(old);
    while (s.n) {
        const char *hit = memmem(s.p, s.n, old, k);
        if (!hit) { sb_span(out, s); return; }
        sb_put(out, s.p, (size_t)(hit - s.p));
        sb_str(out, repl);
        s.n -= (size_t)(hit - s.p) + k;
        s.p = hit + k;
    }
}

/* ---------------------------------------------------------------------------------------------- */
/* template normalisation                                                                          */

static bool is_ident_char(char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}
static bool is_jinja_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'; }

/* Parses the string literal at s[*i] (quote char there) into dec; advances *i past it.
 * Returns false when the literal is unterminated. */
static bool read_literal(const char *s, size_t end, size_t *i, sbuf *dec) {
    char q = s[*i];
    size_t j = *i + 1;
    while (j < end && s[j] != q) {
        if (s[j] == '\\' && j + 1 < end) {
            char e = s[j + 1];
            switch (e) {
            case 'n': sb_chr(dec, '\n'); break;
            case 't': sb_chr(dec, '\t'); break;
            case 'r': sb_chr(dec, '\r'); break;
            case '\\': case '\'': case '"': sb_chr(dec, e); break;
            default: sb_chr(dec, '\\'); sb_chr(dec, e); break;
            }
            j += 2;
        } else {
            sb_chr(dec, s[j]);
            j++;
        }
    }
    if (j >= end) return false;
    *i = j + 1;
    return true;
}

static void put_canonical_literal(sbuf *out, const char *s, size_t n) {
    sb_chr(out, '\'');
    for (size_t i = 0; i < n; i++) {
        switch (s[i]) {
        case '\\': sb_str(out, "\\\\"); break;
        case '\'': sb_str(out, "\\'"); break;
        case '\n': sb_str(out, "\\n"); break;
        case '\t': sb_str(out, "\\t"); break;
        case '\r': sb_str(out, "\\r"); break;
        default: sb_chr(out, s[i]);
        }
    }
    sb_chr(out, '\'');
}

static bool is_identifier(const char *s, size_t n) {
    if (n == 0 || (s[0] >= '0' && s[0] <= '9')) return false;
    for (size_t i = 0; i < n; i++) if (!is_ident_char(s[i])) return false;
    return true;
}

/* Writes the inside of a {{ }} or {% %} tag without layout whitespace. False when its brackets
 * do not balance (Jinja would not compile it). */
static bool compact_tag(const char *s, size_t begin, size_t end, sbuf *out) {
    bool space = false;
    char open[64];
    int depth = 0;
    size_t i = begin;
    while (i < end) {
        char c = s[i];
        if (is_jinja_space(c)) { space = true; i++; continue; }
        if (c == '\'' || c == '"') {
            sbuf dec = {0};
            if (!read_literal(s, end, &i, &dec)) { free(dec.data); return false; }
            size_t j = i;
            while (j < end && is_jinja_space(s[j])) j++;
            /* x['name'] is x.name; a '[' after a value is a subscript, elsewhere a list literal. */
            bool subscript = out->len >= 2 && out->data[out->len - 1] == '[' && j < end && s[j] == ']' &&
                             (is_ident_char(out->data[out->len - 2]) || out->data[out->len - 2] == ')' ||
                              out->data[out->len - 2] == ']') &&
                             is_identifier(dec.data ? dec.data : "", dec.len);
            if (subscript) {
                out->data[out->len - 1] = '.';
                sb_put(out, dec.data, dec.len);
                i = j + 1;
                depth--;                      /* the '[' was counted as open */
            } else {
                put_canonical_literal(out, dec.data ? dec.data : "", dec.len);
            }
            free(dec.data);
            space = false;
            continue;
        }
        if (space && out->len && is_ident_char(out->data[out->len - 1]) && is_ident_char(c)) sb_chr(out, ' ');
        space = false;
        if (c == '(' || c == '[' || c == '{') {
            if (depth == (int)sizeof open) return false;
            open[depth++] = c == '(' ? ')' : c == '[' ? ']' : '}';
        } else if (c == ')' || c == ']' || c == '}') {
            if (depth == 0 || open[--depth] != c) return false;
        }
        sb_chr(out, c);
        i++;
    }
    return depth == 0;
}

/* Position of the closing delimiter ("}}" or "%}") of a tag whose body starts at i, skipping
 * string literals; returns 0 when there is none. */
static size_t find_tag_end(const char *s, size_t n, size_t i, char closer) {
    while (i + 1 < n) {
        char c = s[i];
        if (c == '\'' || c == '"') {
            size_t j = i + 1;
            while (j < n && s[j] != c) j += (s[j] == '\\') ? 2 : 1;
            if (j >= n) return 0;
            i = j + 1;
            continue;
        }
        if (c == closer && s[i + 1] == '}') return i;
        i++;
    }
    return 0;
}

/* Text outside tags goes between RAW_BEGIN and RAW_END, so that a '{' written as text right
 * before a tag cannot be read as part of it. */
#define RAW_BEGIN '\x02'
#define RAW_END   '\x03'
static void put_raw(sbuf *out, const char *s, size_t n) {
    if (!n) return;
    sb_chr(out, RAW_BEGIN);
    sb_put(out, s, n);
    sb_chr(out, RAW_END);
}

/* The normalised template (malloc'd), or NULL for a malformed one. */
static char *normalize_template(const char *t) {
    size_t n = strlen(t);
    if (strchr(t, RAW_BEGIN) || strchr(t, RAW_END)) return NULL;
    sbuf out = {0};
    size_t i = 0;
    bool strip_leading_ws = false;    /* previous tag ended with '-' */
    bool trim_one_newline = false;    /* previous tag was a block or comment (trim_blocks) */
    bool at_line_start = true;        /* raw text begins at the start of a line */
    for (;;) {
        /* raw text up to the next tag */
        size_t j = i;
        while (j + 1 < n && !(t[j] == '{' && (t[j + 1] == '{' || t[j + 1] == '%' || t[j + 1] == '#'))) j++;
        bool has_tag = j + 1 < n;
        if (!has_tag) j = n;
        size_t rb = i, re = j;
        if (strip_leading_ws) {
            while (rb < re && is_jinja_space(t[rb])) rb++;
        } else if (trim_one_newline && rb < re && t[rb] == '\n') {
            rb++;
            at_line_start = true;
        }
        if (!has_tag) {
            if (re > rb && t[re - 1] == '\n') re--;           /* keep_trailing_newline=False */
            put_raw(&out, t + rb, re - rb);
            break;
        }
        char kind = t[j + 1];
        size_t body = j + 2;
        char left = body < n ? t[body] : 0;
        if (left == '-') {
            while (re > rb && is_jinja_space(t[re - 1])) re--;
        } else if (left != '+' && kind != '{') {
            /* lstrip_blocks: blanks between the start of a line and a block or comment tag */
            size_t k = re;
            while (k > rb && (t[k - 1] == ' ' || t[k - 1] == '\t')) k--;
            if ((k > rb && t[k - 1] == '\n') || (k == rb && at_line_start)) re = k;
        }
        put_raw(&out, t + rb, re - rb);
        if (left == '-' || left == '+') body++;

        size_t close;
        if (kind == '#') {
            const char *e = strstr(t + body, "#}");
            if (!e) { free(out.data); return NULL; }
            close = (size_t)(e - t);
        } else {
            close = find_tag_end(t, n, body, kind == '{' ? '}' : '%');
            if (!close) { free(out.data); return NULL; }
        }
        char right = close > body ? t[close - 1] : 0;
        size_t body_end = (right == '-' || right == '+') ? close - 1 : close;
        if (kind == '%') {
            /* {% raw %} would make the following tags plain text: not handled */
            size_t k = body;
            while (k < body_end && is_jinja_space(t[k])) k++;
            if (body_end - k >= 3 && strncmp(t + k, "raw", 3) == 0 && (body_end - k == 3 || !is_ident_char(t[k + 3]))) {
                free(out.data);
                return NULL;
            }
        }
        if (kind != '#') {
            sb_str(&out, kind == '{' ? "{{" : "{%");
            if (!compact_tag(t, body, body_end, &out)) { free(out.data); return NULL; }
            sb_str(&out, kind == '{' ? "}}" : "%}");
        }
        strip_leading_ws = right == '-';
        trim_one_newline = kind != '{' && right != '+';
        at_line_start = false;
        i = close + 2;
    }
    if (out.oom) { free(out.data); return NULL; }
    return out.data ? out.data : strdup("");
}

/* ---------------------------------------------------------------------------------------------- */
/* family signatures                                                                               */

#define SMOLLM3_THINK_SYSTEM \
    "You are a helpful AI assistant named SmolLM, trained by Hugging Face. Your role as an " \
    "assistant involves thoroughly exploring questions through a systematic thinking process " \
    "before providing the final precise and accurate solutions. This requires engaging in a " \
    "comprehensive cycle of analysis, summarizing, exploration, reassessment, reflection, " \
    "backtracking, and iteration to develop well-considered thinking process. Please structure " \
    "your response into two main sections: Thought and Solution using the specified format: " \
    "<think> Thought section </think> Solution section. In the Thought section, detail your " \
    "reasoning process in steps. Each step should include detailed considerations such as " \
    "analysing questions, summarizing relevant findings, brainstorming new ideas, verifying the " \
    "accuracy of the current steps, refining any errors, and revisiting previous steps. In the " \
    "Solution section, based on various attempts, explorations, and reflections from the Thought " \
    "section, systematically present the final solution that you deem correct. The Solution " \
    "section should be logical, accurate, and concise and detail necessary steps needed to reach " \
    "the conclusion.\n\n"
#define SMOLLM3_NO_THINK_SYSTEM "You are a helpful AI assistant named SmolLM, trained by Hugging Face.\n\n"

/* A family's signature is its whole template, in pieces that must follow one another exactly.
 * Between two pieces there may be a hole: template code a plain conversation never runs, so it
 * may say anything, as long as it cannot reach live code:
 *   HOLE_DEAD    the body of a branch that never runs (tools, tool calls, reasoning_content,
 *                enable_thinking): balanced blocks, no elif/else of the enclosing block;
 *   HOLE_CHAIN   the remaining elif/else branches of an if whose first branch always runs;
 *   HOLE_MACROS  macro definitions only (Gemma 4's tool formatting), none of them strip_thinking. */
enum { HOLE_NONE, HOLE_DEAD, HOLE_CHAIN, HOLE_MACROS };

typedef struct sig_piece { const char *jinja; int hole_after; } sig_piece;
typedef struct family_signature { int family; sig_piece pieces[16]; } family_signature;

static const family_signature signatures[] = {
    { CHAT_QWEN3, {
      { "{%- if tools %}", HOLE_DEAD },
      { "{%- else %}{%- if messages[0].role == 'system' %}"
        "{{- '<|im_start|>system\\n' + messages[0].content + '<|im_end|>\\n' }}{%- endif %}{%- endif %}"
        "{%- set ns = namespace(multi_step_tool=true, last_query_index=messages|length - 1) %}"
        "{%- for message in messages[::-1] %}{%- set index = (messages|length - 1) - loop.index0 %}"
        "{%- if ns.multi_step_tool and message.role == \"user\" and not(message.content.startswith('<tool_response>')"
        " and message.content.endswith('</tool_response>')) %}{%- set ns.multi_step_tool = false %}"
        "{%- set ns.last_query_index = index %}{%- endif %}{%- endfor %}"
        "{%- for message in messages %}{%- if (message.role == \"user\") or (message.role == \"system\" and not loop.first) %}"
        "{{- '<|im_start|>' + message.role + '\\n' + message.content + '<|im_end|>' + '\\n' }}"
        "{%- elif message.role == \"assistant\" %}{%- set content = message.content %}{%- set reasoning_content = '' %}"
        "{%- if message.reasoning_content is defined and message.reasoning_content is not none %}", HOLE_DEAD },
      { "{%- else %}{%- if '</think>' in message.content %}"
        "{%- set content = message.content.split('</think>')[-1].lstrip('\\n') %}"
        "{%- set reasoning_content = message.content.split('</think>')[0].rstrip('\\n').split('<think>')[-1].lstrip('\\n') %}"
        "{%- endif %}{%- endif %}{%- if loop.index0 > ns.last_query_index %}"
        "{%- if loop.last or (not loop.last and reasoning_content) %}"
        "{{- '<|im_start|>' + message.role + '\\n<think>\\n' + reasoning_content.strip('\\n') + '\\n</think>\\n\\n' + content.lstrip('\\n') }}"
        "{%- else %}{{- '<|im_start|>' + message.role + '\\n' + content }}{%- endif %}"
        "{%- else %}{{- '<|im_start|>' + message.role + '\\n' + content }}{%- endif %}{%- if message.tool_calls %}", HOLE_DEAD },
      { "{%- endif %}{{- '<|im_end|>\\n' }}{%- elif message.role == \"tool\" %}", HOLE_DEAD },
      { "{%- endif %}{%- endfor %}{%- if add_generation_prompt %}{{- '<|im_start|>assistant\\n' }}"
        "{%- if enable_thinking is defined and enable_thinking is false %}", HOLE_DEAD },
      { "{%- endif %}{%- endif %}", HOLE_NONE } } },

    { CHAT_SMOLLM3, {
      { "{%- if enable_thinking is not defined -%}{%- set enable_thinking = true -%}{%- endif -%}"
        "{%- if enable_thinking -%}{%- set reasoning_mode = \"/think\" -%}{%- else -%}"
        "{%- set reasoning_mode = \"/no_think\" -%}{%- endif -%}{{- \"<|im_start|>system\\n\" -}}"
        "{%- if messages[0].role == \"system\" -%}{%- set system_message = messages[0].content -%}"
        "{%- if \"/no_think\" in system_message -%}{%- set reasoning_mode = \"/no_think\" -%}"
        "{%- elif \"/think\" in system_message -%}{%- set reasoning_mode = \"/think\" -%}{%- endif -%}"
        "{%- set custom_instructions = system_message.replace(\"/no_think\", \"\") -%}"
        "{%- set custom_instructions = custom_instructions.replace(\"/think\", \"\") -%}"
        "{%- set custom_instructions = custom_instructions.rstrip() -%}{%- endif -%}"
        "{{- \"## Metadata\\n\\n\" -}}{{- \"Knowledge Cutoff Date: June 2025\\n\" -}}"
        "{{- \"Reasoning Mode: \" + reasoning_mode + \"\\n\\n\" -}}{{- \"## Custom Instructions\\n\\n\" -}}"
        "{%- if custom_instructions -%}{{- custom_instructions + \"\\n\\n\" -}}"
        "{%- elif reasoning_mode == \"/think\" -%}{{- \"" SMOLLM3_THINK_SYSTEM "\" -}}"
        "{%- else -%}{{- \"" SMOLLM3_NO_THINK_SYSTEM "\" -}}{%- endif -%}{{- \"<|im_end|>\\n\" -}}"
        "{%- for message in messages -%}{%- set content = message.content if message.content is string else \"\" -%}"
        "{%- if message.role == \"user\" -%}{{ \"<|im_start|>\" + message.role + \"\\n\" + content + \"<|im_end|>\\n\" }}"
        "{%- elif message.role == \"assistant\" -%}{%- if reasoning_mode == \"/think\" -%}"
        "{{ \"<|im_start|>assistant\\n\" + content.lstrip(\"\\n\") + \"<|im_end|>\\n\" }}{%- else -%}"
        "{{ \"<|im_start|>assistant\\n\" + \"<think>\\n\\n</think>\\n\" + content.lstrip(\"\\n\") + \"<|im_end|>\\n\" }}"
        "{%- endif -%}{%- elif message.role == \"tool\" -%}", HOLE_CHAIN },
      { "{%- endif -%}{%- endfor -%}"
        "{%- if add_generation_prompt -%}{%- if reasoning_mode == \"/think\" -%}{{ \"<|im_start|>assistant\\n\" }}"
        "{%- else -%}{{ \"<|im_start|>assistant\\n\" + \"<think>\\n\\n</think>\\n\" }}{%- endif -%}{%- endif -%}",
        HOLE_NONE } } },

    { CHAT_LLAMA2, {
      { "{% if messages[0]['role'] == 'system' %}{% set loop_messages = messages[1:] %}"
        "{% set system_message = messages[0]['content'] %}{% else %}{% set loop_messages = messages %}"
        "{% set system_message = false %}{% endif %}{% for message in loop_messages %}"
        "{% if (message['role'] == 'user') != (loop.index0 % 2 == 0) %}"
        "{{ raise_exception('Conversation roles must alternate user/assistant/user/assistant/...') }}{% endif %}"
        "{% if loop.index0 == 0 and system_message != false %}"
        "{% set content = '<<SYS>>\\n' + system_message + '\\n<</SYS>>\\n\\n' + message['content'] %}"
        "{% else %}{% set content = message['content'] %}{% endif %}"
        "{% if message['role'] == 'user' %}{{ bos_token + '[INST] ' + content.strip() + ' [/INST]' }}"
        "{% elif message['role'] == 'assistant' %}{{ ' '  + content.strip() + ' ' + eos_token }}{% endif %}{% endfor %}",
        HOLE_NONE } } },

    { CHAT_LLAMA3, {
      { "{{- bos_token }}{%- if custom_tools is defined %}", HOLE_DEAD },
      { "{%- endif %}{%- if not tools_in_user_message is defined %}{%- set tools_in_user_message = true %}{%- endif %}"
        "{%- if not date_string is defined %}{%- if strftime_now is defined %}"
        "{%- set date_string = strftime_now(\"%d %b %Y\") %}{%- else %}{%- set date_string = \"26 Jul 2024\" %}"
        "{%- endif %}{%- endif %}{%- if not tools is defined %}{%- set tools = none %}{%- endif %}"
        "{%- if messages[0]['role'] == 'system' %}{%- set system_message = messages[0]['content']|trim %}"
        "{%- set messages = messages[1:] %}{%- else %}{%- set system_message = \"\" %}{%- endif %}"
        "{{- \"<|start_header_id|>system<|end_header_id|>\\n\\n\" }}{%- if tools is not none %}", HOLE_DEAD },
      { "{%- endif %}{{- \"Cutting Knowledge Date: December 2023\\n\" }}"
        "{{- \"Today Date: \" + date_string + \"\\n\\n\" }}{%- if tools is not none and not tools_in_user_message %}", HOLE_DEAD },
      { "{%- endif %}{{- system_message }}{{- \"<|eot_id|>\" }}{%- if tools_in_user_message and not tools is none %}", HOLE_DEAD },
      { "{%- endif %}{%- for message in messages %}"
        "{%- if not (message.role == 'ipython' or message.role == 'tool' or 'tool_calls' in message) %}"
        "{{- '<|start_header_id|>' + message['role'] + '<|end_header_id|>\\n\\n'+ message['content'] | trim + '<|eot_id|>' }}"
        "{%- elif 'tool_calls' in message %}", HOLE_CHAIN },
      { "{%- endif %}{%- endfor %}{%- if add_generation_prompt %}"
        "{{- '<|start_header_id|>assistant<|end_header_id|>\\n\\n' }}{%- endif %}", HOLE_NONE } } },

    { CHAT_GEMMA2, {
      { "{{ bos_token }}{% if messages[0]['role'] == 'system' %}{{ raise_exception('System role not supported') }}{% endif %}"
        "{% for message in messages %}{% if (message['role'] == 'user') != (loop.index0 % 2 == 0) %}"
        "{{ raise_exception('Conversation roles must alternate user/assistant/user/assistant/...') }}{% endif %}"
        "{% if (message['role'] == 'assistant') %}{% set role = 'model' %}{% else %}{% set role = message['role'] %}{% endif %}"
        "{{ '<start_of_turn>' + role + '\\n' + message['content'] | trim + '<end_of_turn>\\n' }}{% endfor %}"
        "{% if add_generation_prompt %}{{'<start_of_turn>model\\n'}}{% endif %}", HOLE_NONE } } },

    { CHAT_GEMMA, {
      { "{{ bos_token }}{%- if messages[0]['role'] == 'system' -%}{%- if messages[0]['content'] is string -%}"
        "{%- set first_user_prefix = messages[0]['content'] + '\\n\\n' -%}{%- else -%}", HOLE_DEAD },
      { "{%- endif -%}{%- set loop_messages = messages[1:] -%}{%- else -%}{%- set first_user_prefix = \"\" -%}"
        "{%- set loop_messages = messages -%}{%- endif -%}{%- for message in loop_messages -%}"
        "{%- if (message['role'] == 'user') != (loop.index0 % 2 == 0) -%}"
        "{{ raise_exception(\"Conversation roles must alternate user/assistant/user/assistant/...\") }}{%- endif -%}"
        "{%- if (message['role'] == 'assistant') -%}{%- set role = \"model\" -%}{%- else -%}"
        "{%- set role = message['role'] -%}{%- endif -%}"
        "{{ '<start_of_turn>' + role + '\\n' + (first_user_prefix if loop.first else \"\") }}"
        "{%- if message['content'] is string -%}{{ message['content'] | trim }}{%- elif message['content'] is iterable -%}",
        HOLE_CHAIN },
      { "{%- endif -%}{{ '<end_of_turn>\\n' }}{%- endfor -%}"
        "{%- if add_generation_prompt -%}{{'<start_of_turn>model\\n'}}{%- endif -%}", HOLE_NONE } } },

    { CHAT_GEMMA4, {
      { "", HOLE_MACROS },
      { "{%- macro strip_thinking(text) -%}{%- set ns = namespace(result='') -%}"
        "{%- for part in text.split('<channel|>') -%}{%- if '<|channel>' in part -%}"
        "{%- set ns.result = ns.result + part.split('<|channel>')[0] -%}{%- else -%}"
        "{%- set ns.result = ns.result + part -%}{%- endif -%}{%- endfor -%}{{- ns.result | trim -}}{%- endmacro -%}",
        HOLE_MACROS },
      { "{%- set ns = namespace(prev_message_type=None) -%}{%- set loop_messages = messages -%}{{- bos_token -}}"
        "{%- if (enable_thinking is defined and enable_thinking) or tools or messages[0]['role'] in ['system', 'developer'] -%}"
        "{{- '<|turn>system\\n' -}}{%- if enable_thinking is defined and enable_thinking -%}", HOLE_DEAD },
      { "{%- endif -%}{%- if messages[0]['role'] in ['system', 'developer'] -%}{{- messages[0]['content'] | trim -}}"
        "{%- set loop_messages = messages[1:] -%}{%- endif -%}{%- if tools -%}", HOLE_DEAD },
      { "{%- endif -%}{{- '<turn|>\\n' -}}{%- endif %}"
        "{%- set ns_turn = namespace(last_user_idx=-1) -%}{%- for i in range(loop_messages | length) -%}"
        "{%- if loop_messages[i]['role'] == 'user' -%}{%- set ns_turn.last_user_idx = i -%}{%- endif -%}{%- endfor -%}"
        "{%- for message in loop_messages -%}{%- if message['role'] != 'tool' -%}"
        "{%- set ns.prev_message_type = None -%}"
        "{%- set role = 'model' if message['role'] == 'assistant' else message['role'] -%}"
        "{%- set prev_nt = namespace(role=None, found=false) -%}{%- if loop.index0 > 0 -%}"
        "{%- for j in range(loop.index0 - 1, -1, -1) -%}{%- if not prev_nt.found -%}"
        "{%- if loop_messages[j]['role'] != 'tool' -%}{%- set prev_nt.role = loop_messages[j]['role'] -%}"
        "{%- set prev_nt.found = true -%}{%- endif -%}{%- endif -%}{%- endfor -%}{%- endif -%}"
        "{%- set continue_same_model_turn = (role == 'model' and prev_nt.role == 'assistant') -%}"
        "{%- if not continue_same_model_turn -%}{{- '<|turn>' + role + '\\n' }}{%- endif -%}"
        "{%- set thinking_text = message.get('reasoning') or message.get('reasoning_content') -%}"
        "{%- if thinking_text and loop.index0 > ns_turn.last_user_idx and message.get('tool_calls') -%}", HOLE_DEAD },
      { "{%- endif -%}{%- if message['tool_calls'] -%}", HOLE_DEAD },
      { "{%- endif -%}{%- set ns_tr_out = namespace(flag=false) -%}{%- if message.get('tool_responses') -%}", HOLE_CHAIN },
      { "{%- endif -%}{%- if message['content'] is string -%}{%- if role == 'model' -%}"
        "{{- strip_thinking(message['content']) -}}{%- else -%}{{- message['content'] | trim -}}{%- endif -%}"
        "{%- elif message['content'] is sequence -%}", HOLE_CHAIN },
      { "{%- endif -%}"
        "{%- if ns.prev_message_type == 'tool_call' and not ns_tr_out.flag -%}{{- '<|tool_response>' -}}"
        "{%- elif not (ns_tr_out.flag and not message.get('content')) -%}{{- '<turn|>\\n' -}}{%- endif -%}"
        "{%- endif -%}{%- endfor -%}"
        "{%- if add_generation_prompt -%}"
        "{%- if ns.prev_message_type != 'tool_response' and ns.prev_message_type != 'tool_call' -%}"
        "{{- '<|turn>model\\n' -}}{%- if not enable_thinking | default(false) -%}"
        "{{- '<|channel>thought\\n<channel|>' -}}{%- endif -%}{%- endif -%}{%- endif -%}", HOLE_NONE } } },

    /* Plain ChatML: the two common spellings of the whole template. */
    { CHAT_CHATML, {
      { "{% for message in messages %}{{'<|im_start|>' + message['role'] + '\\n' + message['content'] + '<|im_end|>' + '\\n'}}"
        "{% endfor %}{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{% endif %}", HOLE_NONE } } },
    { CHAT_CHATML, {
      { "{% for message in messages %}{{'<|im_start|>' + message['role'] + '\\n' + message['content'] + '<|im_end|>' + '\\n'}}"
        "{% if loop.last and add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{% endif %}{% endfor %}", HOLE_NONE } } },
};

/* The tag at s (normalised text, s[0] == '{'): its kind ('{' or '%'), the keyword of a block tag,
 * and the offset just past it. Returns false when s does not start a tag. */
static bool next_tag(const char *s, size_t n, char *kind, char keyword[16], size_t *end) {
    if (n < 4 || s[0] != '{' || (s[1] != '{' && s[1] != '%')) return false;
    *kind = s[1];
    size_t k = 0, i = 2;
    while (i < n && k < 15 && is_ident_char(s[i])) keyword[k++] = s[i++];
    keyword[k] = '\0';
    char closer = s[1] == '{' ? '}' : '%';
    while (i + 1 < n) {
        if (s[i] == '\'') {                       /* canonical literal: backslash escapes only */
            i++;
            while (i < n && s[i] != '\'') i += s[i] == '\\' ? 2 : 1;
            i++;
            continue;
        }
        if (s[i] == closer && s[i + 1] == '}') { *end = i + 2; return true; }
        i++;
    }
    return false;
}

static bool is_block_opener(const char *kw, const char *tag, size_t len) {
    static const char *const openers[] = { "if", "for", "macro", "call", "filter", "block", "with",
                                           "autoescape", "trans" };
    for (size_t i = 0; i < sizeof openers / sizeof openers[0]; i++) if (strcmp(kw, openers[i]) == 0) return true;
    /* {% set x %}...{% endset %} captures a block; {% set x = ... %} does not */
    return strcmp(kw, "set") == 0 && !memchr(tag, '=', len);
}

/* A cheap syntax check of a tag inside a hole (the pinned pieces are known good): a known
 * statement keyword, and no characters Jinja expressions cannot contain. A template Jinja could
 * not compile must not be rendered as if it worked. */
static bool tag_plausible(char kind, const char *kw, const char *tag, size_t len) {
    static const char *const keywords[] = {
        "if", "elif", "else", "endif", "for", "endfor", "set", "endset", "macro", "endmacro", "call",
        "endcall", "filter", "endfilter", "break", "continue", "do", "with", "endwith", "generation",
        "endgeneration" };
    if (kind == '%') {
        bool known = false;
        for (size_t i = 0; i < sizeof keywords / sizeof keywords[0] && !known; i++) known = strcmp(kw, keywords[i]) == 0;
        if (!known) return false;
    } else if (len <= 4) {
        return false;                                    /* {{}} prints nothing Jinja accepts */
    }
    for (size_t i = 2; i + 2 < len; i++) {
        char c = tag[i];
        if (c == '\'') {
            i++;
            while (i + 2 < len && tag[i] != '\'') i += tag[i] == '\\' ? 2 : 1;
            continue;
        }
        if (c == '#' || c == '\\' || c == ';' || c == '@' || c == '$' || c == '`' || c == '?' || c == '&' || c == '^')
            return false;
    }
    return true;
}

/* Whether hole text h[0..n) (normalised) can stand where a hole of this kind is. */
static bool hole_ok(const char *h, size_t n, int kind) {
    int depth = 0;
    size_t i = 0;
    while (i < n) {
        char tag_kind, kw[16];
        size_t end;
        if (h[i] == RAW_BEGIN) {
            if (kind == HOLE_MACROS && depth == 0) return false;   /* output text between macros */
            const char *e = memchr(h + i, RAW_END, n - i);
            if (!e) return false;
            i = (size_t)(e - h) + 1;
            continue;
        }
        if (!next_tag(h + i, n - i, &tag_kind, kw, &end)) return false;
        const char *tag = h + i;
        i += end;
        if (!tag_plausible(tag_kind, kw, tag, end)) return false;
        if (tag_kind == '{') {
            if (kind == HOLE_MACROS && depth == 0) return false;
            continue;
        }
        if (strncmp(kw, "end", 3) == 0) {
            if (--depth < 0) return false;
        } else if (strcmp(kw, "elif") == 0 || strcmp(kw, "else") == 0) {
            if (depth == 0 && kind != HOLE_CHAIN) return false;
        } else if (is_block_opener(kw, tag, end)) {
            if (depth == 0 && kind == HOLE_MACROS &&
                (strcmp(kw, "macro") != 0 || strncmp(tag + 2, "macro strip_thinking(", 21) == 0))
                return false;
            depth++;
        } else if (depth == 0 && kind == HOLE_MACROS) {
            return false;
        }
    }
    return depth == 0;
}

/* Matches normalised template t against the pieces from index k on, starting at offset pos, the
 * previous piece being followed by a hole of kind hole. */
static bool match_pieces(const char *t, size_t tn, size_t pos, const sig_piece *pieces, int k, int hole) {
    if (k >= 16 || !pieces[k].jinja)
        return hole == HOLE_NONE ? pos == tn : hole_ok(t + pos, tn - pos, hole);
    char *p = normalize_template(pieces[k].jinja);
    if (!p) return false;
    size_t pn = strlen(p);
    bool ok = false;
    if (hole == HOLE_NONE) {
        ok = tn - pos >= pn && memcmp(t + pos, p, pn) == 0 &&
             match_pieces(t, tn, pos + pn, pieces, k + 1, pieces[k].hole_after);
    } else {
        for (const char *q = t + pos; !ok && (q = strstr(q, p)) != NULL; q++)
            ok = hole_ok(t + pos, (size_t)(q - t) - pos, hole) &&
                 match_pieces(t, tn, (size_t)(q - t) + pn, pieces, k + 1, pieces[k].hole_after);
    }
    free(p);
    return ok;
}

int chat_family_detect(const char *template_text) {
    if (!template_text) return CHAT_UNKNOWN;
    char *norm = normalize_template(template_text);
    if (!norm) return CHAT_UNKNOWN;
    int family = CHAT_UNKNOWN;
    for (size_t s = 0; s < sizeof signatures / sizeof signatures[0] && family == CHAT_UNKNOWN; s++)
        if (match_pieces(norm, strlen(norm), 0, signatures[s].pieces, 0, HOLE_NONE)) family = signatures[s].family;
    free(norm);
    return family;
}

/* ---------------------------------------------------------------------------------------------- */
/* family facts                                                                                    */

const char *chat_family_name(int family) {
    switch (family) {
    case CHAT_CHATML:  return "chatml";
    case CHAT_QWEN3:   return "qwen3";
    case CHAT_SMOLLM3: return "smollm3";
    case CHAT_LLAMA2:  return "llama2";
    case CHAT_LLAMA3:  return "llama3";
    case CHAT_GEMMA2:  return "gemma2";
    case CHAT_GEMMA:   return "gemma";
    case CHAT_GEMMA4:  return "gemma4";
    default:           return "unknown";
    }
}

const char *chat_family_end_of_turn(int family) {
    switch (family) {
    case CHAT_CHATML: case CHAT_QWEN3: case CHAT_SMOLLM3: return "<|im_end|>";
    case CHAT_LLAMA3: return "<|eot_id|>";
    case CHAT_GEMMA2: case CHAT_GEMMA: return "<end_of_turn>";
    case CHAT_GEMMA4: return "<turn|>";
    default: return NULL;
    }
}

bool chat_family_emits_bos(int family) {
    return family == CHAT_LLAMA2 || family == CHAT_LLAMA3 || family == CHAT_GEMMA2 ||
           family == CHAT_GEMMA || family == CHAT_GEMMA4;
}

bool chat_starts_with_bos(const char *text, const char *bos_token) {
    if (!text || !bos_token || !*bos_token) return false;
    return strncmp(text, bos_token, strlen(bos_token)) == 0;
}

/* ---------------------------------------------------------------------------------------------- */
/* renderers: each mirrors its template for plain system/user/assistant conversations             */

typedef struct render_ctx {
    sbuf out;
    int family;
    const chat_message *msgs;
    int n;
    const chat_options *opt;
    const char *bos, *eos;
    ts_error *err;
} render_ctx;

static bool role_is(const chat_message *m, const char *role) { return strcmp(m->role, role) == 0; }

static int refuse(render_ctx *c, int index, const char *why) {
    return ts_fail(c->err, "chat template (%s family): message %d (role '%s'): %s",
                   chat_family_name(c->family), index, c->msgs[index].role, why);
}

static void render_chatml(render_ctx *c) {
    for (int i = 0; i < c->n; i++) {
        sb_str(&c->out, "<|im_start|>");
        sb_str(&c->out, c->msgs[i].role);
        sb_str(&c->out, "\n");
        sb_str(&c->out, c->msgs[i].content);
        sb_str(&c->out, "<|im_end|>\n");
    }
    if (c->opt->add_generation_prompt) sb_str(&c->out, "<|im_start|>assistant\n");
}

static void render_qwen3(render_ctx *c) {
    sbuf *o = &c->out;
    const chat_message *m = c->msgs;
    if (role_is(&m[0], "system")) {
        sb_str(o, "<|im_start|>system\n");
        sb_str(o, m[0].content);
        sb_str(o, "<|im_end|>\n");
    }
    /* The last user message that is not a wrapped tool response: assistant turns after it keep
     * their reasoning, earlier ones lose it. */
    int last_query = c->n - 1;
    for (int i = c->n - 1; i >= 0; i--) {
        span s = span_of(m[i].content);
        if (role_is(&m[i], "user") && !(span_starts(s, "<tool_response>") && span_ends(s, "</tool_response>"))) {
            last_query = i;
            break;
        }
    }
    for (int i = 0; i < c->n; i++) {
        if (role_is(&m[i], "user") || (role_is(&m[i], "system") && i > 0)) {
            sb_str(o, "<|im_start|>");
            sb_str(o, m[i].role);
            sb_str(o, "\n");
            sb_str(o, m[i].content);
            sb_str(o, "<|im_end|>\n");
        } else if (role_is(&m[i], "assistant")) {
            span whole = span_of(m[i].content), content = whole, reasoning = { "", 0 };
            if (span_find(whole, "</think>")) {
                const char *last_end = span_find_last(whole, "</think>");
                const char *after = last_end + strlen("</think>");
                content = strip_newlines((span){ after, (size_t)(whole.p + whole.n - after) }, true, false);
                const char *first_end = span_find(whole, "</think>");
                span before = strip_newlines((span){ whole.p, (size_t)(first_end - whole.p) }, false, true);
                const char *open = span_find_last(before, "<think>");
                if (open) {
                    const char *p = open + strlen("<think>");
                    before = (span){ p, (size_t)(before.p + before.n - p) };
                }
                reasoning = strip_newlines(before, true, false);
            }
            if (i > last_query && (i == c->n - 1 || reasoning.n > 0)) {
                sb_str(o, "<|im_start|>assistant\n<think>\n");
                sb_span(o, strip_newlines(reasoning, true, true));
                sb_str(o, "\n</think>\n\n");
                sb_span(o, strip_newlines(content, true, false));
            } else {
                sb_str(o, "<|im_start|>assistant\n");
                sb_span(o, content);
            }
            sb_str(o, "<|im_end|>\n");
        }
    }
    if (c->opt->add_generation_prompt) sb_str(o, "<|im_start|>assistant\n");
}

static int render_smollm3(render_ctx *c) {
    sbuf *o = &c->out;
    const chat_message *m = c->msgs;
    for (int i = 1; i < c->n; i++)
        if (role_is(&m[i], "system")) return refuse(c, i, "the template ignores system messages after the first");
    bool think = true;            /* enable_thinking is not passed, so it defaults to true */
    sbuf custom = {0};
    if (role_is(&m[0], "system")) {
        span sys = span_of(m[0].content);
        if (span_find(sys, "/no_think")) think = false;
        else if (span_find(sys, "/think")) think = true;
        sbuf tmp = {0};
        py_replace(&tmp, sys, "/no_think", "");
        py_replace(&custom, (span){ tmp.data ? tmp.data : "", tmp.len }, "/think", "");
        free(tmp.data);
        if (tmp.oom) o->oom = true;
    }
    span instructions = py_strip((span){ custom.data ? custom.data : "", custom.len }, false, true);
    sb_str(o, "<|im_start|>system\n## Metadata\n\nKnowledge Cutoff Date: June 2025\nReasoning Mode: ");
    sb_str(o, think ? "/think" : "/no_think");
    sb_str(o, "\n\n## Custom Instructions\n\n");
    if (instructions.n) {
        sb_span(o, instructions);
        sb_str(o, "\n\n");
    } else {
        sb_str(o, think ? SMOLLM3_THINK_SYSTEM : SMOLLM3_NO_THINK_SYSTEM);
    }
    if (custom.oom) o->oom = true;
    free(custom.data);
    sb_str(o, "<|im_end|>\n");
    for (int i = 0; i < c->n; i++) {
        if (role_is(&m[i], "user")) {
            sb_str(o, "<|im_start|>user\n");
            sb_str(o, m[i].content);
            sb_str(o, "<|im_end|>\n");
        } else if (role_is(&m[i], "assistant")) {
            sb_str(o, think ? "<|im_start|>assistant\n" : "<|im_start|>assistant\n<think>\n\n</think>\n");
            sb_span(o, strip_newlines(span_of(m[i].content), true, false));
            sb_str(o, "<|im_end|>\n");
        }
    }
    if (c->opt->add_generation_prompt)
        sb_str(o, think ? "<|im_start|>assistant\n" : "<|im_start|>assistant\n<think>\n\n</think>\n");
    return 0;
}

/* Gemma 2/3 and Llama 2 templates raise unless the turns after the system message alternate
 * user, assistant, user, ... */
static int check_alternation(render_ctx *c, int start) {
    for (int i = start; i < c->n; i++) {
        const char *want = (i - start) % 2 == 0 ? "user" : "assistant";
        if (!role_is(&c->msgs[i], want))
            return refuse(c, i, "the template requires turns alternating user/assistant, starting with user (after an optional system message)");
    }
    return 0;
}

static int render_llama2(render_ctx *c) {
    sbuf *o = &c->out;
    const chat_message *m = c->msgs;
    int start = role_is(&m[0], "system") ? 1 : 0;
    if (check_alternation(c, start)) return -1;
    for (int i = start; i < c->n; i++) {
        sbuf content = {0};
        if (i == start && start == 1) {
            sb_str(&content, "<<SYS>>\n");
            sb_str(&content, m[0].content);
            sb_str(&content, "\n<</SYS>>\n\n");
        }
        sb_str(&content, m[i].content);
        if (content.oom) o->oom = true;
        span text = py_strip((span){ content.data ? content.data : "", content.len }, true, true);
        if (role_is(&m[i], "user")) {
            sb_str(o, c->bos);
            sb_str(o, "[INST] ");
            sb_span(o, text);
            sb_str(o, " [/INST]");
        } else {
            sb_str(o, " ");
            sb_span(o, text);
            sb_str(o, " ");
            sb_str(o, c->eos);
        }
        free(content.data);
    }
    return 0;      /* the template has no generation prompt: "[/INST]" already ends the prompt */
}

/* strftime("%d %b %Y") in the C locale, which is what the template's strftime_now prints. */
static void format_date(const struct tm *t, char out[32]) {
    static const char *const months[12] = { "Jan", "Feb", "Mar", "Apr", "May", "Jun",
                                            "Jul", "Aug", "Sep", "Oct", "Nov", "Dec" };
    int mon = t->tm_mon >= 0 && t->tm_mon < 12 ? t->tm_mon : 0;
    snprintf(out, 32, "%02d %s %d", t->tm_mday, months[mon], t->tm_year + 1900);
}

static void render_llama3(render_ctx *c) {
    sbuf *o = &c->out;
    const chat_message *m = c->msgs;
    struct tm now_tm;
    const struct tm *today = c->opt->today;
    if (!today) {
        time_t now = time(NULL);
        today = localtime_r(&now, &now_tm);
        if (!today) { memset(&now_tm, 0, sizeof now_tm); now_tm.tm_mday = 1; now_tm.tm_year = 70; today = &now_tm; }
    }
    char date[32];
    format_date(today, date);
    int start = role_is(&m[0], "system") ? 1 : 0;
    sb_str(o, c->bos);
    sb_str(o, "<|start_header_id|>system<|end_header_id|>\n\nCutting Knowledge Date: December 2023\nToday Date: ");
    sb_str(o, date);
    sb_str(o, "\n\n");
    if (start) sb_span(o, py_strip(span_of(m[0].content), true, true));
    sb_str(o, "<|eot_id|>");
    for (int i = start; i < c->n; i++) {
        sb_str(o, "<|start_header_id|>");
        sb_str(o, m[i].role);
        sb_str(o, "<|end_header_id|>\n\n");
        sb_span(o, py_strip(span_of(m[i].content), true, true));
        sb_str(o, "<|eot_id|>");
    }
    if (c->opt->add_generation_prompt) sb_str(o, "<|start_header_id|>assistant<|end_header_id|>\n\n");
}

static int render_gemma(render_ctx *c, bool system_allowed) {
    sbuf *o = &c->out;
    const chat_message *m = c->msgs;
    int start = 0;
    if (role_is(&m[0], "system")) {
        if (!system_allowed) return refuse(c, 0, "the template has no system role");
        start = 1;
    }
    if (check_alternation(c, start)) return -1;
    sb_str(o, c->bos);
    for (int i = start; i < c->n; i++) {
        sb_str(o, role_is(&m[i], "assistant") ? "<start_of_turn>model\n" : "<start_of_turn>user\n");
        if (i == start && start == 1) {
            sb_str(o, m[0].content);      /* the system prompt, untrimmed, opens the first turn */
            sb_str(o, "\n\n");
        }
        sb_span(o, py_strip(span_of(m[i].content), true, true));
        sb_str(o, "<end_of_turn>\n");
    }
    if (c->opt->add_generation_prompt) sb_str(o, "<start_of_turn>model\n");
    return 0;
}

/* Gemma 4's strip_thinking: drop every "<|channel>...<channel|>" thought span, then trim. */
static void gemma4_strip_thinking(sbuf *o, span text) {
    sbuf kept = {0};
    const char *close = "<channel|>", *open = "<|channel>";
    for (;;) {
        const char *end = memmem(text.p, text.n, close, strlen(close));
        span part = { text.p, end ? (size_t)(end - text.p) : text.n };
        const char *thought = span_find(part, open);
        if (thought) part.n = (size_t)(thought - part.p);
        sb_span(&kept, part);
        if (!end) break;
        size_t skip = (size_t)(end - text.p) + strlen(close);
        text.p += skip;
        text.n -= skip;
    }
    if (kept.oom) o->oom = true;
    sb_span(o, py_strip((span){ kept.data ? kept.data : "", kept.len }, true, true));
    free(kept.data);
}

static void render_gemma4(render_ctx *c) {
    sbuf *o = &c->out;
    const chat_message *m = c->msgs;
    int start = 0;
    sb_str(o, c->bos);
    if (role_is(&m[0], "system")) {
        sb_str(o, "<|turn>system\n");
        sb_span(o, py_strip(span_of(m[0].content), true, true));
        sb_str(o, "<turn|>\n");
        start = 1;
    }
    for (int i = start; i < c->n; i++) {
        bool model = role_is(&m[i], "assistant");
        /* consecutive assistant messages continue one model turn */
        bool continues = model && i > start && role_is(&m[i - 1], "assistant");
        if (!continues) {
            sb_str(o, "<|turn>");
            sb_str(o, model ? "model" : m[i].role);
            sb_str(o, "\n");
        }
        if (model) gemma4_strip_thinking(o, span_of(m[i].content));
        else sb_span(o, py_strip(span_of(m[i].content), true, true));
        sb_str(o, "<turn|>\n");
    }
    if (c->opt->add_generation_prompt) sb_str(o, "<|turn>model\n<|channel>thought\n<channel|>");
}

int chat_render(int family, const chat_message *msgs, int n, const chat_options *opt,
                char **out, ts_error *err) {
    *out = NULL;
    if (family <= CHAT_UNKNOWN || family >= CHAT_FAMILY_COUNT)
        return ts_fail(err, "chat template: the template is not one of the supported families");
    if (n <= 0 || !msgs) return ts_fail(err, "chat template: the conversation has no messages");
    for (int i = 0; i < n; i++) {
        if (!msgs[i].role || !msgs[i].content)
            return ts_fail(err, "chat template: message %d has no role or no content", i);
        if (!role_is(&msgs[i], "system") && !role_is(&msgs[i], "user") && !role_is(&msgs[i], "assistant")) {
            /* the role comes from the user's file: keep the message one printable line */
            char shown[44];
            size_t k = 0;
            for (const char *r = msgs[i].role; *r && k < 40; r++, k++)
                shown[k] = (unsigned char)*r < 0x20 || *r == 0x7f ? '?' : *r;
            snprintf(shown + k, sizeof shown - k, "%s", msgs[i].role[k] ? "..." : "");
            return ts_fail(err, "chat template: message %d has role '%s'; only system, user and assistant are supported",
                           i, shown);
        }
        size_t bad;
        if (!utf8_valid(msgs[i].content, strlen(msgs[i].content), &bad))
            return ts_fail(err, "chat template: message %d content is not valid UTF-8 (byte %zu)", i, bad);
    }
    chat_options defaults = {0};
    render_ctx c = { .family = family, .msgs = msgs, .n = n, .opt = opt ? opt : &defaults, .err = err };
    c.bos = c.opt->bos_token ? c.opt->bos_token : "";
    c.eos = c.opt->eos_token ? c.opt->eos_token : "";
    int rc = 0;
    switch (family) {
    case CHAT_CHATML:  render_chatml(&c); break;
    case CHAT_QWEN3:   render_qwen3(&c); break;
    case CHAT_SMOLLM3: rc = render_smollm3(&c); break;
    case CHAT_LLAMA2:  rc = render_llama2(&c); break;
    case CHAT_LLAMA3:  render_llama3(&c); break;
    case CHAT_GEMMA2:  rc = render_gemma(&c, false); break;
    case CHAT_GEMMA:   rc = render_gemma(&c, true); break;
    case CHAT_GEMMA4:  render_gemma4(&c); break;
    }
    if (rc == 0 && c.out.oom) rc = ts_fail(err, "chat template: out of memory");
    if (rc != 0) {
        free(c.out.data);
        return -1;
    }
    *out = c.out.data ? c.out.data : strdup("");
    if (!*out) return ts_fail(err, "chat template: out of memory");
    return 0;
}
