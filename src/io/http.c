/* HTTP/1.1 request parser (see http.h for the rules).
 *
 * The parser works a line at a time in the head, the chunk-size lines and the trailers: it looks
 * for the line's LF from where the last call stopped, and judges a line only once it is complete.
 * Every line search is capped at what the limits leave, so a request is refused as soon as the
 * buffer passes a limit, and the outcome depends only on the bytes, never on how they were split
 * across calls (the unit test and the fuzz harness hold it to that). */
#include "io/http.h"
#include "core/error.h"
#include "core/str.h"
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { ST_HEAD, ST_BODY_LENGTH, ST_CHUNK_SIZE, ST_CHUNK_DATA, ST_CHUNK_END, ST_TRAILER, ST_DONE, ST_FAILED };

/* ---- characters ---- */

static bool is_tchar(unsigned char c) {
    if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')) return true;
    return c && strchr("!#$%&'*+-.^_`|~", c) != NULL;
}

static bool is_ows(unsigned char c) { return c == ' ' || c == '\t'; }

static unsigned char lower(unsigned char c) { return c >= 'A' && c <= 'Z' ? (unsigned char)(c + 32) : c; }

/* ASCII case-insensitive equality of s[0..n) and the lower-case word w. */
static bool equals_word(const char *s, size_t n, const char *w) {
    if (strlen(w) != n) return false;
    for (size_t i = 0; i < n; i++)
        if (lower((unsigned char)s[i]) != (unsigned char)w[i]) return false;
    return true;
}

/* ---- failing ---- */

/* Records the refusal (kept for repeated calls), releases the request being built, returns -1. */
static int refuse(http_parser *p, int status, int *status_out, ts_error *err, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));
static int refuse(http_parser *p, int status, int *status_out, ts_error *err, const char *fmt, ...) {
    char msg[sizeof p->fail.msg];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    ts_fail(&p->fail, "%s", msg);   /* ts_fail keeps it one line */
    http_request_free(&p->req);
    free(p->body);
    p->body = NULL;
    p->body_len = p->body_cap = 0;
    p->state = ST_FAILED;
    p->fail_status = status;
    *status_out = status;
    if (err) *err = p->fail;
    return -1;
}

/* ---- the request being built ---- */

void http_request_free(http_request *r) {
    if (!r) return;
    free(r->target);
    free(r->path);
    for (int i = 0; i < r->n_headers; i++) {
        free(r->headers[i].name);
        free(r->headers[i].value);
    }
    free(r->headers);
    free(r->body);
    memset(r, 0, sizeof *r);
}

void http_parser_init(http_parser *p, const http_limits *lim) {
    memset(p, 0, sizeof *p);
    if (lim) p->lim = *lim;
    else p->lim = (http_limits){ HTTP_DEFAULT_MAX_HEADER_BYTES, HTTP_DEFAULT_MAX_BODY_BYTES,
                                 HTTP_DEFAULT_MAX_HEADERS };
    p->state = ST_HEAD;
}

void http_parser_free(http_parser *p) {
    http_limits lim = p->lim;
    http_request_free(&p->req);
    free(p->body);
    http_parser_init(p, &lim);
}

bool http_parser_headers_done(const http_parser *p) { return p->headers_done; }

const http_request *http_parser_peek(const http_parser *p) {
    return p->headers_done && p->state != ST_DONE && p->state != ST_FAILED ? &p->req : NULL;
}

const char *http_header_get(const http_request *r, const char *lower_name) {
    size_t n = strlen(lower_name);
    for (int i = 0; i < r->n_headers; i++) {
        const char *name = r->headers[i].name;
        if (strlen(name) != n) continue;
        size_t k = 0;
        while (k < n && lower((unsigned char)name[k]) == lower((unsigned char)lower_name[k])) k++;
        if (k == n) return r->headers[i].value;
    }
    return NULL;
}

const char *http_status_text(int status) {
    switch (status) {
    case 100: return "Continue";
    case 200: return "OK";
    case 204: return "No Content";
    case 400: return "Bad Request";
    case 401: return "Unauthorized";
    case 404: return "Not Found";
    case 405: return "Method Not Allowed";
    case 408: return "Request Timeout";
    case 413: return "Content Too Large";
    case 414: return "URI Too Long";
    case 415: return "Unsupported Media Type";
    case 429: return "Too Many Requests";
    case 431: return "Request Header Fields Too Large";
    case 500: return "Internal Server Error";
    case 501: return "Not Implemented";
    case 503: return "Service Unavailable";
    case 505: return "HTTP Version Not Supported";
    default:  return "Unknown";
    }
}

/* ---- the head ---- */

/* `METHOD SP target SP HTTP/1.x` (line ending removed). */
static int request_line(http_parser *p, const char *s, size_t n, int *status, ts_error *err) {
    http_request *r = &p->req;
    size_t i = 0;
    while (i < n && is_tchar((unsigned char)s[i])) i++;
    if (i == 0) return refuse(p, 400, status, err, "bad request line: no method");
    if (i > sizeof r->method - 1) return refuse(p, 400, status, err, "bad request line: method longer than 15 bytes");
    if (i == n || s[i] != ' ') return refuse(p, 400, status, err, "bad request line: bad character in the method");
    memcpy(r->method, s, i);
    r->method[i] = '\0';

    size_t t0 = ++i;
    while (i < n && s[i] != ' ') {
        unsigned char c = (unsigned char)s[i];
        if (c < 0x21 || c > 0x7e || c == '#')
            return refuse(p, 400, status, err, "bad request line: bad character 0x%02x in the target", c);
        i++;
    }
    size_t tn = i - t0;
    if (tn == 0) return refuse(p, 400, status, err, "bad request line: no target (or two spaces)");
    if (i == n) return refuse(p, 400, status, err, "bad request line: no HTTP version");
    if (tn > HTTP_MAX_TARGET)
        return refuse(p, 414, status, err, "request target of %zu bytes (at most %d)", tn, HTTP_MAX_TARGET);
    bool star = tn == 1 && s[t0] == '*';
    if (star ? strcmp(r->method, "OPTIONS") != 0 : s[t0] != '/')
        return refuse(p, 400, status, err, "bad request line: the target must start with '/' (or be * for OPTIONS)");

    const char *v = s + i + 1;
    size_t vn = n - i - 1;
    if (vn != 8 || memcmp(v, "HTTP/", 5) != 0 || v[5] < '0' || v[5] > '9' || v[6] != '.' || v[7] < '0' || v[7] > '9')
        return refuse(p, 400, status, err, "bad request line: expected one space and HTTP/d.d after the target");
    if (v[5] != '1' || (v[7] != '0' && v[7] != '1'))
        return refuse(p, 505, status, err, "HTTP version %c.%c not supported (1.0 and 1.1 are)", v[5], v[7]);
    r->version_minor = v[7] - '0';

    r->target = str_copy(s + t0, tn);
    const char *q = memchr(s + t0, '?', tn);
    r->path = str_copy(s + t0, q ? (size_t)(q - (s + t0)) : tn);
    if (!r->target || !r->path) return refuse(p, 500, status, err, "out of memory");
    return 0;
}

/* `name: value` (line ending removed); checked, and stored when store is set. */
static int field_line(http_parser *p, const char *s, size_t n, bool store, int *status, ts_error *err) {
    const char *what = store ? "header" : "trailer";
    if (is_ows((unsigned char)s[0]))
        return refuse(p, 400, status, err, "%s line starting with whitespace (obsolete line folding)", what);
    size_t i = 0;
    while (i < n && is_tchar((unsigned char)s[i])) i++;
    if (i == 0) return refuse(p, 400, status, err, "%s line without a name", what);
    if (i == n) return refuse(p, 400, status, err, "%s line without a colon", what);
    if (s[i] != ':') {
        if (is_ows((unsigned char)s[i]))
            return refuse(p, 400, status, err, "whitespace between a %s name and its colon", what);
        return refuse(p, 400, status, err, "bad character 0x%02x in a %s name", (unsigned char)s[i], what);
    }
    size_t v0 = i + 1, v1 = n;
    while (v0 < v1 && is_ows((unsigned char)s[v0])) v0++;
    while (v1 > v0 && is_ows((unsigned char)s[v1 - 1])) v1--;
    for (size_t k = v0; k < v1; k++) {
        unsigned char c = (unsigned char)s[k];
        if ((c < 0x20 && c != '\t') || c == 0x7f)
            return refuse(p, 400, status, err, "control character 0x%02x in the value of %s %.*s", c, what,
                          (int)(i < 40 ? i : 40), s);
    }
    if (!store) return 0;

    http_request *r = &p->req;
    if (r->n_headers == p->cap_headers) {
        int cap = p->cap_headers ? 2 * p->cap_headers : 16;
        if (cap > p->lim.max_headers) cap = p->lim.max_headers;
        http_header *h = realloc(r->headers, (size_t)cap * sizeof *h);
        if (!h) return refuse(p, 500, status, err, "out of memory");
        r->headers = h;
        p->cap_headers = cap;
    }
    char *name = str_copy(s, i), *value = str_copy(s + v0, v1 - v0);
    if (!name || !value) {
        free(name);
        free(value);
        return refuse(p, 500, status, err, "out of memory");
    }
    for (char *c = name; *c; c++) *c = (char)lower((unsigned char)*c);
    r->headers[r->n_headers++] = (http_header){ name, value };
    return 0;
}

/* The line [s, s+n) ended by an LF: a bare CR or a NUL in it is refused (a CR right before the LF
 * is the line ending, removed by the caller). */
static int check_bytes(http_parser *p, const char *s, size_t n, int *status, ts_error *err) {
    if (memchr(s, '\0', n)) return refuse(p, 400, status, err, "NUL byte in the request head");
    if (memchr(s, '\r', n)) return refuse(p, 400, status, err, "CR not followed by LF in the request head");
    return 0;
}

/* Calls fn on each element of the comma-separated list in every header named name; fn returns
 * false to stop. Elements are trimmed of OWS; empty ones are skipped (RFC 9110 5.6.1). */
typedef bool (*list_fn)(const char *s, size_t n, void *ctx);
static void each_element(const http_request *r, const char *name, list_fn fn, void *ctx) {
    for (int i = 0; i < r->n_headers; i++) {
        if (strcmp(r->headers[i].name, name) != 0) continue;
        const char *s = r->headers[i].value;
        while (*s) {
            const char *e = strchr(s, ',');
            if (!e) e = s + strlen(s);
            const char *a = s, *b = e;
            while (a < b && is_ows((unsigned char)*a)) a++;
            while (b > a && is_ows((unsigned char)b[-1])) b--;
            if (b > a && !fn(a, (size_t)(b - a), ctx)) return;
            s = *e ? e + 1 : e;
        }
    }
}

typedef struct connection_tokens { bool close, keep_alive; } connection_tokens;
static bool connection_token(const char *s, size_t n, void *ctx) {
    connection_tokens *t = ctx;
    if (equals_word(s, n, "close")) t->close = true;
    if (equals_word(s, n, "keep-alive")) t->keep_alive = true;
    return true;
}

typedef struct codings { int n; bool chunked; } codings;
static bool coding(const char *s, size_t n, void *ctx) {
    codings *c = ctx;
    c->n++;
    c->chunked = equals_word(s, n, "chunked");
    return true;
}

/* The head is complete: how the body is framed, and the connection's fate. */
static int end_of_head(http_parser *p, int *status, ts_error *err) {
    http_request *r = &p->req;
    int hosts = 0, n_te = 0, n_cl = 0;
    uint64_t length = 0;
    for (int i = 0; i < r->n_headers; i++) {
        const char *name = r->headers[i].name, *v = r->headers[i].value;
        if (!strcmp(name, "host")) hosts++;
        if (!strcmp(name, "transfer-encoding")) n_te++;
        if (strcmp(name, "content-length") != 0) continue;
        /* digits only (no sign, no list); saturated, so any number of digits is safe */
        if (!*v) return refuse(p, 400, status, err, "empty Content-Length");
        uint64_t x = 0;
        for (const char *c = v; *c; c++) {
            if (*c < '0' || *c > '9') return refuse(p, 400, status, err, "Content-Length is not a number");
            x = x > (UINT64_MAX - 9) / 10 ? UINT64_MAX : x * 10 + (uint64_t)(*c - '0');
        }
        if (n_cl++ && x != length) return refuse(p, 400, status, err, "differing Content-Length values");
        length = x;
    }
    if (hosts > 1) return refuse(p, 400, status, err, "more than one Host header");

    if (n_te) {
        if (n_cl) return refuse(p, 400, status, err, "both Transfer-Encoding and Content-Length");
        if (r->version_minor == 0) return refuse(p, 400, status, err, "Transfer-Encoding in an HTTP/1.0 request");
        codings c = { 0, false };
        each_element(r, "transfer-encoding", coding, &c);
        if (c.n != 1 || !c.chunked)
            return refuse(p, 501, status, err, "unsupported Transfer-Encoding (only \"chunked\" is)");
        r->chunked = true;
        p->state = ST_CHUNK_SIZE;
    } else if (n_cl && length > 0) {
        if (length > p->lim.max_body_bytes)
            return refuse(p, 413, status, err, "Content-Length %llu over the limit of %zu bytes",
                          (unsigned long long)length, p->lim.max_body_bytes);
        p->body_left = length;
        p->state = ST_BODY_LENGTH;
    } else {
        p->state = ST_DONE;   /* no body */
    }

    connection_tokens t = { false, false };
    each_element(r, "connection", connection_token, &t);
    r->keep_alive = !t.close && (r->version_minor == 1 || t.keep_alive);
    const char *expect = http_header_get(r, "expect");
    r->expect_continue = r->version_minor == 1 && expect && equals_word(expect, strlen(expect), "100-continue");
    p->head_bytes = p->pos;
    p->headers_done = true;
    return 0;
}

/* One complete head line s[0..n) (without its LF; a CR before it still there). */
static int head_line(http_parser *p, const char *s, size_t n, int *status, ts_error *err) {
    if (n && s[n - 1] == '\r') n--;
    if (check_bytes(p, s, n, status, err)) return -1;
    if (!p->seen_request_line) {
        if (n == 0) return 0;   /* empty lines before the request line are ignored (RFC 9112 2.2) */
        p->seen_request_line = true;
        return request_line(p, s, n, status, err);
    }
    if (n == 0) return end_of_head(p, status, err);
    if (p->req.n_headers >= p->lim.max_headers)
        return refuse(p, 431, status, err, "more than %d header lines", p->lim.max_headers);
    return field_line(p, s, n, true, status, err);
}

/* ---- the chunked body ---- */

/* chunk-ext = *( BWS ";" BWS name [ BWS "=" BWS ( token / quoted-string ) ] ) */
static bool chunk_ext_ok(const char *s, size_t n) {
    size_t i = 0;
    while (i < n) {
        while (i < n && is_ows((unsigned char)s[i])) i++;
        if (i == n || s[i] != ';') return false;
        i++;
        while (i < n && is_ows((unsigned char)s[i])) i++;
        size_t k = i;
        while (i < n && is_tchar((unsigned char)s[i])) i++;
        if (i == k) return false;
        size_t j = i;
        while (j < n && is_ows((unsigned char)s[j])) j++;
        if (j == n || s[j] != '=') continue;   /* a name alone (trailing BWS checked next round) */
        i = j + 1;
        while (i < n && is_ows((unsigned char)s[i])) i++;
        if (i < n && s[i] == '"') {
            for (i++;; i++) {
                if (i >= n) return false;
                unsigned char c = (unsigned char)s[i];
                if (c == '"') { i++; break; }
                if (c == '\\') {
                    if (++i >= n) return false;
                    c = (unsigned char)s[i];
                }
                if ((c < 0x20 && c != '\t') || c == 0x7f) return false;
            }
        } else {
            k = i;
            while (i < n && is_tchar((unsigned char)s[i])) i++;
            if (i == k) return false;
        }
    }
    return true;
}

/* A chunk-size line s[0..n) ending in its LF. */
static int chunk_size_line(http_parser *p, const char *s, size_t n, int *status, ts_error *err) {
    if (n < 2 || s[n - 2] != '\r') return refuse(p, 400, status, err, "chunk-size line not ended by CRLF");
    n -= 2;
    size_t i = 0;
    uint64_t size = 0;
    for (int d; i < n && (d = str_hex_digit((unsigned char)s[i])) >= 0; i++)
        size = size > (UINT64_MAX >> 4) ? UINT64_MAX : size << 4 | (uint64_t)d;   /* saturated */
    if (i == 0) return refuse(p, 400, status, err, "chunk size is not a hexadecimal number");
    if (!chunk_ext_ok(s + i, n - i)) return refuse(p, 400, status, err, "bad chunk extension");
    if (size > p->lim.max_body_bytes - p->body_len)
        return refuse(p, 413, status, err, "chunked body over the limit of %zu bytes", p->lim.max_body_bytes);
    p->body_left = size;
    p->state = size ? ST_CHUNK_DATA : ST_TRAILER;
    return 0;
}

/* A trailer line s[0..n) ending in its LF; the empty one ends the request. */
static int trailer_line(http_parser *p, const char *s, size_t n, int *status, ts_error *err) {
    if (n < 2 || s[n - 2] != '\r') return refuse(p, 400, status, err, "trailer line not ended by CRLF");
    n -= 2;
    if (check_bytes(p, s, n, status, err)) return -1;
    if (n == 0) {
        p->state = ST_DONE;
        return 0;
    }
    if (p->req.n_headers + p->n_trailers >= p->lim.max_headers)
        return refuse(p, 431, status, err, "more than %d header and trailer lines", p->lim.max_headers);
    p->n_trailers++;
    return field_line(p, s, n, false, status, err);
}

static int append_body(http_parser *p, const char *s, size_t n, int *status, ts_error *err) {
    if (p->body_len + n + 1 > p->body_cap) {
        /* doubling, but never past the limit: memory follows the bytes that arrived */
        size_t cap = p->body_cap ? p->body_cap * 2 : 4096;
        if (cap < p->body_len + n + 1) cap = p->body_len + n + 1;
        if (cap > p->lim.max_body_bytes + 1) cap = p->lim.max_body_bytes + 1;
        char *b = realloc(p->body, cap);
        if (!b) return refuse(p, 500, status, err, "out of memory");
        p->body = b;
        p->body_cap = cap;
    }
    memcpy(p->body + p->body_len, s, n);
    p->body_len += n;
    return 0;
}

/* ---- the loop ---- */

/* Looks for the LF ending the line that starts at p->pos, within the first `room` bytes of the
 * line. Returns the line's length including the LF, 0 if it is not there yet, or -1 when the
 * buffer already holds more than `room` bytes of the line without its end. */
static long long find_line(http_parser *p, const char *buf, size_t len, size_t room) {
    size_t end = room < len - p->pos ? p->pos + room : len;
    if (p->scan < end) {
        const char *lf = memchr(buf + p->scan, '\n', end - p->scan);
        if (lf) return (long long)(lf - buf) + 1 - (long long)p->pos;
        p->scan = end;
    }
    return len - p->pos > room ? -1 : 0;
}

static void next_line(http_parser *p, size_t n) { p->pos += n; p->scan = p->pos; }

int http_parse(http_parser *p, const char *buf, size_t len, http_request *req, size_t *used,
               int *status, ts_error *err) {
    memset(req, 0, sizeof *req);
    *used = 0;
    *status = 0;
    if (p->state == ST_FAILED) {
        *status = p->fail_status;
        if (err) *err = p->fail;
        return -1;
    }
    if (p->state == ST_DONE) return refuse(p, 500, status, err, "http_parse called after a complete request");
    if (len < p->pos) return refuse(p, 500, status, err, "the buffer shrank between calls");

    for (;;) {
        long long n;
        switch (p->state) {
        case ST_HEAD:
            n = find_line(p, buf, len, p->lim.max_header_bytes - p->pos);
            if (n < 0)
                return refuse(p, 431, status, err, "request head over the limit of %zu bytes", p->lim.max_header_bytes);
            if (n == 0) return 0;
            next_line(p, (size_t)n);
            if (head_line(p, buf + p->pos - n, (size_t)n - 1, status, err)) return -1;
            break;
        case ST_BODY_LENGTH:
            if (len - p->pos < p->body_left) return 0;
            p->req.body = str_copy(buf + p->pos, (size_t)p->body_left);
            if (!p->req.body) return refuse(p, 500, status, err, "out of memory");
            p->req.body_len = (size_t)p->body_left;
            p->pos += (size_t)p->body_left;
            p->state = ST_DONE;
            break;
        case ST_CHUNK_SIZE: {
            /* chunk-size lines and the CRLFs after the data may take max_header_bytes plus as much
             * as the data they framed, so the raw body stays within a few times the limits */
            size_t budget = p->lim.max_header_bytes + p->body_len;
            if (budget < p->body_len) budget = SIZE_MAX;   /* limits near SIZE_MAX */
            n = p->framing_bytes > budget ? -1 : find_line(p, buf, len, budget - p->framing_bytes);
            if (n < 0) return refuse(p, 413, status, err, "chunked framing over %zu bytes", budget);
            if (n == 0) return 0;
            p->framing_bytes += (size_t)n;
            next_line(p, (size_t)n);
            if (chunk_size_line(p, buf + p->pos - n, (size_t)n, status, err)) return -1;
            break;
        }
        case ST_CHUNK_DATA: {
            size_t take = len - p->pos < p->body_left ? len - p->pos : (size_t)p->body_left;
            if (take == 0) return 0;
            if (append_body(p, buf + p->pos, take, status, err)) return -1;
            p->pos += take;
            p->body_left -= take;
            if (p->body_left == 0) p->state = ST_CHUNK_END;
            break;
        }
        case ST_CHUNK_END:
            if (len - p->pos < 2) return 0;
            if (buf[p->pos] != '\r' || buf[p->pos + 1] != '\n')
                return refuse(p, 400, status, err, "chunk data not followed by CRLF");
            p->framing_bytes += 2;
            next_line(p, 2);
            p->state = ST_CHUNK_SIZE;
            break;
        case ST_TRAILER:
            /* the trailers share the head's budget */
            n = find_line(p, buf, len, p->lim.max_header_bytes - p->head_bytes - p->trailer_bytes);
            if (n < 0)
                return refuse(p, 431, status, err, "request head and trailers over the limit of %zu bytes",
                              p->lim.max_header_bytes);
            if (n == 0) return 0;
            p->trailer_bytes += (size_t)n;
            next_line(p, (size_t)n);
            if (trailer_line(p, buf + p->pos - n, (size_t)n, status, err)) return -1;
            break;
        case ST_DONE:
            if (p->body) {   /* chunked */
                p->body[p->body_len] = '\0';
                p->req.body = p->body;
                p->req.body_len = p->body_len;
                p->body = NULL;
                p->body_len = p->body_cap = 0;
            }
            if (!p->req.body) {
                p->req.body = calloc(1, 1);
                if (!p->req.body) return refuse(p, 500, status, err, "out of memory");
            }
            *req = p->req;
            memset(&p->req, 0, sizeof p->req);
            *used = p->pos;
            return 1;
        default:
            return refuse(p, 500, status, err, "http parser in an unknown state");
        }
    }
}
