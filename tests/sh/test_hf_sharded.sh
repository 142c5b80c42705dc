# A sharded Hugging Face folder (model-0000N-of-0000M.safetensors + model.safetensors.index.json)
# gives exactly the logits of the single-file folder it was split from.
source "$(dirname "$0")/lib.sh"
mkdir -p "$TMP/sharded"
cp "$FIX/llama-tiny/hf/config.json" "$FIX/llama-tiny/hf/tokenizer_config.json" "$TMP/sharded/"
python3 - "$FIX/llama-tiny/hf/model.safetensors" "$TMP/sharded" <<'PY'
import json, struct, sys
src, out = sys.argv[1], sys.argv[2]
f = open(src, 'rb'); n = struct.unpack('<Q', f.read(8))[0]; hdr = json.loads(f.read(n)); base = 8 + n
names = [k for k in hdr if k != '__metadata__']
shards = [names[: len(names) // 2], names[len(names) // 2 :]]
weight_map = {}
for i, group in enumerate(shards):
    fname = 'model-%05d-of-%05d.safetensors' % (i + 1, len(shards))
    h, blobs, off = {}, [], 0
    for k in group:
        b, e = hdr[k]['data_offsets']; f.seek(base + b); data = f.read(e - b)
        h[k] = {'dtype': hdr[k]['dtype'], 'shape': hdr[k]['shape'], 'data_offsets': [off, off + len(data)]}
        blobs.append(data); off += len(data); weight_map[k] = fname
    hj = json.dumps(h).encode(); hj += b' ' * (-len(hj) % 8)
    with open(out + '/' + fname, 'wb') as o:
        o.write(struct.pack('<Q', len(hj))); o.write(hj); [o.write(x) for x in blobs]
json.dump({'metadata': {}, 'weight_map': weight_map}, open(out + '/model.safetensors.index.json', 'w'))
PY
check "two shards and an index were written" test -f "$TMP/sharded/model-00002-of-00002.safetensors"
ids=$(od -An -v -t d4 -w4 "$FIX/llama-tiny/ref/f32.tokens.i32" | head -22 | tr -d ' ' | paste -sd,)
"$RUN_SAN" "$FIX/llama-tiny/hf" --tokens "$ids" -n 4 --dump-logits "$TMP/one.f32" --quiet >/dev/null 2>&1
"$RUN_SAN" "$TMP/sharded" --tokens "$ids" -n 4 --dump-logits "$TMP/two.f32" --quiet >/dev/null 2>"$TMP/e"
check "sharded folder loads ($(head -c 200 "$TMP/e"))" test -s "$TMP/two.f32"
check "sharded folder: logits identical to the single-file folder" cmp -s "$TMP/one.f32" "$TMP/two.f32"
rm "$TMP/sharded/model-00002-of-00002.safetensors"
"$RUN_SAN" "$TMP/sharded" "hi" >/dev/null 2>"$TMP/e"
check "a missing shard: one-line error naming it" bash -c "[ \$(wc -l <'$TMP/e') -eq 1 ] && grep -q 'model-00002-of-00002.safetensors' '$TMP/e'"
