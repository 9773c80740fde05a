#!/usr/bin/env bash
# Where is the daemon?  Prints every thread's stack of the pisessionfs
# daemons a test started, so that a hang can be diagnosed from CI output
# alone:
#
#   tests/daemon-stacks.sh [--session SID] [--dir DIR]... [--name NAME]... [--pid PID]...
#
# The daemons are the processes given with --pid, and every process that
# belongs to the test (its session is SID, the test's own: tests/run-suite.sh
# starts each test with setsid; or its command line holds DIR, the test's
# scratch directory, which a daemon that daemonized itself still names)
# and that is a daemon: the program it runs, or its argv[0], is named NAME
# (pisessionfs, and any other --name: the daemon itself, or a copy started
# with `exec -a`), or it is valgrind and one of its arguments is (the
# tests' own bash, whose arguments name the daemon, is not one).  For
# each, `gdb -p PID -batch -ex 'thread apply all bt'` (each gdb bounded by
# GDB_TIMEOUT seconds, default 30; without gdb, the kernel stacks of its
# threads).  Then the test's other processes that are stuck in the
# kernel (state D: a request the daemon took and never answered), with
# their kernel stacks.
#
# tests/run-suite.sh runs it before it kills a test that is past its time
# limit, and tests/mount/lib.sh's fsx when an access times out.  Writes to
# stdout only, changes nothing (gdb detaches again), and always exits 0.
set -uo pipefail
export LC_ALL=C

sid=
dirs=()
names=(pisessionfs)
pids=()
while (($# > 0)); do
	case $1 in
	--session) sid=${2:?--session needs SID}; shift 2 ;;
	--dir) dirs+=("${2:?--dir needs DIR}"); shift 2 ;;
	--name) names+=("${2:?--name needs NAME}"); shift 2 ;;
	--pid) pids+=("${2:?--pid needs PID}"); shift 2 ;;
	*) echo "daemon-stacks.sh: unknown argument $1" >&2; exit 0 ;;
	esac
done
gdb_timeout=${GDB_TIMEOUT:-30}

# stat_of PID: "STATE PPID PGRP SESSION" (after the command name, which
# may hold spaces and parentheses).
stat_of() {
	local s
	s=$(cat "/proc/$1/stat" 2>/dev/null) || return 1
	s=${s##*) }
	read -r st ppid pgrp ses _ <<<"$s"
	printf '%s %s %s %s\n' "$st" "$ppid" "$pgrp" "$ses"
}

# cmdline_of PID: the arguments, joined by spaces.
cmdline_of() {
	tr '\0' ' ' <"/proc/$1/cmdline" 2>/dev/null | sed 's/ $//'
}

# of_test PID: the process belongs to the test.
of_test() {
	local info cmd d
	info=$(stat_of "$1") || return 1
	if [[ -n $sid ]] && [[ $(cut -d' ' -f4 <<<"$info") == "$sid" ]]; then
		return 0
	fi
	cmd=$(cmdline_of "$1")
	for d in "${dirs[@]}"; do
		[[ $cmd == *"$d"* ]] && return 0
	done
	return 1
}

# is_name WORD: the last path component of WORD is one of the names.
is_name() {
	local n
	for n in "${names[@]}"; do
		[[ ${1##*/} == "$n" ]] && return 0
	done
	return 1
}

# is_daemon PID: it runs a program of one of the names, or its argv[0] is
# one, or it is valgrind and one of its arguments is.
is_daemon() {
	local exe a first=1 grind=0
	exe=$(readlink "/proc/$1/exe" 2>/dev/null) || exe=
	exe=${exe% (deleted)}
	is_name "$exe" && return 0
	[[ $exe == *valgrind* ]] && grind=1
	while IFS= read -r -d '' a; do
		if ((first)); then
			is_name "$a" && return 0
			[[ ${a##*/} == valgrind* ]] && grind=1
			first=0
		elif ((grind)) && is_name "$a"; then
			return 0
		fi
	done <"/proc/$1/cmdline" 2>/dev/null
	return 1
}

declare -A seen=()
daemons=()
for p in "${pids[@]}"; do
	[[ -n $p && -d /proc/$p && -z ${seen[$p]:-} ]] || continue
	seen[$p]=1
	daemons+=("$p")
done
others=()
for d in /proc/[0-9]*; do
	p=${d#/proc/}
	((p == $$ || p == BASHPID)) && continue
	of_test "$p" || continue
	if is_daemon "$p"; then
		[[ -n ${seen[$p]:-} ]] && continue
		seen[$p]=1
		daemons+=("$p")
	else
		others+=("$p")
	fi
done

if ((${#daemons[@]} == 0)); then
	echo "daemon-stacks: no ${names[*]} daemon of this test is running"
fi
for p in "${daemons[@]}"; do
	info=$(stat_of "$p") || continue
	echo "daemon-stacks: stacks of daemon $p (state ${info%% *}): $(cmdline_of "$p" | cut -c1-300)"
	if command -v gdb >/dev/null; then
		timeout -s KILL "$gdb_timeout" gdb -nx -q -batch -p "$p" \
			-iex 'set debuginfod enabled off' -ex 'set pagination off' \
			-ex 'thread apply all bt' </dev/null 2>&1 |
			grep -v -e '^\[New LWP' -e '^\[Thread debugging using' -e '^Using host libthread_db' || true
		((PIPESTATUS[0] == 137)) && echo "daemon-stacks: gdb did not finish within ${gdb_timeout}s"
	else
		echo "daemon-stacks: gdb is missing (tests/deps.sh --test installs it); the threads' kernel stacks:"
		for t in "/proc/$p/task/"*; do
			echo "thread ${t##*/} ($(cat "$t/comm" 2>/dev/null)), state $(stat_of "${p}/task/${t##*/}" | cut -d' ' -f1), in $(cat "$t/wchan" 2>/dev/null):"
			sed 's/^/    /' "$t/stack" 2>/dev/null || true
		done
	fi
done
for p in "${others[@]}"; do
	info=$(stat_of "$p") || continue
	[[ ${info%% *} == D ]] || continue
	echo "daemon-stacks: process $p is stuck in the kernel (state D, in $(cat "/proc/$p/wchan" 2>/dev/null)): $(cmdline_of "$p" | cut -c1-300)"
	sed 's/^/    /' "/proc/$p/stack" 2>/dev/null || true
done
exit 0
