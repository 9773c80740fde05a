#!/usr/bin/env bash
# No path inside the mount leads outside the store.
#
# The store holds symlinks: session files to /etc/passwd, to another
# session, to a session file outside the store, to /etc: none is shown.
# Project directories that are symlinks (to /etc, to another project, to a
# directory outside the store) are followed, as pi follows them
# (docs/security.md): they show the *.jsonl files of their target, and
# nothing else of it.  A session holds hostile
# ids, labels, tool names and types (../, /, ., .., %, control characters),
# a header whose parentSession is /etc/passwd and whose cwd climbs with
# ../; other sessions have odd cwds and names (for the by-cwd and by-name
# views).  A walk of the whole mount (escape_walk.py) checks every name is
# escaped, every symlink is relative and resolves inside its session
# directory (views: to a session directory), realpath() never leaves the
# mount, and no file holds a line of /etc/passwd; header.json shows
# parentSession as text.  Writes that try to point outside (ln -s to
# /etc/passwd, to ../../.., to another session) are refused, and nothing
# is appended.  Finally, a session the daemon has indexed is replaced by a
# symlink to a file outside the store while a write to it is open: the
# mount neither shows nor writes the outside file.
#
#   t_escape.sh DAEMON [--quick]     (the same in both modes)
# shellcheck disable=SC2016,SC2317 # bash -c '...$1' on purpose; functions run by traps
# shellcheck source=common.sh
. "$(dirname "$0")/common.sh" "$@"

OUTSIDE=$T_DIR/outside
LINKED=$T_DIR/linked-project
mkdir -p "$OUTSIDE" "$LINKED" "$STORE/--e--" "$STORE/--f--" "$STORE/--g--"
PASSWD_LINE=$(head -1 /etc/passwd)
[[ -n $PASSWD_LINE ]] || die "/etc/passwd is empty"

python3 - "$STORE" "$OUTSIDE" "$LINKED" <<'EOF'
import json, os, sys
store, outside, linked = sys.argv[1:4]
def ts(i):
    return "2026-01-01T00:00:%02d.000Z" % (i % 60)
def user(i, ident, parent, text):
    return {"type": "message", "id": ident, "parentId": parent, "timestamp": ts(i),
            "message": {"role": "user", "content": text, "timestamp": 1767225600000 + i}}
def asst(i, ident, parent, text, tool=None):
    content = [{"type": "text", "text": text}]
    if tool:
        content.append({"type": "toolCall", "id": "call1", "name": tool, "arguments": {"command": "ls"}})
    return {"type": "message", "id": ident, "parentId": parent, "timestamp": ts(i),
            "message": {"role": "assistant", "content": content, "api": "x", "provider": "p", "model": "m",
                        "usage": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 0,
                                  "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0}},
                        "stopReason": "toolUse" if tool else "stop", "timestamp": 1767225600000 + i}}
def write(path, header, entries):
    with open(path, "w") as f:
        f.write(json.dumps(header) + "\n")
        for e in entries:
            f.write(json.dumps(e) + "\n")

hostile = [
    user(1, "..", None, "id is dot-dot"),
    asst(2, ".", "..", "id is dot", tool="../../../../bin/sh"),
    {"type": "message", "id": "../../../../etc/passwd", "parentId": ".", "timestamp": ts(3),
     "message": {"role": "toolResult", "toolCallId": "call1", "toolName": "../../../../bin/sh",
                 "content": [{"type": "text", "text": "tool output"}], "isError": False, "timestamp": 1767225603000}},
    user(4, "a/b", "../../../../etc/passwd", "id with a slash"),
    user(5, "%2E%2E", "a/b", "id spelled like an escape"),
    user(6, "nl\nid", "%2E%2E", "id with a newline"),
    {"type": "custom", "id": "cust1", "parentId": "nl\nid", "timestamp": ts(7), "customType": "../../x", "data": {}},
    # branches off ".." whose first entries carry hostile labels
    user(8, "br1", "..", "branch one"),
    user(9, "br2", "..", "branch two"),
    user(10, "br3", "..", "branch three"),
    {"type": "label", "id": "l1", "parentId": "cust1", "timestamp": ts(11), "targetId": "br1", "label": ".."},
    {"type": "label", "id": "l2", "parentId": "l1", "timestamp": ts(12), "targetId": "br2", "label": "../../../../etc"},
    {"type": "label", "id": "l3", "parentId": "l2", "timestamp": ts(13), "targetId": "br3", "label": "/etc/passwd"},
    {"type": "label", "id": "l4", "parentId": "l3", "timestamp": ts(14), "targetId": "..", "label": "."},
    {"type": "label", "id": "l5", "parentId": "l4", "timestamp": ts(15), "targetId": "a/b", "label": "a/../../b"},
    {"type": "label", "id": "l6", "parentId": "l5", "timestamp": ts(16), "targetId": "%2E%2E", "label": "%2F..%2F"},
    {"type": "session_info", "id": "n1", "parentId": "l6", "timestamp": ts(17), "name": "../../../etc/passwd"},
]
write(os.path.join(store, "--e--", "hostile.jsonl"),
      {"type": "session", "version": 3, "id": "ffffffff-0000-0000-0000-000000000001", "timestamp": ts(0),
       "cwd": "/../../../../etc", "parentSession": "/etc/passwd"}, hostile)

# Sessions with odd cwds and names (the by-cwd and by-name views).
cwds = ["", "/", "relative/dir", "/a//b", "/a/./b/", "/..", "/x/../../..", "/with%25/and%2F", "/nl\n/cr\r",
        "/" + "/".join("d%d" % i for i in range(60)), "/" + "/".join([".."] * 40) + "/etc", "/" + "x" * 250 + "/y"]
names = ["..", ".", "/", "a/b", "../../..", "%2E%2E", "", " ", "n" * 300, "n" * 300 + "2"]
for i, cwd in enumerate(cwds):
    e = [user(1, "u1", None, "cwd %r" % cwd)]
    if i < len(names) and names[i]:
        e.append({"type": "session_info", "id": "n1", "parentId": "u1", "timestamp": ts(2), "name": names[i]})
    write(os.path.join(store, "--g--", "cwd%02d.jsonl" % i),
          {"type": "session", "version": 3, "id": "ffffffff-0000-0000-0001-%012d" % i, "timestamp": ts(0), "cwd": cwd}, e)

# An ordinary session, targets for symlinks.
write(os.path.join(store, "--f--", "t.jsonl"),
      {"type": "session", "version": 3, "id": "ffffffff-0000-0000-0000-000000000002", "timestamp": ts(0), "cwd": "/w"},
      [user(1, "t1", None, "target session"), asst(2, "t2", "t1", "ok")])
write(os.path.join(store, "--f--", "swap.jsonl"),
      {"type": "session", "version": 3, "id": "ffffffff-0000-0000-0000-000000000003", "timestamp": ts(0), "cwd": "/w"},
      [user(1, "w1", None, "will be swapped for a symlink"), asst(2, "w2", "w1", "ok")])
# A session file OUTSIDE the store.
write(os.path.join(outside, "secret.jsonl"),
      {"type": "session", "version": 3, "id": "ffffffff-0000-0000-0000-00000000dead", "timestamp": ts(0), "cwd": "/secret"},
      [user(1, "s1", None, "SECRET-OUTSIDE-THE-STORE"), asst(2, "s2", "s1", "SECRET-OUTSIDE-THE-STORE too")])
# A project folder outside the store that the store links to (followed).
write(os.path.join(linked, "linked.jsonl"),
      {"type": "session", "version": 3, "id": "ffffffff-0000-0000-0000-00000000beef", "timestamp": ts(0), "cwd": "/linked"},
      [user(1, "l1", None, "REACHED-THROUGH-A-LINKED-PROJECT"), asst(2, "l2", "l1", "ok")])
with open(os.path.join(linked, "notes.txt"), "w") as f:
    f.write("NOT-A-SESSION-OF-THE-LINKED-PROJECT\n")
EOF
ln -s /etc/passwd "$STORE/--e--/link-passwd.jsonl"
ln -s ../--f--/t.jsonl "$STORE/--e--/link-session.jsonl"
ln -s "$OUTSIDE/secret.jsonl" "$STORE/--e--/link-outside.jsonl"
ln -s /etc "$STORE/--e--/link-dir.jsonl"
ln -s hostile.jsonl "$STORE/--e--/link-same.jsonl"
ln -s /etc "$STORE/--linkproj--"
ln -s -- --f-- "$STORE/--linkproj2--"
ln -s "$LINKED" "$STORE/--linkoutside--"
mkdir "$STORE/--e--/dir.jsonl"
SECRET_BEFORE=$(sha256sum <"$OUTSIDE/secret.jsonl")

mount_fs "$STORE" "$MNT"
H=$MNT/--e--/hostile

# --- what is listed ---------------------------------------------------------------
# dirs_of DIR: the directories DIR lists (sessions, projects), one line.
dirs_of() { # DIR: its directories, the search/ view of a project aside
	local n out=()
	while IFS= read -r n; do
		[[ -n $n && $n != search ]] || continue
		if fsx test -d "$1/$n" && ! fsx test -L "$1/$n"; then
			out+=("$n")
		fi
	done < <(fsx ls -A "$1")
	echo "${out[*]}"
}
assert_eq "the root lists the project directories, linked ones too (and the daemon's own)" \
	"--e-- --f-- --g-- --linkoutside-- --linkproj-- --linkproj2--" "$(dirs_of "$MNT" | tr ' ' '\n' | grep -vxE '\.pisessionfs|by-id|by-name|by-cwd|recent|search' | tr '\n' ' ' | sed 's/ $//')"
assert_eq "--e-- lists only the real session file" "hostile" "$(dirs_of "$MNT/--e--")"
for n in link-passwd link-session link-outside link-dir link-same dir; do
	assert_missing "$MNT/--e--/$n"
done
# A linked project shows its target's *.jsonl files as sessions, and only them.
etc_sessions=$(find /etc/ -maxdepth 1 -name '*.jsonl' -type f -printf '%f\n' | sed 's/\.jsonl$//' | sort | tr '\n' ' ' | sed 's/ $//')
assert_eq "--linkproj-- (/etc) lists only the *.jsonl files of /etc" "$etc_sessions" "$(dirs_of "$MNT/--linkproj--")"
assert_eq "--linkoutside-- lists its session and nothing else" "linked" "$(fsx ls -A "$MNT/--linkoutside--" | grep -vxE 'usage.*\.(csv|svg)|sessions.md|search' | tr '\n' ' ' | sed 's/ $//')"
fsx_out cat "$MNT/--linkoutside--/linked/session.jsonl"
assert_contains "a linked project's session reads" "REACHED-THROUGH-A-LINKED-PROJECT" "$OUT"
assert_eq "--linkproj2-- shows --f--'s sessions" "$(dirs_of "$MNT/--f--")" "$(dirs_of "$MNT/--linkproj2--")"
assert_missing "$MNT/by-id/ffffffff-0000-0000-0000-00000000dead"

# --- header.json: parentSession is text ----------------------------------------------
fsx_out cat "$H/header.json"
assert_contains "header.json shows parentSession as text" '"parentSession": "/etc/passwd"' "$OUT"
fsx_out ls -A "$H"
assert_eq "the session directory has no name for parentSession" "" "$(grep -i parent <<<"$OUT" || true)"

# --- hostile names ------------------------------------------------------------------
fsx_out ls -A "$H"
note "hostile session lists: ${OUT//$'\n'/ }"
assert_contains "id .. is escaped" "0001-user.%2E%2E.md" "$OUT"
assert_contains "a label .. names its branch %2E%2E" "0002~%2E%2E" "$OUT"
assert_contains "a label ../../../../etc names its branch with its slashes escaped" "0002~..%2F..%2F..%2F..%2Fetc" "$OUT"
fsx_out ls -A "$H/labels"
note "labels: ${OUT//$'\n'/ }"
assert_contains "label /etc/passwd is escaped" "%2Fetc%2Fpasswd" "$OUT"
assert_missing "$H/labels/%2e%2e"
fsx_out ls -A "$H/entries"
assert_contains "entries/ escapes ../../../../etc/passwd" "%2E%2E%2F%2E%2E%2F%2E%2E%2F%2E%2E%2Fetc%2Fpasswd.json" "$OUT"
fsx_out readlink "$H/leaf"
note "leaf -> $OUT"

# --- the views: odd names and cwds ----------------------------------------------------
fsx_out ls -A "$MNT/by-name"
note "by-name: $(tr '\n' ' ' <<<"$OUT" | cut -c1-600)"
assert_eq "by-name lists every name once" "" "$(sort <<<"$OUT" | uniq -d)"
fsx_out find "$MNT/by-cwd" -maxdepth 3
note "by-cwd (depth 3): $(tr '\n' ' ' <<<"$OUT" | cut -c1-900)"
# Every directory of the views lists "." and ".." once (ls -fa, unlike
# python's os.listdir, shows what readdir returns), and no name is "." or
# ".." besides those, or holds a control character (layout.md: "a name can
# never be . or ..").
py_checks timeout -s KILL 60 python3 - "$MNT" <<'PYEOF'
import os, subprocess, sys
mnt = sys.argv[1]
counts = []
control = []
dirs = 0
for view in ("by-id", "by-name", "by-cwd", "recent"):
    stack = [os.path.join(mnt, view)]
    while stack:
        d = stack.pop()
        dirs += 1
        names = subprocess.run(["ls", "-fa", d], capture_output=True, timeout=10).stdout.split(b"\n")[:-1]
        rel = repr(os.path.relpath(d, mnt))[1:-1]
        k = (names.count(b"."), names.count(b".."))
        if k != (1, 1):
            counts.append("%s lists . %d times and .. %d times" % (rel, k[0], k[1]))
        for n in names:
            if any(c < 0x20 or c == 0x7f for c in n):
                control.append("%s lists %r" % (rel, n.decode(errors="replace")))
        for e in os.scandir(d):
            if e.is_dir(follow_symlinks=False):
                stack.append(e.path)
if counts:
    print("not ok - every view directory lists . and .. exactly once (by-cwd takes cwd components as names unescaped: . and .. of a cwd become entries): %s" % "; ".join(counts[:8]))
else:
    print("ok - every view directory lists . and .. exactly once (%d directories)" % dirs)
if control:
    print("not ok - no view name holds a control character (by-cwd: cwd components are not escaped): %s" % "; ".join(control[:8]))
else:
    print("ok - no view name holds a control character")
PYEOF
fsx_out find "$MNT/by-cwd" -type l -printf '%f\n'
reach=$(sort <<<"$OUT" | tr '\n' ' ')
missing=()
for f in "$STORE"/--*--/*.jsonl; do
	[[ -f $f && ! -L $f && ! -L $(dirname "$f") ]] || continue
	n=$(basename "$f" .jsonl)
	grep -qw -- "$n" <<<"$reach" || missing+=("$n")
done
note "by-cwd: $(grep -c . <<<"$OUT") session links; sessions not reachable there: ${missing[*]:-none}"

# --- the whole mount --------------------------------------------------------------------
py_checks timeout -s KILL 300 python3 "$STRESS_DIR/escape_walk.py" "$MNT" \
	--forbid "$PASSWD_LINE" --forbid "SECRET-OUTSIDE-THE-STORE" --op-timeout "$TIMEOUT"

# --- writes that point outside --------------------------------------------------------------
sum_store() { (cd "$STORE" && find . -type f -print0 | sort -z | xargs -0 cat) | sha256sum; }
before=$(sum_store)
for t in /etc/passwd ../../../../../../etc/passwd ../../../--f--/t/0001-user.t1.md "$MNT/--f--/t/0001-user.t1.md" "$OUTSIDE/secret.jsonl" ../labels ../.. /; do
	fsx_out ln -s "$t" "$H/labels/evil"
	if ((RC != 0)); then
		pass "ln -s $t labels/evil is refused ($ERR)"
	else
		fail "ln -s $t labels/evil succeeded: $(tail -c 300 "$STORE/--e--/hostile.jsonl")"
		fsx rm -f "$H/labels/evil" || true
	fi
done
after=$(sum_store)
assert_eq "refused label links appended nothing" "$before" "$after"
# An absolute path inside the session itself is accepted (layout.md).
# The entry .. has the label "." (l4), and an entry has one: it goes first.
fsx_out bash -c 'for l in "$1"/labels/*; do [[ $(readlink "$l") == ../0001-user.%2E%2E.md ]] && rm "$l"; done; true' _ "$H"
assert_eq "the label of the entry .. removed" 0 "$RC${ERR:+ $ERR}"
fsx_out ln -s "$H/0001-user.%2E%2E.md" "$H/labels/inside"
assert_eq "ln -s of an absolute path inside the session is accepted" 0 "$RC"
fsx_out readlink "$H/labels/inside"
assert_eq "its link is relative" "../0001-user.%2E%2E.md" "${OUT%$'\n'}"
# Raw lines and .json entries with hostile ids come out escaped.
fsx_out bash -c 'printf "%s\n" "{\"type\":\"message\",\"id\":\"../../../../tmp/evil\",\"parentId\":\"..\",\"timestamp\":\"2026-01-01T00:00:30.000Z\",\"message\":{\"role\":\"user\",\"content\":\"raw evil\",\"timestamp\":1}}" >> "$1"' _ "$H/session.jsonl"
assert_eq "a raw line with id ../../../../tmp/evil is appended" 0 "$RC"
assert_poll "and shown escaped" 3 test -e "$H/entries/%2E%2E%2F%2E%2E%2F%2E%2E%2F%2E%2E%2Ftmp%2Fevil.json"
fsx_out bash -c 'printf "%s" "{\"type\":\"custom\",\"customType\":\"../../y\",\"id\":\"/etc/shadow\",\"data\":{}}" > "$1"' _ "$H/evil.json"
assert_eq "a .json entry with id /etc/shadow is appended" 0 "$RC"
assert_poll "and shown escaped" 3 test -e "$H/entries/%2Fetc%2Fshadow.json"
check "nothing was created outside the store" test ! -e /tmp/evil
py_checks timeout -s KILL 300 python3 "$STRESS_DIR/escape_walk.py" "$MNT" \
	--forbid "$PASSWD_LINE" --forbid "SECRET-OUTSIDE-THE-STORE" --op-timeout "$TIMEOUT"

# --- a session swapped for a symlink while it is indexed and being written ------------------
S=$MNT/--f--/swap
assert_exists "$S/0002-assistant.w2.md"
hready=$T_DIR/h.ready
hgo=$T_DIR/h.go
hout=$T_DIR/h.out
timeout -s KILL 90 python3 "$STRESS_DIR/holder.py" "$hready" "$hgo" "$hout" \
	"w:$S/held.md|text for a session that became a symlink" \
	"a:$S/session.jsonl|{\"type\":\"message\",\"id\":\"held-raw\",\"parentId\":null,\"timestamp\":\"2026-01-01T00:00:00.000Z\",\"message\":{\"role\":\"user\",\"content\":\"x\",\"timestamp\":1}}" \
	"r:$S/session.jsonl" >/dev/null 2>&1 &
hpid=$!
for ((i = 0; i < 200; i++)); do
	[[ -e $hready ]] && break
	sleep 0.05
done
mv "$STORE/--f--/swap.jsonl" "$T_DIR/swap.orig"
ln -s "$OUTSIDE/secret.jsonl" "$STORE/--f--/swap.jsonl"
: >"$hgo"
wait "$hpid" || fail "holder ended with status $?"
note "held files of a session swapped for a symlink: $(tr '\n' ' ' <"$hout")"
assert_eq "the file outside the store is unchanged" "$SECRET_BEFORE" "$(sha256sum <"$OUTSIDE/secret.jsonl")"
assert_contains "closing the held .md fails" '"op": "w", "path": "'"$S"'/held.md", "open": "ok", "close": "E' "$(cat "$hout")"
assert_contains "closing the held raw append fails" '"op": "a", "path": "'"$S"'/session.jsonl", "open": "ok", "close": "E' "$(cat "$hout")"
sleep 1.2
assert_eq "the swapped session leaves the listing" "t" "$(dirs_of "$MNT/--f--")"
fsx_out cat "$S/session.jsonl"
if [[ $OUT == *SECRET* ]]; then
	fail "session.jsonl of the swapped session shows the file outside the store"
else
	pass "session.jsonl of the swapped session does not show the file outside the store (status $RC)"
fi
fsx_out bash -c 'echo "new text" > "$1"' _ "$S/new.md"
assert_eq "the file outside the store is still unchanged after a new .md" "$SECRET_BEFORE" "$(sha256sum <"$OUTSIDE/secret.jsonl")"
py_checks timeout -s KILL 300 python3 "$STRESS_DIR/escape_walk.py" "$MNT" \
	--forbid "$PASSWD_LINE" --forbid "SECRET-OUTSIDE-THE-STORE" --op-timeout "$TIMEOUT"
umount_fs "$MNT"
finish
