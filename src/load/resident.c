/* resident_copy_matrices (resident.h): the matrices copied into one anonymous mapping in 2 MB pages. */
#include "load/resident.h"
#include "load/model_arena.h"
#include "io/safetensors.h"
#include "kernels/simd.h"
#include "core/thread_pool.h"
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define HUGE_PAGE ((size_t)2 << 20)
#define SLICE ((size_t)16 << 20)   /* bytes copied between two releases of the source's pages */
#ifndef MADV_POPULATE_READ
#define MADV_POPULATE_READ 22
#endif
#ifndef MADV_COLLAPSE
#define MADV_COLLAPSE 25
#endif

typedef struct resident_list { weight **w; int n, cap; bool full; } resident_list;

static void add(resident_list *l, weight *w) {
    if (!w->data || w->rows <= 0) return;
    if (l->n == l->cap) {
        int cap = l->cap ? 2 * l->cap : 1024;
        weight **grown = realloc(l->w, (size_t)cap * sizeof *grown);
        if (!grown) { l->full = true; return; }
        l->w = grown;
        l->cap = cap;
    }
    l->w[l->n++] = w;
}

static size_t bytes_of(const weight *w) { return (size_t)w->rows * w->row_bytes; }

/* Drops the source pages of a copied range: the container's mapped pages (nothing for bytes it does
 * not map) */
static void release_source(const ts_model *m, const void *p, size_t n) {
    if (m->gguf) gguf_release(m->gguf, p, n);
    if (m->safetensors) safetensors_release(m->safetensors, p, n);
}

static bool inside(const weight *w, const uint8_t *p, size_t n) {
    return w->data && w->data >= p && w->data < p + n;
}

/* Whether a weight that was not copied (yet) reads bytes of [p, p + n). */
static bool read_elsewhere(const model_geometry *g, const resident_list *l, const uint8_t *p, size_t n) {
    for (int i = 0; i < l->n; i++) if (inside(l->w[i], p, n)) return true;
    if (inside(&g->tok_embd, p, n) || inside(&g->ple_embd, p, n)) return true;
    for (int il = 0; il < g->n_layers; il++) {
        const moe_geometry *e = &g->layers[il].moe;
        for (int x = 0; x < e->n_experts; x++)
            if ((e->gate && inside(&e->gate[x], p, n)) || (e->up && inside(&e->up[x], p, n)) ||
                (e->down && inside(&e->down[x], p, n))) return true;
    }
    return false;
}

/* One mapping of this process as /proc/self/smaps describes it. */
typedef struct mapping { uintptr_t lo, hi; bool file; long long rss, huge; } mapping;

/* This process's mappings (*out, malloc'd; their count returned), or -1 when smaps cannot be read.
 * huge counts the bytes mapped 2 MB at a time: AnonHugePages for anonymous memory, FilePmdMapped
 * for a file's pages (the kernel maps a file's cached 2 MB folios so). */
static int read_mappings(mapping **out) {
    *out = NULL;
    FILE *f = fopen("/proc/self/smaps", "r");
    if (!f) return -1;
    mapping *v = NULL;
    int n = 0, cap = 0;
    char line[512];
    while (fgets(line, sizeof line, f)) {
        uintptr_t a, b;
        unsigned long long kb, inode, offset;
        char perms[8];
        unsigned dev_hi, dev_lo;
        /* a mapping's line: start-end perms offset major:minor inode [path] */
        if (strchr(line, '-') < strchr(line, ' ') &&
            sscanf(line, "%" SCNxPTR "-%" SCNxPTR " %7s %llx %x:%x %llu", &a, &b, perms, &offset, &dev_hi,
                   &dev_lo, &inode) == 7) {
            if (n == cap) {
                cap = cap ? 2 * cap : 64;
                mapping *grown = realloc(v, (size_t)cap * sizeof *grown);
                if (!grown) { free(v); fclose(f); return -1; }
                v = grown;
            }
            v[n++] = (mapping){ .lo = a, .hi = b, .file = inode != 0 };
        } else if (n > 0 && sscanf(line, "Rss: %llu kB", &kb) == 1) {
            v[n - 1].rss += (long long)kb * 1024;
        } else if (n > 0 && (sscanf(line, "AnonHugePages: %llu kB", &kb) == 1 ||
                             sscanf(line, "FilePmdMapped: %llu kB", &kb) == 1)) {
            v[n - 1].huge += (long long)kb * 1024;
        }
    }
    fclose(f);
    *out = v;
    return n;
}

long long resident_huge_bytes(const void *p, size_t n) {
    mapping *v;
    const int nv = read_mappings(&v);
    if (nv < 0) return -1;
    const uintptr_t lo = (uintptr_t)p, hi = lo + n;
    long long huge = 0;
    for (int i = 0; i < nv; i++)
        if (v[i].lo < hi && v[i].hi > lo) huge += v[i].huge;
    free(v);
    return huge;
}

/* The mapping holding p, or NULL. */
static const mapping *mapping_of(const mapping *v, int nv, const void *p) {
    for (int i = 0; i < nv; i++)
        if ((uintptr_t)p >= v[i].lo && (uintptr_t)p < v[i].hi) return &v[i];
    return NULL;
}

void resident_free(ts_model *m) {
    if (m->resident) munmap(m->resident, m->resident_bytes);
    m->resident = NULL;
    m->resident_bytes = 0;
}

/* Bytes the kernel could give without swapping (/proc/meminfo MemAvailable, which counts the
 * model file's cached pages as available; the environment's TS_MEM_AVAILABLE instead, for tests);
 * SIZE_MAX when it cannot be read. */
static size_t memory_available(void) {
    const char *stated = getenv("TS_MEM_AVAILABLE");   /* tests: a machine with this many bytes free */
    if (stated && *stated) return (size_t)strtoull(stated, NULL, 10);
    FILE *f = fopen("/proc/meminfo", "r");
    if (!f) return SIZE_MAX;
    char line[256];
    unsigned long long kb = 0;
    bool found = false;
    while (!found && fgets(line, sizeof line, f)) found = sscanf(line, "MemAvailable: %llu kB", &kb) == 1;
    fclose(f);
    return found ? (size_t)kb * 1024 : SIZE_MAX;
}

static size_t experts_bytes(const model_geometry *g) {
    size_t n = 0;
    for (int il = 0; il < g->n_layers; il++) {
        const moe_geometry *e = &g->layers[il].moe;
        for (int x = 0; x < e->n_experts; x++) {
            if (e->gate) n += bytes_of(&e->gate[x]);
            if (e->up) n += bytes_of(&e->up[x]);
            if (e->down) n += bytes_of(&e->down[x]);
        }
    }
    return n;
}

/* The kernels that keep w's rows in lanes (type_kernels.lanes_pack) in the model's kernel set, or
 * NULL: none for its type, or rows that are not groups of 16. */
static const type_kernels *lanes_kernels(const ts_model *m, const weight *w) {
    const kernel_set *ks = kernel_set_for(m->simd);
    const type_kernels *tk = ks ? ks->types[w->type] : NULL;
    if (!tk || !tk->lanes_pack || w->rows % 16 != 0) return NULL;
    /* packed rows that cannot give a row back (lanes_row) cannot serve a tied head's token rows */
    return tk->lanes_row || m->g.tok_embd.data != w->data ? tk : NULL;
}

/* Bytes w takes in the copy: its own, or its rows' in lanes where they take bytes of their own */
static size_t copy_bytes(const ts_model *m, const weight *w) {
    const type_kernels *tk = lanes_kernels(m, w);
    return tk ? (size_t)w->rows * lanes_packed_row_bytes(tk, w->row_bytes, w->cols) : bytes_of(w);
}

/* One group of 16 rows of a slice rearranged into lanes (a chunk of thread_pool_run_chunks): the
 * groups are independent, so the copy is the same whichever thread packs which. */
typedef struct pack_job { const type_kernels *tk; const uint8_t *src; uint8_t *dst; size_t rb, prb; int64_t cols; } pack_job;
static void pack_rows(void *ctx, long i) {
    const pack_job *j = ctx;
    j->tk->lanes_pack(j->src + (size_t)i * 16 * j->rb, j->rb, j->cols, j->dst + (size_t)i * 16 * j->prb);
}

/* Copies the listed matrices (one copy per distinct source) into one anonymous mapping in 2 MB
 * pages and points the table at it; total is their bytes, rounded as the copy lays them out. what
 * names them in the note, why ends it. The matrices whose kernels keep rows in lanes are
 * rearranged so as they are copied (weight.lanes): the products of a batch then do not rearrange
 * them, and those of one position read one stream instead of 4 rows' (AVX-512, 2 threads: Q4_K
 * 22 -> 28 GB/s at one position, 11 -> 16 at 8; Q6_K 29 -> 33 and 11 -> 17; tools/speed-log.md). */
static void copy_matrices(ts_model *m, const ts_load_options *opt, resident_list *l, size_t total, const char *what,
                          const char *why) {
    model_geometry *g = &m->g;
    const size_t size = (total + HUGE_PAGE - 1) / HUGE_PAGE * HUGE_PAGE + HUGE_PAGE;
    void *map = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (map == MAP_FAILED) { model_note(m, "%s: read in place (no room for a copy)", what); return; }
    uint8_t *base = (uint8_t *)(((uintptr_t)map + HUGE_PAGE - 1) / HUGE_PAGE * HUGE_PAGE);
    madvise(base, size - (size_t)(base - (uint8_t *)map), MADV_HUGEPAGE);

    /* rows rearranged into lanes on every thread (the pool made at the first such matrix; NULL: one
     * thread): a grid type's rows took ~10 ns a weight (a 1B IQ3_S file: 11 s on one thread) */
    const long n_threads = opt && opt->threads > 0 ? opt->threads : sysconf(_SC_NPROCESSORS_ONLN);
    thread_pool *pool = NULL;
    size_t off = 0, copied = 0, in_lanes = 0;
    for (int i = 0; i < l->n; i++) {
        const uint8_t *src = l->w[i]->data;
        if (src >= base && src < base + total) continue;   /* shares bytes copied already */
        uint8_t *dst = base + off;
        const size_t n = bytes_of(l->w[i]), rb = l->w[i]->row_bytes;
        const type_kernels *tk = lanes_kernels(m, l->w[i]);
        const size_t prb = tk ? lanes_packed_row_bytes(tk, rb, l->w[i]->cols) : rb;   /* a row's bytes in the copy */
        size_t slice = SLICE;
        if (tk) slice = SLICE / (16 * rb) > 0 ? SLICE / (16 * rb) * 16 * rb : 16 * rb;   /* whole groups of 16 rows */
        for (size_t s = 0; s < n; s += slice) {
            const size_t len = n - s < slice ? n - s : slice, at = s / rb * prb;
            /* the source's pages faulted in by one call, not one 4 KB page at a time (file pages) */
            const uintptr_t page = (uintptr_t)(src + s) & ~(uintptr_t)4095;
            madvise((void *)page, (size_t)((uintptr_t)(src + s) + len - page), MADV_POPULATE_READ);
            if (tk) {
                if (!pool && n_threads > 1) pool = thread_pool_new((int)n_threads);
                pack_job job = { tk, src + s, dst + at, rb, prb, l->w[i]->cols };
                thread_pool_run_chunks(pool, pack_rows, &job, (long)(len / rb / 16));
            } else
                memcpy(dst + s, src + s, len);
            release_source(m, src + s, len);
            copied += len / rb * prb;
            if (opt && opt->on_progress) opt->on_progress(opt->progress_user, copied, total);
        }
        off += (n / rb * prb + 63) / 64 * 64;
        in_lanes += tk ? n / rb * prb : 0;
        for (int j = i; j < l->n; j++)
            if (l->w[j]->data == src) { l->w[j]->data = dst; l->w[j]->lanes = tk != NULL; l->w[j]->row_bytes = prb; }
        /* a tied head: the embedding reads the copy (a row in lanes put together per token) */
        if (g->tok_embd.data == src) { g->tok_embd.data = dst; g->tok_embd.lanes = tk != NULL; }
        /* the loader's own copy (un-permuted rows, --quant), unless a weight not copied reads it */
        const size_t owned = model_arena_size(&m->arena, src);
        if (owned && !read_elsewhere(g, l, src, owned)) model_arena_release(&m->arena, src);
    }
    thread_pool_free(pool);
    m->resident = map;
    m->resident_bytes = size;
    /* On a fragmented machine the copy's page faults may have found no free 2 MB pages (the kernel
     * then maps 4 KB ones and decode loses what the copy is for): ask for them once more,
     * synchronously (MADV_COLLAPSE, Linux 6.1; an error leaves the pages as they are). */
    const size_t span = (total + HUGE_PAGE - 1) / HUGE_PAGE * HUGE_PAGE;
    long long huge = resident_huge_bytes(base, span);
    if (huge >= 0 && (size_t)huge < span / 10 * 9) {
        madvise(base, span, MADV_COLLAPSE);
        huge = resident_huge_bytes(base, span);
    }
    if (huge > (long long)total) huge = (long long)total;   /* the last page holds the end of the copy */
    char lanes[96] = "";
    if (in_lanes > 0) snprintf(lanes, sizeof lanes, ", %.1f MB with rows in lanes", (double)in_lanes / 1048576.0);
    if (huge >= 0)
        model_note(m, "%s: %.1f MB copied, %.1f MB of it in 2 MB pages%s%s", what, (double)total / 1048576.0,
                   (double)huge / 1048576.0, lanes, why);
    else
        model_note(m, "%s: %.1f MB copied into 2 MB pages%s%s", what, (double)total / 1048576.0, lanes, why);
}

/* Bytes the listed matrices take in a copy, one per distinct source, laid out 64-byte aligned. */
static size_t distinct_bytes(const ts_model *m, const resident_list *l) {
    size_t total = 0;
    for (int i = 0; i < l->n; i++) {
        bool seen = false;
        for (int j = 0; j < i && !seen; j++) seen = l->w[j]->data == l->w[i]->data;
        if (!seen) total += (copy_bytes(m, l->w[i]) + 63) / 64 * 64;
    }
    return total;
}

/* Faults in the pages of the listed matrices, one call per matrix, telling on_progress (if any)
 * the bytes done of total. */
static void populate(const resident_list *l, size_t total, const ts_load_options *opt) {
    size_t done = 0;
    for (int i = 0; i < l->n; i++) {
        const uint8_t *src = l->w[i]->data;
        const size_t n = bytes_of(l->w[i]);
        const uintptr_t page = (uintptr_t)src & ~(uintptr_t)4095;
        madvise((void *)page, (size_t)((uintptr_t)src + n - page), MADV_POPULATE_READ);
        done = done + n < total ? done + n : total;
        if (opt && opt->on_progress) opt->on_progress(opt->progress_user, done, total);
    }
}

/* Faults in one 2 MB-aligned 2 MB window in each of up to 16 matrices spread over those of the
 * list in file mappings (the whole matrix when it holds no such window); returns the bytes. A
 * cheap look at how the kernel maps the file before faulting in all of it, which in 4 KB pages
 * costs 0.1 s per 500 MB here. */
static size_t populate_sample(const resident_list *l) {
    mapping *v;
    const int nv = read_mappings(&v);
    if (nv < 0) return 0;
    int in_files = 0;
    for (int i = 0; i < l->n; i++) {
        const mapping *x = mapping_of(v, nv, l->w[i]->data);
        in_files += x && x->file;
    }
    size_t bytes = 0;
    const int step = in_files > 16 ? in_files / 16 : 1;
    for (int i = 0, k = 0; i < l->n; i++) {
        const mapping *x = mapping_of(v, nv, l->w[i]->data);
        if (!x || !x->file || k++ % step) continue;
        const uintptr_t lo = (uintptr_t)l->w[i]->data, hi = lo + bytes_of(l->w[i]);
        uintptr_t a = (lo + HUGE_PAGE - 1) / HUGE_PAGE * HUGE_PAGE, b = a + HUGE_PAGE;
        if (b > hi) { a = lo & ~(uintptr_t)4095; b = hi; }
        madvise((void *)a, (size_t)(b - a), MADV_POPULATE_READ);
        bytes += (size_t)(b - a);
    }
    free(v);
    return bytes;
}

/* The kernel's pages under the listed matrices that live in file mappings: *file_bytes resident,
 * *huge_bytes of them mapped 2 MB at a time (each mapping counted once). false when smaps cannot
 * be read. */
static bool file_pages(const resident_list *l, long long *file_bytes, long long *huge_bytes) {
    mapping *v;
    const int nv = read_mappings(&v);
    if (nv < 0) return false;
    *file_bytes = *huge_bytes = 0;
    bool *counted = calloc((size_t)nv + 1, 1);
    for (int i = 0; i < l->n && counted; i++) {
        const mapping *x = mapping_of(v, nv, l->w[i]->data);
        if (!x || !x->file || counted[x - v]) continue;
        counted[x - v] = true;
        *file_bytes += x->rss;
        *huge_bytes += x->huge;
    }
    const bool ok = counted != NULL;
    free(counted);
    free(v);
    return ok;
}

/* Keeps in l only the matrices outside file mappings (the loader's own buffers: un-permuted rows,
 * converted types). */
static void keep_not_in_files(resident_list *l) {
    mapping *v;
    const int nv = read_mappings(&v);
    int kept = 0;
    for (int i = 0; i < l->n; i++) {
        const mapping *x = nv > 0 ? mapping_of(v, nv, l->w[i]->data) : NULL;
        if (!x || !x->file) l->w[kept++] = l->w[i];
    }
    l->n = kept;
    free(v);
}


void resident_place_matrices(ts_model *m, const ts_load_options *opt) {
    const int placement = opt ? opt->weights : TS_WEIGHTS_AUTO;
    if (placement == TS_WEIGHTS_IN_PLACE) { model_note(m, "matrices: read in place from the file (--mmap)"); return; }
    model_geometry *g = &m->g;
    resident_list l = { .n = 0 };
    /* The experts too, though a token reads few of them: from the file's 4 KB pages a Qwen3.5-MoE
     * shape decoded at 21-24 tok/s, from 2 MB pages at 36 (tools/speed-log.md). Unless a copy would
     * not fit in the memory the kernel has to give (the file's cached pages count, they are
     * released as the copy goes): then they stay in the file, read as the router picks them. */
    const size_t experts = experts_bytes(g), room = memory_available();
    const bool copy_experts = experts > 0 && experts + (size_t)64 * 1048576 < room / 4 * 3;
    if (experts > 0 && !copy_experts)
        model_note(m, "experts: %.1f MB read in place from the file (more than the memory available for a copy allows)",
                   (double)experts / 1048576.0);
    for (int il = 0; il < g->n_layers; il++) {
        weight *dense[LAYER_MAX_MATRICES];
        int n = layer_matrices(&g->layers[il], dense);
        for (int i = 0; i < n; i++) add(&l, dense[i]);
        moe_geometry *e = &g->layers[il].moe;
        for (int x = 0; x < e->n_experts && copy_experts; x++) {
            if (e->gate) add(&l, &e->gate[x]);
            if (e->up) add(&l, &e->up[x]);
            if (e->down) add(&l, &e->down[x]);
        }
    }
    add(&l, &g->output);
    add(&l, &g->ple_model_proj);
    if (l.full || l.n == 0) { free(l.w); model_note(m, "matrices: read in place from the file"); return; }

    size_t total = distinct_bytes(m, &l);
    if (total + (size_t)64 * 1048576 > room / 4 * 3) {   /* the rest does not fit either: all in place */
        free(l.w);
        model_note(m, "matrices: read in place from the file (%.1f MB, more than the memory available for a copy allows)",
                   (double)total / 1048576.0);
        return;
    }
    size_t in_lanes = 0;
    for (int i = 0; i < l.n; i++) in_lanes += lanes_kernels(m, l.w[i]) ? bytes_of(l.w[i]) : 0;
    long long file_bytes = 0, huge_bytes = 0;
    if (placement == TS_WEIGHTS_AUTO || (placement == TS_WEIGHTS_DECODE && in_lanes == 0)) {
        /* A copy exists for its 2 MB pages. Where the kernel already maps the file's cached pages
         * 2 MB at a time (a page cache in 2 MB folios: Linux 6.x on ext4, xfs, tmpfs; a file
         * written 4 KB at a time stays in small ones), reading in place is as fast and the first
         * token does not wait for a copy. Faulting a sample in tells, then all of them (which the
         * first evaluation needs anyway) tells for sure. */
        const size_t sample = populate_sample(&l);
        bool all = false;
        if (file_pages(&l, &file_bytes, &huge_bytes) && huge_bytes >= (long long)(sample / 2)) {
            populate(&l, total, opt);
            all = file_pages(&l, &file_bytes, &huge_bytes);
        }
        if (all && file_bytes >= (long long)HUGE_PAGE && huge_bytes >= file_bytes / 4 * 3) {
            model_note(m, "matrices: read in place from the file, whose pages the kernel maps 2 MB at a time "
                          "(%.1f of %.1f MB; --no-mmap copies them)",
                       (double)huge_bytes / 1048576.0, (double)file_bytes / 1048576.0);
            /* The loader's own buffers (un-permuted Q/K rows, converted types) go to 2 MB pages too
             * when they are a large part; a small part (a Llama GGUF's Q/K: 7-9%) stays where it
             * is: copying it into fresh memory delayed the 1B Q8_0's first token from 0.38-0.40 s to
             * 0.41-0.55 s (--mmap 0.36-0.39), and decode without the copy was 0.96x (0.70-1.31, the
             * host's noise) over nine pairs (tools/speed-log.md). */
            keep_not_in_files(&l);
            const size_t own = distinct_bytes(m, &l);
            if (l.n > 0 && own > total / 8) copy_matrices(m, NULL, &l, own, "the loader's own matrices", "");
            else if (l.n > 0) model_note(m, "the loader's own matrices: %.1f MB where it made them", (double)own / 1048576.0);
            free(l.w);
            return;
        }
    }
    char why[160] = " (--no-mmap)";
    if (placement == TS_WEIGHTS_DECODE && in_lanes > 0)
        snprintf(why, sizeof why, " (rows in lanes decode faster than the file's; --mmap reads them in place)");
    else if (placement == TS_WEIGHTS_AUTO || placement == TS_WEIGHTS_DECODE)
        snprintf(why, sizeof why, " (the kernel maps %.1f of the %.1f MB of the file looked at 2 MB at a time; --mmap reads them in place)",
                 (double)huge_bytes / 1048576.0, (double)file_bytes / 1048576.0);
    copy_matrices(m, opt, &l, total, "matrices", why);
    free(l.w);
}
