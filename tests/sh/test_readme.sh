# The README's example commands run as written, so it cannot say what the binary does not do: every
# indented command line that starts with ./run (or the printf that writes its input) and names no
# placeholder (MODEL, FILE, [options] ...) is run from a scratch folder laid out like the checkout
# (./run, ../shared/fixtures); each must exit 0 and print something.
source "$(dirname "$0")/lib.sh"
ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
mkdir -p "$TMP/repo"
ln -s "$ROOT/run" "$TMP/repo/run"
ln -s "$(cd "$FIX/.." && pwd)" "$TMP/shared"

# the commands: 4-space indented lines, backslash continuations joined
python3 - "$ROOT/README.md" >"$TMP/commands.txt" <<'PY'
import re, sys
lines, out, cur = open(sys.argv[1]).read().split("\n"), [], None
for line in lines:
    if cur is not None:
        cur += " " + line.strip()
    elif line.startswith("    ./run ") or line.startswith("    printf "):
        cur = line.strip()
    else:
        continue
    if cur.endswith("\\"):
        cur = cur[:-1].rstrip()
        continue
    cmd = re.sub(r"\s+#.*$", "", cur)   # a trailing comment
    cur = None
    if re.search(r"\b(MODEL|FILE|PROMPT|CONV|N)\b|\$SLURM|\$JOB", cmd) or (cmd.startswith("./run") and "[" in cmd):
        continue   # a synopsis, not a command
    out.append(cmd)
print("\n".join(out))
PY
n=0
while IFS= read -r cmd; do
    [ -n "$cmd" ] || continue
    n=$((n + 1))
    (cd "$TMP/repo" && bash -c "$cmd" >"$TMP/out$n.txt" 2>"$TMP/err$n.txt")
    rc=$?
    case "$cmd" in printf*) check "README: $cmd (exit $rc)" test $rc -eq 0; continue ;; esac
    check "README: $(echo "$cmd" | cut -c1-110) (exit $rc, $(wc -c <"$TMP/out$n.txt") bytes out)" \
        bash -c "[ $rc -eq 0 ] && [ -s '$TMP/out$n.txt' ]"
done <"$TMP/commands.txt"
check "README: $n runnable example commands found" test "$n" -ge 5
grep -q 'Cedric Yeboah' "$TMP"/out*.txt
check "README: the qa-llama example answers its question (Cedric Yeboah)" test $? -eq 0
