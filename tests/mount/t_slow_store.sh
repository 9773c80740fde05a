#!/usr/bin/env bash
# A store on a slow file system (a passthrough mount whose every open takes
# 40 ms, so reading its 90 sessions takes several seconds):
# 1. a caller that gives up (^C, timeout) stops a store-wide build it
#    started (docs/search.md "Bounds"): a cold sessions.md returns at once
#    when cat is interrupted, the daemon reads no more of the store for
#    it, and the next cat builds the whole file, as if nothing had happened;
# 2. while the views' catalog reads the cold store (ls by-id), lookups
#    and reads of sessions go on: the scan holds no lock while it reads.
. "$(dirname "$0")/lib.sh" "$@"
passthrough_helper

BACK=$T_DIR/backing
PT=$T_DIR/pt
mkdir -p "$PT"
for p in 1 2 3; do
	mkdir -p "$BACK/--w-p$p--"
	for i in $(seq -w 1 30); do
		{
			header 3 "0190aaaa-0000-7000-8000-0000000$p$i"
			user_msg "u$i" null "question $p.$i about owls"
			asst_msg "a$i" "u$i" "answer $p.$i"
		} >"$BACK/--w-p$p--/2026-01-$i""T00-00-00-000Z_s$p$i.jsonl"
	done
done
PT_OPEN_DELAY_MS=40 mount_with "$PT" "$HELPER" "$BACK" "$PT" -f
mount_fs "$PT" "$MNT" -o cache_dir=off
DPID=$DAEMON_PID
rchar() { awk '/^rchar/ { print $2 }' "/proc/$DPID/io"; }
ms() { echo $(($(date +%s%N) / 1000000)); }

t0=$(ms)
fsx_out timeout -s INT 1 cat "$MNT/sessions.md"
t=$(($(ms) - t0))
assert_eq "cat was interrupted before the build could end" 124 "$RC"
assert_true "and returned at once (took ${t} ms)" test "$t" -lt "$(scaled_int 3)000"
sleep 0.3
r0=$(rchar)
sleep 1
r1=$(rchar)
assert_eq "the daemon read no more of the store for it" "$r0" "$r1"
# 90 rows, a header and its rule.
assert_eq "the next cat reads every session" 92 "$(fsx timeout 60 cat "$MNT/sessions.md" | grep -c '^|')"

# 2. A fresh mount, nothing kept: the first `ls by-id` reads every session.
# One reading thread, so that the scan (90 opens of 40 ms) outlasts the
# checks below at any TIME_SCALE: what is tested is that no lock is held
# across the scan's reads, however many threads read.
umount_fs "$MNT"
mount_fs "$PT" "$MNT" -o cache_dir=off,read_threads=1
ls "$MNT/by-id" >"$T_DIR/by-id" 2>&1 &
SCAN=$!
sleep "$(scaled 0.5)"
t0=$(ms)
assert_eq "a session's file reads meanwhile" 3 "$(fsx wc -l <"$MNT/--w-p2--/2026-01-07T00-00-00-000Z_s207/session.jsonl")"
assert_true "a session directory lists meanwhile" stat "$MNT/--w-p3--/2026-01-08T00-00-00-000Z_s308/context.json"
t=$(($(ms) - t0))
assert_true "at once (took ${t} ms), not after the scan" test "$t" -lt "$(scaled_int 1)500"
assert_true "the scan was still reading meanwhile" kill -0 "$SCAN"
wait "$SCAN"
assert_eq "and by-id/ then lists every session" 90 "$(wc -l <"$T_DIR/by-id")"

# 3. A search the caller gives up on stops, though on a store on FUSE it
# runs on a thread of the guard's (guard.h), not on the request's: the
# interrupt is passed on.  90 opens of 40 ms on one reading thread take
# longer than the second the caller waits.
fsx_out timeout -s INT 1 ls "$MNT/search/zzzz-in-no-session"
assert_eq "ls of a slow search was interrupted" 124 "$RC"
assert_poll "the search stopped, and says so" 5 grep -q "search zzzz-in-no-session: interrupted (the caller gave up)" \
	"$MNT/.pisessionfs/log"
finish
