/* The recurrent layers' state and its snapshots (see recurrent_state.h). */
#include "run/recurrent_state.h"
#include <stdlib.h>
#include <string.h>

int recurrent_state_init(recurrent_state *rs, int n_layers, const size_t *floats) {
    memset(rs, 0, sizeof *rs);
    rs->n_layers = n_layers;
    for (int i = 0; i < RECURRENT_SNAPSHOTS; i++) rs->snap_pos[i] = -1;
    rs->offset = malloc((size_t)(n_layers ? n_layers : 1) * sizeof *rs->offset);
    if (!rs->offset) return -1;
    for (int il = 0; il < n_layers; il++) {
        rs->offset[il] = floats[il] ? rs->floats : (size_t)-1;
        rs->floats += floats[il];
    }
    if (rs->floats && !(rs->live = calloc(rs->floats, sizeof(float)))) return -1;
    return 0;
}

void recurrent_state_free(recurrent_state *rs) {
    free(rs->offset);
    free(rs->live);
    free(rs->snaps);
    memset(rs, 0, sizeof *rs);
}

int recurrent_state_plan(recurrent_state *rs, int pos, int n) {
    rs->n_capture = 0;
    if (!rs->floats || n < 2) return 0;
    if (!rs->snaps && !(rs->snaps = malloc((size_t)RECURRENT_SNAPSHOTS * rs->floats * sizeof(float)))) return -1;
    const int at[2] = { pos + n - 1, pos + n };
    for (int k = 0; k < 2; k++) {
        int slot = rs->next;
        rs->next = (rs->next + 1) % RECURRENT_SNAPSHOTS;
        rs->snap_pos[slot] = -1;           /* being overwritten */
        rs->capture_at[k] = at[k];
        rs->capture_slot[k] = slot;
    }
    rs->n_capture = 2;
    return 0;
}

float *recurrent_state_capture(const recurrent_state *rs, int il, int done) {
    for (int k = 0; k < rs->n_capture; k++)
        if (rs->capture_at[k] == done) return rs->snaps + (size_t)rs->capture_slot[k] * rs->floats + rs->offset[il];
    return NULL;
}

void recurrent_state_commit(recurrent_state *rs, bool ok) {
    for (int k = 0; k < rs->n_capture && ok; k++) rs->snap_pos[rs->capture_slot[k]] = rs->capture_at[k];
    rs->n_capture = 0;
}

static int best_slot(const recurrent_state *rs, int pos) {
    int best = -1;
    for (int i = 0; i < RECURRENT_SNAPSHOTS; i++)
        if (rs->snap_pos[i] >= 0 && rs->snap_pos[i] <= pos && (best < 0 || rs->snap_pos[i] > rs->snap_pos[best])) best = i;
    return best;
}

int recurrent_state_best(const recurrent_state *rs, int pos) {
    int slot = best_slot(rs, pos);
    return slot >= 0 ? rs->snap_pos[slot] : 0;
}

/* The snapshot holding the state at pos exactly, or NULL (the start: zeros). */
static const float *snapshot_at(const recurrent_state *rs, int pos) {
    int slot = pos > 0 ? best_slot(rs, pos) : -1;
    return slot >= 0 && rs->snap_pos[slot] == pos ? rs->snaps + (size_t)slot * rs->floats : NULL;
}

/* live = state (NULL: zeros) */
static void set_live(recurrent_state *rs, const float *state) {
    if (state) memcpy(rs->live, state, rs->floats * sizeof(float));
    else memset(rs->live, 0, rs->floats * sizeof(float));
}

void recurrent_state_restore(recurrent_state *rs, int pos) {
    if (!rs->floats) return;
    set_live(rs, snapshot_at(rs, pos));
    for (int i = 0; i < RECURRENT_SNAPSHOTS; i++)   /* snapshots of a future that will not happen */
        if (rs->snap_pos[i] > pos) rs->snap_pos[i] = -1;
}

void recurrent_state_copy(recurrent_state *dst, const recurrent_state *src, int pos, int src_pos) {
    for (int i = 0; i < RECURRENT_SNAPSHOTS; i++) dst->snap_pos[i] = -1;
    if (!dst->floats) return;
    set_live(dst, pos > 0 && pos == src_pos ? src->live : snapshot_at(src, pos));
}

size_t recurrent_state_bytes(const recurrent_state *rs, size_t *snapshot_bytes) {
    if (snapshot_bytes) *snapshot_bytes = rs->snaps ? (size_t)RECURRENT_SNAPSHOTS * rs->floats * sizeof(float) : 0;
    return rs->floats * sizeof(float);
}
