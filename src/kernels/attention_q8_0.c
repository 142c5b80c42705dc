/* Attention over a q8_0 KV cache (attention.h): a key block is int8 codes [hd][KV_KEY_BLOCK] and
 * the f16 scale of each 32 dimensions [hd / 32][KV_KEY_BLOCK]; a value row is Q8_0 blocks. The
 * codes are widened exactly to f32:
 *   score = scale * sum over the groups g of 32 dimensions, in order, of d_g * (sum_{i in g} q[i] code[i])
 *   out[i] = sum_j (a[j] * d_j,g) * code_j[i]
 * (the portable versions multiply and add, the SIMD ones fuse). Portable and AVX-512 (the AVX2
 * set uses the portable ones). */
#include "kernels/attention.h"
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
static ALWAYS_INLINE TARGET_AVX512 __m512 codes16(const int8_t *p) {
    return _mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(_mm_loadu_si128((const __m128i *)p)));
}

static TARGET_AVX512 void scores_one_avx512(const float *q, const void *block, int hd, int i0, int count, float scale, float *score) {
    const int8_t *codes = block;
    const uint16_t *scales = (const uint16_t *)((const uint8_t *)block + (size_t)hd * KV_KEY_BLOCK);
    const int u0 = i0 / 16, u1 = (i0 + count - 1) / 16;
    __m512 acc[4] = { _mm512_setzero_ps(), _mm512_setzero_ps(), _mm512_setzero_ps(), _mm512_setzero_ps() };
    for (int g = 0; g < hd / QK; g++) {
        __m512 part[4] = { _mm512_setzero_ps(), _mm512_setzero_ps(), _mm512_setzero_ps(), _mm512_setzero_ps() };
        for (int i = QK * g; i < QK * (g + 1); i++) {
            const int8_t *row = codes + (size_t)i * KV_KEY_BLOCK;
            __m512 qi = _mm512_set1_ps(q[i]);
            for (int u = u0; u <= u1; u++) part[u] = _mm512_fmadd_ps(qi, codes16(row + 16 * u), part[u]);
        }
        const uint16_t *d = scales + (size_t)g * KV_KEY_BLOCK;
        for (int u = u0; u <= u1; u++)
            acc[u] = _mm512_fmadd_ps(_mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *)(d + 16 * u))), part[u], acc[u]);
    }
    float all[KV_KEY_BLOCK];
    const __m512 s = _mm512_set1_ps(scale);
    for (int u = u0; u <= u1; u++) _mm512_storeu_ps(all + 16 * u, _mm512_mul_ps(acc[u], s));
    memcpy(score, all + i0, (size_t)count * sizeof(float));
}

/* 64 dimensions (two blocks) at a time, even and odd rows into separate accumulators */
static TARGET_AVX512 void values_one_avx512(const float *a, int count, const void *v, size_t row_bytes, int slots, int s0, int hd, float *out) {
    const uint8_t *base = v;
    for (int g0 = 0; g0 < hd / QK; g0 += 2) {
        const int nv = hd / QK - g0 >= 2 ? 4 : 2;   /* vectors of 16 dimensions in this step */
        __m512 even[4], odd[4];
        for (int u = 0; u < 4; u++) even[u] = odd[u] = _mm512_setzero_ps();
        int slot = s0 % slots, j = 0;
        for (; j < count; j++) {
            const block_q8_0 *row = (const block_q8_0 *)(base + (size_t)slot * row_bytes) + g0;
            if (++slot == slots) slot = 0;
            __m512 *acc = j % 2 ? odd : even;
            for (int u = 0; u < nv; u++) {
                const block_q8_0 *b = row + u / 2;
                __m512 f = _mm512_set1_ps(a[j] * f16_bits_to_f32(b->d));
                acc[u] = _mm512_fmadd_ps(f, codes16(b->qs + 16 * (u % 2)), acc[u]);
            }
        }
        for (int u = 0; u < nv; u++) _mm512_storeu_ps(out + QK * g0 + 16 * u, _mm512_add_ps(even[u], odd[u]));
    }
}

void attention_scores_q8_0_avx512(const float *q, int heads, const void *block, int hd, int i0, int count, float scale, float *score, size_t score_stride) {
    for (int g = 0; g < heads; g++) scores_one_avx512(q + (size_t)g * hd, block, hd, i0, count, scale, score + g * score_stride);
}

void attention_values_q8_0_avx512(const float *a, size_t a_stride, int heads, int count, const void *v, size_t row_bytes, int slots, int s0, int hd, float *out, size_t out_stride) {
    for (int g = 0; g < heads; g++) values_one_avx512(a + g * a_stride, count, v, row_bytes, slots, s0, hd, out + g * out_stride);
}
#endif
