/* The command line: ./run MODEL "prompt" [options]. One user of the tessera API. */
#include "tessera.h"
#include "core/utf8.h"
#include "cli/generate.h"
#include "cli/batch.h"
#include "cli/verify.h"
#include "core/error.h"
#include "io/json.h"
#include "io/file.h"
#include "text/chat_template.h"
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

typedef struct cli_options {
    const char *model_path;
    const char *prompt;
    const char *tokens_csv;      /* --tokens 1,2,3 */
    const char *dump_logits;     /* --dump-logits FILE */
    int n_predict;               /* -n */
    int n_threads;               /* -t */
    const char *simd;            /* --simd */
    const char *tokenizer;       /* --tokenizer FILE */
    const char *system;          /* --system TEXT */
    bool raw;                    /* --raw: no chat template */
    bool tokenize_only;          /* --tokenize: print the prompt's ids and exit */
    const char *quant;           /* --quant q8_0|q4_0 */
    int n_ctx;                   /* -c; 0 = the model's, capped by memory */
    bool info, quiet;
    ts_sampler_params sampling;
    bool n_predict_given;        /* the modes have their own default -n */
    bool heal;                   /* --heal: token healing */
    const char *batch_path;      /* --batch FILE */
    const char *check_path;      /* --check FILE */
    const char *output_path;     /* -o FILE (--batch) */
    bool resume;                 /* --resume (--batch) */
    int shard_k, shard_n;        /* --shard K/N (--batch) */
    const char *match;           /* --match MODE (--check) */
    bool verify;                 /* --verify */
    const char *chat_template;   /* --chat-template FILE */
    const char *chat_kwargs;     /* --chat-template-kwargs JSON */
    const char *tools;           /* --tools FILE */
    const char *date;            /* --date YYYY-MM-DD */
    const char *render;          /* --render CONVERSATION.json */
    int cache_type_k, cache_type_v;   /* --cache-type-k/-v (-ctk/-ctv): enum ts_kv_type */
} cli_options;

static void usage(FILE *f) {
    fprintf(f,
        "usage: run MODEL [PROMPT] [options]\n"
        "  MODEL is a GGUF file or a Hugging Face model folder (config.json + safetensors).\n"
        "  -p, --prompt TEXT       the prompt (or give it as the second argument)\n"
        "  -n, --n-predict N       tokens to generate (default 256)\n"
        "  -t, --threads N         threads (default: all cores)\n"
        "  -c, --ctx-size N        context length (default: the model's, capped by memory)\n"
        "  --temp T                sampling temperature (default 0: greedy)\n"
        "  --top-k K, --top-p P, --min-p P, --repeat-penalty R, --repeat-last-n N, --seed S\n"
        "  --tokens 1,2,3          feed these token ids instead of a text prompt\n"
        "  --dump-logits FILE      write float32 logits, one row of n_vocab per evaluated position\n"
        "  --simd SET              kernels: auto (default), scalar, avx2, avx512, neon\n"
        "  -ctk, --cache-type-k T  KV cache type of the keys: f16 (default), f32 or q8_0\n"
        "  -ctv, --cache-type-v T  KV cache type of the values: f16 (default), f32 or q8_0\n"
        "  --system TEXT           a system turn before the prompt (chat models)\n"
        "  --raw                   send the prompt as plain text, without the chat template\n"
        "  --tokenize              print the prompt's token ids and exit (MODEL may be a tokenizer)\n"
        "  --tokenizer FILE        use this tokenizer.json / tokenizer.model / GGUF vocabulary\n"
        "  --quant q8_0|q4_0       Hugging Face folders: quantize the matrices at load\n"
        "  --info                  print the geometry table and layout decisions\n"
        "  --quiet                 no statistics line on stderr\n"
        "  --heal                  token healing: a prompt ending inside a word is completed as the\n"
        "                          whole word would be (the last token is backed up and re-generated)\n"
        "\n"
        "chat templates (the model's Jinja template, run by tessera's sandboxed interpreter):\n"
        "  --chat-template FILE    use this template instead of the model's: a .jinja file, or a\n"
        "                          tokenizer_config.json holding \"chat_template\"\n"
        "  --chat-template-kwargs JSON   extra template variables, e.g. '{\"enable_thinking\": false}'\n"
        "  --tools FILE.json       a JSON array of tools handed to the template as `tools`\n"
        "  --date YYYY-MM-DD       the date strftime_now() gives templates (default: today)\n"
        "  --render CONV.json      print the rendered conversation and nothing else (no generation):\n"
        "                          CONV.json is {\"messages\", \"add_generation_prompt\", \"bos_token\",\n"
        "                          \"eos_token\", \"tools\"?}; MODEL may be left out with --chat-template\n"
        "                          (with a MODEL, its template and BOS/EOS text are used)\n"
        "\n"
        "batch answering (one model load, prompts sharing a prefix reuse its KV cache):\n"
        "  --batch FILE.jsonl      answer each line {\"id\", \"prompt\" | \"messages\": [{\"role\",\"content\"}]}\n"
        "                          (optional per line: max_tokens, temperature, seed, stop); output lines\n"
        "                          {\"line\",\"id\",\"answer\",\"tokens_prompt\",\"tokens_generated\",\n"
        "                          \"finish_reason\",\"ms\"} or {\"line\",\"id\",\"error\"}, in input order.\n"
        "                          Exit 0: all answered; 2: some lines have errors; 1: could not run\n"
        "  -o, --output FILE       write the answers there (default stdout), flushed line by line\n"
        "  --resume                skip ids already answered in the -o file (a partial last line is redone)\n"
        "  --shard K/N             answer only lines whose (line number - 1) %% N == K, K in 0..N-1;\n"
        "                          merge the shards' outputs with: cat OUT-* | sort -t: -k2,2n -s\n"
        "\n"
        "known-answer checks:\n"
        "  --check FILE.jsonl      cases {\"id\", \"prompt\" | \"messages\" | \"system\"+\"user\", \"expected\",\n"
        "                          \"match\"?}; greedy; prints PASS/FAIL per case and \"N passed, N failed\";\n"
        "                          exit 0 only when all pass. -n defaults to 64\n"
        "  --match MODE            the default match: prefix (the trimmed answer starts with the expected\n"
        "                          text; default), exact (equals it, trimmed) or contains\n"
        "  --verify                self-check on the prompt (or --tokens): prefill + cached decode vs a full\n"
        "                          re-forward, batched vs sequential prefill, truncate + re-evaluate;\n"
        "                          -n defaults to 8. Exit 0 only when all pass\n");
}


static int parse_int(const char *opt, const char *s, long lo, long hi, int *out) {
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno || end == s || *end || v < lo || v > hi) {
        fprintf(stderr, "error: %s expects an integer in [%ld, %ld], got '%s'\n", opt, lo, hi, s);
        return -1;
    }
    *out = (int)v;
    return 0;
}

static int parse_float(const char *opt, const char *s, float *out) {
    char *end;
    errno = 0;
    float v = strtof(s, &end);
    if (errno || end == s || *end || !isfinite(v)) {
        fprintf(stderr, "error: %s expects a number, got '%s'\n", opt, s);
        return -1;
    }
    *out = v;
    return 0;
}

/* "K/N" with 0 <= K < N. */
static int parse_shard(const char *s, int *k, int *n) {
    char *end;
    errno = 0;
    long kk = strtol(s, &end, 10), nn = -1;
    if (!errno && end != s && *end == '/') {
        const char *p = end + 1;
        nn = strtol(p, &end, 10);
        if (errno || end == p || *end) nn = -1;
    }
    if (nn < 1 || nn > 1000000 || kk < 0 || kk >= nn) {
        fprintf(stderr, "error: --shard expects K/N with 0 <= K < N (e.g. 0/4), got '%s'\n", s);
        return -1;
    }
    *k = (int)kk;
    *n = (int)nn;
    return 0;
}

static int parse_args(int argc, char **argv, cli_options *o) {
    memset(o, 0, sizeof *o);
    o->n_predict = 256;
    o->sampling = ts_sampler_default_params();
    o->sampling.seed = (uint64_t)time(NULL);
    int positional = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *val = i + 1 < argc ? argv[i + 1] : NULL;
#define NEED_VALUE() do { if (!val) { fprintf(stderr, "error: %s needs a value\n", a); return -1; } i++; } while (0)
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) { usage(stdout); exit(0); }
        else if (!strcmp(a, "-p") || !strcmp(a, "--prompt")) { NEED_VALUE(); o->prompt = val; }
        else if (!strcmp(a, "-n") || !strcmp(a, "--n-predict")) { NEED_VALUE(); if (parse_int(a, val, 0, INT_MAX, &o->n_predict)) return -1; o->n_predict_given = true; }
        else if (!strcmp(a, "-t") || !strcmp(a, "--threads")) { NEED_VALUE(); if (parse_int(a, val, 1, 256, &o->n_threads)) return -1; }
        else if (!strcmp(a, "-c") || !strcmp(a, "--ctx-size")) { NEED_VALUE(); if (parse_int(a, val, 0, 1 << 24, &o->n_ctx)) return -1; }
        else if (!strcmp(a, "--temp")) { NEED_VALUE(); if (parse_float(a, val, &o->sampling.temp)) return -1; }
        else if (!strcmp(a, "--top-k")) { NEED_VALUE(); if (parse_int(a, val, 0, INT_MAX, &o->sampling.top_k)) return -1; }
        else if (!strcmp(a, "--top-p")) { NEED_VALUE(); if (parse_float(a, val, &o->sampling.top_p)) return -1; }
        else if (!strcmp(a, "--min-p")) { NEED_VALUE(); if (parse_float(a, val, &o->sampling.min_p)) return -1; }
        else if (!strcmp(a, "--repeat-penalty")) { NEED_VALUE(); if (parse_float(a, val, &o->sampling.repeat_penalty)) return -1; }
        else if (!strcmp(a, "--repeat-last-n")) { NEED_VALUE(); if (parse_int(a, val, -1, INT_MAX, &o->sampling.repeat_last_n)) return -1; }
        else if (!strcmp(a, "--seed")) {
            NEED_VALUE();
            char *end; errno = 0;
            unsigned long long s = strtoull(val, &end, 10);
            if (errno || end == val || *end) { fprintf(stderr, "error: --seed expects an integer, got '%s'\n", val); return -1; }
            o->sampling.seed = s;
        }
        else if (!strcmp(a, "--tokens")) { NEED_VALUE(); o->tokens_csv = val; }
        else if (!strcmp(a, "--dump-logits")) { NEED_VALUE(); o->dump_logits = val; }
        else if (!strcmp(a, "--simd")) { NEED_VALUE(); o->simd = val; }
        else if (!strcmp(a, "-ctk") || !strcmp(a, "--cache-type-k") || !strcmp(a, "-ctv") || !strcmp(a, "--cache-type-v")) {
            NEED_VALUE();
            int t = ts_kv_type_from_name(val);
            if (t < 0) { fprintf(stderr, "error: %s expects a KV cache type: f32, f16 or q8_0, got '%s'\n", a, val); return -1; }
            if (!strcmp(a, "-ctk") || !strcmp(a, "--cache-type-k")) o->cache_type_k = t;
            else o->cache_type_v = t;
        }
        else if (!strcmp(a, "--tokenizer")) { NEED_VALUE(); o->tokenizer = val; }
        else if (!strcmp(a, "--system")) { NEED_VALUE(); o->system = val; }
        else if (!strcmp(a, "--raw")) o->raw = true;
        else if (!strcmp(a, "--tokenize")) o->tokenize_only = true;
        else if (!strcmp(a, "--quant")) { NEED_VALUE(); o->quant = val; }
        else if (!strcmp(a, "--info")) o->info = true;
        else if (!strcmp(a, "--quiet")) o->quiet = true;
        else if (!strcmp(a, "--heal")) o->heal = true;
        else if (!strcmp(a, "--batch")) { NEED_VALUE(); o->batch_path = val; }
        else if (!strcmp(a, "--check")) { NEED_VALUE(); o->check_path = val; }
        else if (!strcmp(a, "-o") || !strcmp(a, "--output")) { NEED_VALUE(); o->output_path = val; }
        else if (!strcmp(a, "--resume")) o->resume = true;
        else if (!strcmp(a, "--shard")) { NEED_VALUE(); if (parse_shard(val, &o->shard_k, &o->shard_n)) return -1; }
        else if (!strcmp(a, "--match")) {
            NEED_VALUE();
            match_mode mm;
            if (parse_match_mode(val, &mm) != 0) { fprintf(stderr, "error: --match expects exact, prefix or contains, got '%s'\n", val); return -1; }
            o->match = val;
        }
        else if (!strcmp(a, "--verify")) o->verify = true;
        else if (!strcmp(a, "--chat-template")) { NEED_VALUE(); o->chat_template = val; }
        else if (!strcmp(a, "--chat-template-kwargs")) { NEED_VALUE(); o->chat_kwargs = val; }
        else if (!strcmp(a, "--tools")) { NEED_VALUE(); o->tools = val; }
        else if (!strcmp(a, "--date")) { NEED_VALUE(); o->date = val; }
        else if (!strcmp(a, "--render")) { NEED_VALUE(); o->render = val; }
        else if (a[0] == '-' && a[1] != 0) { fprintf(stderr, "error: unknown option '%s' (see --help)\n", a); return -1; }
        else if (positional == 0) { o->model_path = a; positional++; }
        else if (positional == 1 && !o->prompt) { o->prompt = a; positional++; }
        else { fprintf(stderr, "error: unexpected argument '%s'\n", a); return -1; }
#undef NEED_VALUE
    }
    if (o->render && !o->model_path && !o->chat_template) {
        fprintf(stderr, "error: --render needs a MODEL or --chat-template FILE\n");
        return -1;
    }
    if (o->render && (o->prompt || o->tokens_csv || o->batch_path || o->check_path || o->verify || o->tokenize_only)) {
        fprintf(stderr, "error: --render prints a rendered conversation: it takes no prompt and no other mode\n");
        return -1;
    }
    if (!o->model_path && !o->render) { usage(stderr); return -1; }
    if ((o->batch_path != NULL) + (o->check_path != NULL) + o->verify > 1) {
        fprintf(stderr, "error: --batch, --check and --verify are separate modes: give one\n");
        return -1;
    }
    if (!o->batch_path && (o->output_path || o->resume || o->shard_n)) {
        fprintf(stderr, "error: -o, --resume and --shard go with --batch\n");
        return -1;
    }
    if (o->resume && !o->output_path) { fprintf(stderr, "error: --resume needs -o FILE (the answers so far)\n"); return -1; }
    if (o->match && !o->check_path) { fprintf(stderr, "error: --match goes with --check\n"); return -1; }
    if ((o->batch_path || o->check_path) && (o->prompt || o->tokens_csv || o->dump_logits)) {
        fprintf(stderr, "error: --batch and --check take their prompts from the file\n");
        return -1;
    }
    return 0;
}

/* What --chat-template, --chat-template-kwargs, --tools and --date give, with the files read. */
typedef struct chat_setup {
    ts_chat_options opt;
    char *template_text, *tools_text;
} chat_setup;

static void chat_setup_free(chat_setup *c) {
    free(c->template_text);
    free(c->tools_text);
    memset(c, 0, sizeof *c);
}

/* A template file: Jinja text, or a tokenizer_config.json whose "chat_template" is the template
 * (a string, or a list of {"name", "template"} of which "default" is taken). */
static int read_template_file(const char *path, char **out, ts_error *err) {
    char *data;
    size_t len;
    *out = NULL;
    if (file_read(path, &data, &len, err) != 0) return -1;
    size_t i = 0;
    while (i < len && strchr(" \t\r\n", data[i])) i++;
    json_value *cfg;
    ts_error e2;
    if (i < len && data[i] == '{' && json_parse(data, len, &cfg, &e2) == 0) {
        const json_value *t = json_get(cfg, "chat_template");
        const char *text = t && t->type == JSON_STRING ? t->str : NULL;
        if (t && t->type == JSON_ARRAY)
            for (size_t k = 0; k < t->n; k++) {
                const char *name = json_get_str(&t->items[k], "name");
                if (name && !strcmp(name, "default")) text = json_get_str(&t->items[k], "template");
            }
        char *copy = text ? strdup(text) : NULL;
        json_free(cfg);
        free(data);
        if (!text) return ts_fail(err, "%s: a JSON file without a \"chat_template\"", path);
        if (!copy) return ts_fail(err, "out of memory");
        *out = copy;
        return 0;
    }
    *out = data;
    return 0;
}

static int chat_setup_load(const cli_options *o, chat_setup *c) {
    ts_error err = {{0}};
    memset(c, 0, sizeof *c);
    if (o->chat_template) {
        if (read_template_file(o->chat_template, &c->template_text, &err) != 0) { fprintf(stderr, "error: %s\n", err.msg); return -1; }
        c->opt.template_text = c->template_text;
    }
    if (o->chat_kwargs) {
        json_value *v;
        if (json_parse(o->chat_kwargs, strlen(o->chat_kwargs), &v, &err) != 0) {
            fprintf(stderr, "error: --chat-template-kwargs: %s\n", err.msg);
            return -1;
        }
        bool object = v->type == JSON_OBJECT;
        json_free(v);
        if (!object) { fprintf(stderr, "error: --chat-template-kwargs expects a JSON object\n"); return -1; }
        c->opt.kwargs_json = o->chat_kwargs;
    }
    if (o->tools) {
        size_t len;
        json_value *v;
        if (file_read(o->tools, &c->tools_text, &len, &err) != 0) { fprintf(stderr, "error: %s\n", err.msg); return -1; }
        if (json_parse(c->tools_text, len, &v, &err) != 0) { fprintf(stderr, "error: %s: %s\n", o->tools, err.msg); return -1; }
        bool array = v->type == JSON_ARRAY;
        json_free(v);
        if (!array) { fprintf(stderr, "error: %s: the tools must be a JSON array\n", o->tools); return -1; }
        c->opt.tools_json = c->tools_text;
    }
    if (o->date) {
        struct tm day;
        if (chat_parse_date(o->date, &day) != 0) { fprintf(stderr, "error: --date expects a date YYYY-MM-DD, got '%s'\n", o->date); return -1; }
        c->opt.date = o->date;
    }
    return 0;
}

/* --render: the conversation through the template, printed as it is. */
static int run_render(const cli_options *o, const chat_setup *c) {
    ts_error err = {{0}};
    ts_model *m = NULL;
    char *conv = NULL, *out = NULL;
    size_t len;
    int rc = 1;
    if (file_read(o->render, &conv, &len, &err) != 0) { fprintf(stderr, "error: %s\n", err.msg); return 1; }
    if (o->model_path) {
        ts_load_options lo = { .tokenizer_path = o->tokenizer, .simd = o->simd, .quant = o->quant,
                               .cache_type_k = o->cache_type_k, .cache_type_v = o->cache_type_v };
        if (ts_model_load(o->model_path, &lo, &m, &err) != 0) { fprintf(stderr, "error: %s\n", err.msg); free(conv); return 1; }
    }
    if (ts_chat_render_json(m, conv, len, &c->opt, &out, &err) != 0) fprintf(stderr, "error: %s: %s\n", o->render, err.msg);
    else {
        fwrite(out, 1, strlen(out), stdout);
        rc = fflush(stdout) == 0 ? 0 : 1;
    }
    free(out);
    free(conv);
    ts_model_free(m);
    return rc;
}

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

/* Prints a token's bytes, holding back incomplete UTF-8 characters. */
static void emit_token(const ts_model *m, int32_t tok, utf8_stream *st) {
    char piece[256], out[256 + 16];
    int len = ts_token_text(m, tok, piece, sizeof piece);
    if (len <= 0) return;
    size_t w = utf8_stream_push(st, piece, (size_t)len, out);
    fwrite(out, 1, w, stdout);
    fflush(stdout);
}

static void print_text(void *user, const char *text, size_t len) {
    (void)user;
    fwrite(text, 1, len, stdout);
    fflush(stdout);
}

int main(int argc, char **argv) {
    cli_options o;
    if (parse_args(argc, argv, &o) != 0) return 1;
    chat_setup chat_cfg;
    if (chat_setup_load(&o, &chat_cfg) != 0) { chat_setup_free(&chat_cfg); return 1; }
    if (o.render) {
        int rrc = run_render(&o, &chat_cfg);
        chat_setup_free(&chat_cfg);
        return rrc;
    }

    ts_error err = {{0}};
    ts_model *m = NULL;
    ts_load_options lo = { .tokenizer_path = o.tokenizer, .simd = o.simd,
                           .quant = o.quant, .cache_type_k = o.cache_type_k, .cache_type_v = o.cache_type_v };
    if (ts_model_load(o.model_path, &lo, &m, &err) != 0) {
        fprintf(stderr, "error: %s\n", err.msg);
        chat_setup_free(&chat_cfg);
        return 1;
    }
    if (o.info) {
        ts_model_print_info(m, stdout);
        if (!o.prompt && !o.tokens_csv) { ts_model_free(m); chat_setup_free(&chat_cfg); return 0; }
    }
    if (o.batch_path || o.check_path) {
        batch_options bo = { .model_path = o.model_path, .input_path = o.batch_path ? o.batch_path : o.check_path,
                             .output_path = o.output_path, .resume = o.resume, .shard_k = o.shard_k,
                             .shard_n = o.shard_n, .max_tokens = o.n_predict, .sampling = o.sampling,
                             .system = o.system, .raw = o.raw, .heal = o.heal, .quiet = o.quiet,
                             .n_ctx = o.n_ctx, .n_threads = o.n_threads, .chat = &chat_cfg.opt };
        int brc;
        if (o.batch_path) brc = run_batch(m, &bo);
        else {
            if (!o.n_predict_given) bo.max_tokens = 64;
            if (o.match) parse_match_mode(o.match, &bo.match);
            brc = run_check(m, &bo);
        }
        ts_model_free(m);
        chat_setup_free(&chat_cfg);
        return brc;
    }
    int rc = 1;
    int32_t *tokens = NULL;
    int n_prompt = 0;
    bool chat = false, unknown_template = false;
    session s = {0};
    gen_result res = {0};
    FILE *dump = NULL;

    if (o.tokens_csv) {
        if (parse_token_list(o.tokens_csv, &tokens, &n_prompt) != 0) goto done;
    } else {
        ts_chat_message msgs[2];
        int n = 0;
        if (o.system) msgs[n++] = (ts_chat_message){ "system", o.system };
        msgs[n++] = (ts_chat_message){ "user", o.prompt ? o.prompt : "" };
        n_prompt = prompt_to_tokens(m, msgs, n, o.raw || o.tokenize_only, &chat_cfg.opt, &tokens, &chat, &unknown_template, &err);
        if (unknown_template)
            fprintf(stderr, "warning: %s: the chat template does not parse; sending the prompt as plain text (--chat-template FILE gives another)\n", o.model_path);
        if (n_prompt < 0) { fprintf(stderr, "error: %s: %s\n", o.model_path, err.msg); goto done; }
        if (o.system && !chat) fprintf(stderr, "warning: %s: --system needs a chat template; ignored\n", o.model_path);
    }
    if (o.tokenize_only) {
        for (int i = 0; i < n_prompt; i++) printf(i ? " %d" : "%d", tokens[i]);
        printf("\n");
        rc = 0;
        goto done;
    }
    if (o.verify) {
        rc = run_verify(m, tokens, n_prompt, o.n_predict_given ? o.n_predict : 8, o.n_threads, stdout);
        goto done;
    }
    if (session_init(&s, m, o.n_ctx, o.n_threads, &err) != 0) { fprintf(stderr, "error: %s\n", err.msg); goto done; }
    if (o.dump_logits && !(dump = fopen(o.dump_logits, "wb"))) {
        fprintf(stderr, "error: %s: cannot open for writing: %s\n", o.dump_logits, strerror(errno));
        goto done;
    }
    if (n_prompt > ts_context_n_ctx(s.ctx)) {
        fprintf(stderr, "error: %s: the prompt has %d tokens, longer than the context of %d\n",
                o.model_path, n_prompt, ts_context_n_ctx(s.ctx));
        goto done;
    }
    /* echo the prompt, as llama-cli and llama2.c do (not the rendered chat template) */
    if (o.tokens_csv) {
        utf8_stream st = {{0}, 0};
        for (int i = 0; i < n_prompt; i++) emit_token(m, tokens[i], &st);
    } else if (o.prompt && !chat) {
        fputs(o.prompt, stdout);
        fflush(stdout);
    }
    gen_request rq = { .prompt = tokens, .n_prompt = n_prompt, .max_tokens = o.n_predict,
                       .sampling = o.sampling, .dump_logits = dump, .on_text = print_text, .heal = o.heal };
    if (generate(&s, &rq, &res, &err) != 0) {
        printf("\n");
        fflush(stdout);
        fprintf(stderr, "error: %s: %s\n", o.model_path, err.msg);
        goto done;
    }
    fputc('\n', stdout);
    fflush(stdout);
    if (!strcmp(res.finish_reason, "context"))
        fprintf(stderr, "warning: the context is full (%d tokens)\n", ts_context_n_ctx(s.ctx));
    if (!o.quiet) {
        /* decode speed: the tokens after the first, over the time after the first */
        double decode_seconds = res.prompt_seconds + res.gen_seconds - res.first_token_seconds;
        fprintf(stderr, "prompt: %d tokens, %.1f tok/s | first token: %.1f ms | generation: %d tokens, %.1f tok/s",
                res.n_prompt, res.n_prompt / (res.prompt_seconds + 1e-9), res.first_token_seconds * 1e3,
                res.n_generated, res.n_generated > 1 ? (res.n_generated - 1) / (decode_seconds + 1e-9) : 0.0);
        if (res.n_healed) fprintf(stderr, " | healed: %d prompt tokens backed up", n_prompt - res.n_prompt);
        fputc('\n', stderr);
    }
    rc = 0;
done:
    if (dump && fclose(dump) != 0 && rc == 0) { fprintf(stderr, "error: %s: write failed\n", o.dump_logits); rc = 1; }
    gen_result_free(&res);
    free(tokens);
    session_free(&s);
    ts_model_free(m);
    chat_setup_free(&chat_cfg);
    return rc;
}
