/* Attention over an f16 KV cache (attention.h): a key block is IEEE half [hd][KV_KEY_BLOCK], a
 * value row half [width]. The halves are widened exactly to f32 and the kernels do the f32
 * cache's operations: scores one FMA chain per dimension with a key in each lane (the portable
 * version multiplies and adds), values even and odd rows into separate accumulators. Portable,
 * AVX2 (F16C) and AVX-512. */
#include "kernels/attention.h"
#include "kernels/simd.h"
#include "kernels/kernels_internal.h"

void attention_scores_f16_generic(const float *q, const void *block, int hd, int i0, int count, float scale, float *score) {
    const uint16_t *kt = (const uint16_t *)block + i0;
    for (int j = 0; j < count; j++) score[j] = 0.0f;
    for (int i = 0; i < hd; i++) {
        const uint16_t *row = kt + (size_t)i * KV_KEY_BLOCK;
        for (int j = 0; j < count; j++) score[j] += q[i] * half_to_f32(row[j]);
    }
    for (int j = 0; j < count; j++) score[j] *= scale;
}

void attention_values_f16_generic(const float *a, int count, const void *v, size_t row_bytes, int slots, int s0, int hd, float *out) {
    for (int i = 0; i < hd; i++) out[i] = 0.0f;
    int slot = s0 % slots;
    for (int j = 0; j < count; j++) {
        const uint16_t *row = (const uint16_t *)((const uint8_t *)v + (size_t)slot * row_bytes);
        for (int i = 0; i < hd; i++) out[i] += a[j] * half_to_f32(row[i]);
        if (++slot == slots) slot = 0;
    }
}

#if defined(TS_X86)
/* ---- AVX-512: the vectors of 16 keys that cover [i0, i0 + count), all four loaded whole (a block
 * is always allocated whole) and the wanted lanes kept ---- */

void TARGET_AVX512 attention_scores_f16_avx512(const float *q, const void *block, int hd, int i0, int count, float scale, float *score) {
    const uint16_t *kt = block;
    const int u0 = i0 / 16, u1 = (i0 + count - 1) / 16;
    __m512 acc[4] = { _mm512_setzero_ps(), _mm512_setzero_ps(), _mm512_setzero_ps(), _mm512_setzero_ps() };
    if (u0 == 0 && u1 == 3) {   /* the whole block: the common case, with no test per vector */
        for (int i = 0; i < hd; i++) {
            const uint16_t *row = kt + (size_t)i * KV_KEY_BLOCK;
            __m512 qi = _mm512_set1_ps(q[i]);
            UNROLL
            for (int u = 0; u < 4; u++)
                acc[u] = _mm512_fmadd_ps(qi, _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *)(row + 16 * u))), acc[u]);
        }
    } else {
        for (int i = 0; i < hd; i++) {
            const uint16_t *row = kt + (size_t)i * KV_KEY_BLOCK;
            __m512 qi = _mm512_set1_ps(q[i]);
            for (int u = u0; u <= u1; u++)
                acc[u] = _mm512_fmadd_ps(qi, _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *)(row + 16 * u))), acc[u]);
        }
    }
    float all[KV_KEY_BLOCK];
    const __m512 s = _mm512_set1_ps(scale);
    for (int u = u0; u <= u1; u++) _mm512_storeu_ps(all + 16 * u, _mm512_mul_ps(acc[u], s));
    memcpy(score, all + i0, (size_t)count * sizeof(float));
}

static ALWAYS_INLINE TARGET_AVX512 __mmask16 half_mask16(int n) {
    return n >= 16 ? (__mmask16)0xffff : n <= 0 ? (__mmask16)0 : (__mmask16)((1u << n) - 1);
}

void TARGET_AVX512 attention_values_f16_avx512(const float *a, int count, const void *v, size_t row_bytes, int slots, int s0, int hd, float *out) {
    const uint8_t *base = v;
    for (int i0 = 0; i0 < hd; i0 += 64) {
        __mmask16 m[4];
        __m512 even[4], odd[4];
        for (int u = 0; u < 4; u++) {
            m[u] = half_mask16(hd - i0 - 16 * u);
            even[u] = odd[u] = _mm512_setzero_ps();
        }
        int slot = s0 % slots, j = 0;
        for (; j + 2 <= count; j += 2) {
            const uint16_t *r0 = (const uint16_t *)(base + (size_t)slot * row_bytes) + i0;
            if (++slot == slots) slot = 0;
            const uint16_t *r1 = (const uint16_t *)(base + (size_t)slot * row_bytes) + i0;
            if (++slot == slots) slot = 0;
            __m512 a0 = _mm512_set1_ps(a[j]), a1 = _mm512_set1_ps(a[j + 1]);
            for (int u = 0; u < 4; u++)
                if (m[u]) {
                    even[u] = _mm512_fmadd_ps(a0, _mm512_cvtph_ps(_mm256_maskz_loadu_epi16(m[u], r0 + 16 * u)), even[u]);
                    odd[u] = _mm512_fmadd_ps(a1, _mm512_cvtph_ps(_mm256_maskz_loadu_epi16(m[u], r1 + 16 * u)), odd[u]);
                }
        }
        if (j < count) {
            const uint16_t *r0 = (const uint16_t *)(base + (size_t)slot * row_bytes) + i0;
            __m512 a0 = _mm512_set1_ps(a[j]);
            for (int u = 0; u < 4; u++)
                if (m[u]) even[u] = _mm512_fmadd_ps(a0, _mm512_cvtph_ps(_mm256_maskz_loadu_epi16(m[u], r0 + 16 * u)), even[u]);
        }
        for (int u = 0; u < 4; u++)
            if (m[u]) _mm512_mask_storeu_ps(out + i0 + 16 * u, m[u], _mm512_add_ps(even[u], odd[u]));
    }
}

/* ---- AVX2: vectors of 8 keys or dimensions; a value row's last partial vector is copied out ---- */

void TARGET_AVX2 attention_scores_f16_avx2(const float *q, const void *block, int hd, int i0, int count, float scale, float *score) {
    const uint16_t *kt = block;
    const int u0 = i0 / 8, u1 = (i0 + count - 1) / 8;
    __m256 acc[8];
    for (int u = 0; u < 8; u++) acc[u] = _mm256_setzero_ps();
    for (int i = 0; i < hd; i++) {
        const uint16_t *row = kt + (size_t)i * KV_KEY_BLOCK;
        __m256 qi = _mm256_set1_ps(q[i]);
        for (int u = u0; u <= u1; u++)
            acc[u] = _mm256_fmadd_ps(qi, _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(row + 8 * u))), acc[u]);
    }
    float all[KV_KEY_BLOCK];
    const __m256 s = _mm256_set1_ps(scale);
    for (int u = u0; u <= u1; u++) _mm256_storeu_ps(all + 8 * u, _mm256_mul_ps(acc[u], s));
    memcpy(score, all + i0, (size_t)count * sizeof(float));
}

/* 8 halves widened, or the n < 8 that are left with zeros after them */
static ALWAYS_INLINE TARGET_AVX2 __m256 load_half8(const uint16_t *p, int n) {
    if (n >= 8) return _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)p));
    uint16_t tmp[8] = { 0 };
    memcpy(tmp, p, (size_t)n * 2);
    return _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)tmp));
}

void TARGET_AVX2 attention_values_f16_avx2(const float *a, int count, const void *v, size_t row_bytes, int slots, int s0, int hd, float *out) {
    const uint8_t *base = v;
    for (int i0 = 0; i0 < hd; i0 += 32) {
        __m256 even[4], odd[4];
        const int used = (hd - i0 + 7) / 8 < 4 ? (hd - i0 + 7) / 8 : 4;
        for (int u = 0; u < 4; u++) even[u] = odd[u] = _mm256_setzero_ps();
        int slot = s0 % slots, j = 0;
        for (; j + 2 <= count; j += 2) {
            const uint16_t *r0 = (const uint16_t *)(base + (size_t)slot * row_bytes) + i0;
            if (++slot == slots) slot = 0;
            const uint16_t *r1 = (const uint16_t *)(base + (size_t)slot * row_bytes) + i0;
            if (++slot == slots) slot = 0;
            __m256 a0 = _mm256_set1_ps(a[j]), a1 = _mm256_set1_ps(a[j + 1]);
            for (int u = 0; u < used; u++) {
                even[u] = _mm256_fmadd_ps(a0, load_half8(r0 + 8 * u, hd - i0 - 8 * u), even[u]);
                odd[u] = _mm256_fmadd_ps(a1, load_half8(r1 + 8 * u, hd - i0 - 8 * u), odd[u]);
            }
        }
        if (j < count) {
            const uint16_t *r0 = (const uint16_t *)(base + (size_t)slot * row_bytes) + i0;
            __m256 a0 = _mm256_set1_ps(a[j]);
            for (int u = 0; u < used; u++) even[u] = _mm256_fmadd_ps(a0, load_half8(r0 + 8 * u, hd - i0 - 8 * u), even[u]);
        }
        for (int u = 0; u < used; u++) {
            float tmp[8];
            _mm256_storeu_ps(tmp, _mm256_add_ps(even[u], odd[u]));
            int n = hd - i0 - 8 * u < 8 ? hd - i0 - 8 * u : 8;
            memcpy(out + i0 + 8 * u, tmp, (size_t)n * sizeof(float));
        }
    }
}
#endif
