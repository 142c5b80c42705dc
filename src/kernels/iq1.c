/* IQ1_S and IQ1_M: 1.5-bit grid types. Each group of 8 weights is one entry of iq_grid1s (values
 * -1, 0, +1) plus a delta of +-1/8 (per 32 weights in IQ1_S, per 8 in IQ1_M): a weight is
 * d * (2s + 1) * (grid + delta) with a 3-bit s per 32 (IQ1_S) or 16 (IQ1_M) weights. Float
 * operations in ggml's order (bit-exact dequantization); unpacking gives the integer form
 * d/8 * (2s + 1) * (8 grid +- 1). */
#include "kernels/kernels_internal.h"
#include "kernels/iq_grids.h"

#define IQ1_DELTA 0.125f

static inline void dequant_group(float dl, uint64_t entry, float delta, float *y) {
    for (int j = 0; j < 8; j++) y[j] = dl * ((float)(int8_t)grid_byte(entry, j) + delta);
}

/* 8 grid + delta_sign per byte: the grid's -1 / 0 / +1 times 8 plus +-1 (-9 .. 9, no carries
 * between bytes when done per byte). */
static inline void unpack_group(uint64_t entry, int delta_sign, int8_t *q) {
    for (int j = 0; j < 8; j++) q[j] = (int8_t)(8 * (int8_t)grid_byte(entry, j) + delta_sign);
}

/* ---- IQ1_S ---- */

static void iq1_s_dequant_block(const uint8_t *p, float *y) {
    const block_iq1_s *b = (const block_iq1_s *)p;
    const float d = load_f16(b->d);
    for (int ib = 0; ib < 8; ib++, y += 32) {
        uint16_t qh = load_u16(b->qh + 2 * ib);
        float dl = d * (float)(2 * ((qh >> 12) & 7) + 1), delta = qh & 0x8000 ? -IQ1_DELTA : IQ1_DELTA;
        for (int l = 0; l < 4; l++) dequant_group(dl, iq_grid1s[b->qs[4 * ib + l] | ((qh >> (3 * l)) & 7) << 8], delta, y + 8 * l);
    }
}

void iq1_s_unpack(const uint8_t *p, block_unpacked *u) {
    const block_iq1_s *b = (const block_iq1_s *)p;
    u->d = load_f16(b->d) * 0.125f;
    for (int ib = 0; ib < 8; ib++) {
        uint16_t qh = load_u16(b->qh + 2 * ib);
        u->sc[2 * ib] = u->sc[2 * ib + 1] = (int16_t)(2 * ((qh >> 12) & 7) + 1);
        for (int l = 0; l < 4; l++)
            unpack_group(iq_grid1s[b->qs[4 * ib + l] | ((qh >> (3 * l)) & 7) << 8], qh & 0x8000 ? -1 : 1, u->q + 32 * ib + 8 * l);
    }
}

/* ---- IQ1_M: no d field, its f16 bits are the top nibbles of the four scale words ---- */

static inline float iq1_m_d(const block_iq1_m *b) {
    uint16_t sc[4];
    for (int i = 0; i < 4; i++) sc[i] = load_u16(b->sc + 2 * i);
    return half_to_f32((uint16_t)((sc[0] >> 12) | ((sc[1] >> 8) & 0x00f0) | ((sc[2] >> 4) & 0x0f00) | (sc[3] & 0xf000)));
}

/* The 3-bit scale of groups 0, 1 (half 0) or 2, 3 (half 1) of sub-block ib */
static inline int iq1_m_scale(const block_iq1_m *b, int ib, int half) {
    return (load_u16(b->sc + 2 * (ib / 2)) >> (6 * (ib % 2) + 3 * half)) & 7;
}

/* Group l of sub-block ib: its qh nibble (index bits 8..10, delta sign in bit 3) */
static inline int iq1_m_nibble(const block_iq1_m *b, int ib, int l) { return (b->qh[2 * ib + l / 2] >> (4 * (l % 2))) & 15; }

static void iq1_m_dequant_block(const uint8_t *p, float *y) {
    const block_iq1_m *b = (const block_iq1_m *)p;
    const float d = iq1_m_d(b);
    for (int ib = 0; ib < 8; ib++, y += 32)
        for (int l = 0; l < 4; l++) {
            int nib = iq1_m_nibble(b, ib, l);
            float dl = d * (float)(2 * iq1_m_scale(b, ib, l / 2) + 1);
            dequant_group(dl, iq_grid1s[b->qs[4 * ib + l] | (nib & 7) << 8], nib & 8 ? -IQ1_DELTA : IQ1_DELTA, y + 8 * l);
        }
}

void iq1_m_unpack(const uint8_t *p, block_unpacked *u) {
    const block_iq1_m *b = (const block_iq1_m *)p;
    u->d = iq1_m_d(b) * 0.125f;
    for (int ib = 0; ib < 8; ib++) {
        u->sc[2 * ib] = (int16_t)(2 * iq1_m_scale(b, ib, 0) + 1);
        u->sc[2 * ib + 1] = (int16_t)(2 * iq1_m_scale(b, ib, 1) + 1);
        for (int l = 0; l < 4; l++) {
            int nib = iq1_m_nibble(b, ib, l);
            unpack_group(iq_grid1s[b->qs[4 * ib + l] | (nib & 7) << 8], nib & 8 ? -1 : 1, u->q + 32 * ib + 8 * l);
        }
    }
}

BLOCK_TYPE_TRAITS(iq1_s, block_iq1_s, QK_K)
BLOCK_TYPE_TRAITS(iq1_m, block_iq1_m, QK_K)
