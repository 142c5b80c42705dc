/* --shard helpers: key ownership, the scheduler's environment, names, digests, the manifest. */
#include "check.h"
#include "cli/shard.h"
#include "io/json.h"
#include <dirent.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

/* ---- independent references ---- */

/* FNV-1a 64 written from its definition, indexing instead of walking a pointer. */
static uint64_t ref_fnv1a(const char *s) {
    uint64_t h = 0xcbf29ce484222325ull;
    size_t n = strlen(s);
    for (size_t i = 0; i < n; i++) h = (h ^ (uint8_t)s[i]) * 0x00000100000001b3ull;
    return h;
}

/* The digest over a buffer in memory, words assembled byte by byte (the module reads blocks of a
 * file with memcpy loads): the two agreeing checks the block boundaries and the byte order. */
static uint64_t ref_rotl(uint64_t x, int r) { return (x << r) | (x >> (64 - r)); }
static uint64_t ref_mix(uint64_t acc, uint64_t w) {
    return ref_rotl(acc ^ (w * 0xC2B2AE3D27D4EB4Full), 31) * 0x9E3779B185EBCA87ull;
}
static uint64_t ref_word(const unsigned char *p) {
    uint64_t w = 0;
    for (int i = 7; i >= 0; i--) w = (w << 8) | p[i];
    return w;
}
static uint64_t ref_digest(const unsigned char *p, size_t len) {
    const uint64_t P1 = 0x9E3779B185EBCA87ull, P2 = 0xC2B2AE3D27D4EB4Full, P3 = 0x165667B19E3779F9ull;
    uint64_t lane[4] = {P3, 2 * P3, 3 * P3, 4 * P3};
    size_t stripes = len / 32, i;
    for (size_t s = 0; s < stripes; s++)
        for (int l = 0; l < 4; l++) lane[l] = ref_mix(lane[l], ref_word(p + 32 * s + 8 * l));
    uint64_t h = P3;
    for (int l = 0; l < 4; l++) h = ref_mix(h, lane[l]);
    for (i = 32 * stripes; i + 8 <= len; i += 8) h = ref_mix(h, ref_word(p + i));
    for (; i < len; i++) h = ref_rotl(h ^ ((uint64_t)p[i] * P3), 11) * P1;
    h ^= (uint64_t)len;
    h ^= h >> 33; h *= P2;
    h ^= h >> 29; h *= P3;
    h ^= h >> 32;
    return h;
}

static void test_hash(void) {
    const char *keys[] = {"", "a", "\"id-1\"", "null@17", "12345", "\"\xc3\xa9t\xc3\xa9\""};
    bool all = true;
    for (size_t i = 0; i < sizeof keys / sizeof *keys; i++) all &= shard_hash(keys[i]) == ref_fnv1a(keys[i]);
    CHECK(all, "shard_hash agrees with a reference FNV-1a 64 on %zu keys", sizeof keys / sizeof *keys);
    /* Published FNV-1a 64 values: the hash is the standard one, not merely self-consistent. */
    CHECK(shard_hash("") == 0xcbf29ce484222325ull && shard_hash("a") == 0xaf63dc4c8601ec8cull
          && shard_hash("foobar") == 0x85944171f73967e8ull, "shard_hash matches published FNV-1a 64 vectors");
    CHECK(shard_owns("anything", 0, 1) && shard_owns("anything", 5, 0), "n <= 1 owns every key");
    CHECK(!shard_owns("anything", -1, 4), "a negative k owns nothing");
}

static void test_partition(void) {
    static const int counts[] = {3, 7, 16};
    char key[32];
    for (size_t c = 0; c < 3; c++) {
        int n = counts[c], size[16] = {0};
        bool exactly_one = true;
        for (int i = 0; i < 10000; i++) {
            if (i % 2) snprintf(key, sizeof key, "\"q-%d\"", i);
            else snprintf(key, sizeof key, "null@%d", i);
            int owners = 0;
            for (int k = 0; k < n; k++)
                if (shard_owns(key, k, n)) { owners++; size[k]++; }
            exactly_one &= owners == 1;
        }
        CHECK(exactly_one, "n=%d: each of 10000 keys is owned by exactly one shard", n);
        double even = 10000.0 / n;
        bool balanced = true;
        for (int k = 0; k < n; k++) balanced &= size[k] > 0.8 * even && size[k] < 1.2 * even;
        CHECK(balanced, "n=%d: every shard holds within 20%% of %.0f keys", n, even);
    }
}

/* ---- the environment ---- */

static const char *const env_names[] = {
    "SLURM_ARRAY_TASK_ID", "SLURM_ARRAY_TASK_COUNT", "SLURM_ARRAY_TASK_MIN", "SLURM_ARRAY_TASK_MAX",
    "SLURM_ARRAY_TASK_STEP", "JOB_COMPLETION_INDEX"};

static void env_clear(void) {
    for (size_t i = 0; i < sizeof env_names / sizeof *env_names; i++) unsetenv(env_names[i]);
}

/* Sets the variables given as NAME, VALUE pairs (NULL-terminated) on a clean environment. */
static void env_set(const char *first, ...) {
    env_clear();
    va_list ap;
    va_start(ap, first);
    for (const char *name = first; name; name = va_arg(ap, const char *)) setenv(name, va_arg(ap, const char *), 1);
    va_end(ap);
}

typedef struct env_result { int rc, k, n; const char *source; ts_error err; } env_result;

static env_result env_run(const char *count_option) {
    env_result r;
    memset(&r, 0, sizeof r);
    r.k = r.n = -7;
    r.rc = shard_from_env(count_option, &r.k, &r.n, &r.source, &r.err);
    return r;
}

static void test_env(void) {
    env_result r;

    env_set(NULL);
    r = env_run(NULL);
    CHECK(r.rc == 0 && r.k == 0 && r.n == 1 && !r.source, "no scheduler: 0, shard 0 of 1");

    env_set("SLURM_ARRAY_TASK_ID", "3", "SLURM_ARRAY_TASK_COUNT", "16", NULL);
    r = env_run(NULL);
    CHECK(r.rc == 1 && r.k == 3 && r.n == 16 && r.source && !strcmp(r.source, "SLURM_ARRAY_TASK_ID"),
          "Slurm without MIN: k = task id");

    env_set("SLURM_ARRAY_TASK_ID", "4", "SLURM_ARRAY_TASK_COUNT", "16", "SLURM_ARRAY_TASK_MIN", "1",
            "SLURM_ARRAY_TASK_MAX", "16", "SLURM_ARRAY_TASK_STEP", "1", NULL);
    r = env_run(NULL);
    CHECK(r.rc == 1 && r.k == 3 && r.n == 16, "Slurm --array=1-16: task 4 is shard 3");

    env_set("SLURM_ARRAY_TASK_ID", "16", "SLURM_ARRAY_TASK_COUNT", "16", "SLURM_ARRAY_TASK_MIN", "1",
            "SLURM_ARRAY_TASK_MAX", "16", NULL);
    r = env_run(NULL);
    CHECK(r.rc == 1 && r.k == 15 && r.n == 16, "Slurm --array=1-16: task 16 is shard 15");

    env_set("SLURM_ARRAY_TASK_ID", "16", "SLURM_ARRAY_TASK_COUNT", "16", NULL);
    r = env_run(NULL);
    CHECK(r.rc == -1 && r.k == 0 && r.n == 1 && strstr(r.err.msg, "contiguous") && strstr(r.err.msg, "--array=0-15"),
          "Slurm task id beyond the count without MIN: contiguous-array error (%s)", r.err.msg);

    env_set("SLURM_ARRAY_TASK_ID", "2", "SLURM_ARRAY_TASK_COUNT", "16", "SLURM_ARRAY_TASK_MIN", "0",
            "SLURM_ARRAY_TASK_MAX", "30", "SLURM_ARRAY_TASK_STEP", "2", NULL);
    r = env_run(NULL);
    CHECK(r.rc == -1 && strstr(r.err.msg, "contiguous"), "Slurm --array=0-30:2 is refused on every task (%s)", r.err.msg);

    env_set("SLURM_ARRAY_TASK_ID", "1", "SLURM_ARRAY_TASK_COUNT", "3", "SLURM_ARRAY_TASK_MIN", "1",
            "SLURM_ARRAY_TASK_MAX", "5", NULL);
    r = env_run(NULL);
    CHECK(r.rc == -1 && strstr(r.err.msg, "contiguous"), "Slurm --array=1,3,5 is refused (%s)", r.err.msg);

    env_set("SLURM_ARRAY_TASK_ID", "0", "SLURM_ARRAY_TASK_COUNT", "4", "SLURM_ARRAY_TASK_MIN", "1", NULL);
    r = env_run(NULL);
    CHECK(r.rc == -1 && strstr(r.err.msg, "contiguous"), "Slurm task id below MIN is refused");

    env_set("SLURM_ARRAY_TASK_ID", "3", NULL);
    r = env_run(NULL);
    CHECK(r.rc == -1 && strstr(r.err.msg, "SLURM_ARRAY_TASK_COUNT"), "Slurm without a count is refused (%s)", r.err.msg);

    static const char *const bad[] = {"", "-1", "+3", " 3", "3 ", "3x", "0x3", "1e2", "99999999999999999999"};
    bool all = true;
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        env_set("SLURM_ARRAY_TASK_ID", bad[i], "SLURM_ARRAY_TASK_COUNT", "4", NULL);
        r = env_run(NULL);
        all &= r.rc == -1 && strstr(r.err.msg, "SLURM_ARRAY_TASK_ID") && strstr(r.err.msg, bad[i]);
    }
    CHECK(all, "malformed task ids are refused, naming the variable and the value");

    static const char *const bad_count[] = {"0", "1000001", "2147483648", "-4", "4.0"};
    all = true;
    for (size_t i = 0; i < sizeof bad_count / sizeof *bad_count; i++) {
        env_set("SLURM_ARRAY_TASK_ID", "0", "SLURM_ARRAY_TASK_COUNT", bad_count[i], NULL);
        r = env_run(NULL);
        all &= r.rc == -1 && strstr(r.err.msg, "SLURM_ARRAY_TASK_COUNT") && strstr(r.err.msg, bad_count[i]);
    }
    CHECK(all, "counts outside 1..1000000 or not whole numbers are refused");

    env_set("SLURM_ARRAY_TASK_ID", "0", "SLURM_ARRAY_TASK_COUNT", "1000000", NULL);
    r = env_run(NULL);
    CHECK(r.rc == 1 && r.n == 1000000, "a count of 1000000 is accepted");

    env_set("SLURM_ARRAY_TASK_ID", "1", "SLURM_ARRAY_TASK_COUNT", "4", NULL);
    r = env_run("4");
    CHECK(r.rc == 1 && r.k == 1 && r.n == 4, "Slurm with an agreeing --shards");
    r = env_run("8");
    CHECK(r.rc == -1 && strstr(r.err.msg, "--shards 8") && strstr(r.err.msg, "SLURM_ARRAY_TASK_COUNT"),
          "Slurm with a disagreeing --shards is refused (%s)", r.err.msg);

    env_set("SLURM_ARRAY_TASK_ID", "2", "SLURM_ARRAY_TASK_COUNT", "4", "JOB_COMPLETION_INDEX", "0", NULL);
    r = env_run(NULL);
    CHECK(r.rc == 1 && r.k == 2 && r.n == 4 && !strcmp(r.source, "SLURM_ARRAY_TASK_ID"), "Slurm wins over Kubernetes");

    env_set("JOB_COMPLETION_INDEX", "5", NULL);
    r = env_run("8");
    CHECK(r.rc == 1 && r.k == 5 && r.n == 8 && r.source && !strcmp(r.source, "JOB_COMPLETION_INDEX"),
          "Kubernetes: index from JOB_COMPLETION_INDEX, count from --shards");
    r = env_run(NULL);
    CHECK(r.rc == -1 && r.k == 0 && r.n == 1 && strstr(r.err.msg, "--shards N") && strstr(r.err.msg, "completions"),
          "Kubernetes without --shards is refused (%s)", r.err.msg);
    r = env_run("5");
    CHECK(r.rc == -1 && strstr(r.err.msg, "JOB_COMPLETION_INDEX=5"), "Kubernetes index not below --shards is refused (%s)", r.err.msg);
    r = env_run("eight");
    CHECK(r.rc == -1 && strstr(r.err.msg, "--shards") && strstr(r.err.msg, "eight"), "a malformed --shards is refused (%s)", r.err.msg);

    env_set("JOB_COMPLETION_INDEX", "x", NULL);
    r = env_run("8");
    CHECK(r.rc == -1 && strstr(r.err.msg, "JOB_COMPLETION_INDEX=\"x\""), "a malformed JOB_COMPLETION_INDEX is refused (%s)", r.err.msg);

    env_set(NULL);
    r = env_run("8");
    CHECK(r.rc == -1 && strstr(r.err.msg, "--shards needs SLURM_ARRAY_TASK_ID or JOB_COMPLETION_INDEX"),
          "--shards without a scheduler is refused (%s)", r.err.msg);
    env_clear();
}

/* ---- names ---- */

static bool name_is(char *got, const char *want) {
    bool same = got && !strcmp(got, want);
    if (!same) printf("# got \"%s\", want \"%s\"\n", got ? got : "(null)", want);
    free(got);
    return same;
}

static void test_names(void) {
    CHECK(name_is(shard_output_name("out.jsonl", 3, 16), "out-00003-of-00016.jsonl"), "out.jsonl, shard 3 of 16");
    CHECK(name_is(shard_output_name("dir.v2/out", 3, 16), "dir.v2/out-00003-of-00016"), "a dot in a directory is no extension");
    CHECK(name_is(shard_output_name("a/b.c/out.jsonl", 0, 2), "a/b.c/out-00000-of-00002.jsonl"), "a/b.c/out.jsonl");
    CHECK(name_is(shard_output_name("x.tar.gz", 1, 2), "x.tar-00001-of-00002.gz"), "only the last extension moves");
    CHECK(name_is(shard_output_name("runs/.out", 1, 2), "runs/.out-00001-of-00002"), "a leading dot is no extension");
    CHECK(name_is(shard_output_name("out.jsonl", 0, 1), "out.jsonl"), "n=1: the path itself");
    CHECK(name_is(shard_output_name("out.jsonl", 0, 0), "out.jsonl"), "n=0: the path itself");
    CHECK(name_is(shard_output_name("out.jsonl", 42, 100000), "out-000042-of-100000.jsonl"), "n=100000: 6 digits");
    CHECK(name_is(shard_output_name("out.jsonl", 99999, 99999), "out-99999-of-99999.jsonl"), "n=99999: 5 digits");

    CHECK(name_is(shard_manifest_name("out-00003-of-00016.jsonl"), "out-00003-of-00016.manifest.json"), "manifest beside a shard");
    CHECK(name_is(shard_manifest_name("dir.v2/out"), "dir.v2/out.manifest.json"), "manifest of a name without extension");
    CHECK(name_is(shard_manifest_name("a.b/c.d.jsonl"), "a.b/c.d.manifest.json"), "manifest replaces only the last extension");
}

/* ---- the digest ---- */

static char dir[] = "/tmp/test_shard-XXXXXX";

static char *temp_path(const char *name) {
    char *p = malloc(strlen(dir) + strlen(name) + 2);
    sprintf(p, "%s/%s", dir, name);
    return p;
}

static void write_file(const char *path, const void *data, size_t len) {
    FILE *f = fopen(path, "wb");
    if (!f) { perror(path); exit(2); }
    if (len) fwrite(data, 1, len, f);
    fclose(f);
}

static bool digest_is(const char *path, const unsigned char *data, size_t len, char hex[17]) {
    ts_error err;
    uint64_t size = 1234;
    char want[17];
    snprintf(want, sizeof want, "%016" PRIx64, ref_digest(data, len));
    if (shard_file_digest(path, hex, &size, &err) != 0) { printf("# %s\n", err.msg); return false; }
    if (strcmp(hex, want) || size != len) printf("# %s: got %s (%" PRIu64 " bytes), want %s (%zu)\n", path, hex, size, want, len);
    return !strcmp(hex, want) && size == len && strlen(hex) == 16;
}

static void test_digest(void) {
    size_t big = ((size_t)1 << 20) + 3;
    unsigned char *data = malloc(big);
    uint64_t x = 88172645463325252ull;   /* xorshift: bytes with no pattern */
    for (size_t i = 0; i < big; i++) { x ^= x << 13; x ^= x >> 7; x ^= x << 17; data[i] = (unsigned char)x; }
    char *a = temp_path("a"), *b = temp_path("b");
    char ha[17], hb[17];
    static const size_t sizes[] = {0, 1, 7, 8, 31, 32, 33, 40, (size_t)1 << 20, ((size_t)1 << 20) + 3};
    bool all = true;
    for (size_t i = 0; i < sizeof sizes / sizeof *sizes; i++) {
        write_file(a, data, sizes[i]);
        all &= digest_is(a, data, sizes[i], ha);
    }
    CHECK(all, "the digest agrees with a reference for sizes 0 to 1 MiB + 3, and gives the size");

    write_file(a, data, big);
    write_file(b, data, big);
    digest_is(a, data, big, ha);
    digest_is(b, data, big, hb);
    CHECK(!strcmp(ha, hb), "equal files, equal digests (%s)", ha);
    data[big - 2] ^= 1;   /* in the tail, after the last whole block */
    write_file(b, data, big);
    CHECK(digest_is(b, data, big, hb) && strcmp(ha, hb), "one changed byte in the tail changes the digest (%s)", hb);
    data[big - 2] ^= 1;
    data[12345] ^= 0x80;   /* inside the first block */
    write_file(b, data, big);
    CHECK(digest_is(b, data, big, hb) && strcmp(ha, hb), "one changed byte in the first block changes the digest");
    data[12345] ^= 0x80;

    char h0[17], h1[17];
    memset(data, 0, 16);
    write_file(a, data, 7);
    write_file(b, data, 8);
    digest_is(a, data, 7, h0);
    digest_is(b, data, 8, h1);
    CHECK(strcmp(h0, h1), "7 and 8 zero bytes differ (the length counts)");

    ts_error err;
    uint64_t size;
    CHECK(shard_file_digest(dir, ha, &size, &err) == -1 && strstr(err.msg, "directory"), "a directory is refused (%s)", err.msg);
    char *missing = temp_path("missing");
    CHECK(shard_file_digest(missing, ha, &size, &err) == -1 && strstr(err.msg, missing), "a missing file is refused (%s)", err.msg);
    unlink(a);
    unlink(b);
    free(missing);
    free(a);
    free(b);
    free(data);
}

/* ---- the manifest ---- */

static bool dir_holds_only(const char *name) {
    DIR *d = opendir(dir);
    struct dirent *e;
    bool only = true;
    while ((e = readdir(d))) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
        if (strcmp(e->d_name, name)) { printf("# left behind: %s\n", e->d_name); only = false; }
    }
    closedir(d);
    return only;
}

static void test_manifest(void) {
    char *out = temp_path("out-00003-of-00016.jsonl"), *path = shard_manifest_name(out);
    shard_manifest m = {
        .engine_name = "tessera", .engine_version = "0.9 (abc123)",
        .model_path = "/models/sm\"ol\n.gguf", .model_digest = "0123456789abcdef", .model_size = 5000000000ull,
        .input_path = "in.jsonl", .input_digest = "fedcba9876543210",
        .options_json = "{\"temperature\":0,\"max_tokens\":64}",
        .shard_index = 3, .shard_count = 16, .output_path = out, .started_at = "2026-12-04T23:05:59Z"};
    ts_error err;
    int rc = shard_write_manifest(path, &m, &err);
    CHECK(rc == 0, "manifest written (%s)", rc ? err.msg : "ok");
    size_t len;
    char *text = read_all(path, &len);
    CHECK(text && len > 0 && text[len - 1] == '\n' && memchr(text, '\n', len) == text + len - 1,
          "the manifest is one line ending in a newline");
    json_value *v = NULL;
    CHECK(text && json_parse(text, len, &v, &err) == 0, "the manifest is JSON");
    if (v) {
        const json_value *run = json_get(v, "run"), *shard = json_get(v, "shard");
        const json_value *engine = json_get(run, "engine"), *model = json_get(run, "model"), *input = json_get(run, "input");
        const json_value *options = json_get(run, "options");
        CHECK(engine && !strcmp(json_get_str(engine, "name"), "tessera") && !strcmp(json_get_str(engine, "version"), "0.9 (abc123)"),
              "run.engine");
        CHECK(model && !strcmp(json_get_str(model, "digest"), "0123456789abcdef") && json_get_int(model, "size", 0) == 5000000000ll,
              "run.model: digest and size");
        CHECK(input && !strcmp(json_get_str(input, "digest"), "fedcba9876543210"), "run.input.digest");
        CHECK(json_get_int(run, "shards", 0) == 16, "run.shards");
        CHECK(options && options->type == JSON_OBJECT && json_get_int(options, "max_tokens", 0) == 64, "run.options verbatim");
        CHECK(shard && json_get_int(shard, "index", -1) == 3 && json_get_int(shard, "count", -1) == 16
              && !strcmp(json_get_str(shard, "output"), out) && !strcmp(json_get_str(shard, "started_at"), "2026-12-04T23:05:59Z"),
              "shard: index, count, output, started_at");
        CHECK(shard && !strcmp(json_get_str(shard, "model_path"), "/models/sm\"ol\n.gguf")
              && !strcmp(json_get_str(shard, "input_path"), "in.jsonl"), "shard: paths, escaped and read back");
        CHECK(run && !json_get(run, "model_path") && !json_get(model, "path") && !json_get(run, "started_at"),
              "nothing per-shard inside run");
        json_free(v);
    }
    free(text);
    CHECK(dir_holds_only("out-00003-of-00016.manifest.json"), "no temporary file remains");

    /* A second shard of the same run: "run" is byte-identical. */
    m.shard_index = 4;
    m.started_at = "2026-12-04T23:06:10Z";
    m.model_path = "/other/node/path.gguf";
    char *path2 = temp_path("second.manifest.json");
    CHECK(shard_write_manifest(path2, &m, &err) == 0, "second manifest written");
    char *t1 = read_all(path, &len), *t2 = read_all(path2, &len);
    const char *r1 = t1 ? strstr(t1, "\"run\":") : NULL, *r2 = t2 ? strstr(t2, "\"run\":") : NULL;
    const char *e1 = r1 ? strstr(r1, ",\"shard\":") : NULL, *e2 = r2 ? strstr(r2, ",\"shard\":") : NULL;
    CHECK(e1 && e2 && e1 - r1 == e2 - r2 && !memcmp(r1, r2, (size_t)(e1 - r1)), "two shards of one run write the same \"run\"");
    free(t1);
    free(t2);
    unlink(path2);
    free(path2);

    /* Rewriting replaces the file. */
    m.shard_index = 3;
    CHECK(shard_write_manifest(path, &m, &err) == 0 && dir_holds_only("out-00003-of-00016.manifest.json"),
          "rewriting replaces it, leaving no temporary file");

    m.options_json = "{\"a\":\n1}";
    CHECK(shard_write_manifest(path, &m, &err) == -1 && strstr(err.msg, "one line"), "options on two lines are refused");
    m.options_json = "[1]";
    CHECK(shard_write_manifest(path, &m, &err) == -1 && strstr(err.msg, "object"), "options that are not an object are refused");
    m.options_json = "{\"a\":";
    CHECK(shard_write_manifest(path, &m, &err) == -1, "options that are not JSON are refused (%s)", err.msg);
    m.options_json = NULL;
    m.input_digest = NULL;
    CHECK(shard_write_manifest(path, &m, &err) == 0 && (text = read_all(path, &len)) && strstr(text, "\"options\":null")
          && strstr(text, "\"input\":{\"digest\":null}"), "NULL fields are written as null");
    free(text);

    char *nodir = temp_path("no/such/dir.manifest.json");
    CHECK(shard_write_manifest(nodir, &m, &err) == -1 && strstr(err.msg, nodir), "an unwritable place is refused (%s)", err.msg);
    free(nodir);
    CHECK(dir_holds_only("out-00003-of-00016.manifest.json"), "failures leave no temporary file");
    unlink(path);
    free(path);
    free(out);
}

int main(void) {
    if (!mkdtemp(dir)) { perror("mkdtemp"); return 2; }
    test_hash();
    test_partition();
    test_env();
    test_names();
    test_digest();
    test_manifest();
    rmdir(dir);
    CHECK_EXIT();
}
