/* IEEE binary16 <-> f32, one value at a time (f16.c; the kernels inline half_to_f32 instead). */
#ifndef TS_KERNELS_F16_H
#define TS_KERNELS_F16_H
#include <stdint.h>

float f16_to_f32(uint16_t h);
uint16_t f16_from_f32(float f);   /* round to nearest even */
void f16_from_f32_row(const float *x, uint16_t *h, int64_t n);   /* h[i] = f16_from_f32(x[i]) */

#endif
