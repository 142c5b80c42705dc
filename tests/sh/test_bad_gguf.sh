# Damaged GGUFs through the CLI: every file of the damaged corpus (written by test_gguf, ~110 cases:
# truncations, bad magic, huge counts and lengths, offsets past the end, overlaps, unknown types,
# bad alignment, nested arrays...) gives exit 1, one error line naming the file, no sanitizer report.
source "$(dirname "$0")/lib.sh"
mkdir -p "$TMP/bad"
TS_BAD_GGUF_DIR="$TMP/bad" ./build/san/tests/test_gguf >/dev/null 2>&1
n=$(ls "$TMP/bad" | wc -l)
check "damaged corpus written ($n files)" test "$n" -ge 50
bad=0
for f in "$TMP/bad"/*.gguf; do
    "$RUN_SAN" "$f" "hello" -n 4 >"$TMP/o" 2>"$TMP/e"
    rc=$?
    if [ "$rc" -ne 1 ] || [ "$(wc -l <"$TMP/e")" -ne 1 ] || ! grep -qF "$(basename "$f")" "$TMP/e" \
       || grep -q "Sanitizer\|runtime error" "$TMP/e"; then
        bad=$((bad + 1))
        echo "    $(basename "$f"): rc=$rc $(head -c 200 "$TMP/e")"
    fi
done
check "every damaged GGUF: exit 1 with one line naming the file ($bad of $n misbehaved)" test "$bad" -eq 0
