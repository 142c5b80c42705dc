/* libFuzzer: the GGUF reader over memory (header, metadata, tensor table), every accessor on every
 * key it read, the tensor data it vouches for, and the vocabulary and chat-template lookups a model
 * load makes from that metadata. */
#include "fuzz_common.h"
#include "io/gguf.h"
#include "text/tokenizer.h"
#include "text/vocab_gguf.h"
#include "template/jinja.h"

/* Reads the first and last byte of every tensor, so ASan sees any range the reader got wrong. */
static unsigned touch_tensors(const gguf_file *g) {
    const tensor_dir *d = gguf_tensors(g);
    unsigned sum = 0;
    for (int i = 0; i < d->n; i++) {
        const tensor_entry *t = &d->t[i];
        if (t->nbytes) sum += t->data[0] + t->data[t->nbytes - 1];
        if (tensor_dir_find(d, t->name) == NULL) abort();   /* every name must be findable */
    }
    return sum;
}

static unsigned touch_metadata(const gguf_file *g) {
    unsigned sum = 0;
    for (uint64_t i = 0; i < gguf_n_keys(g); i++) {
        const char *key = gguf_key_at(g, i);
        int64_t iv; float fv; bool bv; const char *s; size_t len; int et; uint64_t n;
        sum += gguf_key_type(g, key) + gguf_has(g, key);
        if (gguf_get_i64(g, key, &iv)) sum += (unsigned)iv;
        if (gguf_get_f32(g, key, &fv)) sum += fv > 0;
        if (gguf_get_bool(g, key, &bv)) sum += bv;
        if (gguf_get_str(g, key, &s, &len) && len) sum += (uint8_t)s[0] + (uint8_t)s[len - 1];
        if (gguf_get_arr(g, key, &et, &n)) {
            uint64_t probe[] = { 0, 1, n / 2, n ? n - 1 : 0, n, n + 1, UINT64_MAX };
            for (size_t k = 0; k < sizeof probe / sizeof probe[0]; k++) {
                double dv;
                if (gguf_arr_i64(g, key, probe[k], &iv)) sum += (unsigned)iv;
                if (gguf_arr_f64(g, key, probe[k], &dv)) sum += dv > 0;
                if (gguf_arr_str(g, key, probe[k], &s, &len) && len) sum += (uint8_t)s[len - 1];
            }
        }
    }
    return sum;
}

int LLVMFuzzerInitialize(int *argc, char ***argv) { (void)argc; (void)argv; return 0; }

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    gguf_file *g;
    ts_error err;
    if (gguf_open_memory(data, size, "fuzz.gguf", &g, &err) != 0) {
        if (strchr(err.msg, '\n')) abort();   /* errors are one line */
        return 0;
    }
    volatile unsigned sink = touch_tensors(g) + touch_metadata(g);
    (void)sink;
    if (gguf_has(g, "tokenizer.ggml.model")) {
        vocab v;
        memset(&v, 0, sizeof v);
        if (vocab_from_gguf(g, &v, &err) == 0) {
            static const char text[] = "Hello world! <s> 123 \xc3\xa9t\xc3\xa9 \xe2\x96\x81 <|im_end|>";
            int32_t ids[128];
            int n = tokenizer_encode(&v, text, sizeof text - 1, true, true, ids, 128, &err);
            for (int i = 0; i < n && i < 128; i++) {
                char buf[256];
                if (ids[i] < 0 || ids[i] >= v.n) abort();
                tokenizer_token_bytes(&v, ids[i], buf, sizeof buf);
            }
        } else if (strchr(err.msg, '\n')) {
            abort();
        }
        vocab_free(&v);
    }
    const char *tmpl; size_t tlen;
    if (gguf_get_str(g, "tokenizer.chat_template", &tmpl, &tlen)) {
        char *t = malloc(tlen + 1);
        if (t) {
            memcpy(t, tmpl, tlen);
            t[tlen] = 0;
            jinja_template *jt;
            ts_error terr;
            if (jinja_parse(t, tlen, &jt, &terr) == 0) jinja_template_free(jt);
            else if (strchr(terr.msg, '\n')) abort();
            free(t);
        }
    }
    gguf_close(g);
    return 0;
}
