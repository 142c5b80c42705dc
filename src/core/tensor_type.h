/* Tensor data types (numbered as in GGUF/ggml) and their size facts: every weight matrix is a
 * stack of independent rows, and a row of K weights is K/block_size blocks of block_bytes each.
 * The containers (io/) validate and size tensors with these; the kernels (kernels/types.h) add
 * what can be computed on each type. */
#ifndef TS_CORE_TENSOR_TYPE_H
#define TS_CORE_TENSOR_TYPE_H
#include <stddef.h>
#include <stdint.h>

enum ts_type {
    TS_F32 = 0, TS_F16 = 1, TS_Q4_0 = 2, TS_Q4_1 = 3,
    TS_Q5_0 = 6, TS_Q5_1 = 7, TS_Q8_0 = 8, TS_Q8_1 = 9,
    TS_Q2_K = 10, TS_Q3_K = 11, TS_Q4_K = 12, TS_Q5_K = 13, TS_Q6_K = 14, TS_Q8_K = 15,
    TS_IQ2_XXS = 16, TS_IQ2_XS = 17, TS_IQ3_XXS = 18, TS_IQ1_S = 19, TS_IQ4_NL = 20,
    TS_IQ3_S = 21, TS_IQ2_S = 22, TS_IQ4_XS = 23, TS_IQ1_M = 29, TS_BF16 = 30,
    TS_TQ1_0 = 34, TS_TQ2_0 = 35, TS_MXFP4 = 39, TS_NVFP4 = 40, TS_Q1_0 = 41, TS_Q2_0 = 42,
    /* The ids below are tessera's own: a GGUF tensor never has one (io/gguf.c refuses them). */
    TS_FIRST_INTERNAL = 64,
    /* Plain element types that only safetensors files carry (no kernels; type_block_size() knows
     * none of them). FastFlowLM q4nx packs store their 4-bit tiles as I8 byte arrays. */
    TS_I8 = 64, TS_U8 = 65, TS_I16 = 66, TS_I32 = 67, TS_I64 = 68, TS_F64 = 69, TS_BOOL = 70,
    TS_U16 = 71, TS_U32 = 72, TS_U64 = 73, TS_F8_E4M3 = 74, TS_F8_E5M2 = 75,
    /* Engine-internal block types no container stores as such: FastFlowLM q4nx tiles repacked at
     * load into rows of 32-weight blocks (bf16 scale, bf16 min, 4-bit codes). */
    TS_Q4NX = 80,
    TS_TYPE_COUNT = 88
};

/* Weights per block (1 for the float types), or 0 for an id the engine has no kernels for. */
int type_block_size(int type);
/* Bytes per block, 0 for an unknown id. */
size_t type_block_bytes(int type);
/* "Q4_K"; "?" for an unknown id. */
const char *type_name(int type);
/* Bytes of one row of k weights, or 0 if k is not a whole number of blocks or the type is unknown. */
size_t type_row_bytes(int type, int64_t k);

#endif
