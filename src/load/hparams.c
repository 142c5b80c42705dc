/* The hyper-parameter table (see hparams.h) and the one reader both containers run through. */
#include "load/hparams.h"
#include "load/model_arena.h"
#include "load/geometry.h"
#include "core/error.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define GGUF(k) [CONTAINER_GGUF] = k
#define HF(k) [CONTAINER_HF] = k
#define BOTH(v) { v, v }
#define SIZE(max) .lo = 1, .hi = (max)
#define COUNT(max) .lo = 0, .hi = (max)
#define POSITIVE(max) .lo = 0, .hi = (max), .lo_open = true
#define NONNEGATIVE .lo = 0, .hi = 1e30
#define NOT_STATED .def = BOTH(-1)
#define ANY_RANGE .lo = -1e300, .hi = 1e300

static const hp_choice ROPE_TYPES_GGUF[] = {
    { "none", ROPE_PLAIN }, { "linear", ROPE_LINEAR }, { "yarn", ROPE_YARN }, { NULL, 0 } };
static const hp_choice ROPE_TYPES_HF[] = {
    { "default", ROPE_PLAIN }, { "proportional", ROPE_PLAIN }, { "linear", ROPE_LINEAR }, { "yarn", ROPE_YARN },
    { "llama3", ROPE_LLAMA3 }, { "longrope", ROPE_LONGROPE }, { "su", ROPE_LONGROPE }, { NULL, 0 } };
static const hp_choice ROPE_TYPES_UNSCALED[] = { { "default", ROPE_PLAIN }, { "proportional", ROPE_PLAIN }, { NULL, 0 } };
static const hp_choice POSITION_TYPES[] = { { "nope", 0 }, { "rope", 1 }, { NULL, 0 } };
static const hp_choice NORM_FUNCTIONS[] = { { "rmsnorm", 0 }, { NULL, 0 } };
static const hp_choice ACTIVATIONS[] = {
    { "silu", ACT_SILU }, { "swish", ACT_SILU },
    { "gelu_pytorch_tanh", ACT_GELU_TANH }, { "gelu_tanh", ACT_GELU_TANH }, { "gelu_new", ACT_GELU_TANH }, { NULL, 0 } };
static const hp_choice LAYER_TYPES[] = {
    { "full_attention", LAYER_TYPE_FULL }, { "sliding_attention", LAYER_TYPE_SLIDING },
    { "attention", LAYER_TYPE_FULL }, { "linear_attention", LAYER_TYPE_LINEAR },
    { "conv", LAYER_TYPE_CONV }, { "mamba", LAYER_TYPE_MAMBA }, { NULL, 0 } };

/* The object members HF puts RoPE parameters under: rope_scaling (transformers 4), rope_parameters
 * (transformers 5), and its per-layer-kind form (Gemma 4: full_attention / sliding_attention). */
#define ROPE_OBJECTS "{rope_scaling,rope_parameters,rope_parameters.full_attention}"

static const char INERT_TRAINING[] = "a training setting";
static const char INERT_PACKAGING[] = "packaging, not the computation";
static const char INERT_TENSORS[] = "what it describes follows the tensors";

/* Rows whose values others depend on come first (n_layers sizes the per-layer arrays). */
static const hparam HPARAMS[] = {
    /* ---- sizes ---- */
    { { GGUF("block_count"), HF("num_hidden_layers") }, HP_INT, HP_USED, HP_AT(n_layers), 0, SIZE(HP_MAX_LAYERS) },
    { { GGUF("embedding_length"), HF("hidden_size") }, HP_INT, HP_USED, HP_AT(hidden), 0, SIZE(1 << 20) },
    { { GGUF("vocab_size"), HF("vocab_size") }, HP_INT, HP_USED, HP_AT(n_vocab), 0, SIZE(1 << 24) },
    { { GGUF("context_length"), HF("max_position_embeddings") }, HP_INT, HP_USED, HP_AT(n_ctx_train), 0, COUNT(1 << 30) },
    { { GGUF("feed_forward_length"), HF("intermediate_size|block_ff_dim") }, HP_INT, HP_USED, HP_AT(ffn_dim), 0, COUNT(1 << 24) },
    /* LFM2 derives its MLP width from block_ff_dim by these; the width follows the tensors */
    { { HF("block_auto_adjust_ff_dim") }, HP_ANY, HP_INERT, .why = INERT_TENSORS },
    { { HF("block_ffn_dim_multiplier") }, HP_ANY, HP_INERT, .why = INERT_TENSORS },
    { { HF("block_multiple_of") }, HP_ANY, HP_INERT, .why = INERT_TENSORS },
    { { GGUF("attention.layer_norm_rms_epsilon"), HF("rms_norm_eps|norm_eps") }, HP_FLOAT, HP_USED, HP_AT(norm_eps), 0,
      .lo = 0, .hi = 1, .lo_open = true, .def = { 1e-5, 1e-6 } },
    /* ---- attention heads ---- */
    /* per layer, 0 heads: a layer without attention (the builder checks each layer against its kind) */
    { { GGUF("attention.head_count"), HF("num_attention_heads") }, HP_LAYER_INTS, HP_USED, HP_AT(n_heads), HP_AT(layer_n_heads), COUNT(4096) },
    { { GGUF("attention.head_count_kv"), HF("num_key_value_heads") }, HP_LAYER_INTS, HP_USED, HP_AT(n_kv_heads), HP_AT(layer_n_kv_heads), COUNT(4096) },
    { { HF("num_global_key_value_heads") }, HP_INT, HP_USED, HP_AT(n_kv_heads_full), 0, SIZE(4096) },
    { { GGUF("attention.key_length"), HF("head_dim") }, HP_INT, HP_USED, HP_AT(head_dim), 0, SIZE(4096) },
    { { GGUF("attention.key_length_swa") }, HP_INT, HP_USED, HP_AT(head_dim_swa), 0, SIZE(4096) },
    { { HF("global_head_dim") }, HP_INT, HP_USED, HP_AT(head_dim_full), 0, SIZE(4096) },
    { { GGUF("attention.value_length") }, HP_INT, HP_USED, HP_AT(value_dim), 0, SIZE(4096) },
    { { GGUF("attention.value_length_swa") }, HP_INT, HP_USED, HP_AT(value_dim_swa), 0, SIZE(4096) },
    /* multi-head latent attention (README-mla.md); a GGUF without the q path may leave q_lora_rank out or say 0 */
    { { GGUF("attention.q_lora_rank"), HF("q_lora_rank") }, HP_INT, HP_USED, HP_AT(q_lora_rank), 0, COUNT(1 << 20) },
    { { GGUF("attention.kv_lora_rank"), HF("kv_lora_rank") }, HP_INT, HP_USED, HP_AT(kv_lora_rank), 0, COUNT(1 << 20) },
    { { GGUF("attention.key_length_mla") }, HP_INT, HP_USED, HP_AT(mla_key_dim), 0, SIZE(4096) },
    { { GGUF("attention.value_length_mla") }, HP_INT, HP_USED, HP_AT(mla_value_dim), 0, SIZE(4096) },
    { { HF("qk_nope_head_dim") }, HP_INT, HP_USED, HP_AT(mla_nope_dim), 0, SIZE(4096) },
    { { HF("qk_rope_head_dim") }, HP_INT, HP_USED, HP_AT(mla_rope_dim), 0, SIZE(4096) },
    { { HF("v_head_dim") }, HP_INT, HP_USED, HP_AT(mla_v_dim), 0, SIZE(4096) },
    { { HF("rope_interleave") }, HP_BOOL, HP_USED, HP_AT(rope_interleave), 0, .lo = 0, .hi = 1, NOT_STATED },
    { { HF("use_qk_norm") }, HP_BOOL, HP_USED, HP_AT(use_qk_norm), 0, .lo = 0, .hi = 1, NOT_STATED },
    { { GGUF("attention.causal") }, HP_BOOL, HP_USED, 0, 0, .lo = 1, .hi = 1,
      .why = "non-causal attention is not supported" },
    { { HF("attention_k_eq_v") }, HP_BOOL, HP_USED, HP_AT(k_eq_v), 0, .lo = 0, .hi = 1, NOT_STATED },
    { { GGUF("attention.shared_kv_layers"), HF("num_kv_shared_layers") }, HP_INT, HP_USED, HP_AT(n_shared_kv), 0, COUNT(HP_MAX_LAYERS) },
    /* ---- attention scores ---- */
    { { GGUF("attention.scale"), HF("attention_multiplier") }, HP_FLOAT, HP_USED, HP_AT(attn_scale), 0, NONNEGATIVE },
    { { HF("query_pre_attn_scalar") }, HP_DOUBLE, HP_USED, HP_AT(query_pre_attn_scalar), 0, POSITIVE(1e9) },
    { { GGUF("attn_logit_softcapping"), HF("attn_logit_softcapping") }, HP_FLOAT, HP_USED, HP_AT(attn_softcap), 0, NONNEGATIVE },
    /* ---- sliding windows ---- */
    { { GGUF("attention.sliding_window"), HF("sliding_window") }, HP_INT, HP_USED, HP_AT(window), 0, COUNT(1 << 24), NOT_STATED },
    { { HF("use_sliding_window") }, HP_BOOL, HP_USED, HP_AT(use_sliding_window), 0, .lo = 0, .hi = 1, NOT_STATED },
    { { HF("max_window_layers") }, HP_INT, HP_USED, HP_AT(max_window_layers), 0, COUNT(HP_MAX_LAYERS) },
    { { GGUF("attention.sliding_window_pattern"), HF("sliding_window_pattern") }, HP_LAYER_INTS, HP_USED,
      HP_AT(sliding_period), HP_AT(layer_types), .lo = 0, .hi = 1 << 20 },
    { { HF("layer_types") }, HP_LAYER_CHOICES, HP_USED, 0, HP_AT(layer_types), .choices = LAYER_TYPES },
    { { HF("sliding_window_size") }, HP_ANY, HP_INERT, .why = "Gemma 2 repeats sliding_window under this name" },
    /* ---- RoPE ---- */
    { { GGUF("rope.freq_base"), HF("rope_parameters.full_attention.rope_theta|rope_parameters.rope_theta|rope_theta") },
      HP_FLOAT, HP_USED, HP_AT(rope_theta), 0, POSITIVE(1e12), .def = BOTH(10000.0) },
    { { GGUF("rope.freq_base_swa"), HF("rope_parameters.sliding_attention.rope_theta|rope_local_base_freq") },
      HP_FLOAT, HP_USED, HP_AT(rope_theta_swa), 0, POSITIVE(1e12) },
    { { GGUF("rope.dimension_count") }, HP_INT, HP_USED, HP_AT(rope_dim), 0, SIZE(4096) },
    { { GGUF("rope.dimension_count_swa") }, HP_INT, HP_USED, HP_AT(rope_dim_swa), 0, SIZE(4096) },
    { { HF("partial_rotary_factor|rope_parameters.partial_rotary_factor") }, HP_DOUBLE, HP_USED, HP_AT(rope_partial), 0, POSITIVE(1) },
    { { HF("rope_parameters.full_attention.partial_rotary_factor") }, HP_FLOAT, HP_USED, HP_AT(rope_fraction), 0, COUNT(1) },
    { { HF("rope_parameters.sliding_attention.partial_rotary_factor") }, HP_FLOAT, HP_USED, HP_AT(rope_fraction_swa), 0, COUNT(1) },
    { { HF("rope_scaling") }, HP_OBJECT, HP_USED },
    { { HF("rope_parameters") }, HP_OBJECT, HP_USED },
    { { HF("rope_parameters.full_attention") }, HP_OBJECT, HP_USED },
    { { HF("rope_parameters.sliding_attention") }, HP_OBJECT, HP_USED },
    { { HF("rope_parameters.sliding_attention.rope_type") }, HP_CHOICE, HP_USED, .choices = ROPE_TYPES_UNSCALED,
      .why = "scaled RoPE on sliding layers is not supported" },
    { { GGUF("rope.scaling.type") }, HP_CHOICE, HP_USED, HP_AT(scaling.kind), .choices = ROPE_TYPES_GGUF,
      .why = "this rope scaling is not supported" },
    { { HF(ROPE_OBJECTS ".rope_type|" ROPE_OBJECTS ".type") }, HP_CHOICE, HP_USED, HP_AT(scaling.kind),
      .choices = ROPE_TYPES_HF, .why = "this rope scaling is not supported" },
    { { GGUF("rope.scaling.factor"), HF(ROPE_OBJECTS ".factor") }, HP_DOUBLE, HP_USED, HP_AT(scaling.factor), 0,
      ANY_RANGE, .def = BOTH(1.0) },
    { { GGUF("rope.scaling.original_context_length"), HF(ROPE_OBJECTS ".original_max_position_embeddings|original_max_position_embeddings") },
      HP_INT, HP_USED, HP_AT(scaling.orig_ctx), 0, COUNT(1 << 26) },
    { { GGUF("rope.scaling.attn_factor"), HF(ROPE_OBJECTS ".attention_factor") }, HP_DOUBLE, HP_USED,
      HP_AT(scaling.attn_factor), 0, ANY_RANGE, .def = { 1.0, -1.0 } },
    { { GGUF("rope.scaling.yarn_beta_fast"), HF(ROPE_OBJECTS ".beta_fast") }, HP_DOUBLE, HP_USED, HP_AT(scaling.beta_fast), 0,
      ANY_RANGE, .def = BOTH(32.0) },
    { { GGUF("rope.scaling.yarn_beta_slow"), HF(ROPE_OBJECTS ".beta_slow") }, HP_DOUBLE, HP_USED, HP_AT(scaling.beta_slow), 0,
      ANY_RANGE, .def = BOTH(1.0) },
    { { GGUF("rope.scaling.yarn_log_multiplier") }, HP_DOUBLE, HP_USED, HP_AT(scaling.yarn_log_multiplier), 0, ANY_RANGE },
    { { HF(ROPE_OBJECTS ".mscale") }, HP_DOUBLE, HP_USED, HP_AT(scaling.mscale_stated), 0, ANY_RANGE },
    { { HF(ROPE_OBJECTS ".mscale_all_dim") }, HP_DOUBLE, HP_USED, HP_AT(scaling.mscale_all_dim), 0, ANY_RANGE },
    { { HF(ROPE_OBJECTS ".truncate") }, HP_BOOL, HP_USED, HP_AT(scaling.truncate), 0, .lo = 0, .hi = 1, .def = BOTH(1) },
    { { HF(ROPE_OBJECTS ".low_freq_factor") }, HP_DOUBLE, HP_USED, HP_AT(scaling.low_freq_factor), 0, ANY_RANGE, .def = BOTH(1.0) },
    { { HF(ROPE_OBJECTS ".high_freq_factor") }, HP_DOUBLE, HP_USED, HP_AT(scaling.high_freq_factor), 0, ANY_RANGE, .def = BOTH(4.0) },
    { { HF(ROPE_OBJECTS ".short_factor") }, HP_FLOATS, HP_USED, HP_AT(scaling.short_factor), HP_AT(scaling.n_factors), ANY_RANGE },
    { { HF(ROPE_OBJECTS ".long_factor") }, HP_FLOATS, HP_USED, HP_AT(scaling.long_factor), HP_AT(scaling.n_long_factors), ANY_RANGE },
    { { GGUF("attention.temperature_scale"), HF(ROPE_OBJECTS ".llama_4_scaling_beta") }, HP_DOUBLE, HP_USED,
      HP_AT(scaling.temp_beta), 0, ANY_RANGE },
    { { GGUF("rope.scaling.yarn_ext_factor"), HF(ROPE_OBJECTS ".extrapolation_factor") }, HP_DOUBLE, HP_USED, 0, 0,
      .lo = 1, .hi = 1, .why = "a YaRN extrapolation factor other than 1 is not supported" },
    { { GGUF("rope.scaling.yarn_attn_factor") }, HP_ANY, HP_INERT, .why = "llama.cpp recomputes the YaRN magnitude from the factor" },
    /* a training note, except where the family's converter uses it as the RoPE switch (Granite 4.0-H) */
    { { GGUF("rope.scaling.finetuned") }, HP_BOOL, HP_USED, HP_AT(rope_finetuned), 0, .lo = 0, .hi = 1, NOT_STATED },
    { { HF("position_embedding_type") }, HP_CHOICE, HP_USED, HP_AT(position_rope), .choices = POSITION_TYPES, NOT_STATED,
      .why = "learned or absolute position embeddings are not supported" },
    { { HF(ROPE_OBJECTS ".rope_theta") }, HP_ANY, HP_USED },   /* read by the rope_theta rows */
    { { HF(ROPE_OBJECTS ".partial_rotary_factor") }, HP_ANY, HP_USED },   /* read by the partial rotary rows */
    { { GGUF("rope.dimension_sections"), HF("rope_parameters.mrope_section") }, HP_INTS, HP_USED, HP_AT(rope_sections),
      HP_AT(n_rope_sections), COUNT(4096) },
    { { HF("rope_parameters.mrope_interleaved") }, HP_ANY, HP_INERT, .why = "a text position is the same in every stream" },
    { { HF("no_rope_layers") }, HP_LAYER_INTS, HP_USED, 0, HP_AT(layer_rope), .lo = 0, .hi = 1 },
    { { HF("no_rope_layer_interval") }, HP_INT, HP_USED, HP_AT(nope_period), 0, COUNT(4096) },
    { { HF("initial_context_length") }, HP_ANY, HP_INERT, .why = "the training context before RoPE scaling, which rope_scaling states" },
    /* ---- scales ---- */
    { { GGUF("embedding_scale"), HF("embedding_multiplier") }, HP_FLOAT, HP_USED, HP_AT(embed_scale), 0, NONNEGATIVE },
    { { GGUF("residual_scale"), HF("residual_multiplier") }, HP_FLOAT, HP_USED, HP_AT(residual_scale), 0, NONNEGATIVE },
    { { GGUF("logit_scale"), HF("logits_scaling") }, HP_FLOAT, HP_USED, HP_AT(logit_scale), 0, NONNEGATIVE },
    { { GGUF("final_logit_softcapping"), HF("final_logit_softcapping") }, HP_FLOAT, HP_USED, HP_AT(final_softcap), 0, NONNEGATIVE },
    /* ---- the feed-forward ---- */
    { { HF("hidden_activation|hidden_act") }, HP_CHOICE, HP_USED, HP_AT(activation), .choices = ACTIVATIONS, NOT_STATED,
      .why = "this activation is not supported" },
    { { HF("swiglu_limit") }, HP_DOUBLE, HP_USED, 0, 0, .lo = 7, .hi = 7, .why = "only gpt-oss's 7 is supported" },
    { { HF("use_double_wide_mlp") }, HP_ANY, HP_INERT, .why = INERT_TENSORS },
    /* ---- mixture of experts ---- */
    { { GGUF("expert_count"), HF("num_local_experts|num_experts|n_routed_experts") }, HP_INT, HP_USED, HP_AT(n_experts), 0, COUNT(4096) },
    { { GGUF("expert_used_count"), HF("num_experts_per_tok|top_k_experts|experts_per_token") }, HP_INT, HP_USED,
      HP_AT(n_experts_used), 0, COUNT(4096) },
    { { GGUF("expert_feed_forward_length"), HF("moe_intermediate_size") }, HP_INT, HP_USED, HP_AT(expert_ffn_dim), 0, SIZE(1 << 24) },
    { { GGUF("expert_weights_norm"), HF("norm_topk_prob") }, HP_BOOL, HP_USED, HP_AT(gating_renorm), 0, .lo = 0, .hi = 1, NOT_STATED },
    { { GGUF("expert_gating_func") }, HP_INT, HP_USED, HP_AT(gating_func), 0, .lo = 1, .hi = 2,
      .why = "only softmax (1) and sigmoid (2) gating are supported" },
    { { HF("scoring_func") }, HP_ANY, HP_INERT, .why = "transformers' DeepseekV3 and Glm4Moe gate by sigmoid whatever it says" },
    { { GGUF("expert_shared_count"), HF("n_shared_experts") }, HP_INT, HP_USED, HP_AT(n_shared_experts), 0, COUNT(64) },
    { { GGUF("expert_weights_scale"), HF("routed_scaling_factor") }, HP_FLOAT, HP_USED, HP_AT(routed_scale), 0, NONNEGATIVE },
    { { GGUF("expert_group_count"), HF("n_group") }, HP_INT, HP_USED, HP_AT(n_group), 0, COUNT(4096) },
    { { GGUF("expert_group_used_count"), HF("topk_group") }, HP_INT, HP_USED, HP_AT(topk_group), 0, COUNT(4096) },
    { { HF("topk_method") }, HP_ANY, HP_INERT, .why = "transformers' DeepseekV3 always selects by the bias-corrected score" },
    { { HF("first_k_dense_replace") }, HP_ANY, HP_INERT, .why = INERT_TENSORS },
    { { HF("moe_layer_freq") }, HP_ANY, HP_INERT, .why = INERT_TENSORS },
    { { HF("ep_size") }, HP_ANY, HP_INERT, .why = "an expert-parallel split of the same products" },
    { { HF("aux_loss_alpha") }, HP_ANY, HP_INERT, .why = INERT_TRAINING },
    { { HF("seq_aux") }, HP_ANY, HP_INERT, .why = INERT_TRAINING },
    { { GGUF("leading_dense_block_count") }, HP_ANY, HP_INERT, .why = INERT_TENSORS },
    { { HF("enable_moe_block") }, HP_ANY, HP_INERT, .why = INERT_TENSORS },
    { { HF("mlp_only_layers") }, HP_ANY, HP_INERT, .why = INERT_TENSORS },
    { { HF("decoder_sparse_step") }, HP_ANY, HP_INERT, .why = INERT_TENSORS },
    /* ---- recurrent layers: which layers, and their state-space sizes (each kind reads them its way) ---- */
    { { GGUF("full_attention_interval"), HF("full_attention_interval") }, HP_INT, HP_USED, HP_AT(full_attention_interval), 0,
      SIZE(HP_MAX_LAYERS) },
    { { GGUF("attention.recurrent_layers") }, HP_LAYER_INTS, HP_USED, 0, HP_AT(layer_recurrent), .lo = 0, .hi = 1 },
    { { GGUF("ssm.conv_kernel"), HF("linear_conv_kernel_dim|mamba_d_conv") }, HP_INT, HP_USED, HP_AT(ssm_conv_kernel), 0, SIZE(64) },
    { { GGUF("ssm.state_size"), HF("linear_key_head_dim|mamba_d_state") }, HP_INT, HP_USED, HP_AT(ssm_state_size), 0, SIZE(4096) },
    { { HF("linear_value_head_dim|mamba_d_head") }, HP_INT, HP_USED, HP_AT(ssm_head_v), 0, SIZE(4096) },
    { { GGUF("ssm.group_count"), HF("linear_num_key_heads|mamba_n_groups") }, HP_INT, HP_USED, HP_AT(ssm_group_count), 0, SIZE(4096) },
    { { GGUF("ssm.time_step_rank"), HF("linear_num_value_heads|mamba_n_heads") }, HP_INT, HP_USED, HP_AT(ssm_time_step_rank), 0, SIZE(65536) },
    { { GGUF("shortconv.l_cache"), HF("conv_L_cache") }, HP_INT, HP_USED, HP_AT(ssm_conv_kernel), 0, SIZE(64) },
    { { HF("conv_bias") }, HP_BOOL, HP_USED, 0, 0, .lo = 0, .hi = 0, .why = "a bias on the short convolution is not supported" },
    { { HF("use_pos_enc") }, HP_BOOL, HP_USED, 0, 0, .lo = 1, .hi = 1, .why = "LFM2 without RoPE is not supported" },
    { { HF("block_use_swiglu") }, HP_BOOL, HP_USED, 0, 0, .lo = 1, .hi = 1, .why = "LFM2 without a gated MLP is not supported" },
    { { HF("block_dim") }, HP_ANY, HP_INERT, .why = "LFM2 repeats hidden_size" },
    { { HF("conv_dim") }, HP_ANY, HP_INERT, .why = INERT_TENSORS },
    { { HF("conv_dim_out") }, HP_ANY, HP_INERT, .why = INERT_TENSORS },
    { { HF("block_norm_eps") }, HP_ANY, HP_INERT, .why = "LFM2 reads norm_eps" },
    { { HF("num_heads") }, HP_ANY, HP_INERT, .why = "LFM2 repeats num_attention_heads" },
    { { HF("tie_embedding") }, HP_ANY, HP_INERT, .why = "LFM2 repeats tie_word_embeddings" },
    { { HF("block_mlp_init_scale") }, HP_ANY, HP_INERT, .why = INERT_TRAINING },
    { { HF("block_out_init_scale") }, HP_ANY, HP_INERT, .why = INERT_TRAINING },
    { { HF("block_use_xavier_init") }, HP_ANY, HP_INERT, .why = INERT_TRAINING },
    { { HF("conv_use_xavier_init") }, HP_ANY, HP_INERT, .why = INERT_TRAINING },
    { { GGUF("ssm.inner_size") }, HP_INT, HP_USED, HP_AT(ssm_inner_size), 0, SIZE(1 << 24) },
    { { HF("mamba_expand") }, HP_INT, HP_USED, HP_AT(ssm_expand), 0, SIZE(64) },
    { { HF("mamba_conv_bias") }, HP_BOOL, HP_USED, HP_AT(ssm_conv_bias), 0, .lo = 0, .hi = 1, NOT_STATED },
    { { HF("mamba_proj_bias") }, HP_ANY, HP_REFUSED, .why = "biases of the Mamba-2 projections are not supported" },
    { { HF("mamba_chunk_size") }, HP_ANY, HP_INERT, .why = "the chunked scan reorders the recurrence, which the engine runs position by position" },
    { { HF("mamba_ssm_dtype") }, HP_ANY, HP_INERT, .why = "the state's training type; the engine keeps it in f32" },
    { { HF("attn_output_gate") }, HP_ANY, HP_INERT, .why = "the family's attention is gated whatever it says, as in transformers" },
    /* multi-token prediction: draft blocks after the model's own, not run by plain decoding */
    { { GGUF("nextn_predict_layers") }, HP_INT, HP_USED, HP_AT(n_nextn), 0, COUNT(64) },
    { { HF("mtp_num_hidden_layers|num_nextn_predict_layers") }, HP_INT, HP_USED, HP_AT(n_mtp), 0, COUNT(64) },
    { { HF("mtp_use_dedicated_embeddings") }, HP_ANY, HP_INERT, .why = "a setting of the draft blocks" },
    /* ---- per-layer embeddings (Gemma 4) ---- */
    { { GGUF("embedding_length_per_layer_input"), HF("hidden_size_per_layer_input") }, HP_INT, HP_USED, HP_AT(ple_dim), 0, COUNT(65536) },
    { { HF("vocab_size_per_layer_input") }, HP_ANY, HP_INERT, .why = INERT_TENSORS },
    /* ---- the head and the tokens ---- */
    { { HF("tie_word_embeddings") }, HP_BOOL, HP_USED, HP_AT(tie), 0, .lo = 0, .hi = 1, NOT_STATED },
    { { HF("model_type") }, HP_ANY, HP_USED },                /* names the architecture row */
    { { HF("bos_token_id") }, HP_ANY, HP_USED },              /* read with the tokenizer */
    { { HF("eos_token_id") }, HP_ANY, HP_USED },
    /* ---- features the engine lacks ---- */
    { { GGUF("expert_shared_feed_forward_length"), HF("shared_expert_intermediate_size|shared_intermediate_size") }, HP_INT, HP_USED,
      HP_AT(shared_ffn_dim), 0, COUNT(1 << 24) },
    { { GGUF("attention.layer_norm_epsilon") }, HP_ANY, HP_REFUSED, .why = "LayerNorm (not RMSNorm) models are not supported" },
    { { GGUF("attention.clamp_kqv") }, HP_ANY, HP_REFUSED, .why = "clamped Q/K/V are not supported" },
    { { GGUF("use_parallel_residual"), HF("use_parallel_residual") }, HP_ANY, HP_REFUSED, .why = "parallel residual blocks are not supported" },
    { { HF("use_mrope") }, HP_ANY, HP_REFUSED, .why = "multimodal RoPE is not supported" },
    { { GGUF("pooling_type") }, HP_ANY, HP_REFUSED, .why = "embedding models are not supported" },
    { { GGUF("tensor_data_layout") }, HP_ANY, HP_REFUSED, .why = "a tensor layout other than the converter's is not supported" },
    { { HF("quantization_config") }, HP_ANY, HP_REFUSED, .why = "quantized checkpoints (GPTQ, AWQ, bitsandbytes, ...) are not supported" },
    { { HF("attention_chunk_size") }, HP_ANY, HP_REFUSED, .why = "chunked attention is not supported" },
    { { HF("altup_num_inputs") }, HP_ANY, HP_REFUSED, .why = "Gemma 3n layers are not supported" },
    { { HF("mlp_bias") }, HP_ANY, HP_REFUSED, .why = "MLP biases are not supported" },
    { { HF("normalization_function") }, HP_CHOICE, HP_USED, .choices = NORM_FUNCTIONS, .why = "only RMSNorm is supported" },
    /* ---- HF fields that describe training or packaging, never the computation ---- */
    { { HF("architectures") }, HP_ANY, HP_INERT, .why = INERT_PACKAGING },
    { { HF("torch_dtype") }, HP_ANY, HP_INERT, .why = INERT_PACKAGING },
    { { HF("dtype") }, HP_ANY, HP_INERT, .why = INERT_PACKAGING },
    { { HF("transformers_version") }, HP_ANY, HP_INERT, .why = INERT_PACKAGING },
    { { HF("_name_or_path") }, HP_ANY, HP_INERT, .why = INERT_PACKAGING },
    { { HF("auto_map") }, HP_ANY, HP_INERT, .why = INERT_PACKAGING },
    { { HF("tokenizer_class") }, HP_ANY, HP_INERT, .why = INERT_PACKAGING },
    { { HF("id2label") }, HP_ANY, HP_INERT, .why = INERT_PACKAGING },
    { { HF("label2id") }, HP_ANY, HP_INERT, .why = INERT_PACKAGING },
    { { HF("pad_token_id") }, HP_ANY, HP_INERT, .why = "padding is not used" },
    { { HF("sep_token_id") }, HP_ANY, HP_INERT, .why = "an encoder's token" },
    { { HF("decoder_start_token_id") }, HP_ANY, HP_INERT, .why = "an encoder-decoder's token" },
    { { HF("is_decoder") }, HP_ANY, HP_INERT, .why = INERT_PACKAGING },
    { { HF("tie_encoder_decoder") }, HP_ANY, HP_INERT, .why = "an encoder-decoder's setting" },
    { { HF("use_cache") }, HP_ANY, HP_INERT, .why = "a generation setting" },
    { { HF("cache_implementation") }, HP_ANY, HP_INERT, .why = "a generation setting" },
    { { HF("bad_words_ids") }, HP_ANY, HP_INERT, .why = "a generation setting" },
    { { HF("return_dict") }, HP_ANY, HP_INERT, .why = "an API setting" },
    { { HF("use_return_dict") }, HP_ANY, HP_INERT, .why = "an API setting" },
    { { HF("output_attentions") }, HP_ANY, HP_INERT, .why = "an API setting" },
    { { HF("output_hidden_states") }, HP_ANY, HP_INERT, .why = "an API setting" },
    { { HF("output_router_logits") }, HP_ANY, HP_INERT, .why = "an API setting" },
    { { HF("torchscript") }, HP_ANY, HP_INERT, .why = "an API setting" },
    { { HF("initializer_range") }, HP_ANY, HP_INERT, .why = INERT_TRAINING },
    { { HF("init_method") }, HP_ANY, HP_INERT, .why = INERT_TRAINING },
    { { HF("attention_dropout") }, HP_ANY, HP_INERT, .why = INERT_TRAINING },
    { { HF("hidden_dropout") }, HP_ANY, HP_INERT, .why = INERT_TRAINING },
    { { HF("dropout") }, HP_ANY, HP_INERT, .why = INERT_TRAINING },
    { { HF("embd_pdrop") }, HP_ANY, HP_INERT, .why = INERT_TRAINING },
    { { HF("resid_pdrop") }, HP_ANY, HP_INERT, .why = INERT_TRAINING },
    { { HF("attn_pdrop") }, HP_ANY, HP_INERT, .why = INERT_TRAINING },
    { { HF("router_aux_loss_coef") }, HP_ANY, HP_INERT, .why = INERT_TRAINING },
    { { HF("router_jitter_noise") }, HP_ANY, HP_INERT, .why = INERT_TRAINING },
    { { HF("pretraining_tp") }, HP_ANY, HP_INERT, .why = "a tensor-parallel split of the same products" },
    { { HF("attention_bias") }, HP_ANY, HP_INERT, .why = "biases follow the tensors" },
    { { HF("lm_head_bias") }, HP_ANY, HP_INERT, .why = "biases follow the tensors" },
    { { HF("interpolate_factor") }, HP_ANY, HP_INERT, .why = "Phi-3's unused setting" },
    { { HF("full_attn_mod") }, HP_ANY, HP_INERT, .why = "Phi-3's unused setting" },
};
#define N_HPARAMS (sizeof HPARAMS / sizeof HPARAMS[0])

/* ---- keys: alternatives and prefixes ---- */

/* Calls fn on each path a key spec stands for ("a|b", "{p,q}.c"), in order, until fn returns
 * true; returns whether one did. */
static bool each_path(const char *spec, bool (*fn)(void *ctx, const char *path), void *ctx) {
    for (const char *alt = spec; alt; ) {
        const char *bar = strchr(alt, '|');
        size_t len = bar ? (size_t)(bar - alt) : strlen(alt);
        char one[256];
        if (len >= sizeof one) len = sizeof one - 1;
        memcpy(one, alt, len);
        one[len] = 0;
        if (one[0] == '{') {   /* "{p,q}.rest" */
            char *close = strchr(one, '}');
            if (!close) return false;
            *close = 0;
            const char *rest = close + 1;
            for (char *p = one + 1; p; ) {
                char *comma = strchr(p, ',');
                if (comma) *comma = 0;
                char path[256];
                snprintf(path, sizeof path, "%s%s", p, rest);
                if (fn(ctx, path)) return true;
                p = comma ? comma + 1 : NULL;
            }
        } else if (fn(ctx, one)) {
            return true;
        }
        alt = bar ? bar + 1 : NULL;
    }
    return false;
}

static bool path_equals(void *ctx, const char *path) { return !strcmp(path, (const char *)ctx); }

const hparam *hparams_find(int container, const char *key) {
    for (size_t i = 0; i < N_HPARAMS; i++)
        if (HPARAMS[i].key[container] && each_path(HPARAMS[i].key[container], path_equals, (void *)key))
            return &HPARAMS[i];
    return NULL;
}

int hparams_refuse_unknown(const hparam_source *src, const char *key, ts_error *err) {
    return ts_fail(err, "%s: %s '%s%s' is not understood by this engine; refusing to answer from a model it may compute wrongly",
                   src->path, src->what, src->prefix, key);
}

/* ---- reading ---- */

typedef struct lookup { const hparam_source *src; hp_value v; char path[256]; } lookup;

static bool present_at(void *ctx, const char *path) {
    lookup *l = ctx;
    l->src->get(l->src, path, -1, &l->v);
    if (l->v.kind == HPV_ABSENT || l->v.kind == HPV_NULL) return false;   /* null counts as absent */
    snprintf(l->path, sizeof l->path, "%s", path);
    return true;
}

static void *field(model_hparams *hp, size_t at) { return (char *)hp + at - 1; }

static const char *kind_name(int kind) {
    static const char *const names[] = { "absent", "null", "a number", "a bool", "a string", "an array", "an object" };
    return names[kind];
}

/* The row's rule for a value that does not fit, as one message naming the key. */
static int refuse_value(const hparam_source *src, const hparam *r, const char *path, const char *shown, const char *expected,
                        ts_error *err) {
    return ts_fail(err, "%s: %s '%s%s' is %s; expected %s%s%s%s", src->path, src->what, src->prefix, path, shown, expected,
                   r->why ? " (" : "", r->why ? r->why : "", r->why ? ")" : "");
}

static int check_number(const hparam_source *src, const hparam *r, const char *path, const hp_value *v, bool integer,
                        double *out, ts_error *err) {
    char shown[64], expected[96];
    if (v->kind == HPV_BOOL && integer) {   /* GGUF flags may be stored as bools */
        *out = v->boolean;
    } else if (v->kind != HPV_NUMBER) {
        snprintf(expected, sizeof expected, "%s", integer ? "an integer" : "a number");
        return refuse_value(src, r, path, kind_name(v->kind), expected, err);
    } else {
        *out = v->number;
    }
    bool ok = isfinite(*out) && *out <= r->hi && (r->lo_open ? *out > r->lo : *out >= r->lo) && (!integer || *out == floor(*out));
    if (ok) return 0;
    snprintf(shown, sizeof shown, "%.9g", *out);
    if (r->lo == r->hi) snprintf(expected, sizeof expected, "%.9g", r->lo);
    else snprintf(expected, sizeof expected, "%s in %s%.9g, %.9g]", integer ? "an integer" : "a number", r->lo_open ? "(" : "[", r->lo, r->hi);
    return refuse_value(src, r, path, shown, expected, err);
}

/* A string against the row's choices: its value, or a refusal listing them. */
static int check_choice(const hparam_source *src, const hparam *r, const char *path, const hp_value *v, int *out,
                        ts_error *err) {
    char list[256] = "one of", shown[96];
    for (const hp_choice *c = r->choices; c->name; c++) {
        if (v->kind == HPV_STRING && strlen(c->name) == v->len && !memcmp(c->name, v->str, v->len)) { *out = c->value; return 0; }
        size_t n = strlen(list);
        snprintf(list + n, sizeof list - n, "%s %s", c == r->choices ? "" : ",", c->name);
    }
    if (v->kind == HPV_STRING) snprintf(shown, sizeof shown, "'%.*s'", (int)(v->len < 64 ? v->len : 64), v->str);
    else snprintf(shown, sizeof shown, "%s", kind_name(v->kind));
    return refuse_value(src, r, path, shown, list, err);
}

/* One element of a per-layer array, as a number or a choice. */
static int layer_value(const hparam_source *src, const hparam *r, const char *path, long il, int *out, ts_error *err) {
    hp_value e;
    src->get(src, path, il, &e);
    char at[280];
    snprintf(at, sizeof at, "%s[%ld]", path, il);
    if (r->type == HP_LAYER_CHOICES) return check_choice(src, r, at, &e, out, err);
    double x = 0;
    if (check_number(src, r, at, &e, true, &x, err)) return -1;
    *out = (int)x;
    return 0;
}

static int read_row(const hparam_source *src, ts_model *m, const hparam *r, const lookup *l, model_hparams *hp,
                    ts_error *err) {
    const hp_value *v = &l->v;
    const char *path = l->path;
    double x;
    int c;
    switch (r->type) {
    case HP_INT: case HP_FLOAT: case HP_DOUBLE: case HP_BOOL:
        if (r->type == HP_BOOL && v->kind == HPV_BOOL) x = v->boolean;
        else if (check_number(src, r, path, v, r->type != HP_FLOAT && r->type != HP_DOUBLE, &x, err)) return -1;
        if (r->type == HP_BOOL && x != 0 && x != 1) return refuse_value(src, r, path, "a number", "a bool", err);
        if (r->type == HP_BOOL && (x < r->lo || x > r->hi))
            return refuse_value(src, r, path, x ? "true" : "false", r->hi ? "true" : "false", err);
        if (!r->at) return 0;
        if (r->type == HP_FLOAT) *(float *)field(hp, r->at) = (float)x;
        else if (r->type == HP_DOUBLE) *(double *)field(hp, r->at) = x;
        else *(int *)field(hp, r->at) = (int)x;
        return 0;
    case HP_CHOICE:
        if (check_choice(src, r, path, v, &c, err)) return -1;
        if (r->at) *(int *)field(hp, r->at) = c;
        return 0;
    case HP_LAYER_INTS: case HP_LAYER_CHOICES:
        if (v->kind != HPV_ARRAY) {
            if (r->type == HP_LAYER_CHOICES || !r->at) return refuse_value(src, r, path, kind_name(v->kind), "a list with one value per layer", err);
            if (check_number(src, r, path, v, true, &x, err)) return -1;
            *(int *)field(hp, r->at) = (int)x;
            return 0;
        }
        if (v->n != (size_t)hp->n_layers) {
            char shown[64];
            snprintf(shown, sizeof shown, "a list of %zu values", v->n);
            char expected[64];
            snprintf(expected, sizeof expected, "one per layer (%d)", hp->n_layers);
            return refuse_value(src, r, path, shown, expected, err);
        }
        {
            int *a = model_arena_alloc(&m->arena, (size_t)hp->n_layers * sizeof(int));
            if (!a) return ts_fail(err, "%s: out of memory", src->path);
            for (long il = 0; il < hp->n_layers; il++)
                if (layer_value(src, r, path, il, &a[il], err)) return -1;
            *(const int **)field(hp, r->at2) = a;
        }
        return 0;
    case HP_FLOATS: {
        if (v->kind != HPV_ARRAY || v->n == 0 || v->n > 4096)
            return refuse_value(src, r, path, kind_name(v->kind), "a list of up to 4096 numbers", err);
        float *f = model_arena_alloc(&m->arena, v->n * sizeof(float));
        if (!f) return ts_fail(err, "%s: out of memory", src->path);
        for (size_t i = 0; i < v->n; i++) {
            hp_value e;
            src->get(src, path, (long)i, &e);
            char at[280];
            snprintf(at, sizeof at, "%s[%zu]", path, i);
            if (check_number(src, r, at, &e, false, &x, err)) return -1;
            f[i] = (float)x;
        }
        *(const float **)field(hp, r->at) = f;
        *(int *)field(hp, r->at2) = (int)v->n;
        return 0;
    }
    case HP_INTS: {
        if (v->kind != HPV_ARRAY || v->n > 4096) return refuse_value(src, r, path, kind_name(v->kind), "a list of up to 4096 integers", err);
        int *a = model_arena_alloc(&m->arena, (v->n ? v->n : 1) * sizeof(int));
        if (!a) return ts_fail(err, "%s: out of memory", src->path);
        for (size_t i = 0; i < v->n; i++)
            if (layer_value(src, r, path, (long)i, &a[i], err)) return -1;
        *(const int **)field(hp, r->at) = a;
        *(int *)field(hp, r->at2) = (int)v->n;
        return 0;
    }
    case HP_OBJECT:
        if (v->kind != HPV_OBJECT) return refuse_value(src, r, path, kind_name(v->kind), "an object", err);
        return 0;
    default:
        return 0;
    }
}

/* A value that states a feature's absence: false, 0 (null never reaches here). */
static bool states_absence(const hp_value *v) {
    return (v->kind == HPV_BOOL && !v->boolean) || (v->kind == HPV_NUMBER && v->number == 0);
}

int hparams_read(const hparam_source *src, ts_model *m, model_hparams *hp, ts_error *err) {
    const int C = src->container;
    memset(hp, 0, sizeof *hp);
    for (size_t i = 0; i < N_HPARAMS; i++) {   /* the defaults first (also of rows this container has no key for) */
        const hparam *r = &HPARAMS[i];
        if (!r->at || r->def[C] == 0) continue;
        if (r->type == HP_FLOAT) *(float *)field(hp, r->at) = (float)r->def[C];
        else if (r->type == HP_DOUBLE) *(double *)field(hp, r->at) = r->def[C];
        else if (r->type == HP_INT || r->type == HP_BOOL || r->type == HP_CHOICE) *(int *)field(hp, r->at) = (int)r->def[C];
    }
    char inert[512] = "";
    for (size_t i = 0; i < N_HPARAMS; i++) {
        const hparam *r = &HPARAMS[i];
        if (!r->key[C]) continue;
        lookup l = { .src = src };
        if (!each_path(r->key[C], present_at, &l)) continue;
        if (r->use == HP_REFUSED) {
            if (states_absence(&l.v)) continue;
            return ts_fail(err, "%s: %s '%s%s': %s", src->path, src->what, src->prefix, l.path, r->why);
        }
        if (r->use == HP_INERT) {   /* one --info line for all of them */
            size_t n = strlen(inert);
            if (n < sizeof inert - 80) snprintf(inert + n, sizeof inert - n, "%s%s%s (%s)", n ? ", " : "", src->prefix, l.path, r->why);
            continue;
        }
        if (read_row(src, m, r, &l, hp, err) != 0) return -1;
    }
    if (inert[0]) model_note(m, "%ss ignored: %s", src->what, inert);
    return 0;
}
