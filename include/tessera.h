/* tessera: a CPU inference engine for GGUF files, Hugging Face folders and FastFlowLM q4nx packs.
 *
 * The CLI (src/cli/) is one user of this API; the tests are another. Every function that can
 * fail returns -1 (or NULL) and fills a ts_error with a one-line message naming the file and the
 * problem. Nothing here prints. */
#ifndef TESSERA_H
#define TESSERA_H
#include <stddef.h>
#include <stdint.h>
#include <stdbool.h>
#include <stdio.h>
#include <signal.h>

#define TESSERA_VERSION "0.1.0"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct ts_error { char msg[512]; } ts_error;

typedef struct ts_model ts_model;       /* weights + geometry table + tokenizer; read-only once loaded */
typedef struct ts_context ts_context;   /* one sequence: KV cache, position, scratch */

typedef struct ts_load_options {
    const char *tokenizer_path;  /* NULL: the model's own tokenizer; else a tokenizer.json, a
                                    tokenizer.model, a (vocab-only) GGUF, or a folder holding one */
    const char *quant;           /* Hugging Face folders: NULL (weights used in place), or "q8_0" /
                                    "q4_0" to quantize the matrices at load */
    const char *simd;            /* kernel set: NULL or "auto" (the best this CPU runs), or one
                                    of ts_simd_name's ("scalar": the reference kernels) */
    int cache_type_k, cache_type_v;   /* enum ts_kv_type: the KV cache types of this model's
                                    contexts unless ts_context_options says otherwise (0: f16) */
    int weights;                 /* enum ts_weights: where the matrices are read from */
    /* NULL, or told how far the load is as it goes: the bytes of matrices faulted in, then (when
       they are copied) copied, each pass rising to its total */
    void (*on_progress)(void *user, size_t done, size_t total);
    void *progress_user;
    int threads;                 /* threads that rearrange the matrices a copy keeps in lanes (0:
                                    one per CPU) */
} ts_load_options;

/* Where a model's matrices are read from. Decode reads 2 MB pages faster than 4 KB ones, and rows
 * the copy rearranges into lanes (AVX-512 K-quants, the grid and ternary types) faster than the file's. AUTO (the default):
 * in place from the file when the kernel maps its pages 2 MB at a time (its page cache in 2 MB
 * folios), else copied once into 2 MB pages; IN_PLACE (--mmap): the file's pages as they are, the
 * fastest load; COPY (--no-mmap): always copied. DECODE (the command line's default in every mode:
 * a copy into lanes repays itself within a few hundred tokens, README): copied when the kernel set
 * keeps some of the matrices' rows in lanes, else as AUTO. Without room for a copy they stay in place. */
typedef enum ts_weights { TS_WEIGHTS_AUTO = 0, TS_WEIGHTS_IN_PLACE = 1, TS_WEIGHTS_COPY = 2, TS_WEIGHTS_DECODE = 3 } ts_weights;

/* KV cache element types (llama.cpp's --cache-type-k/-v). f16 is the default, as in llama.cpp,
 * and reads half the bytes of f32; q8_0 (32 values per f16 scale, head sizes that are multiples of
 * 32) about a quarter; f32 keeps keys and values exactly as computed. */
typedef enum ts_kv_type { TS_KV_DEFAULT = 0, TS_KV_F32 = 1, TS_KV_F16 = 2, TS_KV_Q8_0 = 3 } ts_kv_type;
/* "f32", "f16" or "q8_0" -> its type; anything else -> -1. */
int ts_kv_type_from_name(const char *name);
const char *ts_kv_type_name(int type);   /* TS_KV_DEFAULT names the default, "f16" */

/* ---- model ---- */
int  ts_model_load(const char *path, const ts_load_options *opt, ts_model **out, ts_error *err);
void ts_model_free(ts_model *m);
int  ts_model_n_vocab(const ts_model *m);
bool ts_model_has_tokenizer(const ts_model *m);   /* false: only --tokens can prompt it */
bool ts_model_has_weights(const ts_model *m);     /* false: a tokenizer or vocab-only file */
int  ts_model_n_ctx_train(const ts_model *m);     /* the context length the model declares */
/* Writes the geometry table and the loader's layout decisions, human readable. */
void ts_model_print_info(const ts_model *m, FILE *f);
/* The kernel set the model's contexts use (one of ts_simd_name's). */
const char *ts_model_simd(const ts_model *m);
/* The kernel sets this engine knows, for i = 0, 1, ... until NULL: "scalar" (the reference
 * kernels), then the SIMD sets (one per instruction set, listed in src/kernels/cpu.c). */
const char *ts_simd_name(int i);
/* Whether this binary and CPU can run the kernel set of that name. */
bool ts_simd_available(const char *name);

/* ---- tokenizer ---- */
int  ts_token_bos(const ts_model *m);             /* -1 if none */
int  ts_token_eos(const ts_model *m);             /* -1 if none */
bool ts_add_bos(const ts_model *m);               /* per the model's metadata */
bool ts_token_is_eog(const ts_model *m, int32_t tok);  /* EOS or end-of-turn */
/* Encodes text (UTF-8); adds BOS first when add_bos; parse_special: text spelling a control token
 * (e.g. "<|im_end|>") becomes that token. Returns the number of ids (may exceed max_out: then only
 * max_out were written), or -1 on error (invalid UTF-8, no tokenizer). */
int  ts_tokenize(const ts_model *m, const char *text, size_t len, bool add_bos, bool parse_special,
                 int32_t *out, int max_out, ts_error *err);
/* Writes the bytes a token stands for when printed into buf (byte-fallback tokens give their raw
 * byte, the SentencePiece space mark gives ' ', control tokens give nothing). Returns the length,
 * or -1 if the id is out of range or cap is too small. Bytes may be part of a UTF-8 character. */
int  ts_token_text(const ts_model *m, int32_t tok, char *buf, size_t cap);

/* ---- chat templates ---- */
/* A model's Jinja chat template is run by tessera's own sandboxed interpreter, the way Hugging Face
 * transformers renders it (the same text byte for byte). */
typedef struct ts_chat_message {
    const char *role, *content;  /* content NULL: null (an assistant turn that only calls tools) */
    const char *fields_json;     /* NULL, or a JSON object of the message's other fields (tool_calls,
                                    tool_call_id, name) as the template sees them */
} ts_chat_message;
/* "jinja" when the model has a chat template that parses, "unknown" when its template does not
 * parse (prompts then go as plain text), NULL when it has none. */
const char *ts_chat_family(const ts_model *m);

typedef struct ts_chat_options {
    const char *template_text;   /* a Jinja template to use instead of the model's; NULL: the model's */
    const char *tools_json;      /* a JSON array the template gets as `tools`; NULL: none */
    const char *kwargs_json;     /* a JSON object of extra template variables, e.g.
                                    {"enable_thinking": false}; NULL: none */
    const char *date;            /* "YYYY-MM-DD" that strftime_now() formats; NULL: today */
} ts_chat_options;

/* Renders a conversation with the model's template and its BOS/EOS text (malloc'd text in *out)
 * and says whether the rendering already holds BOS (then tokenize it without adding another). -1
 * when there is no template, it does not parse, it raises (its message is the error), or the
 * rendering fails. ts_chat_render is ts_chat_render_opts with opt NULL. */
int  ts_chat_render(const ts_model *m, const ts_chat_message *msgs, int n, bool add_generation_prompt,
                    char **out, bool *has_bos, ts_error *err);
int  ts_chat_render_opts(const ts_model *m, const ts_chat_message *msgs, int n, bool add_generation_prompt,
                         const ts_chat_options *opt, char **out, bool *has_bos, ts_error *err);
/* Renders a conversation given as JSON text: an object with "messages" (message objects of any
 * fields: role, content as a string or a list of parts, tool_calls, ...), optional
 * "add_generation_prompt", "bos_token", "eos_token" and "tools". m may be NULL when
 * opt->template_text is given; with a model, its template (unless opt gives one) and its
 * vocabulary's BOS/EOS text are used. opt->tools_json, when given, replaces the conversation's. */
int  ts_chat_render_json(const ts_model *m, const char *conversation_json, size_t len,
                         const ts_chat_options *opt, char **out, ts_error *err);

/* The format the template (opt's, else the model's) writes an assistant's tool calls in, by the
 * name of its row in the tool-call table ("hermes", "llama3-json", "mistral", "harmony", ...), found
 * by rendering a probe call; NULL when it renders none the table knows. */
const char *ts_chat_tool_format(const ts_model *m, const ts_chat_options *opt);

/* ---- evaluation ---- */
/* n_ctx <= 0: the model's context, capped so the KV cache takes at most a quarter of the memory;
 * n_threads <= 0: all cores. The cache types come from the model's load options. */
int  ts_context_new(ts_model *m, int n_ctx, int n_threads, ts_context **out, ts_error *err);
typedef struct ts_context_options {
    int n_ctx, n_threads;        /* as ts_context_new */
    int cache_type_k, cache_type_v;   /* enum ts_kv_type; TS_KV_DEFAULT: the model's load option */
    int n_seq;                   /* sequences the context holds, each n_ctx positions (0: 1); with
                                    n_ctx 0, the memory cap is shared among them */
} ts_context_options;
/* ts_context_new with every option (opt NULL: all defaults). Fails, naming the problem, on an
 * unknown cache type or one that does not fit the model's head sizes. */
int  ts_context_new_opts(ts_model *m, const ts_context_options *opt, ts_context **out, ts_error *err);
/* The cache types a context uses (never TS_KV_DEFAULT). */
int  ts_context_cache_type_k(const ts_context *c);
int  ts_context_cache_type_v(const ts_context *c);
void ts_context_free(ts_context *c);
int  ts_context_n_ctx(const ts_context *c);
/* Weight bytes the context's matrix products have read so far (the experts a token did not choose
 * are never read). */
uint64_t ts_context_weight_bytes(const ts_context *c);
int  ts_context_pos(const ts_context *c);        /* tokens in the cache */
/* Forgets every cached position >= pos and returns the number of positions kept: pos, or less
 * when a sliding-window layer's ring buffer no longer holds what position pos needs (then the
 * caller re-evaluates from the returned position). */
int  ts_context_truncate(ts_context *c, int pos);
/* Evaluates n tokens at positions pos..pos+n-1 as one batch and appends them to the cache.
 * logits: NULL, or room for n_vocab floats (all_rows false: the last position's) or
 * n * n_vocab floats (all_rows true: one row per position). */
int  ts_eval(ts_context *c, const int32_t *tokens, int n, float *logits, bool all_rows, ts_error *err);

/* ---- several sequences in one context ----
 * A context made with ts_context_options.n_seq = N holds N sequences (0 .. N - 1), each with its own
 * n_ctx positions of cache; the single-sequence calls above act on sequence 0. Evaluating several
 * sequences together reads the weights once for all of them, which is what makes answering many
 * prompts at once faster than one after another. */
int  ts_context_n_seq(const ts_context *c);
int  ts_seq_pos(const ts_context *c, int seq);   /* -1: no such sequence */
/* ts_context_truncate for one sequence (-1: no such sequence). */
int  ts_seq_truncate(ts_context *c, int seq, int pos);
/* Makes sequence dst hold the first pos positions of sequence src (what dst held is forgotten):
 * a prompt sharing a prefix with another sequence's starts from a copy of its cache. Returns the
 * positions dst now holds: pos, or fewer when src's state cannot give them (a sliding layer's ring
 * that has moved past them, a recurrent state without a snapshot there), or -1. */
int  ts_seq_copy(ts_context *c, int dst, int src, int pos);
/* Whether ts_seq_copy can copy a prefix of any length (no layer keeps a recurrent state, which
 * can be copied only where a snapshot was taken). */
bool ts_context_copies_any_prefix(const ts_context *c);
typedef struct ts_batch_item {
    int seq;
    const int32_t *tokens;       /* appended to the sequence */
    int n;
    float *logits;               /* NULL, or room for n_vocab floats: the last token's logits (all_rows:
                                    n x n_vocab, every token's) */
    bool all_rows;
} ts_batch_item;
/* Evaluates every item's tokens, packed into forwards of up to 64 positions. Each item's results
 * (its cache, its logits) are bit for bit what ts_eval on that sequence alone gives, whatever else
 * is in the batch. A sequence may appear once per call. */
int  ts_eval_batch(ts_context *c, const ts_batch_item *items, int n_items, ts_error *err);

/* ---- sampling ---- */
typedef struct ts_sampler_params {
    float temp;            /* <= 0: greedy (argmax, lowest id wins ties) */
    int   top_k;           /* <= 0: off */
    float top_p;           /* in [0, 1]; 1: off, 0: only the most likely token */
    float min_p;           /* in [0, 1]; 0: off */
    float repeat_penalty;  /* > 0; 1: off */
    int   repeat_last_n;   /* how many recent tokens the penalty looks at; -1: all of them */
    uint64_t seed;
} ts_sampler_params;

typedef struct ts_sampler ts_sampler;
ts_sampler_params ts_sampler_default_params(void);
/* Fails, naming the field, when a parameter is out of its range or not a finite number. */
int  ts_sampler_new(const ts_sampler_params *p, int n_vocab, ts_sampler **out, ts_error *err);
void ts_sampler_free(ts_sampler *s);
/* Picks the next token from logits (which it may modify); recent = the tokens so far. */
int32_t ts_sample(ts_sampler *s, float *logits, const int32_t *recent, int n_recent);

/* ---- grammars ---- */
/* A grammar the answer's text must follow: GBNF as llama.cpp writes it (root rule `root`), or made
 * from a JSON Schema (the subset in README's "Answers in a shape"). Tokens the grammar cannot accept
 * next are masked before sampling; the answer ends when the grammar is complete and nothing more
 * can follow. One grammar can serve any number of requests at once (read-only once made). */
typedef struct ts_grammar ts_grammar;
int  ts_grammar_from_gbnf(const char *text, size_t len, ts_grammar **out, ts_error *err);
int  ts_grammar_from_json_schema(const char *schema, size_t len, ts_grammar **out, ts_error *err);
void ts_grammar_free(ts_grammar *g);

/* ---- generation sessions ---- */
/* A session is a context whose KV caches are kept from one request to the next: a request whose
 * prompt shares a prefix with what a cache holds (a chat's earlier turns and answers, a batch's
 * system prompt) evaluates only the tokens after it, the shared part kept in place or copied from
 * another slot's cache. It has one or more slots (sequences): requests started with
 * ts_session_submit run side by side, each ts_session_step evaluating one batch for all of them
 * (the weights read once per step), and a request that finishes frees its slot at once. What a
 * request computes does not depend on what else runs. The chat, one-shot, batch and check modes of
 * the CLI all generate through it. */
typedef struct ts_session ts_session;
typedef struct ts_session_options {
    int n_ctx;                   /* positions per slot; 0: the model's context, capped by memory */
    int n_threads;               /* <= 0: all cores */
    int n_slots;                 /* requests that can run at once (0: 1) */
    int step_prompt_tokens;      /* prompt tokens one step evaluates at most (0: no limit): the
                                    answers under way get a token every step while new prompts are
                                    evaluated a slice at a time (the results are the same) */
    /* Speculative decoding (enum ts_spec_mode; 0: off). Each step a generating slot proposes up to
     * spec_k tokens, the model evaluates them after its last token in one batch item (logits for
     * every row), and the answer samples row by row as plain decoding would, keeping proposals while
     * they are what it samples; the first other token is kept as the next one and the cache is cut
     * back. The proposals are deterministic, so sample-and-compare is the standard rejection rule:
     * the answers (greedy or seeded sampling, logprobs, stops) are token for token those of plain
     * decoding, only faster when proposals are accepted. Requests with on_logits decode plainly. */
    int spec;                    /* TS_SPEC_OFF, TS_SPEC_NGRAM (prompt lookup) or TS_SPEC_DRAFT */
    int spec_k;                  /* tokens proposed per step at most, 1 .. TS_SPEC_MAX_K (0: TS_SPEC_DEFAULT_K) */
    int spec_n;                  /* TS_SPEC_NGRAM: the n-gram matched, 1 .. TS_SPEC_MAX_N (0: TS_SPEC_DEFAULT_N) */
    bool spec_always;            /* propose every step as many as the adaptive length allows; by
                                    default only as many as the steps' measured costs and the odds
                                    of a proposal being taken say will pay (none where a forward's
                                    time grows with its positions as fast as the tokens it gives) */
    ts_model *draft;             /* TS_SPEC_DRAFT: a smaller model with the same vocabulary (n_vocab
                                    and every token's text; see ts_spec_check_draft) proposing greedily
                                    in its own context; not owned, must outlive the session */
} ts_session_options;

typedef enum ts_spec_mode { TS_SPEC_OFF = 0, TS_SPEC_NGRAM = 1, TS_SPEC_DRAFT = 2 } ts_spec_mode;
#define TS_SPEC_MAX_K 32
#define TS_SPEC_DEFAULT_K 8
#define TS_SPEC_MAX_N 16
#define TS_SPEC_DEFAULT_N 3
/* "off", "ngram" or "draft" -> its mode; anything else -> -1. */
int  ts_spec_mode_from_name(const char *name);
const char *ts_spec_mode_name(int mode);
/* 0 when draft can propose tokens for m (the same n_vocab and the same text for every token),
 * else -1 with a message naming the draft's file and the first difference. */
int  ts_spec_check_draft(const ts_model *m, const ts_model *draft, ts_error *err);

/* n_ctx 0: the model's context, capped by memory. The weights are read once here (one evaluation,
 * then forgotten), so the first prompt does not pay the first touch of the mapped file. */
int  ts_session_new(ts_model *m, int n_ctx, int n_threads, ts_session **out, ts_error *err);
int  ts_session_new_opts(ts_model *m, const ts_session_options *opt, ts_session **out, ts_error *err);
int  ts_session_n_slots(const ts_session *s);
int  ts_session_n_free(const ts_session *s);   /* slots without a request */
void ts_session_free(ts_session *s);
int  ts_session_n_ctx(const ts_session *s);
/* Forgets the caches of the slots without a request (the next request is evaluated whole). */
void ts_session_reset(ts_session *s);
/* Text (a prompt, rendered or plain) longer than this many bytes cannot fit the context, whatever
 * it says: callers may refuse it before reading or tokenizing more of it. */
size_t ts_session_text_limit(const ts_session *s);

/* A generated token's log-probability under the model (the log-softmax of its logits, before the
 * sampling parameters, healing or --ignore-eos change them) and the most likely tokens there. */
#define TS_MAX_TOP_LOGPROBS 20
typedef struct ts_token_logprob {
    int32_t token;
    float logprob;
    int n_top;                                   /* the alternatives asked for (sorted, most likely first) */
    int32_t top_token[TS_MAX_TOP_LOGPROBS];
    float top_logprob[TS_MAX_TOP_LOGPROBS];
} ts_token_logprob;

typedef struct ts_gen_request {
    const int32_t *prompt;
    int n_prompt;
    int max_tokens;              /* < 0: until the end of the answer or a full context */
    ts_sampler_params sampling;
    const char *const *stop;     /* stop strings (not part of the answer) */
    int n_stop;
    bool heal;                   /* token healing: see ts_session_generate */
    bool ignore_eos;             /* end-of-generation tokens are never sampled (llama.cpp's
                                    --ignore-eos): the answer runs to max_tokens or a stop string */
    /* Streaming: each piece of answer text once it is final (whole UTF-8 characters, nothing a
     * stop string could still claim). Returning non-zero stops the answer ("cancelled"). */
    int (*on_text)(void *user, const char *text, size_t len);
    /* NULL, or every evaluated position's logits (prompt rows, then one per generated token but
     * the last); the prefix cache is not used. Returning non-zero fails the request. */
    int (*on_logits)(void *user, const float *rows, int n_rows, int n_vocab);
    void *user;
    /* NULL, or a flag a signal handler sets: the answer stops ("cancelled") before the next token. */
    const volatile sig_atomic_t *cancel;
    /* NULL, or told the prompt tokens evaluated so far of those to evaluate, as a long prompt goes
     * (it is then evaluated in slices; the results are the same) */
    void (*on_prefill)(void *user, int done, int total);
    /* 0 (and the zeroed default): no log-probabilities; 1 + k: each generated token's, with its k most
     * likely alternatives (k at most TS_MAX_TOP_LOGPROBS) */
    int logprobs;
    /* NULL, or the grammar the answer follows (token healing is then off) */
    const ts_grammar *grammar;
    /* control tokens' text is part of the answer (as the vocabulary spells them: "[TOOL_CALLS]",
     * "<|channel|>"), so that tool calls whose markers are such tokens can be read from it */
    bool special_text;
} ts_gen_request;

typedef struct ts_gen_result {
    char *text;                  /* the answer (malloc'd, NUL-terminated) */
    size_t len;
    int n_prompt;                /* the prompt tokens the answer follows (fewer than given when
                                    healing backed some up) */
    int n_reused;                /* how many of them came from the cache */
    int n_generated;
    int32_t *tokens;             /* the answer's token ids, n_generated of them (malloc'd) */
    ts_token_logprob *logprobs;  /* with rq->logprobs: one per generated token (malloc'd), else NULL */
    int n_healed;                /* bytes of prompt text generated again by healing (the answer
                                    starts after them) */
    const char *finish_reason;   /* "stop" (end of generation or a stop string), "length",
                                    "context" (the context is full) or "cancelled" */
    double prompt_seconds, gen_seconds;
    double first_token_seconds;  /* from the call to the first sampled token */
    int n_drafted, n_accepted;   /* speculative decoding: tokens proposed, and of them those the
                                    answer took (each step's first other token is not counted) */
    double decode_weight_bytes;  /* weight bytes read per decode step after the first token (a step
                                    shared with other requests reads them once for all); 0: none */
} ts_gen_result;

/* Evaluates the prompt (reusing what the cache shares with it) and generates. Token healing: a
 * prompt ending inside a word ("Once upon a ti") has the tokens of that word (at most 8) backed up;
 * generation must first spell the removed text again (each token's text starting with what is
 * left of it, or being a beginning of it), then goes on freely. */
int  ts_session_generate(ts_session *s, const ts_gen_request *rq, ts_gen_result *res, ts_error *err);
void ts_gen_result_free(ts_gen_result *r);

/* Several requests at once. ts_session_submit starts rq in a free slot and returns the slot, or -1
 * (err) when no slot is free or the request is refused at once (an empty or too long prompt, bad
 * sampling parameters). rq (and its prompt and stop strings), res and rq_err must stay valid until
 * the request finishes: res then holds its result, or (failed) rq_err its error. ts_session_step
 * evaluates one batch for every started request (a starting one's prompt, a generating one's
 * latest token) and samples their next tokens; it writes the requests that finished in this step
 * to done (room for ts_session_n_slots) and returns how many. ts_session_generate is one request
 * submitted and stepped to its end (no other request may be under way). */
typedef struct ts_gen_done { int slot; int rc; } ts_gen_done;   /* rc 0: complete, -1: failed */
/* The slots a batch runs by default: 8, or fewer when a quarter of the memory cannot hold that many
 * sequences' caches of min(n_ctx (0: the model's context), 4096) positions each, with their
 * recurrent states and snapshots. At least 1. */
int  ts_default_slots(const ts_model *m, int n_ctx);
int  ts_session_submit(ts_session *s, const ts_gen_request *rq, ts_gen_result *res, ts_error *rq_err, ts_error *err);
int  ts_session_step(ts_session *s, ts_gen_done *done);
/* Drops the request in a slot at once (its result freed, nothing reported). */
void ts_session_cancel(ts_session *s, int slot);

#ifdef __cplusplus
}
#endif
#endif
