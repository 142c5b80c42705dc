/* Q4NX: the block form FastFlowLM q4nx tiles are repacked into at load (src/io/q4nx.c).
 * Blocks of 32 weights of one row: bf16 scale, bf16 min, 16 bytes of 4-bit codes (element j in
 * the low nibble of qs[j], element j + 16 in the high nibble); value = code * scale + min.
 *
 * The value is two f32 roundings (the product, then the sum), never one fused multiply-add: that
 * is how the packs' reference dequantization is defined, and the fixtures' .dequant.f32 tensors
 * are bit-exact that way, so contraction is switched off here whatever the build flags. */
#include "kernels/kernels_internal.h"
#include "kernels/bf16.h"

#if defined(__clang__)
#pragma STDC FP_CONTRACT OFF
#define NO_FP_CONTRACT
#elif defined(__GNUC__)
#define NO_FP_CONTRACT __attribute__((optimize("fp-contract=off")))
#else
#define NO_FP_CONTRACT
#endif

NO_FP_CONTRACT static void dequant_block(const uint8_t *p, float *y) {
    const block_q4nx *b = (const block_q4nx *)p;
    float scale = bfloat_to_f32((uint16_t)(b->d[0] | b->d[1] << 8));
    float min = bfloat_to_f32((uint16_t)(b->m[0] | b->m[1] << 8));
    for (int j = 0; j < QK / 2; j++) {
        float lo = (float)(b->qs[j] & 0xf) * scale, hi = (float)(b->qs[j] >> 4) * scale;
        y[j] = lo + min;
        y[j + QK / 2] = hi + min;
    }
}

static void q4nx_dequant_row(const void *row, float *dst, int64_t k) {
    dequant_blocks(row, dst, k, QK, sizeof(block_q4nx), dequant_block);
}

static float q4nx_dot_f32(const void *row, const float *x, int64_t k) {
    return dot_blocks(row, x, k, QK, sizeof(block_q4nx), dequant_block);
}

/* The packer's rule: per group, scale = bf16((max - min) / 15), min = bf16(min), codes against
 * the stored scale and min. Used by tests; the engine itself only repacks existing packs. */
static void q4nx_quantize_row(const float *src, void *row, int64_t k) {
    block_q4nx *b = row;
    for (int64_t i = 0; i < k / QK; i++, b++) {
        const float *x = src + i * QK;
        float min = x[0], max = x[0];
        for (int j = 1; j < QK; j++) { min = fminf(min, x[j]); max = fmaxf(max, x[j]); }
        uint16_t sb = bf16_from_f32((max - min) / 15.0f), mb = bf16_from_f32(min);
        b->d[0] = (uint8_t)sb; b->d[1] = (uint8_t)(sb >> 8);
        b->m[0] = (uint8_t)mb; b->m[1] = (uint8_t)(mb >> 8);
        float s = bfloat_to_f32(sb), m = bfloat_to_f32(mb), is = s != 0.0f ? 1.0f / s : 0.0f;
        for (int j = 0; j < QK / 2; j++) {
            int lo = clamp_int((int)rintf((x[j] - m) * is), 0, 15);
            int hi = clamp_int((int)rintf((x[j + QK / 2] - m) * is), 0, 15);
            b->qs[j] = (uint8_t)(lo | hi << 4);
        }
    }
}

const type_traits q4nx_traits = { q4nx_dequant_row, q4nx_dot_f32, q4nx_quantize_row };
