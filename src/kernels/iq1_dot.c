/* IQ1_S, IQ1_M weights . Q8_K activations: each super-block unpacked (iq1.c) and multiplied in
 * integers, the same bits in every set: UNPACKING_KERNELS (unpacked_dot.h) defines each type's
 * tables T_kernels_generic, T_kernels_avx2, T_kernels_avx512 and T_kernels_neon_dotprod. */
#include "kernels/unpacked_dot.h"

UNPACKING_KERNELS(iq1_s, block_iq1_s)
UNPACKING_KERNELS(iq1_m, block_iq1_m)
