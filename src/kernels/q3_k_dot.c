/* Q3_K weights . Q8_K activations: per super-block d * d_a * sum_g (s[g] - 32) sum(q a) with the
 * signed 3-bit q, integer inside. */
#include "kernels/kernels_internal.h"
#include "kernels/simd.h"

static ALWAYS_INLINE float dot_q3_k_q8_k(const void *w, const void *act, int64_t k) {
    const block_q3_K *x = w;
    const block_q8_K *y = act;
    float sum = 0.0f;
    for (int64_t i = 0; i < k / QK_K; i++) {
        const uint8_t *s = x[i].scales;
        int8_t q[QK_K];
        for (int n = 0; n < 2; n++)
            for (int j = 0; j < 4; j++)
                for (int l = 0; l < 32; l++) {
                    int low = (x[i].qs[32 * n + l] >> (2 * j)) & 3;
                    int high = (x[i].hmask[l] >> (4 * n + j)) & 1;
                    q[128 * n + 32 * j + l] = (int8_t)(low - (high ? 0 : 4));
                }
        int32_t isum = 0;
        for (int g = 0; g < 16; g++) {
            int sc = ((g < 8 ? s[g] & 0xf : s[g - 8] >> 4) | ((s[8 + g % 4] >> (2 * (g / 4))) & 3) << 4) - 32;
            isum += sc * dot_i8(q + 16 * g, y[i].qs + 16 * g, 16);
        }
        sum += f32_from_bits(load_u32(y[i].d)) * load_f16(x[i].d) * (float)isum;
    }
    return sum;
}

static float q3_k_dot_generic(const void *w, const void *a, int64_t k) { return dot_q3_k_q8_k(w, a, k); }

const type_kernels q3_k_kernels_generic = { .act_type = TS_Q8_K, .dot = q3_k_dot_generic };

#if defined(TS_X86)
/* The portable body compiled for AVX2 and for AVX-512: the compiler vectorizes its integer loops. */
static TARGET_AVX2 float q3_k_dot_avx2(const void *w, const void *a, int64_t k) { return dot_q3_k_q8_k(w, a, k); }
static TARGET_AVX512 float q3_k_dot_avx512(const void *w, const void *a, int64_t k) { return dot_q3_k_q8_k(w, a, k); }

const type_kernels q3_k_kernels_avx2 = { .act_type = TS_Q8_K, .dot = q3_k_dot_avx2 };
const type_kernels q3_k_kernels_avx512 = { .act_type = TS_Q8_K, .dot = q3_k_dot_avx512 };
#endif
