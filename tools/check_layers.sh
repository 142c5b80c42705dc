#!/usr/bin/env bash
# The dependency rules of src/, checked from the sources and the compiled objects:
#  1. includes point one way, in the order data flows:
#        core -> io -> text | template | kernels -> load -> run -> generate -> cli
#     (a file includes headers of its own folder or of earlier folders; text, template and kernels
#     are siblings and include nothing of each other);
#  2. the module graph has no cycle. A module is a path stem under SRC_DIR (text/bpe.c and
#     text/bpe.h are the module text/bpe; a header with no .c of its stem is a module of its own,
#     a leaf of types). Its edges: includes (the including file's module -> the header's) and,
#     from the objects, calls and data uses (the user's module -> the definer's). So arrows cannot
#     run backwards inside a folder either: a header paired with X.c declares only what X.c
#     defines, or a Y.c that includes it for one of Y's own functions depends on X while X calls Y.
#     Each cycle is one line: the modules round it, the include or use behind each arrow, and the
#     other modules (and arrows) tangled with it;
#  3. every exported symbol carries its module's prefix (the first word of its file's name, or
#     one of the file's declared prefixes below) or the public ts_ prefix.
# Usage: tools/check_layers.sh SRC_DIR [OBJ_DIR]   (OBJ_DIR: the library's objects, for the uses
# of 2 and for 3; src/cli is linked straight into ./run, so its modules are seen by includes only)
# Prints one line per violation and exits 1 if there is any.
#
# LAYERS_ALLOW_CYCLES_IN (default: none) names folders whose cycles are tolerated while a refactor is
# under way: a cycle whose modules all lie in one of them is not reported.
set -u
src=${1:?usage: check_layers.sh SRC_DIR [OBJ_DIR]}
obj=${2:-}
allow=${LAYERS_ALLOW_CYCLES_IN-}
bad=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# "file:#include "x/y.h"" for every quoted include under SRC_DIR
# (/dev/null: an empty tree must not leave grep reading stdin)
grep -H -o '^[[:space:]]*#[[:space:]]*include[[:space:]]*"[^"]*"' /dev/null $(find "$src" -name '*.[ch]' | sort) >"$tmp/inc"

# 1. include direction (awk knows the order)
if ! awk -v src="$src/" '
        function rank(d) { return d == "core" ? 0 : d == "io" ? 1 : d == "text" || d == "template" || d == "kernels" ? 2 : d == "load" ? 3 : d == "run" ? 4 : d == "generate" ? 5 : d == "cli" ? 6 : -1 }
        {
            f = $0; sub(/:.*/, "", f); rel = substr(f, length(src) + 1)
            dir = rel; if (!sub(/\/[^\/]*$/, "", dir)) dir = "."
            inc = $0; sub(/^[^"]*"/, "", inc); sub(/"$/, "", inc)
            idir = inc; if (!sub(/\/.*/, "", idir)) next        # tessera.h, system headers
            if (idir == dir) next
            if (rank(dir) < 0) { printf "%s: folder %s has no place in the layer order\n", rel, dir; bad = 1; next }
            if (rank(idir) < 0 || rank(idir) >= rank(dir)) {
                printf "%s: includes \"%s\": %s/ may include only earlier layers (core -> io -> text | template | kernels -> load -> run -> generate -> cli)\n", rel, inc, dir
                bad = 1
            }
        }
        END { exit bad }' "$tmp/inc"; then bad=1; fi

# 2. module graph: "from to evidence" lines, includes first, then calls
awk -v src="$src/" '
    {
        f = $0; sub(/:.*/, "", f); rel = substr(f, length(src) + 1)
        inc = $0; sub(/^[^"]*"/, "", inc); sub(/"$/, "", inc)
        if (inc !~ /\//) next                                  # tessera.h, system headers
        m = rel; sub(/\.[ch]$/, "", m); t = inc; sub(/\.h$/, "", t)
        if (m != t) printf "%s %s %s includes \"%s\"\n", m, t, rel, inc
    }' "$tmp/inc" | while read -r m t rest; do
        [ -f "$src/$t.h" ] && echo "$m $t $rest"                 # only headers of SRC_DIR
    done >"$tmp/edges"
if [ -n "$obj" ]; then
    # "object kind symbol" for every defined global (D) and every use (U), one nm for all objects
    nm -A $(find "$obj" -name '*.o' | sort) 2>/dev/null | awk -v obj="$obj/" '
        { f = $1; sub(/:.*/, "", f); f = substr(f, length(obj) + 1); rest = $0; sub(/^[^:]*:/, "", rest); n = split(rest, w, " ") }
        n == 3 && w[2] ~ /^[TDRBVW]$/ { print f, "D", w[3] }
        n == 2 && w[1] == "U" { print f, "U", w[2] }' >"$tmp/syms"
    awk '$2 == "D" { print $3, $1 }' "$tmp/syms" | sort -k1,1 >"$tmp/def"
    awk '$2 == "U" { print $3, $1 }' "$tmp/syms" | sort -k1,1 >"$tmp/use"
    join "$tmp/use" "$tmp/def" | awk '$2 != $3 {
        m = $2; sub(/\.o$/, "", m); t = $3; sub(/\.o$/, "", t)
        printf "%s %s %s uses %s of %s\n", m, t, $2, $1, $3 }' | sort -k1,2 >>"$tmp/edges"
fi
# One line per strongly connected set of modules: its shortest cycle through its first module, then
# the rest of the set, each arrow with the include or call behind it (breadth-first searches; the
# graph has a few hundred modules).
if ! awk -v allow=" $allow " '
    {
        u = $1; v = $2; ev = $0; sub(/^[^ ]* [^ ]* /, "", ev)
        if (!(u in idx)) { idx[u] = ++n; name[n] = u }
        if (!(v in idx)) { idx[v] = ++n; name[n] = v }
        if (!((u, v) in why)) { why[u, v] = ev; from[++ne] = u; to[ne] = v; succ[u] = succ[u] " " v; pred[v] = pred[v] " " u }
    }
    function folder(m,  d) { d = m; if (!sub(/\/.*/, "", d)) d = "."; return d }
    END {
        for (i = 1; i <= n; i++) {
            s = name[i]; if (s in done) continue
            # forward from s, recording parents; the first arrow back into s closes the shortest cycle
            split("", par); split("", seen); q[1] = s; head = 1; tail = 1; seen[s] = 1; last = ""
            while (head <= tail) {
                u = q[head++]; k = split(succ[u], w, " ")
                for (j = 1; j <= k; j++) {
                    v = w[j]
                    if (v == s) { if (last == "") last = u; continue }
                    if (!(v in seen)) { seen[v] = 1; par[v] = u; q[++tail] = v }
                }
            }
            if (last == "") continue
            # the strongly connected set: what reaches s among what s reaches
            split("", back); q[1] = s; head = 1; tail = 1; back[s] = 1
            while (head <= tail) { u = q[head++]; k = split(pred[u], w, " "); for (j = 1; j <= k; j++) if (!(w[j] in back)) { back[w[j]] = 1; q[++tail] = w[j] } }
            split("", inset); onefolder = folder(s)
            for (j = 1; j <= n; j++) if ((name[j] in seen) && (name[j] in back)) {
                inset[name[j]] = 1; done[name[j]] = 1; if (folder(name[j]) != onefolder) onefolder = ""
            }
            if (onefolder != "" && index(allow, " " onefolder " ")) continue
            # the cycle s -> ... -> last -> s
            c = 0; for (u = last; u != s; u = par[u]) path[++c] = u
            split("", oncycle); line = s; evs = ""; prev = s
            for (j = c; j >= 1; j--) { line = line " -> " path[j]; evs = evs why[prev, path[j]] "; "; oncycle[prev, path[j]] = 1; prev = path[j] }
            line = line " -> " s; evs = evs why[prev, s]; oncycle[prev, s] = 1
            others = ""; for (j = 1; j <= n; j++) if ((name[j] in inset) && name[j] != s) {
                on = 0; for (t = 1; t <= c; t++) if (path[t] == name[j]) on = 1
                if (!on) others = others " " name[j]
            }
            rest = ""
            for (j = 1; j <= ne; j++) if ((from[j] in inset) && (to[j] in inset) && !((from[j], to[j]) in oncycle))
                rest = rest (rest == "" ? "" : "; ") why[from[j], to[j]]
            printf "module cycle: %s (%s)", line, evs
            if (others != "") printf "; tangled with it:%s", others
            if (rest != "") printf " (%s)", rest
            printf "\n"; bad = 1
        }
        exit bad
    }' "$tmp/edges"; then bad=1; fi

if [ -n "$obj" ]; then
    # 3. exported symbol prefixes
    if ! awk '
        BEGIN { extra["cpu"] = "simd"; extra["types"] = "type"; extra["tensor_type"] = "type"; extra["q8_act"] = "act"; extra["matmul"] = "kernel" }
        $2 == "D" {
            n = split($1, parts, "/"); base = parts[n]; sub(/\.o$/, "", base)
            first = base; sub(/_.*/, "", first)
            s = $3; sfirst = s; sub(/_.*/, "", sfirst)
            if (sfirst != "ts" && sfirst != first && sfirst != extra[base]) {
                printf "%s: exports '\''%s'\'' without its module prefix ('\''%s_'\'' or '\''ts_'\'')\n", $1, s, first; bad = 1
            }
        }
        END { exit bad }' "$tmp/syms"; then bad=1; fi
fi
exit $bad
