#!/usr/bin/env bash
# Chat templates through `run --chat-template FILE --render CONVERSATION.json`: lines of the
# fixtures' renderings (chat-templates/all/renderings-all.jsonl: 50 real templates, 936 renderings
# with and without tools; chat-templates/renderings.jsonl: 62 more, three templates read from
# tokenizer_config.json files) must come out byte for byte as Jinja2 rendered them: every line of
# both files (each template's first line also through the sanitized build). Then the interpreter's errors as a user sees
# them: a template that raises, undefined values that Jinja tolerates and those it rejects,
# syntax errors, the sandbox's limits, and the options.
source "$(dirname "$0")/lib.sh"
CT="$FIX/chat-templates"

python3 - "$FIX" "$TMP" "$RUN_OPT" "$RUN_SAN" <<'PY'
import json, os, subprocess, sys, collections
fix, tmp, run_opt, run_san = sys.argv[1:5]
ct = os.path.join(fix, "chat-templates")
older = {   # renderings.jsonl: where each template lives
    "qwen3": "chat-templates/qwen3.jinja", "gemma-2": "chat-templates/gemma-2.jinja",
    "gemma-4": "chat-templates/gemma-4.jinja", "llama-3.2": "chat-templates/llama-3.2.jinja",
    "smollm3": "chat-templates/smollm3.jinja",
    "gemma3": "tokenizers/hf/gemma3/tokenizer_config.json",
    "qwen3-tokenizer-config": "tokenizers/hf/qwen3/tokenizer_config.json",
    "llama-2": "qa-llama/hf/tokenizer_config.json",
}
sets = [("renderings-all.jsonl", os.path.join(ct, "all", "renderings-all.jsonl"), lambda n: os.path.join(ct, "all", n + ".jinja")),
        ("renderings.jsonl", os.path.join(ct, "renderings.jsonl"), lambda n: os.path.join(fix, older[n]))]
sanitized = set()
for label, path, where in sets:
    per = collections.OrderedDict()
    total = exact = 0
    for i, line in enumerate(open(path, encoding="utf-8")):
        d = json.loads(line)
        conv = {k: d[k] for k in ("messages", "add_generation_prompt", "bos_token", "eos_token", "tools") if k in d}
        cpath = os.path.join(tmp, "conv.json")
        with open(cpath, "w", encoding="utf-8") as f:
            json.dump(conv, f, ensure_ascii=False)
        # the first template also goes through the sanitizer build (the unit test runs every
        # line through the sanitized library)
        runs = [run_opt] + ([run_san] if not sanitized else [])
        sanitized.add((label, d["template"]))
        same = True
        for run in runs:
            p = subprocess.run([run, "--chat-template", where(d["template"]), "--render", cpath, "--date", "2026-11-30"],
                               capture_output=True)
            if p.returncode != 0 or p.stdout != d["text"].encode("utf-8") or p.stderr:
                same = False
                print("# %s line %d (%s / %s / add_generation_prompt=%s) via %s: exit %d, %s" % (
                    label, i + 1, d["template"], d["conversation"], d["add_generation_prompt"], os.path.basename(os.path.dirname(run)) or run,
                    p.returncode, p.stderr.decode(errors="replace").strip()[:300] or "text differs"))
        t = per.setdefault(d["template"], [0, 0])
        t[0] += 1; t[1] += same; total += 1; exact += same
    for name, (n, k) in per.items():
        print(("ok" if n == k else "not ok") + " - %s: %s %d/%d renderings byte for byte" % (label, name, k, n))
    print(("ok" if total == exact and total > 0 else "not ok") + " - %s: %d/%d lines tried rendered byte for byte through --render" % (label, exact, total))
PY

# ---- errors as a user sees them ----
conv="$TMP/c.json"
printf '{"messages": [{"role": "system", "content": "S"}, {"role": "user", "content": "Hi"}], "add_generation_prompt": true, "bos_token": "<bos>", "eos_token": "<eos>"}' >"$conv"

# run TEMPLATE_TEXT: renders $conv with it; stdout in $TMP/out, stderr in $TMP/err, exit status in $rc
render() {
    printf '%s' "$1" >"$TMP/t.jinja"
    "$RUN_SAN" --chat-template "$TMP/t.jinja" --render "$conv" "${@:2}" >"$TMP/out" 2>"$TMP/err"
    rc=$?
}
one_error() {   # one error line holding $1, exit 1, nothing on stdout
    [ "$rc" -eq 1 ] && [ ! -s "$TMP/out" ] && [ "$(wc -l <"$TMP/err")" -eq 1 ] && grep -qF -- "$1" "$TMP/err"
}

"$RUN_SAN" --chat-template "$CT/gemma-2.jinja" --render "$conv" >"$TMP/out" 2>"$TMP/err"; rc=$?
check "a template that raises (gemma-2 on a system turn) gives its message as the error: $(cat "$TMP/err")" \
    one_error "System role not supported"
render '{{ raise_exception("Only user and assistant roles are supported!") }}'
check "raise_exception(msg): the message, one line, exit 1" one_error "Only user and assistant roles are supported!"

render '[{{ nothing }}|{{ nothing is defined }}|{% if nothing %}x{% endif %}|{{ nothing | default("d") }}|{{ messages[0].nope is defined }}|{% for m in nothing %}x{% endfor %}|{{ nothing | length }}|{{ messages[0].nope }}]'
check "undefined values Jinja tolerates: printed empty, false, default(), defined tests, empty loop, length 0" \
    bash -c "[ $rc -eq 0 ] && [ \"\$(cat '$TMP/out')\" = '[|False||d|False||0|]' ]"
render '{{ nothing.attr }}'
check "attribute of an undefined value is an error: $(cat "$TMP/err")" one_error "'nothing' is undefined"
render '{{ messages[0].nope.deeper }}'
check "attribute of a missing attribute is an error: $(cat "$TMP/err")" one_error "'dict object' has no attribute 'nope'"
render '{{ nothing() }}'
check "calling an undefined value is an error" one_error "'nothing' is undefined"
render '{{ nothing + 1 }}'
check "arithmetic on an undefined value is an error" one_error "'nothing' is undefined"
render '{% if true %}unclosed'
check "a syntax error names the line: $(cat "$TMP/err")" one_error "line 1: unexpected end of template: expected 'endif'"
render $'line one\n{{ messages | nosuchfilter }}'
check "an unknown filter names the line: $(cat "$TMP/err")" one_error "line 2: No filter named 'nosuchfilter'."
render '{% include "other.jinja" %}'
check "include is refused (a template reaches no files)" one_error "cannot load other templates"

# limits: each ends with a clear error, quickly
t0=$SECONDS
printf '%s' '{% set r = range(100000) %}{% for i in r %}{% for j in r %}{% endfor %}{% endfor %}' >"$TMP/t.jinja"
"$RUN_OPT" --chat-template "$TMP/t.jinja" --render "$conv" >"$TMP/out" 2>"$TMP/err"; rc=$?
check "an endless template stops at the step limit: $(cat "$TMP/err") ($((SECONDS - t0)) s)" one_error "steps"
render '{% macro f(n) %}{{ f(n + 1) }}{% endmacro %}{{ f(0) }}'
check "unbounded macro recursion stops: $(cat "$TMP/err")" one_error "macro calls nest deeper than"
render '{% set s = "x" * 1000000 %}{% for i in range(100) %}{{ s }}{% endfor %}'
check "output past the limit stops: $(cat "$TMP/err")" one_error "the rendering is longer than"
render '{% for i in range(1000000) %}{% endfor %}'
check "range() is bounded as in Jinja's sandbox" one_error "Range too big"
render "$(printf '{{ %.0s(' {1..300})1$(printf ')%.0s' {1..300}) }}"
check "deep nesting in an expression is refused at parse time: $(cat "$TMP/err")" one_error "too deeply"

# options
render '{{ enable_thinking }}|{{ strftime_now("%Y-%m-%d %A") }}|{{ tools | length }}' --chat-template-kwargs '{"enable_thinking": false}' --date 2024-02-29
check "--chat-template-kwargs and --date reach the template" bash -c "[ $rc -eq 0 ] && [ \"\$(cat '$TMP/out')\" = 'False|2024-02-29 Thursday|0' ]"
printf '[{"type": "function", "function": {"name": "f"}}]' >"$TMP/tools.json"
render '{{ tools[0].function.name }} {{ tools | tojson }}' --tools "$TMP/tools.json"
check "--tools gives the template its tools" bash -c "[ $rc -eq 0 ] && [ \"\$(cat '$TMP/out')\" = 'f [{\"type\": \"function\", \"function\": {\"name\": \"f\"}}]' ]"
render 'x' --date 2026-02-30
check "--date refuses a day that does not exist" bash -c "[ $rc -eq 1 ] && grep -q 'YYYY-MM-DD' '$TMP/err'"
render 'x' --chat-template-kwargs '[1]'
check "--chat-template-kwargs refuses a non-object" bash -c "[ $rc -eq 1 ] && grep -q 'JSON object' '$TMP/err'"
"$RUN_SAN" --render "$conv" >"$TMP/out" 2>"$TMP/err"; rc=$?
check "--render without MODEL or --chat-template is refused" one_error "--render needs a MODEL or --chat-template"
"$RUN_SAN" "$FIX/qa-llama/hf" --render "$conv" >"$TMP/out" 2>"$TMP/err"; rc=$?
check "--render with a MODEL uses its template and BOS text" bash -c "[ $rc -eq 0 ] && [ \"\$(cat '$TMP/out')\" = '<s>[INST] <<SYS>>
S
<</SYS>>

Hi [/INST]' ]"

# ---- the prompt paths (one-shot, --batch) render through the interpreter, with the options ----
Q="$FIX/qa-llama"
SYS="You are a helpful assistant. Answer briefly."
ASK="Facts: The owner of the newspaper Rowan is Cedric Yeboah. Name the owner of Rowan."
"$RUN_SAN" "$Q/qa-llama-q8_0.gguf" --render "$conv" >"$TMP/out" 2>"$TMP/err"; rc=$?
check "--render with a GGUF model uses tokenizer.chat_template" bash -c "[ $rc -eq 0 ] && grep -q '^<s>\[INST\] <<SYS>>' '$TMP/out'"
"$RUN_OPT" "$Q/hf" --system "$SYS" "$ASK" -n 24 -t 1 >"$TMP/a1" 2>"$TMP/e1"
"$RUN_OPT" "$Q/hf" --system "$SYS" "$ASK" -n 24 -t 1 --chat-template "$Q/hf/tokenizer_config.json" >"$TMP/a2" 2>"$TMP/e2"
check "qa-llama answers through its own template (Cedric Yeboah), the same with it given by --chat-template" \
    bash -c "grep -qx ' Cedric Yeboah' '$TMP/a1' && cmp -s '$TMP/a1' '$TMP/a2' && grep -q 'prompt: 56 tokens' '$TMP/e1' && grep -q 'prompt: 56 tokens' '$TMP/e2'"
printf '%s' '{% if stop_here %}{{ raise_exception("stopped: " ~ tools[0].function.name) }}{% endif %}{{ messages[-1].content }}' >"$TMP/t.jinja"
"$RUN_SAN" "$Q/hf" "$ASK" -n 4 --chat-template "$TMP/t.jinja" --chat-template-kwargs '{"stop_here": true}' --tools "$TMP/tools.json" >"$TMP/out" 2>"$TMP/err"; rc=$?
check "one-shot prompt: --chat-template, --chat-template-kwargs and --tools reach the template ($(cat "$TMP/err"))" \
    bash -c "[ $rc -eq 1 ] && [ \"\$(wc -l <'$TMP/err')\" -eq 1 ] && grep -q 'stopped: f' '$TMP/err'"
printf '{"id": 1, "messages": [{"role": "user", "content": "Hi"}]}\n{"id": 2, "prompt": "Hi"}\n' >"$TMP/b.jsonl"
"$RUN_SAN" "$Q/hf" --batch "$TMP/b.jsonl" -n 2 --quiet --chat-template "$TMP/t.jinja" --chat-template-kwargs '{"stop_here": true}' --tools "$TMP/tools.json" >"$TMP/out" 2>"$TMP/err"; rc=$?
check "--batch: the options reach every line's template (each line's error holds the template's message)" \
    bash -c "[ $rc -eq 2 ] && [ \"\$(grep -c '\"error\": \"chat template: stopped: f\"' '$TMP/out')\" -eq 2 ]"
"$RUN_SAN" "$Q/hf" --batch "$TMP/b.jsonl" -n 2 --quiet --chat-template "$TMP/t.jinja" >"$TMP/out" 2>"$TMP/err"; rc=$?
check "--batch with a custom template answers every line" bash -c "[ $rc -eq 0 ] && [ \"\$(grep -c '\"answer\"' '$TMP/out')\" -eq 2 ]"

# a model whose template does not parse: a warning, and the prompt goes as plain text
mkdir -p "$TMP/broken"
for f in "$Q"/hf/*; do [ "$(basename "$f")" = tokenizer_config.json ] || ln -s "$f" "$TMP/broken/"; done
python3 -c "
import json, sys
c = json.load(open(sys.argv[1])); c['chat_template'] = '{% if messages %}never closed'
json.dump(c, open(sys.argv[2], 'w'))" "$Q/hf/tokenizer_config.json" "$TMP/broken/tokenizer_config.json"
"$RUN_SAN" "$TMP/broken" "Hi" -n 2 >"$TMP/out" 2>"$TMP/err"; rc=$?
check "a template that does not parse: warning, prompt sent as plain text ($(head -1 "$TMP/err"))" \
    bash -c "[ $rc -eq 0 ] && grep -q 'warning: .*the chat template does not parse; sending the prompt as plain text' '$TMP/err'"
"$RUN_SAN" "$TMP/broken" --render "$conv" >"$TMP/out" 2>"$TMP/err"; rc=$?
check "--render shows why that template does not parse" one_error "expected 'endif'"
