/* Q4_1 weights . Q8_0 activations: sum((d q + m) d_a a) = d d_a sum(q a) + m d_a sum(a). */
#include "kernels/kernels_internal.h"
#include <stddef.h>
#include "kernels/simd.h"
#include "kernels/pair_dot.h"

static ALWAYS_INLINE float dot_q4_1_q8_0(const void *w, const void *act, int64_t k) {
    const block_q4_1 *x = w;
    const block_q8_0 *y = act;
    float sum = 0.0f;
    for (int64_t i = 0; i < k / QK; i++) {
        int8_t q[QK];
        int32_t asum = 0;
        for (int j = 0; j < QK / 2; j++) {
            q[j] = (int8_t)(x[i].qs[j] & 0xf);
            q[j + QK / 2] = (int8_t)(x[i].qs[j] >> 4);
        }
        for (int j = 0; j < QK; j++) asum += y[i].qs[j];
        float da = load_f16(y[i].d);
        sum += load_f16(x[i].d) * da * (float)dot_i8(q, y[i].qs, QK) + load_f16(x[i].m) * da * (float)asum;
    }
    return sum;
}

static float q4_1_dot_generic(const void *w, const void *a, int64_t k) { return dot_q4_1_q8_0(w, a, k); }

const type_kernels q4_1_kernels_generic = { .act_type = TS_Q8_0, .dot = q4_1_dot_generic };

#if defined(TS_X86)
/* AVX2, and the AVX-512 set's table of the same kernels: the shared body of the unsigned blocks
 * with a min (pair_dot.h). The portable body, left to the compiler, decoded the 1B Q4_1 at 2.4
 * tok/s. */
static ALWAYS_INLINE TARGET_AVX2 __m256i q4_1_codes(const uint8_t *b) { return nibbles_256(((const block_q4_1 *)b)->qs); }
#define Q4_1_SCALE(b) f16_bits_to_f32((b) + offsetof(block_q4_1, d))
#define Q4_1_MIN(b) f16_bits_to_f32((b) + offsetof(block_q4_1, m))
static ALWAYS_INLINE TARGET_AVX2 void q4_1_avx2_body(const uint8_t *w, size_t ws, const uint8_t *a,
                                                     size_t as, int64_t k, float *y, long ys,
                                                     const int NR, const int NC) {
    MIN_TILE_AVX2_BODY(sizeof(block_q4_1), q4_1_codes, Q4_1_SCALE, Q4_1_MIN)
}
DOT_FROM_BODY(TARGET_AVX2, q4_1_dot_avx2, q4_1_avx2_body)
TILE_FROM_BODY(TARGET_AVX2, q4_1_rows4_avx2, q4_1_avx2_body, 4, 1)
TILE_FROM_BODY(TARGET_AVX2, q4_1_tile_avx2, q4_1_avx2_body, 4, 4)
const type_kernels q4_1_kernels_avx2 = {
    .act_type = TS_Q8_0, .dot = q4_1_dot_avx2, .rows4 = q4_1_rows4_avx2,
    .tile = q4_1_tile_avx2, .tile_rows = 4, .tile_cols = 4 };
const type_kernels q4_1_kernels_avx512 = {
    .act_type = TS_Q8_0, .dot = q4_1_dot_avx2, .rows4 = q4_1_rows4_avx2,
    .tile = q4_1_tile_avx2, .tile_rows = 4, .tile_cols = 4 };
#endif
