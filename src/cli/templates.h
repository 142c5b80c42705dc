/* The chat-template options: --chat-template FILE (a .jinja file or a tokenizer_config.json),
 * --chat-template-kwargs JSON, --tools FILE, --date, checked and read into ts_chat_options; and
 * --render, which prints a conversation's rendering. */
#ifndef TS_CLI_TEMPLATES_H
#define TS_CLI_TEMPLATES_H
#include "tessera.h"
#include "cli/options.h"

typedef struct template_setup {
    ts_chat_options opt;
    char *template_text, *tools_text;
} template_setup;

/* Prints a one-line error and returns -1 when an option is wrong. */
int  template_setup_load(const cli_options *o, template_setup *t);
void template_setup_free(template_setup *t);

/* --render: returns the exit status. */
int  template_render(const cli_options *o, const template_setup *t);

#endif
