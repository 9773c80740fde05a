#!/usr/bin/env bash
# Fails when the core's files include each other in a circle: src/a.c (or
# a.h) including "b.h" while b.c or b.h, through any chain, includes "a.h".
# Modules are named by their stem (a.c and a.h are module a); only quoted
# includes of headers that exist in src/ count.  A circle means two rooms
# each reach into the other, which is what issue 13 took apart (session.c
# and usage.c): the data path must run one way, from the index to its
# consumers.  Usage: tests/check-includes.sh [DIR] (default src).
set -euo pipefail
dir=${1:-src}
cd "$(dirname "$0")/.."

# "from to" lines: module from includes header to.h of another module.
edges=$(for f in "$dir"/*.c "$dir"/*.h; do
	from=$(basename "$f"); from=${from%.*}
	sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([^"/]*\)\.h".*/\1/p' "$f" |
		while read -r to; do
			[ "$to" != "$from" ] && [ -e "$dir/$to.h" ] && echo "$from $to"
		done
done | sort -u)

# Depth-first search for a back edge; prints the first circle found.
awk '
{ out[$1] = out[$1] " " $2; nodes[$1]; nodes[$2] }
function visit(n,    i, k, list, m) {
	state[n] = 1; stack[++depth] = n
	k = split(out[n], list, " ")
	for (i = 1; i <= k; i++) {
		m = list[i]
		if (state[m] == 1) {
			line = m
			for (j = depth; j >= 1 && stack[j] != m; j--) line = stack[j] " -> " line
			print "include circle: " m " -> " line > "/dev/stderr"
			found = 1
			return
		}
		if (!state[m]) visit(m)
		if (found) return
	}
	state[n] = 2; depth--
}
END {
	for (n in nodes) if (!state[n] && !found) visit(n)
	exit found
}' <<<"$edges"
echo "includes: no circle among $(ls "$dir"/*.c | wc -l) source files"
