/* Attention kernels: the scores of the query heads of one KV head against a run of its cached keys,
 * the softmax, and the weighted sums of its cached values, for each KV cache type (f32, f16, q8_0)
 * and SIMD level.
 *
 * The cache keeps keys in blocks of KV_KEY_BLOCK slots per KV head, transposed (dimension-major:
 * key i of the block, dimension d at [d][i]) so the scores of 8 or 16 keys are one FMA chain per
 * dimension with a key in each lane; values slot-major (one row of hd values per slot and KV head)
 * so one value row is a few vector FMAs. Per type:
 *   f32   key block: float [hd][64];             value row: float [hd]
 *   f16   key block: IEEE half [hd][64];         value row: half [hd]
 *   q8_0  key block: int8 codes [hd][64], then the f16 scale of each 32 dimensions [hd/32][64];
 *         value row: Q8_0 blocks (block_q8_0: f16 scale, 32 int8 codes) of 32 dimensions.
 *         A key or value is quantized as a Q8_0 row (q8_0_quantize_row: d = max|x| / 127 rounded
 *         to f16, codes round(x / d)); q8_0 needs head sizes that are multiples of 32.
 * The reduced types are dequantized exactly to f32 in the kernels; the products and sums are f32.
 *
 * Each score and each output dimension is computed by the same operations whatever the count,
 * the split into calls or the thread, so batched, sequential and threaded runs agree bit for bit. */
#ifndef TS_KERNELS_ATTENTION_H
#define TS_KERNELS_ATTENTION_H
#include <stddef.h>
#include <stdint.h>
#include "kernels/attention_layout.h"

/* The type's name ("f32", "f16", "q8_0"), and the type of a name (-1: none). */
const char *attention_kv_type_name(int type);
int attention_kv_type_from_name(const char *name);
/* Whether a head of hd dimensions can be cached in this type (q8_0: hd % 32 == 0). */
int attention_kv_type_fits(int type, int hd);
/* Bytes of one KV head's block of KV_KEY_BLOCK keys, and of one value row of width values. */
size_t attention_key_block_bytes(int type, int hd);
size_t attention_value_row_bytes(int type, int width);

/* The query heads that share one KV head are taken together: heads of them, head g's query at
 * q + g * hd, its scores at score + g * score_stride, its weights at a + g * a_stride, its output
 * at out + g * out_stride. A kernel may widen each cached key or value once for all of them; each
 * head's result is the same bits whatever the count of heads in the call and its place in it.
 *
 * scores: score_g[j] = scale * (q_g . key (i0 + j) of the block)  for j < count, i0 + count <=
 * KV_KEY_BLOCK (the sum in dimension order; q8_0: per 32 dimensions, scaled, in order) */
typedef void (*attn_scores_fn)(const float *q, int heads, const void *block, int hd, int i0, int count,
                               float scale, float *score, size_t score_stride);
/* values: out_g[i] = sum_j a_g[j] * v_j[i]  for i < hd, where v_j is row (s0 + j) % slots of v (rows
 * row_bytes apart, v pointing at the KV head's row 0): a ring of cached positions read in position
 * order. */
typedef void (*attn_values_fn)(const float *a, size_t a_stride, int heads, int count, const void *v,
                               size_t row_bytes, int slots, int s0, int hd, float *out, size_t out_stride);
/* x[j] = exp(x[j] - max) / sum over j < n of exp(x[j] - max), in place; returns the sum and sets
 * *max (the merge of softmaxes over runs of keys needs both). */
typedef float (*attn_softmax_fn)(float *x, int n, float *max);
/* h[i] = x[i] as IEEE half, rounded to nearest even (f16_from_f32's bits), for i < n: the f16
 * cache's keys and values as they are stored */
typedef void (*attn_to_f16_fn)(const float *x, uint16_t *h, int n);

typedef struct attention_kernels {
    attn_scores_fn scores[KV_TYPE_COUNT];
    attn_softmax_fn softmax;
    attn_values_fn values[KV_TYPE_COUNT];
    attn_to_f16_fn to_f16;
} attention_kernels;

/* The kernels of a SIMD level (enum simd_level); the portable ones for levels without their own. */
attention_kernels attention_kernels_for(int simd_level);

/* Writes key k[0..hd) at slot i (< KV_KEY_BLOCK) of a head's key block; a whole value row (the f16
 * cache's conversion by ak's to_f16). */
void attention_store_key(const attention_kernels *ak, int type, void *block, int i, const float *k, int hd);
void attention_store_value(const attention_kernels *ak, int type, void *row, const float *v, int width);

/* The f32 cache's kernels (attention_f16.h and attention_q8_0.h have the other types'). */
void attention_scores_f32_generic(const float *q, int heads, const void *block, int hd, int i0, int count, float scale, float *score, size_t score_stride);
void attention_values_f32_generic(const float *a, size_t a_stride, int heads, int count, const void *v, size_t row_bytes, int slots, int s0, int hd, float *out, size_t out_stride);

#endif
