/* The decode kernel alone: matrix-vector products over a random matrix far larger than the caches,
 * through matmul() with the engine's thread pool, so a change to a kernel's memory access (prefetch
 * distance, rows per call) can be measured without the rest of a forward and its noise. Prints the
 * weight bytes read per second, best and median of the passes, beside a read-only probe of the same
 * buffer size taken in the same process (this machine's bandwidth drifts between minutes).
 * BENCH_MATVEC_CHUNK_MB=4 multiplies the matrix as separate products of 4 MB each, as a forward
 * does a layer's matrices; BENCH_MATVEC_MMAP=FILE maps it from FILE (written first) as a model's
 * weights are; BENCH_MATVEC_FILE=MODEL reads the first MB of an existing file's own page-cache pages
 * instead (its bytes taken as rows of TYPE: only the speed means anything), to tell a slow model
 * file's pages from a slow kernel (BENCH_MATVEC_MMAP, when set, wins). BENCH_MATVEC_N=8 multiplies
 * by 8 positions at once (a decode step of 8 sequences, a speculation's verification; default 1):
 * the weight bytes per second then count each byte once per product. BENCH_MATVEC_LANES=1 keeps
 * the rows in lanes first where the kernel set can (AVX-512 Q4_K, Q6_K, the grid types, TQ1_0;
 * weight.lanes; the GB/s still count the file's bytes). The rows are a multiple of 16.
 *
 *   bench_matvec TYPE [COLS] [MB] [THREADS] [PASSES] [SIMD]
 *   TYPE: Q8_0, Q4_K, Q6_K, Q5_K, IQ4_XS, ... (quantized from random floats), or a type the engine
 *   reads but does not quantize (IQ1_S, IQ1_M, IQ2_XXS, IQ2_XS, IQ2_S, IQ3_XXS, IQ3_S, TQ1_0,
 *   TQ2_0, NVFP4, Q1_0, Q2_0: random bytes, see random_block); COLS default 2048 (a multiple of
 *   the type's block), MB the matrix size (default 512), THREADS 2, PASSES 15, SIMD auto. */
#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include "kernels/cpu.h"
#include "kernels/matmul.h"
#include "kernels/simd.h"
#include "kernels/types.h"

static double seconds(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

typedef struct probe_arg { const uint64_t *p; size_t n; uint64_t sum; } probe_arg;

static void probe_task(void *ctx, int ith, int nth) {
    probe_arg *a = ctx;
    size_t lo = a->n / nth * ith, hi = ith == nth - 1 ? a->n : a->n / nth * (ith + 1);
    uint64_t s[8] = { 0 };
    for (size_t i = lo; i + 8 <= hi; i += 8)
        for (int k = 0; k < 8; k++) s[k] += a->p[i + k];
    __atomic_fetch_add(&a->sum, s[0] + s[1] + s[2] + s[3] + s[4] + s[5] + s[6] + s[7], __ATOMIC_RELAXED);
}

/* One block of random bytes for a type with no quantizer. Random scale fields can decode to inf,
 * NaN or 1e4-sized weights, which no model has and which could send a kernel down unusual paths,
 * so the block is redrawn until every weight it decodes to is finite and below 1000 in magnitude.
 * Decoding the block finds the scale wherever the type keeps it (IQ1_M spreads its fp16 over the
 * top nibbles of four words), so no per-type layout is needed here. */
static void random_block(const type_traits *tt, uint8_t *block, size_t bytes, int qk, float *tmp, uint64_t *g) {
    for (;;) {
        for (size_t i = 0; i < bytes; i++) { *g = *g * 6364136223846793005ULL + 1; block[i] = (uint8_t)(*g >> 56); }
        tt->dequant_row(block, tmp, qk);
        int ok = 1;
        for (int i = 0; i < qk && ok; i++) ok = isfinite(tmp[i]) && fabsf(tmp[i]) < 1000.0f;
        if (ok) return;
    }
}

int main(int argc, char **argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: bench_matvec TYPE [COLS] [MB] [THREADS] [PASSES] [SIMD]\n");
        return 1;
    }
    int type = -1;
    for (int t = 0; t < TS_TYPE_COUNT; t++) {
        const type_traits *tt = type_get(t);
        if (tt && tt->dequant_row && type_block_size(t) && type_name(t) && !strcasecmp(type_name(t), argv[1])) type = t;
    }
    int64_t cols = argc > 2 ? atoll(argv[2]) : 2048;
    double mb = argc > 3 ? atof(argv[3]) : 512;   /* fractions too: 0.5 stays in a 1 MB L2 */
    int threads = argc > 4 ? atoi(argv[4]) : 2, passes = argc > 5 ? atoi(argv[5]) : 15;
    int level = simd_from_name(argc > 6 ? argv[6] : "auto");
    if (type < 0 || cols <= 0 || mb <= 0 || threads < 1 || passes < 1 || level < 0 || !cpu_has_simd(level)) {
        fprintf(stderr, "error: unknown type, bad size or unavailable kernel set\n");
        return 1;
    }
    const type_traits *tt = type_get(type);
    size_t rb = type_row_bytes(type, cols);
    if (rb == 0) {
        fprintf(stderr, "error: COLS %lld is not a whole number of %s blocks (%d weights)\n", (long long)cols, type_name(type), type_block_size(type));
        return 1;
    }
    int64_t rows = (int64_t)(mb * 1048576) / (int64_t)rb / 16 * 16;   /* a multiple of 16: rows in lanes come 16 at a time */
    if (rows < 16) {
        fprintf(stderr, "error: %.3g MB holds fewer than 16 rows of %lld %s weights\n", mb, (long long)cols, type_name(type));
        return 1;
    }
    uint8_t *data;
    if (getenv("BENCH_MATVEC_HUGE")) {   /* anonymous memory in 2 MB pages (transparent huge pages) */
        size_t sz = (rb * (size_t)rows + (2u << 20) - 1) / (2u << 20) * (2u << 20);
        data = aligned_alloc(2u << 20, sz);
        if (data) madvise(data, sz, MADV_HUGEPAGE);
    } else
        data = malloc(rb * (size_t)rows);
    const int npos = getenv("BENCH_MATVEC_N") ? atoi(getenv("BENCH_MATVEC_N")) : 1;
    if (npos < 1 || npos > 512) { fprintf(stderr, "error: BENCH_MATVEC_N must be 1..512\n"); return 1; }
    float *row = malloc((size_t)cols * sizeof(float)), *x = malloc((size_t)cols * npos * sizeof(float));
    float *y = malloc((size_t)rows * npos * sizeof(float));
    if (!data || !row || !x || !y) { fprintf(stderr, "error: out of memory\n"); return 1; }
    uint64_t g = 0x9e3779b97f4a7c15ULL;
    for (int64_t c = 0; c < cols * npos; c++) { g = g * 6364136223846793005ULL + 1; x[c] = (float)(g >> 40) / 16777216.0f - 0.5f; }
    const int qk = type_block_size(type);
    const size_t bb = type_block_bytes(type);
    for (int64_t r = 0; r < rows; r++) {
        if (!tt->quantize_row) {   /* no quantizer: random blocks with moderate decoded weights */
            for (int64_t c = 0; c < cols; c += qk) random_block(tt, data + (size_t)r * rb + (size_t)(c / qk) * bb, bb, qk, row, &g);
            continue;
        }
        for (int64_t c = 0; c < cols; c++) { g = g * 6364136223846793005ULL + 1; row[c] = ((float)(g >> 40) / 16777216.0f - 0.5f) * 0.04f; }
        tt->quantize_row(row, data + (size_t)r * rb, cols);
    }
    if (getenv("BENCH_MATVEC_MMAP")) {   /* the matrix from a mapped file, as a model's weights are */
        const char *path = getenv("BENCH_MATVEC_MMAP");
        FILE *f = fopen(path, "wb");
        if (!f || fwrite(data, 1, rb * (size_t)rows, f) != rb * (size_t)rows || fclose(f) != 0) { fprintf(stderr, "error: %s: cannot write\n", path); return 1; }
        int fd = open(path, O_RDONLY);
        void *m = fd < 0 ? MAP_FAILED : mmap(NULL, rb * (size_t)rows, PROT_READ, MAP_SHARED, fd, 0);
        if (m == MAP_FAILED) { fprintf(stderr, "error: %s: cannot map\n", path); return 1; }
        free(data);
        data = m;
    } else if (getenv("BENCH_MATVEC_FILE")) {   /* an existing file's own page-cache pages (a model), read only */
        const char *path = getenv("BENCH_MATVEC_FILE");
        int fd = open(path, O_RDONLY);
        struct stat st;
        void *m = fd < 0 || fstat(fd, &st) != 0 || (size_t)st.st_size < rb * (size_t)rows
                ? MAP_FAILED : mmap(NULL, rb * (size_t)rows, PROT_READ, MAP_SHARED, fd, 0);
        if (fd >= 0) close(fd);
        if (m == MAP_FAILED) { fprintf(stderr, "error: %s: cannot map %.1f MB of it\n", path, mb); return 1; }
        free(data);
        data = m;
    }
    thread_pool *pool = thread_pool_new(threads);
    size_t scratch = matmul_scratch_bytes(npos, cols);
    matmul_ctx mc = { .pool = pool, .ks = matmul_kernels(level), .act = malloc(scratch), .act_bytes = scratch };
    const char *chunk_env = getenv("BENCH_MATVEC_CHUNK_MB");
    int64_t chunk_rows = chunk_env ? (int64_t)(atof(chunk_env) * 1048576 / rb) / 16 * 16 : rows;
    if (chunk_rows < 16) chunk_rows = 16;
    weight w = { .type = type, .rows = rows, .cols = cols, .row_bytes = rb, .data = data, .name = "bench" };
    const type_kernels *tk = mc.ks->types[type];
    const char *lanes_env = getenv("BENCH_MATVEC_LANES");
    if (lanes_env && atoi(lanes_env) > 0 && tk && tk->lanes_pack && rows % 16 == 0 && chunk_rows % 16 == 0) {
        /* the rows kept in lanes, as a load for batch answering leaves them (weight.lanes) */
        const size_t prb = lanes_packed_row_bytes(tk, rb, cols);
        if (prb != rb && (getenv("BENCH_MATVEC_MMAP") || getenv("BENCH_MATVEC_FILE"))) {
            fprintf(stderr, "error: %s rows in lanes take bytes of their own: not with a mapped file\n", type_name(type));
            return 1;
        }
        uint8_t *u = malloc(prb * 16), *packed = prb == rb ? data : malloc(prb * (size_t)rows);
        if (!u || !packed) { fprintf(stderr, "error: out of memory\n"); return 1; }
        for (int64_t r0 = 0; r0 < rows; r0 += 16) {
            tk->lanes_pack(data + (size_t)r0 * rb, rb, cols, u);
            memcpy(packed + (size_t)r0 * prb, u, prb * 16);
        }
        free(u);
        if (packed != data) {   /* a form of its own (Q3_K, the grid types, TQ1_0): GB/s below still count the file's bytes */
            printf("# rows in lanes: %zu bytes a row instead of %zu\n", prb, rb);
            free(data);
            data = packed;
        }
        w.data = data;
        w.lanes = true;
        w.row_bytes = prb;
    }
    const size_t mrb = w.row_bytes;   /* a row's bytes in memory */
    double *gbs = malloc((size_t)passes * sizeof(double)), *probe = malloc((size_t)passes * sizeof(double));
    probe_arg pa = { (const uint64_t *)data, mrb * (size_t)rows / 8, 0 };
    for (int p = 0; p < passes; p++) {   /* kernel and probe alternate, pass by pass */
        double t0 = seconds();
        if (chunk_rows >= rows) matmul(&mc, &w, x, cols, npos, y, rows);
        else   /* one product per chunk, as a forward multiplies one layer's matrices in turn */
            for (int64_t r0 = 0; r0 < rows; r0 += chunk_rows) {
                weight part = w;
                part.rows = rows - r0 < chunk_rows ? rows - r0 : chunk_rows;
                part.data = data + (size_t)r0 * mrb;
                matmul(&mc, &part, x, cols, npos, y + r0, rows);
            }
        gbs[p] = (double)rb * rows / (seconds() - t0) / 1e9;
        t0 = seconds();
        thread_pool_run(pool, probe_task, &pa);
        probe[p] = (double)mrb * rows / (seconds() - t0) / 1e9;
    }
    qsort(gbs, passes, sizeof *gbs, cmp_double);
    qsort(probe, passes, sizeof *probe, cmp_double);
    printf("%s %lld x %lld (%.1f MB) x %d position%s, %d threads, %s: kernel best %.1f median %.1f GB/s | probe best %.1f median %.1f GB/s | kernel/probe %.0f%% (checksum %.3g %llu)\n",
           type_name(type), (long long)rows, (long long)cols, (double)rb * rows / 1048576, npos, npos == 1 ? "" : "s", threads, simd_name(level),
           gbs[passes - 1], gbs[passes / 2], probe[passes - 1], probe[passes / 2],
           100 * gbs[passes / 2] / probe[passes / 2], y[rows / 2], (unsigned long long)pa.sum);
    free(gbs); free(probe); free(mc.act); thread_pool_free(pool);
    if (getenv("BENCH_MATVEC_MMAP") || getenv("BENCH_MATVEC_FILE")) munmap(data, rb * (size_t)rows); else free(data);
    free(row); free(x); free(y);
    return 0;
}
