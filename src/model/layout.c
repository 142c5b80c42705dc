#include "model/layout.h"
#include "core/error.h"
#include <string.h>

int layout_unpermute_qk_rows(uint8_t *dst, const uint8_t *src, int64_t n_rows, size_t row_bytes,
                      int n_heads, const char *tensor_name, ts_error *err) {
    if (n_heads <= 0 || n_rows <= 0 || n_rows % (2 * (int64_t)n_heads) != 0)
        return ts_fail(err, "tensor '%s': %lld rows cannot be split into %d heads of pairs "
                       "(rows must be divisible by 2 x heads)", tensor_name,
                       (long long)n_rows, n_heads);
    int64_t d = n_rows / n_heads, half = d / 2;
    for (int64_t h = 0; h < n_heads; h++)
        for (int64_t s = 0; s < 2; s++)
            for (int64_t j = 0; j < half; j++)
                memcpy(dst + (size_t)(h * d + s * half + j) * row_bytes,
                       src + (size_t)(h * d + 2 * j + s) * row_bytes, row_bytes);
    return 0;
}
