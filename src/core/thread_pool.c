/* Workers poll the run counter before sleeping: a decoded token runs the pool ~160 times, and a
 * condition-variable wake-up per run costs as much as the work of a small matmul.
 *
 * Two kinds of run. thread_pool_run gives every thread its share (ith of nth) and waits for all.
 * thread_pool_run_chunks gives each thread a contiguous slice of numbered chunks; a thread out of
 * chunks takes the others' from their ends, and a worker joins only if the run is still open when
 * it arrives. On a virtual machine a sleeping worker can take hundreds of microseconds to wake,
 * and with fixed shares the caller waited for it: in a mixture-of-experts decode, 21% of the time.
 * Which thread computes a chunk never changes its result. */
#include "core/thread_pool.h"
#include <pthread.h>
#include <sched.h>
#include <sys/resource.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>

/* How long a waiting thread polls before it sleeps. ~1000 pauses (tens of microseconds) cover the
 * serial work between two runs of one forward (decode ran 1.35x faster than sleeping on every
 * run); 25x that also covers the uneven ends of the runs, which on a virtual machine saves the
 * slow wake-up of a sleeping virtual CPU (14% of a mixture-of-experts decode's profile samples
 * were the pool's futex waits and wake-ups). A long poll is only for a thread the scheduler
 * leaves alone: when other processes want the CPUs, polling steals from the thread being waited
 * for (a long poll made decode 2.5x slower beside one busy process), so each thread counts how
 * often it was preempted (involuntary context switches) and polls long only after quiet windows. */
#define SPIN_POLLS 1000
#define SPIN_POLLS_QUIET 25000
#define SPIN_WINDOW 64          /* waits between two looks at the preemption count */

typedef struct spin_budget { int polls, waits, quiet; long preempted; } spin_budget;

/* Called once per wait: every SPIN_WINDOW waits, a look at how often this thread was preempted
 * since the last look; long polls after QUIET_WINDOWS windows in a row of at most a few (a busy
 * neighbour preempts a polling thread tens of times a window, and the odd quiet window among them
 * must not switch long polls on). */
#define QUIET_WINDOWS 4
static void spin_budget_update(spin_budget *b) {
    if (++b->waits < SPIN_WINDOW) return;
    b->waits = 0;
#ifdef RUSAGE_THREAD
    struct rusage ru;
    if (getrusage(RUSAGE_THREAD, &ru) == 0) {
        b->quiet = ru.ru_nivcsw - b->preempted <= 4 ? b->quiet + 1 : 0;
        b->preempted = ru.ru_nivcsw;
    } else {
        b->quiet = 0;
    }
#endif
    b->polls = b->quiet >= QUIET_WINDOWS ? SPIN_POLLS_QUIET : SPIN_POLLS;
}

struct thread_pool {
    int n;                         /* threads including the caller */
    pthread_t *workers;            /* n - 1 of them */
    struct worker_arg *args;
    pthread_mutex_t mu;
    pthread_cond_t start, done;
    atomic_ulong generation;       /* bumped for every run */
    atomic_int pending;            /* workers still running the current task */
    atomic_bool quit;
    thread_task fn;                /* written before generation is bumped */
    void *ctx;
    spin_budget caller;            /* the calling thread's */
    /* the current chunked run (thread_pool_run_chunks) */
    chunk_task chunk_fn;
    struct chunk_slice *slices;    /* one per thread */
    _Alignas(64) atomic_ulong open_run;   /* its generation while workers may join it, else 0 */
    atomic_int inside;                    /* workers that joined it and have not left */
};

/* A thread's slice of a chunked run: chunks [front, back) packed as front << 32 | back. The owner
 * takes from the front, a thread that has run out of its own takes from the back. */
struct chunk_slice { _Alignas(64) atomic_ullong range; };

#define CHUNKED_RUN (1ul << 63)   /* a generation with this bit is a chunked run */

struct worker_arg { thread_pool *pool; int ith; };

static inline void cpu_relax(void) {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    __asm__ __volatile__("yield");
#endif
}

/* The next chunks of a slice: from its front (the owner) an eighth of what is left, at least one;
 * from its back (a helper) one. Returns how many, the first at *first; 0 when empty. Each take is
 * a locked compare-exchange, which waits for the thread's stores before it: taken one 64 KB chunk
 * at a time they were 3% of a decode's time; an eighth at a time, the owner takes a slice of n
 * chunks in about 8 ln n steps and still one at a time at its end, so threads end a run together. */
static long take_chunks(struct chunk_slice *sl, bool from_back, long *first) {
    unsigned long long v = atomic_load_explicit(&sl->range, memory_order_relaxed);
    for (;;) {
        unsigned long long front = v >> 32, back = v & 0xffffffffu;
        if (front >= back) return 0;
        unsigned long long take = from_back ? 1 : (back - front) / 8 > 1 ? (back - front) / 8 : 1;
        unsigned long long next = from_back ? front << 32 | (back - 1) : (front + take) << 32 | back;
        if (atomic_compare_exchange_weak_explicit(&sl->range, &v, next, memory_order_relaxed, memory_order_relaxed)) {
            *first = (long)(from_back ? back - 1 : front);
            return (long)take;
        }
    }
}

/* Thread ith's part of a chunked run: its own slice front to back (one stream through memory),
 * then what is left of the others', from their backs. */
static void do_chunks(thread_pool *p, int ith) {
    long first, n;
    while ((n = take_chunks(&p->slices[ith], false, &first)) > 0)
        for (long i = first; i < first + n; i++) p->chunk_fn(p->ctx, i);
    for (int k = 1; k < p->n; k++) {
        struct chunk_slice *other = &p->slices[(ith + k) % p->n];
        while (take_chunks(other, true, &first) > 0) p->chunk_fn(p->ctx, first);
    }
}

/* A worker arriving at chunked run `gen` joins only if the run is still open: it announces
 * itself, then looks; the caller closes the run, then waits for those inside (both sides
 * sequentially consistent, so either the worker sees the close or the caller sees the worker). */
static void join_chunked(thread_pool *p, int ith, unsigned long gen) {
    atomic_fetch_add(&p->inside, 1);
    if (atomic_load(&p->open_run) == gen) do_chunks(p, ith);
    atomic_fetch_sub_explicit(&p->inside, 1, memory_order_release);
}

static void *worker_main(void *arg) {
    struct worker_arg *a = arg;
    thread_pool *p = a->pool;
    unsigned long seen = 0;
    spin_budget budget = { SPIN_POLLS, 0, 0, 0 };
    for (;;) {
        spin_budget_update(&budget);
        for (int i = 0; i < budget.polls && atomic_load_explicit(&p->generation, memory_order_acquire) == seen &&
                        !atomic_load_explicit(&p->quit, memory_order_relaxed); i++)
            cpu_relax();
        if (atomic_load_explicit(&p->generation, memory_order_acquire) == seen) {
            pthread_mutex_lock(&p->mu);
            while (atomic_load(&p->generation) == seen && !atomic_load(&p->quit))
                pthread_cond_wait(&p->start, &p->mu);
            pthread_mutex_unlock(&p->mu);
        }
        if (atomic_load(&p->quit)) return NULL;
        /* A shared run cannot be overtaken (the caller waits for every worker), so the newest
         * generation is the run to do; a chunked run may be over already, which join sees. */
        seen = atomic_load_explicit(&p->generation, memory_order_acquire);
        if (seen & CHUNKED_RUN) { join_chunked(p, a->ith, seen); continue; }

        p->fn(p->ctx, a->ith, p->n);

        if (atomic_fetch_sub_explicit(&p->pending, 1, memory_order_acq_rel) == 1) {
            pthread_mutex_lock(&p->mu);
            pthread_cond_signal(&p->done);
            pthread_mutex_unlock(&p->mu);
        }
    }
}

thread_pool *thread_pool_new(int n_threads) {
    if (n_threads < 1) n_threads = 1;
    if (n_threads > 256) n_threads = 256;
    thread_pool *p = calloc(1, sizeof *p);
    if (!p) return NULL;
    p->n = n_threads;
    p->caller = (spin_budget){ SPIN_POLLS, 0, 0, 0 };
    p->slices = aligned_alloc(64, (size_t)n_threads * sizeof *p->slices);
    if (!p->slices) { free(p); return NULL; }
    for (int i = 0; i < n_threads; i++) atomic_init(&p->slices[i].range, 0);
    atomic_init(&p->open_run, 0);
    atomic_init(&p->inside, 0);
    pthread_mutex_init(&p->mu, NULL);
    pthread_cond_init(&p->start, NULL);
    pthread_cond_init(&p->done, NULL);
    atomic_init(&p->generation, 0);
    atomic_init(&p->pending, 0);
    atomic_init(&p->quit, false);
    if (n_threads > 1) {
        p->workers = calloc((size_t)n_threads - 1, sizeof *p->workers);
        p->args = calloc((size_t)n_threads - 1, sizeof *p->args);
        if (!p->workers || !p->args) { free(p->workers); free(p->args); free(p->slices); free(p); return NULL; }
        for (int i = 0; i < n_threads - 1; i++) {
            p->args[i] = (struct worker_arg){ p, i + 1 };
            if (pthread_create(&p->workers[i], NULL, worker_main, &p->args[i]) != 0) {
                p->n = i + 1;           /* run with the threads we got */
                break;
            }
        }
    }
    return p;
}

void thread_pool_free(thread_pool *p) {
    if (!p) return;
    pthread_mutex_lock(&p->mu);
    atomic_store(&p->quit, true);
    pthread_cond_broadcast(&p->start);
    pthread_mutex_unlock(&p->mu);
    for (int i = 0; i < p->n - 1; i++) pthread_join(p->workers[i], NULL);
    pthread_mutex_destroy(&p->mu);
    pthread_cond_destroy(&p->start);
    pthread_cond_destroy(&p->done);
    free(p->workers);
    free(p->args);
    free(p->slices);
    free(p);
}

int thread_pool_size(const thread_pool *p) { return p ? p->n : 1; }

/* The next generation, of a chunked run or not, published under the lock (sleeping workers check
 * it there) with a wake-up for them. */
static unsigned long publish_run(thread_pool *p, bool chunked) {
    unsigned long gen = ((atomic_load_explicit(&p->generation, memory_order_relaxed) & ~CHUNKED_RUN) + 1) & ~CHUNKED_RUN;
    if (gen == 0) gen = 1;                      /* 0 means "no run open" */
    if (chunked) {
        gen |= CHUNKED_RUN;
        atomic_store(&p->open_run, gen);
    }
    pthread_mutex_lock(&p->mu);
    atomic_store_explicit(&p->generation, gen, memory_order_release);
    pthread_cond_broadcast(&p->start);
    pthread_mutex_unlock(&p->mu);
    return gen;
}

void thread_pool_run(thread_pool *p, thread_task fn, void *ctx) {
    if (!p || p->n == 1) { fn(ctx, 0, 1); return; }
    p->fn = fn;
    p->ctx = ctx;
    atomic_store_explicit(&p->pending, p->n - 1, memory_order_relaxed);
    publish_run(p, false);

    fn(ctx, 0, p->n);

    spin_budget_update(&p->caller);
    for (int i = 0; i < p->caller.polls && atomic_load_explicit(&p->pending, memory_order_acquire) > 0; i++) cpu_relax();
    if (atomic_load_explicit(&p->pending, memory_order_acquire) > 0) {
        pthread_mutex_lock(&p->mu);
        while (atomic_load(&p->pending) > 0) pthread_cond_wait(&p->done, &p->mu);
        pthread_mutex_unlock(&p->mu);
    }
}

void thread_pool_run_chunks(thread_pool *p, chunk_task fn, void *ctx, long n_chunks) {
    if (!p || p->n == 1 || n_chunks < 2 || n_chunks > 0xffffffffL) {
        for (long i = 0; i < n_chunks; i++) fn(ctx, i);
        return;
    }
    p->chunk_fn = fn;
    p->ctx = ctx;
    for (int t = 0; t < p->n; t++) {
        long lo, hi;
        split_range(n_chunks, t, p->n, &lo, &hi);
        atomic_store_explicit(&p->slices[t].range, (unsigned long long)lo << 32 | (unsigned long long)hi, memory_order_relaxed);
    }
    publish_run(p, true);

    do_chunks(p, 0);

    /* every chunk is taken: close the run, then wait for the workers computing their last ones.
     * The load of `inside` is sequentially consistent like the store before it (join_chunked's
     * comment): an acquire load alone may, in C11's model, read a stale 0 while a worker reads the
     * run still open; x86 and ARMv8 happen to order the two, the model does not promise it. */
    atomic_store(&p->open_run, 0);
    spin_budget_update(&p->caller);
    for (int i = 0; atomic_load(&p->inside) > 0; i++)
        if (i < p->caller.polls) cpu_relax();
        else sched_yield();
}
