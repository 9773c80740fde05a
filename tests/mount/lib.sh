# shellcheck shell=bash
# Helpers for the mount tests.  Each tests/mount/t_*.sh does
#
#     . "$(dirname "$0")/lib.sh" "$@"      # $1 = path of the daemon
#     ...checks...
#     finish
#
# Checks are soft: a failed assertion is reported and counted, the test goes
# on, and `finish` (or the EXIT trap) turns any failure into exit status 1.
# Anything that must not go wrong for the rest to make sense (a mount that
# does not come up) is fatal: `die`.
#
# Every access to the mount goes through `fsx` (timeout -s KILL), so a hung
# daemon fails the test instead of hanging it, and the failure shows
# every thread's stack of the daemon (daemon_stacks, gdb).  TIME_SCALE (default 1)
# multiplies every time limit: the per-access TIMEOUT, MOUNT_WAIT, the wait
# for a daemon to exit and the limit of every poll_until and assert_poll,
# so a daemon that runs 20 times slower (under valgrind) is given 20 times
# as long; TIMEOUT and MOUNT_WAIT set explicitly win.
#
# The EXIT trap runs the test's `teardown` function if it defines one
# (stop its writers), unmounts what mount_fs mounted (the last mount
# first), runs the test's `after_unmount` if defined (unmount a tmpfs store
# it mounted itself), fails the test if a daemon's stderr says error,
# warning, sanitizer or runtime error, if a daemon died while it was
# expected to run, or if anything is still mounted under its scratch
# directory (which is then unmounted), and removes that directory.
# `finish` prints "checks: N" on success; the runner (tests/run-suite.sh)
# counts a test as passed only when it exits 0 and that line is there (a
# test that stopped early, or skipped itself, never passes).

set -euo pipefail
shopt -s nullglob

DAEMON=${1:?usage: $0 PATH-OF-pisessionfs}
LIB_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
case $DAEMON in
/*) ;;
*) DAEMON=$PWD/$DAEMON ;;
esac
TEST_NAME=$(basename "$0" .sh)
export LC_ALL=C
TIME_SCALE=${TIME_SCALE:-1}
if ! awk -v k="$TIME_SCALE" 'BEGIN { exit !(k + 0 > 0 && k ~ /^[0-9]*\.?[0-9]+$/) }'; then
	echo "TIME_SCALE must be a positive number, not '$TIME_SCALE'" >&2
	exit 1
fi
# scaled SECONDS: SECONDS times TIME_SCALE, for timeout(1) and sleep; as
# given when TIME_SCALE is 1 (0.5 stays 0.5), else rounded up to a whole
# second.  scaled_int always rounds up, for bash arithmetic.
scaled() {
	awk -v s="$1" -v k="$TIME_SCALE" 'BEGIN { v = s * k; if (k != 1 && v != int(v)) v = int(v) + 1; print v }'
}
scaled_int() {
	awk -v s="$1" -v k="$TIME_SCALE" 'BEGIN { v = s * k; if (v != int(v)) v = int(v) + 1; print v }'
}
TIMEOUT=${TIMEOUT:-$(scaled 10)}           # per file access, seconds
MOUNT_WAIT=${MOUNT_WAIT:-$(scaled_int 10)} # for a mount to show up, whole seconds

T_DIR=$(mktemp -d "${TMPDIR:-/tmp}/psfs-$TEST_NAME.XXXXXX")
STORE=$T_DIR/store
MNT=$T_DIR/mnt
mkdir -p "$STORE" "$MNT"
# The daemons' trash (rm -r of a session): the test's, not the user's.
export XDG_DATA_HOME=$T_DIR/xdg
# The cache kept across mounts (docs/layout.md "The cache"): the test's.
export XDG_CACHE_HOME=$T_DIR/cache

CHECKS=0
FAILS=0
FINISHED=0
FSX_WATCHDOG=          # the pid of fsx's watchdog (fsx_watchdog_start)
DAEMON_PID=
declare -a MOUNTS=()   # mountpoints started by mount_fs, in order
declare -A PID_OF=()   # mountpoint -> daemon pid
declare -A LOG_OF=()   # mountpoint -> daemon stderr log
declare -A EXPECT_DEAD=()  # mountpoint -> 1 when the test killed the daemon on purpose
declare -a LOGS=()     # every daemon log that the final check reads

if [[ ! -c /dev/fuse ]]; then
	echo "SKIPPED: /dev/fuse is missing, nothing can be mounted" >&2
	exit 77
fi
for tool in fusermount3 timeout python3 cmp sha256sum; do
	command -v "$tool" >/dev/null || { echo "SKIPPED: $tool is missing" >&2; exit 77; }
done
[[ -x $DAEMON ]] || { echo "daemon $DAEMON is not executable" >&2; exit 1; }

# --- reporting --------------------------------------------------------------

fail() {
	local msg="$*"
	FAILS=$((FAILS + 1))
	printf 'not ok: %s\n' "${msg//"$T_DIR"/\$T}" >&2
}

pass() {
	CHECKS=$((CHECKS + 1))
}

die() {
	fail "$*"
	exit 1
}

# Shows a value readably in a failure message (control bytes escaped, long
# values cut).
show() {
	local v=$1
	if ((${#v} > 400)); then
		v="${v:0:400}...(${#1} bytes)"
	fi
	printf '%q' "$v"
}

# let_others_reach DIR: gives others search permission on DIR and every
# folder above it up to /tmp (the test's scratch folders are 0700), for a
# test whose second user (setpriv) must reach the mount.
let_others_reach() {
	local d=$1
	while [[ $d != / && $d != /tmp && $d != "${TMPDIR:-/tmp}/.." ]]; do
		chmod o+x "$d"
		d=$(dirname "$d")
	done
}

# passthrough_helper: sets HELPER to tests/helpers/passthrough_store.c's
# binary (PSFS_PASSTHROUGH, else beside the daemon's build), or dies.
passthrough_helper() {
	HELPER=${PSFS_PASSTHROUGH:-}
	local c
	if [[ -z $HELPER ]]; then
		for c in "$(dirname "$DAEMON")/tests/passthrough-store" "$LIB_DIR/../../build/tests/passthrough-store"; do
			if [[ -x $c ]]; then
				HELPER=$c
				break
			fi
		done
	fi
	[[ -n $HELPER && -x $HELPER ]] ||
		die "the passthrough helper is not built (make build/tests/passthrough-store; make check-mount builds it and sets PSFS_PASSTHROUGH)"
}

# need_pi: pi 1.6.0 and its Node.js (tests/setup-pi.sh; PI_REF_DIR names
# an installed copy) in PI_NODE and PI_SESSION_MANAGER.  Without them a
# test cannot check what it promises: it fails, it does not skip.
# trash_cli CMD [ARGS...]: a trash-cli command (trash-list, trash-restore)
# that sees only this test's mounts.  trash-cli looks for trash
# directories in every mount point of /proc/mounts: in another test's
# mount its lookups could make that test's unmount fail (EBUSY), and a
# mount that stopped answering would hold it up.  It runs in a mount
# namespace of its own where every FUSE mount, and every mount below
# /tmp, that is not this test's is detached (only there).
trash_cli() {
	unshare --mount --propagation private bash -c '
		t=$1
		shift
		awk -v t="$t/" '"'"'($3 ~ /^fuse/ || index($2, "/tmp/") == 1) && index($2 "/", t) != 1 { print $2 }'"'"' \
			/proc/self/mounts | sort -r | while read -r m; do
			umount -l "$(printf "%b" "$m")" 2>/dev/null || true
		done
		exec "$@"' _ "$T_DIR" "$@"
}

need_pi() {
	local out root
	root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
	out=$(PI_REF_DIR=${PI_REF_DIR:-} "$root/tests/setup-pi.sh" 2>"$T_DIR/.setup-pi") ||
		die "tests/setup-pi.sh failed: $(tail -5 "$T_DIR/.setup-pi")"
	eval "$out"
	[[ -x ${PI_NODE:-} && -f ${PI_SESSION_MANAGER:-} ]] || die "pi is not usable after tests/setup-pi.sh"
}

# pi_open FILE: what pi's SessionManager.open reads of a copy of FILE
# (tests/interop/pi_open.mjs: one JSON object, "ok", "name", "unchanged",
# ...) into $OUT, under fsx_out; FILE itself is never given to pi, which
# may rewrite what it opens.
pi_open() {
	local root
	root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
	cp "$1" "$T_DIR/pi-open.jsonl"
	fsx_out timeout -s KILL 60 "$PI_NODE" "$root/tests/interop/pi_open.mjs" "$PI_SESSION_MANAGER" "$T_DIR/pi-open.jsonl"
}

# write_close FILE TEXT: writes TEXT to FILE (created or truncated) in one
# write(2) and closes it, under fsx_out: $OUT is "closed", or the name of
# the errno close(2) failed with (the commit's answer; a shell's `>` never
# reports it).
write_close() {
	fsx_out python3 -c 'import errno, os, sys
fd = os.open(sys.argv[1], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
os.write(fd, sys.argv[2].encode())
try:
    os.close(fd)
    print("closed")
except OSError as e:
    print(errno.errorcode.get(e.errno, e.errno))' "$1" "$2"
}

# --- running things against the mount ---------------------------------------

# fsx CMD...: runs CMD with a hard time limit (a hung daemon must not hang
# the test).  Exit status 137 means it was killed.  CMD writes into files,
# which are then copied to fsx's stdout and stderr: a process stuck in a
# request the daemon took and never answers cannot be killed (D state in
# request_wait_answer), and if it held the write end of a pipe, a caller's
# $(fsx ...) or `fsx ... | wc` would wait for it for ever.  The stuck
# process is freed when the daemon is killed at cleanup.
fsx() {
	local o=$T_DIR/.fsx.$BASHPID.out e=$T_DIR/.fsx.$BASHPID.err rc=0 text
	fsx_run "$o" "$e" "$@" || rc=$?
	# Emptied, not removed: the next fsx of this process writes them
	# again, and cleanup removes the scratch directory.  Copied with
	# read, not cat: a fork and an exec less per access, unless the
	# output holds a NUL byte (read stops there and says so).
	if [[ -s $o ]]; then
		if IFS= read -r -d '' text <"$o"; then
			cat "$o"
		else
			printf '%s' "$text"
		fi
		: >"$o"
	fi
	[[ -s $e ]] && { cat "$e" >&2; : >"$e"; }
	if ((rc == 137)); then
		echo "fsx: timed out after ${TIMEOUT}s (daemon hung?): $*" >&2
		daemon_stacks >&2
	fi
	return "$rc"
}

# fsx_out CMD...: like fsx, stdout into $OUT (trailing newlines kept),
# stderr into $ERR (trailing newlines dropped, as $(...) would), status
# into $RC.  Text only: a NUL byte ends what is kept, as in any bash
# variable.
fsx_out() {
	local o e
	o=$T_DIR/.out
	e=$T_DIR/.err
	RC=0
	fsx_run "$o" "$e" "$@" || RC=$?
	OUT= ERR=
	IFS= read -r -d '' OUT <"$o" || :
	IFS= read -r -d '' ERR <"$e" || :
	while [[ $ERR == *$'\n' ]]; do ERR=${ERR%$'\n'}; done
	if ((RC == 137)); then
		fail "timed out after ${TIMEOUT}s (daemon hung?): $*"
		daemon_stacks >&2
	fi
}

# fsx_run OUT ERR CMD...: CMD with its stdout and stderr to the files OUT
# and ERR, its stdin the caller's, killed (with its children) once it has
# run TIMEOUT seconds; its exit status (137 when killed).  Not timeout(1):
# a fork and an exec of timeout per access were a third of a mount test's
# processes.  CMD runs in the background, and the test's one watchdog
# (fsx_watchdog) reads its pid and deadline from a file of this shell's
# own ($BASHPID: fsx also runs in subshells and in a test's workers).
fsx_run() {
	local o=$1 e=$2 pid rc=0 whole frac ms now
	local w=$T_DIR/.fsx.$BASHPID.watch
	shift 2
	whole=${TIMEOUT%%.*} frac=
	[[ $TIMEOUT != *.* ]] || frac=${TIMEOUT#*.}
	frac=${frac}000
	ms=$((10#${whole:-0} * 1000 + 10#${frac:0:3}))
	"$@" <&0 >"$o" 2>"$e" &
	pid=$!
	now=${EPOCHREALTIME/./}
	printf '%s %s\n' "$pid" "$((now / 1000 + ms))" >"$w"
	wait "$pid" || rc=$?
	: >"$w"
	return "$rc"
}

# fsx_kill_tree PID: KILL to PID and all its descendants, found by their
# parent in /proc/*/stat (timeout(1) killed its own process group; a
# command here runs in the test's).
fsx_kill_tree() {
	local st line rest ppid kids=() kid
	for st in /proc/[0-9]*/stat; do
		read -r line <"$st" 2>/dev/null || continue
		rest=${line##*) }
		rest=${rest#* }
		ppid=${rest%% *}
		[[ $ppid == "$1" ]] && kids+=("${st//[^0-9]/}")
	done
	kill -KILL "$1" 2>/dev/null
	for kid in "${kids[@]}"; do
		fsx_kill_tree "$kid"
	done
}

# fsx_watchdog_start: starts the test's watchdog, from lib.sh itself so
# that there is one per test: every 0.2 s it reads each shell's
# .fsx.PID.watch and kills a command past its deadline with its
# children.  It sleeps in read -t on a FIFO of its own, not sleep(1),
# and ends with the test's shell (or at cleanup).
fsx_watchdog_start() {
	local tick=$T_DIR/.fsx.tick
	mkfifo "$tick"
	(
		exec >/dev/null 2>&1 {fd}<>"$tick"
		trap - EXIT ERR TERM INT
		set +e
		local f pid deadline now
		while kill -0 "$$" 2>/dev/null; do
			now=${EPOCHREALTIME/./}
			now=$((now / 1000))
			for f in "$T_DIR"/.fsx.*.watch; do
				pid= deadline=
				read -r pid deadline <"$f" || continue
				[[ -n $deadline ]] && ((now >= deadline)) || continue
				fsx_kill_tree "$pid"
				: >"$f"
			done
			read -r -t 0.2 -u "$fd"
		done
	) &
	FSX_WATCHDOG=$!
}

# daemon_stacks: where the daemons are, after an access timed out: every
# thread's stack of each daemon this test started (those mount_with
# started, and any daemon whose command line names the scratch directory),
# and the test's processes stuck in the kernel (tests/daemon-stacks.sh,
# gdb).  The first three times in a test; after that, a line saying so
# (a hung daemon makes every later access time out too).  A file counts
# them, as fsx often runs in a subshell.
daemon_stacks() {
	local n p args=()
	n=$(cat "$T_DIR/.stacks" 2>/dev/null || echo 0)
	echo $((n + 1)) >"$T_DIR/.stacks"
	if ((n >= 3)); then
		echo "daemon-stacks: printed three times in this test already, not again"
		return 0
	fi
	for p in "${PID_OF[@]}"; do
		[[ -n $p ]] && args+=(--pid "$p")
	done
	"$LIB_DIR/../daemon-stacks.sh" --dir "$T_DIR" --name "$(basename "$DAEMON")" "${args[@]}" 2>&1 |
		sed "s|$T_DIR|\$T|g" || true
}

# poll_until SECONDS CMD...: retries CMD (each try under fsx) every 50 ms
# until it succeeds (status 0) or SECONDS (may be fractional; times
# TIME_SCALE) have passed since the call (status 1).
poll_until() {
	local limit=$1
	shift
	local end now
	# EPOCHREALTIME (bash's own clock): a poll forks only its command.
	end=$(awk -v s="$limit" -v k="$TIME_SCALE" -v t="$EPOCHREALTIME" 'BEGIN { printf "%d", t * 1000 + s * k * 1000 }')
	while :; do
		if fsx_run /dev/null /dev/null "$@"; then
			return 0
		fi
		now=${EPOCHREALTIME/./}
		((now / 1000 < end)) || return 1
		sleep 0.05
	done
}

# mounts_under DIR: the mountpoints below DIR, deepest first.
mounts_under() {
	awk -v d="$1/" 'index($5, d) == 1 { print $5 }' /proc/self/mountinfo | sort -r
}

is_mounted() {
	local mp=$1
	awk -v mp="$mp" '$5 == mp { found = 1 } END { exit !found }' /proc/self/mountinfo
}

daemon_alive() {
	local pid=$1 state
	[[ -n $pid && -r /proc/$pid/stat ]] || return 1
	state=$(awk '{ sub(/^.*\) /, ""); print $1 }' "/proc/$pid/stat" 2>/dev/null) || return 1
	[[ -n $state && $state != Z && $state != X ]]
}

# mount_fs [--no-auto-unmount] STORE MOUNTPOINT [DAEMON ARGS...]: starts the
# daemon in the foreground, in the background, stderr to a log, and waits
# (bounded) until the mount shows in /proc/self/mountinfo.  Sets DAEMON_PID.
mount_fs() {
	local auto=(-o auto_unmount)
	if [[ ${1:-} == --no-auto-unmount ]]; then
		auto=()
		shift
	fi
	local store=$1 mp=$2
	shift 2
	mount_with "$mp" "$DAEMON" --store "$store" -f "${auto[@]}" "$@" "$mp"
}

# mount_with MOUNTPOINT CMD...: mount_fs for any FUSE daemon that CMD starts
# in the foreground (a test helper file system): the same log check, wait,
# unmount and exit status check.  Sets DAEMON_PID.
mount_with() {
	local mp=$1
	shift
	local log
	log=$T_DIR/daemon.$((${#LOGS[@]} + 1)).log
	: >"$log"
	LOGS+=("$log")
	"$@" 2>"$log" &
	DAEMON_PID=$!
	MOUNTS+=("$mp")
	PID_OF[$mp]=$DAEMON_PID
	LOG_OF[$mp]=$log
	local i
	for ((i = 0; i < MOUNT_WAIT * 20; i++)); do
		if is_mounted "$mp"; then
			return 0
		fi
		if ! daemon_alive "$DAEMON_PID"; then
			die "daemon exited before mounting $mp: $(head -c 2000 "$log")"
		fi
		sleep 0.05
	done
	die "$mp not mounted after ${MOUNT_WAIT}s: $(head -c 2000 "$log")"
}

# umount_fs MOUNTPOINT: checks the daemon is still running (unless the test
# killed it), unmounts, and checks the daemon then exits with status 0.
umount_fs() {
	local mp=$1 pid=${PID_OF[$1]:-} rc=0 i
	if [[ -z ${EXPECT_DEAD[$mp]:-} ]] && [[ -n $pid ]] && ! daemon_alive "$pid"; then
		local st=0
		wait "$pid" 2>/dev/null || st=$?
		fail "the daemon for $mp died while mounted (exit status $st): $(tail -c 2000 "${LOG_OF[$mp]}")"
		PID_OF[$mp]=
		pid=
		EXPECT_DEAD[$mp]=1
	fi
	if [[ -n $pid ]]; then
		kill -CONT "$pid" 2>/dev/null || true # a test may have stopped it
	fi
	if is_mounted "$mp"; then
		if ! timeout -s KILL "$TIMEOUT" fusermount3 -u "$mp" 2>"$T_DIR/.umount"; then
			[[ -z ${EXPECT_DEAD[$mp]:-} ]] && fail "fusermount3 -u $mp failed: $(cat "$T_DIR/.umount")"
			if [[ -n $pid ]]; then
				kill -KILL "$pid" 2>/dev/null || true
			fi
			timeout -s KILL "$TIMEOUT" fusermount3 -uz "$mp" 2>/dev/null || true
		fi
	fi
	if [[ -n $pid ]]; then
		local exit_wait
		exit_wait=$(scaled_int 5)
		for ((i = 0; i < exit_wait * 20; i++)); do
			daemon_alive "$pid" || break
			sleep 0.05
		done
		if daemon_alive "$pid"; then
			fail "the daemon for $mp did not exit within ${exit_wait}s of the unmount"
			kill -KILL "$pid" 2>/dev/null || true
		fi
		wait "$pid" 2>/dev/null || rc=$?
		if [[ -z ${EXPECT_DEAD[$mp]:-} ]] && ((rc != 0)); then
			fail "the daemon for $mp exited with status $rc after the unmount"
		fi
		PID_OF[$mp]=
	fi
	if is_mounted "$mp"; then
		fail "$mp is still mounted after the unmount"
		timeout -s KILL "$TIMEOUT" fusermount3 -uz "$mp" 2>/dev/null || true
	fi
}

# Fails if a daemon log has a line that looks like trouble.
check_logs() {
	local log bad
	for log in "${LOGS[@]}"; do
		[[ -f $log ]] || continue
		bad=$(grep -Ei 'error|warning|sanitizer|runtime error' "$log" | head -20 || true)
		if [[ -n $bad ]]; then
			fail "daemon stderr ($(basename "$log")) has: $bad"
		fi
	done
}

cleanup() {
	local rc=$? mp i left
	trap - EXIT
	set +e
	kill "$FSX_WATCHDOG" 2>/dev/null
	wait "$FSX_WATCHDOG" 2>/dev/null
	# A test's own teardown (stop its writers, say) runs first.
	if [[ $(type -t teardown) == function ]]; then
		teardown
	fi
	# Last mounted first: a mount may live on an earlier one.
	for ((i = ${#MOUNTS[@]} - 1; i >= 0; i--)); do
		mp=${MOUNTS[i]}
		if [[ -n ${PID_OF[$mp]:-} ]] || is_mounted "$mp"; then
			umount_fs "$mp"
		fi
	done
	# Then what the test mounted itself (a tmpfs store, say).
	if [[ $(type -t after_unmount) == function ]]; then
		after_unmount
	fi
	check_logs
	# Nothing may stay mounted under the scratch directory.
	left=$(mounts_under "$T_DIR")
	if [[ -n $left ]]; then
		fail "still mounted at the end: ${left//$'\n'/ }"
		while read -r mp; do
			timeout -s KILL 10 fusermount3 -uz "$mp" 2>/dev/null || timeout -s KILL 10 umount -l "$mp" 2>/dev/null || true
		done <<<"$left"
	fi
	if [[ -n ${KEEP:-} ]]; then
		echo "KEEP is set: kept $T_DIR" >&2
	elif [[ -z $(mounts_under "$T_DIR") ]]; then
		rm -rf "$T_DIR"
	fi
	if ((rc == 77)); then
		exit 77
	fi
	if ((FAILS > 0)); then
		echo "$TEST_NAME: $FAILS failed of $((CHECKS + FAILS)) checks" >&2
		exit 1
	fi
	if ((rc != 0)); then
		echo "$TEST_NAME: stopped with status $rc" >&2
		exit "$rc"
	fi
	if ((FINISHED == 0)); then
		echo "$TEST_NAME: ended without reaching finish" >&2
		exit 1
	fi
	echo "checks: $CHECKS"
	exit 0
}
trap cleanup EXIT
trap 'echo "$TEST_NAME: command failed (status $?) at line $LINENO: $BASH_COMMAND" >&2' ERR
trap 'exit 143' TERM
trap 'exit 130' INT
fsx_watchdog_start

# finish: the last line of every test.
finish() {
	FINISHED=1
	exit 0
}

# --- assertions (soft) ------------------------------------------------------

# assert_eq WHAT EXPECTED ACTUAL
assert_eq() {
	if [[ $2 == "$3" ]]; then
		pass
	else
		fail "$1: expected $(show "$2"), got $(show "$3")"
	fi
}

# assert_ne WHAT UNEXPECTED ACTUAL
assert_ne() {
	if [[ $2 != "$3" ]]; then
		pass
	else
		fail "$1: got $(show "$3"), which it must not be"
	fi
}

# assert_contains WHAT NEEDLE HAYSTACK
assert_contains() {
	if [[ $3 == *"$2"* ]]; then
		pass
	else
		fail "$1: $(show "$3") does not contain $(show "$2")"
	fi
}

# assert_true WHAT CMD...: CMD (under fsx) must succeed.
assert_true() {
	local what=$1
	shift
	fsx_out "$@"
	if ((RC == 0)); then
		pass
	else
		fail "$what: '$*' failed ($RC): $(show "$ERR")"
	fi
}

# assert_file_content FILE EXPECTED: the file's bytes are exactly EXPECTED
# (read with cat through the mount; trailing newlines count).
assert_file_content() {
	fsx_out cat -- "$1"
	if ((RC != 0)); then
		fail "cat $1 failed ($RC): $ERR"
	elif [[ $OUT != "$2" ]]; then
		fail "content of $1: expected $(show "$2"), got $(show "$OUT")"
	else
		pass
	fi
}

# assert_same_bytes FILE1 FILE2: cmp (under fsx).
assert_same_bytes() {
	fsx_out cmp -- "$1" "$2"
	if ((RC == 0)); then
		pass
	else
		fail "$1 and $2 differ: $OUT$ERR"
	fi
}

# size_is_not FILE SIZE: for polls on st_size alone.  Reading the file
# would mend a stale size (the kernel takes the end a read finds), so the
# watcher's invalidation of attributes the kernel keeps for the timeout is
# seen only by stat without reading.
# shellcheck disable=SC2317 # called by name in bash -c
size_is_not() {
	local size
	size=$(stat -c %s -- "$1") && [[ $size != "$2" ]]
}
export -f size_is_not

# assert_size FILE: stat's st_size equals the bytes cat returns (a wrong
# st_size makes readers stop early or read NULs); for a symlink, the length
# of its target.
assert_size() {
	local f=$1 size bytes
	size=$(fsx stat -c %s -- "$f" 2>&1) || true
	if fsx test -L "$f"; then
		bytes=$(fsx readlink -- "$f" | tr -d '\n' | wc -c)
	else
		bytes=$(fsx cat -- "$f" | wc -c)
	fi
	if [[ $size == "$bytes" ]]; then
		pass
	else
		fail "st_size of $f is $(show "$size"), its content is $bytes bytes"
	fi
}

# assert_exists PATH (lstat: a symlink counts even if dangling)
assert_exists() {
	if fsx test -e "$1" || fsx test -L "$1"; then
		pass
	else
		fail "$1 does not exist"
	fi
}

# assert_missing PATH: lstat fails with ENOENT.
assert_missing() {
	fsx_out stat -- "$1"
	if ((RC == 0)); then
		fail "$1 exists but must not"
	elif [[ $ERR != *"No such file or directory"* ]]; then
		fail "$1: expected 'No such file or directory', got $(show "$ERR")"
	else
		pass
	fi
}

# assert_errno MESSAGE CMD...: CMD must fail, its stderr must contain
# MESSAGE (e.g. "Is a directory"), and it must not hang.
assert_errno() {
	local msg=$1
	shift
	fsx_out "$@"
	if ((RC == 0)); then
		fail "'$*' succeeded but must fail with '$msg'"
	elif ((RC == 137)); then
		: # reported by fsx_out
	elif [[ $ERR != *"$msg"* ]]; then
		fail "'$*' must fail with '$msg', got $(show "$ERR")"
	else
		pass
	fi
}

# assert_fails CMD...: CMD must fail (any message) without hanging.
assert_fails() {
	fsx_out "$@"
	if ((RC == 0)); then
		fail "'$*' succeeded but must fail"
	elif ((RC != 137)); then
		pass
	fi
}

# assert_json FILE: parses as JSON (python3 -m json.tool) read through cat.
assert_json() {
	local tmp=$T_DIR/.json
	if ! fsx cat -- "$1" >"$tmp" 2>"$T_DIR/.err"; then
		fail "cat $1 failed: $(cat "$T_DIR/.err")"
		return
	fi
	if python3 -m json.tool "$tmp" >/dev/null 2>"$T_DIR/.err"; then
		pass
	else
		fail "$1 is not valid JSON: $(cat "$T_DIR/.err")"
	fi
}

# assert_poll WHAT SECONDS CMD...: CMD must succeed within SECONDS.
assert_poll() {
	local what=$1 limit=$2
	shift 2
	if poll_until "$limit" "$@"; then
		pass
	else
		fail "$what: not within $(scaled "$limit")s ($*)"
	fi
}

# ls_names DIR: the names in DIR (ls -A, one per line), under fsx.
ls_names() {
	fsx ls -A1 -- "$1"
}

# --- building session files -------------------------------------------------

# header [VERSION [ID]]: a session header line.
# shellcheck disable=SC2120 # the arguments are optional
header() {
	printf '{"type":"session","version":%s,"id":"%s","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/w"}\n' \
		"${1:-3}" "${2:-11111111-2222-3333-4444-555555555555}"
}

# user_msg ID PARENT TEXT: a user message line (PARENT "null" for a root).
# ID, PARENT and TEXT are inserted as JSON string contents, unescaped.
user_msg() {
	local parent=null
	[[ $2 == null ]] || parent="\"$2\""
	printf '{"type":"message","id":"%s","parentId":%s,"timestamp":"2026-01-01T00:00:01.000Z","message":{"role":"user","content":"%s","timestamp":1767225601000}}\n' \
		"$1" "$parent" "$3"
}

# asst_msg ID PARENT TEXT
asst_msg() {
	local parent=null
	[[ $2 == null ]] || parent="\"$2\""
	printf '{"type":"message","id":"%s","parentId":%s,"timestamp":"2026-01-01T00:00:02.000Z","message":{"role":"assistant","content":[{"type":"text","text":"%s"}],"api":"x","provider":"p","model":"m","usage":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"totalTokens":0,"cost":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"total":0}},"stopReason":"stop","timestamp":1767225602000}}\n' \
		"$1" "$parent" "$3"
}

# alpha_turns: the four turns the write tests start from: aaaa0001 user
# "alpha one" (a root), aaaa0002 assistant "reply one", aaaa0003 user
# "alpha two", aaaa0004 assistant "reply two".
alpha_turns() {
	user_msg aaaa0001 null "alpha one"
	asst_msg aaaa0002 aaaa0001 "reply one"
	user_msg aaaa0003 aaaa0002 "alpha two"
	asst_msg aaaa0004 aaaa0003 "reply two"
}

# label_entry ID PARENT TARGET LABEL
label_entry() {
	printf '{"type":"label","id":"%s","parentId":"%s","timestamp":"2026-01-01T00:00:03.000Z","targetId":"%s","label":"%s"}\n' \
		"$1" "$2" "$3" "$4"
}

# line_of FILE N: line N of FILE, with its newline.
line_of() {
	sed -n "${2}p" "$1"
}
