/* Q2_0: blocks of 64 weights, one f16 d and 2 bits per weight: value = (q - 1) * d (llama-quantize
 * writes q = 0..2; q = 3 decodes to +2d). */
#include "kernels/kernels_internal.h"

static void q2_0_dequant_block(const uint8_t *p, float *y) {
    const block_q2_0 *b = (const block_q2_0 *)p;
    const float d = load_f16(b->d);
    for (int j = 0; j < 64; j++) y[j] = (float)((b->qs[j / 4] >> (2 * (j % 4)) & 3) - 1) * d;
}

BLOCK_TYPE_TRAITS(q2_0, block_q2_0, 64)
