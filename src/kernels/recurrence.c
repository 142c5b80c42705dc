/* The recurrent layer kinds' kernels (see recurrence.h): the portable step, and the x86 sets'
 * that take 8 or 16 value dimensions per instruction (the same operations per element, so the
 * same bits). The portable kernel vectorizes as it is on aarch64 (NEON is its baseline). */
#include "kernels/recurrence.h"
#include "kernels/cpu.h"
#include "kernels/simd.h"
#if defined(__x86_64__)
#include <immintrin.h>
#endif

/* Key dimensions in order: pass 1 decays each row and accumulates S^T k; pass 2 adds k[a] u to
 * each row and accumulates S^T q. kv and u live in o until the end. */
static void delta_rule_step_generic(float *S, int dk, int dv, const float *q, const float *k, const float *v,
                                    float decay, float beta, float *o) {
    float kv[dv];
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
}

#if defined(TS_X86)
/* One body for both widths: VEC lanes of value dimensions per step, the rest as the portable
 * kernel does them (the same operations, so the same bits wherever the split falls). */
#define DELTA_RULE_STEP_BODY(VEC, LOAD, STORE, MUL, ADD, SUB, SET1, ZERO)                            \
    float kv[dv];                                                                                     \
    int b0 = dv - dv % VEC;                                                                           \
    for (int b = 0; b < dv; b++) kv[b] = 0.0f;                                                        \
    const __typeof__(SET1(0.0f)) vdecay = SET1(decay), vbeta = SET1(beta);                            \
    for (int a = 0; a < dk; a++) {                                                                    \
        float *row = S + (long)a * dv;                                                                \
        const __typeof__(SET1(0.0f)) ka = SET1(k[a]);                                                 \
        for (int b = 0; b < b0; b += VEC) {                                                           \
            __typeof__(SET1(0.0f)) s = MUL(LOAD(row + b), vdecay);                                    \
            STORE(row + b, s);                                                                        \
            STORE(kv + b, ADD(LOAD(kv + b), MUL(s, ka)));                                             \
        }                                                                                             \
        for (int b = b0; b < dv; b++) { row[b] *= decay; kv[b] += row[b] * k[a]; }                    \
    }                                                                                                 \
    for (int b = 0; b < b0; b += VEC) {                                                               \
        STORE(kv + b, MUL(vbeta, SUB(LOAD(v + b), LOAD(kv + b))));                                    \
        STORE(o + b, ZERO());                                                                         \
    }                                                                                                 \
    for (int b = b0; b < dv; b++) { kv[b] = beta * (v[b] - kv[b]); o[b] = 0.0f; }                     \
    for (int a = 0; a < dk; a++) {                                                                    \
        float *row = S + (long)a * dv;                                                                \
        const __typeof__(SET1(0.0f)) ka = SET1(k[a]), qa = SET1(q[a]);                                \
        for (int b = 0; b < b0; b += VEC) {                                                           \
            __typeof__(SET1(0.0f)) s = ADD(LOAD(row + b), MUL(ka, LOAD(kv + b)));                     \
            STORE(row + b, s);                                                                        \
            STORE(o + b, ADD(LOAD(o + b), MUL(s, qa)));                                               \
        }                                                                                             \
        for (int b = b0; b < dv; b++) { row[b] += k[a] * kv[b]; o[b] += row[b] * q[a]; }              \
    }

TARGET_AVX2 static void delta_rule_step_avx2(float *S, int dk, int dv, const float *q, const float *k, const float *v,
                                             float decay, float beta, float *o) {
    DELTA_RULE_STEP_BODY(8, _mm256_loadu_ps, _mm256_storeu_ps, _mm256_mul_ps, _mm256_add_ps, _mm256_sub_ps,
                         _mm256_set1_ps, _mm256_setzero_ps)
}

TARGET_AVX512 static void delta_rule_step_avx512(float *S, int dk, int dv, const float *q, const float *k, const float *v,
                                                 float decay, float beta, float *o) {
    DELTA_RULE_STEP_BODY(16, _mm512_loadu_ps, _mm512_storeu_ps, _mm512_mul_ps, _mm512_add_ps, _mm512_sub_ps,
                         _mm512_set1_ps, _mm512_setzero_ps)
}
#undef DELTA_RULE_STEP_BODY
#endif

recurrence_kernels recurrence_kernels_for(int simd_level) {
    recurrence_kernels rk = { delta_rule_step_generic };
#if defined(TS_X86)
    if (simd_level == SIMD_AVX2) rk.delta_rule_step = delta_rule_step_avx2;
    if (simd_level == SIMD_AVX512) rk.delta_rule_step = delta_rule_step_avx512;
#endif
    return rk;
}
