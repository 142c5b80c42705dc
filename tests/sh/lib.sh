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
