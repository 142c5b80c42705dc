/* libFuzzer: the HTTP/1.1 request parser on arbitrary bytes. Byte 0 picks where the input is split
 * (and, for short inputs, byte-by-byte feeding), byte 1 the limits (the defaults or small ones that
 * the fuzzer can reach); the rest is the connection's bytes. Fed at once and fed in pieces, the
 * parser must give the same answer (return value, status, message, bytes used, request); errors are
 * one line with a known status; a complete request is within the limits; pipelined requests after
 * the first are parsed too. Every buffer is malloc'd at its exact length, so ASan sees overreads. */
#include "fuzz_common.h"
#include "io/http.h"

typedef struct outcome {
    int rc, status;
    size_t used;
    http_request req;
    ts_error err;
    bool peek_seen;      /* headers done while more bytes were needed */
} outcome;

/* The parser's answer for buf[0..n), given first the prefixes of the lengths in cuts (ascending,
 * each < n) while it asks for more. */
static outcome run(const uint8_t *buf, size_t n, const http_limits *lim, const size_t *cuts, int n_cuts) {
    outcome o = { 0 };
    http_parser p;
    http_parser_init(&p, lim);
    for (int i = 0; i <= n_cuts; i++) {
        size_t len = i < n_cuts ? cuts[i] : n;
        char *copy = malloc(len ? len : 1);
        if (len) memcpy(copy, buf, len);
        o.err.msg[0] = '\0';
        o.rc = http_parse(&p, copy, len, &o.req, &o.used, &o.status, &o.err);
        free(copy);
        if (o.rc != 0) break;
        if (o.req.target || o.req.body || o.used) abort();            /* "nothing filled" */
        const http_request *peek = http_parser_peek(&p);
        if (http_parser_headers_done(&p) != (peek != NULL)) abort();
        if (peek) {
            o.peek_seen = true;
            if (!peek->path || !peek->target || peek->body) abort();
        }
    }
    http_parser_free(&p);
    return o;
}

static bool same_str(const char *a, const char *b) { return (!a && !b) || (a && b && !strcmp(a, b)); }

static void compare(const outcome *a, const outcome *b, const char *how) {
    bool same = a->rc == b->rc && a->status == b->status && a->used == b->used && !strcmp(a->err.msg, b->err.msg)
                && !strcmp(a->req.method, b->req.method) && same_str(a->req.target, b->req.target)
                && same_str(a->req.path, b->req.path) && a->req.body_len == b->req.body_len
                && (a->req.body_len == 0 || !memcmp(a->req.body, b->req.body, a->req.body_len))
                && a->req.n_headers == b->req.n_headers && a->req.keep_alive == b->req.keep_alive
                && a->req.expect_continue == b->req.expect_continue && a->req.chunked == b->req.chunked;
    for (int i = 0; same && i < a->req.n_headers; i++)
        same = !strcmp(a->req.headers[i].name, b->req.headers[i].name) && !strcmp(a->req.headers[i].value, b->req.headers[i].value);
    if (!same) {
        fprintf(stderr, "fed %s: rc %d/%d status %d/%d used %zu/%zu msg '%s' / '%s'\n", how, a->rc, b->rc, a->status,
                b->status, a->used, b->used, a->err.msg, b->err.msg);
        abort();
    }
}

static void check(const outcome *o, size_t n, const http_limits *lim) {
    if (o->used > n) abort();
    if (o->rc == -1) {
        static const int known[] = { 400, 413, 414, 431, 500, 501, 505 };
        bool ok = false;
        for (size_t i = 0; i < sizeof known / sizeof known[0]; i++) ok |= o->status == known[i];
        if (!ok || !strcmp(http_status_text(o->status), "Unknown")) abort();
        if (!o->err.msg[0] || strchr(o->err.msg, '\n') || strchr(o->err.msg, '\r')) abort();
        if (o->status == 500) abort();   /* no misuse here; out of memory is not expected */
    } else if (o->rc == 1) {
        const http_request *r = &o->req;
        if (o->used == 0 || !r->method[0] || !r->target || !r->path || !r->body) abort();
        if (r->body_len > lim->max_body_bytes || r->body[r->body_len] != '\0') abort();
        if (r->n_headers > lim->max_headers || r->version_minor < 0 || r->version_minor > 1) abort();
        if (strncmp(r->target, r->path, strlen(r->path)) != 0) abort();
        for (int i = 0; i < r->n_headers; i++) {
            if (http_header_get(r, r->headers[i].name) == NULL) abort();
            for (const char *c = r->headers[i].name; *c; c++)
                if (*c >= 'A' && *c <= 'Z') abort();
        }
    } else if (o->rc != 0) {
        abort();
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size < 2) return 0;
    static const http_limits small = { 256, 1024, 6 },
        def = { HTTP_DEFAULT_MAX_HEADER_BYTES, HTTP_DEFAULT_MAX_BODY_BYTES, HTTP_DEFAULT_MAX_HEADERS };
    const http_limits *lim = data[1] & 1 ? &small : &def;
    const uint8_t *buf = data + 2;
    size_t n = size - 2;

    for (int request = 0; request < 8; request++) {
        outcome whole = run(buf, n, lim, NULL, 0);
        check(&whole, n, lim);

        size_t cuts[4];
        int n_cuts = 0;
        size_t k = n * data[0] / 256;
        if (k > 0 && k < n) cuts[n_cuts++] = k;
        if (k / 2 > 0 && k / 2 < k) { cuts[n_cuts++] = cuts[0]; cuts[0] = k / 2; }
        outcome split = run(buf, n, lim, cuts, n_cuts);
        compare(&whole, &split, "in pieces");
        http_request_free(&split.req);

        if (n <= 2048 && (data[0] & 1)) {   /* byte by byte: each call adds one byte */
            outcome bytes = { 0 };
            http_parser p;
            http_parser_init(&p, lim);
            for (size_t len = 0; len <= n; len++) {
                char *copy = malloc(len ? len : 1);
                if (len) memcpy(copy, buf, len);
                bytes.rc = http_parse(&p, copy, len, &bytes.req, &bytes.used, &bytes.status, &bytes.err);
                free(copy);
                if (bytes.rc != 0) break;
            }
            http_parser_free(&p);
            compare(&whole, &bytes, "byte by byte");
            http_request_free(&bytes.req);
        }

        int rc = whole.rc;
        size_t used = whole.used;
        http_request_free(&whole.req);
        if (rc != 1 || used >= n) break;
        buf += used;   /* the next pipelined request */
        n -= used;
    }
    return 0;
}
