/* Q5_0 weights . Q8_0 activations: per block (d_w * d_a) * sum((q - 16) * a). */
#include "kernels/kernels_internal.h"
#include "kernels/simd.h"

static ALWAYS_INLINE float dot_q5_0_q8_0(const void *w, const void *act, int64_t k) {
    const block_q5_0 *x = w;
    const block_q8_0 *y = act;
    float sum = 0.0f;
    for (int64_t i = 0; i < k / QK; i++) {
        int8_t q[QK];
        uint32_t qh = load_u32(x[i].qh);
        for (int j = 0; j < QK / 2; j++) {
            q[j] = (int8_t)(((x[i].qs[j] & 0xf) | ((qh >> j) & 1) << 4) - 16);
            q[j + QK / 2] = (int8_t)(((x[i].qs[j] >> 4) | ((qh >> (j + QK / 2)) & 1) << 4) - 16);
        }
        sum += load_f16(x[i].d) * load_f16(y[i].d) * (float)dot_i8(q, y[i].qs, QK);
    }
    return sum;
}

TS_PORTABLE_DOTS(q5_0, dot_q5_0_q8_0)
