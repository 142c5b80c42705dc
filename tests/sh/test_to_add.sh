# CONTRIBUTING.md's "To add ..." table against the code (tools/check_to_add.sh): it holds today,
# and the check fails, naming the problem, on each kind of drift planted in a copy.
source "$(dirname "$0")/lib.sh"
ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
CHECK="$ROOT/tools/check_to_add.sh"

"$CHECK" "$ROOT/CONTRIBUTING.md" "$ROOT" >"$TMP/out.txt" 2>&1
check "the to-add table matches the code ($(head -c 300 "$TMP/out.txt"))" test ! -s "$TMP/out.txt"
check "... and checks its rows" test "$(awk '/^<!-- to-add checks:/{on=1;next} on&&/^-->/{on=0} on' "$ROOT/CONTRIBUTING.md" | grep -c .)" -ge 7

mkdir -p "$TMP/root"
cp -r "$ROOT/src" "$ROOT/include" "$TMP/root/"
plant() {   # sed expression on the doc -> the check's output
    sed "$1" "$ROOT/CONTRIBUTING.md" >"$TMP/root/CONTRIBUTING.md"
    "$CHECK" "$TMP/root/CONTRIBUTING.md" "$TMP/root" >"$TMP/planted.txt" 2>&1
}
plant 's#, `src/run/layer_kind.c` (its row)##'
check "a file dropped from a row is caught, named" grep -q "to-add 'a layer kind': src/run/layer_kind.c names the example" "$TMP/planted.txt"
check "... with the count that no longer matches" grep -q "to-add 'a layer kind': the row says 9 files but names 8" "$TMP/planted.txt"
plant 's#| a container | 9 files:#| a container | 8 files:#'
check "a wrong count is caught" grep -q "to-add 'a container': the row says 8 files but names 9" "$TMP/planted.txt"
plant 's#`src/kernels/types.c` (the type table)#`src/kernels/type_table.c` (the type table)#'
check "a file that does not exist is caught" grep -q "to-add 'a tensor type': src/kernels/type_table.c does not exist" "$TMP/planted.txt"
cp "$ROOT/CONTRIBUTING.md" "$TMP/root/CONTRIBUTING.md"
printf '/* a new file that branches on a kind */\nint x(int k) { return k == LAYER_ATTENTION; }\n' >"$TMP/root/src/run/extra.c"
"$CHECK" "$TMP/root/CONTRIBUTING.md" "$TMP/root" >"$TMP/planted.txt" 2>&1
rc=$?
check "code naming an example outside the row's files is caught" grep -q "to-add 'a layer kind': src/run/extra.c names the example" "$TMP/planted.txt"
check "... and the check exits 1" test "$rc" -eq 1
