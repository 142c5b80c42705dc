# The interactive chat (issue 16) on qa-llama (Llama-2 template) and stories260K (no template):
# three turns whose answers equal one-shot runs of the same rendered conversations, with every
# turn after the first prefilling only what is new since the last answer; /clear, /system,
# /help; a conversation that outgrows the context; and on a pseudo-terminal: the prompt, Ctrl-C
# stopping an answer without ending the chat, Ctrl-D and a second Ctrl-C ending it.
source "$(dirname "$0")/lib.sh"
Q="$FIX/qa-llama/qa-llama-q8_0.gguf"
S="$FIX/stories260K/stories260K.gguf"
SYS="You are a helpful assistant. Answer briefly."

# three questions of the eval set, one per line (stdin: -i reads turns from it)
python3 - "$FIX/qa-llama/eval-dev.jsonl" >"$TMP/turns.txt" <<'EOF'
import json, sys
L = [json.loads(l) for l in open(sys.argv[1])]
for i in (0, 1, 4): print(L[i]['user'])
EOF
"$RUN_SAN" "$Q" -i -v -sys "$SYS" -t 1 <"$TMP/turns.txt" >"$TMP/chat.out" 2>"$TMP/chat.err"
rc=$?
check "three turns on stdin (-i): exit 0, three answers" bash -c "[ $rc -eq 0 ] && [ \$(wc -l <'$TMP/chat.out') -eq 3 ]"

# The references: each conversation so far (the chat's own answers as the assistant turns)
# rendered by --render, then answered one-shot as plain text (--raw -f).
python3 - "$TMP" "$SYS" <<'EOF'
import json, sys
tmp, system = sys.argv[1:]
users = open(tmp + '/turns.txt').read().splitlines()
answers = open(tmp + '/chat.out').read().splitlines()
msgs = [{'role': 'system', 'content': system}]
for k in range(3):
    msgs.append({'role': 'user', 'content': users[k]})
    json.dump({'messages': msgs, 'add_generation_prompt': True}, open('%s/conv%d.json' % (tmp, k + 1), 'w'))
    msgs.append({'role': 'assistant', 'content': answers[k]})
EOF
for k in 1 2 3; do
    "$RUN_OPT" "$Q" --render "$TMP/conv$k.json" >"$TMP/render$k.txt"
    "$RUN_OPT" "$Q" --raw -f "$TMP/render$k.txt" --no-display-prompt -t 1 >"$TMP/once$k.txt" 2>"$TMP/once$k.err"
    "$RUN_OPT" "$Q" --raw -f "$TMP/render$k.txt" --tokenize >"$TMP/ids$k.txt"
done
cat "$TMP/once1.txt" "$TMP/once2.txt" "$TMP/once3.txt" >"$TMP/once.txt"
check "each answer equals a one-shot run of the rendered conversation so far" \
    bash -c "[ \$(wc -l <'$TMP/once.txt') -eq 3 ] && cmp -s '$TMP/chat.out' '$TMP/once.txt'"
check "the answers are the eval set's names (turn 1: Cedric Yeboah)" grep -qx " Cedric Yeboah" "$TMP/chat.out"

# Prefill per turn (the -v lines: "turn K: prompt: N tokens, R reused, F new"): turn 1 evaluates its
# whole prompt; turns 2 and 3 reuse all of the previous prompt and answer (the answer's tokens are in
# the cache; its end-of-turn token is not) and evaluate only the rest. Prompt sizes come from
# --tokenize of the renderings, the answers' token counts from the one-shot runs.
check "per-turn prefill: only the new tokens after the first turn" python3 - "$TMP" <<'EOF'
import re, sys
tmp = sys.argv[1]
stats = [re.search(r'^turn (\d+): prompt: (\d+) tokens, (\d+) reused, (\d+) new', l) for l in open(tmp + '/chat.err')]
stats = [tuple(map(int, m.groups())) for m in stats if m]
ids = [len(open('%s/ids%d.txt' % (tmp, k)).read().split()) for k in (1, 2, 3)]
gen = [int(re.search(r'generation: (\d+) tokens', open('%s/once%d.err' % (tmp, k)).read()).group(1)) for k in (1, 2, 3)]
ok = len(stats) == 3 and [s[1] for s in stats] == ids and stats[0][2:] == (0, ids[0])
for k in (1, 2):
    reused, new = stats[k][2], stats[k][3]
    ok = ok and reused == ids[k - 1] + gen[k - 1] and new == ids[k] - reused and 0 < new < ids[k] - ids[k - 1]
if not ok: print(stats, ids, gen)
sys.exit(0 if ok else 1)
EOF

# /clear forgets the conversation and the cache; /system sets the system prompt; /help
q1=$(sed -n 1p "$TMP/turns.txt")
printf '/help\n/nonsense\n%s\n/clear\n/system %s\n%s\n' "$q1" "$SYS" "$q1" >"$TMP/cmds.txt"
"$RUN_SAN" "$Q" -i -v -t 1 <"$TMP/cmds.txt" >"$TMP/cmds.out" 2>"$TMP/cmds.err"
rc=$?
"$RUN_OPT" "$Q" "$q1" --no-display-prompt -t 1 --quiet >"$TMP/nosys.txt"
"$RUN_OPT" "$Q" "$q1" -sys "$SYS" --no-display-prompt -t 1 --quiet >"$TMP/sys.txt"
check "/clear, then /system: the turns equal one-shot runs without and with --system" \
    bash -c "[ $rc -eq 0 ] && cat '$TMP/nosys.txt' '$TMP/sys.txt' | cmp -s - '$TMP/cmds.out'"
check "/clear empties the cache: the next turn reuses nothing" \
    bash -c "grep -q '(conversation cleared)' '$TMP/cmds.err' && grep -q '^turn 2: prompt: [0-9]* tokens, 0 reused' '$TMP/cmds.err'"
check "/help lists the commands; an unknown command is named" \
    bash -c "grep -q '/system TEXT' '$TMP/cmds.err' && grep -q 'unknown command /nonsense' '$TMP/cmds.err'"

# A model without a template chats in plain text: each turn continues the text so far
printf 'Once upon a time\n there was\n' >"$TMP/plain.txt"
"$RUN_SAN" "$S" -i -n 8 -t 1 <"$TMP/plain.txt" >"$TMP/plain.out" 2>/dev/null
a1=$(sed -n 1p "$TMP/plain.out")
"$RUN_OPT" "$S" "Once upon a time${a1} there was" -n 8 -t 1 --no-display-prompt --quiet >"$TMP/plain2.txt"
check "no template: turn 2 continues turn 1's prompt and answer as one text" \
    bash -c "[ \$(wc -l <'$TMP/plain.out') -eq 2 ] && [ -n '$a1' ] && sed -n 2p '$TMP/plain.out' | cmp -s - '$TMP/plain2.txt'"

# A conversation the context cannot hold: the turn is refused with a message, the chat goes on
q2=$(sed -n 2p "$TMP/turns.txt")
printf '%s\n%s\n/clear\n%s\n' "$q1" "$q2" "$q1" >"$TMP/long.txt"
"$RUN_SAN" "$Q" -i -c 96 -t 1 <"$TMP/long.txt" >"$TMP/long.out" 2>"$TMP/long.err"
rc=$?
check "a turn past the context: its error names the sizes, /clear recovers, and the good last turn exits 0" bash -c "
    [ $rc -eq 0 ] && grep -Eq 'the conversation has (9[7-9]|1[0-9][0-9]) tokens, more than the context of 96: /clear starts a new one' '$TMP/long.err' &&
    [ \$(grep -c 'Cedric Yeboah' '$TMP/long.out') -eq 2 ]"

printf '%s\n%s\n' "$q1" "$q2" | "$RUN_OPT" "$Q" -i -c 96 -t 1 >/dev/null 2>&1
check "... a chat whose last turn is refused exits 1" test $? -eq 1
# A turn longer than the context can hold is read to its end without keeping it (bounded memory),
# refused with the sizes, and the chat goes on
python3 -c "import sys; sys.stdout.write('word ' * 4000000 + '\n' + '$q1' + '\n')" >"$TMP/huge.txt"
/usr/bin/time -f '%M' -o "$TMP/huge.rss" "$RUN_OPT" "$Q" -i -c 96 -t 1 <"$TMP/huge.txt" >"$TMP/huge.out" 2>"$TMP/huge.err"
rc=$?
check "a 20 MB turn: refused as longer than the context ($(head -c 120 "$TMP/huge.err")), the next answered, exit 0, $(( $(cat "$TMP/huge.rss") / 1024 )) MB peak" bash -c "
    [ $rc -eq 0 ] && grep -q 'the turn is longer than [0-9]* bytes, more than the context can hold; skipped' '$TMP/huge.err' &&
    grep -q 'Cedric Yeboah' '$TMP/huge.out' && [ \$(cat '$TMP/huge.rss') -lt 200000 ]"

# On a pseudo-terminal: "> " prompts, Ctrl-C stops a long answer and the chat goes on, Ctrl-C twice
# at the prompt ends it; Ctrl-D ends it too.
# (The line editor's control sequences -- redraws, bracketed paste on and off -- are taken out of
# what the pty shows before it is checked.)
PYTHONPATH="$(dirname "$0")" python3 - "$RUN_SAN" "$S" >"$TMP/pty.txt" 2>&1 <<'EOF'
import os, pty, re, select, signal, sys, time
import pty_util
from pty_util import status
run, model = sys.argv[1:]

def spawn():
    pid, fd = pty.fork()
    if pid == 0:
        os.execv(run, [run, model, '-n', '-1', '-c', '2048', '-t', '1', '-v'])
    return pid, fd

def read_until(fd, want, timeout=60): return pty_util.read_until(fd, want, timeout, strip=True)

pid, fd = spawn()
out = read_until(fd, lambda b: b.endswith(b'> '))
print('banner and prompt:', b'/help for commands' in out and out.endswith(b'> '))
os.write(fd, b'Once upon a time\n')
out = read_until(fd, lambda b: len(b) > 200)           # the answer is streaming
os.write(fd, b'\x03')                                   # Ctrl-C
out += read_until(fd, lambda b: b'\r\n> ' in b[b.rfind(b'turn 1'):] if b'turn 1' in b else False)
stopped = b'| stopped' in out and b'\r\n> ' in out[out.find(b'turn 1'):]
gen = int(out[out.find(b'generation: ') + 12:].split()[0]) if b'generation: ' in out else -1
print('Ctrl-C stopped the answer (%d tokens) and the chat goes on:' % gen, stopped and 0 < gen < 2000)
os.write(fd, b' Lily\n')                               # a second turn, stopped the same way
out = read_until(fd, lambda b: len(b) > 100)
os.write(fd, b'\x03')
out += read_until(fd, lambda b: b'turn 2' in b and b.endswith(b'> '))
print('a second answer streams and stops the same way:', b'turn 2' in out and b'| stopped' in out)
os.write(fd, b'\x03')
out = read_until(fd, lambda b: b'again' in b)
print('Ctrl-C at the prompt says how to end:', b'Ctrl-C again or Ctrl-D' in out)
os.write(fd, b'\x03')
print('a second Ctrl-C at the prompt ends the chat with status 0:', status(pid) == 0)

pid, fd = spawn()
read_until(fd, lambda b: b.endswith(b'> '))
os.write(fd, b'\x04')                                   # Ctrl-D
print('Ctrl-D at the prompt ends the chat with status 0:', status(pid) == 0)
EOF
for what in "banner and prompt" "Ctrl-C stopped the answer" "a second answer streams and stops the same way" \
            "Ctrl-C at the prompt says how to end" \
            "a second Ctrl-C at the prompt ends the chat" "Ctrl-D at the prompt ends the chat"; do
    if grep -q "^$what.*: True$" "$TMP/pty.txt"; then ok "pty: $what"; else notok "pty: $what ($(grep "^$what" "$TMP/pty.txt"))"; fi
done

# The line editor (a pty is a terminal on stdin and stdout): keys edit the line, Up recalls, a
# bracketed paste and a """ block are one turn each, the history file is written (mode 0600) and
# read back by the next chat, --no-history writes nothing, a too-long paste is refused, and the
# terminal's modes are put back after the chat, also when it is ended by SIGTERM. The turns sent
# are read back from the history file (one entry a line, line breaks escaped as \n).
"$RUN_OPT" "$S" "Once" -n 8 -t 1 --no-display-prompt --quiet >"$TMP/once_ed.txt" 2>/dev/null
PYTHONPATH="$(dirname "$0")" python3 - "$RUN_SAN" "$S" "$TMP" >"$TMP/edit.txt" 2>&1 <<'EOF'
import os, pty, re, select, signal, stat, sys, termios, time
from pty_util import plain, read_until, send, status
run, model, tmp = sys.argv[1:]

def spawn(state, *extra):
    pid, fd = pty.fork()
    if pid == 0:
        os.environ['XDG_STATE_HOME'] = state
        os.execv(run, [run, model, '-n', '8', '-t', '1', '-v'] + list(extra))
    return pid, fd, termios.tcgetattr(fd)

def turn(fd, keys, k):   # sends keys, returns the output up to the next prompt after "turn k"
    send(fd, keys)
    return read_until(fd, lambda b: b'turn %d:' % k in b and b.endswith(b'> '))


state = tmp + '/state'
hist = state + '/tessera/history'
pid, fd, modes = spawn(state)
read_until(fd, lambda b: b.endswith(b'> '))
a = termios.tcgetattr(fd)
print('at the prompt the terminal is raw (no ECHO, no ICANON):', not (a[3] & (termios.ECHO | termios.ICANON)))
out = turn(fd, b'Onxe\x1b[D\x7fc\r', 1)                   # Left, Backspace, c: "Once"
answer = plain(out).split(b'> Once\r\n')[-1].split(b'\r\nturn 1:')[0].replace(b'\r\n', b'\n') + b'\n'
print('Left and Backspace edit the line: the answer is one-shot "Once"\'s:', answer == open(tmp + '/once_ed.txt', 'rb').read())
out = turn(fd, b'\x1b[A\r', 2)                           # Up: "Once" again
print('Up recalls the previous turn:', out.count(b'> Once') >= 1 and b'turn 2:' in out)
# Ctrl-U kills, Ctrl-W deletes words, Home/Delete take the two-byte u-umlaut, End, Ctrl-Left/Alt-F
# word moves, Ctrl-A/Ctrl-E, Ctrl-K
keys = (b'junk\x15' + b'x y\x17\x17' + 'ünce'.encode() + b'\x1b[H\x1b[3~O\x1b[F upon time' +
        b"\x1b[1;5Da \x1bf" + b"\x01\x05 tail\x1bb\x7f\x0b\r")
out = turn(fd, keys, 3)
print('Ctrl-U, Ctrl-W, Home, Delete, End, word moves, Ctrl-K: the turn is "Once upon a time":',
      b'turn 3:' in out and b'turn 4' not in out)
out = turn(fd, b'\x1b[200~Once upon\r\na time\x1b[201~\r', 4)   # a pasted block of two lines
print('a pasted two-line block is one turn:', b'turn 4:' in out and out.count(b'turn ') == 1)
out = turn(fd, b'"""\rOnce\rthere\r"""\r', 5)
print('a """ block is one turn:', b'turn 5:' in out and out.count(b'turn ') == 1)
send(fd, b'\x04')
rc = status(pid)
print('Ctrl-D ends the chat with status 0:', rc == 0)
print('the terminal modes are as before the chat:', termios.tcgetattr(fd) == modes)
entries = [l.replace('\\n', '\n') for l in open(hist).read().splitlines()] if os.path.exists(hist) else []
print('the history file holds the turns sent (%r):' % entries,
      entries == ['Once', 'Once upon a time', 'Once upon\na time', 'Once\nthere'])
print('the history file is private (0600):', os.path.exists(hist) and stat.S_IMODE(os.stat(hist).st_mode) == 0o600)

# a second chat reads the history: Up recalls the last turn of the first
pid, fd, modes = spawn(state)
read_until(fd, lambda b: b.endswith(b'> '))
out = turn(fd, b'\x1b[A\r', 1)
send(fd, b'\x12up')                                     # Ctrl-R "up": the newest turn holding it
out2 = read_until(fd, lambda b: b"(reverse-i-search)`up': Once upon" in b)
out2 += turn(fd, b'\r', 2)
send(fd, b'\x04')
print('a second chat recalls the first one\'s turns:', b'> Once\r\nthere' in plain(out) and status(pid) == 0)
last = open(hist).read().splitlines()[-1]
print('Ctrl-R finds the newest turn holding what is typed (%r):' % last, b'reverse-i-search' in out2 and last == 'Once upon\\na time')

# the history file keeps its last 1000 entries
state5 = tmp + '/state5'
os.makedirs(state5 + '/tessera')
open(state5 + '/tessera/history', 'w').write(''.join('e%d\n' % i for i in range(1005)))
pid, fd, modes = spawn(state5)
read_until(fd, lambda b: b.endswith(b'> '))
send(fd, b'\x04')
lines = open(state5 + '/tessera/history').read().splitlines()
print('the history file is cut to its last 1000 entries:', status(pid) == 0 and lines == ['e%d' % i for i in range(5, 1005)])

# --no-history: nothing read or written
state2 = tmp + '/state2'
pid, fd, modes = spawn(state2, '--no-history')
read_until(fd, lambda b: b.endswith(b'> '))
out = turn(fd, b'\x1b[AOnce\r', 1)
send(fd, b'\x04')
print('--no-history writes nothing:', status(pid) == 0 and b'turn 1:' in out and not os.path.exists(state2))

# a paste longer than the turn limit is refused, the chat goes on
pid, fd, modes = spawn(tmp + '/state3', '-c', '32')
read_until(fd, lambda b: b.endswith(b'> '))
send(fd, b'\x1b[200~' + b'word ' * 20000 + b'\x1b[201~\r')
out = read_until(fd, lambda b: b'skipped' in b and b.endswith(b'> '))
out += turn(fd, b'Once\r', 1)
send(fd, b'\x04')
print('a pasted turn past the limit is refused and the chat goes on:',
      b'the turn is longer than' in out and b'turn 1:' in out and status(pid) == 0)

# SIGTERM at the prompt: the terminal is put back, the signal ends the chat
pid, fd, modes = spawn(tmp + '/state4')
read_until(fd, lambda b: b.endswith(b'> '))
send(fd, b'abc')
read_until(fd, lambda b: b.endswith(b'abc'))
os.kill(pid, signal.SIGTERM)
rc = status(pid)
print('SIGTERM at the prompt restores the terminal modes:', rc == -signal.SIGTERM and termios.tcgetattr(fd) == modes)
EOF
for what in "at the prompt the terminal is raw" "Left and Backspace edit the line" "Up recalls the previous turn" \
            "Ctrl-U, Ctrl-W, Home, Delete, End, word moves, Ctrl-K" "a pasted two-line block is one turn" \
            "a \"\"\" block is one turn" "Ctrl-D ends the chat with status 0" "the terminal modes are as before the chat" \
            "the history file holds the turns sent" "the history file is private" "a second chat recalls" \
            "Ctrl-R finds the newest turn" "the history file is cut to its last 1000 entries" \
            "--no-history writes nothing" "a pasted turn past the limit is refused" "SIGTERM at the prompt restores"; do
    if grep -q "^$what.*: True$" "$TMP/edit.txt"; then ok "line editor: $what"; else notok "line editor: $what ($(grep "^$what" "$TMP/edit.txt" || tail -3 "$TMP/edit.txt"))"; fi
done
