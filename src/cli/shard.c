/* --shard K/N: key ownership, the scheduler's environment, file names, digests, the manifest. */
#include "cli/shard.h"
#include "core/error.h"
#include "io/json.h"
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

uint64_t shard_hash(const char *key) {
    uint64_t h = 14695981039346656037ull;   /* FNV-1a 64 offset basis and prime */
    for (const unsigned char *p = (const unsigned char *)key; *p; p++) {
        h ^= *p;
        h *= 1099511628211ull;
    }
    return h;
}

bool shard_owns(const char *key, int k, int n) {
    return n <= 1 || (k >= 0 && shard_hash(key) % (uint64_t)n == (uint64_t)k);
}

/* ---- the scheduler's environment ---- */

/* A whole decimal number in [min, max]: digits only (no sign, no spaces, no hex), so that
 * "1e3", "-0", " 4" and "4x" are all refused instead of half-read. */
static int parse_count(const char *name, const char *text, long long min, long long max, int *out, ts_error *err) {
    long long v = 0;
    bool ok = *text != '\0';
    for (const char *p = text; ok && *p; p++) {
        if (*p < '0' || *p > '9') ok = false;
        else if ((v = v * 10 + (*p - '0')) > max) ok = false;   /* max <= INT_MAX: no overflow */
    }
    if (!ok || v < min)
        return ts_fail(err, "%s=\"%s\": expected a whole number from %lld to %lld", name, text, min, max);
    *out = (int)v;
    return 0;
}

static int from_slurm(const char *task_id, const char *count_option, int *k, int *n, ts_error *err) {
    const char *count = getenv("SLURM_ARRAY_TASK_COUNT"), *min = getenv("SLURM_ARRAY_TASK_MIN");
    const char *max = getenv("SLURM_ARRAY_TASK_MAX"), *step = getenv("SLURM_ARRAY_TASK_STEP");
    int id = 0, cnt = 0, lo = 0, hi = 0, st = 0, opt = 0;
    if (parse_count("SLURM_ARRAY_TASK_ID", task_id, 0, INT_MAX, &id, err) != 0) return -1;
    if (!count)
        return ts_fail(err, "SLURM_ARRAY_TASK_ID=%s is set without SLURM_ARRAY_TASK_COUNT: pass --shard K/N", task_id);
    if (parse_count("SLURM_ARRAY_TASK_COUNT", count, 1, SHARD_MAX_COUNT, &cnt, err) != 0) return -1;
    if (min && parse_count("SLURM_ARRAY_TASK_MIN", min, 0, INT_MAX, &lo, err) != 0) return -1;
    /* Checked on every task, not only on those whose k falls out of range: with --array=0-30:2 the
     * first half of the tasks would otherwise run and the rest fail, leaving holes. */
    bool contiguous = id >= lo && id - lo < cnt;
    if (contiguous && min && max) {
        if (parse_count("SLURM_ARRAY_TASK_MAX", max, 0, INT_MAX, &hi, err) != 0) return -1;
        contiguous = (long long)hi - lo + 1 == cnt;
    }
    if (contiguous && step) {
        if (parse_count("SLURM_ARRAY_TASK_STEP", step, 1, INT_MAX, &st, err) != 0) return -1;
        contiguous = st == 1;
    }
    if (!contiguous)
        return ts_fail(err, "SLURM_ARRAY_TASK_ID=%s (SLURM_ARRAY_TASK_MIN=%s, SLURM_ARRAY_TASK_MAX=%s, "
                       "SLURM_ARRAY_TASK_COUNT=%s, SLURM_ARRAY_TASK_STEP=%s): the job array must be contiguous, "
                       "like --array=0-15 or --array=1-16, to give shards 0..N-1",
                       task_id, min ? min : "unset", max ? max : "unset", count, step ? step : "unset");
    if (count_option) {
        if (parse_count("--shards", count_option, 1, SHARD_MAX_COUNT, &opt, err) != 0) return -1;
        if (opt != cnt)
            return ts_fail(err, "--shards %d disagrees with SLURM_ARRAY_TASK_COUNT=%d (the job array's size)", opt, cnt);
    }
    *k = id - lo;
    *n = cnt;
    return 1;
}

static int from_kubernetes(const char *index, const char *count_option, int *k, int *n, ts_error *err) {
    int idx = 0, cnt = 0;
    if (parse_count("JOB_COMPLETION_INDEX", index, 0, INT_MAX, &idx, err) != 0) return -1;
    if (!count_option)   /* the pod is told its index, not the Job's completions */
        return ts_fail(err, "JOB_COMPLETION_INDEX=%s is set (a Kubernetes indexed Job): pass --shards N, "
                       "N the Job's completions", index);
    if (parse_count("--shards", count_option, 1, SHARD_MAX_COUNT, &cnt, err) != 0) return -1;
    if (idx >= cnt)
        return ts_fail(err, "JOB_COMPLETION_INDEX=%s is not below --shards %d: --shards must be the Job's completions",
                       index, cnt);
    *k = idx;
    *n = cnt;
    return 1;
}

int shard_from_env(const char *count_option, int *k, int *n, const char **source, ts_error *err) {
    const char *task_id = getenv("SLURM_ARRAY_TASK_ID"), *index = getenv("JOB_COMPLETION_INDEX");
    int rc;
    *k = 0;
    *n = 1;
    *source = NULL;
    if (task_id) {
        if ((rc = from_slurm(task_id, count_option, k, n, err)) == 1) *source = "SLURM_ARRAY_TASK_ID";
    } else if (index) {
        if ((rc = from_kubernetes(index, count_option, k, n, err)) == 1) *source = "JOB_COMPLETION_INDEX";
    } else if (count_option) {
        rc = ts_fail(err, "--shards needs SLURM_ARRAY_TASK_ID or JOB_COMPLETION_INDEX (a Slurm job array or a "
                     "Kubernetes indexed Job); elsewhere use --shard K/N");
    } else {
        rc = 0;
    }
    if (rc < 0) { *k = 0; *n = 1; }
    return rc;
}

/* ---- file names ---- */

/* Where the last path component's extension starts (its dot), or the end of path when it has none.
 * Dots in directories ("runs.v2/out") and a leading dot (".out") are not extensions. */
static size_t extension_at(const char *path) {
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    const char *dot = strrchr(base, '.');
    return dot && dot > base ? (size_t)(dot - path) : strlen(path);
}

char *shard_output_name(const char *path, int k, int n) {
    if (n <= 1) return strdup(path);
    char count[32];
    int width = snprintf(count, sizeof count, "%d", n);
    if (width < 5) width = 5;
    size_t at = extension_at(path), len = strlen(path), cap = len + 2 * (size_t)width + 32;
    char *out = malloc(cap);
    if (!out) return NULL;
    snprintf(out, cap, "%.*s-%0*d-of-%0*d%s", (int)at, path, width, k, width, n, path + at);
    return out;
}

char *shard_manifest_name(const char *output_path) {
    static const char suffix[] = ".manifest.json";
    size_t at = extension_at(output_path);
    char *out = malloc(at + sizeof suffix);
    if (!out) return NULL;
    memcpy(out, output_path, at);
    memcpy(out + at, suffix, sizeof suffix);
    return out;
}

/* ---- the digest ---- */

#define DIGEST_BLOCK ((size_t)1 << 20)   /* a multiple of the 32-byte stripe: only the last block is partial */
#define P1 0x9E3779B185EBCA87ull
#define P2 0xC2B2AE3D27D4EB4Full
#define P3 0x165667B19E3779F9ull

static inline uint64_t rotl64(uint64_t x, int r) { return (x << r) | (x >> (64 - r)); }

/* One word into an accumulator. For a fixed accumulator it is a bijection of the word, and for a
 * fixed word a bijection of the accumulator, so one changed word always changes the digest. */
static inline uint64_t mix(uint64_t acc, uint64_t word) { return rotl64(acc ^ (word * P2), 31) * P1; }

static inline uint64_t load_le64(const unsigned char *p) {
    uint64_t w;
    memcpy(&w, p, 8);
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
    w = __builtin_bswap64(w);
#endif
    return w;
}

/* Four independent lanes over 32-byte stripes, so the multiplies overlap instead of waiting on
 * each other; what is left after the last whole stripe goes into the merged value. */
typedef struct digest_state { uint64_t lane[4]; uint64_t length; } digest_state;

static void digest_init(digest_state *s) {
    for (int i = 0; i < 4; i++) s->lane[i] = P3 * (uint64_t)(i + 1);
    s->length = 0;
}

/* Whole stripes only; returns how many bytes it took. */
static size_t digest_stripes(digest_state *s, const unsigned char *p, size_t len) {
    uint64_t a = s->lane[0], b = s->lane[1], c = s->lane[2], d = s->lane[3];
    size_t done = 0;
    for (; len - done >= 32; done += 32) {
        a = mix(a, load_le64(p + done));
        b = mix(b, load_le64(p + done + 8));
        c = mix(c, load_le64(p + done + 16));
        d = mix(d, load_le64(p + done + 24));
    }
    s->lane[0] = a; s->lane[1] = b; s->lane[2] = c; s->lane[3] = d;
    s->length += done;
    return done;
}

/* The rest (under 32 bytes), then the length, then an avalanche so every input bit reaches every
 * output bit. */
static uint64_t digest_finish(digest_state *s, const unsigned char *p, size_t len) {
    uint64_t h = P3;
    for (int i = 0; i < 4; i++) h = mix(h, s->lane[i]);
    size_t i = 0;
    for (; len - i >= 8; i += 8) h = mix(h, load_le64(p + i));
    for (; i < len; i++) h = rotl64(h ^ (p[i] * P3), 11) * P1;
    h ^= s->length + len;
    h ^= h >> 33; h *= P2;
    h ^= h >> 29; h *= P3;
    h ^= h >> 32;
    return h;
}

int shard_file_digest(const char *path, char out[17], uint64_t *size, ts_error *err) {
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return ts_fail(err, "%s: cannot open: %s", path, strerror(errno));
    struct stat st;
    if (fstat(fd, &st) != 0) { int e = errno; close(fd); return ts_fail(err, "%s: %s", path, strerror(e)); }
    if (S_ISDIR(st.st_mode)) { close(fd); return ts_fail(err, "%s: is a directory, not a file", path); }
#ifdef POSIX_FADV_SEQUENTIAL
    posix_fadvise(fd, 0, 0, POSIX_FADV_SEQUENTIAL);
#endif
    unsigned char *buf = malloc(DIGEST_BLOCK);
    if (!buf) { close(fd); return ts_fail(err, "out of memory"); }
    digest_state s;
    digest_init(&s);
    size_t have = 0;   /* bytes in buf; a block is only hashed when full (or at the end) */
    for (;;) {
        ssize_t got = read(fd, buf + have, DIGEST_BLOCK - have);
        if (got < 0 && errno == EINTR) continue;
        if (got < 0) {
            int e = errno;
            free(buf);
            close(fd);
            return ts_fail(err, "%s: cannot read: %s", path, strerror(e));
        }
        have += (size_t)got;
        if (got == 0 || have == DIGEST_BLOCK) {
            size_t done = digest_stripes(&s, buf, have);
            memmove(buf, buf + done, have - done);   /* nothing moves except at the end */
            have -= done;
        }
        if (got == 0) break;
    }
    uint64_t h = digest_finish(&s, buf, have);
    *size = s.length + have;
    free(buf);
    close(fd);
    snprintf(out, 17, "%016" PRIx64, h);
    return 0;
}

/* ---- the manifest ---- */

static int put_str(json_buf *b, const char *s) {
    return s ? json_buf_put_string(b, s, strlen(s)) : json_buf_put(b, "null", 4);
}

static int put_raw(json_buf *b, const char *s) { return json_buf_put(b, s, strlen(s)); }

static int put_uint(json_buf *b, uint64_t v) {
    char num[32];
    snprintf(num, sizeof num, "%" PRIu64, v);
    return put_raw(b, num);
}

/* The caller's options go in verbatim: they must be an object, and on one line, or the manifest
 * would stop being one JSON line. */
static int check_options(const char *options, ts_error *err) {
    if (!options) return 0;
    if (strpbrk(options, "\n\r")) return ts_fail(err, "manifest options: not on one line");
    json_value *v;
    ts_error e;
    if (json_parse(options, strlen(options), &v, &e) != 0) return ts_fail(err, "manifest options: %s", e.msg);
    bool object = v->type == JSON_OBJECT;
    json_free(v);
    return object ? 0 : ts_fail(err, "manifest options: not a JSON object");
}

static int format_manifest(json_buf *b, const shard_manifest *m) {
    int r = 0;
    r |= put_raw(b, "{\"run\":{\"engine\":{\"name\":");
    r |= put_str(b, m->engine_name);
    r |= put_raw(b, ",\"version\":");
    r |= put_str(b, m->engine_version);
    r |= put_raw(b, "},\"model\":{\"digest\":");
    r |= put_str(b, m->model_digest);
    r |= put_raw(b, ",\"size\":");
    r |= put_uint(b, m->model_size);
    r |= put_raw(b, "},\"input\":{\"digest\":");
    r |= put_str(b, m->input_digest);
    r |= put_raw(b, "},\"shards\":");
    r |= put_uint(b, (uint64_t)(m->shard_count > 0 ? m->shard_count : 1));
    r |= put_raw(b, ",\"options\":");
    r |= put_raw(b, m->options_json ? m->options_json : "null");
    r |= put_raw(b, "},\"shard\":{\"index\":");
    r |= put_uint(b, (uint64_t)(m->shard_index > 0 ? m->shard_index : 0));
    r |= put_raw(b, ",\"count\":");
    r |= put_uint(b, (uint64_t)(m->shard_count > 0 ? m->shard_count : 1));
    r |= put_raw(b, ",\"output\":");
    r |= put_str(b, m->output_path);
    r |= put_raw(b, ",\"model_path\":");
    r |= put_str(b, m->model_path);
    r |= put_raw(b, ",\"input_path\":");
    r |= put_str(b, m->input_path);
    r |= put_raw(b, ",\"started_at\":");
    r |= put_str(b, m->started_at);
    r |= put_raw(b, "}}\n");
    return r ? -1 : 0;
}

static int write_all(int fd, const char *p, size_t len) {
    while (len) {
        ssize_t w = write(fd, p, len);
        if (w < 0 && errno == EINTR) continue;
        if (w < 0) return -1;
        p += w;
        len -= (size_t)w;
    }
    return 0;
}

int shard_write_manifest(const char *path, const shard_manifest *m, ts_error *err) {
    if (check_options(m->options_json, err) != 0) return -1;
    json_buf b = {0};
    if (format_manifest(&b, m) != 0) { json_buf_free(&b); return ts_fail(err, "out of memory"); }
    /* The temporary file is beside path, so the rename stays within one file system. */
    const char *slash = strrchr(path, '/');
    size_t dir_len = slash ? (size_t)(slash - path) + 1 : 0;
    char *tmp = malloc(strlen(path) + 16);
    if (!tmp) { json_buf_free(&b); return ts_fail(err, "out of memory"); }
    sprintf(tmp, "%.*s.%s.tmp-XXXXXX", (int)dir_len, path, path + dir_len);
    int rc = -1, fd = mkostemp(tmp, O_CLOEXEC);
    if (fd < 0) {
        ts_fail(err, "%s: cannot create a file beside it to write it: %s", path, strerror(errno));
        goto done;
    }
    if (fchmod(fd, 0644) != 0 || write_all(fd, b.data, b.len) != 0 || fsync(fd) != 0) {
        ts_fail(err, "%s: writing it failed: %s", tmp, strerror(errno));
        goto done;
    }
    if (close(fd) != 0) { fd = -1; ts_fail(err, "%s: writing it failed: %s", tmp, strerror(errno)); goto done; }
    fd = -1;
    if (rename(tmp, path) != 0) { ts_fail(err, "%s: cannot put the manifest in place: %s", path, strerror(errno)); goto done; }
    free(tmp);
    tmp = NULL;
    /* The rename itself survives a crash only once the directory is synced; best effort. */
    char *dir = dir_len ? strndup(path, dir_len) : strdup(".");
    int dfd = dir ? open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC) : -1;
    if (dfd >= 0) { fsync(dfd); close(dfd); }
    free(dir);
    rc = 0;
done:
    if (fd >= 0) close(fd);
    if (tmp) { unlink(tmp); free(tmp); }
    json_buf_free(&b);
    return rc;
}
