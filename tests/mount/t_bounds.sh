#!/usr/bin/env bash
# One query's cost is bounded, a caller that gives up stops its request,
# and one slow query holds up no other search, sessions.md or lookup
# (docs/search.md "Bounds").  The store: 60 sessions, 3 MB of long lines
# with few b's, where (.*b){20} backtracks at length (PCRE2's match limit
# per start position) and [a-z ]*[#%] is quadratic in each line (only the
# query's budget stops it: minutes of CPU otherwise).
. "$(dirname "$0")/lib.sh" "$@"

python3 "$LIB_DIR/gen_backtrack_store.py" "$STORE" 60 50000 3000 5 1
mount_fs "$STORE" "$MNT"
LOG=$MNT/.pisessionfs/log

ms() { echo $(($(date +%s%N) / 1000000)); }

# 1. A backtracking regex is cut off: ETIMEDOUT, and the log says why.
for q in '(.*b){20}' '[a-z ]*[#%]'; do
	t0=$(ms)
	assert_errno "timed out" ls "$MNT/search/re:$q"
	t=$(($(ms) - t0))
	assert_true "re:$q answers, cut long before its backtracking could end (took ${t} ms)" test "$t" -lt "$(scaled_int 30)000"
done
assert_contains "the log says the regex is too costly" "search re:(.*b){20}: the regular expression is too costly" "$(fsx cat "$LOG")"
assert_contains "and how to write it" "a literal or a class such as [^ ]* in place of .*" "$(fsx cat "$LOG")"
# Ordinary regexes at store scale are not cut.
assert_eq "a linear regex over the whole store lists its sessions" 60 "$(fsx ls "$MNT/search/re:gnu.*owl" | wc -l)"
assert_eq "one that matches nothing lists nothing, without error" "" "$(fsx ls "$MNT/search/re:zzz.*yyy")"

umount_fs "$MNT"
# A generous budget: the quadratic query now runs for minutes.
mount_fs "$STORE" "$MNT" -o search_budget=600
DPID=$DAEMON_PID
cpu() { awk '{ print $14 + $15 }' "/proc/$DPID/stat"; }

# 3. Meanwhile another search, sessions.md and lookups answer.
ls "$MNT/search/re:[a-z ]*[#%]" >/dev/null 2>&1 &
SLOW=$!
sleep "$(scaled 0.5)"
assert_eq "another search lists while the slow one runs" 60 "$(fsx ls "$MNT/search/gnu" | wc -l)"
assert_eq "sessions.md reads while the slow one runs" 62 "$(fsx cat "$MNT/sessions.md" | grep -c "^|")"
assert_eq "a project's regex search too" 20 "$(fsx ls "$MNT/--w-p1--/search/re:owl" | wc -l)"
assert_true "a lookup too" stat "$MNT/--w-p1--/2026-01-02T00-00-00-000Z_s001"
assert_true "the slow query was still running meanwhile" kill -0 "$SLOW"

# 2. A caller that gives up stops its request, and the daemon its work.
# Its search would run for minutes: ending at all, within a bound far
# below that, is what is checked (not a time: a busy machine took 2.2 s).
kill -TERM "$SLOW"
t0=$(ms)
limit=$(scaled_int 30)
for ((i = 0; i < limit * 10; i++)); do
	kill -0 "$SLOW" 2>/dev/null || break
	sleep 0.1
done
t=$(($(ms) - t0))
assert_true "the killed ls ended, long before its search could have (took ${t} ms)" test "$t" -lt "${limit}000"
wait "$SLOW" 2>/dev/null || true
t0=$(ms)
fsx_out timeout 2 ls "$MNT/search/re:[a-z ]*[#%]"
t=$(($(ms) - t0))
assert_true "timeout 2 ls of the slow query returns, not after its search (took ${t} ms)" test "$t" -lt "$(scaled_int 30)000"
sleep 0.3
c0=$(cpu)
sleep 1
c1=$(cpu)
assert_true "the daemon stopped working on it (CPU ticks in 1 s: $((c1 - c0)))" test $((c1 - c0)) -lt 30
assert_contains "the log says it was interrupted" "search re:[a-z ]*[#%]: interrupted" "$(fsx cat "$LOG")"
finish
