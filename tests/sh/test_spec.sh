# Speculative decoding from the command line (--spec ngram|draft, --spec-k, --spec-n,
# --model-draft, --spec-always): every mode prints the answer plain decoding prints, greedy and
# seeded, in one-shot runs, the chat and --batch --parallel; the statistics line shows how many
# proposals were taken; bad values and a draft of another vocabulary are refused with one line.
# These small models' forwards cost about a position's compute per position, so by default they
# propose only now and then (where the measured costs say proposals do not pay): most runs here
# pass --spec-always, so that every step proposes and is verified.
source "$(dirname "$0")/lib.sh"
M="$FIX/stories260K/stories260K.gguf"
MQ="$FIX/stories260K/stories260K-q8_0.gguf"
QA="$FIX/qa-llama/qa-llama-q8_0.gguf"
QD="$FIX/llama2-tiny-random/llama-2-tiny-random.gguf"
HY="$FIX/qwen35-tiny/model-q8_0.gguf"

# stories260K continuing its own story, 64 tokens
"$RUN_OPT" "$M" "Once upon a time" -n 64 -t 1 --quiet >"$TMP/plain.txt"
"$RUN_SAN" "$M" "Once upon a time" -n 64 -t 1 --spec ngram --spec-always >"$TMP/ngram.txt" 2>"$TMP/ngram.err"
check "stories260K: --spec ngram prints what plain decoding prints (sanitizer build)" cmp -s "$TMP/plain.txt" "$TMP/ngram.txt"
check "stories260K: the statistics line shows the proposals taken ($(grep -o 'speculation: [^|]*' "$TMP/ngram.err"))" \
    grep -q "speculation: [1-9][0-9]* of [1-9][0-9]* proposed accepted ([0-9]*%)" "$TMP/ngram.err"
"$RUN_OPT" "$M" "Once upon a time" -n 64 -t 1 --spec ngram --spec-k 3 --spec-n 1 --spec-always --quiet >"$TMP/ngram31.txt"
check "stories260K: --spec ngram --spec-k 3 --spec-n 1 too" cmp -s "$TMP/plain.txt" "$TMP/ngram31.txt"
"$RUN_SAN" "$M" "Once upon a time" -n 64 -t 1 --model-draft "$MQ" --spec-always >"$TMP/draft.txt" 2>"$TMP/draft.err"
check "stories260K: --model-draft stories260K-q8_0 (sanitizer build) too" cmp -s "$TMP/plain.txt" "$TMP/draft.txt"
check "stories260K: the q8_0 draft's proposals are mostly taken ($(grep -o 'speculation: [^|]*' "$TMP/draft.err"))" \
    grep -q "speculation: [0-9]* of [0-9]* proposed accepted ([5-9][0-9]%\|100%)" "$TMP/draft.err"
"$RUN_OPT" "$M" "Once upon a time" -n 64 -t 1 --spec draft --model-draft "$M" --spec-k 12 --spec-always --quiet >"$TMP/self.txt"
check "stories260K: drafting for itself with --spec-k 12 too" cmp -s "$TMP/plain.txt" "$TMP/self.txt"
# without --spec-always: proposals where the steps' measured costs say they pay (here seldom), the same answer
"$RUN_OPT" "$M" "Once upon a time" -n 64 -t 1 --spec ngram -v >"$TMP/ngram-cost.txt" 2>"$TMP/ngram-cost.err"
"$RUN_OPT" "$M" "Once upon a time" -n 64 -t 1 --model-draft "$MQ" --quiet >"$TMP/draft-cost.txt"
check "stories260K: ngram and draft proposing where it pays print what plain decoding prints ($(grep -o 'speculation: [^|]*' "$TMP/ngram-cost.err"))" \
    bash -c "cmp -s '$TMP/plain.txt' '$TMP/ngram-cost.txt' && cmp -s '$TMP/plain.txt' '$TMP/draft-cost.txt'"

# seeded sampling: the sampler draws one number per emitted token either way
"$RUN_OPT" "$M" "Once upon a time" -n 64 -t 1 --temp 0.8 --seed 11 --repeat-penalty 1.1 --quiet >"$TMP/s-plain.txt"
"$RUN_OPT" "$M" "Once upon a time" -n 64 -t 1 --temp 0.8 --seed 11 --repeat-penalty 1.1 --spec ngram --spec-always --quiet >"$TMP/s-ngram.txt"
"$RUN_OPT" "$M" "Once upon a time" -n 64 -t 1 --temp 0.8 --seed 11 --repeat-penalty 1.1 --model-draft "$MQ" --spec-always --quiet >"$TMP/s-draft.txt"
check "stories260K: sampled with --seed, ngram and draft print what plain decoding prints" \
    bash -c "cmp -s '$TMP/s-plain.txt' '$TMP/s-ngram.txt' && cmp -s '$TMP/s-plain.txt' '$TMP/s-draft.txt'"

# qa-llama (a real model, its chat template) with a random draft of its vocabulary; an edit task
q="Facts: The owner of the newspaper Rowan is Cedric Yeboah. Name the owner of Rowan."
"$RUN_OPT" "$QA" "$q" -n 24 -t 2 --quiet >"$TMP/qa-plain.txt"
"$RUN_OPT" "$QA" "$q" -n 24 -t 2 --spec ngram --spec-always --quiet >"$TMP/qa-ngram.txt"
"$RUN_OPT" "$QA" "$q" -n 24 -t 2 --model-draft "$QD" --spec-always --quiet >"$TMP/qa-draft.txt"
check "qa-llama: --spec ngram and --model-draft llama-2-tiny-random answer as plain decoding (Cedric Yeboah)" \
    bash -c "grep -q 'Cedric Yeboah' '$TMP/qa-plain.txt' && cmp -s '$TMP/qa-plain.txt' '$TMP/qa-ngram.txt' && cmp -s '$TMP/qa-plain.txt' '$TMP/qa-draft.txt'"

# a hybrid model (DeltaNet layers: the recurrent state rewinds through its snapshots)
"$RUN_OPT" "$HY" --tokens 1,37,48,59,70,37,48,59,70,37,48 -n 48 --ignore-eos -t 1 --quiet >"$TMP/hy-plain.txt"
"$RUN_SAN" "$HY" --tokens 1,37,48,59,70,37,48,59,70,37,48 -n 48 --ignore-eos -t 1 --spec ngram --spec-always --quiet >"$TMP/hy-ngram.txt"
"$RUN_OPT" "$HY" --tokens 1,37,48,59,70,37,48,59,70,37,48 -n 48 --ignore-eos -t 1 --model-draft "$MQ" --spec-always --quiet >"$TMP/hy-draft.txt"
check "qwen35-tiny (hybrid): ngram (sanitizer build) and draft print what plain decoding prints" \
    bash -c "cmp -s '$TMP/hy-plain.txt' '$TMP/hy-ngram.txt' && cmp -s '$TMP/hy-plain.txt' '$TMP/hy-draft.txt'"

# the chat: turns continue the conversation in the cache, -v prints each turn's acceptance
printf 'Once upon a time\nLily went to the park\n' | "$RUN_OPT" "$M" -i -n 40 -t 1 --quiet --no-history >"$TMP/chat-plain.txt" 2>/dev/null
printf 'Once upon a time\nLily went to the park\n' | "$RUN_OPT" "$M" -i -n 40 -t 1 -v --spec ngram --spec-always --no-history >"$TMP/chat-ngram.txt" 2>"$TMP/chat-ngram.err"
check "chat: two turns with --spec ngram print what plain decoding prints" cmp -s "$TMP/chat-plain.txt" "$TMP/chat-ngram.txt"
check "chat: -v shows each turn's proposals taken" bash -c "[ \$(grep -c 'speculation: [0-9]* of [0-9]* proposed accepted' '$TMP/chat-ngram.err') -eq 2 ]"

# --batch --parallel: each slot proposes for itself, one batch verifies them all
python3 - >"$TMP/lines.jsonl" <<'EOF'
import json
starts = ["Once upon a time", "Lily", "The cat", "One day", "Tim and Sue", "There was a big"]
for i in range(12):
    line = {"id": i, "prompt": starts[i % len(starts)], "max_tokens": 10 + 3 * i}
    if i % 4 == 3: line.update(temperature=0.8, seed=i)
    print(json.dumps(line))
EOF
"$RUN_OPT" "$M" --batch "$TMP/lines.jsonl" -o "$TMP/b-plain.jsonl" --parallel 1 -t 1 2>/dev/null
"$RUN_OPT" "$M" --batch "$TMP/lines.jsonl" -o "$TMP/b-ngram.jsonl" --parallel 4 -t 1 --spec ngram --spec-always 2>"$TMP/b-ngram.err"
"$RUN_OPT" "$M" --batch "$TMP/lines.jsonl" -o "$TMP/b-draft.jsonl" --parallel 4 -t 1 --model-draft "$MQ" --spec-always 2>/dev/null
sorted_no_ms() { python3 -c "
import json, sys
rows = sorted((json.loads(l) for l in open(sys.argv[1])), key=lambda o: o['line'])
for o in rows: o.pop('ms', None); print(json.dumps(o))" "$1"; }
export -f sorted_no_ms
check "--batch --parallel 4: ngram and draft give the answers plain decoding gives one at a time" \
    bash -c "[ \$(wc -l <'$TMP/b-plain.jsonl') -eq 12 ] && cmp -s <(sorted_no_ms '$TMP/b-plain.jsonl') <(sorted_no_ms '$TMP/b-ngram.jsonl') && cmp -s <(sorted_no_ms '$TMP/b-plain.jsonl') <(sorted_no_ms '$TMP/b-draft.jsonl')"
check "--batch: the summary shows the proposals taken" grep -q "speculation: [0-9]* of [1-9][0-9]* proposed accepted" "$TMP/b-ngram.err"

# --dump-logits needs every position's logits: such a request decodes plainly, the same file
"$RUN_OPT" "$M" "Once upon a time" -n 20 -t 1 --quiet --dump-logits "$TMP/l-plain.bin" >/dev/null
"$RUN_OPT" "$M" "Once upon a time" -n 20 -t 1 --quiet --dump-logits "$TMP/l-ngram.bin" --spec ngram --spec-always >/dev/null
check "--dump-logits with --spec ngram writes what plain decoding writes" cmp -s "$TMP/l-plain.bin" "$TMP/l-ngram.bin"

# the server: two requests at once in two slots, each with its own proposals, answer as the CLI
trap 'stop_server; rm -rf "$TMP"' EXIT
"$RUN_OPT" "$M" "Once upon a time" -n 40 -t 1 --quiet --no-display-prompt >"$TMP/srv-want1.txt"
"$RUN_OPT" "$M" "Lily and Tom" -n 40 -t 1 --quiet --no-display-prompt >"$TMP/srv-want2.txt"
cat >"$TMP/ask.py" <<'EOF'
import json, sys, urllib.request
rq = urllib.request.Request(sys.argv[1] + "/v1/completions", json.dumps({"prompt": sys.argv[2], "max_tokens": 40, "temperature": 0}).encode())
sys.stdout.write(json.loads(urllib.request.urlopen(rq).read())["choices"][0]["text"])
EOF
if start_server spec "$RUN_SAN" serve "$M" --port 0 -t 1 -np 2 --spec ngram --spec-always && wait_ready; then
    python3 "$TMP/ask.py" "http://127.0.0.1:$PORT" "Once upon a time" >"$TMP/srv-got1.txt" &
    ask1=$!
    python3 "$TMP/ask.py" "http://127.0.0.1:$PORT" "Lily and Tom" >"$TMP/srv-got2.txt" &
    ask2=$!
    wait "$ask1" "$ask2"
    check "serve --spec ngram -np 2 (sanitizer build): two requests at once answer as plain one-shot runs" \
        bash -c "[ -s '$TMP/srv-got1.txt' ] && [ -s '$TMP/srv-got2.txt' ] && cmp -s <(tr -d '\n' <'$TMP/srv-want1.txt') <(tr -d '\n' <'$TMP/srv-got1.txt') && cmp -s <(tr -d '\n' <'$TMP/srv-want2.txt') <(tr -d '\n' <'$TMP/srv-got2.txt')"
else
    notok "serve --spec ngram starts ($(head -c 300 "$TMP/spec.err"))"
fi
stop_server

# refusals: one line each
expect_error "a draft with the same number of tokens but other texts is refused by name" \
    "aidreams260K.gguf: the draft's vocabulary differs from the model's (token [0-9]* is" \
    "$RUN_OPT" "$M" "Once" -n 4 --model-draft "$FIX/aidreams260K/aidreams260K.gguf"
expect_error "a draft of another vocabulary size is refused by name" "qa-llama-q8_0.gguf: the draft's vocabulary has 32000 tokens, the model's 512" \
    "$RUN_OPT" "$M" "Once" -n 4 --model-draft "$QA"
expect_error "--spec-k 0 is refused" "error: --spec-k expects an integer in \[1, 32\], got '0'" "$RUN_OPT" "$M" "Once" --spec ngram --spec-k 0
expect_error "--spec-k 33 is refused" "error: --spec-k expects an integer in \[1, 32\], got '33'" "$RUN_OPT" "$M" "Once" --spec ngram --spec-k 33
expect_error "--spec-n 17 is refused" "error: --spec-n expects an integer in \[1, 16\]" "$RUN_OPT" "$M" "Once" --spec ngram --spec-n 17
expect_error "--spec other is refused" "error: --spec expects off, ngram or draft, got 'fast'" "$RUN_OPT" "$M" "Once" --spec fast
expect_error "--spec draft without --model-draft is refused" "error: --spec draft needs --model-draft FILE" "$RUN_OPT" "$M" "Once" --spec draft
expect_error "--spec ngram with --model-draft is refused" "error: --model-draft goes with --spec draft" \
    "$RUN_OPT" "$M" "Once" --spec ngram --model-draft "$MQ"
expect_error "--spec-k without speculation is refused" "error: --spec-k, --spec-n and --spec-always go with" "$RUN_OPT" "$M" "Once" --spec-k 4
expect_error "--spec-always without speculation is refused" "error: --spec-k, --spec-n and --spec-always go with" "$RUN_OPT" "$M" "Once" --spec-always
expect_error "a draft file that does not load is refused" "error: .*no-such-draft.gguf" "$RUN_OPT" "$M" "Once" --model-draft "$TMP/no-such-draft.gguf"
