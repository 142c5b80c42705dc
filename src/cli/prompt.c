/* Prompts: reading them (bounded) and turning them into token ids. */
#include "cli/prompt.h"
#include "core/error.h"
#include "core/utf8.h"
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int prompt_read(const char *path, size_t limit, char **out, ts_error *err) {
    *out = NULL;
    bool is_stdin = !strcmp(path, "-");
    const char *name = is_stdin ? "stdin" : path;
    int fd = is_stdin ? STDIN_FILENO : open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return ts_fail(err, "%s: cannot open: %s", name, strerror(errno));
    if (limit > ((size_t)1 << 40)) limit = (size_t)1 << 40;
    size_t len = 0, cap = 4096;
    char *buf = malloc(cap);
    int rc = -1;
    if (!buf) { ts_fail(err, "out of memory"); goto done; }
    for (;;) {
        if (len + 1 >= cap) {
            size_t nc = cap * 2;
            char *t = realloc(buf, nc);
            if (!t) { ts_fail(err, "%s: out of memory for a prompt of %zu bytes", name, len); goto done; }
            buf = t;
            cap = nc;
        }
        size_t want = cap - 1 - len;
        if (want > limit + 1 - len) want = limit + 1 - len;   /* never read more than limit + 1 */
        ssize_t r = read(fd, buf + len, want);
        if (r < 0 && errno == EINTR) continue;
        if (r < 0) { ts_fail(err, "%s: read error: %s", name, strerror(errno)); goto done; }
        if (r == 0) break;
        len += (size_t)r;
        if (len > limit) {
            ts_fail(err, "%s: the prompt is longer than %zu bytes, more than the context can hold", name, limit);
            goto done;
        }
    }
    if (len && buf[len - 1] == '\n') len--;
    if (len && buf[len - 1] == '\r') len--;
    buf[len] = 0;
    if (strlen(buf) != len) { ts_fail(err, "%s: the prompt contains a NUL byte", name); goto done; }
    *out = buf;
    buf = NULL;
    rc = 0;
done:
    free(buf);
    if (!is_stdin && fd >= 0) close(fd);
    return rc;
}

/* Plain text: the user and assistant turns one after the other (a system turn has nowhere to go). */
static char *plain_text(const ts_chat_message *msgs, int n_msgs) {
    size_t total = 1;
    for (int i = 0; i < n_msgs; i++) if (strcmp(msgs[i].role, "system") != 0 && msgs[i].content) total += strlen(msgs[i].content);
    char *text = malloc(total), *p = text;
    if (!text) return NULL;
    for (int i = 0; i < n_msgs; i++)
        if (strcmp(msgs[i].role, "system") != 0 && msgs[i].content) {
            size_t l = strlen(msgs[i].content);
            memcpy(p, msgs[i].content, l);
            p += l;
        }
    *p = 0;
    return text;
}

int prompt_to_tokens(const ts_model *m, const ts_chat_message *msgs, int n_msgs, bool raw,
                     const ts_chat_options *chat_opt, size_t max_bytes, const char *text_name,
                     const char *template_name, int32_t **out, bool *chat, bool *unknown_template,
                     ts_error *err) {
    *out = NULL;
    *chat = false;
    *unknown_template = false;
    char *text = NULL;
    const char *name = text_name ? text_name : "the prompt";
    /* the text's own faults are the text's, whatever the template would make of it */
    for (int i = 0; i < n_msgs; i++) {
        size_t bad;
        if (msgs[i].content && !utf8_valid(msgs[i].content, strlen(msgs[i].content), &bad))
            return !strcmp(msgs[i].role, "user") ? ts_fail(err, "%s: invalid UTF-8 at byte %zu", name, bad)
                                                 : ts_fail(err, "the %s message: invalid UTF-8 at byte %zu", msgs[i].role, bad);
    }
    const char *family = chat_opt && chat_opt->template_text ? "jinja" : ts_chat_family(m);
    if (!raw && family && strcmp(family, "unknown") != 0) {
        bool has_bos;   /* the BOS check below covers it */
        ts_error rerr = {{0}};
        if (ts_chat_render_opts(m, msgs, n_msgs, true, chat_opt, &text, &has_bos, &rerr) != 0)
            return template_name ? ts_fail(err, "%s: %s", template_name, rerr.msg) : ts_fail(err, "%s", rerr.msg);
        *chat = true;
    } else {
        if (family && !raw) *unknown_template = true;
        if (!(text = plain_text(msgs, n_msgs))) return ts_fail(err, "out of memory");
    }
    size_t len = strlen(text);
    if (max_bytes && len > max_bytes) {
        free(text);
        return ts_fail(err, "%s: %zu bytes, more than the context can hold (at most %zu bytes)", name, len, max_bytes);
    }
    if (len > (1u << 26)) { free(text); return ts_fail(err, "%s: longer than 64 MiB", name); }
    /* a token per byte is the usual most; byte fallback can give up to three per character of
     * U+2581-escaped text, so the count decides (the tokenizer says how many it needed) */
    int cap = (int)len + 8;
    int32_t *ids = malloc((size_t)cap * sizeof *ids);
    ts_error terr = {{0}};
    /* special-token text in the prompt becomes those tokens, as llama-cli parses it; BOS goes
     * first unless the text already spells it (a rendering that holds it, a --raw conversation) */
    int n = ids ? ts_tokenize(m, text, len, false, true, ids + 1, cap - 1, &terr) : ts_fail(&terr, "out of memory");
    if (n > cap - 1 && n < INT_MAX - 1) {
        int32_t *more = realloc(ids, ((size_t)n + 1) * sizeof *ids);
        if (more) {
            ids = more;
            cap = n + 1;
            n = ts_tokenize(m, text, len, false, true, ids + 1, cap - 1, &terr);
        }
    }
    free(text);
    if (n < 0 || n > cap - 1) {
        free(ids);
        /* a model without a tokenizer is the model's fault, not the text's */
        if (n < 0) return text_name && ts_model_has_tokenizer(m) ? ts_fail(err, "%s: %s", text_name, terr.msg) : ts_fail(err, "%s", terr.msg);
        return ts_fail(err, "%s: too many tokens", name);
    }
    int bos = ts_token_bos(m);
    if (ts_add_bos(m) && (n == 0 || ids[1] != bos)) ids[0] = bos, n++;
    else memmove(ids, ids + 1, (size_t)n * sizeof *ids);
    if (n == 0) { free(ids); return ts_fail(err, "%s is empty and the model adds no BOS token", name); }
    *out = ids;
    return n;
}
