#!/usr/bin/env bash
# Runs every libFuzzer harness (build/fuzz/fuzz_*, from `make fuzz`) for SECONDS each (or until
# FUZZ_RUNS executions, default 10 million, whichever comes first) and prints one table row per
# harness: executions, seconds, executions/s, corpus size, crashes. Exit 1 if any harness crashed,
# leaked, hung (-timeout) or ran out of memory (-rss_limit_mb).
#   tools/fuzz_campaign.sh SECONDS [NAME...]      e.g. tools/fuzz_campaign.sh 1800
# Environment: FUZZ_JOBS (harnesses run at once, default 1), FUZZ_RUNS, TS_FIXTURES;
# FUZZ_REPORT_ONLY=1 prints the table of the last run's logs without running anything.
# The grown corpus is kept in build/fuzz/work/NAME (so campaigns accumulate), crash inputs in
# build/fuzz/crashes/, logs in build/fuzz/logs/NAME.log. Seeds: tests/fuzz/corpus/NAME.
set -u
cd "$(dirname "$0")/.." || exit 1
secs=${1:?usage: tools/fuzz_campaign.sh SECONDS [NAME...]}
shift
runs=${FUZZ_RUNS:-10000000}
jobs=${FUZZ_JOBS:-1}
[ -d /dev/shm ] && [ -w /dev/shm ] && export TMPDIR="${TMPDIR:-/dev/shm}"   # scratch files of path-based harnesses
export TS_FIXTURES="${TS_FIXTURES:-$PWD/../shared/fixtures}"
export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}"
if [ $# -gt 0 ]; then names=("$@"); else
    names=(); for b in build/fuzz/fuzz_*; do [ -x "$b" ] && names+=("$(basename "$b" | sed 's/^fuzz_//')"); done
fi
[ ${#names[@]} -gt 0 ] || { echo "no harnesses in build/fuzz (run make fuzz)"; exit 1; }
mkdir -p build/fuzz/logs build/fuzz/crashes

run_one() {
    local name=$1 work=build/fuzz/work/$1 log=build/fuzz/logs/$1.log
    mkdir -p "$work"
    local extra=(); [ -d tests/regress/"$name" ] && extra=(tests/regress/"$name")   # found bugs replay first
    local t0=$SECONDS
    build/fuzz/fuzz_"$name" -max_total_time="$secs" -runs="$runs" -rss_limit_mb=2048 -timeout=10 \
        -print_final_stats=1 -artifact_prefix=build/fuzz/crashes/"$name"- \
        "$work" tests/fuzz/corpus/"$name" "${extra[@]}" >"$log" 2>&1
    echo "rc=$? elapsed=$((SECONDS - t0))" >>"$log"
}

i=0
[ "${FUZZ_REPORT_ONLY:-0}" = 1 ] && names_to_run=() || names_to_run=("${names[@]}")
for n in "${names_to_run[@]}"; do
    run_one "$n" &
    i=$((i + 1))
    if [ $((i % jobs)) -eq 0 ]; then wait; fi
done
wait

fail=0
printf '%-16s %12s %6s %9s %8s %s\n' harness execs secs exec/s corpus result
for n in "${names[@]}"; do
    log=build/fuzz/logs/$n.log
    execs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$' | tail -1)
    rc=$(grep -o '^rc=[0-9]*' "$log" | tail -1 | cut -d= -f2)
    el=$(grep -o 'elapsed=[0-9]*' "$log" | tail -1 | cut -d= -f2)
    corpus=$(ls build/fuzz/work/"$n" | wc -l)
    result=ok
    if [ "${rc:-1}" -ne 0 ] || grep -q 'ERROR: \(AddressSanitizer\|LeakSanitizer\|libFuzzer\)\|runtime error' "$log"; then
        result="CRASH (see $log)"; fail=1
    fi
    [ -n "$execs" ] || execs=$(grep -o '^#[0-9]*' "$log" | tail -1 | tr -d '#')
    rate=0; [ "${el:-0}" -gt 0 ] && rate=$(( ${execs:-0} / el ))
    printf '%-16s %12s %6s %9s %8s %s\n' "$n" "${execs:-?}" "${el:-?}" "$rate" "$corpus" "$result"
done
exit $fail
