#!/usr/bin/env bash
# Reliability tests: tests/stress/run.sh PATH-OF-pisessionfs [--quick] [t_NAME...]
#
#   t_kill9        kill -9 of the daemon while writers append, remount, stale mount
#   t_concurrency  six writers through the mount and pi outside it, at once
#   t_diskfull     ENOSPC on a full tmpfs store, read-only stores
#   t_storegone    the store removed, truncated, replaced while mounted
#   t_escape       no path in the mount leads outside the store
#   t_million      a session of a million entries (--quick: 100,000)
#
# --quick: CI sizes (all six in under 2 minutes); without it, `make stress`
# sizes (under 10 minutes).  Each test runs in a fresh bash with a scratch
# TMPDIR of its own, prints one line per check and ends with
# "N passed, M failed"; it passes when it exits 0 with M = 0.  A test that
# leaves a mount behind fails too (and the mount is removed).  This script
# prints, per test, its notes (the figures: lines starting with "#") and its
# failed checks (all lines with VERBOSE=1), and ends with exactly
# "N passed, M failed" (tests); exit status 1 when anything failed.
set -uo pipefail

here=$(cd "$(dirname "$0")" && pwd)
daemon=${1:?usage: tests/stress/run.sh PATH-OF-pisessionfs [--quick] [t_NAME...]}
shift
case $daemon in
/*) ;;
*) daemon=$PWD/$daemon ;;
esac
quick=()
names=()
for a in "$@"; do
	case $a in
	--quick) quick=(--quick) ;;
	*) names+=("$a") ;;
	esac
done
# A test's budget only guards against a hang: it must fit the slowest
# machine the tests run on (a full t_kill9 took 533 s of a 540 s budget on
# a fresh machine, a quick one 113 s of 110 on a loaded one), so it is
# generous, and TIME_SCALE stretches it like every limit in the tests.
if ((${#quick[@]})); then
	base=300
else
	base=1200
fi
per_test=${TEST_TIMEOUT:-$(awk -v b="$base" -v k="${TIME_SCALE:-1}" 'BEGIN { v = b * k; if (v != int(v)) v = int(v) + 1; print v }')}

tests=()
if ((${#names[@]})); then
	for n in "${names[@]}"; do
		n=${n%.sh}
		tests+=("$here/${n##*/}.sh")
	done
else
	for n in t_kill9 t_concurrency t_diskfull t_storegone t_escape t_million; do
		tests+=("$here/$n.sh")
	done
fi

passed=0
failed=0
if [[ ! -x $daemon ]]; then
	echo "FAIL (setup): $daemon is not an executable daemon"
	echo "0 passed, ${#tests[@]} failed"
	exit 1
fi
base=$(mktemp -d "${TMPDIR:-/tmp}/psfs-stress.XXXXXX")
mounts_under() {
	awk -v d="$1/" 'index($5, d) == 1 { print $5 }' /proc/self/mountinfo | sort -r
}
t_all=$(date +%s)
echo "# daemon $daemon, ${quick[*]:-full} mode"
for t in "${tests[@]}"; do
	name=$(basename "$t" .sh)
	out=$base/$name.out
	tmp=$base/$name
	mkdir -p "$tmp"
	start=$(date +%s)
	rc=0
	if [[ ! -f $t ]]; then
		echo "no such test: $t" >"$out"
		rc=1
	else
		TMPDIR=$tmp timeout -k 20 "$per_test" bash "$t" "$daemon" "${quick[@]}" >"$out" 2>&1 </dev/null || rc=$?
	fi
	secs=$(($(date +%s) - start))
	why=
	left=$(mounts_under "$tmp")
	if [[ -n $left ]]; then
		why="left mounted: ${left//$'\n'/ }"
		while read -r mp; do
			fusermount3 -uz "$mp" 2>/dev/null || umount -l "$mp" 2>/dev/null || true
		done <<<"$left"
	fi
	last=$(tail -n 1 "$out")
	if ((rc == 124 || rc == 137)); then
		why="${why:+$why; }timed out after ${per_test}s"
	elif ((rc != 0)); then
		why="${why:+$why; }exit status $rc"
	elif ! [[ $last =~ ^[1-9][0-9]*\ passed,\ 0\ failed$ ]]; then
		why="${why:+$why; }did not end with 'N passed, 0 failed'"
	fi
	if [[ -z $why ]]; then
		passed=$((passed + 1))
		echo "ok $name ($last, ${secs}s)"
	else
		failed=$((failed + 1))
		echo "FAIL $name ($why; $last, ${secs}s)"
	fi
	if [[ -n ${VERBOSE:-} ]]; then
		sed 's/^/    /' "$out"
	else
		grep -E '^(#|not ok)' "$out" | grep -v '^# @' | cut -c1-1500 | sed 's/^/    /'
		[[ -z $why ]] || grep -vE '^(ok |#|not ok )' "$out" | tail -n 8 | sed 's/^/    | /'
	fi
done
left=$(mounts_under "$base")
if [[ -n ${KEEP:-} ]]; then
	echo "# KEEP is set: scratch files kept in $base"
elif [[ -z $left ]]; then
	rm -rf "$base"
else
	echo "# still mounted, $base kept: $left"
fi
echo "# total $(($(date +%s) - t_all))s"
echo "$passed passed, $failed failed"
((failed == 0))
