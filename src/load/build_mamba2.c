/* The Mamba-2 kind's part of the builder (README-ssm.md): its sizes from the state-space keys
 * (heads, head size, state size, groups, the convolution's width; d_inner stated by GGUF, from
 * HF's expand x hidden), how many values its gated norm takes together (the container's rule:
 * per group in llama.cpp, all of d_inner in transformers), and its tensors: the input projection
 * [z | xBC | dt], the convolution's taps and bias, the decay rate -exp(A_log) (HF stores A_log),
 * the skip D, the time-step bias, the norm and the output projection. */
#include "load/build_mamba2.h"
#include "core/error.h"

int build_mamba2_layer(builder *b, int il) {
    const model_hparams *hp = b->hp;
    mamba2_geometry *mb = &b->m->g.layers[il].mamba;
    const char *path = b->src->path;
    const int64_t H = hp->hidden;
    ts_error *err = b->err;

    const int nh = hp->ssm_time_step_rank, N = hp->ssm_state_size, ng = hp->ssm_group_count, K = hp->ssm_conv_kernel;
    const int64_t inner = hp->ssm_inner_size > 0 ? hp->ssm_inner_size : (int64_t)hp->ssm_expand * H;
    if (nh <= 0 || N <= 0 || ng <= 0 || K <= 0 || inner <= 0)
        return ts_fail(err, "%s: layer %d is a Mamba-2 layer but the state-space sizes are missing (heads %d, state %d, groups %d, convolution %d, inner size %lld)",
                       path, il, nh, N, ng, K, (long long)inner);
    if (hp->ssm_inner_size > 0 && hp->ssm_expand > 0 && hp->ssm_inner_size != (int64_t)hp->ssm_expand * H)
        return ts_fail(err, "%s: the inner size %d is not %d x hidden %lld", path, hp->ssm_inner_size, hp->ssm_expand, (long long)H);
    const int64_t dh = hp->ssm_head_v > 0 ? hp->ssm_head_v : inner / nh;
    if (dh * nh != inner || nh % ng != 0 || dh > 4096 || N > 4096 || inner > (1 << 20))
        return ts_fail(err, "%s: layer %d: invalid Mamba-2 sizes (%d heads of %lld, inner size %lld, %d groups of state %d)",
                       path, il, nh, (long long)dh, (long long)inner, ng, N);
    mb->n_heads = nh;
    mb->head_dim = (int)dh;
    mb->state_size = N;
    mb->n_groups = ng;
    mb->conv_kernel = K;
    mb->conv_channels = (int)(inner + 2 * (int64_t)ng * N);
    mb->norm_group = b->rules->ssm_norm_per_group ? (int)(inner / ng) : (int)inner;
    const int64_t C = mb->conv_channels;

    if (builder_matrix(b, &mb->w_in, ROLE_SSM_IN, il, inner + C + nh, H, true)) return -1;
    if (builder_matrix(b, &mb->w_out, ROLE_SSM_OUT, il, H, inner, true)) return -1;
    if (builder_conv_taps(b, &mb->conv, ROLE_SSM_CONV, il, C, K)) return -1;
    /* the bias unless the config says there is none (then a bias tensor is left over and refused) */
    if (hp->ssm_conv_bias != 0 && builder_vector(b, &mb->conv_bias, ROLE_SSM_CONV_BIAS, il, C, false, true)) return -1;
    if (builder_vector(b, &mb->d, ROLE_SSM_D, il, nh, false, true)) return -1;
    if (builder_vector(b, &mb->dt_bias, ROLE_SSM_DT_BIAS, il, nh, false, true)) return -1;
    if (builder_vector(b, &mb->norm, ROLE_SSM_NORM, il, inner, false, true)) return -1;
    return builder_decay_rates(b, &mb->a, il, nh);
}
