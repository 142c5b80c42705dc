# Regression inputs (tests/regress/<target>/) through the normal binary under ASan/UBSan: the
# hand-made GGUF cases for the published GGUF parser bug classes, and every input the fuzzers
# (tests/fuzz/) found a bug with, in the form a user would hand it to ./run. Each must give
# exit 1, one error line naming the file, and no sanitizer report.
#   gguf/*, gguf_model/*         run FILE hello -n 4 (GGUF bytes in *.bin files)
#   safetensors/*                run FILE.safetensors hello -n 4 (a folder: run FOLDER)
#   hf_config/*/, q4nx/*/        run FOLDER hello -n 4 (config.json, model.safetensors / model.q4nx...)
#   json/*                       as the config.json of a folder
#   tokenizer_json/*, spm_model/* run FILE --tokenize hello (tokenizer_config.json beside it if given)
# Inputs of harness-only targets (chat_template, tokenize) are replayed by `make fuzz-smoke`.
source "$(dirname "$0")/lib.sh"
R=tests/regress
n=0; bad=0
expect_error() {   # name, command...: exit 1, one stderr line naming name, no sanitizer output
    local name=$1; shift
    "$@" >"$TMP/o" 2>"$TMP/e"
    local rc=$?
    n=$((n + 1))
    if [ "$rc" -ne 1 ] || [ "$(wc -l <"$TMP/e")" -ne 1 ] || ! grep -qF "$name" "$TMP/e" ||
       grep -q "Sanitizer\|runtime error" "$TMP/e"; then
        bad=$((bad + 1))
        echo "    $name: rc=$rc $(head -c 300 "$TMP/e")"
    fi
}
for f in "$R"/gguf/* "$R"/gguf_model/*; do
    [ -f "$f" ] && expect_error "$(basename "$f")" "$RUN_SAN" "$f" hello -n 4
done
for f in "$R"/safetensors/*; do
    [ -e "$f" ] || continue
    if [ -d "$f" ]; then   # shards are stored as *.st (no model-file names in the repo)
        cp -r "$f" "$TMP/"; for s in "$TMP/$(basename "$f")"/*.st; do [ -f "$s" ] && mv "$s" "${s%.st}.safetensors"; done
        expect_error "$(basename "$f")" "$RUN_SAN" "$TMP/$(basename "$f")" hello -n 4
    else cp "$f" "$TMP/$(basename "$f").safetensors"; expect_error "$(basename "$f")" "$RUN_SAN" "$TMP/$(basename "$f").safetensors" hello -n 4; fi
done
for d in "$R"/hf_config/*/ "$R"/q4nx/*/; do
    [ -d "$d" ] && expect_error "$(basename "$d")" "$RUN_SAN" "${d%/}" hello -n 4
done
for f in "$R"/json/*; do
    [ -f "$f" ] || continue
    mkdir -p "$TMP/json-$(basename "$f")"; cp "$f" "$TMP/json-$(basename "$f")/config.json"
    expect_error "json-$(basename "$f")" "$RUN_SAN" "$TMP/json-$(basename "$f")" hello -n 4
done
for f in "$R"/tokenizer_json/*; do
    [ -e "$f" ] || continue
    if [ -d "$f" ]; then expect_error "$(basename "$f")" "$RUN_SAN" "$f/tokenizer.json" --tokenize hello
    else cp "$f" "$TMP/$(basename "$f").json"; expect_error "$(basename "$f")" "$RUN_SAN" "$TMP/$(basename "$f").json" --tokenize hello; fi
done
for f in "$R"/spm_model/*; do
    [ -f "$f" ] || continue
    cp "$f" "$TMP/$(basename "$f").model"
    expect_error "$(basename "$f")" "$RUN_SAN" "$TMP/$(basename "$f").model" --tokenize hello
done
check "regression inputs exist" test "$n" -ge 30
check "every regression input: exit 1 with one line naming the file, no sanitizer report ($bad of $n misbehaved)" test "$bad" -eq 0
