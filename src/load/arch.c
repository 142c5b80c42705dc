/* The architecture table. Adding a family that fits it is one row here (plus its Hugging Face
 * names if they differ from a table below) and a test; the builder, the forward and the readers
 * stay as they are. */
#include "load/arch.h"
#include "load/hparams.h"
#include "load/geometry.h"
#include <stdio.h>
#include <string.h>

/* ---- tensor names ---- */

/* llama.cpp's standard GGUF names. */
static const tensor_names gguf_names = { {
    [ROLE_TOKEN_EMBD] = "token_embd.weight", [ROLE_OUTPUT] = "output.weight",
    [ROLE_OUTPUT_NORM] = "output_norm.weight", [ROLE_ROPE_FREQS] = "rope_freqs.weight",
    [ROLE_ROPE_FACTORS_SHORT] = "rope_factors_short.weight",
    [ROLE_ROPE_FACTORS_LONG] = "rope_factors_long.weight",
    [ROLE_PLE_EMBD] = "per_layer_token_embd.weight", [ROLE_PLE_MODEL_PROJ] = "per_layer_model_proj.weight",
    [ROLE_PLE_PROJ_NORM] = "per_layer_proj_norm.weight",
    [ROLE_ATTN_NORM] = "blk.%d.attn_norm.weight",
    [ROLE_ATTN_Q] = "blk.%d.attn_q.weight", [ROLE_ATTN_K] = "blk.%d.attn_k.weight",
    [ROLE_ATTN_V] = "blk.%d.attn_v.weight", [ROLE_ATTN_QKV] = "blk.%d.attn_qkv.weight",
    [ROLE_ATTN_OUT] = "blk.%d.attn_output.weight",
    [ROLE_ATTN_Q_BIAS] = "blk.%d.attn_q.bias", [ROLE_ATTN_K_BIAS] = "blk.%d.attn_k.bias",
    [ROLE_ATTN_V_BIAS] = "blk.%d.attn_v.bias", [ROLE_ATTN_OUT_BIAS] = "blk.%d.attn_output.bias",
    [ROLE_ATTN_Q_NORM] = "blk.%d.attn_q_norm.weight", [ROLE_ATTN_K_NORM] = "blk.%d.attn_k_norm.weight",
    [ROLE_POST_ATTN_NORM] = "blk.%d.post_attention_norm.weight",
    [ROLE_FFN_NORM] = "blk.%d.ffn_norm.weight",
    [ROLE_FFN_GATE] = "blk.%d.ffn_gate.weight", [ROLE_FFN_UP] = "blk.%d.ffn_up.weight",
    [ROLE_FFN_DOWN] = "blk.%d.ffn_down.weight", [ROLE_POST_FFN_NORM] = "blk.%d.post_ffw_norm.weight",
    [ROLE_LAYER_SCALE] = "blk.%d.layer_output_scale.weight",
    [ROLE_PLE_GATE] = "blk.%d.inp_gate.weight", [ROLE_PLE_PROJ] = "blk.%d.proj.weight",
    [ROLE_PLE_POST_NORM] = "blk.%d.post_norm.weight", [ROLE_ATTN_SINKS] = "blk.%d.attn_sinks.weight",
    [ROLE_ROUTER] = "blk.%d.ffn_gate_inp.weight", [ROLE_ROUTER_BIAS] = "blk.%d.ffn_gate_inp.bias",
    [ROLE_ROUTER_SCALE] = "blk.%d.ffn_gate_inp.scale",
    [ROLE_EXP_GATE] = "blk.%d.ffn_gate_exps.weight", [ROLE_EXP_UP] = "blk.%d.ffn_up_exps.weight",
    [ROLE_EXP_GATE_UP] = "blk.%d.ffn_gate_up_exps.weight", [ROLE_EXP_DOWN] = "blk.%d.ffn_down_exps.weight",
    [ROLE_EXP_GATE_BIAS] = "blk.%d.ffn_gate_exps.bias", [ROLE_EXP_UP_BIAS] = "blk.%d.ffn_up_exps.bias",
    [ROLE_EXP_DOWN_BIAS] = "blk.%d.ffn_down_exps.bias", [ROLE_EXP_SCALE] = "blk.%d.ffn_down_exps.scale",
    [ROLE_MOE_IN_NORM] = "blk.%d.pre_ffw_norm_2.weight", [ROLE_MOE_OUT_NORM] = "blk.%d.post_ffw_norm_2.weight",
    [ROLE_DENSE_OUT_NORM] = "blk.%d.post_ffw_norm_1.weight",
    [ROLE_SHEXP_GATE] = "blk.%d.ffn_gate_shexp.weight", [ROLE_SHEXP_UP] = "blk.%d.ffn_up_shexp.weight",
    [ROLE_SHEXP_DOWN] = "blk.%d.ffn_down_shexp.weight", [ROLE_SHEXP_GATE_INP] = "blk.%d.ffn_gate_inp_shexp.weight",
    [ROLE_DELTA_QKV] = "blk.%d.attn_qkv.weight", [ROLE_DELTA_Z] = "blk.%d.attn_gate.weight",
    [ROLE_DELTA_BETA] = "blk.%d.ssm_beta.weight", [ROLE_DELTA_ALPHA] = "blk.%d.ssm_alpha.weight",
    [ROLE_SSM_CONV] = "blk.%d.ssm_conv1d.weight", [ROLE_SSM_A] = "blk.%d.ssm_a",
    [ROLE_SSM_DT_BIAS] = "blk.%d.ssm_dt.bias", [ROLE_SSM_NORM] = "blk.%d.ssm_norm.weight",
    [ROLE_SSM_OUT] = "blk.%d.ssm_out.weight",
    [ROLE_SHORTCONV_IN] = "blk.%d.shortconv.in_proj.weight", [ROLE_SHORTCONV_CONV] = "blk.%d.shortconv.conv.weight",
    [ROLE_SHORTCONV_OUT] = "blk.%d.shortconv.out_proj.weight",
    [ROLE_SSM_IN] = "blk.%d.ssm_in.weight", [ROLE_SSM_CONV_BIAS] = "blk.%d.ssm_conv1d.bias",
    [ROLE_SSM_D] = "blk.%d.ssm_d",
    [ROLE_EXP_SELECT_BIAS] = "blk.%d.exp_probs_b.bias",
    [ROLE_MLA_Q_A] = "blk.%d.attn_q_a.weight", [ROLE_MLA_Q_A_NORM] = "blk.%d.attn_q_a_norm.weight",
    [ROLE_MLA_Q_B] = "blk.%d.attn_q_b.weight", [ROLE_MLA_KV_A] = "blk.%d.attn_kv_a_mqa.weight",
    [ROLE_MLA_KV_A_NORM] = "blk.%d.attn_kv_a_norm.weight", [ROLE_MLA_K_B] = "blk.%d.attn_k_b.weight",
    [ROLE_MLA_V_B] = "blk.%d.attn_v_b.weight",
} };

/* Phi-3 stores [gate; up] as one ffn_up of 2 x ffn rows. */
static const role_name phi3_gguf[] = {
    { ROLE_FFN_GATE_UP, "blk.%d.ffn_up.weight" }, { ROLE_FFN_UP, NULL }, { -1, NULL } };

/* gpt-oss and Qwen3.5 call the norm before the feed-forward post_attention_norm. */
static const role_name ffn_norm_named_post_attention[] = {
    { ROLE_FFN_NORM, "blk.%d.post_attention_norm.weight" }, { ROLE_POST_ATTN_NORM, NULL }, { -1, NULL } };

/* LFM2's final norm is stored as token_embd_norm (its HF name is embedding_norm; it follows the
 * last layer, not the embedding). */
static const role_name lfm2_gguf[] = { { ROLE_OUTPUT_NORM, "token_embd_norm.weight" }, { -1, NULL } };

/* Hugging Face names, relative to the model prefix; lm_head sits outside it. Expert names with a
 * second %d are one tensor per expert. */
#define HF_COMMON \
    [ROLE_TOKEN_EMBD] = "embed_tokens.weight", [ROLE_OUTPUT] = "lm_head.weight", \
    [ROLE_OUTPUT_NORM] = "norm.weight", \
    [ROLE_ATTN_Q] = "layers.%d.self_attn.q_proj.weight", [ROLE_ATTN_K] = "layers.%d.self_attn.k_proj.weight", \
    [ROLE_ATTN_V] = "layers.%d.self_attn.v_proj.weight", [ROLE_ATTN_OUT] = "layers.%d.self_attn.o_proj.weight", \
    [ROLE_ATTN_Q_NORM] = "layers.%d.self_attn.q_norm.weight", [ROLE_ATTN_K_NORM] = "layers.%d.self_attn.k_norm.weight", \
    [ROLE_FFN_GATE] = "layers.%d.mlp.gate_proj.weight", [ROLE_FFN_UP] = "layers.%d.mlp.up_proj.weight", \
    [ROLE_FFN_DOWN] = "layers.%d.mlp.down_proj.weight"
#define HF_BIASES \
    [ROLE_ATTN_Q_BIAS] = "layers.%d.self_attn.q_proj.bias", [ROLE_ATTN_K_BIAS] = "layers.%d.self_attn.k_proj.bias", \
    [ROLE_ATTN_V_BIAS] = "layers.%d.self_attn.v_proj.bias", [ROLE_ATTN_OUT_BIAS] = "layers.%d.self_attn.o_proj.bias"

/* Llama and the families that kept its names: "post_attention_layernorm" is the norm before the MLP. */
static const tensor_names llama_hf = { {
    HF_COMMON, HF_BIASES,
    [ROLE_ATTN_NORM] = "layers.%d.input_layernorm.weight",
    [ROLE_FFN_NORM] = "layers.%d.post_attention_layernorm.weight",
} };

/* Qwen3-MoE: experts one tensor each, the router named "gate". */
static const tensor_names qwen3moe_hf = { {
    HF_COMMON,
    [ROLE_ATTN_NORM] = "layers.%d.input_layernorm.weight",
    [ROLE_FFN_NORM] = "layers.%d.post_attention_layernorm.weight",
    [ROLE_ROUTER] = "layers.%d.mlp.gate.weight",
    [ROLE_EXP_GATE] = "layers.%d.mlp.experts.%d.gate_proj.weight",
    [ROLE_EXP_UP] = "layers.%d.mlp.experts.%d.up_proj.weight",
    [ROLE_EXP_DOWN] = "layers.%d.mlp.experts.%d.down_proj.weight",
} };

/* Mixtral: w1 = gate, w3 = up, w2 = down, one tensor per expert. */
static const tensor_names mixtral_hf = { {
    HF_COMMON,
    [ROLE_ATTN_NORM] = "layers.%d.input_layernorm.weight",
    [ROLE_FFN_NORM] = "layers.%d.post_attention_layernorm.weight",
    [ROLE_ROUTER] = "layers.%d.block_sparse_moe.gate.weight",
    [ROLE_EXP_GATE] = "layers.%d.block_sparse_moe.experts.%d.w1.weight",
    [ROLE_EXP_UP] = "layers.%d.block_sparse_moe.experts.%d.w3.weight",
    [ROLE_EXP_DOWN] = "layers.%d.block_sparse_moe.experts.%d.w2.weight",
} };

/* gpt-oss: biases everywhere, attention sinks, experts stacked input-major (see layout.h). */
static const tensor_names gpt_oss_hf = { {
    HF_COMMON, HF_BIASES,
    [ROLE_ATTN_NORM] = "layers.%d.input_layernorm.weight",
    [ROLE_FFN_NORM] = "layers.%d.post_attention_layernorm.weight",
    [ROLE_ATTN_SINKS] = "layers.%d.self_attn.sinks",
    [ROLE_ROUTER] = "layers.%d.mlp.router.weight", [ROLE_ROUTER_BIAS] = "layers.%d.mlp.router.bias",
    [ROLE_EXP_GATE_UP] = "layers.%d.mlp.experts.gate_up_proj",
    [ROLE_EXP_GATE_UP_BIAS] = "layers.%d.mlp.experts.gate_up_proj_bias",
    [ROLE_EXP_DOWN] = "layers.%d.mlp.experts.down_proj",
    [ROLE_EXP_DOWN_BIAS] = "layers.%d.mlp.experts.down_proj_bias",
} };

/* Gemma: a norm before and after each sublayer; Gemma 4's layer scalar and per-layer embeddings. */
static const tensor_names gemma_hf = { {
    HF_COMMON,
    [ROLE_ATTN_NORM] = "layers.%d.input_layernorm.weight",
    [ROLE_POST_ATTN_NORM] = "layers.%d.post_attention_layernorm.weight",
    [ROLE_FFN_NORM] = "layers.%d.pre_feedforward_layernorm.weight",
    [ROLE_POST_FFN_NORM] = "layers.%d.post_feedforward_layernorm.weight",
    [ROLE_LAYER_SCALE] = "layers.%d.layer_scalar",
    [ROLE_PLE_EMBD] = "embed_tokens_per_layer.weight",
    [ROLE_PLE_MODEL_PROJ] = "per_layer_model_projection.weight",
    [ROLE_PLE_PROJ_NORM] = "per_layer_projection_norm.weight",
    [ROLE_PLE_GATE] = "layers.%d.per_layer_input_gate.weight",
    [ROLE_PLE_PROJ] = "layers.%d.per_layer_projection.weight",
    [ROLE_PLE_POST_NORM] = "layers.%d.post_per_layer_input_norm.weight",
    [ROLE_ROUTER] = "layers.%d.router.proj.weight", [ROLE_ROUTER_SCALE] = "layers.%d.router.scale",
    [ROLE_EXP_SCALE] = "layers.%d.router.per_expert_scale",
    [ROLE_EXP_GATE_UP] = "layers.%d.experts.gate_up_proj", [ROLE_EXP_DOWN] = "layers.%d.experts.down_proj",
    [ROLE_MOE_IN_NORM] = "layers.%d.pre_feedforward_layernorm_2.weight",
    [ROLE_MOE_OUT_NORM] = "layers.%d.post_feedforward_layernorm_2.weight",
    [ROLE_DENSE_OUT_NORM] = "layers.%d.post_feedforward_layernorm_1.weight",
} };

/* OLMo 2: norms only after the sublayers. */
static const tensor_names olmo2_hf = { {
    HF_COMMON,
    [ROLE_POST_ATTN_NORM] = "layers.%d.post_attention_layernorm.weight",
    [ROLE_POST_FFN_NORM] = "layers.%d.post_feedforward_layernorm.weight",
} };

/* Phi-3: fused q/k/v and gate/up projections. */
static const tensor_names phi3_hf = { {
    [ROLE_TOKEN_EMBD] = "embed_tokens.weight", [ROLE_OUTPUT] = "lm_head.weight",
    [ROLE_OUTPUT_NORM] = "norm.weight",
    [ROLE_ATTN_NORM] = "layers.%d.input_layernorm.weight",
    [ROLE_ATTN_QKV] = "layers.%d.self_attn.qkv_proj.weight", [ROLE_ATTN_OUT] = "layers.%d.self_attn.o_proj.weight",
    [ROLE_FFN_NORM] = "layers.%d.post_attention_layernorm.weight",
    [ROLE_FFN_GATE_UP] = "layers.%d.mlp.gate_up_proj.weight", [ROLE_FFN_DOWN] = "layers.%d.mlp.down_proj.weight",
} };

/* Qwen3.5: gated attention layers (self_attn) and gated DeltaNet layers (linear_attn); the norm
 * before the MLP keeps Llama's name; Qwen3.5-MoE experts fused gate_up, a gated shared expert. */
#define QWEN35_HF \
    HF_COMMON, \
    [ROLE_ATTN_NORM] = "layers.%d.input_layernorm.weight", \
    [ROLE_FFN_NORM] = "layers.%d.post_attention_layernorm.weight", \
    [ROLE_DELTA_QKV] = "layers.%d.linear_attn.in_proj_qkv.weight", [ROLE_DELTA_Z] = "layers.%d.linear_attn.in_proj_z.weight", \
    [ROLE_DELTA_BETA] = "layers.%d.linear_attn.in_proj_b.weight", [ROLE_DELTA_ALPHA] = "layers.%d.linear_attn.in_proj_a.weight", \
    [ROLE_SSM_CONV] = "layers.%d.linear_attn.conv1d.weight", [ROLE_SSM_A] = "layers.%d.linear_attn.A_log", \
    [ROLE_SSM_DT_BIAS] = "layers.%d.linear_attn.dt_bias", [ROLE_SSM_NORM] = "layers.%d.linear_attn.norm.weight", \
    [ROLE_SSM_OUT] = "layers.%d.linear_attn.out_proj.weight"
static const tensor_names qwen35_hf = { { QWEN35_HF } };
static const tensor_names qwen35moe_hf = { {
    QWEN35_HF,
    [ROLE_ROUTER] = "layers.%d.mlp.gate.weight",
    [ROLE_EXP_GATE_UP] = "layers.%d.mlp.experts.gate_up_proj", [ROLE_EXP_DOWN] = "layers.%d.mlp.experts.down_proj",
    [ROLE_SHEXP_GATE] = "layers.%d.mlp.shared_expert.gate_proj.weight", [ROLE_SHEXP_UP] = "layers.%d.mlp.shared_expert.up_proj.weight",
    [ROLE_SHEXP_DOWN] = "layers.%d.mlp.shared_expert.down_proj.weight", [ROLE_SHEXP_GATE_INP] = "layers.%d.mlp.shared_expert_gate.weight",
} };

/* LFM2: one operator_norm before either kind of layer, w1 / w3 / w2 for gate / up / down. */
static const tensor_names lfm2_hf = { {
    [ROLE_TOKEN_EMBD] = "embed_tokens.weight", [ROLE_OUTPUT] = "lm_head.weight",
    [ROLE_OUTPUT_NORM] = "embedding_norm.weight",
    [ROLE_ATTN_NORM] = "layers.%d.operator_norm.weight",
    [ROLE_ATTN_Q] = "layers.%d.self_attn.q_proj.weight", [ROLE_ATTN_K] = "layers.%d.self_attn.k_proj.weight",
    [ROLE_ATTN_V] = "layers.%d.self_attn.v_proj.weight", [ROLE_ATTN_OUT] = "layers.%d.self_attn.out_proj.weight",
    [ROLE_ATTN_Q_NORM] = "layers.%d.self_attn.q_layernorm.weight", [ROLE_ATTN_K_NORM] = "layers.%d.self_attn.k_layernorm.weight",
    [ROLE_FFN_NORM] = "layers.%d.ffn_norm.weight",
    [ROLE_FFN_GATE] = "layers.%d.feed_forward.w1.weight", [ROLE_FFN_UP] = "layers.%d.feed_forward.w3.weight",
    [ROLE_FFN_DOWN] = "layers.%d.feed_forward.w2.weight",
    [ROLE_SHORTCONV_IN] = "layers.%d.conv.in_proj.weight", [ROLE_SHORTCONV_CONV] = "layers.%d.conv.conv.weight",
    [ROLE_SHORTCONV_OUT] = "layers.%d.conv.out_proj.weight",
} };

/* Granite 4.0-H: Mamba-2 layers (mamba) beside attention layers (self_attn); the MLP
 * (shared_mlp, fused [gate; up]) is the dense feed-forward, or with experts (block_sparse_moe:
 * stacked, fused [gate; up] per expert) the shared expert, under the same names. */
static const tensor_names granitehybrid_hf = { {
    [ROLE_TOKEN_EMBD] = "embed_tokens.weight", [ROLE_OUTPUT] = "lm_head.weight", [ROLE_OUTPUT_NORM] = "norm.weight",
    [ROLE_ATTN_Q] = "layers.%d.self_attn.q_proj.weight", [ROLE_ATTN_K] = "layers.%d.self_attn.k_proj.weight",
    [ROLE_ATTN_V] = "layers.%d.self_attn.v_proj.weight", [ROLE_ATTN_OUT] = "layers.%d.self_attn.o_proj.weight",
    [ROLE_ATTN_NORM] = "layers.%d.input_layernorm.weight",
    [ROLE_FFN_NORM] = "layers.%d.post_attention_layernorm.weight",
    [ROLE_FFN_GATE_UP] = "layers.%d.shared_mlp.input_linear.weight", [ROLE_FFN_DOWN] = "layers.%d.shared_mlp.output_linear.weight",
    [ROLE_ROUTER] = "layers.%d.block_sparse_moe.router.layer.weight",
    [ROLE_EXP_GATE_UP] = "layers.%d.block_sparse_moe.input_linear.weight",
    [ROLE_EXP_DOWN] = "layers.%d.block_sparse_moe.output_linear.weight",
    [ROLE_SHEXP_GATE_UP] = "layers.%d.shared_mlp.input_linear.weight", [ROLE_SHEXP_DOWN] = "layers.%d.shared_mlp.output_linear.weight",
    [ROLE_SSM_IN] = "layers.%d.mamba.in_proj.weight", [ROLE_SSM_CONV] = "layers.%d.mamba.conv1d.weight",
    [ROLE_SSM_CONV_BIAS] = "layers.%d.mamba.conv1d.bias", [ROLE_SSM_A] = "layers.%d.mamba.A_log",
    [ROLE_SSM_D] = "layers.%d.mamba.D", [ROLE_SSM_DT_BIAS] = "layers.%d.mamba.dt_bias",
    [ROLE_SSM_NORM] = "layers.%d.mamba.norm.weight", [ROLE_SSM_OUT] = "layers.%d.mamba.out_proj.weight",
} };

/* DeepSeek V3 and GLM-4.5: the router "gate" with its selection bias, experts one tensor each,
 * shared experts under one name. */
#define SIGMOID_MOE_HF \
    [ROLE_ATTN_NORM] = "layers.%d.input_layernorm.weight", \
    [ROLE_FFN_NORM] = "layers.%d.post_attention_layernorm.weight", \
    [ROLE_ROUTER] = "layers.%d.mlp.gate.weight", [ROLE_EXP_SELECT_BIAS] = "layers.%d.mlp.gate.e_score_correction_bias", \
    [ROLE_EXP_GATE] = "layers.%d.mlp.experts.%d.gate_proj.weight", \
    [ROLE_EXP_UP] = "layers.%d.mlp.experts.%d.up_proj.weight", \
    [ROLE_EXP_DOWN] = "layers.%d.mlp.experts.%d.down_proj.weight", \
    [ROLE_SHEXP_GATE] = "layers.%d.mlp.shared_experts.gate_proj.weight", \
    [ROLE_SHEXP_UP] = "layers.%d.mlp.shared_experts.up_proj.weight", \
    [ROLE_SHEXP_DOWN] = "layers.%d.mlp.shared_experts.down_proj.weight"
/* DeepSeek V3: latent attention (a low-rank q path or a plain q_proj, one kv_b_proj to split). */
static const tensor_names deepseek_hf = { {
    HF_COMMON, SIGMOID_MOE_HF,
    [ROLE_MLA_Q_A] = "layers.%d.self_attn.q_a_proj.weight", [ROLE_MLA_Q_A_NORM] = "layers.%d.self_attn.q_a_layernorm.weight",
    [ROLE_MLA_Q_B] = "layers.%d.self_attn.q_b_proj.weight", [ROLE_MLA_KV_A] = "layers.%d.self_attn.kv_a_proj_with_mqa.weight",
    [ROLE_MLA_KV_A_NORM] = "layers.%d.self_attn.kv_a_layernorm.weight", [ROLE_MLA_KV_B] = "layers.%d.self_attn.kv_b_proj.weight",
} };
static const tensor_names glm4moe_hf = { { HF_COMMON, HF_BIASES, SIGMOID_MOE_HF } };

/* ---- the table ---- */

static const arch_desc ARCHES[] = {
    { .name = "llama", .hf_model_types = { "llama", "mistral" },
      .activation = ACT_SILU, .norms = NORMS_PRE, .qk_norm = QK_NORM_NONE, .attn_scale = SCALE_HEAD_DIM,
      .gating = GATING_SOFTMAX_TOPK, .expert_activation = ACT_SILU,
      .gguf = { .qk_permuted = true, .gating_renorm = true },
      .hf = { .names = &llama_hf, .window_every_layer = true, .gating_renorm = true } },
    /* Mixtral's folders; its GGUFs are arch llama with experts */
    { .name = "mixtral", .hf_model_types = { "mixtral" },
      .activation = ACT_SILU, .norms = NORMS_PRE, .qk_norm = QK_NORM_NONE, .attn_scale = SCALE_HEAD_DIM,
      .gating = GATING_SOFTMAX_TOPK, .expert_activation = ACT_SILU,
      .gguf = { .gating_renorm = true },
      .hf = { .names = &mixtral_hf, .window_every_layer = true, .gating_renorm = true } },
    { .name = "qwen2", .hf_model_types = { "qwen2" },
      .activation = ACT_SILU, .norms = NORMS_PRE, .qk_norm = QK_NORM_NONE, .attn_scale = SCALE_HEAD_DIM,
      .hf = { .names = &llama_hf } },
    { .name = "qwen3", .hf_model_types = { "qwen3" },
      .activation = ACT_SILU, .norms = NORMS_PRE, .qk_norm = QK_NORM_HEAD, .attn_scale = SCALE_HEAD_DIM,
      .hf = { .names = &llama_hf } },
    { .name = "gemma3", .hf_model_types = { "gemma3", "gemma3_text" },
      .activation = ACT_GELU_TANH, .norms = NORMS_SANDWICH, .qk_norm = QK_NORM_HEAD,
      .attn_scale = SCALE_QPAS, .swa_scaling = SWA_SCALED_UNLESS_LOCAL_BASE,
      .embed_scale_sqrt = true, .default_theta_swa = 10000.0f,
      .gguf = { .sliding_period = 6, .scale_hidden_layers = 62 },
      .hf = { .names = &gemma_hf, .norm_plus_one = true, .tied_by_default = true, .sliding_period = 6 } },
    { .name = "gemma2", .hf_model_types = { "gemma2" },
      .activation = ACT_GELU_TANH, .norms = NORMS_SANDWICH, .qk_norm = QK_NORM_NONE, .attn_scale = SCALE_QPAS,
      .embed_scale_sqrt = true,
      .gguf = { .sliding_period = 2, .scale_hidden_layers = 46, .default_window = 4096 },
      .hf = { .names = &gemma_hf, .norm_plus_one = true, .tied_by_default = true, .sliding_period = 2 } },
    { .name = "gemma4", .hf_model_types = { "gemma4", "gemma4_text" },
      .activation = ACT_GELU_TANH, .norms = NORMS_SANDWICH, .qk_norm = QK_NORM_HEAD,
      .attn_scale = SCALE_ONE, .swa_scaling = SWA_SCALED_UNLESS_LOCAL_BASE,
      .embed_scale_sqrt = true, .v_norm = true, .k_eq_v_full = true, .default_theta_swa = 10000.0f,
      .gating = GATING_SOFTMAX_TOPK, .expert_activation = ACT_GELU_TANH,
      .gguf = { .gating_renorm = true, .v_optional_any_layer = true },
      .hf = { .names = &gemma_hf, .tied_by_default = true, .gating_renorm = true } },
    { .name = "qwen3moe", .hf_model_types = { "qwen3_moe" },
      .activation = ACT_SILU, .norms = NORMS_PRE, .qk_norm = QK_NORM_HEAD, .attn_scale = SCALE_HEAD_DIM,
      .gating = GATING_SOFTMAX_TOPK, .expert_activation = ACT_SILU,
      .gguf = { .gating_renorm = true },
      .hf = { .names = &qwen3moe_hf, .gating_renorm = true } },
    { .name = "gpt-oss", .hf_model_types = { "gpt_oss" },
      .activation = ACT_SILU, .norms = NORMS_PRE, .qk_norm = QK_NORM_NONE, .attn_scale = SCALE_HEAD_DIM,
      .gating = GATING_TOPK_SOFTMAX, .expert_activation = ACT_SWIGLU_OAI,
      .gguf = { .renames = ffn_norm_named_post_attention, .sliding_period = 2 },
      .hf = { .names = &gpt_oss_hf, .experts_input_major = true } },
    { .name = "smollm3", .hf_model_types = { "smollm3" },
      .activation = ACT_SILU, .norms = NORMS_PRE, .qk_norm = QK_NORM_NONE, .attn_scale = SCALE_HEAD_DIM,
      .gguf = { .qk_permuted = true, .nope_period = 4 },
      .hf = { .names = &llama_hf } },
    { .name = "olmo2", .hf_model_types = { "olmo2", "olmo3" },
      .activation = ACT_SILU, .norms = NORMS_POST, .qk_norm = QK_NORM_WHOLE, .attn_scale = SCALE_HEAD_DIM,
      .swa_scaling = SWA_UNSCALED,
      .gguf = { .sliding_period = 4 },
      .hf = { .names = &olmo2_hf } },
    { .name = "granite", .hf_model_types = { "granite" },
      .activation = ACT_SILU, .norms = NORMS_PRE, .qk_norm = QK_NORM_NONE, .attn_scale = SCALE_HEAD_DIM,
      .gguf = { .qk_permuted = true },
      .hf = { .names = &llama_hf } },
    { .name = "phi3", .hf_model_types = { "phi3" },
      .activation = ACT_SILU, .norms = NORMS_PRE, .qk_norm = QK_NORM_NONE, .attn_scale = SCALE_HEAD_DIM,
      .gguf = { .renames = phi3_gguf, .window_ignored = true },
      .hf = { .names = &phi3_hf, .window_every_layer = true } },
    /* Qwen3.5 / 3.6: three gated DeltaNet layers beside each gated attention layer (README-hybrid);
     * every norm but the DeltaNet's own is zero-centred (HF 1 + w; GGUF stores 1 + w) */
    { .name = "qwen35", .hf_model_types = { "qwen3_5_text", "qwen3_5" },
      .activation = ACT_SILU, .norms = NORMS_PRE, .qk_norm = QK_NORM_HEAD, .attn_scale = SCALE_HEAD_DIM,
      .attn_out_gate = true, .recurrent_kind = LAYER_DELTANET, .full_attention_interval = 4,
      .gguf = { .renames = ffn_norm_named_post_attention, .delta_v_tiled = true },
      .hf = { .names = &qwen35_hf, .norm_plus_one = true, .ssm_a_log = true } },
    { .name = "qwen35moe", .hf_model_types = { "qwen3_5_moe_text", "qwen3_5_moe" },
      .activation = ACT_SILU, .norms = NORMS_PRE, .qk_norm = QK_NORM_HEAD, .attn_scale = SCALE_HEAD_DIM,
      .attn_out_gate = true, .recurrent_kind = LAYER_DELTANET, .full_attention_interval = 4,
      .gating = GATING_SOFTMAX_TOPK, .expert_activation = ACT_SILU,
      .gguf = { .renames = ffn_norm_named_post_attention, .delta_v_tiled = true, .gating_renorm = true },
      .hf = { .names = &qwen35moe_hf, .norm_plus_one = true, .ssm_a_log = true, .gating_renorm = true } },
    /* LFM2: gated short-convolution layers beside attention layers (README-ssm.md); GGUF marks the
     * convolution layers by 0 KV heads, HF by layer_types */
    { .name = "lfm2", .hf_model_types = { "lfm2" },
      .activation = ACT_SILU, .norms = NORMS_PRE, .qk_norm = QK_NORM_HEAD, .attn_scale = SCALE_HEAD_DIM,
      .recurrent_kind = LAYER_SHORTCONV,
      .gguf = { .renames = lfm2_gguf },
      .hf = { .names = &lfm2_hf, .tied_by_default = true } },
    /* Granite 4.0-H: Mamba-2 layers beside attention layers without RoPE (README-ssm), Granite's
     * multipliers; experts (when stated) chosen by softmax over the top k, which is llama.cpp's
     * softmax over all renormalized; a shared expert beside them. The GGUF normalizes the Mamba-2
     * output per group, transformers over all of d_inner (the same model when n_groups is 1). */
    { .name = "granitehybrid", .hf_model_types = { "granitemoehybrid" },
      .activation = ACT_SILU, .norms = NORMS_PRE, .qk_norm = QK_NORM_NONE, .attn_scale = SCALE_HEAD_DIM,
      .recurrent_kind = LAYER_MAMBA2, .gating = GATING_SOFTMAX_TOPK, .expert_activation = ACT_SILU,
      .gguf = { .qk_permuted = true, .gating_renorm = true, .ssm_norm_per_group = true, .rope_switch_finetuned = true },
      .hf = { .names = &granitehybrid_hf, .gating_renorm = true, .ssm_a_log = true, .nope_by_default = true } },
    /* DeepSeek V2/V3 layout (also Kimi K2, GLM-4.7-Flash): latent attention with adjacent-pair RoPE on its
     * rotary part, sigmoid-scored experts chosen with a bias in groups (README-mla.md). llama.cpp reads
     * a GGUF's gating function, softmax when it states none; transformers' DeepseekV3 always uses sigmoid. */
    { .name = "deepseek2", .hf_model_types = { "deepseek_v3" },
      .activation = ACT_SILU, .norms = NORMS_PRE, .qk_norm = QK_NORM_NONE, .attn_scale = SCALE_HEAD_DIM,
      .attention_kind = LAYER_MLA, .gating = GATING_SIGMOID_TOPK, .expert_activation = ACT_SILU,
      .gguf = { .gating_func_read = true, .unstated_gating_softmax = true, .mla_yarn_kq_scale = true },
      .hf = { .names = &deepseek_hf, .mla_yarn_kq_scale = true, .lora_norm_eps = 1e-6f, .kv_b_fused = true, .group_fill_zero = true } },
    /* GLM-4.5 / 4.6: q/k/v biases, per-head q/k norms where present, NEOX RoPE on part of each head,
     * sigmoid-scored experts with a selection bias; a NextN block after the layers, not run */
    { .name = "glm4moe", .hf_model_types = { "glm4_moe" },
      .activation = ACT_SILU, .norms = NORMS_PRE, .qk_norm = QK_NORM_HEAD_IF_PRESENT, .attn_scale = SCALE_HEAD_DIM,
      .gating = GATING_SIGMOID_TOPK, .expert_activation = ACT_SILU,
      .gguf = { .renames = ffn_norm_named_post_attention, .gating_func_read = true },
      .hf = { .names = &glm4moe_hf, .group_fill_zero = true } },
    { .name = "mistral3", .hf_model_types = { "ministral3", "mistral3" },
      .activation = ACT_SILU, .norms = NORMS_PRE, .qk_norm = QK_NORM_NONE, .attn_scale = SCALE_HEAD_DIM,
      .gguf = { .qk_permuted = true, .yarn_betas = true },
      .hf = { .names = &llama_hf } },
};

const arch_desc *arch_by_gguf_name(const char *name, size_t len) {
    for (size_t i = 0; i < sizeof ARCHES / sizeof ARCHES[0]; i++)
        if (strlen(ARCHES[i].name) == len && !memcmp(ARCHES[i].name, name, len)) return &ARCHES[i];
    return NULL;
}

const arch_desc *arch_by_hf_model_type(const char *model_type) {
    for (size_t i = 0; i < sizeof ARCHES / sizeof ARCHES[0]; i++)
        for (int j = 0; j < 4 && ARCHES[i].hf_model_types[j]; j++)
            if (!strcmp(ARCHES[i].hf_model_types[j], model_type)) return &ARCHES[i];
    return NULL;
}

const char *arch_tensor_name(const container_rules *r, int container, int role) {
    const tensor_names *names = r->names ? r->names : container == CONTAINER_GGUF ? &gguf_names : NULL;
    const char *fmt = names ? names->role[role] : NULL;
    for (const role_name *d = r->renames; d && d->role >= 0; d++)
        if (d->role == role) fmt = d->name;
    return fmt;
}

void arch_known_list(char *buf, size_t cap) {
    size_t used = 0;
    buf[0] = 0;
    for (size_t i = 0; i < sizeof ARCHES / sizeof ARCHES[0] && used < cap; i++)
        used += (size_t)snprintf(buf + used, cap - used, "%s%s", i ? ", " : "", ARCHES[i].name);
}

/* ---- what an unconsumed tensor is for ---- */

const char *arch_tensor_purpose(const char *name) {
    static const struct { const char *part, *purpose; } known[] = {
        { "_exps", "mixture-of-experts layers" }, { "ffn_gate_inp", "mixture-of-experts layers" },
        { "experts", "mixture-of-experts layers" }, { "router", "mixture-of-experts layers" },
        { "block_sparse_moe", "mixture-of-experts layers" }, { "mlp.gate.weight", "mixture-of-experts layers" },
        { "shexp", "shared experts" }, { "sinks", "attention sinks" },
        { "attn_kv_b", "an unsplit latent-attention decompression (an older conversion; llama.cpp's converter now writes attn_k_b and attn_v_b)" },
        { "nextn", "multi-token-prediction blocks" },
        { "vision", "a vision encoder" }, { "multi_modal", "a multimodal projector" },
        { "mm.", "a multimodal projector" }, { "audio", "an audio encoder" },
        { "ssm", "state-space layers" }, { "altup", "Gemma 3n layers" }, { "laurel", "Gemma 3n layers" },
        { ".bias", "biases" },
    };
    for (size_t i = 0; i < sizeof known / sizeof known[0]; i++)
        if (strstr(name, known[i].part)) return known[i].purpose;
    return NULL;
}
