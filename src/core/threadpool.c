#include "core/threadpool.h"
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>

struct thread_pool {
    int n;                      /* threads including the caller */
    pthread_t *workers;         /* n - 1 of them */
    struct worker_arg *args;
    pthread_mutex_t mu;
    pthread_cond_t start, done;
    unsigned long generation;   /* bumped for every run */
    int pending;                /* workers still running the current task */
    bool quit;
    thread_task fn;
    void *ctx;
};

struct worker_arg { thread_pool *pool; int ith; };

static void *worker_main(void *arg) {
    struct worker_arg *a = arg;
    thread_pool *p = a->pool;
    unsigned long seen = 0;
    for (;;) {
        pthread_mutex_lock(&p->mu);
        while (p->generation == seen && !p->quit) pthread_cond_wait(&p->start, &p->mu);
        if (p->quit) { pthread_mutex_unlock(&p->mu); return NULL; }
        seen = p->generation;
        thread_task fn = p->fn;
        void *ctx = p->ctx;
        pthread_mutex_unlock(&p->mu);

        fn(ctx, a->ith, p->n);

        pthread_mutex_lock(&p->mu);
        if (--p->pending == 0) pthread_cond_signal(&p->done);
        pthread_mutex_unlock(&p->mu);
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
    p->quit = true;
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
    pthread_mutex_lock(&p->mu);
    p->fn = fn;
    p->ctx = ctx;
    p->pending = p->n - 1;
    p->generation++;
    pthread_cond_broadcast(&p->start);
    pthread_mutex_unlock(&p->mu);

    fn(ctx, 0, p->n);

    pthread_mutex_lock(&p->mu);
    while (p->pending > 0) pthread_cond_wait(&p->done, &p->mu);
    pthread_mutex_unlock(&p->mu);
}
