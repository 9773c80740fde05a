#!/usr/bin/env bash
# Runs every test stage, even after one fails, and adds up their counts into
# one closing line.  Each stage prints its own "N passed, M failed" (Check's
# runners print "Checks: N, Failures: F, Errors: E", added up when a stage
# runs several).
set -uo pipefail
cd "$(dirname "$0")/.."

total_pass=0
total_fail=0
failed_stages=()

stage() {
	local name=$1
	shift
	local log
	log=$(mktemp)
	echo "=== $name"
	"$@" 2>&1 | tee "$log"
	local rc=${PIPESTATUS[0]}
	local pass fail line
	line=$(grep -E '^([A-Za-z-]+: )?[0-9]+ passed, [0-9]+ failed' "$log" | tail -n 1 || true)
	if [ -n "$line" ]; then
		pass=$(sed -E 's/^([A-Za-z-]+: )?([0-9]+) passed.*/\2/' <<<"$line")
		fail=$(sed -E 's/.* ([0-9]+) failed.*/\1/' <<<"$line")
	else
		# Every Check runner of the stage (unit: the core's and fs/'s).
		line=$(grep -E 'Checks: [0-9]+, Failures: [0-9]+, Errors: [0-9]+' "$log" |
			sed -E 's/.*Checks: ([0-9]+), Failures: ([0-9]+), Errors: ([0-9]+).*/\1 \2 \3/' |
			awk '{ c += $1; f += $2 + $3 } END { if (NR) print c, f }' || true)
		if [ -n "$line" ]; then
			local checks
			read -r checks fail <<<"$line"
			pass=$((checks - fail))
		else
			pass=0
			fail=1 # a stage that ran nothing countable has failed
		fi
	fi
	if [ "$rc" -ne 0 ] && [ "$fail" -eq 0 ]; then
		fail=1
	fi
	total_pass=$((total_pass + pass))
	total_fail=$((total_fail + fail))
	[ "$fail" -eq 0 ] || failed_stages+=("$name")
	rm -f "$log"
}

stage unit make -s check-unit
stage golden make -s check-golden
# Nor this one in the sanitized pass: it compares texts.
if [ "${SANITIZE:-}" != 1 ]; then
	stage manpages make -s check-manpages
fi
# Not in the sanitized pass: its malloc shim cannot sit beside ASan's.
if [ "${SANITIZE:-}" != 1 ]; then
	stage alloc make -s check-alloc
fi
# Nor this one: it proves the runner fails what must fail, with fake
# tests; a sanitized daemon changes nothing there.
if [ "${SANITIZE:-}" != 1 ]; then
	stage runner make -s check-runner
fi
stage mount make -s check-mount
stage differential make -s check-diff
stage search-differential make -s check-diff-search
stage fork-differential make -s check-diff-fork
stage tree-differential make -s check-diff-tree
stage forkfrom-differential make -s check-diff-forkfrom
stage interop make -s check-interop

if [ "${#failed_stages[@]}" -gt 0 ]; then
	echo "failed stages: ${failed_stages[*]}"
fi
echo "check: $total_pass passed, $total_fail failed"
[ "$total_fail" -eq 0 ]
