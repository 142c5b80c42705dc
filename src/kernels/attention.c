/* Attention kernels (see attention.h): the cache types' names and sizes, the f32 cache's kernels and
 * the softmax (portable, AVX2, AVX-512 and NEON), and the table of every type's kernels per instruction set
 * (the f16 and q8_0 kernels are in attention_f16.c and attention_q8_0.c). Scores put one key in each lane
 * and run one FMA chain per dimension; values add a[j] * row j into per-dimension accumulators,
 * even and odd rows into separate ones (two chains hide the FMA latency) summed at the end. Tails
 * (counts and head sizes that are not multiples of the vector width) use masked loads, which do
 * the same per-lane operations, so a score or an output never depends on its neighbours. The
 * vector softmax uses exp(r + n ln2) = 2^n e^r with |r| <= ln2 / 2 and e^r's Taylor polynomial of
 * degree 6 (relative error below 2e-7, about one float ulp). */
#include "kernels/attention.h"
#include "kernels/attention_f16.h"
#include "kernels/attention_q8_0.h"
#include "kernels/cpu.h"
#include "kernels/simd.h"
#include "kernels/kernels_internal.h"
#include "kernels/f16.h"

static void scores_generic(const float *q, const float *kt, long kt_stride, int hd, int count,
                           float scale, float *score) {
    for (int j = 0; j < count; j++) score[j] = 0.0f;
    for (int i = 0; i < hd; i++) {
        const float *row = kt + (long)i * kt_stride;
        for (int j = 0; j < count; j++) score[j] += q[i] * row[j];
    }
    for (int j = 0; j < count; j++) score[j] *= scale;
}

static void values_generic(const float *a, int count, const float *v, long v_stride, int slots,
                           int s0, int hd, float *out) {
    for (int i = 0; i < hd; i++) out[i] = 0.0f;
    int slot = s0 % slots;
    for (int j = 0; j < count; j++) {
        const float *row = v + (long)slot * v_stride;
        for (int i = 0; i < hd; i++) out[i] += a[j] * row[i];
        if (++slot == slots) slot = 0;
    }
}

static float softmax_generic(float *x, int n, float *max) {
    float maxv = -INFINITY, sum = 0.0f;
    for (int j = 0; j < n; j++) if (x[j] > maxv) maxv = x[j];
    for (int j = 0; j < n; j++) { x[j] = expf(x[j] - maxv); sum += x[j]; }
    for (int j = 0; j < n; j++) x[j] /= sum;
    *max = maxv;
    return sum;
}

#if defined(TS_X86) || defined(__aarch64__)
/* The vector exponential of the SIMD softmaxes: e^x = 2^n e^r with n = round(x log2 e) and
 * r = x - n ln 2 (ln 2 in two parts, so r keeps its low bits), e^r by its Taylor series. */
#define EXP_LOG2E 1.44269504088896341f
#define EXP_LN2_HI 0.693359375f          /* ln 2 = EXP_LN2_HI + EXP_LN2_LO, the high part exact in 10 bits */
#define EXP_LN2_LO -2.12194440e-4f
#define EXP_MIN -87.0f                   /* below: e^x underflows to (near) 0 anyway */
/* e^r = 1 + r + r^2/2! + ... + r^6/6!, coefficients in Horner order */
static const float EXP_TAYLOR[7] = { 1.0f / 720.0f, 1.0f / 120.0f, 1.0f / 24.0f, 1.0f / 6.0f, 0.5f, 1.0f, 1.0f };
#endif

#if defined(__aarch64__)
/* NEON: the AVX2 softmax's exponential, four scores per vector (glibc's expf per score was the
 * portable softmax's cost). */
static ALWAYS_INLINE float32x4_t exp_neon(float32x4_t x) {
    x = vmaxq_f32(x, vdupq_n_f32(EXP_MIN));
    const float32x4_t n = vrndnq_f32(vmulq_f32(x, vdupq_n_f32(EXP_LOG2E)));
    float32x4_t r = vfmsq_f32(x, n, vdupq_n_f32(EXP_LN2_HI));
    r = vfmsq_f32(r, n, vdupq_n_f32(EXP_LN2_LO));
    float32x4_t p = vdupq_n_f32(EXP_TAYLOR[0]);
    UNROLL
    for (int i = 1; i < 7; i++) p = vfmaq_f32(vdupq_n_f32(EXP_TAYLOR[i]), p, r);
    /* 2^n for n in [-126, 1] from the exponent bits */
    const int32x4_t e = vshlq_n_s32(vaddq_s32(vcvtnq_s32_f32(n), vdupq_n_s32(127)), 23);
    return vmulq_f32(p, vreinterpretq_f32_s32(e));
}

static float softmax_neon(float *x, int n, float *max) {
    float maxv = -INFINITY;
    for (int j = 0; j < n; j++) if (x[j] > maxv) maxv = x[j];
    const float32x4_t mv = vdupq_n_f32(maxv);
    float32x4_t sum = vdupq_n_f32(0.0f);
    int j = 0;
    for (; j + 4 <= n; j += 4) {
        const float32x4_t e = exp_neon(vsubq_f32(vld1q_f32(x + j), mv));
        sum = vaddq_f32(sum, e);
        vst1q_f32(x + j, e);
    }
    float total = vaddvq_f32(sum);
    if (j < n) {   /* the last 1-3 scores, in a vector of their own */
        float tail[4] = { 0.0f, 0.0f, 0.0f, 0.0f };
        memcpy(tail, x + j, (size_t)(n - j) * sizeof(float));
        vst1q_f32(tail, exp_neon(vsubq_f32(vld1q_f32(tail), mv)));
        for (int t = 0; t < n - j; t++) { x[j + t] = tail[t]; total += tail[t]; }
    }
    const float32x4_t inv = vdupq_n_f32(1.0f / total);
    for (j = 0; j + 4 <= n; j += 4) vst1q_f32(x + j, vmulq_f32(vld1q_f32(x + j), inv));
    for (; j < n; j++) x[j] *= 1.0f / total;
    *max = maxv;
    return total;
}
#endif

#if defined(TS_X86)

/* ---- AVX-512: 16 lanes, 8 vectors of keys (128) per block of scores, 4 of dimensions (64) ---- */

static ALWAYS_INLINE TARGET_AVX512 __mmask16 lanes_mask16(int n) {
    return n >= 16 ? (__mmask16)0xffff : n <= 0 ? (__mmask16)0 : (__mmask16)((1u << n) - 1);
}

static TARGET_AVX512 void scores_avx512(const float *q, const float *kt, long kt_stride, int hd,
                                        int count, float scale, float *score) {
    for (int j0 = 0; j0 < count; j0 += 128) {
        __mmask16 m[8];
        __m512 acc[8];
        for (int u = 0; u < 8; u++) { m[u] = lanes_mask16(count - j0 - 16 * u); acc[u] = _mm512_setzero_ps(); }
        for (int i = 0; i < hd; i++) {
            const float *row = kt + (long)i * kt_stride + j0;
            __m512 qi = _mm512_set1_ps(q[i]);
            for (int u = 0; u < 8; u++)
                if (m[u]) acc[u] = _mm512_fmadd_ps(qi, _mm512_maskz_loadu_ps(m[u], row + 16 * u), acc[u]);
        }
        const __m512 s = _mm512_set1_ps(scale);
        for (int u = 0; u < 8; u++)
            if (m[u]) _mm512_mask_storeu_ps(score + j0 + 16 * u, m[u], _mm512_mul_ps(acc[u], s));
    }
}

static TARGET_AVX512 void values_avx512(const float *a, int count, const float *v, long v_stride,
                                        int slots, int s0, int hd, float *out) {
    for (int i0 = 0; i0 < hd; i0 += 64) {
        __mmask16 m[4];
        __m512 even[4], odd[4];
        for (int u = 0; u < 4; u++) {
            m[u] = lanes_mask16(hd - i0 - 16 * u);
            even[u] = odd[u] = _mm512_setzero_ps();
        }
        int slot = s0 % slots, j = 0;
        for (; j + 2 <= count; j += 2) {
            const float *r0 = v + (long)slot * v_stride + i0;
            if (++slot == slots) slot = 0;
            const float *r1 = v + (long)slot * v_stride + i0;
            if (++slot == slots) slot = 0;
            __m512 a0 = _mm512_set1_ps(a[j]), a1 = _mm512_set1_ps(a[j + 1]);
            for (int u = 0; u < 4; u++)
                if (m[u]) {
                    even[u] = _mm512_fmadd_ps(a0, _mm512_maskz_loadu_ps(m[u], r0 + 16 * u), even[u]);
                    odd[u] = _mm512_fmadd_ps(a1, _mm512_maskz_loadu_ps(m[u], r1 + 16 * u), odd[u]);
                }
        }
        if (j < count) {
            const float *r0 = v + (long)slot * v_stride + i0;
            __m512 a0 = _mm512_set1_ps(a[j]);
            for (int u = 0; u < 4; u++)
                if (m[u]) even[u] = _mm512_fmadd_ps(a0, _mm512_maskz_loadu_ps(m[u], r0 + 16 * u), even[u]);
        }
        for (int u = 0; u < 4; u++)
            if (m[u]) _mm512_mask_storeu_ps(out + i0 + 16 * u, m[u], _mm512_add_ps(even[u], odd[u]));
    }
}

/* e^x for x <= 0 (larger x is not clamped: softmax arguments are x - max) */
static ALWAYS_INLINE TARGET_AVX512 __m512 exp_avx512(__m512 x) {
    x = _mm512_max_ps(x, _mm512_set1_ps(EXP_MIN));
    __m512 n = _mm512_roundscale_ps(_mm512_mul_ps(x, _mm512_set1_ps(EXP_LOG2E)), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    __m512 r = _mm512_fnmadd_ps(n, _mm512_set1_ps(EXP_LN2_HI), x);
    r = _mm512_fnmadd_ps(n, _mm512_set1_ps(EXP_LN2_LO), r);
    __m512 p = _mm512_set1_ps(EXP_TAYLOR[0]);
    UNROLL
    for (int i = 1; i < 7; i++) p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(EXP_TAYLOR[i]));
    return _mm512_scalef_ps(p, n);
}

static TARGET_AVX512 float softmax_avx512(float *x, int n, float *max) {
    __m512 m = _mm512_set1_ps(-INFINITY);
    for (int j = 0; j < n; j += 16) m = _mm512_max_ps(m, _mm512_mask_loadu_ps(m, lanes_mask16(n - j), x + j));
    const __m512 maxv = _mm512_set1_ps(_mm512_reduce_max_ps(m));
    __m512 sum = _mm512_setzero_ps();
    for (int j = 0; j < n; j += 16) {
        __mmask16 k = lanes_mask16(n - j);
        __m512 e = exp_avx512(_mm512_sub_ps(_mm512_maskz_loadu_ps(k, x + j), maxv));
        sum = _mm512_add_ps(sum, _mm512_maskz_mov_ps(k, e));
        _mm512_mask_storeu_ps(x + j, k, e);
    }
    const float total = hsum_f32x16(sum);
    const __m512 inv = _mm512_set1_ps(1.0f / total);
    for (int j = 0; j < n; j += 16) {
        __mmask16 k = lanes_mask16(n - j);
        _mm512_mask_storeu_ps(x + j, k, _mm512_mul_ps(_mm512_maskz_loadu_ps(k, x + j), inv));
    }
    *max = _mm_cvtss_f32(_mm512_castps512_ps128(maxv));
    return total;
}

/* ---- AVX2: 8 lanes, 8 vectors of keys (64) per block of scores, 4 of dimensions (32) ---- */

static ALWAYS_INLINE TARGET_AVX2 __m256i lanes_mask8(int n) {
    n = n < 0 ? 0 : n > 8 ? 8 : n;
    return _mm256_cmpgt_epi32(_mm256_set1_epi32(n), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
}

static TARGET_AVX2 void scores_avx2(const float *q, const float *kt, long kt_stride, int hd,
                                    int count, float scale, float *score) {
    for (int j0 = 0; j0 < count; j0 += 64) {
        __m256i m[8];
        __m256 acc[8];
        int used = (count - j0 + 7) / 8 < 8 ? (count - j0 + 7) / 8 : 8;
        for (int u = 0; u < 8; u++) { m[u] = lanes_mask8(count - j0 - 8 * u); acc[u] = _mm256_setzero_ps(); }
        for (int i = 0; i < hd; i++) {
            const float *row = kt + (long)i * kt_stride + j0;
            __m256 qi = _mm256_set1_ps(q[i]);
            for (int u = 0; u < used; u++)
                acc[u] = _mm256_fmadd_ps(qi, _mm256_maskload_ps(row + 8 * u, m[u]), acc[u]);
        }
        const __m256 s = _mm256_set1_ps(scale);
        for (int u = 0; u < used; u++) _mm256_maskstore_ps(score + j0 + 8 * u, m[u], _mm256_mul_ps(acc[u], s));
    }
}

static TARGET_AVX2 void values_avx2(const float *a, int count, const float *v, long v_stride,
                                    int slots, int s0, int hd, float *out) {
    for (int i0 = 0; i0 < hd; i0 += 32) {
        __m256i m[4];
        __m256 even[4], odd[4];
        int used = (hd - i0 + 7) / 8 < 4 ? (hd - i0 + 7) / 8 : 4;
        for (int u = 0; u < 4; u++) {
            m[u] = lanes_mask8(hd - i0 - 8 * u);
            even[u] = odd[u] = _mm256_setzero_ps();
        }
        int slot = s0 % slots, j = 0;
        for (; j + 2 <= count; j += 2) {
            const float *r0 = v + (long)slot * v_stride + i0;
            if (++slot == slots) slot = 0;
            const float *r1 = v + (long)slot * v_stride + i0;
            if (++slot == slots) slot = 0;
            __m256 a0 = _mm256_set1_ps(a[j]), a1 = _mm256_set1_ps(a[j + 1]);
            for (int u = 0; u < used; u++) {
                even[u] = _mm256_fmadd_ps(a0, _mm256_maskload_ps(r0 + 8 * u, m[u]), even[u]);
                odd[u] = _mm256_fmadd_ps(a1, _mm256_maskload_ps(r1 + 8 * u, m[u]), odd[u]);
            }
        }
        if (j < count) {
            const float *r0 = v + (long)slot * v_stride + i0;
            __m256 a0 = _mm256_set1_ps(a[j]);
            for (int u = 0; u < used; u++)
                even[u] = _mm256_fmadd_ps(a0, _mm256_maskload_ps(r0 + 8 * u, m[u]), even[u]);
        }
        for (int u = 0; u < used; u++) _mm256_maskstore_ps(out + i0 + 8 * u, m[u], _mm256_add_ps(even[u], odd[u]));
    }
}

static ALWAYS_INLINE TARGET_AVX2 __m256 exp_avx2(__m256 x) {
    x = _mm256_max_ps(x, _mm256_set1_ps(EXP_MIN));
    __m256 n = _mm256_round_ps(_mm256_mul_ps(x, _mm256_set1_ps(EXP_LOG2E)), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    __m256 r = _mm256_fnmadd_ps(n, _mm256_set1_ps(EXP_LN2_HI), x);
    r = _mm256_fnmadd_ps(n, _mm256_set1_ps(EXP_LN2_LO), r);
    __m256 p = _mm256_set1_ps(EXP_TAYLOR[0]);
    UNROLL
    for (int i = 1; i < 7; i++) p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(EXP_TAYLOR[i]));
    /* 2^n for n in [-126, 1] from the exponent bits */
    __m256i e = _mm256_slli_epi32(_mm256_add_epi32(_mm256_cvtps_epi32(n), _mm256_set1_epi32(127)), 23);
    return _mm256_mul_ps(p, _mm256_castsi256_ps(e));
}

static TARGET_AVX2 float softmax_avx2(float *x, int n, float *max) {
    float maxv = -INFINITY;
    for (int j = 0; j < n; j++) if (x[j] > maxv) maxv = x[j];
    const __m256 mv = _mm256_set1_ps(maxv);
    __m256 sum = _mm256_setzero_ps();
    for (int j = 0; j < n; j += 8) {
        __m256i k = lanes_mask8(n - j);
        __m256 e = _mm256_and_ps(exp_avx2(_mm256_sub_ps(_mm256_maskload_ps(x + j, k), mv)), _mm256_castsi256_ps(k));
        sum = _mm256_add_ps(sum, e);
        _mm256_maskstore_ps(x + j, k, e);
    }
    const float total = hsum_f32x8(sum);
    const __m256 inv = _mm256_set1_ps(1.0f / total);
    for (int j = 0; j < n; j += 8) {
        __m256i k = lanes_mask8(n - j);
        _mm256_maskstore_ps(x + j, k, _mm256_mul_ps(_mm256_maskload_ps(x + j, k), inv));
    }
    *max = maxv;
    return total;
}
#endif

/* ---- the f32 cache: a key block is float [hd][KV_KEY_BLOCK], a value row float [width] ---- */

void attention_scores_f32_generic(const float *q, int heads, const void *block, int hd, int i0, int count, float scale, float *score, size_t score_stride) {
    for (int g = 0; g < heads; g++)
        scores_generic(q + (size_t)g * hd, (const float *)block + i0, KV_KEY_BLOCK, hd, count, scale, score + g * score_stride);
}

void attention_values_f32_generic(const float *a, size_t a_stride, int heads, int count, const void *v, size_t row_bytes, int slots, int s0, int hd, float *out, size_t out_stride) {
    for (int g = 0; g < heads; g++)
        values_generic(a + g * a_stride, count, v, (long)(row_bytes / sizeof(float)), slots, s0, hd, out + g * out_stride);
}

#if defined(TS_X86)
static void scores_f32_avx2(const float *q, int heads, const void *block, int hd, int i0, int count, float scale, float *score, size_t score_stride) {
    for (int g = 0; g < heads; g++)
        scores_avx2(q + (size_t)g * hd, (const float *)block + i0, KV_KEY_BLOCK, hd, count, scale, score + g * score_stride);
}

static void values_f32_avx2(const float *a, size_t a_stride, int heads, int count, const void *v, size_t row_bytes, int slots, int s0, int hd, float *out, size_t out_stride) {
    for (int g = 0; g < heads; g++)
        values_avx2(a + g * a_stride, count, v, (long)(row_bytes / sizeof(float)), slots, s0, hd, out + g * out_stride);
}

static void scores_f32_avx512(const float *q, int heads, const void *block, int hd, int i0, int count, float scale, float *score, size_t score_stride) {
    for (int g = 0; g < heads; g++)
        scores_avx512(q + (size_t)g * hd, (const float *)block + i0, KV_KEY_BLOCK, hd, count, scale, score + g * score_stride);
}

static void values_f32_avx512(const float *a, size_t a_stride, int heads, int count, const void *v, size_t row_bytes, int slots, int s0, int hd, float *out, size_t out_stride) {
    for (int g = 0; g < heads; g++)
        values_avx512(a + g * a_stride, count, v, (long)(row_bytes / sizeof(float)), slots, s0, hd, out + g * out_stride);
}
#endif

/* ---- the cache types ---- */

static const char *const KV_TYPE_NAMES[KV_TYPE_COUNT] = { "f32", "f16", "q8_0" };

const char *attention_kv_type_name(int type) {
    return type >= 0 && type < KV_TYPE_COUNT ? KV_TYPE_NAMES[type] : "?";
}

int attention_kv_type_from_name(const char *name) {
    for (int t = 0; t < KV_TYPE_COUNT; t++)
        if (name && strcmp(name, KV_TYPE_NAMES[t]) == 0) return t;
    return -1;
}

int attention_kv_type_fits(int type, int hd) {
    return type == KV_Q8_0 ? hd % QK == 0 : type >= 0 && type < KV_TYPE_COUNT;
}

size_t attention_key_block_bytes(int type, int hd) {
    if (type == KV_F16) return (size_t)hd * KV_KEY_BLOCK * 2;
    if (type == KV_Q8_0) return (size_t)hd * KV_KEY_BLOCK + (size_t)(hd / QK) * KV_KEY_BLOCK * 2;
    return (size_t)hd * KV_KEY_BLOCK * sizeof(float);
}

size_t attention_value_row_bytes(int type, int width) {
    if (type == KV_F16) return (size_t)width * 2;
    if (type == KV_Q8_0) return (size_t)(width / QK) * sizeof(block_q8_0);
    return (size_t)width * sizeof(float);
}

void attention_store_key(const attention_kernels *ak, int type, void *block, int i, const float *k, int hd) {
    if (type == KV_F16) {
        uint16_t h[256], *kt = (uint16_t *)block + i;   /* converted 256 at a time: any head size */
        for (int d0 = 0; d0 < hd; d0 += 256) {
            const int n = hd - d0 < 256 ? hd - d0 : 256;
            ak->to_f16(k + d0, h, n);
            for (int d = 0; d < n; d++) kt[(size_t)(d0 + d) * KV_KEY_BLOCK] = h[d];
        }
    } else if (type == KV_Q8_0) {
        int8_t *codes = (int8_t *)block + i;
        uint16_t *scales = (uint16_t *)((uint8_t *)block + (size_t)hd * KV_KEY_BLOCK) + i;
        for (int g = 0; g < hd / QK; g++) {   /* a block of 32 at a time (the row's blocks are independent) */
            block_q8_0 b;
            q8_0_quantize_row(k + g * QK, &b, QK);
            for (int d = 0; d < QK; d++) codes[(size_t)(g * QK + d) * KV_KEY_BLOCK] = b.qs[d];
            scales[(size_t)g * KV_KEY_BLOCK] = (uint16_t)(b.d[0] | b.d[1] << 8);
        }
    } else {
        float *kt = (float *)block + i;
        for (int d = 0; d < hd; d++) kt[(size_t)d * KV_KEY_BLOCK] = k[d];
    }
}

void attention_store_value(const attention_kernels *ak, int type, void *row, const float *v, int width) {
    if (type == KV_F16) {
        ak->to_f16(v, row, width);
    } else if (type == KV_Q8_0) {
        q8_0_quantize_row(v, row, width);
    } else {
        memcpy(row, v, (size_t)width * sizeof(float));
    }
}

/* ---- each instruction set's kernels ---- */

static const attention_kernels attention_kernels_generic = {
    .scores = { [KV_F32] = attention_scores_f32_generic, [KV_F16] = attention_scores_f16_generic,
                [KV_Q8_0] = attention_scores_q8_0_generic },
    .softmax = softmax_generic,
    .values = { [KV_F32] = attention_values_f32_generic, [KV_F16] = attention_values_f16_generic,
                [KV_Q8_0] = attention_values_q8_0_generic },
    .to_f16 = attention_to_f16_generic };

#if defined(TS_X86)
static const attention_kernels attention_kernels_avx2 = {
    .scores = { [KV_F32] = scores_f32_avx2, [KV_F16] = attention_scores_f16_avx2,
                [KV_Q8_0] = attention_scores_q8_0_avx2 },
    .softmax = softmax_avx2,
    .values = { [KV_F32] = values_f32_avx2, [KV_F16] = attention_values_f16_avx2,
                [KV_Q8_0] = attention_values_q8_0_avx2 },
    .to_f16 = attention_to_f16_avx2 };

static const attention_kernels attention_kernels_avx512 = {
    .scores = { [KV_F32] = scores_f32_avx512, [KV_F16] = attention_scores_f16_avx512,
                [KV_Q8_0] = attention_scores_q8_0_avx512 },
    .softmax = softmax_avx512,
    .values = { [KV_F32] = values_f32_avx512, [KV_F16] = attention_values_f16_avx512,
                [KV_Q8_0] = attention_values_q8_0_avx512 },
    .to_f16 = attention_to_f16_avx512 };
#endif

#if defined(__aarch64__)
/* the f32 cache's portable kernels vectorize as they are */
static const attention_kernels attention_kernels_neon = {
    .scores = { [KV_F32] = attention_scores_f32_generic, [KV_F16] = attention_scores_f16_neon,
                [KV_Q8_0] = attention_scores_q8_0_neon },
    .softmax = softmax_neon,
    .values = { [KV_F32] = attention_values_f32_generic, [KV_F16] = attention_values_f16_neon,
                [KV_Q8_0] = attention_values_q8_0_neon },
    .to_f16 = attention_to_f16_neon };
#endif

/* Indexed by enum simd_level (the list of sets: cpu.h); a set without attention kernels of its own
 * takes the portable ones. */
static const attention_kernels *const attention_sets[SIMD_COUNT] = {
    [SIMD_SCALAR] = &attention_kernels_generic,
#if defined(TS_X86)
    [SIMD_AVX2] = &attention_kernels_avx2,
    [SIMD_AVX512] = &attention_kernels_avx512,
#endif
#if defined(__aarch64__)
    [SIMD_NEON] = &attention_kernels_neon,
#endif
};

attention_kernels attention_kernels_for(int simd_level) {
    if (simd_level < 0 || simd_level >= SIMD_COUNT || !attention_sets[simd_level]) return attention_kernels_generic;
    return *attention_sets[simd_level];
}
