/* Shared pieces of the libFuzzer harnesses (tests/fuzz/fuzz_*.c): a private scratch folder for
 * loaders that take paths, splitting one input into several files, and the fixtures folder.
 * Everything lives in one struct per harness process (libFuzzer runs inputs one at a time). */
#ifndef TS_FUZZ_COMMON_H
#define TS_FUZZ_COMMON_H
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Inputs that stand for several files separate them with this line (the seed generator,
 * tools/make_fuzz_corpus.c, writes the same marker). */
#define FUZZ_PART_MARK "\n--tessera-part--\n"

typedef struct fuzz_part { const uint8_t *data; size_t len; } fuzz_part;

/* Splits data at FUZZ_PART_MARK into at most max parts (the last takes the rest). */
static inline int fuzz_split(const uint8_t *data, size_t size, fuzz_part *parts, int max) {
    const size_t mlen = sizeof FUZZ_PART_MARK - 1;
    int n = 0;
    size_t start = 0;
    while (n < max - 1) {
        const uint8_t *hit = size - start >= mlen
            ? memmem(data + start, size - start, FUZZ_PART_MARK, mlen) : NULL;
        if (!hit) break;
        parts[n++] = (fuzz_part){ data + start, (size_t)(hit - (data + start)) };
        start = (size_t)(hit - data) + mlen;
    }
    parts[n++] = (fuzz_part){ data + start, size - start };
    return n;
}

/* The harness's scratch folder, made once; removed (with the files written into it) at exit. */
static char fuzz_dir[PATH_MAX];
static char fuzz_written[16][PATH_MAX];
static int fuzz_n_written;

static inline void fuzz_cleanup(void) {
    for (int i = 0; i < fuzz_n_written; i++) unlink(fuzz_written[i]);
    if (fuzz_dir[0]) rmdir(fuzz_dir);
}

static inline const char *fuzz_scratch(void) {
    if (!fuzz_dir[0]) {
        const char *tmp = getenv("TMPDIR");
        snprintf(fuzz_dir, sizeof fuzz_dir, "%s/tessera-fuzz-XXXXXX", tmp && *tmp ? tmp : "/tmp");
        if (!mkdtemp(fuzz_dir)) { perror("mkdtemp"); abort(); }
        atexit(fuzz_cleanup);
    }
    return fuzz_dir;
}

/* Path of name inside the scratch folder. */
static inline const char *fuzz_path(const char *name, char buf[PATH_MAX]) {
    snprintf(buf, PATH_MAX, "%s/%s", fuzz_scratch(), name);
    return buf;
}

/* Writes bytes to scratch/name (replacing it) and returns its path in buf. */
static inline const char *fuzz_write(const char *name, const void *data, size_t len, char buf[PATH_MAX]) {
    fuzz_path(name, buf);
    FILE *f = fopen(buf, "wb");
    if (!f || (len && fwrite(data, 1, len, f) != len) || fclose(f) != 0) { perror(buf); abort(); }
    int known = 0;
    for (int i = 0; i < fuzz_n_written; i++) known |= !strcmp(fuzz_written[i], buf);
    if (!known && fuzz_n_written < 16) snprintf(fuzz_written[fuzz_n_written++], PATH_MAX, "%s", buf);
    return buf;
}

/* Removes scratch/name if it exists (a file an earlier input wrote but this one does not have). */
static inline void fuzz_remove(const char *name) {
    char buf[PATH_MAX];
    unlink(fuzz_path(name, buf));
}

/* The fixtures folder: $TS_FIXTURES, else ../shared/fixtures next to the repository the binary
 * was built in (build/fuzz/NAME -> repo root -> ../shared/fixtures). */
static inline const char *fuzz_fixtures(char buf[PATH_MAX]) {
    const char *env = getenv("TS_FIXTURES");
    if (env && *env) { snprintf(buf, PATH_MAX, "%s", env); return buf; }
    char exe[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n <= 0) { snprintf(buf, PATH_MAX, "../shared/fixtures"); return buf; }
    exe[n] = 0;
    for (int up = 0; up < 3; up++) {   /* strip NAME, fuzz, build */
        char *slash = strrchr(exe, '/');
        if (slash) *slash = 0;
    }
    snprintf(buf, PATH_MAX, "%s/../shared/fixtures", exe);
    return buf;
}

#endif
