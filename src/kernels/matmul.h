/* Matrix products of weight rows with activation rows: the one place the forward spends its time.
 * y[t][r] = W[r] . x[t] for t < n, rows split across the thread pool. Each output is computed by
 * the same code whichever thread or batch size, so threaded and batched runs are exact. */
#ifndef TS_KERNELS_MATMUL_H
#define TS_KERNELS_MATMUL_H
#include "model/geometry.h"
#include "core/threadpool.h"

void matmul(thread_pool *pool, const weight *w, const float *x, long x_stride, int n,
            float *y, long y_stride);

#endif
