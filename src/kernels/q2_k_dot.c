/* Q2_K weights . Q8_K activations: per super-block
 *   d_a * (d * sum_g sc[g] sum(q a) - dmin * sum_g m[g] bsum[g])
 * over the 16 groups of 16, integer inside. */
#include "kernels/kernels_internal.h"
#include "kernels/simd.h"

static ALWAYS_INLINE float dot_q2_k_q8_k(const void *w, const void *act, int64_t k) {
    const block_q2_K *x = w;
    const block_q8_K *y = act;
    float sum = 0.0f;
    for (int64_t i = 0; i < k / QK_K; i++) {
        int8_t q[QK_K];
        for (int n = 0; n < 2; n++)
            for (int j = 0; j < 4; j++)
                for (int l = 0; l < 32; l++)
                    q[128 * n + 32 * j + l] = (int8_t)((x[i].qs[32 * n + l] >> (2 * j)) & 3);
        int32_t isum = 0, msum = 0;
        for (int g = 0; g < 16; g++) {
            isum += (x[i].scales[g] & 0xf) * dot_i8(q + 16 * g, y[i].qs + 16 * g, 16);
            msum += (x[i].scales[g] >> 4) * q8k_bsum(y[i].bsums, g);
        }
        float da = f32_from_bits(load_u32(y[i].d));
        sum += da * (load_f16(x[i].d) * (float)isum - load_f16(x[i].dmin) * (float)msum);
    }
    return sum;
}

static float q2_k_dot_generic(const void *w, const void *a, int64_t k) { return dot_q2_k_q8_k(w, a, k); }

const type_kernels q2_k_kernels_generic = { .act_type = TS_Q8_K, .dot = q2_k_dot_generic };

#if defined(TS_X86)
/* The portable body compiled for AVX2 and for AVX-512: the compiler vectorizes its integer loops. */
static TARGET_AVX2 float q2_k_dot_avx2(const void *w, const void *a, int64_t k) { return dot_q2_k_q8_k(w, a, k); }
static TARGET_AVX512 float q2_k_dot_avx512(const void *w, const void *a, int64_t k) { return dot_q2_k_q8_k(w, a, k); }

const type_kernels q2_k_kernels_avx2 = { .act_type = TS_Q8_K, .dot = q2_k_dot_avx2 };
const type_kernels q2_k_kernels_avx512 = { .act_type = TS_Q8_K, .dot = q2_k_dot_avx512 };
#endif
