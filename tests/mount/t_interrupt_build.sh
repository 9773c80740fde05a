#!/usr/bin/env bash
# A caller that gives up (^C, timeout) stops a store-wide build it started
# (docs/search.md "Bounds"): a cold sessions.md of a store on a slow file
# system (a passthrough mount whose every open takes 40 ms, so reading the
# 90 sessions takes several seconds) returns at once when cat is
# interrupted, the daemon reads no more of the store for it, and the next
# cat builds the whole file, as if nothing had happened.
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
finish
