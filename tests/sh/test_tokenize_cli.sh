# --tokenize and --tokenizer as a user runs them: MODEL may be a vocab-only GGUF, a tokenizer.json,
# a tokenizer.model or a folder holding one; ids must equal llama.cpp's vectors.
source "$(dirname "$0")/lib.sh"

# First strings of a vector file (separated by "\n__ggml_vocab_test__\n") as separate files.
split_vectors() {   # inp, outdir
    python3 - "$1" "$2" <<'PY'
import sys
parts = open(sys.argv[1], encoding='utf-8').read().split('\n__ggml_vocab_test__\n')
for i, p in enumerate(parts[:12]):
    open(f"{sys.argv[2]}/{i}.txt", 'w', encoding='utf-8').write(p)
PY
}

check_vectors() {   # label, model, inp, out, bos-prefix
    local label=$1 model=$2 inp=$3 out=$4 bos=$5 bad=0 i
    mkdir -p "$TMP/v"; rm -f "$TMP/v"/*
    split_vectors "$inp" "$TMP/v"
    for i in $(seq 0 11); do
        [ -f "$TMP/v/$i.txt" ] || continue
        [ -s "$TMP/v/$i.txt" ] || continue    # an empty prompt is refused by design
        prompt=$(cat "$TMP/v/$i.txt"; printf x); prompt=${prompt%x}    # keep trailing newlines
        got=$("${RUN_VEC:-$RUN_SAN}" "$model" --tokenize "$prompt" 2>&1)
        want=$(sed -n "$((i + 1))p" "$out" | sed 's/^ *//')
        want="$bos$want"; want=$(echo "$want" | sed 's/ *$//')
        [ "$got" = "$want" ] || { bad=$((bad + 1)); echo "    $label #$i: got '$got' want '$want'"; }
    done
    check "$label: --tokenize equals the reference ids ($bad mismatches)" test "$bad" -eq 0
}

G=$FIX/tokenizers/gguf
check_vectors "vocab-only GGUF llama-spm" "$G/ggml-vocab-llama-spm.gguf" "$G/ggml-vocab-llama-spm.gguf.inp" "$G/ggml-vocab-llama-spm.gguf.out" "1 "
check_vectors "vocab-only GGUF gpt-2" "$G/ggml-vocab-gpt-2.gguf" "$G/ggml-vocab-gpt-2.gguf.inp" "$G/ggml-vocab-gpt-2.gguf.out" ""

mkdir -p "$TMP/qwen3"
gzip -dc "$FIX/tokenizers/hf/qwen3/tokenizer.json.gz" >"$TMP/qwen3/tokenizer.json"
cp "$FIX/tokenizers/hf/qwen3/tokenizer_config.json" "$TMP/qwen3/"
# (the 11 MB tokenizer.json takes seconds to load under ASan: the -O3 binary runs these; the unit
# tests cover the same code under the sanitizers)
RUN_VEC=$RUN_OPT
check_vectors "folder with qwen3 tokenizer.json" "$TMP/qwen3" "$FIX/tokenizers/hf/qwen3/tests.inp" "$FIX/tokenizers/hf/qwen3/tests.out" ""
check_vectors "qwen3 tokenizer.json file" "$TMP/qwen3/tokenizer.json" "$FIX/tokenizers/hf/qwen3/tests.inp" "$FIX/tokenizers/hf/qwen3/tests.out" ""

# special tokens spelled in a prompt become single tokens (Qwen3: <|im_start|> = 151644, <|im_end|> = 151645)
sp=$("$RUN_OPT" "$TMP/qwen3" --tokenize "<|im_start|>user hi<|im_end|>" 2>&1)
check "special-token text in a prompt is one token each ($sp)" bash -c "[[ '$sp' == '151644 '*' 151645' ]]"

# tokenizer.model (qa-llama's Llama-2 vocab) gives the same ids as the Llama-2 GGUF vocab
a=$("$RUN_SAN" "$FIX/qa-llama/hf/tokenizer.model" --tokenize "Hello world, this is a test" 2>&1)
b=$("$RUN_SAN" "$FIX/llama2-tiny-random/llama-2-tiny-random.gguf" --tokenize "Hello world, this is a test" 2>&1)
want=$(od -An -v -t d4 -w4 "$FIX/llama2-tiny-random/ref/f16.tokens.i32" | head -8 | tr -s ' \n' ' ' | sed 's/^ //; s/ $//')
check "tokenizer.model --tokenize equals llama.cpp's prompt ids ($a)" test "$a" = "$want"
check "GGUF --tokenize equals llama.cpp's prompt ids" test "$b" = "$want"

# --tokenizer replaces a model's vocabulary
c=$("$RUN_SAN" "$FIX/llama2-tiny-random/llama-2-tiny-random.gguf" --tokenizer "$FIX/qa-llama/hf/tokenizer.model" --tokenize "Hello world, this is a test" 2>&1)
check "--tokenizer tokenizer.model on a GGUF gives the same ids" test "$c" = "$want"
"$RUN_SAN" "$FIX/stories260K/stories260K.gguf" --tokenizer "$G/ggml-vocab-llama-spm.gguf" "hi" >/dev/null 2>"$TMP/e"
check "--tokenizer with more tokens than the model is refused" grep -q "the tokenizer has 32000 tokens, the model only 512" "$TMP/e"
"$RUN_SAN" "$TMP/qwen3" "hello" >/dev/null 2>"$TMP/e"
check "a tokenizer-only folder cannot generate: clear error" grep -q "no model weights" "$TMP/e"
printf '\xff\xfe bad' >"$TMP/badutf8.txt"
"$RUN_SAN" "$G/ggml-vocab-llama-spm.gguf" --tokenize "$(cat "$TMP/badutf8.txt")" >/dev/null 2>"$TMP/e"
check "invalid UTF-8 in the prompt: one-line error" grep -q "invalid UTF-8" "$TMP/e"

# --tokenize on a chat model prints what the model is fed: the chat template applied (9 ids for "Hi",
# as the statistics line of an answer counts), the text's own ids with --raw
Q="$FIX/qa-llama/qa-llama-q8_0.gguf"
fed=$("$RUN_OPT" "$Q" --tokenize "Hi")
raw=$("$RUN_OPT" "$Q" --tokenize "Hi" --raw)
"$RUN_OPT" "$Q" "Hi" -n 1 -t 1 >/dev/null 2>"$TMP/fed.err"
n_fed=$(echo "$fed" | wc -w)
check "--tokenize on a chat model: $n_fed ids, the prompt count of an answer; --raw: the text's own ($raw)" bash -c "
    grep -q 'prompt: $n_fed tokens' '$TMP/fed.err' && [ $n_fed -gt 3 ] && [ '$raw' = '1 6324' ]"

# Byte fallback can make more tokens than the text has bytes (a U+2581 the vocabulary lacks is three
# byte tokens): a vocab-only GGUF of byte tokens and "a" tokenizes "a a a ..." in full
python3 - "$TMP/bytes-vocab.gguf" <<'PY'
import struct, sys
def s(x): b = x.encode(); return struct.pack('<Q', len(b)) + b
def kv(key, typ, payload): return s(key) + struct.pack('<I', typ) + payload
def arr(typ, items, pack): return struct.pack('<IQ', typ, len(items)) + b''.join(pack(i) for i in items)
tokens = ['<unk>', '<s>', '</s>'] + ['<0x%02X>' % b for b in range(256)] + ['a']
types = [2, 3, 3] + [6] * 256 + [1]
kvs = [kv('general.architecture', 8, s('llama')), kv('tokenizer.ggml.model', 8, s('llama')),
       kv('tokenizer.ggml.tokens', 9, arr(8, tokens, s)),
       kv('tokenizer.ggml.scores', 9, arr(6, [0.0] * len(tokens), lambda f: struct.pack('<f', f))),
       kv('tokenizer.ggml.token_type', 9, arr(5, types, lambda t: struct.pack('<i', t))),
       kv('tokenizer.ggml.bos_token_id', 4, struct.pack('<I', 1)), kv('tokenizer.ggml.eos_token_id', 4, struct.pack('<I', 2))]
open(sys.argv[1], 'wb').write(b'GGUF' + struct.pack('<IQQ', 3, 0, len(kvs)) + b''.join(kvs))
PY
ids=$("$RUN_SAN" "$TMP/bytes-vocab.gguf" --tokenize "a a a a a a a a a a a a" 2>&1)
check "byte fallback past one token per byte: 12 a's and 12 U+2581s as 3 byte tokens each, after BOS ($(echo "$ids" | wc -w) ids)" \
    test "$(echo "$ids" | wc -w)" -eq 49
