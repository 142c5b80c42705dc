/* The config rules of ../shared/SPEC.md (1.5 and section 4), on small synthetic models written here: layer kinds
 * from sliding_window_pattern (and its default), layer_types winning over the pattern, the local
 * RoPE base when missing, where linear scaling applies, BOS from tokenizer_config.json, the norm
 * "+1" per container, the Gemma 3 attention scale. */
#include "check.h"
#include "load/model.h"
#include "load/hparams.h"
#include "io/gguf_write.h"
#include "kernels/types.h"
#include <math.h>
#include <string.h>
#include <unistd.h>

enum { H = 8, NH = 2, NKV = 1, HD = 4, F = 8, V = 16, L = 6 };
static char dir[256];

static void write_text(const char *name, const char *text) {
    char p[512];
    snprintf(p, sizeof p, "%s/%s", dir, name);
    FILE *f = fopen(p, "w");
    fputs(text, f);
    fclose(f);
}

/* A Gemma-shaped (or Llama-shaped) safetensors file: zeros, except every norm weight is 0.5;
 * extra: one more tensor of H values (NULL: none). */
static void write_safetensors_as(bool gemma, const char *extra) {
    struct { char name[96]; int64_t rows, cols; bool norm; } t[256];
    int n = 0;
#define ADD(nm, r, c, isnorm) do { snprintf(t[n].name, sizeof t[n].name, "%s", nm); t[n].rows = r; t[n].cols = c; t[n].norm = isnorm; n++; } while (0)
    ADD("model.embed_tokens.weight", V, H, false);
    ADD("model.norm.weight", 1, H, true);
    for (int l = 0; l < L; l++) {
        char b[96];
#define LAYER(suffix, r, c, isnorm) do { snprintf(b, sizeof b, "model.layers.%d.%s", l, suffix); ADD(b, r, c, isnorm); } while (0)
        LAYER("input_layernorm.weight", 1, H, true);
        LAYER("self_attn.q_proj.weight", NH * HD, H, false);
        LAYER("self_attn.k_proj.weight", NKV * HD, H, false);
        LAYER("self_attn.v_proj.weight", NKV * HD, H, false);
        LAYER("self_attn.o_proj.weight", H, NH * HD, false);
        LAYER("post_attention_layernorm.weight", 1, H, true);
        if (gemma) {
            LAYER("self_attn.q_norm.weight", 1, HD, true);
            LAYER("self_attn.k_norm.weight", 1, HD, true);
            LAYER("pre_feedforward_layernorm.weight", 1, H, true);
            LAYER("post_feedforward_layernorm.weight", 1, H, true);
        }
        LAYER("mlp.gate_proj.weight", F, H, false);
        LAYER("mlp.up_proj.weight", F, H, false);
        LAYER("mlp.down_proj.weight", H, F, false);
    }
    if (extra) ADD(extra, 1, H, false);
    char *hdr = malloc(65536);
    size_t off = 0, len = 0;
    len += sprintf(hdr + len, "{");
    for (int i = 0; i < n; i++) {
        size_t bytes = (size_t)t[i].rows * t[i].cols * 4;
        if (t[i].rows == 1) len += sprintf(hdr + len, "%s\"%s\":{\"dtype\":\"F32\",\"shape\":[%lld],\"data_offsets\":[%zu,%zu]}", i ? "," : "", t[i].name, (long long)t[i].cols, off, off + bytes);
        else len += sprintf(hdr + len, "%s\"%s\":{\"dtype\":\"F32\",\"shape\":[%lld,%lld],\"data_offsets\":[%zu,%zu]}", i ? "," : "", t[i].name, (long long)t[i].rows, (long long)t[i].cols, off, off + bytes);
        off += bytes;
    }
    len += sprintf(hdr + len, "}");
    while (len % 8) hdr[len++] = ' ';
    char p[512];
    snprintf(p, sizeof p, "%s/model.safetensors", dir);
    FILE *f = fopen(p, "wb");
    uint64_t hl = len;
    fwrite(&hl, 8, 1, f);
    fwrite(hdr, 1, len, f);
    for (int i = 0; i < n; i++)
        for (int64_t k = 0; k < t[i].rows * t[i].cols; k++) { float x = t[i].norm ? 0.5f : 0.0f; fwrite(&x, 4, 1, f); }
    fclose(f);
    free(hdr);
}

static void write_safetensors(void) { write_safetensors_as(true, NULL); }

static ts_model *load(const char *path) {
    ts_model *m = NULL;
    ts_error err = {{0}};
    if (ts_model_load(path, NULL, &m, &err) != 0) { CHECK(0, "load %s: %s", path, err.msg); return NULL; }
    return m;
}

static void kinds(const ts_model *m, char *out) {
    for (int l = 0; l < m->g.n_layers; l++) out[l] = m->g.layers[l].attn.sliding ? 'S' : 'F';
    out[m->g.n_layers] = 0;
}

#define GEMMA3_BASE "\"model_type\":\"gemma3_text\",\"hidden_size\":8,\"num_hidden_layers\":6,\"num_attention_heads\":2," \
                    "\"num_key_value_heads\":1,\"head_dim\":4,\"intermediate_size\":8,\"vocab_size\":16,\"sliding_window\":4," \
                    "\"rope_theta\":1000000.0"

static void hf_rules(void) {
    char k[16];
    ts_model *m;
    write_safetensors();

    write_text("config.json", "{" GEMMA3_BASE ",\"sliding_window_pattern\":3,\"rope_scaling\":{\"rope_type\":\"linear\",\"factor\":4.0},"
                              "\"query_pre_attn_scalar\":16}");
    if ((m = load(dir))) {
        kinds(m, k);
        CHECK(!strcmp(k, "SSFSSF"), "HF: no layer_types, sliding_window_pattern 3 -> %s (want SSFSSF)", k);
        const layer_geometry *s = &m->g.layers[0], *f = &m->g.layers[2];
        CHECK(s->attn.rope_theta == 10000.0f, "HF: sliding layer without rope_local_base_freq uses 1e4 (got %g), not 0", (double)s->attn.rope_theta);
        CHECK(f->attn.rope_theta == 1e6f, "HF: full layer uses rope_theta (got %g)", (double)f->attn.rope_theta);
        CHECK(s->attn.rope_pos_scale == 0.25f && f->attn.rope_pos_scale == 0.25f,
              "HF: no local base stated -> linear scaling on every layer (sliding %g, full %g)", (double)s->attn.rope_pos_scale, (double)f->attn.rope_pos_scale);
        CHECK(fabsf(s->attn.scale - 0.25f) < 1e-7f, "HF gemma3: attention scale query_pre_attn_scalar^-0.5 = 0.25 (got %g)", (double)s->attn.scale);
        CHECK(s->attn_norm[0] == 1.5f && s->attn.q_norm[0] == 1.5f && m->g.output_norm[0] == 1.5f,
              "HF gemma3: norms scale by 1 + w (0.5 -> %g)", (double)s->attn_norm[0]);
        CHECK(s->attn.window == 4 && f->attn.window == 0, "HF: sliding layers get the window, full layers none");
        CHECK(fabsf(m->g.embed_scale - sqrtf(8.0f)) < 1e-6f, "HF gemma3: embedding x sqrt(hidden)");
        ts_model_free(m);
    }
    write_text("config.json", "{" GEMMA3_BASE ",\"rope_local_base_freq\":5000.0,\"rope_scaling\":{\"rope_type\":\"linear\",\"factor\":4.0}}");
    if ((m = load(dir))) {
        kinds(m, k);
        CHECK(!strcmp(k, "SSSSSF"), "HF: no pattern and no layer_types -> the default pattern 6: %s", k);
        const layer_geometry *s = &m->g.layers[0], *f = &m->g.layers[5];
        CHECK(s->attn.rope_theta == 5000.0f && s->attn.rope_pos_scale == 1.0f && f->attn.rope_pos_scale == 0.25f,
              "HF: local base stated -> sliding layers use it unscaled, scaling on full layers only (%g, %g, %g)",
              (double)s->attn.rope_theta, (double)s->attn.rope_pos_scale, (double)f->attn.rope_pos_scale);
        CHECK(fabsf(s->attn.scale - 0.5f) < 1e-7f, "HF gemma3: no query_pre_attn_scalar -> head_dim^-0.5");
        ts_model_free(m);
    }
    write_text("config.json", "{" GEMMA3_BASE ",\"sliding_window_pattern\":3,\"layer_types\":[\"full_attention\",\"sliding_attention\","
                              "\"full_attention\",\"sliding_attention\",\"sliding_attention\",\"sliding_attention\"]}");
    if ((m = load(dir))) {
        kinds(m, k);
        CHECK(!strcmp(k, "FSFSSS"), "HF: layer_types wins over the pattern: %s", k);
        ts_model_free(m);
    }
    /* Llama and Gemma 4 in HF scale by w */
    write_text("config.json", "{\"model_type\":\"llama\",\"hidden_size\":8,\"num_hidden_layers\":6,\"num_attention_heads\":2,"
                              "\"num_key_value_heads\":1,\"head_dim\":4,\"intermediate_size\":8,\"vocab_size\":16}");
    {   /* a Llama config over Gemma's tensors: the q/k norms and the extra norms are not Llama's */
        ts_error err = {{0}};
        CHECK(ts_model_load(dir, NULL, &m, &err) != 0 && strstr(err.msg, "model.layers.0.self_attn.q_norm.weight") &&
              strstr(err.msg, "not understood by this engine"), "HF: tensors the family does not have refuse the model, named: %s", err.msg);
    }
    write_safetensors_as(false, NULL);
    if ((m = load(dir))) {
        CHECK(m->g.layers[0].attn_norm[0] == 0.5f, "HF llama: norms used as w");
        CHECK(m->g.output.data == m->g.tok_embd.data, "HF llama without lm_head.weight (tie not stated): output tied to the embedding");
        ts_model_free(m);
    }
    write_text("config.json", "{\"model_type\":\"llama\",\"hidden_size\":8,\"num_hidden_layers\":6,\"num_attention_heads\":2,"
                              "\"num_key_value_heads\":1,\"head_dim\":4,\"intermediate_size\":8,\"vocab_size\":16,\"tie_word_embeddings\":false}");
    {
        ts_error err = {{0}};
        CHECK(ts_model_load(dir, NULL, &m, &err) != 0 && strstr(err.msg, "lm_head.weight"),
              "HF llama: tie_word_embeddings false without lm_head.weight is refused: %s", err.msg);
    }

    write_safetensors_as(false, "model.layers.0.mlp.gate_proj.bias");
    write_text("config.json", "{\"model_type\":\"llama\",\"hidden_size\":8,\"num_hidden_layers\":6,\"num_attention_heads\":2,"
                              "\"num_key_value_heads\":1,\"head_dim\":4,\"intermediate_size\":8,\"vocab_size\":16}");
    {
        ts_error err = {{0}};
        CHECK(ts_model_load(dir, NULL, &m, &err) != 0 && strstr(err.msg, "'model.layers.0.mlp.gate_proj.bias'") &&
              strstr(err.msg, "biases are not supported"), "HF: an unknown weight is refused, named with its purpose: %s", err.msg);
    }
    write_safetensors_as(false, "model.rotary_emb.inv_freq");
    if ((m = load(dir))) {
        bool noted = false;
        for (int i = 0; i < m->n_notes; i++) noted |= strstr(m->notes[i], "model.rotary_emb.inv_freq: ignored (") != NULL;
        CHECK(noted, "HF: a tensor known to be ignorable loads, with the reason in the notes");
        ts_model_free(m);
    }
    write_safetensors_as(false, NULL);
    const char *bad_configs[][2] = {
        { ",\"rms_norm_eps\":-1", "config field 'rms_norm_eps' is -1" },
        { ",\"rope_theta\":\"1e4\"", "config field 'rope_theta' is a string" },
        { ",\"partial_rotary_factor\":1.5", "config field 'partial_rotary_factor' is 1.5" },
        { ",\"rope_scaling\":{\"rope_type\":\"dynamic\",\"factor\":2.0}", "config field 'rope_scaling.rope_type' is 'dynamic'" },
        { ",\"quantization_config\":{\"quant_method\":\"gptq\"}", "'quantization_config'" },
        { ",\"num_local_experts\":8,\"num_experts_per_tok\":2", "8 experts are stated but no layer has a router tensor" },
        { ",\"hidden_act\":\"gelu\"", "config field 'hidden_act' is 'gelu'" },
        { ",\"hidden_act\":\"gelu_pytorch_tanh\"", "activation (gelu_tanh) is not the one this engine runs for llama" },
        { ",\"rope_scaling\":{\"rope_type\":\"linear\",\"factor\":2.0,\"foo\":1}", "config field 'rope_scaling.foo' is not understood" },
        { ",\"layer_types\":[\"full_attention\",\"full_attention\"]", "config field 'layer_types' is a list of 2 values" },
    };
    for (size_t i = 0; i < sizeof bad_configs / sizeof bad_configs[0]; i++) {
        char text[1024];
        snprintf(text, sizeof text, "{\"model_type\":\"llama\",\"hidden_size\":8,\"num_hidden_layers\":6,\"num_attention_heads\":2,"
                 "\"num_key_value_heads\":1,\"head_dim\":4,\"intermediate_size\":8,\"vocab_size\":16%s}", bad_configs[i][0]);
        write_text("config.json", text);
        ts_error err = {{0}};
        CHECK(ts_model_load(dir, NULL, &m, &err) != 0 && strstr(err.msg, bad_configs[i][1]) && strstr(err.msg, dir),
              "HF: a config field that changes the computation unsupported is refused by name (%s): %s", bad_configs[i][1], err.msg);
    }
    write_safetensors();

    /* BOS from tokenizer_config.json when config.json does not say */
    write_text("tokenizer.json", "{\"model\": {\"type\": \"BPE\", \"vocab\": {\"a\": 0, \"b\": 1, \"ab\": 2, \"\\u0120\": 3},"
                                 " \"merges\": [\"a b\"]}, \"pre_tokenizer\": {\"type\": \"ByteLevel\"},"
                                 " \"added_tokens\": [{\"id\": 4, \"content\": \"<s>\", \"special\": true},"
                                 " {\"id\": 5, \"content\": \"<bos>\", \"special\": true}]}");
    write_text("tokenizer_config.json", "{\"bos_token\": \"<bos>\", \"add_bos_token\": true}");
    write_text("config.json", "{" GEMMA3_BASE "}");
    if ((m = load(dir))) {
        CHECK(ts_token_bos(m) == 5 && ts_add_bos(m), "BOS id and add_bos from tokenizer_config.json when config.json has none (bos %d)", ts_token_bos(m));
        int32_t ids[8];
        ts_error err;
        int n = ts_tokenize(m, "ab", 2, ts_add_bos(m), false, ids, 8, &err);
        CHECK(n == 2 && ids[0] == 5 && ids[1] == 2, "the prompt starts with that BOS (n %d)", n);
        ts_model_free(m);
    }
    write_text("config.json", "{" GEMMA3_BASE ",\"bos_token_id\":4}");
    if ((m = load(dir))) {
        CHECK(ts_token_bos(m) == 4, "config.json's bos_token_id wins (bos %d)", ts_token_bos(m));
        ts_model_free(m);
    }
    char p[512];
    snprintf(p, sizeof p, "%s/tokenizer.json", dir); unlink(p);
    snprintf(p, sizeof p, "%s/tokenizer_config.json", dir); unlink(p);
}

/* A Gemma 3 GGUF with the same shapes; norms stored as written (0.5). */
static void gguf_rules(void) {
    char path[512];
    snprintf(path, sizeof path, "%s/g.gguf", dir);
    float *zeros = calloc(V * H * 4, sizeof(float)), *half = malloc(64 * sizeof(float));
    for (int i = 0; i < 64; i++) half[i] = 0.5f;
    for (int variant = 0; variant < 2; variant++) {
        gguf_writer *w = gguf_writer_new();
        gguf_writer_add_str(w, "general.architecture", "gemma3");
        gguf_writer_add_u32(w, "gemma3.embedding_length", H);
        gguf_writer_add_u32(w, "gemma3.block_count", L);
        gguf_writer_add_u32(w, "gemma3.attention.head_count", NH);
        gguf_writer_add_u32(w, "gemma3.attention.head_count_kv", NKV);
        gguf_writer_add_u32(w, "gemma3.attention.key_length", HD);
        gguf_writer_add_u32(w, "gemma3.attention.sliding_window", 4);
        gguf_writer_add_f32(w, "gemma3.rope.freq_base", 1e6f);
        gguf_writer_add_str(w, "gemma3.rope.scaling.type", "linear");
        gguf_writer_add_f32(w, "gemma3.rope.scaling.factor", 4.0f);
        if (variant == 1) {
            gguf_writer_add_f32(w, "gemma3.rope.freq_base_swa", 10000.0f);
            gguf_writer_add_u32(w, "gemma3.attention.sliding_window_pattern", 3);
        }
        gguf_writer_add_tensor(w, "token_embd.weight", TS_F32, 2, (int64_t[]){H, V}, zeros, V * H * 4);
        gguf_writer_add_tensor(w, "output_norm.weight", TS_F32, 1, (int64_t[]){H}, half, H * 4);
        for (int l = 0; l < L; l++) {
            char n[64];
#define T2(nm, r, c) do { snprintf(n, sizeof n, "blk.%d.%s", l, nm); gguf_writer_add_tensor(w, n, TS_F32, 2, (int64_t[]){c, r}, zeros, (size_t)(r) * (c) * 4); } while (0)
#define T1(nm, c) do { snprintf(n, sizeof n, "blk.%d.%s", l, nm); gguf_writer_add_tensor(w, n, TS_F32, 1, (int64_t[]){c}, half, (size_t)(c) * 4); } while (0)
            T1("attn_norm.weight", H); T2("attn_q.weight", NH * HD, H); T2("attn_k.weight", NKV * HD, H);
            T2("attn_v.weight", NKV * HD, H); T2("attn_output.weight", H, NH * HD);
            T1("attn_q_norm.weight", HD); T1("attn_k_norm.weight", HD); T1("post_attention_norm.weight", H);
            T1("ffn_norm.weight", H); T1("post_ffw_norm.weight", H);
            T2("ffn_gate.weight", F, H); T2("ffn_up.weight", F, H); T2("ffn_down.weight", H, F);
        }
        ts_error err;
        CHECK(gguf_writer_write(w, path, &err) == 0, "write gemma3 GGUF (%s)", err.msg);
        gguf_writer_free(w);
        ts_model *m = load(path);
        if (!m) continue;
        char k[16];
        kinds(m, k);
        const layer_geometry *s = &m->g.layers[0], *f = &m->g.layers[5];
        if (variant == 0) {
            CHECK(!strcmp(k, "SSSSSF"), "GGUF gemma3 without sliding_window_pattern: llama.cpp's default 6 -> %s", k);
            CHECK(s->attn.rope_theta == 10000.0f && s->attn.rope_pos_scale == 0.25f,
                  "GGUF: no freq_base_swa -> sliding layers 1e4, scaled like every layer (%g, %g)", (double)s->attn.rope_theta, (double)s->attn.rope_pos_scale);
        } else {
            CHECK(!strcmp(k, "SSFSSF"), "GGUF gemma3 with sliding_window_pattern 3 -> %s", k);
            CHECK(s->attn.rope_pos_scale == 1.0f && f->attn.rope_pos_scale == 0.25f, "GGUF: freq_base_swa stated -> scaling on full layers only");
        }
        CHECK(s->attn_norm[0] == 0.5f && s->attn.q_norm[0] == 0.5f, "GGUF gemma3: norms used as stored (+1 already folded in): %g", (double)s->attn_norm[0]);
        CHECK(fabsf(s->attn.scale - 0.5f) < 1e-7f, "GGUF gemma3: attention scale 1/sqrt(head_dim), as llama.cpp");
        ts_model_free(m);
    }
    free(zeros);
    free(half);
}

/* A small Llama GGUF (2 layers, zero matrices, norms 0.5 or NaN) with one more metadata key (a
 * string, or an integer) and one more tensor of H values when given. */
static void write_llama_gguf(const char *path, const char *key, const char *str_value, int int_value,
                             const char *extra_tensor, bool nan_norms) {
    float *zeros = calloc(V * H * 4, sizeof(float)), half[64], norm[H];
    for (int i = 0; i < 64; i++) half[i] = 0.5f;
    for (int i = 0; i < H; i++) norm[i] = nan_norms ? NAN : 0.5f;
    gguf_writer *w = gguf_writer_new();
    gguf_writer_add_str(w, "general.architecture", "llama");
    gguf_writer_add_u32(w, "llama.embedding_length", H);
    gguf_writer_add_u32(w, "llama.block_count", 2);
    gguf_writer_add_u32(w, "llama.attention.head_count", NH);
    gguf_writer_add_u32(w, "llama.attention.head_count_kv", NKV);
    if (key && str_value) gguf_writer_add_str(w, key, str_value);
    else if (key) gguf_writer_add_u32(w, key, (uint32_t)int_value);
    if (key && !strcmp(key, "llama.rope.scaling.type")) gguf_writer_add_f32(w, "llama.rope.scaling.factor", 2.0f);
    gguf_writer_add_tensor(w, "token_embd.weight", TS_F32, 2, (int64_t[]){H, V}, zeros, V * H * 4);
    gguf_writer_add_tensor(w, "output_norm.weight", TS_F32, 1, (int64_t[]){H}, norm, H * 4);
    for (int l = 0; l < 2; l++) {
        char n[64];
        T1("attn_norm.weight", H); T2("attn_q.weight", NH * HD, H); T2("attn_k.weight", NKV * HD, H);
        T2("attn_v.weight", NKV * HD, H); T2("attn_output.weight", H, NH * HD); T1("ffn_norm.weight", H);
        T2("ffn_gate.weight", F, H); T2("ffn_up.weight", F, H); T2("ffn_down.weight", H, F);
    }
    if (extra_tensor) gguf_writer_add_tensor(w, extra_tensor, TS_F32, 1, (int64_t[]){H}, half, H * 4);
    ts_error err = {{0}};
    CHECK(gguf_writer_write(w, path, &err) == 0, "write llama GGUF (%s)", err.msg);
    gguf_writer_free(w);
    free(zeros);
}

/* The guard against partial understanding, on a small Llama GGUF: an extra tensor or metadata key
 * the engine does not know refuses the model, naming it. */
static void gguf_guard(void) {
    char path[512];
    snprintf(path, sizeof path, "%s/guard.gguf", dir);
    static const struct { const char *tensor, *key, *str_value; int int_value; const char *want; } cases[] = {
        { NULL, NULL, NULL, 0, NULL },                                   /* the plain file loads */
        { "blk.0.mystery.weight", NULL, NULL, 0, "tensor 'blk.0.mystery.weight' is not understood by this engine" },
        { "blk.1.ffn_gate_exps.weight", NULL, NULL, 0, "tensor 'blk.1.ffn_gate_exps.weight': mixture-of-experts layers are not supported" },
        { "blk.0.ssm_conv1d.weight", NULL, NULL, 0, "'blk.0.ssm_conv1d.weight': state-space layers are not supported" },
        { NULL, "llama.rope.scaling.type", "dynamic", 0, "metadata key 'llama.rope.scaling.type' is 'dynamic'; expected one of none, linear, yarn (this rope scaling is not supported)" },
        { NULL, "llama.attention.foo_bar", NULL, 3, "metadata key 'llama.attention.foo_bar' is not understood" },
        { NULL, "llama.expert_count", NULL, 8, "8 experts are stated but no layer has a router tensor" },
        { NULL, "llama.expert_shared_count", NULL, 2, "shared experts are stated but no layer has a router tensor" },
        { NULL, "llama.expert_group_count", NULL, 2, "expert groups are stated but no layer has a router tensor" },
        { NULL, "llama.attention.layer_norm_epsilon", NULL, 1, "LayerNorm (not RMSNorm)" },
        { NULL, "llama.vocab_size", NULL, 17, "a vocabulary of 17 tokens is stated but tensor 'token_embd.weight' has 16 rows" },
        { NULL, NULL, NULL, -1, NULL },                                  /* NaN norms: loads, refuses to answer */
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        write_llama_gguf(path, cases[c].key, cases[c].str_value, cases[c].int_value, cases[c].tensor, cases[c].int_value == -1);
        ts_error err = {{0}};
        ts_model *m = NULL;
        int rc = ts_model_load(path, NULL, &m, &err);
        if (cases[c].int_value == -1 && rc == 0) {
            ts_context *ctx = NULL;
            float logits[V];
            int32_t toks[2] = { 1, 2 };
            rc = ts_context_new(m, 16, 1, &ctx, &err) == 0 ? ts_eval(ctx, toks, 2, logits, false, &err) : -1;
            CHECK(rc != 0 && strstr(err.msg, "non-finite logit"), "an all-NaN norm is reported, not printed as empty tokens: %s", err.msg);
            ts_context_free(ctx);
        } else if (!cases[c].want) CHECK(rc == 0, "guard: the plain Llama GGUF loads (%s)", err.msg);
        else CHECK(rc != 0 && strstr(err.msg, cases[c].want) && strstr(err.msg, path),
                   "guard: refused with a message naming the file and '%s': %s", cases[c].want, err.msg);
        ts_model_free(m);
    }
}
#undef T1
#undef T2

/* The same key, in a GGUF's metadata and in a config.json, meets the same rule: unknown -> refused by
 * name; known to change the computation but not implemented -> refused with the reason; known to be
 * inert -> loads, and --info says why it was ignored. */
static bool has_note(const ts_model *m, const char *part) {
    for (int i = 0; i < m->n_notes; i++) if (strstr(m->notes[i], part)) return true;
    return false;
}

static void same_rule_both_containers(void) {
    char gguf_path[512], key[96];
    snprintf(gguf_path, sizeof gguf_path, "%s/same.gguf", dir);
    write_safetensors_as(false, NULL);
    static const struct { const char *gguf_key, *hf_field; int kind; const char *gguf_want, *hf_want; } cases[] = {
        /* unknown to the table */
        { "foo_factor", "foo_factor", 0, "metadata key 'llama.foo_factor' is not understood by this engine",
          "config field 'foo_factor' is not understood by this engine" },
        /* the other container's name for a key is unknown here */
        { "rope_theta", "rope.freq_base", 0, "metadata key 'llama.rope_theta' is not understood",
          "config field 'rope.freq_base' is not understood" },
        /* known to change the computation, not implemented */
        { "use_parallel_residual", "use_parallel_residual", 0, "metadata key 'llama.use_parallel_residual': parallel residual blocks are not supported",
          "config field 'use_parallel_residual': parallel residual blocks are not supported" },
        /* known to be inert: loads, with the reason in --info */
        { "leading_dense_block_count", "use_cache", 1, "metadata keys ignored: llama.leading_dense_block_count (what it describes follows the tensors)",
          "config fields ignored: use_cache (a generation setting)" },
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        snprintf(key, sizeof key, "llama.%s", cases[c].gguf_key);
        write_llama_gguf(gguf_path, key, NULL, 2, NULL, false);
        char text[1024];
        snprintf(text, sizeof text, "{\"model_type\":\"llama\",\"hidden_size\":8,\"num_hidden_layers\":6,\"num_attention_heads\":2,"
                 "\"num_key_value_heads\":1,\"head_dim\":4,\"intermediate_size\":8,\"vocab_size\":16,\"%s\":2}", cases[c].hf_field);
        write_text("config.json", text);
        for (int container = 0; container < 2; container++) {
            const char *path = container ? dir : gguf_path, *want = container ? cases[c].hf_want : cases[c].gguf_want;
            ts_model *m = NULL;
            ts_error err = {{0}};
            int rc = ts_model_load(path, NULL, &m, &err);
            if (cases[c].kind == 0)
                CHECK(rc != 0 && strstr(err.msg, want) && strstr(err.msg, path), "%s: '%s' refused by name: %s",
                      container ? "HF" : "GGUF", container ? cases[c].hf_field : key, err.msg);
            else
                CHECK(rc == 0 && has_note(m, want), "%s: '%s' loads and --info says why it is ignored (%s)",
                      container ? "HF" : "GGUF", container ? cases[c].hf_field : key, rc ? err.msg : "no note");
            ts_model_free(m);
        }
    }
    /* every path of a row's alternatives and prefixes is found, in its own container only */
    CHECK(hparams_find(CONTAINER_HF, "rope_parameters.full_attention.factor") && hparams_find(CONTAINER_HF, "rope_scaling.factor") &&
          hparams_find(CONTAINER_HF, "rope_parameters.factor") && hparams_find(CONTAINER_HF, "num_experts") &&
          hparams_find(CONTAINER_HF, "num_local_experts") && hparams_find(CONTAINER_HF, "rope_scaling") &&
          hparams_find(CONTAINER_GGUF, "rope.scaling.factor") && !hparams_find(CONTAINER_GGUF, "rope_scaling.factor") &&
          !hparams_find(CONTAINER_HF, "rope.scaling.factor") && !hparams_find(CONTAINER_HF, "rope_scaling.fac"),
          "the table finds every spelling of a key, in its own container only");
    write_safetensors();
}

/* Whether a model has RoPE at all: HF position_embedding_type says so in any family ("nope": none;
 * other position embeddings are refused); GGUF rope.scaling.finetuned is the switch only where the
 * family's rules make it one (Granite 4.0-H, tests/sh/test_hybrid.sh), a training note for Llama. */
static void rope_switches(void) {
    char gguf_path[512];
    snprintf(gguf_path, sizeof gguf_path, "%s/switch.gguf", dir);
    write_llama_gguf(gguf_path, "llama.rope.scaling.finetuned", NULL, 0, NULL, false);
    ts_model *m = load(gguf_path);
    if (m) {
        CHECK(m->g.layers[0].attn.rope_pairs == HD / 2, "GGUF llama: rope.scaling.finetuned false leaves RoPE on (%d pairs)",
              m->g.layers[0].attn.rope_pairs);
        ts_model_free(m);
    }
    write_safetensors_as(false, NULL);
    static const char *const kinds_stated[] = { "nope", "rope", "absolute" };
    for (int i = 0; i < 3; i++) {
        char text[512];
        snprintf(text, sizeof text, "{\"model_type\":\"llama\",\"hidden_size\":8,\"num_hidden_layers\":6,\"num_attention_heads\":2,"
                 "\"num_key_value_heads\":1,\"head_dim\":4,\"intermediate_size\":8,\"vocab_size\":16,\"position_embedding_type\":\"%s\"}",
                 kinds_stated[i]);
        write_text("config.json", text);
        m = NULL;
        ts_error err = {{0}};
        int rc = ts_model_load(dir, NULL, &m, &err);
        if (i == 2) {
            CHECK(rc != 0 && strstr(err.msg, "config field 'position_embedding_type' is 'absolute'"),
                  "HF: position_embedding_type 'absolute' refused by name: %s", err.msg);
        } else {
            int pairs = rc == 0 ? m->g.layers[5].attn.rope_pairs : -1;
            CHECK(rc == 0 && pairs == (i == 0 ? 0 : HD / 2), "HF: position_embedding_type '%s' -> %d rotating pairs (%s)",
                  kinds_stated[i], pairs, rc ? err.msg : "loaded");
        }
        ts_model_free(m);
    }
    write_safetensors();
}

int main(void) {
    snprintf(dir, sizeof dir, "/tmp/ts-config-XXXXXX");
    if (!mkdtemp(dir)) { CHECK(0, "mkdtemp"); CHECK_EXIT(); }
    hf_rules();
    gguf_rules();
    gguf_guard();
    same_rule_both_containers();
    rope_switches();
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0) CHECK(0, "cleanup");
    CHECK_EXIT();
}
