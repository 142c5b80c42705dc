/* A fixed pool of worker threads, created once. thread_pool_run hands the same function to every
 * thread (the caller is thread 0) and returns when all are done; work is split by the thread index,
 * so results never depend on scheduling. thread_pool_run_chunks shares numbered chunks out instead,
 * for work whose every chunk gives the same result whoever computes it. */
#ifndef TS_CORE_THREAD_POOL_H
#define TS_CORE_THREAD_POOL_H

typedef struct thread_pool thread_pool;
typedef void (*thread_task)(void *ctx, int ith, int nth);

/* n_threads counts the caller; NULL on failure. */
thread_pool *thread_pool_new(int n_threads);
void thread_pool_free(thread_pool *p);
int  thread_pool_size(const thread_pool *p);
void thread_pool_run(thread_pool *p, thread_task fn, void *ctx);
/* fn(ctx, i) for every i in [0, n_chunks), each once, by whichever threads are there: for work
 * whose result does not depend on the thread that does it. Each thread starts on its own
 * contiguous share; one that finishes takes the rest of another's from its end, and a worker that
 * wakes after every chunk is taken is not waited for. Returns when all are done. */
typedef void (*chunk_task)(void *ctx, long chunk);
void thread_pool_run_chunks(thread_pool *p, chunk_task fn, void *ctx, long n_chunks);

/* [*lo, *hi) = the ith of nth near-equal slices of [0, n). */
static inline void split_range(long n, int ith, int nth, long *lo, long *hi) {
    long base = n / nth, rem = n % nth;
    *lo = ith * base + (ith < rem ? ith : rem);
    *hi = *lo + base + (ith < rem ? 1 : 0);
}

#endif
