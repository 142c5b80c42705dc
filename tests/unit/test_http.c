/* HTTP/1.1 request parser: the request line, headers and both body framings; every refusal with its
 * status; limits refused as the bytes arrive; byte-by-byte feeding giving what feeding at once
 * gives; pipelining; keep-alive; 100-continue. Every buffer handed to the parser is malloc'd at its
 * exact length, so ASan sees any read past it. */
#include "io/http.h"
#include "check.h"
#include <string.h>

typedef struct result {
    int rc, status;
    size_t used;
    http_request req;
    ts_error err;
} result;

static const http_limits small = { 1024, 4096, 8 };

/* Feeds text[0..n) at once (step 0) or growing by `step` bytes per call until the parser answers. */
static result feed(const char *text, size_t n, const http_limits *lim, size_t step) {
    result r = { 0 };
    http_parser p;
    http_parser_init(&p, lim);
    size_t have = step ? 0 : n;
    for (;;) {
        if (step) have = have + step < n ? have + step : n;
        char *buf = malloc(have ? have : 1);
        memcpy(buf, text, have);
        r.err.msg[0] = '\0';
        r.rc = http_parse(&p, buf, have, &r.req, &r.used, &r.status, &r.err);
        free(buf);
        if (r.rc != 0 || have == n) break;
    }
    http_parser_free(&p);
    return r;
}

static result parse(const char *text, const http_limits *lim) { return feed(text, strlen(text), lim, 0); }

static void done(result *r) { http_request_free(&r->req); }

/* Whole, byte by byte and in 7-byte steps: the same answer. */
static bool same_split(const char *text, size_t n, const http_limits *lim) {
    result whole = feed(text, n, lim, 0);
    bool ok = true;
    size_t steps[] = { 1, 7 };
    for (int s = 0; s < 2; s++) {
        result part = feed(text, n, lim, steps[s]);
        ok = ok && part.rc == whole.rc && part.status == whole.status && part.used == whole.used
             && !strcmp(part.err.msg, whole.err.msg) && !strcmp(part.req.method, whole.req.method)
             && part.req.n_headers == whole.req.n_headers && part.req.body_len == whole.req.body_len
             && (!whole.req.path || !strcmp(part.req.path, whole.req.path))
             && (!whole.req.body || !memcmp(part.req.body, whole.req.body, whole.req.body_len))
             && part.req.keep_alive == whole.req.keep_alive;
        done(&part);
    }
    done(&whole);
    return ok;
}

/* Must be refused with status and a one-line message containing `words`. */
static void expect_refused(const char *what, const char *text, const http_limits *lim, int status, const char *words) {
    result r = parse(text, lim);
    CHECK(r.rc == -1 && r.status == status && strstr(r.err.msg, words) && !strchr(r.err.msg, '\n'),
          "%s: %d (%s)", what, status, r.err.msg);
    CHECK(same_split(text, strlen(text), lim), "%s: the same byte by byte", what);
    done(&r);
}

static void test_get(void) {
    const char *t = "GET /v1/models?x=1&y=2 HTTP/1.1\r\nHost: localhost:8080\r\nUser-Agent: curl/8.5\r\nAccept: */*\r\n\r\n";
    result r = parse(t, NULL);
    CHECK(r.rc == 1 && r.used == strlen(t), "GET: complete, all bytes used");
    CHECK(!strcmp(r.req.method, "GET") && !strcmp(r.req.target, "/v1/models?x=1&y=2") && !strcmp(r.req.path, "/v1/models"),
          "GET: method, target, path");
    CHECK(r.req.version_minor == 1 && r.req.keep_alive && !r.req.expect_continue && !r.req.chunked, "GET: 1.1, keep-alive");
    CHECK(r.req.body && r.req.body[0] == '\0' && r.req.body_len == 0, "GET: empty NUL-terminated body");
    CHECK(r.req.n_headers == 3 && !strcmp(r.req.headers[0].name, "host") && !strcmp(r.req.headers[0].value, "localhost:8080"),
          "GET: headers in order, names lower-cased");
    CHECK(!strcmp(http_header_get(&r.req, "user-agent"), "curl/8.5") && !strcmp(http_header_get(&r.req, "USER-Agent"), "curl/8.5")
          && http_header_get(&r.req, "content-type") == NULL, "header lookup: case-insensitive, NULL when absent");
    done(&r);

    r = parse("GET / HTTP/1.1\r\nX-A:   spaced \t value\t \r\nX-Empty:\r\nx-a: second\r\n\r\n", NULL);
    CHECK(r.rc == 1 && !strcmp(http_header_get(&r.req, "x-a"), "spaced \t value") && !strcmp(http_header_get(&r.req, "x-empty"), ""),
          "values trimmed of OWS (inner kept), empty value allowed, first match wins");
    CHECK(r.req.n_headers == 3 && !strcmp(r.req.headers[2].value, "second"), "duplicate header names kept");
    done(&r);

    r = parse("\r\n\r\n\nGET / HTTP/1.0\r\n\r\n", NULL);
    CHECK(r.rc == 1 && r.used == 23 && r.req.version_minor == 0 && !r.req.keep_alive, "leading empty lines skipped (and counted in used)");
    done(&r);

    r = parse("GET /a HTTP/1.1\nHost: x\n\n", NULL);
    CHECK(r.rc == 1 && r.used == 25 && !strcmp(r.req.path, "/a") && !strcmp(http_header_get(&r.req, "host"), "x"), "bare LF line endings accepted");
    done(&r);

    r = parse("OPTIONS * HTTP/1.1\r\n\r\n", NULL);
    CHECK(r.rc == 1 && !strcmp(r.req.target, "*") && !strcmp(r.req.path, "*"), "OPTIONS *");
    done(&r);

    r = parse("DELETE /v1/x HTTP/1.1\r\n\r\n", NULL);
    CHECK(r.rc == 1 && r.req.body_len == 0 && !strcmp(r.req.method, "DELETE"), "DELETE with no length: empty body");
    done(&r);
    r = parse("POST /v1/chat/completions HTTP/1.1\r\n\r\nGET", NULL);
    CHECK(r.rc == 1 && r.req.body_len == 0 && r.used == 38, "POST with no length: empty body, the next bytes left");
    done(&r);
    r = parse("get /x?q HTTP/1.1\r\n\r\n", NULL);
    CHECK(r.rc == 1 && !strcmp(r.req.method, "get") && !strcmp(r.req.path, "/x"), "method kept as sent");
    done(&r);
}

static void test_bodies(void) {
    const char *t = "POST /v1/completions HTTP/1.1\r\nContent-Type: application/json\r\nContent-Length: 13\r\n\r\n{\"prompt\":\"\"}";
    result r = parse(t, NULL);
    CHECK(r.rc == 1 && r.used == strlen(t) && r.req.body_len == 13 && !strcmp(r.req.body, "{\"prompt\":\"\"}"), "Content-Length body");
    done(&r);
    r = feed(t, strlen(t) - 1, NULL, 0);
    CHECK(r.rc == 0 && r.req.body == NULL && r.req.target == NULL, "one body byte short: more needed, nothing filled");
    done(&r);

    r = parse("POST / HTTP/1.1\r\nContent-Length: 3\r\ncontent-length: 3\r\n\r\nabcGET", NULL);
    CHECK(r.rc == 1 && r.req.body_len == 3 && r.used == 60, "repeated equal Content-Length accepted");
    done(&r);
    r = parse("POST / HTTP/1.1\r\nContent-Length: 0\r\n\r\n", NULL);
    CHECK(r.rc == 1 && r.req.body_len == 0 && r.req.body && !r.req.body[0], "Content-Length 0");
    done(&r);

    const char *c = "POST /v1/chat HTTP/1.1\r\nTransfer-Encoding: Chunked\r\n\r\n"
                    "5;name=value;q=\"a \\\" b\"\r\nhello\r\n"
                    "7 ; ext\r\n, world\r\n"
                    "0\r\nX-Checksum: abc\r\nX-Other: 1\r\n\r\n";
    r = parse(c, NULL);
    CHECK(r.rc == 1 && r.used == strlen(c) && r.req.chunked && r.req.body_len == 12 && !strcmp(r.req.body, "hello, world"),
          "chunked body with extensions and trailers (case-insensitive coding)");
    CHECK(http_header_get(&r.req, "x-checksum") == NULL && r.req.n_headers == 1, "trailers dropped");
    done(&r);
    r = parse("POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n", NULL);
    CHECK(r.rc == 1 && r.req.body_len == 0 && r.req.body && !r.req.body[0], "chunked: empty body");
    done(&r);
    r = parse("POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n000A\r\n0123456789\r\n0000\r\n\r\n", NULL);
    CHECK(r.rc == 1 && r.req.body_len == 10, "chunked: upper-case hex, leading zeros");
    done(&r);

    /* the body limit exactly */
    char big[5000];
    int n = snprintf(big, sizeof big, "POST / HTTP/1.1\r\nContent-Length: 4096\r\n\r\n");
    memset(big + n, 'x', 4096);
    r = feed(big, (size_t)n + 4096, &small, 0);
    CHECK(r.rc == 1 && r.req.body_len == 4096, "Content-Length equal to max_body_bytes accepted");
    done(&r);
}

static void test_refusals(void) {
    /* request line */
    expect_refused("bare CR in the request line", "GET /\r HTTP/1.1\r\n\r\n", NULL, 400, "CR");
    expect_refused("bare CR in a header", "GET / HTTP/1.1\r\nA: b\rc\r\n\r\n", NULL, 400, "CR");
    expect_refused("CR CR LF", "GET / HTTP/1.1\r\r\n\r\n", NULL, 400, "CR");
    static const char nul[] = "GET / HTTP/1.1\r\nA: b\0c\r\n\r\n";
    result r = feed(nul, sizeof nul - 1, NULL, 0);
    CHECK(r.rc == -1 && r.status == 400 && strstr(r.err.msg, "NUL"), "NUL in the head: 400 (%s)", r.err.msg);
    CHECK(same_split(nul, sizeof nul - 1, NULL), "NUL in the head: the same byte by byte");
    done(&r);
    expect_refused("method of 16 bytes", "ABCDEFGHIJKLMNOP / HTTP/1.1\r\n\r\n", NULL, 400, "method");
    r = parse("ABCDEFGHIJKLMNO / HTTP/1.1\r\n\r\n", NULL);
    CHECK(r.rc == 1 && strlen(r.req.method) == 15, "method of 15 bytes accepted");
    done(&r);
    expect_refused("method with a bad character", "GE(T / HTTP/1.1\r\n\r\n", NULL, 400, "method");
    expect_refused("no method", " / HTTP/1.1\r\n\r\n", NULL, 400, "method");
    expect_refused("two spaces", "GET  / HTTP/1.1\r\n\r\n", NULL, 400, "target");
    expect_refused("tab for a space", "GET\t/ HTTP/1.1\r\n\r\n", NULL, 400, "method");
    expect_refused("absolute-form target", "GET http://x/ HTTP/1.1\r\n\r\n", NULL, 400, "'/'");
    expect_refused("* for GET", "GET * HTTP/1.1\r\n\r\n", NULL, 400, "'/'");
    expect_refused("control character in the target", "GET /a\x01 HTTP/1.1\r\n\r\n", NULL, 400, "0x01");
    expect_refused("non-ASCII in the target", "GET /\xc3\xa9 HTTP/1.1\r\n\r\n", NULL, 400, "0xc3");
    expect_refused("fragment in the target", "GET /a#b HTTP/1.1\r\n\r\n", NULL, 400, "0x23");
    expect_refused("no version", "GET /\r\n\r\n", NULL, 400, "version");
    expect_refused("HTTP/0.9 style line", "GET / \r\n\r\n", NULL, 400, "HTTP/d.d");
    expect_refused("lower-case version", "GET / http/1.1\r\n\r\n", NULL, 400, "HTTP/d.d");
    expect_refused("space after the version", "GET / HTTP/1.1 \r\n\r\n", NULL, 400, "HTTP/d.d");
    expect_refused("HTTP/1.10", "GET / HTTP/1.10\r\n\r\n", NULL, 400, "HTTP/d.d");
    expect_refused("HTTP/2.0", "GET / HTTP/2.0\r\n\r\n", NULL, 505, "2.0");
    expect_refused("HTTP/1.2", "GET / HTTP/1.2\r\n\r\n", NULL, 505, "1.2");
    {
        char t[9000];
        int n = snprintf(t, sizeof t, "GET /");
        memset(t + n, 'a', 8192);
        snprintf(t + n + 8192, sizeof t - (size_t)n - 8192, " HTTP/1.1\r\n\r\n");
        expect_refused("target of 8193 bytes", t, NULL, 414, "8193");
        t[n + 8191] = ' ';   /* 8192 bytes with the '/': accepted */
        memcpy(t + n + 8192, "HTTP/1.1\r\n\r\n", 13);
        r = parse(t, NULL);
        CHECK(r.rc == 1 && strlen(r.req.target) == 8192, "target of 8192 bytes accepted");
        done(&r);
    }

    /* headers */
    expect_refused("space before the colon", "GET / HTTP/1.1\r\nHost : x\r\n\r\n", NULL, 400, "colon");
    expect_refused("obs-fold", "GET / HTTP/1.1\r\nX-A: a\r\n  b\r\n\r\n", NULL, 400, "folding");
    expect_refused("obs-fold with a tab", "GET / HTTP/1.1\r\nX-A: a\r\n\tb\r\n\r\n", NULL, 400, "folding");
    expect_refused("header without a colon", "GET / HTTP/1.1\r\nX-A\r\n\r\n", NULL, 400, "colon");
    expect_refused("header without a name", "GET / HTTP/1.1\r\n: x\r\n\r\n", NULL, 400, "name");
    expect_refused("bad character in a name", "GET / HTTP/1.1\r\nX(A): x\r\n\r\n", NULL, 400, "0x28");
    expect_refused("control character in a value", "GET / HTTP/1.1\r\nX-A: a\x1b[0m\r\n\r\n", NULL, 400, "0x1b");
    expect_refused("two Host headers", "GET / HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n", NULL, 400, "Host");

    /* framing */
    expect_refused("Transfer-Encoding and Content-Length", "POST / HTTP/1.1\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n",
                   NULL, 400, "both");
    expect_refused("gzip, chunked", "POST / HTTP/1.1\r\nTransfer-Encoding: gzip, chunked\r\n\r\n", NULL, 501, "Transfer-Encoding");
    expect_refused("gzip", "POST / HTTP/1.1\r\nTransfer-Encoding: gzip\r\n\r\n", NULL, 501, "Transfer-Encoding");
    expect_refused("chunked on two lines", "POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n\r\n", NULL, 501, "Transfer-Encoding");
    expect_refused("empty Transfer-Encoding", "POST / HTTP/1.1\r\nTransfer-Encoding:\r\n\r\n", NULL, 501, "Transfer-Encoding");
    expect_refused("Transfer-Encoding in HTTP/1.0", "POST / HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n", NULL, 400, "1.0");
    expect_refused("Content-Length with a sign", "POST / HTTP/1.1\r\nContent-Length: +5\r\n\r\nabcde", NULL, 400, "number");
    expect_refused("Content-Length as a list", "POST / HTTP/1.1\r\nContent-Length: 5, 5\r\n\r\nabcde", NULL, 400, "number");
    expect_refused("Content-Length in hex", "POST / HTTP/1.1\r\nContent-Length: 0x5\r\n\r\nabcde", NULL, 400, "number");
    expect_refused("empty Content-Length", "POST / HTTP/1.1\r\nContent-Length:\r\n\r\n", NULL, 400, "empty");
    expect_refused("differing Content-Lengths", "POST / HTTP/1.1\r\nContent-Length: 5\r\nContent-Length: 6\r\n\r\nabcdef", NULL, 400, "differing");
    /* refused at the head's end, before any of the body */
    expect_refused("a 1 GB Content-Length", "POST / HTTP/1.1\r\nContent-Length: 1073741824\r\n\r\n", NULL, 413, "1073741824");
    expect_refused("a Content-Length beyond 64 bits", "POST / HTTP/1.1\r\nContent-Length: 123456789012345678901234567890\r\n\r\n", NULL, 413, "limit");
    expect_refused("Content-Length one over the limit", "POST / HTTP/1.1\r\nContent-Length: 4097\r\n\r\n", &small, 413, "4097");

    /* chunked */
    const char *ch = "POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n";
    char t[4096];
#define CHUNKED(body) (snprintf(t, sizeof t, "%s%s", ch, body), t)
    expect_refused("chunk size beyond 64 bits", CHUNKED("ffffffffffffffffffffffff\r\n"), NULL, 413, "limit");
    expect_refused("chunk over the body limit", CHUNKED("1001\r\n"), &small, 413, "limit");
    expect_refused("chunk size not hex", CHUNKED("g\r\n"), NULL, 400, "hexadecimal");
    expect_refused("chunk size with a sign", CHUNKED("+5\r\nhello\r\n0\r\n\r\n"), NULL, 400, "hexadecimal");
    expect_refused("chunk size line ended by LF", CHUNKED("5\nhello\r\n0\r\n\r\n"), NULL, 400, "CRLF");
    expect_refused("space after the chunk size", CHUNKED("5 \r\nhello\r\n0\r\n\r\n"), NULL, 400, "extension");
    expect_refused("bare LF inside an extension", CHUNKED("5;a\nb\r\nhello\r\n0\r\n\r\n"), NULL, 400, "CRLF");
    expect_refused("bad extension name", CHUNKED("5;=x\r\nhello\r\n0\r\n\r\n"), NULL, 400, "extension");
    expect_refused("unterminated quoted extension", CHUNKED("5;a=\"x\r\nhello\r\n0\r\n\r\n"), NULL, 400, "extension");
    expect_refused("data longer than its size", CHUNKED("5\r\nhello!\r\n0\r\n\r\n"), NULL, 400, "CRLF");
    expect_refused("data ended by LF", CHUNKED("5\r\nhello\n0\r\n\r\n"), NULL, 400, "CRLF");
    expect_refused("trailer ended by LF", CHUNKED("0\r\nX: y\n\r\n"), NULL, 400, "CRLF");
    expect_refused("trailer folding", CHUNKED("0\r\nX: y\r\n z\r\n\r\n"), NULL, 400, "folding");
    expect_refused("bad trailer", CHUNKED("0\r\nX y\r\n\r\n"), NULL, 400, "colon");
#undef CHUNKED
    /* two chunks of 2048 + one byte more than the 4096-byte limit */
    {
        char b[5000];
        int n = snprintf(b, sizeof b, "%s800\r\n", ch);
        memset(b + n, 'x', 2048);
        n += 2048;
        n += snprintf(b + n, sizeof b - (size_t)n, "\r\n800\r\n");
        memset(b + n, 'y', 2048);
        n += 2048;
        n += snprintf(b + n, sizeof b - (size_t)n, "\r\n1\r\n");
        b[n] = '\0';
        expect_refused("chunks adding up to one over the limit", b, &small, 413, "limit");
        snprintf(b + n - 3, sizeof b - (size_t)n + 3, "0\r\n\r\n");
        r = feed(b, strlen(b), &small, 0);
        CHECK(r.rc == 1 && r.req.body_len == 4096 && r.req.body[4095] == 'y' && r.req.body[4096] == '\0',
              "chunks adding up to exactly the limit accepted");
        done(&r);
    }
}

static void test_limits(void) {
    /* the head: refused once the buffer passes the limit without the blank line */
    char t[3000];
    int n = snprintf(t, sizeof t, "GET / HTTP/1.1\r\nX-Big: ");
    memset(t + n, 'a', sizeof t - (size_t)n);
    result r = feed(t, 1024, &small, 0);
    CHECK(r.rc == 0, "head of exactly max_header_bytes without its end: more needed");
    done(&r);
    r = feed(t, 1025, &small, 0);
    CHECK(r.rc == -1 && r.status == 431, "one byte over max_header_bytes without the end: 431 (%s)", r.err.msg);
    done(&r);
    r = feed(t, sizeof t, &small, 0);
    CHECK(r.rc == -1 && r.status == 431, "a long head at once: 431");
    done(&r);
    CHECK(same_split(t, 1100, &small), "431: the same byte by byte");

    /* a head of exactly the limit (with its blank line) passes, one more byte does not */
    n = snprintf(t, sizeof t, "GET / HTTP/1.1\r\nX-Big: ");
    memset(t + n, 'a', 1024 - (size_t)n - 4);
    memcpy(t + 1020, "\r\n\r\n", 4);
    r = feed(t, 1024, &small, 0);
    CHECK(r.rc == 1 && r.used == 1024, "head of exactly max_header_bytes accepted");
    done(&r);
    memmove(t + 1021, t + 1020, 4);
    t[1020] = 'a';
    r = feed(t, 1025, &small, 0);
    CHECK(r.rc == -1 && r.status == 431, "head of max_header_bytes + 1: 431");
    done(&r);
    /* leading empty lines count */
    memset(t, '\n', sizeof t);
    r = feed(t, 1025, &small, 0);
    CHECK(r.rc == -1 && r.status == 431, "empty lines past max_header_bytes: 431");
    done(&r);

    /* header count */
    n = snprintf(t, sizeof t, "GET / HTTP/1.1\r\n");
    for (int i = 0; i < 8; i++) n += snprintf(t + n, sizeof t - (size_t)n, "X-%d: v\r\n", i);
    snprintf(t + n, sizeof t - (size_t)n, "\r\n");
    r = parse(t, &small);
    CHECK(r.rc == 1 && r.req.n_headers == 8, "max_headers header lines accepted");
    done(&r);
    snprintf(t + n, sizeof t - (size_t)n, "X-9: v\r\n\r\n");
    expect_refused("max_headers + 1 header lines", t, &small, 431, "header lines");

    /* trailers: counted against max_headers and max_header_bytes together with the head */
    n = snprintf(t, sizeof t, "POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n");
    for (int i = 0; i < 7; i++) n += snprintf(t + n, sizeof t - (size_t)n, "T-%d: v\r\n", i);
    snprintf(t + n, sizeof t - (size_t)n, "\r\n");
    r = parse(t, &small);
    CHECK(r.rc == 1, "7 trailers + 1 header = max_headers accepted");
    done(&r);
    snprintf(t + n, sizeof t - (size_t)n, "T-8: v\r\n\r\n");
    expect_refused("one trailer too many", t, &small, 431, "trailer");
    n = snprintf(t, sizeof t, "POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n0\r\nT: ");
    memset(t + n, 'v', 1000);
    t[n + 1000] = '\0';
    r = parse(t, &small);
    CHECK(r.rc == -1 && r.status == 431, "head + an unfinished trailer over max_header_bytes: 431");
    done(&r);
    CHECK(same_split(t, strlen(t), &small), "trailer 431: the same byte by byte");

    /* chunk framing: size lines may take max_header_bytes plus the data they framed */
    n = snprintf(t, sizeof t, "POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n1;");
    memset(t + n, 'e', 1100);
    t[n + 1100] = '\0';
    expect_refused("a chunk extension over the framing budget", t, &small, 413, "framing");
    {
        size_t cap = 20000;
        char *b = malloc(cap);
        n = snprintf(b, cap, "POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n");
        while ((size_t)n + 10 < cap) n += snprintf(b + n, cap - (size_t)n, "1\r\nx\r\n");
        r = feed(b, (size_t)n, &small, 0);
        CHECK(r.rc == -1 && r.status == 413 && strstr(r.err.msg, "framing"), "thousands of one-byte chunks: 413 (%s)", r.err.msg);
        done(&r);
        /* 255 one-byte chunks fit (5 framing bytes each within 1024 + 255), 256 do not */
        for (int k = 255; k <= 256; k++) {
            n = snprintf(b, cap, "POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n");
            for (int i = 0; i < k; i++) n += snprintf(b + n, cap - (size_t)n, "1\r\nx\r\n");
            n += snprintf(b + n, cap - (size_t)n, "0\r\n\r\n");
            r = feed(b, (size_t)n, &small, 0);
            CHECK(k == 255 ? r.rc == 1 && r.req.body_len == 255 : r.rc == -1 && r.status == 413,
                  "%d one-byte chunks with max_header_bytes 1024: %s", k, k == 255 ? "accepted" : "413");
            done(&r);
        }
        free(b);
    }
}

static void test_split(void) {
    const char *reqs[] = {
        "GET /v1/models HTTP/1.1\r\nHost: a\r\n\r\n",
        "\r\nPOST /v1/chat/completions?stream=1 HTTP/1.1\r\nContent-Length: 11\r\nConnection: close\r\n\r\n{\"a\":[1,2]}",
        "POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\nExpect: 100-continue\r\n\r\n3;x=\"y\"\r\nabc\r\n10\r\n0123456789abcdef\r\n0\r\nT: 1\r\n\r\nGET / HTTP/1.1\r\n\r\n",
        "GET /x HTTP/1.0\nConnection: keep-alive\n\n",
        "GET / HTTP/1.1\r\nA: b\r\n c\r\n\r\n",
        "POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\n",
        "GET / HTTP/3.0\r\n\r\n",
        "POST / HTTP/1.1\r\nContent-Length: 99999999999\r\n\r\n",
    };
    for (size_t i = 0; i < sizeof reqs / sizeof reqs[0]; i++)
        CHECK(same_split(reqs[i], strlen(reqs[i]), NULL), "split feeding %zu gives what feeding at once gives", i);
    result r = feed(reqs[2], strlen(reqs[2]), NULL, 1);
    CHECK(r.rc == 1 && r.req.body_len == 19 && !strcmp(r.req.body, "abc0123456789abcdef") && r.used == strlen(reqs[2]) - 18,
          "chunked byte by byte: decoded body, used stops before the next request");
    done(&r);
}

static void test_pipelined(void) {
    const char *two = "POST /a HTTP/1.1\r\nContent-Length: 3\r\n\r\nxyzGET /b HTTP/1.1\r\nConnection: close\r\n\r\n";
    size_t len = strlen(two);
    char *buf = malloc(len);
    memcpy(buf, two, len);
    http_parser p;
    http_request req;
    size_t used;
    int status;
    ts_error err;
    http_parser_init(&p, NULL);
    int rc = http_parse(&p, buf, len, &req, &used, &status, &err);
    CHECK(rc == 1 && !strcmp(req.path, "/a") && !strcmp(req.body, "xyz") && used == 42 && req.keep_alive, "pipelined: the first request");
    http_request_free(&req);
    size_t first = used;
    rc = http_parse(&p, buf, len, &req, &used, &status, &err);
    CHECK(rc == -1 && status == 500 && used == 0, "http_parse again without http_parser_init: 500");
    memmove(buf, buf + first, len - first);
    len -= first;
    http_parser_init(&p, NULL);
    rc = http_parse(&p, buf, len, &req, &used, &status, &err);
    CHECK(rc == 1 && !strcmp(req.path, "/b") && used == len && !req.keep_alive, "pipelined: the second request");
    http_request_free(&req);
    http_parser_free(&p);
    free(buf);

    /* a refusal is repeated; the parser holds nothing after it */
    http_parser_init(&p, NULL);
    rc = http_parse(&p, "GET / HTTP/9.9\r\n\r\n", 18, &req, &used, &status, &err);
    int rc2 = http_parse(&p, "GET / HTTP/9.9\r\n\r\n", 18, &req, &used, &status, &err);
    CHECK(rc == -1 && rc2 == -1 && status == 505 && strstr(err.msg, "9.9"), "a refusal repeated on the next call");
    http_parser_init(&p, NULL);   /* no leak without http_parser_free after -1 */
}

static bool keep_alive_of(const char *text) {
    result r = parse(text, NULL);
    bool k = r.rc == 1 && r.req.keep_alive;
    done(&r);
    return k;
}

static void test_keep_alive(void) {
    CHECK(keep_alive_of("GET / HTTP/1.1\r\n\r\n"), "1.1: keep-alive by default");
    CHECK(!keep_alive_of("GET / HTTP/1.1\r\nConnection: close\r\n\r\n"), "1.1 + close: closes");
    CHECK(!keep_alive_of("GET / HTTP/1.1\r\nConnection: Upgrade, CLOSE\r\n\r\n"), "1.1 + a list holding Close: closes");
    CHECK(!keep_alive_of("GET / HTTP/1.1\r\nConnection: keep-alive\r\nConnection: close\r\n\r\n"), "close on a second line wins");
    CHECK(keep_alive_of("GET / HTTP/1.1\r\nConnection: closed\r\n\r\n"), "1.1 + 'closed' (not close): keep-alive");
    CHECK(!keep_alive_of("GET / HTTP/1.0\r\n\r\n"), "1.0: closes by default");
    CHECK(keep_alive_of("GET / HTTP/1.0\r\nConnection: Keep-Alive\r\n\r\n"), "1.0 + Keep-Alive: keep-alive");
    CHECK(!keep_alive_of("GET / HTTP/1.0\r\nConnection: keep-alive, close\r\n\r\n"), "1.0 + keep-alive, close: closes");
}

static void test_continue(void) {
    const char *head = "POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Length: 4\r\nExpect: 100-Continue\r\n\r\n";
    size_t n = strlen(head);
    char *buf = malloc(n + 4);
    memcpy(buf, head, n);
    memcpy(buf + n, "body", 4);
    http_parser p;
    http_request req;
    size_t used;
    int status;
    ts_error err;
    http_parser_init(&p, NULL);
    int rc = http_parse(&p, buf, n - 1, &req, &used, &status, &err);
    CHECK(rc == 0 && !http_parser_headers_done(&p) && http_parser_peek(&p) == NULL, "100-continue: head not complete yet");
    rc = http_parse(&p, buf, n, &req, &used, &status, &err);
    const http_request *peek = http_parser_peek(&p);
    CHECK(rc == 0 && http_parser_headers_done(&p) && peek && peek->expect_continue && !strcmp(peek->method, "POST")
          && !strcmp(peek->path, "/v1/chat/completions") && !strcmp(http_header_get(peek, "host"), "x") && peek->body == NULL,
          "100-continue: headers done, peek shows method, path, headers and expect_continue");
    rc = http_parse(&p, buf, n + 4, &req, &used, &status, &err);
    CHECK(rc == 1 && req.expect_continue && !strcmp(req.body, "body") && http_parser_peek(&p) == NULL, "100-continue: then the body");
    http_request_free(&req);
    http_parser_free(&p);
    free(buf);

    result r = parse("POST / HTTP/1.0\r\nExpect: 100-continue\r\nContent-Length: 0\r\n\r\n", NULL);
    CHECK(r.rc == 1 && !r.req.expect_continue, "Expect in HTTP/1.0: ignored");
    done(&r);
    r = parse("POST / HTTP/1.1\r\nExpect: something-else\r\n\r\n", NULL);
    CHECK(r.rc == 1 && !r.req.expect_continue, "another Expect value: no 100-continue");
    done(&r);

    /* a parser abandoned mid-request is freed by http_parser_free */
    http_parser_init(&p, NULL);
    const char *part = "POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\nA: b\r\n\r\n5\r\nhe";
    rc = http_parse(&p, part, strlen(part), &req, &used, &status, &err);
    peek = http_parser_peek(&p);
    CHECK(rc == 0 && http_parser_headers_done(&p) && peek && peek->chunked && peek->body == NULL && peek->body_len == 0,
          "mid chunked body: more needed, peek shows no body yet");
    http_parser_free(&p);   /* the abandoned parser: ASan's leak check holds it to freeing everything */
}

/* Each call costs O(new bytes): a 16 KiB head and a 1 MiB chunked body fed one byte per call (the
 * same buffer, growing) finish at once; a parser rescanning the buffer would take minutes. */
static void test_incremental_cost(void) {
    size_t body = 1 << 20, cap = (16 << 10) + body + 4096;
    char *b = malloc(cap);
    size_t n = (size_t)snprintf(b, cap, "POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\nX-Pad: ");
    while (n < (16 << 10) - 100) b[n++] = 'p';
    n += (size_t)snprintf(b + n, cap - n, "\r\n\r\n%zx\r\n", body);
    memset(b + n, 'z', body);
    n += body;
    n += (size_t)snprintf(b + n, cap - n, "\r\n0\r\n\r\n");
    http_limits lim = { 16 << 10, 2 << 20, 10 };
    http_parser p;
    http_request req;
    size_t used = 0;
    int status, rc = 0;
    ts_error err;
    http_parser_init(&p, &lim);
    size_t len = 0;
    while (rc == 0 && len < n) rc = http_parse(&p, b, ++len, &req, &used, &status, &err);
    CHECK(rc == 1 && used == n && req.body_len == body && req.body[body - 1] == 'z', "16 KiB head + 1 MiB chunked body, one byte per call");
    http_request_free(&req);
    http_parser_free(&p);
    free(b);
}

static void test_status_text(void) {
    static const struct { int code; const char *text; } s[] = {
        { 200, "OK" }, { 204, "No Content" }, { 400, "Bad Request" }, { 401, "Unauthorized" }, { 404, "Not Found" },
        { 405, "Method Not Allowed" }, { 408, "Request Timeout" }, { 413, "Content Too Large" }, { 414, "URI Too Long" },
        { 415, "Unsupported Media Type" }, { 429, "Too Many Requests" }, { 431, "Request Header Fields Too Large" },
        { 500, "Internal Server Error" }, { 501, "Not Implemented" }, { 503, "Service Unavailable" },
        { 505, "HTTP Version Not Supported" }, { 100, "Continue" }, { 418, "Unknown" }, { -1, "Unknown" },
    };
    int bad = 0;
    for (size_t i = 0; i < sizeof s / sizeof s[0]; i++)
        if (strcmp(http_status_text(s[i].code), s[i].text)) {
            printf("# %d: %s\n", s[i].code, http_status_text(s[i].code));
            bad++;
        }
    CHECK(bad == 0, "status texts");
}

int main(void) {
    test_get();
    test_bodies();
    test_refusals();
    test_limits();
    test_split();
    test_pipelined();
    test_keep_alive();
    test_continue();
    test_incremental_cost();
    test_status_text();
    CHECK_EXIT();
}
