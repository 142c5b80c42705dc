/* tokenizer_config.json, the one reader of it: the special tokens it names, add_bos/add_eos and
 * the chat template. Used by the tokenizer.json loader and the Hugging Face folder loader. */
#ifndef TS_TEXT_TOKENIZER_CONFIG_H
#define TS_TEXT_TOKENIZER_CONFIG_H
#include <stdbool.h>
#include "tessera.h"
#include "io/json.h"

/* A named token: absent, null, or its text (a string, or an object's "content"). */
typedef struct config_token { bool present, null; const char *text; } config_token;

typedef struct tokenizer_config {
    json_value *root;               /* owned; NULL when the folder has no tokenizer_config.json */
    char path[1200];
    config_token bos, eos, pad, unk;
    bool has_add_bos, add_bos, has_add_eos, add_eos;
    const char *chat_template;      /* the template (the "default" one of a named list), or NULL */
} tokenizer_config;

/* Reads DIR/tokenizer_config.json; a missing file gives an empty config and 0. */
int  tokenizer_config_read(const char *dir, tokenizer_config *out, ts_error *err);
void tokenizer_config_free(tokenizer_config *c);

#endif
