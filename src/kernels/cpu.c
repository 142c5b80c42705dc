/* The table of the kernel sets (see cpu.h) and CPU feature detection. On x86-64 the features come
 * from CPUID, and the vector registers must also be enabled by the OS (XCR0), or the instructions
 * fault. */
#include "kernels/cpu.h"
#include <stdio.h>
#include <string.h>
#include "tessera.h"
#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif
#if defined(__aarch64__) && defined(__linux__)
#include <sys/auxv.h>
#define HWCAP_DOTPROD_BIT (1ul << 20)     /* HWCAP_ASIMDDP in the kernel's asm/hwcap.h */
#endif

#if defined(__x86_64__)
static unsigned long long read_xcr0(void) {
    unsigned int lo, hi;
    __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
    return (unsigned long long)hi << 32 | lo;
}

static bool x86_has(int level) {
    unsigned int a, b, c, d;
    if (!__get_cpuid(1, &a, &b, &c, &d)) return false;
    bool fma = c & (1u << 12), osxsave = c & (1u << 27), avx = c & (1u << 28), f16c = c & (1u << 29);
    if (!osxsave || !avx || !fma || !f16c) return false;
    unsigned long long xcr0 = read_xcr0();
    if ((xcr0 & 0x6) != 0x6) return false;                  /* XMM and YMM state */
    if (__get_cpuid_max(0, NULL) < 7) return false;
    __cpuid_count(7, 0, a, b, c, d);
    bool avx2 = b & (1u << 5);
    if (level == SIMD_AVX2) return avx2;
    bool avx512 = (b & (1u << 16)) && (b & (1u << 17)) && (b & (1u << 30)) && (b & (1u << 31)) &&
                  (c & (1u << 11)) && (b & (1u << 8));     /* F, DQ, BW, VL, VNNI; BMI2 (every such CPU has it) */
    return level == SIMD_AVX512 && avx2 && avx512 && (xcr0 & 0xe6) == 0xe6;   /* + opmask, ZMM */
}
#endif

/* Whether this CPU and OS run a set; false for the sets of other architectures. */
static bool runs_scalar(void) { return true; }

static bool runs_avx2(void) {
#if defined(__x86_64__)
    return x86_has(SIMD_AVX2);
#else
    return false;
#endif
}

static bool runs_avx512(void) {
#if defined(__x86_64__)
    return x86_has(SIMD_AVX512);
#else
    return false;
#endif
}

static bool runs_neon(void) {
#if defined(__aarch64__)
    return true;                                           /* Advanced SIMD is part of ARMv8-A */
#else
    return false;
#endif
}

/* The kernel sets, one row each, indexed by enum simd_level: the one list of their names (cpu.h
 * says who reads it). */
static const struct {
    const char *name;        /* --simd NAME, --version, --info */
    bool (*runs)(void);
} simd_sets[SIMD_COUNT] = {
    [SIMD_SCALAR] = { "scalar", runs_scalar },
    [SIMD_AVX2]   = { "avx2",   runs_avx2 },
    [SIMD_AVX512] = { "avx512", runs_avx512 },
    [SIMD_NEON]   = { "neon",   runs_neon },
};

const char *simd_name(int level) {
    return level >= 0 && level < SIMD_COUNT ? simd_sets[level].name : "?";
}

int simd_from_name(const char *name) {
    if (!name || !strcmp(name, "auto")) return cpu_best_simd();
    for (int i = 0; i < SIMD_COUNT; i++) if (!strcmp(name, simd_sets[i].name)) return i;
    return -1;
}

const char *simd_names(char *buf, size_t cap) {
    size_t n = 0;
    buf[0] = '\0';
    for (int i = 0; i < SIMD_COUNT && n < cap; i++)
        n += (size_t)snprintf(buf + n, cap - n, "%s%s", i == 0 ? "" : i == SIMD_COUNT - 1 ? " or " : ", ",
                              simd_sets[i].name);
    return buf;
}

const char *ts_simd_name(int i) { return i >= 0 && i < SIMD_COUNT ? simd_sets[i].name : NULL; }

bool cpu_has_simd(int level) { return level >= 0 && level < SIMD_COUNT && simd_sets[level].runs(); }

bool cpu_has_neon_dotprod(void) {
#if defined(__aarch64__) && defined(__linux__)
    return (getauxval(AT_HWCAP) & HWCAP_DOTPROD_BIT) != 0;
#elif defined(__aarch64__) && defined(__APPLE__)
    return true;                           /* every Apple CPU that runs aarch64 code has it */
#else
    return false;
#endif
}

bool cpu_has_avx512_vbmi(void) {
#if defined(__x86_64__)
    unsigned int a, b, c, d;
    if (!x86_has(SIMD_AVX512)) return false;
    __cpuid_count(7, 0, a, b, c, d);
    return (c & (1u << 1)) && (c & (1u << 12));          /* AVX512_VBMI, AVX512_BITALG */
#else
    return false;
#endif
}

const char *simd_extensions(int level) {
    if (level == SIMD_NEON && cpu_has_neon_dotprod()) return " (with SDOT)";
    if (level == SIMD_AVX512 && cpu_has_avx512_vbmi()) return " (with VBMI)";
    return "";
}

/* The last set this CPU runs: within an architecture, the enum lists them from plain to best. */
int cpu_best_simd(void) {
    for (int level = SIMD_COUNT - 1; level > SIMD_SCALAR; level--)
        if (cpu_has_simd(level)) return level;
    return SIMD_SCALAR;
}
