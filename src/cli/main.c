/* The command line: ./run MODEL ["prompt"] [options]. One user of the tessera API: it parses the
 * options, loads the model and hands over to a mode: the chat, a one-shot answer, --batch,
 * --check, --verify, --tokenize or --render. */
#include "tessera.h"
#include "cli/batch.h"
#include "cli/chat.h"
#include "cli/options.h"
#include "cli/progress.h"
#include "cli/server.h"
#include "cli/shard.h"
#include "cli/prompt.h"
#include "cli/stats.h"
#include "cli/templates.h"
#include "cli/verify.h"
#include "core/utf8.h"
#include "io/file.h"
#include "template/tool_calls.h"
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Ctrl-C in the chat: the handler only raises the flag; the generation loop and the prompt read
 * look at it. The one piece of mutable global state, and main's. */
static volatile sig_atomic_t interrupted;
static void on_interrupt(int sig) { (void)sig; interrupted = 1; }
/* The server's stop: the first SIGTERM or SIGINT drains, the second cancels (counted). */
static void on_stop(int sig) { (void)sig; if (interrupted < 2) interrupted++; }

/* "1,2,3" -> ids. */
static int parse_token_list(const char *csv, int32_t **out, int *n) {
    size_t cap = 16, cnt = 0;
    int32_t *ids = malloc(cap * sizeof *ids);
    if (!ids) return -1;
    const char *p = csv;
    while (*p) {
        char *end; errno = 0;
        long v = strtol(p, &end, 10);
        if (errno || end == p || v < 0 || v > INT32_MAX || (*end && *end != ',')) {
            fprintf(stderr, "error: --tokens expects comma-separated token ids, got '%s'\n", csv);
            free(ids);
            return -1;
        }
        if (cnt == cap) {
            cap *= 2;
            int32_t *t = realloc(ids, cap * sizeof *ids);
            if (!t) { free(ids); return -1; }
            ids = t;
        }
        ids[cnt++] = (int32_t)v;
        p = *end ? end + 1 : end;
    }
    if (cnt == 0) { fprintf(stderr, "error: --tokens is empty\n"); free(ids); return -1; }
    *out = ids;
    *n = (int)cnt;
    return 0;
}

/* Where a one-shot answer goes: its text to stdout (the first failed write is remembered and stops
 * the answer), its logits to the --dump-logits file. */
typedef struct outputs {
    bool failed;
    int error;
    FILE *dump;
    bool dump_failed;
    int dump_error;
    progress prefill;    /* a long prompt's progress line */
} outputs;

static void prefill_progress(void *user, int done, int total) {
    outputs *o = user;
    progress_update(&o->prefill, done, total);
    if (done == total) progress_end(&o->prefill);
}

static void load_progress(void *user, size_t done, size_t total) { progress_update(user, (double)done, (double)total); }

static int sink_write(void *user, const char *text, size_t len) {
    outputs *s = user;
    if (s->failed) return 1;
    if (fwrite(text, 1, len, stdout) != len || fflush(stdout) != 0) {
        s->failed = true;
        s->error = errno;
        return 1;
    }
    return 0;
}

/* The prompt echo of --tokens: each token's text, whole UTF-8 characters only. */
static void echo_tokens(const ts_model *m, const int32_t *ids, int n, outputs *out) {
    utf8_stream st = {{0}, 0};
    char piece[256], text[256 + 16];
    for (int i = 0; i < n; i++) {
        int len = ts_token_text(m, ids[i], piece, sizeof piece);
        if (len > 0) sink_write(out, text, utf8_stream_push(&st, piece, (size_t)len, text));
    }
    sink_write(out, text, utf8_stream_flush(&st, text));
}

static int dump_rows(void *user, const float *rows, int n_rows, int n_vocab) {
    outputs *d = user;
    size_t n = (size_t)n_rows * (size_t)n_vocab;
    if (fwrite(rows, sizeof(float), n, d->dump) != n) { d->dump_failed = true; d->dump_error = errno; return 1; }
    return 0;
}

/* Where the prompt comes from when none is given: the chat on a terminal, else stdin. */
static bool wants_chat(const cli_options *o) {
    if (o->interactive) return true;
    bool prompt_given = o->prompt || o->prompt_file || o->tokens_csv;
    return !prompt_given && !o->no_conversation && !o->tokenize_only && !o->verify && isatty(STDIN_FILENO);
}

/* A one-shot answer (or --tokenize / --verify): the prompt from -p, -f, --tokens or stdin. */
static int run_once(ts_model *m, ts_session *s, const cli_options *o, const template_setup *tpl, double load_seconds) {
    ts_error err = {{0}};
    int rc = 1, n_prompt = 0;
    int32_t *tokens = NULL;
    char *read_text = NULL;
    const char *text = NULL, *text_name = "the prompt";
    bool chat = false, unknown_template = false;
    outputs out = {0};
    ts_gen_result res = {0};
    size_t limit = s ? ts_session_text_limit(s) : (size_t)1 << 26;

    if (o->tokens_csv) {
        if (parse_token_list(o->tokens_csv, &tokens, &n_prompt) != 0) goto done;
    } else {
        const char *path = o->prompt_file ? o->prompt_file : !o->prompt || !strcmp(o->prompt, "-") ? "-" : NULL;
        if (path && !o->prompt && !o->prompt_file && (o->tokenize_only || o->verify) && isatty(STDIN_FILENO)) {
            fprintf(stderr, "error: %s needs a prompt: PROMPT, -p TEXT, -f FILE, --tokens or text on stdin\n",
                    o->tokenize_only ? "--tokenize" : "--verify");
            goto done;
        }
        if (path) {
            if (!strcmp(path, "-") && isatty(STDIN_FILENO) && !o->quiet)
                fprintf(stderr, "(reading the prompt from the terminal: end it with Ctrl-D)\n");
            if (prompt_read(path, limit, &read_text, &err) != 0) { fprintf(stderr, "error: %s\n", err.msg); goto done; }
            text = read_text;
            text_name = strcmp(path, "-") ? path : "stdin";
        } else {
            text = o->prompt;
        }
        ts_chat_message msgs[2];
        int n = 0;
        if (o->system) msgs[n++] = (ts_chat_message){ "system", o->system };
        msgs[n++] = (ts_chat_message){ "user", text };
        /* --tokenize shows what a model is fed (its chat template applied unless --raw); a tokenizer
         * file alone tokenizes the text as it is */
        const bool raw = o->raw || (o->tokenize_only && !ts_model_has_weights(m));
        n_prompt = prompt_to_tokens(m, msgs, n, raw, &tpl->opt, s ? limit : 0, text_name,
                                    o->chat_template ? o->chat_template : o->model_path, &tokens, &chat,
                                    &unknown_template, &err);
        if (unknown_template)
            fprintf(stderr, "warning: %s: the chat template does not parse; sending the prompt as plain text (--chat-template FILE gives another)\n", o->model_path);
        if (n_prompt < 0) { fprintf(stderr, "error: %s\n", err.msg); goto done; }
        /* a chat model given no question answers a turn that is not there */
        if (chat && !o->tokenize_only && !text[strspn(text, " \t\r\n")]) {
            fprintf(stderr, "error: %s is empty: a chat model needs a question (--raw sends the empty text as it is)\n", text_name);
            goto done;
        }
        if (o->system && !chat) fprintf(stderr, "warning: %s: --system needs a chat template; ignored\n", o->model_path);
    }
    if (o->tokenize_only) {
        for (int i = 0; i < n_prompt; i++) printf(i ? " %d" : "%d", tokens[i]);
        printf("\n");
        rc = 0;
        goto done;
    }
    if (o->verify) {
        rc = run_verify(m, tokens, n_prompt, o->n_predict_given ? o->n_predict : 8, o->n_threads, stdout);
        goto done;
    }
    if (n_prompt > ts_session_n_ctx(s)) {
        fprintf(stderr, "error: %s: %d tokens, longer than the context of %d\n", o->tokens_csv ? "--tokens" : text_name,
                n_prompt, ts_session_n_ctx(s));
        goto done;
    }
    if (o->dump_logits && !(out.dump = fopen(o->dump_logits, "wb"))) {
        fprintf(stderr, "error: %s: cannot open for writing: %s\n", o->dump_logits, strerror(errno));
        goto done;
    }
    /* echo the prompt, as llama-cli and llama2.c do (not the rendered chat template) */
    if (!o->no_display_prompt) {
        if (o->tokens_csv) echo_tokens(m, tokens, n_prompt, &out);
        else if (!chat) sink_write(&out, text, strlen(text));
    }
    progress_start(&out.prefill, "prompt", "tokens", 1.0, !o->quiet && isatty(STDERR_FILENO));
    ts_gen_request rq = { .prompt = tokens, .n_prompt = n_prompt, .max_tokens = o->n_predict,
                          .sampling = o->sampling, .stop = o->stop, .n_stop = o->n_stop, .heal = o->heal, .ignore_eos = o->ignore_eos,
                          .grammar = o->grammar, .on_text = sink_write, .on_logits = out.dump ? dump_rows : NULL, .user = &out,
                          .on_prefill = prefill_progress };
    if (ts_session_generate(s, &rq, &res, &err) != 0) {
        sink_write(&out, "\n", 1);
        if (out.dump_failed) fprintf(stderr, "error: %s: write failed: %s\n", o->dump_logits, strerror(out.dump_error));
        else fprintf(stderr, "error: %s: %s\n", o->model_path, err.msg);
        goto done;
    }
    sink_write(&out, "\n", 1);
    if (out.failed) { fprintf(stderr, "error: stdout: write failed: %s\n", strerror(out.error)); goto done; }
    if (!strcmp(res.finish_reason, "context"))
        fprintf(stderr, "warning: the context is full (%d tokens)\n", ts_session_n_ctx(s));
    if (!o->quiet) stats_print(stderr, NULL, &res, n_prompt - res.n_prompt, &o->sampling, load_seconds);
    rc = 0;
done:
    if (out.dump && fclose(out.dump) != 0 && rc == 0) { fprintf(stderr, "error: %s: write failed\n", o->dump_logits); rc = 1; }
    ts_gen_result_free(&res);
    free(tokens);
    free(read_text);
    return rc;
}

/* --batch without --shard: the shard a cluster scheduler's environment names, if any; a sharded
 * run's -o file gets the shard's name (*output, malloc'd, replaces o->output_path). */
static int resolve_shard(cli_options *o, char **output) {
    ts_error err = {{0}};
    if (!o->shard_n) {
        const char *source;
        int got = shard_from_env(o->shards, &o->shard_k, &o->shard_n, &source, &err);
        if (got < 0) { fprintf(stderr, "error: %s\n", err.msg); return -1; }
        if (got == 1 && !o->quiet) fprintf(stderr, "shard %d of %d (from %s)\n", o->shard_k, o->shard_n, source);
        if (got == 0) o->shard_n = 0;
    }
    if (o->shard_n > 1 && o->output_path) {
        if (!(*output = shard_output_name(o->output_path, o->shard_k, o->shard_n))) { fprintf(stderr, "error: out of memory\n"); return -1; }
        o->output_path = *output;
    }
    return 0;
}

/* How the model is loaded, from the options (every mode and the server): copied when the copy
 * keeps rows in lanes, which decode faster than the file's rows read in place (TS_WEIGHTS_DECODE;
 * else as TS_WEIGHTS_AUTO). A one-shot answer too: read in place, the 1B Q4_K_M decoded at 29 tok/s
 * against the copy's 36, its Q2_K at 28 against 45, TQ1_0 at 8 against 53, so a copy paid for
 * itself within 200 tokens here (13 for TQ1_0); --mmap keeps the fastest first token. */
static ts_load_options load_options_of(const cli_options *o) {
    return (ts_load_options){ .tokenizer_path = o->tokenizer, .simd = o->simd, .quant = o->quant,
                              .cache_type_k = o->cache_type_k, .cache_type_v = o->cache_type_v,
                              .weights = o->weights == TS_WEIGHTS_AUTO ? TS_WEIGHTS_DECODE : o->weights,
                              .threads = o->n_threads };
}

/* `run serve MODEL`: the options handed to the server, which loads the model itself (answering
 * /health with 503 meanwhile). */
static int serve(const cli_options *o, const template_setup *tpl) {
    char key[512];
    const char *api_key = o->api_key;
    if (o->api_key_file) {
        FILE *f = fopen(o->api_key_file, "r");
        if (!f) { fprintf(stderr, "error: %s: cannot open: %s\n", o->api_key_file, strerror(errno)); return 1; }
        bool got = fgets(key, sizeof key, f) != NULL;
        fclose(f);
        key[got ? strcspn(key, "\r\n") : 0] = 0;
        if (!key[0]) { fprintf(stderr, "error: %s: no key on its first line\n", o->api_key_file); return 1; }
        api_key = key;
    }
    if (api_key && !*api_key) { fprintf(stderr, "error: --api-key is empty\n"); return 1; }
    /* the model's name: its file or folder name */
    char id[256];
    snprintf(id, sizeof id, "%s", o->model_path);
    size_t n = strlen(id);
    while (n > 1 && id[n - 1] == '/') id[--n] = 0;
    const char *base = strrchr(id, '/');
    base = base && base[1] ? base + 1 : id;
    server_options so = { .model_path = o->model_path, .model_id = base, .host = o->host, .port = o->port,
                          .api_key = api_key, .n_parallel = o->n_parallel, .n_ctx = o->n_ctx, .n_threads = o->n_threads,
                          .max_connections = o->max_connections, .max_queue = o->max_queue, .timeout = o->timeout,
                          .max_tokens = o->n_predict_given ? o->n_predict : -1, .sampling = o->sampling, .heal = o->heal,
                          .verbose = o->verbose, .quiet = o->quiet, .chat = &tpl->opt, .stop = &interrupted,
                          .load = load_options_of(o), .spec = o->spec, .spec_k = o->spec_k, .spec_n = o->spec_n,
                          .spec_always = o->spec_always, .model_draft = o->model_draft, .grammar = o->grammar };
    struct sigaction sa = { .sa_handler = on_stop };
    sigemptyset(&sa.sa_mask);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGINT, &sa, NULL);
    signal(SIGPIPE, SIG_IGN);
    return run_server(&so);
}

/* --grammar, --json-schema or --json, compiled into o->grammar (NULL when none is given); -1 after
 * a one-line error naming the file or the option. */
static int load_grammar(cli_options *o) {
    ts_error err = {{0}};
    int given = (o->grammar_file != NULL) + (o->json_schema != NULL) + o->json;
    o->grammar = NULL;
    if (given > 1) { fprintf(stderr, "error: give one of --grammar, --json-schema and --json\n"); return -1; }
    if (o->json) {
        if (ts_grammar_from_json_schema("{}", 2, &o->grammar, &err) == 0) return 0;
        fprintf(stderr, "error: --json: %s\n", err.msg);
        return -1;
    }
    const char *name = o->grammar_file ? o->grammar_file : o->json_schema;
    if (!name) return 0;
    char *text = NULL;
    size_t len = 0;
    int rc;
    bool inline_schema = o->json_schema && (name[strspn(name, " \t\r\n")] == '{' || !strcmp(name, "true"));
    if (inline_schema) rc = ts_grammar_from_json_schema(name, strlen(name), &o->grammar, &err);
    else if ((rc = file_read(name, &text, &len, &err)) == 0)
        rc = o->grammar_file ? ts_grammar_from_gbnf(text, len, &o->grammar, &err) : ts_grammar_from_json_schema(text, len, &o->grammar, &err);
    free(text);
    if (rc != 0) fprintf(stderr, "error: %s: %s\n", inline_schema ? "--json-schema" : name, err.msg);
    return rc;
}

static int run_options(cli_options *op);

static int run(int argc, char **argv) {
    cli_options o;
    int prc = options_parse(argc, argv, &o);
    if (prc != 0) return prc > 0 ? 0 : 1;
    if (load_grammar(&o) != 0) return 1;
    int rc = run_options(&o);
    ts_grammar_free(o.grammar);
    return rc;
}

/* Every mode, once the options are read. */
static int run_options(cli_options *op) {
    cli_options o = *op;
    char *shard_output = NULL;
    if (o.batch_path && resolve_shard(&o, &shard_output) != 0) return 1;
    template_setup tpl;
    if (template_setup_load(&o, &tpl) != 0) { template_setup_free(&tpl); free(shard_output); return 1; }
    if (o.render) {
        int rrc = template_render(&o, &tpl);
        template_setup_free(&tpl);
        return rrc;
    }
    if (o.serve) {
        int src = serve(&o, &tpl);
        template_setup_free(&tpl);
        return src;
    }

    ts_error err = {{0}};
    ts_model *m = NULL, *draft = NULL;
    ts_session *s = NULL;
    int rc = 1;
    ts_load_options lo = load_options_of(&o);
    progress loading;
    progress_start(&loading, "loading", "MB", 1.0 / 1048576.0, !o.quiet && isatty(STDERR_FILENO));
    lo.on_progress = load_progress;
    lo.progress_user = &loading;
    int load_rc = ts_model_load(o.model_path, &lo, &m, &err);
    progress_end(&loading);
    const double load_seconds = progress_elapsed(&loading);
    if (load_rc != 0) { fprintf(stderr, "error: %s\n", err.msg); goto done; }
    if (o.model_draft && !o.tokenize_only && !o.verify) {   /* --model-draft: the same load options, its own tokenizer */
        ts_load_options dlo = load_options_of(&o);
        dlo.tokenizer_path = NULL;
        if (ts_model_load(o.model_draft, &dlo, &draft, &err) != 0) { fprintf(stderr, "error: %s\n", err.msg); goto done; }
    }
    if (o.info) {
        ts_model_print_info(m, stdout);
        if (!o.prompt && !o.prompt_file && !o.tokens_csv && !o.interactive && !o.batch_path && !o.check_path) {
            rc = 0;
            goto done;
        }
    }
    bool chat = wants_chat(&o);
    const int trained = ts_model_n_ctx_train(m);
    if (o.n_ctx > trained && trained > 0 && !o.quiet)
        fprintf(stderr, "warning: -c %d is more than the %d tokens %s was trained on: answers past that may fall apart\n",
                o.n_ctx, trained, o.model_path);
    /* batch answering runs several lines at once (--parallel), every other mode one request */
    ts_session_options so = { .n_ctx = o.n_ctx, .n_threads = o.n_threads, .n_slots = 1,
                              .spec = o.spec, .spec_k = o.spec_k, .spec_n = o.spec_n, .spec_always = o.spec_always,
                              .draft = draft };
    if (o.batch_path || o.check_path) so.n_slots = o.n_parallel > 0 ? o.n_parallel : ts_default_slots(m, o.n_ctx);
    if (!o.tokenize_only && !o.verify && ts_session_new_opts(m, &so, &s, &err) != 0) {
        fprintf(stderr, "error: %s\n", err.msg);
        goto done;
    }
    if (o.batch_path || o.check_path) {
        batch_options bo = { .model_path = o.model_path, .input_path = o.batch_path ? o.batch_path : o.check_path,
                             .output_path = o.output_path, .resume = o.resume, .wait_lock = o.wait_lock,
                             .shard_k = o.shard_k, .shard_n = o.shard_n, .n_ctx = o.n_ctx, .seed_given = o.seed_given, .max_tokens = o.n_predict,
                             .sampling = o.sampling, .match = o.match_mode, .system = o.system, .raw = o.raw,
                             .heal = o.heal, .quiet = o.quiet, .ignore_eos = o.ignore_eos, .chat = &tpl.opt,
                             .grammar = o.grammar };
        const char *format = ts_chat_tool_format(m, &tpl.opt);
        bo.tool_format = format ? tool_format_by_name(format) : NULL;
        if (o.check_path && !o.n_predict_given) bo.max_tokens = 64;
        rc = o.batch_path ? run_batch(m, s, &bo) : run_check(m, s, &bo);
    } else if (chat) {
        chat_options co = { .model_path = o.model_path, .template_name = o.chat_template ? o.chat_template : o.model_path,
                            .chat = &tpl.opt, .system = o.system, .first_prompt = o.prompt, .raw = o.raw,
                            .heal = o.heal, .verbose = o.verbose, .quiet = o.quiet,
                            .ignore_eos = o.ignore_eos, .single_turn = o.single_turn, .no_history = o.no_history,
                            .max_tokens = o.n_predict_given ? o.n_predict : -1, .sampling = o.sampling,
                            .stop = o.stop, .n_stop = o.n_stop, .grammar = o.grammar, .interrupted = &interrupted,
                            .on_interrupt = on_interrupt };
        rc = run_chat(m, s, &co);
    } else {
        rc = run_once(m, s, &o, &tpl, load_seconds);
    }
done:
    ts_session_free(s);
    ts_model_free(draft);
    ts_model_free(m);
    template_setup_free(&tpl);
    free(shard_output);
    return rc;
}

int main(int argc, char **argv) {
    int rc = run(argc, argv);
    /* whatever the mode, output that could not be written is a failure (a full disk, a closed pipe) */
    if (rc != 1 && (fflush(stdout) != 0 || ferror(stdout))) {
        fprintf(stderr, "error: stdout: write failed\n");
        rc = 1;
    }
    return rc;
}
