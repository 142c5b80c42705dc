# `run serve MODEL` (issue 33): the OpenAI-compatible server on an ephemeral loopback port, driven
# by the official `openai` npm package (TS_NODE_MODULES: a node_modules folder holding it; .ci/run
# installs it) and by curl for the raw framing. At temperature 0 its answers equal `./run MODEL
# "same question"`, byte for byte.
cd "$(dirname "$0")/../.." || exit 1
. tests/sh/lib.sh
QA="$FIX/qa-llama/qa-llama-q8_0.gguf"
trap 'stop_server; rm -rf "$TMP"' EXIT

# the questions and ./run's answers to them (greedy, 24 tokens)
python3 - "$FIX/qa-llama/eval-dev.jsonl" >"$TMP/questions.jsonl" <<'EOF'
import json, sys
for i, l in enumerate(open(sys.argv[1])):
    if i < 6: print(l.strip())
EOF
python3 - "$TMP/questions.jsonl" "$RUN_OPT" "$QA" >"$TMP/cases.json" <<'EOF'
import json, subprocess, sys
cases = []
for l in open(sys.argv[1]):
    q = json.loads(l)
    out = subprocess.run([sys.argv[2], sys.argv[3], q["user"], "--system", q["system"], "--temp", "0", "-n", "24", "--quiet", "-t", "2"],
                         capture_output=True, check=True).stdout.decode()
    assert out.endswith("\n")
    cases.append({"system": q["system"], "user": q["user"], "expected": out[:-1]})
print(json.dumps(cases))
EOF
# and a completion without the template
"$RUN_OPT" "$QA" "Once upon" --raw -n 5 --temp 0 --quiet --no-display-prompt -t 2 >"$TMP/raw.txt"
python3 -c "import json, sys; print(json.dumps({'prompt': 'Once upon', 'expected': open(sys.argv[1]).read()[:-1]}))" "$TMP/raw.txt" >"$TMP/raw.json"

start_server main "$RUN_SAN" serve "$QA" --port 0 -t 2 -np 4 --timeout 3
check "serve --port 0 prints the port it listens on (loopback)" [ -n "$PORT" ]
check "/health answers 200 once the model is loaded" wait_ready
B="http://127.0.0.1:$PORT"

if [ -n "${TS_NODE_MODULES:-}" ] && [ -d "$TS_NODE_MODULES/openai" ] && command -v node >/dev/null; then
    mkdir -p "$TMP/client"
    cp tests/server/openai_client.mjs "$TMP/client/"
    ln -s "$TS_NODE_MODULES" "$TMP/client/node_modules"
    node "$TMP/client/openai_client.mjs" "$B" "$TMP/cases.json" "$TMP/raw.json"
else
    echo "note: the openai npm package checks are skipped (set TS_NODE_MODULES to a node_modules folder holding openai; .ci/run does)"
fi

# the raw framing of a stream, with curl: HTTP/1.1 chunked, text/event-stream, "data: " events with
# a blank line after each, the last one "data: [DONE]"
Q=$(python3 -c "import json; c = json.load(open('$TMP/cases.json'))[0]; print(json.dumps({'messages': [{'role': 'system', 'content': c['system']}, {'role': 'user', 'content': c['user']}], 'temperature': 0, 'max_tokens': 24, 'stream': True}))")
curl -s -N -D "$TMP/sse.head" --raw -H 'Content-Type: application/json' -d "$Q" "$B/v1/chat/completions" >"$TMP/sse.raw"
curl -s -N -H 'Content-Type: application/json' -d "$Q" "$B/v1/chat/completions" >"$TMP/sse.txt"
check "a stream's head: 200, Content-Type text/event-stream, Transfer-Encoding chunked" \
    bash -c "grep -q '^HTTP/1.1 200' '$TMP/sse.head' && grep -qi '^content-type: text/event-stream' '$TMP/sse.head' && grep -qi '^transfer-encoding: chunked' '$TMP/sse.head'"
check "SSE framing: every event is one 'data: ' line and a blank line, the last 'data: [DONE]'; the deltas equal ./run's answer" \
    python3 - "$TMP/sse.txt" "$TMP/cases.json" <<'EOF'
import json, sys
raw = open(sys.argv[1], encoding="utf-8").read()
want = json.load(open(sys.argv[2]))[0]["expected"]
assert raw.endswith("\n\n"), "ends with a blank line"
events = raw[:-2].split("\n\n")
assert all(e.startswith("data: ") and "\n" not in e for e in events), "one data line per event"
assert events[-1] == "data: [DONE]", events[-1]
text = "".join(c["delta"].get("content", "") for e in events[:-1] for c in json.loads(e[6:])["choices"])
assert text == want, (text, want)
finishes = [c["finish_reason"] for e in events[:-1] for c in json.loads(e[6:])["choices"] if c["finish_reason"]]
assert len(finishes) == 1
EOF
check "the chunked body: each chunk's size matches its bytes, a last 0-size chunk, the events end with [DONE]" \
    python3 - "$TMP/sse.raw" <<'EOF'
import sys
raw = open(sys.argv[1], "rb").read()
out, i = b"", 0
while True:
    j = raw.index(b"\r\n", i)
    n = int(raw[i:j], 16)
    if n == 0:
        assert raw[j:] == b"\r\n\r\n", raw[j:]
        break
    out += raw[j + 2:j + 2 + n]
    assert raw[j + 2 + n:j + 4 + n] == b"\r\n"
    i = j + 4 + n
sys.exit(0 if out.startswith(b"data: {") and out.endswith(b"\n\ndata: [DONE]\n\n") else 1)
EOF

# a chat's next turn reuses its earlier turns' cache (cached_tokens)
python3 - "$B" "$TMP/cases.json" >"$TMP/turns.txt" <<'EOF'
import json, sys, urllib.request
base, c = sys.argv[1], json.load(open(sys.argv[2]))[1]
def post(body):
    rq = urllib.request.Request(base + "/v1/chat/completions", json.dumps(body).encode(), {"Content-Type": "application/json"})
    return json.load(urllib.request.urlopen(rq))
msgs = [{"role": "system", "content": c["system"]}, {"role": "user", "content": c["user"]}]
a = post({"messages": msgs, "temperature": 0, "max_tokens": 24})
msgs += [{"role": "assistant", "content": a["choices"][0]["message"]["content"]}, {"role": "user", "content": "And again?"}]
b = post({"messages": msgs, "temperature": 0, "max_tokens": 4})
print(a["usage"]["prompt_tokens"], b["usage"]["prompt_tokens"], b["usage"]["prompt_tokens_details"]["cached_tokens"])
EOF
read -r p1 p2 cached <"$TMP/turns.txt"
check "a conversation's second turn reuses the first turn's cache (cached $cached of $p2 prompt tokens, first turn $p1)" \
    bash -c "[ '${cached:-0}' -ge '${p1:-1}' ] && [ '${cached:-0}' -lt '${p2:-0}' ]"

# errors: OpenAI-shaped bodies with the right status
code() { curl -s -o "$TMP/body.json" -w '%{http_code}' "$@"; }
check "bad JSON: 400 with an error object" bash -c "[ \"\$(curl -s -o '$TMP/b1' -w '%{http_code}' -d '{\"messages\": [' '$B/v1/chat/completions')\" = 400 ] && grep -q '\"invalid_request_error\"' '$TMP/b1'"
check "a wrong type: 400 naming the field" bash -c "[ \"\$(curl -s -o '$TMP/b2' -w '%{http_code}' -d '{\"messages\": [{\"role\": \"user\", \"content\": \"x\"}], \"max_tokens\": \"ten\"}' '$B/v1/chat/completions')\" = 400 ] && grep -q max_tokens '$TMP/b2'"
check "response_format json_schema (curl, streamed): the joined deltas are JSON the schema accepts" bash -c "curl -s -N -H 'Content-Type: application/json' -d '{\"messages\": [{\"role\": \"user\", \"content\": \"Who directed Aster?\"}], \"stream\": true, \"max_tokens\": 100, \"temperature\": 1.0, \"seed\": 2, \"response_format\": {\"type\": \"json_schema\", \"json_schema\": {\"name\": \"a\", \"schema\": {\"type\": \"object\", \"properties\": {\"ok\": {\"type\": \"boolean\"}, \"n\": {\"enum\": [1, 2, 3]}}, \"required\": [\"ok\", \"n\"], \"additionalProperties\": false}}}}' '$B/v1/chat/completions' | python3 -c '
import json, sys
text = \"\".join(json.loads(l[6:])[\"choices\"][0][\"delta\"].get(\"content\") or \"\" for l in sys.stdin if l.startswith(\"data: {\") and json.loads(l[6:])[\"choices\"])
v = json.loads(text); assert set(v) == {\"ok\", \"n\"} and isinstance(v[\"ok\"], bool) and v[\"n\"] in (1, 2, 3), text'"
check "tool_choice \"required\" with a template that writes no tool calls: 400 saying so" bash -c "[ \"\$(curl -s -o '$TMP/b3' -w '%{http_code}' -d '{\"messages\": [{\"role\": \"user\", \"content\": \"x\"}], \"tools\": [{\"type\": \"function\", \"function\": {\"name\": \"f\"}}], \"tool_choice\": \"required\"}' '$B/v1/chat/completions')\" = 400 ] && grep -q 'writes none' '$TMP/b3'"
check "an unknown path: 404; GET on a completion endpoint: 405" bash -c "[ \"\$(curl -s -o /dev/null -w '%{http_code}' '$B/v2/x')\" = 404 ] && [ \"\$(curl -s -o /dev/null -w '%{http_code}' '$B/v1/chat/completions')\" = 405 ]"
check "a prompt longer than the context: 400 saying so" bash -c "python3 -c 'import json; print(json.dumps({\"prompt\": \"word \" * 3000}))' | curl -s -o '$TMP/b4' -w '%{http_code}' -d @- '$B/v1/completions' | grep -q 400 && grep -q 'context' '$TMP/b4'"
check "unknown fields are ignored, as OpenAI's API does" bash -c "[ \"\$(curl -s -o /dev/null -w '%{http_code}' -d '{\"prompt\": \"a\", \"max_tokens\": 1, \"frobnicate\": 3}' '$B/v1/completions')\" = 200 ]"

# /metrics: Prometheus text with the counters
curl -s "$B/metrics" >"$TMP/metrics.txt"
check "/metrics: Prometheus text (requests, tokens, queue, tokens/s)" bash -c "grep -q '^# TYPE tessera_requests_total counter' '$TMP/metrics.txt' && grep -Eq '^tessera_generated_tokens_total [1-9]' '$TMP/metrics.txt' && grep -q '^tessera_queue_length 0' '$TMP/metrics.txt' && grep -q '^tessera_tokens_per_second ' '$TMP/metrics.txt'"
check "one log line per request on stderr (method, path, status, tokens, ms), no prompt text" \
    bash -c "grep -Eq '^127.0.0.1 POST /v1/chat/completions 200 prompt [0-9]+ \\(cached [0-9]+\\) generated [0-9]+ [0-9]+ ms$' '$TMP/main.err' && ! grep -q 'Sorrel' '$TMP/main.err'"

# SIGTERM: a running request finishes, then the process exits 0. The signal goes once the client
# has sent its request (it says so in a file: a Python that starts slowly, such as pyenv's shims,
# could otherwise connect after the signal), and a moment after.
python3 - "$B" "$TMP/term.sent" >"$TMP/term.txt" 2>&1 <<'EOF' &
import http.client, json, sys, urllib.parse
u = urllib.parse.urlparse(sys.argv[1])
c = http.client.HTTPConnection(u.hostname, u.port)
c.request("POST", "/v1/completions", json.dumps({"prompt": "Once", "max_tokens": 120, "ignore_eos": True, "temperature": 0}))
open(sys.argv[2], "w").close()
r = json.loads(c.getresponse().read())
print(r["choices"][0]["finish_reason"], r["usage"]["completion_tokens"])
EOF
CLIENT=$!
for _ in $(seq 100); do [ -e "$TMP/term.sent" ] && break; sleep 0.1; done
sleep 0.3
kill -TERM "$SERVER_PID"
wait "$CLIENT"
wait "$SERVER_PID"
rc=$?
SERVER_PID=
check "SIGTERM: the running request is answered in full (length 120), then exit 0 (rc $rc: $(cat "$TMP/term.txt"))" \
    bash -c "[ $rc -eq 0 ] && grep -q '^length 120$' '$TMP/term.txt'"

# an API key: 401 without it (an OpenAI error body), 200 with it; /health needs none
echo "sekrit-key" >"$TMP/key.txt"
start_server key "$RUN_OPT" serve "$QA" --port 0 -t 2 --api-key-file "$TMP/key.txt"
wait_ready
B="http://127.0.0.1:$PORT"
check "--api-key-file: 401 without the key, 401 with a wrong one, 200 with it; /health open" bash -c "
    [ \"\$(curl -s -o '$TMP/k1' -w '%{http_code}' '$B/v1/models')\" = 401 ] && grep -q invalid_api_key '$TMP/k1' &&
    [ \"\$(curl -s -o /dev/null -w '%{http_code}' -H 'Authorization: Bearer sekrit-kez' '$B/v1/models')\" = 401 ] &&
    [ \"\$(curl -s -o /dev/null -w '%{http_code}' -H 'Authorization: Bearer sekrit-key' '$B/v1/models')\" = 200 ] &&
    [ \"\$(curl -s -o /dev/null -w '%{http_code}' '$B/health')\" = 200 ]"
stop_server

# tool calls: Qwen3's template (the Hermes format: <tool_call> JSON </tool_call>) on the qwen3 fixture;
# a grammar makes the model write a call, which comes back as OpenAI tool_calls, streamed or not;
# the conversation then goes on with the call and the tool's answer rendered by the template
QWEN="$FIX/qwen3-tiny/model-q8_0.gguf"
start_server tools "$RUN_OPT" serve "$QWEN" --chat-template "$FIX/chat-templates/qwen3.jinja" -c 1024 --port 0 -t 2 -np 2
wait_ready
B="http://127.0.0.1:$PORT"
python3 - "$TMP/tools" <<'EOF'
import json, sys
tools = [{"type": "function", "function": {"name": "get_weather", "description": "The weather in a city",
          "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}}]
grammar = 'root ::= "<tool_call>\\n{\\"name\\": \\"get_weather\\", \\"arguments\\": {\\"city\\": \\"" [A-Z] [a-z]{2,8} "\\"}}\\n</tool_call>"'
body = {"messages": [{"role": "user", "content": "What is the weather in Paris?"}], "tools": tools, "grammar": grammar,
        "max_tokens": 100, "temperature": 0.7, "seed": 3}
json.dump(body, open(sys.argv[1] + "-call.json", "w"))
json.dump(dict(body, stream=True), open(sys.argv[1] + "-stream.json", "w"))
json.dump(dict(body, tool_choice="none"), open(sys.argv[1] + "-none.json", "w"))
EOF
curl -s -d @"$TMP/tools-call.json" "$B/v1/chat/completions" >"$TMP/tc.json"
curl -s -N -d @"$TMP/tools-stream.json" "$B/v1/chat/completions" >"$TMP/tc-stream.txt"
curl -s -d @"$TMP/tools-none.json" "$B/v1/chat/completions" >"$TMP/tc-none.json"
check "tools: the call the model wrote comes back as tool_calls (name, arguments as a JSON string, id), content null, finish_reason tool_calls" \
    python3 - "$TMP/tc.json" <<'EOF'
import json, re, sys
ch = json.load(open(sys.argv[1]))["choices"][0]
m = ch["message"]; calls = m.get("tool_calls") or []
ok = ch["finish_reason"] == "tool_calls" and m["content"] is None and len(calls) == 1 and calls[0]["type"] == "function"
ok = ok and calls[0]["function"]["name"] == "get_weather" and re.fullmatch(r"call_[A-Za-z0-9]{24}", calls[0]["id"])
args = json.loads(calls[0]["function"]["arguments"]) if ok else None
ok = ok and set(args) == {"city"} and re.fullmatch(r"[A-Z][a-z]{2,8}", args["city"])
if not ok: print("#", ch)
sys.exit(0 if ok else 1)
EOF
check "tools streamed: no call markup among the content deltas, one tool_calls delta with the whole response's call (its own id), finish_reason tool_calls" \
    python3 - "$TMP/tc-stream.txt" "$TMP/tc.json" <<'EOF'
import json, sys
chunks = [json.loads(l[6:]) for l in open(sys.argv[1]) if l.startswith("data: {")]
whole = json.load(open(sys.argv[2]))["choices"][0]["message"]["tool_calls"]
text = "".join(c["choices"][0]["delta"].get("content") or "" for c in chunks)
deltas = [c["choices"][0]["delta"]["tool_calls"] for c in chunks if c["choices"][0]["delta"].get("tool_calls")]
strip = lambda calls: [dict((k, v) for k, v in d.items() if k not in ("index", "id")) for d in calls]
ok = "<tool_call>" not in text and len(deltas) == 1 and strip(deltas[0]) == strip(whole) and deltas[0][0]["id"].startswith("call_")
ok = ok and chunks[-1]["choices"][0]["finish_reason"] == "tool_calls"
if not ok: print("#", text, deltas, whole)
sys.exit(0 if ok else 1)
EOF
check "tool_choice none: the answer is text, finish_reason stop" \
    python3 -c "import json, sys; ch = json.load(open(sys.argv[1]))['choices'][0]; sys.exit(0 if ch['finish_reason'] == 'stop' and ch['message']['content'].startswith('<tool_call>') and 'tool_calls' not in ch['message'] else 1)" "$TMP/tc-none.json"
python3 - "$TMP/tc.json" "$TMP/tools-call.json" "$TMP/tools-next.json" <<'EOF'
import json, sys
call = json.load(open(sys.argv[1]))["choices"][0]["message"]
body = json.load(open(sys.argv[2]))
body.pop("grammar"); body["max_tokens"] = 4
body["messages"] += [call, {"role": "tool", "tool_call_id": call["tool_calls"][0]["id"], "content": json.dumps({"sky": "clear", "celsius": 21})}]
json.dump(body, open(sys.argv[3], "w"))
EOF
curl -s -d @"$TMP/tools-next.json" "$B/v1/chat/completions" >"$TMP/tc-next.json"
check "tools: the next turn renders the assistant's call and the tool's answer (a longer prompt, its start from the cache)" \
    python3 - "$TMP/tc.json" "$TMP/tc-next.json" <<'EOF'
import json, sys
first, nxt = json.load(open(sys.argv[1]))["usage"], json.load(open(sys.argv[2]))
u = nxt.get("usage", {})
ok = "choices" in nxt and u.get("prompt_tokens", 0) > first["prompt_tokens"] + 20 and u["prompt_tokens_details"]["cached_tokens"] >= first["prompt_tokens"] - 1
if not ok: print("#", first, nxt)
sys.exit(0 if ok else 1)
EOF
python3 - "$B" >"$TMP/forced.txt" <<'EOF'
import json, sys, urllib.request
try:
    import jsonschema
except ImportError:
    jsonschema = None
params = {"type": "object", "properties": {"city": {"type": "string", "maxLength": 12}, "days": {"type": "integer", "minimum": 1, "maximum": 7}},
          "required": ["city", "days"], "additionalProperties": False}
tools = [{"type": "function", "function": {"name": "get_weather", "parameters": params}},
         {"type": "function", "function": {"name": "get_time", "parameters": {"type": "object", "properties": {"tz": {"enum": ["UTC", "CET"]}}, "required": ["tz"], "additionalProperties": False}}}]
bad = 0
for choice, want in (("required", None), ({"type": "function", "function": {"name": "get_time"}}, "get_time")):
    for seed in range(4):
        body = {"messages": [{"role": "user", "content": "Weather?"}], "tools": tools, "tool_choice": choice, "max_tokens": 120, "temperature": 1.2, "seed": seed}
        ch = json.load(urllib.request.urlopen(urllib.request.Request(sys.argv[1] + "/v1/chat/completions", json.dumps(body).encode())))["choices"][0]
        calls = ch["message"].get("tool_calls") or []
        try:
            assert ch["finish_reason"] == "tool_calls" and len(calls) == 1
            name = calls[0]["function"]["name"]
            assert want is None or name == want
            schema = next(t["function"]["parameters"] for t in tools if t["function"]["name"] == name)
            args = json.loads(calls[0]["function"]["arguments"])
            if jsonschema: jsonschema.validate(args, schema)
            else: assert set(args) == set(schema["required"])
        except Exception as e:
            bad += 1; print("#", choice, seed, ch, e)
print("bad", bad)
EOF
check "tool_choice required / naming a function: 8 sampled answers are one call of an offered (or the named) tool, its arguments valid for its schema (jsonschema)" grep -q '^bad 0$' "$TMP/forced.txt"
stop_server

# /health is 503 while the model loads: its tokenizer is a FIFO nobody writes yet, so the load waits
mkfifo "$TMP/slow.json"
start_server slow "$RUN_OPT" serve "$QA" --tokenizer "$TMP/slow.json" --port 0 -t 2
check "/health: 503 while the model loads (with a Retry-After), a completion too" bash -c "
    [ \"\$(curl -s -o /dev/null -w '%{http_code}' 'http://127.0.0.1:$PORT/health')\" = 503 ] &&
    [ \"\$(curl -s -o '$TMP/l1' -w '%{http_code}' -d '{\"prompt\": \"a\"}' 'http://127.0.0.1:$PORT/v1/completions')\" = 503 ] && grep -q 'Loading' '$TMP/l1'"
echo "not a tokenizer" >"$TMP/slow.json"
wait "$SERVER_PID"
rc=$?
SERVER_PID=
check "a model that fails to load: exit 1 with an error line naming the file" bash -c "[ $rc -eq 1 ] && grep -q '^error: .*slow.json' '$TMP/slow.err'"

# a non-loopback address without a key is warned about
start_server open "$RUN_OPT" serve "$QA" --host 0.0.0.0 --port 0 -t 2
stop_server
check "--host 0.0.0.0 without an API key: a warning" grep -q 'warning: listening on 0.0.0.0 without an API key' "$TMP/open.err"
expect_error "server options without serve are refused" "go with \`run serve MODEL\`" "$RUN_OPT" "$QA" "hi" --port 9
expect_error "serve takes no prompt" "no prompt" "$RUN_OPT" serve "$QA" "hi"
