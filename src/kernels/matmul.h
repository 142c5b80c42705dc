/* Matrix products of weight rows with activation rows: the one place the forward spends its time.
 * y[t][r] = W[r] . x[t] for t < n, rows split across the thread pool.
 *
 * With a SIMD kernel set the activations are first quantized to the 8-bit format the weight type
 * wants (once per input, shared by every weight that reads it); a batch is then multiplied in
 * register tiles (4 rows x 4 positions for the quantized types, 1 row x 4 positions for the float
 * types) and a single position row by row. Every output is computed by the same sequence of
 * operations whichever thread, tile or batch size computes it, so threaded, batched and
 * one-at-a-time runs agree bit for bit. With the scalar set every output is the reference
 * type_traits.dot_f32 on the f32 activations. */
#ifndef TS_KERNELS_MATMUL_H
#define TS_KERNELS_MATMUL_H
#include <stddef.h>
#include <stdint.h>
#include "kernels/weight.h"
#include "core/thread_pool.h"

struct kernel_set;

/* What a matmul needs besides its operands; owned by a context. */
typedef struct matmul_ctx {
    thread_pool *pool;
    const struct kernel_set *ks;
    uint8_t *act;          /* scratch for the quantized activations */
    size_t act_bytes;
    uint64_t *weight_bytes;   /* NULL, or a counter of the weight bytes the products read */
} matmul_ctx;

/* Scratch bytes for inputs of up to max_n positions of up to max_k values. */
size_t matmul_scratch_bytes(int max_n, int64_t max_k);

/* The kernel set of a SIMD level (enum simd_level), NULL when it is not compiled in. */
const struct kernel_set *matmul_kernels(int simd_level);
int matmul_kernels_level(const struct kernel_set *ks);

void matmul(const matmul_ctx *mc, const weight *w, const float *x, long x_stride, int n,
            float *y, long y_stride);

/* Row r of w in its type's own layout: in w->data, or (rows kept in lanes: weight.lanes) put
 * together in scratch (w->row_bytes). For lookups such as a tied embedding's. */
const uint8_t *matmul_weight_row(const matmul_ctx *mc, const weight *w, int64_t r, uint8_t *scratch);

/* The most weights one call multiplies. */
#define MATMUL_MAX_MULTI 32

/* Several weights reading the same input (Q, K and V; gate and up): one quantization of x and
 * one pass of the thread pool. ws[i] NULL is skipped. */
void matmul_multi(const matmul_ctx *mc, int count, const weight *const *ws, const float *x,
                  long x_stride, int n, float *const *ys, const long *y_strides);

/* Several weights, each with its own input of n positions (a decoded token's experts): one pass of
 * the pool. The scratch holds count x n rows at most (count x n <= the max_n it was sized for). */
void matmul_each(const matmul_ctx *mc, int count, const weight *const *ws, const float *const *xs,
                 long x_stride, int n, float *const *ys, const long *y_strides);

/* The same with each input's own stride and positions (the experts of a batch on the tokens that
 * chose them). Inputs given twice (the same x, stride and positions) are quantized once; the
 * scratch holds the distinct inputs' positions together (their sum <= the max_n it was sized
 * for). Each product has the bits it has alone. */
void matmul_each_n(const matmul_ctx *mc, int count, const weight *const *ws, const float *const *xs,
                   const long *x_strides, const int *ns, float *const *ys, const long *y_strides);

#endif
