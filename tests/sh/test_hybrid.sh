# Hybrid models with recurrent layers (README-hybrid.md, README-ssm.md), beyond test_logits'
# references: a chat whose turns reuse the recurrent state (prefilling only what is new) and equal
# one-shot runs of the whole text (rewinding through the state's snapshots), Granite 4.0-H's
# per-container norm grouping and RoPE switch, and damaged files refused by name (a missing
# state-space tensor, a convolution of the wrong width, layer kinds that disagree with the tensors);
# multi-token-prediction blocks known and not run. Qwen3.5, LFM2 and Granite 4.0-H.
source "$(dirname "$0")/lib.sh"
Q35="$FIX/qwen35-tiny/model-f32.gguf"
Q35HF="$FIX/qwen35-tiny/hf"
GH="$FIX/granite-hybrid-tiny/model-f32.gguf"
GHHF="$FIX/granite-hybrid-tiny/hf"

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
chat_case "$GH" "granite-hybrid-tiny chat" 8

# --info: the state per sequence and its snapshots
"$RUN_OPT" "$Q35" --info >"$TMP/info.txt" 2>&1
check "--info: DeltaNet layers and the recurrent state's size" bash -c "
    grep -q '^layer  0: deltanet key_heads 2 x 16 value_heads 4 x 16 conv 4' '$TMP/info.txt' &&
    grep -q '^layer  2: full .* gated' '$TMP/info.txt' &&
    grep -q '^recurrent state: 22528 bytes per sequence (f32), and up to 4 snapshots' '$TMP/info.txt'"

# Mamba-2: the GGUF's gated norm per group (llama.cpp), the folder's over all of d_inner
# (transformers); attention without RoPE in both
"$RUN_OPT" "$GH" --info >"$TMP/info.txt" 2>&1
"$RUN_OPT" "$GHHF" --info >"$TMP/info-hf.txt" 2>&1
check "--info: Mamba-2 layers, NoPE attention and the recurrent state's size" bash -c "
    grep -q '^layer  0: mamba2 heads 6 x 32 state 32 groups 2 conv 4 norm per-group ffn 128' '$TMP/info.txt' &&
    grep -q '^layer  0: mamba2 heads 6 x 32 state 32 groups 2 conv 4 norm whole ffn 128' '$TMP/info-hf.txt' &&
    grep -q '^layer  2: full .* rope none .* scale 0.125' '$TMP/info.txt' &&
    grep -q '^layer  2: full .* rope none .* scale 0.125' '$TMP/info-hf.txt' &&
    grep -q '^recurrent state: 85248 bytes per sequence (f32)' '$TMP/info.txt'"

# A GGUF metadata value rewritten in place: key, struct format of the value, old value, new value.
edit_gguf() {   # source, destination, key, format, old, new
    python3 - "$@" <<'PY'
import struct, sys
src, dst, key, fmt, old, new = sys.argv[1:]
d = bytearray(open(src, 'rb').read())
k = key.encode()
i = d.find(struct.pack('<Q', len(k)) + k) + 8 + len(k) + 4   # past the name and the value's type
assert struct.unpack_from(fmt, d, i)[0] == int(old)
struct.pack_into(fmt, d, i, int(new))
open(dst, 'wb').write(d)
PY
}
# granitehybrid.rope.scaling.finetuned is llama.cpp's RoPE switch for the family: true turns it on
edit_gguf "$GH" "$TMP/rope.gguf" granitehybrid.rope.scaling.finetuned '<B' 0 1
"$RUN_OPT" "$TMP/rope.gguf" --info >"$TMP/info-rope.txt" 2>&1
check "GGUF rope.scaling.finetuned true: the attention layers rotate" \
    grep -q '^layer  2: full .* rope theta 10000 dims 24/24' "$TMP/info-rope.txt"

# Damaged files, refused by name. Folders: the config edited (a copy of the folder, the weights linked).
damaged_hf() {   # label, python edit of the config dict c, the error's pattern[, the folder]
    local label=$1 edit=$2 want=$3 src=${4:-$Q35HF}
    rm -rf "$TMP/hf"; mkdir -p "$TMP/hf"
    ln -s "$src/model.safetensors" "$TMP/hf/model.safetensors"
    python3 -c "import json, sys; c = json.load(open(sys.argv[1])); $edit; json.dump(c, open(sys.argv[2], 'w'))" "$src/config.json" "$TMP/hf/config.json"
    "$RUN_OPT" "$TMP/hf" --tokens 1,2,3 -n 1 >"$TMP/d.out" 2>"$TMP/d.err"
    local rc=$?
    check "damaged: $label: exit 1, one line naming it ($(head -c 200 "$TMP/d.err"))" bash -c "
        [ $rc -eq 1 ] && [ \$(wc -l <'$TMP/d.err') -eq 1 ] && grep -Eq \"$want\" '$TMP/d.err'"
}
damaged_hf "a convolution of 3 taps where the file has 4" "c['linear_conv_kernel_dim'] = 3" \
    "tensor 'model.layers.0.linear_attn.conv1d.weight' holds 4 taps per channel; the convolution reads 3 positions"
damaged_hf "layer types that make a DeltaNet layer attention" "c['layer_types'][0] = 'full_attention'" \
    "tensor 'model.layers.0.self_attn.q_[a-z]*.weight' is missing"
damaged_hf "layer types that make an attention layer a DeltaNet layer" "c['layer_types'][2] = 'linear_attention'" \
    "tensor 'model.layers.2.linear_attn.in_proj_qkv.weight' is missing"
damaged_hf "value heads that are not a multiple of the key heads" "c['linear_num_value_heads'] = 3" \
    "invalid DeltaNet heads"
damaged_hf "an unknown layer type" "c['layer_types'][1] = 'mystery'" \
    "config field 'layer_types\\[1\\]' is 'mystery'"
damaged_hf "a Mamba-2 convolution of 3 taps where the file has 4" "c['mamba_d_conv'] = 3" \
    "tensor 'model.layers.0.mamba.conv1d.weight' holds 4 taps per channel; the convolution reads 3 positions" "$GHHF"
damaged_hf "layer types that make a Mamba-2 layer attention" "c['layer_types'][1] = 'attention'" \
    "tensor 'model.layers.1.self_attn.q_proj.weight' is missing" "$GHHF"
damaged_hf "layer types that make an attention layer a Mamba-2 layer" "c['layer_types'][2] = 'mamba'" \
    "tensor 'model.layers.2.mamba.in_proj.weight' is missing" "$GHHF"
damaged_hf "Mamba-2 heads that do not split into the groups" "c['mamba_n_groups'] = 4" \
    "layer 0: invalid Mamba-2 sizes" "$GHHF"
damaged_hf "a config that says the convolution has no bias" "c['mamba_conv_bias'] = False" \
    "tensors 'model.layers.0.mamba.conv1d.bias'.*are not supported" "$GHHF"
damaged_hf "Mamba-2 projection biases" "c['mamba_proj_bias'] = True" \
    "config field 'mamba_proj_bias': biases of the Mamba-2 projections are not supported" "$GHHF"
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

# A multi-token-prediction block after the model's own (real Qwen3.5 GGUFs carry one: block_count
# counts it, nextn_predict_layers says so): loaded as known and not run, the logits those of the
# file without it; the same file without the nextn key is refused (its last block is incomplete).
python3 - "$Q35" "$TMP/mtp.gguf" "$TMP/mtp-unstated.gguf" <<'PY'
import struct, sys
src, dst, dst2 = sys.argv[1:]
d = open(src, 'rb').read()
pos = 0
def take(fmt):
    global pos
    v = struct.unpack_from(fmt, d, pos); pos += struct.calcsize(fmt); return v
def string():
    global pos
    n, = take('<Q'); s = d[pos:pos + n]; pos += n; return s
SIZES = {0: 1, 1: 1, 2: 2, 3: 2, 4: 4, 5: 4, 6: 4, 7: 1, 10: 8, 11: 8, 12: 8}
def skip_value(t):
    global pos
    if t == 8: string()
    elif t == 9:
        et, n = take('<IQ')
        for _ in range(n): skip_value(et)
    else: pos += SIZES[t]
magic, version, n_t, n_kv = take('<4sIQQ')
kvs = []
for _ in range(n_kv):
    start = pos; key = string(); t, = take('<I'); skip_value(t); kvs.append((key, d[start:pos]))
infos = []
for _ in range(n_t):
    name = string(); nd, = take('<I'); ne = take('<%dQ' % nd); t, off = take('<IQ'); infos.append((name, ne, t, off))
data = (pos + 31) // 32 * 32
blobs = {}
order = sorted(infos, key=lambda i: i[3])
for k, inf in enumerate(order):
    end = order[k + 1][3] if k + 1 < len(order) else len(d) - data
    blobs[inf[0]] = d[data + inf[3]: data + end]
def key_u32(key, v): return struct.pack('<Q', len(key)) + key + struct.pack('<II', 4, v)
def write(path, with_nextn):
    out_kv = [key_u32(k, 7) if k == b'qwen35.block_count' else raw for k, raw in kvs]
    if with_nextn: out_kv.append(key_u32(b'qwen35.nextn_predict_layers', 1))
    extra = [(n.replace(b'blk.2.', b'blk.6.'), ne, t) for n, ne, t, _ in infos if n.startswith(b'blk.2.')]   # a full-attention block
    extra.append((b'blk.6.nextn.eh_proj.weight', (256, 128), 0))
    allinf = [(n, ne, t) for n, ne, t, _ in infos] + extra
    body, head, off = b'', b'', 0
    for n, ne, t in allinf:
        blob = blobs.get(n) or blobs.get(n.replace(b'blk.6.', b'blk.2.')) or bytes(4 * ne[0] * ne[1])
        head += struct.pack('<Q', len(n)) + n + struct.pack('<I', len(ne)) + struct.pack('<%dQ' % len(ne), *ne) + struct.pack('<IQ', t, off)
        pad = (-len(blob)) % 32
        body += blob + bytes(pad); off += len(blob) + pad
    hdr = struct.pack('<4sIQQ', magic, version, len(allinf), len(out_kv)) + b''.join(out_kv) + head
    hdr += bytes((-len(hdr)) % 32)
    open(path, 'wb').write(hdr + body)
write(dst, True)
write(dst2, False)
PY
"$RUN_OPT" "$Q35" --tokens 1,50,100,7,30,60 -n 4 -ctk f32 -ctv f32 --dump-logits "$TMP/plain.f32" --quiet >/dev/null 2>&1
"$RUN_OPT" "$TMP/mtp.gguf" --tokens 1,50,100,7,30,60 -n 4 -ctk f32 -ctv f32 --dump-logits "$TMP/mtp.f32" --quiet >/dev/null 2>"$TMP/d.err"
check "a GGUF with an MTP block: the logits of the model without it ($(head -c 200 "$TMP/d.err"))" cmp -s "$TMP/plain.f32" "$TMP/mtp.f32"
"$RUN_OPT" "$TMP/mtp.gguf" --info >"$TMP/info.txt" 2>&1
check "a GGUF with an MTP block: 6 layers run, the block's tensors noted as ignored" bash -c "
    grep -q 'layers 6 ' '$TMP/info.txt' && grep -q 'blk.6.nextn.eh_proj.weight: ignored (a multi-token-prediction block' '$TMP/info.txt'"
"$RUN_OPT" "$TMP/mtp-unstated.gguf" --tokens 1,2,3 -n 1 >/dev/null 2>"$TMP/d.err"
rc=$?
check "an extra block without nextn_predict_layers is refused ($(head -c 200 "$TMP/d.err"))" \
    bash -c "[ $rc -eq 1 ] && grep -q \"blk.6\" '$TMP/d.err'"

# The folder's form: mtp.* tensors beside a config stating mtp_num_hidden_layers
mkdir -p "$TMP/hfmtp"
python3 - "$Q35HF/model.safetensors" "$TMP/hfmtp/model.safetensors" <<'PY'
import json, struct, sys
src, dst = sys.argv[1:]
d = open(src, 'rb').read()
n, = struct.unpack_from('<Q', d, 0)
h = json.loads(d[8:8 + n]); body = d[8 + n:]
h['mtp.fc.weight'] = {'dtype': 'F32', 'shape': [2, 2], 'data_offsets': [len(body), len(body) + 16]}
hd = json.dumps(h).encode(); hd += b' ' * (-len(hd) % 8)
open(dst, 'wb').write(struct.pack('<Q', len(hd)) + hd + body + bytes(16))
PY
python3 -c "import json, sys; c = json.load(open(sys.argv[1])); c['mtp_num_hidden_layers'] = 1; json.dump(c, open(sys.argv[2], 'w'))" \
    "$Q35HF/config.json" "$TMP/hfmtp/config.json"
"$RUN_OPT" "$Q35HF" --tokens 1,50,100,7,30,60 -n 4 -ctk f32 -ctv f32 --dump-logits "$TMP/plain.f32" --quiet >/dev/null 2>&1
"$RUN_OPT" "$TMP/hfmtp" --tokens 1,50,100,7,30,60 -n 4 -ctk f32 -ctv f32 --dump-logits "$TMP/mtp.f32" --quiet >/dev/null 2>"$TMP/d.err"
check "a folder with an MTP block: the logits of the folder without it ($(head -c 200 "$TMP/d.err"))" cmp -s "$TMP/plain.f32" "$TMP/mtp.f32"
python3 -c "import json, sys; c = json.load(open(sys.argv[1])); c['mtp_num_hidden_layers'] = 0; json.dump(c, open(sys.argv[1], 'w'))" "$TMP/hfmtp/config.json"
"$RUN_OPT" "$TMP/hfmtp" --tokens 1,2,3 -n 1 >/dev/null 2>"$TMP/d.err"
rc=$?
check "mtp.* tensors with mtp_num_hidden_layers 0 are refused ($(head -c 200 "$TMP/d.err"))" \
    bash -c "[ $rc -eq 1 ] && grep -q \"mtp.fc.weight\" '$TMP/d.err'"

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

# ---- Granite 4.0-H: Mamba-2 ----
# a Mamba-2 GGUF whose convolution width disagrees with its taps, and one without a skip D (the
# name blk.1.ssm_d renamed in place)
edit_gguf "$GH" "$TMP/conv.gguf" granitehybrid.ssm.conv_kernel '<I' 4 3
"$RUN_OPT" "$TMP/conv.gguf" --tokens 1,2,3 -n 1 >/dev/null 2>"$TMP/d.err"
rc=$?
check "damaged: a GGUF Mamba-2 convolution of the wrong width ($(head -c 200 "$TMP/d.err"))" \
    bash -c "[ $rc -eq 1 ] && [ \$(wc -l <'$TMP/d.err') -eq 1 ] && grep -q \"tensor 'blk.0.ssm_conv1d.weight' holds 4 taps per channel; the convolution reads 3 positions\" '$TMP/d.err'"
python3 - "$GH" "$TMP/nod.gguf" <<'PY'
import struct, sys
src, dst = sys.argv[1:]
d = bytearray(open(src, 'rb').read())
name = struct.pack('<Q', 11) + b'blk.1.ssm_d'
i = d.find(name)
assert i > 0 and d.find(name, i + 1) < 0
d[i + 8:i + 19] = b'blk.1.ssm_q'
open(dst, 'wb').write(d)
PY
"$RUN_OPT" "$TMP/nod.gguf" --tokens 1,2,3 -n 1 >/dev/null 2>"$TMP/d.err"
rc=$?
check "damaged: a GGUF Mamba-2 layer without its skip D is named ($(head -c 200 "$TMP/d.err"))" \
    bash -c "[ $rc -eq 1 ] && [ \$(wc -l <'$TMP/d.err') -eq 1 ] && grep -q \"tensor 'blk.1.ssm_d' is missing\" '$TMP/d.err'"
