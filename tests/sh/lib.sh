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
