#!/usr/bin/env bash
# Runs every test stage, even after one fails, and adds up their counts into
# one closing line.  Each stage prints its own "N passed, M failed" (Check's
# runner prints "Checks: N, Failures: F, Errors: E").
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
		line=$(grep -E 'Checks: [0-9]+, Failures: [0-9]+, Errors: [0-9]+' "$log" | tail -n 1 || true)
		if [ -n "$line" ]; then
			local checks failures errors
			checks=$(sed -E 's/.*Checks: ([0-9]+).*/\1/' <<<"$line")
			failures=$(sed -E 's/.*Failures: ([0-9]+).*/\1/' <<<"$line")
			errors=$(sed -E 's/.*Errors: ([0-9]+).*/\1/' <<<"$line")
			fail=$((failures + errors))
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
# Not in the sanitized pass: its malloc shim cannot sit beside ASan's.
if [ "${SANITIZE:-}" != 1 ]; then
	stage alloc make -s check-alloc
fi
stage runner make -s check-runner
stage mount make -s check-mount
stage differential make -s check-diff
stage search-differential make -s check-diff-search
stage fork-differential make -s check-diff-fork
stage interop make -s check-interop

if [ "${#failed_stages[@]}" -gt 0 ]; then
	echo "failed stages: ${failed_stages[*]}"
fi
echo "check: $total_pass passed, $total_fail failed"
[ "$total_fail" -eq 0 ]
