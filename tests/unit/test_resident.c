/* resident_huge_bytes, the count behind --info's "MB of it in 2 MB pages" and behind the loader's
 * decision to ask for 2 MB pages once more (MADV_COLLAPSE): a mapping in 4 KB pages counts 0, the
 * same mapping after a collapse counts its 2 MB pages, a range counts only mappings that overlap
 * it, and the count never exceeds what is mapped. Where the kernel has no transparent huge pages
 * or no MADV_COLLAPSE (before Linux 6.1), the collapse checks are skipped with a note. And the load's
 * progress: the copy reports its bytes as it goes, rising to the total. */
#include "check.h"
#include "load/resident.h"
#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>

#ifndef MADV_COLLAPSE
#define MADV_COLLAPSE 25
#endif
#define HUGE ((size_t)2 << 20)

typedef struct heard { int calls; size_t last, total; bool rising; } heard;

static void on_progress(void *user, size_t done, size_t total) {
    heard *h = user;
    h->rising &= done > h->last && (h->calls == 0 || total == h->total);
    h->calls++;
    h->last = done;
    h->total = total;
}

static void test_load_progress(void) {
    char path[600];
    snprintf(path, sizeof path, "%s/qa-llama/qa-llama-q8_0.gguf", fixtures_dir());
    heard h = { .rising = true };
    ts_load_options lo = { .on_progress = on_progress, .progress_user = &h };
    ts_model *m;
    ts_error err;
    if (ts_model_load(path, &lo, &m, &err)) { CHECK(0, "qa-llama: %s", err.msg); return; }
    CHECK(h.calls > 0 && h.rising && h.last == h.total && h.total > 1000000,
          "the load reports the copy's progress: %d calls rising to %zu of %zu bytes", h.calls, h.last, h.total);
    ts_model_free(m);
    lo.mmap = true;   /* nothing copied: nothing to report */
    h = (heard){ .rising = true };
    if (ts_model_load(path, &lo, &m, &err)) { CHECK(0, "qa-llama --mmap: %s", err.msg); return; }
    CHECK(h.calls == 0, "--mmap: no copy, no progress calls (%d)", h.calls);
    ts_model_free(m);
}

int main(void) {
    test_load_progress();
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
