#!/usr/bin/env bash
# Real tools' write patterns on whole sessions (the second half of the
# matrix; t_write_matrix.sh has the single files): a tar backup of a
# session taken from the mount and extracted back into it, cp -r and cp -a
# of a session into its own project and into another one, rsync -a of a
# session onto itself and of a backup back onto it.  Each case is bounded
# in time and checks the tool's exit status and the session files.
#
# What each tool does on the mount (docs/layout.md, "Deleting a
# session", "Starting a session"):
#   * tar c of a session: every entry file once (entries/ is not listed),
#     the forks, labels/ with its links, the generated files.
#   * tar x of that archive back into the mount: tar creates each file
#     O_EXCL, gets EEXIST, removes the file and tries again.  Removing
#     session.jsonl by a process that never read the session directory's
#     listing is EPERM; removing an entry, a generated file or a link is
#     EPERM: tar says "Cannot open: File exists" (or "Cannot create
#     symlink") and goes on, and exits 2.  The session file does not
#     change and nothing goes to the trash.  With -k (--keep-old-files)
#     tar removes nothing: the same errors, the same outcome.
#     Open question for the spec: tar removes labels/NAME too (after its
#     exclusive create of the link's placeholder failed with EEXIST), and
#     `rm labels/NAME` clears a label; measured on the old daemon with an
#     archive without session.jsonl, tar x appends the clearing label
#     entry and then fails to make its placeholder there ("labels/start:
#     Cannot open: Operation not permitted"): the label is lost.  This
#     test holds to "tar x changes nothing" (the session file and the
#     label are checked), so the rewrite must keep that removal from
#     clearing the label.
#   * cp -r / cp -a SESSION PROJECT/NEW (own project or another): the
#     mkdir starts a new session named NEW (pi's /new); every entry file
#     cp then writes into it is a new entry file there, so the main line's
#     messages are appended in cp's order, each as a new entry (fresh id,
#     timestamps of now, the message's own timestamp too, as for
#     `cp ENTRY.md copy.md`), each under the one before.  What cannot be
#     copied is refused and cp exits 1: session.jsonl, context.json and
#     the other generated files, labels/ and leaf exist already (EEXIST),
#     a fork directory is out of range (ERANGE) while the new session is
#     shorter, a label entry's copy names an entry of the old session
#     (EINVAL at close), and cp -a's chmod of the directory (EPERM).  The
#     source session is byte-identical afterwards.  Decided: this is the
#     outcome, a copy of the conversation's main line, not a clone; pi's
#     /fork (`ln -s SESSION/ENTRY PROJECT/NAME`) is the way to clone.
#   * rsync -a SESSION/ SESSION/ and rsync -a BACKUP/ SESSION/ (a cp -a
#     copy outside the mount): every file has its size and time, nothing
#     is written, exit 0, the session file unchanged; also with -c.
#
# On the daemon before the write-path rewrite (commit bc68792):
#   * tar x: tar's first unlinkat(session.jsonl) moves the session to
#     the trash (logged "the session moved to the trash"), and tar then
#     loops for ever (open O_EXCL: EEXIST, unlinkat: 0, ...) until the
#     time limit kills it; the session is gone from the store.  FAILS.
#   * cp -r / cp -a: the copied messages keep their old message.timestamp
#     (1767225601000 ...), so the "stamped now" check FAILS; the rest
#     (exit 1, refusals, the source unchanged, the main line copied) holds.
#   * tar x -k, tar c and rsync: pass.
# shellcheck disable=SC2016 # 'bash -c' scripts get their arguments as $1...
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh" "$@"

PY=$(python3 -c 'import sys; print(sys.executable)')

PROJ=--home-u-w--
PROJ2=--home-u-x--
mkdir -p "$STORE/$PROJ" "$STORE/$PROJ2"

# The base session: the main line aaaa0001 user "alpha one", aaaa0002
# assistant "reply one", aaaa0003 user "alpha two", aaaa0004 assistant
# "reply two"; a fork bbbb0003 user "beta two" after aaaa0002; a label
# "start" on aaaa0001 (aaaa0005, after aaaa0004); a name.
mksession() {
	local f=$STORE/$PROJ/$1.jsonl
	{
		header
		alpha_turns
		user_msg bbbb0003 aaaa0002 "beta two"
		label_entry aaaa0005 aaaa0004 aaaa0001 start
		printf '{"type":"session_info","id":"aaaa0006","parentId":"aaaa0005","timestamp":"2026-01-01T00:00:06.000Z","name":"Base %s"}\n' "$1"
	} >"$f"
	chmod 644 "$f"
}

for s in s-tar s-tar-k s-cp s-rsync; do
	mksession "$s"
done
mount_fs "$STORE" "$MNT"
D=$MNT/$PROJ
D2=$MNT/$PROJ2
TRASH=$XDG_DATA_HOME/Trash

# trashed: what the trash holds (each case checks it adds nothing, so
# that a case that failed does not fail the ones after it).
trashed() {
	[[ -d $TRASH ]] || return 0
	find "$TRASH" -type f | sed "s|^$TRASH/||" | sort
}

# log_since N: the log's lines after its first N.
log_lines() {
	fsx cat "$MNT/.pisessionfs/log" | wc -l
}
log_since() {
	fsx cat "$MNT/.pisessionfs/log" | tail -n +$(($1 + 1))
}

# --- tar c, then tar x back into the mount -------------------------------------------
S=$D/s-tar
F=$STORE/$PROJ/s-tar.jsonl
cp "$F" "$T_DIR/s-tar.before"
fsx_out tar cf "$T_DIR/s-tar.tar" -C "$D" s-tar
assert_eq "tar c of a session: exit status (stderr: $(show "$ERR"))" 0 "$RC"
members=$(tar tf "$T_DIR/s-tar.tar" 2>&1 | sort)
for m in s-tar/session.jsonl s-tar/0001-user.aaaa0001.md s-tar/0004-assistant.aaaa0004.md \
	s-tar/0003~bbbb0003/0003-user.bbbb0003.md s-tar/labels/start s-tar/context.json s-tar/leaf; do
	assert_contains "tar c: the archive holds $m" $'\n'"$m"$'\n' $'\n'"$members"$'\n'
done
assert_eq "tar c: entries/ is not in the archive" "" "$(grep '/entries/' <<<"$members" || true)"

log0=$(log_lines)
trash0=$(trashed)
start_s=$(date +%s)
fsx_out tar xf "$T_DIR/s-tar.tar" -C "$D"
secs=$(($(date +%s) - start_s))
echo "# tar x of a session's backup into the mount: exit $RC in ${secs}s"
if ((RC != 137)); then pass; fi # fsx_out reported a time-out
assert_ne "tar x into the mount: exit status reflects the refusals" 0 "$RC"
assert_contains "tar x: session.jsonl: Cannot open: File exists" "s-tar/session.jsonl: Cannot open: File exists" "$ERR"
assert_contains "tar x: an entry: Cannot open: File exists" "s-tar/0001-user.aaaa0001.md: Cannot open: File exists" "$ERR"
if [[ -f $F ]] && cmp -s "$F" "$T_DIR/s-tar.before"; then
	pass
else
	fail "tar x: the session file changed or is gone (the project holds $(cd "$STORE/$PROJ" && echo *))"
fi
assert_eq "tar x: nothing went to the trash" "$trash0" "$(trashed)"
log=$(log_since "$log0")
assert_eq "tar x: the session was not deleted" "" "$(grep -F 'moved to the trash' <<<"$log" || true)"
# tar holds the project folder open while it replaces what is in it: the
# broad removal's line (t_rm_broad) says it.
assert_contains "tar x: the log says how to delete a session" "to delete a session, rm -r its own directory" "$log"
assert_exists "$S/0001-user.aaaa0001.md"
fsx_out readlink "$S/labels/start"
assert_eq "tar x: the label is still there" "../0001-user.aaaa0001.md" "${OUT%$'\n'}"

# tar x -k: nothing is removed, only refused.
S=$D/s-tar-k
F=$STORE/$PROJ/s-tar-k.jsonl
cp "$F" "$T_DIR/s-tar-k.before"
trash0=$(trashed)
fsx_out tar cf "$T_DIR/s-tar-k.tar" -C "$D" s-tar-k
assert_eq "tar c (-k case): exit status" 0 "$RC"
fsx_out tar xkf "$T_DIR/s-tar-k.tar" -C "$D"
if ((RC != 137)); then pass; fi
assert_eq "tar xk into the mount: exit status 2" 2 "$RC"
assert_contains "tar xk: session.jsonl: Cannot open: File exists" "s-tar-k/session.jsonl: Cannot open: File exists" "$ERR"
if [[ -f $F ]] && cmp -s "$F" "$T_DIR/s-tar-k.before"; then
	pass
else
	fail "tar xk: the session file changed or is gone"
fi
assert_eq "tar xk: nothing went to the trash" "$trash0" "$(trashed)"

# --- cp -r and cp -a of a session ------------------------------------------------------
cat >"$T_DIR/copied.py" <<'EOF'
# copied.py SOURCE COPY NAME: COPY is a new session file holding the main
# line of SOURCE as new entries: a header, a session_info NAME, then the
# four main-line messages in order, each under the one before (the first
# under the session_info), with fresh ids and timestamps of now (the
# message's own timestamp included).  Prints what is wrong, or nothing;
# a note about any further line on stderr.
import json, sys, time
src, copy, name = sys.argv[1:4]
old = [json.loads(l) for l in open(src)]
new = [json.loads(l) for l in open(copy)]
old_ids = {e.get("id") for e in old}
now = time.time() * 1000
want = [("user", "alpha one"), ("assistant", "reply one"), ("user", "alpha two"), ("assistant", "reply two")]
errs = []
if not new or new[0].get("type") != "session":
    errs.append("no session header")
info = [e for e in new[1:] if e.get("type") == "session_info"]
if not info or info[0].get("name") != name:
    errs.append("session_info %r, not %r" % ([e.get("name") for e in info], name))
msgs = [e for e in new[1:] if e.get("type") == "message"]
def text(m):
    c = m["message"].get("content")
    return c if isinstance(c, str) else "".join(b.get("text", "") for b in c if b.get("type") == "text")
got = [(m["message"].get("role"), text(m)) for m in msgs]
if got[:4] != want:
    errs.append("messages %r" % got)
else:
    parent = info[0]["id"] if info else None
    for m in msgs[:4]:
        if m["id"] in old_ids:
            errs.append("%s keeps its old id" % m["id"])
        if m["parentId"] != parent:
            errs.append("%s hangs under %s, not %s" % (m["id"], m["parentId"], parent))
        parent = m["id"]
        ts = m["message"].get("timestamp")
        if not (isinstance(ts, int) and abs(ts - now) < 300000):
            errs.append("%s: message.timestamp %r is not now" % (m["id"], ts))
extra = [e for e in new[1:] if e not in info and e not in msgs[:4]]
if extra:
    print("# and %d more: %s" % (len(extra), " ".join(json.dumps(e)[:120] for e in extra)), file=sys.stderr)
print("; ".join(errs))
EOF

# copy_case WHAT CP-OPTION DEST-PROJECT-DIR(store) DEST-PATH NAME
copy_case() {
	local what=$1 opt=$2 pdir=$3 dest=$4 name=$5 before after new trash0
	local F=$STORE/$PROJ/s-cp
	trash0=$(trashed)
	before=$(ls "$pdir")
	cp "$F.jsonl" "$T_DIR/s-cp.before"
	fsx_out cp "$opt" "$D/s-cp" "$dest"
	if ((RC != 137)); then pass; fi
	assert_eq "$what: cp exits 1 (it reports what was refused)" 1 "$RC"
	assert_contains "$what: cp says context.json exists" "context.json': File exists" "$ERR"
	assert_contains "$what: cp says session.jsonl exists" "session.jsonl': File exists" "$ERR"
	assert_same_bytes "$F.jsonl" "$T_DIR/s-cp.before"
	after=$(ls "$pdir")
	new=$(comm -13 <(printf '%s\n' "$before") <(printf '%s\n' "$after") | grep . || true)
	if [[ $new != *.jsonl || $new == *$'\n'* ]]; then
		fail "$what: expected one new session file in the project, got $(show "$new")"
		return
	fi
	pass
	fsx_out "$PY" -I -S "$T_DIR/copied.py" "$F.jsonl" "$pdir/$new" "$name"
	assert_eq "$what: the copy holds the main line as new entries" "" "${OUT%$'\n'}"
	if [[ -n $ERR ]]; then
		printf '# %s: %s\n' "$what" "${ERR#\# }"
	fi
	assert_eq "$what: nothing went to the trash" "$trash0" "$(trashed)"
}
copy_case "cp -r into its own project" -r "$STORE/$PROJ" "$D/s-cp-r" s-cp-r
copy_case "cp -a into its own project" -a "$STORE/$PROJ" "$D/s-cp-a" s-cp-a
copy_case "cp -r into another project" -r "$STORE/$PROJ2" "$D2/s-cp-r" s-cp-r
copy_case "cp -a into another project" -a "$STORE/$PROJ2" "$D2/" s-cp

# --- rsync -a onto itself, and a backup back ------------------------------------------------
S=$D/s-rsync
F=$STORE/$PROJ/s-rsync.jsonl
sha=$(sha256sum <"$F")
log0=$(log_lines)
fsx_out rsync -a "$S/" "$S/"
assert_eq "rsync -a SESSION/ SESSION/: exit status (stderr: $(show "$ERR"))" 0 "$RC"
fsx_out rsync -a "$S" "$D/"
assert_eq "rsync -a SESSION PROJECT/: exit status (stderr: $(show "$ERR"))" 0 "$RC"
fsx_out cp -a "$S" "$T_DIR/backup"
assert_eq "cp -a SESSION BACKUP (out of the mount): exit status (stderr: $(show "$ERR"))" 0 "$RC"
fsx_out rsync -ai "$T_DIR/backup/" "$S/"
assert_eq "rsync -a BACKUP/ SESSION/: exit status (stderr: $(show "$ERR"))" 0 "$RC"
assert_eq "rsync -a BACKUP/ SESSION/: nothing to transfer" "" "$(grep -v '^\.d' <<<"$OUT" || true)"
fsx_out rsync -aci "$T_DIR/backup/" "$S/"
assert_eq "rsync -ac BACKUP/ SESSION/: exit status (stderr: $(show "$ERR"))" 0 "$RC"
assert_eq "rsync -ac BACKUP/ SESSION/: nothing to transfer" "" "$(grep -v '^\.d' <<<"$OUT" || true)"
assert_eq "rsync: the session file is unchanged" "$sha" "$(sha256sum <"$F")"
assert_eq "rsync: nothing in the log" "" "$(log_since "$log0")"

finish
