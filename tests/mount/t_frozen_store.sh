#!/usr/bin/env bash
# A store whose server stops answering (an sshfs whose link died; here a
# passthrough FUSE mount stopped with SIGSTOP) never hangs the mount
# (guard.h, docs/shared-stores.md "When the server stops answering"):
# - a listing, a context.json, a search and a write each answer EIO
#   within the bound (-o store_timeout, 2 s here, plus 1 s for the store
#   to answer a statfs), and the next ones at once;
# - the journal still answers, and says why;
# - nothing is appended while the store is frozen;
# - an append the server froze in the middle of (PT_STOP_ON_WRITE: the
#   helper stops itself at the write) is answered EIO at close, and goes
#   through once the server answers, exactly once, which the log says;
# - once the server answers again, the sessions are back within seconds,
#   without a remount, and the daemon unmounts and exits as usual.
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh" "$@"

passthrough_helper

BACK=$T_DIR/backing
PT=$T_DIR/pt
P=--far--
mkdir -p "$BACK/$P" "$PT"
for s in a b c d; do
	{ header 3 "aaaaaaaa-0000-0000-0000-00000000000${s/a/1}"; user_msg "${s}1" null "text-$s"; asst_msg "${s}2" "${s}1" "answer-$s"; } \
		>"$BACK/$P/$s.jsonl"
done
STOP=$T_DIR/stop-on-write
mount_with "$PT" env PT_STOP_ON_WRITE="$STOP" "$HELPER" "$BACK" "$PT" -f
PT_PID=$DAEMON_PID # env runs the helper in its own process
teardown() {
	kill -CONT "$PT_PID" 2>/dev/null || true
}
mount_fs "$PT" "$MNT" -o store_timeout=2
fsx_out ls "$MNT/$P/a"
assert_contains "the store on FUSE is read" "0001-user" "$OUT"

# ms_of CMD...: runs CMD, bounded, and sets RC, OUT and MS (its time).
ms_of() {
	local s
	s=$(date +%s%N)
	OUT=$(timeout -s KILL "$(scaled_int 20)" "$@" 2>&1) && RC=0 || RC=$?
	MS=$((($(date +%s%N) - s) / 1000000))
}
LIMIT_MS=$(($(scaled_int 6) * 1000))

# --- frozen ------------------------------------------------------------------
kill -STOP "$PT_PID"
cp "$BACK/$P/b.jsonl" "$T_DIR/b.before"
ms_of ls "$MNT/$P/b"
echo "# frozen: ls of a session not read yet: status $RC in $MS ms: ${OUT:0:120}"
assert_contains "a listing answers EIO" "Input/output error" "$OUT"
if ((MS <= LIMIT_MS)); then pass; else fail "the listing took $MS ms (bound: 2 s, and 1 s for a statfs)"; fi
ms_of cat "$MNT/$P/c/context.json"
echo "# frozen: cat context.json: status $RC in $MS ms"
assert_contains "context.json answers EIO" "Input/output error" "$OUT"
if ((MS <= 2000 * TIME_SCALE)); then pass; else fail "context.json took $MS ms once the store was known not to answer"; fi
ms_of ls "$MNT/search/text"
echo "# frozen: ls search/text: status $RC in $MS ms"
assert_contains "a search answers EIO" "Input/output error" "$OUT"
ms_of sh -c "echo 'written while frozen' >'$MNT/$P/b/new.md'"
echo "# frozen: echo > new.md: status $RC in $MS ms"
assert_contains "a write answers EIO" "Input/output error" "$OUT"
ms_of cat "$MNT/.pisessionfs/log"
assert_eq "the journal answers" 0 "$RC"
assert_contains "the log names the store and says why" "the store $PT did not answer" "$OUT"
kill -CONT "$PT_PID"
assert_same_bytes "$T_DIR/b.before" "$BACK/$P/b.jsonl"
assert_poll "the sessions are back once the store answers" 5 test -e "$MNT/$P/b/session.jsonl"
fsx_out cat "$MNT/.pisessionfs/log"
assert_contains "the log says it answers again" "the store $PT answers again" "$OUT"

# --- frozen in the middle of an append ------------------------------------------
cp "$BACK/$P/d.jsonl" "$T_DIR/d.before"
: >"$STOP"
ms_of python3 -c '
import os, sys
fd = os.open(sys.argv[1], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
os.write(fd, b"appended while frozen\n")
try:
    os.close(fd)
    print("close ok")
except OSError as e:
    print("close", e.strerror)
' "$MNT/$P/d/next.md"
echo "# frozen at the write: the writer's close: $OUT in $MS ms"
assert_eq "the writer is told EIO at close" "close Input/output error" "$OUT"
if ((MS <= LIMIT_MS)); then pass; else fail "the close took $MS ms"; fi
assert_poll "the server stopped itself at the write" 5 test ! -e "$STOP"
assert_same_bytes "$T_DIR/d.before" "$BACK/$P/d.jsonl"
kill -CONT "$PT_PID"
assert_poll "the append goes through once the server answers" 5 grep -q "appended while frozen" "$BACK/$P/d.jsonl"
sleep 1
assert_eq "exactly once" 1 "$(grep -c "appended while frozen" "$BACK/$P/d.jsonl")"
fsx_out cat "$MNT/.pisessionfs/log"
assert_contains "the log says it went through" "went through once it answered: what was written is in the session" "$OUT"
fsx_out ls "$MNT/$P/d"
assert_contains "and the mount shows it" "0003-user" "$OUT"

umount_fs "$MNT"
finish
