/* The layer kinds' run parts (see layer_kind.h). */
#include "run/layer_kind.h"
#include "run/attention_layer.h"

static const layer_kind_run KINDS[LAYER_KIND_COUNT] = {
    [LAYER_ATTENTION] = { "attention", attention_layer_forward, attention_layer_rewind },
};

const layer_kind_run *layer_kind_ops(int kind) { return &KINDS[kind]; }
