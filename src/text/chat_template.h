/* Chat templates by family recognition: a model's Jinja chat template is matched against the
 * known templates (compared after normalising Jinja whitespace control, quoting and comments;
 * only branches a plain conversation never runs, such as tool handling, may differ), then the conversation is rendered
 * in C exactly as Hugging Face transformers' Jinja rendering of that template would render it.
 *
 * Only plain conversations are rendered: system/user/assistant messages with string contents.
 * Tools, images, other roles, orders a template rejects, and unrecognised templates give an
 * error rather than a rendering that could differ from the template's. */
#ifndef TS_TEXT_CHAT_TEMPLATE_H
#define TS_TEXT_CHAT_TEMPLATE_H
#include <stdbool.h>
#include <time.h>
#include "tessera.h"

typedef struct chat_message {
    const char *role;      /* "system", "user" or "assistant" */
    const char *content;   /* UTF-8, NUL-terminated */
} chat_message;

typedef enum chat_family {
    CHAT_UNKNOWN = 0,
    CHAT_CHATML,     /* plain ChatML: <|im_start|>role\n...<|im_end|>\n */
    CHAT_QWEN3,      /* Qwen3 ChatML with <think> handling of assistant turns after the last query */
    CHAT_SMOLLM3,    /* SmolLM3 ChatML: fixed system header with metadata and reasoning mode */
    CHAT_LLAMA2,     /* <s>[INST] <<SYS>>\n...\n<</SYS>>\n\n... [/INST] answer </s> */
    CHAT_LLAMA3,     /* Llama 3.2: <|start_header_id|>, system header with knowledge/today dates */
    CHAT_GEMMA2,     /* <start_of_turn>, no system role */
    CHAT_GEMMA,      /* Gemma 3: <start_of_turn>, system folded into the first user turn */
    CHAT_GEMMA4,     /* <|turn>role\n...<turn|>\n, empty thought channel in the generation prompt */
    CHAT_FAMILY_COUNT
} chat_family;

typedef struct chat_options {
    bool add_generation_prompt;   /* end with the header of an assistant turn */
    const char *bos_token;        /* text of BOS as the template sees it ("<s>"); NULL means "" */
    const char *eos_token;        /* text of EOS ("</s>"); NULL means "" */
    const struct tm *today;       /* date for templates that print it (strftime_now); NULL: local today */
} chat_options;

/* The family of a Jinja chat template, or CHAT_UNKNOWN when it matches none exactly enough. */
int chat_family_detect(const char *template_text);
/* Short name ("qwen3", "llama3", ...); "unknown" for CHAT_UNKNOWN or out-of-range values. */
const char *chat_family_name(int family);
/* The text that ends a turn, for stop detection ("<|im_end|>", "<end_of_turn>", "<|eot_id|>",
 * "<turn|>"), or NULL when the family ends assistant turns with EOS only (Llama 2). */
const char *chat_family_end_of_turn(int family);
/* True when the family's template writes bos_token into the text itself; the caller then must
 * not add another BOS when tokenizing the rendering. */
bool chat_family_emits_bos(int family);
/* True when text begins with bos_token (a non-empty one). */
bool chat_starts_with_bos(const char *text, const char *bos_token);

/* Renders msgs[0..n) into a malloc'd NUL-terminated string (*out, free with free()). Returns 0,
 * or -1 with err filled for an unknown family, an empty conversation, a role or message order the
 * family's template cannot render exactly, or invalid UTF-8 in a content. */
int chat_render(int family, const chat_message *msgs, int n, const chat_options *opt,
                char **out, ts_error *err);

#endif
