/* The statistics line. */
#include "cli/stats.h"
#include <inttypes.h>
#include <string.h>

void stats_print(FILE *f, const char *prefix, const ts_gen_result *res, int n_backed, const ts_sampler_params *sampling,
                 double load_seconds) {
    int n_new = res->n_prompt - res->n_reused;
    /* decode speed: the tokens after the first, over the time after the first (none for one token) */
    double decode_seconds = res->prompt_seconds + res->gen_seconds - res->first_token_seconds;
    if (load_seconds >= 0) fprintf(f, "%sload: %.2f s | ", prefix ? prefix : "", load_seconds), prefix = NULL;
    fprintf(f, "%sprompt: %d token%s, %d reused, %d new, %.1f tok/s | first token: %.1f ms | generation: %d token%s",
            prefix ? prefix : "", res->n_prompt, res->n_prompt == 1 ? "" : "s", res->n_reused, n_new,
            n_new / (res->prompt_seconds + 1e-9), res->first_token_seconds * 1e3, res->n_generated,
            res->n_generated == 1 ? "" : "s");
    if (res->n_generated > 1) fprintf(f, ", %.1f tok/s", (res->n_generated - 1) / (decode_seconds + 1e-9));
    if (res->decode_weight_bytes > 0) fprintf(f, ", %.2f MB of weights read per step", res->decode_weight_bytes / 1e6);
    if (res->n_drafted)
        fprintf(f, " | speculation: %d of %d proposed accepted (%.0f%%)", res->n_accepted, res->n_drafted,
                100.0 * res->n_accepted / res->n_drafted);
    if (res->n_healed) fprintf(f, " | healed: %d prompt tokens backed up", n_backed);
    if (res->finish_reason && strcmp(res->finish_reason, "stop") && strcmp(res->finish_reason, "length"))
        fprintf(f, " | %s", !strcmp(res->finish_reason, "context") ? "context full" : "stopped");
    /* a greedy answer does not depend on a seed */
    if (sampling->temp > 0) fprintf(f, " | seed %" PRIu64, sampling->seed);
    fputc('\n', f);
}
