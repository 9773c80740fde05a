#!/usr/bin/env bash
# make check-runner: proves that tests/run-suite.sh can fail.
#
#     tests/runner-selftest.sh PATH-OF-pisessionfs
#
# Runs the runner on a suite of fake tests in a scratch directory, one per
# way a test must not pass: it exits 0 without its "checks: N" line, says
# "checks: 0", skips itself (exit 77), exits 1 after its checks line,
# leaves a mount behind (the real daemon, mounted and never unmounted),
# runs past its time limit (with a daemon-like process, whose thread stacks
# the runner must print before it kills both), or does not exist.  Each
# must be reported as FAIL with its reason (a daemon's stderr before the
# checks that failed: a shortened log keeps it), the one good test as ok, the
# closing line must be exactly "1 passed, 7 failed" with exit status 1,
# the leftover mount must be gone, and a suite of good tests alone must
# end "2 passed, 0 failed" with status 0 (passing --arg and --default
# through).  With TEST_JOBS=2, two tests that can only pass together (each
# waits for the other's mark) both pass, their results come in the order
# given though the second ends first, and stopping the runner ends every
# running test's processes at once.  Ends with "N passed, M failed" (these
# checks).
# shellcheck disable=SC2016 # the fake tests and the bash -c checks are single-quoted on purpose
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
daemon=${1:?usage: tests/runner-selftest.sh PATH-OF-pisessionfs}
case $daemon in
/*) ;;
*) daemon=$PWD/$daemon ;;
esac
runner=$here/run-suite.sh

passed=0
failed=0
ok() { passed=$((passed + 1)); echo "ok - $1"; }
bad() { failed=$((failed + 1)); echo "not ok - $1"; }
check() { # WHAT CMD...
	local what=$1
	shift
	if "$@"; then ok "$what"; else bad "$what"; fi
}

work=$(mktemp -d "${TMPDIR:-/tmp}/psfs-runner-selftest.XXXXXX")
suite=$work/suite
mkdir -p "$suite"
cleanup() {
	local mp
	while read -r mp; do
		[[ -n $mp ]] && { fusermount3 -uz "$mp" 2>/dev/null || umount -l "$mp" 2>/dev/null; }
	done < <(awk -v d="$work/" 'index($5, d) == 1 { print $5 }' /proc/self/mountinfo | sort -r)
	rm -rf "$work"
}
trap cleanup EXIT

fake() { # NAME BODY
	printf '#!/usr/bin/env bash\n%s\n' "$2" >"$suite/$1.sh"
}
fake t_good 'echo "checks: 3"'
fake t_nochecks 'echo "all fine, honest"; exit 0'
fake t_zero 'echo "checks: 0"'
fake t_skip 'echo "checks: 1"; echo "SKIPPED: no reason" >&2; exit 77'
fake t_status 'echo "checks: 2"; echo "not ok: something" >&2
echo "not ok: daemon stderr (d.log) has: ERROR: AddressSanitizer: boom" >&2; echo "#0 in frame" >&2; exit 1'
# The real daemon, daemonized (no -f) under the test's TMPDIR, left mounted.
fake t_leftmount 'mkdir -p "$TMPDIR/store" "$TMPDIR/mnt"
"$1" --store "$TMPDIR/store" "$TMPDIR/mnt" || exit 3
awk -v mp="$TMPDIR/mnt" '\''$5 == mp { f = 1 } END { exit !f }'\'' /proc/self/mountinfo || exit 4
echo "checks: 1"'
# Past its limit, with a daemon-like process (a sleep started as
# "$1", the daemon's path, in the background): the runner prints its
# stacks (gdb) before it kills the test, and the process goes with it.
fake t_hang 'bash -c '\''exec -a "$0" sleep 300'\'' "$1" &
echo "$!" >"$TMPDIR/../../fake-daemon.pid"
sleep 60; echo "checks: 1"'

out=$work/run.out
TEST_TIMEOUT=3 TMPDIR=$work "$runner" "$suite" "$daemon" \
	t_good t_nochecks t_zero t_skip t_status t_leftmount t_hang t_missing >"$out" 2>&1
rc=$?
sed 's/^/    | /' "$out"

has() { grep -Eq "$1" "$out"; }
check "a good test passes" has '^ok t_good \(3 checks, '
check "exit 0 without 'checks:' fails" has '^FAIL t_nochecks \(did not report its checks'
check "'checks: 0' fails" has '^FAIL t_zero \(did not report its checks'
check "a skipped test (77) fails" has '^FAIL t_skip \(skipped'
check "exit status 1 fails despite its checks line" has '^FAIL t_status \(exit status 1'
check "a test that leaves a mount behind fails" has '^FAIL t_leftmount \(left mounted: .*/t_leftmount/mnt'
check "a test past its time limit fails" has '^FAIL t_hang \(timed out after 3s'
check "a test past its time limit: the stacks of its daemon are shown" \
	has '^    daemon-stacks: stacks of daemon [0-9]+ \(state S\): .*pisessionfs 300$'
check "a test past its time limit: every thread, gdb's backtrace" \
	bash -c 'sed -n "/^FAIL t_hang/,/^(ok|FAIL) /p" "$1" | grep -Eq "^    Thread 1 .*\"sleep\"" &&
		sed -n "/^FAIL t_hang/,/^(ok|FAIL) /p" "$1" | grep -Eq "^    #0  .*nanosleep"' _ "$out"
# The group's TERM is sent as the runner gives up; the process may take a
# moment to die, and a dead one not yet reaped is a zombie (state Z).
check "a test past its time limit: its daemon was killed with it" \
	bash -c 'p=$(cat "$1") && [[ -n $p ]] || exit 1
		for _ in $(seq 50); do
			{ ! kill -0 "$p" 2>/dev/null || [[ $(awk "{print \$3}" "/proc/$p/stat" 2>/dev/null) == Z ]]; } && exit 0
			sleep 0.1
		done
		exit 1' _ "$work/fake-daemon.pid"
check "a missing test fails" has '^FAIL t_missing \(exit status 1'
check "a failed test's output is shown" has '^    not ok: something$'
check "a failed test's daemon stderr is shown before its other checks" \
	bash -c 'sed -n "/^FAIL t_status/,/^(ok|FAIL) /p" "$1" | awk "
		/^    not ok: daemon stderr .*boom\$/ { d = NR } /^    #0 in frame\$/ { f = NR } /^    not ok: something\$/ { s = NR }
		END { exit !(d && f == d + 1 && s > f) }"' _ "$out"
check "the closing line is exactly '1 passed, 7 failed'" [ "$(tail -n 1 "$out")" = "1 passed, 7 failed" ]
check "the exit status is 1" [ "$rc" = 1 ]
check "run-tests.sh's pattern reads the closing line" \
	bash -c '[[ $(grep -E "^[0-9]+ passed, [0-9]+ failed" "$1" | tail -n 1) == "1 passed, 7 failed" ]]' _ "$out"
check "the leftover mount was removed" \
	bash -c '! awk -v d="$1/" '\''index($5, d) == 1 { f = 1 } END { exit !f }'\'' /proc/self/mountinfo' _ "$work"

# The good path, with the suite's parameters: --arg reaches every test,
# --default names the tests when none is given, in its order.
fake t_args '[[ $2 == --quick ]] || { echo "no --quick: $*"; exit 1; }; echo "# a note"; echo "checks: 1"'
out2=$work/run2.out
TMPDIR=$work "$runner" --budget 5 --arg --quick --default "t_args t_good" "$suite" "$daemon" >"$out2" 2>&1
rc=$?
sed 's/^/    | /' "$out2"
check "--arg is passed to the tests" grep -Eq '^ok t_args \(1 checks' "$out2"
check "a passed test's notes are shown" grep -Eq '^    # a note$' "$out2"
check "--default runs its tests in its order" \
	bash -c '[[ $(grep -E "^ok " "$1" | cut -d" " -f2 | tr "\n" " ") == "t_args t_good " ]]' _ "$out2"
check "all good: '2 passed, 0 failed', status 0" \
	bash -c '[[ $(tail -n 1 "$1") == "2 passed, 0 failed" && $2 == 0 ]]' _ "$out2" "$rc"

# Two at once: each test marks that it runs, then waits for the other's
# mark; run one after the other, the first would wait in vain.
fake t_meet_a 'touch "$TMPDIR/../meet_a"; for _ in $(seq 100); do [[ -e $TMPDIR/../meet_b ]] && { sleep 1; echo "checks: 1"; exit 0; }; sleep 0.1; done; exit 1'
fake t_meet_b 'touch "$TMPDIR/../meet_b"; for _ in $(seq 100); do [[ -e $TMPDIR/../meet_a ]] && { echo "checks: 1"; exit 0; }; sleep 0.1; done; exit 1'
out3=$work/run3.out
TEST_JOBS=2 TMPDIR=$work "$runner" --budget 30 "$suite" "$daemon" t_meet_a t_meet_b >"$out3" 2>&1
rc=$?
sed 's/^/    | /' "$out3"
check "TEST_JOBS=2 runs two tests at once" \
	bash -c '[[ $(grep -E "^(ok|FAIL) " "$1" | cut -d" " -f1,2 | tr "\n" " ") == "ok t_meet_a ok t_meet_b " && $2 == 0 ]]' _ "$out3" "$rc"
check "TEST_JOBS=2: the results in the order given, though the second ended first" \
	bash -c '[[ $(grep -E "^(ok|FAIL) " "$1" | cut -d" " -f2 | tr "\n" " ") == "t_meet_a t_meet_b " ]]' _ "$out3"
check "TEST_JOBS=0 is refused" \
	bash -c 'TEST_JOBS=0 TMPDIR=$3 "$1" "$2" "$4" t_good >/dev/null 2>&1; [[ $? == 2 ]]' _ "$runner" "$suite" "$work" "$daemon"

# Stopped (TERM, as ^C's INT does: a background job here ignores INT, and
# bash cannot trap a signal ignored on entry): both running tests'
# processes end, and the runner with them.
fake t_long_a 'sleep 300 & echo "$!" >"$TMPDIR/../../long_a.pid"; wait'
fake t_long_b 'sleep 300 & echo "$!" >"$TMPDIR/../../long_b.pid"; wait'
TEST_JOBS=2 TMPDIR=$work "$runner" --budget 300 "$suite" "$daemon" t_long_a t_long_b >"$work/run4.out" 2>&1 &
runner_pid=$!
for _ in $(seq 100); do
	[[ -s $work/long_a.pid && -s $work/long_b.pid ]] && break
	sleep 0.1
done
kill -TERM "$runner_pid"
gone() { # PID: dead, or a zombie not yet reaped
	local p=$1
	for _ in $(seq 100); do
		{ ! kill -0 "$p" 2>/dev/null || [[ $(awk '{print $3}' "/proc/$p/stat" 2>/dev/null) == Z ]]; } && return 0
		sleep 0.1
	done
	return 1
}
check "stopped: the runner ends" gone "$runner_pid"
wait "$runner_pid" 2>/dev/null
rc=$?
check "stopped: the runner's status is 143" [ "$rc" = 143 ]
check "stopped: the first running test's processes end" gone "$(cat "$work/long_a.pid" 2>/dev/null || echo 0)"
check "stopped: the second running test's processes end" gone "$(cat "$work/long_b.pid" 2>/dev/null || echo 0)"

echo "$passed passed, $failed failed"
((failed == 0))
