# llama-cli habits and honest refusals (issue 16): the prompt from -f, -p -, stdin (a 1 MB prompt
# included), --opt=value, -n -1, --version, --no-display-prompt, -m; every numeric option
# range-checked by name; a seed from the OS printed so a sampled run can be repeated; a full
# stdout is an error; a model computing NaN is reported, not printed as empty text; error
# messages name what is wrong once.
source "$(dirname "$0")/lib.sh"
S="$FIX/stories260K/stories260K.gguf"

expect_error() {   # description, pattern, command...
    local desc=$1 pat=$2; shift 2
    "$@" >"$TMP/o.txt" 2>"$TMP/e.txt" </dev/null
    local rc=$?
    if [ "$rc" -eq 1 ] && [ "$(wc -l <"$TMP/e.txt")" -eq 1 ] && grep -q -e "$pat" "$TMP/e.txt"; then ok "$desc"
    else notok "$desc (rc=$rc: $(head -c 300 "$TMP/e.txt"))"; fi
}

# The prompt, five ways: the same text
"$RUN_OPT" "$S" "Once upon a time" -n 20 -t 1 --quiet >"$TMP/arg.txt"
printf 'Once upon a time\n' >"$TMP/prompt.txt"
"$RUN_SAN" "$S" -f "$TMP/prompt.txt" -n 20 -t 1 --quiet >"$TMP/f.txt"
check "-f FILE (its trailing newline dropped) prints what the argument prints" cmp -s "$TMP/arg.txt" "$TMP/f.txt"
"$RUN_OPT" "$S" --file="$TMP/prompt.txt" --n-predict=20 --threads=1 --quiet >"$TMP/eq.txt"
check "--file=FILE --n-predict=20 --threads=1 (--opt=value spellings)" cmp -s "$TMP/arg.txt" "$TMP/eq.txt"
"$RUN_SAN" "$S" -p - -n 20 -t 1 --quiet <"$TMP/prompt.txt" >"$TMP/dash.txt"
check "-p - reads the prompt from stdin" cmp -s "$TMP/arg.txt" "$TMP/dash.txt"
printf 'Once upon a time\n' | "$RUN_SAN" "$S" -n 20 -t 1 --quiet >"$TMP/pipe.txt"
check "no prompt and stdin not a terminal: the prompt is read from stdin" cmp -s "$TMP/arg.txt" "$TMP/pipe.txt"
"$RUN_OPT" -m "$S" -n 20 -t 1 --quiet -- "Once upon a time" >"$TMP/m.txt"
check "-m MODEL, and -- before the prompt" cmp -s "$TMP/arg.txt" "$TMP/m.txt"
"$RUN_OPT" "$S" "Once upon a time" -n 20 -t 1 --quiet --no-display-prompt >"$TMP/nd.txt"
check "--no-display-prompt: the answer alone" bash -c "printf 'Once upon a time' | cat - '$TMP/nd.txt' | cmp -s - '$TMP/arg.txt'"

# A 1 MB prompt: tokenized from a file (an argument that long is refused by the OS); past the
# context it is refused, naming the file, before it is tokenized
python3 -c "import sys; sys.stdout.write('Once upon a time there was a girl. ' * 30000)" >"$TMP/big.txt"
"$RUN_OPT" "$S" -f "$TMP/big.txt" --tokenize >"$TMP/big-ids.txt" 2>"$TMP/big.err"
check "a 1 MB prompt from -f: $(wc -w <"$TMP/big-ids.txt") tokens" test "$(wc -w <"$TMP/big-ids.txt")" -gt 200000
expect_error "a prompt longer than the context can hold is refused, naming the file" \
    "big.txt: the prompt is longer than [0-9]* bytes, more than the context can hold" "$RUN_SAN" "$S" -f "$TMP/big.txt" -c 256
expect_error "... and so is one on stdin" "stdin: the prompt is longer than" \
    bash -c "'$RUN_OPT' '$S' -c 256 <'$TMP/big.txt'"
expect_error "a missing -f file" "no/such.txt: cannot open" "$RUN_OPT" "$S" -f no/such.txt

# -n -1: until the end of the answer or a full context
"$RUN_OPT" "$S" "Once upon a time" -n -1 -c 64 -t 1 >"$TMP/all.txt" 2>"$TMP/all.err"
check "-n -1 generates until the context is full (59 tokens after 5 in 64)" \
    bash -c "grep -q 'generation: 60 tokens' '$TMP/all.err' && grep -q 'the context is full' '$TMP/all.err'"

# The statistics line: one token is "1 token" with no speed; a greedy answer has no seed to print
"$RUN_OPT" "$S" "Once" -n 1 -t 1 >/dev/null 2>"$TMP/one.err"
check "-n 1: 'generation: 1 token' with no speed and no seed (greedy)" \
    bash -c "grep -q 'generation: 1 token\$' '$TMP/one.err' && ! grep -q 'seed' '$TMP/one.err'"

# --version, --help
"$RUN_OPT" --version >"$TMP/v.txt"
check "--version: exit 0, names the version, the build flags and the kernels" bash -c "[ $? -eq 0 ] && grep -q '^tessera [0-9][0-9.]* .*\[.*-O3.*\] (C11.*kernels: scalar' '$TMP/v.txt'"
if git -C "$(dirname "$0")/../.." rev-parse --short=12 HEAD >"$TMP/head.txt" 2>/dev/null; then
    check "--version names the commit it was built from (a git checkout)" grep -q "(commit [0-9a-f]\{12\})" "$TMP/v.txt"
fi
"$RUN_OPT" --help >"$TMP/h.txt"
check "--help lists the new options, -h too" bash -c "grep -q -- '--no-display-prompt' '$TMP/h.txt' && grep -q -- '-f, --file' '$TMP/h.txt' && grep -q -- '--wait-lock' '$TMP/h.txt' && grep -q -- '-h, --help' '$TMP/h.txt'"

# Every numeric option range-checked, the option named
expect_error "--top-p -1" "--top-p expects a number in \[0, 1\], got '-1'" "$RUN_OPT" "$S" x --top-p -1
expect_error "--min-p 5" "--min-p expects a number in \[0, 1\], got '5'" "$RUN_OPT" "$S" x --min-p 5
expect_error "--repeat-penalty -1" "--repeat-penalty expects a number > 0, got '-1'" "$RUN_OPT" "$S" x --repeat-penalty -1
expect_error "--repeat-penalty 0" "--repeat-penalty expects a number > 0" "$RUN_OPT" "$S" x --repeat-penalty=0
expect_error "--temp -1" "--temp expects a number >= 0" "$RUN_OPT" "$S" x --temp -1
expect_error "--temp nan" "--temp expects a number >= 0, got 'nan'" "$RUN_OPT" "$S" x --temp nan
expect_error "--top-k -1" "--top-k expects an integer >= 0" "$RUN_OPT" "$S" x --top-k -1
expect_error "--repeat-last-n -2" "--repeat-last-n expects an integer >= -1" "$RUN_OPT" "$S" x --repeat-last-n -2
expect_error "-n -2" "-n expects an integer >= -1" "$RUN_OPT" "$S" x -n -2
expect_error "-t 0" "-t expects an integer in \[1, 256\]" "$RUN_OPT" "$S" x -t 0
expect_error "-c -1" "-c expects an integer in \[0, 16777216\]" "$RUN_OPT" "$S" x -c -1
expect_error "--seed -5" "--seed expects an integer in \[0, 18446744073709551615\] or -1" "$RUN_OPT" "$S" x --seed -5
expect_error "--seed=abc" "--seed expects an integer" "$RUN_OPT" "$S" x --seed=abc
expect_error "a flag given a value" "--raw takes no value" "$RUN_OPT" "$S" x --raw=yes
expect_error "an option without its value" "--top-p needs a value" "$RUN_OPT" "$S" x --top-p
expect_error "two prompts" "give the prompt one way" "$RUN_OPT" "$S" x -f "$TMP/prompt.txt"
expect_error "a prompt argument and -p: refused, not one dropped" "the prompt is given twice ('Hello' as an argument and -p 'Once')" \
    "$RUN_OPT" "$S" Hello -p Once

# an empty or blank prompt on a chat model is refused (the template would wrap a turn that is not there)
expect_error "an empty prompt on a chat model" "the prompt is empty: a chat model needs a question" \
    "$RUN_OPT" "$FIX/qa-llama/qa-llama-q8_0.gguf" "" -n 4
expect_error "... and a blank one on stdin" "stdin is empty: a chat model needs a question" \
    bash -c "printf ' \n' | '$RUN_OPT' '$FIX/qa-llama/qa-llama-q8_0.gguf' -n 4"
"$RUN_OPT" "$FIX/qa-llama/qa-llama-q8_0.gguf" "" --raw -n 4 -t 1 --quiet >/dev/null 2>&1
check "--raw sends an empty prompt as it is (exit 0)" test $? -eq 0

# folders and files that are not what they seem: the message says what the path holds
mkdir -p "$TMP/ggufdir" "$TMP/nocfg" "$TMP/empty" "$TMP/zero"
cp "$S" "$TMP/ggufdir/"
cp "$FIX/qa-llama/hf/tokenizer.model" "$FIX/qa-llama/hf/model.safetensors" "$TMP/nocfg/"
: >"$TMP/zero/model.safetensors"
expect_error "a folder of GGUF files names one to give" "ggufdir: a folder without config.json is not a Hugging Face model; it holds GGUF files: give one (e.g. .*stories260K.gguf)" \
    "$RUN_OPT" "$TMP/ggufdir" x
expect_error "weights and tokenizer.model without config.json: says the config is missing (not 'vocabulary only')" \
    "nocfg: safetensors weights (model.safetensors) but no config.json beside them" "$RUN_OPT" "$TMP/nocfg" x
expect_error "a 0-byte .safetensors is named as empty (not ./config.json)" "zero/model.safetensors: an empty file (0 bytes)" \
    "$RUN_OPT" "$TMP/zero/model.safetensors" x
expect_error "an empty folder" "empty: no config.json, weights or tokenizer here: not a model folder" "$RUN_OPT" "$TMP/empty" x

# messages that name what is at fault
mkdir -p "$TMP/notok"
cp "$FIX/qa-llama/hf/config.json" "$FIX/qa-llama/hf/model.safetensors" "$TMP/notok/"
expect_error "a model folder without a tokenizer names --tokenizer and --tokens, not the prompt" \
    "^error: .*notok: the model has no tokenizer (no tokenizer.json or tokenizer.model): give one with --tokenizer FILE, or token ids with --tokens" \
    "$RUN_OPT" "$TMP/notok" hi
printf 'caf\351\n' >"$TMP/latin1.txt"
expect_error "invalid UTF-8 in a -f file on a chat model names the file, not the model" "^error: .*latin1.txt: invalid UTF-8 at byte 3$" \
    "$RUN_OPT" "$FIX/qa-llama/qa-llama-q8_0.gguf" -f "$TMP/latin1.txt"
expect_error "... and in --system, the system message" "^error: the system message: invalid UTF-8 at byte 1$" \
    "$RUN_OPT" "$FIX/qa-llama/qa-llama-q8_0.gguf" hi --system "$(printf 'x\377')"
printf '{"messages": [{"role": "user", "content": "hi"}]}' >"$TMP/conv.json"
printf '{%% for x in %%}' >"$TMP/bad.jinja"
expect_error "a template syntax error under --render names the template file, not the conversation" \
    "^error: .*bad.jinja: chat template: line 1:" "$RUN_OPT" --render "$TMP/conv.json" --chat-template "$TMP/bad.jinja"

# --ignore-eos: the answer goes on past its end to -n tokens, the usual answer its beginning;
# -st: the chat answers its first turn and ends
QA="$FIX/qa-llama/qa-llama-q8_0.gguf"
qa_sys="You are a helpful assistant. Answer briefly."
qa_q="Facts: The owner of the newspaper Rowan is Cedric Yeboah. Name the owner of Rowan."
"$RUN_OPT" "$QA" "$qa_q" -sys "$qa_sys" -n 30 -t 1 >"$TMP/eos.txt" 2>"$TMP/eos.err"
"$RUN_OPT" "$QA" "$qa_q" -sys "$qa_sys" -n 30 -t 1 --ignore-eos >"$TMP/noeos.txt" 2>"$TMP/noeos.err"
check "--ignore-eos: 30 tokens where the answer stopped at EOS, the answer their beginning" bash -c "
    grep -q 'generation: 30 tokens' '$TMP/noeos.err' && ! grep -q 'generation: 30 tokens' '$TMP/eos.err' &&
    [ \"\$(head -c \$(( \$(wc -c <'$TMP/eos.txt') - 1 )) '$TMP/noeos.txt')\" = \"\$(head -c \$(( \$(wc -c <'$TMP/eos.txt') - 1 )) '$TMP/eos.txt')\" ]"
printf '%s\nWho is it?\n' "$qa_q" | "$RUN_OPT" "$QA" -i -st -sys "$qa_sys" -n 30 -t 1 >"$TMP/st.txt" 2>/dev/null
check "-st: one turn answered, the next line left unread, exit 0" bash -c "[ $? -eq 0 ] && [ \$(wc -l <'$TMP/st.txt') -eq 1 ] && grep -q 'Cedric Yeboah' '$TMP/st.txt'"

# Progress: a long prompt shows "prompt: NN% (done of total tokens, ...)" on a terminal, rewritten in
# place and cleared; in a pipe nothing but the statistics line (which starts with the load time)
python3 -c "import sys; sys.stdout.write('Once upon a time there was a girl. ' * 700)" >"$TMP/mid.txt"
PYTHONPATH="$(dirname "$0")" python3 - "$RUN_OPT" "$S" "$TMP/mid.txt" >"$TMP/pty-progress.txt" 2>&1 <<'PY'
import os, pty, sys
from pty_util import read_until, status
run, model, prompt = sys.argv[1:]
pid, fd = pty.fork()
if pid == 0:
    os.execv(run, [run, model, "-f", prompt, "-c", "8192", "-n", "1", "-t", "1", "--no-display-prompt"])
out = read_until(fd, lambda b: False, timeout=120)   # all it shows, to its exit
status(pid)
sys.stdout.write(out.decode("utf-8", "replace"))
PY
check "a long prompt on a terminal: a progress line ('prompt: NN% (N of 7702 tokens, N tokens/s, N s left)'), cleared, then the statistics" python3 - "$TMP/pty-progress.txt" <<'PY'
import re, sys
out = open(sys.argv[1], encoding="utf-8", errors="replace", newline="").read()
shown = re.findall(r"\r\x1b\[Kprompt: +\d+% \(\d+ of 7702 tokens, \d+ tokens/s, [\d.]+ s left\)", out)
sys.exit(0 if shown and "\r\x1b[K" in out.split(shown[-1], 1)[1] and re.search(r"load: [\d.]+ s \| prompt: 7702 tokens", out) else 1)
PY
"$RUN_OPT" "$S" -f "$TMP/mid.txt" -c 8192 -n 1 -t 1 --no-display-prompt >/dev/null 2>"$TMP/pipe-progress.txt"
check "... in a pipe: no progress, one statistics line starting with the load time" bash -c "
    [ \$(grep -vc '^warning: -c 8192' '$TMP/pipe-progress.txt') -eq 1 ] && ! grep -aq '%' '$TMP/pipe-progress.txt' && grep -q '^load: [0-9.]* s | prompt: 7702 tokens' '$TMP/pipe-progress.txt'"

# -c past the context the model was trained on: a warning naming both (stories260K: 2048)
"$RUN_OPT" "$S" "Once" -n 2 -t 1 -c 4096 >/dev/null 2>"$TMP/ctx.err"
"$RUN_OPT" "$S" "Once" -n 2 -t 1 -c 2048 >/dev/null 2>"$TMP/ctx2.err"
check "-c 4096 on a model trained on 2048: warned; -c 2048: not" bash -c "
    grep -q '^warning: -c 4096 is more than the 2048 tokens .*stories260K.gguf was trained on' '$TMP/ctx.err' && ! grep -q warning '$TMP/ctx2.err'"

# llama-cli's GPU and batch options: accepted with one note, the answer unchanged
"$RUN_OPT" "$S" "Once upon a time" -n 20 -t 1 -ngl 99 -fa -b 512 -ub 128 --mlock >"$TMP/llama.txt" 2>"$TMP/llama.err"
check "-ngl 99 -fa -b 512 -ub 128 --mlock: the same answer and one note naming them" \
    bash -c "cmp -s '$TMP/arg.txt' '$TMP/llama.txt' && grep -q '^note: -ngl, -fa, -b, -ub, --mlock ignored' '$TMP/llama.err'"
"$RUN_OPT" "$S" "Once upon a time" -n 20 -t 1 -fa on --quiet >"$TMP/fa.txt" 2>"$TMP/fa.err"
check "-fa on takes its value; --quiet leaves out the note" bash -c "cmp -s '$TMP/arg.txt' '$TMP/fa.txt' && [ ! -s '$TMP/fa.err' ]"
expect_error "-ngl's value is still checked" "-ngl expects an integer >= -1, got 'x'" "$RUN_OPT" "$S" x -ngl x

# The seed: drawn from the OS and printed; runs started together differ; the printed seed repeats one
for k in 1 2 3; do "$RUN_OPT" "$S" "Once upon a time" -n 30 --temp 1 -t 1 >"$TMP/r$k.txt" 2>"$TMP/r$k.err" & done
wait
# (three different seeds; the texts as a whole differ, though two short samples can agree by chance:
# a tiny model may end both at the same early end-of-text)
seeds=$(sed -n 's/.*| seed \([0-9]*\)$/\1/p' "$TMP/r1.err" "$TMP/r2.err" "$TMP/r3.err" | sort -u | wc -l)
check "three sampled runs started together draw three seeds ($seeds) and do not all print one text" \
    bash -c "[ $seeds = 3 ] && ! { cmp -s '$TMP/r1.txt' '$TMP/r2.txt' && cmp -s '$TMP/r2.txt' '$TMP/r3.txt'; }"
seed=$(sed -n 's/.*| seed \([0-9]*\)$/\1/p' "$TMP/r2.err")
"$RUN_OPT" "$S" "Once upon a time" -n 30 --temp 1 -t 1 --seed "$seed" --quiet >"$TMP/again.txt"
check "the seed in the stats line ($seed) repeats the run" cmp -s "$TMP/r2.txt" "$TMP/again.txt"

# A full disk on stdout is an error, whatever the mode
for mode in "Once upon a time" "--tokenize x" "-i" "--info"; do
    # shellcheck disable=SC2086
    if [ "$mode" = "Once upon a time" ]; then args=("$mode"); else args=($mode); fi
    printf 'Once\n' | "$RUN_SAN" "$S" "${args[@]}" -n 4 -t 1 >/dev/full 2>"$TMP/full.err"
    rc=$?
    check "stdout on a full disk ($mode): exit 1, 'write failed'" bash -c "[ $rc -eq 1 ] && grep -q 'stdout: write failed' '$TMP/full.err'"
done
printf '{"id": 1, "prompt": "Once", "max_tokens": 4}\n' >"$TMP/one.jsonl"
"$RUN_SAN" "$S" --batch "$TMP/one.jsonl" -t 1 --quiet >/dev/full 2>"$TMP/full.err"
check "stdout on a full disk (--batch): exit 1" bash -c "[ $? -eq 1 ] && grep -q 'stdout: write failed' '$TMP/full.err'"

# A model that computes NaN (every output-norm weight NaN, in a copy): an error, not empty tokens
python3 - "$S" "$TMP/nan.gguf" <<'EOF'
import struct, sys
data = bytearray(open(sys.argv[1], 'rb').read())
pos = 4
def take(fmt):
    global pos
    v = struct.unpack_from('<' + fmt, data, pos); pos += struct.calcsize('<' + fmt); return v[0]
def string():
    global pos
    n = take('Q'); s = bytes(data[pos:pos + n]); pos += n; return s.decode()
sizes = {0: 'B', 1: 'b', 2: 'H', 3: 'h', 4: 'I', 5: 'i', 6: 'f', 7: '?', 10: 'Q', 11: 'q', 12: 'd'}
def value(t):
    if t == 8: return string()
    if t == 9:
        et, n = take('I'), take('Q')
        return [value(et) for _ in range(n)]
    return take(sizes[t])
version, n_tensors, n_kv = take('I'), take('Q'), take('Q')
align = 32
for _ in range(n_kv):
    k = string(); v = value(take('I'))
    if k == 'general.alignment': align = v
infos = {}
for _ in range(n_tensors):
    name = string(); dims = [take('Q') for _ in range(take('I'))]; typ = take('I'); off = take('Q')
    infos[name] = (dims, typ, off)
base = (pos + align - 1) // align * align
dims, typ, off = infos['output_norm.weight']
assert typ == 0
for i in range(dims[0]): struct.pack_into('<f', data, base + off + 4 * i, float('nan'))
open(sys.argv[2], 'wb').write(data)
EOF
expect_error "a model computing NaN: one error naming the model, nothing printed as an answer" \
    "nan.gguf: the model computed a non-finite logit" "$RUN_SAN" "$TMP/nan.gguf" "Once" -n 4 --no-display-prompt
check "... and stdout holds no text" test "$(tr -d '\n' <"$TMP/o.txt" | wc -c)" -eq 0
check "... naming the model once" test "$(grep -o 'nan.gguf' "$TMP/e.txt" | wc -l)" -eq 1

# Messages blame the right thing, once
expect_error "invalid UTF-8 in the prompt blames the prompt, not the model" "^error: the prompt: invalid UTF-8 at byte" \
    "$RUN_OPT" "$S" "$(printf 'abc\377')"
check "... and does not name the model file" bash -c "! grep -q stories260K '$TMP/e.txt'"
expect_error "a missing model is named once" "^error: no/such.gguf: [^/]*$" "$RUN_OPT" no/such.gguf x
expect_error "a prompt past the context names the prompt and the sizes" "^error: the prompt: [0-9]* tokens, longer than the context of 4" \
    "$RUN_OPT" "$S" "Once upon a time there was a little girl" -c 4
mkfifo "$TMP/fifo.gguf"
expect_error "a FIFO as the model is refused, not waited on" "fifo.gguf" timeout 10 "$RUN_OPT" "$TMP/fifo.gguf" x
