#!/usr/bin/env bash
# Refusals (docs/layout.md "Refusals"): every write that cannot become a
# valid entry fails with the documented errno at the documented call, the
# session file stays byte-identical (sha256), a "refused" line naming the
# path goes to MOUNT/.pisessionfs/log, and the refused text is kept, exact,
# in MOUNT/.pisessionfs/rejected/.  Errnos are taken from the exact call in
# Python (open, write, close, fsync, unlink, rename, ...).
# shellcheck disable=SC2016 # 'bash -c' scripts get their arguments as $1...
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh" "$@"

# The interpreter itself, not a version manager's shim (which costs 0.2 s a
# call).
PY=$(python3 -c 'import sys; print(sys.executable)')

PROJ=--home-u-w--
SN=s-ref
mkdir -p "$STORE/$PROJ"
F=$STORE/$PROJ/$SN.jsonl

# --- helpers of the write tests ---------------------------------------------

usage='{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"totalTokens":0,"cost":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"total":0}}'
# aaaa0001 user, aaaa0002 assistant (tool call), aaaa0003 tool result,
# aaaa0004 custom_message; bbbb0002 user, a later child of aaaa0001
# (0002~bbbb0002).
{
	header
	user_msg aaaa0001 null "alpha one"
	printf '{"type":"message","id":"aaaa0002","parentId":"aaaa0001","timestamp":"2026-01-01T00:00:02.000Z","message":{"role":"assistant","content":[{"type":"toolCall","id":"call_1","name":"bash","arguments":{"command":"ls"}}],"api":"x","provider":"p","model":"m","usage":%s,"stopReason":"toolUse","timestamp":1767225602000}}\n' "$usage"
	printf '{"type":"message","id":"aaaa0003","parentId":"aaaa0002","timestamp":"2026-01-01T00:00:03.000Z","message":{"role":"toolResult","toolCallId":"call_1","toolName":"bash","content":[{"type":"text","text":"out"}],"isError":false,"timestamp":1767225603000}}\n'
	printf '{"type":"custom_message","id":"aaaa0004","parentId":"aaaa0003","timestamp":"2026-01-01T00:00:04.000Z","customType":"note","content":"remember","display":true}\n'
	user_msg bbbb0002 aaaa0001 "beta"
} >"$F"
chmod 644 "$F"

# One file-system call from Python, so that the exact errno of the exact
# call is seen.  Prints "ok" or "CALL:ERRNO" (e.g. "close:EINVAL").
cp "$(dirname "$0")/fsop.py" "$T_DIR/op.py"

# op WHAT EXPECTED CALL ARGS...: runs the call (under fsx); its result must
# be EXPECTED ("ok" or "CALL:ERRNO").
op() {
	local what=$1 want=$2
	shift 2
	fsx_out "$PY" -I -S "$T_DIR/op.py" "$@"
	assert_eq "$what (result)" "$want" "${OUT%$'\n'}${ERR:+ stderr: $ERR}"
}

# mark FILE: remembers the session file's sha256 and the log's length.
mark() {
	MARK_FILE=$1
	MARK_SHA=$(sha256sum <"$1")
	MARK_LOG=$(fsx cat "$MNT/.pisessionfs/log" | wc -l)
}

# expect_same WHAT: the session file is byte-identical since mark.
expect_same() {
	assert_eq "$1: session file unchanged (sha256)" "$MARK_SHA" "$(sha256sum <"$MARK_FILE")"
}

# new_log: the log lines since mark.
new_log() {
	fsx cat "$MNT/.pisessionfs/log" | tail -n +$((MARK_LOG + 1))
}

# refuse WHAT EXPECTED REL TEXT CALL ARGS...: CALL must give EXPECTED, the
# session file must not change, the log must get a "refused" line naming
# the session's path REL ("-": no log line at all, for what the kernel
# refuses or what is not a refusal of history), and when TEXT is not "-"
# exactly one new file N-basename(REL) in rejected/ holding TEXT's bytes,
# named in that log line.
refuse() {
	local what=$1 want=$2 rel=$3 text=$4
	shift 4
	local before after added log
	mark "$F"
	before=$(ls_names "$MNT/.pisessionfs/rejected" | sort)
	op "$what" "$want" "$@"
	expect_same "$what"
	log=$(new_log)
	if [[ $rel == - ]]; then
		assert_eq "$what: nothing in the log" "" "$(grep refused <<<"$log" || true)"
	else
		local line
		line=$(grep -F "refused" <<<"$log" | grep -F "/$PROJ/$SN/$rel" || true)
		if [[ -n $line ]]; then
			pass
		else
			fail "$what: no 'refused ... /$PROJ/$SN/$rel' line in the log; new lines: $(show "$log")"
		fi
	fi
	[[ $text == - ]] && return 0
	after=$(ls_names "$MNT/.pisessionfs/rejected" | sort)
	added=$(comm -13 <(printf '%s\n' "$before") <(printf '%s\n' "$after") | grep . || true)
	if [[ $added =~ ^[0-9]+-"${rel##*/}"$ ]]; then
		pass
		fsx cat "$MNT/.pisessionfs/rejected/$added" >"$T_DIR/kept" 2>&1 || true
		if cmp -s "$text" "$T_DIR/kept"; then
			pass
		else
			fail "$what: rejected/$added holds $(show "$(cat "$T_DIR/kept")"), not the text written $(show "$(cat "$text")")"
		fi
		assert_contains "$what: the log names the kept text" \
			"refused $MNT/$PROJ/$SN/$rel: " "$(grep -F "(your text is kept in $MNT/.pisessionfs/rejected/$added)" <<<"$log" || true)"
	else
		fail "$what: expected one new rejected/N-${rel##*/}, got $(show "$added")"
	fi
}

mount_fs "$STORE" "$MNT"
S=$MNT/$PROJ/$SN
U1=0001-user.aaaa0001.md
TR=0003-toolResult-bash.aaaa0003.md
CM=0004-custom_message.aaaa0004.md
assert_eq "the session as expected" \
	"0001-user.aaaa0001.md 0002-assistant.aaaa0002.md 0002~bbbb0002 $TR $CM context.json header.json labels leaf loadout.json name problems session.jsonl transcript.md tree.txt usage.json" \
	"$(ls_names "$S" | tr '\n' ' ' | sed 's/ $//')"

# --- EINVAL: what cannot be an entry ---------------------------------------------
fsx cat "$S/$U1" >"$T_DIR/u1.orig"
fsx cat "$S/$TR" >"$T_DIR/tr.orig"
fsx cat "$S/$CM" >"$T_DIR/cm.orig"

# changed FRONT-MATTER-SED ORIG NAME WHAT: writes ORIG with the sed
# expression applied over the entry NAME; must be refused EINVAL at close.
changed() {
	local expr=$1 orig=$2 name=$3 what=$4
	sed "$expr" "$orig" >"$T_DIR/changed"
	if cmp -s "$orig" "$T_DIR/changed"; then
		fail "$what: the sed expression $expr changed nothing (bad test)"
		return
	fi
	refuse "$what" close:EINVAL "$name" "$T_DIR/changed" write "$S/$name" "$T_DIR/changed"
	assert_same_bytes "$S/$name" "$orig"
}
changed 's/^role: user$/role: assistant/' "$T_DIR/u1.orig" "$U1" "changing role: in the front matter"
changed 's/^type: message$/type: custom_message/' "$T_DIR/u1.orig" "$U1" "changing type:"
changed 's/^id: aaaa0001$/id: aaaa0009/' "$T_DIR/u1.orig" "$U1" "changing id:"
changed 's/^parentId: null$/parentId: bbbb0002/' "$T_DIR/u1.orig" "$U1" "changing parentId:"
changed 's/^timestamp: 2026-01-01T00:00:01.000Z$/timestamp: 2026-01-01T00:00:09.000Z/' "$T_DIR/u1.orig" "$U1" "changing timestamp:"
changed 's/^toolCallId: call_1$/toolCallId: call_2/' "$T_DIR/tr.orig" "$TR" "changing toolCallId:"
changed 's/^toolName: bash$/toolName: read/' "$T_DIR/tr.orig" "$TR" "changing toolName:"
changed 's/^customType: note$/customType: other/' "$T_DIR/cm.orig" "$CM" "changing customType:"
changed 's/^role: user$/rôle user/' "$T_DIR/u1.orig" "$U1" "invalid front matter line"

# With an fsync before the close, the refusal is still the close's: fsync()
# only makes the text durable (docs/layout.md "fsync").
sed 's/^role: user$/role: system/' "$T_DIR/u1.orig" >"$T_DIR/changed"
refuse "changed role, fsync" close:EINVAL "$U1" "$T_DIR/changed" fsync "$S/$U1" "$T_DIR/changed"

# An entry emptied (open with O_TRUNC, nothing written): "an empty file".
: >"$T_DIR/empty"
refuse "emptying an entry" close:EINVAL "$U1" "$T_DIR/empty" openw "$S/$U1" trunc
assert_same_bytes "$S/$U1" "$T_DIR/u1.orig"

# New files that cannot be entries.
printf '{"role": "user", "content": "unfinished' >"$T_DIR/bad.json"
refuse "invalid JSON in a new .json" close:EINVAL bad.json "$T_DIR/bad.json" write "$S/bad.json" "$T_DIR/bad.json"
printf '{"content": "no type, no role"}\n' >"$T_DIR/norole.json"
refuse "a new .json with neither type nor role" close:EINVAL norole.json "$T_DIR/norole.json" write "$S/norole.json" "$T_DIR/norole.json"
printf '[1, 2, 3]\n' >"$T_DIR/array.json"
refuse "a new .json holding an array" close:EINVAL array.json "$T_DIR/array.json" write "$S/array.json" "$T_DIR/array.json"
printf '{"type":"no_such_type","data":1}\n' >"$T_DIR/unknown.json"
refuse "an unknown entry type" close:EINVAL unknown.json "$T_DIR/unknown.json" write "$S/unknown.json" "$T_DIR/unknown.json"
printf '{"type":"message","id":"aaaa0003","message":{"role":"user","content":"dup","timestamp":1767225609000}}\n' >"$T_DIR/dup.json"
refuse "a duplicate id" close:EINVAL dup.json "$T_DIR/dup.json" write "$S/dup.json" "$T_DIR/dup.json"
printf '{"type":"message","parentId":"ffff0000","message":{"role":"user","content":"lost","timestamp":1767225609000}}\n' >"$T_DIR/orphan.json"
refuse "a parent that does not exist" close:EINVAL orphan.json "$T_DIR/orphan.json" write "$S/orphan.json" "$T_DIR/orphan.json"
printf '{"role":"assistant","content":"not blocks"}\n' >"$T_DIR/badmsg.json"
refuse "an assistant message without its fields" close:EINVAL badmsg.json "$T_DIR/badmsg.json" write "$S/badmsg.json" "$T_DIR/badmsg.json"
printf -- '---\ntype: message\nrole: user\ncontent: string\nno separator here\n---\ntext\n' >"$T_DIR/bad.md"
refuse "invalid Markdown front matter in a new .md" close:EINVAL bad.md "$T_DIR/bad.md" write "$S/bad.md" "$T_DIR/bad.md"
printf -- '---\ntype: message\nrole: user\ncontent: string\n' >"$T_DIR/open.md"
refuse "front matter never closed in a new .md" close:EINVAL open.md "$T_DIR/open.md" write "$S/open.md" "$T_DIR/open.md"

# Raw appends: one bad line refuses them all.
{
	user_msg cccc0001 aaaa0004 "fine"
	printf 'not json at all\n'
} >"$T_DIR/raw.bad"
refuse "a raw append with an invalid line" close:EINVAL session.jsonl "$T_DIR/raw.bad" append "$S/session.jsonl" "$T_DIR/raw.bad"
printf '{"type":"message","id":"cccc0002","parentId":"aaaa0004","timestamp":"2026-01-01T00:00:09.000Z"}\n' >"$T_DIR/raw.nomsg"
refuse "a raw message line without its message" close:EINVAL session.jsonl "$T_DIR/raw.nomsg" append "$S/session.jsonl" "$T_DIR/raw.nomsg"

# A zero-byte new file is not an entry: it stays an in-memory file (editors
# create a file before they write it).
refuse "a zero-byte new file" ok - - excl "$S/zero.md" "$T_DIR/empty"
fsx_out stat -c '%s %F' "$S/zero.md"
assert_eq "the zero-byte file is there, empty" "0 regular empty file" "${OUT%$'\n'}"
assert_contains "the zero-byte file is listed" $'\nzero.md\n' "$(ls_names "$S")"$'\n'
refuse "removing the zero-byte file" ok - - unlink "$S/zero.md"
assert_missing "$S/zero.md"

# --- EPERM: history is append-only -------------------------------------------------
refuse "rm of an entry" unlink:EPERM "$U1" - unlink "$S/$U1"
assert_exists "$S/$U1"
refuse "rm of an entry in a branch" unlink:EPERM 0002~bbbb0002/0002-user.bbbb0002.md - unlink "$S/0002~bbbb0002/0002-user.bbbb0002.md"
refuse "rmdir of a real branch" rmdir:EPERM 0002~bbbb0002 - rmdir "$S/0002~bbbb0002"
# Renaming an entry to a name that is not an entry puts it aside (issue 11
# item 12, docs/layout.md "Editors' side files"): nothing appended, the copy
# holds its text, the entry's path looks absent until the copy comes back.
fsx cat "$S/$U1" >"$T_DIR/u1.orig"
mark "$F"
op "renaming an entry to a new name puts it aside" ok rename "$S/$U1" "$S/renamed.md"
expect_same "renaming an entry aside"
assert_same_bytes "$S/renamed.md" "$T_DIR/u1.orig"
assert_missing "$S/$U1"
op "renaming it back" ok rename "$S/renamed.md" "$S/$U1"
expect_same "renaming the copy back"
assert_exists "$S/$U1"
assert_missing "$S/renamed.md"
refuse "renaming an entry over another" rename:EPERM "$U1" - rename "$S/$U1" "$S/$TR"
refuse "truncate(2) of session.jsonl" truncate:EPERM session.jsonl - truncate "$S/session.jsonl" 0
refuse "open(O_TRUNC) of session.jsonl" open:EPERM session.jsonl - openw "$S/session.jsonl" trunc
refuse "writing inside session.jsonl" pwrite:EPERM session.jsonl - pwrite "$S/session.jsonl" 0 '{'
# (rm of session.jsonl moves the session to the trash: t_session_trash)
printf '{}\n' >"$T_DIR/obj.json"
refuse "writing context.json" open:EPERM context.json - write "$S/context.json" "$T_DIR/obj.json"
refuse "writing a branch's context.json" open:EPERM 0002~bbbb0002/context.json - write "$S/0002~bbbb0002/context.json" "$T_DIR/obj.json"
refuse "writing header.json" open:EPERM header.json - write "$S/header.json" "$T_DIR/obj.json"
refuse "writing entries/ID.json" open:EPERM entries/aaaa0001.json - write "$S/entries/aaaa0001.json" "$T_DIR/obj.json"
refuse "a new file in entries/" open:EPERM entries/new.json - write "$S/entries/new.json" "$T_DIR/obj.json"
refuse "writing problems" open:EPERM problems - write "$S/problems" "$T_DIR/obj.json"
refuse "rm of leaf" unlink:EPERM leaf - unlink "$S/leaf"
refuse "a regular file in labels/" open:EPERM labels/plain - write "$S/labels/plain" "$T_DIR/obj.json"

fsx_out stat -c %a "$S/$U1"
assert_eq "an entry's mode mirrors the session file's" "644" "${OUT%$'\n'}"
refuse "chmod 600 of an entry" chmod:EPERM "$U1" - chmod "$S/$U1" 600
fsx_out stat -c %a "$S/$U1"
assert_eq "the mode after the refused chmod" "644" "${OUT%$'\n'}"
refuse "chmod 644 (no change) of an entry" ok - - chmod "$S/$U1" 644
refuse "chown to another user" chown:EPERM "$U1" - chown "$S/$U1" 4321 4321
refuse "chown to the same owner" ok - - chown "$S/$U1" "$(stat -c %u "$F")" "$(stat -c %g "$F")"

# --- extended attributes -----------------------------------------------------------
refuse "setxattr user.x on an entry" setxattr:EOPNOTSUPP - - setxattr "$S/$U1" user.x 1
refuse "setting an ACL (system.posix_acl_access)" setacl:EOPNOTSUPP - - setacl "$S/$U1"
if ! command -v setfattr >/dev/null; then
	apt-get install -y attr >/dev/null 2>&1 || true
fi
if command -v setfattr >/dev/null; then
	mark "$F"
	assert_errno "Operation not supported" setfattr -n user.x -v 1 "$S/$U1"
	expect_same "setfattr"
else
	fail "setfattr is missing and the attr package could not be installed"
fi

# --- labels --------------------------------------------------------------------------
long=$(head -c 4096 /dev/zero | tr '\0' L)
refuse "a 4 KB label name" symlink:ENAMETOOLONG - - symlink ../$U1 "$S/labels/$long"
assert_eq "no label after the 4 KB name" "" "$(ls_names "$S/labels")"
printf 'ffff0000' >"$T_DIR/target"
refuse "a label on a missing id" symlink:EINVAL "labels/nolabel" "$T_DIR/target" symlink ffff0000 "$S/labels/nolabel"
printf '../0009-user.ffff0000.md' >"$T_DIR/target"
refuse "a label on a missing entry file" symlink:EINVAL "labels/nolabel2" "$T_DIR/target" symlink ../0009-user.ffff0000.md "$S/labels/nolabel2"
printf '../context.json' >"$T_DIR/target"
refuse "a label on a file that is not an entry" symlink:EINVAL "labels/nolabel3" "$T_DIR/target" symlink ../context.json "$S/labels/nolabel3"
assert_eq "no labels after the refusals" "" "$(ls_names "$S/labels")"

# --- mode bits: a session file another user may not write -------------------------
# As root every write goes through (as on the store's own files), so this
# runs as nobody, on a second mount with allow_other, from inside the
# session directory (nobody cannot traverse the test's private directories).
for m in 444 644; do
	f=$STORE/$PROJ/s-$m.jsonl
	{ header; user_msg aaaa0001 null "read only"; } >"$f"
	chmod $m "$f"
done
MNT2=$T_DIR/mnt2
mkdir -p "$MNT2"
mount_fs "$STORE" "$MNT2" -o allow_other
# as_nobody DIR CALL ARGS...: op.py as uid/gid 65534 in DIR; the source
# text comes on descriptor 3 (/dev/fd/3).
as_nobody() {
	local dir=$1
	shift
	RC=0
	OUT=$(cd "$dir" && timeout -s KILL "$TIMEOUT" setpriv --reuid=65534 --regid=65534 --clear-groups \
		/usr/bin/python3 -c "$(cat "$T_DIR/op.py")" "$@" 2>&1) || RC=$?
}
((EUID == 0)) || die "the mode-bit checks switch to uid 65534 and need root"
for m in 444 644; do
	f=$STORE/$PROJ/s-$m.jsonl
	d=$MNT2/$PROJ/s-$m
	fsx_out stat -c %a "$d/0001-user.aaaa0001.md"
	assert_eq "an entry of a $m session has mode $m" "$m" "${OUT%$'\n'}"
	sha=$(sha256sum <"$f")
	fsx cat "$d/0001-user.aaaa0001.md" | sed 's/^read only$/written anyway/' >"$T_DIR/ro.md"
	as_nobody "$d" write 0001-user.aaaa0001.md /dev/fd/3 3<"$T_DIR/ro.md"
	assert_eq "nobody editing an entry of a root-owned $m session" "open:EACCES" "$OUT"
	as_nobody "$d" write new.md /dev/fd/3 3<"$T_DIR/ro.md"
	assert_eq "nobody making a new file in a root-owned $m session" "open:EACCES" "$OUT"
	as_nobody "$d" symlink ../0001-user.aaaa0001.md labels/l
	assert_eq "nobody adding a label to a root-owned $m session" "symlink:EACCES" "$OUT"
	assert_eq "the $m session is unchanged" "$sha" "$(sha256sum <"$f")"
done
as_nobody "$MNT2/$PROJ/s-444" openw 0001-user.aaaa0001.md trunc
assert_eq "nobody can read but not open for writing" "open:EACCES" "$OUT"

finish
