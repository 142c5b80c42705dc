/* The attention kind's run part (attention_layer.c). */
#ifndef TS_RUN_ATTENTION_LAYER_H
#define TS_RUN_ATTENTION_LAYER_H
#include "run/context.h"

/* c->tmp = the attention sublayer of layer il on the normed input c->xn of the batch's n positions
 * (c->runs); their keys and values go into their sequences' KV caches first. Each run attends over
 * its own sequence: a run of one position is a decoded token's step (its keys' chunks spread over
 * the threads), a longer one is prefill (positions and KV heads spread over them). */
void attention_layer_forward(ts_context *c, const layer_geometry *ly, int il, int n);
/* c->att (n_heads x value_dim per position) = the attention of the batch's queries in c->q (n_heads x
 * head_dim per position, RoPE applied) over their sequences' caches of ly's layer (ly->kv_source),
 * which hold their keys and values already (latent attention calls it with its cache's view). */
void attention_layer_attend(ts_context *c, const attention_geometry *ly);
/* The rotation of each of ly's RoPE pairs at a position (cos and sin carry its attention factor). */
void attention_layer_rope_angles(const ts_context *c, const attention_geometry *ly, int pos, float *cs, float *sn);
/* The position <= pos sequence s's cache of the layer can continue from (0 when a sliding ring lost
 * what it needs). */
int attention_layer_rewind(const ts_context *c, const sequence *s, const layer_geometry *ly, int il, int pos);
/* The chunks of keys a query that sees n_keys positions is computed in. */
int attention_layer_chunks(int n_keys);
/* Floats of per-thread scratch for heads of up to hd dimensions in groups of up to group query
 * heads per KV head. */
size_t attention_layer_scratch(int hd, int group);

#endif
