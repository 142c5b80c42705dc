/* libFuzzer: the GGUF reader over memory (header, metadata, tensor table), every accessor on every
 * key it read, the tensor data it vouches for, each tensor's first row through its type's decoder
 * and row kernel (hostile grid indices, signs and scales of the low-bit types included), and the
 * vocabulary and chat-template lookups a model load makes from that metadata. */
#include "fuzz_common.h"
#include "io/gguf.h"
#include "kernels/types.h"
#include "kernels/simd.h"
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

/* The first row of every tensor of a type with kernels (rows up to 4096 weights): dequantized,
 * through the scalar reference dot, and through the best kernel set's row kernel against zero
 * activations. Any bytes are a valid block, so nothing may read outside the row or its tables. */
static unsigned decode_tensors(const gguf_file *g) {
    static float row[4096], x[4096];
    static uint8_t act[4096 * 2];
    const kernel_set *ks = kernel_set_for(cpu_best_simd());
    const tensor_dir *d = gguf_tensors(g);
    unsigned sum = 0;
    for (int i = 0; i < d->n; i++) {
        const tensor_entry *t = &d->t[i];
        const type_traits *tt = type_get(t->type);
        const int64_t k = t->ne[0];
        if (!tt || k > 4096 || type_row_bytes(t->type, k) > t->nbytes) continue;
        tt->dequant_row(t->data, row, k);
        sum += row[0] == row[0];
        sum += tt->dot_f32(t->data, x, k) == 0.0f;
        const type_kernels *tk = ks ? ks->types[t->type] : NULL;
        if (tk && tk->act_type != TS_F32 && act_row_bytes(tk->act_type, k) <= sizeof act) {
            act_quantizer(ks, tk->act_type)(x, act, k);
            sum += tk->dot(t->data, act, k) == 0.0f;
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
    volatile unsigned sink = touch_tensors(g) + touch_metadata(g) + decode_tensors(g);
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
