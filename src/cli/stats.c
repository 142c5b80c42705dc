/* The statistics line. */
#include "cli/stats.h"
#include <inttypes.h>
#include <string.h>

void stats_print(FILE *f, const char *prefix, const ts_gen_result *res, int n_backed, uint64_t seed) {
    int n_new = res->n_prompt - res->n_reused;
    /* decode speed: the tokens after the first, over the time after the first */
    double decode_seconds = res->prompt_seconds + res->gen_seconds - res->first_token_seconds;
    fprintf(f, "%sprompt: %d tokens, %d reused, %d new, %.1f tok/s | first token: %.1f ms | generation: %d tokens, %.1f tok/s",
            prefix ? prefix : "", res->n_prompt, res->n_reused, n_new, n_new / (res->prompt_seconds + 1e-9),
            res->first_token_seconds * 1e3, res->n_generated,
            res->n_generated > 1 ? (res->n_generated - 1) / (decode_seconds + 1e-9) : 0.0);
    if (res->n_healed) fprintf(f, " | healed: %d prompt tokens backed up", n_backed);
    if (res->finish_reason && strcmp(res->finish_reason, "stop") && strcmp(res->finish_reason, "length"))
        fprintf(f, " | %s", !strcmp(res->finish_reason, "context") ? "context full" : "stopped");
    fprintf(f, " | seed %" PRIu64 "\n", seed);
}
