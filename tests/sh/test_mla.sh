# DeepSeek V3 (latent attention) and GLM-4.5 through the command line (README-mla.md), beyond
# test_logits' references and test_mla's rewritten files: --info says what a position of context
# costs (the latent cache: per layer r + d_r key values and r value values, f16) and what each layer
# is; -v says how many weight bytes a decode step reads (fewer than the file's: only the chosen
# experts); GLM-4.5's NextN block is known and not run; a machine without room for the copy runs
# from the mapped file, says so, and answers the same.
source "$(dirname "$0")/lib.sh"
DS="$FIX/deepseek2-tiny/model-q8_0.gguf"
GLM="$FIX/glm4moe-tiny/model-f32.gguf"

"$RUN_OPT" --info "$DS" >"$TMP/info.txt" 2>&1
# r 64, d_r 16, 3 layers: 3 x (80 + 64) values x 2 bytes
check "--info deepseek2: every layer latent attention (kv_rank 64, head 32+16, value 32), the cache 864 bytes per token" bash -c "
    [ \$(grep -c '^layer  [0-2]: latent  heads 4 q_rank 64 kv_rank 64 head 32+16 value 32 ' '$TMP/info.txt') -eq 3 ] &&
    grep -q '^kv cache: 864 bytes per token' '$TMP/info.txt' &&
    grep -q 'experts 4/16 x32 silu sigmoid-topk-renorm select-bias groups 2/4 x2.5 shared 32' '$TMP/info.txt'"
"$RUN_OPT" --info -ctk f32 -ctv q8_0 "$DS" 2>&1 | grep '^kv cache' >"$TMP/kv.txt"
# keys 80 f32 (320 bytes), values 64 in Q8_0 blocks (2 x 34 bytes), 3 layers
check "--info deepseek2 with f32 keys and q8_0 values: 1164 bytes per token" grep -q '^kv cache: 1164 bytes per token' "$TMP/kv.txt"

"$RUN_OPT" --info "$GLM" >"$TMP/ginfo.txt" 2>&1
check "--info glm4moe: 3 layers run, partial RoPE 24 of 48, q/k norms and biases, the NextN block (blk.3) known and not run" bash -c "
    grep -q 'layers 3 ' '$TMP/ginfo.txt' && grep -q 'rope theta 1e+06 dims 24/48' '$TMP/ginfo.txt' &&
    grep -q 'bias: q k v' '$TMP/ginfo.txt' && grep -q 'norms: attn q k ffn' '$TMP/ginfo.txt' &&
    grep -q 'blk.3.nextn.eh_proj.weight: ignored (a multi-token-prediction block' '$TMP/ginfo.txt'"

# -v: the weight bytes of a decode step, fewer than the file's matrices (4 of 16 experts chosen)
"$RUN_OPT" "$DS" --tokens 1,50,100,7 -n 8 -v >"$TMP/v.out" 2>"$TMP/v.err"
file_mb=$(python3 -c "import os; print(os.path.getsize('$DS') / 1e6)")
step_mb=$(sed -n 's/.* \([0-9.]*\) MB of weights read per step.*/\1/p' "$TMP/v.err")
check "-v: a decode step reads $step_mb MB of weights, less than the file's $file_mb MB" \
    python3 -c "import sys; s = float('${step_mb:-0}'); sys.exit(0 if 0 < s < 0.75 * $file_mb else 1)"

# no room for the copy: the matrices stay in the file, --info says so, the answer is the same
"$RUN_OPT" "$DS" --tokens 1,50,100,7,30,60 -n 8 -t 2 --quiet >"$TMP/copy.out" 2>/dev/null
TS_MEM_AVAILABLE=50000000 "$RUN_OPT" "$DS" --tokens 1,50,100,7,30,60 -n 8 -t 2 --quiet >"$TMP/inplace.out" 2>/dev/null
TS_MEM_AVAILABLE=50000000 "$RUN_OPT" --info "$DS" >"$TMP/inplace.txt" 2>&1
check "without room for a copy: read in place from the file (said by --info), the same 8 tokens as from the copy" bash -c "
    grep -q 'experts: .* read in place from the file (more than the memory available' '$TMP/inplace.txt' &&
    grep -q 'matrices: read in place from the file (.* more than the memory available' '$TMP/inplace.txt' &&
    [ -s '$TMP/copy.out' ] && cmp -s '$TMP/copy.out' '$TMP/inplace.out'"
