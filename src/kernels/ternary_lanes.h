/* Ternary rows in lanes kept in a form of their own (type_kernels.lanes_packed_sb_bytes): IQ1_S and
 * IQ1_M (iq1_dot.c), TQ1_0 (tq1_0_dot.c). Private to src/kernels/.
 * An IQ1 grid entry costs a load and an index put together from two fields (most of the row kernel's
 * time), a TQ1_0 weight a division of its base-3 byte; at load, the copy writes each weight's value
 * instead, as t + 1 in 2 bits (t = -1, 0, +1), with its group's scale and delta sign as a 4-bit tag,
 * 16 rows in lanes as the Q4_K rows are. The integer sums stay the row kernels': with u = t + 1, a
 * group h of weights (32 in IQ1_S and TQ1_0, 8 in IQ1_M) with scale sc and delta sign s gives
 *   IQ1:   sc sum_h (8 t + s) a = 8 sc . sum_h u a  +  sc (s - 8) . sum_h a
 *   TQ1_0:    sum_h t a         =      sum_h u a  -              sum_h a,
 * one dpwssd of the int16 pair (sum u a, sum a) with the tag's pair (8 sc, sc (s - 8)), or (1, -1).
 * The rows take 70 (IQ1_S), 82 (IQ1_M) and 98 (TQ1_0) bytes a super-block instead of 50, 56 and 54:
 * the kernel is then bound by memory, not by the unpacking. */
#ifndef TS_KERNELS_TERNARY_LANES_H
#define TS_KERNELS_TERNARY_LANES_H
#include "kernels/kernels_internal.h"
#include "kernels/lanes_simd.h"
#include "kernels/lanes_pack.h"
#include "kernels/f16.h"
#include <string.h>

#if defined(TS_X86)
#define TERNARY_LANES_BYTES(groups) (16 * 64 + 64 * ((groups) / 8 > 0 ? (groups) / 8 : 1) + 32)
/* groups of a super-block, and whether its weights are 8 t + s (IQ1) or t (TQ1_0) */
enum { IQ1_S_GROUPS = 8, IQ1_M_GROUPS = 32, TQ1_0_GROUPS = 8 };

/* 16 rows (ws bytes apart) from their portable unpacking (block_unpacked: IQ1, q = 8 t + s with t the
 * grid's -1 / 0 / +1 and s the delta's sign, sc = 2 field + 1 per 16, d = the f16 d / 8; TQ1_0, q = t,
 * sc = 1, d = the f16 d), as: the 2-bit
 * values at byte 64 c + 4 p + j bits 2 m (weight 16 c + 4 m + j of row p), the tags at byte
 * 1024 + 64 (h / 8) + 4 p bits 4 (h % 8) (the scale field in bits 0..2, the minus sign in bit 3),
 * the rows' f16 d at the end. */
static inline void ternary_lanes_pack(unpack_block_fn unpack, size_t block_bytes, int groups, bool iq1, const uint8_t *w,
                                      size_t ws, int64_t k, uint8_t *out) {
    const size_t sb = TERNARY_LANES_BYTES(groups);
    uint8_t t_of[256];   /* t by q's byte: a table, not a division and branches per weight */
    for (int b = 0; b < 256; b++) {
        const int q = (int8_t)b;
        t_of[b] = (uint8_t)(iq1 ? (q + (q > 0 ? 4 : -4)) / 8 : q);   /* IQ1: -9, -7 -> -1; -1, 1 -> 0; 7, 9 -> 1 */
    }
    memset(out, 0, (size_t)(k / QK_K) * sb);
    for (int64_t i = 0; i < k / QK_K; i++)
        for (int p = 0; p < 16; p++) {
            uint8_t *o = out + (size_t)i * sb;
            block_unpacked u;
            unpack(w + p * ws + (size_t)i * block_bytes, &u);
            uint8_t field[QK_K];   /* t + 1 */
            for (int e = 0; e < QK_K; e++) field[e] = (uint8_t)((int8_t)t_of[(uint8_t)u.q[e]] + 1);
            lanes_pack_fields2(field, p, (uint8_t (*)[64])o);
            for (int h = 0; iq1 && h < groups; h++) {   /* the tags: a group's scale and the sign of its offset */
                const int e = h * (QK_K / groups), q = u.q[e], neg = q - 8 * (int8_t)t_of[(uint8_t)q] < 0;
                uint32_t *tag = (uint32_t *)(o + 1024 + 64 * (h / 8)) + p;
                *tag |= (uint32_t)((u.sc[e / 16] - 1) / 2 | neg << 3) << (4 * (h % 8));
            }
            const uint16_t d16 = f16_from_f32(iq1 ? u.d * 8.0f : u.d);   /* exact: u.d is an f16 (/ 8) */
            memcpy(o + sb - 32 + 2 * p, &d16, 2);
        }
}
/* 16 packed rows x NC positions (ternary_lanes_body.h), once per kernel set: ternary_packed_body
 * takes each 2-bit field by a shift and a mask, ternary_packed_body_vbmi by one vpermb whose table
 * reads the field where it lies in the byte (IQ1_S 40 -> 45, TQ1_0 41 -> 52 GB/s of file bytes in
 * cache, 2 threads). */
#define TERNARY_BODY ternary_packed_body
#define TERNARY_TARGET TARGET_AVX512
#define TERNARY_VBMI 0
#include "kernels/ternary_lanes_body.h"
#define TERNARY_BODY ternary_packed_body_vbmi
#define TERNARY_TARGET TARGET_AVX512_VBMI
#define TERNARY_VBMI 1
#include "kernels/ternary_lanes_body.h"
/* a table's fields for these rows: packed, the body's function (LANES_FROM_BODY_TARGET) */
#define TERNARY_LANES_FIELDS(T, packed, groups) \
    .lanes_pack = T##_lanes_pack, .lanes_packed = packed, .lanes_packed_sb_bytes = TERNARY_LANES_BYTES(groups) / 16
#endif
#endif
