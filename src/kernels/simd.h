/* The kernel sets: per weight type, the activation format it wants and its dot product kernels,
 * one set per SIMD level (private to src/kernels/ and matmul).
 *
 * Quantized weights are multiplied by activations quantized to 8 bits once per matmul input
 * (Q8_0 blocks for the 32-weight legacy types, Q8_K super-blocks for the K-quants): the block
 * dots are integer, scaled and accumulated in f32. Float weights (F32, F16, BF16) take the f32
 * activations as they are and are multiplied with FMA.
 *
 * Every kernel of a set computes one output (weight row . activation row) with an order of
 * operations that depends only on k, never on which rows or columns are computed together, so
 * the tile kernels agree bit for bit with the row kernels. */
#ifndef TS_KERNELS_SIMD_H
#define TS_KERNELS_SIMD_H
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include "core/tensor_type.h"
#include "kernels/cpu.h"
#include "kernels/kernels_internal.h"

/* The function attribute of each instruction set's kernels (the sets: enum simd_level in cpu.h,
 * their names and CPU tests in cpu.c). SIMD code is compiled per function, never by -march, so
 * one binary runs everywhere and a set's kernels run only where cpu_has_simd says so. */
#if defined(__x86_64__)
#define TS_X86 1
#define TARGET_AVX2 __attribute__((target("avx2,fma,f16c")))
#define TARGET_AVX512 \
    __attribute__((target("avx2,fma,f16c,bmi2,avx512f,avx512bw,avx512vl,avx512dq,avx512vnni")))
/* AVX-512 with VBMI and BITALG (byte permutes across the register: 64 table lookups at once; bit
 * gathers into masks), for the kernels the avx512 set takes where the CPU has them (Ice Lake, Zen 4
 * and later: cpu_has_avx512_vbmi) */
#define TARGET_AVX512_VBMI \
    __attribute__((target("avx2,fma,f16c,bmi2,avx512f,avx512bw,avx512vl,avx512dq,avx512vnni,avx512vbmi,avx512bitalg")))
#endif
#if defined(__aarch64__)
#define TARGET_NEON   /* none: Advanced SIMD is part of ARMv8-A */
/* The NEON set's kernels with the ARMv8.2 dot product (SDOT), where cpu_has_neon_dotprod */
#define TARGET_DOTPROD __attribute__((target("arch=armv8.2-a+dotprod")))
#endif
#define ALWAYS_INLINE inline __attribute__((always_inline))
/* Unroll the following small loop completely. The tile kernels index arrays of vector accumulators
 * by row and column: only with every index a constant does GCC keep them in registers (without
 * it, GCC 12 stores every accumulator to the stack on every iteration). */
#define UNROLL _Pragma("GCC unroll 8")
/* Keep the following loop a loop (where unrolling would keep too many values live). */
#define NO_UNROLL _Pragma("GCC unroll 1")
/* UNROLL for the loops over the positions of a rows-in-lanes body (up to LANES_MAX_NC = 16: unrolled
 * only 8 times, 10 positions or more kept their sums on the stack, 2.5x slower) */
#define UNROLL_16 _Pragma("GCC unroll 16")
/* The query heads of an attention kernel call in groups of up to 4: CALL(g, HG) for the group
 * starting at head g, with its size HG a literal (so a kernel's head loops unroll). */
#define FOR_HEAD_GROUPS_OF_4(heads, CALL)                                        \
    for (int g_ = 0; g_ < (heads); g_ += 4) switch ((heads) - g_) {              \
        case 1: CALL(g_, 1); break;                                              \
        case 2: CALL(g_, 2); break;                                              \
        case 3: CALL(g_, 3); break;                                              \
        default: CALL(g_, 4); break;                                             \
        }

#if defined(__aarch64__)
#include <arm_neon.h>
/* The end of a NEON tile body: output (r, c) of the NR x NC tile to y[c * ys + r]. */
static ALWAYS_INLINE void store_tile_sums(float sum[4][4], float *y, long ys, const int NR, const int NC) {
    UNROLL
    for (int r = 0; r < NR; r++)
        UNROLL
        for (int c = 0; c < NC; c++) y[c * ys + r] = sum[r][c];
}
#endif

/* w . act over k weights: one weight row with one activation row (in the set's format). */
typedef float (*vec_dot_fn)(const void *w, const void *act, int64_t k);
/* A register tile of the matrix-matrix product: y[c * y_stride + r] = w_r . act_c for r < the
 * type's tile_rows and c < tile_cols, each bitwise equal to the type's vec_dot_fn; weight rows
 * are w_stride bytes apart, activation rows act_stride bytes apart. */
typedef void (*tile_fn)(const uint8_t *w, size_t w_stride, const uint8_t *act, size_t act_stride,
                        int64_t k, float *y, long y_stride);
/* A type's kernels for one instruction set are written once, as a tile body
 *   static ALWAYS_INLINE void T_ISA_body(w, w_stride, act, act_stride, k, y, y_stride, NR, NC)
 * (NR x NC outputs, both constants after inlining). Its entry points are that body at fixed
 * shapes, each declared with its full name, so grep finds the definition:
 *   DOT_FROM_BODY(TARGET, T_dot_ISA, body)             the row dot (vec_dot_fn), the 1 x 1 tile
 *   TILE_FROM_BODY(TARGET, T_rows4_ISA, body, 4, 1)    the 4 x 1 rows of a matrix-vector product
 *   TILE_FROM_BODY(TARGET, T_tile_ISA, body, NR, NC)   the tile of a matrix-matrix product
 * (TARGET: the set's attribute above), and the type's table for the set names them:
 *   const type_kernels q8_0_kernels_avx2 = {
 *       .act_type = TS_Q8_0, .dot = q8_0_dot_avx2, .rows4 = q8_0_rows4_avx2,
 *       .tile = q8_0_tile_avx2, .tile_rows = 4, .tile_cols = 4 };
 * A dot that is no tile body (the portable T_dot_generic, or the portable code compiled for a
 * set's target) is written out as a function. */
#define DOT_FROM_BODY(TARGET, name, body)                                                         \
    static TARGET float name(const void *w, const void *a, int64_t k) {                           \
        float y;                                                                                  \
        body(w, 0, a, 0, k, &y, 0, 1, 1);                                                         \
        return y;                                                                                 \
    }
#define TILE_FROM_BODY(TARGET, name, body, NR, NC)                                                \
    static TARGET void name(const uint8_t *w, size_t ws, const uint8_t *a, size_t as, int64_t k,  \
                            float *y, long ys) {                                                  \
        body(w, ws, a, as, k, y, ys, NR, NC);                                                     \
    }

/* One activation row of k floats into the 8-bit format. */
typedef void (*quantize_act_fn)(const float *x, void *act, int64_t k);

/* Activation formats that are no tensor type: Q8_0 blocks in pairs (block_q8_0x2), and Q8_K
 * super-blocks with their codes in the order the AVX-512 Q4_K kernel loads a super-block's 4-bit
 * codes, 64 bytes at a time: the low nibbles of such a load are groups 4h and 4h + 2 (of 32
 * codes), the high nibbles groups 4h + 1 and 4h + 3, so each half h of 128 codes holds its groups
 * in the order 0, 2, 1, 3 (q8_k_nibble_slot). d and bsums as Q8_K, bsums in element order. */
#define ACT_Q8_0X2 (TS_TYPE_COUNT - 1)
#define ACT_Q8_K_NIBBLES (TS_TYPE_COUNT - 2)
static inline int q8_k_nibble_slot(int group) { return 4 * (group / 4) + (int[]){ 0, 2, 1, 3 }[group % 4]; }
/* Q8_K super-blocks with their codes in 4 planes, the order of a 4-byte grid's values looked up 64
 * entries at a time (byte j of entry e, weight 4 e + j, in plane j): code e of plane j at 64 j + e
 * (q8_k_plane_slot). d and bsums as Q8_K, bsums in element order. */
#define ACT_Q8_K_PLANES (TS_TYPE_COUNT - 3)
static inline int q8_k_plane_slot(int element) { return 64 * (element % 4) + element / 4; }

typedef struct type_kernels {
    int act_type;      /* TS_F32 (the activations as they are), TS_Q8_0, TS_Q8_K or one of the ACT_ formats above */
    vec_dot_fn dot;
    tile_fn tile;      /* NULL: the matmul calls dot for every output */
    int tile_rows, tile_cols;
    tile_fn rows4;     /* 4 rows x 1 position (a matrix-vector product's rows four at a time: the
                          activation's loads and sums shared by the four), bitwise equal to dot;
                          NULL: dot per row */
    /* The grid and ternary types (unpacked_dot.h): a super-block into block_unpacked, whose kernels
     * (kernel_set.unpacked) give dot's bits; a batch multiplies rows unpacked once. NULL: none. */
    void (*unpack)(const uint8_t *block, block_unpacked *u);
    /* Rows in lanes, for batches of at least lanes_min_cols positions (AVX-512 Q4_K): 16 rows
     * rearranged once per chunk (lanes_unpack, lanes_sb_bytes per super-block) so that one 512-bit
     * register holds 4 codes of each of the 16 rows, then multiplied 16 rows x nc (1..4) positions
     * per call (lanes_tile; y[c * ys + r]) with dot's integer sums and float operations, so its
     * bits. An integer dot product then serves 16 rows and no lanes are added up across a register.
     * NULL: none. */
    void (*lanes_unpack)(const uint8_t *w, size_t ws, int64_t k, uint8_t *out);
    void (*lanes_tile)(const uint8_t *u, const uint8_t *act, size_t as, int64_t k, int nc, float *y, long ys);
    size_t lanes_sb_bytes;
    int lanes_min_cols;
    /* Rows in lanes kept in memory (AVX-512 K-quants, the grid types, TQ1_0; weight.lanes): lanes_pack rearranges 16 rows
     * (ws bytes apart, k columns) once, at load, into the same 16 ws bytes at out, or into a form of
     * their own (lanes_packed_sb_bytes; every position of a batch then multiplies them without
     * rearranging them first), and lanes_packed multiplies 16
     * such rows with nc (1..5 or 8) positions (y[c * ys + r]), with dot's integer sums and float
     * operations, so its bits. NULL: none. */
    void (*lanes_pack)(const uint8_t *w, size_t ws, int64_t k, uint8_t *out);
    void (*lanes_packed)(const uint8_t *u, const uint8_t *act, size_t as, int64_t k, int nc, float *y, long ys);
    /* Row p (0..15) of 16 packed rows, in its own layout again (a tied embedding's token row);
     * NULL: the packed rows cannot give it back (lanes_packed_sb_bytes) */
    void (*lanes_row)(const uint8_t *u, size_t ws, int64_t k, int p, uint8_t *row);
    /* 0: the packed rows keep their own bytes; else they take this many per row and super-block
     * (the IQ grid types and TQ1_0: their values instead of grid indices or base-3 bytes), written
     * by lanes_pack at out for 16 rows of lanes_packed_row_bytes each */
    size_t lanes_packed_sb_bytes;
    int lanes_packed_widest;   /* the most positions lanes_packed takes in one pass (0: 8) */
    int lanes_act_type;   /* lanes_packed's activation format where it is not act_type's (0: act_type's) */
} type_kernels;

/* The activation format lanes_packed reads */
static inline int lanes_act_type(const type_kernels *tk) { return tk->lanes_act_type ? tk->lanes_act_type : tk->act_type; }

/* Bytes of one row of k weights kept in lanes by tk (row_bytes: the row in its own layout). */
static inline size_t lanes_packed_row_bytes(const type_kernels *tk, size_t row_bytes, int64_t k) {
    return tk->lanes_packed_sb_bytes ? (size_t)(k / 256) * tk->lanes_packed_sb_bytes : row_bytes;
}

typedef struct kernel_set {
    int level;                       /* enum simd_level */
    quantize_act_fn quantize_q8_0, quantize_q8_k, quantize_q8_0x2, quantize_q8_k_nibbles, quantize_q8_k_planes;
    /* NULL: the scalar reference type_traits.dot_f32 on f32 activations */
    const type_kernels *types[TS_TYPE_COUNT];
    /* Rows of block_unpacked (the grid types' rows unpacked for a batch): Q8_K activations, a tile */
    const type_kernels *unpacked;
} kernel_set;

/* The set of a level, NULL when it is not compiled into this binary. Does not check that the CPU
 * runs the level (cpu_has_simd); within a level it picks the kernels of the CPU's extensions where it
 * has them (NEON: SDOT; AVX-512: VBMI and BITALG). kernel_set_base: the level's set without them (the
 * tests hold both to the portable kernels). */
const kernel_set *kernel_set_for(int level);
const kernel_set *kernel_set_base(int level);

/* Bytes of one activation row of k values in format act_type (k a multiple of its block; q8_act.c). */
size_t act_row_bytes(int act_type, int64_t k);
/* The set's quantizer into a quantized activation format (NULL for TS_F32 or one it lacks). */
quantize_act_fn act_quantizer(const kernel_set *ks, int act_type);

/* ---- each weight type's kernels, exported by its file (q8_0_dot.c, ...) ----
 * T_kernels_ISA per instruction set with kernels of its own (the sets: cpu.h), which
 * kernel_sets.c gathers. _generic: portable C (the compiler vectorizes the integer loops for the
 * build target); the NEON set uses some of them, and they are the tests' reference for every set. */

extern const type_kernels f32_kernels_generic, f16_kernels_generic, bf16_kernels_generic;
extern const type_kernels q8_0_kernels_generic, q4_0_kernels_generic, q4_1_kernels_generic;
extern const type_kernels q5_0_kernels_generic, q5_1_kernels_generic;
extern const type_kernels q2_k_kernels_generic, q3_k_kernels_generic, q4_k_kernels_generic;
extern const type_kernels q5_k_kernels_generic, q6_k_kernels_generic;
extern const type_kernels iq4_nl_kernels_generic, iq4_xs_kernels_generic, mxfp4_kernels_generic;
/* Each set's kernels of the grid and ternary types and of their unpacked rows (unpacked_dot.h), and of
 * the Q8_0-activation low-bit types (nvfp4_dot.c, q1_0_dot.c, q2_0_dot.c); ISA = generic, avx2,
 * avx512, neon_dotprod. */
#define LOWBIT_KERNELS(ISA)                                                                                 \
    extern const type_kernels iq2_xxs_kernels_##ISA, iq2_xs_kernels_##ISA, iq2_s_kernels_##ISA;             \
    extern const type_kernels iq3_xxs_kernels_##ISA, iq3_s_kernels_##ISA, iq1_s_kernels_##ISA;              \
    extern const type_kernels iq1_m_kernels_##ISA, tq1_0_kernels_##ISA, tq2_0_kernels_##ISA;                \
    extern const type_kernels unpacked_kernels_##ISA, nvfp4_kernels_##ISA, q1_0_kernels_##ISA, q2_0_kernels_##ISA;
LOWBIT_KERNELS(generic)
#if defined(TS_X86)
LOWBIT_KERNELS(avx2)
LOWBIT_KERNELS(avx512)
/* the avx512 set's kernels of the 4-byte grids where the CPU has VBMI and BITALG (ACT_Q8_K_PLANES),
 * and of the ternary types (their rows in lanes by vpermb) */
extern const type_kernels iq3_xxs_kernels_avx512_vbmi, iq3_s_kernels_avx512_vbmi, iq2_xxs_kernels_avx512_vbmi,
    iq2_xs_kernels_avx512_vbmi, iq2_s_kernels_avx512_vbmi, iq1_s_kernels_avx512_vbmi, iq1_m_kernels_avx512_vbmi,
    tq1_0_kernels_avx512_vbmi;
#endif
#if defined(__aarch64__)
LOWBIT_KERNELS(neon_dotprod)
#endif
#if defined(TS_X86)
extern const type_kernels f32_kernels_avx2, f16_kernels_avx2, bf16_kernels_avx2;
extern const type_kernels q8_0_kernels_avx2, q4_0_kernels_avx2, q4_1_kernels_avx2;
extern const type_kernels q5_0_kernels_avx2, q5_1_kernels_avx2;
extern const type_kernels q2_k_kernels_avx2, q3_k_kernels_avx2, q4_k_kernels_avx2;
extern const type_kernels q5_k_kernels_avx2, q6_k_kernels_avx2, q4nx_kernels_avx2;
extern const type_kernels iq4_nl_kernels_avx2, iq4_xs_kernels_avx2, mxfp4_kernels_avx2;
extern const type_kernels f32_kernels_avx512, f16_kernels_avx512, bf16_kernels_avx512;
extern const type_kernels q8_0_kernels_avx512, q4_0_kernels_avx512, q4_1_kernels_avx512;
extern const type_kernels q5_0_kernels_avx512, q5_1_kernels_avx512;
extern const type_kernels q2_k_kernels_avx512, q3_k_kernels_avx512, q4_k_kernels_avx512;
extern const type_kernels q5_k_kernels_avx512, q6_k_kernels_avx512, q4nx_kernels_avx512;
extern const type_kernels iq4_nl_kernels_avx512, iq4_xs_kernels_avx512, mxfp4_kernels_avx512;
#endif
#if defined(__aarch64__)
extern const type_kernels q8_0_kernels_neon, f32_kernels_neon, f16_kernels_neon, bf16_kernels_neon;
/* With the dot product instructions (ARMv8.2 DotProd, cpu_has_neon_dotprod): the integer sums
 * by SDOT, then the portable kernel's float operations, so each gives the portable kernel's bits;
 * rows4 and tiles share the activation's loads. */
extern const type_kernels q8_0_kernels_neon_dotprod, q4_0_kernels_neon_dotprod, q5_0_kernels_neon_dotprod;
extern const type_kernels iq4_nl_kernels_neon_dotprod, iq4_xs_kernels_neon_dotprod, mxfp4_kernels_neon_dotprod;
extern const type_kernels q4_k_kernels_neon_dotprod, q5_k_kernels_neon_dotprod, q6_k_kernels_neon_dotprod;
#endif

/* Activation quantizers (q8_act.c): the same formats as the Q8_0 / Q8_K reference quantizers. */
void act_quantize_q8_0_generic(const float *x, void *act, int64_t k);
void act_quantize_q8_k_generic(const float *x, void *act, int64_t k);
#if defined(TS_X86)
void act_quantize_q8_0_avx2(const float *x, void *act, int64_t k);
void act_quantize_q8_k_avx2(const float *x, void *act, int64_t k);
/* The paired format: the same scales and codes as act_quantize_q8_0_avx2, laid out as block_q8_0x2. */
void act_quantize_q8_0x2_avx512(const float *x, void *act, int64_t k);
/* ACT_Q8_K_NIBBLES, ACT_Q8_K_PLANES: the same scales, codes and sums as act_quantize_q8_k_avx2, codes reordered. */
void act_quantize_q8_k_nibbles_avx2(const float *x, void *act, int64_t k);
void act_quantize_q8_k_planes_avx2(const float *x, void *act, int64_t k);
#endif
/* Back to floats in element order (for tests), from any quantized activation format. */
void act_dequant(int act_type, const void *act, float *y, int64_t k);

/* Sum of a[i] * b[i] over n int8 values: the inner loop of the portable kernels, written to
 * vectorize with whatever ISA the caller is compiled for. */
static ALWAYS_INLINE int32_t dot_i8(const int8_t *a, const int8_t *b, int n) {
    int32_t s = 0;
    for (int i = 0; i < n; i++) s += a[i] * b[i];
    return s;
}

/* bsums[g] of a Q8_K block: the sum of its codes 16g .. 16g+15. */
static inline int q8k_bsum(const uint8_t *bsums, int g) {
    return (int16_t)(bsums[2 * g] | bsums[2 * g + 1] << 8);
}

#if defined(TS_X86)
#include <immintrin.h>

/* The kernels prefetch their weight rows this far ahead: the hardware prefetcher stops at 4 KB
 * page boundaries, and a matrix-vector product is limited by how fast rows stream in (measured
 * on the SmolLM2-shaped Q8_0 decode, one thread: 33 tok/s without, 45 with 2 KB ahead). */
#define PREFETCH_BYTES 2048
/* A kernel reading NR > 1 rows of stride ws at once (4 x 1 rows, tiles) prefetches the same bytes
 * of the next NR rows, which its next call reads: PREFETCH_BYTES ahead would land in the rows it is
 * reading already. Q8_0 matrix-vector products, 512 MB, 4 rows per call: 56% -> 80% of a read-only
 * probe on one thread, 57% -> 85% on two (tools/bench_matvec.c). */
#define PREFETCH_ROW(p, NR, ws) \
    _mm_prefetch((const char *)(p) + ((NR) > 1 ? (size_t)(NR) * (ws) : (size_t)PREFETCH_BYTES), _MM_HINT_T0)

/* The Q4_K/Q5_K 4 x 1 row kernel (the matrix-vector product) prefetches in address order instead:
 * its step over bytes [from, to) of each of its 4 rows prefetches the same share of the 4
 * contiguous rows two calls ahead, [w + 8 ws + 4 from, w + 8 ws + 4 to). Measured on 512 MB
 * products, 2 threads (tools/bench_matvec.c), interleaved: Q4_K 69-74% -> 86-95% of the read-only
 * probe; Q6_K then 89-98% -> 81-84%, so it kept PREFETCH_ROW, but on a later host of the same kind its
 * PREFETCH_ROW streamed at 31-50% of the probe and address order at 74-76% (2048 columns; 1536: 46%
 * -> 74%; 1B Q4_K_M decode +10-36%, the DeepSeek-V2-Lite shape +20%), so Q6_K prefetches in address
 * order too. Q8_0 (pair_dot.h, IN_ORDER): no change
 * at 2048 columns, but at SmolLM2's 960 (1020-byte rows) 69-78% -> 78-85% of the probe and its
 * decode +9%; Q4_0, Q5_0 and IQ4_NL (compute-bound there) no gain, so they keep PREFETCH_ROW.
 * TO_L2 (a constant) prefetches into L2 only (T2) instead of every level (T0): Q8_0, whose rows
 * take little arithmetic per byte, streams faster that way (2048 columns 69-75% -> 81-89% of the
 * probe, 8192 columns 70-80% -> 78-82%, 960 unchanged; 1B Q8_0 decode +1-8% in 6 of 6 A/B pairs);
 * Q4_K reads slower (2048 columns 84-88% -> 68-77% with T1 or T2), so it keeps T0. Q4_K, Q5_K and
 * Q6_K (AVX-512) prefetch a quarter of a super-block per step of it rather than all of it at its
 * start (a burst fills the core's misses in flight: k_packed_prefetch_step): the 1B Q4_K_M read in
 * place decoded at 29.2-29.5 tok/s against 24.9-25.2 (Q4_K alone 26.6-27.6), the Q5_K_M at
 * 25.7-25.9 against 21.3-21.7; bench_matvec Q4_K 17.0-18.1 -> 19.5-19.7 GB/s, Q6_K unchanged. The
 * AVX2 Q6_K kernel an eighth a step: the 1B Q4_K_M with --simd avx2 23.1-23.7 -> 26.7-27.8 tok/s
 * (AVX2 Q4_K's PREFETCH_ROW spread over its steps: no gain, 26.6-27.2). */
static ALWAYS_INLINE void prefetch_rows4_share(const uint8_t *w, size_t ws, size_t from, size_t to,
                                               const int to_l2) {
    const char *ahead = (const char *)w + 8 * ws;
    if (to_l2)
        for (size_t o = 4 * from & ~(size_t)63; o < 4 * to; o += 64) _mm_prefetch(ahead + o, _MM_HINT_T2);
    else
        for (size_t o = 4 * from & ~(size_t)63; o < 4 * to; o += 64) _mm_prefetch(ahead + o, _MM_HINT_T0);
}

/* Step s of steps over the block at byte from (bytes long) of each of 4 rows: prefetch_rows4_share
 * of its share, so the lines come spread between the products rather than all at the block's start */
static ALWAYS_INLINE void prefetch_rows4_step(const uint8_t *w, size_t ws, size_t from, size_t bytes, size_t step, size_t steps) {
    prefetch_rows4_share(w, ws, from + step * bytes / steps, from + (step + 1) * bytes / steps, 0);
}

/* The attention value kernels read a KV head's cached rows in order, two per step; each step
 * prefetches the two rows ATTN_ROWS_AHEAD on (the ring's wrap is ignored: a prefetch past the
 * region never faults). Without it a decoded token's value rows came in at a third of the speed
 * (tools/bench_attention.c). */
#define ATTN_ROWS_AHEAD 16
static ALWAYS_INLINE void prefetch_row_pair_ahead(const void *row, size_t row_bytes) {
    const char *ahead = (const char *)row + ATTN_ROWS_AHEAD * row_bytes;
    for (size_t o = 0; o < 2 * row_bytes; o += 64) _mm_prefetch(ahead + o, _MM_HINT_T0);
}

/* The end of an AVX2 attention score pass (attention_f16.c, attention_q8_0.c): the first un of
 * the UG vectors of 8 keys of each of HG heads, acc[h][u], times scale, stored at out[h] + 8 u. */
static ALWAYS_INLINE TARGET_AVX2 void store_scaled_scores_avx2(__m256 acc[2][8], const int HG, const int UG, int un,
                                                               float scale, float *const out[2]) {
    const __m256 s = _mm256_set1_ps(scale);
    UNROLL
    for (int h = 0; h < HG; h++)
        UNROLL
        for (int u = 0; u < UG; u++)
            if (u < un) _mm256_storeu_ps(out[h] + 8 * u, _mm256_mul_ps(acc[h][u], s));
}

/* The end of an AVX-512 attention score kernel (attention_f16.c, attention_q8_0.c): for each of
 * gn heads, its vectors [u0, u1] of 16 keys, acc[h][u], times scale, and of those the keys
 * [i0, i0 + count) copied to score + h score_stride. */
static ALWAYS_INLINE TARGET_AVX512 void store_scaled_scores_avx512(__m512 (*acc)[4], int gn, int u0, int u1, int i0,
                                                                   int count, float scale, float *score,
                                                                   size_t score_stride) {
    const __m512 s = _mm512_set1_ps(scale);
    for (int h = 0; h < gn; h++) {
        float all[4 * 16];   /* the 4 vectors of 16 keys an acc row holds (a whole key block) */
        for (int u = u0; u <= u1; u++) _mm512_storeu_ps(all + 16 * u, _mm512_mul_ps(acc[h][u], s));
        memcpy(score + h * score_stride, all + i0, (size_t)count * sizeof(float));
    }
}

/* Sum of the 8 lanes, always in the same order. */
static ALWAYS_INLINE TARGET_AVX2 float hsum_f32x8(__m256 v) {
    __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    s = _mm_add_ps(s, _mm_movehl_ps(s, s));
    s = _mm_add_ss(s, _mm_movehdup_ps(s));
    return _mm_cvtss_f32(s);
}

/* Sum of the 8 int32 lanes (exact). */
static ALWAYS_INLINE TARGET_AVX2 int32_t hsum_i32x8(__m256i v) {
    __m128i s = _mm_add_epi32(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1));
    s = _mm_add_epi32(s, _mm_shuffle_epi32(s, _MM_SHUFFLE(1, 0, 3, 2)));
    s = _mm_add_epi32(s, _mm_shuffle_epi32(s, _MM_SHUFFLE(2, 3, 0, 1)));
    return _mm_cvtsi128_si32(s);
}

/* The sum of each 128-bit block's 4 int32 lanes, block b's in lane b: two in-block shuffles + adds
 * total every block, a permute gathers the totals. */
static ALWAYS_INLINE TARGET_AVX512 __m128i block_sums_4(__m512i t) {
    t = _mm512_add_epi32(t, _mm512_shuffle_epi32(t, _MM_PERM_BADC));
    t = _mm512_add_epi32(t, _mm512_shuffle_epi32(t, _MM_PERM_CDAB));
    return _mm512_castsi512_si128(_mm512_permutexvar_epi32(_mm512_setr_epi32(0, 4, 8, 12, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0), t));
}

/* The integer sums of 4 vectors' 16 lanes: per 128-bit block b, after two unpack + add rounds,
 * lane r holds vector r's sum over block b; the result adds the four blocks. */
static ALWAYS_INLINE TARGET_AVX512 __m512i lane_sums_4_blocks(const __m512i x[4]) {
    const __m512i u0 = _mm512_add_epi32(_mm512_unpacklo_epi32(x[0], x[1]), _mm512_unpackhi_epi32(x[0], x[1]));
    const __m512i u1 = _mm512_add_epi32(_mm512_unpacklo_epi32(x[2], x[3]), _mm512_unpackhi_epi32(x[2], x[3]));
    return _mm512_add_epi32(_mm512_unpacklo_epi64(u0, u1), _mm512_unpackhi_epi64(u0, u1));
}

static ALWAYS_INLINE TARGET_AVX512 __m128i lane_sums_4(const __m512i x[4]) {
    const __m512i b = lane_sums_4_blocks(x);
    const __m256i h = _mm256_add_epi32(_mm512_castsi512_si256(b), _mm512_extracti64x4_epi64(b, 1));
    return _mm_add_epi32(_mm256_castsi256_si128(h), _mm256_extracti128_si256(h, 1));
}

/* The integer sums of 16 vectors' lanes, x[r][c]'s in lane 4r + c: per r, lane_sums_4_blocks
 * gives block sums; two rounds of 128-bit shuffles + adds move row r's totals to block r. */
static ALWAYS_INLINE TARGET_AVX512 __m512i lane_sums_4x4(__m512i x[4][4]) {
    __m512i b[4];
    UNROLL
    for (int r = 0; r < 4; r++) b[r] = lane_sums_4_blocks(x[r]);
    /* p: [b0 blocks 0+1, b0 blocks 2+3, b1 blocks 0+1, b1 blocks 2+3], q likewise for b2, b3 */
    const __m512i p = _mm512_add_epi32(_mm512_shuffle_i32x4(b[0], b[1], _MM_SHUFFLE(2, 0, 2, 0)),
                                       _mm512_shuffle_i32x4(b[0], b[1], _MM_SHUFFLE(3, 1, 3, 1)));
    const __m512i q = _mm512_add_epi32(_mm512_shuffle_i32x4(b[2], b[3], _MM_SHUFFLE(2, 0, 2, 0)),
                                       _mm512_shuffle_i32x4(b[2], b[3], _MM_SHUFFLE(3, 1, 3, 1)));
    return _mm512_add_epi32(_mm512_shuffle_i32x4(p, q, _MM_SHUFFLE(2, 0, 2, 0)),
                            _mm512_shuffle_i32x4(p, q, _MM_SHUFFLE(3, 1, 3, 1)));
}

/* The outputs of a K-quant kernel that adds its lanes up as integers: a 4 x 4 tile's 16 sums in one
 * register (pair (r, c) in lane 4r + c), a 4 x 1 kernel's in 4 lanes, other shapes' one by one. */
static ALWAYS_INLINE TARGET_AVX512 void store_exact_sums(float *y, long ys, const int NR, const int NC, __m512 sum16,
                                                         __m128 sum4, float sum[4][4]) {
    if (NR == 4 && NC == 4) {
        _Alignas(64) float s[16];
        _mm512_store_ps(s, sum16);
        for (int r = 0; r < 4; r++) for (int c = 0; c < 4; c++) y[c * ys + r] = s[4 * r + c];
    } else if (NR == 4 && NC == 1) {
        _Alignas(16) float s[4];
        _mm_store_ps(s, sum4);
        for (int r = 0; r < 4; r++) y[r] = s[r];
    } else {
        for (int r = 0; r < NR; r++)
            for (int c = 0; c < NC; c++) y[c * ys + r] = sum[r][c];
    }
}

/* Sum of the 16 lanes, always in the same order. */
static ALWAYS_INLINE TARGET_AVX512 float hsum_f32x16(__m512 v) {
    return hsum_f32x8(_mm256_add_ps(_mm512_castps512_ps256(v), _mm512_extractf32x8_ps(v, 1)));
}

/* Two blocks' 32 bytes in one 512-bit vector: p0 in the low half, p1 (or zeros when NULL) high. */
static ALWAYS_INLINE TARGET_AVX512 __m512i join_i8x32(__m256i lo, const __m256i *hi) {
    return hi ? _mm512_inserti64x4(_mm512_castsi256_si512(lo), *hi, 1) : _mm512_zextsi256_si512(lo);
}

static ALWAYS_INLINE TARGET_AVX2 float f16_bits_to_f32(const uint8_t *p) {
    uint16_t h;
    memcpy(&h, p, 2);
    return _cvtsh_ss(h);
}
#endif

#endif
