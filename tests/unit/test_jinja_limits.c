/* The render's limits against hostile templates: each one stops quickly (under 2 s), small (under
 * 128 MB), with a message naming the limit that tripped and the template line it tripped on. Each
 * template renders in a forked child, so that its peak memory (ru_maxrss, from wait4) is its own;
 * the interpreter's own count of the memory it held (jinja_usage.peak_memory) is exact and is
 * checked too. And temporaries are freed as the render goes: templates that make far more
 * short-lived values than the memory cap allows still render.
 *
 * Under AddressSanitizer (as `make test` builds it) a step costs several times as much and freed
 * memory waits in ASan's quarantine (256 MB by default), so there the step caps are a tenth of the
 * defaults (the time printed is scaled back up for information), and ru_maxrss is only printed
 * and held to a loose bound; the exact peak is checked against 128 MB either way. */
#include "check.h"
#include "template/jinja.h"
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/resource.h>
#include <sys/wait.h>

#if defined(__SANITIZE_ADDRESS__)
#define SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define SANITIZED 1
#endif
#endif
#ifndef SANITIZED
#define SANITIZED 0
#endif

#define MB (1024.0 * 1024.0)

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

typedef struct result {
    int rc;                 /* the render's, or -2 when the child died */
    double seconds;
    jinja_usage usage;
    size_t out_len;
    char text[64];          /* the start of the output */
    char msg[512];
    long rss_kb;            /* the child's ru_maxrss */
} result;

/* renders tmpl (messages: one user message) with lim in a child process */
static result render_apart(const char *tmpl, const jinja_limits *lim) {
    result res = { .rc = -2 };
    int fd[2];
    if (pipe(fd) != 0) return res;
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
        close(fd[0]);
        result c = { .rc = -1 };
        jinja_template *t;
        ts_error err = {{0}};
        if (jinja_parse(tmpl, strlen(tmpl), &t, &err) != 0) snprintf(c.msg, sizeof c.msg, "parse: %.400s", err.msg);
        else {
            json_value *vars = NULL;
            const char *vj = "{\"role\": \"user\", \"content\": \"hi\"}";
            json_parse(vj, strlen(vj), &vars, &err);
            json_value list = { .type = JSON_ARRAY, .items = vars, .n = 1 };
            jinja_var v = { "messages", &list };
            struct tm day = { .tm_year = 126, .tm_mon = 10, .tm_mday = 30 };
            char *out = NULL;
            double t0 = now();
            c.rc = jinja_render_usage(t, &v, 1, &day, lim, &out, &c.out_len, &err, &c.usage);
            c.seconds = now() - t0;
            if (c.rc == 0) snprintf(c.text, sizeof c.text, "%s", out);
            else snprintf(c.msg, sizeof c.msg, "%s", err.msg);
            free(out);
            json_free(vars);
            jinja_template_free(t);
        }
        ssize_t w = write(fd[1], &c, sizeof c);
        _exit(w == (ssize_t)sizeof c ? 0 : 1);
    }
    close(fd[1]);
    size_t got = 0;
    while (pid > 0 && got < sizeof res) {
        ssize_t k = read(fd[0], (char *)&res + got, sizeof res - got);
        if (k <= 0) break;
        got += (size_t)k;
    }
    close(fd[0]);
    if (got != sizeof res) res.rc = -2;
    int status;
    struct rusage ru = {0};
    if (pid > 0 && wait4(pid, &status, 0, &ru) == pid) res.rss_kb = ru.ru_maxrss;
    return res;
}

typedef struct hostile {
    const char *what, *tmpl;
    const char *want;       /* in the message */
    int line;               /* the message begins "line N: " */
    bool steps;             /* stopped by the step cap (a tenth of it under sanitizers) */
} hostile;

static const hostile hostiles[] = {
    { "nested loops",
      "{# two loops of 100000 #}\n{% for a in range(100000) %}\n{% for b in range(100000) %}x{% endfor %}\n{% endfor %}",
      "steps (a loop that does not end?)", 3, true },
    { "nested loops over one range, empty",
      "{% set r = range(100000) %}\n{% for i in r %}{% for j in r %}{% endfor %}{% endfor %}",
      "steps (a loop that does not end?)", 2, true },
    { "nested loops building a string each time",
      "{% for a in range(100000) %}\n{% for b in range(100000) %}{% set y = b ~ 'x' %}{% endfor %}\n{% endfor %}",
      "steps (a loop that does not end?)", 2, true },
    { "a two-way macro fork 40 deep",
      "{% macro f(d) %}\n{%- if d < 40 %}{{ f(d + 1) }}{{ f(d + 1) }}{% endif %}\n{%- endmacro %}\n{{ f(0) }}",
      "steps (a loop that does not end?)", 2, true },
    { "a range() list made in every iteration",
      "{% for i in range(100000) %}\n{% set x = range(100000) %}\n{% endfor %}",
      "steps (a loop that does not end?)", 2, true },
    { "a long join in every iteration",
      "{% for i in range(100000) %}\n{{ range(100000) | join('') | length }}\n{% endfor %}",
      "steps (a loop that does not end?)", 2, true },
    { "a 100000-item list converted to a string in every iteration",
      "{% set l = range(100000) | list %}\n{% for i in range(100000) %}{% set y = l ~ '' %}{% endfor %}",
      "steps (a loop that does not end?)", 2, true },
    { "two 100000-item lists compared in every iteration",
      "{% set l = range(100000) | list %}{% set m = range(100000) | list %}\n{% for i in range(100000) %}{% if l == m %}{% endif %}{% endfor %}",
      "steps (a loop that does not end?)", 2, true },
    { "a 100000-item list through tojson in every iteration",
      "{% set l = range(100000) | list %}\n{% for i in range(100000) %}{% if l | tojson %}{% endif %}{% endfor %}",
      "steps (a loop that does not end?)", 2, true },
    { "a string doubled 40 times (namespace)",
      "{% set ns = namespace(s='x') %}\n{% for i in range(40) %}\n{% set ns.s = ns.s ~ ns.s %}\n{% endfor %}{{ ns.s }}",
      "a string would be longer than 16777216 bytes (the cap on output)", 3, false },
    { "'x' * 10**9",
      "{{ 'x' * 10**9 }}",
      "a string would be longer than 16777216 bytes (the cap on output)", 1, false },
    { "output past the cap",
      "{% set s = 'x' * 1000000 %}\n{% for i in range(100) %}{{ s }}{% endfor %}",
      "the rendering is longer than 16777216 bytes (the cap on output)", 2, false },
    { "unbounded macro recursion",
      "{% macro f(n) %}{{ f(n + 1) }}{% endmacro %}\n\n{{ f(0) }}",
      "macro calls nest deeper than 64 (the cap on call depth)", 1, false },
    { "a loop appending to a list (namespace)",
      "{% set ns = namespace(l=[]) %}\n{% for i in range(100000) %}\n{% set ns.l = ns.l + [i] %}\n{% endfor %}{{ ns.l | length }}",
      "more than 64 MiB of values (the cap on memory)", 3, false },
    { "a list doubled 40 times (namespace)",
      "{% set ns = namespace(l=[1]) %}{% for i in range(40) %}\n{% set ns.l = ns.l + ns.l %}{% endfor %}",
      "more than 64 MiB of values (the cap on memory)", 2, false },
    { "iterating a 10 MB string",
      "{% for c in 'x' * 10000000 %}{% endfor %}",
      "more than 64 MiB of values (the cap on memory)", 1, false },
    { "[1] * 10**9",
      "{{ ([1] * 10**9) | length }}",
      "more than 64 MiB of values (the cap on memory)", 1, false },
};

static void check_hostile(const hostile *h) {
    jinja_limits lim = jinja_default_limits();
    int scale = 1;
    if (h->steps && SANITIZED) { scale = 10; lim.max_steps /= 10; }
    result res = render_apart(h->tmpl, &lim);
    char line[32];
    snprintf(line, sizeof line, "line %d: ", h->line);
    bool named = res.rc == -1 && strncmp(res.msg, line, strlen(line)) == 0 && strstr(res.msg, h->want);
    CHECK(named, "%s stops with the limit named at line %d: %s", h->what, h->line,
          res.rc == 0 ? "(it rendered)" : res.rc == -2 ? "(the child died)" : res.msg);
    if (res.rc == -2) return;
    if (scale > 1)
        printf("# %s: %.2f s for %llu steps under sanitizers (%.1f s at the default cap)\n", h->what, res.seconds,
               (unsigned long long)res.usage.steps, res.seconds * scale);
    CHECK(res.seconds < 2.0, "%s stops within 2 s (%.3f s, %llu steps)", h->what, res.seconds,
          (unsigned long long)res.usage.steps);
    CHECK(res.usage.steps <= lim.max_steps + 200000, "%s takes no more steps than the cap (%llu)", h->what,
          (unsigned long long)res.usage.steps);
    CHECK(res.usage.peak_memory < (size_t)128 << 20 && res.usage.peak_memory <= lim.max_memory,
          "%s holds under 128 MB at its peak (%.1f MB counted)", h->what, res.usage.peak_memory / MB);
    if (SANITIZED)
        CHECK(res.rss_kb < 512L * 1024, "%s: RSS %.1f MB under AddressSanitizer (its quarantine included)", h->what,
              res.rss_kb / 1024.0);
    else
        CHECK(res.rss_kb < 128L * 1024, "%s: RSS under 128 MB (%.1f MB)", h->what, res.rss_kb / 1024.0);
}

/* templates whose temporaries, all kept, would pass the memory cap: freed as they go, they render */
typedef struct churn { const char *what, *tmpl, *text; size_t max_peak; } churn;

static const churn churns[] = {
    { "a fresh 100000-item list in each of 30 iterations (70 MiB in all)",
      "{% for a in range(30) %}{% set l = range(100000) | list %}{% if loop.last %}{{ l | length }}{% endif %}{% endfor %}",
      "100000", (size_t)8 << 20 },
    { "an inner range() loop in each of 40 iterations (90 MiB of lists in all)",
      "{% for a in range(40) %}{% for b in range(100000) %}{% endfor %}{% endfor %}ok",
      "ok", (size_t)8 << 20 },
    { "a two-way macro fork 15 deep (65535 calls)",
      "{% macro f(d) %}{% if d < 15 %}{{ f(d + 1) }}{{ f(d + 1) }}{% else %}x{% endif %}{% endmacro %}{{ f(0) | length }}",
      "32768", (size_t)2 << 20 },
    { "strings built and printed 200000 times",
      "{% for i in range(200) %}{% for j in range(1000) %}{{ ('a' ~ i ~ '-' ~ j) | length > 100 }}{% endfor %}{% endfor %}",
      NULL, (size_t)20 << 20 },
    /* Jinja's scoping: a set in a loop body does not outlive its iteration, so this doubles 'x' once
       per iteration and prints the outer 'x' (as Jinja2 does) */
    { "a string 'doubled' 40 times with a plain set",
      "{% set s = 'x' %}{% for i in range(40) %}{% set s = s ~ s %}{% endfor %}{{ s }}",
      "x", (size_t)1 << 20 },
};

static void check_churn(const churn *c) {
    jinja_limits lim = jinja_default_limits();
    result res = render_apart(c->tmpl, &lim);
    bool ok = res.rc == 0 && (!c->text || strcmp(res.text, c->text) == 0);
    CHECK(ok, "%s renders: %s", c->what, res.rc == 0 ? res.text : res.rc == -2 ? "(the child died)" : res.msg);
    if (res.rc == -2) return;
    CHECK(res.usage.peak_memory <= c->max_peak, "%s: temporaries are freed as it goes (peak %.2f MB counted, %llu steps, %.3f s)",
          c->what, res.usage.peak_memory / MB, (unsigned long long)res.usage.steps, res.seconds);
}

int main(void) {
    printf("# %s build\n", SANITIZED ? "AddressSanitizer" : "plain");
    double t0 = now();
    for (size_t i = 0; i < sizeof hostiles / sizeof hostiles[0]; i++) check_hostile(&hostiles[i]);
    for (size_t i = 0; i < sizeof churns / sizeof churns[0]; i++) check_churn(&churns[i]);
    /* the defaults, as the comments in jinja.h give them */
    jinja_limits d = jinja_default_limits();
    CHECK(d.max_steps == 20000000 && d.max_depth == 64 && d.max_output == (size_t)16 << 20 && d.max_memory == (size_t)64 << 20,
          "the default limits: 20M steps, depth 64, 16 MiB of output, 64 MiB of memory");
    printf("# %.1f s in all\n", now() - t0);
    CHECK_EXIT();
}
