#!/usr/bin/env bash
# Fails when the objects of the FUSE front end call each other in a
# circle: fs/a.o using a symbol fs/b.o defines while b.o, through any
# chain, uses one of a.o's.  The graph is read from the objects
# themselves (nm: each object's defined and undefined global symbols), so
# it counts calls and data, not includes.  fs/ is meant to run one way,
# the way src/ does (check-includes.sh): ops.o (the table) on top, the
# handlers below it, routing (route.o) and the state modules below them,
# so that each module can be linked, and tested, without those above it.
#
# Every strongly connected group of objects is reported, with each edge
# inside it and the symbols that make it, then every elementary circle
# through the group (up to 50 per group).
# Usage: tests/check-fs-deps.sh [OBJDIR] (default build/fs).
set -euo pipefail
cd "$(dirname "$0")/.."
dir=${1:-build/fs}
shopt -s nullglob
objs=("$dir"/*.o)
if [ ${#objs[@]} -eq 0 ]; then
	echo "check-fs-deps: no objects in $dir (build first)" >&2
	exit 2
fi

# "D module symbol" for what a module defines, "U module symbol" for what
# it uses.
for o in "${objs[@]}"; do
	m=$(basename "$o" .o)
	nm -g --defined-only "$o" | awk -v m="$m" 'NF >= 3 { print "D", m, $3 }'
	nm -u "$o" | awk -v m="$m" 'NF >= 2 { print "U", m, $2 }'
done | awk -v n_objs=${#objs[@]} '
$1 == "D" { def[$3] = $2; mods[$2]; next }
$1 == "U" { use[++n_use] = $2 " " $3; mods[$2] }
END {
	for (i = 1; i <= n_use; i++) {
		split(use[i], u, " ")
		to = def[u[2]]
		if (to == "" || to == u[1])
			continue
		e = u[1] SUBSEP to
		if (!(e in syms)) {
			syms[e] = u[2]
			out[u[1]] = out[u[1]] " " to
		} else {
			syms[e] = syms[e] " " u[2]
		}
	}
	# Tarjan: the strongly connected components.
	for (m in mods)
		if (!(m in index_of))
			strong(m)
	bad = 0
	for (c = 1; c <= n_comp; c++) {
		if (comp_size[c] < 2)
			continue
		bad = 1
		k = split(comp[c], members, " ")
		sort_words(members, k)
		list = ""
		for (i = 1; i <= k; i++)
			list = list (i > 1 ? " " : "") members[i]
		printf "circle among %d objects: %s\n", k, list > "/dev/stderr"
		for (i = 1; i <= k; i++) {
			a = members[i]
			for (j = 1; j <= k; j++) {
				b = members[j]
				if ((a SUBSEP b) in syms)
					printf "  %s.o -> %s.o: %s\n", a, b, syms[a SUBSEP b] > "/dev/stderr"
			}
		}
		# Elementary circles, each from its least member.
		for (i = 1; i <= k; i++)
			in_comp[members[i]] = c
		n_found = 0
		for (i = 1; i <= k && n_found < 50; i++) {
			start = members[i]
			depth = 0
			circles(start, start)
			done_start[start] = 1
		}
		if (n_found >= 50)
			print "  (more circles not shown)" > "/dev/stderr"
	}
	if (bad) {
		print "check-fs-deps: objects of fs/ call each other in a circle (above)" > "/dev/stderr"
		exit 1
	}
	printf "fs-deps: no circle among %d objects of fs/\n", n_objs
}
function strong(v,    list, k, i, w) {
	index_of[v] = low[v] = ++counter
	stack[++sp] = v; on_stack[v] = 1
	k = split(out[v], list, " ")
	for (i = 1; i <= k; i++) {
		w = list[i]
		if (!(w in index_of)) {
			strong(w)
			if (low[w] < low[v]) low[v] = low[w]
		} else if (on_stack[w] && index_of[w] < low[v]) {
			low[v] = index_of[w]
		}
	}
	if (low[v] == index_of[v]) {
		n_comp++
		do {
			w = stack[sp--]; on_stack[w] = 0
			comp[n_comp] = comp[n_comp] " " w
			comp_size[n_comp]++
		} while (w != v)
	}
}
# Depth-first from start, within the component, never through a member
# already used as a start (so each circle is printed once).
function circles(start, v,    list, k, i, w, line, j) {
	path[++depth] = v; on_path[v] = 1
	k = split(out[v], list, " ")
	sort_words(list, k)
	for (i = 1; i <= k && n_found < 50; i++) {
		w = list[i]
		if (in_comp[w] != in_comp[start] || (w in done_start))
			continue
		if (w == start) {
			line = ""
			for (j = 1; j <= depth; j++) line = line path[j] ".o -> "
			print "  circle: " line start ".o" > "/dev/stderr"
			n_found++
		} else if (!on_path[w]) {
			circles(start, w)
		}
	}
	on_path[v] = 0; depth--
}
function sort_words(a, n,    i, j, t) {
	for (i = 2; i <= n; i++) {
		t = a[i]
		for (j = i - 1; j >= 1 && a[j] > t; j--) a[j + 1] = a[j]
		a[j + 1] = t
	}
}'
