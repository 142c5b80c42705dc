/* Rows in lanes at load (type_kernels.lanes_pack): one row's 256 codes of a super-block, one byte
 * each, laid into lane p of the layouts the packed bodies read, four codes at a time as the bytes
 * of a 32-bit word (the codes' bit fields never cross a byte, so no carries). Per code and row, a
 * shift, a mask and a read-modify-write of the output took 300-490 ns a row and super-block
 * (Q2_K, Q3_K, the grid and ternary types: a 1B Q2_K loaded in 1.8 s, a third of it here). Private
 * to src/kernels/. */
#ifndef TS_KERNELS_LANES_PACK_H
#define TS_KERNELS_LANES_PACK_H
#include <stdint.h>
#include "kernels/kernels_internal.h"

/* The 2-bit codes of a Q2_K or Q3_K block's 64 qs bytes, one a byte: weight 128 n + 32 j + x is
 * bits 2 j of qs[32 n + x]. */
static inline void k_qs_codes2(const uint8_t qs[64], uint8_t code[256]) {
    for (int n = 0; n < 2; n++)
        for (int j = 0; j < 4; j++)
            for (int x = 0; x < 32; x += 4) store_u32(code + 128 * n + 32 * j + x, (load_u32(qs + 32 * n + x) >> (2 * j)) & 0x03030303u);
}

/* field[e] (0..3) of weight e at chunk e / 16, lane p byte e % 4, bits 2 (e % 16 / 4): the 2-bit
 * layout of Q2_K's codes, Q3_K's low bits, IQ2's ranks and the ternary types' values. Writes the
 * lane's bytes whole. */
static inline void lanes_pack_fields2(const uint8_t field[256], int p, uint8_t (*chunks)[64]) {
    for (int c = 0; c < 16; c++) {
        uint32_t word = 0;
        for (int m = 0; m < 4; m++) word |= (load_u32(field + 16 * c + 4 * m) & 0x03030303u) << (2 * m);
        store_u32(chunks[c] + 4 * p, word);
    }
}

/* Bit 0 of each byte j of x as bit j of a nibble */
static inline uint64_t byte_bits4(uint32_t x) {
    x &= 0x01010101u;
    return (x | x >> 7 | x >> 14 | x >> 21) & 0xfu;
}

/* bit[e] (0 or 1) of weight e at bit 4 p + e % 4 of mask e / 4: Q3_K's high bits, IQ2's signs.
 * Ors into the masks (zeroed before the first row). */
static inline void lanes_pack_bits(const uint8_t bit[256], int p, uint64_t mask[64]) {
    for (int t = 0; t < 64; t++) mask[t] |= byte_bits4(load_u32(bit + 4 * t)) << (4 * p);
}

/* nibble[e] (0..15) of weight e at chunk e / 8, lane p byte e % 4, the low nibble for e % 8 < 4, the
 * high one above: IQ3's ranks. Writes the lane's bytes whole. */
static inline void lanes_pack_nibbles(const uint8_t nibble[256], int p, uint8_t (*chunks)[64]) {
    for (int c = 0; c < 32; c++)
        store_u32(chunks[c] + 4 * p, (load_u32(nibble + 8 * c) & 0x0f0f0f0fu) | (load_u32(nibble + 8 * c + 4) & 0x0f0f0f0fu) << 4);
}

#endif
