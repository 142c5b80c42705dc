/* --info: what the loader made of a model, from the geometry table (every layer's kind, heads, RoPE,
 * weights and norms), the KV cache it needs per token, the tokenizer, and the loader's notes. */
#include "load/model.h"
#include "run/context.h"
#include "run/layer_kind.h"
#include "run/kv_cache.h"
#include "kernels/cpu.h"
#include "kernels/types.h"
#include "io/gguf.h"
#include "io/safetensors.h"
#include <stdbool.h>
#include <stdio.h>

static void print_weight_type(FILE *f, const char *label, const weight *w) {
    if (w->data) fprintf(f, " %s=%s", label, type_name(w->type));
}

/* The attention kind's part of a layer's line. */
static void print_attention(FILE *f, const attention_geometry *a) {
    fprintf(f, "%-7s heads %d kv_heads %d head_dim %d", a->sliding ? "sliding" : "full", a->n_heads, a->n_kv_heads, a->head_dim);
    if (a->rope_pairs == 0) fprintf(f, " rope none");
    else fprintf(f, " rope theta %g dims %d/%d", (double)a->rope_theta, 2 * a->rope_pairs, a->head_dim);
    if (a->rope_dim != a->head_dim) fprintf(f, " span %d", a->rope_dim);
    if (a->rope_pos_scale != 1.0f) fprintf(f, " pos x%g", (double)a->rope_pos_scale);
    if (a->rope_mscale != 1.0f) fprintf(f, " mscale %g", (double)a->rope_mscale);
    if (a->temp_beta > 0) fprintf(f, " temp %g/%d", (double)a->temp_beta, a->temp_len);
    fprintf(f, " window %d scale %.4g", a->window, (double)a->scale);
    if (a->softcap > 0) fprintf(f, " softcap %g", (double)a->softcap);
}

static void print_attention_details(FILE *f, const attention_geometry *a, int il) {
    if (a->sinks) fprintf(f, " sinks");
    if (a->kv_source != il) fprintf(f, " kv_from %d", a->kv_source);
    if (a->v_from_k) fprintf(f, " v=k");
    if (a->v_norm) fprintf(f, " v_norm");
}

/* The gated DeltaNet kind's part of a layer's line. */
static void print_deltanet(FILE *f, const deltanet_geometry *d) {
    fprintf(f, "deltanet key_heads %d x %d value_heads %d x %d conv %d", d->n_k_heads, d->head_k, d->n_v_heads, d->head_v,
            d->conv_kernel);
}

/* The Mamba-2 kind's part of a layer's line. */
static void print_mamba2(FILE *f, const mamba2_geometry *mb) {
    fprintf(f, "mamba2 heads %d x %d state %d groups %d conv %d norm %s", mb->n_heads, mb->head_dim, mb->state_size,
            mb->n_groups, mb->conv_kernel, mb->norm_group == mb->n_heads * mb->head_dim ? "whole" : "per-group");
}

/* The latent-attention kind's part of a layer's line: its sizes and the cache row a position costs. */
static void print_mla(FILE *f, const mla_geometry *ml, const attention_geometry *a) {
    fprintf(f, "latent  heads %d q_rank %d kv_rank %d head %d+%d value %d rope theta %g %s", ml->n_heads, ml->q_lora_rank,
            ml->kv_lora_rank, ml->nope_dim, ml->rope_dim, ml->v_dim, (double)a->rope_theta,
            ml->rope_adjacent ? "adjacent" : "split-half");
    if (a->rope_mscale != 1.0f) fprintf(f, " mscale %g", (double)a->rope_mscale);
    fprintf(f, " scale %.4g cache key %d value %d", (double)a->scale, a->head_dim, a->value_dim);
}

/* One line per layer: its kind's geometry, the feed-forward, the tensor types, the norms. */
static void print_layer(FILE *f, const layer_geometry *ly, int il) {
    const attention_geometry *a = ly->kind == LAYER_ATTENTION ? &ly->attn : NULL;
    fprintf(f, "layer %2d: ", il);
    if (a) print_attention(f, a);
    if (ly->kind == LAYER_DELTANET) print_deltanet(f, &ly->delta);
    if (ly->kind == LAYER_SHORTCONV) fprintf(f, "shortconv channels %d conv %d", ly->conv.channels, ly->conv.kernel);
    if (ly->kind == LAYER_MAMBA2) print_mamba2(f, &ly->mamba);
    if (ly->kind == LAYER_MLA) print_mla(f, &ly->mla, &ly->attn);
    if (a && a->out_gate) fprintf(f, " gated");
    if (ly->w_gate.data) fprintf(f, " ffn %d %s", ly->ffn_dim, activation_name(ly->activation));
    if (ly->moe.n_experts > 0)
        fprintf(f, " experts %d/%d x%d %s %s%s%s", ly->moe.n_used, ly->moe.n_experts, ly->moe.ffn_dim,
                activation_name(ly->moe.activation), ly->moe.gating == GATING_TOPK_SOFTMAX ? "topk-softmax"
                : ly->moe.gating == GATING_SIGMOID_TOPK ? "sigmoid-topk" : "softmax-topk",
                ly->moe.gating != GATING_TOPK_SOFTMAX && ly->moe.renorm ? "-renorm" : "",
                ly->moe.router_bias ? " router-bias" : "");
    if (ly->moe.select_bias) fprintf(f, " select-bias");
    if (ly->moe.n_group > 1) fprintf(f, " groups %d/%d", ly->moe.topk_group, ly->moe.n_group);
    if (ly->moe.n_experts > 0 && ly->moe.routed_scale != 1.0f) fprintf(f, " x%g", (double)ly->moe.routed_scale);
    if (ly->moe.shared_down.data)
        fprintf(f, " shared %d%s", ly->moe.shared_ffn_dim, ly->moe.shared_gate_inp.data ? " gated" : "");
    if (a) print_attention_details(f, a, il);
    if (ly->output_scale != 1.0f) fprintf(f, " out x%g", (double)ly->output_scale);
    if (ly->ple_gate.data) fprintf(f, " ple");
    if (a && (a->bq || a->bk || a->bv || a->bo))
        fprintf(f, " bias:%s%s%s%s", a->bq ? " q" : "", a->bk ? " k" : "", a->bv ? " v" : "", a->bo ? " o" : "");
    fprintf(f, " |");
    if (ly->kind == LAYER_DELTANET) {
        print_weight_type(f, "qkv", &ly->delta.w_qkv);
        print_weight_type(f, "z", &ly->delta.w_z);
        print_weight_type(f, "out", &ly->delta.w_out);
    }
    if (ly->kind == LAYER_SHORTCONV) {
        print_weight_type(f, "in", &ly->conv.w_in);
        print_weight_type(f, "out", &ly->conv.w_out);
    }
    if (ly->kind == LAYER_MAMBA2) {
        print_weight_type(f, "in", &ly->mamba.w_in);
        print_weight_type(f, "out", &ly->mamba.w_out);
    }
    if (ly->kind == LAYER_MLA) {
        print_weight_type(f, "q_a", &ly->mla.wq_a);
        print_weight_type(f, "q_b", &ly->mla.wq_b);
        print_weight_type(f, "q", &ly->mla.wq);
        print_weight_type(f, "kv_a", &ly->mla.wkv_a);
        print_weight_type(f, "k_b", &ly->mla.wk_b);
        print_weight_type(f, "v_b", &ly->mla.wv_b);
        print_weight_type(f, "o", &ly->mla.wo);
    }
    if (a) {
        print_weight_type(f, "q", &a->wq);
        print_weight_type(f, "k", &a->wk);
        print_weight_type(f, "v", &a->wv);
        print_weight_type(f, "o", &a->wo);
    }
    print_weight_type(f, "gate", &ly->w_gate);
    print_weight_type(f, "up", &ly->w_up);
    print_weight_type(f, "down", &ly->w_down);
    if (ly->moe.n_experts > 0) {
        print_weight_type(f, "exp_gate", &ly->moe.gate[0]);
        print_weight_type(f, "exp_up", &ly->moe.up[0]);
        print_weight_type(f, "exp_down", &ly->moe.down[0]);
    }
    fprintf(f, " norms:%s%s%s%s%s%s%s\n", ly->attn_norm ? " attn" : "",
            a && a->q_norm ? " q" : "", a && a->k_norm ? " k" : "", a && a->qk_norm_whole ? "(whole)" : "",
            ly->post_attn_norm ? " post_attn" : "", ly->ffn_norm ? " ffn" : "",
            ly->post_ffn_norm ? " post_ffn" : "");
}

static void print_size(FILE *f, size_t bytes) {
    if (bytes >= 1000000) fprintf(f, "%.1f MB", (double)bytes / 1e6);
    else fprintf(f, "%.1f KB", (double)bytes / 1e3);
}

/* The container's tensors by type, largest share first: a file's type name says little (a UD-Q2_K_XL
 * file holds a dozen types), so each type's count and bytes. */
static void print_tensor_types(FILE *f, const tensor_dir *d) {
    int count[TS_TYPE_COUNT] = { 0 };
    size_t bytes[TS_TYPE_COUNT] = { 0 }, total = 0;
    for (int i = 0; i < d->n; i++) {
        const int t = d->t[i].type;
        if (t < 0 || t >= TS_TYPE_COUNT) continue;
        count[t]++;
        bytes[t] += d->t[i].nbytes;
        total += d->t[i].nbytes;
    }
    fprintf(f, "tensors: %d, ", d->n);
    print_size(f, total);
    fprintf(f, ":");
    for (bool first = true;; first = false) {
        int best = -1;
        for (int t = 0; t < TS_TYPE_COUNT; t++)
            if (count[t] && (best < 0 || bytes[t] > bytes[best])) best = t;
        if (best < 0) break;
        fprintf(f, "%s %s x%d ", first ? "" : ",", type_name(best), count[best]);
        print_size(f, bytes[best]);
        count[best] = 0;
    }
    fprintf(f, "\n");
}

void ts_model_print_info(const ts_model *m, FILE *f) {
    const model_geometry *g = &m->g;
    fprintf(f, "model: %s\n", m->path);
    fprintf(f, "kernels: %s%s\n", simd_name(m->simd), simd_extensions(m->simd));
    if (g->n_layers > 0) {
        fprintf(f, "arch: %s  hidden %d  layers %d  vocab %d  context %d  norm eps %g\n", g->arch,
                g->hidden, g->n_layers, g->n_vocab, g->n_ctx_train, (double)g->norm_eps);
        fprintf(f, "embedding: %s%s", type_name(g->tok_embd.type),
                g->embed_scale != 1.0f ? "" : "\n");
        if (g->embed_scale != 1.0f) fprintf(f, " x %g\n", (double)g->embed_scale);
        fprintf(f, "output: %s%s", type_name(g->output.type),
                g->output.data == g->tok_embd.data ? " (tied to the embedding)" : "");
        if (g->final_softcap > 0) fprintf(f, "  softcap %g", (double)g->final_softcap);
        if (g->logit_scale != 1.0f) fprintf(f, "  x %g", (double)g->logit_scale);
        fprintf(f, "\n");
        if (m->gguf) print_tensor_types(f, gguf_tensors(m->gguf));
        else if (m->safetensors) print_tensor_types(f, safetensors_tensors(m->safetensors));
        if (g->residual_scale != 1.0f) fprintf(f, "residual: sublayer outputs x %g\n", (double)g->residual_scale);
        if (g->rope_long_ctx > 0)
            fprintf(f, "rope: LongRoPE, long factors for contexts over %d positions (rounded up to %d)\n",
                    g->rope_long_ctx, g->rope_long_round);
        for (int il = 0; il < g->n_layers; il++) print_layer(f, &g->layers[il], il);
        size_t ring = 0;
        for (int il = 0; il < g->n_layers; il++) {
            const layer_geometry *ly = &g->layers[il];
            if (layer_has_kv_cache(ly) && ly->attn.kv_source == il && ly->attn.window > 0)
                ring += kv_bytes_per_token_of_layer(ly, kv_type_of_ts(m->cache_type_k), kv_type_of_ts(m->cache_type_v)) *
                        (ly->attn.window + FORWARD_MAX_BATCH - 1);
        }
        fprintf(f, "kv cache: %zu bytes per token (k %s, v %s, layers that attend to every position)",
                kv_bytes_per_token(g, kv_type_of_ts(m->cache_type_k), kv_type_of_ts(m->cache_type_v)),
                ts_kv_type_name(m->cache_type_k), ts_kv_type_name(m->cache_type_v));
        if (ring) fprintf(f, " + %zu bytes fixed (sliding-window rings)", ring);
        fprintf(f, "\n");
        size_t state = 0;
        for (int il = 0; il < g->n_layers; il++) state += layer_kind_ops(g->layers[il].kind)->state_floats(&g->layers[il]) * sizeof(float);
        if (state)
            fprintf(f, "recurrent state: %zu bytes per sequence (f32), and up to %d snapshots of it for rewinds (%zu bytes)\n",
                    state, RECURRENT_SNAPSHOTS, state * RECURRENT_SNAPSHOTS);
    }
    if (m->has_vocab)
        fprintf(f, "tokenizer: %s, %d tokens, bos %d eos %d add_bos %s\n",
                m->voc.kind == VOCAB_SPM ? "SentencePiece BPE" : "byte-level BPE", m->voc.n,
                m->voc.bos, m->voc.eos, m->voc.add_bos ? "yes" : "no");
    for (int i = 0; i < m->n_notes; i++) fprintf(f, "layout: %s\n", m->notes[i]);
}

