# `run serve` under load and abuse (tests/server/load.mjs, plain Node 20, no npm packages), all on
# the ASan+UBSan build (about 35 s on 2 cores):
#   A: -np 8 --timeout 3: warm-up, then the RSS; 16 chat questions + 4 raw prompts answered one at a
#      time, then 32 keep-alive clients x 8 requests at once, each answer equal to its sequential
#      one; the RSS after it within RSS_SLACK_MB of the warm-up's; malformed and raw-socket requests;
#      clients that go away (their requests cancelled at once); a normal request; SIGTERM -> exit 0
#   B: --max-connections 10000: 10,000 idle connections held, a new request still answered
#   C: -np 1 --queue 2: 8 long requests at once, the overflow refused with 429 + Retry-After
#   D: -np 1 --max-connections 3: 3 requests waiting, a 4th connection refused with 503 + Retry-After
# No sanitizer report on any server's stderr.
cd "$(dirname "$0")/../.." || exit 1
. tests/sh/lib.sh
if ! command -v node >/dev/null; then
    echo "note: node is not installed: the server load checks are skipped"
    exit 0
fi
QA="$FIX/qa-llama/qa-llama-q8_0.gguf"
LOAD=tests/server/load.mjs
N_IDLE=${N_IDLE:-10000}
RSS_SLACK_MB=64
# ASan's quarantine keeps up to 256 MB of freed memory by default, which would read as growth:
# kept at 16 MB, freed blocks still poisoned for a while, the RSS then says what the server holds
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}quarantine_size_mb=16"
# idle connections: one descriptor each in this shell's node and in the server
ulimit -n 20000 2>/dev/null || ulimit -n "$(ulimit -Hn)" 2>/dev/null
[ "$(ulimit -n)" != unlimited ] && [ "$(ulimit -n)" -lt $((N_IDLE + 200)) ] && N_IDLE=$(( $(ulimit -n) - 200 ))
T_START=$(date +%s.%N)

trap 'stop_server; rm -rf "$TMP"' EXIT
rss_kb() { awk '/^VmRSS:/ { print $2 }' "/proc/$1/status" 2>/dev/null; }
# node's lines go through as they are (ok/not ok, # notes); a node that died without them: not ok
run_mode() {   # description, mode args...
    local desc=$1; shift
    local t0 rc
    t0=$(date +%s.%N)
    node "$LOAD" "$@" >"$TMP/node.txt" 2>"$TMP/node.err"
    rc=$?
    cat "$TMP/node.txt"
    grep -q '^\(not \)\?ok - ' "$TMP/node.txt" || notok "$desc: node printed no result (rc $rc: $(head -c 300 "$TMP/node.err"))"
    echo "# $desc: $(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }') s"
}
no_sanitizer_report() { ! grep -Eq 'ERROR: (Address|Leak)Sanitizer|runtime error:|SUMMARY: (Address|Undefined)' "$1"; }
# SIGTERM: exit 0 (the sanitizer's leak check included)
term_exit0() {
    kill -TERM "$SERVER_PID"
    wait "$SERVER_PID"
    local rc=$?
    SERVER_PID=
    [ "$rc" -eq 0 ]
}

head -n 16 "$FIX/qa-llama/eval-dev.jsonl" >"$TMP/questions.jsonl"

# ---- A: load, abuse, cancellation ----
start_server a "$RUN_SAN" serve "$QA" --port 0 -t 2 -np 8 --timeout 3
check "A (-np 8 --timeout 3): listening, then /health 200" wait_ready
B="http://127.0.0.1:$PORT"
PID_A=$SERVER_PID
run_mode "warm-up" warmup "$B" "$TMP/questions.jsonl"
RSS0=$(rss_kb "$PID_A")
run_mode "load" load "$B" "$TMP/questions.jsonl"
RSS1=$(rss_kb "$PID_A")
check "RSS after the load ($((RSS1 / 1024)) MB) within ${RSS_SLACK_MB} MB of the RSS after warm-up ($((RSS0 / 1024)) MB)" \
    [ "${RSS1:-999999999}" -le $(( ${RSS0:-0} + RSS_SLACK_MB * 1024 )) ]
run_mode "malformed" malformed "$B" 3
run_mode "cancel" cancel "$B"
check "the log names each client that went away mid-request ($(grep -c 'client gone, request cancelled' "$TMP/a.err") lines)" \
    bash -c "[ \$(grep -c 'client gone, request cancelled' '$TMP/a.err') -ge 3 ]"
RSS2=$(rss_kb "$PID_A")
check "RSS after everything ($((RSS2 / 1024)) MB) still within ${RSS_SLACK_MB} MB of the warm-up's" \
    [ "${RSS2:-999999999}" -le $(( ${RSS0:-0} + RSS_SLACK_MB * 1024 )) ]
check "A still answers a normal request" bash -c "curl -s -o '$TMP/last.json' -w '%{http_code}' -d '{\"prompt\": \"Once upon\", \"max_tokens\": 4}' '$B/v1/completions' | grep -q 200 && grep -q '\"choices\"' '$TMP/last.json'"
check "A: SIGTERM -> exit 0 (no leak reported)" term_exit0
check "A: no sanitizer report on stderr" no_sanitizer_report "$TMP/a.err"

# ---- B: idle connections at --max-connections ----
start_server b "$RUN_SAN" serve "$QA" --port 0 -t 2 --max-connections "$N_IDLE" --timeout 60
check "B (--max-connections $N_IDLE --timeout 60): ready" wait_ready
run_mode "idle" idle "http://127.0.0.1:$PORT" "$N_IDLE"
check "B: no warning that the open-file limit cut --max-connections" bash -c "! grep -q 'open-file limit' '$TMP/b.err'"
check "B still answers a normal request" bash -c "[ \"\$(curl -s -o /dev/null -w '%{http_code}' 'http://127.0.0.1:$PORT/v1/models')\" = 200 ]"
check "B: SIGTERM -> exit 0" term_exit0
check "B: no sanitizer report on stderr" no_sanitizer_report "$TMP/b.err"

# ---- C: the queue's limit ----
start_server c "$RUN_SAN" serve "$QA" --port 0 -t 2 -np 1 --queue 2
check "C (-np 1 --queue 2): ready" wait_ready
run_mode "queue" queue "http://127.0.0.1:$PORT"
check "C still answers a normal request" bash -c "[ \"\$(curl -s -o /dev/null -w '%{http_code}' -d '{\"prompt\": \"a\", \"max_tokens\": 2}' 'http://127.0.0.1:$PORT/v1/completions')\" = 200 ]"
check "C: SIGTERM -> exit 0" term_exit0
check "C: no sanitizer report on stderr" no_sanitizer_report "$TMP/c.err"

# ---- D: every connection waiting on an answer ----
start_server d "$RUN_SAN" serve "$QA" --port 0 -t 2 -np 1 --max-connections 3
check "D (-np 1 --max-connections 3): ready" wait_ready
run_mode "busy" busy "http://127.0.0.1:$PORT" 3
check "D: SIGTERM -> exit 0" term_exit0
check "D: no sanitizer report on stderr" no_sanitizer_report "$TMP/d.err"

echo "# test_server_load.sh: $(awk -v a="$T_START" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }') s"
