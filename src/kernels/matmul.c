#include "kernels/matmul.h"
#include "kernels/kernels_internal.h"
#include "kernels/simd.h"

/* ---- the kernel sets ---- */

/* A type's kernels: activation format, row dot, and a register tile of rows x cols outputs. */
#define Q8_0_ACT(dot_fn, tile_fn, rows, cols) { TS_Q8_0, dot_fn, tile_fn, rows, cols }
#define Q8_K_ACT(dot_fn, tile_fn, rows, cols) { TS_Q8_K, dot_fn, tile_fn, rows, cols }
#define F32_ACT(dot_fn, tile_fn, rows, cols) { TS_F32, dot_fn, tile_fn, rows, cols }
#define ACT(fmt, dot_fn, tile_fn, rows, cols) { fmt, dot_fn, tile_fn, rows, cols }

/* The reference: every type through type_traits.dot_f32 on f32 activations. */
static const kernel_set scalar_set = { .level = SIMD_SCALAR };

#if defined(TS_X86)
/* Quantized types: 4 rows x 4 positions per tile. Float types: 1 x 2 (AVX2) or 2 x 4 (AVX-512)
 * tiles, because their row dot keeps several accumulators (a float FMA chain is otherwise
 * latency-bound: 4 with AVX2, 2 with AVX-512) and the tile must repeat the row dot's operations
 * exactly. */
static const kernel_set avx2_set = {
    .level = SIMD_AVX2,
    .quantize_q8_0 = quantize_act_q8_0_avx2, .quantize_q8_k = quantize_act_q8_k_avx2,
    .types = {
        [TS_F32]  = F32_ACT(vec_dot_f32_avx2, tile_f32_avx2, 1, 2),
        [TS_F16]  = F32_ACT(vec_dot_f16_avx2, tile_f16_avx2, 1, 2),
        [TS_BF16] = F32_ACT(vec_dot_bf16_avx2, tile_bf16_avx2, 1, 2),
        [TS_Q8_0] = Q8_0_ACT(vec_dot_q8_0_avx2, tile_q8_0_avx2, 4, 4),
        [TS_Q4_0] = Q8_0_ACT(vec_dot_q4_0_avx2, NULL, 0, 0),
        [TS_Q4_1] = Q8_0_ACT(vec_dot_q4_1_avx2, NULL, 0, 0),
        [TS_Q5_0] = Q8_0_ACT(vec_dot_q5_0_avx2, tile_q5_0_avx2, 4, 4),
        [TS_Q5_1] = Q8_0_ACT(vec_dot_q5_1_avx2, NULL, 0, 0),
        [TS_Q2_K] = Q8_K_ACT(vec_dot_q2_k_avx2, NULL, 0, 0),
        [TS_Q3_K] = Q8_K_ACT(vec_dot_q3_k_avx2, NULL, 0, 0),
        [TS_Q4_K] = Q8_K_ACT(vec_dot_q4_k_avx2, tile_q4_k_avx2, 4, 4),
        [TS_Q5_K] = Q8_K_ACT(vec_dot_q5_k_avx2, NULL, 0, 0),
        [TS_Q6_K] = Q8_K_ACT(vec_dot_q6_k_avx2, tile_q6_k_avx2, 4, 4),
        [TS_Q4NX] = F32_ACT(vec_dot_q4nx_avx2, tile_q4nx_avx2, 4, 4),
    } };

/* AVX-512: the Q8_0, Q5_0 and Q4_0 kernels take their activations in pairs of blocks
 * (block_q8_0x2); the other quantized types share the AVX2 quantizers' formats. */
static const kernel_set avx512_set = {
    .level = SIMD_AVX512,
    .quantize_q8_0 = quantize_act_q8_0_avx2, .quantize_q8_k = quantize_act_q8_k_avx2,
    .quantize_q8_0x2 = quantize_act_q8_0x2_avx512,
    .types = {
        [TS_F32]  = F32_ACT(vec_dot_f32_avx512, tile_f32_avx512, 2, 4),
        [TS_F16]  = F32_ACT(vec_dot_f16_avx512, tile_f16_avx512, 2, 4),
        [TS_BF16] = F32_ACT(vec_dot_bf16_avx512, tile_bf16_avx512, 2, 4),
        [TS_Q8_0] = ACT(ACT_Q8_0X2, vec_dot_q8_0_avx512, tile_q8_0_avx512, 4, 4),
        [TS_Q4_0] = ACT(ACT_Q8_0X2, vec_dot_q4_0_avx512, tile_q4_0_avx512, 4, 4),
        [TS_Q4_1] = Q8_0_ACT(vec_dot_q4_1_avx512, NULL, 0, 0),
        [TS_Q5_0] = ACT(ACT_Q8_0X2, vec_dot_q5_0_avx512, tile_q5_0_avx512, 4, 4),
        [TS_Q5_1] = Q8_0_ACT(vec_dot_q5_1_avx512, NULL, 0, 0),
        [TS_Q2_K] = Q8_K_ACT(vec_dot_q2_k_avx512, NULL, 0, 0),
        [TS_Q3_K] = Q8_K_ACT(vec_dot_q3_k_avx512, NULL, 0, 0),
        [TS_Q4_K] = Q8_K_ACT(vec_dot_q4_k_avx512, tile_q4_k_avx512, 4, 4),
        [TS_Q5_K] = Q8_K_ACT(vec_dot_q5_k_avx512, tile_q5_k_avx512, 4, 4),
        [TS_Q6_K] = Q8_K_ACT(vec_dot_q6_k_avx512, tile_q6_k_avx512, 4, 4),
        [TS_Q4NX] = F32_ACT(vec_dot_q4nx_avx512, tile_q4nx_avx512, 4, 4),
    } };
#endif

#if defined(__aarch64__)
/* NEON: the portable kernels (the compiler vectorizes their integer loops with Advanced SIMD,
 * which every aarch64 CPU has) plus a hand-written Q8_0 dot. */
static const kernel_set neon_set = {
    .level = SIMD_NEON,
    .quantize_q8_0 = quantize_act_q8_0_generic, .quantize_q8_k = quantize_act_q8_k_generic,
    .types = {
        [TS_F32]  = F32_ACT(vec_dot_f32_generic, NULL, 0, 0),
        [TS_F16]  = F32_ACT(vec_dot_f16_generic, NULL, 0, 0),
        [TS_BF16] = F32_ACT(vec_dot_bf16_generic, NULL, 0, 0),
        [TS_Q8_0] = Q8_0_ACT(vec_dot_q8_0_neon, NULL, 0, 0),
        [TS_Q4_0] = Q8_0_ACT(vec_dot_q4_0_generic, NULL, 0, 0),
        [TS_Q4_1] = Q8_0_ACT(vec_dot_q4_1_generic, NULL, 0, 0),
        [TS_Q5_0] = Q8_0_ACT(vec_dot_q5_0_generic, NULL, 0, 0),
        [TS_Q5_1] = Q8_0_ACT(vec_dot_q5_1_generic, NULL, 0, 0),
        [TS_Q2_K] = Q8_K_ACT(vec_dot_q2_k_generic, NULL, 0, 0),
        [TS_Q3_K] = Q8_K_ACT(vec_dot_q3_k_generic, NULL, 0, 0),
        [TS_Q4_K] = Q8_K_ACT(vec_dot_q4_k_generic, NULL, 0, 0),
        [TS_Q5_K] = Q8_K_ACT(vec_dot_q5_k_generic, NULL, 0, 0),
        [TS_Q6_K] = Q8_K_ACT(vec_dot_q6_k_generic, NULL, 0, 0),
    } };
#endif

const kernel_set *kernel_set_for(int level) {
    switch (level) {
    case SIMD_SCALAR: return &scalar_set;
#if defined(TS_X86)
    case SIMD_AVX2: return &avx2_set;
    case SIMD_AVX512: return &avx512_set;
#endif
#if defined(__aarch64__)
    case SIMD_NEON: return &neon_set;
#endif
    default: return NULL;
    }
}

const struct kernel_set *matmul_kernels(int simd_level) { return kernel_set_for(simd_level); }
int matmul_kernels_level(const struct kernel_set *ks) { return ks ? ks->level : SIMD_SCALAR; }


size_t act_row_bytes(int act_type, int64_t k) {
    if (act_type == TS_F32) return (size_t)k * sizeof(float);
    if (act_type == ACT_Q8_0X2) return (size_t)((k / QK + 1) / 2) * sizeof(block_q8_0x2);
    return type_row_bytes(act_type, k);
}

/* Room for the Q8_0, the paired Q8_0 and the Q8_K form of every position (a Q8_K row needs
 * k % 256 == 0). */
size_t matmul_scratch_bytes(int max_n, int64_t max_k) {
    int64_t k0 = (max_k + QK - 1) / QK * QK, kk = (max_k + QK_K - 1) / QK_K * QK_K;
    return (size_t)max_n * (act_row_bytes(TS_Q8_0, k0) + act_row_bytes(ACT_Q8_0X2, k0) +
                            act_row_bytes(TS_Q8_K, kk)) + 64;
}

/* ---- the product ---- */

#define TILE_BLOCK_BYTES (128 * 1024)   /* weight rows per cache block of a tiled product */

/* One input of a product: its rows as floats, and quantized in the formats its weights want. */
typedef struct matmul_input {
    const float *x;
    long x_stride;
    const uint8_t *act[TS_TYPE_COUNT];  /* per activation format: rows of act_stride bytes */
    size_t act_stride[TS_TYPE_COUNT];
} matmul_input;

typedef struct matmul_job {
    const kernel_set *ks;
    int count;
    const weight *w[MATMUL_MAX_MULTI];
    float *y[MATMUL_MAX_MULTI];
    long y_stride[MATMUL_MAX_MULTI];
    long rows_before[MATMUL_MAX_MULTI + 1];   /* prefix sums of the row counts: the rows are split as one range */
    const matmul_input *in[MATMUL_MAX_MULTI]; /* the input each weight reads */
    int n;
} matmul_job;

/* Rows [lo, hi) of one weight against all n positions. */
static void product_rows(const matmul_job *j, int wi, long lo, long hi) {
    const weight *w = j->w[wi];
    float *y = j->y[wi];
    const long ys = j->y_stride[wi];
    const int n = j->n;
    const matmul_input *in = j->in[wi];
    const type_kernels *tk = &j->ks->types[w->type];
    if (!tk->dot) {   /* the scalar reference */
        const type_traits *tt = type_get(w->type);
        for (long r = lo; r < hi; r++) {
            const uint8_t *row = w->data + (size_t)r * w->row_bytes;
            for (int t = 0; t < n; t++) y[(long)t * ys + r] = tt->dot_f32(row, in->x + (long)t * in->x_stride, w->cols);
        }
        return;
    }
    const uint8_t *act = in->act[tk->act_type];
    const size_t as = in->act_stride[tk->act_type], wsz = w->row_bytes;
    const int64_t k = w->cols;
    long r = lo;
    /* Register tiles when the batch fills one: the tile's rows are read from memory once for
     * tile_cols positions. The rows are taken in blocks of about TILE_BLOCK_BYTES, and each block
     * is multiplied by every group of positions before the next block starts, so the block stays
     * in the L2 cache while the activations of a group stay in L1. A matrix-vector product reads
     * each row in turn instead: streaming several rows at once defeated the hardware prefetcher
     * here (8 vs 25 GB/s measured), and memory bandwidth is the limit there anyway. */
    if (tk->tile && n >= tk->tile_cols) {
        const int tr = tk->tile_rows, tc = tk->tile_cols;
        long block = (long)(TILE_BLOCK_BYTES / wsz) / tr * tr;
        if (block < tr) block = tr;
        for (long rb = lo; rb + tr <= hi; rb += block) {
            long re = rb + block < hi ? rb + block : hi;
            re = rb + (re - rb) / tr * tr;        /* whole tiles; the leftover rows come last */
            int t = 0;
            for (; t + tc <= n; t += tc)
                for (long rr = rb; rr < re; rr += tr)
                    tk->tile(w->data + (size_t)rr * wsz, wsz, act + (size_t)t * as, as, k, y + (long)t * ys + rr, ys);
            for (; t < n; t++)
                for (long rr = rb; rr < re; rr++)
                    y[(long)t * ys + rr] = tk->dot(w->data + (size_t)rr * wsz, act + (size_t)t * as, k);
            r = re;
        }
    }
    for (; r < hi; r++) {
        const uint8_t *wr = w->data + (size_t)r * wsz;
        for (int t = 0; t < n; t++) y[(long)t * ys + r] = tk->dot(wr, act + (size_t)t * as, k);
    }
}

static void matmul_task(void *ctx, int ith, int nth) {
    const matmul_job *j = ctx;
    long lo, hi;
    /* split in multiples of 4 rows so every thread can use the 4-row tiles */
    long total = j->rows_before[j->count];
    split_range((total + 3) / 4, ith, nth, &lo, &hi);
    lo *= 4;
    hi = hi * 4 < total ? hi * 4 : total;
    for (int wi = 0; wi < j->count; wi++) {
        long a = j->rows_before[wi], b = j->rows_before[wi + 1];
        long s = lo > a ? lo : a, e = hi < b ? hi : b;
        if (s < e) product_rows(j, wi, s - a, e - a);
    }
}

typedef struct quantize_fmt { quantize_act_fn quant; const float *x; long x_stride; uint8_t *dst; size_t stride; int64_t k; } quantize_fmt;
typedef struct quantize_job {
    int n, n_fmt;
    quantize_fmt fmt[3 * MATMUL_MAX_MULTI];   /* per input: Q8_0, paired Q8_0 and/or Q8_K */
} quantize_job;

static void quantize_task(void *ctx, int ith, int nth) {
    const quantize_job *q = ctx;
    long lo, hi;
    split_range((long)q->n * q->n_fmt, ith, nth, &lo, &hi);
    for (long i = lo; i < hi; i++) {
        const quantize_fmt *f = &q->fmt[i / q->n];
        long t = i % q->n;
        f->quant(f->x + t * f->x_stride, f->dst + (size_t)t * f->stride, f->k);
    }
}

/* The products of count weights, weight i reading input in_of[i] of inputs[] (n positions each),
 * in one pass of the pool; each input is quantized once per activation format its weights want. */
static void run_products(const matmul_ctx *mc, int count, const weight *const *ws, matmul_input *inputs,
                         const int *in_of, int n, float *const *ys, const long *y_strides) {
    const kernel_set *ks = mc->ks ? mc->ks : &scalar_set;
    matmul_job j = { .ks = ks, .n = n };
    quantize_job q = { .n = n };
    uint8_t *scratch = mc->act;
    for (int i = 0; i < count && j.count < MATMUL_MAX_MULTI; i++) {
        if (!ws[i] || !ws[i]->data) continue;
        matmul_input *in = &inputs[in_of[i]];
        j.w[j.count] = ws[i];
        j.y[j.count] = ys[i];
        j.y_stride[j.count] = y_strides[i];
        j.in[j.count] = in;
        j.rows_before[j.count + 1] = j.rows_before[j.count] + ws[i]->rows;
        j.count++;
        in->act[TS_F32] = (const uint8_t *)in->x;
        in->act_stride[TS_F32] = (size_t)in->x_stride * sizeof(float);
        const type_kernels *tk = &ks->types[ws[i]->type];
        int at = tk->act_type;
        if (!tk->dot || at == TS_F32 || in->act[at]) continue;
        size_t stride = act_row_bytes(at, ws[i]->cols);
        quantize_act_fn quant = at == TS_Q8_0 ? ks->quantize_q8_0 : at == TS_Q8_K ? ks->quantize_q8_k : ks->quantize_q8_0x2;
        q.fmt[q.n_fmt++] = (quantize_fmt){ quant, in->x, in->x_stride, scratch, stride, ws[i]->cols };
        in->act[at] = scratch;
        in->act_stride[at] = stride;
        scratch += (size_t)n * stride;
    }
    if (j.count == 0) return;
    if (q.n_fmt > 0) {
        /* a batch's rows are quantized by the pool too (each row by one thread: same result) */
        if ((long)n * q.n_fmt >= 8) thread_pool_run(mc->pool, quantize_task, &q);
        else quantize_task(&q, 0, 1);
    }
    thread_pool_run(mc->pool, matmul_task, &j);
}

void matmul_multi(const matmul_ctx *mc, int count, const weight *const *ws, const float *x,
                  long x_stride, int n, float *const *ys, const long *y_strides) {
    matmul_input input = { .x = x, .x_stride = x_stride };
    int in_of[MATMUL_MAX_MULTI] = { 0 };
    run_products(mc, count, ws, &input, in_of, n, ys, y_strides);
}

void matmul_each(const matmul_ctx *mc, int count, const weight *const *ws, const float *const *xs,
                 long x_stride, int n, float *const *ys, const long *y_strides) {
    matmul_input inputs[MATMUL_MAX_MULTI];
    int in_of[MATMUL_MAX_MULTI];
    for (int i = 0; i < count && i < MATMUL_MAX_MULTI; i++) {
        inputs[i] = (matmul_input){ .x = xs[i], .x_stride = x_stride };
        in_of[i] = i;
    }
    run_products(mc, count, ws, inputs, in_of, n, ys, y_strides);
}

void matmul(const matmul_ctx *mc, const weight *w, const float *x, long x_stride, int n,
            float *y, long y_stride) {
    matmul_multi(mc, 1, &w, x, x_stride, n, &y, &y_stride);
}
