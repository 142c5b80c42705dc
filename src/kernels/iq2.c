/* IQ2_XXS, IQ2_XS, IQ2_S: 2-bit grid types. Each group of 8 weights is one entry of a grid of
 * magnitudes (8, 25 or 43 per weight) and 8 signs; a weight is d * (0.5 + s) / 4 * grid * sign with
 * a 4-bit s per 32 (IQ2_XXS) or 16 (IQ2_XS, IQ2_S) weights. The float operations are ggml's, in its
 * order, so dequantization is bit-exact (README-iq-grid.md); unpacking gives the integer form
 * d/8 * (2s + 1) * (grid * sign) that the dot products use. No quantizer: these files come from
 * llama-quantize with an importance matrix. */
#include "kernels/kernels_internal.h"
#include "kernels/iq_grids.h"

/* ---- IQ2_XXS ---- */

static void iq2_xxs_dequant_block(const uint8_t *p, float *y) {
    const block_iq2_xxs *b = (const block_iq2_xxs *)p;
    const float d = load_f16(b->d);
    for (int ib = 0; ib < 8; ib++, y += 32) {
        const uint8_t *idx = b->qs + 8 * ib;
        uint32_t w = load_u32(idx + 4);
        float db = (d * (0.5f + (float)(w >> 28))) * 0.25f;
        for (int l = 0; l < 4; l++) iq_dequant_group(db, iq_grid2xxs[idx[l]], iq_ksigns[(w >> 7 * l) & 127], y + 8 * l);
    }
}

void iq2_xxs_unpack(const uint8_t *p, block_unpacked *u) {
    const block_iq2_xxs *b = (const block_iq2_xxs *)p;
    u->d = load_f16(b->d) * 0.125f;
    for (int ib = 0; ib < 8; ib++) {
        const uint8_t *idx = b->qs + 8 * ib;
        uint32_t w = load_u32(idx + 4);
        u->sc[2 * ib] = u->sc[2 * ib + 1] = (int16_t)(2 * (w >> 28) + 1);
        for (int l = 0; l < 4; l++)
            iq_unpack_group(iq_grid2xxs[idx[l]], iq_ksigns_mask[(w >> 7 * l) & 127], u->q + 32 * ib + 8 * l);
    }
}

/* ---- IQ2_XS ---- */

static void iq2_xs_dequant_block(const uint8_t *p, float *y) {
    const block_iq2_xs *b = (const block_iq2_xs *)p;
    const float d = load_f16(b->d);
    for (int ib = 0; ib < 8; ib++, y += 32) {
        float db[2] = { (d * (0.5f + (float)(b->scales[ib] & 0xf))) * 0.25f, (d * (0.5f + (float)(b->scales[ib] >> 4))) * 0.25f };
        for (int l = 0; l < 4; l++) {
            uint16_t q = load_u16(b->qs + 2 * (4 * ib + l));
            iq_dequant_group(db[l / 2], iq_grid2xs[q & 511], iq_ksigns[q >> 9], y + 8 * l);
        }
    }
}

void iq2_xs_unpack(const uint8_t *p, block_unpacked *u) {
    const block_iq2_xs *b = (const block_iq2_xs *)p;
    u->d = load_f16(b->d) * 0.125f;
    for (int ib = 0; ib < 8; ib++) {
        u->sc[2 * ib] = (int16_t)(2 * (b->scales[ib] & 0xf) + 1);
        u->sc[2 * ib + 1] = (int16_t)(2 * (b->scales[ib] >> 4) + 1);
        for (int l = 0; l < 4; l++) {
            uint16_t q = load_u16(b->qs + 2 * (4 * ib + l));
            iq_unpack_group(iq_grid2xs[q & 511], iq_ksigns_mask[q >> 9], u->q + 32 * ib + 8 * l);
        }
    }
}

/* ---- IQ2_S ---- */

static inline int iq2_s_index(const block_iq2_s *b, int ib, int l) {
    return b->qs[4 * ib + l] | ((b->qh[ib] >> (2 * l)) & 3) << 8;
}

static void iq2_s_dequant_block(const uint8_t *p, float *y) {
    const block_iq2_s *b = (const block_iq2_s *)p;
    const float d = load_f16(b->d);
    for (int ib = 0; ib < 8; ib++, y += 32) {
        float db[2] = { (d * (0.5f + (float)(b->scales[ib] & 0xf))) * 0.25f, (d * (0.5f + (float)(b->scales[ib] >> 4))) * 0.25f };
        for (int l = 0; l < 4; l++) iq_dequant_group(db[l / 2], iq_grid2s[iq2_s_index(b, ib, l)], b->qs[32 + 4 * ib + l], y + 8 * l);
    }
}

void iq2_s_unpack(const uint8_t *p, block_unpacked *u) {
    const block_iq2_s *b = (const block_iq2_s *)p;
    u->d = load_f16(b->d) * 0.125f;
    for (int ib = 0; ib < 8; ib++) {
        u->sc[2 * ib] = (int16_t)(2 * (b->scales[ib] & 0xf) + 1);
        u->sc[2 * ib + 1] = (int16_t)(2 * (b->scales[ib] >> 4) + 1);
        for (int l = 0; l < 4; l++)
            iq_unpack_group(iq_grid2s[iq2_s_index(b, ib, l)], iq_sign_mask8[b->qs[32 + 4 * ib + l]], u->q + 32 * ib + 8 * l);
    }
}

BLOCK_TYPE_TRAITS(iq2_xxs, block_iq2_xxs, QK_K)
BLOCK_TYPE_TRAITS(iq2_xs, block_iq2_xs, QK_K)
BLOCK_TYPE_TRAITS(iq2_s, block_iq2_s, QK_K)
