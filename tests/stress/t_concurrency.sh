#!/usr/bin/env bash
# Concurrent writers: through the mount, new .md files in the main line and
# in a branch directory of one session, raw lines appended to that
# session's session.jsonl (one chain, with O_APPEND), .md files and name
# changes in a second session of another project, and .md files in a
# third; outside the mount, pi's own SessionManager.open() on the first
# session's store file, appending messages with appendMessage() in a loop
# (it keeps its own leaf).  All for CONC_SECONDS (quick 10 s, full 60 s).
#
# Nothing is killed or refused here, so every write must succeed: an error
# seen by a writer fails the test.  Afterwards (tests/stress/verify.py):
# every line is a complete JSON object, every acknowledged write is in its
# file exactly once (counted per writer), no duplicate ids, every parentId
# names an earlier line, no stray line; pi loads every file (a copy) and
# reads every line; and the mount's tree agrees with pi's (every id once,
# in the place the layout rules give, context.json of every tree directory
# equal to pi's: tests/diff/check.py's SessionCheck via check_tree.py).
# A second phase has pi append 12 KiB messages (lines that span pages of
# the file) to a fourth session while .md files go into it through the
# mount: no blank line may appear.
#
#   t_concurrency.sh DAEMON [--quick]
# shellcheck disable=SC2016,SC2317 # bash -c '...$1' on purpose; functions run by traps
# shellcheck source=common.sh
. "$(dirname "$0")/common.sh" "$@"

SECONDS_RUN=${CONC_SECONDS:-$((QUICK ? 10 : 60))}
PACE=${CONC_PACE:-$((QUICK ? 8 : 20))} # ms between one writer's writes
need_pi

mkdir -p "$STORE/--c1--" "$STORE/--c2--"
A=$STORE/--c1--/sa.jsonl
B=$STORE/--c2--/sb.jsonl
C=$STORE/--c2--/sc.jsonl
{
	header 3 cccccccc-0000-0000-0000-00000000000a
	user_msg a1 null "session A"
	asst_msg a2 a1 "ok"
	user_msg a3 a2 "main line"
	asst_msg a4 a2 "a branch"
} >"$A"
{
	header 3 cccccccc-0000-0000-0000-00000000000b
	user_msg b1 null "session B"
	asst_msg b2 b1 "ok"
} >"$B"
{
	header 3 cccccccc-0000-0000-0000-00000000000c
	user_msg c1 null "session C"
} >"$C"
BASE=$T_DIR/base
mkdir -p "$BASE"
cp "$A" "$BASE/sa.jsonl"
cp "$B" "$BASE/sb.jsonl"
cp "$C" "$BASE/sc.jsonl"

mount_fs "$STORE" "$MNT"
SA=$MNT/--c1--/sa
assert_exists "$SA/0003~a4"

LOGS_DIR=$T_DIR/logs
mkdir -p "$LOGS_DIR"
declare -a PIDS=() VERIFY_LOGS=()
LIMIT=$((SECONDS_RUN + 60))
teardown() {
	local p
	for p in "${PIDS[@]}"; do
		kill -KILL "$p" 2>/dev/null || true
	done
}
writer() {
	local name=$1 sfile=$2
	shift 2
	timeout -s KILL "$LIMIT" python3 "$STRESS_DIR/writer.py" --log "$LOGS_DIR/$name.log" \
		--tag "c-$name" --seconds "$SECONDS_RUN" --sleep "$PACE" "$@" >"$LOGS_DIR/$name.out" 2>&1 &
	PIDS+=($!)
	VERIFY_LOGS+=(--log "$sfile=$LOGS_DIR/$name.log")
}
t0=$(date +%s)
writer W1 "$A" --mode md --target "$SA"
writer W2 "$A" --mode md --target "$SA/0003~a4"
writer W3 "$A" --mode raw --target "$SA/session.jsonl" --chain --parent a1
writer W4 "$B" --mode md --target "$MNT/--c2--/sb" --big-every 10 --big-kb 32
writer W5 "$B" --mode name --target "$MNT/--c2--/sb/name"
writer W6 "$C" --mode md --target "$MNT/--c2--/sc"
timeout -s KILL "$LIMIT" "$PI_NODE" "$STRESS_DIR/pi_tool.mjs" "$PI_SESSION_MANAGER" writer "$A" "$SECONDS_RUN" \
	"$LOGS_DIR/PI.log" c-PI "$PACE" >"$LOGS_DIR/PI.out" 2>&1 &
PIDS+=($!)
VERIFY_LOGS+=(--log "$A=$LOGS_DIR/PI.log")

# Meanwhile, readers through the mount (listing and context.json of the
# session being written) must not fail or hang.
reads=0
read_fail=0
while (($(date +%s) < t0 + SECONDS_RUN)); do
	if fsx ls -R "$SA" >/dev/null 2>"$T_DIR/read.err" && fsx cat "$SA/context.json" "$MNT/--c2--/sb/name" >/dev/null 2>>"$T_DIR/read.err"; then
		reads=$((reads + 1))
	else
		read_fail=$((read_fail + 1))
		[[ $read_fail == 1 ]] && cp "$T_DIR/read.err" "$T_DIR/read.first.err"
	fi
	sleep 0.2
done
for p in "${PIDS[@]}"; do
	wait "$p" 2>/dev/null || fail "a writer ended with status $? (see $LOGS_DIR)"
done
PIDS=()
t_run=$(($(date +%s) - t0))
if ((read_fail == 0)); then
	pass "$reads rounds of reading the session being written (ls -R, context.json) went well"
else
	fail "$read_fail of $((reads + read_fail)) read rounds failed during the writes: $(head -c 400 "$T_DIR/read.first.err")"
fi

# Phase 2: pi appends big messages (12 KiB: every line spans a page
# boundary of the file, as a big tool output does) to a fourth session
# while .md files are written into it through the mount as fast as they
# go.  The mount's appends must not add blank lines (its repair of a
# crashed writer's partial last line must not mistake pi's append in
# progress for one).
D=$STORE/--c2--/sd.jsonl
{
	header 3 cccccccc-0000-0000-0000-00000000000d
	user_msg d1 null "session D"
} >"$D"
cp "$D" "$BASE/sd.jsonl"
PHASE2=$((QUICK ? 3 : 8))
assert_poll "session D shows" 3 test -f "$MNT/--c2--/sd/0001-user.d1.md"
timeout -s KILL "$LIMIT" python3 "$STRESS_DIR/writer.py" --log "$LOGS_DIR/W7.log" --tag c-W7 \
	--seconds "$PHASE2" --mode md --target "$MNT/--c2--/sd" >"$LOGS_DIR/W7.out" 2>&1 &
PIDS+=($!)
timeout -s KILL "$LIMIT" "$PI_NODE" "$STRESS_DIR/pi_tool.mjs" "$PI_SESSION_MANAGER" writer "$D" "$PHASE2" \
	"$LOGS_DIR/PI2.log" c-PI2 2 12 >"$LOGS_DIR/PI2.out" 2>&1 &
PIDS+=($!)
for p in "${PIDS[@]}"; do
	wait "$p" 2>/dev/null || fail "a phase-2 writer ended with status $? (see $LOGS_DIR)"
done
PIDS=()
VERIFY_LOGS+=(--log "$D=$LOGS_DIR/W7.log" --log "$D=$LOGS_DIR/PI2.log")
note "phase 2 (${PHASE2}s): $(grep -cE '"ev": ?"ack"' "$LOGS_DIR/W7.log" || true) .md files through the mount, $(grep -cE '"ev": ?"ack"' "$LOGS_DIR/PI2.log" || true) 12 KiB messages from pi"

# Every writer: no error at all (nothing was refused or killed).
for lg in "$LOGS_DIR"/*.log; do
	w=$(basename "$lg" .log)
	summary=$(python3 -c '
import json, sys
end = None
errs = []
for l in open(sys.argv[1]):
    r = json.loads(l)
    if r.get("ev") == "end":
        end = r
    elif r.get("ev") == "err":
        errs.append("%s: %s" % (r.get("stage", ""), r.get("error")))
if end is None:
    print("BAD no end record (killed?)")
else:
    n = sum((end.get("errors") or {}).values()) + end.get("errors", 0) if isinstance(end.get("errors"), int) else sum((end.get("errors") or {}).values())
    tries = end.get("tries", 0)
    if n:
        print("BAD %d of %d writes failed: %s; first: %s" % (n, tries, json.dumps(end.get("errors")), errs[0] if errs else "?"))
    else:
        print("OK %d" % tries)' "$lg")
	case $summary in
	OK*) pass "writer $w: all ${summary#OK } writes succeeded" ;;
	*) fail "writer $w: ${summary#BAD }" ;;
	esac
done

# Let the mount catch up with pi's last appends, then check the files.
sleep 1.5
py_checks timeout -s KILL 300 python3 "$STRESS_DIR/verify.py" \
	--session "$A=$BASE/sa.jsonl" --session "$B=$BASE/sb.jsonl" --session "$C=$BASE/sc.jsonl" \
	--session "$D=$BASE/sd.jsonl" "${VERIFY_LOGS[@]}"
grep '^@figures' "$T_DIR/.py_checks" | sed 's/^@/# concurrency /' || true
acked_pi=$(grep -cE '"ev": ?"ack"' "$LOGS_DIR/PI.log" || true)
note "phase 1: 7 concurrent writers (6 through the mount, pi outside) for ${t_run}s; pi appended $acked_pi entries"

assert_pi_loads "the 4 files" "$A" "$B" "$C" "$D"

if pi_tool expect "$STORE" "$T_DIR/expect.json" "$T_DIR/pi" "$A" "$B" "$C" "$D" 2>"$T_DIR/expect.err"; then
	py_checks timeout -s KILL 300 python3 "$STRESS_DIR/check_tree.py" --mount "$MNT" --store "$STORE" \
		--expect "$T_DIR/expect.json" --op-timeout "$TIMEOUT"
else
	fail "pi_tool expect failed: $(head -c 1000 "$T_DIR/expect.err")"
fi
umount_fs "$MNT"
finish
