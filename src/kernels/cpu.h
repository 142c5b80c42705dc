/* The instruction sets the kernels are written for, and which of them this CPU runs: CPUID on
 * x86-64, the build target (and HWCAP for SDOT) on aarch64. One binary runs everywhere: the SIMD
 * kernels are compiled with per-function target attributes and chosen here at run time, never
 * by -march.
 *
 * The list of sets is this enum with its table in cpu.c (each set's --simd name and CPU test).
 * Whatever else names or picks a set reads them: the CLI's help and --version (ts_simd_name),
 * the loader's error (simd_names), "auto" (cpu_best_simd); and each set's kernels are indexed by
 * the enum (kernel_set_for in kernel_sets.c, attention_kernels_for in attention.c). A new set is
 * a value here, a row of that table, its target attribute (simd.h), its kernel set
 * (kernel_sets.c) and its kernels (the T_dot.c files: see simd.h). */
#ifndef TS_KERNELS_CPU_H
#define TS_KERNELS_CPU_H
#include <stdbool.h>
#include <stddef.h>

/* Within one architecture a later set is a better one: "auto" takes the last this CPU runs. */
enum simd_level {
    SIMD_SCALAR = 0,   /* the reference kernels: f32 activations, dequantize-and-multiply */
    SIMD_AVX2,         /* AVX2 + FMA + F16C, 8-bit quantized activations */
    SIMD_AVX512,       /* AVX-512 F/BW/VL/DQ + VNNI on top of AVX2 (and BMI2) */
    SIMD_NEON,         /* aarch64 Advanced SIMD */
    SIMD_COUNT
};

const char *simd_name(int level);            /* its --simd name ("scalar", "avx2", ...) */
int  simd_from_name(const char *name);       /* -1 when unknown; "auto" gives cpu_best_simd() */
bool cpu_has_simd(int level);                /* compiled in and supported by this CPU and OS */
int  cpu_best_simd(void);
/* Every set's name, in enum order, for messages: "scalar, avx2, avx512 or neon" (into buf). */
const char *simd_names(char *buf, size_t cap);
/* aarch64: the CPU has the ARMv8.2 dot product instructions (SDOT), which the NEON set's
 * integer kernels use where present; false elsewhere. */
bool cpu_has_neon_dotprod(void);
/* x86-64: the CPU runs the avx512 set and has AVX512_VBMI and AVX512_BITALG (Ice Lake, Zen 4 and
 * later), which that set's 4-byte grid kernels use where present; false elsewhere. */
bool cpu_has_avx512_vbmi(void);
/* What --info adds to a set's name: the extensions its kernels use on this CPU (" (with SDOT)"), or "". */
const char *simd_extensions(int level);

#endif
