/* What the kernels can compute on one tensor type: a leaf of types, with no functions, so that
 * each type's file (f32.c, q4_k.c, ...) defines its T_traits without depending on the table of all
 * of them in types.c. */
#ifndef TS_KERNELS_TYPE_TRAITS_H
#define TS_KERNELS_TYPE_TRAITS_H
#include <stdint.h>

typedef struct type_traits {
    /* dst[0..k) = weights of one row; k is a multiple of the type's block size. */
    void (*dequant_row)(const void *row, float *dst, int64_t k);
    /* sum_i w[i]*x[i] over one row, the scalar reference (f32 activations, f32 accumulation). */
    float (*dot_f32)(const void *row, const float *x, int64_t k);
    /* Quantize k floats into one row of this type (round-to-nearest reference); NULL if unsupported. */
    void (*quantize_row)(const float *src, void *row, int64_t k);
} type_traits;

#endif
