#!/usr/bin/env bash
# make check-valgrind: the tests under valgrind (memcheck).
#
#     tests/valgrind/check-valgrind.sh [UNIT-TESTS [PISESSION [PISESSIONFS [FS-UNIT-TESTS]]]]
#
# Stages, each with valgrind --error-exitcode=1 --leak-check=full
# --errors-for-leak-kinds=definite (an error or a definite leak fails):
#   unit    build/unit-tests with CK_FORK=no (every test in one process)
#   fs-unit build/fs-unit-tests (fs/'s modules) the same way
#   golden  tests/golden/run.sh with tests/valgrind/valgrind-tool.sh as the tool
#   mount   tests/mount/run.sh with tests/valgrind/valgrind-daemon.sh as the daemon
#           (skipped without /dev/fuse, or with VALGRIND_MOUNT=0).  The
#           daemon is 10-50 times slower under valgrind, so every time limit
#           of the tests is stretched by TIME_SCALE (default 30; lib.sh);
#           t_install (builds and installs a daemon of its own) is left
#           out; VALGRIND_MOUNT_TESTS="t_cli t_live ..." picks.
#   reports every valgrind log of the run (one per process, in
#           tests/valgrind/artifacts/): the daemon and tool logs are written
#           with -q, so anything in them is an error or a leak valgrind
#           reported, which fails this stage even where the test that ran
#           the process did not look at its exit status (a daemon it killed
#           on purpose, say).  Every such log is shown.
# The binaries must be built without SANITIZE=1 (ASan and valgrind do not
# mix).
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 2
root=$PWD

unit=${1:-build/unit-tests}
tool=${2:-build/pisession}
daemon=${3:-build/pisessionfs}
fs_unit=${4:-build/fs-unit-tests}
abs() { case $1 in /*) echo "$1" ;; *) echo "$root/$1" ;; esac; }
unit=$(abs "$unit")
fs_unit=$(abs "$fs_unit")
tool=$(abs "$tool")
daemon=$(abs "$daemon")

if ! command -v valgrind >/dev/null; then
	echo "check-valgrind: valgrind is not installed (apt-get install valgrind)" >&2
	exit 2
fi
for b in "$unit" "$fs_unit" "$tool" "$daemon"; do
	if [[ ! -x $b ]]; then
		echo "check-valgrind: $b is not built" >&2
		exit 2
	fi
	if grep -qa __asan_init "$b"; then
		echo "check-valgrind: $b is built with AddressSanitizer (SANITIZE=1); rebuild without it" >&2
		exit 2
	fi
done

logdir=$root/tests/valgrind/artifacts
rm -rf "$logdir"
mkdir -p "$logdir"
export PS_VALGRIND_LOGDIR=$logdir PS_VALGRIND_TOOL=$tool PS_VALGRIND_DAEMON=$daemon
VG=(valgrind --error-exitcode=1 --leak-check=full --errors-for-leak-kinds=definite)

results=()
failed=0
stage_start=$SECONDS
record() { # NAME RC: the stage that began at stage_start
	local secs=$((SECONDS - stage_start))
	if [[ $2 -eq 0 ]]; then
		results+=("ok   $1 (${secs}s)")
	else
		results+=("FAIL $1 (exit status $2, ${secs}s)")
		failed=$((failed + 1))
	fi
	stage_start=$SECONDS
}

echo "=== unit (valgrind, CK_FORK=no)"
CK_FORK=no "${VG[@]}" --log-file="$logdir/unit.log" "$unit"
rc=$?
grep -E 'ERROR SUMMARY|definitely lost|indirectly lost|possibly lost' "$logdir/unit.log" | sed 's/^==[0-9]*== /    valgrind: /'
record unit $rc

echo "=== fs-unit (valgrind, CK_FORK=no)"
CK_FORK=no "${VG[@]}" --log-file="$logdir/fs-unit.log" "$fs_unit"
rc=$?
grep -E 'ERROR SUMMARY|definitely lost|indirectly lost|possibly lost' "$logdir/fs-unit.log" | sed 's/^==[0-9]*== /    valgrind: /'
record fs-unit $rc

echo "=== golden (pisession under valgrind)"
tests/golden/run.sh "$root/tests/valgrind/valgrind-tool.sh"
record golden $?

if [[ ${VALGRIND_MOUNT:-1} != 0 && -c /dev/fuse ]]; then
	echo "=== mount (pisessionfs under valgrind)"
	# Left out by default: t_install (it runs `make install BUILD=<the
	# daemon's directory>`, which for the wrapper would build into tests/valgrind/,
	# and it tests the installed daemon, not this one).
	if [[ -n ${VALGRIND_MOUNT_TESTS:-} ]]; then
		read -r -a mtests <<<"$VALGRIND_MOUNT_TESTS"
	else
		mtests=()
		for t in tests/mount/t_*.sh; do
			case $t in
			*/t_install.sh) ;;
			*) mtests+=("$(basename "$t" .sh)") ;;
			esac
		done
	fi
	# t_nonotify's passthrough helper is not run under valgrind: it only
	# hosts the store.
	export PSFS_PASSTHROUGH=${PSFS_PASSTHROUGH:-$root/build/tests/passthrough-store}
	TIME_SCALE=${TIME_SCALE:-30} tests/mount/run.sh "$root/tests/valgrind/valgrind-daemon.sh" "${mtests[@]}"
	record mount $?
else
	results+=("skip mount (no /dev/fuse, or VALGRIND_MOUNT=0)")
fi

echo "=== valgrind reports"
# unit.log and fs-unit.log have valgrind's full output: their summary
# decides.  The others (-q) must be empty.
bad=0
n_daemon=0
n_tool=0
for f in "$logdir"/*.log; do
	[[ -e $f ]] || continue
	case $f in
	*/unit.log | */fs-unit.log)
		grep -q 'ERROR SUMMARY: 0 errors' "$f" && continue
		;;
	*/daemon.*.log) n_daemon=$((n_daemon + 1)) ;;
	*/tool.*.log) n_tool=$((n_tool + 1)) ;;
	esac
	[[ -s $f ]] || continue
	bad=$((bad + 1))
	echo "--- $f"
	head -n 60 "$f"
done
echo "logs: $n_daemon daemon processes, $n_tool tool processes; $bad with a report"
if ((bad)); then
	results+=("FAIL reports ($bad valgrind logs report errors or leaks)")
	failed=$((failed + 1))
elif [[ ${VALGRIND_MOUNT:-1} != 0 && -c /dev/fuse ]] && ((n_daemon == 0)); then
	# The mount tests ran, yet no daemon ran under valgrind: the wrapper
	# was not used, and nothing was checked.
	results+=("FAIL reports (no daemon ran under valgrind)")
	failed=$((failed + 1))
else
	results+=("ok   reports (no errors, no leaks reported)")
fi
printf "%s\n" "${results[@]}"
passed=$(printf '%s\n' "${results[@]}" | grep -c '^ok ')
echo "valgrind: $passed passed, $failed failed"
((failed == 0))
