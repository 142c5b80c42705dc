/* The causal depthwise convolution the recurrent kinds share (causal_conv.c): per channel, the
 * taps over the K - 1 positions before (a window in the layer's state) and the current one. */
#ifndef TS_RUN_CAUSAL_CONV_H
#define TS_RUN_CAUSAL_CONV_H
#include "run/context.h"

typedef struct causal_conv {
    int channels, kernel;       /* C, K */
    const float *taps;          /* [K][C]: tap j of every channel, j = 0 the oldest position */
    const float *bias;          /* C, added after the taps; NULL: none */
    bool silu;                  /* silu of the sum */
    const float *in;            /* n rows of C, in_stride apart */
    long in_stride;
    float *out;                 /* n rows of C, out_stride apart (may be in itself) */
    long out_stride;
} causal_conv;

/* Run r's positions in order (rows r->t0.. of in and out): each position's input enters the window
 * ([K - 1][C], the oldest first: the run's sequence's state of layer il) once its output is summed;
 * where that state is captured for a snapshot, the window is copied there. Threaded over channels
 * (each channel's sum in tap order: the same bits however the channels are split). */
void causal_conv_run(ts_context *c, int il, const batch_run *r, float *window, const causal_conv *cv);

#endif
