/* IQ4_NL: blocks of 32 weights, value = d * kvalues_iq4nl[q] with an f16 d and a 4-bit index q
 * into the non-linear table; byte j holds index j in its low nibble and index j + 16 in its high
 * nibble. */
#include "kernels/kernels_internal.h"
#include "kernels/f16.h"

static void dequant_block(const uint8_t *p, float *y) {
    const block_iq4_nl *b = (const block_iq4_nl *)p;
    float d = load_f16(b->d);
    for (int j = 0; j < QK / 2; j++) {
        y[j] = d * kvalues_iq4nl[b->qs[j] & 0xf];
        y[j + QK / 2] = d * kvalues_iq4nl[b->qs[j] >> 4];
    }
}

static void iq4_nl_dequant_row(const void *row, float *dst, int64_t k) {
    dequant_blocks(row, dst, k, QK, sizeof(block_iq4_nl), dequant_block);
}

static float iq4_nl_dot_f32(const void *row, const float *x, int64_t k) {
    return dot_blocks(row, x, k, QK, sizeof(block_iq4_nl), dequant_block);
}

/* Fits one group of 32 to d * kvalues_iq4nl[q]: the value of largest magnitude maps to the table's
 * end (-127), the indices are the nearest for that scale, then d is refitted by least squares
 * over those indices. Returns d; idx gets the indices. Shared with IQ4_XS's sub-blocks. */
float iq4_nl_fit_group(const float *x, uint8_t *idx) {
    float amax = 0.0f, max = 0.0f;
    for (int j = 0; j < QK; j++)
        if (fabsf(x[j]) > amax) { amax = fabsf(x[j]); max = x[j]; }
    if (amax == 0.0f) {
        for (int j = 0; j < QK; j++) idx[j] = 8;   /* the value nearest zero */
        return 0.0f;
    }
    float d = max / kvalues_iq4nl[0], id = 1.0f / d;
    double sxq = 0.0, sqq = 0.0;
    for (int j = 0; j < QK; j++) {
        idx[j] = (uint8_t)nearest_index16(kvalues_iq4nl, x[j] * id);
        double q = kvalues_iq4nl[idx[j]];
        sxq += x[j] * q;
        sqq += q * q;
    }
    return sqq > 0.0 ? (float)(sxq / sqq) : d;
}

/* d from the fit, rounded to f16; the indices chosen again against the stored d. */
static void iq4_nl_quantize_row(const float *src, void *row, int64_t k) {
    block_iq4_nl *b = row;
    for (int64_t i = 0; i < k / QK; i++, b++) {
        const float *x = src + i * QK;
        uint8_t idx[QK];
        store_f16(b->d, f16_from_f32(iq4_nl_fit_group(x, idx)));
        float d = load_f16(b->d), id = d != 0.0f ? 1.0f / d : 0.0f;
        for (int j = 0; j < QK; j++) idx[j] = (uint8_t)nearest_index16(kvalues_iq4nl, x[j] * id);
        for (int j = 0; j < QK / 2; j++) b->qs[j] = (uint8_t)(idx[j] | idx[j + QK / 2] << 4);
    }
}

const type_traits iq4_nl_traits = { iq4_nl_dequant_row, iq4_nl_dot_f32, iq4_nl_quantize_row };
