/* The OpenAI-compatible server (see server.h). One thread does everything but the model's load:
 * poll over the listening socket and the connections, then one step of the session for every
 * running request (their weights read once per step), then the bytes each step produced written
 * out. A request is parsed (io/http.c), read into options (cli/openai.c), tokenized and queued;
 * its choices run in the session's slots as they free up. Limits keep one process up for weeks:
 * header and body sizes, connections (the oldest idle one makes room), the queue (429), read and
 * idle timeouts, output a stalled reader leaves unread. */
#include "cli/server.h"
#include "cli/openai.h"
#include "cli/prompt.h"
#include "cli/request.h"
#include "io/http.h"
#include "io/json.h"
#include "core/clock.h"
#include "core/error.h"
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define MAX_BODY_BYTES   (16u << 20)
#define MAX_OUT_BYTES    (8u << 20)    /* unread output past this: the reader has stalled */
#define ACCEPT_PER_ROUND 256
#define SERVER_STEP_PROMPT 256         /* prompt tokens a step evaluates at most */

typedef struct job job;
typedef struct server server;

/* One connection: what it has sent (a request being read), what is to be written to it, and the
 * request it waits on. */
typedef struct conn {
    int fd;                        /* -1: the entry is free */
    unsigned gen;                  /* bumped when the entry is reused: jobs check it */
    char peer[48];
    char *in; size_t in_len, in_cap;
    http_parser parser;
    bool continue_sent;            /* "100 Continue" answered to this request's Expect */
    json_buf out; size_t out_off;  /* to be written; out.data[0..out_off) is written already */
    double deadline;               /* the request must arrive by then / idle until then */
    double last_active;            /* for choosing which idle connection makes room */
    job *job;                      /* the request being answered, or NULL */
    bool keep_alive, close_after;  /* close once out is written */
    bool http10, head_only;        /* the request's version 1.0; a HEAD request (no body sent) */
    bool chunked_stream;           /* a stream written in chunked transfer coding */
} conn;

/* One of a request's n answers. */
typedef struct choice {
    job *j;
    int index, slot;               /* slot -1: waiting in the queue */
    ts_gen_request rq;
    ts_gen_result res;
    ts_error err;
    bool done, failed, sent_first;
    int lp_sent;                   /* tokens whose logprobs a chunk carried */
    size_t sent;                   /* bytes of the answer streamed */
    tool_calls calls;              /* the request gave tools: those read from the answer */
} choice;

/* A completion request: its connection, its parsed body and its choices. */
struct job {
    struct server *sv;
    int conn; unsigned gen;
    int api;
    json_value *body;
    request_fields f;
    openai_options x;
    int32_t *ids; int n_ids;
    ts_chat_options chat;          /* the server's template options, with the request's tools */
    bool tools;                    /* the answers are read for tool calls */
    choice ch[OPENAI_MAX_N];
    int n_done;
    char id[48];
    long long created;
    double t0;
    char method[16], path[64];     /* for the log line */
    job *next;                     /* the queue */
    bool queued;
};

/* What the loader thread hands over. */
typedef struct loader {
    const server_options *o;
    ts_model *m;
    ts_model *draft;               /* --model-draft, freed after the session */
    ts_session *s;
    ts_error err;
    int rc;
    int wake;                      /* the pipe's write end: one byte when done */
} loader;

struct server {
    const server_options *o;
    int listen_fd;
    conn *conns;
    int n_conns, cap_conns;
    ts_model *m;
    ts_session *s;
    bool loaded;
    const tool_format *tool_format;   /* how the template writes tool calls (ts_chat_tool_format), or NULL */
    int n_slots;
    choice **slot_choice;          /* the choice running in each slot */
    ts_gen_done *done;
    job *queue_head, *queue_tail;
    int n_queued, n_running;       /* jobs */
    uint64_t n_requests;
    /* /metrics */
    uint64_t requests_total, requests_failed, prompt_tokens, cached_tokens, generated_tokens;
    double busy_seconds;
    uint64_t recent[10]; long recent_second;   /* generated tokens in each of the last 10 seconds */
    json_buf scratch;
};

/* ---- output ---- */

/* Writes what the socket takes now. -1: the peer is gone. */
static int out_flush(conn *c) {
    while (c->out_off < c->out.len) {
        ssize_t w = send(c->fd, c->out.data + c->out_off, c->out.len - c->out_off, MSG_NOSIGNAL);
        if (w > 0) { c->out_off += (size_t)w; c->last_active = clock_seconds(); continue; }
        if (w < 0 && errno == EINTR) continue;
        if (w < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
            /* what was written makes room for what comes next */
            memmove(c->out.data, c->out.data + c->out_off, c->out.len - c->out_off);
            c->out.len -= c->out_off;
            c->out_off = 0;
            return 0;
        }
        return -1;
    }
    c->out_off = c->out.len = 0;
    return 0;
}

static void log_request(server *sv, const conn *c, const char *method, const char *path, int status, const job *j, double t0) {
    if (sv->o->quiet) return;
    int prompt = 0, cached = 0, gen = 0;
    for (int i = 0; j && i < j->x.n; i++) {
        if (i == 0) { prompt = j->ch[0].res.n_prompt; cached = j->ch[0].res.n_reused; }
        gen += j->ch[i].res.n_generated;
    }
    fprintf(stderr, "%s %s %s %d", c->peer, method, path, status);
    if (j) fprintf(stderr, " prompt %d (cached %d) generated %d", prompt, cached, gen);
    fprintf(stderr, " %.0f ms\n", (clock_seconds() - t0) * 1e3);
}

/* A whole response with a body. */
static void respond(server *sv, conn *c, int status, const char *type, const char *body, size_t len, const char *extra) {
    const char *connection = !c->keep_alive ? "Connection: close\r\n" : c->http10 ? "Connection: keep-alive\r\n" : "";
    int bad = json_buf_printf(&c->out, "HTTP/1.1 %d %s\r\nContent-Type: %s\r\nContent-Length: %zu\r\n%s%s\r\n", status,
                         http_status_text(status), type, len, connection, extra ? extra : "");
    if (bad || (!c->head_only && json_buf_put(&c->out, body, len) != 0)) c->close_after = true;
    if (status >= 400) sv->requests_failed++;
    sv->requests_total++;
}

/* An OpenAI-shaped error response. */
static void respond_error(server *sv, conn *c, int status, const char *message, const char *extra) {
    json_buf *b = &sv->scratch;
    b->len = 0;
    const char *type = status == 401 ? "authentication_error" : status == 429 ? "rate_limit_error"
                     : status == 503 ? "unavailable_error" : status >= 500 ? "server_error" : "invalid_request_error";
    if (openai_put_error(b, message, type, status == 401 ? "invalid_api_key" : NULL) != 0) { c->close_after = true; return; }
    respond(sv, c, status, "application/json", b->data, b->len, extra);
}

/* ---- connections ---- */

static void conn_reset_request(conn *c) {
    http_parser_free(&c->parser);
    http_parser_init(&c->parser, &(http_limits){ HTTP_DEFAULT_MAX_HEADER_BYTES, MAX_BODY_BYTES, HTTP_DEFAULT_MAX_HEADERS });
    c->continue_sent = false;
}

static void job_free(job *j);
static void job_cancel(server *sv, job *j);

static void conn_close(server *sv, int i) {
    conn *c = &sv->conns[i];
    if (c->fd < 0) return;
    if (c->job) { job_cancel(sv, c->job); c->job = NULL; }
    close(c->fd);
    http_parser_free(&c->parser);
    free(c->in);
    json_buf_free(&c->out);
    unsigned gen = c->gen;
    memset(c, 0, sizeof *c);
    c->fd = -1;
    c->gen = gen + 1;
    sv->n_conns--;
}

/* A client gone (told by a read or a write): its running or queued request cancelled with it, and
 * said in the log */
static void close_gone(server *sv, int i, bool quiet) {
    const conn *c = &sv->conns[i];
    if (c->job && !quiet) fprintf(stderr, "%s %s %s: client gone, request cancelled\n", c->peer, c->job->method, c->job->path);
    conn_close(sv, i);
}

/* Room for a new connection: a free entry, else the idle connection (no request being answered)
 * unused the longest is closed for it; -1 when every connection waits on an answer. */
static int conn_slot(server *sv) {
    int oldest = -1;
    for (int i = 0; i < sv->cap_conns; i++) {
        if (sv->conns[i].fd < 0) return i;
        if (!sv->conns[i].job && sv->conns[i].out.len == 0 &&
            (oldest < 0 || sv->conns[i].last_active < sv->conns[oldest].last_active))
            oldest = i;
    }
    if (oldest >= 0) conn_close(sv, oldest);
    return oldest;
}

static void accept_new(server *sv) {
    for (int k = 0; k < ACCEPT_PER_ROUND; k++) {
        struct sockaddr_storage addr;
        socklen_t alen = sizeof addr;
        int fd = accept4(sv->listen_fd, (struct sockaddr *)&addr, &alen, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (fd < 0) return;   /* EAGAIN, or a connection gone before it was taken */
        int i = conn_slot(sv);
        if (i < 0) {   /* every connection is waiting on an answer: this one is told so */
            static const char busy[] = "HTTP/1.1 503 Service Unavailable\r\nContent-Length: 0\r\nConnection: close\r\nRetry-After: 1\r\n\r\n";
            ssize_t w = send(fd, busy, sizeof busy - 1, MSG_NOSIGNAL);
            (void)w;
            close(fd);
            continue;
        }
        conn *c = &sv->conns[i];
        c->fd = fd;
        c->keep_alive = true;
        c->last_active = clock_seconds();
        c->deadline = c->last_active + sv->o->timeout;
        int one = 1;
        setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
        char host[INET6_ADDRSTRLEN] = "?";
        if (addr.ss_family == AF_INET) inet_ntop(AF_INET, &((struct sockaddr_in *)&addr)->sin_addr, host, sizeof host);
        else if (addr.ss_family == AF_INET6) inet_ntop(AF_INET6, &((struct sockaddr_in6 *)&addr)->sin6_addr, host, sizeof host);
        snprintf(c->peer, sizeof c->peer, "%s", host);
        conn_reset_request(c);
        sv->n_conns++;
    }
}

/* ---- requests ---- */

static void job_free(job *j) {
    for (int i = 0; i < j->x.n; i++) { ts_gen_result_free(&j->ch[i].res); tool_calls_free(&j->ch[i].calls); }
    request_fields_free(&j->f);
    json_free(j->body);
    free(j->ids);
    free(j);
}

static void queue_remove(server *sv, job *j) {
    job **p = &sv->queue_head, *prev = NULL;
    while (*p && *p != j) { prev = *p; p = &(*p)->next; }
    if (!*p) return;
    *p = j->next;
    if (sv->queue_tail == j) sv->queue_tail = prev;
    j->queued = false;
    sv->n_queued--;
}

/* A request whose client is gone: its running choices leave their slots at once. */
static void job_cancel(server *sv, job *j) {
    if (j->queued) queue_remove(sv, j);
    else sv->n_running--;
    for (int i = 0; i < j->x.n; i++)
        if (j->ch[i].slot >= 0 && !j->ch[i].done) {
            ts_session_cancel(sv->s, j->ch[i].slot);
            sv->slot_choice[j->ch[i].slot] = NULL;
        }
    job_free(j);
}

/* The connection can read its next request (or close) once its answer is written. */
static void conn_request_done(server *sv, conn *c) {
    c->job = NULL;
    c->head_only = false;   /* a 408 or a parse error after a HEAD has its body */
    c->deadline = clock_seconds() + sv->o->timeout;
    if (!c->keep_alive) c->close_after = true;
}

/* A chunk of a stream: "data: JSON\n\n", in a chunk of the transfer coding when there is one. */
static void put_event(conn *c, const char *data, size_t len) {
    bool bad = false;
    if (c->chunked_stream) bad |= json_buf_printf(&c->out, "%zx\r\n", len + 8) != 0;
    bad |= json_buf_put(&c->out, "data: ", 6) != 0 || json_buf_put(&c->out, data, len) != 0 || json_buf_put(&c->out, "\n\n", 2) != 0;
    if (c->chunked_stream) bad |= json_buf_put(&c->out, "\r\n", 2) != 0;
    if (bad) c->close_after = true;
}

static void send_chunk(server *sv, choice *ch, const char *text, size_t len, const char *finish) {
    job *j = ch->j;
    conn *c = &sv->conns[j->conn];
    if (c->fd < 0 || c->gen != j->gen) return;
    json_buf *b = &sv->scratch;
    b->len = 0;
    int lp_to = ch->res.n_generated;
    if (finish) lp_to = openai_tokens_in_text(&ch->res, sv->m);
    if (lp_to < ch->lp_sent) lp_to = ch->lp_sent;
    if (openai_put_chunk(b, j->api, j->id, sv->o->model_id, j->created, ch->index, !ch->sent_first, text, len, finish,
                         j->x.logprobs ? &ch->res : NULL, ch->lp_sent, lp_to, sv->m) != 0) {
        c->close_after = true;
        return;
    }
    ch->lp_sent = lp_to;
    ch->sent_first = true;
    put_event(c, b->data, b->len);
}

/* The session's streaming callback: a final piece of a choice's text, sent as a chunk. When the
 * answer may hold tool calls, only what surely is content is sent; the rest waits for the end. */
static int on_stream_text(void *user, const char *text, size_t len) {
    choice *ch = user;
    size_t upto = (size_t)(text - ch->res.text) + len;
    if (ch->j->tools) upto = tool_calls_safe_prefix(ch->j->sv->tool_format, ch->res.text, upto);
    if (upto > ch->sent) send_chunk(ch->j->sv, ch, ch->res.text + ch->sent, upto - ch->sent, NULL);
    if (upto > ch->sent) ch->sent = upto;
    return 0;
}

/* A streamed choice is done: what was held back (the content, or the text, past what was sent),
 * its tool calls, and the chunk with its finish reason. */
static void stream_end(server *sv, choice *ch) {
    job *j = ch->j;
    const char *rest = ch->res.text;
    size_t len = ch->res.len;
    if (ch->calls.n) { rest = ch->calls.content; len = ch->calls.content_len; }
    if (len > ch->sent) send_chunk(sv, ch, rest + ch->sent, len - ch->sent, NULL);
    if (ch->calls.n) {
        conn *c = &sv->conns[j->conn];
        json_buf *b = &sv->scratch;
        b->len = 0;
        if (c->fd >= 0 && c->gen == j->gen) {
            if (openai_put_tool_calls_chunk(b, j->id, sv->o->model_id, j->created, ch->index, !ch->sent_first, &ch->calls) == 0)
                put_event(c, b->data, b->len);
            else
                c->close_after = true;
            ch->sent_first = true;
        }
    }
    send_chunk(sv, ch, "", 0, ch->calls.n ? "tool_calls" : openai_finish_reason(&ch->res));
}

static void job_finish(server *sv, job *j);

/* Starts the queued requests' choices in the free slots, first come first served. */
static void start_queued(server *sv) {
    while (sv->queue_head && ts_session_n_free(sv->s) > 0) {
        job *j = sv->queue_head;
        bool all = true;
        for (int i = 0; i < j->x.n; i++) {
            choice *ch = &j->ch[i];
            if (ch->slot >= 0 || ch->done) continue;
            if (ts_session_n_free(sv->s) == 0) { all = false; break; }
            ts_error err = {{0}};
            int slot = ts_session_submit(sv->s, &ch->rq, &ch->res, &ch->err, &err);
            if (slot < 0) {   /* refused at once (checked before queueing, so rare): the choice fails */
                ch->done = ch->failed = true;
                ch->err = err;
                j->n_done++;
                continue;
            }
            ch->slot = slot;
            sv->slot_choice[slot] = ch;
        }
        if (!all) break;
        queue_remove(sv, j);
        sv->n_running++;
        if (j->n_done == j->x.n) job_finish(sv, j);   /* every choice refused at once */
    }
}

/* A request all of whose choices are done: its response (or the stream's end) is written. */
static void job_finish(server *sv, job *j) {
    conn *c = &sv->conns[j->conn];
    bool alive = c->fd >= 0 && c->gen == j->gen;
    const ts_gen_result *res[OPENAI_MAX_N];
    const tool_calls *calls[OPENAI_MAX_N];
    const char *error = NULL;
    for (int i = 0; i < j->x.n; i++) {
        res[i] = &j->ch[i].res;
        calls[i] = &j->ch[i].calls;
        if (j->ch[i].failed && !error) error = j->ch[i].err.msg;
    }
    int status = error ? 500 : 200;
    if (!error)
        for (int i = 0; i < j->x.n; i++) {
            sv->generated_tokens += (uint64_t)res[i]->n_generated;
            if (i == 0) { sv->prompt_tokens += (uint64_t)res[0]->n_prompt; sv->cached_tokens += (uint64_t)res[0]->n_reused; }
        }
    if (alive) {
        json_buf *b = &sv->scratch;
        if (j->x.stream) {
            if (error) {
                b->len = 0;
                if (openai_put_error(b, error, "server_error", NULL) == 0) put_event(c, b->data, b->len);
            } else if (j->x.include_usage) {
                b->len = 0;
                if (openai_put_usage_chunk(b, j->api, j->id, sv->o->model_id, j->created, res, j->x.n) == 0)
                    put_event(c, b->data, b->len);
            }
            static const char end[] = "data: [DONE]\n\n";
            if (c->chunked_stream) json_buf_printf(&c->out, "%zx\r\n%s\r\n0\r\n\r\n", sizeof end - 1, end);
            else json_buf_put(&c->out, end, sizeof end - 1);
            if (!c->chunked_stream) c->keep_alive = false;
            sv->requests_total++;
            if (error) sv->requests_failed++;
        } else if (error) {
            respond_error(sv, c, 500, error, NULL);
        } else {
            b->len = 0;
            if (openai_put_completion(b, j->api, j->id, sv->o->model_id, j->created, res, calls, j->x.n, sv->m, j->x.logprobs > 0) != 0)
                respond_error(sv, c, 500, "out of memory", NULL);
            else
                respond(sv, c, 200, "application/json", b->data, b->len, NULL);
        }
        log_request(sv, c, j->method, j->path, status, j, j->t0);
        conn_request_done(sv, c);
        out_flush(c);
    }
    sv->n_running--;
    job_free(j);
}

/* One step of the session: every running choice moves on by a token. */
static void step(server *sv) {
    double t0 = clock_seconds();
    int n = ts_session_step(sv->s, sv->done);
    double t1 = clock_seconds();
    sv->busy_seconds += t1 - t0;
    for (int k = 0; k < n; k++) {
        choice *ch = sv->slot_choice[sv->done[k].slot];
        sv->slot_choice[sv->done[k].slot] = NULL;
        if (!ch) continue;
        job *j = ch->j;
        ch->done = true;
        ch->failed = sv->done[k].rc != 0;
        j->n_done++;
        if (!ch->failed && j->tools) {   /* the calls' ids: from the response's id and the choice, unique per server */
            uint64_t h = 1469598103934665603ULL;
            for (const char *p = j->id; *p; p++) h = (h ^ (unsigned char)*p) * 1099511628211ULL;
            openai_read_tool_calls(sv->tool_format, &j->f, &ch->res, h + (uint64_t)ch->index, &ch->calls);
        }
        if (j->x.stream && !ch->failed) stream_end(sv, ch);
        if (j->n_done == j->x.n) job_finish(sv, j);
    }
    /* tokens per second over the last 10 seconds: each choice's tokens counted as they come */
    long sec = (long)t1;
    if (sec != sv->recent_second) {
        for (long s = sv->recent_second + 1; s <= sec && s <= sv->recent_second + 10; s++) sv->recent[s % 10] = 0;
        sv->recent_second = sec;
    }
    for (int i = 0; i < sv->n_slots; i++)   /* a step gives each generating slot one token */
        if (sv->slot_choice[i] && sv->slot_choice[i]->res.n_generated) sv->recent[sec % 10]++;
}

/* ---- endpoints ---- */

static bool authorized(const server *sv, const http_request *rq) {
    if (!sv->o->api_key) return true;
    const char *h = http_header_get(rq, "authorization");
    if (!h || strncasecmp(h, "Bearer ", 7) != 0) return false;
    const char *given = h + 7, *key = sv->o->api_key;
    size_t gl = strlen(given), kl = strlen(key);
    unsigned diff = gl != kl;
    for (size_t i = 0; i < kl; i++) diff |= (unsigned char)key[i] ^ (unsigned char)(i < gl ? given[i] : 0);
    return diff == 0;   /* compared in constant time: the key is not guessed byte by byte */
}

static void get_models(server *sv, conn *c) {
    json_buf *b = &sv->scratch;
    b->len = 0;
    char tail[160];
    snprintf(tail, sizeof tail, ", \"object\": \"model\", \"created\": %lld, \"owned_by\": \"tessera\"}]}", (long long)time(NULL));
    if (json_buf_put(b, "{\"object\": \"list\", \"data\": [{\"id\": ", 35) || json_buf_put_string(b, sv->o->model_id, strlen(sv->o->model_id)) ||
        json_buf_put(b, tail, strlen(tail))) { respond_error(sv, c, 500, "out of memory", NULL); return; }
    respond(sv, c, 200, "application/json", b->data, b->len, NULL);
}

static void get_metrics(server *sv, conn *c) {
    uint64_t recent = 0;
    for (int i = 0; i < 10; i++) recent += sv->recent[i];
    int busy = 0;
    for (int i = 0; i < sv->n_slots; i++) busy += sv->slot_choice[i] != NULL;
    char text[2048];
    int n = snprintf(text, sizeof text,
        "# HELP tessera_requests_total HTTP requests answered.\n# TYPE tessera_requests_total counter\ntessera_requests_total %llu\n"
        "# HELP tessera_requests_failed_total Requests answered with a status of 400 or more.\n# TYPE tessera_requests_failed_total counter\ntessera_requests_failed_total %llu\n"
        "# HELP tessera_prompt_tokens_total Prompt tokens of completed requests.\n# TYPE tessera_prompt_tokens_total counter\ntessera_prompt_tokens_total %llu\n"
        "# HELP tessera_prompt_tokens_cached_total Prompt tokens that came from the prefix cache.\n# TYPE tessera_prompt_tokens_cached_total counter\ntessera_prompt_tokens_cached_total %llu\n"
        "# HELP tessera_generated_tokens_total Tokens generated for completed requests.\n# TYPE tessera_generated_tokens_total counter\ntessera_generated_tokens_total %llu\n"
        "# HELP tessera_busy_seconds_total Time spent evaluating.\n# TYPE tessera_busy_seconds_total counter\ntessera_busy_seconds_total %.3f\n"
        "# HELP tessera_tokens_per_second Tokens generated per second over the last 10 seconds.\n# TYPE tessera_tokens_per_second gauge\ntessera_tokens_per_second %.2f\n"
        "# HELP tessera_queue_length Requests waiting for a slot.\n# TYPE tessera_queue_length gauge\ntessera_queue_length %d\n"
        "# HELP tessera_requests_running Requests being answered.\n# TYPE tessera_requests_running gauge\ntessera_requests_running %d\n"
        "# HELP tessera_slots_busy Slots holding a request.\n# TYPE tessera_slots_busy gauge\ntessera_slots_busy %d\n"
        "# HELP tessera_slots Slots (sequences evaluated together).\n# TYPE tessera_slots gauge\ntessera_slots %d\n"
        "# HELP tessera_connections Open connections.\n# TYPE tessera_connections gauge\ntessera_connections %d\n",
        (unsigned long long)sv->requests_total, (unsigned long long)sv->requests_failed,
        (unsigned long long)sv->prompt_tokens, (unsigned long long)sv->cached_tokens,
        (unsigned long long)sv->generated_tokens, sv->busy_seconds, recent / 10.0, sv->n_queued, sv->n_running,
        busy, sv->n_slots, sv->n_conns);
    respond(sv, c, 200, "text/plain; version=0.0.4", text, n > 0 && (size_t)n < sizeof text ? (size_t)n : 0, NULL);
}

/* POST /v1/chat/completions and /v1/completions: the body read, the prompt tokenized, the request
 * queued (its response is written when its choices are done). Returns the status when answered at
 * once (an error), 0 when queued. */
static int post_completion(server *sv, conn *c, int ci, const http_request *rq, int api, ts_error *err) {
    /* requests read in one pass of the loop are all queued before the free slots take them: those
     * slots count as room too, so -np 1 --queue 2 admits 3 requests arriving together, not 2 */
    const int free_slots = sv->loaded && sv->s ? ts_session_n_free(sv->s) : 0;
    if (sv->n_queued >= sv->o->max_queue + free_slots)
        return ts_fail(err, "the queue is full (%d requests wait): retry later", sv->n_queued), 429;
    job *j = calloc(1, sizeof *j);
    if (!j) return ts_fail(err, "out of memory"), 500;
    j->sv = sv;
    j->conn = ci;
    j->gen = c->gen;
    j->api = api;
    j->t0 = clock_seconds();
    snprintf(j->method, sizeof j->method, "%s", rq->method);
    snprintf(j->path, sizeof j->path, "%s", rq->path);
    j->f.max_tokens = sv->o->max_tokens;
    j->f.sampling = sv->o->sampling;
    ts_error jerr = {{0}};
    if (json_parse(rq->body, rq->body_len, &j->body, &jerr) != 0) {
        job_free(j);
        return ts_fail(err, "the body is not valid JSON: %s", jerr.msg), 400;
    }
    if (openai_parse_body(j->body, api, &j->f, &j->x, err) != 0 || openai_tool_grammar(sv->tool_format, &j->f, err) != 0) {
        job_free(j);
        return 400;
    }
    int n;
    bool chat = false, unknown = false;
    if (j->f.tokens) {
        j->ids = j->f.tokens;
        j->f.tokens = NULL;
        n = j->f.n_tokens;
    } else {
        j->chat = sv->o->chat ? *sv->o->chat : (ts_chat_options){0};
        if (j->f.tools_json) j->chat.tools_json = j->f.tools_json;   /* the request's tools, for the template */
        n = prompt_to_tokens(sv->m, j->f.msgs, j->f.n_msgs, j->f.raw, &j->chat, ts_session_text_limit(sv->s),
                             "the prompt", "the chat template", &j->ids, &chat, &unknown, err);
        if (n < 0) { job_free(j); return 400; }
    }
    j->n_ids = n;
    j->tools = j->f.tools && !j->f.no_tool_calls && sv->tool_format;
    if (n > ts_session_n_ctx(sv->s)) {
        ts_fail(err, "the prompt has %d tokens, more than the context of %d", n, ts_session_n_ctx(sv->s));
        job_free(j);
        return 400;
    }
    const int nv = ts_model_n_vocab(sv->m);
    for (int i = 0; i < n; i++)
        if (j->ids[i] < 0 || j->ids[i] >= nv) {
            ts_fail(err, "token id %d is out of range (vocabulary of %d)", j->ids[i], nv);
            job_free(j);
            return 400;
        }
    if (!j->f.own_seed) j->f.sampling.seed = sv->o->sampling.seed + sv->n_requests * OPENAI_MAX_N;
    sv->n_requests++;
    snprintf(j->id, sizeof j->id, "%s-%llu", api == OPENAI_CHAT ? "chatcmpl" : "cmpl", (unsigned long long)sv->n_requests);
    j->created = (long long)time(NULL);
    for (int i = 0; i < j->x.n; i++) {
        choice *ch = &j->ch[i];
        ch->j = j;
        ch->index = i;
        ch->slot = -1;
        ch->rq = (ts_gen_request){ .prompt = j->ids, .n_prompt = n, .max_tokens = j->f.max_tokens, .sampling = j->f.sampling,
                                   .stop = j->f.stop, .n_stop = j->f.n_stop, .heal = sv->o->heal, .ignore_eos = j->f.ignore_eos,
                                   .grammar = j->f.grammar ? j->f.grammar : sv->o->grammar,
                                   .logprobs = j->x.logprobs, .special_text = j->tools };
        ch->rq.sampling.seed += (uint64_t)i;   /* the choices differ when sampled */
        if (j->x.stream) { ch->rq.on_text = on_stream_text; ch->rq.user = ch; }
    }
    if (j->x.stream) {
        c->chunked_stream = rq->version_minor >= 1;
        if (!c->chunked_stream) c->keep_alive = false;
        if (json_buf_printf(&c->out, "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nCache-Control: no-cache\r\n%s\r\n",
                       c->chunked_stream ? "Transfer-Encoding: chunked\r\n" : "Connection: close\r\n") != 0) {
            job_free(j);
            return ts_fail(err, "out of memory"), 500;
        }
    }
    c->job = j;
    j->queued = true;
    if (sv->queue_tail) sv->queue_tail->next = j; else sv->queue_head = j;
    sv->queue_tail = j;
    sv->n_queued++;
    if (sv->o->verbose && !sv->o->quiet)
        for (int i = 0; i < j->f.n_msgs; i++)
            fprintf(stderr, "  %s: %s\n", j->f.msgs[i].role, j->f.msgs[i].content ? j->f.msgs[i].content : "(tool calls)");
    return 0;
}

/* Answers one complete request (or queues it). */
static void handle(server *sv, int ci, http_request *rq, bool draining) {
    conn *c = &sv->conns[ci];
    double t0 = clock_seconds();
    c->keep_alive = rq->keep_alive && !draining;
    c->http10 = rq->version_minor == 0;
    c->head_only = !strcmp(rq->method, "HEAD");
    const char *p = rq->path, *m = rq->method;
    bool get = !strcmp(m, "GET") || !strcmp(m, "HEAD"), post = !strcmp(m, "POST");
    int status = 200;
    ts_error err = {{0}};
    if (!strcmp(p, "/health") || !strcmp(p, "/v1/health")) {
        if (!get) status = 405;
        else if (!sv->loaded) respond_error(sv, c, status = 503, "Loading model", "Retry-After: 1\r\n");
        else respond(sv, c, 200, "application/json", "{\"status\": \"ok\"}", 16, NULL);
        if (status == 405) respond_error(sv, c, 405, "use GET", "Allow: GET\r\n");
    } else if (!strcmp(p, "/v1/models") || !strcmp(p, "/v1/chat/completions") || !strcmp(p, "/v1/completions") ||
               !strcmp(p, "/metrics")) {
        bool models = !strcmp(p, "/v1/models"), metrics = !strcmp(p, "/metrics");
        if (!authorized(sv, rq)) respond_error(sv, c, status = 401, "Incorrect API key provided (send it as Authorization: Bearer KEY)", "WWW-Authenticate: Bearer\r\n");
        else if ((models || metrics) && !get) respond_error(sv, c, status = 405, "use GET", "Allow: GET\r\n");
        else if (!models && !metrics && !post) respond_error(sv, c, status = 405, "use POST", "Allow: POST\r\n");
        else if (metrics) get_metrics(sv, c);
        else if (!sv->loaded) respond_error(sv, c, status = 503, "Loading model", "Retry-After: 1\r\n");
        else if (models) get_models(sv, c);
        else if (draining) respond_error(sv, c, status = 503, "the server is shutting down", NULL);
        else if ((status = post_completion(sv, c, ci, rq, !strcmp(p, "/v1/chat/completions") ? OPENAI_CHAT : OPENAI_COMPLETIONS, &err)) != 0)
            respond_error(sv, c, status, err.msg, status == 429 ? "Retry-After: 1\r\n" : NULL);
        else return;   /* queued: answered when done */
    } else {
        respond_error(sv, c, status = 404, "no such endpoint", NULL);
    }
    log_request(sv, c, m, p, status, NULL, t0);
    conn_request_done(sv, c);
}

/* Parses what a connection has sent; answers each complete request (pipelined ones in turn, once
 * the one before is answered). */
static void parse_input(server *sv, int ci, bool draining) {
    conn *c = &sv->conns[ci];
    while (!c->job && !c->close_after && c->in_len) {
        http_request rq;
        size_t used = 0;
        int status = 0;
        ts_error err = {{0}};
        int r = http_parse(&c->parser, c->in, c->in_len, &rq, &used, &status, &err);
        if (r == 0) {
            const http_request *head = http_parser_peek(&c->parser);
            if (head && head->expect_continue && !c->continue_sent) {
                json_buf_put(&c->out, "HTTP/1.1 100 Continue\r\n\r\n", 25);
                c->continue_sent = true;
            }
            return;
        }
        if (r < 0) {
            c->keep_alive = false;
            c->head_only = false;
            respond_error(sv, c, status, err.msg, NULL);
            log_request(sv, c, "-", "-", status, NULL, clock_seconds());
            c->close_after = true;
            return;
        }
        memmove(c->in, c->in + used, c->in_len - used);
        c->in_len -= used;
        conn_reset_request(c);
        handle(sv, ci, &rq, draining);
        http_request_free(&rq);
    }
}

/* Reads what the socket has. -1: the peer closed or failed. */
static int read_input(conn *c) {
    for (;;) {
        /* at most a request's worth (head + body + framing) is held; more waits in the socket */
        if (c->in_len >= MAX_BODY_BYTES + 2 * HTTP_DEFAULT_MAX_HEADER_BYTES + 65536) return 0;
        if (c->in_cap - c->in_len < 16384) {
            size_t nc = c->in_cap ? c->in_cap * 2 : 16384;
            char *t = realloc(c->in, nc);
            if (!t) return -1;
            c->in = t;
            c->in_cap = nc;
        }
        ssize_t r = recv(c->fd, c->in + c->in_len, c->in_cap - c->in_len, 0);
        if (r > 0) { c->in_len += (size_t)r; c->last_active = clock_seconds(); continue; }
        if (r == 0) return -1;
        if (errno == EINTR) continue;
        return errno == EAGAIN || errno == EWOULDBLOCK ? 0 : -1;
    }
}

/* ---- the loop ---- */

static void *load_model(void *arg) {
    loader *l = arg;
    const server_options *o = l->o;
    l->rc = ts_model_load(o->model_path, &o->load, &l->m, &l->err);
    if (l->rc == 0 && o->model_draft) {
        ts_load_options dlo = o->load;
        dlo.tokenizer_path = NULL;
        l->rc = ts_model_load(o->model_draft, &dlo, &l->draft, &l->err);
    }
    if (l->rc == 0) {
        /* new prompts are evaluated SERVER_STEP_PROMPT tokens a step, so the streams under way
         * keep getting tokens while a burst of requests is prefilled */
        ts_session_options so = { .n_ctx = o->n_ctx, .n_threads = o->n_threads,
                                  .n_slots = o->n_parallel > 0 ? o->n_parallel : ts_default_slots(l->m, o->n_ctx),
                                  .step_prompt_tokens = SERVER_STEP_PROMPT,
                                  .spec = o->spec, .spec_k = o->spec_k, .spec_n = o->spec_n,
                                  .spec_always = o->spec_always, .draft = l->draft };
        l->rc = ts_session_new_opts(l->m, &so, &l->s, &l->err);
    }
    char one = 1;
    ssize_t w = write(l->wake, &one, 1);
    (void)w;
    return NULL;
}

static int open_listener(const server_options *o, int *port_out, ts_error *err) {
    struct addrinfo hints = { .ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM, .ai_flags = AI_PASSIVE | AI_NUMERICSERV };
    struct addrinfo *ai = NULL;
    char port[16];
    snprintf(port, sizeof port, "%d", o->port);
    int g = getaddrinfo(o->host, port, &hints, &ai);
    if (g != 0) return ts_fail(err, "--host %s: %s", o->host, gai_strerror(g));
    int fd = -1, e = 0;
    for (struct addrinfo *a = ai; a && fd < 0; a = a->ai_next) {
        fd = socket(a->ai_family, a->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, a->ai_protocol);
        if (fd < 0) { e = errno; continue; }
        int one = 1;
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
        if (bind(fd, a->ai_addr, a->ai_addrlen) != 0 || listen(fd, 1024) != 0) { e = errno; close(fd); fd = -1; }
    }
    freeaddrinfo(ai);
    if (fd < 0) return ts_fail(err, "cannot listen on %s:%d: %s", o->host, o->port, strerror(e));
    struct sockaddr_storage sa;
    socklen_t sl = sizeof sa;
    getsockname(fd, (struct sockaddr *)&sa, &sl);
    *port_out = ntohs(sa.ss_family == AF_INET6 ? ((struct sockaddr_in6 *)&sa)->sin6_port : ((struct sockaddr_in *)&sa)->sin_port);
    return fd;
}

static bool loopback(const char *host) {
    return !strcmp(host, "127.0.0.1") || !strcmp(host, "::1") || !strcmp(host, "localhost") || !strncmp(host, "127.", 4);
}

int run_server(const server_options *o) {
    server sv = { .o = o, .listen_fd = -1 };
    ts_error err = {{0}};
    int rc = 1, port = 0, wake[2] = { -1, -1 };
    loader ld = { .o = o };
    pthread_t th;
    bool thread = false;
    struct pollfd *pfd = NULL;
    int *pfd_conn = NULL;

    /* room for the connections asked for: the descriptor limit raised to what the system allows */
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
        rl.rlim_cur = rl.rlim_max;
        setrlimit(RLIMIT_NOFILE, &rl);
        getrlimit(RLIMIT_NOFILE, &rl);
    }
    sv.cap_conns = o->max_connections;
    if (rl.rlim_cur != RLIM_INFINITY && (rlim_t)sv.cap_conns + 64 > rl.rlim_cur) {
        sv.cap_conns = rl.rlim_cur > 128 ? (int)(rl.rlim_cur - 64) : 64;
        if (!o->quiet) fprintf(stderr, "warning: --max-connections %d is more than the open-file limit allows: %d\n", o->max_connections, sv.cap_conns);
    }
    if ((sv.listen_fd = open_listener(o, &port, &err)) < 0) { fprintf(stderr, "error: %s\n", err.msg); return 1; }
    if (!loopback(o->host) && !o->api_key)
        fprintf(stderr, "warning: listening on %s without an API key: anyone who can reach this address can use the model (--api-key KEY)\n", o->host);
    sv.conns = calloc((size_t)sv.cap_conns, sizeof *sv.conns);
    pfd = calloc((size_t)sv.cap_conns + 2, sizeof *pfd);
    pfd_conn = calloc((size_t)sv.cap_conns + 2, sizeof *pfd_conn);
    if (!sv.conns || !pfd || !pfd_conn || pipe2(wake, O_CLOEXEC | O_NONBLOCK) != 0) { fprintf(stderr, "error: out of memory\n"); goto done; }
    for (int i = 0; i < sv.cap_conns; i++) sv.conns[i].fd = -1;
    /* the port first (a script waits for this line), then the model */
    printf("listening on http://%s%s%s:%d\n", strchr(o->host, ':') ? "[" : "", o->host, strchr(o->host, ':') ? "]" : "", port);
    fflush(stdout);
    ld.wake = wake[1];
    if (pthread_create(&th, NULL, load_model, &ld) != 0) { fprintf(stderr, "error: cannot start the loader thread\n"); goto done; }
    thread = true;

    bool draining = false;
    double drain_deadline = 0;
    for (;;) {
        int stop = o->stop ? *o->stop : 0;
        if (stop && !draining) {
            /* a graceful stop: no new connections or requests; queued requests answered 503; the
             * running ones finish (within the timeout), then the process exits 0 */
            draining = true;
            drain_deadline = clock_seconds() + o->timeout;
            if (!o->quiet) fprintf(stderr, "stopping: finishing %d running request%s\n", sv.n_running, sv.n_running == 1 ? "" : "s");
            close(sv.listen_fd);
            sv.listen_fd = -1;
            while (sv.queue_head) {
                job *j = sv.queue_head;
                conn *c = &sv.conns[j->conn];
                bool stream = j->x.stream;
                job_cancel(&sv, j);
                c->job = NULL;
                c->keep_alive = false;
                if (stream) c->close_after = true;   /* its stream's head is out: closed */
                else respond_error(&sv, c, 503, "the server is shutting down", NULL);
                conn_request_done(&sv, c);
            }
        }
        if (draining && (stop >= 2 || clock_seconds() > drain_deadline)) {
            for (int i = 0; i < sv.cap_conns; i++) conn_close(&sv, i);
        }
        if (draining && sv.n_running == 0) {
            bool pending = false;
            for (int i = 0; i < sv.cap_conns; i++) {
                conn *c = &sv.conns[i];
                if (c->fd < 0) continue;
                if (c->out.len > c->out_off && out_flush(c) == 0 && c->out.len > c->out_off && clock_seconds() < drain_deadline) pending = true;
                else conn_close(&sv, i);
            }
            if (!pending) break;
        }

        /* poll: the loader, the listener, every connection */
        int np = 0;
        if (!sv.loaded) { pfd[np] = (struct pollfd){ .fd = wake[0], .events = POLLIN }; pfd_conn[np++] = -2; }
        if (sv.listen_fd >= 0) { pfd[np] = (struct pollfd){ .fd = sv.listen_fd, .events = POLLIN }; pfd_conn[np++] = -1; }
        double t = clock_seconds(), next_deadline = t + 1.0;
        for (int i = 0; i < sv.cap_conns; i++) {
            conn *c = &sv.conns[i];
            if (c->fd < 0) continue;
            short ev = POLLIN;
            if (c->out.len > c->out_off) ev |= POLLOUT;
            pfd[np] = (struct pollfd){ .fd = c->fd, .events = ev };
            pfd_conn[np++] = i;
            if (!c->job && c->deadline < next_deadline) next_deadline = c->deadline;
        }
        bool busy = sv.loaded && (sv.n_running > 0 || sv.queue_head);
        int timeout = busy ? 0 : (int)((next_deadline - t) * 1000) + 1;
        if (timeout < 0) timeout = 0;
        int got = poll(pfd, (nfds_t)np, draining && !busy ? 50 : timeout);
        if (got < 0 && errno != EINTR) { fprintf(stderr, "error: poll: %s\n", strerror(errno)); goto done; }
        for (int k = 0; got > 0 && k < np; k++) {
            if (!pfd[k].revents) continue;
            if (pfd_conn[k] == -2) {
                char b;
                if (read(wake[0], &b, 1) != 1) continue;
                pthread_join(th, NULL);
                thread = false;
                if (ld.rc != 0) { fprintf(stderr, "error: %s\n", ld.err.msg); goto done; }
                sv.m = ld.m;
                sv.s = ld.s;
                ld.m = NULL;
                ld.s = NULL;
                sv.n_slots = ts_session_n_slots(sv.s);
                sv.slot_choice = calloc((size_t)sv.n_slots, sizeof *sv.slot_choice);
                sv.done = calloc((size_t)sv.n_slots, sizeof *sv.done);
                if (!sv.slot_choice || !sv.done) { fprintf(stderr, "error: out of memory\n"); goto done; }
                sv.loaded = true;
                const char *format = ts_chat_tool_format(sv.m, o->chat);
                sv.tool_format = format ? tool_format_by_name(format) : NULL;
                if (!o->quiet)
                    fprintf(stderr, "ready: %s, %d slot%s of %d tokens\n", o->model_id, sv.n_slots, sv.n_slots == 1 ? "" : "s",
                            ts_session_n_ctx(sv.s));
                continue;
            }
            if (pfd_conn[k] == -1) { accept_new(&sv); continue; }
            int i = pfd_conn[k];
            conn *c = &sv.conns[i];
            if (c->fd != pfd[k].fd) continue;   /* closed meanwhile */
            if (pfd[k].revents & (POLLIN | POLLHUP | POLLERR)) {
                if (read_input(c) != 0) {   /* gone: a running request is cancelled with it */
                    /* or it only shut its sending side after whole requests: those answered at
                     * once still are (a completion cannot be told from a client gone: cancelled) */
                    if (!c->job && c->in_len && !(pfd[k].revents & POLLERR)) {
                        parse_input(&sv, i, draining);
                        out_flush(c);
                    }
                    close_gone(&sv, i, o->quiet);
                    continue;
                }
                if (!c->job) parse_input(&sv, i, draining);
            }
            if ((pfd[k].revents & POLLOUT) && out_flush(c) != 0) { close_gone(&sv, i, o->quiet); continue; }
        }
        /* timeouts: a request not arrived in time (408), an idle connection, a reader that stalled */
        t = clock_seconds();
        for (int i = 0; i < sv.cap_conns; i++) {
            conn *c = &sv.conns[i];
            if (c->fd < 0) continue;
            if (c->out.len - c->out_off > MAX_OUT_BYTES || (c->out.len > c->out_off && t - c->last_active > o->timeout)) {
                conn_close(&sv, i);
                continue;
            }
            if (!c->job && t > c->deadline && c->out.len == c->out_off) {
                if (c->in_len) {
                    c->keep_alive = false;
                    respond_error(&sv, c, 408, "the request did not arrive in time", NULL);
                    out_flush(c);
                }
                conn_close(&sv, i);
            }
        }
        if (sv.loaded) {
            start_queued(&sv);
            if (sv.n_running > 0) step(&sv);
        }
        /* what the step wrote, sent now; connections done with close */
        for (int i = 0; i < sv.cap_conns; i++) {
            conn *c = &sv.conns[i];
            if (c->fd < 0) continue;
            if (c->out.len > c->out_off && out_flush(c) != 0) { close_gone(&sv, i, o->quiet); continue; }   /* a stream's chunk found it gone */
            if (c->close_after && c->out.len == c->out_off && !c->job) { conn_close(&sv, i); continue; }
            if (!c->job && c->in_len) parse_input(&sv, i, draining);   /* a pipelined request */
        }
    }
    rc = 0;
    if (!o->quiet) fprintf(stderr, "stopped\n");
done:
    /* a loader still reading (stopped while loading) is left to the process's exit */
    if (thread) { (void)th; ld.m = NULL; ld.s = NULL; ld.draft = NULL; }
    for (int i = 0; sv.conns && i < sv.cap_conns; i++) conn_close(&sv, i);
    while (sv.queue_head) { job *j = sv.queue_head; queue_remove(&sv, j); job_free(j); }
    if (sv.listen_fd >= 0) close(sv.listen_fd);
    if (wake[0] >= 0) { close(wake[0]); close(wake[1]); }
    ts_session_free(sv.s ? sv.s : ld.s);
    ts_model_free(sv.m ? sv.m : ld.m);
    ts_model_free(ld.draft);
    free(sv.conns);
    free(sv.slot_choice);
    free(sv.done);
    free(pfd);
    free(pfd_conn);
    json_buf_free(&sv.scratch);
    return rc;
}
