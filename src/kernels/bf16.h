/* bfloat16 <-> f32, one value at a time (bf16.c). */
#ifndef TS_KERNELS_BF16_H
#define TS_KERNELS_BF16_H
#include <stdint.h>

float bf16_to_f32(uint16_t h);
uint16_t bf16_from_f32(float f);  /* round to nearest even */

#endif
