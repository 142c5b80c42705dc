/* TQ2_0 weights . Q8_K activations: each super-block unpacked (tq2_0.c) and multiplied in
 * integers, the same bits in every set (unpacked_dot.h). */
#include "kernels/unpacked_dot.h"

UNPACKING_KERNELS(tq2_0, block_tq2_0)
