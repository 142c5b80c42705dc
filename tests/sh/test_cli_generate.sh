# What a user sees from ./run: golden greedy text of the real models, --dump-logits layout, --info,
# options and errors.
source "$(dirname "$0")/lib.sh"

# Golden text: llama2.c and llama.cpp agree on it (stories: -n 256 in llama2.c counts the 4 prompt
# positions, so 252 generated; aidreams: 122 generated). Both binaries: -O3 and sanitized.
for RUN in "$RUN_OPT" "$RUN_SAN"; do
    tag=$(basename "$(dirname "$RUN")")/$(basename "$RUN")
    "$RUN" "$FIX/stories260K/stories260K.gguf" "Once upon a time" -n 252 --quiet >"$TMP/s.txt" 2>"$TMP/s.err"
    check "$tag: stories260K golden text (252 tokens)" cmp -s "$TMP/s.txt" "$FIX/stories260K/ref/golden_llamacpp.txt"
    "$RUN" "$FIX/aidreams260K/aidreams260K.gguf" "I dreamed" -n 122 --quiet >"$TMP/a.txt" 2>"$TMP/a.err"
    check "$tag: aidreams260K golden text (122 tokens)" cmp -s "$TMP/a.txt" "$FIX/aidreams260K/ref/golden_llamacpp.txt"
done
check "llama2.c's golden file equals llama.cpp's (fixture sanity)" cmp -s "$FIX/stories260K/golden_run_c_t0_n256_once_upon_a_time.txt" "$FIX/stories260K/ref/golden_llamacpp.txt"

# -t 1 and -t 2 and a small context give the same text
"$RUN_OPT" "$FIX/stories260K/stories260K.gguf" "Once upon a time" -n 60 -t 1 --quiet >"$TMP/t1.txt" 2>/dev/null
"$RUN_OPT" "$FIX/stories260K/stories260K.gguf" "Once upon a time" -n 60 -t 2 -c 128 --quiet >"$TMP/t2.txt" 2>/dev/null
check "-t 1 and -t 2 -c 128 print the same text" cmp -s "$TMP/t1.txt" "$TMP/t2.txt"

# The stats line goes to stderr, and --quiet silences it
"$RUN_OPT" "$FIX/stories260K/stories260K.gguf" "Once" -n 5 >/dev/null 2>"$TMP/err.txt"
check "stats line on stderr with prompt and generation tok/s" grep -q "prompt: 2 tokens.*generation: 5 tokens.*tok/s" "$TMP/err.txt"
"$RUN_OPT" "$FIX/stories260K/stories260K.gguf" "Once" -n 5 --quiet >/dev/null 2>"$TMP/err.txt"
check "--quiet: nothing on stderr" test ! -s "$TMP/err.txt"

# --dump-logits: one row per evaluated position (prompt rows, then one per generated step except the
# last), the fixture layout. Fed the reference's prompt ids, the file has the reference's row count and
# its first rows match the reference (with the exact f32 KV cache, as the reference was made).
ids=$(od -An -v -t d4 -w4 "$FIX/llama-tiny/ref/f32.tokens.i32" | head -22 | tr -d ' ' | paste -sd,)
"$RUN_SAN" "$FIX/llama-tiny/model-f32.gguf" --tokens "$ids" -n 16 -ctk f32 -ctv f32 --dump-logits "$TMP/l.f32" --quiet >/dev/null 2>&1
ref_size=$(stat -c %s "$FIX/llama-tiny/ref/f32.logits.f32")
check "--dump-logits: $((ref_size / 2048)) rows of 512, like the reference" test "$(stat -c %s "$TMP/l.f32")" -eq "$ref_size"
check "--dump-logits: greedy rows equal the reference within 1e-4" \
    python3 -c "
import struct,sys
a=open('$TMP/l.f32','rb').read(); b=open('$FIX/llama-tiny/ref/f32.logits.f32','rb').read()
A=struct.unpack('<%df'%(len(a)//4),a); B=struct.unpack('<%df'%(len(b)//4),b)
sys.exit(0 if len(A)==len(B) and max(abs(x-y) for x,y in zip(A,B)) <= 1e-4 else 1)"

# --info: the geometry table and the layout decisions
"$RUN_OPT" "$FIX/llama-tiny/model-q4_k_m.gguf" --info >"$TMP/info.txt" 2>&1
check "--info: one line per layer" test "$(grep -c '^layer ' "$TMP/info.txt")" -eq 2
check "--info: heads, kv heads, head_dim, rope theta, window, tensor types" \
    grep -q "heads 4 kv_heads 2 head_dim 64 rope theta 10000 dims 64/64 window 0.*q=Q4_K.*v=Q6_K" "$TMP/info.txt"
check "--info: the un-permutation decision" grep -q "attn_q/attn_k: un-permuted from GGUF Llama order" "$TMP/info.txt"
"$RUN_OPT" "$FIX/qwen3-tiny/model-q8_0.gguf" --info >"$TMP/info2.txt" 2>&1
check "--info: qwen3 is not un-permuted" grep -q "used as stored (qwen3 GGUF is not permuted)" "$TMP/info2.txt"

# The matrices copied into 2 MB pages (--no-mmap) or read in place (--mmap): the same logits, bit
# for bit, for each way a matrix reaches the copy (file pages; the loader's un-permuted Q/K rows; a
# tied head shared with the embedding; --quant's re-encoded matrices, also split from a fused QKV;
# q4nx tiles repacked at load; routers beside experts that stay in place; per-layer embedding
# projections; the IQ1, IQ2 and IQ3 types' and TQ1_0's rows in lanes in a form of their own, from
# which a tied head's token rows cannot be read: such a head stays as it is). The copy runs sanitized.
ids="1,5,9,2,7,3,11,4"
for case in "llama-tiny/model-q4_k_m.gguf" "llama-tiny-tied-odd/model-f32.gguf" "llama-tiny/hf --quant q8_0" \
            "phi3-tiny/hf --quant q8_0" "q4nx-gemma3-quarter" "mixtral-tiny/model-q8_0.gguf" \
            "gemma4-ple-tiny/model-f32.gguf" "qwen3-tiny/hf" "iq-grid-tiny/model-iq1_s.gguf" \
            "iq-grid-tiny/model-iq1_m.gguf" "iq-grid-tiny/model-iq3_s.gguf" \
            "iq-grid-tiny/model-iq3_xxs.gguf" "iq-grid-tiny/model-tq1_0.gguf" "iq-grid-tiny/model-iq2_xxs.gguf" \
            "iq-grid-tiny/model-iq2_xs.gguf" "iq-grid-tiny/model-iq2_s.gguf" "iq-grid-tiny/model-ud-mix.gguf"; do
    set -- $case
    model=$1; shift
    "$RUN_SAN" "$FIX/$model" "$@" --no-mmap --tokens "$ids" -n 3 --dump-logits "$TMP/copy.f32" --quiet >/dev/null 2>"$TMP/copy.err"
    "$RUN_OPT" "$FIX/$model" "$@" --mmap --tokens "$ids" -n 3 --dump-logits "$TMP/inplace.f32" --quiet >/dev/null 2>&1
    check "$case: logits with the matrices copied == read in place (--mmap), bit for bit" \
        bash -c "test -s '$TMP/copy.f32' && test ! -s '$TMP/copy.err' && cmp -s '$TMP/copy.f32' '$TMP/inplace.f32'"
done
"$RUN_OPT" "$FIX/llama-tiny/model-q4_k_m.gguf" --no-mmap --info >"$TMP/info3.txt" 2>&1
"$RUN_OPT" "$FIX/llama-tiny/model-q4_k_m.gguf" --mmap --info >"$TMP/info4.txt" 2>&1
check "--info: the matrices' copy and how much of it the kernel put in 2 MB pages (at most the copy)" \
    awk '/matrices: [0-9.]+ MB copied, [0-9.]+ MB of it in 2 MB pages/ { for (i = 1; i < NF; i++) if ($i == "MB") v[++n] = $(i - 1) }
         END { exit !(n >= 2 && v[1] > 0 && v[2] >= 0 && v[2] <= v[1]) }' "$TMP/info3.txt"
check "--info: --mmap reads them in place" grep -q "matrices: read in place from the file (--mmap)" "$TMP/info4.txt"
# By default a one-shot answer too copies them where the copy keeps rows in lanes (AVX-512), which
# decode faster than the file's rows read in place, whatever folios the file's page cache is in
"$RUN_OPT" "$FIX/llama-tiny/model-q4_k_m.gguf" --info >"$TMP/info5.txt" 2>&1
if grep -q "MB with rows in lanes" "$TMP/info3.txt"; then
    check "--info: by default the matrices are copied into lanes" \
        grep -q "MB with rows in lanes (rows in lanes decode faster than the file's; --mmap reads them in place)" "$TMP/info5.txt"
else
    echo "# this kernel set keeps no rows in lanes: the default copy into lanes not checked"
fi

# Sampling: a seed makes it repeatable; different seeds differ
"$RUN_OPT" "$FIX/stories260K/stories260K.gguf" "Once upon a time" -n 40 --temp 1.0 --top-k 40 --top-p 0.95 --min-p 0.05 --repeat-penalty 1.1 --seed 7 --quiet >"$TMP/r1.txt" 2>/dev/null
"$RUN_OPT" "$FIX/stories260K/stories260K.gguf" "Once upon a time" -n 40 --temp 1.0 --top-k 40 --top-p 0.95 --min-p 0.05 --repeat-penalty 1.1 --seed 7 --quiet >"$TMP/r2.txt" 2>/dev/null
"$RUN_OPT" "$FIX/stories260K/stories260K.gguf" "Once upon a time" -n 40 --temp 1.0 --seed 8 --quiet >"$TMP/r3.txt" 2>/dev/null
check "sampling with --seed is repeatable" cmp -s "$TMP/r1.txt" "$TMP/r2.txt"
check "sampling with another seed gives another text" bash -c "! cmp -s '$TMP/r1.txt' '$TMP/r3.txt'"
check "sampling at temperature 1 differs from greedy" bash -c "! cmp -s '$TMP/r1.txt' '$TMP/t1.txt'"

# Errors: one line, naming the problem, exit 1 (expect_error, lib.sh)
expect_error "missing file" "no/such.gguf" "$RUN_SAN" no/such.gguf "hi"
expect_error "prompt longer than the context" "longer than the context" "$RUN_SAN" "$FIX/stories260K/stories260K.gguf" "Once upon a time there was a little girl" -c 4
expect_error "token id out of range" "out of range" "$RUN_SAN" "$FIX/stories260K/stories260K.gguf" --tokens 1,99999
expect_error "bad --tokens" "--tokens" "$RUN_SAN" "$FIX/stories260K/stories260K.gguf" --tokens 1,x
expect_error "unknown option" "unknown option" "$RUN_SAN" "$FIX/stories260K/stories260K.gguf" --frobnicate
expect_error "bad -n" "-n" "$RUN_SAN" "$FIX/stories260K/stories260K.gguf" "x" -n abc
expect_error "vocab-only GGUF cannot generate" "no model weights" "$RUN_SAN" "$FIX/tokenizers/gguf/ggml-vocab-llama-spm.gguf" "hello"
printf 'not a gguf file at all' >"$TMP/bad.gguf"
expect_error "not a GGUF" "bad.gguf" "$RUN_SAN" "$TMP/bad.gguf" "hello"

# --info on a heterogeneous model: each layer at its own geometry, KV bytes per token
"$RUN_OPT" "$FIX/gemma4-tiny/model-f32.gguf" --info >"$TMP/g4.txt" 2>&1
check "--info gemma4: sliding layers 4 KV heads x 32" grep -q "layer  0: sliding heads 4 kv_heads 4 head_dim 32 rope theta 10000 dims 32/32 window 8" "$TMP/g4.txt"
check "--info gemma4: full layers 1 KV head x 64, 16 of 64 dims rotated, V = K" grep -q "layer  2: full    heads 4 kv_heads 1 head_dim 64 rope theta 1e+06 dims 16/64 window 0.* v=k" "$TMP/g4.txt"
check "--info gemma4: KV bytes per token follow the full layers only (2 x 2 layers x 64 x 2 B: f16 by default)" grep -q "kv cache: 512 bytes per token (k f16, v f16" "$TMP/g4.txt"
"$RUN_OPT" "$FIX/gemma4-tiny/model-f32.gguf" --info -ctk f32 -ctv q8_0 >"$TMP/g4.txt" 2>&1
check "--info gemma4 -ctk f32 -ctv q8_0: 2 x 64 x 4 B of keys + 2 x 2 x 34 B of values per token" grep -q "kv cache: 648 bytes per token (k f32, v q8_0" "$TMP/g4.txt"
expect_error "bad -ctk" "expects a KV cache type: f32, f16 or q8_0, got 'q4_0'" "$RUN_SAN" "$FIX/stories260K/stories260K.gguf" "x" -ctk q4_0
expect_error "bad --cache-type-v" "expects a KV cache type" "$RUN_SAN" "$FIX/stories260K/stories260K.gguf" "x" --cache-type-v F16
expect_error "q8_0 cache on head size 8" "needs head sizes that are multiples of 32" "$RUN_SAN" "$FIX/stories260K/stories260K.gguf" "x" -ctv q8_0
"$RUN_OPT" "$FIX/gemma3-tiny/hf-f32" --info >"$TMP/g3.txt" 2>&1
check "--info gemma3 HF: the +1 norm decision" grep -q "norms: 1 + w" "$TMP/g3.txt"
"$RUN_OPT" "$FIX/gemma3-tiny/model-f32.gguf" --info >"$TMP/g3g.txt" 2>&1
check "--info gemma3 GGUF: norms used as stored" grep -q "GGUF stores Gemma's 1 + w already" "$TMP/g3g.txt"
