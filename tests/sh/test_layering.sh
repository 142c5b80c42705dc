# The dependency rules of src/ (tools/check_layers.sh): includes run one way (core -> io -> text |
# kernels -> model -> cli), no call cycles between files, every export carries its module prefix.
# The checker is itself tested on planted violations.
source "$(dirname "$0")/lib.sh"
ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
CHECK="$ROOT/tools/check_layers.sh"

"$CHECK" "$ROOT/src" "$ROOT/build/opt/obj" >"$TMP/out.txt" 2>&1
check "src/ keeps the layer order, has no call cycle and prefixes its exports ($(head -c 300 "$TMP/out.txt"))" test ! -s "$TMP/out.txt"

# a planted backwards include is caught, naming the file and the include
cp -r "$ROOT/src" "$TMP/src"
echo '#include "load/geometry.h"' >>"$TMP/src/io/json.c"
"$CHECK" "$TMP/src" >"$TMP/planted.txt" 2>&1
rc=$?
check "a planted io/ -> model/ include fails the check" test "$rc" -ne 0
check "... and the message names it" grep -q 'io/json.c: includes "load/geometry.h"' "$TMP/planted.txt"
echo '#include "kernels/types.h"' >"$TMP/src/text/extra.c"
"$CHECK" "$TMP/src" 2>&1 | grep -q 'text/extra.c: includes "kernels/types.h"'
check "a planted include between siblings (text -> kernels) is caught" test $? -eq 0

# a planted call cycle and an unprefixed export, in objects built here
mkdir -p "$TMP/empty" "$TMP/obj/text"
printf 'int vocab_b(int);\nint bpe_a(int x) { return x ? vocab_b(x - 1) : 0; }\n' >"$TMP/bpe.c"
printf 'int bpe_a(int);\nint vocab_b(int x) { return bpe_a(x); }\n' >"$TMP/vocab.c"
printf 'int helper(void) { return 1; }\n' >"$TMP/tokenizer.c"
cc -c "$TMP/bpe.c" -o "$TMP/obj/text/bpe.o" && cc -c "$TMP/vocab.c" -o "$TMP/obj/text/vocab.o" && cc -c "$TMP/tokenizer.c" -o "$TMP/obj/text/tokenizer.o"
"$CHECK" "$TMP/empty" "$TMP/obj" >"$TMP/cyc.txt" 2>&1
check "a planted call cycle between two files is caught ($(head -c 200 "$TMP/cyc.txt"))" grep -q 'call cycle between files:.*text/bpe.o.*text/vocab.o\|call cycle between files:.*text/vocab.o.*text/bpe.o' "$TMP/cyc.txt"
check "an export without its module prefix is caught" grep -q "text/tokenizer.o: exports 'helper' without its module prefix" "$TMP/cyc.txt"
