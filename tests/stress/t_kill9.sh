#!/usr/bin/env bash
# Kill -9 while writing: writers append through the mount without pause
# (new .md files in a session's root and in a branch directory, raw lines
# appended to session.jsonl, 3 at a time and 1 at a time, name changes, and
# every round a first write to a fresh version-2 session, which the mount
# migrates, and huge .md files of 2-4 MiB in a session of their own, timed
# to be under way at the kill) while the daemon is killed with SIGKILL at a
# random moment, then mounted again on the same mountpoint.  Every 2nd
# (quick) or 4th round the kill is aimed instead: sniper.py kills the
# daemon the moment the file of a session receiving 32 MiB entries grows,
# i.e. inside the daemon's write() of one line, or the moment a migration's
# temporary file appears.  Right after each kill, before any daemon runs
# again, the store is looked at: files that end in a partial line (what
# the kill cut short), the daemon's records of appends under way and
# migrations' temporary files are counted; the next daemon must repair
# them all when it starts (docs/layout.md, "Crashes").  The aimed kills
# must have left a partial line at least once, or the test could not
# fail.  Most rounds mount with
# auto_unmount (the dead mount must go away by itself and the daemon must
# come back cleanly); some rounds mount without it, and a daemon started
# on the stale mountpoint must clear it (it is pisessionfs's, and dead),
# say so in one line, mount, and unmount as usual.
#
# At the end a second daemon on the same store is killed inside such a
# write, and the first one, still running, must repair the line before its
# own next append to that file.
#
# Every write is logged by its writer before it starts and acknowledged only
# when close() returned 0 (tests/stress/writer.py).  Afterwards
# (tests/stress/verify.py): every session file parses line by line, no line
# is partial, nothing from before the run changed (the version-2 files are
# either untouched or fully migrated), every acknowledged write is there
# exactly once, no unacknowledged one twice, no raw batch in part, no stray
# line, no temporary file left in the store; pi's SessionManager loads every
# file (a copy) and reads every line; and a last clean mount shows the
# sessions written all along and a few migrated ones exactly as pi reads
# them (check_tree.py: tests/diff/check.py's per-session checks).  Each
# round's huge session (a file of its own per round) is checked the same
# way (verify.py) once the next round's daemon has started, i.e. after
# its repair, and then removed.
#
#   t_kill9.sh DAEMON [--quick]     rounds: 10 (quick), 100; KILL9_ROUNDS=N
# shellcheck disable=SC2016,SC2317 # bash -c '...$1' on purpose; functions run by traps
# shellcheck source=common.sh
. "$(dirname "$0")/common.sh" "$@"

ROUNDS=${KILL9_ROUNDS:-$((QUICK ? 10 : 100))}
STALE_EVERY=${KILL9_STALE_EVERY:-$((QUICK ? 5 : 10))} # every Nth round: no auto_unmount
need_pi

# --- the store ---------------------------------------------------------------
mkdir -p "$STORE/--k1--" "$STORE/--k2--"
{
	header 3 aaaaaaaa-0000-0000-0000-000000000001
	user_msg a1 null "hello"
	asst_msg a2 a1 "hi"
	user_msg a3 a2 "main line"
	asst_msg a4 a2 "a branch"
} >"$STORE/--k1--/s1.jsonl"
{
	header 3 aaaaaaaa-0000-0000-0000-000000000002
	user_msg b1 null "second session"
	asst_msg b2 b1 "ok"
} >"$STORE/--k1--/s2.jsonl"
{
	header 3 aaaaaaaa-0000-0000-0000-000000000003
	user_msg c1 null "third session"
	asst_msg c2 c1 "ok"
} >"$STORE/--k2--/s3.jsonl"

# v2_session FILE N: a version-2 session of N entries (the mount migrates
# it on its first write: temporary file, fsync, rename).
v2_session() {
	python3 - "$1" "$2" <<'EOF'
import json, sys
path, n = sys.argv[1], int(sys.argv[2])
with open(path, "w") as f:
    f.write(json.dumps({"type": "session", "version": 2, "id": "bbbbbbbb-0000-0000-0000-%012d" % n,
                        "timestamp": "2026-01-01T00:00:00.000Z", "cwd": "/w"}, separators=(",", ":")) + "\n")
    parent = None
    for i in range(n):
        ident = "v%05d" % i
        if i % 2 == 0:
            m = {"role": "user", "content": "question %d %s" % (i, "x" * 80), "timestamp": 1767225600000 + i}
        else:
            m = {"role": "assistant", "content": [{"type": "text", "text": "answer %d %s" % (i, "y" * 200)}],
                 "api": "x", "provider": "p", "model": "m",
                 "usage": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 0,
                           "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0}},
                 "stopReason": "stop", "timestamp": 1767225600000 + i}
        f.write(json.dumps({"type": "message", "id": ident, "parentId": parent,
                            "timestamp": "2026-01-01T00:00:01.000Z", "message": m}, separators=(",", ":")) + "\n")
        parent = ident
EOF
}

BASE=$T_DIR/base
mkdir -p "$BASE"
for f in "$STORE"/--k1--/*.jsonl "$STORE"/--k2--/*.jsonl; do
	cp "$f" "$BASE/$(basename "$(dirname "$f")")__$(basename "$f")"
done

LOGS_DIR=$T_DIR/logs
mkdir -p "$LOGS_DIR"
STOP=$T_DIR/stop
PAUSE=$T_DIR/pause # while it exists, writers open nothing (writer.py)
WRITER_LIMIT=$((ROUNDS * 8 + 120))
# ms between one writer's writes, and how often A writes a big file: keeps
# the files (and the checks) small over 100 rounds.
WRITER_SLEEP=${KILL9_WRITER_SLEEP:-$((QUICK ? 5 : 8))}
BIG_EVERY=$((QUICK ? 7 : 25))
declare -a WPIDS=()
declare -a VERIFY_LOGS=()

# writer NAME SESSION-FILE-IN-STORE ARGS...: a writer.py in the background
# for the whole run (its file-system calls are bounded by its own watchdog
# and the whole process by timeout -s KILL).
writer() {
	local name=$1 sfile=$2
	shift 2
	timeout -s KILL "$WRITER_LIMIT" python3 "$STRESS_DIR/writer.py" --log "$LOGS_DIR/$name.log" \
		--tag "k-$name" --seconds "$WRITER_LIMIT" --stop-file "$STOP" --pause-file "$PAUSE" --sleep "$WRITER_SLEEP" "$@" \
		>"$LOGS_DIR/$name.out" 2>&1 &
	WPIDS+=($!)
	VERIFY_LOGS+=(--log "$sfile=$LOGS_DIR/$name.log")
}

teardown() {
	: >"$STOP"
	local p
	for p in "${WPIDS[@]}"; do
		kill -KILL "$p" 2>/dev/null || true
	done
}

# --- rounds -------------------------------------------------------------------
S1=$MNT/--k1--/s1
writer A "$STORE/--k1--/s1.jsonl" --mode md --target "$S1" --big-every "$BIG_EVERY" --big-kb 256
writer B "$STORE/--k1--/s1.jsonl" --mode md --target "$S1/0003~a4"
# Two chains of raw lines in s2 (C on the main line, D on a branch of b1);
# name changes only in s3, where md files also go to the main line: a name
# hangs under the leaf, and a raw chain that the leaf left behind would
# fork at every write, nesting branch directories ever deeper.
writer C "$STORE/--k1--/s2.jsonl" --mode raw --target "$MNT/--k1--/s2/session.jsonl" --batch 3 --chain --parent b2
writer D "$STORE/--k1--/s2.jsonl" --mode raw --target "$MNT/--k1--/s2/session.jsonl" --chain --parent b1
writer E "$STORE/--k2--/s3.jsonl" --mode name --target "$MNT/--k2--/s3/name"
writer F "$STORE/--k2--/s3.jsonl" --mode md --target "$MNT/--k2--/s3" --big-every 10 --big-kb 64

V2_ENTRIES=${KILL9_V2_ENTRIES:-2000}
restarted=0
stale_seen=0
huge_ok=0
huge_acks=0
huge_tries=0
snipes=0
snipes_hit=0
HUGE_KB=${KILL9_HUGE_KB:-$((QUICK ? 2048 : 4096))}
SNIPE_KB=${KILL9_SNIPE_KB:-32768}
SNIPE_EVERY=${KILL9_SNIPE_EVERY:-$((QUICK ? 2 : 4))}
snipes_partial=0
partial_before=0
partial_rounds=0
records_before=0
temps_before=0

# crash_leftovers: what the last kill left in the store, before any daemon
# starts again: "PARTIAL RECORDS TEMPS NAMES..." (files whose last line
# has no newline, records of appends under way, migrations' temporary files).
crash_leftovers() {
	python3 - "$STORE" <<'EOF'
import os, sys
root = sys.argv[1]
partial, records, temps = [], 0, 0
for d in sorted(os.listdir(root)):
    pd = os.path.join(root, d)
    if not os.path.isdir(pd) or os.path.islink(pd):
        continue
    for n in sorted(os.listdir(pd)):
        p = os.path.join(pd, n)
        if n.startswith(".pisessionfs-intent."):
            records += 1
        elif ".jsonl.pisessionfs-migrate-" in n:
            temps += 1
        elif n.endswith(".jsonl") and os.path.getsize(p) > 0:
            with open(p, "rb") as f:
                f.seek(-1, 2)
                if f.read(1) != b"\n":
                    partial.append(d + "/" + n)
print(len(partial), records, temps, " ".join(partial))
EOF
}

# check_huge ROUND WHAT: verify.py on round ROUND's huge session (after the
# repair by the daemon started since), then removes it.
check_huge() {
	local r=$1 what=$2 f=$STORE/--k3--/huge-$1.jsonl
	huge_acks=$((huge_acks + $(grep -cE '"ev": ?"ack"' "$LOGS_DIR/huge-$r.log" || true)))
	huge_tries=$((huge_tries + $(grep -cE '"ev": ?"try"' "$LOGS_DIR/huge-$r.log" || true)))
	if ! timeout -s KILL 60 python3 "$STRESS_DIR/verify.py" --session "$f=$T_DIR/huge-$r.base" \
		--log "$f=$LOGS_DIR/huge-$r.log" >"$T_DIR/huge.verify" 2>&1; then
		fail "round $r ($what): the session of huge writes after the restart: $(grep '^not ok' "$T_DIR/huge.verify" | head -3 | tr '\n' ' ')"
		cp "$f" "$T_DIR/huge.bad.$r"
	else
		huge_ok=$((huge_ok + 1))
	fi
	rm -f "$f" "$T_DIR/huge-$r.base"
}
declare -a HUGE_WHAT=()
declare -a MIGRATED=()
t_start=$(date +%s)
for ((round = 1; round <= ROUNDS; round++)); do
	v2=$STORE/--k2--/v2-$round.jsonl
	v2_session "$v2" "$V2_ENTRIES"
	# A session of its own for huge writes, made anew every round (checked
	# once the next daemon has repaired it, then removed, so that the store
	# stays small).
	mkdir -p "$STORE/--k3--"
	huge=$STORE/--k3--/huge-$round.jsonl
	{
		header 3 aaaaaaaa-0000-0000-0000-000000000004
		user_msg h1 null "huge writes go here"
	} >"$huge"
	cp "$huge" "$T_DIR/huge-$round.base"
	hlog=$LOGS_DIR/huge-$round.log
	: >"$hlog"
	cp "$v2" "$BASE/--k2--__v2-$round.jsonl"
	MIGRATED+=(--migrated "$v2")
	stale=0
	((round % STALE_EVERY == 0)) && stale=1
	# The kill comes KILL_AT: the mount has 300 ms to come up, then the
	# writers run 120-820 ms.  Two writers are started before the mount, to
	# begin at a set moment near the kill (python's start-up time under
	# load is not predictable): a first write to this round's version-2
	# session (a migration), and huge .md files (HUGE_KB each, so that the
	# daemon's one write() of the entry takes milliseconds).
	delay_ms=$((120 + RANDOM % 700))
	kill_at=$(($(now_ms) + 300 + delay_ms))
	mig_at=$((kill_at - 150 + RANDOM % 170))
	# Every SNIPE_EVERY rounds, the kill is not timed but aimed: sniper.py
	# kills the daemon the moment the file of the huge session grows, i.e.
	# inside the daemon's write() of a SNIPE_KB entry, or, every other such
	# round, the moment the temporary file of this round's migration
	# appears.
	snipe=0
	snipe_mig=0
	((round % SNIPE_EVERY == SNIPE_EVERY / 2)) && snipe=1
	((snipe && (round / SNIPE_EVERY) % 2 == 1)) && snipe_mig=1
	# (the sniper starts once the mount is up: the migration waits for it)
	((snipe_mig)) && mig_at=$(($(now_ms) + 2000))
	timeout -s KILL 20 python3 "$STRESS_DIR/writer.py" --log "$LOGS_DIR/M$round.log" --tag "k-M$round" \
		--at "$mig_at" --seconds "$( ((snipe_mig)) && echo 5 || echo 0.3)" --mode md \
		--target "$MNT/--k2--/v2-$round" >/dev/null 2>&1 &
	WPIDS+=($!)
	VERIFY_LOGS+=(--log "$v2=$LOGS_DIR/M$round.log")
	if ((snipe && !snipe_mig)); then
		timeout -s KILL 60 python3 "$STRESS_DIR/writer.py" --log "$hlog" --tag "k-H$round" \
			--seconds 20 --mode md --target "$MNT/--k3--/huge-$round" --big-every 1 --big-kb "$SNIPE_KB" \
			--stop-file "$T_DIR/snipe.done" >/dev/null 2>&1 &
	else
		timeout -s KILL 30 python3 "$STRESS_DIR/writer.py" --log "$hlog" --tag "k-H$round" \
			--at "$((kill_at - 300 + RANDOM % 250))" --seconds 1 --mode md \
			--target "$MNT/--k3--/huge-$round" --big-every 1 --big-kb "$HUGE_KB" >/dev/null 2>&1 &
	fi
	hpid=$!
	rm -f "$T_DIR/snipe.done"
	if ((stale)); then
		mount_again --no-auto-unmount "$STORE" "$MNT"
	else
		mount_again "$STORE" "$MNT"
	fi
	# The daemon serves the mount again, writes included.
	if poll_until 5 test -d "$S1/0003~a4"; then
		restarted=$((restarted + 1))
		pass "round $round: the daemon started on the same mountpoint and serves it"
	else
		fail "round $round: the remounted $S1/0003~a4 is not there within 5s"
	fi
	if ((snipe_mig)); then
		r=$(timeout -s KILL 40 python3 "$STRESS_DIR/sniper.py" "${PID_OF[$MNT]}" "$STORE/--k2--" 20 "v2-$round.jsonl.pisessionfs-" 2>&1 || true)
		snipes=$((snipes + 1))
		if [[ $r == killed* ]]; then
			snipes_hit=$((snipes_hit + 1))
			note "round $round: sniper (migration of v2-$round): $r"
		else
			note "round $round: sniper (migration of v2-$round) did not fire: $r"
		fi
	elif ((snipe)); then
		r=$(timeout -s KILL 40 python3 "$STRESS_DIR/sniper.py" "${PID_OF[$MNT]}" "$huge" 30 2>&1 || true)
		: >"$T_DIR/snipe.done"
		snipes=$((snipes + 1))
		if [[ $r == killed* ]]; then
			snipes_hit=$((snipes_hit + 1))
			note "round $round: sniper: $r"
		else
			note "round $round: sniper did not fire: $r"
		fi
	else
		wait_ms=$((kill_at - $(now_ms)))
		((wait_ms > 0)) && sleep "$(awk -v m="$wait_ms" 'BEGIN { printf "%.3f", m / 1000 }')"
	fi
	kill9 "$MNT"
	[[ -n ${KILL9_DEBUG:-} ]] && note "round $round: killed $(($(now_ms) - kill_at)) ms after the planned moment"
	if ((stale)); then
		# Without auto_unmount the dead mount stays; a new daemon on it must
		# say, in one line, what to do.
		if is_mounted "$MNT"; then
			pass "round $round: without auto_unmount the dead mount stays"
		else
			fail "round $round: the mount went away without auto_unmount"
		fi
		# A daemon started on it finds the pisessionfs mount dead
		# (ENOTCONN), clears it (lazily: a writer may still hold a
		# descriptor in it), says so in one line, and mounts.
		serr=$T_DIR/stale.$round.err
		LOGS+=("$serr")
		"$DAEMON" --store "$STORE" -f -o auto_unmount "$MNT" >/dev/null 2>"$serr" &
		spid=$!
		t0=$(now_ms)
		if poll_until 10 test -d "$S1" && grep -qF "$MNT was a stale mount of pisessionfs (its daemon is gone); unmounted it" "$serr"; then
			stale_seen=$((stale_seen + 1))
			pass "round $round: a daemon started on the stale mountpoint cleared it and mounted ($(($(now_ms) - t0)) ms): $(head -1 "$serr")"
		else
			fail "round $round: a daemon started on the stale mountpoint, $(($(now_ms) - t0)) ms ago, $(kill -0 "$spid" 2>/dev/null && echo running || echo gone), $(is_mounted "$MNT" && echo mounted || echo not mounted), test -d S1: $(timeout -s KILL 5 stat -c %F "$S1" 2>&1); its stderr: $(head -c 600 "$serr")"
			daemon_stacks | sed "s/^/    /" # (it finds the daemon by its command line)
		fi
		# A writer's open descriptor makes fusermount3 -u fail with EBUSY,
		# as on any file system: the writers pause while it unmounts.
		: >"$PAUSE"
		if poll_until 10 fusermount3 -u "$MNT" && ! is_mounted "$MNT"; then
			pass "round $round: and unmounts as usual"
		else
			fail "round $round: fusermount3 -u of the new mount failed for 10 s, writers paused: $(timeout -s KILL 10 fusermount3 -u "$MNT" 2>&1)"
			timeout -s KILL 10 fusermount3 -uz "$MNT" 2>/dev/null || true
		fi
		rm -f "$PAUSE"
		rc=0
		timeout -s KILL 10 tail --pid="$spid" -f /dev/null || true
		wait "$spid" 2>/dev/null || rc=$?
		check "round $round: that daemon exited 0 after its unmount (status $rc)" test "$rc" = 0
	else
		if wait_unmounted "$MNT" 5; then
			pass "round $round: killed after ${delay_ms} ms; auto_unmount removed the dead mount"
		else
			# Seen once in CI-like load (round 2, t_model beside it), not
			# reproduced alone: say what fusermount3, which unmounts it
			# when the daemon's socket closes, was doing.
			fail "round $round: the dead mount is still there 5s after kill -9 (auto_unmount); fusermount3 processes: $(ps -eo pid,stat,wchan:24,etimes,args | awk '/fusermount3/ && !/awk/' | tr '\n' ';')"
			timeout -s KILL 10 fusermount3 -uz "$MNT" 2>/dev/null || true
		fi
	fi
	wait "$hpid" 2>/dev/null || true
	# What the kill left, before any daemon runs again.
	read -r n_partial n_records n_temps names < <(crash_leftovers)
	partial_before=$((partial_before + n_partial))
	records_before=$((records_before + n_records))
	temps_before=$((temps_before + n_temps))
	((n_partial)) && partial_rounds=$((partial_rounds + 1))
	if ((snipe && !snipe_mig)); then
		HUGE_WHAT[round]="killed inside the daemon's write() of a $SNIPE_KB KiB entry"
		if [[ " $names " == *" --k3--/huge-$round.jsonl "* ]]; then
			snipes_partial=$((snipes_partial + 1))
			note "round $round: the aimed kill left huge-$round.jsonl ending in a partial line of $(($(stat -c %s "$huge") - $(stat -c %s "$T_DIR/huge-$round.base"))) bytes"
		fi
	else
		HUGE_WHAT[round]="timed kill"
	fi
	((n_partial + n_records + n_temps)) && note "round $round: left by the kill: $n_partial partial lines ($names), $n_records records of appends under way, $n_temps migration temporary files"
	# This round's daemon repaired what the last kill left before it
	# mounted (checked only now, to keep the kill where it was timed).
	((round > 1)) && check_huge $((round - 1)) "${HUGE_WHAT[round - 1]}"
	if [[ -n $(fsx ls -A "$MNT" 2>/dev/null) ]]; then
		fail "round $round: the bare mountpoint is not empty: $(fsx ls -A "$MNT" | head -5)"
		break
	fi
done
t_rounds=$(($(date +%s) - t_start))
: >"$STOP"
for p in "${WPIDS[@]}"; do
	wait "$p" 2>/dev/null || true
done
WPIDS=()
# One more start repairs what the last kill left.
mount_again "$STORE" "$MNT"
poll_until 5 test -d "$S1/0003~a4" || fail "the last remount does not serve $S1/0003~a4 within 5s"
check_huge $((round - 1)) "${HUGE_WHAT[round - 1]}"
umount_fs "$MNT"
rmdir "$STORE/--k3--" 2>/dev/null || true
note "huge writes ($HUGE_KB KiB each, $SNIPE_KB KiB in aimed rounds): $huge_tries tried, $huge_acks acknowledged; $snipes_hit of $snipes aimed kills fired; the session was whole and right after $huge_ok of $ROUNDS rounds"

# --- the repairs ----------------------------------------------------------------
# Every daemon's stderr (lib.sh's LOGS): one line per repair at start-up.
repaired=$(cat "${LOGS[@]}" | grep -c '^pisessionfs: repaired ' || true)
temps_removed=$(cat "${LOGS[@]}" | grep -c '^pisessionfs: removed .*pisessionfs-migrate-' || true)
unrepaired=$(cat "${LOGS[@]}" | grep -E '^pisessionfs: (left|could not repair) ' | head -3 || true)
partial_after=$(crash_leftovers)
note "kill9 repairs: $partial_before partial lines left by kills in $partial_rounds of $ROUNDS rounds (the aimed kill left one in $snipes_partial rounds), $records_before records of appends under way, $temps_before migration temporary files; at start-up the daemons repaired $repaired files and removed $temps_removed temporary files; left partial after: ${partial_after%% *}"
check "kills inside a write left partial lines to repair ($partial_before in $partial_rounds rounds; a test without any could not fail)" \
	test "$partial_before" -gt 0
check "an aimed kill landed inside the daemon's write() of a $SNIPE_KB KiB entry ($snipes_partial times)" \
	test "$snipes_partial" -gt 0
check "the daemons repaired every partial line at start-up ($repaired repairs for $partial_before partial lines)" \
	test "$repaired" -ge "$partial_before"
check "the daemons removed every migration temporary file at start-up ($temps_removed of $temps_before)" \
	test "$temps_removed" -ge "$temps_before"
check "no line left partial after the repairs (${partial_after%% *})" test "${partial_after%% *}" = 0
check "no repair left undone (${unrepaired:-none})" test -z "$unrepaired"
# The errors a writer may see from a killed daemon: the mount is gone
# (ENOENT), dead (ENOTCONN) or aborted under it (ECONNABORTED); anything
# else is the daemon refusing a valid write.
unexpected=$(python3 -c '
import json, os, sys
out = []
for lg in sorted(sys.argv[1:]):
    seen = {}
    for l in open(lg):
        try:
            r = json.loads(l)
        except ValueError:
            continue
        if r.get("ev") == "end":
            for k, v in (r.get("errors") or {}).items():
                if k.split(":")[1] not in ("ENOENT", "ENOTCONN", "ECONNABORTED"):
                    seen[k] = seen.get(k, 0) + v
    if seen:
        out.append("writer %s: %s" % (os.path.basename(lg)[:-4], ", ".join("%s %d times" % kv for kv in sorted(seen.items()))))
print("; ".join(out))' "$LOGS_DIR"/*.log)
if [[ -z $unexpected ]]; then
	pass "writers saw only ENOENT, ENOTCONN and ECONNABORTED (the daemon gone)"
else
	fail "writers saw errors a dead daemon does not explain: $unexpected"
fi
hung=$(cat "$LOGS_DIR"/*.log | grep -cE '"ev": ?"hung"' || true)
check "no writer hung on a file-system call ($hung hung)" test "$hung" = 0
acks=$(cat "$LOGS_DIR"/*.log | grep -cE '"ev": ?"ack"' || true)
tries=$(cat "$LOGS_DIR"/*.log | grep -cE '"ev": ?"try"' || true)
note "$ROUNDS rounds of kill -9 in ${t_rounds}s ($stale_seen on a stale mountpoint), daemon restarted $restarted times; writers tried $tries writes, $acks acknowledged"
check "writers got writes acknowledged ($acks)" test "$acks" -gt "$ROUNDS"

# --- two daemons -----------------------------------------------------------------
# A second daemon on the same store is killed inside its write() of a 32 MiB
# entry; the first one, still running, repairs that line before its own
# next append to the file (not only at start-up).
mkdir -p "$STORE/--k4--" "$T_DIR/mnt2"
{
	header 3 aaaaaaaa-0000-0000-0000-000000000005
	user_msg t1 null "two daemons write here"
} >"$STORE/--k4--/two.jsonl"
cp "$STORE/--k4--/two.jsonl" "$T_DIR/two.base"
two_base=$(stat -c %s "$T_DIR/two.base")
mount_again "$STORE" "$MNT"
mount_fs "$STORE" "$T_DIR/mnt2"
timeout -s KILL 60 python3 "$STRESS_DIR/writer.py" --log "$LOGS_DIR/two.log" --tag k-T --seconds 20 --mode md \
	--target "$T_DIR/mnt2/--k4--/two" --big-every 1 --big-kb "$SNIPE_KB" --stop-file "$T_DIR/two.done" >/dev/null 2>&1 &
tpid=$!
r=$(timeout -s KILL 40 python3 "$STRESS_DIR/sniper.py" "${PID_OF[$T_DIR/mnt2]}" "$STORE/--k4--/two.jsonl" 30 2>&1 || true)
: >"$T_DIR/two.done"
kill9 "$T_DIR/mnt2"
wait "$tpid" 2>/dev/null || true
wait_unmounted "$T_DIR/mnt2" 5 || timeout -s KILL 10 fusermount3 -uz "$T_DIR/mnt2" 2>/dev/null || true
two_size=$(stat -c %s "$STORE/--k4--/two.jsonl")
note "two daemons: sniper: $r; the file grew by $((two_size - two_base)) bytes"
check "two daemons: the kill left a partial line in two.jsonl, or this part could not fail" \
	test "$(tail -c 1 "$STORE/--k4--/two.jsonl" | od -An -tx1 | tr -d ' ')" != 0a
fsx_out sh -c 'echo "after the other daemon died" > "$1/after.md"' _ "$MNT/--k4--/two"
if ((RC == 0)); then
	pass "two daemons: the first daemon appends after the second died"
else
	fail "two daemons: the append through the first daemon failed ($RC): $(show "$ERR")"
fi
py_checks python3 - "$STORE/--k4--/two.jsonl" "$T_DIR/two.base" <<'EOF'
import json, os, sys
path = sys.argv[1]
data, base = open(path, "rb").read(), open(sys.argv[2], "rb").read()
lines = data.split(b"\n")
def obj(l):
    try:
        v = json.loads(l)
    except ValueError:
        return None
    return v if isinstance(v, dict) else None
bad = [i + 1 for i, l in enumerate(lines[:-1]) if obj(l) is None]
good = data.endswith(b"\n") and not bad
print(("ok" if good else "not ok") + " - two daemons: two.jsonl ends with a newline and every line is a JSON object (not: lines %s)" % bad)
last = json.loads(lines[-2]) if good else {}
ok = last.get("message", {}).get("content") == "after the other daemon died" and last.get("parentId") == "t1"
print(("ok" if ok else "not ok") + " - two daemons: the new entry follows the last whole line (%r)" % (lines[-2][:160] if len(lines) > 1 else b""))
ok = data.startswith(base) and len(lines) == base.count(b"\n") + 2
print(("ok" if ok else "not ok") + " - two daemons: the file is what it was plus the new line, nothing of the killed write (%d lines)" % (len(lines) - 1))
left = [n for n in os.listdir(os.path.dirname(path)) if n.startswith(".pisessionfs")]
print(("ok" if not left else "not ok") + " - two daemons: no record left beside the session (%s)" % left)
EOF
if grep -q "^pisessionfs: before writing .*: first took back the $((two_size - two_base)) bytes at offset $two_base of an append whose writer died" "${LOG_OF[$MNT]}"; then
	pass "two daemons: the first daemon logged the repair"
else
	fail "two daemons: no repair of $((two_size - two_base)) bytes at $two_base in the first daemon's log: $(grep -v '^pisessionfs: appended' "${LOG_OF[$MNT]}" | head -3)"
fi
umount_fs "$MNT"
rm -rf "$STORE/--k4--"

# --- the files ------------------------------------------------------------------
t_verify=$(date +%s)
sessions=()
for f in "$STORE"/--k1--/*.jsonl "$STORE"/--k2--/*.jsonl; do
	sessions+=(--session "$f=$BASE/$(basename "$(dirname "$f")")__$(basename "$f")")
done
py_checks timeout -s KILL 300 python3 "$STRESS_DIR/verify.py" --store "$STORE" "${sessions[@]}" "${VERIFY_LOGS[@]}" "${MIGRATED[@]}"
grep '^@figures' "$T_DIR/.py_checks" | sed 's/^@/# kill9 /' || true

n_mig=0
n_untouched=0
for ((round = 1; round <= ROUNDS; round++)); do
	if cmp -s "$STORE/--k2--/v2-$round.jsonl" "$BASE/--k2--__v2-$round.jsonl"; then
		n_untouched=$((n_untouched + 1))
	else
		n_mig=$((n_mig + 1))
	fi
done
note "version-2 sessions: $n_mig migrated, $n_untouched untouched (the kill came first)"

# pi reads every file (a copy), every line.
files=("$STORE"/--k1--/*.jsonl "$STORE"/--k2--/*.jsonl)
assert_pi_loads "all ${#files[@]} files" "${files[@]}"

# A last, clean mount shows the sessions as pi reads them: the three that
# were written all along and up to 2 of the version-2 ones that were
# migrated (1 in quick mode; reading every entry file of all of them would
# take minutes).
shown=("$STORE"/--k1--/s*.jsonl "$STORE/--k2--/s3.jsonl")
migrated=0
for ((round = 1; round <= ROUNDS && migrated < (QUICK ? 1 : 2); round++)); do
	v2=$STORE/--k2--/v2-$round.jsonl
	if ! cmp -s "$v2" "$BASE/--k2--__v2-$round.jsonl"; then
		shown+=("$v2")
		migrated=$((migrated + 1))
	fi
done
t_tree=$(date +%s)
mount_again "$STORE" "$MNT"
pi_tool expect "$STORE" "$T_DIR/expect.json" "$T_DIR/pi" "${shown[@]}" 2>"$T_DIR/expect.err" ||
	fail "pi_tool expect failed: $(head -c 1000 "$T_DIR/expect.err")"
if [[ -s $T_DIR/expect.json ]]; then
	py_checks timeout -s KILL 300 python3 "$STRESS_DIR/check_tree.py" --mount "$MNT" --store "$STORE" \
		--expect "$T_DIR/expect.json" --op-timeout "$TIMEOUT"
fi
umount_fs "$MNT"
note "times: rounds ${t_rounds}s, file checks $((t_tree - t_verify))s, tree check $(($(date +%s) - t_tree))s"
finish
