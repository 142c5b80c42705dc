#!/usr/bin/env bash
# Answers in a shape: --grammar, --json-schema, --json and the batch lines' response_format /
# json_schema / grammar. Every sampled answer (200+ across three vocabularies, seeds and temperatures
# up to 1.5) is checked by an independent judge: JSON answers are parsed by Python and validated
# against their schema with the jsonschema package; GBNF answers are matched against a regular
# expression written by hand for the same language. A grammar that allows everything leaves greedy
# and sampled answers exactly as they are without one. Bad grammars and schemas are refused by name.
. "$(dirname "$0")/lib.sh"
RUN=$RUN_OPT
STORIES="$FIX/stories260K/stories260K.gguf"
QA="$FIX/qa-llama/qa-llama-q8_0.gguf"
QWEN="$FIX/qwen3-tiny/model-q8_0.gguf"
have_jsonschema=1
python3 -c 'import jsonschema' 2>/dev/null || { have_jsonschema=0; echo "# python3 jsonschema is not installed (.ci/run installs python3-jsonschema): schema validation skipped"; }

# --- GBNF from the command line: answers match the hand-written regex of the same language
cat >"$TMP/list.gbnf" <<'EOF'
# a bracketed list of lower-case words or numbers
root ::= "[" item ("," " "? item){0,4} "]"
item ::= [a-z]{1,8} | "-"? [0-9]{1,3}
EOF
bad=0
for seed in 1 2 3 4 5 6; do
    out=$("$RUN" "$STORIES" "Once upon a time" --grammar "$TMP/list.gbnf" -n 300 --temp 1.2 --seed "$seed" --no-display-prompt --quiet 2>"$TMP/e.txt")
    python3 -c 'import re, sys; sys.exit(0 if re.fullmatch(r"\[([a-z]{1,8}|-?[0-9]{1,3})(, ?([a-z]{1,8}|-?[0-9]{1,3})){0,4}\]", sys.argv[1]) else 1)' "$out" ||
        { bad=$((bad + 1)); echo "# seed $seed: '$out' $(cat "$TMP/e.txt")"; }
done
check "--grammar: 6 sampled answers are sentences of the grammar (regex judge)" [ "$bad" -eq 0 ]

# --json: any JSON value. Each answer is JSON (Python's json.loads), or, where the token limit cut it
# short, a beginning of JSON (tests/tools/json_prefix.py, a recognizer written from RFC 8259)
kinds=""
for seed in 1 2 3 4 5 6; do
    out=$("$RUN" "$QA" "Who is the director of Aster?" --json -n 200 --temp 0.9 --seed "$seed" --no-display-prompt --quiet 2>/dev/null)
    kinds="$kinds $(python3 "$(dirname "$0")/../tools/json_prefix.py" "$out")"
done
echo "# --json answers: $kinds"
check "--json: 6 sampled answers are JSON or (cut by -n) its beginning, at least one whole" \
    bash -c "case '$kinds' in *invalid*) exit 1;; *complete*) exit 0;; *) exit 1;; esac"

# --json-schema inline and from a file; the answer ends with the value (nothing after it)
SCHEMA='{"type":"object","properties":{"name":{"type":"string","maxLength":12},"age":{"type":"integer","minimum":0,"maximum":120}},"required":["name","age"],"additionalProperties":false}'
echo "$SCHEMA" >"$TMP/person.json"
out1=$("$RUN" "$STORIES" "Once upon a time" --json-schema "$SCHEMA" -n 200 --temp 1.0 --seed 7 --no-display-prompt --quiet 2>/dev/null)
out2=$("$RUN" "$STORIES" "Once upon a time" --json-schema "$TMP/person.json" -n 200 --temp 1.0 --seed 7 --no-display-prompt --quiet 2>/dev/null)
check "--json-schema: inline and from a file give the same answer" [ -n "$out1" ] && [ "$out1" = "$out2" ]
if [ "$have_jsonschema" = 1 ]; then
    check "--json-schema: the answer validates (jsonschema) and ends with the object" python3 -c '
import json, sys, jsonschema
v = json.loads(sys.argv[1]); jsonschema.validate(v, json.loads(sys.argv[2]))
assert sys.argv[1].endswith("}")' "$out1" "$SCHEMA"
fi

# --- a grammar that allows everything changes nothing: greedy and sampled answers are the plain ones
echo 'root ::= [^\x00]*' >"$TMP/all.gbnf"
same=1
for args in "--temp 0" "--temp 0.8 --seed 3" "--temp 1.5 --seed 11 --top-k 0"; do
    for model in "$STORIES" "$QA"; do
        # shellcheck disable=SC2086
        a=$("$RUN" "$model" "Once upon a time" -n 48 $args --quiet 2>&1)
        # shellcheck disable=SC2086
        b=$("$RUN" "$model" "Once upon a time" -n 48 $args --grammar "$TMP/all.gbnf" --quiet 2>&1)
        [ "$a" = "$b" ] || { same=0; echo "# $model $args: '$a' vs '$b'"; }
    done
done
check "a grammar allowing every text leaves greedy, sampled and top-k-off answers unchanged (2 models)" [ "$same" = 1 ]

# --- 216 sampled batch answers with response_format on three models (stories260K's and qwen3-tiny's
# 512-piece vocabularies, qa-llama's 32k), validated one by one
if [ "$have_jsonschema" = 1 ]; then
    python3 - "$TMP" <<'EOF'
import json, sys, os
tmp = sys.argv[1]
schemas = {
  "person": {"type": "object", "properties": {"name": {"type": "string", "minLength": 1, "maxLength": 16},
             "age": {"type": "integer", "minimum": 0, "maximum": 120},
             "role": {"enum": ["director", "actor", "writer"]}}, "required": ["name", "age", "role"], "additionalProperties": False},
  "invoice": {"type": "object", "properties": {"date": {"type": "string", "format": "date"},
              "amount": {"type": "integer", "minimum": -50, "maximum": 5000}, "paid": {"type": "boolean"},
              "id": {"type": "string", "format": "uuid"}}, "required": ["date", "amount", "paid", "id"], "additionalProperties": False},
  "list": {"type": "array", "items": {"anyOf": [{"type": "integer", "minimum": 0, "maximum": 99}, {"type": "null"},
           {"type": "string", "pattern": "^[a-z]{1,5}$"}]}, "minItems": 1, "maxItems": 4},
  "tree": {"$defs": {"node": {"type": "object", "properties": {"v": {"type": "integer", "minimum": 0, "maximum": 9},
           "kids": {"type": "array", "items": {"$ref": "#/$defs/node"}, "maxItems": 2}}, "required": ["v", "kids"],
           "additionalProperties": False}}, "$ref": "#/$defs/node"},
  "status": {"oneOf": [{"const": "ok"}, {"type": "object", "properties": {"error": {"type": "string", "maxLength": 10}},
             "required": ["error"], "additionalProperties": False}]},
  "when": {"type": "object", "properties": {"at": {"type": "string", "format": "date-time"}, "code": {"type": "string", "pattern": "^[A-Z]{2}-[0-9]{3}$"}},
           "required": ["at", "code"], "additionalProperties": False},
}
json.dump(schemas, open(os.path.join(tmp, "schemas.json"), "w"))
temps = [0.3, 0.7, 1.0, 1.5]
with open(os.path.join(tmp, "lines.jsonl"), "w") as f:
    for name, s in schemas.items():
        for t in temps:
            for seed in range(3):
                f.write(json.dumps({"id": f"{name}/{t}/{seed}", "prompt": "Once upon a time", "temperature": t, "seed": seed,
                                    "max_tokens": 400, "response_format": {"type": "json_schema", "json_schema": {"name": name, "schema": s}}}) + "\n")
EOF
    for model in "$STORIES" "$QA" "$QWEN"; do
        name=$(basename "$(dirname "$model")")
        "$RUN" "$model" --batch "$TMP/lines.jsonl" -np 8 --quiet >"$TMP/out-$name.jsonl" 2>"$TMP/e-$name.txt"
        rc=$?
        check "batch response_format on $name: 72 sampled answers (6 schemas x 4 temperatures x 3 seeds) are complete and validate (jsonschema)" \
            python3 - "$TMP/out-$name.jsonl" "$TMP/schemas.json" "$rc" <<'EOF'
import json, sys, jsonschema
schemas = json.load(open(sys.argv[2]))
fc = jsonschema.Draft202012Validator.FORMAT_CHECKER
bad = 0; n = 0
for line in open(sys.argv[1]):
    r = json.loads(line); n += 1
    if "error" in r or r["finish_reason"] != "stop":
        print("#", r.get("id"), r.get("error") or r["finish_reason"], repr(r.get("answer", ""))[:120]); bad += 1; continue
    try:
        jsonschema.validate(json.loads(r["answer"]), schemas[r["id"].split("/")[0]], format_checker=fc)
    except Exception as e:
        print("#", r["id"], repr(r["answer"])[:160], str(e).splitlines()[0][:160]); bad += 1
sys.exit(0 if bad == 0 and n == 72 and sys.argv[3] == "0" else 1)
EOF
    done
fi

# per-line GBNF ("grammar") and json_object in a batch, and the same line with --parallel 1 and 8
python3 - "$TMP" <<'EOF'
import json, sys, os
with open(os.path.join(sys.argv[1], "g.jsonl"), "w") as f:
    for seed in range(8):
        f.write(json.dumps({"id": f"g{seed}", "prompt": "Once upon a time", "temperature": 1.0, "seed": seed, "max_tokens": 200,
                            "grammar": "root ::= (\"yes\" | \"no\") \", because \" [a-z ]{1,20} \".\""}) + "\n")
        f.write(json.dumps({"id": f"o{seed}", "prompt": "Once upon a time", "temperature": 0.8, "seed": seed, "max_tokens": 300,
                            "response_format": {"type": "json_object"}}) + "\n")
EOF
"$RUN" "$STORIES" --batch "$TMP/g.jsonl" -np 8 --quiet >"$TMP/g8.jsonl" 2>/dev/null
"$RUN" "$STORIES" --batch "$TMP/g.jsonl" -np 1 --quiet >"$TMP/g1.jsonl" 2>/dev/null
check "batch \"grammar\" and json_object lines: answers match (regex judge, json.loads -> dict)" python3 - "$TMP/g8.jsonl" <<'EOF'
import json, re, sys
ok = True
for line in open(sys.argv[1]):
    r = json.loads(line)
    a = r.get("answer")
    if r["id"].startswith("g"): good = a is not None and re.fullmatch(r"(yes|no), because [a-z ]{1,20}\.", a)
    else:
        try: good = r["finish_reason"] != "stop" or isinstance(json.loads(a), dict)
        except Exception: good = False
    if not good: print("#", r); ok = False
sys.exit(0 if ok else 1)
EOF
check "batch: constrained answers are the same with --parallel 8 and 1" \
    bash -c "diff <(strip_ms() { python3 -c \"import json,sys
for l in open(sys.argv[1]):
    o=json.loads(l); o.pop('ms',None); o.pop('line',None); print(json.dumps(o, sort_keys=True))\" \"\$1\" | sort; }; strip_ms '$TMP/g8.jsonl') <(strip_ms() { python3 -c \"import json,sys
for l in open(sys.argv[1]):
    o=json.loads(l); o.pop('ms',None); o.pop('line',None); print(json.dumps(o, sort_keys=True))\" \"\$1\" | sort; }; strip_ms '$TMP/g1.jsonl')"

# --- refusals: one line naming the file or option and the problem
printf 'root ::= root "x" | "y"\n' >"$TMP/left.gbnf"
expect_error "--grammar: left recursion is refused by name" "left.gbnf: grammar: left recursion in rule 'root'" "$RUN" "$STORIES" "Hi" --grammar "$TMP/left.gbnf"
printf 'root ::= item\n' >"$TMP/undef.gbnf"
expect_error "--grammar: an undefined rule is named with its line" "undef.gbnf: grammar: line 1: rule 'item' is used but not defined" "$RUN" "$STORIES" "Hi" --grammar "$TMP/undef.gbnf"
expect_error "--grammar: a missing file is named" "nope.gbnf" "$RUN" "$STORIES" "Hi" --grammar "$TMP/nope.gbnf"
expect_error "--json-schema: an unsupported keyword is refused by name" "patternProperties" "$RUN" "$STORIES" "Hi" --json-schema '{"type":"object","patternProperties":{"^a":{}}}'
expect_error "--json-schema: malformed JSON is refused" "json-schema" "$RUN" "$STORIES" "Hi" --json-schema '{"type":'
expect_error "two shapes at once are refused" "one of --grammar, --json-schema and --json" "$RUN" "$STORIES" "Hi" --json --grammar "$TMP/list.gbnf"
printf '%s\n' '{"id":"a","prompt":"Once","response_format":{"type":"json_schema","json_schema":{"schema":{"type":"object","if":{}}}}}' \
    '{"id":"b","prompt":"Once","grammar":"root ::= root"}' '{"id":"c","prompt":"Once","response_format":{"type":"xml"}}' \
    '{"id":"d","prompt":"Once","max_tokens":20,"response_format":{"type":"json_object"}}' >"$TMP/badlines.jsonl"
"$RUN" "$STORIES" --batch "$TMP/badlines.jsonl" -np 2 --quiet >"$TMP/bad.out" 2>/dev/null
rc=$?
check "batch: a bad schema or grammar fails its line only, named (exit 2)" python3 - "$TMP/bad.out" "$rc" <<'EOF'
import json, sys
r = {o["id"]: o for o in map(json.loads, open(sys.argv[1]))}
ok = sys.argv[2] == "2" and '"if"' in r["a"]["error"] and "left recursion" in r["b"]["error"] and "xml" in r["c"]["error"] and "answer" in r["d"]
if not ok: print("#", r)
sys.exit(0 if ok else 1)
EOF
