/* The per-sequence state of a context's recurrent layers (their kinds say what a layer keeps: a
 * convolution window, a matrix per head): one block of floats, and snapshots of it at chosen
 * positions. A recurrent state cannot be cut back the way a KV cache is (it holds every position
 * folded together), so a rewind restores the latest snapshot at or before the position asked for,
 * or starts over. Snapshots are taken inside evaluations (each recurrent layer copies its state
 * when it has processed the position asked for): at the end of every evaluation of several tokens
 * (a prompt, a turn) and just before its last token, where a session that sends a prompt again
 * continues from. At most RECURRENT_SNAPSHOTS are kept, the oldest replaced first. */
#ifndef TS_RUN_RECURRENT_STATE_H
#define TS_RUN_RECURRENT_STATE_H
#include <stdbool.h>
#include <stddef.h>

#define RECURRENT_SNAPSHOTS 4

typedef struct recurrent_state {
    int n_layers;
    size_t *offset;             /* per layer: its state's first float in a copy; (size_t)-1: none */
    size_t floats;              /* one copy of every recurrent layer's state */
    float *live;                /* the state after the context's positions (zeros: the start) */
    float *snaps;               /* RECURRENT_SNAPSHOTS copies, allocated at the first capture */
    int snap_pos[RECURRENT_SNAPSHOTS];   /* the positions they hold; -1: empty */
    int next;                   /* the slot the next capture replaces */
    int capture_at[2], capture_slot[2], n_capture;   /* captures asked of the evaluation under way */
} recurrent_state;

/* floats[il]: layer il's state (0: none). Returns -1 when out of memory. */
int  recurrent_state_init(recurrent_state *rs, int n_layers, const size_t *floats);
void recurrent_state_free(recurrent_state *rs);
/* Layer il's live state (NULL: the layer has none). */
static inline float *recurrent_state_layer(const recurrent_state *rs, int il) {
    return rs->floats && rs->offset[il] != (size_t)-1 ? rs->live + rs->offset[il] : NULL;
}
/* Before evaluating n tokens after pos positions: the captures to take (n >= 2: after pos + n - 1
 * and after pos + n positions). Returns -1 when the snapshots cannot be allocated. */
int  recurrent_state_plan(recurrent_state *rs, int pos, int n);
/* Where layer il copies its state once `done` positions have been processed, or NULL. */
float *recurrent_state_capture(const recurrent_state *rs, int il, int done);
/* After the evaluation: its captures become snapshots (ok), or are dropped. */
void recurrent_state_commit(recurrent_state *rs, bool ok);
/* The latest position <= pos a rewind can land on: a snapshot's, or 0. */
int  recurrent_state_best(const recurrent_state *rs, int pos);
/* Restores the state at pos (a snapshot's position, or 0: zeros) and forgets the snapshots after it. */
void recurrent_state_restore(recurrent_state *rs, int pos);
/* dst's live state made src's at pos: src's live state when pos is src_pos (the positions src
 * holds), else its snapshot at pos (recurrent_state_best(src, pos) == pos), or zeros for 0. dst's
 * snapshots are forgotten. */
void recurrent_state_copy(recurrent_state *dst, const recurrent_state *src, int pos, int src_pos);
/* Bytes of the live state and of the snapshots allocated so far. */
size_t recurrent_state_bytes(const recurrent_state *rs, size_t *snapshot_bytes);

#endif
