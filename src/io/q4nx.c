/* FastFlowLM q4nx tiles -> Q4NX block rows: layout checks and the lossless repack.
 *
 * Both tile kinds share one shape: R rows x C columns, G = C/32 groups per row, and
 *   bytes [0, 2GR)       bf16 scales, (group g, row r) at index g*R + r
 *   bytes [2GR, 4GR)     bf16 mins, same index
 *   bytes [4GR, ...)     codes in halves of 16 rows: (r, c) at (r/16)*8C + 8c + (r%16)/2,
 *                        even r in the low nibble, odd r in the high one.
 * Tile (R=32, C=256) is 1024 + 4096 = 5120 bytes; quarter tile (R=16, C=128) 256 + 1024 = 1280. */
#include "io/q4nx.h"
#include "core/tensor_type.h"
#include "core/error.h"
#include <string.h>

#define GROUP 32                 /* columns per scale/min group, = weights per Q4NX block */
#define BLOCK_BYTES 20           /* Q4NX block: bf16 scale, bf16 min, 16 bytes of codes */

const char *q4nx_kind_name(int kind) { return kind == Q4NX_QUARTER ? "quarter tiles" : "tiles"; }

int q4nx_layout_of(const char *file, const tensor_entry *t, int64_t rows, int64_t k,
                   q4nx_layout *out, ts_error *err) {
    const char *f = file ? file : "q4nx";
    memset(out, 0, sizeof *out);
    if (t->type != TS_I8 && t->type != TS_U8)
        return ts_fail(err, "%s: tensor '%s' is not an I8 tile array", f, t->name);
    if (t->n_dims != 2 && t->n_dims != 3)
        return ts_fail(err, "%s: tensor '%s' is declared with %d dimensions; q4nx tiles are declared "
                       "[n, 5120], [n, 1280] or [row_tiles, col_tiles, width]", f, t->name, t->n_dims);
    int64_t width = t->ne[0];
    if (width == 5120) {
        *out = (q4nx_layout){ .kind = Q4NX_TILE, .tile_rows = 32, .tile_cols = 256, .tile_bytes = 5120 };
    } else if (width == 1280) {
        *out = (q4nx_layout){ .kind = Q4NX_QUARTER, .tile_rows = 16, .tile_cols = 128, .tile_bytes = 1280 };
    } else {
        return ts_fail(err, "%s: tensor '%s' has declared row width %lld: neither a tile (5120 bytes) "
                       "nor a quarter tile (1280 bytes)", f, t->name, (long long)width);
    }
    const char *kind = q4nx_kind_name(out->kind);
    uint64_t declared = 1;
    for (int i = 0; i < t->n_dims; i++) declared *= (uint64_t)t->ne[i];
    if (t->nbytes % out->tile_bytes != 0)
        return ts_fail(err, "%s: tensor '%s' holds %zu bytes, not a whole number of %zu-byte %s",
                       f, t->name, t->nbytes, out->tile_bytes, kind);
    if (t->nbytes != declared)
        return ts_fail(err, "%s: tensor '%s' holds %zu bytes but its declared shape needs %llu",
                       f, t->name, t->nbytes, (unsigned long long)declared);
    if (rows <= 0 || k <= 0)
        return ts_fail(err, "%s: tensor '%s': the config gives an empty matrix (%lld x %lld)", f,
                       t->name, (long long)rows, (long long)k);
    if (rows % out->tile_rows != 0)
        return ts_fail(err, "%s: tensor '%s': %lld rows are off the %d-row grid of %s", f, t->name,
                       (long long)rows, out->tile_rows, kind);
    if (k % GROUP != 0)
        return ts_fail(err, "%s: tensor '%s': K = %lld is not a whole number of 32-column groups",
                       f, t->name, (long long)k);
    int64_t n_tiles = (int64_t)(t->nbytes / out->tile_bytes);
    out->row_tiles = rows / out->tile_rows;
    if (t->n_dims == 3) {
        if (t->ne[2] != out->row_tiles)
            return ts_fail(err, "%s: tensor '%s' is declared with %lld row blocks of %s, the config's "
                           "%lld rows need %lld", f, t->name, (long long)t->ne[2], kind,
                           (long long)rows, (long long)out->row_tiles);
        out->col_tiles = t->ne[1];
    } else {
        if (n_tiles % out->row_tiles != 0)
            return ts_fail(err, "%s: tensor '%s': %lld %s do not split into the %lld row blocks of "
                           "the config's %lld rows", f, t->name, (long long)n_tiles, kind,
                           (long long)out->row_tiles, (long long)rows);
        out->col_tiles = n_tiles / out->row_tiles;
    }
    out->stored_k = out->col_tiles * out->tile_cols;
    if (out->stored_k < k)
        return ts_fail(err, "%s: tensor '%s': the %s hold %lld columns, narrower than K = %lld",
                       f, t->name, kind, (long long)out->stored_k, (long long)k);
    /* K is padded to the next whole tile width only: more is a different matrix */
    if (out->stored_k - k >= out->tile_cols)
        return ts_fail(err, "%s: tensor '%s': the %s hold %lld columns, more than K = %lld plus "
                       "padding: the config and the tensor disagree", f, t->name, kind,
                       (long long)out->stored_k, (long long)k);
    return 0;
}

size_t q4nx_repacked_bytes(int64_t rows, int64_t k) {
    return (size_t)rows * type_row_bytes(TS_Q4NX, k);
}

void q4nx_repack(const tensor_entry *t, const q4nx_layout *lay, int64_t rows, int64_t k, uint8_t *dst) {
    const int R = lay->tile_rows, C = lay->tile_cols, G = C / GROUP;
    const size_t mins_at = (size_t)2 * G * R, codes_at = (size_t)4 * G * R;
    const size_t row_bytes = (size_t)(k / GROUP) * BLOCK_BYTES;
    for (int64_t r = 0; r < rows; r++) {
        const int64_t rt = r / R;
        const int rr = (int)(r % R);
        /* where row rr's codes sit inside a tile: its half of 16 rows, its byte, its nibble */
        const size_t code_row = (size_t)(rr / 16) * 8 * C + (size_t)(rr % 16) / 2;
        const int shift = (rr % 2) * 4;
        uint8_t *out = dst + (size_t)r * row_bytes;
        for (int64_t b = 0; b < k / GROUP; b++, out += BLOCK_BYTES) {
            const int64_t col = b * GROUP, ct = col / C;
            const int g = (int)(col % C) / GROUP;
            const uint8_t *tile = t->data + (size_t)(rt * lay->col_tiles + ct) * lay->tile_bytes;
            const size_t sm = (size_t)2 * ((size_t)g * R + rr);
            memcpy(out, tile + sm, 2);               /* scale (bf16, little-endian as stored) */
            memcpy(out + 2, tile + mins_at + sm, 2); /* min */
            const uint8_t *codes = tile + codes_at + code_row + (size_t)8 * (g * GROUP);
            for (int j = 0; j < GROUP / 2; j++) {
                uint8_t lo = (codes[8 * j] >> shift) & 0xf, hi = (codes[8 * (j + GROUP / 2)] >> shift) & 0xf;
                out[4 + j] = (uint8_t)(lo | hi << 4);
            }
        }
    }
}
