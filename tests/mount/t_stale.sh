#!/usr/bin/env bash
# A dead daemon's mountpoint (issue 22, item 2).  After kill -9 of a daemon
# mounted without auto_unmount, every call on the directory fails with
# ENOTCONN ("Transport endpoint is not connected"):
#   1. the daemon, asked to mount there again, sees that the mount is
#      pisessionfs's own and its daemon is gone, says so, clears it
#      (a lazy unmount) and mounts;
#   2. a dead mount of another file system is not cleared: the daemon
#      says it is stale and how to clear it (fusermount3 -u);
#   3. quickstart.sh on a dead pisessionfs mount clears it and mounts,
#      instead of saying it is already mounted; also at once after the
#      kill, with the mount's attributes freshly cached by a stat (which
#      then still succeeds), for the demo store and for the user's own.
# Not tested: a user's own mount, which the daemon unmounts with
# fusermount3 -u -z when umount2 is refused; /dev/fuse is root's alone on
# the test machines, so no other user can mount there.
. "$(dirname "$0")/lib.sh" "$@"

REPO=$(cd "$(dirname "$0")/../.." && pwd)
passthrough_helper
mkdir -p "$STORE/--w--"
{
	header 3
	user_msg a1 null "stale test"
} >"$STORE/--w--/s.jsonl"

# kill_daemon MOUNTPOINT: kill -9 of its daemon; the mount stays, dead.
kill_daemon() {
	local mp=$1 pid=${PID_OF[$1]}
	EXPECT_DEAD[$mp]=1
	{ kill -KILL "$pid" && wait "$pid"; } 2>/dev/null || true
	PID_OF[$mp]=
}

# mount_over MOUNTPOINT: mount_fs for a mountpoint that is in the mount
# table already (dead): waits until the mount answers, not for mountinfo.
mount_over() {
	local mp=$1 log
	log=$T_DIR/daemon.$((${#LOGS[@]} + 1)).log
	LOGS+=("$log")
	"$DAEMON" --store "$STORE" -f -o auto_unmount "$mp" 2>"$log" &
	MOUNTS+=("$mp")
	PID_OF[$mp]=$!
	LOG_OF[$mp]=$log
	if poll_until 10 test -f "$mp/sessions.md"; then
		pass
	else
		fail "the daemon mounts over the dead mount $mp: $(head -c 2000 "$log")"
		EXPECT_DEAD[$mp]=1
	fi
}

# is_mounted_check WHAT MOUNTPOINT
is_mounted_check() {
	if is_mounted "$2"; then pass; else fail "$1: $2 is not in the mount table"; fi
}

# --- 1. the daemon on its own dead mount ----------------------------------------
# Right away (the kernel may still hold the mount root's attributes, so
# stat() succeeds and only opendir() says ENOTCONN), and once the
# attribute timeout (1 s) has passed.
for delay in 0 1.2; do
	mount_fs --no-auto-unmount "$STORE" "$MNT"
	kill_daemon "$MNT"
	sleep "$delay"
	assert_errno "Transport endpoint is not connected" ls "$MNT"
	is_mounted_check "the dead mount is still in the mount table" "$MNT"
	unset "EXPECT_DEAD[$MNT]"
	mount_over "$MNT"
	assert_contains "the new daemon mounts over it, and works ($delay s)" "stale test" "$(fsx cat "$MNT/--w--/s/0001-user.a1.md")"
	log=${LOG_OF[$MNT]}
	assert_contains "it says what it found and did ($delay s)" \
		"$MNT was a stale mount of pisessionfs (its daemon is gone); unmounted it (fusermount3 -u -z $MNT)" "$(cat "$log")"
	assert_eq "one mount there, not two ($delay s)" 1 "$(awk -v mp="$MNT" '$5 == mp' /proc/self/mountinfo | wc -l)"
	if [[ $delay == 0 ]]; then
		umount_fs "$MNT"
	fi
done
# Its own mount is alive: a second daemon still says "already mounted".
fsx_out "$DAEMON" --store "$STORE" -f "$MNT"
assert_contains "a live mount is still refused" "$MNT is already mounted by pisessionfs" "$ERR"
umount_fs "$MNT"

# --- 2. another file system's dead mount -------------------------------------------
OTHER=$T_DIR/other
BACK=$T_DIR/backing
mkdir -p "$OTHER" "$BACK"
mount_with "$OTHER" "$HELPER" "$BACK" "$OTHER" -f
EXPECT_DEAD[$OTHER]=1
pid=${PID_OF[$OTHER]}
{ kill -KILL "$pid" && wait "$pid"; } 2>/dev/null || true
PID_OF[$OTHER]=
assert_errno "Transport endpoint is not connected" stat "$OTHER"
fsx_out "$DAEMON" --store "$STORE" -f "$OTHER"
assert_ne "pisessionfs does not mount over another file system's dead mount" 0 "$RC"
assert_contains "it says it is stale and how to clear it" \
	"$OTHER is a stale mount (its daemon died); run: fusermount3 -u $OTHER" "$ERR"
is_mounted_check "and leaves it mounted" "$OTHER"
fsx fusermount3 -u "$OTHER" || fail "fusermount3 -u $OTHER failed"

# --- 3. quickstart.sh on a dead pisessionfs mount ------------------------------
# quickstart_on WHAT HOME MOUNTPOINT: runs quickstart.sh there as a user
# whose home is HOME; $OUT, $ERR, $RC.
quickstart_on() {
	local home=$2 mp=$3
	(
		TIMEOUT=$(scaled 600)
		fsx_out env -u PI_CODING_AGENT_DIR -u PI_CODING_AGENT_SESSION_DIR HOME="$home" \
			XDG_CACHE_HOME="$home/cache" "$REPO/quickstart.sh" "$mp"
		printf '%s' "$RC" >"$T_DIR/qs.rc"
		printf '%s' "$OUT" >"$T_DIR/qs.out"
		printf '%s' "$ERR" >"$T_DIR/qs.err"
	)
	OUT=$(cat "$T_DIR/qs.out")
	ERR=$(cat "$T_DIR/qs.err")
	RC=$(cat "$T_DIR/qs.rc")
	assert_eq "$1: quickstart succeeds ($ERR)" 0 "$RC"
	assert_contains "$1: it says the mount was stale and that it cleared it" \
		"$mp was a stale mount of pisessionfs (its daemon is gone); unmounted it (fusermount3 -u -z $mp)" "$OUT$ERR"
	assert_eq "$1: it does not say it is already mounted" "" "$(grep 'already mounted' <<<"$OUT$ERR" || true)"
	assert_contains "$1: it says it mounted" "is mounted at $mp" "$OUT"
	fsx_out ls -A "$mp"
	assert_eq "$1: ls MOUNT works at once" 0 "$RC"
	assert_contains "$1: ls MOUNT lists the root" "sessions.md" "$OUT"
}

H=$T_DIR/home
QS=$T_DIR/qs
mkdir -p "$H" "$QS"
mount_fs --no-auto-unmount "$STORE" "$QS"
kill_daemon "$QS"
assert_errno "Transport endpoint is not connected" stat "$QS"
quickstart_on "dead, demo store" "$H" "$QS"
assert_eq "the mount's source is the copy" "$H/cache/pisessionfs/demo-store" "$(fsx findmnt -no SOURCE --mountpoint "$QS")"
assert_true "and it works" test -f "$QS/sessions.md"
fsx fusermount3 -u "$QS" || fail "fusermount3 -u $QS failed"

# At once after the kill, the root's attributes cached: stat still
# succeeds, and quickstart must not take that for a live mount.
mount_fs --no-auto-unmount "$STORE" "$QS"
fsx stat "$QS" >/dev/null
kill_daemon "$QS"
quickstart_on "just killed, attributes cached, demo store" "$H" "$QS"
fsx fusermount3 -u "$QS" || fail "fusermount3 -u $QS failed"

# The same for a user with a store of their own (~/.pi/agent/sessions).
U=$T_DIR/user
mkdir -p "$U/.pi/agent"
cp -R "$STORE" "$U/.pi/agent/sessions"
mount_fs --no-auto-unmount "$U/.pi/agent/sessions" "$QS"
fsx stat "$QS" >/dev/null
kill_daemon "$QS"
quickstart_on "just killed, attributes cached, the user's store" "$U" "$QS"
assert_eq "the mount's source is the user's store" "$U/.pi/agent/sessions" \
	"$(fsx findmnt -no SOURCE --mountpoint "$QS")"
assert_true "and it shows the user's session" test -d "$QS/--w--"
fsx fusermount3 -u "$QS" || fail "fusermount3 -u $QS failed"

finish
