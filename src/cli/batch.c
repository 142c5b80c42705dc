/* --batch and --check: one model load, a JSONL file of requests, one session (prefix cache) for
 * all of them. A line that cannot be answered gets an error of its own; the file goes on. */
#include "cli/batch.h"
#include "cli/generate.h"
#include "io/json.h"
#include "io/file.h"
#include "core/error.h"
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MAX_STOP 16

int parse_match_mode(const char *name, match_mode *out) {
    if (!strcmp(name, "prefix")) *out = MATCH_PREFIX;
    else if (!strcmp(name, "exact")) *out = MATCH_EXACT;
    else if (!strcmp(name, "contains")) *out = MATCH_CONTAINS;
    else return -1;
    return 0;
}

/* ---- input lines ---- */

typedef struct text_line { const char *text; size_t len; int number; } text_line;

/* Splits data into its non-blank lines (numbered from 1 as in the file; a trailing '\r' dropped). */
static int split_lines(const char *data, size_t len, text_line **out, int *n_out) {
    size_t cap = 64;
    int n = 0, number = 0;
    text_line *lines = malloc(cap * sizeof *lines);
    if (!lines) return -1;
    size_t pos = 0;
    while (pos < len) {
        const char *nl = memchr(data + pos, '\n', len - pos);
        size_t end = nl ? (size_t)(nl - data) : len;
        size_t l = end - pos;
        number++;
        if (l > 0 && data[pos + l - 1] == '\r') l--;
        bool blank = true;
        for (size_t i = 0; i < l && blank; i++) blank = strchr(" \t\r", data[pos + i]) != NULL;
        if (!blank) {
            if ((size_t)n == cap) {
                cap *= 2;
                text_line *t = realloc(lines, cap * sizeof *lines);
                if (!t) { free(lines); return -1; }
                lines = t;
            }
            lines[n++] = (text_line){ data + pos, l, number };
        }
        pos = end + 1;
    }
    *out = lines;
    *n_out = n;
    return 0;
}

/* One line as a request. */
typedef struct line_request {
    json_value *root;
    json_buf id;                    /* the id as JSON text ("null" when the line gives none) */
    bool has_id;
    ts_chat_message *msgs;
    int n_msgs;
    int max_tokens;
    ts_sampler_params sampling;
    const char *stop[MAX_STOP];
    int n_stop;
    const char *expected;           /* --check */
    match_mode match;
} line_request;

static void line_request_free(line_request *r) {
    json_free(r->root);
    json_buf_free(&r->id);
    free(r->msgs);
    memset(r, 0, sizeof *r);
}

/* Writes a JSON id (string, integer or other number) to b. */
static int put_id(json_buf *b, const json_value *id) {
    char num[64];
    if (!id || id->type == JSON_NULL) return json_buf_put(b, "null", 4);
    if (id->type == JSON_STRING) return json_buf_put_string(b, id->str, id->len);
    if (id->is_integer) snprintf(num, sizeof num, "%" PRId64, id->integer);
    else snprintf(num, sizeof num, "%.17g", id->number);
    return json_buf_put(b, num, strlen(num));
}

/* A string member without NUL bytes: 1 found, 0 absent, -1 (err) of another type. */
static int get_text(const json_value *obj, const char *key, const char **out, ts_error *err) {
    const json_value *v = json_get(obj, key);
    *out = NULL;
    if (!v) return 0;
    if (v->type != JSON_STRING) return ts_fail(err, "\"%s\" must be a string", key);
    if (strlen(v->str) != v->len) return ts_fail(err, "\"%s\" contains a NUL character", key);
    *out = v->str;
    return 1;
}

static int add_message(line_request *r, int *cap, const char *role, const char *content) {
    if (r->n_msgs == *cap) {
        int nc = *cap ? *cap * 2 : 4;
        ts_chat_message *t = realloc(r->msgs, (size_t)nc * sizeof *t);
        if (!t) return -1;
        r->msgs = t;
        *cap = nc;
    }
    r->msgs[r->n_msgs++] = (ts_chat_message){ role, content };
    return 0;
}

/* The conversation: "messages", else "prompt" (after --system), else the qa-llama eval form
 * "system" + "user". */
static int parse_messages(line_request *r, const batch_options *o, ts_error *err) {
    const json_value *root = r->root, *msgs = json_get(root, "messages");
    const char *prompt, *system, *user;
    int cap = 0;
    if (msgs) {
        if (msgs->type != JSON_ARRAY || msgs->n == 0) return ts_fail(err, "\"messages\" must be a non-empty array");
        for (size_t i = 0; i < msgs->n; i++) {
            const json_value *item = &msgs->items[i];
            const char *role, *content;
            if (item->type != JSON_OBJECT) return ts_fail(err, "\"messages\" must hold objects");
            if (get_text(item, "role", &role, err) <= 0 || get_text(item, "content", &content, err) <= 0) {
                return ts_fail(err, "message %zu needs \"role\" and \"content\" strings", i + 1);
            }
            if (add_message(r, &cap, role, content) != 0) return ts_fail(err, "out of memory");
        }
        return 0;
    }
    int has_prompt = get_text(root, "prompt", &prompt, err);
    if (has_prompt < 0) return -1;
    if (has_prompt) {
        if ((o->system && add_message(r, &cap, "system", o->system) != 0) || add_message(r, &cap, "user", prompt) != 0)
            return ts_fail(err, "out of memory");
        return 0;
    }
    int has_user = get_text(root, "user", &user, err);
    if (has_user < 0) return -1;
    if (!has_user) return ts_fail(err, "the line has no \"prompt\", \"messages\" or \"user\"");
    int has_system = get_text(root, "system", &system, err);
    if (has_system < 0) return -1;
    if (!has_system) system = o->system;
    if ((system && add_message(r, &cap, "system", system) != 0) || add_message(r, &cap, "user", user) != 0)
        return ts_fail(err, "out of memory");
    return 0;
}

/* Parses one line. The id is filled in as far as the line allows even when -1 is returned. */
static int parse_line(const char *text, size_t len, const batch_options *o, bool check, line_request *r, ts_error *err) {
    memset(r, 0, sizeof *r);
    r->max_tokens = o->max_tokens;
    r->sampling = o->sampling;
    r->match = o->match;
    ts_error jerr = {{0}};
    if (json_parse(text, len, &r->root, &jerr) != 0) {
        put_id(&r->id, NULL);
        return ts_fail(err, "invalid JSON: %s", jerr.msg);
    }
    const json_value *root = r->root, *id = json_get(root, "id");
    if (id && id->type != JSON_STRING && id->type != JSON_NUMBER && id->type != JSON_NULL) id = NULL;
    if (put_id(&r->id, id) != 0) return ts_fail(err, "out of memory");
    r->has_id = id && id->type != JSON_NULL;
    if (root->type != JSON_OBJECT) return ts_fail(err, "the line is not a JSON object");
    if (json_get(root, "id") && !id) return ts_fail(err, "\"id\" must be a string or a number");
    if (parse_messages(r, o, err) != 0) return -1;

    const json_value *v;
    if ((v = json_get(root, "max_tokens"))) {
        if (v->type != JSON_NUMBER || !v->is_integer || v->integer < 0 || v->integer > INT_MAX)
            return ts_fail(err, "\"max_tokens\" must be a non-negative integer");
        r->max_tokens = (int)v->integer;
    }
    if ((v = json_get(root, "temperature"))) {
        if (v->type != JSON_NUMBER || !(v->number >= 0) || v->number > 1e6)
            return ts_fail(err, "\"temperature\" must be a non-negative number");
        r->sampling.temp = (float)v->number;
    }
    if ((v = json_get(root, "seed"))) {
        if (v->type != JSON_NUMBER || !v->is_integer || v->integer < 0)
            return ts_fail(err, "\"seed\" must be a non-negative integer");
        r->sampling.seed = (uint64_t)v->integer;
    }
    if ((v = json_get(root, "stop"))) {
        const json_value *items = v->type == JSON_ARRAY ? v->items : v;
        size_t n = v->type == JSON_ARRAY ? v->n : 1;
        if (n > MAX_STOP) return ts_fail(err, "\"stop\" holds more than 16 strings");
        for (size_t i = 0; i < n; i++) {
            if (items[i].type != JSON_STRING || strlen(items[i].str) != items[i].len)
                return ts_fail(err, "\"stop\" must be a string or an array of strings");
            r->stop[r->n_stop++] = items[i].str;
        }
    }
    if (check) {
        int has = get_text(root, "expected", &r->expected, err);
        if (has < 0) return -1;
        if (!has) return ts_fail(err, "the case has no \"expected\" string");
        const char *mode;
        if (get_text(root, "match", &mode, err) < 0) return -1;
        if (mode && parse_match_mode(mode, &r->match) != 0)
            return ts_fail(err, "\"match\" must be \"exact\", \"prefix\" or \"contains\"");
        /* greedy whatever the options say: a check must be repeatable */
        r->sampling.temp = 0.0f;
        r->sampling.repeat_penalty = 1.0f;
    }
    return 0;
}

/* The key --resume knows a line by: its id, or for lines without one, the line number. */
static char *line_key(const json_buf *id, bool has_id, int line_number) {
    char buf[64];
    const char *text = has_id ? id->data : buf;
    if (!has_id) snprintf(buf, sizeof buf, "null@%d", line_number);
    return strdup(text);
}

/* ---- answering ---- */

typedef struct totals {
    long prompt_tokens, reused_tokens, generated_tokens;
    int answered, errors;
} totals;

/* Tokenizes and answers one parsed request. */
static int answer(session *s, const batch_options *o, const line_request *r, bool *warned,
                  gen_result *res, ts_error *err) {
    int32_t *ids = NULL;
    bool chat, unknown_template;
    int n = prompt_to_tokens(s->m, r->msgs, r->n_msgs, o->raw, o->chat, &ids, &chat, &unknown_template, err);
    if (unknown_template && !*warned && !o->quiet) {
        fprintf(stderr, "warning: %s: the chat template does not parse; sending the prompts as plain text (--chat-template FILE gives another)\n", o->model_path);
        *warned = true;
    }
    if (n < 0) return -1;
    gen_request rq = { .prompt = ids, .n_prompt = n, .max_tokens = r->max_tokens, .sampling = r->sampling,
                       .stop = r->stop, .n_stop = r->n_stop, .heal = o->heal };
    int rc = generate(s, &rq, res, err);
    free(ids);
    return rc;
}

static void count(totals *t, const gen_result *res) {
    t->prompt_tokens += res->n_prompt;
    t->reused_tokens += res->n_reused;
    t->generated_tokens += res->n_generated;
}

static void print_totals(const char *mode, const totals *t, double seconds) {
    fprintf(stderr, "%s: %d answered, %d errors | prompt: %ld tokens, %ld reused from the prefix cache | "
            "generation: %ld tokens, %.1f tok/s | %.1f s\n", mode, t->answered, t->errors, t->prompt_tokens,
            t->reused_tokens, t->generated_tokens, t->generated_tokens / (seconds + 1e-9), seconds);
}

/* ---- --batch ---- */

static int cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

typedef struct key_set { char **keys; size_t n, cap; } key_set;

static int key_set_add(key_set *k, char *key) {
    if (!key) return -1;
    if (k->n == k->cap) {
        size_t nc = k->cap ? k->cap * 2 : 64;
        char **t = realloc(k->keys, nc * sizeof *t);
        if (!t) { free(key); return -1; }
        k->keys = t;
        k->cap = nc;
    }
    k->keys[k->n++] = key;
    return 0;
}

static bool key_set_has(const key_set *k, const char *key) {
    return k->n && bsearch(&key, k->keys, k->n, sizeof *k->keys, cmp_str) != NULL;
}

static void key_set_free(key_set *k) {
    for (size_t i = 0; i < k->n; i++) free(k->keys[i]);
    free(k->keys);
    memset(k, 0, sizeof *k);
}

/* --resume: the keys of the lines the output file already answers. A partial last line (a run
 * killed while writing) is cut off the file so that its line is answered again. */
static int load_answered(const char *path, bool quiet, key_set *done, ts_error *err) {
    if (access(path, F_OK) != 0) return 0;   /* nothing answered yet */
    char *data;
    size_t len;
    if (file_read(path, &data, &len, err) != 0) return -1;
    size_t pos = 0;
    int number = 0, rc = 0;
    while (pos < len) {
        const char *nl = memchr(data + pos, '\n', len - pos);
        size_t end = nl ? (size_t)(nl - data) : len;
        number++;
        json_value *v = NULL;
        ts_error jerr = {{0}};
        bool parsed = json_parse(data + pos, end - pos, &v, &jerr) == 0 && v->type == JSON_OBJECT;
        if (!nl || (!parsed && end + 1 >= len)) {
            /* the partial last line: drop it */
            json_free(v);
            if (truncate(path, (off_t)pos) != 0) {
                ts_fail(err, "%s: cannot cut the partial last line: %s", path, strerror(errno));
                rc = -1;
            } else if (!quiet) {
                fprintf(stderr, "resume: %s: dropped a partial last line (line %d)\n", path, number);
            }
            break;
        }
        if (!parsed) {
            json_free(v);
            ts_fail(err, "%s: line %d is not a batch answer (%.200s)", path, number,
                    jerr.msg[0] ? jerr.msg : "not a JSON object");
            rc = -1;
            break;
        }
        const json_value *id = json_get(v, "id");
        if (id && id->type != JSON_STRING && id->type != JSON_NUMBER) id = NULL;
        json_buf idb = {0};
        int add = put_id(&idb, id) != 0 ? -1
                : key_set_add(done, line_key(&idb, id != NULL, (int)json_get_int(v, "line", 0)));
        json_buf_free(&idb);
        json_free(v);
        if (add != 0) { ts_fail(err, "out of memory"); rc = -1; break; }
        pos = end + 1;
    }
    free(data);
    if (rc == 0 && done->n) qsort(done->keys, done->n, sizeof *done->keys, cmp_str);
    return rc;
}

static int write_line(FILE *f, json_buf *b) {
    if (json_buf_put(b, "\n", 1) != 0) return -1;
    if (fwrite(b->data, 1, b->len, f) != b->len || fflush(f) != 0) return -1;
    return 0;
}

static int put_fmt(json_buf *b, const char *fmt, ...) {
    char tmp[256];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(tmp, sizeof tmp, fmt, ap);
    va_end(ap);
    return n < 0 || (size_t)n >= sizeof tmp ? -1 : json_buf_put(b, tmp, (size_t)n);
}

/* {"line": N, "id": ..., "answer": ..., ...} or {"line": N, "id": ..., "error": ...}. The line
 * number comes first so that shard outputs merge back with `sort -t: -k2,2n -s`. */
static int format_answer(json_buf *b, int line, const json_buf *id, const gen_result *res, const char *error,
                         double ms) {
    b->len = 0;
    if (put_fmt(b, "{\"line\": %d, \"id\": ", line) || json_buf_put(b, id->data, id->len)) return -1;
    if (error) return json_buf_put(b, ", \"error\": ", 11) || json_buf_put_string(b, error, strlen(error))
                      || json_buf_put(b, "}", 1);
    return json_buf_put(b, ", \"answer\": ", 12) || json_buf_put_string(b, res->text, res->len)
        || put_fmt(b, ", \"tokens_prompt\": %d, \"tokens_generated\": %d, \"finish_reason\": \"%s\", \"ms\": %.1f}",
                   res->n_prompt, res->n_generated, res->finish_reason, ms);
}

static void print_progress(int done, int total, const totals *t, double elapsed) {
    double rate = t->generated_tokens / (elapsed + 1e-9);
    double eta = done ? elapsed / done * (total - done) : 0.0;
    fprintf(stderr, "\rbatch: %d/%d done | %.1f tok/s | ETA %d:%02d   ", done, total, rate,
            (int)eta / 60, (int)eta % 60);
    fflush(stderr);
}

int run_batch(ts_model *m, const batch_options *o) {
    ts_error err = {{0}};
    char *data = NULL;
    size_t len;
    text_line *lines = NULL;
    int n_lines = 0, *todo = NULL, n_todo = 0, n_skipped = 0, rc = 1;
    key_set done = {0};
    FILE *out = NULL;
    session s = {0};
    json_buf b = {0};
    totals t = {0};

    if (file_read(o->input_path, &data, &len, &err) != 0) { fprintf(stderr, "error: %s\n", err.msg); return 1; }
    if (split_lines(data, len, &lines, &n_lines) != 0 || !(todo = malloc(((size_t)n_lines + 1) * sizeof *todo))) {
        fprintf(stderr, "error: out of memory\n");
        goto done;
    }
    if (o->resume && load_answered(o->output_path, o->quiet, &done, &err) != 0) {
        fprintf(stderr, "error: %s\n", err.msg);
        goto done;
    }
    /* this shard's lines, minus those already answered */
    for (int i = 0; i < n_lines; i++) {
        if (o->shard_n > 1 && (lines[i].number - 1) % o->shard_n != o->shard_k) continue;
        if (done.n) {
            line_request r;
            parse_line(lines[i].text, lines[i].len, o, false, &r, &err);
            char *key = line_key(&r.id, r.has_id, lines[i].number);
            bool answered = key && key_set_has(&done, key);
            free(key);
            line_request_free(&r);
            if (answered) { n_skipped++; continue; }
        }
        todo[n_todo++] = i;
    }
    if (o->output_path) {
        out = fopen(o->output_path, o->resume ? "a" : "w");
        if (!out) { fprintf(stderr, "error: %s: cannot open for writing: %s\n", o->output_path, strerror(errno)); goto done; }
    }
    FILE *dst = out ? out : stdout;
    if (session_init(&s, m, o->n_ctx, o->n_threads, &err) != 0) { fprintf(stderr, "error: %s\n", err.msg); goto done; }
    if (n_skipped && !o->quiet) fprintf(stderr, "resume: %d lines already answered in %s\n", n_skipped, o->output_path);

    bool progress = !o->quiet && isatty(STDERR_FILENO), warned = false;
    double t0 = now_seconds();
    for (int k = 0; k < n_todo; k++) {
        const text_line *ln = &lines[todo[k]];
        line_request r;
        gen_result res = {0};
        double t1 = now_seconds();
        int ok = parse_line(ln->text, ln->len, o, false, &r, &err) == 0
              && answer(&s, o, &r, &warned, &res, &err) == 0;
        double ms = (now_seconds() - t1) * 1e3;
        if (ok) { t.answered++; count(&t, &res); } else t.errors++;
        int wrc = format_answer(&b, ln->number, &r.id, &res, ok ? NULL : err.msg, ms);
        gen_result_free(&res);
        line_request_free(&r);
        if (wrc != 0 || write_line(dst, &b) != 0) {
            if (progress) fputc('\n', stderr);
            fprintf(stderr, "error: %s: write failed: %s\n", o->output_path ? o->output_path : "stdout", strerror(errno));
            goto done;
        }
        if (progress) print_progress(k + 1, n_todo, &t, now_seconds() - t0);
    }
    if (progress && n_todo) fputc('\n', stderr);
    if (!o->quiet) print_totals("batch", &t, now_seconds() - t0);
    rc = t.errors ? 2 : 0;
done:
    if (out && fclose(out) != 0 && rc != 1) { fprintf(stderr, "error: %s: write failed\n", o->output_path); rc = 1; }
    session_free(&s);
    json_buf_free(&b);
    key_set_free(&done);
    free(todo);
    free(lines);
    free(data);
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

int run_check(ts_model *m, const batch_options *o) {
    ts_error err = {{0}};
    char *data = NULL;
    size_t len;
    text_line *lines = NULL;
    int n_lines = 0, passed = 0, failed = 0, rc = 1;
    session s = {0};
    json_buf b = {0};
    totals t = {0};

    if (file_read(o->input_path, &data, &len, &err) != 0) { fprintf(stderr, "error: %s\n", err.msg); return 1; }
    if (split_lines(data, len, &lines, &n_lines) != 0) { fprintf(stderr, "error: out of memory\n"); goto done; }
    if (n_lines == 0) { fprintf(stderr, "error: %s: no cases\n", o->input_path); goto done; }
    if (session_init(&s, m, o->n_ctx, o->n_threads, &err) != 0) { fprintf(stderr, "error: %s\n", err.msg); goto done; }
    bool warned = false;
    double t0 = now_seconds();
    for (int i = 0; i < n_lines; i++) {
        line_request r;
        gen_result res = {0};
        bool ok = parse_line(lines[i].text, lines[i].len, o, true, &r, &err) == 0
               && answer(&s, o, &r, &warned, &res, &err) == 0;
        if (ok) { t.answered++; count(&t, &res); } else t.errors++;
        bool pass = ok && matches(r.match, res.text, res.len, r.expected);
        pass ? passed++ : failed++;
        /* the case's label: its id, else its line number */
        if (r.has_id) printf("%s %s: ", pass ? "PASS" : "FAIL", r.id.data);
        else printf("%s line %d: ", pass ? "PASS" : "FAIL", lines[i].number);
        b.len = 0;
        if (!ok) {
            printf("error: %s\n", err.msg);
        } else if (json_buf_put_string(&b, r.expected, strlen(r.expected)) == 0) {
            size_t exp_len = b.len;
            if (pass) printf("%s\n", b.data);
            else if (json_buf_put_string(&b, res.text, res.len) == 0)
                printf("expected %.*s, got %s\n", (int)exp_len, b.data, b.data + exp_len);
        }
        fflush(stdout);
        gen_result_free(&res);
        line_request_free(&r);
    }
    printf("%d passed, %d failed\n", passed, failed);
    if (!o->quiet) print_totals("check", &t, now_seconds() - t0);
    rc = failed ? 1 : 0;
done:
    session_free(&s);
    json_buf_free(&b);
    free(lines);
    free(data);
    return rc;
}
