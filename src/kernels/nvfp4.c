/* NVFP4: blocks of 64 weights in 4 sub-blocks of 16, each with an unsigned E4M3 scale byte; a
 * weight is kvalues_mxfp4[nibble] (E2M1 doubled) * ue4m3(scale) / 2. Sub-block s's byte 8 s + j
 * holds weight 16 s + j (low nibble) and 16 s + 8 + j (high). A per-tensor second scale, where a
 * file has one, multiplies the product (load/ applies it; README-iq-grid.md). */
#include "kernels/kernels_internal.h"

static void nvfp4_dequant_block(const uint8_t *p, float *y) {
    const block_nvfp4 *b = (const block_nvfp4 *)p;
    for (int s = 0; s < 4; s++) {
        float d = ue4m3_half_to_f32(b->d[s]);
        for (int j = 0; j < 8; j++) {
            y[16 * s + j] = (float)kvalues_mxfp4[b->qs[8 * s + j] & 0xf] * d;
            y[16 * s + 8 + j] = (float)kvalues_mxfp4[b->qs[8 * s + j] >> 4] * d;
        }
    }
}

BLOCK_TYPE_TRAITS(nvfp4, block_nvfp4, 64)
