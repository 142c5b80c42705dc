/* IQ2_XXS, IQ2_XS, IQ2_S weights . Q8_K activations: each super-block unpacked (iq2.c) and multiplied in
 * integers, the same bits in every set: UNPACKING_KERNELS (unpacked_dot.h) defines each type's
 * tables T_kernels_generic, T_kernels_avx2, T_kernels_avx512 and T_kernels_neon_dotprod. */
#include "kernels/unpacked_dot.h"

UNPACKING_KERNELS(iq2_xxs, block_iq2_xxs)
UNPACKING_KERNELS(iq2_xs, block_iq2_xs)
UNPACKING_KERNELS(iq2_s, block_iq2_s)
