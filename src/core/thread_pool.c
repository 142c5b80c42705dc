/* Workers spin briefly on the run counter before sleeping: a decoded token runs the pool ~160
 * times, and a condition-variable wake-up per run costs as much as the work of a small matmul. */
#include "core/thread_pool.h"
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>

/* ~1000 pauses is tens of microseconds: it covers the serial work between two runs of one forward
 * (decode ran 1.35x faster than sleeping on every run), while a machine with other busy processes
 * loses little (a longer spin halved decode speed there). */
#define SPIN_POLLS 1000

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
};

struct worker_arg { thread_pool *pool; int ith; };

static inline void cpu_relax(void) {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    __asm__ __volatile__("yield");
#endif
}

static void *worker_main(void *arg) {
    struct worker_arg *a = arg;
    thread_pool *p = a->pool;
    unsigned long seen = 0;
    for (;;) {
        for (int i = 0; i < SPIN_POLLS && atomic_load_explicit(&p->generation, memory_order_acquire) == seen &&
                        !atomic_load_explicit(&p->quit, memory_order_relaxed); i++)
            cpu_relax();
        if (atomic_load_explicit(&p->generation, memory_order_acquire) == seen) {
            pthread_mutex_lock(&p->mu);
            while (atomic_load(&p->generation) == seen && !atomic_load(&p->quit))
                pthread_cond_wait(&p->start, &p->mu);
            pthread_mutex_unlock(&p->mu);
        }
        if (atomic_load(&p->quit)) return NULL;
        seen = atomic_load_explicit(&p->generation, memory_order_acquire);

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
    pthread_mutex_init(&p->mu, NULL);
    pthread_cond_init(&p->start, NULL);
    pthread_cond_init(&p->done, NULL);
    atomic_init(&p->generation, 0);
    atomic_init(&p->pending, 0);
    atomic_init(&p->quit, false);
    if (n_threads > 1) {
        p->workers = calloc((size_t)n_threads - 1, sizeof *p->workers);
        p->args = calloc((size_t)n_threads - 1, sizeof *p->args);
        if (!p->workers || !p->args) { free(p->workers); free(p->args); free(p); return NULL; }
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
    free(p);
}

int thread_pool_size(const thread_pool *p) { return p ? p->n : 1; }

void thread_pool_run(thread_pool *p, thread_task fn, void *ctx) {
    if (!p || p->n == 1) { fn(ctx, 0, 1); return; }
    p->fn = fn;
    p->ctx = ctx;
    atomic_store_explicit(&p->pending, p->n - 1, memory_order_relaxed);
    pthread_mutex_lock(&p->mu);       /* sleeping workers check the counter under the lock */
    atomic_fetch_add_explicit(&p->generation, 1, memory_order_release);
    pthread_cond_broadcast(&p->start);
    pthread_mutex_unlock(&p->mu);

    fn(ctx, 0, p->n);

    for (int i = 0; i < SPIN_POLLS && atomic_load_explicit(&p->pending, memory_order_acquire) > 0; i++) cpu_relax();
    if (atomic_load_explicit(&p->pending, memory_order_acquire) > 0) {
        pthread_mutex_lock(&p->mu);
        while (atomic_load(&p->pending) > 0) pthread_cond_wait(&p->done, &p->mu);
        pthread_mutex_unlock(&p->mu);
    }
}
