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
