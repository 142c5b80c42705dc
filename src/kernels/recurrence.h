/* Kernels of the recurrent layer kinds: a head's matrix state through a run of positions, per SIMD
 * level.
 *
 * Gated delta rule (Qwen3.5's DeltaNet), one value head at position t: the state S [dk][dv] (row
 * a: key dimension a) decays, learns v under key k at rate beta, and is read with q:
 *   S = decay_t S;  u = beta_t (v_t - S^T k_t);  S += k_t u^T;  o_t = S^T q_t
 * Each element of S, u and o is computed by the same multiplies and adds in the same order (key
 * dimension 0 first; no fused multiply-add) in every set and whatever the run's length: the SIMD
 * kernels, which take a block of value columns through every position of the run while it stays
 * in L1 (the columns are independent), give the portable kernel's bits, and a run of n positions
 * gives the bits of n runs of one. */
#ifndef TS_KERNELS_RECURRENCE_H
#define TS_KERNELS_RECURRENCE_H

#define DELTA_RULE_MAX_SNAPS 2

/* n positions: position t reads q + t * qk_stride and k + t * qk_stride (dk each), v + t * v_stride
 * (dv), decay[t], beta[t], and writes o + t * o_stride (dv). After position snap_t[i] (i < n_snap)
 * the state is also copied to snap[i] ([dk][dv]). */
typedef struct delta_rule_run {
    int dk, dv, n;
    const float *q, *k, *v;
    long qk_stride, v_stride, o_stride;
    const float *decay, *beta;
    float *o;
    int n_snap;
    int snap_t[DELTA_RULE_MAX_SNAPS];
    float *snap[DELTA_RULE_MAX_SNAPS];
} delta_rule_run;
typedef void (*delta_rule_scan_fn)(float *S, const delta_rule_run *r);

typedef struct recurrence_kernels {
    delta_rule_scan_fn delta_rule_scan;
} recurrence_kernels;

/* The kernels of a SIMD level (enum simd_level); the portable ones for levels without their own. */
recurrence_kernels recurrence_kernels_for(int simd_level);

#endif
