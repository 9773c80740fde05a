#!/bin/sh
# Golden tests: run the CLI on stored inputs and compare with stored output.
#
# Usage: tests/golden/run.sh path/to/pisession
#        UPDATE_GOLDEN=1 tests/golden/run.sh path/to/pisession   (rewrite)
#
# Layout: tests/golden/<kind>/<case>/ holds
#   cmd        the subcommand and its arguments, one line, split on blanks;
#              the token INPUT is replaced by the path of the case's input
#   input*     the input file (input.json, ...), if the command takes one
#   expected*  the exact expected stdout (expected, expected.md, ...)
#   status     optional: the exit status the command must have (default 0);
#              when it is not 0, stderr (the reason) is what must match
# Every <kind> directory (render, parse, ...) is run the same way.  The
# command must exit 0 (or as status says); its output must match byte for
# byte.  Commands run in the case directory, so other files of the case
# are named by their plain names.
# Prints one line per case and, last, "N passed, M failed"; exits 1 when a
# case failed.

set -u

if [ $# -ne 1 ]; then
	echo "usage: $0 PISESSION" >&2
	exit 2
fi
tool=$1
case $tool in
/*) ;;
*) tool=$(pwd)/$tool ;;
esac
if [ ! -x "$tool" ]; then
	echo "$0: $tool: not executable" >&2
	exit 2
fi

root=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d) || exit 2
trap 'rm -rf "$tmp"' EXIT INT TERM

passed=0
failed=0

# The first file in dir whose name starts with prefix (input, expected).
first_file() {
	for f in "$1/$2" "$1/$2".*; do
		if [ -f "$f" ]; then
			printf '%s\n' "$f"
			return 0
		fi
	done
	return 1
}

for kinddir in "$root"/*/; do
	[ -d "$kinddir" ] || continue
	kind=$(basename "$kinddir")
	for casedir in "$kinddir"*/; do
		[ -d "$casedir" ] || continue
		casedir=${casedir%/}
		name=$kind/$(basename "$casedir")
		if [ ! -f "$casedir/cmd" ]; then
			echo "FAIL $name: no cmd file"
			failed=$((failed + 1))
			continue
		fi
		input=$(first_file "$casedir" input) || input=
		if ! expected=$(first_file "$casedir" expected); then
			# none yet: the name UPDATE_GOLDEN creates
			if [ "$kind" = render ]; then
				expected=$casedir/expected.md
			else
				expected=$casedir/expected
			fi
		fi

		# Build the argument list, replacing INPUT (no eval: case data
		# must not be able to run shell code).
		set -f
		set --
		for word in $(cat "$casedir/cmd"); do
			if [ "$word" = INPUT ]; then
				set -- "$@" "$input"
			else
				set -- "$@" "$word"
			fi
		done
		set +f

		want=0
		[ -f "$casedir/status" ] && want=$(cat "$casedir/status")
		out=$tmp/out
		(cd "$casedir" && "$tool" "$@") >"$out" 2>"$tmp/err"
		status=$?
		if [ "$status" -ne "$want" ]; then
			echo "FAIL $name: exit status $status: $(head -c 200 "$tmp/err")"
			failed=$((failed + 1))
			continue
		fi
		# a case that must fail is judged by the reason it gives
		[ "$want" -eq 0 ] || out=$tmp/err
		if [ "${UPDATE_GOLDEN:-0}" = 1 ]; then
			if [ -f "$expected" ] && cmp -s "$out" "$expected"; then
				echo "ok   $name"
			else
				cp "$out" "$expected"
				echo "UPDATED $name"
			fi
			passed=$((passed + 1))
		elif [ -f "$expected" ] && cmp -s "$out" "$expected"; then
			echo "ok   $name"
			passed=$((passed + 1))
		else
			echo "FAIL $name"
			if [ -f "$expected" ]; then
				diff -u "$expected" "$out" | head -n 40
			else
				echo "  (no expected file: run with UPDATE_GOLDEN=1)"
			fi
			failed=$((failed + 1))
		fi
	done
done

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
