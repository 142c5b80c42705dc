/* The size facts of the tensor types, as ggml's block layouts define them (the kernels' block
 * structs in kernels/kernels_internal.h assert the same sizes). */
#include "core/tensor_type.h"

typedef struct type_size {
    const char *name;
    int block_size;          /* weights per block */
    size_t block_bytes;
} type_size;

static const type_size type_sizes[TS_TYPE_COUNT] = {
    [TS_F32]  = { "F32",  1,   4 },
    [TS_F16]  = { "F16",  1,   2 },
    [TS_BF16] = { "BF16", 1,   2 },
    [TS_Q4_0] = { "Q4_0", 32,  18 },
    [TS_Q4_1] = { "Q4_1", 32,  20 },
    [TS_Q5_0] = { "Q5_0", 32,  22 },
    [TS_Q5_1] = { "Q5_1", 32,  24 },
    [TS_Q8_0] = { "Q8_0", 32,  34 },
    [TS_Q2_K] = { "Q2_K", 256, 84 },
    [TS_Q3_K] = { "Q3_K", 256, 110 },
    [TS_Q4_K] = { "Q4_K", 256, 144 },
    [TS_Q5_K] = { "Q5_K", 256, 176 },
    [TS_Q6_K] = { "Q6_K", 256, 210 },
    [TS_Q8_K] = { "Q8_K", 256, 292 },
    [TS_IQ4_NL] = { "IQ4_NL", 32, 18 },
    [TS_IQ4_XS] = { "IQ4_XS", 256, 136 },
    [TS_MXFP4] = { "MXFP4", 32, 17 },
    [TS_IQ2_XXS] = { "IQ2_XXS", 256, 66 },
    [TS_IQ2_XS] = { "IQ2_XS", 256, 74 },
    [TS_IQ2_S] = { "IQ2_S", 256, 82 },
    [TS_IQ3_XXS] = { "IQ3_XXS", 256, 98 },
    [TS_IQ3_S] = { "IQ3_S", 256, 110 },
    [TS_IQ1_S] = { "IQ1_S", 256, 50 },
    [TS_IQ1_M] = { "IQ1_M", 256, 56 },
    [TS_TQ1_0] = { "TQ1_0", 256, 54 },
    [TS_TQ2_0] = { "TQ2_0", 256, 66 },
    [TS_NVFP4] = { "NVFP4", 64, 36 },
    [TS_Q1_0] = { "Q1_0", 128, 18 },
    [TS_Q2_0] = { "Q2_0", 64, 18 },
    [TS_Q4NX] = { "Q4NX", 32,  20 },
};

static const type_size *size_of(int type) {
    if (type < 0 || type >= TS_TYPE_COUNT || !type_sizes[type].name) return NULL;
    return &type_sizes[type];
}

int type_block_size(int type) {
    const type_size *s = size_of(type);
    return s ? s->block_size : 0;
}

size_t type_block_bytes(int type) {
    const type_size *s = size_of(type);
    return s ? s->block_bytes : 0;
}

const char *type_name(int type) {
    const type_size *s = size_of(type);
    return s ? s->name : "?";
}

size_t type_row_bytes(int type, int64_t k) {
    const type_size *s = size_of(type);
    if (!s || k < 0 || k % s->block_size != 0) return 0;
    uint64_t blocks = (uint64_t)(k / s->block_size);
    if (blocks > SIZE_MAX / s->block_bytes) return 0;
    return (size_t)blocks * s->block_bytes;
}
