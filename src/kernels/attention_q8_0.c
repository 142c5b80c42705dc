/* Attention over a q8_0 KV cache (attention.h): a key block is int8 codes [hd][KV_KEY_BLOCK] and
 * the f16 scale of each 32 dimensions [hd / 32][KV_KEY_BLOCK]; a value row is Q8_0 blocks. The
 * codes are widened exactly to f32:
 *   score = scale * sum over the groups g of 32 dimensions, in order, of d_g * (sum_{i in g} q[i] code[i])
 *   out[i] = sum_j (a[j] * d_j,g) * code_j[i]
 * (the portable versions multiply and add, the x86 ones fuse). Portable, AVX2, AVX-512 and NEON
 * (the portable operations, so their bits). */
#include "kernels/attention_q8_0.h"
#include "kernels/attention_layout.h"
#include "kernels/simd.h"
#include "kernels/kernels_internal.h"

static void scores_one_generic(const float *q, const void *block, int hd, int i0, int count, float scale, float *score) {
    const int8_t *codes = (const int8_t *)block + i0;
    const uint16_t *scales = (const uint16_t *)((const uint8_t *)block + (size_t)hd * KV_KEY_BLOCK) + i0;
    float part[KV_KEY_BLOCK];
    for (int j = 0; j < count; j++) score[j] = 0.0f;
    for (int g = 0; g < hd / QK; g++) {
        for (int j = 0; j < count; j++) part[j] = 0.0f;
        for (int i = QK * g; i < QK * (g + 1); i++) {
            const int8_t *row = codes + (size_t)i * KV_KEY_BLOCK;
            for (int j = 0; j < count; j++) part[j] += q[i] * (float)row[j];
        }
        const uint16_t *d = scales + (size_t)g * KV_KEY_BLOCK;
        for (int j = 0; j < count; j++) score[j] += half_to_f32(d[j]) * part[j];
    }
    for (int j = 0; j < count; j++) score[j] *= scale;
}

static void values_one_generic(const float *a, int count, const void *v, size_t row_bytes, int slots, int s0, int hd, float *out) {
    for (int i = 0; i < hd; i++) out[i] = 0.0f;
    int slot = s0 % slots;
    for (int j = 0; j < count; j++) {
        const block_q8_0 *row = (const block_q8_0 *)((const uint8_t *)v + (size_t)slot * row_bytes);
        for (int g = 0; g < hd / QK; g++) {
            const float f = a[j] * load_f16(row[g].d);
            for (int i = 0; i < QK; i++) out[QK * g + i] += f * (float)row[g].qs[i];
        }
        if (++slot == slots) slot = 0;
    }
}

void attention_scores_q8_0_generic(const float *q, int heads, const void *block, int hd, int i0, int count, float scale, float *score, size_t score_stride) {
    for (int g = 0; g < heads; g++) scores_one_generic(q + (size_t)g * hd, block, hd, i0, count, scale, score + g * score_stride);
}

void attention_values_q8_0_generic(const float *a, size_t a_stride, int heads, int count, const void *v, size_t row_bytes, int slots, int s0, int hd, float *out, size_t out_stride) {
    for (int g = 0; g < heads; g++) values_one_generic(a + g * a_stride, count, v, row_bytes, slots, s0, hd, out + g * out_stride);
}

#if defined(TS_X86)
/* ---- AVX2: vectors of 8 keys or dimensions, the query heads of a KV head in passes that fit 16
 * registers (as the AVX-512 ones below, each widened vector of codes serves every head of the
 * pass, and a head's chains are those of a pass of its own, so are its bits). These replace the
 * portable ones in the AVX2 set: a 1B shape at 4,096 positions, one thread (tools/bench_attention.c),
 * 43.0 ms per token for the 16 layers' attention with the portable ones, 13.4 with these. ---- */

static ALWAYS_INLINE TARGET_AVX2 __m256 codes8(const int8_t *p) {
    return _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(_mm_loadl_epi64((const __m128i *)p)));
}

/* The scores of HG <= 2 heads for key vectors [ub, ub + un) of the block (un <= UG, HG x UG <= 4:
 * a per-group partial sum and a total per head and vector), scaled, into all[h][8 (ub + u)]. The
 * first pass prefetches the same code row of the next block. */
static ALWAYS_INLINE TARGET_AVX2 void q8_scores_pass_avx2(const float *q, const int HG, const int UG, const void *block,
                                                          int hd, int ub, int un, int first, float scale,
                                                          float all[2][KV_KEY_BLOCK]) {
    const int8_t *codes = block;
    const uint16_t *scales = (const uint16_t *)((const uint8_t *)block + (size_t)hd * KV_KEY_BLOCK);
    const size_t block_bytes = (size_t)hd * KV_KEY_BLOCK + (size_t)(hd / QK) * KV_KEY_BLOCK * 2;
    __m256 acc[2][8];
    UNROLL
    for (int h = 0; h < HG; h++)
        UNROLL
        for (int u = 0; u < UG; u++) acc[h][u] = _mm256_setzero_ps();
    for (int g = 0; g < hd / QK; g++) {
        __m256 part[2][4];
        UNROLL
        for (int h = 0; h < HG; h++)
            UNROLL
            for (int u = 0; u < UG; u++) part[h][u] = _mm256_setzero_ps();
        for (int i = QK * g; i < QK * (g + 1); i++) {
            const int8_t *row = codes + (size_t)i * KV_KEY_BLOCK;
            if (first) _mm_prefetch((const char *)row + block_bytes, _MM_HINT_T0);
            __m256 qi[2];
            UNROLL
            for (int h = 0; h < HG; h++) qi[h] = _mm256_set1_ps(q[(size_t)h * hd + i]);
            UNROLL
            for (int u = 0; u < UG; u++) {
                if (u >= un) break;
                const __m256 c = codes8(row + 8 * (ub + u));
                UNROLL
                for (int h = 0; h < HG; h++) part[h][u] = _mm256_fmadd_ps(qi[h], c, part[h][u]);
            }
        }
        const uint16_t *d = scales + (size_t)g * KV_KEY_BLOCK;
        UNROLL
        for (int u = 0; u < UG; u++) {
            if (u >= un) break;
            const __m256 dv = _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(d + 8 * (ub + u))));
            UNROLL
            for (int h = 0; h < HG; h++) acc[h][u] = _mm256_fmadd_ps(dv, part[h][u], acc[h][u]);
        }
    }
    store_scaled_scores_avx2(acc, HG, UG, un, scale, (float *const[2]){ all[0] + 8 * ub, all[1] + 8 * ub });
}

static ALWAYS_INLINE TARGET_AVX2 void q8_scores_group_avx2(const float *q, const int HG, const int UG, const void *block,
                                                           int hd, int i0, int count, float scale, float *score,
                                                           size_t score_stride) {
    const int u0 = i0 / 8, u1 = (i0 + count - 1) / 8;
    float all[2][KV_KEY_BLOCK];
    for (int ub = u0; ub <= u1; ub += UG)
        q8_scores_pass_avx2(q, HG, UG, block, hd, ub, u1 - ub + 1 < UG ? u1 - ub + 1 : UG, ub == u0, scale, all);
    for (int h = 0; h < HG; h++) memcpy(score + h * score_stride, all[h] + i0, (size_t)count * sizeof(float));
}

TARGET_AVX2 void attention_scores_q8_0_avx2(const float *q, int heads, const void *block, int hd, int i0, int count,
                                            float scale, float *score, size_t score_stride) {
    for (int g = 0; g < heads;) {
        const float *qg = q + (size_t)g * hd;
        float *sg = score + g * score_stride;
        if (heads - g >= 2) { q8_scores_group_avx2(qg, 2, 2, block, hd, i0, count, scale, sg, score_stride); g += 2; }
        else { q8_scores_group_avx2(qg, 1, 4, block, hd, i0, count, scale, sg, score_stride); g += 1; }
    }
}

/* The weighted values of HG heads, the dimensions in slices of UG vectors of 8 inside one block
 * (HG x UG <= 4), even and odd rows into separate chains per head and vector; the first slice
 * prefetches the rows ahead. */
static ALWAYS_INLINE TARGET_AVX2 void q8_values_group_avx2(const float *a, size_t a_stride, const int HG, const int UG,
                                                           int count, const uint8_t *base, size_t row_bytes, int slots,
                                                           int s0, int hd, float *out, size_t out_stride) {
    for (int i0 = 0; i0 < hd; i0 += 8 * UG) {
        const int blk = i0 / QK, off = i0 % QK;
        __m256 even[4][4], odd[4][4];
        UNROLL
        for (int h = 0; h < HG; h++)
            UNROLL
            for (int u = 0; u < UG; u++) even[h][u] = odd[h][u] = _mm256_setzero_ps();
        int slot = s0 % slots, j = 0;
        for (; j < count; j += 2) {
            const int pair = j + 1 < count;
            const block_q8_0 *b0 = (const block_q8_0 *)(base + (size_t)slot * row_bytes) + blk;
            if (++slot == slots) slot = 0;
            const block_q8_0 *b1 = (const block_q8_0 *)(base + (size_t)slot * row_bytes) + blk;
            if (pair && ++slot == slots) slot = 0;
            if (i0 == 0) prefetch_row_pair_ahead(b0, row_bytes);
            const float d0 = f16_bits_to_f32(b0->d), d1 = pair ? f16_bits_to_f32(b1->d) : 0.0f;
            __m256 f0[4], f1[4];
            UNROLL
            for (int h = 0; h < HG; h++) {
                f0[h] = _mm256_set1_ps(a[h * a_stride + j] * d0);
                f1[h] = _mm256_set1_ps(pair ? a[h * a_stride + j + 1] * d1 : 0.0f);
            }
            UNROLL
            for (int u = 0; u < UG; u++) {
                const __m256 c0 = codes8(b0->qs + off + 8 * u);
                UNROLL
                for (int h = 0; h < HG; h++) even[h][u] = _mm256_fmadd_ps(f0[h], c0, even[h][u]);
                if (pair) {
                    const __m256 c1 = codes8(b1->qs + off + 8 * u);
                    UNROLL
                    for (int h = 0; h < HG; h++) odd[h][u] = _mm256_fmadd_ps(f1[h], c1, odd[h][u]);
                }
            }
        }
        for (int h = 0; h < HG; h++)
            for (int u = 0; u < UG; u++)
                _mm256_storeu_ps(out + h * out_stride + i0 + 8 * u, _mm256_add_ps(even[h][u], odd[h][u]));
    }
}

TARGET_AVX2 void attention_values_q8_0_avx2(const float *a, size_t a_stride, int heads, int count, const void *v,
                                            size_t row_bytes, int slots, int s0, int hd, float *out, size_t out_stride) {
    for (int g = 0; g < heads;) {
        const float *ag = a + g * a_stride;
        float *og = out + g * out_stride;
        if (heads - g >= 4) { q8_values_group_avx2(ag, a_stride, 4, 1, count, v, row_bytes, slots, s0, hd, og, out_stride); g += 4; }
        else if (heads - g >= 2) { q8_values_group_avx2(ag, a_stride, 2, 2, count, v, row_bytes, slots, s0, hd, og, out_stride); g += 2; }
        else { q8_values_group_avx2(ag, a_stride, 1, 4, count, v, row_bytes, slots, s0, hd, og, out_stride); g += 1; }
    }
}

static ALWAYS_INLINE TARGET_AVX512 __m512 codes16(const int8_t *p) {
    return _mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(_mm_loadu_si128((const __m128i *)p)));
}

/* Up to 2 query heads per pass (each head keeps its per-group partial sums and its total for 4
 * vectors of keys: 16 accumulators), each widened vector of codes used by both; a head's chains
 * are those of a pass of its own, so are its bits. The pass prefetches the same code row of the
 * next block. */
static ALWAYS_INLINE TARGET_AVX512 void scores_heads_avx512(const float *q, int gn, const void *block, int hd, int i0,
                                                            int count, float scale, float *score, size_t score_stride) {
    const int8_t *codes = block;
    const uint16_t *scales = (const uint16_t *)((const uint8_t *)block + (size_t)hd * KV_KEY_BLOCK);
    const size_t block_bytes = (size_t)hd * KV_KEY_BLOCK + (size_t)(hd / QK) * KV_KEY_BLOCK * 2;
    const int u0 = i0 / 16, u1 = (i0 + count - 1) / 16;
    __m512 acc[2][4];
    for (int h = 0; h < 2; h++)
        for (int u = 0; u < 4; u++) acc[h][u] = _mm512_setzero_ps();
    for (int g = 0; g < hd / QK; g++) {
        __m512 part[2][4];
        for (int h = 0; h < 2; h++)
            for (int u = 0; u < 4; u++) part[h][u] = _mm512_setzero_ps();
        for (int i = QK * g; i < QK * (g + 1); i++) {
            const int8_t *row = codes + (size_t)i * KV_KEY_BLOCK;
            _mm_prefetch((const char *)row + block_bytes, _MM_HINT_T0);
            UNROLL
            for (int u = 0; u < 4; u++) {
                if (u < u0 || u > u1) continue;
                const __m512 c = codes16(row + 16 * u);
                UNROLL
                for (int h = 0; h < 2; h++)
                    if (h < gn) part[h][u] = _mm512_fmadd_ps(_mm512_set1_ps(q[(size_t)h * hd + i]), c, part[h][u]);
            }
        }
        const uint16_t *d = scales + (size_t)g * KV_KEY_BLOCK;
        for (int u = u0; u <= u1; u++) {
            const __m512 dv = _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *)(d + 16 * u)));
            for (int h = 0; h < gn; h++) acc[h][u] = _mm512_fmadd_ps(dv, part[h][u], acc[h][u]);
        }
    }
    store_scaled_scores_avx512(acc, gn, u0, u1, i0, count, scale, score, score_stride);
}

void TARGET_AVX512 attention_scores_q8_0_avx512(const float *q, int heads, const void *block, int hd, int i0, int count,
                                                float scale, float *score, size_t score_stride) {
    for (int g0 = 0; g0 < heads; g0 += 2) {
        if (heads - g0 == 1) scores_heads_avx512(q + (size_t)g0 * hd, 1, block, hd, i0, count, scale, score + g0 * score_stride, score_stride);
        else scores_heads_avx512(q + (size_t)g0 * hd, 2, block, hd, i0, count, scale, score + g0 * score_stride, score_stride);
    }
}

/* Row j's part of one pass: nv vectors of 16 dimensions from blocks g0, g0 + 1 of the row, for
 * gn heads (their weights a_h[j] times the block's scale), into acc[h][u]. */
static ALWAYS_INLINE TARGET_AVX512 void values_row_avx512(const block_q8_0 *row, const float *a, size_t a_stride, int j,
                                                          int gn, int nv, __m512 acc[2][4]) {
    UNROLL
    for (int u = 0; u < 4; u++) {
        if (u >= nv) continue;
        const block_q8_0 *b = row + u / 2;
        const float d = f16_bits_to_f32(b->d);
        const __m512 c = codes16(b->qs + 16 * (u % 2));
        UNROLL
        for (int h = 0; h < 2; h++)
            if (h < gn) acc[h][u] = _mm512_fmadd_ps(_mm512_set1_ps(a[h * a_stride + j] * d), c, acc[h][u]);
    }
}

/* 64 dimensions (two blocks) at a time for up to 2 heads, even and odd rows into separate
 * accumulators per head */
static ALWAYS_INLINE TARGET_AVX512 void values_heads_avx512(const float *a, size_t a_stride, int gn, int count, const uint8_t *base,
                                                            size_t row_bytes, int slots, int s0, int hd, float *out, size_t out_stride) {
    for (int g0 = 0; g0 < hd / QK; g0 += 2) {
        const int nv = hd / QK - g0 >= 2 ? 4 : 2;   /* vectors of 16 dimensions in this step */
        __m512 even[2][4], odd[2][4];
        for (int h = 0; h < 2; h++)
            for (int u = 0; u < 4; u++) even[h][u] = odd[h][u] = _mm512_setzero_ps();
        int slot = s0 % slots, j = 0;
        for (; j + 2 <= count; j += 2) {
            const uint8_t *r0 = base + (size_t)slot * row_bytes;
            if (++slot == slots) slot = 0;
            const uint8_t *r1 = base + (size_t)slot * row_bytes;
            if (++slot == slots) slot = 0;
            if (g0 == 0) prefetch_row_pair_ahead(r0, row_bytes);
            if (nv == 4) {
                values_row_avx512((const block_q8_0 *)r0 + g0, a, a_stride, j, gn, 4, even);
                values_row_avx512((const block_q8_0 *)r1 + g0, a, a_stride, j + 1, gn, 4, odd);
            } else {
                values_row_avx512((const block_q8_0 *)r0 + g0, a, a_stride, j, gn, 2, even);
                values_row_avx512((const block_q8_0 *)r1 + g0, a, a_stride, j + 1, gn, 2, odd);
            }
        }
        if (j < count) values_row_avx512((const block_q8_0 *)(base + (size_t)slot * row_bytes) + g0, a, a_stride, j, gn, nv, even);
        for (int h = 0; h < gn; h++)
            for (int u = 0; u < nv; u++)
                _mm512_storeu_ps(out + h * out_stride + QK * g0 + 16 * u, _mm512_add_ps(even[h][u], odd[h][u]));
    }
}

void TARGET_AVX512 attention_values_q8_0_avx512(const float *a, size_t a_stride, int heads, int count, const void *v,
                                                size_t row_bytes, int slots, int s0, int hd, float *out, size_t out_stride) {
    for (int g0 = 0; g0 < heads; g0 += 2) {
        const float *ag = a + g0 * a_stride;
        float *og = out + g0 * out_stride;
        if (heads - g0 == 1) values_heads_avx512(ag, a_stride, 1, count, v, row_bytes, slots, s0, hd, og, out_stride);
        else values_heads_avx512(ag, a_stride, 2, count, v, row_bytes, slots, s0, hd, og, out_stride);
    }
}
#endif

#if defined(__aarch64__)
/* ---- NEON: the portable kernels' operations (each product rounded, then added, in the same
 * order), four keys or dimensions per vector, so the portable kernels' bits; scores take up to
 * two query heads per widened vector of codes (their sums per group and per key stay in
 * registers), values up to four. HG (a constant after inlining) is the count of heads together. ---- */

/* 16 int8 codes at p -> four vectors of 4 floats, exactly */
static ALWAYS_INLINE void widen16_codes_neon(const int8_t *p, float32x4_t f[4]) {
    const int8x16_t c = vld1q_s8(p);
    const int16x8_t lo = vmovl_s8(vget_low_s8(c)), hi = vmovl_s8(vget_high_s8(c));
    f[0] = vcvtq_f32_s32(vmovl_s16(vget_low_s16(lo)));
    f[1] = vcvtq_f32_s32(vmovl_s16(vget_high_s16(lo)));
    f[2] = vcvtq_f32_s32(vmovl_s16(vget_low_s16(hi)));
    f[3] = vcvtq_f32_s32(vmovl_s16(vget_high_s16(hi)));
}

static ALWAYS_INLINE void scores_heads_q8_0_neon(const float *q, const void *block, int hd, int i0, int count,
                                                 float scale, float *score, size_t score_stride, const int HG) {
    const int8_t *codes = (const int8_t *)block + i0;
    const uint16_t *scales = (const uint16_t *)((const uint8_t *)block + (size_t)hd * KV_KEY_BLOCK) + i0;
    int j = 0;
    for (; j + 16 <= count; j += 16) {
        float32x4_t acc[2][4] = { { { 0 } } };
        for (int g = 0; g < hd / QK; g++) {
            float32x4_t part[2][4] = { { { 0 } } };
            for (int i = QK * g; i < QK * (g + 1); i++) {
                float32x4_t key[4];
                widen16_codes_neon(codes + (size_t)i * KV_KEY_BLOCK + j, key);
                UNROLL
                for (int h = 0; h < HG; h++)
                    UNROLL
                    for (int u = 0; u < 4; u++)
                        part[h][u] = vaddq_f32(part[h][u], vmulq_n_f32(key[u], q[(size_t)h * hd + i]));
            }
            UNROLL
            for (int u = 0; u < 4; u++) {
                const float32x4_t d = vcvt_f32_f16(vreinterpret_f16_u16(vld1_u16(scales + (size_t)g * KV_KEY_BLOCK + j + 4 * u)));
                UNROLL
                for (int h = 0; h < HG; h++) acc[h][u] = vaddq_f32(acc[h][u], vmulq_f32(d, part[h][u]));
            }
        }
        UNROLL
        for (int h = 0; h < HG; h++)
            UNROLL
            for (int u = 0; u < 4; u++) vst1q_f32(score + h * score_stride + j + 4 * u, vmulq_n_f32(acc[h][u], scale));
    }
    /* the last keys (< 16): the portable kernel per head (each key's score is its own) */
    if (j < count)
        for (int h = 0; h < HG; h++)
            scores_one_generic(q + (size_t)h * hd, block, hd, i0 + j, count - j, scale, score + h * score_stride + j);
}

static ALWAYS_INLINE void values_heads_q8_0_neon(const float *a, size_t a_stride, int count, const uint8_t *v,
                                                 size_t row_bytes, int slots, int s0, int hd, float *out,
                                                 size_t out_stride, const int HG) {
    for (int i = 0; i < hd; i += 16) {   /* hd is a multiple of 32: 16 dimensions of one block */
        const int g = i / QK, at = i % QK;
        float32x4_t acc[4][4] = { { { 0 } } };
        for (int j = 0, slot = s0 % slots; j < count; j++) {
            const block_q8_0 *row = (const block_q8_0 *)(v + (size_t)slot * row_bytes) + g;
            float32x4_t val[4];
            widen16_codes_neon(row->qs + at, val);
            const float d = load_f16(row->d);
            UNROLL
            for (int h = 0; h < HG; h++) {
                const float f = a[h * a_stride + j] * d;
                UNROLL
                for (int u = 0; u < 4; u++) acc[h][u] = vaddq_f32(acc[h][u], vmulq_n_f32(val[u], f));
            }
            if (++slot == slots) slot = 0;
        }
        UNROLL
        for (int h = 0; h < HG; h++)
            UNROLL
            for (int u = 0; u < 4; u++) vst1q_f32(out + h * out_stride + i + 4 * u, acc[h][u]);
    }
}

void attention_scores_q8_0_neon(const float *q, int heads, const void *block, int hd, int i0, int count, float scale, float *score, size_t score_stride) {
    for (int g = 0; g < heads; g += 2) {
        if (heads - g == 1) scores_heads_q8_0_neon(q + (size_t)g * hd, block, hd, i0, count, scale, score + g * score_stride, score_stride, 1);
        else scores_heads_q8_0_neon(q + (size_t)g * hd, block, hd, i0, count, scale, score + g * score_stride, score_stride, 2);
    }
}

void attention_values_q8_0_neon(const float *a, size_t a_stride, int heads, int count, const void *v, size_t row_bytes, int slots, int s0, int hd, float *out, size_t out_stride) {
#define VALUES(g, HG) values_heads_q8_0_neon(a + (g) * a_stride, a_stride, count, v, row_bytes, slots, s0, hd, out + (g) * out_stride, out_stride, HG)
    FOR_HEAD_GROUPS_OF_4(heads, VALUES)
#undef VALUES
}
#endif
