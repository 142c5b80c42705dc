/* The thread pool: a shared run gives every thread its share once; a chunked run computes every
 * chunk exactly once whoever takes it, including when a worker arrives late (still busy with
 * the previous run, or asleep) and when runs of the two kinds alternate quickly. */
#include "check.h"
#include "core/thread_pool.h"
#include <stdatomic.h>
#include <string.h>
#include <time.h>

#define MAX_CHUNKS 400

typedef struct counts {
    atomic_int chunk[MAX_CHUNKS];
    atomic_int share[8];
    int slow_ith;          /* this thread sleeps in its share of a shared run (-1: none) */
} counts;

static void chunk_fn(void *ctx, long i) {
    counts *c = ctx;
    volatile double x = 0;
    for (int k = 0; k < (int)(i % 7) * 200; k++) x += k;   /* uneven chunks */
    atomic_fetch_add(&c->chunk[i], 1);
}

static void share_fn(void *ctx, int ith, int nth) {
    counts *c = ctx;
    if (ith == c->slow_ith) nanosleep(&(struct timespec){ 0, 2000000 }, NULL);
    atomic_fetch_add(&c->share[ith], 1);
}

static void reset(counts *c) {
    for (int i = 0; i < MAX_CHUNKS; i++) atomic_store(&c->chunk[i], 0);
    for (int i = 0; i < 8; i++) atomic_store(&c->share[i], 0);
}

int main(void) {
    static counts c;
    unsigned seed = 12345;
    const int sizes[] = { 1, 2, 3, 5 };
    for (int si = 0; si < 4; si++) {
        const int nt = sizes[si];
        thread_pool *p = thread_pool_new(nt);
        CHECK(p && thread_pool_size(p) == nt, "pool of %d threads", nt);
        int bad_chunks = 0, bad_shares = 0;
        for (int it = 0; it < 3000; it++) {
            seed = seed * 1103515245u + 12345u;
            const long n = (long)(seed >> 8) % MAX_CHUNKS;
            reset(&c);
            /* now and then a shared run whose worker sleeps, so the next chunked run starts
             * while that worker is still away or asleep */
            c.slow_ith = it % 97 == 0 && nt > 1 ? nt - 1 : -1;
            if (it % 3 == 0 || c.slow_ith >= 0) {
                thread_pool_run(p, share_fn, &c);
                for (int t = 0; t < nt; t++) bad_shares += atomic_load(&c.share[t]) != 1;
                for (int t = nt; t < 8; t++) bad_shares += atomic_load(&c.share[t]) != 0;
            }
            thread_pool_run_chunks(p, chunk_fn, &c, n);
            for (long i = 0; i < MAX_CHUNKS; i++) bad_chunks += atomic_load(&c.chunk[i]) != (i < n);
        }
        CHECK(bad_shares == 0, "%d threads: 1000+ shared runs gave each thread its share once (%d wrong)", nt, bad_shares);
        CHECK(bad_chunks == 0, "%d threads: 3000 chunked runs of 0-399 chunks computed each chunk exactly once (%d wrong)", nt, bad_chunks);
        thread_pool_free(p);
    }
    CHECK_EXIT();
}
