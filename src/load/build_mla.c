/* The latent-attention kind's part of the builder (README-mla.md): its sizes (the latent rank r,
 * the q path's rank, the heads' non-rotary, rotary and value sizes: GGUF states d_n + d_r and d_v,
 * HF each), its tensors, and its cache's view: one KV head of r + d_r values per position, the
 * value its first r. The decompression comes split per head and transposed for the absorbed form
 * in a GGUF (attn_k_b, attn_v_b); a folder's one kv_b_proj is split here, its key half transposed
 * into an owned f32 copy. */
#include "load/build_mla.h"
#include "load/model_arena.h"
#include "load/rope.h"
#include "kernels/types.h"
#include "core/error.h"
#include <math.h>

/* HF kv_b_proj [nh x (d_n + d_v), r] -> wk_b [nh x r, d_n] (head h's rows: its key block
 * transposed) and wv_b [nh x d_v, r] (its value block), both owned f32. */
static int split_kv_b(builder *b, mla_geometry *a, const weight *kv_b) {
    const int nh = a->n_heads, r = a->kv_lora_rank, dn = a->nope_dim, dv = a->v_dim;
    const type_traits *tt = type_get(kv_b->type);
    float *k = model_arena_alloc(&b->m->arena, (size_t)nh * r * dn * sizeof(float));
    float *v = model_arena_alloc(&b->m->arena, (size_t)nh * dv * r * sizeof(float));
    float *row = model_arena_alloc(&b->m->arena, (size_t)r * sizeof(float));
    if (!k || !v || !row || !tt) return ts_fail(b->err, "%s: out of memory", b->src->path);
    for (int h = 0; h < nh; h++)
        for (int i = 0; i < dn + dv; i++) {
            tt->dequant_row(kv_b->data + (size_t)(h * (dn + dv) + i) * kv_b->row_bytes, row, r);
            if (i < dn) for (int c = 0; c < r; c++) k[((size_t)h * r + c) * dn + i] = row[c];
            else for (int c = 0; c < r; c++) v[((size_t)h * dv + (i - dn)) * r + c] = row[c];
        }
    a->wk_b = (weight){ .type = TS_F32, .rows = (int64_t)nh * r, .cols = dn, .row_bytes = (size_t)dn * sizeof(float),
                        .data = (const uint8_t *)k, .name = kv_b->name };
    a->wv_b = (weight){ .type = TS_F32, .rows = (int64_t)nh * dv, .cols = r, .row_bytes = (size_t)r * sizeof(float),
                        .data = (const uint8_t *)v, .name = kv_b->name };
    return 0;
}

int build_mla_layer(builder *b, int il) {
    const model_hparams *hp = b->hp;
    layer_geometry *ly = &b->m->g.layers[il];
    mla_geometry *a = &ly->mla;
    attention_geometry *at = &ly->attn;
    const char *path = b->src->path;
    const int64_t H = hp->hidden;
    ts_error *err = b->err;

    const int nh = hp->layer_n_heads ? hp->layer_n_heads[il] : hp->n_heads;
    const int r = hp->kv_lora_rank, q_rank = hp->q_lora_rank;
    const int dr = hp->mla_rope_dim > 0 ? hp->mla_rope_dim : hp->rope_dim;
    const int dn = hp->mla_nope_dim > 0 ? hp->mla_nope_dim : hp->mla_key_dim > 0 ? hp->mla_key_dim - dr : 0;
    const int dv = hp->mla_v_dim > 0 ? hp->mla_v_dim : hp->mla_value_dim;
    if (r <= 0) return ts_fail(err, "%s: layer %d is a latent-attention layer but no kv_lora_rank is stated", path, il);
    if (dn <= 0 || dr <= 0 || dv <= 0)
        return ts_fail(err, "%s: latent attention needs the heads' sizes (non-rotary %d, rotary %d, value %d); a GGUF without "
                       "attention.key_length_mla is an older conversion (reconvert it)", path, dn, dr, dv);
    if (nh <= 0 || nh > 4096 || r > 65536 || q_rank > 65536 || dn > 4096 || dr > 4096 || dv > 4096 || dr % 2 != 0)
        return ts_fail(err, "%s: layer %d: invalid latent-attention sizes (%d heads, rank %d, q rank %d, head %d + %d, value %d)",
                       path, il, nh, r, q_rank, dn, dr, dv);
    /* GGUF also states the cache row (key_length r + d_r, value_length r) */
    if (hp->mla_key_dim > 0 && ((hp->head_dim > 0 && hp->head_dim != r + dr) || (hp->value_dim > 0 && hp->value_dim != r)))
        return ts_fail(err, "%s: key_length %d / value_length %d are not the latent cache's %d / %d", path, hp->head_dim,
                       hp->value_dim, r + dr, r);
    a->n_heads = nh;
    a->q_lora_rank = q_rank;
    a->kv_lora_rank = r;
    a->nope_dim = dn;
    a->rope_dim = dr;
    a->v_dim = dv;
    a->rope_adjacent = hp->rope_interleave != 0;
    a->lora_norm_eps = b->rules->lora_norm_eps > 0 ? b->rules->lora_norm_eps : hp->norm_eps;

    const int64_t q_rows = (int64_t)nh * (dn + dr);
    if (q_rank > 0) {
        if (builder_matrix(b, &a->wq_a, ROLE_MLA_Q_A, il, q_rank, H, true)) return -1;
        if (builder_vector(b, &a->q_a_norm, ROLE_MLA_Q_A_NORM, il, q_rank, true, true)) return -1;
        if (builder_matrix(b, &a->wq_b, ROLE_MLA_Q_B, il, q_rows, q_rank, true)) return -1;
    } else if (builder_matrix(b, &a->wq, ROLE_ATTN_Q, il, q_rows, H, true)) {
        return -1;
    }
    if (builder_matrix(b, &a->wkv_a, ROLE_MLA_KV_A, il, r + dr, H, true)) return -1;
    if (builder_vector(b, &a->kv_a_norm, ROLE_MLA_KV_A_NORM, il, r, true, true)) return -1;
    if (b->rules->kv_b_fused) {
        weight kv_b;
        if (builder_matrix(b, &kv_b, ROLE_MLA_KV_B, il, (int64_t)nh * (dn + dv), r, true)) return -1;
        if (split_kv_b(b, a, &kv_b) != 0) return -1;
    } else {
        if (builder_matrix(b, &a->wk_b, ROLE_MLA_K_B, il, (int64_t)nh * r, dn, true)) return -1;
        if (builder_matrix(b, &a->wv_b, ROLE_MLA_V_B, il, (int64_t)nh * dv, r, true)) return -1;
    }
    if (builder_matrix(b, &a->wo, ROLE_ATTN_OUT, il, H, (int64_t)nh * dv, true)) return -1;

    /* the cache's view: every head reads one shared key [c | k_pe] and value c per position */
    const rope_scaling *s = &hp->scaling;
    if (s->kind != ROPE_PLAIN && s->kind != ROPE_YARN)
        return ts_fail(err, "%s: latent attention with this RoPE scaling is not supported (only YaRN)", path);
    at->n_heads = nh;
    at->n_kv_heads = 1;
    at->head_dim = r + dr;
    at->value_dim = r;
    at->scale = (float)(1.0 / sqrt((double)(dn + dr)) * (s->kq_mscale > 0 ? s->kq_mscale : 1.0));
    at->kv_source = il;
    at->rope_theta = hp->rope_theta;
    at->rope_dim = dr;
    at->rope_pairs = dr / 2;
    at->rope_pos_scale = 1.0f;
    at->rope_mscale = s->kind == ROPE_YARN && s->mscale > 0 ? (float)s->mscale : 1.0f;
    float *inv = model_arena_alloc(&b->m->arena, (size_t)(dr / 2) * sizeof(float));
    if (!inv) return ts_fail(err, "%s: out of memory", path);
    if (s->kind == ROPE_YARN) rope_scaled(inv, dr / 2, dr, hp->rope_theta, s, false);
    else rope_plain(inv, dr / 2, dr, hp->rope_theta, NULL);
    at->rope_inv_freq = inv;
    return 0;
}
