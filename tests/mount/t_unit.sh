#!/usr/bin/env bash
# docs/pisessionfs.service on a machine where pi never ran (issue 22, item
# 7): the store does not exist yet.  The unit's own command lines, run as
# systemd would run them for a user whose home has no ~/.pi (%h replaced,
# the installed program replaced by the one under test), must mount:
# ExecStartPre makes the store pi would make, and the mount then shows
# pi's first session as it is written.  And a daemon that gives up (exit
# status 1, a message saying what to do) is not restarted in a loop.
. "$(dirname "$0")/lib.sh" "$@"

REPO=$(cd "$(dirname "$0")/../.." && pwd)
UNIT=$REPO/docs/pisessionfs.service
H=$T_DIR/home
mkdir -p "$H"

# unit_lines KEY: the values of KEY= in the [Service] section, %h and the
# installed program replaced.
unit_lines() {
	awk -v key="$1=" '/^\[/ { sec = $0 } sec == "[Service]" && index($0, key) == 1 { print substr($0, length(key) + 1) }' "$UNIT" |
		sed -e "s|%h|$H|g" -e "s|/usr/local/bin/pisessionfs|$DAEMON|g"
}
run_env=(env -u PI_CODING_AGENT_DIR -u PI_CODING_AGENT_SESSION_DIR HOME="$H")

pre=$(unit_lines ExecStartPre)
assert_ne "the unit has ExecStartPre lines" "" "$pre"
while IFS= read -r line; do
	[[ -n $line ]] || continue
	# systemd splits on blanks (no shell); the unit's lines use no quotes.
	read -r -a argv <<<"$line"
	fsx_out "${run_env[@]}" "${argv[@]}"
	assert_eq "ExecStartPre=$line succeeds ($ERR)" 0 "$RC"
done <<<"$pre"

start=$(unit_lines ExecStart)
read -r -a argv <<<"$start"
MP=$H/pi-sessions
assert_eq "ExecStart mounts at ~/pi-sessions" "$MP" "${argv[${#argv[@]} - 1]}"
mount_with "$MP" "${run_env[@]}" "${argv[@]}"
assert_true "the mount of the empty store works" test -f "$MP/sessions.md"
assert_eq "the store it mounts is pi's default one" "$H/.pi/agent/sessions" "$(fsx findmnt -no SOURCE --mountpoint "$MP")"
# pi's first run: a project folder and a session file appear in the store.
mkdir -p "$H/.pi/agent/sessions/--w--"
{
	header 3
	user_msg a1 null "first run"
} >"$H/.pi/agent/sessions/--w--/s.jsonl"
assert_poll "pi's first session shows in the mount" 3 grep -q "first run" "$MP/--w--/s/0001-user.a1.md"

restart=$(unit_lines Restart)
assert_eq "a daemon that exits 1 (a message saying what to do) is not restarted; a crash is" "on-abnormal" "$restart"

finish
