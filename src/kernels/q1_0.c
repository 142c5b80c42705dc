/* Q1_0: blocks of 128 weights, one f16 d and one bit per weight: value = bit ? d : -d. */
#include "kernels/kernels_internal.h"

static void q1_0_dequant_block(const uint8_t *p, float *y) {
    const block_q1_0 *b = (const block_q1_0 *)p;
    const float d = load_f16(b->d);
    for (int j = 0; j < 128; j++) y[j] = b->qs[j / 8] >> (j % 8) & 1 ? d : -d;
}

BLOCK_TYPE_TRAITS(q1_0, block_q1_0, 128)
