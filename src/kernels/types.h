/* Tensor data types (numbered as in GGUF/ggml) and the per-type kernel table.
 *
 * Every weight matrix is a stack of independent rows; a row of K weights is K/block_size blocks of
 * block_bytes each. Kernels work a row at a time so the weights are never dequantized whole. */
#ifndef TS_KERNELS_TYPES_H
#define TS_KERNELS_TYPES_H
#include <stddef.h>
#include <stdint.h>
#include <stdbool.h>

enum ts_type {
    TS_F32 = 0, TS_F16 = 1, TS_Q4_0 = 2, TS_Q4_1 = 3,
    TS_Q5_0 = 6, TS_Q5_1 = 7, TS_Q8_0 = 8, TS_Q8_1 = 9,
    TS_Q2_K = 10, TS_Q3_K = 11, TS_Q4_K = 12, TS_Q5_K = 13, TS_Q6_K = 14, TS_Q8_K = 15,
    TS_BF16 = 30,
    /* Plain element types that only safetensors files carry (no kernels; type_get() knows none of
     * them). FastFlowLM q4nx packs store their 4-bit tiles as I8 byte arrays. */
    TS_I8 = 40, TS_U8 = 41, TS_I16 = 42, TS_I32 = 43, TS_I64 = 44, TS_F64 = 45, TS_BOOL = 46,
    TS_U16 = 47, TS_U32 = 48, TS_U64 = 49, TS_F8_E4M3 = 50, TS_F8_E5M2 = 51,
    /* Engine-internal block types no container stores as such: FastFlowLM q4nx tiles repacked at
     * load into rows of 32-weight blocks (bf16 scale, bf16 min, 4-bit codes). */
    TS_Q4NX = 60,
    TS_TYPE_COUNT = 64
};

typedef struct type_traits {
    const char *name;        /* "Q4_K" */
    int block_size;          /* weights per block (1 for float types) */
    size_t block_bytes;      /* bytes per block */
    /* dst[0..k) = weights of one row; k is a multiple of block_size. */
    void (*dequant_row)(const void *row, float *dst, int64_t k);
    /* sum_i w[i]*x[i] over one row, the scalar reference (f32 activations, f32 accumulation). */
    float (*dot_f32)(const void *row, const float *x, int64_t k);
    /* Quantize k floats into one row of this type (round-to-nearest reference); NULL if unsupported. */
    void (*quantize_row)(const float *src, void *row, int64_t k);
} type_traits;

/* NULL for an unknown or unsupported type id. */
const type_traits *type_get(int type);
const char *type_name(int type);   /* "?" for unknown */

/* Bytes of one row of k weights, or 0 if k is not a whole number of blocks or the type is unknown. */
size_t type_row_bytes(int type, int64_t k);

/* IEEE half and bfloat16 conversions. */
float fp16_to_f32(uint16_t h);
uint16_t f32_to_fp16(float f);
float bf16_to_f32(uint16_t h);
uint16_t f32_to_bf16(float f);   /* round to nearest even */

#endif
