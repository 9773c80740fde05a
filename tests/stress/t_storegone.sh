#!/usr/bin/env bash
# The store changes under the mount in ways pi never does: the whole store
# directory removed (rm -rf) while files are open (readers, writers with
# text not yet closed, a shell's cwd), then recreated at the same path; a
# session file truncated while open (to the middle of a line, and to
# nothing); a session file deleted while open; a session file replaced by a
# directory; FIFOs named x.jsonl appearing (new, and in place of a session
# the daemon has indexed, with a write through the mount to it).
#
# Every access is bounded (the daemon must never hang), the daemon must
# stay alive and answer, errors must be errors (no crash, no hang, no
# success for text that was not written), and the daemon must exit cleanly
# at the unmount.  What the mount shows once the store directory is
# recreated is printed as a note (the daemon holds the old directory's fd).
#
#   t_storegone.sh DAEMON [--quick]     (the same in both modes)
# shellcheck disable=SC2016,SC2317 # bash -c '...$1' on purpose; functions run by traps
# shellcheck source=common.sh
. "$(dirname "$0")/common.sh" "$@"

make_store() {
	mkdir -p "$STORE/--g--" "$STORE/--h--"
	local s
	for s in s1 s2 s3 s4 s5 s6; do
		{
			header 3 "eeeeeeee-0000-0000-0000-0000000000${s#s}0"
			user_msg "${s}a" null "hello from $s"
			asst_msg "${s}b" "${s}a" "answer one in $s"
			user_msg "${s}c" "${s}b" "question two in $s"
			asst_msg "${s}d" "${s}c" "answer two in $s"
		} >"$STORE/--g--/$s.jsonl"
	done
	cp "$STORE/--g--/s1.jsonl" "$STORE/--h--/other.jsonl"
}

alive() {
	local mp=$1
	if daemon_alive "${PID_OF[$mp]}"; then
		pass "$2: the daemon is alive"
	else
		fail "$2: the daemon died: $(tail -c 1500 "${LOG_OF[$mp]}")"
		EXPECT_DEAD[$mp]=1
		return 1
	fi
	# ...and answers (the journal is in memory: it needs no store).
	if fsx cat "$mp/.pisessionfs/log" >/dev/null 2>&1; then
		pass "$2: the daemon answers"
	else
		fail "$2: the daemon does not answer (cat .pisessionfs/log failed or hung)"
	fi
}

# hold OPS...: starts holder.py with OPS; waits until they are done.
HOLD_N=0
hold() {
	HOLD_N=$((HOLD_N + 1))
	HREADY=$T_DIR/hold.$HOLD_N.ready
	HGO=$T_DIR/hold.$HOLD_N.go
	HOUT=$T_DIR/hold.$HOLD_N.out
	timeout -s KILL 90 python3 "$STRESS_DIR/holder.py" "$HREADY" "$HGO" "$HOUT" "$@" >"$HOUT.stderr" 2>&1 &
	HPID=$!
	local i
	for ((i = 0; i < 300; i++)); do
		[[ -e $HREADY ]] && return 0
		daemon_alive "$HPID" || break
		sleep 0.05
	done
	fail "holder did not get its files open: $(cat "$HOUT.stderr" "$HOUT" 2>/dev/null | head -c 500)"
	return 1
}

# release: lets the holder read on and close; HRES holds its JSON lines.
release() {
	: >"$HGO"
	local st=0
	wait "$HPID" || st=$?
	HRES=$(cat "$HOUT" 2>/dev/null)
	if ((st != 0)); then
		fail "holder ended with status $st: $HRES $(head -c 300 "$HOUT.stderr")"
	fi
	if grep -q '"hung"' <<<"$HRES"; then
		fail "a call on a held file hung: $HRES"
	fi
}

# hres OP PATH-SUFFIX KEY: a value from the holder's report.
hres() {
	python3 -c '
import json, sys
for l in sys.argv[1].splitlines():
    r = json.loads(l)
    if r.get("op") == sys.argv[2] and r.get("path", "").endswith(sys.argv[3]):
        print(r.get(sys.argv[4], "")); break' "$HRES" "$1" "$2" "$3"
}

# views_only LISTING: true when LISTING has no project directory (all of
# this test's start with --), only the daemon's own names (.pisessionfs,
# the views, summary files).
views_only() {
	[[ -z $(grep -E '^--' <<<"$1" || true) ]]
}

# --- 1. the whole store removed while files are open ----------------------------
make_store
mount_fs "$STORE" "$MNT"
G=$MNT/--g--
assert_exists "$G/s1/0004-assistant.s1d.md"
hold "r:$G/s1/session.jsonl" "r:$G/s1/0001-user.s1a.md" "r:$G/s1/context.json" \
	"w:$G/s1/pending.md|text written before the store went away" \
	"a:$G/s2/session.jsonl|{\"type\":\"message\",\"id\":\"gone1\",\"parentId\":null,\"timestamp\":\"2026-01-01T00:00:00.000Z\",\"message\":{\"role\":\"user\",\"content\":\"x\",\"timestamp\":1}}" \
	"cd:$G/s1"
rm -rf "$STORE"
sleep 1.2 # past the kernel's attribute and name caches
fsx_out ls -A "$MNT"
if ((RC == 0)) && views_only "$OUT"; then
	pass "store removed: the root lists nothing but the daemon's own names (${OUT//$'\n'/ })"
elif ((RC != 0)) && [[ $ERR == *"No such file or directory"* ]]; then
	pass "store removed: listing the root fails with ENOENT"
else
	fail "store removed: ls of the root: status $RC, $(show "$OUT$ERR")"
fi
assert_fails stat "$G/s1"
fsx_out bash -c 'echo "after the store went" > "$1"' _ "$G/s1/after.md"
if ((RC != 0)); then pass "store removed: a new .md fails ($ERR)"; else fail "store removed: a new .md succeeded"; fi
release
note "held files after rm -rf of the store: $(tr '\n' ' ' <<<"$HRES")"
for p in session.jsonl 0001-user.s1a.md context.json; do
	r=$(hres r "$p" read)
	if [[ $r =~ ^[0-9]+$ || $r =~ ^E[A-Z]+$ ]]; then
		pass "store removed: reading the held $p gives $r (bytes or an error, no hang)"
	else
		fail "store removed: reading the held $p: $(show "$r")"
	fi
done
c=$(hres w pending.md close)
if [[ $c != ok && -n $c ]]; then
	pass "store removed: closing the held new .md fails ($c)"
else
	fail "store removed: closing the held new .md: $(show "$c") (its text cannot have been written)"
fi
c=$(hres a session.jsonl close)
if [[ $c != ok && -n $c ]]; then
	pass "store removed: closing the held raw append fails ($c)"
else
	fail "store removed: closing the held raw append: $(show "$c") (its line cannot have been written)"
fi
# The rejected texts are in the daemon's memory: they need no store.
fsx_out ls "$MNT/.pisessionfs/rejected"
if ((RC == 0)) && [[ $OUT == *pending.md* && $OUT == *session.jsonl* ]]; then
	pass "store removed: .pisessionfs/rejected/ holds the held .md's text and raw line"
else
	fail "store removed: .pisessionfs/rejected/ cannot be read while the store directory is missing (status $RC: $(show "$ERR$OUT")): the texts refused because their session is gone are kept in memory but out of reach (the root itself fails with ENOENT)"
fi
if daemon_alive "${PID_OF[$MNT]}"; then
	pass "store removed: the daemon is alive"
else
	fail "store removed: the daemon died: $(tail -c 1500 "${LOG_OF[$MNT]}")"
	EXPECT_DEAD[$MNT]=1
fi

# Recreated at the same path.
make_store
seen=no
if poll_until 3 test -d "$G/s1"; then
	seen=yes
fi
fsx_out ls -A "$MNT"
note "store recreated at the same path while mounted: the root lists [${OUT//$'\n'/ }]; $G/s1 $([[ $seen == yes ]] && echo 'is shown again' || echo 'is not shown (the daemon holds the removed directory)')"
if [[ $seen == yes ]]; then
	assert_true "recreated store: the session reads" cat "$G/s1/0004-assistant.s1d.md"
else
	fsx_out ls -A "$MNT"
	if ((RC == 0)) && views_only "$OUT"; then
		pass "recreated store: the mount stays empty and answers (remount to see the new store)"
	else
		fail "recreated store: ls of the root: status $RC $(show "$OUT$ERR")"
	fi
fi
alive "$MNT" "store recreated"
fsx_out ls "$MNT/.pisessionfs/rejected"
assert_contains "store recreated: the held .md's text is in rejected/" "pending.md" "$OUT"
assert_contains "store recreated: the held raw line is in rejected/" "session.jsonl" "$OUT"
umount_fs "$MNT"

# --- 2. truncated, deleted, replaced while open --------------------------------------
rm -rf "$STORE"
make_store
mount_fs "$STORE" "$MNT"
assert_exists "$G/s2/0004-assistant.s2d.md"
assert_exists "$G/s3/0004-assistant.s3d.md"
assert_exists "$G/s4/0004-assistant.s4d.md"
hold "r:$G/s2/session.jsonl" "r:$G/s2/0004-assistant.s2d.md" "r:$G/s2/entries/s2d.json" "r:$G/s2/context.json" \
	"r:$G/s3/session.jsonl" "r:$G/s3/0003-user.s3c.md" "w:$G/s3/pending.md|written to a session that is deleted" \
	"r:$G/s4/session.jsonl" "w:$G/s4/pending.md|written to a session that becomes a directory"
# s2 cut in the middle of its fourth line (s2c); s3 deleted; s4 replaced by
# a directory.
size3=$(head -4 "$STORE/--g--/s2.jsonl" | wc -c)
truncate -s $((size3 - 40)) "$STORE/--g--/s2.jsonl"
rm "$STORE/--g--/s3.jsonl"
rm "$STORE/--g--/s4.jsonl"
mkdir "$STORE/--g--/s4.jsonl"
cp "$STORE/--g--/s5.jsonl" "$STORE/--g--/s4.jsonl/inner.jsonl"
sleep 1.2
release
note "held files: $(tr '\n' ' ' <<<"$HRES")"
r=$(hres r s2/session.jsonl read)
if [[ $r =~ ^[0-9]+$ ]] && ((r + 16 <= size3)); then
	pass "truncated while open: the held session.jsonl reads what is left ($((r + 16)) bytes)"
elif [[ $r =~ ^E ]]; then
	pass "truncated while open: the held session.jsonl gives $r"
else
	fail "truncated while open: the held session.jsonl read $(show "$r") bytes after its first 16 (the file has $((size3 - 40)))"
fi
for p in s2/0004-assistant.s2d.md s2/entries/s2d.json s2/context.json s3/session.jsonl s3/0003-user.s3c.md s4/session.jsonl; do
	r=$(hres r "$p" read)
	if [[ $r =~ ^[0-9]+$ || $r =~ ^E[A-Z]+$ ]]; then
		pass "changed while open: reading the held $p gives $r (bytes or an error)"
	else
		fail "changed while open: reading the held $p: $(show "$r")"
	fi
done
for p in s3/pending.md s4/pending.md; do
	c=$(hres w "$p" close)
	if [[ $c != ok && -n $c ]]; then
		pass "closing the held $p fails ($c): its session is gone"
	else
		fail "closing the held $p: $(show "$c"), but its session is gone"
	fi
done
check "s4.jsonl, now a directory, holds nothing the mount wrote" test -z "$(find "$STORE/--g--/s4.jsonl" -newer "$STORE/--g--/s5.jsonl" -name '*.md')"
# The truncated session: the two whole lines, the cut line not shown.
assert_poll "truncated: the cut entry is not shown" 3 bash -c '! test -e "$1"' _ "$G/s2/0003-user.s2c.md"
assert_exists "$G/s2/0002-assistant.s2b.md"
assert_missing "$G/s2/0004-assistant.s2d.md"
assert_same_bytes "$G/s2/session.jsonl" "$STORE/--g--/s2.jsonl"
# Appending to it: the partial line gets its newline first (layout.md).
fsx_out bash -c 'echo "after the cut" > "$1"' _ "$G/s2/after-cut.md"
assert_eq "truncated: a new .md appends (status)" 0 "$RC"
py_checks python3 - "$STORE/--g--/s2.jsonl" <<'EOF'
import json, sys
lines = open(sys.argv[1], "rb").read().split(b"\n")
good = []
bad = []
for i, l in enumerate(lines[:-1]):
    try:
        good.append(json.loads(l))
    except ValueError:
        bad.append(i + 1)
ok = lines[-1] == b"" and bad == [4] and good[-1]["message"]["content"] == "after the cut" and good[-1]["parentId"] == "s2b"
print(("ok - " if ok else "not ok - ") + "truncated mid-line, then appended: the cut line ends with its own newline (line 4, skipped), the new entry follows it, child of s2b (bad lines %s, last %r)" % (bad, good[-1] if good else None))
EOF
assert_poll "truncated: problems names the cut line" 3 grep -q . "$G/s2/problems"
# Truncated to nothing: not a session any more.
: >"$STORE/--g--/s2.jsonl"
assert_poll "truncated to 0 bytes: the session shows its error file" 3 test -f "$G/s2/error"
fsx_out bash -c 'echo "into an empty file" > "$1"' _ "$G/s2/empty.md"
if ((RC != 0)) || [[ ! -s $STORE/--g--/s2.jsonl ]]; then
	check "truncated to 0 bytes: nothing is appended to the empty file" test ! -s "$STORE/--g--/s2.jsonl"
else
	fail "truncated to 0 bytes: a new .md was appended to a file with no header: $(head -c 200 "$STORE/--g--/s2.jsonl")"
fi
# Deleted and replaced by a directory: gone from the listing.
assert_poll "deleted: s3 leaves the listing" 3 bash -c '! ls "$1" | grep -qx s3' _ "$G"
assert_poll "replaced by a directory: s4 leaves the listing" 3 bash -c '! ls "$1" | grep -qx s4' _ "$G"
assert_missing "$G/s4/session.jsonl"
alive "$MNT" "truncated/deleted/replaced"

# --- 3. FIFOs named *.jsonl ------------------------------------------------------
mkfifo "$STORE/--g--/fifo.jsonl"
sleep 1.2
fsx_out ls "$G"
if ((RC == 0)) && ! grep -qx fifo <<<"$OUT"; then
	pass "a new FIFO fifo.jsonl is not listed (and listing does not hang)"
else
	fail "a new FIFO fifo.jsonl: ls status $RC, $(show "$OUT$ERR")"
fi
assert_missing "$G/fifo"
assert_fails cat "$G/fifo/session.jsonl"
# A session the daemon has indexed, replaced by a FIFO while a new .md and
# a raw append to it are open: their close() makes the daemon re-read and
# append to the path, and nobody ever opens the FIFO's other end, so a
# blocking open() there would never return.
assert_exists "$G/s5/0004-assistant.s5d.md"
hold "w:$G/s5/x.md|to a session that becomes a fifo" \
	"a:$G/s5/session.jsonl|{\"type\":\"message\",\"id\":\"fifo1\",\"parentId\":null,\"timestamp\":\"2026-01-01T00:00:00.000Z\",\"message\":{\"role\":\"user\",\"content\":\"x\",\"timestamp\":1}}" \
	"r:$G/s5/session.jsonl"
rm "$STORE/--g--/s5.jsonl"
mkfifo "$STORE/--g--/s5.jsonl"
release
note "held files of s5 when it became a FIFO: $(tr '\n' ' ' <<<"$HRES")"
for p in x.md session.jsonl; do
	c=$(hres "$([[ $p == x.md ]] && echo w || echo a)" "s5/$p" close)
	if [[ -n $c && $c != ok ]]; then
		pass "session replaced by a FIFO: closing the held $p fails ($c), no hang"
	elif [[ -z $c ]]; then
		fail "session replaced by a FIFO: no result for closing the held $p (hung?)"
	else
		fail "session replaced by a FIFO: closing the held $p succeeded"
	fi
done
fsx_out ls "$G/s5"
note "s5 replaced by a FIFO: ls status $RC: $(tr '\n' ' ' <<<"$OUT $ERR" | cut -c1-200)"
fsx_out bash -c 'echo "to a fifo" > "$1"' _ "$G/s5/y.md"
if ((RC == 137)); then
	: # fsx_out reported the hang
elif ((RC != 0)); then
	pass "a new .md in a session replaced by a FIFO fails without hanging ($ERR)"
else
	fail "a new .md in a session replaced by a FIFO succeeded"
fi
fsx_out cat "$G/s5/session.jsonl"
((RC != 137)) && pass "reading session.jsonl of a session replaced by a FIFO does not hang (status $RC)"
fsx_out ls "$G/s6"
assert_eq "after the FIFOs, another session still lists" 0 "$RC"
if ! alive "$MNT" "FIFOs"; then
	:
fi
# Unblock a daemon thread stuck on the FIFO, if any, so the unmount works.
timeout 2 cat "$STORE/--g--/s5.jsonl" >/dev/null 2>&1 || true
timeout 2 bash -c ': > "$1"' _ "$STORE/--g--/s5.jsonl" 2>/dev/null || true
umount_fs "$MNT"
finish
