/* The shared vocabulary: a string -> id hash, its lifetime, and the end-of-turn lookup every loader
 * does. */
#include "text/vocab.h"
#include "text/pipeline.h"
#include "core/error.h"
#include "core/utf8.h"
#include <limits.h>
#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------------------------------------- */
/* string -> id hash (open addressing, linear probing)                                             */

static uint32_t hash_bytes(const char *s, size_t len) {
    uint32_t h = 2166136261u;               /* FNV-1a */
    for (size_t i = 0; i < len; i++) { h ^= (unsigned char)s[i]; h *= 16777619u; }
    return h;
}

int vocab_build_hash(vocab *v, ts_error *err) {
    free(v->hash_ids);
    v->hash_ids = NULL;
    v->hash_cap = 0;
    uint32_t cap = 16;
    while (cap < 2u * (uint32_t)v->n) cap <<= 1;
    v->hash_ids = malloc(cap * sizeof *v->hash_ids);
    if (!v->hash_ids) return ts_fail(err, "out of memory building the vocabulary hash");
    memset(v->hash_ids, 0xff, cap * sizeof *v->hash_ids);    /* every slot -1 */
    v->hash_cap = cap;
    for (int id = 0; id < v->n; id++) {
        uint32_t slot = hash_bytes(v->text[id], v->len[id]) & (cap - 1);
        for (;;) {
            int32_t there = v->hash_ids[slot];
            if (there < 0) { v->hash_ids[slot] = id; break; }
            /* A repeated string maps to its last id, as llama.cpp's token_to_id map does. */
            if (v->len[there] == v->len[id] && memcmp(v->text[there], v->text[id], v->len[id]) == 0) {
                v->hash_ids[slot] = id;
                break;
            }
            slot = (slot + 1) & (cap - 1);
        }
    }
    return 0;
}

int32_t vocab_find(const vocab *v, const char *s, size_t len) {
    if (!v->hash_ids || v->hash_cap == 0) return -1;
    uint32_t slot = hash_bytes(s, len) & (v->hash_cap - 1);
    for (;;) {
        int32_t id = v->hash_ids[slot];
        if (id < 0) return -1;
        if (v->len[id] == len && memcmp(v->text[id], s, len) == 0) return id;
        slot = (slot + 1) & (v->hash_cap - 1);
    }
}

void vocab_free(vocab *v) {
    if (!v) return;
    if (v->text) for (int i = 0; i < v->n; i++) free(v->text[i]);
    free(v->text);
    free(v->len);
    free(v->score);
    free(v->attr);
    free(v->strip);
    if (v->norm_text)
        for (int i = 0; i < v->n; i++) free(v->norm_text[i]);
    free(v->norm_text);
    free(v->hash_ids);
    if (v->merges) for (int i = 0; i < v->n_merges; i++) free(v->merges[i]);
    free(v->merges);
    free(v->pre);
    pipeline_free(v->pipeline);
    if (v->merge_table_free) v->merge_table_free(v->merge_table);
    memset(v, 0, sizeof *v);
    v->bos = v->eos = v->eot = v->unk = v->pad = -1;
}

void vocab_find_eot(vocab *v) {
    static const char *const names[] = {
        "<|eot_id|>", "<|im_end|>", "<end_of_turn>", "<|end|>", "<turn|>"
    };
    if (v->eot >= 0) return;
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        int32_t id = vocab_find(v, names[i], strlen(names[i]));
        if (id >= 0) { v->eot = id; return; }
    }
}

int vocab_check_text(const char *text, size_t len, ts_error *err) {
    size_t bad;
    if (!utf8_valid(text, len, &bad)) return ts_fail(err, "invalid UTF-8 at byte %zu", bad);
    /* token counts are ints, and an encoder's working copy takes up to 4 bytes per byte */
    if (len > (size_t)INT_MAX / 4) return ts_fail(err, "text too long to tokenize (%zu bytes)", len);
    return 0;
}
