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

typedef struct type_traits {
    /* dst[0..k) = weights of one row; k is a multiple of the type's block size. */
    void (*dequant_row)(const void *row, float *dst, int64_t k);
    /* sum_i w[i]*x[i] over one row, the scalar reference (f32 activations, f32 accumulation). */
    float (*dot_f32)(const void *row, const float *x, int64_t k);
    /* Quantize k floats into one row of this type (round-to-nearest reference); NULL if unsupported. */
    void (*quantize_row)(const float *src, void *row, int64_t k);
} type_traits;

/* NULL for an unknown or unsupported type id (every id with a block size has traits). */
const type_traits *type_get(int type);

/* IEEE half and bfloat16 conversions (f16.c, bf16.c). */
float f16_to_f32(uint16_t h);
uint16_t f16_from_f32(float f);   /* round to nearest even */
float bf16_to_f32(uint16_t h);
uint16_t bf16_from_f32(float f);  /* round to nearest even */

#endif
