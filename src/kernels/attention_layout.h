/* The KV cache layout the attention kernels read (described in attention.h): a leaf of constants,
 * so the per-type kernel files need nothing of attention.c. */
#ifndef TS_KERNELS_ATTENTION_LAYOUT_H
#define TS_KERNELS_ATTENTION_LAYOUT_H

#define KV_KEY_BLOCK 64   /* slots per transposed block of keys */

enum kv_type { KV_F32 = 0, KV_F16 = 1, KV_Q8_0 = 2, KV_TYPE_COUNT };

#endif
