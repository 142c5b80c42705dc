#!/usr/bin/env bash
# The dependency rules of src/, checked from the sources and the compiled objects:
#  1. includes point one way, in the order data flows:
#        core -> io -> text | template | kernels -> load -> run -> generate -> cli
#     (a file includes headers of its own folder or of earlier folders; text, template and kernels
#     are siblings and include nothing of each other);
#  2. no two files call each other, directly or round a longer cycle (from the symbols the objects
#     define and use);
#  3. every exported symbol carries its module's prefix (the first word of its file's name, or
#     one of the file's declared prefixes below) or the public ts_ prefix.
# Usage: tools/check_layers.sh SRC_DIR [OBJ_DIR]   (OBJ_DIR: the library's objects, for 2 and 3)
# Prints one line per violation and exits 1 if there is any.
set -u
src=${1:?usage: check_layers.sh SRC_DIR [OBJ_DIR]}
obj=${2:-}
bad=0

# 1. include direction (one grep over the tree; awk knows the order)
if ! grep -H -o '^[[:space:]]*#[[:space:]]*include[[:space:]]*"[^"]*"' $(find "$src" -name '*.[ch]' | sort) |
    awk -v src="$src/" '
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
        END { exit bad }'; then bad=1; fi

if [ -n "$obj" ]; then
    syms=$(mktemp)
    trap 'rm -f "$syms" "$syms.def" "$syms.use" "$syms.edges"' EXIT
    # "object kind symbol" for every defined global (D) and every use (U), one nm for all objects
    nm -A $(find "$obj" -name '*.o' | sort) 2>/dev/null | awk -v obj="$obj/" '
        { f = $1; sub(/:.*/, "", f); f = substr(f, length(obj) + 1); rest = $0; sub(/^[^:]*:/, "", rest); n = split(rest, w, " ") }
        n == 3 && w[2] ~ /^[TDRBVW]$/ { print f, "D", w[3] }
        n == 2 && w[1] == "U" { print f, "U", w[2] }' >"$syms"
    awk '$2 == "D" { print $3, $1 }' "$syms" | sort -k1,1 >"$syms.def"
    awk '$2 == "U" { print $3, $1 }' "$syms" | sort -k1,1 >"$syms.use"
    # 2. file-level call graph: user -> definer; tsort reports any cycle
    join "$syms.use" "$syms.def" | awk '$2 != $3 { print $2, $3 }' | sort -u >"$syms.edges"
    if ! tsort "$syms.edges" >/dev/null 2>"$syms.def"; then
        echo "call cycle between files: $(grep -v 'input contains a loop' "$syms.def" | sed 's/^tsort: //' | tr '\n' ' ')"
        bad=1
    fi
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
        END { exit bad }' "$syms"; then bad=1; fi
fi
exit $bad
