#!/usr/bin/env bash
# The command line: --help, --version, the errors people meet first (each
# one line on stderr saying what to do, a non-zero exit, nothing mounted),
# and the default store from the environment (a stale mount: t_stale.sh).
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh" "$@"

mkdir -p "$STORE/--proj--"
{ header; user_msg a null "cli-text"; } >"$STORE/--proj--/s.jsonl"

# run_daemon ARGS...: runs the daemon (bounded) expecting it to give up at
# once; stdout/stderr/status in OUT/ERR/RC.
run_daemon() {
	fsx_out "$DAEMON" "$@"
}
# one_line_error WHAT NEEDLE MOUNTPOINT: the last run failed, printed one
# line on stderr containing NEEDLE, and mounted nothing on MOUNTPOINT.
one_line_error() {
	local what=$1 needle=$2 mp=$3
	if ((RC != 0 && RC != 137)); then pass; else fail "$what: exit status $RC, expected a failure"; fi
	assert_eq "$what: one line on stderr" "1" "$(grep -c . <<<"$ERR")"
	assert_contains "$what: the message" "$needle" "$ERR"
	if [[ -n $mp ]] && is_mounted "$mp"; then
		fail "$what: $mp got mounted"
		fusermount3 -uz "$mp" 2>/dev/null || true
	else
		pass
	fi
}

# --- help and version ---------------------------------------------------------------
run_daemon --help
assert_eq "--help exits 0" 0 "$RC"
assert_contains "--help prints usage" "usage:" "$OUT"
assert_contains "--help names --store" "--store" "$OUT"
assert_contains "--help says how to unmount" "fusermount3 -u" "$OUT"
run_daemon -h
assert_eq "-h exits 0" 0 "$RC"
assert_contains "-h prints usage" "usage:" "$OUT"
run_daemon --version
assert_eq "--version exits 0" 0 "$RC"
if [[ $OUT =~ ^pisessionfs\ [0-9]+\.[0-9]+\.[0-9]+ ]]; then pass; else fail "--version prints 'pisessionfs X.Y.Z': $(show "$OUT")"; fi
assert_eq "--version: one line" 1 "$(grep -c . <<<"$OUT")"
run_daemon -V
assert_eq "-V exits 0" 0 "$RC"

# --- errors -----------------------------------------------------------------------------
run_daemon --store "$T_DIR/no-such-store" -f "$MNT"
one_line_error "a missing store" "--store" "$MNT"
assert_contains "a missing store: names it" "$T_DIR/no-such-store" "$ERR"
: >"$T_DIR/a-file"
run_daemon --store "$T_DIR/a-file" -f "$MNT"
one_line_error "a store that is a file" "--store" "$MNT"

mkdir -p "$T_DIR/full"
: >"$T_DIR/full/something"
run_daemon --store "$STORE" -f "$T_DIR/full"
one_line_error "a non-empty mountpoint" "not empty" "$T_DIR/full"
assert_eq "a non-empty mountpoint: left alone" "something" "$(ls -A "$T_DIR/full")"

run_daemon --store "$STORE" -f "$T_DIR/no-such-dir"
one_line_error "a nonexistent mountpoint" "mkdir -p $T_DIR/no-such-dir" ""
if [[ -e $T_DIR/no-such-dir ]]; then fail "a nonexistent mountpoint got created"; else pass; fi

run_daemon --store "$STORE" -f "$T_DIR/a-file"
one_line_error "a mountpoint that is a file" "not a directory" "$T_DIR/a-file"

run_daemon --store "$STORE" -f
one_line_error "no mountpoint" "mountpoint" ""

# --- a stale mount: tests/mount/t_stale.sh ---------------------------------------------------

# --- auto_unmount: a killed daemon takes its mount with it ------------------------------------
AUTO=$T_DIR/auto
mkdir -p "$AUTO"
mount_fs "$STORE" "$AUTO"
EXPECT_DEAD[$AUTO]=1
kill -KILL "$DAEMON_PID"
wait "$DAEMON_PID" 2>/dev/null || true
# fusermount3 unmounts once it finds the mount dead, or never: until
# fs/autounmount.c it failed so under load about one kill in eight.  The
# wait only bounds how long to look.
for _ in $(seq 200); do
	is_mounted "$AUTO" || break
	sleep 0.05
done
if is_mounted "$AUTO"; then fail "with -o auto_unmount, killing the daemon did not unmount within 10s"; else pass; fi

# --- SIGTERM: a clean exit that unmounts -----------------------------------------------------
TERM_MP=$T_DIR/term
mkdir -p "$TERM_MP"
mount_fs "$STORE" "$TERM_MP"
pid=$DAEMON_PID
kill -TERM "$pid"
rc=0
for _ in $(seq 100); do
	daemon_alive "$pid" || break
	sleep 0.05
done
wait "$pid" 2>/dev/null || rc=$?
PID_OF[$TERM_MP]=
assert_eq "SIGTERM: the daemon exits 0" 0 "$rc"
if is_mounted "$TERM_MP"; then fail "SIGTERM: still mounted"; else pass; fi

# --- the default store --------------------------------------------------------------------------
# PI_CODING_AGENT_SESSION_DIR, when no --store is given.
ENVSTORE=$T_DIR/envstore
mkdir -p "$ENVSTORE/--env--" "$T_DIR/mnt-env"
{ header; user_msg e null "from env"; } >"$ENVSTORE/--env--/e.jsonl"
log=$T_DIR/daemon.env.log
LOGS+=("$log")
PI_CODING_AGENT_SESSION_DIR=$ENVSTORE HOME=$T_DIR/nohome "$DAEMON" -f -o auto_unmount "$T_DIR/mnt-env" 2>"$log" &
DAEMON_PID=$!
MOUNTS+=("$T_DIR/mnt-env")
PID_OF[$T_DIR/mnt-env]=$DAEMON_PID
LOG_OF[$T_DIR/mnt-env]=$log
assert_poll "PI_CODING_AGENT_SESSION_DIR is the default store" 10 test -f "$T_DIR/mnt-env/--env--/e/0001-user.e.md"
umount_fs "$T_DIR/mnt-env"

# HOME/.pi/agent/sessions when the variable is unset (or empty).
HOMEDIR=$T_DIR/home
mkdir -p "$HOMEDIR/.pi/agent/sessions/--home--" "$T_DIR/mnt-home"
{ header; user_msg h null "from home"; } >"$HOMEDIR/.pi/agent/sessions/--home--/h.jsonl"
for how in unset empty; do
	log=$T_DIR/daemon.home-$how.log
	LOGS+=("$log")
	if [[ $how == unset ]]; then
		env -u PI_CODING_AGENT_SESSION_DIR HOME="$HOMEDIR" "$DAEMON" -f -o auto_unmount "$T_DIR/mnt-home" 2>"$log" &
	else
		env PI_CODING_AGENT_SESSION_DIR= HOME="$HOMEDIR" "$DAEMON" -f -o auto_unmount "$T_DIR/mnt-home" 2>"$log" &
	fi
	DAEMON_PID=$!
	MOUNTS+=("$T_DIR/mnt-home")
	PID_OF[$T_DIR/mnt-home]=$DAEMON_PID
	LOG_OF[$T_DIR/mnt-home]=$log
	assert_poll "HOME/.pi/agent/sessions is the default store (variable $how)" 10 test -f "$T_DIR/mnt-home/--home--/h/0001-user.h.md"
	umount_fs "$T_DIR/mnt-home"
done

# --store wins over the variable.
PI_CODING_AGENT_SESSION_DIR=$ENVSTORE mount_fs "$STORE" "$MNT"
assert_eq "--store wins over PI_CODING_AGENT_SESSION_DIR" "--proj--" "$(fsx ls "$MNT" | grep -e '^--')"
umount_fs "$MNT"

# Neither: one line.
fsx_out env -u PI_CODING_AGENT_SESSION_DIR -u HOME "$DAEMON" -f "$MNT"
one_line_error "no store at all" "--store" "$MNT"
# The default store missing: the message says which and what to do.
fsx_out env -u PI_CODING_AGENT_SESSION_DIR HOME="$T_DIR/nohome" "$DAEMON" -f "$MNT"
one_line_error "a missing default store" "$T_DIR/nohome/.pi/agent/sessions" "$MNT"

# -o store= and -o timeout= are accepted.
mount_fs "$STORE" "$MNT" -o timeout=0.5
assert_true "-o timeout=0.5 mounts" test -f "$MNT/--proj--/s/0001-user.a.md"
with_cache=$(cat "$MNT/--proj--/s/context.json" "$MNT/--proj--/s/transcript.md" "$MNT/--proj--/s/0001-user.a.md")
umount_fs "$MNT"

# -o entry_cache: off gives the same files; out of range is refused.
mount_fs "$STORE" "$MNT" -o entry_cache=0
assert_eq "-o entry_cache=0: the same context, transcript and entry" "$with_cache" \
	"$(cat "$MNT/--proj--/s/context.json" "$MNT/--proj--/s/transcript.md" "$MNT/--proj--/s/0001-user.a.md")"
umount_fs "$MNT"
run_daemon --store "$STORE" -f -o entry_cache=5000 "$MNT"
one_line_error "-o entry_cache=5000" "entry_cache" "$MNT"

# -o context_cache: off gives the same files (a context is built for each
# open); out of range is refused.
mount_fs "$STORE" "$MNT" -o context_cache=0
assert_eq "-o context_cache=0: the same context, transcript and entry" "$with_cache" \
	"$(cat "$MNT/--proj--/s/context.json" "$MNT/--proj--/s/transcript.md" "$MNT/--proj--/s/0001-user.a.md")"
assert_eq "-o context_cache=0: a second read is the same" "$with_cache" \
	"$(cat "$MNT/--proj--/s/context.json" "$MNT/--proj--/s/transcript.md" "$MNT/--proj--/s/0001-user.a.md")"
umount_fs "$MNT"
run_daemon --store "$STORE" -f -o context_cache=-2 "$MNT"
one_line_error "-o context_cache=-2" "context_cache" "$MNT"

# -o timeout out of range (or not a number of seconds) is refused.
run_daemon --store "$STORE" -f -o timeout=-1 "$MNT"
one_line_error "-o timeout=-1" "timeout" "$MNT"
run_daemon --store "$STORE" -f -o timeout=100000 "$MNT"
one_line_error "-o timeout=100000" "timeout" "$MNT"

finish
