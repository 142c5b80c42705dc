/* The gated DeltaNet kind's part of the builder (README-hybrid.md): its sizes from the state-space
 * keys (key heads, value heads, head sizes, the convolution's width), which key head each value
 * head reads in the container's head order, and its tensors: the fused q/k/v projection, the
 * output gate's, beta's and the decay's projections, the convolution's taps, the decay rate
 * -exp(A_log) (HF stores A_log), the time-step bias, the gated norm (used as is: the one norm of
 * Qwen3.5 that is not zero-centred) and the output projection. */
#include "load/build_deltanet.h"
#include "load/model_arena.h"
#include "core/error.h"

int build_deltanet_layer(builder *b, int il) {
    const model_hparams *hp = b->hp;
    deltanet_geometry *d = &b->m->g.layers[il].delta;
    const char *path = b->src->path;
    const int64_t H = hp->hidden;
    ts_error *err = b->err;

    const int hk = hp->ssm_group_count, hv = hp->ssm_time_step_rank, dk = hp->ssm_state_size;
    const int dv = hp->ssm_head_v > 0 ? hp->ssm_head_v : dk, K = hp->ssm_conv_kernel;
    if (hk <= 0 || hv <= 0 || dk <= 0 || K <= 0)
        return ts_fail(err, "%s: layer %d is a gated DeltaNet layer but the state-space sizes are missing (key heads %d, value heads %d, head size %d, convolution %d)",
                       path, il, hk, hv, dk, K);
    if (hv % hk != 0 || dk > 1024 || dv > 1024)
        return ts_fail(err, "%s: layer %d: invalid DeltaNet heads (%d key heads of %d, %d value heads of %d)", path, il, hk, dk, hv, dv);
    if (hp->ssm_inner_size > 0 && hp->ssm_inner_size != hv * dv)
        return ts_fail(err, "%s: ssm.inner_size %d is not %d value heads x %d", path, hp->ssm_inner_size, hv, dv);
    d->n_k_heads = hk;
    d->n_v_heads = hv;
    d->head_k = dk;
    d->head_v = dv;
    d->conv_kernel = K;
    d->conv_channels = 2 * hk * dk + hv * dv;
    const int64_t C = d->conv_channels, V = (int64_t)hv * dv;

    /* the key head of each value head: HF groups a key head's value heads together; llama.cpp's
     * converter tiles them (value head m reads key head m mod Hk) */
    int *key_head = model_arena_alloc(&b->m->arena, (size_t)hv * sizeof(int));
    if (!key_head) return ts_fail(err, "%s: out of memory", path);
    for (int h = 0; h < hv; h++) key_head[h] = b->rules->delta_v_tiled ? h % hk : h / (hv / hk);
    d->key_head = key_head;

    if (builder_matrix(b, &d->w_qkv, ROLE_DELTA_QKV, il, C, H, true)) return -1;
    if (builder_matrix(b, &d->w_z, ROLE_DELTA_Z, il, V, H, true)) return -1;
    if (builder_matrix(b, &d->w_beta, ROLE_DELTA_BETA, il, hv, H, true)) return -1;
    if (builder_matrix(b, &d->w_alpha, ROLE_DELTA_ALPHA, il, hv, H, true)) return -1;
    if (builder_matrix(b, &d->w_out, ROLE_SSM_OUT, il, H, V, true)) return -1;
    if (builder_conv_taps(b, &d->conv, ROLE_SSM_CONV, il, C, K)) return -1;
    if (builder_vector(b, &d->dt_bias, ROLE_SSM_DT_BIAS, il, hv, false, true)) return -1;
    if (builder_vector(b, &d->norm, ROLE_SSM_NORM, il, dv, false, true)) return -1;
    return builder_decay_rates(b, &d->a, il, hv);
}
