/* The lookup tables of the IQ1 / IQ2 / IQ3 grid types (ggml's, generated into iq_grids.c by
 * tools/gen_iq_grids.py from the fixture's grids.json). Entry i of a grid holds 8 (uint64) or 4
 * (uint32) values, value j in byte j, little-endian: magnitudes for the IQ2 / IQ3 grids, int8
 * -1 / 0 / +1 for iq1s_grid. */
#ifndef TS_KERNELS_IQ_GRIDS_H
#define TS_KERNELS_IQ_GRIDS_H
#include <stdint.h>

/* 7 stored sign bits -> 8 signs with an even number of minus signs (bit 7 = parity) */
extern const uint8_t ksigns_iq2xs[128];
extern const uint64_t iq2xxs_grid[256], iq2xs_grid[512], iq2s_grid[1024], iq1s_grid[2048];
extern const uint32_t iq3xxs_grid[256], iq3s_grid[512];
/* The signs of a sign byte b as 8 bytes, 0xff (-1) where bit j is set, else 0x01 (+1) */
extern const uint64_t iq_sign_mask8[256];
/* iq_sign_mask8[ksigns_iq2xs[i]] */
extern const uint64_t iq_ksigns_mask[128];

/* Value j of a grid entry. */
static inline uint8_t grid_byte(uint64_t entry, int j) { return (uint8_t)(entry >> (8 * j)); }

#endif
