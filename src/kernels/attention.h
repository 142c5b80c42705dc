/* Attention kernels: the scores of one query against a run of cached keys, and the weighted sum of
 * cached values. The cache keeps keys transposed (per KV head, dimension-major: kt[i][slot]) so
 * the scores of 8 or 16 keys are one FMA chain per dimension with a key in each lane, and values
 * slot-major (v[slot][dim]) so one value row is a few vector FMAs.
 *
 * Each score and each output dimension is computed by the same operations whatever the count,
 * the split into calls or the thread, so batched, sequential and threaded runs agree bit for bit. */
#ifndef TS_KERNELS_ATTENTION_H
#define TS_KERNELS_ATTENTION_H

/* score[j] = scale * sum_i q[i] * kt[i * kt_stride + j]  for j < count (sum in i order) */
typedef void (*attn_scores_fn)(const float *q, const float *kt, long kt_stride, int hd, int count,
                               float scale, float *score);
/* out[i] = sum_j a[j] * v_j[i]  for i < hd, where v_j is row (s0 + j) % slots of v (rows v_stride
 * floats apart): a ring of cached positions read in position order. */
typedef void (*attn_values_fn)(const float *a, int count, const float *v, long v_stride, int slots,
                               int s0, int hd, float *out);

/* x[j] = exp(x[j] - max) / sum over j < n of exp(x[j] - max), in place */
typedef void (*attn_softmax_fn)(float *x, int n);

typedef struct attention_kernels {
    attn_scores_fn scores;
    attn_softmax_fn softmax;
    attn_values_fn values;
} attention_kernels;

/* The kernels of a SIMD level (enum simd_level); the portable ones for levels without their own. */
attention_kernels attention_kernels_for(int simd_level);

#endif
