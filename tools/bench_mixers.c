/* A decoded token's time by layer kind: each layer's mixer (attention, gated DeltaNet, short
 * convolution, Mamba-2) timed alone at one position, against whole decoded tokens, beside the bytes
 * each kind moves (the weight bytes its matrix products read, counted by the matmul, plus its
 * recurrent state read and written once). A kind that costs what it reads has a time share close
 * to its byte share: the last column is their ratio.
 *
 *   bench_mixers MODEL [TOKENS] [THREADS]   (defaults: 64 decoded tokens, 2 threads)
 *
 * The mixers run on the context's own scratch and state after a short prompt (their inputs are
 * the last token's), so their memory traffic is a decode's. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include "tessera.h"
#include "run/context.h"
#include "run/layer_kind.h"

static double seconds(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

int main(int argc, char **argv) {
    if (argc < 2) { fprintf(stderr, "usage: bench_mixers MODEL [TOKENS] [THREADS]\n"); return 1; }
    const int n_tok = argc > 2 ? atoi(argv[2]) : 64, n_threads = argc > 3 ? atoi(argv[3]) : 2;
    ts_error err = {{0}};
    ts_model *m;
    ts_context *c;
    if (ts_model_load(argv[1], NULL, &m, &err) != 0 || ts_context_new(m, 1024, n_threads, &c, &err) != 0) {
        fprintf(stderr, "error: %s\n", err.msg);
        return 1;
    }
    const model_geometry *g = &m->g;
    const int nv = ts_model_n_vocab(m);
    float *logits = malloc((size_t)nv * sizeof *logits);
    int32_t prompt[8];
    for (int i = 0; i < 8; i++) prompt[i] = 1 + (i * 37) % (nv - 1);
    if (ts_eval(c, prompt, 8, logits, false, &err) != 0) { fprintf(stderr, "error: %s\n", err.msg); return 1; }

    /* whole tokens: time and weight bytes per token */
    uint64_t w0 = c->weight_bytes;
    double t0 = seconds();
    for (int i = 0; i < n_tok; i++) {
        int32_t tok = 1 + (i * 101) % (nv - 1);
        if (ts_eval(c, &tok, 1, logits, false, &err) != 0) { fprintf(stderr, "error: %s\n", err.msg); return 1; }
    }
    const double token_s = (seconds() - t0) / n_tok;
    double token_bytes = (double)(c->weight_bytes - w0) / n_tok;

    /* each layer's mixer alone, every layer in turn (as a token visits them: a layer's weights are
     * not in cache when it comes round again) */
    double kind_s[LAYER_KIND_COUNT] = { 0 }, kind_bytes[LAYER_KIND_COUNT] = { 0 };
    int kind_layers[LAYER_KIND_COUNT] = { 0 };
    for (int il = 0; il < g->n_layers; il++) {
        const layer_geometry *ly = &g->layers[il];
        const double state = 2.0 * sizeof(float) * layer_kind_ops(ly->kind)->state_floats(ly);
        kind_bytes[ly->kind] += state;
        kind_layers[ly->kind]++;
        token_bytes += state;
    }
    for (int i = 0; i < n_tok; i++)
        for (int il = 0; il < g->n_layers; il++) {
            const layer_geometry *ly = &g->layers[il];
            uint64_t b0 = c->weight_bytes;
            double s0 = seconds();
            layer_kind_ops(ly->kind)->forward(c, ly, il, 1);
            kind_s[ly->kind] += (seconds() - s0) / n_tok;
            kind_bytes[ly->kind] += (double)(c->weight_bytes - b0) / n_tok;
        }
    printf("%s: %d threads, %.2f ms and %.1f MB per decoded token (%.1f GB/s)\n", argv[1], n_threads, token_s * 1e3,
           token_bytes / 1e6, token_bytes / token_s / 1e9);
    printf("%-18s %6s %10s %7s %10s %7s %11s\n", "mixer kind", "layers", "ms/token", "time", "MB/token", "bytes", "time/bytes");
    for (int k = 0; k < LAYER_KIND_COUNT; k++) {
        if (!kind_layers[k]) continue;
        double ts = kind_s[k] / token_s, bs = kind_bytes[k] / token_bytes;
        printf("%-18s %6d %10.3f %6.1f%% %10.1f %6.1f%% %11.2f\n", layer_kind_ops(k)->name, kind_layers[k], kind_s[k] * 1e3,
               100 * ts, kind_bytes[k] / 1e6, 100 * bs, ts / bs);
    }
    free(logits);
    ts_context_free(c);
    ts_model_free(m);
    return 0;
}
