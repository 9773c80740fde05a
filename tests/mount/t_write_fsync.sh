#!/usr/bin/env bash
# fsync() makes a draft durable without appending (docs/layout.md
# "fsync"; issue 34 item 7): write; fsync; write; close appends one
# message (it appended the first text, then the whole as a sibling); the
# record an fsync leaves beside the session goes when the text is
# appended, refused or thrown away; a daemon killed after an fsync and
# before the close loses nothing: the next one shows each fsynced text in
# rejected/, as its writer's, with a log line, until the user removes it
# there; a record another live daemon holds is left alone.
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh" "$@"

PY=$(python3 -c 'import sys; print(sys.executable)')
P=--home-u-w--
mkdir -p "$STORE/$P"
F=$STORE/$P/s1.jsonl
{
	header
	user_msg aaaa0001 null "alpha one"
	asst_msg aaaa0002 aaaa0001 "reply one"
	user_msg aaaa0003 aaaa0002 "second question"
} >"$F"
S=$MNT/$P/s1
E=0003-user.aaaa0003.md
records() { find "$STORE/$P" -maxdepth 1 -name '.pisessionfs-draft.*' | sort; }
n_records() { records | grep -c . || true; }
mount_fs "$STORE" "$MNT"

# --- write; fsync; write; close: one append of the whole, for each kind of file
for kind in new entry name raw; do
	before=$(wc -l <"$F")
	fsx_out "$PY" - "$S" "$kind" <<'EOF'
import os, sys
s, kind = sys.argv[1], sys.argv[2]
path, flags, one, two = {
    "new": ("n1.md", os.O_CREAT | os.O_TRUNC, b"one half, ", b"the other\n"),
    "entry": ("0003-user.aaaa0003.md", os.O_TRUNC, b"second question, ", b"edited\n"),
    "name": ("name", os.O_TRUNC, b"A name ", b"in two writes\n"),
    "raw": ("session.jsonl", os.O_APPEND, b'{"type":"custom","id":"cccc0001","parentId":"aaaa0003",',
            b'"timestamp":"2026-01-01T00:00:09.000Z","customType":"k","data":{"n":1}}\n'),
}[kind]
fd = os.open(os.path.join(s, path), os.O_WRONLY | flags, 0o644)
os.write(fd, one)
os.fsync(fd)  # raw: half a line, durable all the same
os.write(fd, two)
os.close(fd)
EOF
	assert_eq "$kind: write fsync write close succeeds" "0 " "$RC $ERR"
	assert_poll "$kind: one line appended" 5 test "$(wc -l <"$F")" = $((before + 1))
	last=$(tail -1 "$F")
	case $kind in
	new) assert_contains "new: it holds both writes" '"content":"one half, the other"' "$last" ;;
	entry) assert_contains "entry: the edit holds both writes" '"content":"second question, edited"' "$last" ;;
	name) assert_contains "name: one name of both writes" '"name":"A name in two writes"' "$last" ;;
	raw) assert_contains "raw: the line as written" '"id":"cccc0001"' "$last" ;;
	esac
	assert_eq "$kind: no record is left" 0 "$(n_records)"
done

# --- the record while the file is open, and when it goes -----------------------------
# hold FILE TEXT: writes TEXT to S/FILE and fsyncs, says "synced", then
# waits for lines on stdin: "close", "rm" (unlink the file, then close),
# "more TEXT" (write it, no fsync), "exit".
cat >"$T_DIR/hold.py" <<'EOF'
import os, sys
path, text, flags = sys.argv[1], sys.argv[2], sys.argv[3]
fl = {"new": os.O_CREAT | os.O_TRUNC, "trunc": os.O_TRUNC, "append": os.O_APPEND}[flags]
fd = os.open(path, os.O_WRONLY | fl, 0o644)
os.write(fd, text.encode())
print("synced" if os.fsync(fd) is None else "?", flush=True)
for line in sys.stdin:
    cmd = line.rstrip("\n")
    if cmd == "exit":
        break
    try:
        if cmd == "close":
            os.close(fd)
            print("closed", flush=True)
        elif cmd == "rm":
            os.unlink(path)
            os.close(fd)
            print("closed", flush=True)
        elif cmd.startswith("more "):
            os.write(fd, cmd[5:].encode())
            print("written", flush=True)
    except OSError as e:
        print("error", e.errno, flush=True)
EOF
# start_hold NAME FILE TEXT FLAGS: hold.py on FILE, fed through a fifo
# (HOLD_FD_NAME), its pid in HOLD_NAME; returns once it has fsynced.
start_hold() {
	local name=$1 fd
	mkfifo "$T_DIR/$name.in"
	"$PY" "$T_DIR/hold.py" "$2" "$3" "$4" <"$T_DIR/$name.in" >"$T_DIR/$name.out" 2>&1 &
	printf -v "HOLD_$name" %s "$!"
	exec {fd}>"$T_DIR/$name.in"
	printf -v "HOLD_FD_$name" %s "$fd"
	poll_until 5 grep -q synced "$T_DIR/$name.out"
}
tell() { local v="HOLD_FD_$1"; echo "$2" >&"${!v}"; }
end_hold() {
	local v="HOLD_FD_$1" p="HOLD_$1"
	# (its fifo is open in later holders too: no EOF to end on)
	echo exit >&"${!v}"
	eval "exec ${!v}>&-"
	wait "${!p}" 2>/dev/null || true
}

base=$(wc -l <"$F")
start_hold keep "$S/kept.md" "kept text" new
assert_eq "after an fsync, one record in the session's project folder" 1 "$(n_records)"
rec=$(records)
assert_eq "holding the fsynced text after one JSON line" "kept text" "$(tail -n +2 "$rec")"
assert_contains "naming the file" "\"path\":\"/$P/s1/kept.md\"" "$(head -1 "$rec")"
assert_eq "mode 0600" 600 "$(stat -c %a "$rec")"
assert_eq "nothing appended yet" "$base" "$(wc -l <"$F")"
tell keep close
assert_poll "closed" 5 grep -q closed "$T_DIR/keep.out"
end_hold keep
assert_eq "the close appended it" $((base + 1)) "$(wc -l <"$F")"
assert_eq "and the record went" 0 "$(n_records)"

start_hold thrown "$S/thrown.md" "thrown away" new
assert_eq "fsynced: a record" 1 "$(n_records)"
tell thrown rm
assert_poll "removed and closed" 5 grep -q closed "$T_DIR/thrown.out"
end_hold thrown
assert_poll "a file removed before its close takes its record with it" 5 test "$(n_records)" = 0
assert_eq "and appends nothing" $((base + 1)) "$(wc -l <"$F")"

# A refusal after an fsync: the close's error; the text in rejected/.
sed 's/^role: user$/role: assistant/' "$S/$E" >"$T_DIR/refused.md"
before=$(sha1sum <"$F")
fsx_out "$PY" -c 'import os, sys
fd = os.open(sys.argv[1], os.O_WRONLY | os.O_TRUNC)
os.write(fd, open(sys.argv[2], "rb").read())
os.fsync(fd)
try:
    os.close(fd)
    print("closed")
except OSError as e:
    print("close:", e.errno)' "$S/$E" "$T_DIR/refused.md"
assert_eq "a refused edit: fsync succeeds, close fails with EINVAL" "close: 22" "${OUT%$'\n'}"
assert_eq "nothing appended" "$before" "$(sha1sum <"$F")"
assert_eq "its record went" 0 "$(n_records)"
assert_contains "the text is in rejected/" "role: assistant" "$(cat "$MNT"/.pisessionfs/rejected/*-"$E" 2>/dev/null)"

# --- two daemons on one store: a live draft's record is not recovered ---------------------
start_hold live "$S/live.md" "still being written" new
MNT2=$T_DIR/mnt2
mkdir -p "$MNT2"
mount_fs "$STORE" "$MNT2"
assert_true "a second daemon leaves a live daemon's record alone" bash -c "! grep -q recovered '$MNT2/.pisessionfs/log'"
assert_eq "and shows nothing in rejected/" "" "$(ls "$MNT2/.pisessionfs/rejected/")"
umount_fs "$MNT2"
tell live close
assert_poll "closed" 5 grep -q closed "$T_DIR/live.out"
end_hold live
assert_eq "its close appended it" $((base + 2)) "$(wc -l <"$F")"
assert_eq "no record" 0 "$(n_records)"

# --- kill -9 after the fsync: nothing lost, nothing appended -----------------------
start_hold k_new "$S/k.md" "a new message, fsynced" new
start_hold k_entry "$S/$E" "an edit, fsynced" trunc
start_hold k_name "$S/name" "a name, fsynced" trunc
start_hold k_raw "$S/session.jsonl" '{"type":"custom","id":"dddd0001","parentId":' append
tell k_new "more , and more not fsynced"
assert_poll "a write after the fsync" 5 grep -q written "$T_DIR/k_new.out"
assert_eq "four records" 4 "$(n_records)"
before=$(sha1sum <"$F")
EXPECT_DEAD[$MNT]=1
kill -KILL "${PID_OF[$MNT]}"
wait "${PID_OF[$MNT]}" 2>/dev/null || true
PID_OF[$MNT]=
for h in k_new k_entry k_name k_raw; do
	tell "$h" close
done
for h in k_new k_entry k_name k_raw; do
	poll_until 5 grep -qE 'closed|error' "$T_DIR/$h.out"
	end_hold "$h"
done
assert_contains "the writer's close failed: it was told" "error" "$(cat "$T_DIR/k_new.out")"
assert_eq "the session file is byte-identical" "$before" "$(sha1sum <"$F")"
assert_eq "the four records stay" 4 "$(n_records)"
poll_until 5 bash -c "! grep -q ' $MNT ' /proc/self/mountinfo"
unset 'EXPECT_DEAD[$MNT]'
mount_fs "$STORE" "$MNT"
log=$(cat "$MNT/.pisessionfs/log")
assert_eq "the next daemon logs each recovered draft" 4 "$(grep -c '^.*recovered /' <<<"$log")"
assert_contains "saying what happened and where the text is" \
	"recovered $MNT/$P/s1/k.md: fsynced at " "$log"
assert_contains "and that nothing was appended" \
	"but the daemon was killed before the file was closed, so nothing was appended; the text is kept in $MNT/.pisessionfs/rejected/" "$log"
R=$MNT/.pisessionfs/rejected
for pair in "k.md|a new message, fsynced" "$E|an edit, fsynced" "name|a name, fsynced" \
	'session.jsonl|{"type":"custom","id":"dddd0001","parentId":'; do
	name=${pair%%|*} text=${pair#*|}
	f=$(ls "$R" | grep -- "-$name\$" | head -1)
	assert_eq "rejected/ has the fsynced text of $name, exactly" "$text" "$(cat "$R/$f" 2>/dev/null)"
done
assert_eq "nothing appended at start" "$before" "$(sha1sum <"$F")"
f=$(ls "$R" | grep -- '-k.md$')
assert_eq "the writer's own, readable by the writer alone" "400 $(id -u)" "$(stat -c '%a %u' "$R/$f")"
rm "$R/$f"
assert_eq "removing it there removes its record" 3 "$(n_records)"
umount_fs "$MNT"
mount_fs "$STORE" "$MNT"
assert_eq "the next mount shows the other three again" 3 "$(ls "$R" | grep -c .)"
rm "$R"/*
assert_eq "removed, nothing is left in the store" 0 "$(n_records)"
umount_fs "$MNT"
mount_fs "$STORE" "$MNT"
assert_eq "and the next mount shows nothing" "" "$(ls "$R")"
umount_fs "$MNT"

# A record that is not one is left as it is, with a log line; one cut
# short (its daemon was killed writing it, before its fsync returned) is
# removed, with a log line.
echo "garbage" >"$STORE/$P/.pisessionfs-draft.AbCdEf"
printf '%s\n%s' '{"path":"/x/y/z.md","uid":0,"gid":0,"time":"2026-01-01T00:00:00Z","len":100}' "only part" \
	>"$STORE/$P/.pisessionfs-draft.CutCut"
mount_fs "$STORE" "$MNT"
log=$(cat "$MNT/.pisessionfs/log")
assert_contains "a bad record is named in the log" \
	"left $STORE/$P/.pisessionfs-draft.AbCdEf as it is: it is not the record of a draft" "$log"
assert_true "and left" test -f "$STORE/$P/.pisessionfs-draft.AbCdEf"
assert_contains "a record cut short is removed, with a log line" \
	"removed $STORE/$P/.pisessionfs-draft.CutCut, the record of a draft that a killed daemon had not finished writing" "$log"
assert_true "it is gone" test ! -e "$STORE/$P/.pisessionfs-draft.CutCut"
assert_eq "and shows nothing in rejected/" "" "$(ls "$MNT/.pisessionfs/rejected/")"
umount_fs "$MNT"
rm -f "$STORE/$P/.pisessionfs-draft.AbCdEf"
finish
