/* OpenAI request bodies to the engine's request options (openai_parse_body, src/cli/openai.c, with
 * src/cli/request.c): each field to its option, ranges, null as the default, unknown fields ignored,
 * refusals naming the key on one line. */
#include "check.h"
#include "text/grammar.h"
#include "cli/openai.h"
#include "cli/request.h"
#include "io/json.h"
#include <math.h>
#include <stdbool.h>
#include <string.h>

typedef struct parsed {
    int rc;
    request_fields f;
    openai_options x;
    ts_error err;
    json_value *body;
} parsed;

static const ts_sampler_params *defaults(void) {
    static ts_sampler_params d;
    static bool set;
    if (!set) { d = ts_sampler_default_params(); set = true; }
    return &d;
}

/* Parses text as a body for api into p (f's defaults as the server sets them). */
static int parse(parsed *p, int api, const char *text) {
    memset(p, 0, sizeof *p);
    p->f.max_tokens = -1;
    p->f.sampling = *defaults();
    if (json_parse(text, strlen(text), &p->body, &p->err) != 0) {
        printf("# bad test JSON: %s: %s\n", p->err.msg, text);
        p->body = NULL;
        return p->rc = -2;
    }
    p->rc = openai_parse_body(p->body, api, &p->f, &p->x, &p->err);
    return p->rc;
}

static void done(parsed *p) {
    request_fields_free(&p->f);
    json_free(p->body);
    p->body = NULL;
}

static bool one_line(const char *s) { return *s && !strchr(s, '\n') && !strchr(s, '\r'); }

#define CHAT_HI "\"messages\": [{\"role\": \"user\", \"content\": \"hi\"}]"

/* Refused, the message one line naming key (with quotes; "" for none) and holding want (if given). */
static void refused(int api, const char *body, const char *key, const char *want, const char *what) {
    parsed p;
    parse(&p, api, body);
    char quoted[128];
    snprintf(quoted, sizeof quoted, "\"%s\"", key);
    bool named = !*key || strstr(p.err.msg, quoted) != NULL;   /* "": no key to name (the body, a part) */
    CHECK(p.rc == -1 && one_line(p.err.msg) && named && (!want || strstr(p.err.msg, want)),
          "refused: %s (message names %s, one line: %s)", what, quoted, p.rc == -1 ? p.err.msg : "accepted");
    done(&p);
}

/* Accepted (the options then checked by the caller through p). */
static bool accepted(parsed *p, int api, const char *body) {
    if (parse(p, api, body) != 0) { printf("# refused: %s\n", p->err.msg); return false; }
    return true;
}

static void test_defaults_and_unknown(void) {
    parsed p;
    bool ok = accepted(&p, OPENAI_CHAT, "{" CHAT_HI ", \"frequency_penalty\": 0, \"presence_penalty\": 0, "
                       "\"user\": \"u\", \"metadata\": {\"a\": 1}, \"store\": false, \"x-anything\": [1, 2]}");
    const ts_sampler_params *d = defaults();
    CHECK(ok && p.x.n == 1 && !p.x.stream && !p.x.include_usage && p.x.logprobs == 0 && !p.x.model &&
          p.f.max_tokens == -1 && p.f.n_stop == 0 && !p.f.own_seed && !p.f.tokens && !p.f.raw &&
          !memcmp(&p.f.sampling, d, sizeof *d), "chat: absent fields keep the defaults, unknown fields are ignored");
    done(&p);

    ok = accepted(&p, OPENAI_CHAT, "{" CHAT_HI ", \"model\": null, \"n\": null, \"stream\": null, \"stream_options\": null, "
                  "\"logprobs\": null, \"top_logprobs\": null, \"max_tokens\": null, \"max_completion_tokens\": null, "
                  "\"temperature\": null, \"top_p\": null, \"top_k\": null, \"min_p\": null, \"repeat_penalty\": null, "
                  "\"seed\": null, \"stop\": null, \"ignore_eos\": null, \"echo\": null, \"tools\": null, \"tool_choice\": null, "
                  "\"response_format\": null, \"logit_bias\": null, \"functions\": null}");
    CHECK(ok && p.x.n == 1 && !p.x.stream && p.x.logprobs == 0 && !p.x.model && p.f.max_tokens == -1 &&
          p.f.n_stop == 0 && !p.f.own_seed && !p.f.ignore_eos && !memcmp(&p.f.sampling, d, sizeof *d),
          "chat: null means the default for every field (also tools, response_format)");
    done(&p);

    ok = accepted(&p, OPENAI_COMPLETIONS, "{\"prompt\": \"x\", \"logprobs\": null, \"max_tokens\": null, \"n\": null, "
                  "\"suffix\": null, \"echo\": false, \"best_of\": 1}");
    CHECK(ok && p.x.logprobs == 0 && p.f.max_tokens == -1 && p.x.n == 1, "completions: null means the default");
    done(&p);

    refused(OPENAI_CHAT, "[1]", "", "JSON object", "a body that is not an object");
}

static void test_max_tokens(void) {
    parsed p;
    bool ok = accepted(&p, OPENAI_CHAT, "{" CHAT_HI ", \"max_tokens\": 12}");
    CHECK(ok && p.f.max_tokens == 12, "max_tokens 12 -> max_tokens 12");
    done(&p);
    ok = accepted(&p, OPENAI_CHAT, "{" CHAT_HI ", \"max_completion_tokens\": 7}");
    CHECK(ok && p.f.max_tokens == 7, "max_completion_tokens 7 -> max_tokens 7");
    done(&p);
    ok = accepted(&p, OPENAI_CHAT, "{" CHAT_HI ", \"max_tokens\": 100, \"max_completion_tokens\": 5}");
    bool a = ok && p.f.max_tokens == 5;
    done(&p);
    ok = accepted(&p, OPENAI_CHAT, "{" CHAT_HI ", \"max_completion_tokens\": 5, \"max_tokens\": 100}");
    CHECK(a && ok && p.f.max_tokens == 5, "max_completion_tokens wins over max_tokens (either order)");
    done(&p);
    ok = accepted(&p, OPENAI_CHAT, "{" CHAT_HI ", \"max_completion_tokens\": null, \"max_tokens\": 9}");
    CHECK(ok && p.f.max_tokens == 9, "a null max_completion_tokens leaves max_tokens to decide");
    done(&p);
    ok = accepted(&p, OPENAI_COMPLETIONS, "{\"prompt\": \"x\", \"max_tokens\": 0}");
    CHECK(ok && p.f.max_tokens == 0, "max_tokens 0 is kept (0 new tokens)");
    done(&p);
    ok = accepted(&p, OPENAI_CHAT, "{" CHAT_HI ", \"max_tokens\": 1e12}");
    bool big = ok && p.f.max_tokens == 2147483647;
    done(&p);
    ok = accepted(&p, OPENAI_CHAT, "{" CHAT_HI ", \"max_tokens\": 99999999999}");
    CHECK(big && ok && p.f.max_tokens == 2147483647, "max_tokens past an int (1e12, 99999999999) -> INT_MAX");
    done(&p);
    ok = accepted(&p, OPENAI_CHAT, "{" CHAT_HI ", \"max_tokens\": 64.0}");
    CHECK(ok && p.f.max_tokens == 64, "max_tokens 64.0 -> 64");
    done(&p);
    refused(OPENAI_CHAT, "{" CHAT_HI ", \"max_tokens\": -1}", "max_tokens", NULL, "max_tokens -1");
    refused(OPENAI_CHAT, "{" CHAT_HI ", \"max_tokens\": 1.5}", "max_tokens", NULL, "max_tokens 1.5");
    refused(OPENAI_CHAT, "{" CHAT_HI ", \"max_tokens\": \"10\"}", "max_tokens", NULL, "max_tokens \"10\"");
    refused(OPENAI_CHAT, "{" CHAT_HI ", \"max_completion_tokens\": -3}", "max_completion_tokens", NULL,
            "max_completion_tokens -3");
    refused(OPENAI_CHAT, "{" CHAT_HI ", \"max_completion_tokens\": true}", "max_completion_tokens", NULL,
            "max_completion_tokens true");
}

static void test_sampling(void) {
    parsed p;
    bool ok = accepted(&p, OPENAI_CHAT, "{" CHAT_HI ", \"temperature\": 0.25, \"top_p\": 0.5, \"top_k\": 40, "
                       "\"min_p\": 0.125, \"repeat_penalty\": 1.5, \"seed\": 1234567890123}");
    CHECK(ok && p.f.sampling.temp == 0.25f && p.f.sampling.top_p == 0.5f && p.f.sampling.top_k == 40 &&
          p.f.sampling.min_p == 0.125f && p.f.sampling.repeat_penalty == 1.5f &&
          p.f.sampling.seed == 1234567890123ull && p.f.own_seed,
          "temperature, top_p, top_k, min_p, repeat_penalty, seed map to the sampler's parameters");
    done(&p);
    ok = accepted(&p, OPENAI_CHAT, "{" CHAT_HI ", \"temperature\": 0, \"top_p\": 0, \"top_k\": 0, \"min_p\": 1, \"seed\": 0}");
    bool lo = ok && p.f.sampling.temp == 0 && p.f.sampling.top_p == 0 && p.f.sampling.top_k == 0 &&
              p.f.sampling.min_p == 1 && p.f.sampling.seed == 0 && p.f.own_seed;
    done(&p);
    ok = accepted(&p, OPENAI_CHAT, "{" CHAT_HI ", \"temperature\": 2, \"top_p\": 1, \"min_p\": 0, \"top_k\": 2147483647}");
    CHECK(lo && ok && p.f.sampling.temp == 2 && p.f.sampling.top_p == 1 && p.f.sampling.min_p == 0 &&
          p.f.sampling.top_k == 2147483647, "the ends of each range are accepted (top_p/min_p 0 and 1, temperature 0, top_k 0..INT_MAX, seed 0)");
    done(&p);
    ok = accepted(&p, OPENAI_CHAT, "{" CHAT_HI ", \"top_k\": 5.0}");
    CHECK(ok && p.f.sampling.top_k == 5, "top_k 5.0 -> 5");
    done(&p);

    static const struct { const char *frag, *key, *what; } bad[] = {
        { "\"temperature\": -0.1", "temperature", "temperature -0.1" },
        { "\"temperature\": \"0.5\"", "temperature", "temperature as a string" },
        { "\"temperature\": 1e7", "temperature", "temperature 1e7" },
        { "\"top_p\": 1.01", "top_p", "top_p 1.01" },
        { "\"top_p\": -0.5", "top_p", "top_p -0.5" },
        { "\"top_p\": true", "top_p", "top_p true" },
        { "\"min_p\": 2", "min_p", "min_p 2" },
        { "\"min_p\": -1e-9", "min_p", "min_p -1e-9" },
        { "\"top_k\": -1", "top_k", "top_k -1" },
        { "\"top_k\": 2.5", "top_k", "top_k 2.5" },
        { "\"top_k\": 3000000000", "top_k", "top_k past an int" },
        { "\"repeat_penalty\": 0", "repeat_penalty", "repeat_penalty 0" },
        { "\"seed\": -1", "seed", "seed -1" },
        { "\"seed\": 1.5", "seed", "seed 1.5" },
        { "\"seed\": \"42\"", "seed", "seed as a string" },
        { "\"ignore_eos\": 1", "ignore_eos", "ignore_eos 1" },
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char body[512];
        snprintf(body, sizeof body, "{" CHAT_HI ", %s}", bad[i].frag);
        refused(OPENAI_CHAT, body, bad[i].key, NULL, bad[i].what);
    }
    ok = accepted(&p, OPENAI_COMPLETIONS, "{\"prompt\": \"x\", \"seed\": 9223372036854775807, \"ignore_eos\": true}");
    CHECK(ok && p.f.sampling.seed == 9223372036854775807ull && p.f.own_seed && p.f.ignore_eos,
          "completions: seed INT64_MAX, ignore_eos true");
    done(&p);
}

static void test_stop(void) {
    parsed p;
    bool ok = accepted(&p, OPENAI_CHAT, "{" CHAT_HI ", \"stop\": \"END\"}");
    CHECK(ok && p.f.n_stop == 1 && !strcmp(p.f.stop[0], "END"), "stop \"END\" -> one stop string");
    done(&p);
    ok = accepted(&p, OPENAI_CHAT, "{" CHAT_HI ", \"stop\": [\"a\", \"\\n\\n\", \"\", \"\\u00e9t\\u00e9\"]}");
    CHECK(ok && p.f.n_stop == 3 && !strcmp(p.f.stop[0], "a") && !strcmp(p.f.stop[1], "\n\n") &&
          !strcmp(p.f.stop[2], "\xc3\xa9t\xc3\xa9"), "stop array -> its strings in order, the empty one dropped");
    done(&p);
    ok = accepted(&p, OPENAI_CHAT, "{" CHAT_HI ", \"stop\": []}");
    bool empty = ok && p.f.n_stop == 0;
    done(&p);
    ok = accepted(&p, OPENAI_CHAT, "{" CHAT_HI ", \"stop\": \"\"}");
    CHECK(empty && ok && p.f.n_stop == 0, "stop [] and \"\" stop nothing");
    done(&p);
    char body[1024] = "{" CHAT_HI ", \"stop\": [";
    for (int i = 0; i < REQUEST_MAX_STOP; i++) {
        char item[16];
        snprintf(item, sizeof item, "%s\"s%d\"", i ? ", " : "", i);
        strcat(body, item);
    }
    strcat(body, "]}");
    ok = accepted(&p, OPENAI_CHAT, body);
    CHECK(ok && p.f.n_stop == REQUEST_MAX_STOP && !strcmp(p.f.stop[15], "s15"), "16 stop strings are accepted");
    done(&p);
    body[strlen(body) - 2] = 0;
    strcat(body, ", \"s16\"]}");
    refused(OPENAI_CHAT, body, "stop", "16", "17 stop strings");
    refused(OPENAI_CHAT, "{" CHAT_HI ", \"stop\": [\"a\", 1]}", "stop", NULL, "a stop array holding a number");
    refused(OPENAI_CHAT, "{" CHAT_HI ", \"stop\": 5}", "stop", NULL, "stop 5");
    refused(OPENAI_CHAT, "{" CHAT_HI ", \"stop\": \"a\\u0000b\"}", "stop", NULL, "a stop string holding NUL");
}

static void test_n_stream(void) {
    parsed p;
    bool ok = accepted(&p, OPENAI_CHAT, "{" CHAT_HI ", \"n\": 16, \"model\": \"tiny\"}");
    CHECK(ok && p.x.n == 16 && p.x.model && !strcmp(p.x.model, "tiny"), "n 16 -> 16 choices; model -> the model name");
    done(&p);
    ok = accepted(&p, OPENAI_COMPLETIONS, "{\"prompt\": \"x\", \"n\": 1}");
    CHECK(ok && p.x.n == 1, "n 1 -> 1 choice");
    done(&p);
    refused(OPENAI_CHAT, "{" CHAT_HI ", \"n\": 0}", "n", "16", "n 0");
    refused(OPENAI_CHAT, "{" CHAT_HI ", \"n\": 17}", "n", "16", "n 17");
    refused(OPENAI_CHAT, "{" CHAT_HI ", \"n\": 2.5}", "n", NULL, "n 2.5");
    refused(OPENAI_CHAT, "{" CHAT_HI ", \"n\": \"2\"}", "n", NULL, "n \"2\"");
    refused(OPENAI_CHAT, "{" CHAT_HI ", \"model\": 3}", "model", NULL, "model 3");

    ok = accepted(&p, OPENAI_CHAT, "{" CHAT_HI ", \"stream\": true, \"stream_options\": {\"include_usage\": true}}");
    CHECK(ok && p.x.stream && p.x.include_usage, "stream true + stream_options.include_usage true");
    done(&p);
    ok = accepted(&p, OPENAI_COMPLETIONS, "{\"prompt\": \"x\", \"stream\": true, \"stream_options\": {\"include_usage\": false}}");
    bool a = ok && p.x.stream && !p.x.include_usage;
    done(&p);
    ok = accepted(&p, OPENAI_COMPLETIONS, "{\"prompt\": \"x\", \"stream\": true, \"stream_options\": {}}");
    CHECK(a && ok && p.x.stream && !p.x.include_usage, "include_usage false or absent -> no usage chunk");
    done(&p);
    ok = accepted(&p, OPENAI_CHAT, "{" CHAT_HI ", \"stream\": false}");
    CHECK(ok && !p.x.stream, "stream false -> not streamed");
    done(&p);
    refused(OPENAI_CHAT, "{" CHAT_HI ", \"stream\": 1}", "stream", NULL, "stream 1");
    refused(OPENAI_CHAT, "{" CHAT_HI ", \"stream\": true, \"stream_options\": true}", "stream_options", NULL,
            "stream_options true");
    refused(OPENAI_CHAT, "{" CHAT_HI ", \"stream\": true, \"stream_options\": {\"include_usage\": \"yes\"}}",
            "stream_options.include_usage", NULL, "include_usage \"yes\"");
}

static void test_logprobs(void) {
    parsed p;
    bool ok = accepted(&p, OPENAI_CHAT, "{" CHAT_HI ", \"logprobs\": true}");
    CHECK(ok && p.x.logprobs == 1, "chat logprobs true -> each token's logprob, no alternatives (1)");
    done(&p);
    ok = accepted(&p, OPENAI_CHAT, "{" CHAT_HI ", \"logprobs\": true, \"top_logprobs\": 20}");
    bool a = ok && p.x.logprobs == 21;
    done(&p);
    ok = accepted(&p, OPENAI_CHAT, "{" CHAT_HI ", \"top_logprobs\": 3, \"logprobs\": true}");
    CHECK(a && ok && p.x.logprobs == 4, "chat top_logprobs k with logprobs true -> 1 + k (k = 3, 20; either order)");
    done(&p);
    ok = accepted(&p, OPENAI_CHAT, "{" CHAT_HI ", \"logprobs\": true, \"top_logprobs\": 0}");
    CHECK(ok && p.x.logprobs == 1, "chat top_logprobs 0 -> 1");
    done(&p);
    ok = accepted(&p, OPENAI_CHAT, "{" CHAT_HI ", \"logprobs\": false}");
    CHECK(ok && p.x.logprobs == 0, "chat logprobs false -> none");
    done(&p);
    refused(OPENAI_CHAT, "{" CHAT_HI ", \"top_logprobs\": 2}", "top_logprobs", "logprobs", "top_logprobs without logprobs");
    refused(OPENAI_CHAT, "{" CHAT_HI ", \"logprobs\": false, \"top_logprobs\": 2}", "top_logprobs", "logprobs",
            "top_logprobs with logprobs false");
    refused(OPENAI_CHAT, "{" CHAT_HI ", \"logprobs\": true, \"top_logprobs\": 21}", "top_logprobs", "20", "top_logprobs 21");
    refused(OPENAI_CHAT, "{" CHAT_HI ", \"logprobs\": true, \"top_logprobs\": -1}", "top_logprobs", NULL, "top_logprobs -1");
    refused(OPENAI_CHAT, "{" CHAT_HI ", \"logprobs\": true, \"top_logprobs\": 1.5}", "top_logprobs", NULL, "top_logprobs 1.5");
    refused(OPENAI_CHAT, "{" CHAT_HI ", \"logprobs\": 3}", "logprobs", NULL, "chat logprobs 3 (the legacy integer)");

    ok = accepted(&p, OPENAI_COMPLETIONS, "{\"prompt\": \"x\", \"logprobs\": 0}");
    a = ok && p.x.logprobs == 1;
    done(&p);
    ok = accepted(&p, OPENAI_COMPLETIONS, "{\"prompt\": \"x\", \"logprobs\": 5}");
    CHECK(a && ok && p.x.logprobs == 6, "completions logprobs k in 0..5 -> 1 + k (0 -> 1, 5 -> 6)");
    done(&p);
    refused(OPENAI_COMPLETIONS, "{\"prompt\": \"x\", \"logprobs\": 6}", "logprobs", "5", "completions logprobs 6");
    refused(OPENAI_COMPLETIONS, "{\"prompt\": \"x\", \"logprobs\": -1}", "logprobs", NULL, "completions logprobs -1");
    refused(OPENAI_COMPLETIONS, "{\"prompt\": \"x\", \"logprobs\": true}", "logprobs", NULL, "completions logprobs true");
}

static void test_messages(void) {
    parsed p;
    bool ok = accepted(&p, OPENAI_CHAT, "{\"messages\": [{\"role\": \"system\", \"content\": \"Be brief.\"}, "
                       "{\"role\": \"user\", \"content\": \"Hi\"}, {\"role\": \"assistant\", \"content\": \"Hello!\"}, "
                       "{\"role\": \"user\", \"content\": \"\"}]}");
    CHECK(ok && p.f.n_msgs == 4 && !strcmp(p.f.msgs[0].role, "system") && !strcmp(p.f.msgs[0].content, "Be brief.") &&
          !strcmp(p.f.msgs[2].role, "assistant") && !strcmp(p.f.msgs[2].content, "Hello!") &&
          !strcmp(p.f.msgs[3].content, "") && !p.f.raw && !p.f.tokens,
          "messages -> the conversation in order (roles, contents; an empty content kept), not raw");
    done(&p);
    ok = accepted(&p, OPENAI_CHAT, "{\"messages\": [{\"role\": \"user\", \"content\": [{\"type\": \"text\", \"text\": \"one, \"}, "
                  "{\"type\": \"text\", \"text\": \"two\"}]}, {\"role\": \"user\", \"content\": []}]}");
    CHECK(ok && p.f.n_msgs == 2 && !strcmp(p.f.msgs[0].content, "one, two") && !strcmp(p.f.msgs[1].content, ""),
          "text content parts are joined into one content ([] -> \"\")");
    done(&p);
    refused(OPENAI_CHAT, "{\"messages\": [{\"role\": \"user\", \"content\": [{\"type\": \"text\", \"text\": \"what?\"}, "
            "{\"type\": \"image_url\", \"image_url\": {\"url\": \"data:image/png;base64,AA\"}}]}]}", "", "only text",
            "an image part");
    refused(OPENAI_CHAT, "{\"messages\": [{\"role\": \"user\", \"content\": [{\"type\": \"text\"}]}]}", "text", NULL,
            "a text part without text");
    refused(OPENAI_CHAT, "{\"model\": \"m\"}", "messages", NULL, "chat without messages");
    refused(OPENAI_CHAT, "{\"messages\": null}", "messages", NULL, "chat with messages null");
    refused(OPENAI_CHAT, "{\"messages\": []}", "messages", NULL, "chat with no message");
    refused(OPENAI_CHAT, "{\"messages\": \"hi\"}", "messages", NULL, "messages as a string");
    refused(OPENAI_CHAT, "{\"messages\": [\"hi\"]}", "messages", NULL, "messages holding a string");
    refused(OPENAI_CHAT, "{\"messages\": [{\"role\": \"user\"}]}", "content", NULL, "a message without content");
    refused(OPENAI_CHAT, "{\"messages\": [{\"content\": \"x\"}]}", "role", NULL, "a message without role");
    refused(OPENAI_CHAT, "{\"messages\": [{\"role\": \"user\", \"content\": 5}]}", "content", NULL, "content 5");
    refused(OPENAI_CHAT, "{\"messages\": [{\"role\": \"user\", \"content\": \"a\\u0000b\"}]}", "content", NULL,
            "content holding NUL");
    refused(OPENAI_CHAT, "{\"prompt\": \"hi\"}", "messages", NULL, "chat with a prompt instead of messages");
}

static void test_prompt(void) {
    parsed p;
    bool ok = accepted(&p, OPENAI_COMPLETIONS, "{\"prompt\": \"Once upon\"}");
    CHECK(ok && p.f.raw && p.f.n_msgs == 1 && !strcmp(p.f.msgs[0].content, "Once upon") && !p.f.tokens,
          "completions prompt \"text\" -> one raw text");
    done(&p);
    ok = accepted(&p, OPENAI_COMPLETIONS, "{\"prompt\": [\"Once upon\"]}");
    CHECK(ok && p.f.raw && p.f.n_msgs == 1 && !strcmp(p.f.msgs[0].content, "Once upon"),
          "completions prompt [\"text\"] -> the same raw text");
    done(&p);
    ok = accepted(&p, OPENAI_COMPLETIONS, "{\"prompt\": [1, 15043, 0, 2147483647]}");
    CHECK(ok && p.f.n_tokens == 4 && p.f.tokens && p.f.tokens[0] == 1 && p.f.tokens[1] == 15043 && p.f.tokens[2] == 0 &&
          p.f.tokens[3] == 2147483647 && p.f.n_msgs == 0, "completions prompt [ids] -> the token ids");
    done(&p);
    ok = accepted(&p, OPENAI_COMPLETIONS, "{\"prompt\": [[5, 6]]}");
    CHECK(ok && p.f.n_tokens == 2 && p.f.tokens[0] == 5 && p.f.tokens[1] == 6, "completions prompt [[ids]] -> the token ids");
    done(&p);
    refused(OPENAI_COMPLETIONS, "{\"prompt\": [\"one\", \"two\"]}", "prompt", "several", "several text prompts");
    refused(OPENAI_COMPLETIONS, "{\"prompt\": [[1, 2], [3]]}", "prompt", "several", "several token prompts");
    refused(OPENAI_COMPLETIONS, "{\"prompt\": []}", "prompt", NULL, "prompt []");
    refused(OPENAI_COMPLETIONS, "{\"prompt\": [[]]}", "prompt", NULL, "prompt [[]]");
    refused(OPENAI_COMPLETIONS, "{\"prompt\": [1, -2]}", "prompt", NULL, "a negative token id");
    refused(OPENAI_COMPLETIONS, "{\"prompt\": [1, 2.5]}", "prompt", NULL, "a fractional token id");
    refused(OPENAI_COMPLETIONS, "{\"prompt\": [2147483648]}", "prompt", NULL, "a token id past int32");
    refused(OPENAI_COMPLETIONS, "{\"prompt\": 5}", "prompt", NULL, "prompt 5");
    refused(OPENAI_COMPLETIONS, "{\"prompt\": null}", "prompt", NULL, "prompt null");
    refused(OPENAI_COMPLETIONS, "{}", "prompt", NULL, "no prompt");
    refused(OPENAI_COMPLETIONS, "{\"prompt\": \"a\\u0000b\"}", "prompt", NULL, "a prompt holding NUL");
    refused(OPENAI_COMPLETIONS, "{\"prompt\": \"x\", \"echo\": true}", "echo", NULL, "echo true");
    refused(OPENAI_COMPLETIONS, "{\"prompt\": \"x\", \"suffix\": \"y\"}", "suffix", "not supported", "suffix");
}

static void test_not_yet(void) {
    static const char *const keys[] = { "functions", "function_call",
                                        "logit_bias", "audio", "modalities", "prediction" };
    static const char *const values[] = { "[{\"name\": \"f\"}]", "\"auto\"",
                                          "{\"50256\": -100}", "{\"voice\": \"x\"}", "[\"text\"]", "{\"type\": \"content\"}" };
    int good = 0, n = sizeof keys / sizeof keys[0];
    for (int i = 0; i < n; i++) {
        char body[512], quoted[64];
        snprintf(body, sizeof body, "{" CHAT_HI ", \"%s\": %s}", keys[i], values[i]);
        snprintf(quoted, sizeof quoted, "\"%s\"", keys[i]);
        parsed p;
        parse(&p, OPENAI_CHAT, body);
        if (p.rc == -1 && strstr(p.err.msg, quoted) && strstr(p.err.msg, "not supported") && one_line(p.err.msg)) good++;
        else printf("# %s: %s\n", keys[i], p.rc ? p.err.msg : "accepted");
        done(&p);
    }
    CHECK(good == n, "%d features not supported yet are refused by name (functions, logit_bias, audio, ...), %d of them", n, good);
}

/* The answer's shape: response_format (json_schema, json_object, text), json_schema, grammar. */
static void test_shape(void) {
    static const struct { const char *field; bool grammar; const char *refusal; } cases[] = {
        { "\"response_format\": {\"type\": \"json_schema\", \"json_schema\": {\"name\": \"x\", \"schema\": {\"type\": \"object\", \"properties\": {\"a\": {\"type\": \"integer\"}}}}}", true, NULL },
        { "\"response_format\": {\"type\": \"json_object\"}", true, NULL },
        { "\"response_format\": {\"type\": \"text\"}", false, NULL },
        { "\"response_format\": null", false, NULL },
        { "\"json_schema\": {\"type\": \"array\", \"items\": {\"type\": \"boolean\"}}", true, NULL },
        { "\"grammar\": \"root ::= \\\"yes\\\" | \\\"no\\\"\"", true, NULL },
        { "\"response_format\": {\"type\": \"xml\"}", false, "\"xml\"" },
        { "\"response_format\": {\"type\": \"json_schema\"}", false, "\"schema\"" },
        { "\"response_format\": {\"type\": \"json_schema\", \"json_schema\": {\"schema\": {\"type\": \"object\", \"if\": {}}}}", false, "\"if\"" },
        { "\"grammar\": \"root ::= root\"", false, "left recursion" },
        { "\"grammar\": 3", false, "GBNF" },
        { "\"grammar\": \"root ::= \\\"a\\\"\", \"json_schema\": {}", false, "give one of" },
    };
    int good = 0, n = sizeof cases / sizeof cases[0];
    for (int i = 0; i < n; i++) {
        char body[1024];
        snprintf(body, sizeof body, "{" CHAT_HI ", %s}", cases[i].field);
        parsed p;
        parse(&p, OPENAI_CHAT, body);
        bool ok = cases[i].refusal ? p.rc == -1 && strstr(p.err.msg, cases[i].refusal) && one_line(p.err.msg)
                                   : p.rc == 0 && (p.f.grammar != NULL) == cases[i].grammar;
        if (ok) good++;
        else printf("# %s: %s\n", cases[i].field, p.rc ? p.err.msg : "accepted");
        done(&p);
    }
    CHECK(good == n, "the answer's shape: response_format, json_schema and grammar read or refused by name (%d of %d)", good, n);
}

/* Tools: the list (kept for the template and the parser), tool_choice, parallel_tool_calls, and
 * conversations holding calls and their results (the message's other fields handed on as JSON). */
static void test_tools(void) {
    static const char TOOLS[] = "\"tools\": [{\"type\": \"function\", \"function\": {\"name\": \"get_weather\", "
                                "\"parameters\": {\"type\": \"object\", \"properties\": {\"city\": {\"type\": \"string\"}}}}}]";
    char body[2048];
    parsed p;
    snprintf(body, sizeof body, "{" CHAT_HI ", %s}", TOOLS);
    parse(&p, OPENAI_CHAT, body);
    CHECK(p.rc == 0 && p.f.tools && p.f.tools->n == 1 && p.f.tools_json && strstr(p.f.tools_json, "\"get_weather\"") &&
          !p.f.no_tool_calls && !p.f.one_tool_call, "tools: kept, as a value and as text for the template");
    done(&p);
    snprintf(body, sizeof body, "{" CHAT_HI ", %s, \"tool_choice\": \"none\", \"parallel_tool_calls\": false}", TOOLS);
    parse(&p, OPENAI_CHAT, body);
    CHECK(p.rc == 0 && p.f.no_tool_calls && p.f.one_tool_call, "tool_choice none and parallel_tool_calls false are read");
    done(&p);
    snprintf(body, sizeof body, "{" CHAT_HI ", %s, \"tool_choice\": \"required\"}", TOOLS);
    parse(&p, OPENAI_CHAT, body);
    CHECK(p.rc == 0 && p.f.forced_tool && !*p.f.forced_tool, "tool_choice required: a call is forced (any tool)");
    done(&p);
    snprintf(body, sizeof body, "{" CHAT_HI ", %s, \"tool_choice\": {\"type\": \"function\", \"function\": {\"name\": \"get_weather\"}}}", TOOLS);
    parse(&p, OPENAI_CHAT, body);
    CHECK(p.rc == 0 && p.f.forced_tool && !strcmp(p.f.forced_tool, "get_weather"), "tool_choice naming a function: that call is forced");
    done(&p);
    static const struct { const char *extra, *refusal; } bad[] = {
        { "\"tool_choice\": \"always\"", "\"tool_choice\" must be" },
        { "\"tool_choice\": {\"type\": \"function\", \"function\": {\"name\": \"get_time\"}}", "not among the tools" },
        { "\"parallel_tool_calls\": 1", "parallel_tool_calls" },
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        snprintf(body, sizeof body, "{" CHAT_HI ", %s, %s}", TOOLS, bad[i].extra);
        parse(&p, OPENAI_CHAT, body);
        CHECK(p.rc == -1 && strstr(p.err.msg, bad[i].refusal) && one_line(p.err.msg), "refused: %s (%s)", bad[i].extra, p.err.msg);
        done(&p);
    }
    static const char *const bad_tools[] = { "\"tools\": {}", "\"tools\": [{\"type\": \"function\"}]",
                                            "\"tools\": [{\"type\": \"code\", \"function\": {\"name\": \"f\"}}]",
                                            "\"tools\": [{\"type\": \"function\", \"function\": {\"name\": \"\"}}]" };
    int good = 0;
    for (size_t i = 0; i < sizeof bad_tools / sizeof *bad_tools; i++) {
        snprintf(body, sizeof body, "{" CHAT_HI ", %s}", bad_tools[i]);
        parse(&p, OPENAI_CHAT, body);
        good += p.rc == -1 && strstr(p.err.msg, "\"tools\"") && one_line(p.err.msg);
        done(&p);
    }
    CHECK(good == 4, "malformed tool lists are refused naming \"tools\" (%d of 4)", good);
    parse(&p, OPENAI_CHAT, "{" CHAT_HI ", \"tool_choice\": \"required\"}");
    CHECK(p.rc == -1 && strstr(p.err.msg, "no \"tools\""), "tool_choice required without tools is refused (%s)", p.err.msg);
    done(&p);
    /* the forced call's grammar: Hermes writes it, the arguments follow the parameters' schema */
    snprintf(body, sizeof body, "{" CHAT_HI ", %s, \"tool_choice\": \"required\"}", TOOLS);
    parse(&p, OPENAI_CHAT, body);
    ts_error ge = {{0}};
    bool made = p.rc == 0 && openai_tool_grammar(tool_format_by_name("hermes"), &p.f, &ge) == 0 && p.f.grammar;
    const char *right = "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\":\"Oslo\"}}\n</tool_call>";
    int yes = made ? grammar_accepts_text(p.f.grammar, right, strlen(right), &ge) : -1;
    const char *wrong = "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\":3}}\n</tool_call>";
    int no = made ? grammar_accepts_text(p.f.grammar, wrong, strlen(wrong), &ge) : -1;
    CHECK(made && yes == 1 && no == 0, "tool_choice required, Hermes: the grammar takes a call with valid arguments, not one with a wrong type (%d %d %s)", yes, no, ge.msg);
    done(&p);
    parse(&p, OPENAI_CHAT, body);
    ge.msg[0] = 0;
    CHECK(p.rc == 0 && openai_tool_grammar(tool_format_by_name("mistral"), &p.f, &ge) == -1 && strstr(ge.msg, "mistral format"),
          "tool_choice required in a format whose markers are control tokens is refused naming it (%s)", ge.msg);
    done(&p);
    parse(&p, OPENAI_CHAT, body);
    ge.msg[0] = 0;
    CHECK(p.rc == 0 && openai_tool_grammar(NULL, &p.f, &ge) == -1 && strstr(ge.msg, "writes none"),
          "tool_choice required with a template that writes no calls is refused (%s)", ge.msg);
    done(&p);
    parse(&p, OPENAI_COMPLETIONS, "{\"prompt\": \"x\", \"tools\": []}");
    CHECK(p.rc == -1 && strstr(p.err.msg, "/v1/chat/completions"), "tools on /v1/completions are refused (%s)", p.err.msg);
    done(&p);
    /* a conversation with a call (content null, arguments as a JSON string) and its result */
    snprintf(body, sizeof body, "{\"messages\": [{\"role\": \"user\", \"content\": \"Weather?\"}, "
             "{\"role\": \"assistant\", \"content\": null, \"tool_calls\": [{\"id\": \"call_1\", \"type\": \"function\", "
             "\"function\": {\"name\": \"get_weather\", \"arguments\": \"{\\\"city\\\": \\\"Paris\\\"}\"}}]}, "
             "{\"role\": \"tool\", \"tool_call_id\": \"call_1\", \"content\": \"sunny\"}], %s}", TOOLS);
    parse(&p, OPENAI_CHAT, body);
    bool ok = p.rc == 0 && p.f.n_msgs == 3 && p.f.msgs[1].content && !strcmp(p.f.msgs[1].content, "") &&
              p.f.msgs[1].fields_json && p.f.msgs[2].fields_json && !p.f.msgs[0].fields_json;
    json_value *v = NULL;
    ts_error e2;
    if (ok && json_parse(p.f.msgs[1].fields_json, strlen(p.f.msgs[1].fields_json), &v, &e2) == 0) {
        const json_value *calls = json_get(v, "tool_calls"), *fn = calls && calls->n ? json_get(&calls->items[0], "function") : NULL;
        const json_value *args = fn ? json_get(fn, "arguments") : NULL;
        ok = args && args->type == JSON_OBJECT && !strcmp(json_get_str(args, "city"), "Paris") &&
             !strcmp(json_get_str(&calls->items[0], "id"), "call_1");
    } else ok = false;
    json_free(v);
    ok = ok && strstr(p.f.msgs[2].fields_json, "\"tool_call_id\":\"call_1\"");
    CHECK(ok, "a call and its result: content null read as \"\", arguments given to the template as an object, tool_call_id kept");
    done(&p);
    parse(&p, OPENAI_CHAT, "{\"messages\": [{\"role\": \"assistant\", \"content\": null, \"tool_calls\": [{\"function\": {\"name\": \"f\", \"arguments\": \"[1]\"}}]}]}");
    CHECK(p.rc == -1 && strstr(p.err.msg, "must hold a JSON object"), "a call whose arguments are not an object is refused (%s)", p.err.msg);
    done(&p);
}

int main(void) {
    test_defaults_and_unknown();
    test_max_tokens();
    test_sampling();
    test_stop();
    test_n_stream();
    test_logprobs();
    test_messages();
    test_prompt();
    test_not_yet();
    test_shape();
    test_tools();
    CHECK_EXIT();
}
