#!/usr/bin/env bash
# Runs every unit test binary (build/san/tests/*) and every shell test (tests/sh/*.sh) and counts
# their "ok" / "not ok" lines. A binary that crashes or exits non-zero without reporting a failure
# counts as one failure. Ends with "N passed, N failed".
cd "$(dirname "$0")/.." || exit 1
export TS_FIXTURES="${TS_FIXTURES:-$PWD/../shared/fixtures}"
export RUN_SAN="$PWD/build/san/run" RUN_OPT="$PWD/run"
export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=0}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}"
# As many tests at a time as CPUs online (TS_TEST_JOBS sets it; 2 here): most
# run on one thread, so the machine's two cores finish the suite in about half the time. Each
# test's lines are printed in the order below once all have ended, so the log reads the same.
max_jobs=${TS_TEST_JOBS:-$(nproc 2>/dev/null || echo 1)}
[ "$max_jobs" -ge 1 ] 2>/dev/null || max_jobs=1
log=$(mktemp -d)
trap 'rm -rf "$log"' EXIT
run_one() {   # NAME CMD...: runs CMD, leaves "passed failed seconds" in $log/NAME.sum
    local name=$1; shift
    local out="$log/$name.out"
    local t0=$SECONDS
    "$@" >"$out" 2>&1
    local rc=$?
    local p f
    p=$(grep -c '^ok - ' "$out"); f=$(grep -c '^not ok - ' "$out")
    if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then
        f=1; echo "not ok - $name exited with status $rc" >>"$out"
    fi
    echo "$p $f $((SECONDS - t0))" >"$log/$name.sum"
}
names=()
start() {   # NAME CMD...: in the background, never more than $max_jobs at once
    while [ "$(jobs -rp | wc -l)" -ge "$max_jobs" ]; do wait -n; done
    names+=("$1")
    run_one "$@" &
}
# The longest first (the cross-compiled NEON tests under qemu, about 7 minutes): started last, it
# ran alone at the end while the other core idled.
longest=tests/sh/test_aarch64_build.sh
[ -f "$longest" ] && start "$(basename "$longest")" bash "$longest"
for t in build/san/tests/test_*; do
    [ -x "$t" ] || continue
    start "$(basename "$t")" "$t"
done
for t in tests/sh/test_*.sh; do
    [ -f "$t" ] && [ "$t" != "$longest" ] || continue
    start "$(basename "$t")" bash "$t"
done
wait
pass=0; fail=0
for name in "${names[@]}"; do
    read -r p f secs <"$log/$name.sum" || { p=0; f=1; secs=0; echo "not ok - $name left no result" >>"$log/$name.out"; }
    pass=$((pass + p)); fail=$((fail + f))
    printf '%-40s %4d passed %3d failed  (%ds)\n' "$name" "$p" "$f" "$secs"
    if [ "$f" -gt 0 ]; then grep -E '^not ok - |ERROR|runtime error|Sanitizer' "$log/$name.out" | head -40 | sed 's/^/    /'; fi
done
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
