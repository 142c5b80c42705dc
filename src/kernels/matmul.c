/* The matrix products of matmul.h: activations quantized once per input and format, then rows
 * split across the thread pool and multiplied in register tiles or row by row. */
#include "kernels/matmul.h"
#include "kernels/kernels_internal.h"
#include "kernels/simd.h"
#include "kernels/types.h"
#include <stdbool.h>
#include <stdlib.h>

const struct kernel_set *matmul_kernels(int simd_level) { return kernel_set_for(simd_level); }
int matmul_kernels_level(const struct kernel_set *ks) { return ks ? ks->level : SIMD_SCALAR; }

/* Room for every activation format of every position (a Q8_K row needs k % 256 == 0). */
size_t matmul_scratch_bytes(int max_n, int64_t max_k) {
    int64_t k0 = (max_k + QK - 1) / QK * QK, kk = (max_k + QK_K - 1) / QK_K * QK_K;
    return (size_t)max_n * (act_row_bytes(TS_Q8_0, k0) + act_row_bytes(ACT_Q8_0X2, k0) +
                            act_row_bytes(TS_Q8_K, kk) + act_row_bytes(ACT_Q8_K_NIBBLES, kk) +
                            act_row_bytes(ACT_Q8_K_PLANES, kk)) + 64;
}

/* ---- the product ---- */

#define TILE_BLOCK_BYTES (128 * 1024)   /* weight rows per cache block of a tiled product */

/* One input of a product: its rows as floats, and quantized in the formats its weights want. */
typedef struct matmul_input {
    const float *x;
    long x_stride;
    int n;                              /* positions */
    const uint8_t *act[TS_TYPE_COUNT];  /* per activation format: rows of act_stride bytes */
    size_t act_stride[TS_TYPE_COUNT];
} matmul_input;

typedef struct matmul_job {
    const kernel_set *ks;
    int count;
    const weight *w[MATMUL_MAX_MULTI];
    float *y[MATMUL_MAX_MULTI];
    long y_stride[MATMUL_MAX_MULTI];
    long chunk_rows[MATMUL_MAX_MULTI];        /* rows per chunk of each weight */
    long chunks_before[MATMUL_MAX_MULTI + 1]; /* prefix sums of the chunk counts */
    const matmul_input *in[MATMUL_MAX_MULTI]; /* the input each weight reads (and its positions) */
} matmul_job;

/* Whether a batch of n positions on w goes through its type's unpacked rows (below): not where its
 * rows are kept in lanes (those take every batch themselves). */
static bool unpacked_batch(const kernel_set *ks, const weight *w, int n) {
    const type_kernels *tk = ks->types[w->type];
    return !w->lanes && tk && tk->unpack && ks->unpacked && ks->unpacked->tile && n >= ks->unpacked->tile_cols;
}

/* A batch on a grid or ternary type (type_kernels.unpack): rows [lo, hi) unpacked once into
 * block_unpacked rows, then multiplied with every position by the set's tiles over that format.
 * Unpacking a grid costs as much as a whole row dot; done once per chunk instead of once per
 * position, it leaves the integer products alone. Same bits as the row kernel (unpacked_dot.h). */
static bool product_rows_unpacked(const matmul_job *j, int wi, long lo, long hi) {
    const weight *w = j->w[wi];
    const type_kernels *tk = j->ks->types[w->type], *uk = j->ks->unpacked;
    const int64_t k = w->cols, blocks = k / QK_K;
    const size_t urb = (size_t)blocks * sizeof(block_unpacked);
    block_unpacked *u = malloc((size_t)(hi - lo) * urb);
    if (!u) return false;   /* the row kernels then, which need no memory */
    for (long r = lo; r < hi; r++) {
        const uint8_t *row = w->data + (size_t)r * w->row_bytes;
        for (int64_t b = 0; b < blocks; b++) tk->unpack(row + (size_t)b * (w->row_bytes / blocks), u + (r - lo) * blocks + b);
    }
    const matmul_input *in = j->in[wi];
    const uint8_t *act = in->act[uk->act_type], *ub = (const uint8_t *)u;
    const size_t as = in->act_stride[uk->act_type];
    const long ys = j->y_stride[wi], rows = hi - lo, re = rows / uk->tile_rows * uk->tile_rows;
    float *y = j->y[wi] + lo;
    int t = 0;
    for (; t + uk->tile_cols <= in->n; t += uk->tile_cols)
        for (long r = 0; r < re; r += uk->tile_rows)
            uk->tile(ub + (size_t)r * urb, urb, act + (size_t)t * as, as, k, y + (long)t * ys + r, ys);
    for (int tt = 0; tt < in->n; tt++)
        for (long r = tt < t ? re : 0; r < rows; r++) y[(long)tt * ys + r] = uk->dot(ub + (size_t)r * urb, act + (size_t)tt * as, k);
    free(u);
    return true;
}

/* Whether a batch of n positions on a type's rows goes through its rows in lanes (below). */
static bool lanes_batch(const type_kernels *tk, int n) {
    return tk && tk->lanes_tile && n >= tk->lanes_min_cols;
}

/* Rows [lo, hi) of a batch through the type's rows in lanes (type_kernels.lanes_tile), 16 at a
 * time: each 16 rearranged once, then multiplied with every position, 4 at a time. Returns the
 * first row it did not do (lo when it found no memory; the leftover rows of a chunk that is not a
 * multiple of 16 go the usual way). */
static long product_rows_lanes(const matmul_job *j, int wi, long lo, long hi) {
    const weight *w = j->w[wi];
    const type_kernels *tk = j->ks->types[w->type];
    const int64_t k = w->cols;
    uint8_t *u = aligned_alloc(64, (size_t)(k / QK_K) * tk->lanes_sb_bytes);
    if (!u) return lo;
    const matmul_input *in = j->in[wi];
    const uint8_t *act = in->act[tk->act_type];
    const size_t as = in->act_stride[tk->act_type];
    const long ys = j->y_stride[wi];
    float *y = j->y[wi];
    long r = lo;
    for (; r + 16 <= hi; r += 16) {
        tk->lanes_unpack(w->data + (size_t)r * w->row_bytes, w->row_bytes, k, u);
        for (int t = 0; t < in->n; t += 4)
            tk->lanes_tile(u, act + (size_t)t * as, as, k, in->n - t < 4 ? in->n - t : 4, y + (long)t * ys + r, ys);
    }
    free(u);
    return r;
}

const uint8_t *matmul_weight_row(const matmul_ctx *mc, const weight *w, int64_t r, uint8_t *scratch) {
    if (!w->lanes) return w->data + (size_t)r * w->row_bytes;
    const type_kernels *tk = mc->ks->types[w->type];
    tk->lanes_row(w->data + (size_t)(r / 16 * 16) * w->row_bytes, w->row_bytes, w->cols, (int)(r % 16), scratch);
    return scratch;
}

/* Rows [lo, hi) of a weight whose rows are kept in lanes (weight.lanes; lo and hi multiples of 16):
 * each 16 multiplied with every position, the type's widest pass at a time (8, or 16 for Q4_K and
 * Q6_K) while more are left (the codes split once for all of a pass), the rest in one pass; one
 * more than the widest as two halves (widest 8: a speculation's 9 positions as 5 + 4, since 8 + 1
 * would make a pass for one position, which costs nearly what one for four does). */
static void product_rows_packed(const matmul_job *j, int wi, long lo, long hi) {
    const weight *w = j->w[wi];
    const type_kernels *tk = j->ks->types[w->type];
    const matmul_input *in = j->in[wi];
    const uint8_t *act = in->act[lanes_act_type(tk)];
    const size_t as = in->act_stride[lanes_act_type(tk)];
    const long ys = j->y_stride[wi];
    const int widest = tk->lanes_packed_widest ? tk->lanes_packed_widest : 8;
    for (long r = lo; r < hi; r += 16)
        for (int t = 0, nc; t < in->n; t += nc) {
            const int left = in->n - t;
            nc = left == widest + 1 ? (left + 1) / 2 : left < widest ? left : widest;
            tk->lanes_packed(w->data + (size_t)r * w->row_bytes, act + (size_t)t * as, as, w->cols, nc, j->y[wi] + (long)t * ys + r, ys);
        }
}

/* Rows [lo, hi) of w against positions [t0, t1) (a matrix-vector product, a batch too small for a
 * tile, or the positions a tile does not fill): four rows at a time when the type has a 4 x 1
 * kernel (the activation's loads and sums then serve four rows; bitwise its dot), each row with
 * software prefetch ahead of it; the rest row by row. */
static void rows_by_four(const type_kernels *tk, const weight *w, const uint8_t *act, size_t as, float *y, long ys,
                         long lo, long hi, int t0, int t1) {
    const size_t wsz = w->row_bytes;
    const int64_t k = w->cols;
    long r = lo;
    if (tk->rows4)
        for (; r + 4 <= hi; r += 4)
            for (int t = t0; t < t1; t++)
                tk->rows4(w->data + (size_t)r * wsz, wsz, act + (size_t)t * as, as, k, y + (long)t * ys + r, ys);
    for (; r < hi; r++) {
        const uint8_t *wr = w->data + (size_t)r * wsz;
        for (int t = t0; t < t1; t++) y[(long)t * ys + r] = tk->dot(wr, act + (size_t)t * as, k);
    }
}

/* Rows [lo, hi) of one weight (one chunk of matmul_chunk) against all n positions. */
static void product_rows(const matmul_job *j, int wi, long lo, long hi) {
    const weight *w = j->w[wi];
    float *y = j->y[wi];
    const long ys = j->y_stride[wi];
    const matmul_input *in = j->in[wi];
    const int n = in->n;
    const type_kernels *tk = j->ks->types[w->type];
    if (!tk) {   /* the scalar reference */
        const type_traits *tt = type_get(w->type);
        for (long r = lo; r < hi; r++) {
            const uint8_t *row = w->data + (size_t)r * w->row_bytes;
            for (int t = 0; t < n; t++) y[(long)t * ys + r] = tt->dot_f32(row, in->x + (long)t * in->x_stride, w->cols);
        }
        return;
    }
    if (w->lanes) { product_rows_packed(j, wi, lo, hi); return; }
    if (unpacked_batch(j->ks, w, n) && product_rows_unpacked(j, wi, lo, hi)) return;
    if (lanes_batch(tk, n) && (lo = product_rows_lanes(j, wi, lo, hi)) == hi) return;
    const uint8_t *act = in->act[tk->act_type];
    const size_t as = in->act_stride[tk->act_type], wsz = w->row_bytes;
    const int64_t k = w->cols;
    long r = lo;
    /* Register tiles when the batch fills one: the tile's rows are read from memory once for
     * tile_cols positions. [lo, hi) is one chunk, a cache block of about TILE_BLOCK_BYTES
     * (chunk_rows_of), multiplied by every group of positions in turn, so the block stays in the L2
     * cache while the activations of a group stay in L1. A matrix-vector product reads each row in
     * turn instead: streaming several rows at once defeated the hardware prefetcher here (8 vs 25
     * GB/s measured), and memory bandwidth is the limit there anyway. */
    if (tk->tile && n >= tk->tile_cols) {
        const int tr = tk->tile_rows, tc = tk->tile_cols;
        const long re = lo + (hi - lo) / tr * tr;     /* whole tiles; the leftover rows come last */
        int t = 0;
        for (; t + tc <= n; t += tc)
            for (long rr = lo; rr < re; rr += tr)
                tk->tile(w->data + (size_t)rr * wsz, wsz, act + (size_t)t * as, as, k, y + (long)t * ys + rr, ys);
        rows_by_four(tk, w, act, as, y, ys, lo, re, t, n);   /* the positions a tile does not fill */
        r = re;
    }
    rows_by_four(tk, w, act, as, y, ys, r, hi, 0, n);
}

/* Chunk i of the job: rows of one weight, whole tiles (or groups of 4 rows) but for its last. */
static void matmul_chunk(void *ctx, long i) {
    const matmul_job *j = ctx;
    int wi = 0;
    while (i >= j->chunks_before[wi + 1]) wi++;
    const long rows = j->w[wi]->rows, lo = (i - j->chunks_before[wi]) * j->chunk_rows[wi];
    const long hi = lo + j->chunk_rows[wi] < rows ? lo + j->chunk_rows[wi] : rows;
    product_rows(j, wi, lo, hi);
    const float scale = j->w[wi]->scale;
    if (scale != 0.0f && scale != 1.0f)   /* the weight's per-tensor scale (weight.h) */
        for (int t = 0; t < j->in[wi]->n; t++) {
            float *y = j->y[wi] + (long)t * j->y_stride[wi];
            for (long r = lo; r < hi; r++) y[r] *= scale;
        }
}

/* Rows per chunk of weight w: a cache block of tiles for a batch, about MATVEC_CHUNK_BYTES of
 * rows (a multiple of 4) for a matrix-vector product: small enough that the threads end a
 * product together, large enough that taking one costs nothing. */
#define MATVEC_CHUNK_BYTES (64 * 1024)
static long chunk_rows_of(const kernel_set *ks, const weight *w, int n) {
    const type_kernels *tk = ks->types[w->type];
    if (w->lanes && n < 5) {   /* a matrix-vector product's chunk, in whole groups of 16 rows */
        long rows = (long)(MATVEC_CHUNK_BYTES / w->row_bytes) / 16 * 16;
        return rows < 16 ? 16 : rows;
    }
    if (unpacked_batch(ks, w, n)) {
        /* a cache block of the unpacked rows */
        long block = (long)(TILE_BLOCK_BYTES / ((size_t)(w->cols / QK_K) * sizeof(block_unpacked))) / 4 * 4;
        return block < 4 ? 4 : block;
    }
    if (lanes_batch(tk, n) || w->lanes) {   /* whole groups of 16 rows */
        long block = (long)(TILE_BLOCK_BYTES / w->row_bytes) / 16 * 16;
        return block < 16 ? 16 : block;
    }
    if (tk && tk->tile && n >= tk->tile_cols) {
        long block = (long)(TILE_BLOCK_BYTES / w->row_bytes) / tk->tile_rows * tk->tile_rows;
        return block < tk->tile_rows ? tk->tile_rows : block;
    }
    long rows = (long)(MATVEC_CHUNK_BYTES / w->row_bytes) / 4 * 4;
    return rows < 4 ? 4 : rows;
}

typedef struct quantize_fmt { quantize_act_fn quant; const float *x; long x_stride; uint8_t *dst; size_t stride; int64_t k; int n; } quantize_fmt;
typedef struct quantize_job {
    int n_fmt;
    long rows;                                /* of all formats together */
    quantize_fmt fmt[2 * MATMUL_MAX_MULTI];   /* per input: its weights' row kernels' and unpacked rows' formats */
} quantize_job;

static void quantize_task(void *ctx, int ith, int nth) {
    const quantize_job *q = ctx;
    long lo, hi;
    split_range(q->rows, ith, nth, &lo, &hi);
    long first = 0;   /* the first row of format f */
    for (int f = 0; f < q->n_fmt && first < hi; first += q->fmt[f++].n) {
        const quantize_fmt *qf = &q->fmt[f];
        for (long t = lo > first ? lo - first : 0; t < qf->n && first + t < hi; t++)
            qf->quant(qf->x + t * qf->x_stride, qf->dst + (size_t)t * qf->stride, qf->k);
    }
}

/* The products of count weights, weight i reading input in_of[i] of inputs[] (each with its own
 * positions), in one pass of the pool; each input is quantized once per activation format its
 * weights want. */
static void run_products(const matmul_ctx *mc, int count, const weight *const *ws, matmul_input *inputs,
                         const int *in_of, float *const *ys, const long *y_strides) {
    const kernel_set *ks = mc->ks ? mc->ks : kernel_set_for(SIMD_SCALAR);
    matmul_job j = { .ks = ks };
    quantize_job q = { 0 };
    uint8_t *scratch = mc->act;
    for (int i = 0; i < count && j.count < MATMUL_MAX_MULTI; i++) {
        if (!ws[i] || !ws[i]->data) continue;
        matmul_input *in = &inputs[in_of[i]];
        const int n = in->n;
        j.w[j.count] = ws[i];
        j.y[j.count] = ys[i];
        j.y_stride[j.count] = y_strides[i];
        j.in[j.count] = in;
        j.chunk_rows[j.count] = chunk_rows_of(ks, ws[i], n);
        j.chunks_before[j.count + 1] = j.chunks_before[j.count] + (ws[i]->rows + j.chunk_rows[j.count] - 1) / j.chunk_rows[j.count];
        j.count++;
        if (mc->weight_bytes) *mc->weight_bytes += (uint64_t)ws[i]->rows * ws[i]->row_bytes;
        in->act[TS_F32] = (const uint8_t *)in->x;
        in->act_stride[TS_F32] = (size_t)in->x_stride * sizeof(float);
        const type_kernels *tk = ks->types[ws[i]->type];
        if (!tk) continue;
        /* the row kernels' format (the packed rows' for rows in lanes), and the unpacked rows' where a
         * batch goes through them (the row kernels stay the fallback there, should unpacking find no
         * memory) */
        const int formats[2] = { ws[i]->lanes ? lanes_act_type(tk) : tk->act_type,
                                 unpacked_batch(ks, ws[i], n) ? ks->unpacked->act_type : TS_F32 };
        for (int f = 0; f < 2; f++) {
            const int at = formats[f];
            if (at == TS_F32 || in->act[at]) continue;
            size_t stride = act_row_bytes(at, ws[i]->cols);
            q.fmt[q.n_fmt++] = (quantize_fmt){ act_quantizer(ks, at), in->x, in->x_stride, scratch, stride, ws[i]->cols, n };
            q.rows += n;
            in->act[at] = scratch;
            in->act_stride[at] = stride;
            scratch += (size_t)n * stride;
        }
    }
    if (j.count == 0) return;
    if (q.n_fmt > 0) {
        /* a batch's rows are quantized by the pool too (each row by one thread: same result) */
        if (q.rows >= 8) thread_pool_run(mc->pool, quantize_task, &q);
        else quantize_task(&q, 0, 1);
    }
    thread_pool_run_chunks(mc->pool, matmul_chunk, &j, j.chunks_before[j.count]);
}

void matmul_multi(const matmul_ctx *mc, int count, const weight *const *ws, const float *x,
                  long x_stride, int n, float *const *ys, const long *y_strides) {
    matmul_input input = { .x = x, .x_stride = x_stride, .n = n };
    int in_of[MATMUL_MAX_MULTI] = { 0 };
    run_products(mc, count, ws, &input, in_of, ys, y_strides);
}

void matmul_each_n(const matmul_ctx *mc, int count, const weight *const *ws, const float *const *xs,
                   const long *x_strides, const int *ns, float *const *ys, const long *y_strides) {
    matmul_input inputs[MATMUL_MAX_MULTI];
    int in_of[MATMUL_MAX_MULTI], n_inputs = 0;
    for (int i = 0; i < count && i < MATMUL_MAX_MULTI; i++) {
        int k = 0;   /* an input already listed (the same rows) is quantized once */
        while (k < n_inputs && !(inputs[k].x == xs[i] && inputs[k].x_stride == x_strides[i] && inputs[k].n == ns[i])) k++;
        if (k == n_inputs) inputs[n_inputs++] = (matmul_input){ .x = xs[i], .x_stride = x_strides[i], .n = ns[i] };
        in_of[i] = k;
    }
    run_products(mc, count, ws, inputs, in_of, ys, y_strides);
}

void matmul_each(const matmul_ctx *mc, int count, const weight *const *ws, const float *const *xs,
                 long x_stride, int n, float *const *ys, const long *y_strides) {
    long st[MATMUL_MAX_MULTI];
    int ns[MATMUL_MAX_MULTI];
    for (int i = 0; i < count && i < MATMUL_MAX_MULTI; i++) { st[i] = x_stride; ns[i] = n; }
    matmul_each_n(mc, count, ws, xs, st, ns, ys, y_strides);
}

void matmul(const matmul_ctx *mc, const weight *w, const float *x, long x_stride, int n,
            float *y, long y_stride) {
    matmul_multi(mc, 1, &w, x, x_stride, n, &y, &y_stride);
}
