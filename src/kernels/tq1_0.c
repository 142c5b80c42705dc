/* TQ1_0: ternary weights (BitNet b1.58, TriLM), value = (t - 1) * d with t = 0, 1, 2 and one f16 d
 * per 256 weights, stored last; 5 trits per byte as a base-3 fraction (trit n of byte q is the top
 * of (q * 3^n mod 256) * 3), 4 in each qh byte. Unpacking gives q = t - 1, sc = 1. */
#include "kernels/kernels_internal.h"

static inline int trit(uint8_t q, int n) {
    static const uint8_t pow3[5] = { 1, 3, 9, 27, 81 };
    return ((uint8_t)(q * pow3[n]) * 3) >> 8;
}

/* The 256 codes t - 1 of a TQ1_0 block in element order. */
static inline void tq1_0_codes(const block_tq1_0 *b, int8_t *q) {
    for (int n = 0; n < 5; n++)
        for (int m = 0; m < 32; m++) q[32 * n + m] = (int8_t)(trit(b->qs[m], n) - 1);
    for (int n = 0; n < 5; n++)
        for (int m = 0; m < 16; m++) q[160 + 16 * n + m] = (int8_t)(trit(b->qs[32 + m], n) - 1);
    for (int n = 0; n < 4; n++)
        for (int m = 0; m < 4; m++) q[240 + 4 * n + m] = (int8_t)(trit(b->qh[m], n) - 1);
}

static void tq1_0_dequant_block(const uint8_t *p, float *y) {
    const block_tq1_0 *b = (const block_tq1_0 *)p;
    int8_t q[QK_K];
    tq1_0_codes(b, q);
    const float d = load_f16(b->d);
    for (int j = 0; j < QK_K; j++) y[j] = (float)q[j] * d;
}

void tq1_0_unpack(const uint8_t *p, block_unpacked *u) {
    const block_tq1_0 *b = (const block_tq1_0 *)p;
    u->d = load_f16(b->d);
    for (int g = 0; g < 16; g++) u->sc[g] = 1;
    tq1_0_codes(b, u->q);
}

BLOCK_TYPE_TRAITS(tq1_0, block_tq1_0, QK_K)
