/* --batch and --check: one model load, a JSONL file of requests, one session (prefix cache) for
 * all of them. A line that cannot be answered gets an error of its own; the file goes on. */
#include "cli/batch.h"
#include "cli/answers.h"
#include "cli/ids.h"
#include "cli/lines.h"
#include "cli/openai.h"
#include "cli/prompt.h"
#include "cli/shard.h"
#include "io/json.h"
#include "core/clock.h"
#include "core/error.h"
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <math.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

int parse_match_mode(const char *name, match_mode *out) {
    if (!strcmp(name, "prefix")) *out = MATCH_PREFIX;
    else if (!strcmp(name, "exact")) *out = MATCH_EXACT;
    else if (!strcmp(name, "contains")) *out = MATCH_CONTAINS;
    else return -1;
    return 0;
}

/* One line as a request. */
typedef struct line_request {
    json_value *root;
    const json_value *req;          /* the request's fields: the line, or an OpenAI Batch line's "body" */
    json_buf id;                    /* the id as JSON text ("null" when the line gives none) */
    bool openai;                    /* an OpenAI Batch line (its answer is written in that format) */
    int api;                        /* its endpoint: OPENAI_CHAT or OPENAI_COMPLETIONS */
    openai_options x;               /* an OpenAI Batch line's body: model, n, logprobs, ... */
    bool has_id;
    request_fields f;               /* the prompt and the generation settings */
    const char *expected;           /* --check */
    match_mode match;
} line_request;

/* What a run warns about once: a template that does not parse, each unknown line key by name. */
typedef struct batch_warnings {
    bool template_unparsed;
    char unknown[16][40];
    int n_unknown;
} batch_warnings;

static void line_request_free(line_request *r) {
    json_free(r->root);
    json_buf_free(&r->id);
    request_fields_free(&r->f);
    memset(r, 0, sizeof *r);
}

/* The id of a parsed line: a string, a number, or NULL (none, JSON null, or another type). An
 * OpenAI Batch line is known by its "custom_id". */
static const json_value *line_id(const json_value *root) {
    const json_value *id = json_get(root, json_get(root, "custom_id") ? "custom_id" : "id");
    return id && (id->type == JSON_STRING || id->type == JSON_NUMBER) ? id : NULL;
}

/* The keys a line may hold; an unknown one is ignored with a warning (once per name), as OpenAI's API
 * ignores fields it does not know but a typo ("max_token") should not pass unseen. */
static const char *const line_keys[] = { "id", "prompt", "messages", "system", "user", "tokens", "max_tokens", "temperature",
                                         "top_p", "top_k", "min_p", "repeat_penalty", "seed", "stop", "ignore_eos",
                                         "response_format", "json_schema", "grammar", "expected", "match" };

static void warn_unknown_keys(const json_value *root, const batch_options *o, int line, batch_warnings *w) {
    for (size_t i = 0; i < root->n && !o->quiet; i++) {
        const char *k = root->keys[i];
        bool known = false;
        for (size_t j = 0; j < sizeof line_keys / sizeof line_keys[0] && !known; j++) known = !strcmp(k, line_keys[j]);
        for (int j = 0; j < w->n_unknown && !known; j++) known = !strncmp(k, w->unknown[j], sizeof w->unknown[j] - 1);
        if (known) continue;
        fprintf(stderr, "warning: %s: line %d: unknown key \"%.32s\" ignored (warned once)\n", o->input_path, line, k);
        if (w->n_unknown < 16) snprintf(w->unknown[w->n_unknown++], sizeof w->unknown[0], "%s", k);
    }
}

/* An OpenAI Batch line: {"custom_id", "method": "POST", "url", "body"}. The body is read as the
 * server reads a request's; what a batch cannot do (a stream, several choices) fails the line. */
static int parse_openai_line(line_request *r, bool check, ts_error *err) {
    const json_value *root = r->root, *v;
    r->openai = true;
    r->api = OPENAI_CHAT;
    if (check) return ts_fail(err, "an OpenAI Batch line (\"custom_id\") goes with --batch, not --check");
    if (json_get(root, "custom_id")->type != JSON_STRING) return ts_fail(err, "\"custom_id\" must be a string");
    if ((v = json_get(root, "method")) && (v->type != JSON_STRING || strcmp(v->str, "POST") != 0))
        return ts_fail(err, "\"method\" must be \"POST\"");
    v = json_get(root, "url");
    if (!v || v->type != JSON_STRING) return ts_fail(err, "\"url\" must be \"/v1/chat/completions\" or \"/v1/completions\"");
    if (!strcmp(v->str, "/v1/chat/completions")) r->api = OPENAI_CHAT;
    else if (!strcmp(v->str, "/v1/completions")) r->api = OPENAI_COMPLETIONS;
    else return ts_fail(err, "\"url\" %.80s is not served here (\"/v1/chat/completions\" or \"/v1/completions\")", v->str);
    if (!(r->req = json_get(root, "body")) || r->req->type != JSON_OBJECT) return ts_fail(err, "\"body\" must be an object");
    if (openai_parse_body(r->req, r->api, &r->f, &r->x, err) != 0) return -1;
    if (r->x.stream) return ts_fail(err, "\"stream\" cannot be used in a batch");
    if (r->x.n != 1) return ts_fail(err, "\"n\" must be 1 (one answer per line)");
    return 0;
}

static int parse_line(const char *text, size_t len, const batch_options *o, bool check, int line, batch_warnings *w,
                      line_request *r, ts_error *err) {
    memset(r, 0, sizeof *r);
    r->f.max_tokens = o->max_tokens;
    r->f.sampling = o->sampling;
    r->f.ignore_eos = o->ignore_eos;
    r->match = o->match;
    ts_error jerr = {{0}};
    if (json_parse(text, len, &r->root, &jerr) != 0) {
        ids_put(&r->id, NULL);
        return ts_fail(err, "invalid JSON: %s", jerr.msg);
    }
    const json_value *root = r->root, *id = line_id(root);
    const json_value *given = json_get(root, json_get(root, "custom_id") ? "custom_id" : "id");
    if (ids_put(&r->id, id) != 0) return ts_fail(err, "out of memory");
    r->has_id = id != NULL;
    if (root->type != JSON_OBJECT) return ts_fail(err, "the line is not a JSON object");
    if (given && !id && given->type != JSON_NULL) return ts_fail(err, "\"id\" must be a string or a number");
    /* a whole number past int64 (or written with an exponent past 2^53) is not held exactly as a double */
    if (id && id->type == JSON_NUMBER && !id->is_integer && id->number == floor(id->number) && fabs(id->number) >= 9007199254740992.0)
        return ts_fail(err, "\"id\" is a number too large to keep exactly: write it as a string");
    if (json_get(root, "custom_id")) return parse_openai_line(r, check, err);
    r->req = root;
    warn_unknown_keys(root, o, line, w);
    const json_value *v;
    if ((v = json_get(root, "tokens"))) {
        if (json_get(root, "prompt") || json_get(root, "messages") || json_get(root, "user"))
            return ts_fail(err, "give the prompt one way: \"tokens\", \"prompt\", \"messages\" or \"user\"");
        if (request_parse_tokens(&r->f, v, "tokens", err) != 0) return -1;
    } else if (request_parse_messages(&r->f, root, o->system, err) != 0) {
        return -1;
    }
    if (request_parse_settings(&r->f, root, err) != 0) return -1;
    if (check) {
        int has = request_get_text(root, "expected", &r->expected, err);
        if (has < 0) return -1;
        if (!has) return ts_fail(err, "the case has no \"expected\" string");
        const char *mode;
        if (request_get_text(root, "match", &mode, err) < 0) return -1;
        if (mode && parse_match_mode(mode, &r->match) != 0)
            return ts_fail(err, "\"match\" must be \"exact\", \"prefix\" or \"contains\"");
        /* compared trimmed, an empty text starts and is inside every answer: only "exact" means something */
        if (!r->expected[strspn(r->expected, " \t\r\n")] && r->match != MATCH_EXACT)
            return ts_fail(err, "\"expected\" is empty: every answer would pass (an empty answer is checked with \"match\": \"exact\")");
        /* greedy whatever the options say: a check must be repeatable */
        r->f.sampling.temp = 0.0f;
        r->f.sampling.repeat_penalty = 1.0f;
    }
    return 0;
}

/* ---- answering ---- */

typedef struct totals {
    long prompt_tokens, reused_tokens, generated_tokens;
    long drafted_tokens, accepted_tokens;   /* speculative decoding's proposals, and those taken */
    double step_bytes;              /* the lines' weight bytes read per decode step, summed */
    long step_lines;                /* lines that decoded (with a figure in step_bytes) */
    int answered, errors;
    bool default_seed_used;         /* a line was sampled with the run's seed: the summary prints it */
} totals;

/* A line being answered in one of the session's slots: its request, and its result once it is
 * done. order: the line's place among those this run reads (--check prints in that order). */
typedef struct flight {
    bool busy;
    int slot, number, order;
    line_request r;
    int32_t *ids;
    ts_gen_request rq;
    ts_gen_result res;
    ts_error err;
    double t1;
    ts_chat_options chat;        /* the template options, with the line's tools */
} flight;

static void flight_clear(flight *f) {
    ts_gen_result_free(&f->res);
    line_request_free(&f->r);
    free(f->ids);
    memset(f, 0, sizeof *f);
}

static int too_long_error(ts_error *err, const ts_session *s);

/* Tokenizes a parsed line and starts it in a free slot: the slot, or -1 (err). */
static int start(ts_model *m, ts_session *s, const batch_options *o, flight *f, batch_warnings *w, ts_error *err) {
    bool chat, unknown_template = false;
    int n;
    const request_fields *rf = &f->r.f;
    if (rf->tokens) {   /* ids as given (the session checks them against the vocabulary) */
        f->ids = f->r.f.tokens;
        f->r.f.tokens = NULL;
        n = rf->n_tokens;
    } else {
        f->chat = o->chat ? *o->chat : (ts_chat_options){0};
        if (rf->tools_json) f->chat.tools_json = rf->tools_json;   /* an OpenAI line's tools */
        n = prompt_to_tokens(m, rf->msgs, rf->n_msgs, o->raw || rf->raw, &f->chat, ts_session_text_limit(s), NULL, NULL,
                             &f->ids, &chat, &unknown_template, err);
    }
    if (unknown_template && !w->template_unparsed && !o->quiet) {
        fprintf(stderr, "warning: %s: the chat template does not parse; sending the prompts as plain text (--chat-template FILE gives another)\n", o->model_path);
        w->template_unparsed = true;
    }
    if (n < 0 || openai_tool_grammar(o->tool_format, &f->r.f, err) != 0) return -1;
    f->rq = (ts_gen_request){ .prompt = f->ids, .n_prompt = n, .max_tokens = rf->max_tokens, .sampling = rf->sampling,
                              .stop = rf->stop, .n_stop = rf->n_stop, .heal = o->heal, .ignore_eos = rf->ignore_eos,
                              .grammar = rf->grammar ? rf->grammar : o->grammar,
                              .special_text = rf->tools && !rf->no_tool_calls && o->tool_format,
                              .logprobs = f->r.x.logprobs };
    return ts_session_submit(s, &f->rq, &f->res, &f->err, err);
}

/* Where the lines come from and where their answers go (--batch and --check differ only there). */
typedef struct line_flow {
    /* the next line to answer: 1 (in lr), 0 none left, -1 failed (message printed) */
    int (*next)(void *user, line_reader *lr);
    /* a line is done: ok, or failed with error; 0, or -1 to stop the run (message printed) */
    int (*done)(void *user, flight *f, bool ok, const char *error);
    void *user;
} line_flow;

/* Answers the flow's lines, as many at once as the session has slots: whenever a slot is free the
 * next line is read, parsed, tokenized and started; each step of the session then moves every
 * started line on. A line that fails (bad JSON, a prompt too long, ...) fails alone. Returns 0, or
 * -1 when the flow stopped the run. */
static int answer_lines(ts_model *m, ts_session *s, const batch_options *o, bool check, line_reader *lr,
                        const line_flow *flow) {
    const int n_slots = ts_session_n_slots(s);
    flight *fl = calloc((size_t)n_slots, sizeof *fl);
    int *by_slot = calloc((size_t)n_slots, sizeof *by_slot);
    ts_gen_done *done = calloc((size_t)n_slots, sizeof *done);
    batch_warnings warned = {0};
    int rc = -1, busy = 0, order = 0;
    bool more = true;
    ts_error err = {{0}};
    if (!fl || !by_slot || !done) { fprintf(stderr, "error: out of memory\n"); goto out; }
    for (;;) {
        while (more && busy < n_slots) {
            int got = flow->next(flow->user, lr);
            if (got < 0) goto out;
            if (got == 0) { more = false; break; }
            flight *f = &fl[0];
            while (f->busy) f++;
            f->number = lr->number;
            f->order = order++;
            f->t1 = clock_seconds();
            int slot = -1;
            if (lr->too_long) {
                ids_put(&f->r.id, NULL);
                too_long_error(&err, s);
            } else if (parse_line(lr->text, lr->len, o, check, lr->number, &warned, &f->r, &err) == 0) {
                slot = start(m, s, o, f, &warned, &err);
            }
            if (slot < 0) {
                int drc = flow->done(flow->user, f, false, err.msg);
                flight_clear(f);
                if (drc != 0) goto out;
                continue;
            }
            f->busy = true;
            f->slot = slot;
            by_slot[slot] = (int)(f - fl);
            busy++;
        }
        if (busy == 0) break;
        int n = ts_session_step(s, done);
        for (int k = 0; k < n; k++) {
            flight *f = &fl[by_slot[done[k].slot]];
            int drc = flow->done(flow->user, f, done[k].rc == 0, done[k].rc == 0 ? NULL : f->err.msg);
            flight_clear(f);
            busy--;
            if (drc != 0) goto out;
        }
    }
    rc = 0;
out:
    /* a run stopped early: the lines still in slots are dropped */
    for (int i = 0; fl && i < n_slots; i++)
        if (fl[i].busy) {
            ts_session_cancel(s, fl[i].slot);
            flight_clear(&fl[i]);
        }
    free(fl);
    free(by_slot);
    free(done);
    return rc;
}

static void count(totals *t, const line_request *r, const ts_gen_result *res) {
    t->default_seed_used |= r->f.sampling.temp > 0 && !r->f.own_seed;
    t->prompt_tokens += res->n_prompt;
    t->reused_tokens += res->n_reused;
    t->generated_tokens += res->n_generated;
    t->drafted_tokens += res->n_drafted;
    t->accepted_tokens += res->n_accepted;
    if (res->decode_weight_bytes > 0) t->step_bytes += res->decode_weight_bytes, t->step_lines++;
}

static void print_totals(const char *mode, const totals *t, double seconds, uint64_t seed) {
    fprintf(stderr, "%s: %d answered, %d error%s | prompt: %ld tokens, %ld reused from the prefix cache | "
            "generation: %ld tokens, %.1f tok/s | %.1f s", mode, t->answered, t->errors, t->errors == 1 ? "" : "s",
            t->prompt_tokens, t->reused_tokens, t->generated_tokens, t->generated_tokens / (seconds + 1e-9), seconds);
    /* a step reads the weights once for every line in it (a mixture of experts: those any line chose) */
    if (t->step_lines) fprintf(stderr, " | %.2f MB of weights read per decode step", t->step_bytes / t->step_lines / 1e6);
    if (t->drafted_tokens)
        fprintf(stderr, " | speculation: %ld of %ld proposed accepted (%.0f%%)", t->accepted_tokens, t->drafted_tokens,
                100.0 * t->accepted_tokens / t->drafted_tokens);
    if (t->default_seed_used) fprintf(stderr, " | seed %" PRIu64, seed);   /* what repeats those lines */
    fputc('\n', stderr);
}

/* ---- --batch ---- */

static int write_line(FILE *f, json_buf *b) {
    if (json_buf_put(b, "\n", 1) != 0) return -1;
    if (fwrite(b->data, 1, b->len, f) != b->len || fflush(f) != 0) return -1;
    return 0;
}


/* {"line": N, "id": ..., "answer": ..., ...} or {"line": N, "id": ..., "error": ...}. The line
 * number comes first so that shard outputs merge back with `sort -t: -k2,2n -s`. */
static int format_answer(json_buf *b, int line, const json_buf *id, const ts_gen_result *res, const char *error,
                         double ms) {
    b->len = 0;
    if (json_buf_printf(b, "{\"line\": %d, \"id\": ", line) || json_buf_put(b, id->data, id->len)) return -1;
    if (error) return json_buf_put(b, ", \"error\": ", 11) || json_buf_put_string(b, error, strlen(error))
                      || json_buf_put(b, "}", 1);
    return json_buf_put(b, ", \"answer\": ", 12) || json_buf_put_string(b, res->text, res->len)
        || json_buf_printf(b, ", \"tokens_prompt\": %d, \"tokens_generated\": %d, \"finish_reason\": \"%s\", \"ms\": %.1f}",
                   res->n_prompt, res->n_generated, res->finish_reason, ms);
}

static int put_text(json_buf *b, const char *s) { return json_buf_put(b, s, strlen(s)); }

/* An OpenAI Batch output line: {"id", "custom_id", "response": {"status_code", "request_id",
 * "body": a chat.completion or text_completion object, or {"error": ...} with status 400}, "error":
 * null}. */
static int format_openai(json_buf *b, const ts_model *m, const batch_options *o, int line, const line_request *r,
                         const ts_gen_result *res, const char *error) {
    b->len = 0;
    int bad = json_buf_printf(b, "{\"id\": \"batch_req_%d\", \"custom_id\": ", line) || json_buf_put(b, r->id.data, r->id.len) ||
              json_buf_printf(b, ", \"response\": {\"status_code\": %d, \"request_id\": \"req_%d\", \"body\": ", error ? 400 : 200, line);
    if (error) {
        bad |= openai_put_error(b, error, "invalid_request_error", NULL) || put_text(b, "}, \"error\": null}");
        return bad ? -1 : 0;
    }
    const char *model = r->x.model;
    if (!model) { model = strrchr(o->model_path, '/'); model = model ? model + 1 : o->model_path; }
    char id[32];
    snprintf(id, sizeof id, "%s-%d", r->api == OPENAI_CHAT ? "chatcmpl" : "cmpl", line);
    tool_calls calls;
    openai_read_tool_calls(o->tool_format, &r->f, res, (uint64_t)line, &calls);
    const tool_calls *cp = &calls;
    bad |= openai_put_completion(b, r->api, id, model, (long long)time(NULL), &res, &cp, 1, m, r->x.logprobs > 0) ||
           put_text(b, "}, \"error\": null}");
    tool_calls_free(&calls);
    return bad ? -1 : 0;
}

static void print_progress(int done, int total, const totals *t, double elapsed) {
    double rate = t->generated_tokens / (elapsed + 1e-9);
    double eta = done ? elapsed / done * (total - done) : 0.0;
    fprintf(stderr, "\rbatch: %d/%d done | %.1f tok/s | ETA %d:%02d   ", done, total, rate,
            (int)eta / 60, (int)eta % 60);
    fflush(stderr);
}


/* ---- reading the input ---- */

/* The longest input line kept: any prompt the context can take, with every byte JSON-escaped
 * (\u00XX: 6 bytes), plus room for the other fields. */
static size_t line_limit(const ts_session *s) {
    return ts_session_text_limit(s) * 6 + 65536;
}

static bool blank(const char *text, size_t len) {
    for (size_t i = 0; i < len; i++) if (!strchr(" \t\r", text[i])) return false;
    return true;
}

static int too_long_error(ts_error *err, const ts_session *s) {
    return ts_fail(err, "the line is longer than %zu bytes, more than any prompt for a context of %d tokens",
                   line_limit(s), ts_session_n_ctx(s));
}

/* A line of the input: its number and key (id, or line number). */
typedef struct input_line { int number; char *key; } input_line;

static int by_key_then_number(const void *a, const void *b) {
    const input_line *x = a, *y = b;
    int c = strcmp(x->key, y->key);
    return c ? c : x->number - y->number;
}

/* Reads every non-blank line's key (bounded: a too long line is known by its number). */
static int scan_input(FILE *f, const char *path, size_t limit, input_line **out, int *n_out, ts_error *err) {
    line_reader lr;
    input_line *lines = NULL;
    size_t n = 0, cap = 0;
    int got, rc = -1;
    *out = NULL;
    *n_out = 0;
    if (lines_open(&lr, f, limit) != 0) return ts_fail(err, "out of memory");
    while ((got = lines_next(&lr)) == 1) {
        if (!lr.too_long && blank(lr.text, lr.len)) continue;
        json_value *root = NULL;
        ts_error jerr;
        const json_value *id = NULL;
        if (!lr.too_long && json_parse(lr.text, lr.len, &root, &jerr) == 0) id = line_id(root);
        char *key = ids_key(id, lr.number);
        json_free(root);
        if (n == cap) {
            cap = cap ? cap * 2 : 256;
            input_line *t = realloc(lines, cap * sizeof *t);
            if (!t) { free(key); key = NULL; } else lines = t;
        }
        if (!key) { ts_fail(err, "out of memory"); goto done; }
        lines[n++] = (input_line){ lr.number, key };
    }
    if (got < 0) { ts_fail(err, "%s: read error: %s", path, strerror(errno)); goto done; }
    rc = 0;
done:
    lines_close(&lr);
    if (rc != 0) { for (size_t i = 0; i < n; i++) free(lines[i].key); free(lines); return -1; }
    *out = lines;
    *n_out = (int)n;
    return 0;
}

/* Two lines with one id would be one line to --resume and to whoever reads the answers: refused,
 * naming the first duplicate in file order and counting the others. */
static int check_unique(const input_line *lines, int n, const char *path, ts_error *err) {
    input_line *sorted = malloc(((size_t)n + 1) * sizeof *sorted);
    if (!sorted) return ts_fail(err, "out of memory");
    memcpy(sorted, lines, (size_t)n * sizeof *sorted);
    qsort(sorted, (size_t)n, sizeof *sorted, by_key_then_number);
    int dups = 0, first = -1, second = INT_MAX;
    const char *key = NULL;
    for (int i = 1; i < n; i++) {
        if (strcmp(sorted[i].key, sorted[i - 1].key) != 0) continue;
        dups++;
        if (sorted[i].number < second && (i < 2 || strcmp(sorted[i - 2].key, sorted[i].key) != 0)) {
            first = sorted[i - 1].number;
            second = sorted[i].number;
            key = sorted[i].key;
        }
    }
    int rc = 0;
    if (dups) {
        if (dups > 1)
            rc = ts_fail(err, "%s: id %.200s is on lines %d and %d (and %d more duplicate%s): ids must be unique "
                         "(lines without an id are known by their line number)", path, key, first, second,
                         dups - 1, dups > 2 ? "s" : "");
        else
            rc = ts_fail(err, "%s: id %.200s is on lines %d and %d: ids must be unique (lines without an id are "
                         "known by their line number)", path, key, first, second);
    }
    free(sorted);
    return rc;
}

/* -o must not name the input or the model (through any link): the answers would overwrite them. */
/* A batch file, which must be a regular file (it is read twice: its ids first). NULL with err. */
static FILE *open_batch_file(const char *path, ts_error *err) {
    struct stat st;
    /* O_NONBLOCK: a FIFO without a writer is refused below instead of waited on */
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) { ts_fail(err, "%s: cannot open: %s", path, strerror(errno)); return NULL; }
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        ts_fail(err, "%s: not a regular file (a batch file is read twice: its ids first; '-' reads stdin)", path);
        close(fd);
        return NULL;
    }
    fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
    FILE *in = fdopen(fd, "r");
    if (!in) { ts_fail(err, "%s: %s", path, strerror(errno)); close(fd); }
    return in;
}

/* "-" and /dev/stdin: the batch comes on stdin */
static bool reads_stdin(const char *path) { return !strcmp(path, "-") || !strcmp(path, "/dev/stdin"); }

/* stdin copied into an unnamed temporary file, read from its start: a batch file is read twice (its
 * ids first), which a pipe cannot be. NULL with err on failure. */
static FILE *spool_stdin(ts_error *err) {
    if (isatty(STDIN_FILENO)) { ts_fail(err, "stdin: a terminal, not a batch file (pipe the lines in, or give a FILE)"); return NULL; }
    FILE *tmp = tmpfile();
    if (!tmp) { ts_fail(err, "stdin: cannot make a temporary copy: %s", strerror(errno)); return NULL; }
    char buf[1 << 16];
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, stdin)) > 0)
        if (fwrite(buf, 1, n, tmp) != n) { ts_fail(err, "stdin: cannot copy to a temporary file: %s", strerror(errno)); fclose(tmp); return NULL; }
    if (ferror(stdin)) { ts_fail(err, "stdin: read error: %s", strerror(errno)); fclose(tmp); return NULL; }
    rewind(tmp);
    return tmp;
}

static int check_output_path(const batch_options *o, ts_error *err) {
    struct stat out, in, model;
    if (!o->output_path || stat(o->output_path, &out) != 0) return 0;   /* not there yet */
    if (stat(o->input_path, &in) == 0 && in.st_dev == out.st_dev && in.st_ino == out.st_ino)
        return ts_fail(err, "%s: is the input file (%s): the answers would overwrite the prompts", o->output_path, o->input_path);
    if (o->model_path && stat(o->model_path, &model) == 0 && S_ISREG(model.st_mode) &&
        model.st_dev == out.st_dev && model.st_ino == out.st_ino)
        return ts_fail(err, "%s: is the model file (%s)", o->output_path, o->model_path);
    return 0;
}

/* ---- --batch ---- */

/* A sharded run's manifest beside its output: what must be equal across the shards of one run
 * (engine, model and input digests, the options that shape the answers) and what this shard is. */
static int write_manifest(const batch_options *o, ts_error *err) {
    char model_digest[17], input_digest[17], *name = shard_manifest_name(o->output_path);
    uint64_t model_size = 0, input_size = 0;
    struct stat st;
    bool model_file = stat(o->model_path, &st) == 0 && S_ISREG(st.st_mode);   /* a folder: no digest */
    json_buf b = {0};
    int rc = -1;
    if (!name) return ts_fail(err, "out of memory");
    if (model_file && shard_file_digest(o->model_path, model_digest, &model_size, err) != 0) goto out;
    bool input_file = !reads_stdin(o->input_path);
    if (input_file && shard_file_digest(o->input_path, input_digest, &input_size, err) != 0) goto out;
    const ts_sampler_params *p = &o->sampling;
    const ts_chat_options *c = o->chat;
    char tmpl[24] = "null";
    if (c && c->template_text) snprintf(tmpl, sizeof tmpl, "\"%016llx\"", (unsigned long long)shard_hash(c->template_text));
    bool bad = json_buf_printf(&b, "{\"max_tokens\": %d, \"temperature\": %.9g, \"top_k\": %d, \"top_p\": %.9g, \"min_p\": %.9g, "
                       "\"repeat_penalty\": %.9g, \"repeat_last_n\": %d, ", o->max_tokens, p->temp, p->top_k,
                       p->top_p, p->min_p, p->repeat_penalty, p->repeat_last_n) ||
               (o->seed_given ? json_buf_printf(&b, "\"seed\": %llu, ", (unsigned long long)p->seed) : put_text(&b, "\"seed\": \"random\", ")) ||
               json_buf_printf(&b, "\"raw\": %s, \"heal\": %s, \"ignore_eos\": %s, \"n_ctx\": %d, \"chat_template\": %s, \"system\": ",
                       o->raw ? "true" : "false", o->heal ? "true" : "false", o->ignore_eos ? "true" : "false", o->n_ctx, tmpl) ||
               (o->system ? json_buf_put_string(&b, o->system, strlen(o->system)) : put_text(&b, "null")) ||
               put_text(&b, ", \"chat_template_kwargs\": ") ||
               (c && c->kwargs_json ? json_buf_put_string(&b, c->kwargs_json, strlen(c->kwargs_json)) : put_text(&b, "null")) ||
               put_text(&b, ", \"tools\": ") ||
               (c && c->tools_json ? json_buf_put_string(&b, c->tools_json, strlen(c->tools_json)) : put_text(&b, "null")) ||
               put_text(&b, ", \"date\": ") ||
               (c && c->date ? json_buf_put_string(&b, c->date, strlen(c->date)) : put_text(&b, "null")) ||
               put_text(&b, "}") || json_buf_put(&b, "", 1);
    if (bad) { ts_fail(err, "out of memory"); goto out; }
    char version[128], started[32];
#ifdef TESSERA_COMMIT
    snprintf(version, sizeof version, "%s (commit %s)", TESSERA_VERSION, TESSERA_COMMIT);
#else
    snprintf(version, sizeof version, "%s", TESSERA_VERSION);
#endif
    time_t now = time(NULL);
    strftime(started, sizeof started, "%Y-%m-%dT%H:%M:%SZ", gmtime(&now));
    shard_manifest mf = { .engine_name = "tessera", .engine_version = version, .model_path = o->model_path,
                          .model_digest = model_file ? model_digest : NULL, .model_size = model_size,
                          .input_path = o->input_path, .input_digest = input_file ? input_digest : NULL,
                          .options_json = b.data, .shard_index = o->shard_k, .shard_count = o->shard_n,
                          .output_path = o->output_path, .started_at = started };
    rc = shard_write_manifest(name, &mf, err);
out:
    free(name);
    json_buf_free(&b);
    return rc;
}

/* The state of a --batch run the line flow reads and writes. */
typedef struct batch_run {
    const ts_model *m;
    const batch_options *o;
    const input_line *lines;
    const int *todo;
    int n_todo, next, n_done;
    FILE *dst;
    const char *out_name;
    json_buf *b;
    totals *t;
    bool progress;
    double t0;
} batch_run;

/* The next line of this run (the lines are read in file order, skipping the others). */
static int batch_next(void *user, line_reader *lr) {
    batch_run *br = user;
    if (br->next == br->n_todo) return 0;
    int number = br->lines[br->todo[br->next++]].number, got;
    while ((got = lines_next(lr)) == 1 && lr->number < number) {}
    if (got == 1) return 1;
    if (br->progress) fputc('\n', stderr);
    fprintf(stderr, "error: %s: %s\n", br->o->input_path, got < 0 ? strerror(errno) : "the file changed while it was answered");
    return -1;
}

/* A line's answer (or error) written out at once, flushed. */
static int batch_done(void *user, flight *f, bool ok, const char *error) {
    batch_run *br = user;
    if (ok) { br->t->answered++; count(br->t, &f->r, &f->res); } else br->t->errors++;
    double ms = (clock_seconds() - f->t1) * 1e3;
    int frc = f->r.openai ? format_openai(br->b, br->m, br->o, f->number, &f->r, &f->res, ok ? NULL : error)
                          : format_answer(br->b, f->number, &f->r.id, &f->res, ok ? NULL : error, ms);
    if (frc != 0 || write_line(br->dst, br->b) != 0) {
        if (br->progress) fputc('\n', stderr);
        fprintf(stderr, "error: %s: write failed: %s\n", br->out_name, strerror(errno));
        return -1;
    }
    if (br->progress) print_progress(++br->n_done, br->n_todo, br->t, clock_seconds() - br->t0);
    return 0;
}

int run_batch(ts_model *m, ts_session *s, const batch_options *o) {
    ts_error err = {{0}};
    FILE *in = NULL;
    input_line *lines = NULL;
    int n_lines = 0, *todo = NULL, n_todo = 0, n_skipped = 0, rc = 1;
    key_set inputs = {0};
    answers_resume previous = {0};
    answers_file out = {0};
    line_reader lr = {0};
    json_buf b = {0};
    totals t = {0};
    const char *out_name = o->output_path ? o->output_path : "stdout";

    if (check_output_path(o, &err) != 0) { fprintf(stderr, "error: %s\n", err.msg); return 1; }
    if (!(in = reads_stdin(o->input_path) ? spool_stdin(&err) : open_batch_file(o->input_path, &err))) {
        fprintf(stderr, "error: %s\n", err.msg);
        return 1;
    }
    /* first pass: every line's key; duplicates refused before anything is written */
    if (scan_input(in, o->input_path, line_limit(s), &lines, &n_lines, &err) != 0 ||
        check_unique(lines, n_lines, o->input_path, &err) != 0) {
        fprintf(stderr, "error: %s\n", err.msg);
        goto done;
    }
    /* this shard's lines */
    if (!(todo = malloc(((size_t)n_lines + 1) * sizeof *todo))) { fprintf(stderr, "error: out of memory\n"); goto done; }
    for (int i = 0; i < n_lines; i++) {
        if (!shard_owns(lines[i].key, o->shard_k, o->shard_n)) continue;
        char *key = strdup(lines[i].key);
        if (key_set_add(&inputs, key) != 0) { fprintf(stderr, "error: out of memory\n"); goto done; }
        todo[n_todo++] = i;
    }
    key_set_sort(&inputs);
    if (o->output_path &&
        answers_open(&out, o->output_path, o->wait_lock, o->quiet, &inputs, o->resume ? &previous : NULL, &err) != 0) {
        fprintf(stderr, "error: %s\n", err.msg);
        goto done;
    }
    FILE *dst = out.f ? out.f : stdout;
    if (o->output_path && o->shard_n > 1 && write_manifest(o, &err) != 0) { fprintf(stderr, "error: %s\n", err.msg); goto done; }
    if (o->resume) {
        /* minus the lines already answered */
        int k = 0;
        for (int j = 0; j < n_todo; j++) {
            if (key_set_has(&previous.answered, lines[todo[j]].key)) n_skipped++;
            else todo[k++] = todo[j];
        }
        n_todo = k;
        if (!o->quiet) {
            if (previous.dropped_partial) fprintf(stderr, "resume: %s: dropped a partial last line\n", o->output_path);
            if (n_skipped) fprintf(stderr, "resume: %d line%s already answered in %s\n", n_skipped, n_skipped == 1 ? "" : "s", o->output_path);
            if (previous.n_redo) fprintf(stderr, "resume: %d error lines taken out to be answered again\n", previous.n_redo);
            if (previous.n_kept_errors)
                fprintf(stderr, "resume: %s keeps %d error lines of lines this run does not answer\n", o->output_path,
                        previous.n_kept_errors);
        }
    }

    /* second pass: this run's lines, started in file order */
    rewind(in);
    if (lines_open(&lr, in, line_limit(s)) != 0) { fprintf(stderr, "error: out of memory\n"); goto done; }
    bool progress = !o->quiet && isatty(STDERR_FILENO);
    double t0 = clock_seconds();
    batch_run run = { m, o, lines, todo, n_todo, 0, 0, dst, out_name, &b, &t, progress, t0 };
    line_flow flow = { batch_next, batch_done, &run };
    if (answer_lines(m, s, o, false, &lr, &flow) != 0) goto done;
    if (progress && n_todo) fputc('\n', stderr);
    if (!o->quiet) print_totals("batch", &t, clock_seconds() - t0, o->sampling.seed);
    /* the status says what the output holds: this run's errors and the ones it kept */
    rc = t.errors || previous.n_kept_errors ? 2 : 0;
done:
    if (answers_close(&out, &err) != 0 && rc != 1) { fprintf(stderr, "error: %s\n", err.msg); rc = 1; }
    lines_close(&lr);
    if (in) fclose(in);
    for (int i = 0; i < n_lines; i++) free(lines[i].key);
    free(lines);
    free(todo);
    key_set_free(&inputs);
    answers_resume_free(&previous);
    json_buf_free(&b);
    return rc;
}

/* ---- --check ---- */

static void trim(const char **s, size_t *len) {
    while (*len && strchr(" \t\r\n", (*s)[0])) { (*s)++; (*len)--; }
    while (*len && strchr(" \t\r\n", (*s)[*len - 1])) (*len)--;
}

static bool matches(match_mode mode, const char *answer, size_t alen, const char *expected) {
    size_t elen = strlen(expected);
    trim(&answer, &alen);
    trim(&expected, &elen);
    switch (mode) {
    case MATCH_EXACT: return alen == elen && memcmp(answer, expected, elen) == 0;
    case MATCH_PREFIX: return alen >= elen && memcmp(answer, expected, elen) == 0;
    case MATCH_CONTAINS:
        for (size_t p = 0; p + elen <= alen; p++) if (memcmp(answer + p, expected, elen) == 0) return true;
        return false;
    }
    return false;
}

/* The state of a --check run: the verdicts so far, printed in the cases' order as they become
 * complete (cases finish out of order when several run at once). */
typedef struct check_run {
    const batch_options *o;
    int passed, failed, printed;
    char **report;           /* by case order: the verdict line, until printed */
    int cap;
    json_buf b;
    totals t;
} check_run;

static int check_next(void *user, line_reader *lr) {
    check_run *cr = user;
    int got;
    while ((got = lines_next(lr)) == 1 && !lr->too_long && blank(lr->text, lr->len)) {}
    if (got < 0) { fprintf(stderr, "error: %s: read error: %s\n", cr->o->input_path, strerror(errno)); return -1; }
    return got;
}

static int check_done(void *user, flight *f, bool ok, const char *error) {
    check_run *cr = user;
    const line_request *r = &f->r;
    if (ok) { cr->t.answered++; count(&cr->t, r, &f->res); } else cr->t.errors++;
    bool pass = ok && matches(r->match, f->res.text, f->res.len, r->expected);
    pass ? cr->passed++ : cr->failed++;
    /* the case's label (its id, else its line number), then the expected text or what went wrong */
    json_buf *b = &cr->b;
    b->len = 0;
    char head[64];
    int hl = snprintf(head, sizeof head, r->has_id ? "%s " : "%s line %d: ", pass ? "PASS" : "FAIL", f->number);
    int bad = json_buf_put(b, head, (size_t)hl);
    if (r->has_id) bad |= json_buf_put(b, r->id.data, r->id.len) || json_buf_put(b, ": ", 2);
    if (!ok) {
        bad |= json_buf_put(b, "error: ", 7) || json_buf_put(b, error, strlen(error));
    } else if (pass) {
        bad |= json_buf_put_string(b, r->expected, strlen(r->expected));
    } else {
        bad |= json_buf_put(b, "expected ", 9) || json_buf_put_string(b, r->expected, strlen(r->expected)) ||
               json_buf_put(b, ", got ", 6) || json_buf_put_string(b, f->res.text, f->res.len);
    }
    if (f->order >= cr->cap) {
        int nc = cr->cap ? cr->cap * 2 : 64;
        while (nc <= f->order) nc *= 2;
        char **t = realloc(cr->report, (size_t)nc * sizeof *t);
        if (!t) bad = 1;
        else { memset(t + cr->cap, 0, (size_t)(nc - cr->cap) * sizeof *t); cr->report = t; cr->cap = nc; }
    }
    if (bad || !(cr->report[f->order] = strndup(b->data, b->len))) { fprintf(stderr, "error: out of memory\n"); return -1; }
    for (; cr->printed < cr->cap && cr->report[cr->printed]; cr->printed++) {
        printf("%s\n", cr->report[cr->printed]);
        free(cr->report[cr->printed]);
        cr->report[cr->printed] = NULL;
    }
    fflush(stdout);
    return 0;
}

int run_check(ts_model *m, ts_session *s, const batch_options *o) {
    FILE *in = reads_stdin(o->input_path) ? stdin : fopen(o->input_path, "r");
    line_reader lr = {0};
    check_run cr = { .o = o };
    int rc = 1;

    if (!in) { fprintf(stderr, "error: %s: cannot open: %s\n", o->input_path, strerror(errno)); return 1; }
    if (lines_open(&lr, in, line_limit(s)) != 0) { fprintf(stderr, "error: out of memory\n"); goto done; }
    double t0 = clock_seconds();
    line_flow flow = { check_next, check_done, &cr };
    if (answer_lines(m, s, o, true, &lr, &flow) != 0) goto done;
    if (cr.passed + cr.failed == 0) { fprintf(stderr, "error: %s: no cases\n", o->input_path); goto done; }
    printf("%d passed, %d failed\n", cr.passed, cr.failed);
    if (fflush(stdout) != 0 || ferror(stdout)) { fprintf(stderr, "error: stdout: write failed: %s\n", strerror(errno)); goto done; }
    if (!o->quiet) print_totals("check", &cr.t, clock_seconds() - t0, o->sampling.seed);
    rc = cr.failed ? 1 : 0;
done:
    lines_close(&lr);
    if (in != stdin) fclose(in);
    for (int i = 0; i < cr.cap; i++) free(cr.report[i]);
    free(cr.report);
    json_buf_free(&cr.b);
    return rc;
}
