/* --shard K/N: which lines of a --batch file this process answers, where it writes them, and the
 * manifest that lets the shards of one run be checked for having run the same thing. Pure helpers:
 * no global state; what can fail returns -1 with a ts_error. */
#ifndef TS_CLI_SHARD_H
#define TS_CLI_SHARD_H
#include <stdbool.h>
#include <stdint.h>
#include "tessera.h"

/* The most shards a run can be split into (--shard, --shards, the environment). */
#define SHARD_MAX_COUNT 1000000

/* FNV-1a 64 of the key's bytes: no seed, so every run on every machine puts a key in the same
 * shard. */
uint64_t shard_hash(const char *key);
/* Whether shard k of n answers the line known by key: n <= 1 answers everything; otherwise exactly
 * one k in 0..n-1 owns each key. */
bool     shard_owns(const char *key, int k, int n);

/* The shard to use when --shard is not given, from a cluster scheduler's environment.
 * count_option is the text of --shards N (NULL when absent).
 *   Slurm job arrays: k = SLURM_ARRAY_TASK_ID - SLURM_ARRAY_TASK_MIN (MIN unset: 0),
 *     n = SLURM_ARRAY_TASK_COUNT; the array must be contiguous (--array=0-15 or 1-16, any %throttle).
 *     --shards, when given, must equal the task count.
 *   Kubernetes indexed Jobs: k = JOB_COMPLETION_INDEX; n must come from --shards (the Job's
 *     completions), since the pod is not told it.
 *   Slurm wins when both are set.
 * Returns 1 with *k, *n set and *source the variable that gave k ("SLURM_ARRAY_TASK_ID" or
 * "JOB_COMPLETION_INDEX", a string literal); 0 when the environment names no shard (*k = 0, *n = 1,
 * *source = NULL); -1 when a value is malformed, missing or inconsistent (the message names the
 * variable and its value; an empty variable counts as malformed, not as absent, because a shard
 * that silently answered everything would be worse than one that stops). */
int shard_from_env(const char *count_option, int *k, int *n, const char **source, ts_error *err);

/* The output file of shard k of n: "NAME.jsonl" -> "NAME-00003-of-00016.jsonl" (inserted before the
 * last extension of the last path component; "NAME" -> "NAME-00003-of-00016"; a leading dot, as in
 * ".out", is not an extension). Numbers are 5 digits wide, more when n has more. n <= 1: a copy of
 * path. malloc'd; NULL only when out of memory. */
char *shard_output_name(const char *path, int k, int n);
/* The manifest beside an output file: the last extension replaced by ".manifest.json"
 * ("NAME-00003-of-00016.jsonl" -> "NAME-00003-of-00016.manifest.json"; no extension: appended).
 * malloc'd; NULL only when out of memory. */
char *shard_manifest_name(const char *output_path);

/* A fast (several GB/s), stable 64-bit digest of a whole file's contents, as 16 lowercase hex
 * digits in out, and the file's size in *size. It tells different files apart (a model copied
 * differently to one node, a changed input); it is NOT a security hash: anyone can make two files
 * with the same digest on purpose. Directories are refused. */
int shard_file_digest(const char *path, char out[17], uint64_t *size, ts_error *err);

/* What one shard ran. Strings may be NULL (written as null). */
typedef struct shard_manifest {
    const char *engine_name, *engine_version;
    const char *model_path, *model_digest;
    uint64_t model_size;
    const char *input_path, *input_digest;
    const char *options_json;   /* a JSON object's text on one line, written as it is */
    int shard_index, shard_count;
    const char *output_path;
    const char *started_at;     /* UTC, e.g. "2026-12-04T23:05:59Z" */
} shard_manifest;

/* Writes the manifest as one JSON object on one line to path, atomically (a temporary file beside
 * it, fsync, rename: a reader sees the old file or the whole new one). Its shape:
 *   {"run":{"engine":{"name","version"},"model":{"digest","size"},"input":{"digest"},
 *           "shards":N,"options":{...}},
 *    "shard":{"index","count","output","model_path","input_path","started_at"}}
 * "run" holds only what must be equal across the shards of one run, so
 * `jq -c .run *.manifest.json | sort -u | wc -l` is 1 when they all ran the same thing; the paths
 * are per shard because nodes may see the same file under different paths (the digests compare the
 * contents). -1 when options_json is not a one-line JSON object or the file cannot be written. */
int shard_write_manifest(const char *path, const shard_manifest *m, ts_error *err);

#endif
