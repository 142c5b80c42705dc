/* Writes a random-weight GGUF model for the benchmark: llama architecture, a named shape, every
 * matrix quantized with the engine's own quantizers (2 threads). The vocabulary is a placeholder
 * SentencePiece one (<unk>, <s>, </s>, the 256 byte tokens, then "t<id>"), there so llama.cpp
 * loads the same file (tools/bench runs both on it); the benchmark feeds token ids.
 *
 *   bench_gen OUT.gguf SHAPE TYPE
 *   SHAPE: smollm2-360m (hidden 960, 32 layers, 15 heads, 5 KV heads, ffn 2560, vocab 50257,
 *          tied output, rope base 1e5), llama-1b (hidden 2048, 16 layers, 32 heads, 8 KV
 *          heads, ffn 8192, vocab 128256, tied output, rope base 5e5), or qwen3moe-a3b: Qwen3-30B-A3B's
 *          layout scaled to this machine (arch qwen3moe, hidden 2048, 24 of its 48 layers, 32 heads
 *          and 4 KV heads of 128 with q/k norms, 64 of its 128 experts of width 768, 8 per
 *          token, vocab 151936, untied output, rope base 1e6; routers F32 as llama.cpp keeps them),
 *          qwen35-2b: a Qwen3.5-2B-like dense hybrid (arch qwen35, hidden 2048, 24 layers, three gated
 *          DeltaNet layers (16 key and 16 value heads of 128, convolution 4) beside each gated
 *          attention layer (8 heads and 2 KV heads of 256, rotary on 64 channels), ffn 6144, vocab
 *          248320, tied output, rope base 1e7), or qwen35moe-a3b: Qwen3.5-35B-A3B's layout scaled to
 *          this machine (arch qwen35moe, hidden 2048, 20 of its 40 layers, the same 3:1 pattern with 32
 *          value heads and 16 query heads, 128 of its 256 experts of width 512, 8 per token, a gated
 *          shared expert of 512, vocab 248320, untied output), dsv2-lite: DeepSeek-V2-Lite's layout
 *          scaled to about 5 GB in Q4_K_M (arch deepseek2, hidden 2048, 27 layers, 16 heads of latent
 *          attention: plain q, kv rank 512, head 128 + 64 rotary, value 128; the first layer a dense
 *          MLP of 11008 (10944 rounded up), then 32 of its 64 experts of width 1536 (1408 rounded up),
 *          6 per token, softmax-gated, and 2 shared; vocab 102400, untied), or glm47-flash: GLM-4.7-Flash's layout (converted to
 *          deepseek2, as llama.cpp does) scaled to about 5 GB (hidden 2048, 47 layers, 20 heads: q
 *          rank 768, kv rank 512, head 192 + 64, value 256; a dense first layer of 10240, then 16 of
 *          its 64 experts of width 1536, 4 per token, sigmoid-gated with a selection bias, weights
 *          renormalized and scaled by 1.8, 1 shared; vocab 154880, untied). Both keep every row of
 *          a K-quant matrix whole super-blocks and their attn_k_b (rows of 128 / 192) in F16: llama.cpp's
 *          build for these machines runs Q4_0/Q5_0/Q8_0 batches with AVX-VNNI (VEX) instructions that
 *          some of them lack (SIGILL), so the peer can only be compared on files without those types.
 *   TYPE:  Q8_0, Q4_K_M, Q6_K, F16 or BF16. Q4_K_M follows llama.cpp's mix: Q4_K everywhere,
 *          Q6_K for the (tied) output/embedding and for attn_v and ffn_down of the first and
 *          last eighth of the layers and every third layer between. As in llama.cpp, a matrix
 *          whose rows are not whole 256-weight super-blocks (SmolLM2's hidden size is 960) falls
 *          back to Q5_0 for Q4_K and to Q8_0 for Q6_K.
 *          IQ4_XS follows llama.cpp's IQ4_XS mix: IQ4_XS everywhere, Q6_K for the (tied)
 *          output/embedding, Q5_K for attn_v when 4 or more query heads share a KV head (llama-1b);
 *          rows that are not whole super-blocks fall back to IQ4_NL (and Q5_K to Q5_1).
 *
 *          F16 is also the source llama-quantize turns into the types the engine has no quantizer
 *          for (IQ2_XXS, IQ3_S, ...: tools/bench makes those files with llama.cpp's llama-quantize).
 *
 *   bench_gen imatrix OUT.gguf MODEL.gguf
 *   A synthetic importance matrix for MODEL's matrices, in the GGUF format llama-imatrix writes
 *   (general.type "imatrix", imatrix.datasets, imatrix.chunk_count, imatrix.chunk_size; per matrix
 *   <name>.in_sum2 F32 [ne0, experts] and <name>.counts F32 [1, experts]): per input column a
 *   random positive value, about exp(0.6 N(0,1)), with count 1. Not activation statistics: it only
 *   lets llama-quantize write the IQ1/IQ2/IQ3_XXS types, which it refuses without one. Every
 *   tensor of 2 or more dimensions gets an entry, token_embd (and output) too: a real imatrix has
 *   neither, but ggml refuses IQ2_XXS, IQ2_XS and IQ1_S for any tensor without importance weights.
 *
 *   bench_gen info MODEL.gguf
 *   Prints "MODEL: ARCH, N layers, tied|untied output, M MB of matrices, bytes read per token B"
 *   for any GGUF (one llama-quantize made too). B = the bytes of the tensors of 2 or more
 *   dimensions that a decoded token reads: all of them but token_embd, of which one row (all of it
 *   when there is no output.weight: tied, it is the output head), and of an expert stack (*_exps)
 *   the <arch>.expert_used_count experts a token uses. (It counts the DeltaNet layers'
 *   ssm_conv1d taps, which the count printed when a model is written leaves out: 0.15% more.)
 *
 *   bench_gen probe [THREADS]
 *   The read bandwidth roofline: THREADS (default 2) threads each stream over their share of a
 *   1 GiB buffer, read-only, best of 5 passes; prints "probe: N.N GB/s". */
#include <math.h>
#include <stdbool.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "io/gguf.h"
#include "io/gguf_write.h"
#include "kernels/types.h"

typedef struct shape {
    const char *name;
    int hidden, layers, heads, kv_heads, ffn, vocab;
    float rope_base;
    const char *arch;            /* NULL: llama */
    int head_dim;                /* 0: hidden / heads */
    int experts, experts_used, expert_ffn;   /* 0: a dense MLP */
    bool untied;
    /* Qwen3.5 hybrids: layer l is gated attention iff (l + 1) % interval == 0, else gated DeltaNet */
    int interval;                /* 0: every layer attention */
    int delta_k_heads, delta_v_heads, delta_head, rope_dim, shared_ffn;
    /* DeepSeek's layout (arch deepseek2): latent attention (q_lora 0: a plain q), the first
     * first_dense layers a dense MLP, then routed experts beside n_shared shared ones; gating 1
     * softmax, 2 sigmoid with a selection bias */
    int q_lora, kv_lora, nope, v_head, n_shared, first_dense, gating;
    float routed_scale;
} shape;

static const shape SHAPES[] = {
    { "smollm2-360m", 960, 32, 15, 5, 2560, 50257, 1e5f },
    { "llama-1b", 2048, 16, 32, 8, 8192, 128256, 5e5f },
    { "qwen3moe-a3b", 2048, 24, 32, 4, 6144, 151936, 1e6f, "qwen3moe", 128, 64, 8, 768, true },
    { "qwen35-2b", 2048, 24, 8, 2, 6144, 248320, 1e7f, "qwen35", 256, 0, 0, 0, false, 4, 16, 16, 128, 64, 0 },
    { "qwen35moe-a3b", 2048, 20, 16, 2, 512, 248320, 1e7f, "qwen35moe", 256, 128, 8, 512, true, 4, 16, 32, 128, 64, 512 },
    { .name = "dsv2-lite", .hidden = 2048, .layers = 27, .heads = 16, .kv_heads = 1, .ffn = 11008, .vocab = 102400,
      .rope_base = 1e4f, .arch = "deepseek2", .experts = 32, .experts_used = 6, .expert_ffn = 1536, .untied = true,
      .rope_dim = 64, .kv_lora = 512, .nope = 128, .v_head = 128, .n_shared = 2, .first_dense = 1, .gating = 1,
      .routed_scale = 1.0f },
    { .name = "glm47-flash", .hidden = 2048, .layers = 47, .heads = 20, .kv_heads = 1, .ffn = 10240, .vocab = 154880,
      .rope_base = 1e6f, .arch = "deepseek2", .experts = 16, .experts_used = 4, .expert_ffn = 1536, .untied = true,
      .rope_dim = 64, .q_lora = 768, .kv_lora = 512, .nope = 192, .v_head = 256, .n_shared = 1, .first_dense = 1,
      .gating = 2, .routed_scale = 1.8f },
};

typedef struct { uint64_t s; } rng;
static uint32_t rng_u32(rng *r) {
    r->s ^= r->s >> 12; r->s ^= r->s << 25; r->s ^= r->s >> 27;
    return (uint32_t)((r->s * 0x2545F4914F6CDD1DULL) >> 32);
}
/* Roughly normal (sum of 4 uniforms), standard deviation sigma. */
static float rng_normalish(rng *r, float sigma) {
    float s = 0;
    for (int i = 0; i < 4; i++) s += (float)rng_u32(r) / 4294967296.0f;
    return (s - 2.0f) * sigma * 1.7320508f;
}

typedef struct quant_job {
    int type;
    int64_t rows, cols;
    uint64_t seed;
    uint8_t *out;
    size_t row_bytes;
    int ith, nth;
} quant_job;

static void *quantize_slice(void *arg) {
    quant_job *j = arg;
    const type_traits *tt = type_get(j->type);
    float *src = malloc((size_t)j->cols * sizeof(float));
    for (int64_t r = j->ith; r < j->rows; r += j->nth) {
        rng g = { j->seed ^ (0x9e3779b97f4a7c15ULL * (uint64_t)(r + 1)) };
        for (int64_t c = 0; c < j->cols; c++) src[c] = rng_normalish(&g, 0.02f);
        tt->quantize_row(src, j->out + (size_t)r * j->row_bytes, j->cols);
    }
    free(src);
    return NULL;
}

/* A rows x cols random matrix in type, quantized on 2 threads. */
static uint8_t *random_matrix(int *type_io, int64_t rows, int64_t cols, uint64_t seed, size_t *bytes) {
    if (cols % 256 != 0 && *type_io == TS_Q4_K) *type_io = TS_Q5_0;   /* llama.cpp's fallbacks */
    if (cols % 256 != 0 && *type_io == TS_Q6_K) *type_io = TS_Q8_0;
    if (cols % 256 != 0 && *type_io == TS_IQ4_XS) *type_io = TS_IQ4_NL;
    if (cols % 256 != 0 && *type_io == TS_Q5_K) *type_io = TS_Q5_1;
    int type = *type_io;
    size_t rb = type_row_bytes(type, cols);
    *bytes = rb * (size_t)rows;
    uint8_t *out = malloc(*bytes);
    if (!out) return NULL;
    quant_job jobs[2];
    pthread_t th;
    for (int i = 0; i < 2; i++) jobs[i] = (quant_job){ type, rows, cols, seed, out, rb, i, 2 };
    pthread_create(&th, NULL, quantize_slice, &jobs[1]);
    quantize_slice(&jobs[0]);
    pthread_join(th, NULL);
    return out;
}

static int type_by_name(const char *s) {
    if (!strcmp(s, "Q8_0")) return TS_Q8_0;
    if (!strcmp(s, "Q6_K")) return TS_Q6_K;
    if (!strcmp(s, "F16")) return TS_F16;
    if (!strcmp(s, "BF16")) return TS_BF16;
    if (!strcmp(s, "Q4_K_M")) return TS_Q4_K;
    if (!strcmp(s, "IQ4_XS")) return TS_IQ4_XS;
    return -1;
}

/* llama.cpp's "more bits" layers of the Q4_K_M mix. */
static int more_bits(int layer, int n_layers) {
    return layer < n_layers / 8 || layer >= 7 * n_layers / 8 || (layer - n_layers / 8) % 3 == 2;
}

/* The placeholder vocabulary: token 0 <unk>, 1 <s>, 2 </s> (control), the byte tokens <0x00> ..
 * <0xFF>, then "t<id>" (normal). */
static void add_placeholder_vocab(gguf_writer *w, int n_vocab) {
    char **tok = malloc((size_t)n_vocab * sizeof *tok);
    float *score = malloc((size_t)n_vocab * sizeof *score);
    int32_t *kind = malloc((size_t)n_vocab * sizeof *kind);
    for (int i = 0; i < n_vocab; i++) {
        tok[i] = malloc(16);
        if (i < 3) snprintf(tok[i], 16, "%s", i == 0 ? "<unk>" : i == 1 ? "<s>" : "</s>");
        else if (i < 3 + 256) snprintf(tok[i], 16, "<0x%02X>", i - 3);
        else snprintf(tok[i], 16, "t%d", i);
        score[i] = -(float)i;
        kind[i] = i == 0 ? 2 : i < 3 ? 3 : i < 3 + 256 ? 6 : 1;   /* unknown, control, byte, normal */
    }
    gguf_writer_add_str(w, "tokenizer.ggml.model", "llama");
    gguf_writer_add_str_array(w, "tokenizer.ggml.tokens", (const char *const *)tok, NULL, (uint64_t)n_vocab);
    gguf_writer_add_array(w, "tokenizer.ggml.scores", GGUF_F32, score, (uint64_t)n_vocab);
    gguf_writer_add_array(w, "tokenizer.ggml.token_type", GGUF_I32, kind, (uint64_t)n_vocab);
    gguf_writer_add_u32(w, "tokenizer.ggml.bos_token_id", 1);
    gguf_writer_add_u32(w, "tokenizer.ggml.eos_token_id", 2);
    for (int i = 0; i < n_vocab; i++) free(tok[i]);
    free(tok); free(score); free(kind);
}

/* ---- bandwidth probe ---- */

typedef struct probe_job { const uint64_t *p; size_t n; uint64_t sum; } probe_job;

static void *probe_read(void *arg) {
    probe_job *j = arg;
    uint64_t s[8] = { 0 };   /* 8 independent sums: the loads, not the adds, set the pace */
    for (size_t i = 0; i + 8 <= j->n; i += 8)
        for (int k = 0; k < 8; k++) s[k] += j->p[i + k];
    j->sum = s[0] + s[1] + s[2] + s[3] + s[4] + s[5] + s[6] + s[7];
    return NULL;
}

static double seconds(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static int probe(int n_threads) {
    if (n_threads < 1 || n_threads > 64) n_threads = 2;
    size_t words = (size_t)1 << 27;   /* 1 GiB */
    uint64_t *buf = malloc(words * sizeof *buf);
    if (!buf) { fprintf(stderr, "error: out of memory\n"); return 1; }
    for (size_t i = 0; i < words; i++) buf[i] = i;
    double best = 0;
    uint64_t check = 0;
    for (int pass = 0; pass < 5; pass++) {
        probe_job jobs[64];
        pthread_t th[64];
        double t0 = seconds();
        for (int i = 0; i < n_threads; i++) {
            jobs[i] = (probe_job){ buf + words / n_threads * i, words / n_threads, 0 };
            if (i > 0) pthread_create(&th[i], NULL, probe_read, &jobs[i]);
        }
        probe_read(&jobs[0]);
        for (int i = 1; i < n_threads; i++) pthread_join(th[i], NULL);
        double gbs = words * sizeof *buf / (seconds() - t0) / 1e9;
        if (gbs > best) best = gbs;
        for (int i = 0; i < n_threads; i++) check += jobs[i].sum;
    }
    printf("probe: %.1f GB/s (%d threads, checksum %llu)\n", best, n_threads, (unsigned long long)check);
    free(buf);
    return 0;
}

/* ---- importance matrix and bytes per token of an existing file ---- */

static int open_model(const char *path, gguf_file **g) {
    ts_error err = {{0}};
    if (gguf_open(path, g, &err) != 0) { fprintf(stderr, "error: %s\n", err.msg); return -1; }
    return 0;
}

static bool is_matrix(const tensor_entry *t) { return t->n_dims >= 2; }

static int write_imatrix(const char *out, const char *model_path) {
    gguf_file *g;
    if (open_model(model_path, &g) != 0) return 1;
    const tensor_dir *d = gguf_tensors(g);
    size_t n_vals = 0;
    int64_t max_sets = 1;
    for (int i = 0; i < d->n; i++) {
        const tensor_entry *t = &d->t[i];
        if (!is_matrix(t)) continue;
        int64_t sets = t->n_dims >= 3 ? t->ne[2] : 1;   /* one column set per expert */
        n_vals += (size_t)(t->ne[0] * sets);
        if (sets > max_sets) max_sets = sets;
    }
    /* the writer keeps pointers to tensor data until the write: one buffer for all of them */
    float *vals = malloc((n_vals ? n_vals : 1) * sizeof *vals), *ones = malloc((size_t)max_sets * sizeof *ones);
    gguf_writer *w = gguf_writer_new();
    if (!vals || !ones || !w) { fprintf(stderr, "error: out of memory\n"); return 1; }
    for (int64_t i = 0; i < max_sets; i++) ones[i] = 1.0f;
    const char *dataset = "synthetic: random positive per-column values (lognormal), not from activations (tools/bench_gen.c)";
    gguf_writer_add_str(w, "general.type", "imatrix");
    gguf_writer_add_str_array(w, "imatrix.datasets", &dataset, NULL, 1);
    gguf_writer_add_u32(w, "imatrix.chunk_count", 1);
    gguf_writer_add_u32(w, "imatrix.chunk_size", 512);
    size_t at = 0;
    int entries = 0;
    char name[160];
    for (int i = 0; i < d->n; i++) {
        const tensor_entry *t = &d->t[i];
        if (!is_matrix(t)) continue;
        int64_t sets = t->n_dims >= 3 ? t->ne[2] : 1, n = t->ne[0] * sets;
        rng r = { 9108 + 0x9e3779b97f4a7c15ULL * (uint64_t)(i + 1) };
        for (int64_t k = 0; k < n; k++) vals[at + (size_t)k] = expf(rng_normalish(&r, 0.6f));
        snprintf(name, sizeof name, "%s.in_sum2", t->name);
        gguf_writer_add_tensor(w, name, TS_F32, 2, (int64_t[]){ t->ne[0], sets }, vals + at, (size_t)n * sizeof(float));
        snprintf(name, sizeof name, "%s.counts", t->name);
        gguf_writer_add_tensor(w, name, TS_F32, 2, (int64_t[]){ 1, sets }, ones, (size_t)sets * sizeof(float));
        at += (size_t)n;
        entries++;
    }
    ts_error err = {{0}};
    int rc = gguf_writer_write(w, out, &err);
    if (rc != 0) fprintf(stderr, "error: %s\n", err.msg);
    else printf("%s: importance matrix for %d matrices of %s\n", out, entries, model_path);
    gguf_writer_free(w);
    free(vals); free(ones);
    gguf_close(g);
    return rc != 0;
}

static int model_info(const char *path) {
    gguf_file *g;
    if (open_model(path, &g) != 0) return 1;
    const tensor_dir *d = gguf_tensors(g);
    const char *arch = "?";
    size_t arch_len = 1;
    gguf_get_str(g, "general.architecture", &arch, &arch_len);
    char key[160];
    int64_t layers = 0, used = 0;
    snprintf(key, sizeof key, "%.*s.block_count", (int)arch_len, arch);
    gguf_get_i64(g, key, &layers);
    snprintf(key, sizeof key, "%.*s.expert_used_count", (int)arch_len, arch);
    gguf_get_i64(g, key, &used);
    const tensor_entry *embd = tensor_dir_find(d, "token_embd.weight");
    const bool tied = !tensor_dir_find(d, "output.weight");
    size_t total = 0, active = 0;
    for (int i = 0; i < d->n; i++) {
        const tensor_entry *t = &d->t[i];
        if (!is_matrix(t)) continue;
        size_t b = t->nbytes;
        if (t == embd && !tied) b /= (size_t)t->ne[1];            /* a token looks up one row */
        else if (t->n_dims == 3 && used > 0 && t->ne[2] > used && strstr(t->name, "_exps"))
            b = b / (size_t)t->ne[2] * (size_t)used;              /* only the chosen experts */
        total += t->nbytes;
        active += b;
    }
    printf("%s: %.*s, %lld layers, %s output, %.1f MB of matrices, bytes read per token %zu\n", path, (int)arch_len, arch,
           (long long)layers, tied ? "tied" : "untied", total / 1e6, active);
    gguf_close(g);
    return 0;
}

int main(int argc, char **argv) {
    if (argc >= 2 && !strcmp(argv[1], "probe")) return probe(argc > 2 ? atoi(argv[2]) : 2);
    if (argc == 4 && !strcmp(argv[1], "imatrix")) return write_imatrix(argv[2], argv[3]);
    if (argc == 3 && !strcmp(argv[1], "info")) return model_info(argv[2]);
    if (argc != 4) {
        fprintf(stderr, "usage: bench_gen OUT.gguf smollm2-360m|llama-1b|qwen3moe-a3b|qwen35-2b|qwen35moe-a3b|dsv2-lite|glm47-flash Q8_0|Q4_K_M|Q6_K|F16|BF16|IQ4_XS\n"
                        "       bench_gen imatrix OUT.gguf MODEL.gguf\n"
                        "       bench_gen info MODEL.gguf\n"
                        "       bench_gen probe [THREADS]\n");
        return 1;
    }
    const shape *sh = NULL;
    for (size_t i = 0; i < sizeof SHAPES / sizeof SHAPES[0]; i++) if (!strcmp(argv[2], SHAPES[i].name)) sh = &SHAPES[i];
    int base = type_by_name(argv[3]);
    if (!sh || base < 0) { fprintf(stderr, "error: unknown shape '%s' or type '%s'\n", argv[2], argv[3]); return 1; }
    const int mix = !strcmp(argv[3], "Q4_K_M"), iq4_mix = base == TS_IQ4_XS;
    const char *arch = sh->arch ? sh->arch : "llama";
    const int H = sh->hidden, hd = sh->head_dim ? sh->head_dim : H / sh->heads, q = sh->heads * hd, kv = sh->kv_heads * hd;
    const int E = sh->experts, F = sh->experts ? sh->expert_ffn : sh->ffn;
    char key[128];
#define KEY(suffix) (snprintf(key, sizeof key, "%s.%s", arch, suffix), key)

    gguf_writer *w = gguf_writer_new();
    gguf_writer_add_str(w, "general.architecture", arch);
    gguf_writer_add_str(w, "general.name", sh->name);
    gguf_writer_add_u32(w, KEY("context_length"), 8192);
    gguf_writer_add_u32(w, KEY("embedding_length"), (uint32_t)H);
    gguf_writer_add_u32(w, KEY("block_count"), (uint32_t)sh->layers);
    gguf_writer_add_u32(w, KEY("feed_forward_length"), (uint32_t)sh->ffn);
    gguf_writer_add_u32(w, KEY("attention.head_count"), (uint32_t)sh->heads);
    gguf_writer_add_u32(w, KEY("attention.head_count_kv"), (uint32_t)sh->kv_heads);
    /* latent attention: the cache row (key r + d_r, value r), then the heads' own sizes */
    gguf_writer_add_u32(w, KEY("attention.key_length"), (uint32_t)(sh->kv_lora ? sh->kv_lora + sh->rope_dim : hd));
    gguf_writer_add_u32(w, KEY("attention.value_length"), (uint32_t)(sh->kv_lora ? sh->kv_lora : hd));
    if (sh->kv_lora) {
        gguf_writer_add_u32(w, KEY("attention.key_length_mla"), (uint32_t)(sh->nope + sh->rope_dim));
        gguf_writer_add_u32(w, KEY("attention.value_length_mla"), (uint32_t)sh->v_head);
        gguf_writer_add_u32(w, KEY("attention.q_lora_rank"), (uint32_t)sh->q_lora);
        gguf_writer_add_u32(w, KEY("attention.kv_lora_rank"), (uint32_t)sh->kv_lora);
        gguf_writer_add_u32(w, KEY("leading_dense_block_count"), (uint32_t)sh->first_dense);
        gguf_writer_add_u32(w, KEY("expert_shared_count"), (uint32_t)sh->n_shared);
        gguf_writer_add_f32(w, KEY("expert_weights_scale"), sh->routed_scale);
        gguf_writer_add_bool(w, KEY("expert_weights_norm"), sh->gating == 2);
        gguf_writer_add_u32(w, KEY("expert_gating_func"), (uint32_t)sh->gating);
        gguf_writer_add_u32(w, KEY("expert_group_count"), 1);
        gguf_writer_add_u32(w, KEY("expert_group_used_count"), 1);
    }
    gguf_writer_add_u32(w, KEY("rope.dimension_count"), (uint32_t)(sh->rope_dim ? sh->rope_dim : hd));
    gguf_writer_add_f32(w, KEY("rope.freq_base"), sh->rope_base);
    gguf_writer_add_f32(w, KEY("attention.layer_norm_rms_epsilon"), 1e-5f);
    if (E) {
        gguf_writer_add_u32(w, KEY("expert_count"), (uint32_t)E);
        gguf_writer_add_u32(w, KEY("expert_used_count"), (uint32_t)sh->experts_used);
        gguf_writer_add_u32(w, KEY("expert_feed_forward_length"), (uint32_t)F);
    }
    const int dh = sh->delta_head, hk = sh->delta_k_heads, hv = sh->delta_v_heads;
    const int dconv = 2 * hk * dh + hv * dh, dv_all = hv * dh;   /* the DeltaNet's [q | k | v] and value widths */
    if (sh->interval) {
        gguf_writer_add_u32(w, KEY("full_attention_interval"), (uint32_t)sh->interval);
        gguf_writer_add_u32(w, KEY("ssm.conv_kernel"), 4);
        gguf_writer_add_u32(w, KEY("ssm.state_size"), (uint32_t)dh);
        gguf_writer_add_u32(w, KEY("ssm.group_count"), (uint32_t)hk);
        gguf_writer_add_u32(w, KEY("ssm.time_step_rank"), (uint32_t)hv);
        gguf_writer_add_u32(w, KEY("ssm.inner_size"), (uint32_t)dv_all);
        int32_t sections[4] = { 11, 11, 10, 0 };
        gguf_writer_add_array(w, KEY("rope.dimension_sections"), GGUF_I32, sections, 4);
        if (sh->shared_ffn) gguf_writer_add_u32(w, KEY("expert_shared_feed_forward_length"), (uint32_t)sh->shared_ffn);
    }
    add_placeholder_vocab(w, sh->vocab);

    /* every buffer stays alive until the write */
    void **keep = calloc((size_t)sh->layers * 16 + 8, sizeof *keep);
    int n_keep = 0;
    int n_ones = H > F ? H : F;
    if (dconv * 4 > n_ones) n_ones = dconv * 4;
    if (sh->kv_lora + sh->q_lora + E > n_ones) n_ones = sh->kv_lora + sh->q_lora + E;
    float *ones = malloc((size_t)n_ones * sizeof(float)), *minus = malloc((size_t)n_ones * sizeof(float));
    for (int i = 0; i < n_ones; i++) { ones[i] = 1.0f; minus[i] = -1.0f; }
    keep[n_keep++] = ones;
    keep[n_keep++] = minus;
    uint64_t seed = 1;
    size_t bytes, total = 0, active = 0;   /* active: what a decoded token reads */

    /* a matrix of rows x cols, or (experts > 0) a stack of that many, of which a token reads `used` */
#define MATRIX_OF(name, type, rows, cols, experts, used) do {                                 \
        int t_ = type, n_ = (experts) ? (experts) : 1;                                        \
        uint8_t *m_ = random_matrix(&t_, (int64_t)(rows) * n_, cols, seed++, &bytes);         \
        if (!m_) { fprintf(stderr, "error: out of memory\n"); return 1; }                     \
        keep[n_keep++] = m_;                                                                  \
        if (experts) gguf_writer_add_tensor(w, name, t_, 3, (int64_t[]){ cols, rows, n_ }, m_, bytes); \
        else gguf_writer_add_tensor(w, name, t_, 2, (int64_t[]){ cols, rows }, m_, bytes);    \
        total += bytes;                                                                       \
        active += (experts) ? bytes / (size_t)n_ * (size_t)(used) : bytes;                    \
    } while (0)
#define MATRIX(name, type, rows, cols) MATRIX_OF(name, type, rows, cols, 0, 0)
#define VECTOR(name, n) do { gguf_writer_add_tensor(w, name, TS_F32, 1, (int64_t[]){ n }, ones, (size_t)(n) * 4); } while (0)
#define VECTOR2(name, n0, n1) do { gguf_writer_add_tensor(w, name, TS_F32, 2, (int64_t[]){ n0, n1 }, ones, (size_t)(n0) * (n1) * 4); } while (0)

    int embd_type = mix || iq4_mix ? (sh->untied ? base : TS_Q6_K) : base;
    MATRIX("token_embd.weight", embd_type, sh->vocab, H);
    if (sh->untied) { active -= bytes; active += bytes / (size_t)sh->vocab; }   /* one row per token */
    if (sh->untied) MATRIX("output.weight", mix || iq4_mix ? TS_Q6_K : base, sh->vocab, H);
    VECTOR("output_norm.weight", H);
    char name[96];
    for (int l = 0; l < sh->layers; l++) {
        int vd_type = mix && more_bits(l, sh->layers) ? TS_Q6_K : base;
        int v_type = iq4_mix && sh->heads >= 4 * sh->kv_heads ? TS_Q5_K : vd_type;
        snprintf(name, sizeof name, "blk.%d.attn_norm.weight", l); VECTOR(name, H);
        /* Qwen3.5 names the norm before the MLP post_attention_norm */
        snprintf(name, sizeof name, sh->interval ? "blk.%d.post_attention_norm.weight" : "blk.%d.ffn_norm.weight", l);
        VECTOR(name, H);
        if (sh->kv_lora) {   /* latent attention (DeepSeek): its tensors, then the MLP or the experts */
            const int qk = sh->nope + sh->rope_dim, r = sh->kv_lora;
            if (sh->q_lora) {
                snprintf(name, sizeof name, "blk.%d.attn_q_a.weight", l);      MATRIX(name, base, sh->q_lora, H);
                snprintf(name, sizeof name, "blk.%d.attn_q_a_norm.weight", l); VECTOR(name, sh->q_lora);
                snprintf(name, sizeof name, "blk.%d.attn_q_b.weight", l);      MATRIX(name, base, sh->heads * qk, sh->q_lora);
            } else {
                snprintf(name, sizeof name, "blk.%d.attn_q.weight", l);        MATRIX(name, base, sh->heads * qk, H);
            }
            snprintf(name, sizeof name, "blk.%d.attn_kv_a_mqa.weight", l);     MATRIX(name, base, r + sh->rope_dim, H);
            snprintf(name, sizeof name, "blk.%d.attn_kv_a_norm.weight", l);    VECTOR(name, r);
            /* k_b's rows are d_n (128, 192) wide, no whole K-quant super-block: F16 (see above) */
            snprintf(name, sizeof name, "blk.%d.attn_k_b.weight", l);          MATRIX_OF(name, TS_F16, r, sh->nope, sh->heads, sh->heads);
            snprintf(name, sizeof name, "blk.%d.attn_v_b.weight", l);          MATRIX_OF(name, vd_type, sh->v_head, r, sh->heads, sh->heads);
            snprintf(name, sizeof name, "blk.%d.attn_output.weight", l);       MATRIX(name, base, H, sh->heads * sh->v_head);
            if (l < sh->first_dense) {
                snprintf(name, sizeof name, "blk.%d.ffn_gate.weight", l);      MATRIX(name, base, sh->ffn, H);
                snprintf(name, sizeof name, "blk.%d.ffn_up.weight", l);        MATRIX(name, base, sh->ffn, H);
                snprintf(name, sizeof name, "blk.%d.ffn_down.weight", l);      MATRIX(name, vd_type, H, sh->ffn);
                continue;
            }
            const int fs = F * sh->n_shared;
            snprintf(name, sizeof name, "blk.%d.ffn_gate_inp.weight", l);      MATRIX(name, TS_F32, E, H);
            if (sh->gating == 2) { snprintf(name, sizeof name, "blk.%d.exp_probs_b.bias", l); VECTOR(name, E); }
            snprintf(name, sizeof name, "blk.%d.ffn_gate_exps.weight", l);     MATRIX_OF(name, base, F, H, E, sh->experts_used);
            snprintf(name, sizeof name, "blk.%d.ffn_up_exps.weight", l);       MATRIX_OF(name, base, F, H, E, sh->experts_used);
            snprintf(name, sizeof name, "blk.%d.ffn_down_exps.weight", l);     MATRIX_OF(name, vd_type, H, F, E, sh->experts_used);
            snprintf(name, sizeof name, "blk.%d.ffn_gate_shexp.weight", l);    MATRIX(name, base, fs, H);
            snprintf(name, sizeof name, "blk.%d.ffn_up_shexp.weight", l);      MATRIX(name, base, fs, H);
            snprintf(name, sizeof name, "blk.%d.ffn_down_shexp.weight", l);    MATRIX(name, vd_type, H, fs);
            continue;
        }
        if (sh->interval && (l + 1) % sh->interval != 0) {   /* a gated DeltaNet layer (the decay a = -1) */
            snprintf(name, sizeof name, "blk.%d.attn_qkv.weight", l);  MATRIX(name, base, dconv, H);
            snprintf(name, sizeof name, "blk.%d.attn_gate.weight", l); MATRIX(name, base, dv_all, H);
            snprintf(name, sizeof name, "blk.%d.ssm_beta.weight", l);  MATRIX(name, base, hv, H);
            snprintf(name, sizeof name, "blk.%d.ssm_alpha.weight", l); MATRIX(name, base, hv, H);
            snprintf(name, sizeof name, "blk.%d.ssm_out.weight", l);   MATRIX(name, vd_type, H, dv_all);
            snprintf(name, sizeof name, "blk.%d.ssm_conv1d.weight", l); VECTOR2(name, 4, dconv);
            snprintf(name, sizeof name, "blk.%d.ssm_a", l);
            gguf_writer_add_tensor(w, name, TS_F32, 1, (int64_t[]){ hv }, minus, (size_t)hv * 4);
            snprintf(name, sizeof name, "blk.%d.ssm_dt.bias", l);      VECTOR(name, hv);
            snprintf(name, sizeof name, "blk.%d.ssm_norm.weight", l);  VECTOR(name, dh);
        } else {
            /* gated attention (Qwen3.5): each head's query rows then its gate rows */
            snprintf(name, sizeof name, "blk.%d.attn_q.weight", l);      MATRIX(name, base, sh->interval ? 2 * q : q, H);
            snprintf(name, sizeof name, "blk.%d.attn_k.weight", l);      MATRIX(name, base, kv, H);
            snprintf(name, sizeof name, "blk.%d.attn_v.weight", l);      MATRIX(name, v_type, kv, H);
            snprintf(name, sizeof name, "blk.%d.attn_output.weight", l); MATRIX(name, base, H, q);
        }
        if (sh->interval && (l + 1) % sh->interval == 0) {
            snprintf(name, sizeof name, "blk.%d.attn_q_norm.weight", l); VECTOR(name, hd);
            snprintf(name, sizeof name, "blk.%d.attn_k_norm.weight", l); VECTOR(name, hd);
        }
        if (sh->shared_ffn) {
            snprintf(name, sizeof name, "blk.%d.ffn_gate_shexp.weight", l); MATRIX(name, base, sh->shared_ffn, H);
            snprintf(name, sizeof name, "blk.%d.ffn_up_shexp.weight", l);   MATRIX(name, base, sh->shared_ffn, H);
            snprintf(name, sizeof name, "blk.%d.ffn_down_shexp.weight", l); MATRIX(name, vd_type, H, sh->shared_ffn);
            snprintf(name, sizeof name, "blk.%d.ffn_gate_inp_shexp.weight", l); MATRIX(name, TS_F32, 1, H);
        }
        if (E) {
            if (!sh->interval) {
                snprintf(name, sizeof name, "blk.%d.attn_q_norm.weight", l); VECTOR(name, hd);
                snprintf(name, sizeof name, "blk.%d.attn_k_norm.weight", l); VECTOR(name, hd);
            }
            snprintf(name, sizeof name, "blk.%d.ffn_gate_inp.weight", l); MATRIX(name, TS_F32, E, H);
            snprintf(name, sizeof name, "blk.%d.ffn_gate_exps.weight", l); MATRIX_OF(name, base, F, H, E, sh->experts_used);
            snprintf(name, sizeof name, "blk.%d.ffn_up_exps.weight", l);   MATRIX_OF(name, base, F, H, E, sh->experts_used);
            snprintf(name, sizeof name, "blk.%d.ffn_down_exps.weight", l); MATRIX_OF(name, vd_type, H, F, E, sh->experts_used);
        } else {
            snprintf(name, sizeof name, "blk.%d.ffn_gate.weight", l);    MATRIX(name, base, F, H);
            snprintf(name, sizeof name, "blk.%d.ffn_up.weight", l);      MATRIX(name, base, F, H);
            snprintf(name, sizeof name, "blk.%d.ffn_down.weight", l);    MATRIX(name, vd_type, H, F);
        }
    }
#undef MATRIX_OF
#undef VECTOR
#undef VECTOR2
#undef KEY
#undef MATRIX
    ts_error err = {{0}};
    int rc = gguf_writer_write(w, argv[1], &err);
    if (rc != 0) fprintf(stderr, "error: %s\n", err.msg);
    /* a tied embedding is the output matrix, so a decoded token reads every matrix of a dense
     * model; of a mixture of experts only the chosen experts' */
    else printf("%s: %s %s, %.1f MB of matrices, bytes read per token %zu\n", argv[1], sh->name,
                argv[3], total / 1e6, active);
    gguf_writer_free(w);
    for (int i = 0; i < n_keep; i++) free(keep[i]);
    free(keep);
    return rc != 0;
}
