# --verify on every fixture model (GGUF files, Hugging Face folders, q4nx packs; -O3 build, and the
# sanitized build on a few): prefill + cached
# decode equals a full re-forward, batched equals sequential prefill, truncate + re-evaluate equals
# the full forward. 14 prompt ids + 8 generated = 22 positions, past the Gemma fixtures' sliding
# window of 8, so the ring buffers wrap.
source "$(dirname "$0")/lib.sh"
IDS=2,50,100,7,30,60,90,120,150,180,210,240,11,13

verify() {   # binary, description, model, options...
    local run=$1 desc=$2 model=$3; shift 3
    "$run" "$model" --verify "$@" >"$TMP/v.txt" 2>&1
    local rc=$?
    if [ "$rc" -eq 0 ] && [ "$(grep -c '^PASS ' "$TMP/v.txt")" -eq 3 ] && grep -qx "all checks passed" "$TMP/v.txt"; then ok "$desc"
    else notok "$desc (rc=$rc: $(tr '\n' ' ' <"$TMP/v.txt" | head -c 400))"; fi
}

# Fixture models the engine does not run yet must be refused: exit 1, one line naming the file and
# what is missing, never an answer. Each line: a glob of fixture paths, and the reason's pattern.
REFUSED=(
    # an importance matrix is not a model at all
    "iq-grid-tiny/imatrix-*|no general.architecture"
)
refused_reason() {   # prints the reason pattern when the model is expected to be refused
    local rel=$1 entry
    for entry in "${REFUSED[@]}"; do
        # shellcheck disable=SC2053
        if [[ $rel == ${entry%%|*} ]]; then echo "${entry#*|}"; return 0; fi
    done
    return 1
}
n=0; nr=0
for model in "$FIX"/*/*.gguf "$FIX"/*/hf "$FIX"/*/hf-f32 "$FIX"/q4nx-*; do
    [ -e "$model/config.json" ] || [ -f "$model" ] || continue
    rel=${model#$FIX/}
    if reason=$(refused_reason "$rel"); then
        "$RUN_OPT" "$model" --verify --tokens "$IDS" -n 8 -t 1 >"$TMP/r.txt" 2>&1
        rc=$?
        if [ "$rc" -eq 1 ] && [ "$(wc -l <"$TMP/r.txt")" -eq 1 ] && grep -Eq "^error: .*${rel%%/*}.*($reason)" "$TMP/r.txt"; then
            ok "refused: $rel ($(cut -c1-160 "$TMP/r.txt"))"
        else
            notok "refused: $rel (rc=$rc: $(head -c 300 "$TMP/r.txt"))"
        fi
        nr=$((nr + 1))
        continue
    fi
    verify "$RUN_OPT" "--verify $rel" "$model" --tokens "$IDS" -n 8 -t 1
    n=$((n + 1))
done
check "models verified: every GGUF, HF folder and q4nx pack the engine runs ($n), and $nr refused" test "$n" -ge 50
# the sanitized build on a few formats, and options
verify "$RUN_SAN" "sanitized: --verify gemma4-ple-tiny/hf-f32" "$FIX/gemma4-ple-tiny/hf-f32" --tokens "$IDS" -n 8 -t 1
verify "$RUN_SAN" "sanitized: --verify q4nx-gemma3-quarter" "$FIX/q4nx-gemma3-quarter" --tokens "$IDS" -n 8 -t 1
verify "$RUN_SAN" "sanitized: --verify the UD-style mix of 14 low-bit types" "$FIX/iq-grid-tiny/model-ud-mix.gguf" --tokens "$IDS" -n 8 -t 2
verify "$RUN_SAN" "sanitized: --verify llama-tiny/hf --quant q8_0" "$FIX/llama-tiny/hf" --quant q8_0 --tokens "$IDS" -n 8 -t 1
verify "$RUN_SAN" "sanitized: --verify llama-tiny/hf --quant q4_0" "$FIX/llama-tiny/hf" --quant q4_0 --tokens "$IDS" -n 8 -t 1
verify "$RUN_SAN" "sanitized: --verify with 2 threads (gemma4-tiny)" "$FIX/gemma4-tiny/model-f32.gguf" --tokens "$IDS" -n 8 -t 2
verify "$RUN_SAN" "sanitized: --verify with the scalar kernels (qa-llama Q8_0)" "$FIX/qa-llama/qa-llama-q8_0.gguf" --simd scalar --tokens "$IDS" -n 8 -t 1
verify "$RUN_SAN" "sanitized: --verify a text prompt through the chat template (qa-llama)" "$FIX/qa-llama/qa-llama-q8_0.gguf" "Who is the captain of Vega?" -t 1

# The report: one line per check with its largest logit difference
"$RUN_SAN" "$FIX/stories260K/stories260K.gguf" --verify "Once upon a time" -n 4 -t 1 >"$TMP/r.txt" 2>&1
check "report: prompt size and kernel set, then max |logit diff| per check" bash -c "
    grep -q '^verify: 5 prompt tokens + 4 generated, kernels ' '$TMP/r.txt' &&
    grep -q '^PASS prefill + cached decode vs full re-forward .*max |logit diff| [0-9.e+-]* over 9 rows' '$TMP/r.txt' &&
    grep -q '^PASS batched vs sequential prefill .*over 9 rows' '$TMP/r.txt' &&
    grep -q '^PASS truncate to 2 + re-evaluate vs full re-forward .*over 7 rows' '$TMP/r.txt'"
"$RUN_SAN" "$FIX/stories260K/stories260K.gguf" --verify --tokens 1,99999 >/dev/null 2>"$TMP/e.txt"
check "--verify with a bad token id: exit 1 and an error" bash -c "[ $? -eq 1 ] && grep -q 'out of range' '$TMP/e.txt'"
