/* RoPE frequency tables: the per-pair inverse frequencies of plain RoPE and of its scaled forms
 * (llama3, YaRN, LongRoPE), and the attention factors that multiply cos and sin. The forward rotates
 * pair i of a head by pos * inv_freq[i]; everything a scaling does is in the table it builds. */
#ifndef TS_MODEL_ROPE_H
#define TS_MODEL_ROPE_H
#include "load/hparams.h"

/* inv[i] = theta^(-2i/span) / divisor[i] for i < pairs (divisor NULL: 1), in float exactly as the
 * forward has always computed it. */
void rope_plain(float *inv, int pairs, int span, float theta, const float *divisor);

/* The scaled table of rope_scaling s (YaRN, llama3 or LongRoPE with its short list; long: the
 * LongRoPE long list), computed in double. */
void rope_scaled(float *inv, int pairs, int span, float theta, const rope_scaling *s, bool long_list);

/* get_mscale of YaRN: 0.1 * m * ln(s) + 1 (1 for s <= 1). */
double rope_yarn_get_mscale(double s, double m);

#endif
