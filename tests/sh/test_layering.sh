# The dependency rules of src/ (tools/check_layers.sh): includes run one way (core -> io -> text |
# template | kernels -> load -> run -> generate -> cli), the module graph (includes and uses
# between path stems) has no cycle, every export carries its module prefix. The checker is itself
# tested on planted violations.
source "$(dirname "$0")/lib.sh"
ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
CHECK="$ROOT/tools/check_layers.sh"
OBJ="$ROOT/build/opt/obj"

"$CHECK" "$ROOT/src" "$OBJ" >"$TMP/out.txt" 2>&1
check "src/ keeps the layer order, has no module cycle and prefixes its exports ($(head -c 300 "$TMP/out.txt" | tr '\n' ' '))" test ! -s "$TMP/out.txt"

# A fresh copy of src/ with lines appended to some of its files: "FILE LINE" pairs on stdin.
plant() {
    rm -rf "$TMP/src" && cp -r "$ROOT/src" "$TMP/src"
    while read -r f line; do printf '%s\n' "$line" >>"$TMP/src/$f"; done
}

# a planted backwards include is caught, naming the file and the include
plant <<'EOF'
io/json.c #include "load/geometry.h"
EOF
"$CHECK" "$TMP/src" >"$TMP/planted.txt" 2>&1
rc=$?
check "a planted io/ -> load/ include fails the check" test "$rc" -ne 0
check "... and the message names it" grep -q 'io/json.c: includes "load/geometry.h"' "$TMP/planted.txt"
echo '#include "kernels/types.h"' >"$TMP/src/text/extra.c"
"$CHECK" "$TMP/src" 2>&1 | grep -q 'text/extra.c: includes "kernels/types.h"'
check "a planted include between siblings (text -> kernels) is caught" test $? -eq 0

# A backwards include inside each folder: an early file includes the header of a module that
# depends on it. The cycle's line must name both arrows' files.
#   folder  allow  planted lines                               the line names (grep -F, each)
cycle_case() {
    local folder=$1 allow=$2; shift 2
    plant
    LAYERS_ALLOW_CYCLES_IN=$allow "$CHECK" "$TMP/src" "$OBJ" >"$TMP/cycle.txt" 2>&1
    local rc=$? line
    check "a backwards include inside $folder/ fails the check" test "$rc" -ne 0
    line=$(grep '^module cycle: ' "$TMP/cycle.txt" | grep -F "$1" | grep -F "$2")
    check "... on one module-cycle line naming '$1' and '$2' ($(head -c 300 "$TMP/cycle.txt" | tr '\n' ' '))" test -n "$line"
}
# core/ has no module that depends on another yet: the first line makes one
cycle_case core "" 'core/utf8.c includes "core/error.h"' 'core/error.c includes "core/utf8.h"' <<'EOF'
core/utf8.c #include "core/error.h"
core/error.c #include "core/utf8.h"
EOF
# gguf.c reads through file.c
cycle_case io "" 'io/file.c includes "io/gguf.h"' 'io/gguf.c includes "io/file.h"' <<'EOF'
io/file.c #include "io/gguf.h"
EOF
# bpe.c looks tokens up in vocab.c
cycle_case text "" 'text/vocab.c includes "text/bpe.h"' 'text/bpe.h includes "text/vocab.h"' <<'EOF'
text/vocab.c #include "text/bpe.h"
EOF
# the chat template renders through jinja_eval.c, which builds values with jinja_value.c
cycle_case template "" 'template/jinja_value.c includes "template/chat_template.h"' 'template/chat_template.o uses jinja_' <<'EOF'
template/jinja_value.c #include "template/chat_template.h"
EOF
# the type table in types.c lists f16.c's traits (the hub that kernels_internal.h once was)
cycle_case kernels "" 'kernels/f16.c includes "kernels/types.h"' 'kernels/types.o uses f16_traits of kernels/f16.o' <<'EOF'
kernels/f16.c #include "kernels/types.h"
EOF
# the builder's helpers hand out what the hyper-parameter table read (tensor_source.h includes hparams.h)
cycle_case load "" 'load/hparams.c includes "load/builder.h"' 'load/tensor_source.h includes "load/hparams.h"' <<'EOF'
load/hparams.c #include "load/builder.h"
EOF
# a context holds the KV cache (context.h includes kv_cache.h)
cycle_case run "" 'run/kv_cache.c includes "run/forward.h"' 'run/context.h includes "run/kv_cache.h"' <<'EOF'
run/kv_cache.c #include "run/forward.h"
EOF
# answer.c includes the sampler's header (generate/sampler.h) and calls it
cycle_case generate "" 'generate/sampler.c includes "generate/answer.h"' 'generate/answer.c includes "generate/sampler.h"' <<'EOF'
generate/sampler.c #include "generate/answer.h"
EOF
# answers.c includes lines.h (cli/ is seen by includes only: it is not in the objects)
cycle_case cli "" 'cli/lines.c includes "cli/answers.h"' 'cli/answers.c includes "cli/lines.h"' <<'EOF'
cli/lines.c #include "cli/answers.h"
EOF

# the tolerance, for a refactor under way, is by folder: a cycle inside a folder named is not reported
plant <<'EOF'
load/hparams.c #include "load/builder.h"
EOF
LAYERS_ALLOW_CYCLES_IN="load" "$CHECK" "$TMP/src" "$OBJ" >"$TMP/tolerated.txt" 2>&1
check "a cycle inside a tolerated folder (LAYERS_ALLOW_CYCLES_IN=load) passes ($(head -c 200 "$TMP/tolerated.txt" | tr '\n' ' '))" test ! -s "$TMP/tolerated.txt"

# a planted call cycle and an unprefixed export, in objects built here
mkdir -p "$TMP/empty" "$TMP/obj/text"
printf 'int vocab_b(int);\nint bpe_a(int x) { return x ? vocab_b(x - 1) : 0; }\n' >"$TMP/bpe.c"
printf 'int bpe_a(int);\nint vocab_b(int x) { return bpe_a(x); }\n' >"$TMP/vocab.c"
printf 'int helper(void) { return 1; }\n' >"$TMP/tokenizer.c"
cc -c "$TMP/bpe.c" -o "$TMP/obj/text/bpe.o" && cc -c "$TMP/vocab.c" -o "$TMP/obj/text/vocab.o" && cc -c "$TMP/tokenizer.c" -o "$TMP/obj/text/tokenizer.o"
"$CHECK" "$TMP/empty" "$TMP/obj" </dev/null >"$TMP/cyc.txt" 2>&1
check "a planted call cycle between two files is caught ($(head -c 200 "$TMP/cyc.txt" | tr '\n' ' '))" \
    grep -q '^module cycle: text/bpe -> text/vocab -> text/bpe (text/bpe.o uses vocab_b of text/vocab.o; text/vocab.o uses bpe_a of text/bpe.o)$' "$TMP/cyc.txt"
check "an export without its module prefix is caught" grep -q "text/tokenizer.o: exports 'helper' without its module prefix" "$TMP/cyc.txt"
