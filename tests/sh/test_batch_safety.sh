# --batch loses nothing (issue 16): -o naming the input is refused (same path, a symlink, a hard
# link); duplicate ids are refused up front with their line numbers (1 and 1.0 are one JSON number);
# -o is locked so a second writer fails clearly; --resume redoes lines whose answer was an error
# and the exit status says what the file finally holds; a line longer than any prompt the context
# can take is refused after reading a bounded part of it.
source "$(dirname "$0")/lib.sh"
M="$FIX/stories260K/stories260K.gguf"


printf '{"id": 1, "prompt": "Once upon a time", "max_tokens": 6}\n{"id": 2, "prompt": "Lily", "max_tokens": 6}\n' >"$TMP/in.jsonl"
cp "$TMP/in.jsonl" "$TMP/in.orig"

# -o is the input: by the same name, through a symlink, through a hard link
expect_error "-o naming the input file is refused" "is the input file" "$RUN_SAN" "$M" --batch "$TMP/in.jsonl" -o "$TMP/in.jsonl"
ln -s "$TMP/in.jsonl" "$TMP/link.jsonl"
expect_error "-o a symlink to the input is refused" "is the input file" "$RUN_SAN" "$M" --batch "$TMP/in.jsonl" -o "$TMP/link.jsonl"
ln "$TMP/in.jsonl" "$TMP/hard.jsonl"
expect_error "-o a hard link to the input is refused" "is the input file" "$RUN_SAN" "$M" --batch "$TMP/link.jsonl" -o "$TMP/hard.jsonl" --resume
check "... and the input is intact" cmp -s "$TMP/in.jsonl" "$TMP/in.orig"
# (on a copy: a build without the check would truncate the model it is given)
cp "$M" "$TMP/model.gguf"
expect_error "-o naming the model file is refused" "is the model file" "$RUN_OPT" "$TMP/model.gguf" --batch "$TMP/in.jsonl" -o "$TMP/model.gguf"
check "... and the model is intact" cmp -s "$M" "$TMP/model.gguf"

mkfifo "$TMP/fifo.jsonl"
expect_error "a FIFO as the batch file is refused, not waited on" "fifo.jsonl: not a regular file" \
    timeout 20 "$RUN_OPT" "$M" --batch "$TMP/fifo.jsonl"

# duplicate ids, refused before anything is answered: 1 and 1.0 are the same number, "a" twice
cat >"$TMP/dup.jsonl" <<'EOF'
{"id": 1, "prompt": "Once upon a time", "max_tokens": 4}
{"id": "a", "prompt": "Lily", "max_tokens": 4}
{"id": "1", "prompt": "Tim", "max_tokens": 4}
{"prompt": "Tim", "max_tokens": 4}
{"prompt": "Tim", "max_tokens": 4}

{"id": 1.0, "prompt": "The cat", "max_tokens": 4}
{"id": "a", "prompt": "The dog", "max_tokens": 4}
EOF
expect_error "duplicate ids are refused, naming the lines (1 and 1.0 are one id)" "id 1 is on lines 1 and 7" \
    "$RUN_SAN" "$M" --batch "$TMP/dup.jsonl" -o "$TMP/dup-out.jsonl"
check "... and the message counts the other duplicates" grep -q 'and 1 more duplicate' "$TMP/e.txt"
check "... before anything is written" test ! -e "$TMP/dup-out.jsonl"
printf '{"id": 10, "prompt": "a"}\n{"id": 1e1, "prompt": "b"}\n' >"$TMP/dup2.jsonl"
expect_error "10 and 1e1 are one id" "id 10 is on lines 1 and 2" "$RUN_OPT" "$M" --batch "$TMP/dup2.jsonl"
sed -i '$d' "$TMP/dup.jsonl"; sed -i '$d' "$TMP/dup.jsonl"
"$RUN_SAN" "$M" --batch "$TMP/dup.jsonl" -o "$TMP/dup-out.jsonl" -t 1 --quiet
check "the string \"1\" and the number 1 are different ids; lines without an id are known by their number" \
    bash -c "[ $? -eq 0 ] && [ \$(wc -l <'$TMP/dup-out.jsonl') -eq 5 ]"

# a second writer on the same -o fails clearly and leaves the file alone; a waiting writer goes on
"$RUN_OPT" "$M" --batch "$TMP/in.jsonl" -o "$TMP/locked.jsonl" -t 1 --quiet
cp "$TMP/locked.jsonl" "$TMP/locked.before"
python3 - "$TMP/locked.jsonl" "$TMP/ready" "$TMP/released" <<'EOF' &
import fcntl, sys, time
f = open(sys.argv[1], 'a')
fcntl.flock(f, fcntl.LOCK_EX)
open(sys.argv[2], 'w').close()
time.sleep(2)
open(sys.argv[3], 'w').close()   # the lock goes with the process, just after this
EOF
holder=$!
for _ in $(seq 100); do [ -e "$TMP/ready" ] && break; sleep 0.05; done
expect_error "a second writer on a locked -o fails, naming the file" "locked.jsonl: another process is writing it" \
    "$RUN_OPT" "$M" --batch "$TMP/in.jsonl" -o "$TMP/locked.jsonl" -t 1
expect_error "... with --resume too" "another process is writing it" \
    "$RUN_OPT" "$M" --batch "$TMP/in.jsonl" -o "$TMP/locked.jsonl" --resume -t 1
check "... and the file is untouched (not truncated, nothing appended)" cmp -s "$TMP/locked.jsonl" "$TMP/locked.before"
"$RUN_OPT" "$M" --batch "$TMP/in.jsonl" -o "$TMP/locked.jsonl" --resume --wait-lock -t 1 --quiet 2>"$TMP/wait.err"
rc=$?
check "--wait-lock waits for the first writer, then resumes (nothing answered twice)" \
    bash -c "[ $rc -eq 0 ] && [ -e '$TMP/released' ] && cmp -s '$TMP/locked.jsonl' '$TMP/locked.before'"
wait "$holder"

# --resume redoes lines whose answer was an error, and the exit status follows the file
cat >"$TMP/err.jsonl" <<'EOF'
{"id": 1, "prompt": "Once upon a time", "max_tokens": 6}
{"id": 2, "prompt": "Once upon a time there was a little girl named Lily. She loved to play", "max_tokens": 4}
{"id": 3, "prompt": "Lily", "max_tokens": 6}
EOF
"$RUN_SAN" "$M" --batch "$TMP/err.jsonl" -o "$TMP/err-out.jsonl" -c 16 -t 1 --quiet
check "a line too long for -c 16: exit 2, an error line" bash -c "[ $? -eq 2 ] && grep -q '\"id\": 2, \"error\"' '$TMP/err-out.jsonl'"
"$RUN_SAN" "$M" --batch "$TMP/err.jsonl" -o "$TMP/err-out.jsonl" -c 16 -t 1 --resume 2>"$TMP/resume1.err"
rc=$?
check "--resume with the error still there exits 2 (the file still holds an error)" test "$rc" -eq 2
check "... the failed line was tried again, not skipped" grep -q 'batch: 0 answered, 1 error |' "$TMP/resume1.err"
check "... and its old error line was replaced, not duplicated" test "$(grep -c '"id": 2,' "$TMP/err-out.jsonl")" -eq 1
"$RUN_SAN" "$M" --batch "$TMP/err.jsonl" -o "$TMP/err-out.jsonl" -c 64 -t 1 --resume 2>"$TMP/resume2.err"
rc=$?
check "--resume with a context that fits: the error line is redone, exit 0" \
    bash -c "[ $rc -eq 0 ] && grep -q 'batch: 1 answered, 0 errors' '$TMP/resume2.err' && ! grep -q '\"error\"' '$TMP/err-out.jsonl'"
"$RUN_SAN" "$M" --batch "$TMP/err.jsonl" -o "$TMP/err-full.jsonl" -c 64 -t 1 --quiet
sort -t: -k2,2n -s "$TMP/err-out.jsonl" >"$TMP/err-sorted.jsonl"; sort -t: -k2,2n -s "$TMP/err-full.jsonl" >"$TMP/err-full-sorted.jsonl"
strip_ms "$TMP/err-full-sorted.jsonl" >"$TMP/a.txt"; strip_ms "$TMP/err-sorted.jsonl" >"$TMP/b.txt"
check "... and the file, sorted by line, equals a clean run (nothing lost, nothing twice)" cmp -s "$TMP/a.txt" "$TMP/b.txt"

# a 20 MB line: refused after reading a bounded part of it; the lines around it are answered
python3 - "$TMP/big.jsonl" <<'EOF'
import json, sys
with open(sys.argv[1], 'w') as f:
    f.write(json.dumps({"id": 1, "prompt": "Once upon a time", "max_tokens": 4}) + '\n')
    f.write('{"id": 2, "prompt": "' + 'Once upon a time ' * (20 * 1024 * 1024 // 17) + '"}\n')
    f.write(json.dumps({"id": 3, "prompt": "Lily", "max_tokens": 4}) + '\n')
EOF
python3 - "$RUN_OPT" "$M" "$TMP/big.jsonl" "$TMP/big-out.jsonl" >"$TMP/rss.txt" <<'EOF'
import resource, subprocess, sys
run, model, inp, out = sys.argv[1:]
rc = subprocess.run([run, model, '--batch', inp, '-o', out, '-c', '512', '-t', '1', '--quiet']).returncode
print(rc, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss // 1024)
EOF
read -r rc rss <"$TMP/rss.txt"
check "a 20 MB line: exit 2, lines 1 and 3 answered, line 2 refused as too long" python3 - "$TMP/big-out.jsonl" "$rc" <<'EOF'
import json, sys
L = {o['line']: o for o in map(json.loads, open(sys.argv[1]))}
ok = sys.argv[2] == '2' and 'answer' in L[1] and 'answer' in L[3]
ok = ok and 'error' in L[2] and 'longer than' in L[2]['error'] and L[2]['id'] is None
sys.exit(0 if ok else 1)
EOF
check "a 20 MB line: peak memory ${rss} MB stays under 64 MB" test "$rss" -lt 64

# max_tokens written with an exponent, or past an int: until the context is full; a fraction is refused
printf '{"id": 1, "prompt": "Once", "max_tokens": 1e12}\n{"id": 2, "prompt": "Once", "max_tokens": 2.5}\n{"id": 3, "prompt": "Once", "max_tokens": 3e0}\n' >"$TMP/big.jsonl"
"$RUN_OPT" "$FIX/stories260K/stories260K.gguf" --batch "$TMP/big.jsonl" -t 1 -c 64 >"$TMP/big.out" 2>"$TMP/big.err"
check "max_tokens 1e12 runs to the full context, 3e0 gives 3 tokens, 2.5 is refused; '1 error'" python3 - "$TMP/big.out" "$TMP/big.err" <<'PY'
import json, sys
rows = sorted((json.loads(l) for l in open(sys.argv[1])), key=lambda o: o['line'])
err = open(sys.argv[2]).read()
sys.exit(0 if rows[0].get("finish_reason") == "context" and "error" in rows[1] and rows[2].get("tokens_generated") == 3
         and "1 answered" not in err and "2 answered, 1 error |" in err else 1)
PY

# ids: a whole number too large for a double to keep is refused on its line; a fraction prints as written
printf '{"id": 12345678901234567890123, "prompt": "Once", "max_tokens": 2}\n{"id": 0.1, "prompt": "Once", "max_tokens": 2}\n{"id": 9007199254740993, "prompt": "Once", "max_tokens": 2}\n' >"$TMP/ids.jsonl"
"$RUN_OPT" "$FIX/stories260K/stories260K.gguf" --batch "$TMP/ids.jsonl" -t 1 >"$TMP/ids.out" 2>/dev/null
check "a 23-digit numeric id is refused on its line (not rounded); 0.1 and 9007199254740993 come back as written" bash -c "
    grep -q '\"line\": 1, .*\"error\": \"\\\\\"id\\\\\" is a number too large to keep exactly' '$TMP/ids.out' &&
    grep -q '\"line\": 2, \"id\": 0.1, \"answer\"' '$TMP/ids.out' && grep -q '\"line\": 3, \"id\": 9007199254740993, \"answer\"' '$TMP/ids.out'"

# top_p, top_k, min_p, repeat_penalty per line, as the options give them; an unknown key is warned about once
printf '{"id": 1, "prompt": "Once upon a time", "max_tokens": 24, "temperature": 1.2, "seed": 5, "top_p": 0.7, "top_k": 9, "min_p": 0.02, "repeat_penalty": 1.3, "max_token": 1}\n{"id": 2, "prompt": "Lily", "max_tokens": 4, "max_token": 1}\n{"id": 3, "prompt": "Lily", "top_k": 2.5}\n' >"$TMP/keys.jsonl"
"$RUN_OPT" "$FIX/stories260K/stories260K.gguf" --batch "$TMP/keys.jsonl" -t 1 >"$TMP/keys.out" 2>"$TMP/keys.err"
"$RUN_OPT" "$FIX/stories260K/stories260K.gguf" "Once upon a time" -n 24 --temp 1.2 --seed 5 --top-p 0.7 --top-k 9 --min-p 0.02 --repeat-penalty 1.3 -t 1 --quiet --no-display-prompt >"$TMP/keys1.txt"
check "a line's top_p/top_k/min_p/repeat_penalty sample as the options do; a typo'd key is warned about once; top_k 2.5 is refused" python3 - "$TMP/keys.out" "$TMP/keys1.txt" "$TMP/keys.err" <<'PY'
import json, sys
rows = sorted((json.loads(l) for l in open(sys.argv[1])), key=lambda o: o['line'])
one = open(sys.argv[2]).read().rstrip('\n')
err = open(sys.argv[3]).read()
sys.exit(0 if rows[0]["answer"] == one and err.count('unknown key "max_token" ignored') == 1 and 'line 1:' in err
         and rows[2].get("error") == '"top_k" must be a whole number >= 0' else 1)
PY

# --batch - and --check - read stdin (a pipe: the batch is copied aside, since it is read twice); the
# same answers as from the file. A greedy batch prints no seed in its summary, a sampled one does.
printf '{"id": 1, "prompt": "Once upon a time", "max_tokens": 6}\n{"id": 2, "prompt": "Lily", "max_tokens": 6}\n' >"$TMP/pipe.jsonl"
"$RUN_OPT" "$FIX/stories260K/stories260K.gguf" --batch "$TMP/pipe.jsonl" -t 1 >"$TMP/pipe-file.out" 2>"$TMP/pipe-file.err"
cat "$TMP/pipe.jsonl" | "$RUN_OPT" "$FIX/stories260K/stories260K.gguf" --batch - -t 1 >"$TMP/pipe-dash.out" 2>/dev/null
cat "$TMP/pipe.jsonl" | "$RUN_OPT" "$FIX/stories260K/stories260K.gguf" --batch /dev/stdin -t 1 >"$TMP/pipe-dev.out" 2>/dev/null
check "--batch - and --batch /dev/stdin from a pipe answer as the file does" bash -c "
    sed 's/\"ms\": [0-9.]*//' '$TMP/pipe-file.out' >'$TMP/a' && sed 's/\"ms\": [0-9.]*//' '$TMP/pipe-dash.out' >'$TMP/b' &&
    sed 's/\"ms\": [0-9.]*//' '$TMP/pipe-dev.out' >'$TMP/c' && [ -s '$TMP/a' ] && cmp -s '$TMP/a' '$TMP/b' && cmp -s '$TMP/a' '$TMP/c'"
check "a greedy batch's summary prints no seed" bash -c "grep -q '^batch: 2 answered, 0 errors' '$TMP/pipe-file.err' && ! grep -q seed '$TMP/pipe-file.err'"
"$RUN_OPT" "$FIX/stories260K/stories260K.gguf" --batch "$TMP/pipe.jsonl" -t 1 --temp 0.7 >/dev/null 2>"$TMP/pipe-temp.err"
check "a sampled batch's summary prints the seed that repeats it" grep -q '| seed [0-9]*$' "$TMP/pipe-temp.err"
printf '{"id": "c", "prompt": "Once upon a time", "expected": ", there was"}\n' | "$RUN_OPT" "$FIX/stories260K/stories260K.gguf" --check - -t 1 >"$TMP/check-dash.txt" 2>/dev/null
check "--check - reads its cases from stdin" grep -qx '1 passed, 0 failed' "$TMP/check-dash.txt"
