/* Prompts: text from the command line, a file or stdin (read up to a bound), and text or a
 * conversation turned into token ids. */
#ifndef TS_CLI_PROMPT_H
#define TS_CLI_PROMPT_H
#include "tessera.h"

/* Reads a whole prompt from path ("-": stdin), at most limit bytes: a longer one is refused after
 * reading limit + 1 bytes. One trailing newline is dropped, as llama-cli does for -f. Works on
 * FIFOs and terminals (read until end of input). Errors name path (or "stdin"). */
int prompt_read(const char *path, size_t limit, char **out, ts_error *err);

/* A prompt -> ids. With a chat template (the model's, or chat_opt->template_text) and !raw the
 * messages are rendered with the generation prompt (and chat_opt's tools, variables and date);
 * otherwise the user and assistant contents are sent one after the other as plain text. Either way
 * text that spells a special token becomes that token, as in llama-cli, and BOS is put first when
 * the model adds one and the text does not already start with it. *chat says which happened;
 * *unknown_template is set when the model's template does not parse (the caller warns).
 * max_bytes (0: none) refuses a rendering longer than that before it is tokenized. Errors about
 * the text are prefixed with text_name, errors of the template with template_name, when given
 * (so a message blames the prompt or the template, whichever is wrong). Returns the count, or -1
 * with err. */
int prompt_to_tokens(const ts_model *m, const ts_chat_message *msgs, int n_msgs, bool raw,
                     const ts_chat_options *chat_opt, size_t max_bytes, const char *text_name,
                     const char *template_name, int32_t **out, bool *chat, bool *unknown_template,
                     ts_error *err);

#endif
