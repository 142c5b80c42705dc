# Logits that must not move: the SHA-256 (first 16 hex digits) of --dump-logits for every fixture
# model the engine runs (GGUF files, folders, single safetensors files, q4nx packs, --quant), per
# kernel set, in tests/frozen_logits.txt. Recorded by tools/freeze_logits.sh with the binary of
# commit 2872001, before the model-knowledge-as-data refactor (issue 28); the 147 lines recorded
# earlier with 93c8019 (before the architecture-table redesign) were reproduced by it unchanged;
# the Qwen3.5, LFM2 and Granite 4.0-H lines were added when their families came (issue 29), the
# DeepSeek V3 (latent attention) and GLM-4.5 lines with theirs (issue 36). 38 lines were re-recorded
# on 2026-12-07, when Q4_0 and Q5_K got AVX2 kernels and Q4_1 and Q5_1 kernels on both x86 sets (the
# files and --quant q4_0 with those types under those sets: their float sums run in another order;
# test_logits holds them to the references).
# Each line: MODEL [--option=value] SIMD HASH. A kernel set this CPU lacks is skipped.
# Re-record a line only for a change that is meant to move those logits, and say why in the commit.
source "$(dirname "$0")/lib.sh"
IDS=2,50,100,7,30,60,90,120,150,180,210,240,11,13
have=" "
for s in scalar avx2 avx512 neon; do
    "$RUN_OPT" "$FIX/stories260K/stories260K.gguf" --tokens 1 -n 1 --simd $s --quiet >/dev/null 2>&1 && have="$have$s "
done
n=0
while read -r model a b c; do
    [ -n "$model" ] || continue
    opt=(); simd=$a; want=$b
    if [ -n "$c" ]; then opt=(${a/=/ }); simd=$b; want=$c; fi
    case "$have" in *" $simd "*) ;; *) continue ;; esac
    if "$RUN_OPT" "$FIX/$model" "${opt[@]}" -ctk f32 -ctv f32 --tokens "$IDS" -n 6 -t 2 --simd "$simd" --dump-logits "$TMP/d.f32" --quiet >/dev/null 2>"$TMP/e.txt"; then
        got=$(sha256sum <"$TMP/d.f32" | cut -c1-16)
    else
        got="error: $(head -c 200 "$TMP/e.txt")"
    fi
    n=$((n + 1))
    check "logits unchanged: $model ${opt[*]} --simd $simd ($got)" test "$got" = "$want"
done <"$(dirname "$0")/../frozen_logits.txt"
check "frozen logit lines checked ($n)" test "$n" -ge 400
