/* resident_huge_bytes, the count behind --info's "MB of it in 2 MB pages" and behind the loader's
 * decision to ask for 2 MB pages once more (MADV_COLLAPSE): a mapping in 4 KB pages counts 0, the
 * same mapping after a collapse counts its 2 MB pages, a range counts only mappings that overlap
 * it, and the count never exceeds what is mapped. Where the kernel has no transparent huge pages
 * or no MADV_COLLAPSE (before Linux 6.1), the collapse checks are skipped with a note. */
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

int main(void) {
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
