/* FastFlowLM q4nx tiles (../shared/SPEC.md, section 5) -> Q4NX block rows (src/kernels/q4nx.c).
 *
 * A pack stores each projection matrix as an I8 byte array of 4-bit tiles: per row and group of 32
 * columns a bf16 scale and a bf16 min, per weight an unsigned 4-bit code; weight = code*scale + min.
 * Two tile kinds exist, and the declared row width of the tensor names which one it holds:
 *   [n, 5120] (or [row_tiles, col_tiles, 5120]): tiles of 32 rows x 256 columns, K padded to 256;
 *   [n, 1280] (or [row_tiles, col_tiles, 1280]): quarter tiles of 16 rows x 128 columns.
 * Tiles are row-major over (row block, column block). The reader never guesses the kind from the
 * bytes: another width is refused.
 *
 * The repack is lossless (scale, min and codes copied bit for bit) into rows of K/32 blocks of 20
 * bytes (0.625 bytes per weight, as in the pack); the pad columns beyond K are dropped. */
#ifndef TS_IO_Q4NX_H
#define TS_IO_Q4NX_H
#include <stddef.h>
#include <stdint.h>
#include "tessera.h"
#include "io/tensor_dir.h"

enum q4nx_kind { Q4NX_TILE = 0, Q4NX_QUARTER = 1 };

typedef struct q4nx_layout {
    int kind;                  /* enum q4nx_kind */
    int tile_rows, tile_cols;  /* 32 x 256 or 16 x 128 */
    size_t tile_bytes;         /* 5120 or 1280 */
    int64_t row_tiles, col_tiles;
    int64_t stored_k;          /* col_tiles * tile_cols: K plus the pad columns */
} q4nx_layout;

/* "tiles" or "quarter tiles". */
const char *q4nx_kind_name(int kind);

/* The layout of tensor t holding a rows x k matrix, checked against the declared shape and the
 * byte count: the width must name a kind, the bytes be whole tiles, rows lie on the kind's row
 * grid, the tiles cover k columns padded to the next tile width (256 or 128), k be whole
 * 32-column groups. file names the container in messages (may be NULL). */
int q4nx_layout_of(const char *file, const tensor_entry *t, int64_t rows, int64_t k,
                   q4nx_layout *out, ts_error *err);

/* Bytes of the repacked rows x k matrix (rows of k/32 Q4NX blocks). */
size_t q4nx_repacked_bytes(int64_t rows, int64_t k);

/* Repacks tensor t (layout from q4nx_layout_of) into dst, q4nx_repacked_bytes(rows, k) bytes:
 * row r of the matrix at dst + r * (k/32) * 20. */
void q4nx_repack(const tensor_entry *t, const q4nx_layout *lay, int64_t rows, int64_t k, uint8_t *dst);

#endif
