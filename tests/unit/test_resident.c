/* resident_huge_bytes, the count behind --info's "MB of it in 2 MB pages" and behind the loader's
 * decision to ask for 2 MB pages once more (MADV_COLLAPSE): a mapping in 4 KB pages counts 0, the
 * same mapping after a collapse counts its 2 MB pages, a range counts only mappings that overlap
 * it, and the count never exceeds what is mapped. Where the kernel has no transparent huge pages
 * or no MADV_COLLAPSE (before Linux 6.1), the collapse checks are skipped with a note. And the load's
 * progress: the copy reports its bytes as it goes, rising to the total.
 * The default placement: a file the kernel maps 2 MB at a time (read back into 2 MB folios after its
 * pages were dropped; told by this test's own look at smaps) is read in place, a file just written
 * (in small folios) is copied, and the logits of both equal --no-mmap's bit for bit. A copy keeps
 * the Q4_K, Q5_K and Q6_K rows in lanes (AVX-512), with the logits of the rows in place. */
#include "check.h"
#include "gguf_copy.h"
#include "kernels/cpu.h"
#include "load/resident.h"
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>

#ifndef MADV_COLLAPSE
#define MADV_COLLAPSE 25
#endif
#define HUGE ((size_t)2 << 20)

/* What on_progress heard: calls, passes (a pass starts again from below where the last one ended,
 * which must have reached its total), each rising to its total. */
typedef struct heard { int calls, passes; size_t last, total; bool rising; } heard;

static void on_progress(void *user, size_t done, size_t total) {
    heard *h = user;
    if (h->calls == 0 || done <= h->last) {
        h->rising &= h->calls == 0 || h->last == h->total;   /* the pass before ended at its total */
        h->passes++;
    } else {
        h->rising &= total == h->total;
    }
    h->rising &= done > 0 && done <= total;
    h->calls++;
    h->last = done;
    h->total = total;
}

static void test_load_progress(void) {
    char path[600];
    snprintf(path, sizeof path, "%s/qa-llama/qa-llama-q8_0.gguf", fixtures_dir());
    heard h = { .rising = true };
    ts_load_options lo = { .on_progress = on_progress, .progress_user = &h, .weights = TS_WEIGHTS_COPY };
    ts_model *m;
    ts_error err;
    if (ts_model_load(path, &lo, &m, &err)) { CHECK(0, "qa-llama: %s", err.msg); return; }
    CHECK(h.calls > 0 && h.passes == 1 && h.rising && h.last == h.total && h.total > 1000000,
          "--no-mmap: the load reports the copy's progress: %d calls in %d pass rising to %zu of %zu bytes",
          h.calls, h.passes, h.last, h.total);
    ts_model_free(m);
    lo.weights = TS_WEIGHTS_AUTO;   /* the pages faulted in, then (if copied) the copy: each pass to its total */
    h = (heard){ .rising = true };
    if (ts_model_load(path, &lo, &m, &err)) { CHECK(0, "qa-llama: %s", err.msg); return; }
    CHECK(h.calls > 0 && (h.passes == 1 || h.passes == 2) && h.rising && h.last == h.total,
          "default: %d calls in %d passes, each rising to its total (last %zu of %zu)", h.calls, h.passes, h.last, h.total);
    ts_model_free(m);
    lo.weights = TS_WEIGHTS_IN_PLACE;   /* nothing copied: nothing to report */
    h = (heard){ .rising = true };
    if (ts_model_load(path, &lo, &m, &err)) { CHECK(0, "qa-llama --mmap: %s", err.msg); return; }
    CHECK(h.calls == 0, "--mmap: no copy, no progress calls (%d)", h.calls);
    ts_model_free(m);
}

/* This test's own look at how the kernel maps a file: the file mapped plainly (no advice), every
 * page read, and the FilePmdMapped share of its Rss in /proc/self/smaps; -1 when unknown. */
static double file_pmd_share(const char *path) {
    int fd = open(path, O_RDONLY);
    if (fd < 0) return -1;
    const off_t n = lseek(fd, 0, SEEK_END);
    const volatile uint8_t *p = mmap(NULL, (size_t)n, PROT_READ, MAP_PRIVATE, fd, 0);
    close(fd);
    if (p == MAP_FAILED) return -1;
    for (off_t i = 0; i < n; i += 4096) (void)p[i];
    FILE *f = fopen("/proc/self/smaps", "r");
    char line[512];
    long long rss = 0, pmd = 0, kb;
    bool in = false;
    while (f && fgets(line, sizeof line, f)) {
        unsigned long a, b;
        if (sscanf(line, "%lx-%lx ", &a, &b) == 2 && strchr(line, '-') < strchr(line, ' ')) in = a == (uintptr_t)p;
        else if (in && sscanf(line, "Rss: %lld kB", &kb) == 1) rss = kb;
        else if (in && sscanf(line, "FilePmdMapped: %lld kB", &kb) == 1) pmd = kb;
    }
    if (f) fclose(f);
    munmap((void *)p, (size_t)n);
    return rss > 0 ? (double)pmd / (double)rss : -1;
}

/* The fixture rewritten: with its tensors `alignment` bytes apart (general.alignment; 0: as it was),
 * without the tensor named drop (NULL: none). 0 on success. */
static int write_copy(const char *src, const char *dst, uint32_t alignment, const char *drop) {
    ts_error err = {{0}};
    gguf_file *g = NULL;
    if (gguf_open(src, &g, &err) != 0) { CHECK(0, "open %s: %s", src, err.msg); return -1; }
    gguf_writer *w = gguf_writer_new();
    copy_metadata_except(g, w, alignment ? (const char *const[]){ "general.alignment", NULL } : NULL);
    if (alignment) gguf_writer_set_alignment(w, alignment);
    const tensor_dir *d = gguf_tensors(g);
    for (int i = 0; i < d->n; i++)
        if (!drop || strcmp(d->t[i].name, drop))
            gguf_writer_add_tensor(w, d->t[i].name, d->t[i].type, d->t[i].n_dims, d->t[i].ne, d->t[i].data, d->t[i].nbytes);
    int rc = gguf_writer_write(w, dst, &err);
    if (rc) CHECK(0, "write %s: %s", dst, err.msg);
    gguf_writer_free(w);
    gguf_close(g);
    return rc;
}

/* The logits of 4 tokens (steps: of 1, then of 7 more in one batch, past the 4-wide tiles: 2 rows)
 * and the model's layout notes, loaded with the given placement. */
static int logits_of(const char *path, int weights, bool steps, float *out, char *notes, size_t notes_size) {
    ts_load_options lo = { .weights = weights };
    ts_model *m;
    ts_context *c;
    ts_error err;
    if (ts_model_load(path, &lo, &m, &err)) { CHECK(0, "%s: %s", path, err.msg); return -1; }
    notes[0] = 0;
    for (int i = 0; i < m->n_notes; i++) {
        strncat(notes, m->notes[i], notes_size - strlen(notes) - 2);
        strcat(notes, "; ");
    }
    int rc = ts_context_new(m, 64, 2, &c, &err);
    if (rc == 0) {
        const int32_t tokens[8] = { 1, 5, 9, 13, 17, 21, 25, 29 };
        if (!steps) rc = ts_eval(c, tokens, 4, out, false, &err);
        else if ((rc = ts_eval(c, tokens, 1, out, false, &err)) == 0) rc = ts_eval(c, tokens + 1, 7, out + ts_model_n_vocab(m), false, &err);
        ts_context_free(c);
    }
    if (rc) CHECK(0, "%s: %s", path, err.msg);
    ts_model_free(m);
    return rc;
}

static void test_default_placement(void) {
    char src[600], dir[] = "/tmp/ts_resident_XXXXXX", path[64];
    snprintf(src, sizeof src, "%s/qa-llama/qa-llama-q8_0.gguf", fixtures_dir());
    if (!mkdtemp(dir)) { CHECK(0, "mkdtemp: %s", strerror(errno)); return; }
    snprintf(path, sizeof path, "%s/spread.gguf", dir);
    if (write_copy(src, path, 1u << 20, NULL) == 0) {   /* whole 2 MB windows of matrices */
        ts_model *m;
        ts_error err;
        if (ts_model_load(path, NULL, &m, &err)) { CHECK(0, "%s: %s", path, err.msg); goto out; }
        const int n_vocab = ts_model_n_vocab(m);
        ts_model_free(m);
        float *want = malloc((size_t)n_vocab * sizeof *want), *got = malloc((size_t)n_vocab * sizeof *got);
        char notes[4096];
        logits_of(path, TS_WEIGHTS_COPY, false, want, notes, sizeof notes);
        CHECK(strstr(notes, "matrices: ") && strstr(notes, " MB copied") && strstr(notes, "(--no-mmap)"),
              "--no-mmap copies: %s", notes);

        /* just written: the share the kernel maps 2 MB at a time decides */
        double share = file_pmd_share(path);
        logits_of(path, TS_WEIGHTS_AUTO, false, got, notes, sizeof notes);
        const bool in_place = strstr(notes, "matrices: read in place from the file, whose pages the kernel maps 2 MB") != NULL;
        CHECK(share >= 0 && (in_place || strstr(notes, " MB copied")) && (share < 0.5 ? !in_place : share >= 0.9 ? in_place : true),
              "just written (%.0f%% of its pages mapped 2 MB at a time): %s", 100 * share, notes);
        CHECK(!memcmp(want, got, (size_t)n_vocab * sizeof *got), "just written: the logits equal --no-mmap's bit for bit");

        /* its pages dropped, then read back through a mapping that asks for 2 MB pages */
        int fd = open(path, O_RDONLY);
        if (fd >= 0) { fdatasync(fd); posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED); close(fd); }
        logits_of(path, TS_WEIGHTS_AUTO, false, got, notes, sizeof notes);
        share = file_pmd_share(path);
        if (share < 0.9) {
            printf("# this kernel keeps the file in small folios (%.0f%% mapped 2 MB at a time): in-place checks skipped\n",
                   100 * share);
        } else {
            CHECK(strstr(notes, "matrices: read in place from the file, whose pages the kernel maps 2 MB") != NULL,
                  "read back in 2 MB folios (%.0f%%): read in place: %s", 100 * share, notes);
            CHECK(strstr(notes, "the loader's own matrices: ") != NULL,
                  "the un-permuted attn_q/attn_k (the loader's own) named in the notes, copied or left where made");
            CHECK(!memcmp(want, got, (size_t)n_vocab * sizeof *got), "in place: the logits equal --no-mmap's bit for bit");
        }
        free(want);
        free(got);
    }
out:
    unlink(path);
    rmdir(dir);
}

/* Rows in lanes (weight.lanes): a copy rearranges the Q2_K, Q4_K, Q5_K and Q6_K matrices where the
 * kernel set has kernels for them (AVX-512), and the Q3_K, IQ1, IQ2 (with VBMI) and IQ3 types' and
 * TQ1_0's into a form of their own, and the logits equal those of the rows read in place, bit for
 * bit; the tied head (qwen2-tiny) still reads as tied; a tied Q5_K or Q2_K head is kept in lanes too
 * (its token rows put together again); a tied IQ1_S or Q3_K head, whose token rows the packed form
 * cannot give back, stays as it is. "tied:" names a file rewritten with its output matrix left out
 * (the head tied to the embedding). */
static void test_rows_in_lanes(void) {
    const char *files[] = { "llama-tiny/model-q4_k_m.gguf", "llama-tiny/model-q6_k.gguf", "qwen2-tiny/model-q4_k_m.gguf",
                            "iq-grid-tiny/model-iq1_s.gguf", "iq-grid-tiny/model-iq1_m.gguf", "tied:iq-grid-tiny/model-iq1_s.gguf",
                            "llama-tiny/model-q5_k_m.gguf", "tied:llama-tiny/model-q5_k_m.gguf",
                            "llama-tiny/model-q2_k.gguf", "tied:llama-tiny/model-q2_k.gguf",
                            "llama-tiny/model-q3_k_m.gguf", "tied:llama-tiny/model-q3_k_m.gguf",
                            "iq-grid-tiny/model-iq3_s.gguf", "iq-grid-tiny/model-iq3_xxs.gguf", "iq-grid-tiny/model-tq1_0.gguf",
                            "iq-grid-tiny/model-iq2_xxs.gguf", "iq-grid-tiny/model-iq2_xs.gguf", "iq-grid-tiny/model-iq2_s.gguf" };
    const bool avx512 = ts_simd_available("avx512");
    char dir[] = "/tmp/ts_lanes_XXXXXX", tied[64] = "";
    if (!mkdtemp(dir)) { CHECK(0, "mkdtemp: %s", strerror(errno)); return; }
    for (int i = 0; i < (int)(sizeof files / sizeof *files); i++) {
        char path[1024], notes[2048];
        const bool tie = strncmp(files[i], "tied:", 5) == 0;
        snprintf(path, sizeof path, "%s/%s", fixtures_dir(), files[i] + (tie ? 5 : 0));
        if (tie) {
            snprintf(tied, sizeof tied, "%s/tied.gguf", dir);
            if (write_copy(path, tied, 0, "output.weight") != 0) break;   /* the head tied to the embedding */
            snprintf(path, sizeof path, "%s", tied);
        }
        ts_load_options lo = { .weights = TS_WEIGHTS_IN_PLACE };
        ts_model *m;
        ts_error err;
        if (ts_model_load(path, &lo, &m, &err)) { CHECK(0, "%s: %s", path, err.msg); continue; }
        const int n_vocab = ts_model_n_vocab(m);
        ts_model_free(m);
        float *want = malloc(2 * (size_t)n_vocab * sizeof *want), *got = malloc(2 * (size_t)n_vocab * sizeof *got);
        if (want && got && logits_of(path, TS_WEIGHTS_IN_PLACE, true, want, notes, sizeof notes) == 0 &&
            logits_of(path, TS_WEIGHTS_COPY, true, got, notes, sizeof notes) == 0) {
            /* the IQ2 rows in lanes need VBMI (the avx512 set's vpermb) */
            if (avx512 && (!strstr(files[i], "iq2_") || cpu_has_avx512_vbmi()))
                CHECK(strstr(notes, "MB with rows in lanes") != NULL, "%s copied: its matrices in lanes (%s)", files[i], notes);
            CHECK(!memcmp(want, got, 2 * (size_t)n_vocab * sizeof *got),
                  "%s: the logits of 1 and of 7 positions with the rows in lanes equal those read in place, bit for bit", files[i]);
            if (avx512 && tie && (strstr(files[i], "q5_k") || strstr(files[i], "q2_k"))) {   /* every matrix in lanes, the tied head too */
                const char *c = strstr(notes, "matrices: "), *l = strstr(notes, "in 2 MB pages, ");
                CHECK(c && l && atof(c + 10) == atof(l + 15) && atof(c + 10) > 0,
                      "%s copied: the MB with rows in lanes are all the MB copied, the head's too (%s)", files[i], notes);
            }
        }
        free(want);
        free(got);
        if (tie) unlink(tied);
        if (i == 2) {   /* --info of the copy still names the head tied */
            char *info = NULL;
            size_t len = 0;
            FILE *f = open_memstream(&info, &len);
            lo.weights = TS_WEIGHTS_COPY;
            if (f && ts_model_load(path, &lo, &m, &err) == 0) {
                ts_model_print_info(m, f);
                ts_model_free(m);
            }
            if (f) fclose(f);
            CHECK(info && strstr(info, "output: Q6_K (tied to the embedding)"), "%s copied: --info says the head is tied", files[i]);
            free(info);
        }
    }
    rmdir(dir);
}

int main(void) {
    test_rows_in_lanes();
    test_load_progress();
    test_default_placement();
    const size_t n = 8 * HUGE;
    uint8_t *map = mmap(NULL, n + HUGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    CHECK(map != MAP_FAILED, "an anonymous mapping of 18 MB");
    if (map == MAP_FAILED) CHECK_EXIT();
    uint8_t *base = (uint8_t *)(((uintptr_t)map + HUGE - 1) & ~(uintptr_t)(HUGE - 1));
    madvise(base, n, MADV_NOHUGEPAGE);   /* 4 KB pages whatever the system's THP setting */
    memset(base, 1, n);
    CHECK(resident_huge_bytes(base, n) == 0, "a mapping in 4 KB pages has no bytes in 2 MB pages");

    madvise(base, n, MADV_HUGEPAGE);
    if (madvise(base, n, MADV_COLLAPSE) != 0) {
        printf("# MADV_COLLAPSE unavailable here (%s): collapse checks skipped\n", strerror(errno));
    } else {
        long long huge = resident_huge_bytes(base, n);
        CHECK(huge > 0 && huge <= (long long)n, "after MADV_COLLAPSE: %lld of %zu bytes in 2 MB pages", huge, n);
        CHECK(resident_huge_bytes(base, HUGE) == huge, "a range overlapping the mapping counts the whole mapping");
        uint8_t *other = mmap(NULL, HUGE, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (other != MAP_FAILED) {
            CHECK(resident_huge_bytes(other, HUGE) == 0, "an untouched mapping elsewhere counts 0");
            munmap(other, HUGE);
        }
    }
    munmap(map, n + HUGE);
    CHECK_EXIT();
}
