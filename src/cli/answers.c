/* The -o file of --batch: lock, empty or read back, rewrite without the lines to redo. */
#include "cli/answers.h"
#include "cli/lines.h"
#include "core/error.h"
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

/* An answer line can hold a long answer; a line longer than this is not one of ours. */
#define ANSWER_LINE_LIMIT ((size_t)1 << 30)

/* Opens path and takes its exclusive lock. The lock is re-taken when, while waiting, the file was
 * replaced (another run's --resume rewrote it): the lock must be on the file the path names. */
static int open_locked(const char *path, bool read_too, bool wait, bool quiet, int *out, ts_error *err) {
    for (;;) {
        int fd = open(path, (read_too ? O_RDWR : O_WRONLY) | O_CREAT | O_CLOEXEC, 0666);
        if (fd < 0) return ts_fail(err, "%s: cannot open for writing: %s", path, strerror(errno));
        struct stat st;
        if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) { *out = fd; return 0; }   /* a pipe, a device */
        if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
            if (errno != EWOULDBLOCK) {
                if (!quiet) fprintf(stderr, "warning: %s: cannot be locked (%s): another writer would go unnoticed\n", path, strerror(errno));
                *out = fd;
                return 0;
            }
            if (!wait) {
                close(fd);
                return ts_fail(err, "%s: another process is writing it (the file is locked); --wait-lock waits for it", path);
            }
            if (!quiet) fprintf(stderr, "waiting for %s: another process is writing it\n", path);
            int r;
            while ((r = flock(fd, LOCK_EX)) != 0 && errno == EINTR) {}
            if (r != 0) {
                int e = errno;
                close(fd);
                return ts_fail(err, "%s: cannot lock: %s", path, strerror(e));
            }
        }
        struct stat now;
        if (fstat(fd, &st) == 0 && stat(path, &now) == 0 && st.st_dev == now.st_dev && st.st_ino == now.st_ino) {
            *out = fd;
            return 0;
        }
        close(fd);   /* replaced while we waited: lock the new one */
    }
}

/* An answer line's key and kind: 0, or -1 when it is not an answer line, -2 out of memory. */
static int classify(const char *text, size_t len, char **key, bool *is_error) {
    json_value *v;
    ts_error e;
    if (json_parse(text, len, &v, &e) != 0) return -1;
    int rc = -1;
    const json_value *line = json_get(v, "line"), *id = json_get(v, "id"), *custom = json_get(v, "custom_id");
    if (custom && custom->type == JSON_STRING) {   /* an OpenAI Batch output line: answered with status 200 */
        const json_value *resp = json_get(v, "response"), *status = resp ? json_get(resp, "status_code") : NULL;
        const json_value *error = json_get(v, "error");
        if (resp || error) {
            *key = ids_key(custom, 0);
            *is_error = !(status && status->type == JSON_NUMBER && status->number == 200) || (error && error->type != JSON_NULL);
            rc = *key ? 0 : -2;
        }
        json_free(v);
        return rc;
    }
    bool has_answer = json_get(v, "answer") != NULL, has_error = json_get(v, "error") != NULL;
    if (line && line->type == JSON_NUMBER && line->is_integer && line->integer >= 1 && line->integer <= INT_MAX
        && has_answer != has_error) {
        if (id && id->type != JSON_STRING && id->type != JSON_NUMBER) id = NULL;
        *key = ids_key(id, (int)line->integer);
        *is_error = has_error;
        rc = *key ? 0 : -2;
    }
    json_free(v);
    return rc;
}

/* Reads the file back: which lines stay (keep[i] for line i + 1) and what they answer. */
static int scan(int fd, const char *path, const key_set *inputs, answers_resume *r, unsigned char **keep_out,
                int *n_out, ts_error *err) {
    int dfd = dup(fd);
    FILE *f = dfd >= 0 ? fdopen(dfd, "r") : NULL;
    if (!f) { if (dfd >= 0) close(dfd); return ts_fail(err, "%s: cannot read: %s", path, strerror(errno)); }
    line_reader lr;
    unsigned char *keep = NULL;
    int n = 0, first_bad = 0, rc = -1, got;
    size_t cap = 0;
    if (lines_open(&lr, f, ANSWER_LINE_LIMIT) != 0) { fclose(f); return ts_fail(err, "out of memory"); }
    while ((got = lines_next(&lr)) == 1) {
        if ((size_t)n == cap) {
            cap = cap ? cap * 2 : 1024;
            unsigned char *t = realloc(keep, cap);
            if (!t) { ts_fail(err, "out of memory"); goto done; }
            keep = t;
        }
        char *key = NULL;
        bool is_error = false;
        int c = lr.too_long ? -1 : classify(lr.text, lr.len, &key, &is_error);
        if (c == -2) { ts_fail(err, "out of memory"); goto done; }
        n++;
        keep[n - 1] = 0;
        if (c < 0 || !lr.ended) {   /* only the last line may be cut short (a run killed mid-write) */
            if (!first_bad) first_bad = n;
            free(key);
            continue;
        }
        if (is_error) {
            /* an error of a line this run answers again goes; others stay (and count) */
            if (key_set_has(inputs, key)) r->n_redo++;
            else { keep[n - 1] = 1; r->n_kept_errors++; }
            free(key);
        } else {
            keep[n - 1] = 1;
            if (key_set_add(&r->answered, key) != 0) { ts_fail(err, "out of memory"); goto done; }
        }
    }
    if (got < 0) { ts_fail(err, "%s: read error: %s", path, strerror(errno)); goto done; }
    if (first_bad && first_bad != n) {
        ts_fail(err, "%s: line %d is not a batch answer (--resume reads back answers this program wrote)", path, first_bad);
        goto done;
    }
    r->dropped_partial = first_bad != 0;
    key_set_sort(&r->answered);
    *keep_out = keep;
    keep = NULL;
    *n_out = n;
    rc = 0;
done:
    lines_close(&lr);
    fclose(f);
    free(keep);
    return rc;
}

/* Writes the kept lines to a new file beside the old one and puts it in the old one's place
 * (a crash leaves either file whole). The new file is locked before it gets the name. */
static int rewrite(int *fd, const char *path, const unsigned char *keep, int n, ts_error *err) {
    struct stat st;
    char *real = realpath(path, NULL), *tmp = NULL;
    int tfd = -1, rc = -1;
    FILE *in = NULL, *out = NULL;
    line_reader lr = {0};
    if (!real || fstat(*fd, &st) != 0) { ts_fail(err, "%s: %s", path, strerror(errno)); goto done; }
    const char *slash = strrchr(real, '/');
    size_t dir_len = (size_t)(slash - real);   /* realpath is absolute: there is a slash */
    if (!(tmp = malloc(strlen(real) + 32))) { ts_fail(err, "out of memory"); goto done; }
    sprintf(tmp, "%.*s/.%s.resume-XXXXXX", (int)dir_len, real, slash + 1);
    tfd = mkostemp(tmp, O_CLOEXEC);
    if (tfd < 0) { ts_fail(err, "%s: cannot create a file beside it to rewrite it: %s", path, strerror(errno)); free(tmp); tmp = NULL; goto done; }
    int dfd = dup(tfd);
    out = dfd >= 0 ? fdopen(dfd, "w") : NULL;
    if (!out || fchmod(tfd, st.st_mode & 07777) != 0 || flock(tfd, LOCK_EX) != 0 || lseek(*fd, 0, SEEK_SET) != 0) {
        if (!out && dfd >= 0) close(dfd);
        ts_fail(err, "%s: %s", tmp, strerror(errno));
        goto done;
    }
    dfd = dup(*fd);
    in = dfd >= 0 ? fdopen(dfd, "r") : NULL;
    if (!in) { if (dfd >= 0) close(dfd); ts_fail(err, "%s: %s", path, strerror(errno)); goto done; }
    if (lines_open(&lr, in, ANSWER_LINE_LIMIT) != 0) { ts_fail(err, "out of memory"); goto done; }
    for (int i = 0; i < n && lines_next(&lr) == 1; i++) {
        if (!keep[i]) continue;
        if (fwrite(lr.text, 1, lr.len, out) != lr.len || fputc('\n', out) == EOF) break;
    }
    if (ferror(in) || fflush(out) != 0 || ferror(out) || fsync(tfd) != 0) {
        ts_fail(err, "%s: rewriting it failed: %s", path, strerror(errno));
        goto done;
    }
    if (rename(tmp, real) != 0) { ts_fail(err, "%s: cannot replace it: %s", path, strerror(errno)); goto done; }
    free(tmp);
    tmp = NULL;
    close(*fd);   /* unlocks the old file; a writer waiting on it finds it replaced */
    *fd = tfd;
    tfd = -1;
    rc = 0;
done:
    lines_close(&lr);
    if (in) fclose(in);
    if (out) fclose(out);
    if (tmp) unlink(tmp);
    if (tfd >= 0) close(tfd);
    free(tmp);
    free(real);
    return rc;
}

int answers_open(answers_file *a, const char *path, bool wait, bool quiet, const key_set *inputs,
                 answers_resume *resume, ts_error *err) {
    memset(a, 0, sizeof *a);
    a->path = path;
    int fd = -1;
    if (open_locked(path, resume != NULL, wait, quiet, &fd, err) != 0) return -1;
    struct stat st;
    bool regular = fstat(fd, &st) == 0 && S_ISREG(st.st_mode);
    if (resume) {
        unsigned char *keep = NULL;
        int n = 0;
        if (!regular) { close(fd); return ts_fail(err, "%s: --resume needs a regular file", path); }
        if (scan(fd, path, inputs, resume, &keep, &n, err) != 0) { close(fd); return -1; }
        bool drop = false;
        for (int i = 0; i < n; i++) drop |= !keep[i];
        int rc = drop ? rewrite(&fd, path, keep, n, err) : 0;
        free(keep);
        if (rc != 0) { close(fd); return -1; }
        lseek(fd, 0, SEEK_END);
    } else if (regular && ftruncate(fd, 0) != 0) {
        int e = errno;
        close(fd);
        return ts_fail(err, "%s: cannot empty it: %s", path, strerror(e));
    }
    if (!(a->f = fdopen(fd, "a"))) { close(fd); return ts_fail(err, "%s: %s", path, strerror(errno)); }
    return 0;
}

int answers_close(answers_file *a, ts_error *err) {
    if (!a->f) return 0;
    int rc = fclose(a->f) == 0 ? 0 : ts_fail(err, "%s: write failed: %s", a->path, strerror(errno));
    a->f = NULL;
    return rc;
}

void answers_resume_free(answers_resume *r) {
    key_set_free(&r->answered);
    memset(r, 0, sizeof *r);
}
