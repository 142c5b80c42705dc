/* Layout normalization: turning the row orders and conventions containers use into the one the
 * forward expects. */
#ifndef TS_MODEL_LAYOUT_H
#define TS_MODEL_LAYOUT_H
#include <stddef.h>
#include <stdint.h>
#include "tessera.h"

/* llama.cpp's HF->GGUF converter reorders the rows of each head of Llama attn_q / attn_k from
 * split-half to interleaved pairs, for its adjacent-pair RoPE. This restores split-half order:
 *   dst row h*D + s*D/2 + j  <-  src row h*D + 2j + s     (s in {0,1}, j < D/2, D = n_rows/n_heads)
 * Rows are moved whole (row_bytes each), so it works on float and quantized rows alike.
 * n_rows not divisible by 2*n_heads is refused, naming the tensor. */
int layout_unpermute_qk_rows(uint8_t *dst, const uint8_t *src, int64_t n_rows, size_t row_bytes,
                      int n_heads, const char *tensor_name, ts_error *err);

/* gpt-oss Hugging Face folders stack their experts input-major: gate_up [E][in][2F] with gate in the
 * even and up in the odd columns, down [E][F][out]. This writes each expert's gate and up as F rows
 * of `hidden` f32 weights and its down as `hidden` rows of F, owned by the arena (transposed once at
 * load; any float dtype). */
struct model_arena;
struct tensor_entry;
struct weight;
int layout_experts_from_input_major(struct model_arena *arena, const struct tensor_entry *gate_up,
                                    const struct tensor_entry *down, int n_experts, int64_t hidden,
                                    int64_t ffn, struct weight *gate, struct weight *up,
                                    struct weight *down_out, ts_error *err);

#endif
