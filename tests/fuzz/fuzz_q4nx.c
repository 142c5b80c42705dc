/* libFuzzer: the q4nx tile reader. An 18-byte header gives the declared shape and the config's
 * matrix (rows, K); the rest is the tile bytes. The shape always agrees with the byte count when
 * it reaches the reader, as the safetensors reader guarantees, and a layout that is accepted is
 * repacked into a buffer of exactly q4nx_repacked_bytes (ASan catches any write beyond it). */
#include "fuzz_common.h"
#include "io/q4nx.h"
#include "kernels/types.h"

static uint16_t rd16(const uint8_t *p) { return (uint16_t)(p[0] | p[1] << 8); }

int LLVMFuzzerInitialize(int *argc, char ***argv) { (void)argc; (void)argv; return 0; }

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size < 18) return 0;
    const uint8_t ctl = data[0];
    static const int64_t widths[4] = { 5120, 1280, 2560, 0 };
    tensor_entry t = { .name = "fuzz.weight", .type = ctl & 0x80 ? TS_U8 : TS_I8 };
    t.n_dims = 2 + ((ctl >> 2) & 1);
    t.ne[0] = widths[ctl & 3] ? widths[ctl & 3] : rd16(data + 1) + 1;
    int64_t rows = (int64_t)rd16(data + 3) * ((ctl & 0x40) ? 16 : 1);
    int64_t k = (int64_t)rd16(data + 5) * ((ctl & 0x20) ? 32 : 1);
    if (ctl & 0x10) { rows = -rows; }
    t.data = data + 18;
    t.nbytes = size - 18;
    /* declared shape: ne[1] (and ne[2]) from the header, ne[last] rounded to hold the bytes */
    if (t.n_dims == 3) {
        t.ne[1] = rd16(data + 7) + 1;
        uint64_t per = (uint64_t)t.ne[0] * (uint64_t)t.ne[1];
        if (t.nbytes % per) return 0;
        t.ne[2] = (int64_t)(t.nbytes / per);
    } else {
        if (t.nbytes % (uint64_t)t.ne[0]) return 0;
        t.ne[1] = (int64_t)(t.nbytes / (uint64_t)t.ne[0]);
    }
    if (t.ne[t.n_dims - 1] == 0) return 0;
    q4nx_layout lay;
    ts_error err;
    if (q4nx_layout_of("fuzz.q4nx", &t, rows, k, &lay, &err) != 0) {
        if (strchr(err.msg, '\n')) abort();
        return 0;
    }
    size_t bytes = q4nx_repacked_bytes(rows, k);
    if (bytes != (size_t)rows * (size_t)(k / 32) * 20) abort();
    uint8_t *dst = malloc(bytes);
    q4nx_repack(&t, &lay, rows, k, dst);
    volatile unsigned sink = dst[0] + dst[bytes - 1];
    (void)sink;
    free(dst);
    return 0;
}
