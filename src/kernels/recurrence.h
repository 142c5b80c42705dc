/* Kernels of the recurrent layer kinds: the step of a head's matrix state, per SIMD level.
 *
 * Gated delta rule (Qwen3.5's DeltaNet), one value head at one position: the state S [dk][dv]
 * (row a: key dimension a) decays, learns v under key k at rate beta, and is read with q:
 *   S = decay S;  u = beta (v - S^T k);  S += k u^T;  o = S^T q
 * Each element of S, u and o is computed by the same multiplies and adds in the same order (key
 * dimension 0 first; no fused multiply-add) in every set: the SIMD kernels, which take dv lanes at
 * a time, give the portable kernel's bits. */
#ifndef TS_KERNELS_RECURRENCE_H
#define TS_KERNELS_RECURRENCE_H

typedef void (*delta_rule_step_fn)(float *S, int dk, int dv, const float *q, const float *k, const float *v,
                                   float decay, float beta, float *o);

typedef struct recurrence_kernels {
    delta_rule_step_fn delta_rule_step;
} recurrence_kernels;

/* The kernels of a SIMD level (enum simd_level); the portable ones for levels without their own. */
recurrence_kernels recurrence_kernels_for(int simd_level);

#endif
