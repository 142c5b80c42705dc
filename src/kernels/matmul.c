#include "kernels/matmul.h"
#include "kernels/types.h"

typedef struct matmul_job {
    const weight *w;
    const float *x; long x_stride;
    float *y; long y_stride;
    int n;
} matmul_job;

static void matmul_task(void *ctx, int ith, int nth) {
    const matmul_job *j = ctx;
    const type_traits *tt = type_get(j->w->type);
    long lo, hi;
    split_range((long)j->w->rows, ith, nth, &lo, &hi);
    for (long r = lo; r < hi; r++) {
        const uint8_t *row = j->w->data + (size_t)r * j->w->row_bytes;
        for (int t = 0; t < j->n; t++)
            j->y[(long)t * j->y_stride + r] = tt->dot_f32(row, j->x + (long)t * j->x_stride, j->w->cols);
    }
}

void matmul(thread_pool *pool, const weight *w, const float *x, long x_stride, int n,
            float *y, long y_stride) {
    matmul_job j = { w, x, x_stride, y, y_stride, n };
    thread_pool_run(pool, matmul_task, &j);
}
