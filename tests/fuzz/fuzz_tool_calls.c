/* libFuzzer: the tool-call parser (template/tool_calls.h) on generated text. Byte 0 picks the format
 * (modulo the table's rows), byte 1's low bit hands it a tool list (so XML values go by schema types),
 * the rest is the text. Checks: a parse gives calls with a name, an id and arguments that are a JSON
 * object, content no longer than the text (the text itself when there is no call), the same ids for
 * the same seed; a refusal is one non-empty line; the safe prefix is within the text and holds no call
 * (parsing it alone finds none). */
#include "fuzz_common.h"
#include "template/tool_calls.h"
#include "io/json.h"

static json_value *tools;

int LLVMFuzzerInitialize(int *argc, char ***argv) {
    (void)argc; (void)argv;
    static const char t[] =
        "[{\"type\": \"function\", \"function\": {\"name\": \"get_weather\", \"parameters\": {\"type\": \"object\", \"properties\":"
        " {\"city\": {\"type\": \"string\"}, \"days\": {\"type\": \"integer\"}, \"zip\": {\"type\": [\"string\", \"null\"]}}}}},"
        " {\"type\": \"function\", \"function\": {\"name\": \"get_time\", \"parameters\": {\"type\": \"object\", \"properties\":"
        " {\"tz\": {\"type\": \"string\"}, \"fields\": {\"type\": \"array\"}}}}}]";
    ts_error err;
    if (json_parse(t, sizeof t - 1, &tools, &err) != 0) abort();
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size < 2) return 0;
    const tool_format *f = tool_format_at(data[0] % tool_format_count());
    const json_value *tl = (data[1] & 1) ? tools : NULL;
    const char *text = (const char *)data + 2;
    size_t len = size - 2;
    tool_calls tc, again;
    ts_error err = {{0}};
    if (tool_calls_parse(f, text, len, tl, 99, &tc, &err) != 0) {
        if (!err.msg[0] || strchr(err.msg, '\n')) { fprintf(stderr, "bad error: '%s'\n", err.msg); abort(); }
        if (tc.n != 0 || tc.calls || tc.content) abort();
    } else {
        if (!tc.content || tc.content_len > len || tc.content[tc.content_len] != 0) abort();
        if (tc.n == 0 && strcmp(tool_format_start_marker(f), "") != 0 &&
            (tc.content_len != len || memcmp(tc.content, text, len) != 0)) {
            fprintf(stderr, "no call, but the content is not the text\n");
            abort();
        }
        for (int i = 0; i < tc.n; i++) {
            const tool_call *c = &tc.calls[i];
            if (!c->id || !c->name || !c->name[0] || !c->arguments) abort();
            json_value *v;
            if (json_parse(c->arguments, strlen(c->arguments), &v, &err) != 0 || v->type != JSON_OBJECT) {
                fprintf(stderr, "arguments are not a JSON object: %s\n", c->arguments);
                abort();
            }
            json_free(v);
        }
        if (tool_calls_parse(f, text, len, tl, 99, &again, &err) != 0 || again.n != tc.n) abort();
        for (int i = 0; i < tc.n; i++)
            if (strcmp(tc.calls[i].id, again.calls[i].id) || strcmp(tc.calls[i].arguments, again.calls[i].arguments)) abort();
        tool_calls_free(&again);
        tool_calls_free(&tc);
    }
    size_t safe = tool_calls_safe_prefix(f, text, len);
    if (safe > len) abort();
    if (safe > 0) {
        if (tool_calls_parse(f, text, safe, tl, 99, &tc, &err) != 0 || tc.n != 0) {
            fprintf(stderr, "the safe prefix (%zu of %zu bytes) holds a call or a malformed one\n", safe, len);
            abort();
        }
        tool_calls_free(&tc);
    }
    return 0;
}
