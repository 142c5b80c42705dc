/* IQ3_XXS, IQ3_S weights . Q8_K activations: each super-block unpacked (iq3.c) and multiplied in
 * integers, the same bits in every set (unpacked_dot.h). */
#include "kernels/unpacked_dot.h"

UNPACKING_KERNELS(iq3_xxs, block_iq3_xxs)
UNPACKING_KERNELS(iq3_s, block_iq3_s)
