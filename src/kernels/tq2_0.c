/* TQ2_0: ternary weights in 2 bits each, value = (q - 1) * d with one f16 d per 256 weights, stored
 * last (q = 3, which llama-quantize never writes, decodes to +2d). It quantizes the same weights to
 * the same values as TQ1_0; only the packing differs. Unpacking gives q - 1, sc = 1. */
#include "kernels/kernels_internal.h"

static inline void tq2_0_codes(const block_tq2_0 *b, int8_t *q) {
    for (int h = 0; h < 2; h++)
        for (int l = 0; l < 4; l++)
            for (int m = 0; m < 32; m++) q[128 * h + 32 * l + m] = (int8_t)(((b->qs[32 * h + m] >> (2 * l)) & 3) - 1);
}

static void tq2_0_dequant_block(const uint8_t *p, float *y) {
    const block_tq2_0 *b = (const block_tq2_0 *)p;
    int8_t q[QK_K];
    tq2_0_codes(b, q);
    const float d = load_f16(b->d);
    for (int j = 0; j < QK_K; j++) y[j] = (float)q[j] * d;
}

void tq2_0_unpack(const uint8_t *p, block_unpacked *u) {
    const block_tq2_0 *b = (const block_tq2_0 *)p;
    u->d = load_f16(b->d);
    for (int g = 0; g < 16; g++) u->sc[g] = 1;
    tq2_0_codes(b, u->q);
}

BLOCK_TYPE_TRAITS(tq2_0, block_tq2_0, QK_K)
