#!/usr/bin/env bash
# When a write is committed (docs/layout.md, "When a write is committed"):
# one draft per open file, committed at the opener's close and
# at the last release, never at a child's close (fsync makes it durable:
# t_write_fsync).  Each block is a bug the
# old write path had (issue 19), and failed before the fix:
#  1. { echo a; /bin/echo b; echo c; } > new.md appended "a\nb" and lost c;
#     Python write; fsync; write; close lost the second write;
#  2. the same group onto an entry appended two siblings; half a line of
#     session.jsonl written by a child was refused at the child's close;
#  5. touch new.md said nothing; cp ENTRY.md kept the old
#     message.timestamp; NAME.md.vsctmp and NAME.md.tmp-123 were EPERM;
#     an entry number outlived the index it was of (cache_sessions=1);
#     two files of one pending branch closed at once made two branches.
# (Bug 3, a read racing an fsync, is t_write_race.)
# shellcheck disable=SC2016 # 'bash -c' scripts get their arguments as $1...
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh" "$@"

PY=$(python3 -c 'import sys; print(sys.executable)')
PROJ=--home-u-w--
mkdir -p "$STORE/$PROJ"
F=$STORE/$PROJ/s1.jsonl
{
	header
	user_msg aaaa0001 null "alpha one"
	asst_msg aaaa0002 aaaa0001 "reply one"
	user_msg aaaa0003 aaaa0002 "second question"
} >"$F"
{
	header 3 22222222-2222-3333-4444-555555555555
	user_msg bbbb0001 null "other"
} >"$STORE/$PROJ/s2.jsonl"
S=$MNT/$PROJ/s1
mount_fs "$STORE" "$MNT" -o cache_sessions=1

# The entries appended since mark (a line count): "type role text parent"
# each on a line.
appended() {
	"$PY" - "$F" "$1" <<'PY'
import json, sys
lines = open(sys.argv[1]).read().splitlines()[int(sys.argv[2]):]
for l in lines:
    e = json.loads(l)
    m = e.get("message") or {}
    c = m.get("content")
    if isinstance(c, list):
        c = "".join(b.get("text", "") for b in c if b.get("type") == "text")
    print(e["type"], m.get("role", "-"), json.dumps(c if c is not None else e.get("name", e.get("label"))),
          e.get("parentId"))
PY
}
mark() { wc -l <"$F"; }
wait_quiet() { # the release comes after close() returns: let it land
	local a b
	a=$(stat -c %s "$F")
	for _ in 1 2 3 4 5 6 7 8 9 10; do
		sleep 0.1
		b=$(stat -c %s "$F")
		[[ $a == "$b" ]] && return 0
		a=$b
	done
}

# 1. A shell group with an external command, into a new name: one message.
m=$(mark)
fsx_out bash -c '{ echo a; /bin/echo b; echo c; } > "$1/new.md"' _ "$S"
assert_eq "the group exits 0" "0 " "$RC $ERR"
wait_quiet
assert_eq "one message with all three lines" 'message user "a\nb\nc" aaaa0003' "$(appended "$m")"
m=$(mark)
fsx_out bash -c '(cat "$2"; echo more) > "$1/two.md"' _ "$S" "$T_DIR/hdr"
echo header >"$T_DIR/hdr"
fsx_out bash -c '(cat "$2"; echo more) > "$1/three.md"' _ "$S" "$T_DIR/hdr"
wait_quiet
assert_contains "(cat header; echo more) is one message" '"header\nmore"' "$(appended "$m")"

# Python write; fsync; write; close: the fsync makes the text durable
# beside the session (a draft record, docs/layout.md "fsync") without
# appending; the close appends one message holding both writes, and the
# record goes.
m=$(mark)
fsx_out "$PY" -c 'import os, sys
def records():
    return [n for n in os.listdir(sys.argv[2]) if n.startswith(".pisessionfs-draft.")]
fd = os.open(sys.argv[1], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
os.write(fd, b"first"); os.fsync(fd)
r = records()
print(len(r), open(os.path.join(sys.argv[2], r[0]), "rb").read().split(b"\n", 1)[1].decode() if r else "-")
os.write(fd, b" second"); os.fsync(fd)
r = records()
print(len(r), open(os.path.join(sys.argv[2], r[0]), "rb").read().split(b"\n", 1)[1].decode() if r else "-")
os.close(fd)
print(len(records()))' "$S/py.md" "$STORE/$PROJ"
assert_eq "write fsync write fsync close succeeds" "0 " "$RC $ERR"
assert_eq "each fsync left one record of the text so far, the close none" $'1 first\n1 first second\n0' "${OUT%$'\n'}"
wait_quiet
got=$(appended "$m")
assert_eq "one message holding both writes" 1 "$(grep -c . <<<"$got")"
assert_contains "with the whole text" 'message user "first second"' "$got"

# 2. The same group onto an existing entry: one sibling.
m=$(mark)
fsx_out bash -c '{ echo x; /bin/echo y; echo z; } > "$1/0003-user.aaaa0003.md"' _ "$S"
assert_eq "the group onto an entry exits 0" "0 " "$RC $ERR"
wait_quiet
assert_eq "one sibling of the entry" 'message user "x\ny\nz" aaaa0002' "$(appended "$m")"

# A raw session.jsonl: half a line from a child, the rest from the opener.
m=$(mark)
line='{"type":"custom","id":"cccc0001","parentId":"aaaa0003","timestamp":"2026-01-01T00:00:09.000Z","customType":"k","data":{"n":1}}'
fsx_out bash -c 'exec 3>>"$1/session.jsonl"; /bin/echo -n "${2:0:40}" >&3; echo "${2:40}" >&3; exec 3>&-' _ "$S" "$line"
assert_eq "a line written half by a child is taken whole" "0 " "$RC $ERR"
wait_quiet
assert_eq "and appended once, byte for byte" "$line" "$(tail -n +"$((m + 1))" "$F")"

# 5. touch of a new name: nothing appended, and the log says so.
m=$(mark)
assert_true "touch new.md" touch "$S/empty.md"
wait_quiet
assert_eq "touch appends nothing" "" "$(appended "$m")"
assert_poll "the log says it stays empty" 5 grep -q "kept $MNT/$PROJ/s1/empty.md empty: nothing appended" \
	"$MNT/.pisessionfs/log"
assert_true "text written to it later appends it" bash -c 'echo later >> "$1/empty.md"' _ "$S"
wait_quiet
assert_contains "as a message" 'message user "later"' "$(appended "$m")"

# cp of an entry file: the copy is new activity, with the copy's time.
m=$(mark)
assert_true "cp ENTRY.md copy.md" cp "$S/0001-user.aaaa0001.md" "$S/copy.md"
wait_quiet
ts=$(tail -1 "$F" | "$PY" -c 'import json, sys; print(json.load(sys.stdin)["message"]["timestamp"])')
assert_true "the copy's message.timestamp is now, not 1767225601000" test "$ts" -gt 1767225601000

# Temporaries named after the file they save are side files.
for tmp in copy.md.vsctmp copy.md.tmp-123 note.json.4f3a2b1c; do
	m=$(mark)
	assert_true "$tmp is made" bash -c 'echo hi > "$1/$2"' _ "$S" "$tmp"
	wait_quiet
	assert_eq "$tmp appends nothing" "" "$(appended "$m")"
	assert_true "$tmp is listed" test -f "$S/$tmp"
done
m=$(mark)
assert_true "a temporary renamed into place" mv "$S/copy.md.vsctmp" "$S/saved.md"
assert_eq "is appended at the rename" 'message user "hi"' "$(appended "$m" | cut -d' ' -f1-3)"

# Two files of one pending branch closed at once: one branch.
m=$(mark)
assert_true "mkdir a pending branch" mkdir "$S/0002~both"
fsx_out "$PY" - "$S/0002~both" <<'PY'
import os, sys, threading
d = sys.argv[1]
fds = [os.open(os.path.join(d, n), os.O_WRONLY | os.O_CREAT, 0o644) for n in ("a.md", "b.md")]
for i, fd in enumerate(fds):
    os.write(fd, b"from %d" % i)
go = threading.Barrier(2)
def close(fd):
    go.wait()
    os.close(fd)
ts = [threading.Thread(target=close, args=(fd,)) for fd in fds]
[t.start() for t in ts]
[t.join() for t in ts]
PY
assert_eq "both closes succeed" "0 " "$RC $ERR"
wait_quiet
got=$(appended "$m")
assert_eq "one label names the branch" 1 "$(grep -c '^label' <<<"$got")"
assert_eq "two messages" 2 "$(grep -c '^message' <<<"$got")"
assert_true "the branch lists both" bash -c '[ "$(ls "$1" | grep -c "user\.")" = 2 ]' _ "$S/0002~both"

# An entry file held open while its index is dropped and rebuilt (one
# session cached: reading s2 evicts s1) and the file replaced: its entry
# number is of the old index, and the edit is refused, not appended
# under whatever entry now has that number.
cp "$F" "$T_DIR/s1.before"
fsx_out "$PY" - "$S/0003-user.aaaa0003.md" "$MNT/$PROJ/s2/name" "$F" "$T_DIR/other.jsonl" <<'PY'
import os, shutil, sys
entry, other, store_file, replacement = sys.argv[1:]
fd = os.open(entry, os.O_WRONLY | os.O_TRUNC)
with open(store_file) as f:
    lines = f.read().splitlines(True)
# The same session, with every entry but the header and a new first one
# shifted: entry number 3 is now another entry.
with open(replacement, "w") as f:
    f.write(lines[0])
    f.write('{"type":"message","id":"dddd0001","parentId":null,"timestamp":"2026-01-01T00:00:00.500Z","message":{"role":"user","content":"zero","timestamp":1767225600500}}\n')
    f.writelines(lines[1:])
os.rename(replacement, store_file)
open(other).read()
open(entry.replace("0003-user.aaaa0003.md", "header.json")).read()
os.write(fd, b"edited after the file was replaced")
try:
    os.close(fd)
    print("closed")
except OSError as e:
    print("refused", e.errno)
PY
assert_eq "the edit of a replaced file is refused" "refused 5"$'\n' "$OUT"
assert_poll "the log says why" 5 grep -q "the session file was replaced while the entry was open" "$MNT/.pisessionfs/log"
assert_true "nothing appended to the new file" bash -c '! grep -q "edited after" "$1"' _ "$F"

finish
