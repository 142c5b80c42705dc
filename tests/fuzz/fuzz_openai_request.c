/* libFuzzer: an OpenAI request body to the engine's request options (openai_parse_body in
 * src/cli/openai.c, through request_parse_messages / _tokens / _settings in src/cli/request.c).
 * Byte 0 picks the endpoint (even: /v1/chat/completions, odd: /v1/completions); the rest is the
 * JSON body. What is accepted must be something the engine can run: n in [1, OPENAI_MAX_N],
 * logprobs in [0, 1 + TS_MAX_TOP_LOGPROBS], at most REQUEST_MAX_STOP non-empty NUL-free stop
 * strings, a prompt (token ids >= 0, or messages with a role and a content), sampling parameters
 * ts_sampler_new accepts. What is refused has a non-empty one-line message. */
#include "fuzz_common.h"
#include "cli/openai.h"
#include "cli/request.h"
#include "io/json.h"

int LLVMFuzzerInitialize(int *argc, char ***argv) { (void)argc; (void)argv; return 0; }

/* The JSON string (in body's "stop") that s is, or NULL. */
static const json_value *stop_item(const json_value *body, const char *s) {
    const json_value *v = json_get(body, "stop");
    if (!v) return NULL;
    if (v->type == JSON_STRING) return v->str == s ? v : NULL;
    for (size_t i = 0; v->type == JSON_ARRAY && i < v->n; i++)
        if (v->items[i].type == JSON_STRING && v->items[i].str == s) return &v->items[i];
    return NULL;
}

static void fail(const char *what, const ts_error *err) {
    fprintf(stderr, "fuzz_openai_request: %s%s%s\n", what, err ? ": " : "", err ? err->msg : "");
    abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size < 1) return 0;
    int api = data[0] & 1 ? OPENAI_COMPLETIONS : OPENAI_CHAT;
    json_value *body;
    ts_error err = { { 0 } };
    if (json_parse((const char *)data + 1, size - 1, &body, &err) != 0) return 0;

    request_fields f = { 0 };
    f.max_tokens = -1;
    f.sampling = ts_sampler_default_params();
    openai_options x;
    memset(&x, 0xa5, sizeof x);   /* openai_parse_body must set every field */
    err.msg[0] = 0;
    if (openai_parse_body(body, api, &f, &x, &err) != 0) {
        size_t len = strnlen(err.msg, sizeof err.msg);
        if (len == 0 || len == sizeof err.msg) fail("refused without a message", NULL);
        if (strchr(err.msg, '\n') || strchr(err.msg, '\r')) fail("refusal of more than one line", &err);
    } else {
        if (x.n < 1 || x.n > OPENAI_MAX_N) fail("n out of range", NULL);
        if (x.logprobs < 0 || x.logprobs > 1 + TS_MAX_TOP_LOGPROBS) fail("logprobs out of range", NULL);
        if (api == OPENAI_COMPLETIONS && x.logprobs > 1 + 5) fail("completion logprobs above 5", NULL);
        if (x.include_usage != 0 && x.include_usage != 1) fail("include_usage not set", NULL);
        if (x.stream != 0 && x.stream != 1) fail("stream not set", NULL);
        if (x.model) (void)strlen(x.model);
        if (f.n_stop < 0 || f.n_stop > REQUEST_MAX_STOP) fail("n_stop out of range", NULL);
        for (int i = 0; i < f.n_stop; i++) {
            const char *s = f.stop[i];
            if (!s || !*s) fail("an empty stop string", NULL);
            /* NUL-free: the JSON string it points to is as long as strlen says */
            const json_value *item = stop_item(body, s);
            if (!item) fail("a stop string that is not in the body's \"stop\"", NULL);
            if (strlen(s) != item->len) fail("a stop string holding a NUL byte", NULL);
        }
        if (f.tokens) {
            if (f.n_tokens <= 0) fail("token prompt without tokens", NULL);
            if (f.n_msgs) fail("both token ids and messages", NULL);
            for (int i = 0; i < f.n_tokens; i++)
                if (f.tokens[i] < 0) fail("a negative token id", NULL);
        } else {
            if (f.n_msgs <= 0) fail("accepted without a prompt", NULL);
            for (int i = 0; i < f.n_msgs; i++) {
                if (!f.msgs[i].role || !f.msgs[i].content) fail("a message without role or content", NULL);
                (void)strlen(f.msgs[i].role);
                (void)strlen(f.msgs[i].content);
            }
        }
        if (api == OPENAI_CHAT && (f.raw || f.tokens)) fail("a chat request taken as a raw prompt", NULL);
        ts_sampler *s = NULL;
        ts_error serr;
        if (ts_sampler_new(&f.sampling, 32, &s, &serr) != 0) fail("accepted sampling the sampler refuses", &serr);
        ts_sampler_free(s);
        if (f.max_tokens < -1) fail("max_tokens below -1", NULL);
    }
    request_fields_free(&f);
    json_free(body);
    return 0;
}
