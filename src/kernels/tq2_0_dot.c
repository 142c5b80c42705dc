/* TQ2_0 weights . Q8_K activations: each super-block unpacked (tq2_0.c) and multiplied in
 * integers, the same bits in every set: UNPACKING_KERNELS (unpacked_dot.h) defines each type's
 * tables T_kernels_generic, T_kernels_avx2, T_kernels_avx512 and T_kernels_neon_dotprod. */
#include "kernels/unpacked_dot.h"

UNPACKING_KERNELS(tq2_0, block_tq2_0)
