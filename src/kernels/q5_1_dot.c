/* Q5_1 weights . Q8_0 activations: d d_a sum(q a) + m d_a sum(a), q the 5-bit codes. */
#include "kernels/kernels_internal.h"
#include "kernels/simd.h"

static ALWAYS_INLINE float dot_q5_1_q8_0(const void *w, const void *act, int64_t k) {
    const block_q5_1 *x = w;
    const block_q8_0 *y = act;
    float sum = 0.0f;
    for (int64_t i = 0; i < k / QK; i++) {
        int8_t q[QK];
        int32_t asum = 0;
        uint32_t qh = load_u32(x[i].qh);
        for (int j = 0; j < QK / 2; j++) {
            q[j] = (int8_t)((x[i].qs[j] & 0xf) | ((qh >> j) & 1) << 4);
            q[j + QK / 2] = (int8_t)((x[i].qs[j] >> 4) | ((qh >> (j + QK / 2)) & 1) << 4);
        }
        for (int j = 0; j < QK; j++) asum += y[i].qs[j];
        float da = load_f16(y[i].d);
        sum += load_f16(x[i].d) * da * (float)dot_i8(q, y[i].qs, QK) + load_f16(x[i].m) * da * (float)asum;
    }
    return sum;
}

static float q5_1_dot_generic(const void *w, const void *a, int64_t k) { return dot_q5_1_q8_0(w, a, k); }

const type_kernels q5_1_kernels_generic = { .act_type = TS_Q8_0, .dot = q5_1_dot_generic };

#if defined(TS_X86)
/* The portable body compiled for AVX2 and for AVX-512: the compiler vectorizes its integer loops. */
static TARGET_AVX2 float q5_1_dot_avx2(const void *w, const void *a, int64_t k) { return dot_q5_1_q8_0(w, a, k); }
static TARGET_AVX512 float q5_1_dot_avx512(const void *w, const void *a, int64_t k) { return dot_q5_1_q8_0(w, a, k); }

const type_kernels q5_1_kernels_avx2 = { .act_type = TS_Q8_0, .dot = q5_1_dot_avx2 };
const type_kernels q5_1_kernels_avx512 = { .act_type = TS_Q8_0, .dot = q5_1_dot_avx512 };
#endif
