/* CPU feature detection for the kernel sets. On x86-64 the features come from CPUID, and the
 * vector registers must also be enabled by the OS (XCR0), or the instructions fault. */
#include "kernels/cpu.h"
#include <string.h>
#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif
#if defined(__aarch64__) && defined(__linux__)
#include <sys/auxv.h>
#define HWCAP_DOTPROD_BIT (1ul << 20)     /* HWCAP_ASIMDDP in the kernel's asm/hwcap.h */
#endif

static const char *const simd_names[SIMD_COUNT] = { "scalar", "avx2", "avx512", "neon" };

const char *simd_name(int level) {
    return level >= 0 && level < SIMD_COUNT ? simd_names[level] : "?";
}

int simd_from_name(const char *name) {
    if (!name || !strcmp(name, "auto")) return cpu_best_simd();
    for (int i = 0; i < SIMD_COUNT; i++) if (!strcmp(name, simd_names[i])) return i;
    return -1;
}

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
                  (c & (1u << 11));                        /* F, DQ, BW, VL, VNNI */
    return level == SIMD_AVX512 && avx2 && avx512 && (xcr0 & 0xe6) == 0xe6;   /* + opmask, ZMM */
}
#endif

bool cpu_has_simd(int level) {
    if (level == SIMD_SCALAR) return true;
#if defined(__x86_64__)
    if (level == SIMD_AVX2 || level == SIMD_AVX512) return x86_has(level);
#endif
#if defined(__aarch64__)
    if (level == SIMD_NEON) return true;                   /* Advanced SIMD is part of ARMv8-A */
#endif
    return false;
}

bool cpu_has_neon_dotprod(void) {
#if defined(__aarch64__) && defined(__linux__)
    return (getauxval(AT_HWCAP) & HWCAP_DOTPROD_BIT) != 0;
#elif defined(__aarch64__) && defined(__APPLE__)
    return true;                           /* every Apple CPU that runs aarch64 code has it */
#else
    return false;
#endif
}

int cpu_best_simd(void) {
    static const int order[] = { SIMD_AVX512, SIMD_AVX2, SIMD_NEON };
    for (int i = 0; i < 3; i++) if (cpu_has_simd(order[i])) return order[i];
    return SIMD_SCALAR;
}
