/* HTTP/1.1 request parser (RFC 9112) for the OpenAI-compatible server: incremental over a buffer
 * the caller accumulates, strict wherever leniency lets two parsers disagree about where a request
 * ends (request smuggling), with every size limit enforced as the bytes arrive.
 *
 * What it accepts:
 *   - leading empty lines before the request line; CRLF or bare LF line endings in the head;
 *   - request line `METHOD SP target SP HTTP/1.x`: method = 1-15 token characters (as sent, case
 *     kept), target in origin form ('/'...) or "*" for OPTIONS, bytes 0x21-0x7E except '#', at most
 *     HTTP_MAX_TARGET bytes (414 beyond); versions 1.0 and 1.1 (other HTTP/d.d: 505);
 *   - header lines `name: value`: name = token characters (lower-cased), value trimmed of SP/HTAB,
 *     no control characters but HTAB; duplicate names kept in order;
 *   - bodies framed by Content-Length (digits only; repeated lines must agree) or by
 *     `Transfer-Encoding: chunked` (the only coding; chunk extensions validated and ignored,
 *     trailers validated and dropped); neither: an empty body, whatever the method.
 * What it refuses (-1, a one-line message and the status to answer with):
 *   400: bad syntax; a bare CR or a NUL in the head; obs-fold; whitespace before a header's colon;
 *        Content-Length together with Transfer-Encoding; differing Content-Lengths; more than one
 *        Host; Transfer-Encoding in an HTTP/1.0 request; chunked framing lines not ending in CRLF
 *        (bare LF is accepted in the head only);
 *   413: a Content-Length or a chunk over max_body_bytes (refused when the size is read, before the
 *        body arrives); chunked framing (size lines and the CRLFs after the data) over
 *        max_header_bytes + the data's length (so 1-byte chunks stop after about
 *        max_header_bytes / 4 of them; a whole request's raw bytes stay under
 *        3 x max_header_bytes + 2 x max_body_bytes);
 *   414: a target over HTTP_MAX_TARGET bytes;
 *   431: the head (leading empty lines, request line, headers, blank line) over max_header_bytes,
 *        refused as soon as the buffer passes the limit without the head's end; more than
 *        max_headers header lines; the head and the trailers together over those limits;
 *   501: a Transfer-Encoding other than exactly "chunked";
 *   505: HTTP/d.d other than 1.0 and 1.1;
 *   500: out of memory, or the parser used after it finished (see http_parse).
 * Memory: the head's strings and the decoded body, nothing sized by what a request merely declares. */
#ifndef TS_IO_HTTP_H
#define TS_IO_HTTP_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "tessera.h"

#define HTTP_MAX_TARGET 8192                      /* request-target bytes, 414 beyond */
#define HTTP_DEFAULT_MAX_HEADER_BYTES (16u << 10)
#define HTTP_DEFAULT_MAX_BODY_BYTES   (8u << 20)
#define HTTP_DEFAULT_MAX_HEADERS      100

typedef struct http_limits {
    size_t max_header_bytes;   /* request line + headers, including the blank line -> 431 */
    size_t max_body_bytes;     /* decoded body -> 413 */
    int    max_headers;        /* header lines (trailer lines count too) -> 431 */
} http_limits;

typedef struct http_header { char *name; char *value; } http_header;   /* name lower-cased; value trimmed of OWS */

typedef struct http_request {
    char method[16];           /* as sent (e.g. "GET", "POST"): compare case-sensitively */
    char *target;              /* request-target as sent, e.g. "/v1/models?x=1" (malloc'd) */
    char *path;                /* target without the query string, not percent-decoded (malloc'd) */
    int  version_minor;        /* HTTP/1.0 -> 0, HTTP/1.1 -> 1 */
    bool keep_alive;           /* 1.1: true unless "Connection: close"; 1.0: false unless "Connection: keep-alive" */
    bool expect_continue;      /* "Expect: 100-continue" in an HTTP/1.1 request */
    bool chunked;              /* the body came with Transfer-Encoding: chunked */
    http_header *headers; int n_headers;
    char *body; size_t body_len;  /* decoded, NUL-terminated, malloc'd (also when empty: ""); body_len 0 if none */
} http_request;

/* Incremental parser over a buffer the caller accumulates: the caller appends received bytes to its
 * buffer and calls http_parse again with the whole buffer (from the start of the current request)
 * and its new length; the parser remembers how far it got, so each call costs O(new bytes). The
 * buffer may move between calls (offsets are kept, not pointers), but the bytes already passed
 * must not change. The fields are private. */
typedef struct http_parser {
    http_limits lim;
    int state;                 /* enum in http.c */
    size_t pos;                /* bytes of the request consumed */
    size_t scan;               /* where the search for the current line's end resumes */
    size_t head_bytes;         /* the head's size, once complete */
    bool seen_request_line, headers_done;
    int cap_headers;
    uint64_t body_left;        /* Content-Length bytes still to come / the current chunk's rest */
    size_t framing_bytes;      /* chunk-size lines and CRLFs after chunk data so far */
    size_t trailer_bytes;
    int n_trailers;
    char *body;                /* the chunked body decoded so far (moved into the request at its end) */
    size_t body_len, body_cap;
    int fail_status;
    ts_error fail;             /* the refusal, repeated if http_parse is called again */
    http_request req;          /* being built */
} http_parser;

/* lim NULL: the HTTP_DEFAULT_* limits. Holds nothing yet (no http_parser_free needed before use). */
void http_parser_init(http_parser *p, const http_limits *lim);
/* *req is zeroed on every call, then:
 *  1: a request is complete: *req is filled (owned by the caller: http_request_free), *used = bytes
 *     of buf it took (bytes after it are the next pipelined request; the caller moves them to the
 *     front and calls http_parser_init again before parsing them);
 *  0: more bytes are needed (nothing filled);
 * -1: the request is malformed or over a limit: err holds a one-line message and *status the HTTP
 *     status to answer with; the caller answers and closes the connection.
 * After 1 or -1 the parser holds nothing (http_parser_free is harmless); calling http_parse again
 * without http_parser_init repeats the refusal, or after 1 gives -1 with status 500. */
int  http_parse(http_parser *p, const char *buf, size_t len, http_request *req, size_t *used,
                int *status, ts_error *err);
/* True once the head (request line and headers) was parsed and accepted, framing included. */
bool http_parser_headers_done(const http_parser *p);
/* Read access to method, target, path, version, keep_alive, expect_continue, chunked and headers
 * once the headers are done and until http_parse returns 1 or -1 (body NULL meanwhile); else NULL.
 * For the 100 Continue decision: expect_continue and the body not yet complete. */
const http_request *http_parser_peek(const http_parser *p);
void http_parser_free(http_parser *p);     /* frees anything held between calls; p is then initial */
void http_request_free(http_request *r);   /* frees and zeroes *r; NULL or a zeroed request is fine */
/* First header of that name (ASCII case-insensitive), its value, or NULL. */
const char *http_header_get(const http_request *r, const char *lower_name);
/* Reason phrase: "OK", "Bad Request", "Too Many Requests", ... for 100, 200, 204, 400, 401, 404,
 * 405, 408, 413, 414, 415, 429, 431, 500, 501, 503, 505; "Unknown" otherwise. */
const char *http_status_text(int status);

#endif
