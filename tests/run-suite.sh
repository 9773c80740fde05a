#!/usr/bin/env bash
# The one runner of the mount and the reliability tests:
#
#   tests/run-suite.sh [--budget SECONDS] [--arg ARG]... [--default "t_A t_B"]
#                      SUITE-DIR PATH-OF-pisessionfs [t_NAME...]
#
# tests/mount/run.sh and tests/stress/run.sh only choose its parameters:
#   --budget SECONDS   each test's time limit before TIME_SCALE (default 100)
#   --arg ARG          passed to every test after the daemon (stress: --quick)
#   --default "..."    the tests run when none is named (default: every
#                      SUITE-DIR/t_*.sh, in name order)
#
# Each test runs as `bash SUITE-DIR/t_NAME.sh DAEMON ARG...` in a fresh bash
# with a scratch TMPDIR of its own and no standard input.  TEST_JOBS tests
# run at once (default: as many as the machine has cores), started in the
# order given; every test has its own scratch directory, store, mount and
# daemon, so nothing but the machine is shared.  The results are printed
# in the order given, whatever order the tests end in.  A test passes only
# when all of these hold:
#   * it exits 0 (77, "skipped", is a failure: a skipped test never passes);
#   * it printed a "checks: N" line with N > 0 (tests/mount/lib.sh's finish:
#     a test that stopped early, or checked nothing, never passes);
#   * it ended within its budget: TEST_TIMEOUT seconds, default SECONDS
#     times TIME_SCALE (rounded up); past it, every thread's stack of the
#     test's daemons is printed into its output (tests/daemon-stacks.sh,
#     gdb), then the test's process group (each test runs in a session of
#     its own) gets TERM, and KILL 20 s later;
#   * nothing is left mounted under its scratch directory (whatever is, is
#     unmounted, deepest first).
# For a passed test the runner prints "ok NAME (N checks, Ts)" and the
# test's notes (lines starting with "# "); for a failed one "FAIL NAME
# (why, Ts)" and its output without its passed checks ("ok ..." lines; all
# of it with VERBOSE=1).  The last line is exactly "N passed, M failed"
# (tests), which tests/check-all.sh and run-tests.sh read; the exit status
# is 1 when anything failed.  KEEP=1 keeps the scratch directories.
set -uo pipefail

budget=100
args=()
default=
while (($# > 0)); do
	case $1 in
	--budget) budget=${2:?--budget needs SECONDS}; shift 2 ;;
	--arg) args+=("${2?--arg needs a value}"); shift 2 ;;
	--default) default=${2?--default needs names}; shift 2 ;;
	--) shift; break ;;
	-*) echo "run-suite.sh: unknown option $1" >&2; exit 2 ;;
	*) break ;;
	esac
done
usage="usage: tests/run-suite.sh [--budget S] [--arg A]... [--default NAMES] SUITE-DIR PATH-OF-pisessionfs [t_NAME...]"
suite=${1:?$usage}
daemon=${2:?$usage}
shift 2
suite=$(cd "$suite" && pwd) || exit 2
here=$(cd "$(dirname "$0")" && pwd)
case $daemon in
/*) ;;
*) daemon=$PWD/$daemon ;;
esac
per_test=${TEST_TIMEOUT:-$(awk -v b="$budget" -v k="${TIME_SCALE:-1}" 'BEGIN { v = b * k; if (v != int(v)) v = int(v) + 1; print v }')}

jobs=${TEST_JOBS:-$(nproc 2>/dev/null || echo 1)}
if [[ ! $jobs =~ ^[1-9][0-9]*$ ]]; then
	echo "run-suite.sh: TEST_JOBS must be a positive whole number, not '$jobs'" >&2
	exit 2
fi

names=("$@")
if ((${#names[@]} == 0)) && [[ -n $default ]]; then
	read -r -a names <<<"$default"
fi
tests=()
if ((${#names[@]} > 0)); then
	for n in "${names[@]}"; do
		n=${n%.sh}
		tests+=("$suite/${n##*/}.sh")
	done
else
	for t in "$suite"/t_*.sh; do
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
if ((${#tests[@]} == 0)); then
	echo "FAIL (setup): no test in $suite"
	echo "0 passed, 1 failed"
	exit 1
fi

base=$(mktemp -d "${TMPDIR:-/tmp}/psfs-$(basename "$suite").XXXXXX")
# The mountpoints below DIR, deepest first.
mounts_under() {
	awk -v d="$1/" 'index($5, d) == 1 { print $5 }' /proc/self/mountinfo | sort -r
}

# run_bounded SCRATCH OUT CMD...: runs CMD (a test) in a session of its
# own (setsid: its process group is its pid), output into OUT, no standard
# input; sets rc.  Past per_test seconds it first prints the stacks of the
# test's daemons into OUT (tests/daemon-stacks.sh: the processes of that
# session, and those naming SCRATCH), then sends TERM to the whole group,
# and KILL 20 s later; rc is then 124, as timeout(1) says it.
cur_test=
cur_timer=
run_bounded() {
	local scratch=$1 out=$2 pid timer i which=''
	shift 2
	setsid "$@" >"$out" 2>&1 </dev/null &
	pid=$!
	cur_test=$pid
	sleep "$per_test" &
	timer=$!
	cur_timer=$timer
	wait -n -p which "$pid" "$timer"
	rc=$?
	if [[ $which == "$pid" ]]; then
		cur_test=
		cur_timer=
		kill "$timer" 2>/dev/null
		wait "$timer" 2>/dev/null
		return
	fi
	{
		echo "run-suite: $name is past its ${per_test}s: the stacks of its daemons, then TERM"
		GDB_TIMEOUT=30 "$here/daemon-stacks.sh" --session "$pid" --dir "$scratch" --name "$(basename "$daemon")"
	} >>"$out" 2>&1
	signal_test TERM "$pid"
	for ((i = 0; i < 200; i++)); do
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.1
	done
	signal_test KILL "$pid"
	wait "$pid" 2>/dev/null
	cur_test=
	cur_timer=
	rc=124
}

# signal_test SIGNAL PID: to the test's whole process group, when setsid
# made the test its leader (else, setsid had to fork or has not yet run:
# to the test alone, never to the runner's own group).
signal_test() {
	local group=$2
	[[ $(awk '{ sub(/^.*\) /, ""); print $3 }' "/proc/$2/stat" 2>/dev/null) == "$2" ]] && group=-$2
	kill -"$1" -- "$group" 2>/dev/null
}

# stop_test STATUS: in a worker, ends its test (TERM to the test's group)
# and its timer, then the worker.
stop_test() {
	[[ -n $cur_test ]] && signal_test TERM "$cur_test"
	[[ -n $cur_timer ]] && kill "$cur_timer" 2>/dev/null
	exit "$1"
}

# run_test T: one test from start to verdict, in a worker of its own (a
# background subshell): runs it, unmounts whatever it left mounted, and
# judges it.  The verdict goes to $base/NAME.verdict (two lines: seconds,
# why it failed, empty when it passed), written whole with a rename, so
# the runner reads it only once it is complete.  A worker's TERM (the
# runner's, when it is interrupted) goes on to its test's whole group.
run_test() {
	local t=$1 name out tmp start secs why left
	trap 'stop_test 143' TERM
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
		run_bounded "$tmp" "$out" env TMPDIR="$tmp" bash "$t" "$daemon" "${args[@]}"
	fi
	secs=$(($(date +%s) - start))
	why=
	left=$(mounts_under "$tmp")
	if [[ -n $left ]]; then
		why="left mounted: ${left//$'\n'/ }"
		while read -r mp; do
			timeout -s KILL 10 fusermount3 -uz "$mp" 2>/dev/null || timeout -s KILL 10 umount -l "$mp" 2>/dev/null || true
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
	printf '%s\n%s\n' "$secs" "$why" >"$base/$name.verdict.part"
	mv "$base/$name.verdict.part" "$base/$name.verdict"
}

# report T: prints a finished test's verdict and counts it.
report() {
	local name out secs why
	name=$(basename "$1" .sh)
	out=$base/$name.out
	{ read -r secs; read -r why; } <"$base/$name.verdict"
	if [[ -z $why ]]; then
		passed=$((passed + 1))
		echo "ok $name ($(grep -E '^checks: ' "$out" | tail -1 | cut -d' ' -f2) checks, ${secs}s)"
		grep -E '^# ' "$out" | grep -v '^# @' | cut -c1-1500 | sed 's/^/    /'
	else
		failed=$((failed + 1))
		echo "FAIL $name ($why, ${secs}s)"
		if [[ -n ${VERBOSE:-} ]]; then
			sed 's/^/    /' "$out"
		else
			# What says why comes first (a daemon's stderr, its exit),
			# so a long list of checks that failed after it does not
			# push it out of a shortened log.
			grep -v '^ok ' "$out" | awk '
				/^not ok: / { cause = $0 ~ /^not ok: (daemon stderr|the daemon )/ }
				{ if (cause) first[nf++] = $0; else rest[nr++] = $0 }
				END { for (i = 0; i < nf; i++) print first[i]; for (i = 0; i < nr; i++) print rest[i] }' |
				cut -c1-1500 | sed 's/^/    /'
		fi
	fi
}

# The tests are out of reach of the terminal's ^C (each is in a session of
# its own, and a worker ignores INT as every background job of a script
# does): the runner passes it on to every running worker as TERM, and
# each worker to its test.
declare -A worker_test=() # worker pid -> index of its test in tests
stop_workers() {
	local w
	for w in "${!worker_test[@]}"; do
		kill -TERM "$w" 2>/dev/null
	done
	wait
	exit "$1"
}
trap 'stop_workers 130' INT HUP
trap 'stop_workers 143' TERM

t_all=$(date +%s)
echo "# $(basename "$suite"): daemon $daemon${args[*]:+, ${args[*]}}, ${per_test}s per test, $jobs at once"
next=0
printed=0
while ((printed < ${#tests[@]})); do
	while ((${#worker_test[@]} < jobs && next < ${#tests[@]})); do
		run_test "${tests[next]}" &
		worker_test[$!]=$next
		next=$((next + 1))
	done
	if ((${#worker_test[@]} > 0)); then
		done_pid=
		wait -n -p done_pid "${!worker_test[@]}"
		wrc=$?
		if [[ -n $done_pid ]]; then
			name=$(basename "${tests[${worker_test[$done_pid]}]}" .sh)
			unset "worker_test[$done_pid]"
			# A worker that died before its verdict (killed from
			# outside) must not stall the runner, nor pass.
			[[ -e $base/$name.verdict ]] ||
				printf '0\nthe runner'"'"'s worker ended without a verdict (status %s)\n' "$wrc" >"$base/$name.verdict"
		fi
	fi
	while ((printed < next)) && [[ -e $base/$(basename "${tests[printed]}" .sh).verdict ]]; do
		report "${tests[printed]}"
		printed=$((printed + 1))
	done
done
left=$(mounts_under "$base")
if [[ -n ${KEEP:-} ]]; then
	echo "# KEEP is set: scratch files kept in $base"
elif [[ -z $left ]]; then
	rm -rf "$base"
else
	echo "# still mounted, $base kept: ${left//$'\n'/ }"
fi
echo "# total $(($(date +%s) - t_all))s"
echo "$passed passed, $failed failed"
((failed == 0))
