# --batch on stories260K: answers equal the single-prompt runs, bad lines carry errors, order is
# kept, --resume completes a truncated output without duplicates, shards merge into the unsharded
# output, prompts sharing a prefix reuse the KV cache.
source "$(dirname "$0")/lib.sh"
M="$FIX/stories260K/stories260K.gguf"

cat >"$TMP/in.jsonl" <<'EOF'
{"id": 1, "prompt": "Once upon a time", "max_tokens": 20}
{"id": "two", "prompt": "Once upon a time there was a", "max_tokens": 12}
this line is not JSON

{"id": 3.5, "messages": [{"role": "user", "content": "The cat"}], "max_tokens": 10}
{"id": 4, "prompt": "Lily", "max_tokens": 16, "stop": ["."]}
{"id": 5, "max_tokens": 3}
{"id": 6, "prompt": "Tim", "temperature": 0.8, "seed": 3, "max_tokens": 10}
{"id": [7], "prompt": "x"}
{"prompt": "Once upon a time", "max_tokens": -1}
{"id": 9, "prompt": "Once upon a time there was a little girl named Lily. She loved to play outside in the park with her friends every day", "max_tokens": 4}
{"id": 10, "prompt": "One day", "stop": "zzz", "max_tokens": 8}
EOF
# -c 24: line 11's prompt (26 tokens) is too long for the context. The lines run 8 at once (the
# default) and are written as they finish; sorted by line number they are checked below, and they
# must equal a --parallel 1 run, which writes them in input order.
"$RUN_SAN" "$M" --batch "$TMP/in.jsonl" -o "$TMP/out-parallel.jsonl" -c 24 -t 1 2>"$TMP/err.txt"
rc=$?
sort -t: -k2,2n -s "$TMP/out-parallel.jsonl" >"$TMP/out.jsonl"
"$RUN_SAN" "$M" --batch "$TMP/in.jsonl" -o "$TMP/out-seq.jsonl" -c 24 -t 1 --parallel 1 2>"$TMP/err-seq.txt"
check "a batch with bad lines exits 2" test "$rc" -eq 2
check "one output line per non-blank input line" test "$(wc -l <"$TMP/out.jsonl")" -eq 11
check "stats line: answered, errors, prefix-cache reuse" grep -q "batch: 6 answered, 5 errors | prompt: .* [1-9][0-9]* reused from the prefix cache" "$TMP/err.txt"
check "no progress line when stderr is not a terminal" bash -c "! grep -q \$'\r' '$TMP/err.txt'"

# The references: single-prompt runs (they print prompt + answer + newline), sampling options and all
python3 - "$TMP/out.jsonl" >"$TMP/singles.sh" <<'EOF'
import json, shlex, sys
for l in open(sys.argv[1]):
    o = json.loads(l)
    if 'answer' not in o: continue
    args = {1: ('Once upon a time', 20, ''), 'two': ('Once upon a time there was a', 12, ''),
            3.5: ('The cat', 10, ''), 4: ('Lily', 16, ''), 6: ('Tim', 10, '--temp 0.8 --seed 3'),
            10: ('One day', 8, '')}[o['id']]
    print('"$RUN_OPT" "$M" %s -n %d %s -c 24 -t 1 --quiet > "$TMP/single-%s.txt"' % (shlex.quote(args[0]), args[1], args[2], o['id']))
EOF
RUN_OPT="$RUN_OPT" M="$M" TMP="$TMP" bash "$TMP/singles.sh"
check "answers equal the single-prompt runs (greedy, sampled with a seed, stop string)" python3 - "$TMP/out.jsonl" "$TMP" <<'EOF'
import json, sys
prompts = {1: 'Once upon a time', 'two': 'Once upon a time there was a', 3.5: 'The cat', 4: 'Lily', 6: 'Tim', 10: 'One day'}
bad = []
for l in open(sys.argv[1]):
    o = json.loads(l)
    if 'answer' not in o: continue
    single = open('%s/single-%s.txt' % (sys.argv[2], o['id'])).read()
    p = prompts[o['id']]
    assert single.startswith(p) and single.endswith('\n')
    want = single[len(p):-1]
    if o['id'] == 4:   # stop ".": the answer ends before the first "."
        want = want[:want.index('.')]
        if o['finish_reason'] != 'stop': bad.append('finish_reason of the stop line')
    if o['answer'] != want: bad.append('%r: %r != %r' % (o['id'], o['answer'], want))
if bad: print(bad)
sys.exit(1 if bad else 0)
EOF
check "output fields: line, id (its JSON type kept), answer, token counts, finish_reason, ms" python3 - "$TMP/out.jsonl" <<'EOF'
import json, sys
L = [json.loads(l) for l in open(sys.argv[1])]
o = L[0]
ok = list(o.keys()) == ['line', 'id', 'answer', 'tokens_prompt', 'tokens_generated', 'finish_reason', 'ms']
ok &= o['id'] == 1 and type(o['id']) is int and L[1]['id'] == 'two' and L[3]['id'] == 3.5
ok &= o['tokens_prompt'] == 5 and o['tokens_generated'] == 20 and o['finish_reason'] == 'length'
ok &= isinstance(o['ms'], float) and o['ms'] >= 0
ok &= L[10]['finish_reason'] == 'length' and L[10]['tokens_generated'] == 8
sys.exit(0 if ok else 1)
EOF
check "--parallel 1 keeps the input order (line numbers, ids)" python3 - "$TMP/out-seq.jsonl" <<'EOF'
import json, sys
L = [json.loads(l) for l in open(sys.argv[1])]
sys.exit(0 if [o['line'] for o in L] == [1, 2, 3, 5, 6, 7, 8, 9, 10, 11, 12] and
         [o['id'] for o in L] == [1, 'two', None, 3.5, 4, 5, 6, None, None, 9, 10] else 1)
EOF
check "bad lines carry their errors" python3 - "$TMP/out.jsonl" <<'EOF'
import json, sys
L = {o['line']: o for o in map(json.loads, open(sys.argv[1]))}
want = {3: 'invalid JSON', 7: 'no "prompt", "messages" or "user"', 9: '"id" must be a string or a number',
        10: '"max_tokens" must be a non-negative integer', 11: 'longer than the context'}
ok = all('error' in L[n] and w in L[n]['error'] and 'answer' not in L[n] for n, w in want.items())
sys.exit(0 if ok and L[7]['id'] == 5 and L[3]['id'] is None else 1)
EOF

# stdout when there is no -o; a file of good lines exits 0
printf '{"id": "a", "prompt": "Once upon a time", "max_tokens": 20}\n' >"$TMP/good.jsonl"
"$RUN_SAN" "$M" --batch "$TMP/good.jsonl" -t 1 --quiet >"$TMP/stdout.jsonl" 2>"$TMP/err2.txt"
check "all lines answered: exit 0, answers on stdout, --quiet silences stderr" \
    bash -c "[ $? -eq 0 ] && grep -q '\"id\": \"a\", \"answer\": \", there was a little girl' '$TMP/stdout.jsonl' && test ! -s '$TMP/err2.txt'"

# --resume after a run killed mid-write: 4 whole lines (one of them an error) and half of the 5th.
# The answers are kept, the error line and the partial line are taken out and answered again (they
# come after the others: sorted by line number, the file equals the full run).
strip_ms "$TMP/out.jsonl" >"$TMP/par.txt"; strip_ms "$TMP/out-seq.jsonl" >"$TMP/seq.txt"
check "8 lines at once (written as they finish, sorted by line) equal --parallel 1: same answers, counts, errors" cmp -s "$TMP/par.txt" "$TMP/seq.txt"
head -4 "$TMP/out.jsonl" >"$TMP/resumed.jsonl"
sed -n 5p "$TMP/out.jsonl" | head -c 40 >>"$TMP/resumed.jsonl"
"$RUN_SAN" "$M" --batch "$TMP/in.jsonl" -o "$TMP/resumed.jsonl" --resume -c 24 -t 1 2>"$TMP/err3.txt"
rc=$?
strip_ms "$TMP/out.jsonl" >"$TMP/a.txt"; sort -t: -k2,2n -s "$TMP/resumed.jsonl" >"$TMP/sorted.jsonl"; strip_ms "$TMP/sorted.jsonl" >"$TMP/b.txt"
check "--resume completes a truncated output: sorted by line, equal to the full run, nothing duplicated" cmp -s "$TMP/a.txt" "$TMP/b.txt"
check "--resume says what it kept, took out and dropped" bash -c "grep -q 'dropped a partial last line' '$TMP/err3.txt' && grep -q '3 lines already answered' '$TMP/err3.txt' && grep -q '1 error lines taken out to be answered again' '$TMP/err3.txt'"
check "--resume exits 2: the output still holds errors" test "$rc" -eq 2
"$RUN_SAN" "$M" --batch "$TMP/in.jsonl" -o "$TMP/resumed.jsonl" --resume -c 24 -t 1 2>"$TMP/err4.txt"
rc=$?
sort -t: -k2,2n -s "$TMP/resumed.jsonl" >"$TMP/sorted.jsonl"; strip_ms "$TMP/sorted.jsonl" >"$TMP/b.txt"
check "--resume on a complete output answers no line again but the 5 errors, and exits 2" \
    bash -c "[ $rc -eq 2 ] && cmp -s '$TMP/a.txt' '$TMP/b.txt' && grep -q 'batch: 0 answered, 5 errors' '$TMP/err4.txt'"

# --shard K/N: three shards (by a hash of each line's id), written to OUT-0000K-of-00003.jsonl,
# merged by line number, equal the unsharded output
for k in 0 1 2; do
    "$RUN_OPT" "$M" --batch "$TMP/in.jsonl" --shard $k/3 -o "$TMP/shard.jsonl" -c 24 -t 1 --quiet
done
check "the shards' outputs are named OUT-0000K-of-00003.jsonl; each line is in exactly one, none is empty" python3 - "$TMP" <<'EOF'
import json, sys
seen = []
ok = True
for k in range(3):
    lines = [json.loads(l)['line'] for l in open('%s/shard-%05d-of-00003.jsonl' % (sys.argv[1], k))]
    ok &= len(lines) > 0
    seen += lines
sys.exit(0 if ok and sorted(seen) == [1, 2, 3, 5, 6, 7, 8, 9, 10, 11, 12] else 1)
EOF
cat "$TMP"/shard-*-of-00003.jsonl | sort -t: -k2,2n -s >"$TMP/merged.jsonl"
strip_ms "$TMP/merged.jsonl" >"$TMP/m.txt"
check "merged shards (cat | sort -t: -k2,2n -s) equal the unsharded output" cmp -s "$TMP/a.txt" "$TMP/m.txt"

# Prefix cache: a shared system-like prefix is reused, and reuse does not change the answers
p="Once upon a time there was a little girl named Lily. She"
printf '{"id": 1, "prompt": "%s loved", "max_tokens": 6}\n{"id": 2, "prompt": "%s saw", "max_tokens": 6}\n{"id": 3, "prompt": "%s loved", "max_tokens": 6}\n' "$p" "$p" "$p" >"$TMP/prefix.jsonl"
"$RUN_SAN" "$M" --batch "$TMP/prefix.jsonl" -o "$TMP/prefix-out.jsonl" -t 1 --parallel 1 2>"$TMP/err5.txt"
# expected reuse, one line after another: the tokens each prompt shares with the one before (whose
# cache also holds its answer)
t1=$("$RUN_OPT" "$M" "$p loved" --tokenize); t2=$("$RUN_OPT" "$M" "$p saw" --tokenize)
shared=$(python3 -c "
a, b = '$t1'.split(), '$t2'.split()
n = 0
while n < min(len(a), len(b)) - 1 and a[n] == b[n]: n += 1
print(n)")
reused=$(sed -n 's/.* \([0-9]*\) reused from the prefix cache.*/\1/p' "$TMP/err5.txt")
check "shared prefixes are reused: lines 2 and 3 take $shared positions each from the cache" test "$reused" = $((2 * shared))
# all three at once: lines 2 and 3 wait for line 1's prompt and copy what they share with it (line
# 3 all of it but its last token), so the shared part is evaluated once
"$RUN_SAN" "$M" --batch "$TMP/prefix.jsonl" -o "$TMP/prefix-par.jsonl" -t 1 -v 2>"$TMP/err6.txt"
n1=$(echo "$t1" | wc -w)
reused=$(sed -n 's/.* \([0-9]*\) reused from the prefix cache.*/\1/p' "$TMP/err6.txt")
check "three lines starting at once: the prefix is evaluated once ($shared + $((n1 - 1)) positions copied)" test "$reused" = $((shared + n1 - 1))
sort -t: -k2,2n -s "$TMP/prefix-par.jsonl" >"$TMP/prefix-par-sorted.jsonl"
check "... and the answers equal one line after another's" cmp -s <(strip_ms "$TMP/prefix-out.jsonl") <(strip_ms "$TMP/prefix-par-sorted.jsonl")
"$RUN_OPT" "$M" "$p saw" -n 6 -t 1 --quiet >"$TMP/saw.txt"
check "an answer after prefix reuse equals the single-prompt run" python3 -c "
import json, sys
L = [json.loads(l) for l in open('$TMP/prefix-out.jsonl')]
single = open('$TMP/saw.txt').read()
sys.exit(0 if single == '$p saw' + L[1]['answer'] + '\n' and L[0]['answer'] == L[2]['answer'] else 1)"

# Progress line on a terminal (when script(1) can provide one)
if command -v script >/dev/null 2>&1 && script -qec true /dev/null >/dev/null 2>&1; then
    script -qec "'$RUN_OPT' '$M' --batch '$TMP/prefix.jsonl' -o '$TMP/tty-out.jsonl' -t 1" /dev/null >"$TMP/tty.txt" 2>&1
    check "progress line (done/total, tok/s, ETA) when stderr is a terminal" grep -q "batch: 3/3 done | .* tok/s | ETA 0:00" "$TMP/tty.txt"
fi

# Option errors
expect_error "--resume needs -o" "needs -o" "$RUN_SAN" "$M" --batch "$TMP/in.jsonl" --resume
expect_error "--shard K/N checks K < N" "--shard expects K/N" "$RUN_SAN" "$M" --batch "$TMP/in.jsonl" --shard 3/3
expect_error "--shard needs K/N" "--shard expects K/N" "$RUN_SAN" "$M" --batch "$TMP/in.jsonl" --shard 1
expect_error "missing batch file" "no/such.jsonl" "$RUN_SAN" "$M" --batch no/such.jsonl
expect_error "--batch and --check together" "separate modes" "$RUN_SAN" "$M" --batch "$TMP/in.jsonl" --check "$TMP/in.jsonl"
printf 'garbage\n' >"$TMP/notanswers.jsonl"; printf '{"x": 1}\n' >>"$TMP/notanswers.jsonl"
expect_error "--resume refuses an output file that is not batch answers" "line 1 is not a batch answer" \
    "$RUN_SAN" "$M" --batch "$TMP/in.jsonl" -o "$TMP/notanswers.jsonl" --resume
