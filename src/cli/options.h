/* The command line's options: what they are, their parsing (every numeric option range-checked,
 * --opt=value spellings, llama-cli's names where they mean the same) and --help. */
#ifndef TS_CLI_OPTIONS_H
#define TS_CLI_OPTIONS_H
#include "tessera.h"
#include "cli/batch.h"

#define MAX_STOP_STRINGS 16

typedef struct cli_options {
    const char *model_path;      /* MODEL or -m */
    const char *prompt;          /* -p TEXT or the second argument; "-": stdin */
    const char *prompt_file;     /* -f FILE */
    const char *tokens_csv;      /* --tokens 1,2,3 */
    const char *dump_logits;     /* --dump-logits FILE */
    int n_predict;               /* -n; -1: until the end of the answer or a full context */
    bool n_predict_given;        /* the modes have their own default -n */
    int n_threads;               /* -t */
    int n_ctx;                   /* -c; 0 = the model's, capped by memory */
    const char *simd;            /* --simd */
    int weights;                 /* enum ts_weights: --mmap, --no-mmap, or neither (auto) */
    const char *tokenizer;       /* --tokenizer FILE */
    const char *system;          /* --system TEXT */
    bool raw;                    /* --raw: no chat template */
    bool tokenize_only;          /* --tokenize: print the prompt's ids and exit */
    const char *quant;           /* --quant q8_0|q4_0 */
    bool info, quiet, verbose;
    bool no_history;             /* --no-history: the chat neither reads nor writes its history file */
    bool no_display_prompt;      /* --no-display-prompt: the prompt is not echoed */
    bool interactive;            /* -i / -cnv: chat */
    bool no_conversation;        /* -no-cnv: never chat; with no prompt, read it from stdin */
    ts_sampler_params sampling;
    bool seed_given;             /* else the seed comes from the OS */
    const char *stop[MAX_STOP_STRINGS];   /* -r / --stop */
    int n_stop;
    bool heal;                   /* --heal: token healing */
    bool ignore_eos;             /* --ignore-eos: generate past the end of the answer */
    bool single_turn;            /* -st: the chat answers its first prompt and ends */
    const char *batch_path;      /* --batch FILE */
    const char *check_path;      /* --check FILE */
    const char *output_path;     /* -o FILE (--batch) */
    bool resume;                 /* --resume (--batch) */
    bool wait_lock;              /* --wait-lock (--batch) */
    int shard_k, shard_n;        /* --shard K/N (--batch); else from the environment (main.c) */
    const char *shards;          /* --shards N: the count when the index comes from JOB_COMPLETION_INDEX */
    int n_parallel;              /* --parallel / -np N (--batch, --check); 0: ts_default_slots */
    const char *match;           /* --match MODE (--check) */
    match_mode match_mode;
    bool verify;                 /* --verify */
    const char *chat_template;   /* --chat-template FILE */
    const char *chat_kwargs;     /* --chat-template-kwargs JSON */
    const char *tools;           /* --tools FILE */
    const char *date;            /* --date YYYY-MM-DD */
    const char *render;          /* --render CONVERSATION.json */
    int cache_type_k, cache_type_v;   /* -ctk/-ctv (--cache-type-k/-v): enum ts_kv_type */
    bool serve;                  /* `run serve MODEL`: the OpenAI-compatible server */
    const char *host;            /* --host (serve) */
    int port;                    /* --port (serve) */
    const char *api_key;         /* --api-key, or read from --api-key-file */
    const char *api_key_file;
    int max_connections, max_queue, timeout;   /* --max-connections, --queue, --timeout (serve) */
    int spec;                    /* --spec off|ngram|draft: enum ts_spec_mode (--model-draft: draft) */
    bool spec_given;
    int spec_k, spec_n;          /* --spec-k, --spec-n (0: the session's defaults) */
    bool spec_always;            /* --spec-always */
    const char *model_draft;     /* --model-draft FILE: the draft model */
    const char *grammar_file;    /* --grammar FILE (GBNF) */
    const char *json_schema;     /* --json-schema FILE|JSON */
    bool json;                   /* --json: any JSON value */
    ts_grammar *grammar;         /* the one of them given, compiled by main (owned there) */
} cli_options;

/* Fills o from argv. Returns 0, 1 when the run is over (--help, --version printed: exit 0), or -1
 * after printing a one-line error (exit 1). */
int  options_parse(int argc, char **argv, cli_options *o);
void options_usage(FILE *f);

#endif
