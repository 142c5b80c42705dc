#!/usr/bin/env bash
# Checks CONTRIBUTING.md's "To add ..." table against the code, so it cannot drift: for each row
# with a check line (the HTML comment below the table: "row | placeholder=example | pattern | the
# example's own files", fields separated by " | "),
#  1. every file the row names (a `path` from the repository root, the placeholder replaced by the
#     example) exists;
#  2. the count the row states ("N files") is the number of files it names;
#  3. the files under src/ and include/ that name the example (grep -E pattern) are exactly the
#     files the row names there, plus the example's own files the check line lists.
# Usage: tools/check_to_add.sh [DOC] [ROOT]   (defaults: CONTRIBUTING.md, the repository)
# Prints one line per problem and exits 1 if there is any.
set -u
root=${2:-$(cd "$(dirname "$0")/.." && pwd)}
doc=${1:-$root/CONTRIBUTING.md}
[ -f "$doc" ] || { echo "$doc: no such file"; exit 1; }
bad=0
checks=$(awk '/^<!-- to-add checks:/ { on = 1; next } on && /^-->/ { on = 0 } on' "$doc")
[ -n "$checks" ] || { echo "$doc: no to-add check lines"; exit 1; }
n_checked=0
while IFS= read -r line; do
    [ -n "$line" ] || continue
    # fields are separated by " | " (a pattern's own alternatives have no spaces around their |)
    name=$(echo "$line" | awk -F' [|] ' '{ print $1 }'); subst=$(echo "$line" | awk -F' [|] ' '{ print $2 }')
    pattern=$(echo "$line" | awk -F' [|] ' '{ print $3 }'); also=$(echo "$line" | awk -F' [|] ' '{ print $4 }')
    row=$(grep -F "| $name | " "$doc" | head -1)
    if [ -z "$row" ]; then echo "to-add: no table row '$name'"; bad=1; continue; fi
    touch_cell=$(echo "$row" | awk -F' \\| ' '{ print $2 }')
    files=$(echo "$touch_cell" | grep -o '`[^`]*`' | tr -d '`' | grep -E '^(src|include|tools|tests)/' | sort -u)
    if [ "$subst" != "-" ]; then
        key=${subst%%=*}; val=${subst#*=}
        files=$(echo "$files" | sed "s/$key/$val/g" | sort -u)
    fi
    stated=$(echo "$touch_cell" | sed -n 's/^\([0-9][0-9]*\) files\{0,1\}[: ].*/\1/p')
    count=$(echo "$files" | grep -c .)
    if [ -n "$stated" ] && [ "$stated" != "$count" ]; then
        echo "to-add '$name': the row says $stated files but names $count"; bad=1
    fi
    for f in $files; do
        [ -e "$root/$f" ] || { echo "to-add '$name': $f does not exist"; bad=1; }
    done
    # the files that name the example, against the files the row names (and the example's own)
    own=""
    # shellcheck disable=SC2086
    [ "$also" != "-" ] && own=$(cd "$root" && ls -d $also 2>/dev/null)   # may be globs
    want=$( { echo "$files" | grep -E '^(src|include)/'; echo "$own"; } | grep . | sort -u)
    have=$(cd "$root" && grep -rlE "$pattern" src include 2>/dev/null | sort -u)
    for f in $(comm -13 <(echo "$want") <(echo "$have")); do
        echo "to-add '$name': $f names the example ($pattern) but the row does not name it"; bad=1
    done
    for f in $(comm -23 <(echo "$want") <(echo "$have")); do
        echo "to-add '$name': the row names $f but it does not name the example ($pattern)"; bad=1
    done
    n_checked=$((n_checked + 1))
done <<<"$checks"
[ "$n_checked" -gt 0 ] || { echo "to-add: nothing checked"; bad=1; }
exit $bad
