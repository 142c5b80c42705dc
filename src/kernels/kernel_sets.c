/* The kernel sets: per instruction set (enum simd_level, cpu.h), each weight type's kernels
 * (exported by the type's file) and the activation quantizers they read. */
#include "kernels/kernels_internal.h"
#include "kernels/simd.h"

/* The low-bit types of README-iq-grid, with the set's kernels of their unpacked rows. */
#define LOWBIT_TYPES(ISA) PLANE_GRID_TYPES(ISA), TERNARY_TYPES(ISA), OTHER_LOWBIT_TYPES(ISA)
/* the grid types with VBMI kernels: IQ3's 4-value entries in byte planes, IQ2's 8-value entries as
 * 2-bit codes in two byte planes (as halves in 2x the planes they measured slower than their loads:
 * IQ2_XXS 4.5 -> 3.9, IQ2_XS 5.0 -> 3.0 GB/s). IQ1's 2048 entries stay on loads (their codes by a
 * gather: IQ1_S 2.5 -> 2.2 GB/s on one thread). */
#define PLANE_GRID_TYPES(ISA) [TS_IQ3_XXS] = &iq3_xxs_kernels_##ISA, [TS_IQ3_S] = &iq3_s_kernels_##ISA, \
                              [TS_IQ2_XXS] = &iq2_xxs_kernels_##ISA, [TS_IQ2_XS] = &iq2_xs_kernels_##ISA, \
                              [TS_IQ2_S] = &iq2_s_kernels_##ISA
/* the ternary types (their rows in lanes with VBMI: ternary_lanes.h) */
#define TERNARY_TYPES(ISA) [TS_IQ1_S] = &iq1_s_kernels_##ISA, [TS_IQ1_M] = &iq1_m_kernels_##ISA, \
                           [TS_TQ1_0] = &tq1_0_kernels_##ISA
#define OTHER_LOWBIT_TYPES(ISA)                                                                        \
    [TS_TQ2_0] = &tq2_0_kernels_##ISA, [TS_NVFP4] = &nvfp4_kernels_##ISA,                             \
    [TS_Q1_0] = &q1_0_kernels_##ISA, [TS_Q2_0] = &q2_0_kernels_##ISA

/* The reference: every type through type_traits.dot_f32 on f32 activations. */
static const kernel_set scalar_set = { .level = SIMD_SCALAR };

#if defined(TS_X86)
/* Quantized types: 4 rows x 4 positions per tile. Float types: 1 x 2 (AVX2) or 2 x 4 (AVX-512)
 * tiles, because their row dot keeps several accumulators (a float FMA chain is otherwise
 * latency-bound: 4 with AVX2, 2 with AVX-512) and the tile must repeat the row dot's operations
 * exactly. */
static const kernel_set avx2_set = {
    .level = SIMD_AVX2,
    .quantize_q8_0 = act_quantize_q8_0_avx2, .quantize_q8_k = act_quantize_q8_k_avx2,
    .types = {
        [TS_F32]  = &f32_kernels_avx2,
        [TS_F16]  = &f16_kernels_avx2,
        [TS_BF16] = &bf16_kernels_avx2,
        [TS_Q8_0] = &q8_0_kernels_avx2,
        [TS_Q4_0] = &q4_0_kernels_avx2,
        [TS_Q4_1] = &q4_1_kernels_avx2,
        [TS_Q5_0] = &q5_0_kernels_avx2,
        [TS_Q5_1] = &q5_1_kernels_avx2,
        [TS_Q2_K] = &q2_k_kernels_avx2,
        [TS_Q3_K] = &q3_k_kernels_avx2,
        [TS_Q4_K] = &q4_k_kernels_avx2,
        [TS_Q5_K] = &q5_k_kernels_avx2,
        [TS_Q6_K] = &q6_k_kernels_avx2,
        [TS_Q4NX] = &q4nx_kernels_avx2,
        [TS_IQ4_NL] = &iq4_nl_kernels_avx2,
        [TS_IQ4_XS] = &iq4_xs_kernels_avx2,
        [TS_MXFP4] = &mxfp4_kernels_avx2,
        LOWBIT_TYPES(avx2),
    },
    .unpacked = &unpacked_kernels_avx2 };

/* AVX-512: the Q8_0, Q5_0, Q4_0, IQ4_NL and MXFP4 kernels take their activations in pairs of blocks
 * (block_q8_0x2), the Q4_K kernels Q8_K in their code order (ACT_Q8_K_NIBBLES); the other quantized
 * types share the AVX2 quantizers' formats. */
#define AVX512_QUANTIZERS                                                                              \
    .quantize_q8_0 = act_quantize_q8_0_avx2, .quantize_q8_k = act_quantize_q8_k_avx2,                  \
    .quantize_q8_0x2 = act_quantize_q8_0x2_avx512, .quantize_q8_k_nibbles = act_quantize_q8_k_nibbles_avx2
#define AVX512_TYPES                                                                                   \
        [TS_F32]  = &f32_kernels_avx512,                                                               \
        [TS_F16]  = &f16_kernels_avx512,                                                               \
        [TS_BF16] = &bf16_kernels_avx512,                                                              \
        [TS_Q8_0] = &q8_0_kernels_avx512,                                                              \
        [TS_Q4_0] = &q4_0_kernels_avx512,                                                              \
        [TS_Q4_1] = &q4_1_kernels_avx512,                                                              \
        [TS_Q5_0] = &q5_0_kernels_avx512,                                                              \
        [TS_Q5_1] = &q5_1_kernels_avx512,                                                              \
        [TS_Q2_K] = &q2_k_kernels_avx512,                                                              \
        [TS_Q3_K] = &q3_k_kernels_avx512,                                                              \
        [TS_Q4_K] = &q4_k_kernels_avx512,                                                              \
        [TS_Q5_K] = &q5_k_kernels_avx512,                                                              \
        [TS_Q6_K] = &q6_k_kernels_avx512,                                                              \
        [TS_Q4NX] = &q4nx_kernels_avx512,                                                              \
        [TS_IQ4_NL] = &iq4_nl_kernels_avx512,                                                          \
        [TS_IQ4_XS] = &iq4_xs_kernels_avx512,                                                          \
        [TS_MXFP4] = &mxfp4_kernels_avx512
static const kernel_set avx512_set = {
    .level = SIMD_AVX512,
    AVX512_QUANTIZERS,
    .types = { AVX512_TYPES, LOWBIT_TYPES(avx512) },
    .unpacked = &unpacked_kernels_avx512 };
/* With VBMI and BITALG: the IQ2 and IQ3 grid types look up a super-block's grid entries in vectors
 * (IQ3 against activations in their planes, ACT_Q8_K_PLANES), and the ternary rows in lanes take
 * their fields by vpermb; still the portable kernels' bits. */
static const kernel_set avx512_vbmi_set = {
    .level = SIMD_AVX512,
    AVX512_QUANTIZERS, .quantize_q8_k_planes = act_quantize_q8_k_planes_avx2,
    .types = { AVX512_TYPES, PLANE_GRID_TYPES(avx512_vbmi), TERNARY_TYPES(avx512_vbmi), OTHER_LOWBIT_TYPES(avx512) },
    .unpacked = &unpacked_kernels_avx512 };
#endif

#if defined(__aarch64__)
/* NEON: the portable kernels (the compiler vectorizes their integer loops with Advanced SIMD,
 * which every aarch64 CPU has) plus hand-written float-weight kernels and a Q8_0 dot; Q4NX uses
 * the scalar reference. Every kernel gives the portable kernel's bits. */
#define NEON_PORTABLE_TYPES                                                                            \
    [TS_F32] = &f32_kernels_neon, [TS_F16] = &f16_kernels_neon, [TS_BF16] = &bf16_kernels_neon,          \
    [TS_Q4_1] = &q4_1_kernels_generic, [TS_Q5_1] = &q5_1_kernels_generic,                              \
    [TS_Q2_K] = &q2_k_kernels_generic, [TS_Q3_K] = &q3_k_kernels_generic
static const kernel_set neon_set = {
    .level = SIMD_NEON,
    .quantize_q8_0 = act_quantize_q8_0_generic, .quantize_q8_k = act_quantize_q8_k_generic,
    .types = {
        NEON_PORTABLE_TYPES,
        [TS_Q8_0] = &q8_0_kernels_neon,
        [TS_Q4_0] = &q4_0_kernels_generic,
        [TS_Q5_0] = &q5_0_kernels_generic,
        [TS_IQ4_NL] = &iq4_nl_kernels_generic,
        [TS_IQ4_XS] = &iq4_xs_kernels_generic,
        [TS_MXFP4] = &mxfp4_kernels_generic,
        [TS_Q4_K] = &q4_k_kernels_generic,
        [TS_Q5_K] = &q5_k_kernels_generic,
        [TS_Q6_K] = &q6_k_kernels_generic,
        LOWBIT_TYPES(generic),
    } };
/* With the ARMv8.2 dot product (SDOT): the types of the Q8_0, Q4_0, Q4_K_M, Q5_K_M, IQ4_NL, IQ4_XS
 * and MXFP4 files in SDOT row, 4-row and tile kernels, still the portable kernels' bits. */
static const kernel_set neon_dotprod_set = {
    .level = SIMD_NEON,
    .quantize_q8_0 = act_quantize_q8_0_generic, .quantize_q8_k = act_quantize_q8_k_generic,
    .types = {
        NEON_PORTABLE_TYPES,
        [TS_Q8_0] = &q8_0_kernels_neon_dotprod,
        [TS_Q4_0] = &q4_0_kernels_neon_dotprod,
        [TS_Q5_0] = &q5_0_kernels_neon_dotprod,
        [TS_IQ4_NL] = &iq4_nl_kernels_neon_dotprod,
        [TS_IQ4_XS] = &iq4_xs_kernels_neon_dotprod,
        [TS_MXFP4] = &mxfp4_kernels_neon_dotprod,
        [TS_Q4_K] = &q4_k_kernels_neon_dotprod,
        [TS_Q5_K] = &q5_k_kernels_neon_dotprod,
        [TS_Q6_K] = &q6_k_kernels_neon_dotprod,
        LOWBIT_TYPES(neon_dotprod),
    },
    .unpacked = &unpacked_kernels_neon_dotprod };
#endif

/* Each instruction set's kernels, indexed by enum simd_level (the list of sets: cpu.h); NULL for
 * the sets of other architectures. */
static const kernel_set *const kernel_sets[SIMD_COUNT] = {
    [SIMD_SCALAR] = &scalar_set,
#if defined(TS_X86)
    [SIMD_AVX2] = &avx2_set,
    [SIMD_AVX512] = &avx512_set,
#endif
#if defined(__aarch64__)
    [SIMD_NEON] = &neon_set,
#endif
};

const kernel_set *kernel_set_base(int level) { return level >= 0 && level < SIMD_COUNT ? kernel_sets[level] : NULL; }

const kernel_set *kernel_set_for(int level) {
#if defined(__aarch64__)
    if (level == SIMD_NEON && cpu_has_neon_dotprod()) return &neon_dotprod_set;   /* the SDOT kernels */
#endif
#if defined(TS_X86)
    if (level == SIMD_AVX512 && cpu_has_avx512_vbmi()) return &avx512_vbmi_set;
#endif
    return kernel_set_base(level);
}
