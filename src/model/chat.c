/* The public face of chat templates: the model's template text -> family -> rendering. */
#include "model/model.h"
#include "text/chat_template.h"
#include "core/error.h"
#include <stdlib.h>
#include <string.h>

const char *ts_chat_family(const ts_model *m) {
    if (!m->chat_template) return NULL;
    return chat_family_name(chat_family_detect(m->chat_template));
}

/* The text of a special token as the template sees it ("<s>"), or "". */
static const char *token_string(const ts_model *m, int id) {
    return m->has_vocab && id >= 0 && id < m->voc.n ? m->voc.text[id] : "";
}

int ts_chat_render(const ts_model *m, const ts_chat_message *msgs, int n, bool add_generation_prompt,
                   char **out, bool *has_bos, ts_error *err) {
    *out = NULL;
    if (!m->chat_template) return ts_fail(err, "%s: the model has no chat template", m->path);
    int family = chat_family_detect(m->chat_template);
    if (family == CHAT_UNKNOWN) return ts_fail(err, "%s: the chat template is not one tessera recognizes", m->path);
    chat_message *cm = malloc((size_t)(n > 0 ? n : 1) * sizeof *cm);
    if (!cm) return ts_fail(err, "out of memory");
    for (int i = 0; i < n; i++) cm[i] = (chat_message){ msgs[i].role, msgs[i].content };
    const char *bos = token_string(m, m->has_vocab ? m->voc.bos : -1);
    chat_options opt = { .add_generation_prompt = add_generation_prompt, .bos_token = bos,
                         .eos_token = token_string(m, m->has_vocab ? m->voc.eos : -1), .today = NULL };
    ts_error e2;
    int rc = chat_render(family, cm, n, &opt, out, &e2);
    free(cm);
    if (rc != 0) return ts_fail(err, "%s: chat template (%s): %s", m->path, chat_family_name(family), e2.msg);
    *has_bos = chat_starts_with_bos(*out, bos);
    return 0;
}
