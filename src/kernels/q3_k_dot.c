/* Q3_K weights . Q8_K activations: per super-block d * d_a * sum_g (s[g] - 32) sum(q a) with the
 * signed 3-bit q, integer inside. That is the integer form of block_unpacked (q3_k.c unpacks into
 * it), with the same float operations ((d * d_a) * isum), so Q3_K takes the low-bit types' kernels
 * (unpacked_dot.h): SUB_KERNELS defines q3_k_kernels_generic, q3_k_kernels_avx2, q3_k_kernels_avx512
 * and q3_k_kernels_neon_dotprod, and a batch multiplies its rows unpacked once, in tiles. A copy
 * keeps the rows in lanes in a form of their own (AVX-512, below). */
#include "kernels/unpacked_dot.h"
#include "kernels/lanes_simd.h"
#include "kernels/lanes_pack.h"

#if defined(TS_X86)
static inline float q3_k_d(const block_q3_K *b) { return load_f16(b->d); }
/* sub-block ib = 4 n + j: the 2 low bits at 2 j of qs[32 n + l], the high bit 4 n + j of hmask[l] */
static ALWAYS_INLINE TARGET_AVX2 void q3_k_sub_avx2(const block_q3_K *b, int ib, __m256i *mag, __m256i *sgn, __m256i *sc) {
    const int n = ib / 4, j = ib % 4;
    const __m256i low = _mm256_and_si256(_mm256_srli_epi16(_mm256_loadu_si256((const __m256i *)(b->qs + 32 * n)), 2 * j),
                                         _mm256_set1_epi8(3));
    const __m256i high = _mm256_and_si256(_mm256_srli_epi16(_mm256_loadu_si256((const __m256i *)b->hmask), 4 * n + j),
                                          _mm256_set1_epi8(1));
    const __m256i q = _mm256_sub_epi8(_mm256_or_si256(low, _mm256_slli_epi16(high, 2)), _mm256_set1_epi8(4));
    *mag = _mm256_abs_epi8(q);
    *sgn = q;
    *sc = _mm256_setr_m128i(_mm_set1_epi16((short)(q3_k_scale6(b->scales, 2 * ib) - 32)),
                          _mm_set1_epi16((short)(q3_k_scale6(b->scales, 2 * ib + 1) - 32)));
}

/* ---- Rows in lanes kept in a form of their own (type_kernels.lanes_packed_sb_bytes) ----
 * The copy writes each weight's u = q + 4 (0..7) as its 2 low bits (IQ2's rank layout, iq2_dot.c)
 * and its bit 2 as a bit of a 64-bit mask per 4 codes, 16 rows in lanes, each group of 16's scale
 * s - 32 as a byte and d as a float. Per 4 codes: a shift and a mask to the low bits, one masked add
 * of 4, one dpbusd; a group's int32 sum less 4 times its block sum, times the scale: the row
 * kernel's integers (block_unpacked's), without its unpacking, in 116 bytes a row and super-block
 * instead of 110. */
typedef struct {
    uint8_t low[16][64];   /* group g, lane p byte j bits 2 m: weight 16 g + 4 m + j of row p, u & 3 */
    uint64_t high[64];     /* 4 codes t, bit 4 p + j: weight 4 t + j of row p has u >= 4 */
    int8_t sc[16][16];     /* group g, lane p: block_unpacked.sc */
    float d[16];           /* block_unpacked.d */
} q3_k_lanes;
_Static_assert(sizeof(q3_k_lanes) == 16 * 116, "116 bytes a row and super-block");

static void q3_k_lanes_pack(const uint8_t *w, size_t ws, int64_t k, uint8_t *out) {
    for (int64_t i = 0; i < k / QK_K; i++) {
        q3_k_lanes l;
        memset(&l, 0, sizeof l);
        for (int p = 0; p < 16; p++) {
            const block_q3_K *b = (const block_q3_K *)(w + p * ws) + i;
            /* weight e = 128 n + 32 j + x: q + 4 = its 2 bits (k_qs_codes2) + 4 x its hmask bit (bit
             * 4 n + j of hmask[x]): q3_k_unpack's, 4 weights at a time */
            uint8_t low[QK_K], high[QK_K];
            k_qs_codes2(b->qs, low);
            for (int n = 0; n < 2; n++)
                for (int j = 0; j < 4; j++)
                    for (int x = 0; x < 32; x += 4)
                        store_u32(high + 128 * n + 32 * j + x, (load_u32(b->hmask + x) >> (4 * n + j)) & 0x01010101u);
            lanes_pack_fields2(low, p, l.low);
            lanes_pack_bits(high, p, l.high);
            for (int g = 0; g < 16; g++) l.sc[g][p] = (int8_t)(q3_k_scale6(b->scales, g) - 32);
            l.d[p] = load_f16(b->d);
        }
        memcpy(out + (size_t)i * sizeof l, &l, sizeof l);
    }
}

static ALWAYS_INLINE TARGET_AVX512 void q3_k_packed_body(const uint8_t *ub, const uint8_t *a, size_t as, int64_t k,
                                                         float *y, long ys, const int NC) {
    const __m512i three = _mm512_set1_epi8(3), four = _mm512_set1_epi8(4);
    /* the 2 low bits of codes q, then 4 added where the mask says so */
#define Q3_K_SCALE(u, g) _mm512_cvtepi8_epi32(_mm_loadu_si128((const __m128i *)(u)->sc[g]))
#define Q3_K_LOW(u, g, q) _mm512_and_si512((q) ? _mm512_srli_epi16(_mm512_loadu_si512((const void *)(u)->low[g]), 2 * (q)) \
                                               : _mm512_loadu_si512((const void *)(u)->low[g]), three)
#define Q3_K_CODES(u, g, q) _mm512_mask_add_epi8(Q3_K_LOW(u, g, q), _cvtu64_mask64((u)->high[4 * (g) + (q)]), Q3_K_LOW(u, g, q), four)
    LANES_OFFSET_BODY(q3_k_lanes, ub, a, as, k, y, ys, NC, 4, Q3_K_SCALE, Q3_K_CODES);
#undef Q3_K_SCALE
#undef Q3_K_LOW
#undef Q3_K_CODES
}
LANES_FROM_BODY(q3_k_packed_avx512, q3_k_packed_body, 8)
#define Q3_K_LANES (.lanes_pack = q3_k_lanes_pack, .lanes_packed = q3_k_packed_avx512, \
                    .lanes_packed_sb_bytes = sizeof(q3_k_lanes) / 16)
#endif

SUB_KERNELS_LANES(q3_k, block_q3_K, Q3_K_LANES)
