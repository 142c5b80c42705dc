/* Option parsing: every option by its names, --name=value for any option that takes a value,
 * each number checked against its range with the option named in the refusal. */
#include "cli/options.h"
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

/* The kernel sets this engine knows, ", " between them (the --simd line of the help) */
static const char *simd_set_names(char *buf, size_t cap) {
    size_t n = 0;
    buf[0] = '\0';
    for (int i = 0; ts_simd_name(i) && n < cap; i++)
        n += (size_t)snprintf(buf + n, cap - n, "%s%s", i ? ", " : "", ts_simd_name(i));
    return buf;
}

void options_usage(FILE *f) {
    char sets[128];
    fprintf(f,
        "usage: run MODEL [PROMPT] [options]      (or: run -m MODEL [options])\n"
        "       run serve MODEL [options]         an OpenAI-compatible HTTP server (see below)\n"
        "  MODEL is a GGUF file or a Hugging Face model folder (config.json + safetensors).\n"
        "  With no prompt on a terminal: an interactive chat (/help inside). With no prompt and\n"
        "  stdin not a terminal: the prompt is read from stdin.\n"
        "  Options that take a value may also be written --name=value.\n"
        "  -p, --prompt TEXT       the prompt (or give it as the second argument); '-' reads stdin\n"
        "  -f, --file FILE         read the prompt from FILE (one trailing newline dropped)\n"
        "  -n, --n-predict N       tokens to generate (default 256; chat: -1); -1: until the end of\n"
        "                          the answer or a full context\n"
        "  -t, --threads N         threads (default: all cores)\n"
        "  -c, --ctx-size N        context length (default: the model's, capped by memory)\n"
        "  --temp T                sampling temperature >= 0 (default 0: greedy)\n"
        "  --top-k K               >= 0, 0: off (default 40)\n"
        "  --top-p P               in [0, 1], 1: off (default 0.95)\n"
        "  --min-p P               in [0, 1], 0: off (default 0.05)\n"
        "  --repeat-penalty R      > 0, 1: off (default 1)\n"
        "  --repeat-last-n N       tokens the penalty looks at, -1: all (default 64)\n"
        "  -s, --seed S            sampling seed (default, or -1: drawn from the OS; printed in the\n"
        "                          statistics line, so any sampled run can be repeated)\n"
        "  -r, --reverse-prompt, --stop TEXT   stop the answer where TEXT appears (up to 16)\n"
        "  --tokens 1,2,3          feed these token ids instead of a text prompt\n"
        "  --dump-logits FILE      write float32 logits, one row of n_vocab per evaluated position\n"
        "  --simd SET              kernels: auto (default), %s\n"
        "  --mmap                  read the matrices in place from the file's pages (the fastest\n"
        "                          load and first token; decode can be slower)\n"
        "  --no-mmap               copy the matrices once into 2 MB pages. Default: copied when the\n"
        "                          copy keeps rows in lanes (AVX-512 K-quants, grid and ternary\n"
        "                          types), which decode faster; else in place when the kernel maps\n"
        "                          the file 2 MB at a time, else copied (--info says which)\n"
        "  -ctk, --cache-type-k T  KV cache type of the keys: f16 (default), f32 or q8_0\n"
        "  -ctv, --cache-type-v T  KV cache type of the values: f16 (default), f32 or q8_0\n"
        "  -sys, --system TEXT     a system turn before the prompt (chat models)\n"
        "  --raw                   send the prompt as plain text, without the chat template\n"
        "  --no-display-prompt     do not echo the prompt before the answer\n"
        "  --tokenize              print the token ids the prompt is fed as (the chat template applied\n"
        "                          unless --raw) and exit; MODEL may be a tokenizer: the text's own ids\n"
        "  --tokenizer FILE        use this tokenizer.json / tokenizer.model / GGUF vocabulary\n"
        "  --quant q8_0|q4_0       Hugging Face folders: quantize the matrices at load\n"
        "  --info                  print the geometry table and layout decisions\n"
        "  --quiet                 no statistics line on stderr\n"
        "  --heal                  token healing: a prompt ending inside a word is completed as the\n"
        "                          whole word would be (the last token is backed up and re-generated)\n"
        "  --ignore-eos            never end the answer at an end-of-generation token: generate -n\n"
        "                          tokens (or up to a stop string or a full context)\n"
        "  --spec off|ngram|draft  speculative decoding (default off): each step proposes tokens that\n"
        "                          the model checks in one batch; the answer is token for token the\n"
        "                          same (greedy or seeded), faster when proposals are taken. ngram:\n"
        "                          prompt lookup (what followed the last n tokens earlier in the\n"
        "                          prompt and answer); draft: a small model of the same vocabulary\n"
        "  --spec-k K              tokens proposed per step at most, 1..32 (default 8)\n"
        "  --spec-n N              ngram: the n-gram looked up, 1..16 (default 3; shorter ones are\n"
        "                          tried when it is not found)\n"
        "  --spec-always           propose every step; by default only as many tokens as the steps'\n"
        "                          measured costs and the share of proposals taken say will pay\n"
        "  -md, --model-draft FILE the draft model (implies --spec draft); its vocabulary must be the\n"
        "                          model's\n"
        "  --version               print the version, the commit and the build flags, and exit\n"
        "  -h, --help              this help\n"
        "  -ngl N, -fa [on|off|auto], -b N, -ub N, --mlock   llama-cli's GPU and batch options:\n"
        "                          accepted and ignored with a note (tessera runs on the CPU and\n"
        "                          sizes its own batches)\n"
        "\n"
        "chat (interactive):\n"
        "  -i, --interactive, -cnv, --conversation   chat even when stdin is not a terminal (one\n"
        "                          turn per line; a line ending in \\ continues); a PROMPT is the\n"
        "                          first turn\n"
        "  -no-cnv, --no-conversation   never chat: with no prompt, read it from stdin\n"
        "  -st, --single-turn      answer the first prompt (PROMPT or the first line) and end\n"
        "  -v, --verbose           a statistics line per turn (prompt tokens, how many came from the\n"
        "                          cache, speed, the weight bytes a decode step read)\n"
        "  --no-history            the chat neither reads nor writes its history file\n"
        "                          ($XDG_STATE_HOME/tessera/history, else ~/.local/state/tessera/history)\n"
        "  In the chat: Ctrl-C stops the answer, Ctrl-C twice at the prompt or Ctrl-D exits;\n"
        "  /clear, /system TEXT, /help, /exit. On a terminal the line is edited in place: arrows,\n"
        "  Home/End, Ctrl-A/E/B/F/W/U/K/L, Alt-B/F, Up/Down and Ctrl-R for history; a pasted block\n"
        "  is one turn, and so is a block between lines starting and ending with \"\"\".\n"
        "\n"
        "answers in a shape (the answer ends when the grammar is complete):\n"
        "  --grammar FILE          a GBNF grammar (llama.cpp's syntax; the root rule is `root`)\n"
        "  --json-schema SCHEMA    a JSON Schema (a file, or the schema itself when it starts with '{');\n"
        "                          the subset is in the README (\"Answers in a shape\"), other keywords\n"
        "                          are refused by name. Alias -j\n"
        "  --json                  any JSON value\n"
        "  Batch lines and server requests give theirs as \"response_format\" (OpenAI's json_schema or\n"
        "  json_object), \"json_schema\" or \"grammar\" (llama.cpp's); they take the place of these.\n"
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
        "                          (optional per line: max_tokens, temperature, top_p, top_k, min_p,\n"
        "                          repeat_penalty, seed, stop, ignore_eos, response_format; \"tokens\": [ids] instead of a\n"
        "                          prompt; another key is warned about); output lines\n"
        "                          {\"line\",\"id\",\"answer\",\"tokens_prompt\",\"tokens_generated\",\n"
        "                          \"finish_reason\",\"ms\"} or {\"line\",\"id\",\"error\"}, as lines finish\n"
        "                          (in input order with --parallel 1; sort -t: -k2,2n -s restores it).\n"
        "                          OpenAI Batch lines ({\"custom_id\",\"method\",\"url\":\"/v1/chat/completions\"\n"
        "                          or \"/v1/completions\",\"body\"}) are answered in OpenAI's output format,\n"
        "                          keyed by custom_id (tools: calls come back as tool_calls); n > 1 is refused\n"
        "                          Ids must be unique (1 and 1.0 are the same id); lines without one\n"
        "                          are known by their line number. Exit 0: all answered; 2: some lines\n"
        "                          have errors; 1: could not run. FILE '-' (or /dev/stdin) reads stdin\n"
        "  -np, --parallel N       answer N lines at once, each step reading the weights once for all\n"
        "                          of them (default: 8, fewer when a quarter of the memory cannot hold\n"
        "                          8 caches of min(-c, 4096) positions; 1: one line after another).\n"
        "                          A line's answer is the same whatever N; -c is per line\n"
        "  -o, --output FILE       write the answers there (default stdout), flushed line by line; the\n"
        "                          file is locked while written, and may not be the input or the model\n"
        "  --resume                keep the answers already in the -o file and answer the rest; lines\n"
        "                          whose answer was an error are answered again (a partial last line too)\n"
        "  --wait-lock             when another process writes the -o file, wait for it (default: fail)\n"
        "  --shard K/N             answer only the lines whose id (or line number, for lines without\n"
        "                          one) hashes to K of N, K in 0..N-1: -o OUT.jsonl becomes\n"
        "                          OUT-0000K-of-0000N.jsonl, with OUT-0000K-of-0000N.manifest.json beside it\n"
        "                          (engine, model and input digests, options: equal \"run\" objects mean\n"
        "                          the shards ran the same thing). Default: from a Slurm job array\n"
        "                          (SLURM_ARRAY_TASK_ID - SLURM_ARRAY_TASK_MIN of SLURM_ARRAY_TASK_COUNT)\n"
        "                          or a Kubernetes indexed Job (JOB_COMPLETION_INDEX, with --shards N).\n"
        "                          Exit 0 only when the shard is complete. Merge: sort -t: -k2,2n -s\n"
        "  --shards N              the shard count for JOB_COMPLETION_INDEX (the Job's completions)\n"
        "\n"
        "serving (run serve MODEL): the OpenAI API over HTTP: POST /v1/chat/completions and\n"
        "  /v1/completions (stream, n, stop, logprobs, seed, ...), GET /v1/models, /health (503 while\n"
        "  loading), /metrics (Prometheus). Requests share the decode steps of --parallel slots; a chat's\n"
        "  next turn reuses its earlier turns' cache. -n, --temp and the other sampling options are the\n"
        "  defaults of what a request leaves out. SIGTERM or Ctrl-C: finish the running requests, exit 0\n"
        "  --host ADDR             the address to listen on (default 127.0.0.1; another one without\n"
        "                          an API key is warned about)\n"
        "  --port N                the port (default 8080; 0: any free one; the line \"listening on\n"
        "                          http://HOST:PORT\" on stdout says which)\n"
        "  --api-key KEY           require \"Authorization: Bearer KEY\" (all but /health)\n"
        "  --api-key-file FILE     the key from a file (its first line), kept out of the process list\n"
        "  -np, --parallel N       requests answered at once (default as for --batch)\n"
        "  --max-connections N     open connections at most (default 1024); past it the longest-idle\n"
        "                          connection is closed to make room\n"
        "  --queue N               requests waiting for a slot at most (default 64); more get 429\n"
        "  --timeout S             seconds for a request to arrive whole, for an idle connection and for\n"
        "                          a reader that stopped reading (default 30)\n"
        "\n"
        "known-answer checks:\n"
        "  --check FILE.jsonl      cases {\"id\", \"prompt\" | \"messages\" | \"system\"+\"user\", \"expected\",\n"
        "                          \"match\"?}; greedy; prints PASS/FAIL per case and \"N passed, N failed\";\n"
        "                          exit 0 only when all pass. -n defaults to 64\n"
        "  --match MODE            the default match: prefix (the trimmed answer starts with the expected\n"
        "                          text; default), exact (equals it, trimmed) or contains\n"
        "  --verify                self-check on the prompt (or --tokens): prefill + cached decode vs a full\n"
        "                          re-forward, batched vs sequential prefill, truncate + re-evaluate;\n"
        "                          -n defaults to 8. Exit 0 only when all pass\n",
        simd_set_names(sets, sizeof sets));
}

static int parse_int(const char *opt, const char *s, long lo, long hi, int *out) {
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno || end == s || *end || v < lo || v > hi) {
        if (hi == INT_MAX) fprintf(stderr, "error: %s expects an integer >= %ld, got '%s'\n", opt, lo, s);
        else fprintf(stderr, "error: %s expects an integer in [%ld, %ld], got '%s'\n", opt, lo, hi, s);
        return -1;
    }
    *out = (int)v;
    return 0;
}

/* A finite number in [lo, hi] (lo_open: > lo); range says it in words for the message. */
static int parse_float(const char *opt, const char *s, double lo, bool lo_open, double hi, const char *range,
                       float *out) {
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (errno || end == s || *end || !isfinite(v) || v < lo || (lo_open && v == lo) || v > hi) {
        fprintf(stderr, "error: %s expects a number %s, got '%s'\n", opt, range, s);
        return -1;
    }
    *out = (float)v;
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

/* -1 or an unsigned 64-bit integer. */
static int parse_seed(const char *opt, const char *s, cli_options *o) {
    if (!strcmp(s, "-1")) { o->seed_given = false; return 0; }
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno || end == s || *end || strchr(s, '-')) {
        fprintf(stderr, "error: %s expects an integer in [0, 18446744073709551615] or -1 (random), got '%s'\n", opt, s);
        return -1;
    }
    o->sampling.seed = v;
    o->seed_given = true;
    return 0;
}

/* A seed from the OS, so runs started together differ; 32 bits keep it short to type back. */
static uint64_t random_seed(void) {
    uint32_t v;
    if (getrandom(&v, sizeof v, GRND_NONBLOCK) == (ssize_t)sizeof v) return v;
    int fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC);
    if (fd >= 0) {
        ssize_t r = read(fd, &v, sizeof v);
        close(fd);
        if (r == (ssize_t)sizeof v) return v;
    }
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (uint32_t)(ts.tv_nsec ^ ts.tv_sec * 2654435761u ^ (unsigned)getpid() * 40503u);
}

static void print_version(void) {
    printf("tessera %s", TESSERA_VERSION);
#ifdef TESSERA_COMMIT
    printf(" (commit %s)", TESSERA_COMMIT);
#endif
#ifdef TESSERA_BUILD_FLAGS
    printf(" [%s]", TESSERA_BUILD_FLAGS);
#endif
    printf(" (C11");
#ifdef __VERSION__
    printf("; built with %s", __VERSION__);
#endif
    printf("; kernels:");
    for (int i = 0; ts_simd_name(i); i++) if (ts_simd_available(ts_simd_name(i))) printf(" %s", ts_simd_name(i));
    printf(")\n");
}

static bool is(const char *name, const char *a, const char *b, const char *c) {
    return !strcmp(name, a) || (b && !strcmp(name, b)) || (c && !strcmp(name, c));
}

/* llama-cli options about GPUs and batch sizes: they do not apply here, so a command copied from
 * llama.cpp's docs runs, with one note naming what was ignored. */
static bool is_ignored_llama_option(const char *name, bool *takes_value, bool *value_optional) {
    static const struct { const char *a, *b, *c; bool value, optional; } ignored[] = {
        { "-ngl", "--gpu-layers", "--n-gpu-layers", true, false },
        { "-fa", "--flash-attn", NULL, true, true },
        { "-b", "--batch-size", NULL, true, false },
        { "-ub", "--ubatch-size", NULL, true, false },
        { "--mlock", NULL, NULL, false, false },
    };
    for (size_t i = 0; i < sizeof ignored / sizeof ignored[0]; i++)
        if (is(name, ignored[i].a, ignored[i].b, ignored[i].c)) {
            *takes_value = ignored[i].value;
            *value_optional = ignored[i].optional;
            return true;
        }
    return false;
}

int options_parse(int argc, char **argv, cli_options *o) {
    memset(o, 0, sizeof *o);
    char ignored[256] = "";
    bool prompt_positional = false;
    o->n_predict = 256;
    o->sampling = ts_sampler_default_params();
    o->host = "127.0.0.1";
    o->port = 8080;
    o->max_connections = 1024;
    o->max_queue = 64;
    o->timeout = 30;
    int positional = 0;
    /* `run serve MODEL ...` (a file or folder named "serve" is given as ./serve) */
    if (argc > 1 && !strcmp(argv[1], "serve")) { o->serve = true; argv++; argc--; }
    bool options_done = false;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (options_done || a[0] != '-' || a[1] == 0) {   /* "-" alone is a value, not an option */
            if (positional == 0 && !o->model_path) o->model_path = a;
            else if (!o->prompt && !o->prompt_file) { o->prompt = a; prompt_positional = true; }
            else { fprintf(stderr, "error: unexpected argument '%s' (the prompt is already given)\n", a); return -1; }
            positional++;
            continue;
        }
        if (!strcmp(a, "--")) { options_done = true; continue; }
        /* --name=value */
        char name[64];
        const char *inline_val = NULL;
        const char *eq = a[1] == '-' ? strchr(a, '=') : NULL;
        if (eq) {
            size_t nl = (size_t)(eq - a);
            if (nl >= sizeof name) { fprintf(stderr, "error: unknown option '%.60s' (see --help)\n", a); return -1; }
            memcpy(name, a, nl);
            name[nl] = 0;
            inline_val = eq + 1;
        } else {
            size_t al = strlen(a);
            if (al >= sizeof name) { fprintf(stderr, "error: unknown option '%.60s' (see --help)\n", a); return -1; }
            memcpy(name, a, al + 1);
        }
        const char *val = NULL;
        /* VALUE: the option's value, inline or the next argument. FLAG: the option takes none. */
#define VALUE() do { \
            if (inline_val) val = inline_val; \
            else if (i + 1 < argc) val = argv[++i]; \
            else { fprintf(stderr, "error: %s needs a value\n", name); return -1; } \
        } while (0)
#define FLAG() do { if (inline_val) { fprintf(stderr, "error: %s takes no value\n", name); return -1; } } while (0)
        if (is(name, "-h", "--help", NULL)) { FLAG(); options_usage(stdout); return 1; }
        else if (is(name, "--version", NULL, NULL)) { FLAG(); print_version(); return 1; }
        else if (is(name, "-m", "--model", NULL)) {
            VALUE();
            if (o->model_path) { fprintf(stderr, "error: the model is given twice ('%s' and '%s')\n", o->model_path, val); return -1; }
            o->model_path = val;
        }
        else if (is(name, "-p", "--prompt", NULL)) {
            VALUE();
            if (o->prompt) {
                fprintf(stderr, "error: the prompt is given twice ('%.40s'%s and -p '%.40s')\n", o->prompt,
                        prompt_positional ? " as an argument" : "", val);
                return -1;
            }
            o->prompt = val;
        }
        else if (is(name, "-f", "--file", NULL)) { VALUE(); o->prompt_file = val; }
        else if (is(name, "-n", "--n-predict", "--predict")) {
            VALUE();
            if (parse_int(name, val, -1, INT_MAX, &o->n_predict)) return -1;
            o->n_predict_given = true;
        }
        else if (is(name, "-t", "--threads", NULL)) { VALUE(); if (parse_int(name, val, 1, 256, &o->n_threads)) return -1; }
        else if (is(name, "-c", "--ctx-size", NULL)) { VALUE(); if (parse_int(name, val, 0, 1 << 24, &o->n_ctx)) return -1; }
        else if (is(name, "--temp", "--temperature", NULL)) {
            VALUE();
            if (parse_float(name, val, 0, false, 1e6, ">= 0", &o->sampling.temp)) return -1;
        }
        else if (is(name, "--top-k", NULL, NULL)) { VALUE(); if (parse_int(name, val, 0, INT_MAX, &o->sampling.top_k)) return -1; }
        else if (is(name, "--top-p", NULL, NULL)) {
            VALUE();
            if (parse_float(name, val, 0, false, 1, "in [0, 1]", &o->sampling.top_p)) return -1;
        }
        else if (is(name, "--min-p", NULL, NULL)) {
            VALUE();
            if (parse_float(name, val, 0, false, 1, "in [0, 1]", &o->sampling.min_p)) return -1;
        }
        else if (is(name, "--repeat-penalty", NULL, NULL)) {
            VALUE();
            if (parse_float(name, val, 0, true, 1e6, "> 0", &o->sampling.repeat_penalty)) return -1;
        }
        else if (is(name, "--repeat-last-n", NULL, NULL)) {
            VALUE();
            if (parse_int(name, val, -1, INT_MAX, &o->sampling.repeat_last_n)) return -1;
        }
        else if (is(name, "-s", "--seed", NULL)) { VALUE(); if (parse_seed(name, val, o)) return -1; }
        else if (is(name, "-r", "--reverse-prompt", "--stop")) {
            VALUE();
            if (!*val) { fprintf(stderr, "error: %s expects a non-empty text\n", name); return -1; }
            if (o->n_stop == MAX_STOP_STRINGS) { fprintf(stderr, "error: %s: at most %d stop strings\n", name, MAX_STOP_STRINGS); return -1; }
            o->stop[o->n_stop++] = val;
        }
        else if (is(name, "--tokens", NULL, NULL)) { VALUE(); o->tokens_csv = val; }
        else if (is(name, "--dump-logits", NULL, NULL)) { VALUE(); o->dump_logits = val; }
        else if (is(name, "--simd", NULL, NULL)) { VALUE(); o->simd = val; }
        else if (is(name, "--mmap", NULL, NULL)) { FLAG(); o->weights = TS_WEIGHTS_IN_PLACE; }
        else if (is(name, "--no-mmap", NULL, NULL)) { FLAG(); o->weights = TS_WEIGHTS_COPY; }
        else if (is(name, "-ctk", "--cache-type-k", NULL) || is(name, "-ctv", "--cache-type-v", NULL)) {
            VALUE();
            int t = ts_kv_type_from_name(val);
            if (t < 0) { fprintf(stderr, "error: %s expects a KV cache type: f32, f16 or q8_0, got '%s'\n", name, val); return -1; }
            if (is(name, "-ctk", "--cache-type-k", NULL)) o->cache_type_k = t;
            else o->cache_type_v = t;
        }
        else if (is(name, "--tokenizer", NULL, NULL)) { VALUE(); o->tokenizer = val; }
        else if (is(name, "-sys", "--system", "--system-prompt")) { VALUE(); o->system = val; }
        else if (is(name, "--raw", NULL, NULL)) { FLAG(); o->raw = true; }
        else if (is(name, "--tokenize", NULL, NULL)) { FLAG(); o->tokenize_only = true; }
        else if (is(name, "--quant", NULL, NULL)) { VALUE(); o->quant = val; }
        else if (is(name, "--info", NULL, NULL)) { FLAG(); o->info = true; }
        else if (is(name, "--quiet", NULL, NULL)) { FLAG(); o->quiet = true; }
        else if (is(name, "-v", "--verbose", NULL)) { FLAG(); o->verbose = true; }
        else if (is(name, "--no-history", NULL, NULL)) { FLAG(); o->no_history = true; }
        else if (is(name, "--no-display-prompt", NULL, NULL)) { FLAG(); o->no_display_prompt = true; }
        else if (is(name, "-i", "--interactive", NULL) || is(name, "-cnv", "--conversation", NULL)) { FLAG(); o->interactive = true; }
        else if (is(name, "-no-cnv", "--no-conversation", NULL)) { FLAG(); o->no_conversation = true; }
        else if (is(name, "--heal", NULL, NULL)) { FLAG(); o->heal = true; }
        else if (is(name, "--ignore-eos", NULL, NULL)) { FLAG(); o->ignore_eos = true; }
        else if (is(name, "-st", "--single-turn", NULL)) { FLAG(); o->single_turn = true; }
        else if (is(name, "--batch", NULL, NULL)) { VALUE(); o->batch_path = val; }
        else if (is(name, "--check", NULL, NULL)) { VALUE(); o->check_path = val; }
        else if (is(name, "-o", "--output", NULL)) { VALUE(); o->output_path = val; }
        else if (is(name, "--resume", NULL, NULL)) { FLAG(); o->resume = true; }
        else if (is(name, "--wait-lock", NULL, NULL)) { FLAG(); o->wait_lock = true; }
        else if (is(name, "--parallel", "-np", NULL)) { VALUE(); if (parse_int(name, val, 1, 256, &o->n_parallel)) return -1; }
        else if (is(name, "--shards", NULL, NULL)) { VALUE(); o->shards = val; }
        else if (is(name, "--shard", NULL, NULL)) { VALUE(); if (parse_shard(val, &o->shard_k, &o->shard_n)) return -1; }
        else if (is(name, "--match", NULL, NULL)) {
            VALUE();
            if (parse_match_mode(val, &o->match_mode) != 0) {
                fprintf(stderr, "error: --match expects exact, prefix or contains, got '%s'\n", val);
                return -1;
            }
            o->match = val;
        }
        else if (is(name, "--verify", NULL, NULL)) { FLAG(); o->verify = true; }
        else if (is(name, "--chat-template", NULL, NULL)) { VALUE(); o->chat_template = val; }
        else if (is(name, "--chat-template-kwargs", NULL, NULL)) { VALUE(); o->chat_kwargs = val; }
        else if (is(name, "--tools", NULL, NULL)) { VALUE(); o->tools = val; }
        else if (is(name, "--grammar", "--grammar-file", NULL)) { VALUE(); o->grammar_file = val; }
        else if (is(name, "--json-schema", "-j", NULL)) { VALUE(); o->json_schema = val; }
        else if (is(name, "--json", NULL, NULL)) { FLAG(); o->json = true; }
        else if (is(name, "--date", NULL, NULL)) { VALUE(); o->date = val; }
        else if (is(name, "--render", NULL, NULL)) { VALUE(); o->render = val; }
        else if (is(name, "--serve", NULL, NULL)) { FLAG(); o->serve = true; }
        else if (is(name, "--host", NULL, NULL)) { VALUE(); o->host = val; }
        else if (is(name, "--port", NULL, NULL)) { VALUE(); if (parse_int(name, val, 0, 65535, &o->port)) return -1; }
        else if (is(name, "--api-key", NULL, NULL)) { VALUE(); o->api_key = val; }
        else if (is(name, "--api-key-file", NULL, NULL)) { VALUE(); o->api_key_file = val; }
        else if (is(name, "--max-connections", NULL, NULL)) { VALUE(); if (parse_int(name, val, 1, 1 << 20, &o->max_connections)) return -1; }
        else if (is(name, "--queue", NULL, NULL)) { VALUE(); if (parse_int(name, val, 0, 1 << 20, &o->max_queue)) return -1; }
        else if (is(name, "--timeout", NULL, NULL)) { VALUE(); if (parse_int(name, val, 1, 86400, &o->timeout)) return -1; }
        else if (is(name, "--spec", NULL, NULL)) {
            VALUE();
            if ((o->spec = ts_spec_mode_from_name(val)) < 0) {
                fprintf(stderr, "error: --spec expects off, ngram or draft, got '%s'\n", val);
                return -1;
            }
            o->spec_given = true;
        }
        else if (is(name, "--spec-k", "--draft-max", NULL)) { VALUE(); if (parse_int(name, val, 1, TS_SPEC_MAX_K, &o->spec_k)) return -1; }
        else if (is(name, "--spec-always", NULL, NULL)) { FLAG(); o->spec_always = true; }
        else if (is(name, "--spec-n", NULL, NULL)) { VALUE(); if (parse_int(name, val, 1, TS_SPEC_MAX_N, &o->spec_n)) return -1; }
        else if (is(name, "-md", "--model-draft", NULL)) { VALUE(); o->model_draft = val; }
        else {
            bool takes_value, optional;
            if (!is_ignored_llama_option(name, &takes_value, &optional)) {
                fprintf(stderr, "error: unknown option '%s' (see --help)\n", name);
                return -1;
            }
            if (takes_value && optional && !inline_val) {   /* -fa alone, or -fa on|off|auto */
                if (i + 1 < argc && (!strcmp(argv[i + 1], "on") || !strcmp(argv[i + 1], "off") || !strcmp(argv[i + 1], "auto")))
                    val = argv[++i];
            } else if (takes_value) {
                int unused;
                VALUE();
                if (parse_int(name, val, -1, INT_MAX, &unused)) return -1;
            } else {
                FLAG();
            }
            size_t used = strlen(ignored);
            snprintf(ignored + used, sizeof ignored - used, "%s%s", used ? ", " : "", name);
        }
#undef VALUE
#undef FLAG
    }
    if (!o->seed_given) o->sampling.seed = random_seed();
    if (ignored[0] && !o->quiet)
        fprintf(stderr, "note: %s ignored: tessera runs on the CPU and sizes its own batches\n", ignored);

    /* what goes with what */
    bool prompt_given = o->prompt || o->prompt_file || o->tokens_csv;
    if (o->render && !o->model_path && !o->chat_template) {
        fprintf(stderr, "error: --render needs a MODEL or --chat-template FILE\n");
        return -1;
    }
    if (o->render && (prompt_given || o->batch_path || o->check_path || o->verify || o->tokenize_only || o->interactive)) {
        fprintf(stderr, "error: --render prints a rendered conversation: it takes no prompt and no other mode\n");
        return -1;
    }
    if (!o->model_path && !o->render) { options_usage(stderr); return -1; }
    if ((o->prompt != NULL) + (o->prompt_file != NULL) + (o->tokens_csv != NULL) > 1) {
        fprintf(stderr, "error: give the prompt one way: -p TEXT (or the second argument), -f FILE or --tokens\n");
        return -1;
    }
    if ((o->batch_path != NULL) + (o->check_path != NULL) + o->verify + o->interactive + o->tokenize_only > 1) {
        fprintf(stderr, "error: --batch, --check, --verify, --tokenize and -i are separate modes: give one\n");
        return -1;
    }
    if (o->interactive && o->no_conversation) { fprintf(stderr, "error: -i and -no-cnv contradict each other\n"); return -1; }
    if (o->interactive && (o->tokens_csv || o->prompt_file || o->dump_logits)) {
        fprintf(stderr, "error: the chat (-i) takes its turns from the terminal: --tokens, -f and --dump-logits do not go with it\n");
        return -1;
    }
    if (!o->batch_path && (o->output_path || o->resume || o->shard_n || o->wait_lock || o->shards)) {
        fprintf(stderr, "error: -o, --resume, --wait-lock, --shard and --shards go with --batch\n");
        return -1;
    }
    if (o->shard_n && o->shards) {
        fprintf(stderr, "error: --shard K/N gives the count already; --shards N goes with JOB_COMPLETION_INDEX\n");
        return -1;
    }
    if (o->resume && !o->output_path) { fprintf(stderr, "error: --resume needs -o FILE (the answers so far)\n"); return -1; }
    if (o->wait_lock && !o->output_path) { fprintf(stderr, "error: --wait-lock needs -o FILE\n"); return -1; }
    if (o->match && !o->check_path) { fprintf(stderr, "error: --match goes with --check\n"); return -1; }
    bool serve_option = o->api_key || o->api_key_file || strcmp(o->host, "127.0.0.1") || o->port != 8080 ||
                        o->max_connections != 1024 || o->max_queue != 64 || o->timeout != 30;
    if (serve_option && !o->serve) {
        fprintf(stderr, "error: --host, --port, --api-key(-file), --max-connections, --queue and --timeout go with `run serve MODEL`\n");
        return -1;
    }
    if (o->serve && (prompt_given || o->batch_path || o->check_path || o->verify || o->tokenize_only || o->interactive ||
                     o->dump_logits || o->render)) {
        fprintf(stderr, "error: `run serve MODEL` takes its prompts from HTTP requests: no prompt and no other mode\n");
        return -1;
    }
    if (o->api_key && o->api_key_file) { fprintf(stderr, "error: give the API key one way: --api-key or --api-key-file\n"); return -1; }
    if (o->n_parallel && !o->batch_path && !o->check_path && !o->serve) {
        fprintf(stderr, "error: --parallel goes with --batch, --check and serve (the requests answered at once)\n");
        return -1;
    }
    if (o->model_draft && !o->spec_given) o->spec = TS_SPEC_DRAFT;
    if (o->spec == TS_SPEC_DRAFT && !o->model_draft) { fprintf(stderr, "error: --spec draft needs --model-draft FILE\n"); return -1; }
    if (o->model_draft && o->spec != TS_SPEC_DRAFT) {
        fprintf(stderr, "error: --model-draft goes with --spec draft, not --spec %s\n", ts_spec_mode_name(o->spec));
        return -1;
    }
    if ((o->spec_k || o->spec_n || o->spec_always) && o->spec == TS_SPEC_OFF) {
        fprintf(stderr, "error: --spec-k, --spec-n and --spec-always go with --spec ngram or draft (or --model-draft)\n");
        return -1;
    }
    if (o->spec_n && o->spec != TS_SPEC_NGRAM) { fprintf(stderr, "error: --spec-n goes with --spec ngram\n"); return -1; }
    if ((o->batch_path || o->check_path) && (prompt_given || o->dump_logits || o->n_stop)) {
        fprintf(stderr, "error: --batch and --check take their prompts (and stop strings) from the file\n");
        return -1;
    }
    return 0;
}
