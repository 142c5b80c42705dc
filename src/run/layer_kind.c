/* The layer kinds' run parts (see layer_kind.h). */
#include "run/layer_kind.h"
#include "run/attention_layer.h"
#include "run/deltanet_layer.h"
#include "run/shortconv_layer.h"
#include "run/mamba2_layer.h"
#include "run/mla_layer.h"

static size_t no_state(const layer_geometry *ly) { return 0; }

static const layer_kind_run KINDS[LAYER_KIND_COUNT] = {
    [LAYER_ATTENTION] = { "attention", attention_layer_forward, attention_layer_rewind, no_state },
    [LAYER_DELTANET] = { "gated DeltaNet", deltanet_layer_forward, deltanet_layer_rewind, deltanet_layer_state_floats },
    [LAYER_SHORTCONV] = { "short convolution", shortconv_layer_forward, shortconv_layer_rewind, shortconv_layer_state_floats },
    [LAYER_MAMBA2] = { "Mamba-2", mamba2_layer_forward, mamba2_layer_rewind, mamba2_layer_state_floats },
    [LAYER_MLA] = { "latent attention", mla_layer_forward, attention_layer_rewind, no_state },
};

const layer_kind_run *layer_kind_ops(int kind) { return &KINDS[kind]; }
