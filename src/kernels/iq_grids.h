/* The lookup tables of the IQ1 / IQ2 / IQ3 grid types (ggml's, generated into iq_grids.c by
 * tools/gen_iq_grids.py from the fixture's grids.json). Entry i of a grid holds 8 (uint64) or 4
 * (uint32) values, value j in byte j, little-endian: magnitudes for the IQ2 / IQ3 grids, int8
 * -1 / 0 / +1 for iq_grid1s. */
#ifndef TS_KERNELS_IQ_GRIDS_H
#define TS_KERNELS_IQ_GRIDS_H
#include <stdint.h>
#include <string.h>

/* 7 stored sign bits -> 8 signs with an even number of minus signs (bit 7 = parity) */
extern const uint8_t iq_ksigns[128];
extern const uint64_t iq_grid2xxs[256], iq_grid2xs[512], iq_grid2s[1024], iq_grid1s[2048];
extern const uint32_t iq_grid3xxs[256], iq_grid3s[512];
/* The same as byte planes, for lookups in vectors: _planes[j][i] = value j of entry i */
extern const uint8_t iq_grid3xxs_planes[4][256], iq_grid3s_planes[4][512];
/* The 8-byte IQ2 grids as 16-bit codes of 2-bit fields (value j: 8, 25, 43 -> 0, 1, 2 at bits
 * 2j..2j+1), in a low and a high byte plane: _codes[h][i] = byte h of entry i's code */
extern const uint8_t iq_grid2xxs_codes[2][256], iq_grid2xs_codes[2][512], iq_grid2s_codes[2][1024];
/* The signs of a sign byte b as 8 bytes, 0xff (-1) where bit j is set, else 0x01 (+1) */
extern const uint64_t iq_sign_mask8[256];
/* iq_sign_mask8[iq_ksigns[i]] */
extern const uint64_t iq_ksigns_mask[128];

/* Value j of a grid entry. */
static inline uint8_t grid_byte(uint64_t entry, int j) { return (uint8_t)(entry >> (8 * j)); }

/* A group of 8 magnitudes (bytes 1..127) with its signs (a mask of the tables above) into 8 signed
 * bytes q, SWAR: where the mask byte is -1, ~g + 1 = -g, and no byte carries into the next. */
static inline void iq_unpack_group(uint64_t entry, uint64_t sign_mask, int8_t *q) {
    const uint64_t neg = (sign_mask >> 7 & 0x0101010101010101ull) * 0xff;
    const uint64_t v = (entry ^ neg) + (neg & 0x0101010101010101ull);
    memcpy(q, &v, 8);
}

/* A group of 8 weights as ggml dequantizes it: (db * magnitude) * sign, sign -1 where bit j of the
 * sign byte is set. */
static inline void iq_dequant_group(float db, uint64_t entry, uint8_t signs, float *y) {
    for (int j = 0; j < 8; j++) y[j] = db * (float)grid_byte(entry, j) * (signs >> j & 1 ? -1.0f : 1.0f);
}

#endif
