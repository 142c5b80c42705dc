/* The gated short-convolution kind's part of the builder (README-ssm.md, LFM2): the convolution's
 * width (GGUF shortconv.l_cache, HF conv_L_cache), and its tensors: the input projection to three
 * hidden-size blocks (b, c, u in that order in both containers), the depthwise taps (HF [D, 1, K],
 * GGUF {K, D}: the same floats, each channel's taps oldest first) and the output projection. */
#include "load/build_shortconv.h"
#include "core/error.h"

int build_shortconv_layer(builder *b, int il) {
    shortconv_geometry *s = &b->m->g.layers[il].conv;
    const int64_t H = b->hp->hidden;
    const int K = b->hp->ssm_conv_kernel;
    if (K <= 0)
        return ts_fail(b->err, "%s: layer %d is a short-convolution layer but the convolution's width (shortconv.l_cache / conv_L_cache) is missing",
                       b->src->path, il);
    s->channels = (int)H;
    s->kernel = K;
    if (builder_matrix(b, &s->w_in, ROLE_SHORTCONV_IN, il, 3 * H, H, true)) return -1;
    if (builder_conv_taps(b, &s->conv, ROLE_SHORTCONV_CONV, il, H, K)) return -1;
    return builder_matrix(b, &s->w_out, ROLE_SHORTCONV_OUT, il, H, H, true);
}
