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

#endif
