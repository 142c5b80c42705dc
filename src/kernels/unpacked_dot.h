/* The integer form every grid and ternary type shares (block_unpacked: per super-block of 256,
 * d * sc[g] * q[e] with integer sc per 16 weights and int8 q) and the dot products on it, for the
 * types' kernel files (iq1_dot.c, iq2_dot.c, iq3_dot.c, tq1_0_dot.c, tq2_0_dot.c) and the kernels of
 * unpacked rows (unpacked_dot.c). The dot of a super-block with a Q8_K block is
 *   isum = sum_g sc[g] * sum_{e in g} q[e] a[e]        (exact, in integers)
 *   sum += (d * d_a) * (float)isum                     (in super-block order)
 * in every kernel of every set, so all of them give the same bits: the portable one, AVX2, AVX-512,
 * NEON, and the tiles that read rows unpacked once for a whole batch (matmul.c). A type's kernels
 * differ only in how a super-block is unpacked (its file: iq1.c, iq2.c, iq3.c, tq1_0.c, tq2_0.c);
 * the SIMD kernels unpack with the portable code into a block_unpacked on the stack (one
 * L1-resident buffer) and multiply it with vector instructions. Private to src/kernels/. */
#ifndef TS_KERNELS_UNPACKED_DOT_H
#define TS_KERNELS_UNPACKED_DOT_H
#include "kernels/kernels_internal.h"
#include "kernels/simd.h"

/* A parenthesized list of a table's extra fields (the rows in lanes), put in without its parentheses */
#define UNPAREN(...) __VA_ARGS__

/* ---- the portable kernels ---- */

static ALWAYS_INLINE int32_t unpacked_isum(const block_unpacked *u, const block_q8_K *a) {
    int32_t isum = 0;
    for (int g = 0; g < 16; g++) isum += u->sc[g] * dot_i8(u->q + 16 * g, a->qs + 16 * g, 16);
    return isum;
}

static ALWAYS_INLINE float dot_unpacking(unpack_block_fn unpack, size_t block_bytes, const void *w, const void *act,
                                         int64_t k) {
    const uint8_t *wb = w;
    const block_q8_K *a = act;
    float sum = 0.0f;
    for (int64_t i = 0; i < k / QK_K; i++) {
        block_unpacked u;
        unpack(wb + (size_t)i * block_bytes, &u);
        sum += (u.d * f32_from_bits(load_u32(a[i].d))) * (float)unpacked_isum(&u, &a[i]);
    }
    return sum;
}

#if defined(TS_X86)
/* ---- AVX2: per 32 codes maddubs(|q|, a * sign q) -> 16 int16, madd by the two groups' scales ---- */

static ALWAYS_INLINE TARGET_AVX2 __m256i scales_2_avx2(const int16_t *sc) {
    return _mm256_setr_m128i(_mm_set1_epi16(sc[0]), _mm_set1_epi16(sc[1]));
}

/* The 8 int32 lanes of sc-scaled products of one unpacked super-block with one activation block. */
static ALWAYS_INLINE TARGET_AVX2 int32_t unpacked_isum_avx2(const block_unpacked *u, const block_q8_K *a) {
    __m256i acc = _mm256_setzero_si256();
    UNROLL
    for (int h = 0; h < 8; h++) {
        const __m256i q = _mm256_loadu_si256((const __m256i *)(u->q + 32 * h));
        const __m256i av = _mm256_loadu_si256((const __m256i *)(a->qs + 32 * h));
        const __m256i p = _mm256_maddubs_epi16(_mm256_sign_epi8(q, q), _mm256_sign_epi8(av, q));
        acc = _mm256_add_epi32(acc, _mm256_madd_epi16(p, scales_2_avx2(u->sc + 2 * h)));
    }
    return hsum_i32x8(acc);
}

/* A packed type's kernels: each super-block unpacked on the stack, then multiplied as above. */
static ALWAYS_INLINE TARGET_AVX2 float dot_unpacking_avx2(unpack_block_fn unpack, size_t block_bytes, const void *w,
                                                          const void *act, int64_t k) {
    const uint8_t *wb = w;
    const block_q8_K *a = act;
    float sum = 0.0f;
    for (int64_t i = 0; i < k / QK_K; i++) {
        block_unpacked u;
        _mm_prefetch((const char *)wb + (size_t)i * block_bytes + PREFETCH_BYTES, _MM_HINT_T0);
        unpack(wb + (size_t)i * block_bytes, &u);
        sum += (u.d * f32_from_bits(load_u32(a[i].d))) * (float)unpacked_isum_avx2(&u, &a[i]);
    }
    return sum;
}

#endif

#if defined(__aarch64__)
/* ---- NEON with SDOT: a group of 16 codes is one SDOT into 4 lanes, its sum times sc ---- */
static ALWAYS_INLINE TARGET_DOTPROD int32_t unpacked_isum_dotprod(const block_unpacked *u, const block_q8_K *a) {
    int32x4_t acc = vdupq_n_s32(0);
    for (int g = 0; g < 16; g++)
        acc = vmlaq_n_s32(acc, vdotq_s32(vdupq_n_s32(0), vld1q_s8(u->q + 16 * g), vld1q_s8(a->qs + 16 * g)), u->sc[g]);
    return vaddvq_s32(acc);
}

static ALWAYS_INLINE TARGET_DOTPROD float dot_unpacking_dotprod(unpack_block_fn unpack, size_t block_bytes,
                                                                const void *w, const void *act, int64_t k) {
    const uint8_t *wb = w;
    const block_q8_K *a = act;
    float sum = 0.0f;
    for (int64_t i = 0; i < k / QK_K; i++) {
        block_unpacked u;
        unpack(wb + (size_t)i * block_bytes, &u);
        sum += (u.d * f32_from_bits(load_u32(a[i].d))) * (float)unpacked_isum_dotprod(&u, &a[i]);
    }
    return sum;
}

#endif

#if defined(TS_X86)
/* Four table entries (8 bytes each) as one vector, loaded by address: vmovq / vmovhpd take their
 * operand from memory, where building from integer registers costs two operations per entry. */
static ALWAYS_INLINE TARGET_AVX2 __m128i two_entries(const uint64_t *a, const uint64_t *b) {
    return _mm_castpd_si128(_mm_loadh_pd(_mm_castsi128_pd(_mm_loadl_epi64((const __m128i *)a)), (const double *)b));
}
static ALWAYS_INLINE TARGET_AVX2 __m256i four_entries(const uint64_t *a, const uint64_t *b, const uint64_t *c, const uint64_t *d) {
    return _mm256_setr_m128i(two_entries(a, b), two_entries(c, d));
}

/* From the 16 int16 group scales: lanes 0-7 sc[2 ib], lanes 8-15 sc[2 ib + 1] (sub-block ib's groups) */
static ALWAYS_INLINE TARGET_AVX2 __m256i scales_of_sub_block(__m256i sc16, int ib) {
    const __m256i pair = _mm256_permutevar8x32_epi32(sc16, _mm256_set1_epi32(ib));
    return _mm256_shuffle_epi8(pair, _mm256_setr_epi8(0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1,
                                                      2, 3, 2, 3, 2, 3, 2, 3, 2, 3, 2, 3, 2, 3, 2, 3));
}

/* The 32 grid indices of a super-block as 16-bit lanes, formed in vectors (entry e of sub-block
 * ib is lane 4 ib + e): per entry, a byte of qs and a 3-bit field of qh moved to bits 8..10 by a
 * multiply (the field's bit l lands on 13 + l - shift, then >> 5). Stored to the stack and read
 * back by the entry loads, which costs less than forming each index in integer registers. */
static ALWAYS_INLINE TARGET_AVX2 void grid_indices(const uint8_t *qs, __m256i hi0, __m256i hi1, __m256i mult, uint16_t *idx) {
    const __m256i lo0 = _mm256_cvtepu8_epi16(_mm_loadu_si128((const __m128i *)qs));
    const __m256i lo1 = _mm256_cvtepu8_epi16(_mm_loadu_si128((const __m128i *)(qs + 16)));
    const __m256i field = _mm256_set1_epi16(0x0700);
    _mm256_storeu_si256((__m256i *)idx, _mm256_or_si256(lo0, _mm256_and_si256(_mm256_srli_epi16(_mm256_mullo_epi16(hi0, mult), 5), field)));
    _mm256_storeu_si256((__m256i *)(idx + 16), _mm256_or_si256(lo1, _mm256_and_si256(_mm256_srli_epi16(_mm256_mullo_epi16(hi1, mult), 5), field)));
}

/* 2 s + 1 for 16 groups from 16 4-bit fields, low nibble first in each of 8 bytes (IQ2_XS, IQ2_S:
 * a byte per sub-block), as 16 int16 lanes in group order */
static ALWAYS_INLINE TARGET_AVX2 __m256i scales16_of_nibbles(const uint8_t *b8) {
    const __m128i x = _mm_loadl_epi64((const __m128i *)b8), m4 = _mm_set1_epi8(0x0f);
    const __m256i s = _mm256_cvtepu8_epi16(_mm_unpacklo_epi8(_mm_and_si128(x, m4), _mm_and_si128(_mm_srli_epi16(x, 4), m4)));
    return _mm256_or_si256(_mm256_slli_epi16(s, 1), _mm256_set1_epi16(1));
}
/* The same scale for both groups of each sub-block: 8 values 2 s + 1 as int32 lanes -> 16 int16 lanes */
static ALWAYS_INLINE TARGET_AVX2 __m256i scales16_of_sub_blocks(__m256i s32) {
    const __m256i sc = _mm256_or_si256(_mm256_slli_epi32(s32, 1), _mm256_set1_epi32(1));
    return _mm256_or_si256(sc, _mm256_slli_epi32(sc, 16));
}

/* +1 / -1 bytes for the 32 weights of a sub-block from its 4 explicit sign bytes (IQ2_S, IQ3_S: bit j of
 * byte l negates weight 8 l + j): signs16 holds 16 sign bytes in both halves, the sub-block's are
 * bytes 4 q .. 4 q + 3; each copied to 8 lanes by one shuffle, its bits tested in place. */
static ALWAYS_INLINE TARGET_AVX2 __m256i sign_bytes_spread(__m256i signs16, int q) {
    const char j = (char)(4 * q), j1 = (char)(j + 1), j2 = (char)(j + 2), j3 = (char)(j + 3);
    return _mm256_shuffle_epi8(signs16, _mm256_setr_epi8(j, j, j, j, j, j, j, j, j1, j1, j1, j1, j1, j1, j1, j1,
                                                         j2, j2, j2, j2, j2, j2, j2, j2, j3, j3, j3, j3, j3, j3, j3, j3));
}
static ALWAYS_INLINE TARGET_AVX2 __m256i signs_of_bytes(__m256i signs16, int q) {
    const __m256i bytes = sign_bytes_spread(signs16, q), bits = _mm256_set1_epi64x(0x8040201008040201LL);
    return _mm256_or_si256(_mm256_cmpeq_epi8(_mm256_and_si256(bytes, bits), bits), _mm256_set1_epi8(1));
}
/* The same as a mask of the negated weights (AVX-512VL: one test instead of and, compare, or, sign) */
static ALWAYS_INLINE TARGET_AVX512 __mmask32 negative_of_bytes(__m256i signs16, int q) {
    return _mm256_test_epi8_mask(sign_bytes_spread(signs16, q), _mm256_set1_epi64x(0x8040201008040201LL));
}

/* The sign bytes of 32 groups of 8 from their 7-bit ksigns indices, one per byte (IQ2_XXS, IQ2_XS,
 * IQ3_XXS: the eighth bit keeps the count of negatives even, iq_ksigns), formed in a vector: the
 * parity from a nibble popcount table. ksign_bytes8: in group order; ksign_bytes: the two halves'
 * 16 bytes each in both lanes, as signs_of_bytes reads them. */
static ALWAYS_INLINE TARGET_AVX2 __m256i ksign_bytes8(__m256i s7) {
    const __m256i popcount4 = _mm256_setr_epi8(0, 1, 1, 2, 1, 2, 2, 3, 1, 2, 2, 3, 2, 3, 3, 4,
                                               0, 1, 1, 2, 1, 2, 2, 3, 1, 2, 2, 3, 2, 3, 3, 4);
    const __m256i m4 = _mm256_set1_epi8(0x0f);
    const __m256i pc = _mm256_add_epi8(_mm256_shuffle_epi8(popcount4, _mm256_and_si256(s7, m4)),
                                       _mm256_shuffle_epi8(popcount4, _mm256_and_si256(_mm256_srli_epi16(s7, 4), m4)));
    return _mm256_or_si256(s7, _mm256_slli_epi16(_mm256_and_si256(pc, _mm256_set1_epi8(1)), 7));
}
static ALWAYS_INLINE TARGET_AVX2 void ksign_bytes(__m256i s7, __m256i halves[2]) {
    const __m256i s8 = ksign_bytes8(s7);
    halves[0] = _mm256_permute2x128_si256(s8, s8, 0x00);
    halves[1] = _mm256_permute2x128_si256(s8, s8, 0x11);
}

/* The four 7-bit fields at bits 0, 7, 14, 21 of each of 8 u32 words (IQ2_XXS, IQ3_XXS: one word per
 * sub-block), as bytes 4 ib + l. */
static ALWAYS_INLINE TARGET_AVX2 __m256i ksign_fields(__m256i w) {
    return _mm256_or_si256(_mm256_or_si256(_mm256_and_si256(w, _mm256_set1_epi32(0x7f)),
                                           _mm256_and_si256(_mm256_slli_epi32(w, 1), _mm256_set1_epi32(0x7f00))),
                           _mm256_or_si256(_mm256_and_si256(_mm256_slli_epi32(w, 2), _mm256_set1_epi32(0x7f0000)),
                                           _mm256_and_si256(_mm256_slli_epi32(w, 3), _mm256_set1_epi32(0x7f000000))));
}

/* The AVX2 row kernel of a type that unpacks a sub-block of 32 weights straight into registers:
 *   static ALWAYS_INLINE TARGET_AVX2 void T_sub_avx2(const block *b, int ib, __m256i *mag, __m256i *sgn, __m256i *sc)
 * gives the 32 magnitudes |q| (unsigned bytes), bytes whose sign is q's (the activations take it:
 * negative negates, 0 zeroes) and the int16 scales of its two groups of 16 (8 lanes each); and
 *   static inline float T_d(const block *b)
 * is block_unpacked.d. The integer sums are the same as through block_unpacked, so the same bits,
 * without the round trip through memory that costs most of a packed row's time. */
#define SUB_AVX2_DOT_BODY(T, block, PREPARE, SUB_ARGS)                                                    \
    static TARGET_AVX2 float T##_dot_avx2(const void *w, const void *act, int64_t k) {                      \
        const block *x = w;                                                                                 \
        const block_q8_K *y = act;                                                                          \
        float sum = 0.0f;                                                                                   \
        for (int64_t i = 0; i < k / QK_K; i++) {                                                            \
            _mm_prefetch((const char *)(x + i) + PREFETCH_BYTES, _MM_HINT_T0);                              \
            PREPARE                                                                                         \
            __m256i acc = _mm256_setzero_si256();                                                           \
            UNROLL                                                                                          \
            for (int ib = 0; ib < 8; ib++) {                                                                \
                __m256i mag, sgn, sc;                                                                       \
                T##_sub_avx2 SUB_ARGS;                                                                      \
                const __m256i av = _mm256_loadu_si256((const __m256i *)(y[i].qs + 32 * ib));                \
                acc = _mm256_add_epi32(acc, _mm256_madd_epi16(_mm256_maddubs_epi16(mag, _mm256_sign_epi8(av, sgn)), sc)); \
            }                                                                                               \
            sum += (T##_d(&x[i]) * f32_from_bits(load_u32(y[i].d))) * (float)hsum_i32x8(acc);               \
        }                                                                                                   \
        return sum;                                                                                         \
    }                                                                                                       \
    /* a batch's unpacking through the same registers: q = sign(|q|, sign), the pair of scales */          \
    static TARGET_AVX2 void T##_unpack_avx2(const uint8_t *wb, block_unpacked *ub) {                        \
        const block *x = (const block *)wb;                                                                 \
        const int64_t i = 0;                                                                                \
        PREPARE                                                                                             \
        ub->d = T##_d(&x[i]);                                                                               \
        UNROLL                                                                                              \
        for (int ib = 0; ib < 8; ib++) {                                                                    \
            __m256i mag, sgn, sc;                                                                           \
            T##_sub_avx2 SUB_ARGS;                                                                          \
            _mm256_storeu_si256((__m256i *)(ub->q + 32 * ib), _mm256_sign_epi8(mag, sgn));                  \
            ub->sc[2 * ib] = (int16_t)_mm256_extract_epi16(sc, 0);                                          \
            ub->sc[2 * ib + 1] = (int16_t)_mm256_extract_epi16(sc, 8);                                      \
        }                                                                                                   \
    }                                                                                                       \
    const type_kernels T##_kernels_avx2 = { .act_type = TS_Q8_K, .dot = T##_dot_avx2, .unpack = T##_unpack_avx2 };
#define SUB_AVX2_DOT_LANES(T, block, extra) SUB_AVX2_DOT_BODY(T, block, , (&x[i], ib, &mag, &sgn, &sc)) \
    const type_kernels T##_kernels_avx512 = { .act_type = TS_Q8_K, .dot = T##_dot_avx2, .unpack = T##_unpack_avx2, UNPAREN extra };
#define SUB_AVX2_DOT(T, block) SUB_AVX2_DOT_LANES(T, block, ())
/* The same with a step per super-block first, for what is cheaper formed for all its sub-blocks at
 * once in vectors (indices, signs):
 *   static ALWAYS_INLINE TARGET_AVX2 void T_prepare_avx2(const block *b, T_prepared *p)
 * and T_sub_avx2(const block *b, const T_prepared *p, int ib, mag, sgn, sc). */
#define PREPARED_SUB_AVX2_DOT(T, block) \
    SUB_AVX2_DOT_BODY(T, block, T##_prepared prep; T##_prepare_avx2(&x[i], &prep);, (&x[i], &prep, ib, &mag, &sgn, &sc))
/* The AVX-512 row kernel of such a type: the negated weights' bits as a mask register,
 *   static ALWAYS_INLINE TARGET_AVX512 __mmask32 T_negative(const block *b, const T_prepared *p, int ib),
 * negate the activations in one masked subtraction, and VNNI's dpwssd scales and adds the pairs (the
 * 256-bit forms of AVX512VL: fewer operations per sub-block, same integers, same bits). */
#define PREPARED_SUB_AVX512_DOT(T, block, extra)                                                            \
    static TARGET_AVX512 float T##_dot_avx512(const void *w, const void *act, int64_t k) {                  \
        const block *x = w;                                                                                 \
        const block_q8_K *y = act;                                                                          \
        float sum = 0.0f;                                                                                   \
        for (int64_t i = 0; i < k / QK_K; i++) {                                                            \
            _mm_prefetch((const char *)(x + i) + PREFETCH_BYTES, _MM_HINT_T0);                              \
            T##_prepared prep;                                                                              \
            T##_prepare_avx2(&x[i], &prep);                                                                 \
            __m256i acc = _mm256_setzero_si256();                                                           \
            UNROLL                                                                                          \
            for (int ib = 0; ib < 8; ib++) {                                                                \
                __m256i mag, sgn, sc;   /* sgn: unused here, its work dropped by the compiler */            \
                T##_sub_avx2(&x[i], &prep, ib, &mag, &sgn, &sc);                                            \
                const __m256i av = _mm256_loadu_si256((const __m256i *)(y[i].qs + 32 * ib));                \
                const __m256i sa = _mm256_mask_sub_epi8(av, T##_negative(&x[i], &prep, ib), _mm256_setzero_si256(), av); \
                acc = _mm256_dpwssd_epi32(acc, _mm256_maddubs_epi16(mag, sa), sc);                          \
            }                                                                                               \
            sum += (T##_d(&x[i]) * f32_from_bits(load_u32(y[i].d))) * (float)hsum_i32x8(acc);               \
        }                                                                                                   \
        return sum;                                                                                         \
    }                                                                                                       \
    const type_kernels T##_kernels_avx512 = { .act_type = TS_Q8_K, .dot = T##_dot_avx512, .unpack = T##_unpack_avx2, UNPAREN extra };
/* ---- AVX-512 with VBMI and BITALG: a super-block as 64 entries of 4 grid values, looked up at once ----
 * (IQ3_XXS, IQ3_S.) Byte j of the 64 entries comes from
 * the grid's byte plane j (iq_grids.h: T_planes) by vpermi2b, 128 table bytes per lookup; the
 * activations come in the same planes (ACT_Q8_K_PLANES), so plane j of the codes meets plane j of the
 * activations with no reordering. The integer sums per group are those of block_unpacked: the same bits. */

/* Byte j of the 64 entries idx from a 256-byte plane: vpermi2b takes the low 7 bits, bit 7 the half. */
static ALWAYS_INLINE TARGET_AVX512_VBMI __m512i plane_lookup_256(const uint8_t *plane, __m512i idx, __mmask64 bit7) {
    const __m512i lo = _mm512_permutex2var_epi8(_mm512_load_si512(plane), idx, _mm512_load_si512(plane + 64));
    const __m512i hi = _mm512_permutex2var_epi8(_mm512_load_si512(plane + 128), idx, _mm512_load_si512(plane + 192));
    return _mm512_mask_blend_epi8(bit7, lo, hi);
}
/* The same from a 512-byte plane, bit 8 of each index in bit8 */
static ALWAYS_INLINE TARGET_AVX512_VBMI __m512i plane_lookup_512(const uint8_t *plane, __m512i idx, __mmask64 bit7, __mmask64 bit8) {
    return _mm512_mask_blend_epi8(bit8, plane_lookup_256(plane, idx, bit7), plane_lookup_256(plane + 256, idx, bit7));
}
/* The integer sum of a super-block: codes[j] its plane j (magnitudes), signs its 256 sign bits in
 * element order (32 bytes: bit b of byte g negates element 8 g + b), sc16 its 16 groups' scales
 * (int16 lanes), a the activations' planes. The negated elements of plane j are picked from the sign
 * bits by vpshufbitqmb: entry e's element 4 e + j is bit 4 (e % 8) + j of sub-block e / 8's 32 bits
 * (one 64-bit lane per sub-block); entry pair (2 t, 2 t + 1), an int16 lane of maddubs, holds elements
 * 8 t + j and 8 t + 4 + j, of group t / 2. */
static ALWAYS_INLINE TARGET_AVX512_VBMI int32_t planes_isum(const __m512i codes[4], __m256i signs, __m256i sc16, const int8_t *a) {
    static const _Alignas(64) uint8_t bit_of_entry[4][64] = {
#define BITS(j) { 0 + j, 4 + j, 8 + j, 12 + j, 16 + j, 20 + j, 24 + j, 28 + j, 0 + j, 4 + j, 8 + j, 12 + j, 16 + j, 20 + j, 24 + j, 28 + j, \
                  0 + j, 4 + j, 8 + j, 12 + j, 16 + j, 20 + j, 24 + j, 28 + j, 0 + j, 4 + j, 8 + j, 12 + j, 16 + j, 20 + j, 24 + j, 28 + j, \
                  0 + j, 4 + j, 8 + j, 12 + j, 16 + j, 20 + j, 24 + j, 28 + j, 0 + j, 4 + j, 8 + j, 12 + j, 16 + j, 20 + j, 24 + j, 28 + j, \
                  0 + j, 4 + j, 8 + j, 12 + j, 16 + j, 20 + j, 24 + j, 28 + j, 0 + j, 4 + j, 8 + j, 12 + j, 16 + j, 20 + j, 24 + j, 28 + j }
        BITS(0), BITS(1), BITS(2), BITS(3)
#undef BITS
    };
    static const _Alignas(64) uint16_t group_of_pair[32] = { 0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6, 7, 7,
                                                             8, 8, 9, 9, 10, 10, 11, 11, 12, 12, 13, 13, 14, 14, 15, 15 };
    const __m512i bits = _mm512_cvtepu32_epi64(signs);
    const __m512i sc = _mm512_permutexvar_epi16(_mm512_load_si512(group_of_pair), _mm512_zextsi256_si512(sc16));
    __m512i acc = _mm512_setzero_si512();
    UNROLL
    for (int j = 0; j < 4; j++) {
        const __m512i av = _mm512_loadu_si512(a + 64 * j);
        const __mmask64 neg = _mm512_bitshuffle_epi64_mask(bits, _mm512_load_si512(bit_of_entry[j]));
        acc = _mm512_dpwssd_epi32(acc, _mm512_maddubs_epi16(codes[j], _mm512_mask_sub_epi8(av, neg, _mm512_setzero_si512(), av)), sc);
    }
    return _mm512_reduce_add_epi32(acc);
}

/* A type's VBMI row kernel and table from ISUM(const block *, const int8_t *a), a super-block's
 * integer sum against Q8_K activations (act: TS_Q8_K or ACT_Q8_K_PLANES); T_unpack_avx2 unpacks */
#define VBMI_ISUM_DOT(T, block, ISUM, act, extra)                                                           \
    static TARGET_AVX512_VBMI float T##_dot_avx512_vbmi(const void *w, const void *a, int64_t k) {          \
        const block *x = w;                                                                                 \
        const block_q8_K *y = a;                                                                            \
        float sum = 0.0f;                                                                                   \
        for (int64_t i = 0; i < k / QK_K; i++) {                                                            \
            _mm_prefetch((const char *)(x + i) + PREFETCH_BYTES, _MM_HINT_T0);                              \
            sum += (T##_d(&x[i]) * f32_from_bits(load_u32(y[i].d))) * (float)ISUM(&x[i], y[i].qs);         \
        }                                                                                                   \
        return sum;                                                                                         \
    }                                                                                                       \
    const type_kernels T##_kernels_avx512_vbmi = { .act_type = act, .dot = T##_dot_avx512_vbmi, .unpack = T##_unpack_avx2, UNPAREN extra };

#define SUB_KERNELS(T, block) UNPACKING_KERNELS_GENERIC(T, block) SUB_AVX2_DOT(T, block)
/* the same with more fields in the AVX-512 table (its rows in lanes), in parentheses */
#define SUB_KERNELS_LANES(T, block, extra) UNPACKING_KERNELS_GENERIC(T, block) SUB_AVX2_DOT_LANES(T, block, extra)
#define PREPARED_SUB_KERNELS(T, block) UNPACKING_KERNELS_GENERIC(T, block) PREPARED_SUB_AVX2_DOT(T, block) PREPARED_SUB_AVX512_DOT(T, block, ())
/* the same with more fields in the AVX-512 table (its rows in lanes), in parentheses */
#define PREPARED_SUB_KERNELS_LANES(T, block, extra) UNPACKING_KERNELS_GENERIC(T, block) PREPARED_SUB_AVX2_DOT(T, block) PREPARED_SUB_AVX512_DOT(T, block, extra)
#else
#define SUB_KERNELS(T, block) UNPACKING_KERNELS(T, block)
#define SUB_KERNELS_LANES(T, block, extra) UNPACKING_KERNELS(T, block)
#define PREPARED_SUB_KERNELS(T, block) UNPACKING_KERNELS(T, block)
#define PREPARED_SUB_KERNELS_LANES(T, block, extra) UNPACKING_KERNELS(T, block)
#endif

/* A type's kernel tables for every set: T_kernels_generic, _avx2, _avx512 (the AVX2 kernel: the
 * integer work is the unpacking's, which gains nothing from wider vectors), _neon_dotprod. */
#define UNPACKING_KERNELS_GENERIC(T, block)                                                                 \
    static float T##_dot_generic(const void *w, const void *a, int64_t k) {                                 \
        return dot_unpacking(T##_unpack, sizeof(block), w, a, k);                                           \
    }                                                                                                       \
    const type_kernels T##_kernels_generic = { .act_type = TS_Q8_K, .dot = T##_dot_generic, .unpack = T##_unpack };
#if defined(TS_X86)
#define UNPACKING_KERNELS_SIMD_LANES(T, block, extra)                                                      \
    static TARGET_AVX2 float T##_dot_avx2(const void *w, const void *a, int64_t k) {                       \
        return dot_unpacking_avx2(T##_unpack, sizeof(block), w, a, k);                                     \
    }                                                                                                      \
    const type_kernels T##_kernels_avx2 = { .act_type = TS_Q8_K, .dot = T##_dot_avx2, .unpack = T##_unpack }; \
    const type_kernels T##_kernels_avx512 = { .act_type = TS_Q8_K, .dot = T##_dot_avx2, .unpack = T##_unpack, UNPAREN extra };
#define UNPACKING_KERNELS_SIMD(T, block) UNPACKING_KERNELS_SIMD_LANES(T, block, ())
#elif defined(__aarch64__)
#define UNPACKING_KERNELS_SIMD(T, block)                                                                   \
    static TARGET_DOTPROD float T##_dot_dotprod(const void *w, const void *a, int64_t k) {                 \
        return dot_unpacking_dotprod(T##_unpack, sizeof(block), w, a, k);                                  \
    }                                                                                                      \
    const type_kernels T##_kernels_neon_dotprod = { .act_type = TS_Q8_K, .dot = T##_dot_dotprod, .unpack = T##_unpack };
#define UNPACKING_KERNELS_SIMD_LANES(T, block, extra) UNPACKING_KERNELS_SIMD(T, block)
#else
#define UNPACKING_KERNELS_SIMD(T, block)
#define UNPACKING_KERNELS_SIMD_LANES(T, block, extra)
#endif
#define UNPACKING_KERNELS(T, block) UNPACKING_KERNELS_GENERIC(T, block) UNPACKING_KERNELS_SIMD(T, block)
/* the same with more fields in the AVX-512 table (its rows in lanes), in parentheses */
#define UNPACKING_KERNELS_LANES(T, block, extra) UNPACKING_KERNELS_GENERIC(T, block) UNPACKING_KERNELS_SIMD_LANES(T, block, extra)

#endif
