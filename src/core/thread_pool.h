/* A fixed pool of worker threads, created once. thread_pool_run hands the same function to every
 * thread (the caller is thread 0) and returns when all are done; work is split by the thread index,
 * so results never depend on scheduling. */
#ifndef TS_CORE_THREAD_POOL_H
#define TS_CORE_THREAD_POOL_H

typedef struct thread_pool thread_pool;
typedef void (*thread_task)(void *ctx, int ith, int nth);

/* n_threads counts the caller; NULL on failure. */
thread_pool *thread_pool_new(int n_threads);
void thread_pool_free(thread_pool *p);
int  thread_pool_size(const thread_pool *p);
void thread_pool_run(thread_pool *p, thread_task fn, void *ctx);

/* [*lo, *hi) = the ith of nth near-equal slices of [0, n). */
static inline void split_range(long n, int ith, int nth, long *lo, long *hi) {
    long base = n / nth, rem = n % nth;
    *lo = ith * base + (ith < rem ? ith : rem);
    *hi = *lo + base + (ith < rem ? 1 : 0);
}

#endif
