/* TQ1_0 weights . Q8_K activations: each super-block unpacked (tq1_0.c) and multiplied in
 * integers, the same bits in every set: UNPACKING_KERNELS (unpacked_dot.h) defines each type's
 * tables T_kernels_generic, T_kernels_avx2, T_kernels_avx512 and T_kernels_neon_dotprod. */
#include "kernels/unpacked_dot.h"
#include "kernels/ternary_lanes.h"

#if defined(TS_X86)
/* Rows in lanes of their own (ternary_lanes.h): the base-3 bytes divided once, at load */
static void tq1_0_lanes_pack(const uint8_t *w, size_t ws, int64_t k, uint8_t *out) {
    ternary_lanes_pack(tq1_0_unpack, sizeof(block_tq1_0), TQ1_0_GROUPS, false, w, ws, k, out);
}
#define TQ1_0_PACKED_BODY(u, a, as, k, y, ys, NC) ternary_packed_body(u, a, as, k, y, ys, NC, TQ1_0_GROUPS, false)
#define TQ1_0_PACKED_BODY_VBMI(u, a, as, k, y, ys, NC) ternary_packed_body_vbmi(u, a, as, k, y, ys, NC, TQ1_0_GROUPS, false)
LANES_FROM_BODY(tq1_0_packed_avx512, TQ1_0_PACKED_BODY, 8)
LANES_FROM_BODY_TARGET(TARGET_AVX512_VBMI, tq1_0_packed_avx512_vbmi, TQ1_0_PACKED_BODY_VBMI, 8)
#endif

UNPACKING_KERNELS_LANES(tq1_0, block_tq1_0, (TERNARY_LANES_FIELDS(tq1_0, tq1_0_packed_avx512, TQ1_0_GROUPS)))
#if defined(TS_X86)
const type_kernels tq1_0_kernels_avx512_vbmi = { .act_type = TS_Q8_K, .dot = tq1_0_dot_avx2, .unpack = tq1_0_unpack,
                                                 TERNARY_LANES_FIELDS(tq1_0, tq1_0_packed_avx512_vbmi, TQ1_0_GROUPS) };
#endif
