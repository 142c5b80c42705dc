/* libFuzzer: the Jinja interpreter on arbitrary template text and variables. Byte 0: flags
 * (bit 0: add_generation_prompt, bit 1: also pass tools); then parts split at FUZZ_PART_MARK:
 * the template, then a JSON object whose members become variables (messages, tools, anything;
 * a part that is not JSON leaves a short default conversation). Renders under small limits, so
 * hostile templates (endless loops, recursion, blow-ups) must stop with an error quickly.
 * Checks: errors are one line; a rendering is valid UTF-8. */
#include "fuzz_common.h"
#include "template/chat_template.h"
#include "template/jinja.h"
#include "core/utf8.h"

int LLVMFuzzerInitialize(int *argc, char ***argv) { (void)argc; (void)argv; return 0; }

static const char default_vars[] =
    "{\"messages\": [{\"role\": \"system\", \"content\": \"Be terse.\"}, {\"role\": \"user\", \"content\": \"Hi \\u00e9\"},"
    " {\"role\": \"assistant\", \"content\": \"<think>\\nhm\\n</think>\\n\\nHello!\"}, {\"role\": \"user\", \"content\": \"again\"}],"
    " \"tools\": [{\"type\": \"function\", \"function\": {\"name\": \"f\", \"parameters\": {\"type\": \"object\","
    " \"properties\": {\"a\": {\"type\": \"string\"}}, \"required\": [\"a\"]}}}]}";

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size < 1) return 0;
    const uint8_t ctl = data[0];
    fuzz_part parts[2];
    int np = fuzz_split(data + 1, size - 1, parts, 2);
    char *tmpl = malloc(parts[0].len + 1);
    memcpy(tmpl, parts[0].data, parts[0].len);
    tmpl[parts[0].len] = 0;

    ts_error err;
    json_value *vars = NULL;
    if (np < 2 || json_parse((const char *)parts[1].data, parts[1].len, &vars, &err) != 0 || vars->type != JSON_OBJECT) {
        json_free(vars);
        if (json_parse(default_vars, strlen(default_vars), &vars, &err) != 0) abort();
    }
    const json_value *messages = json_get(vars, "messages");
    json_value empty = { .type = JSON_ARRAY };
    chat_vars v = { .messages = messages && messages->type == JSON_ARRAY ? messages : &empty,
                    .add_generation_prompt = ctl & 1, .bos_token = "<s>", .eos_token = "</s>",
                    .tools = (ctl & 2) ? json_get(vars, "tools") : NULL, .kwargs = vars };
    if (v.tools && v.tools->type != JSON_ARRAY) v.tools = NULL;
    jinja_limits lim = { .max_steps = 200000, .max_depth = 32, .max_output = 1 << 20, .max_memory = 64 << 20 };
    struct tm day = { .tm_year = 126, .tm_mon = 10, .tm_mday = 30, .tm_wday = 1, .tm_yday = 333 };
    char *out = NULL;
    if (chat_render(tmpl, &v, &day, &lim, &out, &err) == 0) {
        if (!utf8_valid(out, strlen(out), NULL)) { fprintf(stderr, "rendering is not UTF-8\n"); abort(); }
        free(out);
    } else if (strchr(err.msg, '\n')) {
        fprintf(stderr, "multi-line error: %s\n", err.msg);
        abort();
    }
    json_free(vars);
    free(tmpl);
    return 0;
}
