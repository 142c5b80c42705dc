# --batch reads and writes the OpenAI Batch format (issue 32): {"custom_id", "method", "url", "body"}
# in, {"id", "custom_id", "response": {"status_code", "body"}, "error"} out, keyed by custom_id for
# --resume and duplicate checks. The answers equal the same requests written as tessera lines; fields
# the engine does not act on (tool_choice required, n > 1, other endpoints; an unsupported schema in response_format) fail their
# line by name instead of being ignored.
source "$(dirname "$0")/lib.sh"
QA="$FIX/qa-llama/qa-llama-q8_0.gguf"

# the eval set's first 12 questions as chat requests (6 greedy, 6 sampled with a seed), one text
# completion, one completion given as token ids, and lines that must fail
python3 - "$FIX/qa-llama/eval-dev.jsonl" "$TMP" <<'EOF'
import json, sys
qs = [json.loads(l) for l in open(sys.argv[1])][:12]
oa, ts = open(sys.argv[2] + '/openai.jsonl', 'w'), open(sys.argv[2] + '/tessera.jsonl', 'w')
for i, q in enumerate(qs):
    msgs = [{"role": "system", "content": q["system"]}, {"role": "user", "content": q["user"]}]
    body = {"model": "qa-llama", "messages": msgs, "max_tokens": 16}
    if i % 2: body.update(temperature=0.7, seed=40 + i, top_p=0.9)
    if i == 3:   # content as parts, the newer max_completion_tokens
        body["messages"][1]["content"] = [{"type": "text", "text": q["user"][:20]}, {"type": "text", "text": q["user"][20:]}]
        body["max_completion_tokens"] = body.pop("max_tokens")
    oa.write(json.dumps({"custom_id": "q-%d" % i, "method": "POST", "url": "/v1/chat/completions", "body": body}) + "\n")
    line = {"id": "q-%d" % i, "messages": msgs, "max_tokens": 16}
    for k in ("temperature", "seed", "top_p"):
        if k in body: line[k] = body[k]
    ts.write(json.dumps(line) + "\n")
oa.write(json.dumps({"custom_id": "c-text", "method": "POST", "url": "/v1/completions", "body": {"prompt": "Facts: Sorrel is a bakery.", "max_tokens": 6}}) + "\n")
oa.write(json.dumps({"custom_id": "c-ids", "method": "POST", "url": "/v1/completions", "body": {"prompt": [1, 415, 22693], "max_tokens": 4}}) + "\n")
bad = {"b-tools": {"url": "/v1/chat/completions", "body": {"messages": [{"role": "user", "content": "x"}], "tools": [{"type": "function", "function": {"name": "f"}}], "tool_choice": "required"}},
       "b-format": {"url": "/v1/chat/completions", "body": {"messages": [{"role": "user", "content": "x"}], "response_format": {"type": "json_schema", "json_schema": {"name": "x", "schema": {"type": "object", "patternProperties": {}}}}}},
       "b-logprobs": {"url": "/v1/chat/completions", "body": {"messages": [{"role": "user", "content": "x"}], "logprobs": True, "top_logprobs": 3, "max_tokens": 5}},
       "b-n": {"url": "/v1/chat/completions", "body": {"messages": [{"role": "user", "content": "x"}], "n": 2}},
       "b-url": {"url": "/v1/embeddings", "body": {"input": "x"}},
       "b-image": {"url": "/v1/chat/completions", "body": {"messages": [{"role": "user", "content": [{"type": "image_url", "image_url": {"url": "x"}}]}]}}}
for cid, req in bad.items():
    oa.write(json.dumps(dict(custom_id=cid, method="POST", **req)) + "\n")
EOF
"$RUN_SAN" "$QA" --batch "$TMP/openai.jsonl" -o "$TMP/openai-out.jsonl" -t 2 --parallel 4 2>"$TMP/openai.err"
rc=$?
"$RUN_OPT" "$QA" --batch "$TMP/tessera.jsonl" -o "$TMP/tessera-out.jsonl" -t 2 --parallel 1 --quiet
check "an OpenAI Batch file with 5 failing lines: exit 2, one output line per request" \
    bash -c "[ $rc -eq 2 ] && [ \$(wc -l <'$TMP/openai-out.jsonl') -eq 20 ]"
check "output lines have OpenAI's shape; chat answers equal the same requests as tessera lines (greedy and seeded)" \
    python3 - "$TMP/openai-out.jsonl" "$TMP/tessera-out.jsonl" <<'EOF'
import json, sys
out = {o["custom_id"]: o for o in map(json.loads, open(sys.argv[1]))}
ref = {o["id"]: o for o in map(json.loads, open(sys.argv[2]))}
bad = []
for cid, r in ref.items():
    o = out[cid]
    if set(o) != {"id", "custom_id", "response", "error"} or o["error"] is not None: bad.append(cid + " envelope")
    resp = o["response"]
    if resp["status_code"] != 200 or not resp["request_id"]: bad.append(cid + " status")
    body = resp["body"]
    if body["object"] != "chat.completion" or body["model"] != "qa-llama" or not body["id"].startswith("chatcmpl-"): bad.append(cid + " body")
    ch = body["choices"]
    if len(ch) != 1 or ch[0]["index"] != 0 or ch[0]["message"]["role"] != "assistant": bad.append(cid + " choice")
    if ch[0]["message"]["content"] != r["answer"]: bad.append(cid + " answer %r != %r" % (ch[0]["message"]["content"], r["answer"]))
    want_finish = "stop" if r["finish_reason"] == "stop" else "length"
    if ch[0]["finish_reason"] != want_finish: bad.append(cid + " finish")
    u = body["usage"]
    if (u["prompt_tokens"], u["completion_tokens"]) != (r["tokens_prompt"], r["tokens_generated"]) or \
       u["total_tokens"] != u["prompt_tokens"] + u["completion_tokens"] or "cached_tokens" not in u["prompt_tokens_details"]:
        bad.append(cid + " usage")
print(bad)
sys.exit(1 if bad else 0)
EOF
"$RUN_OPT" "$QA" "Facts: Sorrel is a bakery." --raw -n 6 -t 2 --quiet --no-display-prompt >"$TMP/raw.txt"
"$RUN_OPT" "$QA" --tokens 1,415,22693 -n 4 -t 2 --quiet --no-display-prompt >"$TMP/ids.txt"
check "/v1/completions: a text prompt is completed without the chat template, token ids as given (text_completion objects)" \
    python3 - "$TMP/openai-out.jsonl" "$TMP/raw.txt" "$TMP/ids.txt" <<'EOF'
import json, sys
out = {o["custom_id"]: o for o in map(json.loads, open(sys.argv[1]))}
ok = True
for cid, path in (("c-text", sys.argv[2]), ("c-ids", sys.argv[3])):
    body = out[cid]["response"]["body"]
    ok &= body["object"] == "text_completion" and body["id"].startswith("cmpl-")
    ok &= body["choices"][0]["text"] == open(path).read().rstrip("\n")
sys.exit(0 if ok else 1)
EOF
check "tool_choice required where the template writes no calls, an unsupported response_format schema, n > 1, another endpoint and image parts fail their line by name (status 400)" \
    python3 - "$TMP/openai-out.jsonl" <<'EOF'
import json, sys
out = {o["custom_id"]: o for o in map(json.loads, open(sys.argv[1]))}
want = {"b-tools": 'the chat template writes none the engine knows', "b-format": 'unsupported keyword "patternProperties"',
        "b-n": '"n" must be 1', "b-url": "/v1/embeddings is not served", "b-image": "only text content parts"}
ok = all(out[c]["response"]["status_code"] == 400 and w in out[c]["response"]["body"]["error"]["message"] and
         out[c]["response"]["body"]["error"]["type"] == "invalid_request_error" for c, w in want.items())
sys.exit(0 if ok else 1)
EOF
check "logprobs: one entry per answer token, their texts joined are the answer, 3 alternatives each, most likely first" \
    python3 - "$TMP/openai-out.jsonl" <<'EOF'
import json, sys
ch = {o["custom_id"]: o for o in map(json.loads, open(sys.argv[1]))}["b-logprobs"]["response"]["body"]["choices"][0]
lp = ch["logprobs"]["content"]
ok = len(lp) > 0 and "".join(t["token"] for t in lp).startswith(ch["message"]["content"])
for t in lp:
    tops = [a["logprob"] for a in t["top_logprobs"]]
    ok &= len(tops) == 3 and tops == sorted(tops, reverse=True) and t["logprob"] <= 0 and tops[0] >= t["logprob"] - 1e-6
    ok &= bytes(t["bytes"]).decode("utf-8", "replace") == t["token"]
sys.exit(0 if ok else 1)
EOF
# --resume keyed by custom_id: the first 5 output lines kept (errors among them are redone), the rest
# answered; sorted by custom_id the file equals the full run
head -5 "$TMP/openai-out.jsonl" >"$TMP/resumed.jsonl"
"$RUN_SAN" "$QA" --batch "$TMP/openai.jsonl" -o "$TMP/resumed.jsonl" -t 2 --parallel 4 --resume 2>"$TMP/resume.err"
check "--resume on an OpenAI Batch output: every custom_id once, the same results as the full run" python3 - "$TMP/openai-out.jsonl" "$TMP/resumed.jsonl" <<'EOF'
import json, sys
def load(p):
    rows = [json.loads(l) for l in open(p)]
    for o in rows:
        body = o["response"]["body"] if o["response"] else {}
        if "created" in body:   # the time, and what the prefix cache happened to hold, differ between runs
            body["created"] = 0
            body["usage"]["prompt_tokens_details"]["cached_tokens"] = 0
    return rows
a, b = load(sys.argv[1]), load(sys.argv[2])
ids = [o["custom_id"] for o in b]
key = lambda o: o["custom_id"]
sys.exit(0 if len(ids) == len(set(ids)) == 20 and sorted(a, key=key) == sorted(b, key=key) else 1)
EOF
printf '{"custom_id": "x", "url": "/v1/completions", "body": {"prompt": "a"}}\n{"custom_id": "x", "url": "/v1/completions", "body": {"prompt": "b"}}\n' >"$TMP/dup.jsonl"
"$RUN_OPT" "$QA" --batch "$TMP/dup.jsonl" -t 1 >/dev/null 2>"$TMP/dup.err"
check "two lines with one custom_id are refused up front" bash -c "[ $? -eq 1 ] && grep -q 'id \"x\" is on lines 1 and 2' '$TMP/dup.err'"

# tools in a batch line: Qwen3's template (Hermes calls) on the qwen3 fixture, a grammar making the
# model write a call; the output line carries it as tool_calls with finish_reason tool_calls
python3 - "$TMP/tools.jsonl" <<'EOF'
import json, sys
tools = [{"type": "function", "function": {"name": "lookup", "parameters": {"type": "object", "properties": {"q": {"type": "string"}}}}}]
grammar = 'root ::= "<tool_call>\\n{\\"name\\": \\"lookup\\", \\"arguments\\": {\\"q\\": \\"" [a-z]{1,8} "\\"}}\\n</tool_call>"'
with open(sys.argv[1], "w") as f:
    f.write(json.dumps({"custom_id": "t1", "method": "POST", "url": "/v1/chat/completions",
                        "body": {"messages": [{"role": "user", "content": "Find cats"}], "tools": tools, "grammar": grammar, "max_tokens": 60}}) + "\n")
    f.write(json.dumps({"custom_id": "t2", "method": "POST", "url": "/v1/chat/completions",
                        "body": {"messages": [{"role": "user", "content": "Hi"}], "tools": tools, "max_tokens": 8}}) + "\n")
EOF
"$RUN_OPT" "$FIX/qwen3-tiny/model-q8_0.gguf" --chat-template "$FIX/chat-templates/qwen3.jinja" -c 1024 --batch "$TMP/tools.jsonl" --quiet >"$TMP/tools-out.jsonl"
check "OpenAI Batch lines with tools: a call the model wrote comes back as tool_calls; an answer without one as content" \
    python3 - "$TMP/tools-out.jsonl" <<'EOF'
import json, re, sys
out = {o["custom_id"]: o["response"]["body"]["choices"][0] for o in map(json.loads, open(sys.argv[1]))}
c1, c2 = out["t1"], out["t2"]
calls = c1["message"].get("tool_calls") or []
ok = c1["finish_reason"] == "tool_calls" and c1["message"]["content"] is None and len(calls) == 1
ok = ok and calls[0]["function"]["name"] == "lookup" and re.fullmatch(r"[a-z]{1,8}", json.loads(calls[0]["function"]["arguments"])["q"])
ok = ok and "tool_calls" not in c2["message"] and isinstance(c2["message"]["content"], str) and c2["finish_reason"] in ("stop", "length")
if not ok: print("#", out)
sys.exit(0 if ok else 1)
EOF
