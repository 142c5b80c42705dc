/* What the kernels can compute on each tensor type (core/tensor_type.h has the type ids and their
 * block sizes): dequantize a row, the scalar reference dot, and the reference quantizer.
 *
 * Kernels work a row at a time so the weights are never dequantized whole. */
#ifndef TS_KERNELS_TYPES_H
#define TS_KERNELS_TYPES_H
#include <stddef.h>
#include <stdint.h>
#include <stdbool.h>
#include "core/tensor_type.h"
#include "kernels/type_traits.h"

/* NULL for an unknown or unsupported type id (every id with a block size has traits). */
const type_traits *type_get(int type);

#endif
