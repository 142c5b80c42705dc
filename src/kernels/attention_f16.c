/* Attention over an f16 KV cache (attention.h): a key block is IEEE half [hd][KV_KEY_BLOCK], a
 * value row half [hd]. The halves are widened exactly to f32 and the kernels do the f32 cache's
 * operations: scores one FMA chain per dimension with a key in each lane (the portable version
 * multiplies and adds), values even and odd rows into separate accumulators. Portable, AVX2 (F16C)
 * and AVX-512, both with up to four query heads per widened key or value, and NEON (the portable
 * kernels' operations, so their bits, with as many heads per widened key or value). */
#include "kernels/attention_f16.h"
#include "kernels/attention_layout.h"
#include "kernels/simd.h"
#include "kernels/kernels_internal.h"
#include "kernels/f16.h"

static void scores_one_generic(const float *q, const void *block, int hd, int i0, int count, float scale, float *score) {
    const uint16_t *kt = (const uint16_t *)block + i0;
    for (int j = 0; j < count; j++) score[j] = 0.0f;
    for (int i = 0; i < hd; i++) {
        const uint16_t *row = kt + (size_t)i * KV_KEY_BLOCK;
        for (int j = 0; j < count; j++) score[j] += q[i] * half_to_f32(row[j]);
    }
    for (int j = 0; j < count; j++) score[j] *= scale;
}

static void values_one_generic(const float *a, int count, const void *v, size_t row_bytes, int slots, int s0, int hd, float *out) {
    for (int i = 0; i < hd; i++) out[i] = 0.0f;
    int slot = s0 % slots;
    for (int j = 0; j < count; j++) {
        const uint16_t *row = (const uint16_t *)((const uint8_t *)v + (size_t)slot * row_bytes);
        for (int i = 0; i < hd; i++) out[i] += a[j] * half_to_f32(row[i]);
        if (++slot == slots) slot = 0;
    }
}

void attention_scores_f16_generic(const float *q, int heads, const void *block, int hd, int i0, int count, float scale, float *score, size_t score_stride) {
    for (int g = 0; g < heads; g++) scores_one_generic(q + (size_t)g * hd, block, hd, i0, count, scale, score + g * score_stride);
}

void attention_values_f16_generic(const float *a, size_t a_stride, int heads, int count, const void *v, size_t row_bytes, int slots, int s0, int hd, float *out, size_t out_stride) {
    for (int g = 0; g < heads; g++) values_one_generic(a + g * a_stride, count, v, row_bytes, slots, s0, hd, out + g * out_stride);
}

/* ---- Keys and values to halves (attn_to_f16_fn): the conversion instructions round to nearest
 * even and keep a NaN's sign and top payload bits, quieted, as f16_from_f32 does (test_simd checks
 * every kernel set on edge cases and random bits). A token's keys and values are converted before
 * the layer's attention can run, by one thread: scalar, 2% of a 1B decode. ---- */
void attention_to_f16_generic(const float *x, uint16_t *h, int n) { f16_from_f32_row(x, h, n); }

#if defined(TS_X86)
TARGET_AVX512 void attention_to_f16_avx512(const float *x, uint16_t *h, int n) {
    int i = 0;
    for (; i + 16 <= n; i += 16)
        _mm256_storeu_si256((__m256i *)(h + i), _mm512_cvtps_ph(_mm512_loadu_ps(x + i), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
    f16_from_f32_row(x + i, h + i, n - i);
}

TARGET_AVX2 void attention_to_f16_avx2(const float *x, uint16_t *h, int n) {
    int i = 0;
    for (; i + 8 <= n; i += 8)
        _mm_storeu_si128((__m128i *)(h + i), _mm256_cvtps_ph(_mm256_loadu_ps(x + i), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
    f16_from_f32_row(x + i, h + i, n - i);
}

/* ---- AVX-512: up to 4 query heads per pass, each widened key or value vector used by all of
 * them. Scores: the vectors of 16 keys that cover [i0, i0 + count), all four loaded whole (a block
 * is always allocated whole) and the wanted lanes kept, one FMA chain per head and vector. Values:
 * the dimensions in slices of NV vectors, even and odd rows into separate chains per head and
 * vector, added at the end. A head's chains are the same whichever heads share the pass, so its
 * bits are too. The head count of a pass (and the slice) is a constant in each instance of the
 * inline bodies, so their accumulators stay in registers. Both prefetch what they read next
 * (scores: the same row of the next block; values: prefetch_row_pair_ahead): a decoded token reads
 * the whole cache once, and without it the value rows came in at a third of the speed (a 1B shape
 * at 4,096 positions, one thread: 13.5 -> 6.5 ms per token for the 16 layers' attention, the
 * scores' prefetch 6.5 -> 6.0). ---- */

static ALWAYS_INLINE TARGET_AVX512 void scores_pass_avx512(const float *q, int gn, const uint16_t *kt, int hd,
                                                           int u0, int u1, __m512 acc[4][4]) {
    for (int i = 0; i < hd; i++) {
        const uint16_t *row = kt + (size_t)i * KV_KEY_BLOCK;
        const char *next = (const char *)(row + (size_t)hd * KV_KEY_BLOCK);   /* this row of the next block */
        _mm_prefetch(next, _MM_HINT_T0);
        _mm_prefetch(next + 64, _MM_HINT_T0);
        UNROLL
        for (int u = 0; u < 4; u++) {
            if (u < u0 || u > u1) continue;
            const __m512 k = _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *)(row + 16 * u)));
            UNROLL
            for (int g = 0; g < 4; g++)
                if (g < gn) acc[g][u] = _mm512_fmadd_ps(_mm512_set1_ps(q[(size_t)g * hd + i]), k, acc[g][u]);
        }
    }
}

static ALWAYS_INLINE TARGET_AVX512 void scores_heads_avx512(const float *q, int gn, const uint16_t *kt, int hd, int i0,
                                                            int count, float scale, float *score, size_t score_stride) {
    const int u0 = i0 / 16, u1 = (i0 + count - 1) / 16;
    __m512 acc[4][4];
    for (int g = 0; g < 4; g++)
        for (int u = 0; u < 4; u++) acc[g][u] = _mm512_setzero_ps();
    if (u0 == 0 && u1 == 3) scores_pass_avx512(q, gn, kt, hd, 0, 3, acc);   /* the whole block: no test per vector */
    else scores_pass_avx512(q, gn, kt, hd, u0, u1, acc);
    store_scaled_scores_avx512(acc, gn, u0, u1, i0, count, scale, score, score_stride);
}

void TARGET_AVX512 attention_scores_f16_avx512(const float *q, int heads, const void *block, int hd, int i0, int count,
                                               float scale, float *score, size_t score_stride) {
    for (int g0 = 0; g0 < heads; g0 += 4) {
        const float *qg = q + (size_t)g0 * hd;
        float *sg = score + g0 * score_stride;
        switch (heads - g0) {
        case 1: scores_heads_avx512(qg, 1, block, hd, i0, count, scale, sg, score_stride); break;
        case 2: scores_heads_avx512(qg, 2, block, hd, i0, count, scale, sg, score_stride); break;
        case 3: scores_heads_avx512(qg, 3, block, hd, i0, count, scale, sg, score_stride); break;
        default: scores_heads_avx512(qg, 4, block, hd, i0, count, scale, sg, score_stride); break;
        }
    }
}

static ALWAYS_INLINE TARGET_AVX512 __mmask16 half_mask16(int n) {
    return n >= 16 ? (__mmask16)0xffff : n <= 0 ? (__mmask16)0 : (__mmask16)((1u << n) - 1);
}

/* gn heads (<= 4), dimensions [i0, i0 + 16 nv) of them (nv <= 4, lanes past hd masked) */
static ALWAYS_INLINE TARGET_AVX512 void values_slice_avx512(const float *a, size_t a_stride, int gn, int nv, int count,
                                                            const uint8_t *base, size_t row_bytes, int slots, int s0,
                                                            int hd, int i0, float *out, size_t out_stride) {
    __mmask16 m[4];
    __m512 even[4][4], odd[4][4];
    for (int u = 0; u < 4; u++) {
        m[u] = half_mask16(hd - i0 - 16 * u);
        for (int g = 0; g < 4; g++) even[g][u] = odd[g][u] = _mm512_setzero_ps();
    }
    int slot = s0 % slots, j = 0;
    for (; j + 2 <= count; j += 2) {
        const uint16_t *r0 = (const uint16_t *)(base + (size_t)slot * row_bytes) + i0;
        if (++slot == slots) slot = 0;
        const uint16_t *r1 = (const uint16_t *)(base + (size_t)slot * row_bytes) + i0;
        if (++slot == slots) slot = 0;
        if (i0 == 0) prefetch_row_pair_ahead(r0, row_bytes);
        UNROLL
        for (int u = 0; u < 4; u++)
            if (u < nv && m[u]) {
                const __m512 x0 = _mm512_cvtph_ps(_mm256_maskz_loadu_epi16(m[u], r0 + 16 * u));
                const __m512 x1 = _mm512_cvtph_ps(_mm256_maskz_loadu_epi16(m[u], r1 + 16 * u));
                UNROLL
                for (int g = 0; g < 4; g++)
                    if (g < gn) {
                        even[g][u] = _mm512_fmadd_ps(_mm512_set1_ps(a[g * a_stride + j]), x0, even[g][u]);
                        odd[g][u] = _mm512_fmadd_ps(_mm512_set1_ps(a[g * a_stride + j + 1]), x1, odd[g][u]);
                    }
            }
    }
    if (j < count) {
        const uint16_t *r0 = (const uint16_t *)(base + (size_t)slot * row_bytes) + i0;
        UNROLL
        for (int u = 0; u < 4; u++)
            if (u < nv && m[u]) {
                const __m512 x0 = _mm512_cvtph_ps(_mm256_maskz_loadu_epi16(m[u], r0 + 16 * u));
                UNROLL
                for (int g = 0; g < 4; g++)
                    if (g < gn) even[g][u] = _mm512_fmadd_ps(_mm512_set1_ps(a[g * a_stride + j]), x0, even[g][u]);
            }
    }
    for (int g = 0; g < gn; g++)
        for (int u = 0; u < nv; u++)
            if (m[u]) _mm512_mask_storeu_ps(out + g * out_stride + i0 + 16 * u, m[u], _mm512_add_ps(even[g][u], odd[g][u]));
}

/* One or two heads take 4 vectors (64 dimensions) per slice, three or four take 2: at most 16
 * accumulators, and at least 8 chains to hide the FMA latency. */
void TARGET_AVX512 attention_values_f16_avx512(const float *a, size_t a_stride, int heads, int count, const void *v,
                                               size_t row_bytes, int slots, int s0, int hd, float *out, size_t out_stride) {
    for (int g0 = 0; g0 < heads; g0 += 4) {
        const float *ag = a + g0 * a_stride;
        float *og = out + g0 * out_stride;
        const int gn = heads - g0 < 4 ? heads - g0 : 4, nv = gn <= 2 ? 4 : 2;
        for (int i0 = 0; i0 < hd; i0 += 16 * nv)
            switch (gn) {
            case 1: values_slice_avx512(ag, a_stride, 1, 4, count, v, row_bytes, slots, s0, hd, i0, og, out_stride); break;
            case 2: values_slice_avx512(ag, a_stride, 2, 4, count, v, row_bytes, slots, s0, hd, i0, og, out_stride); break;
            case 3: values_slice_avx512(ag, a_stride, 3, 2, count, v, row_bytes, slots, s0, hd, i0, og, out_stride); break;
            default: values_slice_avx512(ag, a_stride, 4, 2, count, v, row_bytes, slots, s0, hd, i0, og, out_stride); break;
            }
    }
}

/* ---- AVX2: vectors of 8 keys or dimensions; a value row's last partial vector is copied out.
 * As in AVX-512, the query heads of a KV head share each widened key or value vector, in passes
 * that fit 16 registers: scores 2 heads x 4 vectors of keys (one FMA chain per head and vector;
 * a lone head 1 x 8), values 4 heads x 1 vector of dimensions or 2 x 2 (a lone head 1 x 4; even and
 * odd rows in separate chains). A head's chains are those of a pass of its own, so its bits are too.
 * Measured with tools/bench_attention.c, a 1B shape (4 query heads per KV head) at 4,096
 * positions, one thread: one head at a time 21.8 ms per token for the 16 layers' attention, these
 * passes 15.5-15.8; scores in passes of 4 heads x 2 vectors 17.1, values 2 x 2 for 4 heads 19.6. ---- */

/* The scores of HG <= 2 heads (query stride hd) for key vectors [ub, ub + un) of the block,
 * un <= UG <= 8, scaled, into all[h][8 (ub + u)]. HG and UG are constants in each instance, so
 * the accumulators stay in registers. */
static ALWAYS_INLINE TARGET_AVX2 void scores_pass_avx2(const float *q, const int HG, const int UG, const uint16_t *kt,
                                                       int hd, int ub, int un, float scale, float all[2][KV_KEY_BLOCK]) {
    __m256 acc[2][8];
    UNROLL
    for (int h = 0; h < HG; h++)
        UNROLL
        for (int u = 0; u < UG; u++) acc[h][u] = _mm256_setzero_ps();
    for (int i = 0; i < hd; i++) {
        const uint16_t *row = kt + (size_t)i * KV_KEY_BLOCK + 8 * ub;
        __m256 qi[2];
        UNROLL
        for (int h = 0; h < HG; h++) qi[h] = _mm256_set1_ps(q[(size_t)h * hd + i]);
        UNROLL
        for (int u = 0; u < UG; u++) {
            if (u >= un) break;
            __m256 k = _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(row + 8 * u)));
            UNROLL
            for (int h = 0; h < HG; h++) acc[h][u] = _mm256_fmadd_ps(qi[h], k, acc[h][u]);
        }
    }
    store_scaled_scores_avx2(acc, HG, UG, un, scale, (float *const[2]){ all[0] + 8 * ub, all[1] + 8 * ub });
}

static ALWAYS_INLINE TARGET_AVX2 void scores_group_avx2(const float *q, const int HG, const int UG, const void *block,
                                                        int hd, int i0, int count, float scale, float *score,
                                                        size_t score_stride) {
    const int u0 = i0 / 8, u1 = (i0 + count - 1) / 8;
    float all[2][KV_KEY_BLOCK];
    for (int ub = u0; ub <= u1; ub += UG)
        scores_pass_avx2(q, HG, UG, block, hd, ub, u1 - ub + 1 < UG ? u1 - ub + 1 : UG, scale, all);
    for (int h = 0; h < HG; h++) memcpy(score + h * score_stride, all[h] + i0, (size_t)count * sizeof(float));
}

/* 8 halves widened, or the n < 8 that are left with zeros after them */
static ALWAYS_INLINE TARGET_AVX2 __m256 load_half8(const uint16_t *p, int n) {
    if (n >= 8) return _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)p));
    uint16_t tmp[8] = { 0 };
    memcpy(tmp, p, (size_t)n * 2);
    return _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)tmp));
}

/* The weighted values of HG heads (weights a + h a_stride, out + h out_stride), the dimensions in
 * slices of UG vectors of 8 (HG x UG <= 4) */
static ALWAYS_INLINE TARGET_AVX2 void values_group_avx2(const float *a, size_t a_stride, const int HG, const int UG,
                                                        int count, const void *v, size_t row_bytes, int slots, int s0,
                                                        int hd, float *out, size_t out_stride) {
    const uint8_t *base = v;
    for (int i0 = 0; i0 < hd; i0 += 8 * UG) {
        __m256 even[4][4], odd[4][4];
        const int used = (hd - i0 + 7) / 8 < UG ? (hd - i0 + 7) / 8 : UG;
        UNROLL
        for (int h = 0; h < HG; h++)
            UNROLL
            for (int u = 0; u < UG; u++) even[h][u] = odd[h][u] = _mm256_setzero_ps();
        int slot = s0 % slots, j = 0;
        for (; j + 2 <= count; j += 2) {
            const uint16_t *r0 = (const uint16_t *)(base + (size_t)slot * row_bytes) + i0;
            if (++slot == slots) slot = 0;
            const uint16_t *r1 = (const uint16_t *)(base + (size_t)slot * row_bytes) + i0;
            if (++slot == slots) slot = 0;
            UNROLL
            for (int u = 0; u < UG; u++) {
                if (u >= used) break;
                __m256 v0 = load_half8(r0 + 8 * u, hd - i0 - 8 * u), v1 = load_half8(r1 + 8 * u, hd - i0 - 8 * u);
                UNROLL
                for (int h = 0; h < HG; h++) {
                    even[h][u] = _mm256_fmadd_ps(_mm256_set1_ps(a[h * a_stride + j]), v0, even[h][u]);
                    odd[h][u] = _mm256_fmadd_ps(_mm256_set1_ps(a[h * a_stride + j + 1]), v1, odd[h][u]);
                }
            }
        }
        if (j < count) {
            const uint16_t *r0 = (const uint16_t *)(base + (size_t)slot * row_bytes) + i0;
            UNROLL
            for (int u = 0; u < UG; u++) {
                if (u >= used) break;
                __m256 v0 = load_half8(r0 + 8 * u, hd - i0 - 8 * u);
                UNROLL
                for (int h = 0; h < HG; h++)
                    even[h][u] = _mm256_fmadd_ps(_mm256_set1_ps(a[h * a_stride + j]), v0, even[h][u]);
            }
        }
        for (int h = 0; h < HG; h++)
            for (int u = 0; u < used; u++) {
                float tmp[8];
                _mm256_storeu_ps(tmp, _mm256_add_ps(even[h][u], odd[h][u]));
                int n = hd - i0 - 8 * u < 8 ? hd - i0 - 8 * u : 8;
                memcpy(out + h * out_stride + i0 + 8 * u, tmp, (size_t)n * sizeof(float));
            }
    }
}

TARGET_AVX2 void attention_scores_f16_avx2(const float *q, int heads, const void *block, int hd, int i0, int count, float scale, float *score, size_t score_stride) {
    for (int g = 0; g < heads;) {
        const float *qg = q + (size_t)g * hd;
        float *sg = score + g * score_stride;
        if (heads - g >= 2) { scores_group_avx2(qg, 2, 4, block, hd, i0, count, scale, sg, score_stride); g += 2; }
        else { scores_group_avx2(qg, 1, 8, block, hd, i0, count, scale, sg, score_stride); g += 1; }
    }
}

TARGET_AVX2 void attention_values_f16_avx2(const float *a, size_t a_stride, int heads, int count, const void *v, size_t row_bytes, int slots, int s0, int hd, float *out, size_t out_stride) {
    for (int g = 0; g < heads;) {
        const float *ag = a + g * a_stride;
        float *og = out + g * out_stride;
        if (heads - g >= 4) { values_group_avx2(ag, a_stride, 4, 1, count, v, row_bytes, slots, s0, hd, og, out_stride); g += 4; }
        else if (heads - g >= 2) { values_group_avx2(ag, a_stride, 2, 2, count, v, row_bytes, slots, s0, hd, og, out_stride); g += 2; }
        else { values_group_avx2(ag, a_stride, 1, 4, count, v, row_bytes, slots, s0, hd, og, out_stride); g += 1; }
    }
}
#endif

#if defined(__aarch64__)
void attention_to_f16_neon(const float *x, uint16_t *h, int n) {
    int i = 0;
    for (; i + 4 <= n; i += 4) vst1_u16(h + i, vreinterpret_u16_f16(vcvt_f16_f32(vld1q_f32(x + i))));
    f16_from_f32_row(x + i, h + i, n - i);
}

/* NEON: the portable kernels' operations (each product rounded, then added, in the same order),
 * four keys or dimensions per vector and up to four query heads per widened key or value, so the
 * portable kernels' bits. HG (a constant after inlining) is the count of heads taken together. */
static ALWAYS_INLINE float32x4_t widen4_f16(const uint16_t *p) {
    return vcvt_f32_f16(vreinterpret_f16_u16(vld1_u16(p)));
}

static ALWAYS_INLINE void scores_heads_neon(const float *q, const uint16_t *kt, int hd, int count, float scale,
                                            float *score, size_t score_stride, const int HG) {
    int j = 0;
    for (; j + 16 <= count; j += 16) {
        float32x4_t acc[4][4] = { { { 0 } } };
        for (int i = 0; i < hd; i++) {
            const uint16_t *row = kt + (size_t)i * KV_KEY_BLOCK + j;
            float32x4_t key[4];
            UNROLL
            for (int u = 0; u < 4; u++) key[u] = widen4_f16(row + 4 * u);
            UNROLL
            for (int h = 0; h < HG; h++)
                UNROLL
                for (int u = 0; u < 4; u++) acc[h][u] = vaddq_f32(acc[h][u], vmulq_n_f32(key[u], q[(size_t)h * hd + i]));
        }
        UNROLL
        for (int h = 0; h < HG; h++)
            UNROLL
            for (int u = 0; u < 4; u++) vst1q_f32(score + h * score_stride + j + 4 * u, vmulq_n_f32(acc[h][u], scale));
    }
    for (; j + 4 <= count; j += 4) {
        float32x4_t acc[4] = { { 0 } };
        for (int i = 0; i < hd; i++) {
            const float32x4_t key = widen4_f16(kt + (size_t)i * KV_KEY_BLOCK + j);
            UNROLL
            for (int h = 0; h < HG; h++) acc[h] = vaddq_f32(acc[h], vmulq_n_f32(key, q[(size_t)h * hd + i]));
        }
        UNROLL
        for (int h = 0; h < HG; h++) vst1q_f32(score + h * score_stride + j, vmulq_n_f32(acc[h], scale));
    }
    for (; j < count; j++)
        for (int h = 0; h < HG; h++) {
            float s = 0.0f;
            for (int i = 0; i < hd; i++) s += q[(size_t)h * hd + i] * half_to_f32(kt[(size_t)i * KV_KEY_BLOCK + j]);
            score[h * score_stride + j] = s * scale;
        }
}

static ALWAYS_INLINE void values_heads_neon(const float *a, size_t a_stride, int count, const uint8_t *v, size_t row_bytes,
                                            int slots, int s0, int hd, float *out, size_t out_stride, const int HG) {
    int i = 0;
    for (; i + 16 <= hd; i += 16) {
        float32x4_t acc[4][4] = { { { 0 } } };
        for (int j = 0, slot = s0 % slots; j < count; j++) {
            const uint16_t *row = (const uint16_t *)(v + (size_t)slot * row_bytes) + i;
            float32x4_t val[4];
            UNROLL
            for (int u = 0; u < 4; u++) val[u] = widen4_f16(row + 4 * u);
            UNROLL
            for (int h = 0; h < HG; h++)
                UNROLL
                for (int u = 0; u < 4; u++) acc[h][u] = vaddq_f32(acc[h][u], vmulq_n_f32(val[u], a[h * a_stride + j]));
            if (++slot == slots) slot = 0;
        }
        UNROLL
        for (int h = 0; h < HG; h++)
            UNROLL
            for (int u = 0; u < 4; u++) vst1q_f32(out + h * out_stride + i + 4 * u, acc[h][u]);
    }
    for (; i + 4 <= hd; i += 4) {
        float32x4_t acc[4] = { { 0 } };
        for (int j = 0, slot = s0 % slots; j < count; j++) {
            const float32x4_t val = widen4_f16((const uint16_t *)(v + (size_t)slot * row_bytes) + i);
            UNROLL
            for (int h = 0; h < HG; h++) acc[h] = vaddq_f32(acc[h], vmulq_n_f32(val, a[h * a_stride + j]));
            if (++slot == slots) slot = 0;
        }
        UNROLL
        for (int h = 0; h < HG; h++) vst1q_f32(out + h * out_stride + i, acc[h]);
    }
    for (; i < hd; i++)
        for (int h = 0; h < HG; h++) {
            float s = 0.0f;
            for (int j = 0, slot = s0 % slots; j < count; j++) {
                s += a[h * a_stride + j] * half_to_f32(((const uint16_t *)(v + (size_t)slot * row_bytes))[i]);
                if (++slot == slots) slot = 0;
            }
            out[h * out_stride + i] = s;
        }
}

void attention_scores_f16_neon(const float *q, int heads, const void *block, int hd, int i0, int count, float scale, float *score, size_t score_stride) {
    const uint16_t *kt = (const uint16_t *)block + i0;
#define SCORES(g, HG) scores_heads_neon(q + (size_t)(g) * hd, kt, hd, count, scale, score + (g) * score_stride, score_stride, HG)
    FOR_HEAD_GROUPS_OF_4(heads, SCORES)
#undef SCORES
}

void attention_values_f16_neon(const float *a, size_t a_stride, int heads, int count, const void *v, size_t row_bytes, int slots, int s0, int hd, float *out, size_t out_stride) {
#define VALUES(g, HG) values_heads_neon(a + (g) * a_stride, a_stride, count, v, row_bytes, slots, s0, hd, out + (g) * out_stride, out_stride, HG)
    FOR_HEAD_GROUPS_OF_4(heads, VALUES)
#undef VALUES
}
#endif
