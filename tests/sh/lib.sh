# Shared helpers for shell tests: ok/notok print the lines tests/run_all.sh counts.
FIX="${TS_FIXTURES:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)/../shared/fixtures}"
RUN_SAN="${RUN_SAN:-./build/san/run}"
RUN_OPT="${RUN_OPT:-./run}"
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
# a chat on a terminal keeps its history under $XDG_STATE_HOME: the tests' own, not the user's
export XDG_STATE_HOME="$TMP/xdg-state"
ok()    { echo "ok - $*"; }
notok() { echo "not ok - $*"; }
check() { local desc=$1; shift; if "$@"; then ok "$desc"; else notok "$desc"; fi; }
# --batch takes its shard from a cluster scheduler's environment: the tests choose their own
unset SLURM_ARRAY_TASK_ID SLURM_ARRAY_TASK_COUNT SLURM_ARRAY_TASK_MIN SLURM_ARRAY_TASK_MAX SLURM_ARRAY_TASK_STEP JOB_COMPLETION_INDEX
# A command that must fail as an error should: exit 1, one line on stderr matching the pattern
expect_error() {   # description, pattern, command...
    local desc=$1 pat=$2; shift 2
    "$@" >"$TMP/o.txt" 2>"$TMP/e.txt"
    local rc=$?
    if [ "$rc" -eq 1 ] && [ "$(wc -l <"$TMP/e.txt")" -eq 1 ] && grep -q -e "$pat" "$TMP/e.txt"; then ok "$desc"
    else notok "$desc (rc=$rc: $(head -c 300 "$TMP/e.txt"))"; fi
}
# A --batch output file, its timing field dropped (what two runs of the same lines must share)
strip_ms() { python3 -c "
import json, sys
for l in open(sys.argv[1]):
    o = json.loads(l); o.pop('ms', None); print(json.dumps(o))" "$1"; }

# `run serve` tests: start_server NAME ARGS... starts a server in the background (stdout NAME.out,
# stderr NAME.err), waits for its "listening on" line and sets PORT and SERVER_PID; wait_ready waits
# for /health to say 200; stop_server kills it. The caller's EXIT trap should call stop_server.
SERVER_PID=
stop_server() { [ -n "$SERVER_PID" ] && { kill -KILL "$SERVER_PID" 2>/dev/null; wait "$SERVER_PID" 2>/dev/null; }; SERVER_PID=; }
start_server() {
    local name=$1; shift
    "$@" >"$TMP/$name.out" 2>"$TMP/$name.err" &
    SERVER_PID=$!
    PORT=
    for _ in $(seq 1 200); do
        PORT=$(sed -n 's|^listening on http://.*:\([0-9]*\)$|\1|p' "$TMP/$name.out")
        [ -n "$PORT" ] && return 0
        kill -0 "$SERVER_PID" 2>/dev/null || return 1
        sleep 0.05
    done
    return 1
}
wait_ready() {
    for _ in $(seq 1 600); do
        [ "$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$PORT/health")" = 200 ] && return 0
        sleep 0.05
    done
    return 1
}
