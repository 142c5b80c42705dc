/* libFuzzer: chat template recognition on arbitrary template text, and rendering of fuzzed
 * conversations. Byte 0: the family to render (0: the one recognised) and add_generation_prompt;
 * then parts split at FUZZ_PART_MARK: the template, then role, content, role, content, ...
 * A one-byte role part stands for system / user / assistant / tool (so the fuzzer reaches the
 * renderers quickly); a longer one is the role text itself. */
#include "fuzz_common.h"
#include "text/chat_template.h"

#define MAX_MSGS 8

static char *dup_part(fuzz_part p) {
    char *s = malloc(p.len + 1);
    memcpy(s, p.data, p.len);
    s[p.len] = 0;
    return s;
}

int LLVMFuzzerInitialize(int *argc, char ***argv) { (void)argc; (void)argv; return 0; }

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size < 1) return 0;
    const uint8_t ctl = data[0];
    fuzz_part parts[1 + 2 * MAX_MSGS];
    int np = fuzz_split(data + 1, size - 1, parts, 1 + 2 * MAX_MSGS);
    char *tmpl = dup_part(parts[0]);
    int family = chat_family_detect(tmpl);
    if (family < CHAT_UNKNOWN || family >= CHAT_FAMILY_COUNT) abort();
    volatile size_t sink = strlen(chat_family_name(family));
    const char *eot = chat_family_end_of_turn(family);
    if (eot) sink += strlen(eot);
    (void)sink;
    if (ctl & 0x0f) family = (ctl & 0x0f) % CHAT_FAMILY_COUNT;

    static const char *roles[4] = { "system", "user", "assistant", "tool" };
    chat_message msgs[MAX_MSGS];
    char *owned[2 * MAX_MSGS];
    int n_owned = 0, n = 0;
    for (int i = 1; i + 1 < np && n < MAX_MSGS; i += 2, n++) {
        const char *role;
        if (parts[i].len == 1) role = roles[parts[i].data[0] % 4];
        else role = owned[n_owned++] = dup_part(parts[i]);
        msgs[n].role = role;
        msgs[n].content = owned[n_owned++] = dup_part(parts[i + 1]);
    }
    struct tm today = { .tm_year = 126, .tm_mon = 0, .tm_mday = 31 };
    chat_options opt = { .add_generation_prompt = ctl & 0x10, .bos_token = ctl & 0x20 ? "<s>" : NULL,
                         .eos_token = ctl & 0x40 ? "</s>" : NULL, .today = &today };
    char *out;
    ts_error err;
    if (chat_render(family, msgs, n, &opt, &out, &err) == 0) {
        chat_starts_with_bos(out, opt.bos_token ? opt.bos_token : "");
        free(out);
    } else if (strchr(err.msg, '\n')) {
        fprintf(stderr, "multi-line error: %s\n", err.msg);
        abort();
    }
    for (int i = 0; i < n_owned; i++) free(owned[i]);
    free(tmpl);
    return 0;
}
