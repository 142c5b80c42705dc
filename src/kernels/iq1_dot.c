/* IQ1_S, IQ1_M weights . Q8_K activations: each super-block unpacked (iq1.c) and multiplied in
 * integers, the same bits in every set (unpacked_dot.h). */
#include "kernels/unpacked_dot.h"

UNPACKING_KERNELS(iq1_s, block_iq1_s)
UNPACKING_KERNELS(iq1_m, block_iq1_m)
