/* A sandboxed interpreter for the subset of Jinja that chat templates use, rendering the way
 * Hugging Face transformers renders them: Jinja2 3.1 with trim_blocks, lstrip_blocks, loop
 * controls, the {% generation %} block, raise_exception(), strftime_now() and a json.dumps tojson.
 *
 * Sandboxed: a template reaches nothing but the variables it is given (no files, no environment),
 * and every render is bounded in steps, call depth, output bytes and memory, so a hostile template
 * ends with an error instead of hanging or exhausting the machine. */
#ifndef TS_TEMPLATE_JINJA_H
#define TS_TEMPLATE_JINJA_H
#include <stddef.h>
#include <stdint.h>
#include <time.h>
#include "tessera.h"
#include "io/json.h"

typedef struct jinja_limits {
    uint64_t max_steps;       /* expression/statement evaluations and loop iterations */
    int max_depth;            /* macro call nesting (and expression nesting when parsing) */
    size_t max_output;        /* bytes of rendered text (also any captured block, macro output or string) */
    size_t max_memory;        /* bytes the render may hold at once for values and output */
} jinja_limits;

/* Generous limits for real templates on long conversations (the fixtures' templates take under a
 * thousand steps and 100 KiB), small enough that a hostile template stops within a second or so:
 * 20 million steps, macro calls 64 deep, 16 MiB of output and 64 MiB of memory. */
jinja_limits jinja_default_limits(void);

/* What a render used: steps, and the most memory it held at once (values and output buffers, as
 * max_memory counts them). */
typedef struct jinja_usage { uint64_t steps; size_t peak_memory; } jinja_usage;

typedef struct jinja_template jinja_template;

/* Parses template text (UTF-8). On error: -1 and "line N: ..." in err. */
int  jinja_parse(const char *text, size_t len, jinja_template **out, ts_error *err);
void jinja_template_free(jinja_template *t);

/* A variable the template sees: name = value (JSON: null, bools, numbers, strings, arrays, objects). */
typedef struct jinja_var { const char *name; const json_value *value; } jinja_var;

/* Renders with vars[0..n_vars) as the template's variables (a later one of the same name wins).
 * today: the date strftime_now() formats (NULL: the local date now). limits NULL: the defaults.
 * On success *out is malloc'd NUL-terminated text (free with free()) of *out_len bytes. A template
 * that calls raise_exception(msg) fails with msg; other errors carry the template line. */
int  jinja_render(const jinja_template *t, const jinja_var *vars, int n_vars, const struct tm *today,
                  const jinja_limits *limits, char **out, size_t *out_len, ts_error *err);
/* jinja_render, also saying in *usage (when not NULL) what the render used, whether it failed or not. */
int  jinja_render_usage(const jinja_template *t, const jinja_var *vars, int n_vars, const struct tm *today,
                        const jinja_limits *limits, char **out, size_t *out_len, ts_error *err, jinja_usage *usage);

#endif
