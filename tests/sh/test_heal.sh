# --heal (token healing) on stories260K: a prompt cut inside a word continues as the whole word
# would; without healing it does not. The stats line reports time to first token and decode speed.
source "$(dirname "$0")/lib.sh"
M="$FIX/stories260K/stories260K.gguf"

# "ti" is " t" + "i" in this vocabulary, "time" is one token: unhealed, the model goes on from
# " t" + "i" ("tire was ..."); healed, it re-spells " ti" as " time" and continues like the uncut prompt.
"$RUN_OPT" "$M" "Once upon a time" -n 12 -t 1 --quiet >"$TMP/uncut.txt"
"$RUN_SAN" "$M" "Once upon a ti" -n 13 -t 1 --heal >"$TMP/healed.txt" 2>"$TMP/healed.err"
"$RUN_OPT" "$M" "Once upon a ti" -n 12 -t 1 --quiet >"$TMP/cut.txt"
check "'Once upon a ti' --heal prints what 'Once upon a time' prints (' time' + 12 tokens)" cmp -s "$TMP/uncut.txt" "$TMP/healed.txt"
check "'Once upon a ti' without --heal continues differently" bash -c "! cmp -s '$TMP/uncut.txt' '$TMP/cut.txt' && grep -q '^Once upon a ti' '$TMP/cut.txt'"
check "stats line: time to first token, decode tok/s, healing noted" \
    grep -q "prompt: 4 tokens, .* | first token: [0-9.]* ms | generation: 13 tokens, [0-9.]* tok/s, [0-9.]* MB of weights read per step | healed" "$TMP/healed.err"

# a word split over several tokens: "gi" = " g" + "i", "girl" = " g" + "ir" + "l"
p="Once upon a time there was a little"
"$RUN_OPT" "$M" "$p girl" -n 12 -t 1 --quiet >"$TMP/uncut2.txt"
"$RUN_OPT" "$M" "$p gi" -n 16 -t 1 --heal --quiet >"$TMP/healed2.txt"
"$RUN_OPT" "$M" "$p gi" -n 16 -t 1 --quiet >"$TMP/cut2.txt"
same_start() { python3 -c "
import sys
a, b = (open(f).read().rstrip('\n') for f in sys.argv[1:3])
n = min(len(a), len(b))
sys.exit(0 if n >= int(sys.argv[3]) and a[:n] == b[:n] else 1)" "$@"; }
check "'... little gi' --heal continues as '... little girl' (first 70 characters agree)" same_start "$TMP/uncut2.txt" "$TMP/healed2.txt" 70
check "'... little gi' without --heal does not" bash -c "! grep -q 'little girl' '$TMP/cut2.txt'"

# Prompts that do not end in a word are left alone
"$RUN_OPT" "$M" "Once upon a time," -n 10 -t 1 --quiet >"$TMP/comma.txt"
"$RUN_OPT" "$M" "Once upon a time," -n 10 -t 1 --heal >"$TMP/comma-heal.txt" 2>"$TMP/comma.err"
check "a prompt ending in ',' is not healed" bash -c "cmp -s '$TMP/comma.txt' '$TMP/comma-heal.txt' && ! grep -q healed '$TMP/comma.err'"
Q="$FIX/qa-llama/qa-llama-q8_0.gguf"
"$RUN_OPT" "$Q" "Facts: The owner of the newspaper Rowan is Cedric Yeboah. Name the owner of Rowan." -n 24 -t 1 --heal >"$TMP/chat.txt" 2>"$TMP/chat.err"
check "a chat prompt (ends in [/INST]) is not healed and answers as usual" bash -c "grep -qx ' Cedric Yeboah' '$TMP/chat.txt' && ! grep -q healed '$TMP/chat.err'"

# Three identical requests give identical text: separate runs, and three lines of one batch (the
# second and third reuse the cache the first left)
for i in 1 2 3; do "$RUN_OPT" "$M" "Lily went to the par" -n 20 -t 1 --heal --temp 0.9 --seed 11 --quiet >"$TMP/r$i.txt"; done
check "three identical --heal runs (sampled, seeded) print identical text" bash -c "cmp -s '$TMP/r1.txt' '$TMP/r2.txt' && cmp -s '$TMP/r1.txt' '$TMP/r3.txt'"
line='{"prompt": "Lily went to the par", "max_tokens": 20, "temperature": 0.9, "seed": 11}'
printf '%s\n%s\n%s\n' "$line" "$line" "$line" >"$TMP/three.jsonl"
"$RUN_SAN" "$M" --batch "$TMP/three.jsonl" --heal -t 1 --quiet >"$TMP/three-out.jsonl"
check "three identical --heal lines in a batch: identical answers, equal to the single run" python3 -c "
import json, sys
A = [json.loads(l)['answer'] for l in open('$TMP/three-out.jsonl')]
single = open('$TMP/r1.txt').read()
sys.exit(0 if len(A) == 3 and len(set(A)) == 1 and single == 'Lily went to the par' + A[0] + '\n' else 1)"
