/* TQ1_0 weights . Q8_K activations: each super-block unpacked (tq1_0.c) and multiplied in
 * integers, the same bits in every set (unpacked_dot.h). */
#include "kernels/unpacked_dot.h"

UNPACKING_KERNELS(tq1_0, block_tq1_0)
