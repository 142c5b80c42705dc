/* Scripted use of one loaded model: --batch answers a JSONL file of prompts, --check answers a
 * JSONL file of cases with known answers and says which match. Both go through one session for the
 * whole file, so prompts sharing a prefix (a system prompt) reuse its KV cache. Input lines are
 * read with a bound: a line longer than any prompt the context can take is refused unread. */
#ifndef TS_CLI_BATCH_H
#define TS_CLI_BATCH_H
#include "tessera.h"

typedef enum match_mode { MATCH_PREFIX, MATCH_EXACT, MATCH_CONTAINS } match_mode;

typedef struct batch_options {
    const char *model_path;      /* for messages, and -o may not name it */
    const char *input_path;      /* the JSONL file */
    const char *output_path;     /* --batch: -o FILE, NULL = stdout */
    bool resume;                 /* --batch: keep the answers already in output_path */
    bool wait_lock;              /* --batch: wait while another process writes output_path */
    int shard_k, shard_n;        /* --batch: answer only the lines whose key shard_owns (shard.h) */
    int n_ctx;                   /* -c, for the manifest of a sharded run */
    bool seed_given;             /* --seed (else each run draws one: the manifest says "random") */
    int max_tokens;              /* default per line */
    ts_sampler_params sampling;  /* defaults per line (--check: always greedy) */
    match_mode match;            /* --check: the default match */
    const char *system;          /* --system: a system turn for lines that give a plain prompt */
    bool raw, heal, quiet;
    bool ignore_eos;             /* --ignore-eos: the default of the lines' "ignore_eos" */
    const ts_grammar *grammar;   /* --grammar, --json-schema, --json: the default of the lines' shape */
    const struct tool_format *tool_format;   /* how the template writes tool calls (OpenAI lines with
                                                tools: tool_format_by_name of ts_chat_tool_format), or NULL */
    const ts_chat_options *chat; /* --chat-template, --chat-template-kwargs, --tools, --date (or NULL) */
} batch_options;

/* Both return the process exit status. --batch: 0 when every line this run is responsible for is
 * answered in the output, 2 when the batch ran to the end but the output holds errors, 1 when it
 * could not run (unreadable files, duplicate ids, a locked output, ...). --check: 0 only when
 * every case passes. */
int run_batch(ts_model *m, ts_session *s, const batch_options *o);
int run_check(ts_model *m, ts_session *s, const batch_options *o);

/* "exact" / "prefix" / "contains" -> mode; -1 for anything else. */
int parse_match_mode(const char *name, match_mode *out);

#endif
