/* Which SIMD kernel set this CPU can run, from CPUID (x86-64) or the build target (aarch64).
 * One binary runs everywhere: the SIMD kernels are compiled with per-function target attributes
 * and chosen here at run time, never by -march. */
#ifndef TS_KERNELS_CPU_H
#define TS_KERNELS_CPU_H
#include <stdbool.h>

enum simd_level {
    SIMD_SCALAR = 0,   /* the reference kernels: f32 activations, dequantize-and-multiply */
    SIMD_AVX2,         /* AVX2 + FMA + F16C, 8-bit quantized activations */
    SIMD_AVX512,       /* AVX-512 F/BW/VL/DQ + VNNI on top of AVX2 */
    SIMD_NEON,         /* aarch64 Advanced SIMD */
    SIMD_COUNT
};

const char *simd_name(int level);            /* "scalar", "avx2", "avx512", "neon" */
int  simd_from_name(const char *name);       /* -1 when unknown; "auto" gives cpu_best_simd() */
bool cpu_has_simd(int level);                /* compiled in and supported by this CPU and OS */
int  cpu_best_simd(void);
/* aarch64: the CPU has the ARMv8.2 dot product instructions (SDOT), which the NEON set's
 * integer kernels use where present; false elsewhere. */
bool cpu_has_neon_dotprod(void);

#endif
