/* IQ3_XXS and IQ3_S: 3-bit grid types. Each grid entry gives 4 magnitudes (IQ3_XXS: 4, 12, ...,
 * 62; IQ3_S: 1, 3, ..., 15); signs come per group of 8 (a 7-bit parity index for IQ3_XXS, an
 * explicit byte for IQ3_S). A weight is d * (0.5 + s) / 2 * grid * sign (IQ3_XXS) or
 * d * (1 + 2s) * grid * sign (IQ3_S), with a 4-bit s per 32 weights. Float operations in ggml's
 * order (bit-exact dequantization); unpacking gives the integer form d/4 * (2s + 1) * q (IQ3_XXS),
 * d * (2s + 1) * q (IQ3_S). */
#include "kernels/kernels_internal.h"
#include "kernels/iq_grids.h"

/* ---- IQ3_XXS ---- */

static void iq3_xxs_dequant_block(const uint8_t *p, float *y) {
    const block_iq3_xxs *b = (const block_iq3_xxs *)p;
    const float d = load_f16(b->d);
    for (int ib = 0; ib < 8; ib++, y += 32) {
        const uint8_t *idx = b->qs + 8 * ib;
        uint32_t w = load_u32(b->qs + QK_K / 4 + 4 * ib);
        float db = (d * (0.5f + (float)(w >> 28))) * 0.5f;
        for (int l = 0; l < 4; l++) {
            uint8_t signs = iq_ksigns[(w >> 7 * l) & 127];
            iq_dequant_group(db, iq_grid3xxs[idx[2 * l]] | (uint64_t)iq_grid3xxs[idx[2 * l + 1]] << 32, signs, y + 8 * l);
        }
    }
}

void iq3_xxs_unpack(const uint8_t *p, block_unpacked *u) {
    const block_iq3_xxs *b = (const block_iq3_xxs *)p;
    u->d = load_f16(b->d) * 0.25f;
    for (int ib = 0; ib < 8; ib++) {
        const uint8_t *idx = b->qs + 8 * ib;
        uint32_t w = load_u32(b->qs + QK_K / 4 + 4 * ib);
        u->sc[2 * ib] = u->sc[2 * ib + 1] = (int16_t)(2 * (w >> 28) + 1);
        for (int l = 0; l < 4; l++)
            iq_unpack_group(iq_grid3xxs[idx[2 * l]] | (uint64_t)iq_grid3xxs[idx[2 * l + 1]] << 32,
                         iq_ksigns_mask[(w >> 7 * l) & 127], u->q + 32 * ib + 8 * l);
    }
}

/* ---- IQ3_S ---- */

static inline uint64_t iq3_s_pair(const block_iq3_s *b, int ib, int l) {
    int i0 = b->qs[8 * ib + 2 * l] | ((b->qh[ib] >> (2 * l)) & 1) << 8;
    int i1 = b->qs[8 * ib + 2 * l + 1] | ((b->qh[ib] >> (2 * l + 1)) & 1) << 8;
    return iq_grid3s[i0] | (uint64_t)iq_grid3s[i1] << 32;
}

static inline int iq3_s_scale(const block_iq3_s *b, int ib) { return (b->scales[ib / 2] >> (4 * (ib % 2))) & 15; }

static void iq3_s_dequant_block(const uint8_t *p, float *y) {
    const block_iq3_s *b = (const block_iq3_s *)p;
    const float d = load_f16(b->d);
    for (int ib = 0; ib < 8; ib++, y += 32) {
        float db = d * (float)(1 + 2 * iq3_s_scale(b, ib));
        for (int l = 0; l < 4; l++) {
            iq_dequant_group(db, iq3_s_pair(b, ib, l), b->signs[4 * ib + l], y + 8 * l);
        }
    }
}

void iq3_s_unpack(const uint8_t *p, block_unpacked *u) {
    const block_iq3_s *b = (const block_iq3_s *)p;
    u->d = load_f16(b->d);
    for (int ib = 0; ib < 8; ib++) {
        u->sc[2 * ib] = u->sc[2 * ib + 1] = (int16_t)(1 + 2 * iq3_s_scale(b, ib));
        for (int l = 0; l < 4; l++)
            iq_unpack_group(iq3_s_pair(b, ib, l), iq_sign_mask8[b->signs[4 * ib + l]], u->q + 32 * ib + 8 * l);
    }
}

BLOCK_TYPE_TRAITS(iq3_xxs, block_iq3_xxs, QK_K)
BLOCK_TYPE_TRAITS(iq3_s, block_iq3_s, QK_K)
