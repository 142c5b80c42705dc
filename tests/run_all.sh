#!/usr/bin/env bash
# Runs every unit test binary (build/san/tests/*) and every shell test (tests/sh/*.sh) and counts
# their "ok" / "not ok" lines. A binary that crashes or exits non-zero without reporting a failure
# counts as one failure. Ends with "N passed, N failed".
cd "$(dirname "$0")/.." || exit 1
export TS_FIXTURES="${TS_FIXTURES:-$PWD/../shared/fixtures}"
export RUN_SAN="$PWD/build/san/run" RUN_OPT="$PWD/run"
export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=0}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}"
pass=0; fail=0
log=$(mktemp -d)
trap 'rm -rf "$log"' EXIT
run_one() {
    local name=$1; shift
    local out="$log/$(basename "$name").out"
    local t0=$SECONDS
    "$@" >"$out" 2>&1
    local rc=$?
    local p f
    p=$(grep -c '^ok - ' "$out"); f=$(grep -c '^not ok - ' "$out")
    if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then
        f=1; echo "not ok - $name exited with status $rc" >>"$out"
    fi
    pass=$((pass + p)); fail=$((fail + f))
    printf '%-40s %4d passed %3d failed  (%ds)\n' "$name" "$p" "$f" $((SECONDS - t0))
    if [ "$f" -gt 0 ]; then grep -E '^not ok - |ERROR|runtime error|Sanitizer' "$out" | head -40 | sed 's/^/    /'; fi
}
for t in build/san/tests/test_*; do
    [ -x "$t" ] || continue
    run_one "$(basename "$t")" "$t"
done
for t in tests/sh/test_*.sh; do
    [ -f "$t" ] || continue
    run_one "$(basename "$t")" bash "$t"
done
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
