/* The kernel traits of every tensor type: each type's file exports its own entries. */
#include "kernels/types.h"
#include "kernels/kernels_internal.h"

static const type_traits *const type_table[TS_TYPE_COUNT] = {
    [TS_F32]  = &f32_traits,
    [TS_F16]  = &f16_traits,
    [TS_BF16] = &bf16_traits,
    [TS_Q4_0] = &q4_0_traits,
    [TS_Q4_1] = &q4_1_traits,
    [TS_Q5_0] = &q5_0_traits,
    [TS_Q5_1] = &q5_1_traits,
    [TS_Q8_0] = &q8_0_traits,
    [TS_Q2_K] = &q2_k_traits,
    [TS_Q3_K] = &q3_k_traits,
    [TS_Q4_K] = &q4_k_traits,
    [TS_Q5_K] = &q5_k_traits,
    [TS_Q6_K] = &q6_k_traits,
    [TS_Q8_K] = &q8_k_traits,
    [TS_IQ4_NL] = &iq4_nl_traits,
    [TS_IQ4_XS] = &iq4_xs_traits,
    [TS_MXFP4] = &mxfp4_traits,
    [TS_Q4NX] = &q4nx_traits,
    [TS_IQ2_XXS] = &iq2_xxs_traits,
    [TS_IQ2_XS] = &iq2_xs_traits,
    [TS_IQ2_S] = &iq2_s_traits,
    [TS_IQ3_XXS] = &iq3_xxs_traits,
    [TS_IQ3_S] = &iq3_s_traits,
    [TS_IQ1_S] = &iq1_s_traits,
    [TS_IQ1_M] = &iq1_m_traits,
    [TS_TQ1_0] = &tq1_0_traits,
    [TS_TQ2_0] = &tq2_0_traits,
    [TS_NVFP4] = &nvfp4_traits,
    [TS_Q1_0] = &q1_0_traits,
    [TS_Q2_0] = &q2_0_traits,
};

const type_traits *type_get(int type) {
    if (type < 0 || type >= TS_TYPE_COUNT) return NULL;
    return type_table[type];
}
