/* The attention of a decoded token alone: the kernels of one SIMD level over a KV cache of
 * DEPTH positions, every layer and KV head of a model's shape, in the forward's chunks of 256 keys
 * (scores per block, the softmax, the weighted values), on one thread. The cache (layers x KV heads
 * x DEPTH keys and values) is far larger than the caches at useful depths, as in a real decode, so
 * a change to the kernels' arithmetic or their memory access can be measured without a long
 * prompt. Prints the time per token and the KV bytes read per second, best of the passes.
 *
 *   bench_attention [DEPTH] [GROUP] [HEAD_DIM] [KV_HEADS] [LAYERS] [PASSES] [SIMD] [TYPE]
 *   defaults: 4096 positions, 4 query heads per KV head, head 64, 8 KV heads, 16 layers (a 1B
 *   Llama), 5 passes, the best SIMD level here (0 scalar, 1 AVX2, 2 AVX-512), an f16 cache (or
 *   f32, q8_0). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include "kernels/attention.h"
#include "kernels/cpu.h"

static double seconds(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

enum { CHUNK = 256 };

int main(int argc, char **argv) {
    const int depth = argc > 1 ? atoi(argv[1]) : 4096, group = argc > 2 ? atoi(argv[2]) : 4;
    const int hd = argc > 3 ? atoi(argv[3]) : 64, kv_heads = argc > 4 ? atoi(argv[4]) : 8;
    const int layers = argc > 5 ? atoi(argv[5]) : 16, passes = argc > 6 ? atoi(argv[6]) : 5;
    int level = SIMD_COUNT - 1;
    while (level > 0 && !cpu_has_simd(level)) level--;
    if (argc > 7) level = atoi(argv[7]);
    const int type = argc > 8 ? attention_kv_type_from_name(argv[8]) : KV_F16;
    if (depth < 1 || group < 1 || group > 64 || hd < 1 || hd > 512 || kv_heads < 1 || layers < 1 || passes < 1 ||
        level < 0 || level >= SIMD_COUNT || !cpu_has_simd(level) || type < 0 || !attention_kv_type_fits(type, hd)) {
        fprintf(stderr, "usage: bench_attention [DEPTH] [GROUP<=64] [HEAD_DIM<=512] [KV_HEADS] [LAYERS] [PASSES] [SIMD] [f32|f16|q8_0]\n");
        return 1;
    }
    const attention_kernels ak = attention_kernels_for(level);
    const size_t kb = attention_key_block_bytes(type, hd), rb = attention_value_row_bytes(type, hd);
    const size_t blocks = ((size_t)depth + KV_KEY_BLOCK - 1) / KV_KEY_BLOCK, heads = (size_t)layers * kv_heads;
    const size_t kbytes = heads * blocks * kb, vbytes = heads * (size_t)depth * rb;
    uint8_t *k = malloc(kbytes), *v = malloc(vbytes);
    float *q = malloc((size_t)group * hd * sizeof(float)), *o = malloc((size_t)group * hd * sizeof(float));
    float *scores = malloc((size_t)group * (CHUNK + 1) * sizeof(float));
    if (!k || !v || !q || !o || !scores) { fprintf(stderr, "bench_attention: out of memory\n"); return 1; }
    uint32_t x = 12345;   /* keys and values in [0.125, 0.25), stored through the cache's own writers */
    float *kv_row = malloc((size_t)hd * sizeof(float));
    if (!kv_row) { fprintf(stderr, "bench_attention: out of memory\n"); return 1; }
    for (size_t h = 0; h < heads; h++)
        for (int s = 0; s < depth; s++) {
            for (int i = 0; i < hd; i++) { x = x * 1664525u + 1013904223u; kv_row[i] = 0.125f + (float)(x >> 8) / 134217728.0f; }
            attention_store_key(type, k + (h * blocks + (size_t)s / KV_KEY_BLOCK) * kb, s % KV_KEY_BLOCK, kv_row, hd);
            for (int i = 0; i < hd; i++) { x = x * 1664525u + 1013904223u; kv_row[i] = 0.125f + (float)(x >> 8) / 134217728.0f; }
            attention_store_value(type, v + (h * (size_t)depth + (size_t)s) * rb, kv_row, hd);
        }
    free(kv_row);
    for (int i = 0; i < group * hd; i++) { x = x * 1664525u + 1013904223u; q[i] = (float)(x >> 8) / 16777216.0f - 0.5f; }
    double best = 1e30, sink = 0.0;
    for (int pass = 0; pass < passes; pass++) {
        const double t0 = seconds();
        for (size_t h = 0; h < heads; h++) {
            const uint8_t *kh = k + h * blocks * kb, *vh = v + h * (size_t)depth * rb;
            for (int c0 = 0; c0 < depth; c0 += CHUNK) {
                const int n = depth - c0 < CHUNK ? depth - c0 : CHUNK;
                for (int done = 0; done < n; done += KV_KEY_BLOCK) {
                    const int len = n - done < KV_KEY_BLOCK ? n - done : KV_KEY_BLOCK;
                    ak.scores[type](q, group, kh + (size_t)(c0 + done) / KV_KEY_BLOCK * kb, hd, 0, len, 0.125f,
                                      scores + done, CHUNK + 1);
                }
                float m;
                for (int g = 0; g < group; g++) ak.softmax(scores + (size_t)g * (CHUNK + 1), n, &m);
                ak.values[type](scores, CHUNK + 1, group, n, vh, rb, depth, c0, hd, o, hd);
                sink += o[0];
            }
        }
        const double t = seconds() - t0;
        if (t < best) best = t;
    }
    printf("attention, %s cache, depth %d, %d x %d heads of %d, %d layers, SIMD level %d: %.2f ms per token, "
           "%.1f GB/s of KV (%.0f MB), best of %d (checksum %g)\n", attention_kv_type_name(type), depth, kv_heads, group, hd, layers, level,
           best * 1e3, (double)(kbytes + vbytes) / best / 1e9, (double)(kbytes + vbytes) / 1e6, passes, sink);
    free(k); free(v); free(q); free(o); free(scores);
    return 0;
}
