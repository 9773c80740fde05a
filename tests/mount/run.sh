#!/usr/bin/env bash
# Runs the mount tests: tests/mount/run.sh PATH-OF-pisessionfs [t_NAME...]
#
# Each tests/mount/t_*.sh runs in a fresh bash with the daemon path as its
# argument and a scratch TMPDIR of its own.  A test passes only when it exits
# 0 AND printed its "checks: N" line (lib.sh's finish); a skipped test (exit
# 77) or one that stopped early counts as failed.  A test that leaves a mount
# behind fails too (and the mount is removed).  The last line is exactly
# "N passed, M failed"; the exit status is 1 when anything failed.
#
# Each test has TEST_TIMEOUT seconds (default 100 times TIME_SCALE); lib.sh
# stretches every limit inside the tests by TIME_SCALE too (a slow daemon:
# valgrind, a loaded machine).
set -uo pipefail

here=$(cd "$(dirname "$0")" && pwd)
daemon=${1:?usage: tests/mount/run.sh PATH-OF-pisessionfs [t_NAME...]}
shift
case $daemon in
/*) ;;
*) daemon=$PWD/$daemon ;;
esac
per_test=${TEST_TIMEOUT:-$(awk -v k="${TIME_SCALE:-1}" 'BEGIN { v = 100 * k; if (v != int(v)) v = int(v) + 1; print v }')}

tests=()
if (($# > 0)); then
	for name in "$@"; do
		name=${name%.sh}
		name=${name##*/}
		tests+=("$here/$name.sh")
	done
else
	for t in "$here"/t_*.sh; do
		[[ -e $t ]] && tests+=("$t")
	done
fi

passed=0
failed=0
if [[ ! -x $daemon ]]; then
	echo "FAIL (setup): $daemon is not an executable daemon"
	echo "0 passed, ${#tests[@]} failed"
	exit 1
fi

base=$(mktemp -d "${TMPDIR:-/tmp}/psfs-mount-tests.XXXXXX")

# Mountpoints under DIR still in /proc/self/mountinfo.
mounts_under() {
	awk -v d="$1/" 'index($5, d) == 1 { print $5 }' /proc/self/mountinfo
}

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
		TMPDIR=$tmp timeout -k 20 "$per_test" bash "$t" "$daemon" >"$out" 2>&1 </dev/null || rc=$?
	fi
	secs=$(($(date +%s) - start))
	why=
	left=$(mounts_under "$tmp")
	if [[ -n $left ]]; then
		why="left mounted: $left"
		while read -r mp; do
			fusermount3 -uz "$mp" 2>/dev/null || umount -l "$mp" 2>/dev/null || true
		done <<<"$left"
	fi
	if ((rc == 124 || rc == 137)); then
		why="${why:+$why; }timed out after ${per_test}s"
	elif ((rc == 77)); then
		why="${why:+$why; }skipped (a skipped test does not pass)"
	elif ((rc != 0)); then
		why="${why:+$why; }exit status $rc"
	elif ! grep -Eq '^checks: [1-9][0-9]*$' "$out"; then
		why="${why:+$why; }did not report its checks (stopped early?)"
	fi
	if [[ -z $why ]]; then
		passed=$((passed + 1))
		echo "ok $name ($(grep -E '^checks: ' "$out" | tail -1 | cut -d' ' -f2) checks, ${secs}s)"
	else
		failed=$((failed + 1))
		echo "FAIL $name ($why, ${secs}s)"
		sed 's/^/    /' "$out"
	fi
done

left=$(mounts_under "$base")
if [[ -n ${KEEP:-} ]]; then
	echo "KEEP is set: scratch files kept in $base"
elif [[ -z $left ]]; then
	rm -rf "$base"
else
	echo "still mounted, $base kept: $left"
fi
echo "$passed passed, $failed failed"
((failed == 0))
