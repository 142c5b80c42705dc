#!/usr/bin/env python3
"""Writes tests/unit/jinja_none_vectors.jsonl: how Jinja2 treats none and undefined values in every
filter, test and method the template interpreter (src/template/) implements, for
tests/unit/test_jinja_none.c.

The first line is {"vars": V}: the variables every template renders with (messages, a JSON null
`n`, `objs`, `d`). Every other line is {"group": G, "template": T, "output": TEXT} or, when Jinja2
raises, {"group": G, "template": T, "error": true}. The expected results come from real Jinja2
configured as Hugging Face transformers configures it for chat templates (chat_template_utils:
ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True) with jinja2.ext.loopcontrols,
the default Undefined, globals raise_exception and strftime_now, and its json.dumps tojson filter).

The subjects: the literal `none`, a JSON null variable (`n`, and `tools` after
`{% set tools = none %}`, as a real template does), an undefined name (`missing`) and an undefined
attribute (`messages[0].nope`), each through every filter (alone and in the common chains), every
test, every method (on it and as its argument) and the statements and operators around them.

Left out, on purpose:
  * printing an iterator itself (`{{ x | map(...) }}`, `{{ missing | reverse }}`, `{{ none | items }}`):
    Python prints "<generator object ... at 0x7f...>", an address; every case ends such a chain
    with `| list` (or tests it) instead. The script refuses any output holding " at 0x".
  * `missing is sameas missing` and the like: object identity of Undefined instances (each lookup
    makes a new one, so it is False, while `{% set u = missing %}{{ u is sameas u }}` is True).
  * what Jinja2's constant folding changes: an expression of literals only is evaluated when the
    template compiles, and a slice there goes through the forgiving getitem, so `{{ none[0:1] }}`
    prints "" while `{% set x = none %}{{ x[0:1] }}` raises (slices of variables bypass getitem).
    Each template is also rendered with its literal none read from a variable; the script drops,
    and names, any whose result differs.
  * errors Jinja2 raises only when a generator is consumed, for a generator never consumed
    (`{% set g = none | items %}` or `none | unique` set and never used renders fine in Jinja2;
    the interpreter's filters are eager and fail at once). Consumed, both fail.
  * surplus arguments to methods that take none (`'a'.upper(none)`): that is arity checking, not
    none/undefined behaviour (the interpreter ignores surplus arguments).
  * error messages: a vector says only that Jinja2 raises; the test checks that the engine fails.
  * filters and tests the interpreter does not implement (batch, groupby, truncate, ...).

    python3 tools/gen_jinja_none_vectors.py      (Jinja2 3.1; run from anywhere)
"""
import datetime
import json
import os
import re

import jinja2
import jinja2.ext
from jinja2.sandbox import ImmutableSandboxedEnvironment

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "..", "tests", "unit", "jinja_none_vectors.jsonl")

VARS = {
    "messages": [{"role": "user", "content": "hi"}],
    "n": None,
    "objs": [{"type": "function", "a": 1}, {"a": None}, {}],
    "d": {"a": None},
}


def make_env():
    """As transformers' _compile_jinja_template (its AssistantTracker extension aside)."""
    def raise_exception(message):
        raise jinja2.exceptions.TemplateError(message)

    def tojson(x, ensure_ascii=False, indent=None, separators=None, sort_keys=False):
        return json.dumps(x, ensure_ascii=ensure_ascii, indent=indent, separators=separators, sort_keys=sort_keys)

    def strftime_now(format):
        return datetime.datetime.now().strftime(format)

    env = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True, extensions=[jinja2.ext.loopcontrols])
    env.filters["tojson"] = tojson
    env.globals["raise_exception"] = raise_exception
    env.globals["strftime_now"] = strftime_now
    return env


# the values under audit: (short name, expression)
SUBJECTS = [("none", "none"), ("missing", "missing"), ("attr", "messages[0].nope")]
ALL_SUBJECTS = SUBJECTS + [("null var", "n")]

# every filter the interpreter implements, with the arguments it is applied with; a "| list" suffix
# consumes the iterators map/select/... return
FILTERS = [
    "length", "count", "default", "d", "default('x')", "default('x', true)", "default([])", "trim", "trim('N')",
    "string", "upper", "lower", "capitalize", "title", "safe", "replace('o', '0')", "escape", "e",
    "forceescape", "join", "join(',')", "join(',', attribute='a')", "items | list", "dictsort", "sort",
    "sort(attribute='a')", "list", "first", "last", "reverse | list", "unique | list", "min", "max",
    "min(attribute='a')", "int", "int(7)", "float", "float(1.5)", "abs", "round", "round(1, 'floor')", "sum",
    "sum(attribute='a')", "tojson", "tojson(indent=2)", "indent", "indent(2, true)", "attr('a')",
    "map('upper') | list", "map(attribute='a') | list", "map(attribute='a', default=0) | list",
    "select | list", "select('none') | list", "reject | list", "reject('defined') | list",
    "selectattr('type', 'equalto', 'function') | list", "selectattr('a') | list",
    "rejectattr('a', 'none') | list", "rejectattr('a') | list",
]

# every test, with an argument where it takes one
TESTS = [
    "defined", "undefined", "none", "boolean", "false", "true", "integer", "float", "number", "string",
    "mapping", "iterable", "sequence", "callable", "escaped", "odd", "even", "divisibleby 3", "divisibleby(2)",
    "eq none", "eq 1", "equalto none", "ne none", "ne 1", "lt 1", "lessthan 1", "le 1", "gt 1",
    "greaterthan 1", "ge 1", "in [none]", "in []", "in 'None'", "in {'a': 1}", "sameas none", "sameas false",
    "lower", "upper", "filter", "test",
]

STR_METHODS = ["strip", "lstrip", "rstrip", "split", "rsplit", "splitlines", "startswith", "endswith",
               "replace", "upper", "lower", "title", "capitalize", "find", "rfind", "count", "join", "format",
               "isdigit", "isalpha", "isalnum", "isspace", "islower", "isupper", "removeprefix", "removesuffix"]
DICT_METHODS = ["get", "items", "keys", "values", "copy"]
LIST_METHODS = ["index", "count", "copy"]


def cases():
    out = []

    def add(group, tmpl):
        out.append((group, tmpl))

    # ---- every filter applied to each subject, then what it returned ----
    for f in FILTERS:
        for name, s in SUBJECTS:
            add("filter on " + name, "{{ %s | %s }}" % (s, f))
            add("filter result of " + name,
                "{%% set r = %s | %s %%}{{ r is defined }},{{ r is none }},{{ r is string }},{{ r | string | length }}"
                % (s, f))
    for f in ["length", "default('x')", "default('x', true)", "trim", "join(',')", "tojson", "first", "list",
              "selectattr('type', 'equalto', 'function') | list", "map(attribute='a') | list", "int", "string"]:
        add("filter on null var", "{{ n | %s }}" % f)

    # ---- every test on each subject, plainly and negated, and the operator spellings through select ----
    for t in TESTS:
        for name, s in SUBJECTS:
            add("test on " + name, "{{ %s is %s }}|{{ %s is not %s }}" % (s, t, s, t))
    for op in ["==", "!=", "<", "<=", ">", ">=", "equalto", "lessthan", "greaterthan", "in"]:
        for arg in ["none", "1", "[none, 1]"]:
            if op in ("in",) and arg == "1":
                continue
            add("test spellings", "{{ [none, missing, 1] | select(%r, %s) | list }}" % (op, arg))
    for name, s in SUBJECTS:
        add("test with it as argument", "{{ 1 is eq %s }}{{ none is eq %s }}{{ 1 is ne %s }}" % (s, s, s))
        add("test with it as argument", "{{ 'a' is in %s }}" % s)
        add("test with it as argument", "{{ 1 is lt %s }}" % s)
        add("test with it as argument", "{{ 3 is divisibleby %s }}" % s)
        add("test with it as argument", "{{ none is sameas %s }}" % s)
    add("test with it as argument", "{% set u = missing %}{{ u is sameas u }}")

    # ---- every method: called on the subject, and the subject as its argument ----
    for m in STR_METHODS + DICT_METHODS + LIST_METHODS:
        for name, s in SUBJECTS:
            add("method on " + name, "{{ %s.%s() }}" % (s, m))
            add("method on " + name, "{{ %s.%s is defined }}" % (s, m))
    str_arg = {
        "strip": "' xNx '.strip(%s)", "lstrip": "' x '.lstrip(%s)", "rstrip": "' x '.rstrip(%s)",
        "split": "'a b'.split(%s)", "rsplit": "'a b'.rsplit(%s)", "startswith": "'abc'.startswith(%s)",
        "endswith": "'abc'.endswith(%s)", "replace": "'abc'.replace(%s, 'x')", "find": "'abc'.find(%s)",
        "rfind": "'abc'.rfind(%s)", "count": "'abc'.count(%s)", "join": "','.join(%s)",
        "format": "'<{}>'.format(%s)", "removeprefix": "'abc'.removeprefix(%s)",
        "removesuffix": "'abc'.removesuffix(%s)",
    }
    for m, form in sorted(str_arg.items()):
        for name, s in SUBJECTS:
            add("method argument " + name, "{{ %s }}" % (form % s))
    for name, s in SUBJECTS:
        for form in ["'a b c'.split(' ', %s)", "'a b c'.rsplit(' ', %s)", "'aXbX'.replace('X', '-', %s)",
                     "'abc'.replace('b', %s)", "'a\\nb'.splitlines(%s)", "'abc'.startswith('a', %s)",
                     "'{0}{1}'.format('a', %s)", "'{x}'.format(x=%s)", "'{!r}'.format(%s)", "','.join([%s])",
                     "{'a': 1}.get(%s)", "{'a': 1}.get('z', %s)", "{'a': 1}.get('a', %s)", "d.get('a', %s)",
                     "[none, 1].index(%s)", "[1].index(%s)", "[none, 1, none].count(%s)", "[1].count(%s)",
                     "range(%s)", "range(1, %s)", "namespace(%s)", "dict(%s)", "dict(a=%s)",
                     "namespace(a=%s).a", "strftime_now(%s)", "raise_exception(%s)"]:
            add("method argument " + name, "{{ %s }}" % (form % s))
        add("method argument " + name, "{%% for i in range(2) %%}{{ loop.cycle(%s, 'b') }}{%% endfor %%}" % s)

    # ---- the subject as a filter's argument ----
    for name, s in SUBJECTS:
        for form in ["missing | default(%s)", "none | default(%s)", "'' | default(%s, true)", "'' | default('x', %s)",
                     "[1, 2] | join(%s)", "[1, 2] | join(',', attribute=%s)", "'abc' | replace(%s, 'x')",
                     "'None' | replace('N', %s)", "'aaa' | replace('a', 'b', %s)", "' x ' | trim(%s)",
                     "'x' | int(%s)", "'x' | float(%s)", "2.5 | round(%s)", "2.5 | round(0, %s)", "2.25 | round(1, %s)",
                     "[] | sum(start=%s)", "[1] | sum(start=%s)", "[1, 2] | sum(attribute=%s)",
                     "{'a': 1} | tojson(indent=%s)", "{'a': 1} | tojson(separators=%s)",
                     "{'a': 1} | tojson(sort_keys=%s)", "'\u00e9' | tojson(ensure_ascii=%s)",
                     "'a\\nb' | indent(%s)", "'a\\nb' | indent(2, %s)", "'a\\n\\nb' | indent(2, blank=%s)",
                     "'x' | attr(%s)", "[2, 1] | sort(reverse=%s)", "[2, 1] | sort(attribute=%s)",
                     "['b', 'B'] | sort(case_sensitive=%s)", "['a', 'A'] | unique(%s) | list",
                     "[1, 1] | unique(attribute=%s) | list", "[2, 1] | min(attribute=%s)", "[2, 1] | max(%s)",
                     "{'b': 1, 'a': 2} | dictsort(%s)", "{'b': 1, 'a': 2} | dictsort(by=%s)",
                     "{'b': 1, 'a': 2} | dictsort(reverse=%s)",
                     "[1, 2] | map(attribute=%s) | list", "[{}] | map(attribute='a', default=%s) | list",
                     "objs | map(attribute='a', default=%s) | list", "['a'] | map(%s) | list",
                     "['a'] | map('default', %s) | list", "[1, 0] | select(%s) | list",
                     "[1, 0] | selectattr(%s) | list", "objs | selectattr('a', 'equalto', %s) | list",
                     "objs | rejectattr('a', 'equalto', %s) | list", "[none, 1] | select('equalto', %s) | list",
                     "objs | selectattr('a', %s) | list"]:
            add("filter argument " + name, "{{ %s }}" % (form % s))

    # ---- lists and objects holding none and missing attributes ----
    for expr in ["[none, 1] | sort", "[none] | sort", "[none, none] | sort", "[none, none] | unique | list",
                 "[none, missing] | unique | list", "[missing, missing] | unique | list", "[none, 1] | min",
                 "[none] | min", "[none] | max", "[none] | first", "[none] | last", "[none, 'a'] | join",
                 "[missing, 'a'] | join(',')", "[none] | tojson", "[missing] | tojson", "{'a': missing} | tojson",
                 "{'a': none} | tojson", "{none: 1} | tojson", "[none] | length", "[none] | sum", "[none, missing, 0, 1] | select | list",
                 "[none, missing, 0, 1] | reject | list", "[none, missing, 1] | select('none') | list",
                 "[none, missing, 1] | select('defined') | list", "[none, missing, 1] | select('undefined') | list",
                 "[none, missing] | map('string') | list", "[none, missing] | map('default', 'x') | list",
                 "[none, missing] | map('length') | list", "[none] | map('length') | list",
                 "objs | map(attribute='a') | list", "objs | selectattr('a') | list", "objs | selectattr('a', 'none') | list",
                 "objs | selectattr('a', 'defined') | list", "objs | rejectattr('a', 'undefined') | list",
                 "objs | rejectattr('a', 'none') | list", "objs | selectattr('a', 'equalto', none) | list",
                 "objs | sort(attribute='a')", "objs | map(attribute='a.b') | list", "objs | join(',', attribute='a')",
                 "objs | sum(attribute='a')", "objs | unique(attribute='a') | list", "objs | min(attribute='a')",
                 "objs | map(attribute='a') | select('none') | list", "objs | map(attribute='a') | reject | list",
                 "objs | map(attribute='a') | join('/')", "objs | map(attribute='a') | unique | list",
                 "objs | map(attribute='a') | list | length", "objs | map(attribute='a') | list | tojson",
                 "objs | map(attribute='type') | select('defined') | list", "objs | map(attribute='type') | list | last",
                 "d.a", "d['a']", "d.a is none", "d.b is defined", "d.get('b')", "d.get('a', 1)", "d.a | default('x')",
                 "d.b | default('x')", "d | dictsort", "d | items | list", "d | tojson", "d.values() | list",
                 "d.a ~ d.b", "[none, missing]", "(none, missing)", "{'a': none, 'b': missing}", "{missing: 1}",
                 "{none: 1}", "[none, missing] | string", "[none] | list", "(none,) | list"]:
        add("containers", "{{ %s }}" % expr)

    # ---- slices: bounds none or undefined, and slicing the subjects held in variables ----
    for tmpl in ["{% set s = 'abc' %}{{ s[none:2] }}|{{ s[:none] }}|{{ s[::none] }}|{{ s[none:none:none] }}",
                 "{% set l = [1, 2, 3] %}{{ l[none:] }}|{{ l[:none] }}|{{ l[::none] }}",
                 "{% set s = 'abc' %}{{ s[missing:] }}", "{% set s = 'abc' %}{{ s[:messages[0].nope] }}",
                 "{% set l = [1, 2] %}{{ l[::missing] }}", "{% set x = none %}{{ x[1:] }}", "{{ missing[1:] }}",
                 "{{ messages[0].nope[:1] }}", "{{ n[::-1] }}", "{% set x = none %}{{ x[0] }}|{{ x['a'] }}|{{ x.a }}"]:
        add("slices", tmpl)

    # ---- the chains templates use, on each subject ----
    for name, s in ALL_SUBJECTS:
        g = "chain on " + name
        for expr in ["%s | default([])", "%s | default([]) | length", "%s | default([], true) | length",
                     "%s | selectattr('type', 'equalto', 'function') | list",
                     "%s | selectattr('type', 'equalto', 'function') | list | length",
                     "%s | rejectattr('type', 'equalto', 'function') | list", "%s | map(attribute='a') | list",
                     "%s | map(attribute='function') | map(attribute='name') | join(', ')",
                     "%s | map('tojson') | join('\\n')", "%s | length", "%s | join(',')", "%s | tojson", "%s | trim",
                     "%s | first", "%s | last", "%s | list", "%s | string", "%s | string | length", "%s | lower",
                     "%s | trim | length", "%s | tojson(indent=4)", "(%s or []) | length", "(%s or []) | tojson",
                     "%s is defined", "%s is none", "%s is not none", "%s is string", "%s is iterable",
                     "%s is mapping", "%s is sequence", "%s is defined and %s is not none", "%s ~ 'a'",
                     "'a' ~ %s", "%s ~ %s", "%s + 1", "1 + %s", "%s + 'a'", "%s * 2", "'a' * %s", "%s - 1",
                     "%s / 2", "%s // 2", "%s %% 2", "%s ** 2", "-%s", "+%s", "not %s", "%s and 1", "%s or 1",
                     "1 and %s", "0 or %s", "%s == none", "%s != none", "%s == %s", "%s == ''", "%s == 0",
                     "%s == false", "%s == []", "%s < 1", "%s > 'a'", "%s in [none]", "%s in []", "%s in 'abc'",
                     "%s not in ['a']", "'a' in %s", "'a' not in %s", "%s.get('a')", "%s.a", "%s['a']", "%s[0]",
                     "%s.a.b", "%s['a']['b']", "%s[0:1]", "%s[:]", "%s()", "%s.items()", "'yes' if %s else 'no'",
                     "%s if %s else 'x'", "%s if true", "%s | list if %s else 'empty'",
                     "[%s] | length", "[%s]", "(%s,)", "{'k': %s}", "{'k': %s} | length"]:
            add(g, "{{ %s }}" % expr.replace("%s", s))
        for stmt in ["{% for i in %s %}[{{ i }}]{% endfor %}", "{% for i in %s %}[{{ i }}]{% else %}empty{% endfor %}",
                     "{% for i in %s if i %}[{{ i }}]{% else %}empty{% endfor %}",
                     "{% for k, v in %s %}{{ k }}{% else %}empty{% endfor %}",
                     "{% for k, v in %s.items() %}{{ k }}{% endfor %}",
                     "{% for t in %s or [] %}{{ t }}{% else %}no tools{% endfor %}",
                     "{% for t in %s | default([]) %}{{ t }}{% endfor %}ok",
                     "{% if %s %}yes{% else %}no{% endif %}", "{% if not %s %}yes{% endif %}",
                     "{% if %s is not none %}set{% else %}unset{% endif %}",
                     "{% if %s is defined and %s %}set{% elif %s is none %}null{% else %}other{% endif %}",
                     "{% if %s and %s | length > 0 %}tools{% endif %}.",
                     "{% if %s | length > 0 %}tools{% endif %}.",
                     "{% set x = %s %}{{ x }}|{{ x is defined }}|{{ x is none }}",
                     "{% set a, b = %s %}{{ a }}", "{% set ns = namespace(v=%s) %}{{ ns.v }}|{{ ns.v is none }}",
                     "{% set ns = namespace(l=[]) %}{% set ns.l = ns.l + %s %}{{ ns.l }}",
                     "{% macro m(x) %}[{{ x }}|{{ x is defined }}|{{ x is none }}]{% endmacro %}{{ m(%s) }}",
                     "{% macro m(x=%s) %}[{{ x }}]{% endmacro %}{{ m() }}",
                     "{% set s %}{{ %s }}{% endset %}[{{ s }}]{{ s | length }}",
                     "{% filter upper %}{{ %s }}x{% endfilter %}", "{{ %s }}{{ %s }}|{{ %s | e }}"]:
            add(g, stmt.replace("%s", s))

    # ---- the template that raised the issue ----
    g = "tools set to none"
    for body in ["{% if tools %}T{% else %}F{% endif %}", "{{ tools | selectattr('type', 'equalto', 'function') | list }}",
                 "{{ tools | selectattr('type', 'equalto', 'function') | list | length }}",
                 "{% set fns = tools | selectattr('type', 'equalto', 'function') | list %}{{ fns | length }}",
                 "{% for t in tools | selectattr('type', 'equalto', 'function') %}{{ t }}{% else %}no tools{% endfor %}",
                 "{{ tools | map(attribute='function') | list }}", "{{ tools | rejectattr('type', 'equalto', 'function') | list }}",
                 "{{ tools is none }}{{ tools is defined }}{{ tools is iterable }}",
                 "{{ (tools or []) | length }}", "{{ tools | default([], true) | tojson }}", "{{ tools | tojson }}",
                 "{% if tools is not none and tools | length %}T{% endif %}.",
                 "{{ tools | length }}", "{% for t in tools %}x{% endfor %}",
                 "{{ tools | select | list }}{{ tools | reject | list }}{{ tools | map('upper') | list }}",
                 "{{ tools | selectattr('type') | list }}{{ tools | rejectattr('type') | list }}",
                 "{{ tools | selectattr() | list }}", "{{ tools | map() | list }}"]:
        add(g, "{% set tools = none %}" + body)
    for falsy in ["''", "0", "false", "[]", "{}"]:
        add(g, "{{ %s | selectattr('type', 'equalto', 'function') | list }}{{ %s | map('upper') | list }}"
               "{{ %s | select | list }}{{ %s | selectattr() | list }}" % (falsy, falsy, falsy, falsy))
    add(g, "{{ [1] | selectattr() | list }}")
    add(g, "{{ [1] | map() | list }}")
    return out


def render(env, tmpl, extra=None):
    """Jinja2's text, or None when it raises (any error: the engine must fail too)."""
    try:
        return env.from_string(tmpl).render(**VARS, **(extra or {}))
    except Exception:
        return None


def unfolded(tmpl):
    """tmpl with the literal none (not a quoted name, not the `is none` test) read from a variable"""
    return re.sub(r"(?<![\w'])(?<!is )(?<!not )none(?![\w'])", "none_var_", tmpl)


def main():
    env = make_env()
    seen = set()
    lines = [json.dumps({"vars": VARS}, ensure_ascii=False)]
    for group, tmpl in cases():
        if tmpl in seen:
            continue
        seen.add(tmpl)
        text = render(env, tmpl)
        if text != render(env, unfolded(tmpl), {"none_var_": None}):
            print("left out (constant folding changes it): %s" % tmpl)
            continue
        rec = {"group": group, "template": tmpl}
        if text is None:
            rec["error"] = True
        else:
            if " at 0x" in text:
                raise SystemExit("an address in the output of %r: %r" % (tmpl, text))
            rec["output"] = text
        lines.append(json.dumps(rec, ensure_ascii=False))
    with open(OUT, "w", encoding="utf-8") as f:
        f.write("\n".join(lines) + "\n")
    print("%d vectors -> %s" % (len(lines) - 1, os.path.relpath(OUT)))


if __name__ == "__main__":
    main()
