# --batch --parallel N (issue 32): many lines at once give every line the answer it gets alone.
# The qa-llama questions (a shared system prompt, answers of different lengths) with 8 at once equal
# one after another; lines of 1 to 40 tokens on stories260K finish at different steps and free
# their slots for the next; sampled lines with a seed repeat whatever the parallelism; a run killed
# with SIGKILL mid-batch and resumed with --parallel 8 loses and duplicates nothing.
source "$(dirname "$0")/lib.sh"
M="$FIX/stories260K/stories260K.gguf"
QA="$FIX/qa-llama/qa-llama-q8_0.gguf"

sorted_no_ms() {   # output file -> its lines sorted by line number, without the timing field
    python3 -c "
import json, sys
rows = sorted((json.loads(l) for l in open(sys.argv[1])), key=lambda o: o['line'])
for o in rows: o.pop('ms', None); print(json.dumps(o))" "$1"
}
export -f sorted_no_ms   # the checks below call it inside bash -c

# qa-llama: the eval set's questions as batch lines (a system prompt they share, a user turn each)
"$RUN_OPT" "$QA" --batch "$FIX/qa-llama/eval-dev.jsonl" -o "$TMP/qa-1.jsonl" --parallel 1 -t 2 -n 24 2>"$TMP/qa-1.err"
"$RUN_SAN" "$QA" --batch "$FIX/qa-llama/eval-dev.jsonl" -o "$TMP/qa-8.jsonl" --parallel 8 -t 2 -n 24 2>"$TMP/qa-8.err"
check "qa-llama: 30 questions 8 at once (sanitizer build) answer exactly as one at a time" \
    bash -c "[ \$(wc -l <'$TMP/qa-8.jsonl') -eq 30 ] && cmp -s <(sorted_no_ms '$TMP/qa-1.jsonl') <(sorted_no_ms '$TMP/qa-8.jsonl')"
check "qa-llama: the answers are the expected ones" python3 - "$TMP/qa-8.jsonl" "$FIX/qa-llama/eval-dev.jsonl" <<'EOF'
import json, sys
want = [json.loads(l)['expected'] for l in open(sys.argv[2])]
got = {o['line']: o['answer'] for o in map(json.loads, open(sys.argv[1]))}
sys.exit(0 if all(got[i + 1].strip().startswith(w) for i, w in enumerate(want)) else 1)
EOF
reused=$(sed -n 's/.* \([0-9]*\) reused from the prefix cache.*/\1/p' "$TMP/qa-8.err")
reused1=$(sed -n 's/.* \([0-9]*\) reused from the prefix cache.*/\1/p' "$TMP/qa-1.err")
check "qa-llama: the shared system prompt is evaluated once, not per line ($reused positions reused at 8 at once, $reused1 one at a time)" \
    test "${reused:-0}" -ge "${reused1:-1}"
check "qa-llama: the answers came out of order (they were run side by side)" \
    bash -c "! cmp -s <(cut -d, -f1 '$TMP/qa-8.jsonl') <(cut -d, -f1 '$TMP/qa-1.jsonl')"

# lines that end at different lengths (max_tokens 1..40, a stop string), some sampled with a seed,
# some bad: every parallelism gives the same file, sorted
python3 - >"$TMP/mixed.jsonl" <<'EOF'
import json
starts = ["Once upon a time", "Lily", "The cat", "One day", "Tim and Sue", "There was a big"]
for i in range(40):
    line = {"id": i, "prompt": starts[i % len(starts)] + " " * (i % 3), "max_tokens": 1 + (i * 7) % 40}
    if i % 4 == 1: line.update(temperature=0.9, seed=100 + i)
    if i % 9 == 5: line["stop"] = ["."]
    if i == 13: line = {"id": i, "max_tokens": 3}     # no prompt: an error line
    print(json.dumps(line))
EOF
for np in 1 3 8 16; do
    "$RUN_OPT" "$M" --batch "$TMP/mixed.jsonl" -o "$TMP/mixed-$np.jsonl" --parallel $np -t 2 -c 96 --quiet 2>/dev/null
    sorted_no_ms "$TMP/mixed-$np.jsonl" >"$TMP/mixed-$np.txt"
done
check "40 lines of 1 to 40 tokens (greedy, sampled with seeds, stop strings, an error): --parallel 3, 8, 16 equal --parallel 1" \
    bash -c "[ \$(wc -l <'$TMP/mixed-1.txt') -eq 40 ] && cmp -s '$TMP/mixed-1.txt' '$TMP/mixed-3.txt' && cmp -s '$TMP/mixed-1.txt' '$TMP/mixed-8.txt' && cmp -s '$TMP/mixed-1.txt' '$TMP/mixed-16.txt'"
check "... the lengths differ as asked (a short line's slot went to the next line)" python3 - "$TMP/mixed-8.txt" <<'EOF'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
lens = {o['tokens_generated'] for o in rows if 'answer' in o}
sys.exit(0 if len(lens) > 10 and min(lens) == 1 and sum('error' in o for o in rows) == 1 else 1)
EOF
"$RUN_SAN" "$M" --batch "$TMP/mixed.jsonl" -o "$TMP/mixed-san.jsonl" --parallel 8 -t 2 -c 96 --quiet 2>/dev/null
check "... and the sanitizer build gives the same file" cmp -s "$TMP/mixed-1.txt" <(sorted_no_ms "$TMP/mixed-san.jsonl")

# SIGKILL mid-batch with 8 at once, then --resume with 8 at once: sorted by line, the file equals a
# clean run, every line once
python3 - >"$TMP/long.jsonl" <<'EOF'
import json
for i in range(300):
    print(json.dumps({"id": "q%d" % i, "prompt": ["Once upon a time", "Lily", "The dog"][i % 3], "max_tokens": 20 + i % 30}))
EOF
"$RUN_OPT" "$M" --batch "$TMP/long.jsonl" -o "$TMP/long-clean.jsonl" --parallel 8 -t 1 -c 96 --quiet 2>/dev/null
"$RUN_OPT" "$M" --batch "$TMP/long.jsonl" -o "$TMP/long-killed.jsonl" --parallel 8 -t 1 -c 96 --quiet 2>/dev/null &
pid=$!
for _ in $(seq 200); do   # until some answers are out, but not all
    n=$(wc -l 2>/dev/null <"$TMP/long-killed.jsonl" || echo 0)
    [ "${n:-0}" -ge 40 ] && break
    sleep 0.02
done
kill -9 "$pid" 2>/dev/null
wait "$pid" 2>/dev/null
before=$(wc -l <"$TMP/long-killed.jsonl")
"$RUN_OPT" "$M" --batch "$TMP/long.jsonl" -o "$TMP/long-killed.jsonl" --parallel 8 -t 1 -c 96 --resume 2>"$TMP/resume.err"
rc=$?
check "killed after $before of 300 lines, --resume --parallel 8 completes the file (exit 0)" \
    bash -c "[ $rc -eq 0 ] && [ $before -lt 300 ] && [ \$(wc -l <'$TMP/long-killed.jsonl') -eq 300 ]"
check "... nothing lost, nothing twice: sorted by line it equals a clean run" \
    cmp -s <(sorted_no_ms "$TMP/long-clean.jsonl") <(sorted_no_ms "$TMP/long-killed.jsonl")

# a step reads the weights once for every line in it: the summary's weights read per decode step
# are one line's on a dense model at any parallelism; on a mixture of experts (8 experts, top 2),
# 8 lines read the experts any of them chose, more than one line and less than 8 lines apart
python3 -c "
for i in range(8): print('{\"id\": %d, \"tokens\": [%d], \"max_tokens\": 8, \"ignore_eos\": true}' % (i, 11 + 17 * i))" >"$TMP/steps.jsonl"
step_mb() {   # MODEL PARALLEL -> the summary's MB of weights read per decode step
    "$RUN_SAN" "$1" --batch "$TMP/steps.jsonl" -o "$TMP/steps.out" --parallel "$2" -t 2 -c 32 2>"$TMP/steps.err"
    sed -n 's/.* | \([0-9.]*\) MB of weights read per decode step.*/\1/p' "$TMP/steps.err"
}
one=$(step_mb "$M" 1); eight=$(step_mb "$M" 8)
check "dense: weights read per decode step are the same for 1 and 8 lines at once ($one, $eight MB)" \
    bash -c "[ -n '$one' ] && [ '$one' = '$eight' ] && awk 'BEGIN { exit !($one > 0.5) }'"
one=$(step_mb "$FIX/qwen3moe-tiny/model-f32.gguf" 1); eight=$(step_mb "$FIX/qwen3moe-tiny/model-f32.gguf" 8)
check "experts: 8 lines at once read more than one line's weights a step, less than 8 lines' ($one, $eight MB)" \
    bash -c "[ -n '$one' ] && [ -n '$eight' ] && awk 'BEGIN { exit !($eight > $one && $eight < 8 * $one) }'"

# the option itself
expect_error "--parallel 0 is refused" "parallel" "$RUN_OPT" "$M" --batch "$TMP/mixed.jsonl" --parallel 0
expect_error "--parallel without --batch or --check is refused" "goes with --batch" "$RUN_OPT" "$M" "Hello" -np 4
"$RUN_OPT" "$M" --check <(printf '{"prompt": "Once upon a time", "expected": ", there"}\n{"prompt": "Lily", "expected": "zzz"}\n{"prompt": "The cat", "expected": ""}\n') -np 4 -t 1 >"$TMP/check.out" 2>/dev/null
check "--check with 4 at once prints its verdicts in the cases' order" bash -c "
    sed -n 1p '$TMP/check.out' | grep -q '^PASS line 1' && sed -n 2p '$TMP/check.out' | grep -q '^FAIL line 2: expected' &&
    sed -n 3p '$TMP/check.out' | grep -q '^FAIL line 3: error' && sed -n 4p '$TMP/check.out' | grep -q '1 passed, 2 failed'"
