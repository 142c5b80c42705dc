# Hybrid models with recurrent layers (README-hybrid.md, README-ssm.md), beyond test_logits'
# references: a chat whose turns reuse the recurrent state (prefilling only what is new) and equal
# one-shot runs of the whole text (rewinding through the state's snapshots), and damaged files
# refused by name (a missing state-space tensor, a convolution of the wrong width, layer kinds that
# disagree with the tensors).
source "$(dirname "$0")/lib.sh"
Q35="$FIX/qwen35-tiny/model-f32.gguf"
Q35HF="$FIX/qwen35-tiny/hf"

# A plain-text chat (no template: each turn continues the text so far), three turns: each answer
# equals a one-shot run of the whole text so far. The random model's answers hold byte tokens that
# do not tokenize back to the same ids, so a turn shares less than the whole cache with its prompt
# and rewinds to the recurrent state's snapshot at the end of the previous prompt (at least that is
# reused); test_hybrid_session holds the token-exact chat, where only the new tokens are evaluated.
chat_case() {   # model, label, -n
    local model=$1 label=$2 n=$3
    printf 'Once upon a time\n there was a\n and then\n' >"$TMP/turns.txt"
    "$RUN_SAN" "$model" -i -v -n "$n" -t 1 <"$TMP/turns.txt" >"$TMP/chat.out" 2>"$TMP/chat.err"
    local rc=$?
    check "$label: three turns, exit 0" bash -c "[ $rc -eq 0 ] && [ \$(wc -l <'$TMP/chat.out') -eq 3 ]"
    python3 - "$TMP" <<'PY'
import sys
tmp = sys.argv[1]
users = open(tmp + '/turns.txt').read().split('\n')[:3]
answers = open(tmp + '/chat.out').read().split('\n')[:3]
text = ''
for k in range(3):
    text += users[k]
    open('%s/p%d.txt' % (tmp, k + 1), 'w').write(text)
    text += answers[k]
PY
    : >"$TMP/once.txt"
    for k in 1 2 3; do
        "$RUN_OPT" "$model" -f "$TMP/p$k.txt" -n "$n" -t 1 --no-display-prompt --quiet >>"$TMP/once.txt"
    done
    check "$label: each answer equals a one-shot run of the text so far" cmp -s "$TMP/chat.out" "$TMP/once.txt"
    check "$label: each turn reuses at least the previous prompt (a snapshot) and evaluates the rest" python3 - "$TMP/chat.err" <<'PY'
import re, sys
st = [tuple(map(int, m.groups())) for m in re.finditer(r'turn (\d+): prompt: (\d+) tokens, (\d+) reused, (\d+) new', open(sys.argv[1]).read())]
ok = len(st) == 3 and st[0][2] == 0 and all(st[k][1] - 1 >= st[k][2] >= st[k - 1][1] and st[k][3] == st[k][1] - st[k][2] for k in (1, 2))
if not ok: print(st)
sys.exit(0 if ok else 1)
PY
}
chat_case "$Q35" "qwen35-tiny chat" 8

# --info: the state per sequence and its snapshots
"$RUN_OPT" "$Q35" --info >"$TMP/info.txt" 2>&1
check "--info: DeltaNet layers and the recurrent state's size" bash -c "
    grep -q '^layer  0: deltanet key_heads 2 x 16 value_heads 4 x 16 conv 4' '$TMP/info.txt' &&
    grep -q '^layer  2: full .* gated' '$TMP/info.txt' &&
    grep -q '^recurrent state: 22528 bytes per sequence (f32), and up to 4 snapshots' '$TMP/info.txt'"

# Damaged files, refused by name. Folders: the config edited (a copy of the folder, the weights linked).
damaged_hf() {   # label, python edit of the config dict c, the error's pattern[, the folder (Qwen3.5's)]
    local label=$1 edit=$2 want=$3 dir=${4:-$Q35HF}
    rm -rf "$TMP/hf"; mkdir -p "$TMP/hf"
    ln -s "$dir/model.safetensors" "$TMP/hf/model.safetensors"
    python3 -c "import json, sys; c = json.load(open(sys.argv[1])); $edit; json.dump(c, open(sys.argv[2], 'w'))" "$dir/config.json" "$TMP/hf/config.json"
    "$RUN_OPT" "$TMP/hf" --tokens 1,2,3 -n 1 >"$TMP/d.out" 2>"$TMP/d.err"
    local rc=$?
    check "damaged: $label: exit 1, one line naming it ($(head -c 200 "$TMP/d.err"))" bash -c "
        [ $rc -eq 1 ] && [ \$(wc -l <'$TMP/d.err') -eq 1 ] && grep -Eq \"$want\" '$TMP/d.err'"
}
damaged_hf "a convolution of 3 taps where the file has 4" "c['linear_conv_kernel_dim'] = 3" \
    "tensor 'model.layers.0.linear_attn.conv1d.weight' has 512 values, expected 384"
damaged_hf "layer types that make a DeltaNet layer attention" "c['layer_types'][0] = 'full_attention'" \
    "tensor 'model.layers.0.self_attn.q_[a-z]*.weight' is missing"
damaged_hf "layer types that make an attention layer a DeltaNet layer" "c['layer_types'][2] = 'linear_attention'" \
    "tensor 'model.layers.2.linear_attn.in_proj_qkv.weight' is missing"
damaged_hf "value heads that are not a multiple of the key heads" "c['linear_num_value_heads'] = 3" \
    "invalid DeltaNet heads"
damaged_hf "an unknown layer type" "c['layer_types'][1] = 'mystery'" \
    "config field 'layer_types\\[1\\]' is 'mystery'"
# a folder without one DeltaNet tensor: the safetensors rewritten without A_log of layer 3
python3 - "$Q35HF/model.safetensors" "$TMP/hf2/model.safetensors" <<'PY'
import json, os, struct, sys
src, dst = sys.argv[1:]
os.makedirs(os.path.dirname(dst), exist_ok=True)
d = open(src, 'rb').read()
n, = struct.unpack_from('<Q', d, 0)
h = json.loads(d[8:8 + n]); base = 8 + n
drop = 'model.layers.3.linear_attn.A_log'
out, off, blobs = {}, 0, []
for k, v in h.items():
    if k == '__metadata__' or k == drop: continue
    a, b = v['data_offsets']
    blobs.append(d[base + a: base + b])
    out[k] = dict(v, data_offsets=[off, off + b - a]); off += b - a
hd = json.dumps(out).encode(); hd += b' ' * (-len(hd) % 8)
open(dst, 'wb').write(struct.pack('<Q', len(hd)) + hd + b''.join(blobs))
PY
cp "$Q35HF/config.json" "$TMP/hf2/config.json"
"$RUN_OPT" "$TMP/hf2" --tokens 1,2,3 -n 1 >/dev/null 2>"$TMP/d.err"
rc=$?
check "damaged: a missing DeltaNet tensor is named ($(head -c 200 "$TMP/d.err"))" \
    bash -c "[ $rc -eq 1 ] && grep -q \"tensor 'model.layers.3.linear_attn.A_log' is missing\" '$TMP/d.err'"
# a GGUF whose attention interval disagrees with its tensors (3 -> 2: layer 1 would be attention)
python3 - "$Q35" "$TMP/interval.gguf" <<'PY'
import struct, sys
src, dst = sys.argv[1:]
d = bytearray(open(src, 'rb').read())
key = b'qwen35.full_attention_interval'
i = d.find(struct.pack('<Q', len(key)) + key) + 8 + len(key)
assert struct.unpack_from('<I', d, i)[0] == 4 and struct.unpack_from('<I', d, i + 4)[0] == 3   # u32, 3
struct.pack_into('<I', d, i + 4, 2)
open(dst, 'wb').write(d)
PY
"$RUN_OPT" "$TMP/interval.gguf" --tokens 1,2,3 -n 1 >/dev/null 2>"$TMP/d.err"
rc=$?
check "damaged: a GGUF attention interval that disagrees with the tensors ($(head -c 200 "$TMP/d.err"))" \
    bash -c "[ $rc -eq 1 ] && grep -q \"tensor 'blk.1.attn_q[_.a-z]*' is missing\" '$TMP/d.err'"

# ---- LFM2: gated short convolutions beside attention ----
LFM="$FIX/lfm2-tiny/model-f32.gguf"
LFMHF="$FIX/lfm2-tiny/hf"
chat_case "$LFM" "lfm2-tiny chat" 8
"$RUN_OPT" "$LFM" --info >"$TMP/info.txt" 2>&1
check "--info: short-convolution layers and the state's size (2 x 128 floats of 3 layers)" bash -c "
    grep -q '^layer  0: shortconv channels 128 conv 3 ffn 128' '$TMP/info.txt' &&
    grep -q '^layer  2: full    heads 4 kv_heads 2 head_dim 32' '$TMP/info.txt' &&
    grep -q '^recurrent state: 3072 bytes per sequence' '$TMP/info.txt'"
damaged_hf "lfm2: a convolution of 4 taps where the file has 3" "c['conv_L_cache'] = 4" \
    "tensor 'model.layers.0.conv.conv.weight' holds 3 taps per channel; the convolution reads 4 positions" "$LFMHF"
damaged_hf "lfm2: a convolution layer called attention" "c['layer_types'][0] = 'full_attention'" \
    "tensor 'model.layers.0.self_attn.q_[a-z]*.weight' is missing" "$LFMHF"
damaged_hf "lfm2: a convolution bias" "c['conv_bias'] = True" \
    "conv_bias.*a bias on the short convolution is not supported" "$LFMHF"
# a GGUF whose per-layer KV heads mark attention layer 2 a convolution layer
python3 - "$LFM" "$TMP/kv.gguf" <<'PY'
import struct, sys
src, dst = sys.argv[1:]
d = bytearray(open(src, 'rb').read())
key = b'lfm2.attention.head_count_kv'
i = d.find(struct.pack('<Q', len(key)) + key) + 8 + len(key)
vt, et, n = struct.unpack_from('<IIQ', d, i)
assert vt == 9 and n == 5, (vt, n)            # an array of 5 integers of 4 bytes
vals = i + 16
assert list(struct.unpack_from('<5i', d, vals)) == [0, 0, 2, 0, 2]
struct.pack_into('<i', d, vals + 8, 0)
open(dst, 'wb').write(d)
PY
"$RUN_OPT" "$TMP/kv.gguf" --tokens 1,2,3 -n 1 >/dev/null 2>"$TMP/d.err"
rc=$?
check "damaged: GGUF KV heads that make attention layer 2 a convolution ($(head -c 200 "$TMP/d.err"))" \
    bash -c "[ $rc -eq 1 ] && grep -q \"tensor 'blk.2.shortconv.in_proj.weight' is missing\" '$TMP/d.err'"
