/* Activation quantizers: one row of f32 activations into Q8_0 blocks (f16 scale per 32) or Q8_K
 * super-blocks (f32 scale per 256, plus the sums of each 16 codes). Every set's quantizers store
 * the reference quantizers' scales, round halfway cases to even, and (for Q8_0, as llama.cpp does)
 * pick the codes with 127 / max|x| rather than with the inverse of the f16-rounded scale: a code
 * may then differ from the reference's by one, and the values land within half a step plus 127
 * times the scale's f16 rounding error. Matching llama.cpp here moves the logits measurably
 * closer to its reference (gemma3-tiny Q8_0: cosine 0.99930 -> 0.99968). */
#include "kernels/kernels_internal.h"
#include "kernels/simd.h"
#include "kernels/f16.h"
#include "kernels/types.h"

size_t act_row_bytes(int act_type, int64_t k) {
    if (act_type == TS_F32) return (size_t)k * sizeof(float);
    if (act_type == ACT_Q8_0X2) return (size_t)((k / QK + 1) / 2) * sizeof(block_q8_0x2);
    if (act_type == ACT_Q8_K_NIBBLES || act_type == ACT_Q8_K_PLANES) return type_row_bytes(TS_Q8_K, k);
    return type_row_bytes(act_type, k);
}

quantize_act_fn act_quantizer(const kernel_set *ks, int act_type) {
    switch (act_type) {
    case TS_Q8_0: return ks->quantize_q8_0;
    case TS_Q8_K: return ks->quantize_q8_k;
    case ACT_Q8_0X2: return ks->quantize_q8_0x2;
    case ACT_Q8_K_NIBBLES: return ks->quantize_q8_k_nibbles;
    case ACT_Q8_K_PLANES: return ks->quantize_q8_k_planes;
    default: return NULL;
    }
}

/* The portable quantizers (the NEON set's) make the same bytes as the AVX2 ones: with the Q8_0
 * reference's codes (1 / the f16-rounded scale), the NEON set's gemma3-tiny Q8_0 logits fell to
 * cosine 0.99926 against llama.cpp's, below the 0.9995 gate, where the x86 sets reach 0.99968. */
static inline int8_t act_code(float v) {
    v = fminf(fmaxf(v, -127.0f), 127.0f);   /* also maps NaN to a code instead of an undefined cast */
    return (int8_t)(int)rintf(v);             /* halfway cases to even, as cvtps2dq */
}

static float max_abs(const float *x, int n) {
    float m = 0.0f;
    for (int j = 0; j < n; j++) m = fmaxf(m, fabsf(x[j]));
    return m;
}

void act_quantize_q8_0_generic(const float *x, void *act, int64_t k) {
    block_q8_0 *b = act;
    for (int64_t i = 0; i < k / QK; i++, b++, x += QK) {
        float amax = max_abs(x, QK), id = amax != 0.0f ? 127.0f / amax : 0.0f;
        store_f16(b->d, f16_from_f32(amax / 127.0f));
        for (int j = 0; j < QK; j++) b->qs[j] = act_code(x[j] * id);
    }
}

void act_quantize_q8_k_generic(const float *x, void *act, int64_t k) {
    block_q8_K *b = act;
    for (int64_t i = 0; i < k / QK_K; i++, b++, x += QK_K) {
        float d = max_abs(x, QK_K) / 127.0f, id = d != 0.0f ? 1.0f / d : 0.0f;
        store_u32(b->d, f32_bits(d));
        for (int j = 0; j < QK_K; j++) b->qs[j] = act_code(x[j] * id);
        for (int g = 0; g < QK_K / 16; g++) {
            int sum = 0;
            for (int j = 0; j < 16; j++) sum += b->qs[16 * g + j];
            b->bsums[2 * g] = (uint8_t)(sum & 0xff);
            b->bsums[2 * g + 1] = (uint8_t)((sum >> 8) & 0xff);
        }
    }
}

#if defined(TS_X86)
static ALWAYS_INLINE TARGET_AVX2 float max_abs_f32(const float *x, int n) {
    const __m256 sign = _mm256_set1_ps(-0.0f);
    __m256 m = _mm256_setzero_ps();
    for (int j = 0; j < n; j += 8) m = _mm256_max_ps(m, _mm256_andnot_ps(sign, _mm256_loadu_ps(x + j)));
    __m128 s = _mm_max_ps(_mm256_castps256_ps128(m), _mm256_extractf128_ps(m, 1));
    s = _mm_max_ps(s, _mm_movehl_ps(s, s));
    s = _mm_max_ss(s, _mm_movehdup_ps(s));
    return _mm_cvtss_f32(s);
}

/* 32 floats times id, rounded, packed into 32 int8 in element order. */
static ALWAYS_INLINE TARGET_AVX2 __m256i round_pack32(const float *x, float id) {
    const __m256 scale = _mm256_set1_ps(id);
    __m256i i0 = _mm256_cvtps_epi32(_mm256_mul_ps(_mm256_loadu_ps(x), scale));
    __m256i i1 = _mm256_cvtps_epi32(_mm256_mul_ps(_mm256_loadu_ps(x + 8), scale));
    __m256i i2 = _mm256_cvtps_epi32(_mm256_mul_ps(_mm256_loadu_ps(x + 16), scale));
    __m256i i3 = _mm256_cvtps_epi32(_mm256_mul_ps(_mm256_loadu_ps(x + 24), scale));
    /* packs works per 128-bit lane: undo its interleave with a final dword permute */
    __m256i p = _mm256_packs_epi16(_mm256_packs_epi32(i0, i1), _mm256_packs_epi32(i2, i3));
    return _mm256_permutevar8x32_epi32(p, _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7));
}

TARGET_AVX2 void act_quantize_q8_0_avx2(const float *x, void *act, int64_t k) {
    block_q8_0 *b = act;
    for (int64_t i = 0; i < k / QK; i++, b++, x += QK) {
        float amax = max_abs_f32(x, QK), id = amax != 0.0f ? 127.0f / amax : 0.0f;
        uint16_t dh = _cvtss_sh(amax / 127.0f, 0);
        memcpy(b->d, &dh, 2);
        _mm256_storeu_si256((__m256i *)b->qs, round_pack32(x, id));
    }
}

TARGET_AVX512 void act_quantize_q8_0x2_avx512(const float *x, void *act, int64_t k) {
    block_q8_0x2 *p = act;
    const int64_t nb = k / QK;
    for (int64_t i = 0; i < nb; i++, x += QK) {
        block_q8_0x2 *pair = p + i / 2;
        const int half = (int)(i % 2);
        float amax = max_abs_f32(x, QK), id = amax != 0.0f ? 127.0f / amax : 0.0f;
        float d = _cvtsh_ss(_cvtss_sh(amax / 127.0f, 0));     /* the f16-rounded scale, as Q8_0 stores it */
        __m256i codes = _mm256_xor_si256(round_pack32(x, id), _mm256_set1_epi8((char)0x80));
        _mm256_storeu_si256((__m256i *)(pair->qs + 32 * half), codes);
        _mm256_storeu_ps((float *)(void *)(pair->d + 32 * half), _mm256_set1_ps(d));
    }
    if (nb % 2) {   /* the half pair: zero activations with a zero scale */
        block_q8_0x2 *pair = p + nb / 2;
        memset(pair->qs + QK, 0x80, QK);
        memset(pair->d + 32, 0, 32);
    }
}

enum q8_k_order { ELEMENT_ORDER, NIBBLE_ORDER, PLANE_ORDER };

/* 32 codes of elements j .. j + 31 (j % 32 == 0) at their q8_k_plane_slot: 8 in each plane */
static ALWAYS_INLINE TARGET_AVX2 void store_planes(int8_t *qs, int j, __m256i q) {
    /* per 128-bit lane, the codes of elements 4 e + p grouped by p; then plane p's two dwords side by side */
    const __m256i by_plane = _mm256_shuffle_epi8(q, _mm256_setr_epi8(0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15,
                                                                     0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15));
    const __m256i pairs = _mm256_permutevar8x32_epi32(by_plane, _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7));
    for (int p = 0; p < 4; p++) {
        const __m128i half = p < 2 ? _mm256_castsi256_si128(pairs) : _mm256_extracti128_si256(pairs, 1);
        const int64_t v = p % 2 ? _mm_extract_epi64(half, 1) : _mm_cvtsi128_si64(half);
        memcpy(qs + q8_k_plane_slot(j + p), &v, 8);
    }
}

/* order (a constant): element order, each group of 32 codes at q8_k_nibble_slot (ACT_Q8_K_NIBBLES), or
 * each code at q8_k_plane_slot (ACT_Q8_K_PLANES) */
static ALWAYS_INLINE TARGET_AVX2 void q8_k_avx2(const float *x, void *act, int64_t k, const enum q8_k_order order) {
    block_q8_K *b = act;
    for (int64_t i = 0; i < k / QK_K; i++, b++, x += QK_K) {
        float d = max_abs_f32(x, QK_K) / 127.0f, id = d != 0.0f ? 1.0f / d : 0.0f;
        memcpy(b->d, &d, 4);
        for (int j = 0; j < QK_K; j += 32) {
            __m256i q = round_pack32(x + j, id);
            if (order == PLANE_ORDER) store_planes(b->qs, j, q);
            else _mm256_storeu_si256((__m256i *)(b->qs + (order == NIBBLE_ORDER ? 32 * q8_k_nibble_slot(j / 32) : j)), q);
            /* the sums of each 16 codes: widen to int16 and add horizontally */
            __m256i w = _mm256_madd_epi16(_mm256_maddubs_epi16(_mm256_set1_epi8(1), q), _mm256_set1_epi16(1));
            /* w: 8 int32 lanes, lanes 0-3 cover codes 0-15, lanes 4-7 codes 16-31 */
            __m128i lo = _mm256_castsi256_si128(w), hi = _mm256_extracti128_si256(w, 1);
            lo = _mm_hadd_epi32(lo, hi);          /* l0+l1, l2+l3, h0+h1, h2+h3 */
            lo = _mm_hadd_epi32(lo, lo);          /* sum(codes 0-15), sum(codes 16-31) */
            int16_t s0 = (int16_t)_mm_cvtsi128_si32(lo), s1 = (int16_t)_mm_extract_epi32(lo, 1);
            int g = j / 16;
            b->bsums[2 * g] = (uint8_t)s0; b->bsums[2 * g + 1] = (uint8_t)((uint16_t)s0 >> 8);
            b->bsums[2 * g + 2] = (uint8_t)s1; b->bsums[2 * g + 3] = (uint8_t)((uint16_t)s1 >> 8);
        }
    }
}

TARGET_AVX2 void act_quantize_q8_k_avx2(const float *x, void *act, int64_t k) { q8_k_avx2(x, act, k, ELEMENT_ORDER); }
TARGET_AVX2 void act_quantize_q8_k_nibbles_avx2(const float *x, void *act, int64_t k) { q8_k_avx2(x, act, k, NIBBLE_ORDER); }
TARGET_AVX2 void act_quantize_q8_k_planes_avx2(const float *x, void *act, int64_t k) { q8_k_avx2(x, act, k, PLANE_ORDER); }
#endif

void act_dequant(int act_type, const void *act, float *y, int64_t k) {
    if (act_type == ACT_Q8_0X2) {
        const block_q8_0x2 *p = act;
        for (int64_t e = 0; e < k; e++) {
            const block_q8_0x2 *pair = p + e / (2 * QK);
            int j = (int)(e % (2 * QK));
            float d;
            memcpy(&d, pair->d + 4 * (j / QK * 8), 4);
            y[e] = (float)((int)pair->qs[j] - 128) * d;
        }
    } else if (act_type == ACT_Q8_K_NIBBLES) {
        const block_q8_K *b = act;
        for (int64_t e = 0; e < k; e++) {
            const block_q8_K *sb = b + e / QK_K;
            int j = (int)(e % QK_K);
            y[e] = f32_from_bits(load_u32(sb->d)) * sb->qs[32 * q8_k_nibble_slot(j / 32) + j % 32];
        }
    } else if (act_type == ACT_Q8_K_PLANES) {
        const block_q8_K *b = act;
        for (int64_t e = 0; e < k; e++) {
            const block_q8_K *sb = b + e / QK_K;
            y[e] = f32_from_bits(load_u32(sb->d)) * sb->qs[q8_k_plane_slot((int)(e % QK_K))];
        }
    } else {
        type_get(act_type)->dequant_row(act, y, k);
    }
}
