/* The attention kernels over an f16 KV cache (attention_f16.c), portable, NEON, AVX2 and AVX-512,
 * each of the form of attention.h's attn_scores_fn or attn_values_fn, and the conversion of keys and
 * values to halves (attn_to_f16_fn). */
#ifndef TS_KERNELS_ATTENTION_F16_H
#define TS_KERNELS_ATTENTION_F16_H
#include <stddef.h>
#include <stdint.h>

void attention_scores_f16_generic(const float *q, int heads, const void *block, int hd, int i0, int count, float scale, float *score, size_t score_stride);
void attention_values_f16_generic(const float *a, size_t a_stride, int heads, int count, const void *v, size_t row_bytes, int slots, int s0, int hd, float *out, size_t out_stride);
void attention_to_f16_generic(const float *x, uint16_t *h, int n);
#if defined(__aarch64__)
void attention_scores_f16_neon(const float *q, int heads, const void *block, int hd, int i0, int count, float scale, float *score, size_t score_stride);
void attention_values_f16_neon(const float *a, size_t a_stride, int heads, int count, const void *v, size_t row_bytes, int slots, int s0, int hd, float *out, size_t out_stride);
void attention_to_f16_neon(const float *x, uint16_t *h, int n);
#endif
#if defined(__x86_64__)
void attention_scores_f16_avx2(const float *q, int heads, const void *block, int hd, int i0, int count, float scale, float *score, size_t score_stride);
void attention_values_f16_avx2(const float *a, size_t a_stride, int heads, int count, const void *v, size_t row_bytes, int slots, int s0, int hd, float *out, size_t out_stride);
void attention_scores_f16_avx512(const float *q, int heads, const void *block, int hd, int i0, int count, float scale, float *score, size_t score_stride);
void attention_values_f16_avx512(const float *a, size_t a_stride, int heads, int count, const void *v, size_t row_bytes, int slots, int s0, int hd, float *out, size_t out_stride);
void attention_to_f16_avx2(const float *x, uint16_t *h, int n);
void attention_to_f16_avx512(const float *x, uint16_t *h, int n);
#endif

#endif
