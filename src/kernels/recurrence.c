/* The recurrent layer kinds' kernels (see recurrence.h): the portable scan, and the x86 sets'
 * that take 8 or 16 value columns per instruction (the same operations per element, so the same
 * bits). The portable kernel vectorizes as it is on aarch64 (NEON is its baseline). */
#include "kernels/recurrence.h"
#include "kernels/cpu.h"
#include "kernels/simd.h"
#include <string.h>
#if defined(__x86_64__)
#include <immintrin.h>
#endif

#if defined(TS_X86)
/* Columns [b0, b1) of the state through every position, one column at a time (the reference
 * order of each element's operations; the x86 kernels' tail). */
static void delta_rule_columns(float *S, const delta_rule_run *r, int b0, int b1) {
    const int dk = r->dk, dv = r->dv;
    for (int t = 0, s = 0; t < r->n; t++) {
        const float *q = r->q + t * r->qk_stride, *k = r->k + t * r->qk_stride, *v = r->v + t * r->v_stride;
        const float decay = r->decay[t], beta = r->beta[t];
        float *o = r->o + t * r->o_stride;
        for (int b = b0; b < b1; b++) {
            float kv = 0.0f;
            for (int a = 0; a < dk; a++) { S[(long)a * dv + b] *= decay; kv += S[(long)a * dv + b] * k[a]; }
            const float u = beta * (v[b] - kv);
            float acc = 0.0f;
            for (int a = 0; a < dk; a++) { S[(long)a * dv + b] += k[a] * u; acc += S[(long)a * dv + b] * q[a]; }
            o[b] = acc;
        }
        for (; s < r->n_snap && r->snap_t[s] == t; s++)
            for (int a = 0; a < dk; a++)
                memcpy(r->snap[s] + (long)a * dv + b0, S + (long)a * dv + b0, (size_t)(b1 - b0) * sizeof(float));
    }
}
#endif

/* Whole rows per position: for each key dimension, a row of dv columns (vectorizes as it is). */
static void delta_rule_scan_generic(float *S, const delta_rule_run *r) {
    const int dk = r->dk, dv = r->dv;
    float kv[dv];
    for (int t = 0, s = 0; t < r->n; t++) {
        const float *q = r->q + t * r->qk_stride, *k = r->k + t * r->qk_stride, *v = r->v + t * r->v_stride;
        const float decay = r->decay[t], beta = r->beta[t];
        float *o = r->o + t * r->o_stride;
        for (int b = 0; b < dv; b++) kv[b] = 0.0f;
        for (int a = 0; a < dk; a++) {
            float *row = S + (long)a * dv;
            for (int b = 0; b < dv; b++) { row[b] *= decay; kv[b] += row[b] * k[a]; }
        }
        for (int b = 0; b < dv; b++) { kv[b] = beta * (v[b] - kv[b]); o[b] = 0.0f; }   /* kv is now u */
        for (int a = 0; a < dk; a++) {
            float *row = S + (long)a * dv;
            for (int b = 0; b < dv; b++) { row[b] += k[a] * kv[b]; o[b] += row[b] * q[a]; }
        }
        for (; s < r->n_snap && r->snap_t[s] == t; s++) memcpy(r->snap[s], S, (size_t)dk * dv * sizeof(float));
    }
}

#if defined(TS_X86)
/* One body for both widths: a block of NV x VEC columns (dk x 64 floats) through every position,
 * its u, S^T k and S^T q in registers (NV independent sums per key dimension: each column's sum is
 * a chain of dk dependent adds, so a block of one vector would wait on the adder); then blocks of
 * one vector, then the columns left over as delta_rule_columns does them. */
#define DELTA_RULE_BLOCK(NV, VEC, VT, LOAD, STORE, MUL, ADD, SUB, SET1, ZERO)                          \
    for (; b + (NV) * VEC <= dv; b += (NV) * VEC) {                                                    \
        for (int t = 0, s = 0; t < r->n; t++) {                                                        \
            const float *q = r->q + t * r->qk_stride, *k = r->k + t * r->qk_stride;                    \
            const float *v = r->v + t * r->v_stride + b;                                               \
            const VT decay = SET1(r->decay[t]), beta = SET1(r->beta[t]);                               \
            VT kv[NV], u[NV], acc[NV];                                                                 \
            UNROLL for (int i = 0; i < (NV); i++) kv[i] = ZERO();                                      \
            for (int a = 0; a < dk; a++) {                                                             \
                float *row = S + (long)a * dv + b;                                                     \
                const VT ka = SET1(k[a]);                                                              \
                UNROLL for (int i = 0; i < (NV); i++) {                                                \
                    const VT x = MUL(LOAD(row + i * VEC), decay);                                      \
                    STORE(row + i * VEC, x);                                                           \
                    kv[i] = ADD(kv[i], MUL(x, ka));                                                    \
                }                                                                                      \
            }                                                                                          \
            UNROLL for (int i = 0; i < (NV); i++) { u[i] = MUL(beta, SUB(LOAD(v + i * VEC), kv[i])); acc[i] = ZERO(); } \
            for (int a = 0; a < dk; a++) {                                                             \
                float *row = S + (long)a * dv + b;                                                     \
                const VT ka = SET1(k[a]), qa = SET1(q[a]);                                             \
                UNROLL for (int i = 0; i < (NV); i++) {                                                \
                    const VT x = ADD(LOAD(row + i * VEC), MUL(ka, u[i]));                              \
                    STORE(row + i * VEC, x);                                                           \
                    acc[i] = ADD(acc[i], MUL(x, qa));                                                  \
                }                                                                                      \
            }                                                                                          \
            float *o = r->o + t * r->o_stride + b;                                                     \
            UNROLL for (int i = 0; i < (NV); i++) STORE(o + i * VEC, acc[i]);                          \
            for (; s < r->n_snap && r->snap_t[s] == t; s++)                                            \
                for (int a = 0; a < dk; a++)                                                           \
                    memcpy(r->snap[s] + (long)a * dv + b, S + (long)a * dv + b, (NV) * VEC * sizeof(float)); \
        }                                                                                              \
    }
#define DELTA_RULE_SCAN_BODY(VEC, WIDE, ...)                                                          \
    const int dk = r->dk, dv = r->dv;                                                                 \
    int b = 0;                                                                                        \
    DELTA_RULE_BLOCK(WIDE, VEC, __VA_ARGS__)                                                          \
    DELTA_RULE_BLOCK(1, VEC, __VA_ARGS__)                                                             \
    if (b < dv) delta_rule_columns(S, r, b, dv);

TARGET_AVX2 static void delta_rule_scan_avx2(float *S, const delta_rule_run *r) {
    DELTA_RULE_SCAN_BODY(8, 8, __m256, _mm256_loadu_ps, _mm256_storeu_ps, _mm256_mul_ps, _mm256_add_ps, _mm256_sub_ps,
                         _mm256_set1_ps, _mm256_setzero_ps)
}

TARGET_AVX512 static void delta_rule_scan_avx512(float *S, const delta_rule_run *r) {
    DELTA_RULE_SCAN_BODY(16, 4, __m512, _mm512_loadu_ps, _mm512_storeu_ps, _mm512_mul_ps, _mm512_add_ps, _mm512_sub_ps,
                         _mm512_set1_ps, _mm512_setzero_ps)
}
#undef DELTA_RULE_SCAN_BODY
#undef DELTA_RULE_BLOCK
#endif

recurrence_kernels recurrence_kernels_for(int simd_level) {
    recurrence_kernels rk = { delta_rule_scan_generic };
#if defined(TS_X86)
    if (simd_level == SIMD_AVX2) rk.delta_rule_scan = delta_rule_scan_avx2;
    if (simd_level == SIMD_AVX512) rk.delta_rule_scan = delta_rule_scan_avx512;
#endif
    return rk;
}
