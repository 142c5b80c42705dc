#!/usr/bin/env bash
# Prints tests/frozen_logits.txt lines (MODEL [--option=value] SIMD HASH) for every fixture model
# this binary runs, on every kernel set this CPU has: the SHA-256 (first 16 hex digits) of
# --dump-logits over the ids test_frozen_logits.sh feeds. Used to freeze the logits before a change
# that must not move them (a refactor); tests/sh/test_frozen_logits.sh checks the lines.
# Usage: tools/freeze_logits.sh [RUN] [FIXTURES] > lines.txt
set -u
run=${1:-./run}
fix=${2:-../shared/fixtures}
ids=2,50,100,7,30,60,90,120,150,180,210,240,11,13
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
sets=""
for s in scalar avx2 avx512 neon; do
    "$run" "$fix/stories260K/stories260K.gguf" --tokens 1 -n 1 --simd $s --quiet >/dev/null 2>&1 && sets="$sets $s"
done
one() {   # relative model path, option or ""
    local rel=$1 opt=$2 s
    for s in $sets; do
        # shellcheck disable=SC2086
        "$run" "$fix/$rel" ${opt/=/ } -ctk f32 -ctv f32 --tokens "$ids" -n 6 -t 2 --simd "$s" \
            --dump-logits "$tmp/d.f32" --quiet >/dev/null 2>&1 || return 0
        echo "$rel${opt:+ $opt} $s $(sha256sum <"$tmp/d.f32" | cut -c1-16)"
    done
}
for model in "$fix"/*/*.gguf "$fix"/*/*/*.gguf "$fix"/*/hf "$fix"/*/hf-f32 "$fix"/*/hf/*.safetensors "$fix"/q4nx-*; do
    [ -e "$model" ] || continue
    rel=${model#"$fix"/}
    one "$rel" ""
done
for model in "$fix"/*/hf "$fix"/*/hf-f32; do
    [ -e "$model/config.json" ] || continue
    rel=${model#"$fix"/}
    one "$rel" --quant=q8_0
    one "$rel" --quant=q4_0
done
