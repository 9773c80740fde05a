#!/usr/bin/env bash
# Every write operation of docs/layout.md ("Writing: every change is an
# appended entry"), done with ordinary tools on a real mount: new files,
# edits (>>, >, tee, cp, Python, sed -i), .json entries, branches, labels,
# the name, raw appends; and issue 11's items 3 (the same new name twice),
# 8 (files that are neither entries nor side files) and 12 (new files and
# `name` saved by rename, install and rsync --inplace, stale handles).  Every appended line is checked field by field
# (ids, parents, timestamps, key order) in the store's file itself, and every
# "nothing appended" by the sha256 of that file.
# shellcheck disable=SC2016 # 'bash -c' scripts get their arguments as $1...
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh" "$@"

# The interpreter itself, not a version manager's shim (which costs 0.2 s a
# call).
PY=$(python3 -c 'import sys; print(sys.executable)')

PROJ=--home-u-w--
mkdir -p "$STORE/$PROJ"

# --- helpers of the write tests ---------------------------------------------

# The base session of every group:
#   aaaa0001 user "alpha one" (root)
#   aaaa0002 assistant "reply one"
#   aaaa0003 user "alpha two"      bbbb0003 user "beta two" (0003~bbbb0003)
#   aaaa0004 assistant "reply two" bbbb0004 assistant "beta reply"
# The session directory's tip is aaaa0004; the leaf (last line) bbbb0004.
mksession() {
	local f=$STORE/$PROJ/$1.jsonl
	{
		header
		alpha_turns
		user_msg bbbb0003 aaaa0002 "beta two"
		asst_msg bbbb0004 bbbb0003 "beta reply"
	} >"$f"
	chmod 644 "$f"
}

# What asst_msg writes as the message, with TEXT (JSON-escaped by the caller)
# and message timestamp TS.
asst_json() {
	printf '{"role":"assistant","content":[{"type":"text","text":"%s"}],"api":"x","provider":"p","model":"m","usage":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"totalTokens":0,"cost":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"total":0}},"stopReason":"stop","timestamp":%s}' \
		"$1" "$2"
}

# Checks the lines appended to a session file since `mark`, against a JSON
# array of expected entries.  Every field must be there with that value and
# no other field (deep, types included), and placeholders stand for values
# the daemon makes: "@id" a fresh 8-hex id (not in the file before, not
# repeated), "@ts" an ISO timestamp (ms, Z) within 5 minutes of now, "@ms"
# Unix ms within 5 minutes of now, "@int" any integer, "@newN" the id of
# appended line N (0-based).  Each appended line starts with type, id,
# parentId, timestamp (pi's order).  Prints the new ids.
cp "$(dirname "$0")/check_append.py" "$T_DIR/check.py"

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

# run_sh WHAT SCRIPT ARGS...: a shell command line (bash -c) under fsx; it must
# succeed.
run_sh() {
	local what=$1 script=$2
	shift 2
	fsx_out bash -c "$script" _ "$@"
	if ((RC == 0)); then
		pass
	else
		fail "$what: '$script' failed ($RC): $(show "$ERR")"
	fi
}

# mark FILE: remembers the session file's lines and sha256.
mark() {
	MARK_FILE=$1
	MARK_LINES=$(wc -l <"$1")
	MARK_SHA=$(sha256sum <"$1")
	MARK_LOG=$(fsx cat "$MNT/.pisessionfs/log" | wc -l)
}

# expect_new WHAT JSON-ARRAY: the lines appended since mark are these
# entries (check.py); NEW_IDS gets their ids.
expect_new() {
	local out
	NEW_IDS=()
	if out=$("$PY" -I -S "$T_DIR/check.py" "$MARK_FILE" "$MARK_LINES" "$2" 2>&1); then
		pass
		read -r -a NEW_IDS <<<"$out"
	else
		fail "$1: $out"
	fi
}

# expect_same WHAT: the session file is byte-identical since mark.
expect_same() {
	assert_eq "$1: session file unchanged (sha256)" "$MARK_SHA" "$(sha256sum <"$MARK_FILE")"
}

# expect_no_refusal WHAT: no "refused" line in the log since mark.
expect_no_refusal() {
	local new
	new=$(fsx cat "$MNT/.pisessionfs/log" | tail -n +$((MARK_LOG + 1)) | grep refused || true)
	assert_eq "$1: no refusal in the log" "" "$new"
}

# not_listed PATH: the directory of PATH does not list its name (a new
# file that became an entry: its name still answers for a while, unlisted).
not_listed() {
	local listing
	listing=$(ls_names "$(dirname "$1")")
	if grep -qxF -- "$(basename "$1")" <<<"$listing"; then
		fail "$1 is still listed"
	else
		pass
	fi
}

# need PACKAGE COMMAND: installs PACKAGE when COMMAND is missing; a
# missing tool fails the test (it is promised), it does not skip it.
need() {
	command -v "$2" >/dev/null && return 0
	timeout 600 apt-get install -y "$1" >"$T_DIR/apt.log" 2>&1 || true
	command -v "$2" >/dev/null && return 0
	fail "$2 is missing and apt-get install $1 failed: $(tail -3 "$T_DIR/apt.log")"
	return 1
}

# content_of FILE: the bytes of FILE through the mount into $CONTENT
# (trailing newlines kept).
content_of() {
	fsx_out cat -- "$1"
	CONTENT=$OUT
}

# --- the sessions ---------------------------------------------------------------
for s in new edit json branch label name raw again side renamed install rename-name stale; do
	mksession "s-$s"
done
mount_fs "$STORE" "$MNT"
D=$MNT/$PROJ

# --- echo text > DIR/new.md ---------------------------------------------------
S=$D/s-new
F=$STORE/$PROJ/s-new.jsonl
mark "$F"
run_sh "echo > new.md" 'echo text >"$1"' "$S/new.md"
expect_new "echo text > new.md: a user message under the directory's tip" \
	'[{"type":"message","id":"@id","parentId":"aaaa0004","timestamp":"@ts","message":{"role":"user","content":"text","timestamp":"@ms"}}]'
id=${NEW_IDS[0]:-none}
assert_exists "$S/0005-user.$id.md"
not_listed "$S/new.md"
fsx_out readlink "$S/leaf"
assert_eq "echo > new.md: leaf points to the new entry" "0005-user.$id.md" "${OUT%$'\n'}"
assert_file_content "$S/entries/$id.json" "$(tail -1 "$F")"$'\n'
content_of "$S/0005-user.$id.md"
assert_contains "echo > new.md: the entry file shows the text" $'---\ntext\n' "$CONTENT"
expect_no_refusal "echo > new.md"
# Two writes make two entries, the second under the first.
mark "$F"
run_sh "printf > second.md" 'printf "two\nlines\n\n" >"$1"' "$S/second.md"
expect_new "second new file: child of the first (one final newline dropped)" \
	"[{\"type\":\"message\",\"id\":\"@id\",\"parentId\":\"$id\",\"timestamp\":\"@ts\",\"message\":{\"role\":\"user\",\"content\":\"two\\nlines\\n\",\"timestamp\":\"@ms\"}}]"
# A new file in a new .md with front matter: the entry it describes.
mark "$F"
prev=${NEW_IDS[0]:-none}
printf -- '---\ntype: custom_message\ncustomType: note\ncontent: string\ndisplay: false\n---\nremember this\n' >"$T_DIR/fm.md"
run_sh "cp front-matter file" 'cp "$1" "$2"' "$T_DIR/fm.md" "$S/fm.md"
expect_new "new .md with front matter: the entry it describes" \
	"[{\"type\":\"custom_message\",\"id\":\"@id\",\"parentId\":\"$prev\",\"timestamp\":\"@ts\",\"customType\":\"note\",\"content\":\"remember this\",\"display\":false}]"
not_listed "$S/fm.md"

# --- edits of entry files ------------------------------------------------------
S=$D/s-edit
F=$STORE/$PROJ/s-edit.jsonl
U3=$S/0003-user.aaaa0003.md
content_of "$U3"
orig_u3=$CONTENT

mark "$F"
run_sh "echo >> entry" 'echo more >>"$1"' "$U3"
expect_new "echo >> entry: a sibling with the text appended" \
	'[{"type":"message","id":"@id","parentId":"aaaa0002","timestamp":"@ts","message":{"role":"user","content":"alpha two\nmore","timestamp":"@int"}}]'
id=${NEW_IDS[0]:-none}
assert_exists "$S/0003~$id/0003-user.$id.md"
fsx_out readlink "$S/leaf"
assert_eq "echo >> entry: leaf is the sibling" "0003~$id/0003-user.$id.md" "${OUT%$'\n'}"
content_of "$U3"
assert_eq "echo >> entry: the original file is unchanged" "$orig_u3" "$CONTENT"
expect_no_refusal "echo >> entry"

# tee: rewrites the first entry (a root): the sibling is a new root.
U1=$S/0001-user.aaaa0001.md
content_of "$U1"
printf '%s' "$CONTENT" | sed 's/^alpha one$/alpha tee/' >"$T_DIR/u1.md"
mark "$F"
run_sh "tee entry" 'tee "$2" <"$1" >/dev/null' "$T_DIR/u1.md" "$U1"
expect_new "tee entry: a sibling root" \
	'[{"type":"message","id":"@id","parentId":null,"timestamp":"@ts","message":{"role":"user","content":"alpha tee","timestamp":"@int"}}]'
id=${NEW_IDS[0]:-none}
assert_exists "$S/0001~$id/0001-user.$id.md"
expect_no_refusal "tee entry"

# cp file entry.md
A2=$S/0002-assistant.aaaa0002.md
content_of "$A2"
printf '%s' "$CONTENT" | sed 's/^reply one$/reply copied/' >"$T_DIR/a2.md"
mark "$F"
run_sh "cp file entry" 'cp "$1" "$2"' "$T_DIR/a2.md" "$A2"
expect_new "cp file entry: a sibling assistant message" \
	"[{\"type\":\"message\",\"id\":\"@id\",\"parentId\":\"aaaa0001\",\"timestamp\":\"@ts\",\"message\":$(asst_json "reply copied" '"@int"')}]"
id=${NEW_IDS[0]:-none}
assert_exists "$S/0002~$id/0002-assistant.$id.md"
expect_no_refusal "cp file entry"

# Python open(entry, "w")
A4=$S/0004-assistant.aaaa0004.md
content_of "$A4"
printf '%s' "$CONTENT" | sed 's/^reply two$/reply from python/' >"$T_DIR/a4.md"
mark "$F"
run_sh "python open w" 'python3 -c "import sys; open(sys.argv[2], \"w\").write(open(sys.argv[1]).read())" "$1" "$2"' "$T_DIR/a4.md" "$A4"
expect_new "python open(entry, w): a sibling" \
	"[{\"type\":\"message\",\"id\":\"@id\",\"parentId\":\"aaaa0003\",\"timestamp\":\"@ts\",\"message\":$(asst_json "reply from python" '"@int"')}]"
expect_no_refusal "python open(entry, w)"

# sed -i on an entry in a branch directory
B3=$S/0003~bbbb0003/0003-user.bbbb0003.md
before_ls=$(ls_names "$S/0003~bbbb0003")
mark "$F"
run_sh "sed -i entry" 'sed -i "s/^beta two$/beta sed/" "$1"' "$B3"
expect_new "sed -i entry: a sibling" \
	'[{"type":"message","id":"@id","parentId":"aaaa0002","timestamp":"@ts","message":{"role":"user","content":"beta sed","timestamp":"@int"}}]'
id=${NEW_IDS[0]:-none}
assert_eq "sed -i: no sed temp file left, the branch directory is as it was" "$before_ls" "$(ls_names "$S/0003~bbbb0003")"
assert_exists "$S/0003~$id/0003-user.$id.md"
content_of "$B3"
assert_contains "sed -i: the original entry is unchanged" $'\nbeta two\n' "$CONTENT"
expect_no_refusal "sed -i entry"

# A shell rewrite (cat edited > entry): the shell opens with O_TRUNC and
# closes a duplicate descriptor before writing; that must not count.
B4=$S/0003~bbbb0003/0004-assistant.bbbb0004.md
content_of "$B4"
printf '%s' "$CONTENT" | sed 's/^beta reply$/beta redirected/' >"$T_DIR/b4.md"
mark "$F"
run_sh "cat > entry" 'cat "$1" >"$2"' "$T_DIR/b4.md" "$B4"
expect_new "cat edited > entry: one sibling" \
	"[{\"type\":\"message\",\"id\":\"@id\",\"parentId\":\"bbbb0003\",\"timestamp\":\"@ts\",\"message\":$(asst_json "beta redirected" '"@int"')}]"
expect_no_refusal "cat edited > entry"

# An unchanged save appends nothing.
content_of "$B4"
printf '%s' "$CONTENT" >"$T_DIR/same.md"
mark "$F"
run_sh "cp unchanged" 'cp "$1" "$2"' "$T_DIR/same.md" "$B4"
expect_same "unchanged save"
expect_no_refusal "unchanged save"

# --- new .json files -----------------------------------------------------------
S=$D/s-json
F=$STORE/$PROJ/s-json.jsonl
msg=$(asst_json "from json" 1767225700000)
printf '%s\n' "$msg" >"$T_DIR/msg.json"
mark "$F"
run_sh "cp AgentMessage json" 'cp "$1" "$2"' "$T_DIR/msg.json" "$S/reply.json"
expect_new "new .json AgentMessage: a message entry under the tip" \
	"[{\"type\":\"message\",\"id\":\"@id\",\"parentId\":\"aaaa0004\",\"timestamp\":\"@ts\",\"message\":$msg}]"
j1=${NEW_IDS[0]:-none}
assert_exists "$S/0005-assistant.$j1.md"
not_listed "$S/reply.json"

printf '{"type":"custom_message","customType":"ext","content":[{"type":"text","text":"hi"}],"display":true,"details":{"n":1}}' >"$T_DIR/cm.json"
mark "$F"
run_sh "cp full entry json" 'cp "$1" "$2"' "$T_DIR/cm.json" "$S/cm.json"
expect_new "new .json full entry (custom_message): id, parentId, timestamp filled in" \
	"[{\"type\":\"custom_message\",\"id\":\"@id\",\"parentId\":\"$j1\",\"timestamp\":\"@ts\",\"customType\":\"ext\",\"content\":[{\"type\":\"text\",\"text\":\"hi\"}],\"display\":true,\"details\":{\"n\":1}}]"
j2=${NEW_IDS[0]:-none}
assert_exists "$S/0006-custom_message.$j2.md"

printf '{"type":"message","parentId":"aaaa0002","message":{"role":"user","content":"given parent","timestamp":1767225800000}}\n' >"$T_DIR/gp.json"
mark "$F"
run_sh "cp json with parentId" 'cp "$1" "$2"' "$T_DIR/gp.json" "$S/gp.json"
expect_new "new .json with a given parentId: hangs there" \
	'[{"type":"message","id":"@id","parentId":"aaaa0002","timestamp":"@ts","message":{"role":"user","content":"given parent","timestamp":1767225800000}}]'
id=${NEW_IDS[0]:-none}
assert_exists "$S/0003~$id/0003-user.$id.md"
printf '{"type":"message","id":"cafe0001","timestamp":"2026-01-02T00:00:00.000Z","message":{"role":"user","content":"own id","timestamp":1767312000000}}\n' >"$T_DIR/own.json"
mark "$F"
run_sh "cp json with its own id and timestamp" 'cp "$1" "$2"' "$T_DIR/own.json" "$S/own.json"
expect_new "new .json with id and timestamp: both kept, parent filled in" \
	"[{\"type\":\"message\",\"id\":\"cafe0001\",\"parentId\":\"$j2\",\"timestamp\":\"2026-01-02T00:00:00.000Z\",\"message\":{\"role\":\"user\",\"content\":\"own id\",\"timestamp\":1767312000000}}]"
assert_exists "$S/0007-user.cafe0001.md"
expect_no_refusal "new .json files"

# --- branches -----------------------------------------------------------------
S=$D/s-branch
F=$STORE/$PROJ/s-branch.jsonl
mark "$F"
run_sh "new file in a branch directory" 'echo "in branch" >"$1"' "$S/0003~bbbb0003/x.md"
expect_new "new file in NNNN~id: child of that branch's tip" \
	'[{"type":"message","id":"@id","parentId":"bbbb0004","timestamp":"@ts","message":{"role":"user","content":"in branch","timestamp":"@ms"}}]'
id=${NEW_IDS[0]:-none}
assert_exists "$S/0003~bbbb0003/0005-user.$id.md"

mark "$F"
assert_true "mkdir 0003~try" mkdir "$S/0003~try"
expect_same "mkdir of a pending branch"
assert_eq "the pending branch is empty" "" "$(ls_names "$S/0003~try")"
assert_contains "the pending branch is listed" $'\n0003~try\n' "$(ls_names "$S")"
run_sh "file into the pending branch" 'echo "tried" >"$1"' "$S/0003~try/t.md"
expect_new "file in a pending branch: child of the depth-2 entry, then its label" \
	'[{"type":"message","id":"@id","parentId":"aaaa0002","timestamp":"@ts","message":{"role":"user","content":"tried","timestamp":"@ms"}},{"type":"label","id":"@id","parentId":"@new0","timestamp":"@ts","targetId":"@new0","label":"try"}]'
id=${NEW_IDS[0]:-none}
listing=$(ls_names "$S")
assert_contains "the branch is listed by its label" $'\n0003~try\n' "$listing"
if [[ $listing == *"0003~$id"* ]]; then
	fail "the labelled branch is also listed as 0003~$id"
else
	pass
fi
assert_exists "$S/0003~try/0003-user.$id.md"
assert_exists "$S/0003~$id/0003-user.$id.md"
not_listed "$S/0003~try/t.md"
fsx_out readlink "$S/labels/try"
assert_eq "labels/try" "../0003~try/0003-user.$id.md" "${OUT%$'\n'}"

mark "$F"
assert_true "mkdir 0001~fresh" mkdir "$S/0001~fresh"
run_sh "file into a pending root" 'echo "new root" >"$1"' "$S/0001~fresh/r.md"
expect_new "file in a pending 0001~name: a new root, then its label" \
	'[{"type":"message","id":"@id","parentId":null,"timestamp":"@ts","message":{"role":"user","content":"new root","timestamp":"@ms"}},{"type":"label","id":"@id","parentId":"@new0","timestamp":"@ts","targetId":"@new0","label":"fresh"}]'
id=${NEW_IDS[0]:-none}
assert_exists "$S/0001~fresh/0001-user.$id.md"

mark "$F"
assert_true "mkdir 0004~tmp" mkdir "$S/0004~tmp"
op "rmdir of an empty pending branch" ok rmdir "$S/0004~tmp"
assert_missing "$S/0004~tmp"
expect_same "mkdir + rmdir of a pending branch"
op "rmdir of a real branch" rmdir:EPERM rmdir "$S/0003~bbbb0003"
expect_same "rmdir of a real branch"
assert_exists "$S/0003~bbbb0003/0003-user.bbbb0003.md"

# --- labels -------------------------------------------------------------------
S=$D/s-label
F=$STORE/$PROJ/s-label.jsonl
mark "$F"
assert_true "ln -s ../ENTRY labels/x" ln -s ../0002-assistant.aaaa0002.md "$S/labels/x"
expect_new "ln -s ../ENTRY labels/x: a label entry, child of the leaf" \
	'[{"type":"label","id":"@id","parentId":"bbbb0004","timestamp":"@ts","targetId":"aaaa0002","label":"x"}]'
l1=${NEW_IDS[0]:-none}
fsx_out readlink "$S/labels/x"
assert_eq "readlink labels/x" "../0002-assistant.aaaa0002.md" "${OUT%$'\n'}"

mark "$F"
assert_true "ln -s ID labels/y" ln -s aaaa0003 "$S/labels/y"
expect_new "ln -s ID labels/y" \
	"[{\"type\":\"label\",\"id\":\"@id\",\"parentId\":\"$l1\",\"timestamp\":\"@ts\",\"targetId\":\"aaaa0003\",\"label\":\"y\"}]"
l2=${NEW_IDS[0]:-none}
fsx_out readlink "$S/labels/y"
assert_eq "readlink labels/y" "../0003-user.aaaa0003.md" "${OUT%$'\n'}"

mark "$F"
assert_true "ln -s /ABSOLUTE/PATH labels/abs" ln -s "$S/0003~bbbb0003/0004-assistant.bbbb0004.md" "$S/labels/abs"
expect_new "ln -s with an absolute path inside the session" \
	"[{\"type\":\"label\",\"id\":\"@id\",\"parentId\":\"$l2\",\"timestamp\":\"@ts\",\"targetId\":\"bbbb0004\",\"label\":\"abs\"}]"
la=${NEW_IDS[0]:-none}
fsx_out readlink "$S/labels/abs"
assert_eq "readlink labels/abs" "../0003~bbbb0003/0004-assistant.bbbb0004.md" "${OUT%$'\n'}"
mark "$F"
assert_true "rm labels/abs" rm "$S/labels/abs"
expect_new "rm labels/abs" \
	"[{\"type\":\"label\",\"id\":\"@id\",\"parentId\":\"$la\",\"timestamp\":\"@ts\",\"targetId\":\"bbbb0004\"}]"
l2=${NEW_IDS[0]:-none}

mark "$F"
assert_true "mv labels/x labels/z" mv "$S/labels/x" "$S/labels/z"
expect_new "mv labels/x labels/z: one label entry z on the same target" \
	"[{\"type\":\"label\",\"id\":\"@id\",\"parentId\":\"$l2\",\"timestamp\":\"@ts\",\"targetId\":\"aaaa0002\",\"label\":\"z\"}]"
l3=${NEW_IDS[0]:-none}
assert_eq "labels after mv" $'y\nz' "$(ls_names "$S/labels")"

# Onto a label of another entry: it is cleared there.
mark "$F"
assert_true "mv labels/z labels/y" mv "$S/labels/z" "$S/labels/y"
expect_new "mv labels/z labels/y (y on another entry): clear it there, then y" \
	"[{\"type\":\"label\",\"id\":\"@id\",\"parentId\":\"$l3\",\"timestamp\":\"@ts\",\"targetId\":\"aaaa0003\"},{\"type\":\"label\",\"id\":\"@id\",\"parentId\":\"@new0\",\"timestamp\":\"@ts\",\"targetId\":\"aaaa0002\",\"label\":\"y\"}]"
l4=${NEW_IDS[1]:-none}
assert_eq "labels after mv over" "y" "$(ls_names "$S/labels")"
fsx_out readlink "$S/labels/y"
assert_eq "readlink labels/y after mv over" "../0002-assistant.aaaa0002.md" "${OUT%$'\n'}"

mark "$F"
assert_true "rm labels/y" rm "$S/labels/y"
expect_new "rm labels/y: the label entry that clears it" \
	"[{\"type\":\"label\",\"id\":\"@id\",\"parentId\":\"$l4\",\"timestamp\":\"@ts\",\"targetId\":\"aaaa0002\"}]"
assert_eq "labels after rm" "" "$(ls_names "$S/labels")"
expect_no_refusal "labels"

# One label per entry (pi keeps the latest label entry of a target): a
# second link onto a labelled entry is refused (EMLINK, "Too many links"),
# not obeyed by silently removing the first; the log names the label it
# has and says how to rename or remove it.  ln -sf links a temporary name
# (Cu + 6 characters) first and renames it over: that temporary lives in
# memory, and the rename is the one change, so ln -sf is refused the same
# way when the entry carries another label, changes nothing when the
# label is there already, and moves a label onto an unlabelled entry in
# one append (the label cleared where it was, set where it goes).
U1=0001-user.aaaa0001.md
A2=0002-assistant.aaaa0002.md
A4=0004-assistant.aaaa0004.md
assert_true "ln -s ../ENTRY labels/one" ln -s ../$A2 "$S/labels/one"
mark "$F"
fsx_out ln -s ../$A2 "$S/labels/two"
assert_eq "ln -s onto an entry with a label: fails" 1 "$RC"
assert_contains "ln -s onto an entry with a label: ln says" "Too many links" "$ERR"
expect_same "a second label on one entry"
fsx_out bash -c 'tail -n +$(($1 + 1)) "$2" | grep refused' _ "$MARK_LOG" "$MNT/.pisessionfs/log"
assert_contains "a second label: the log says why" \
	"refused symlink $MNT/$PROJ/s-label/labels/two: $A2 already has the label one, and an entry has one label; mv labels/one labels/two renames it, or rm labels/one first" "$OUT"
assert_eq "a second label: labels/ unchanged" "one" "$(ls_names "$S/labels")"
op "symlink onto an entry with a label (errno)" symlink:EMLINK symlink ../$A2 "$S/labels/two"
fsx_out ln -s aaaa0002 "$S/labels/two"
assert_eq "ln -s ID onto an entry with a label: fails" 1 "$RC"
expect_same "a second label on one entry, by id"
# ln -sf onto the entry's own label: nothing to do; onto another name: refused.
assert_true "ln -s ../ENTRY labels/other" ln -s ../$U1 "$S/labels/other"
mark "$F"
assert_true "ln -sf ENTRY labels/ITS-LABEL: succeeds" ln -sf ../$A2 "$S/labels/one"
expect_same "ln -sf ENTRY labels/ITS-LABEL"
fsx_out ln -sf ../$A2 "$S/labels/other"
assert_eq "ln -sf onto another label, from a labelled entry: fails" 1 "$RC"
expect_same "ln -sf from a labelled entry"
fsx_out readlink "$S/labels/other"
assert_eq "ln -sf refused: labels/other unchanged" "../$U1" "${OUT%$'\n'}"
# ln -sf from an unlabelled entry: the label moves there.
mark "$F"
prev=$(tail -1 "$F" | "$PY" -I -S -c 'import json, sys; print(json.load(sys.stdin)["id"])')
assert_true "ln -sf UNLABELLED labels/other" ln -sf ../$A4 "$S/labels/other"
expect_new "ln -sf: one append, the label cleared where it was and set where it goes" \
	"[{\"type\":\"label\",\"id\":\"@id\",\"parentId\":\"$prev\",\"timestamp\":\"@ts\",\"targetId\":\"aaaa0001\"},{\"type\":\"label\",\"id\":\"@id\",\"parentId\":\"@new0\",\"timestamp\":\"@ts\",\"targetId\":\"aaaa0004\",\"label\":\"other\"}]"
fsx_out readlink "$S/labels/other"
assert_eq "ln -sf moved labels/other" "../$A4" "${OUT%$'\n'}"
assert_eq "labels after ln -sf" $'one\nother' "$(ls_names "$S/labels")"
expect_no_refusal "ln -sf from an unlabelled entry"
# The ways the log gives still work: mv renames, rm then ln -s.
mark "$F"
prev=$(tail -1 "$F" | "$PY" -I -S -c 'import json, sys; print(json.load(sys.stdin)["id"])')
assert_true "mv labels/one labels/two" mv "$S/labels/one" "$S/labels/two"
expect_new "mv labels/one labels/two: the label renamed" \
	"[{\"type\":\"label\",\"id\":\"@id\",\"parentId\":\"$prev\",\"timestamp\":\"@ts\",\"targetId\":\"aaaa0002\",\"label\":\"two\"}]"
assert_true "rm labels/two" rm "$S/labels/two"
assert_true "ln -s after rm" ln -s ../$A2 "$S/labels/three"
assert_eq "labels after mv, rm, ln -s" $'other\nthree' "$(ls_names "$S/labels")"
expect_no_refusal "mv, rm, ln -s"

# --- name -----------------------------------------------------------------------
S=$D/s-name
F=$STORE/$PROJ/s-name.jsonl
mark "$F"
run_sh "echo > name" 'echo "Refactor auth" >"$1"' "$S/name"
expect_new "echo \"Refactor auth\" > name: one session_info entry" \
	'[{"type":"session_info","id":"@id","parentId":"bbbb0004","timestamp":"@ts","name":"Refactor auth"}]'
assert_file_content "$S/name" $'Refactor auth\n'

mark "$F"
last=$(tail -1 "$F" | "$PY" -I -S -c 'import json,sys; print(json.loads(sys.stdin.read())["id"])')
run_sh "multi-line name" 'printf "  Multi\nline\r\n\nname \n" >"$1"' "$S/name"
expect_new "multi-line name: folded and trimmed" \
	"[{\"type\":\"session_info\",\"id\":\"@id\",\"parentId\":\"$last\",\"timestamp\":\"@ts\",\"name\":\"Multi line name\"}]"
assert_file_content "$S/name" $'Multi line name\n'

mark "$F"
run_sh "same name (shell)" 'echo "Multi line name" >"$1"' "$S/name"
expect_same "echo of the same name"
mark "$F"
op "same name (Python, one open)" ok write "$S/name" <(printf 'Multi line name\n')
expect_same "python write of the same name"

mark "$F"
last=$(tail -1 "$F" | "$PY" -I -S -c 'import json,sys; print(json.loads(sys.stdin.read())["id"])')
run_sh ": > name" ': >"$1"' "$S/name"
expect_new ": > name: clears it" \
	"[{\"type\":\"session_info\",\"id\":\"@id\",\"parentId\":\"$last\",\"timestamp\":\"@ts\",\"name\":\"\"}]"
assert_file_content "$S/name" ""
expect_no_refusal "name"

# "fsynced before close() returns success": the clearing entry of a name
# emptied by writing an empty line to it (`echo > name`) must be in the
# file when close() returns, every time; read straight from the store,
# right away.  (Emptied with O_TRUNC alone, nothing written, it takes
# effect at the last close, which the kernel reports after close()
# returns; fsync() makes a draft durable, it appends nothing:
# docs/layout.md.)
cat >"$T_DIR/clear.py" <<'EOF'
import os, sys
name, store = sys.argv[1], sys.argv[2]
late = 0
for i in range(20):
    fd = os.open(name, os.O_WRONLY | os.O_TRUNC)
    os.write(fd, b"Named %d\n" % i)
    os.close(fd)
    fd = os.open(name, os.O_WRONLY | os.O_TRUNC)
    os.write(fd, b"\n")
    os.close(fd)
    last = open(store, "rb").read().rstrip(b"\n").rsplit(b"\n", 1)[-1]
    if b'"type":"session_info"' not in last or b'"name":""' not in last:
        late += 1
print(f"{late} of 20")
EOF
fsx_out "$PY" -I -S "$T_DIR/clear.py" "$S/name" "$F"
assert_eq "emptying name with an empty line: the clearing entry is in the file when close() returns" "0 of 20" \
	"${OUT%$'\n'}${ERR:+ $ERR}"

# --- the same new name twice (issue 11 item 3) -----------------------------------
# The kernel still knows next.md after the first write committed it, and
# sends OPEN, not CREATE: the second write must be a new message too.
S=$D/s-again
F=$STORE/$PROJ/s-again.jsonl
mark "$F"
run_sh "echo a > next.md; echo b > next.md" 'cd "$1" && echo a >next.md && echo b >next.md' "$S"
expect_new "the same new name twice: two messages, the second under the first" \
	'[{"type":"message","id":"@id","parentId":"aaaa0004","timestamp":"@ts","message":{"role":"user","content":"a","timestamp":"@ms"}},{"type":"message","id":"@id","parentId":"@new0","timestamp":"@ts","message":{"role":"user","content":"b","timestamp":"@ms"}}]'
mark "$F"
op "Python open(next.md, w) right after" ok write "$S/next.md" <(printf 'c\n')
op "and once more" ok write "$S/next.md" <(printf 'd\n')
expect_new "Python writes the same new name twice: two messages" \
	"[{\"type\":\"message\",\"id\":\"@id\",\"parentId\":\"${NEW_IDS[1]:-none}\",\"timestamp\":\"@ts\",\"message\":{\"role\":\"user\",\"content\":\"c\",\"timestamp\":\"@ms\"}},{\"type\":\"message\",\"id\":\"@id\",\"parentId\":\"@new0\",\"timestamp\":\"@ts\",\"message\":{\"role\":\"user\",\"content\":\"d\",\"timestamp\":\"@ms\"}}]"
mark "$F"
run_sh "echo e >> next.md right after" 'echo e >>"$1"' "$S/next.md"
expect_new "appending to the name just written: a new message with only what was appended" \
	"[{\"type\":\"message\",\"id\":\"@id\",\"parentId\":\"${NEW_IDS[1]:-none}\",\"timestamp\":\"@ts\",\"message\":{\"role\":\"user\",\"content\":\"e\",\"timestamp\":\"@ms\"}}]"
# The name written keeps answering (stat, read) for a while, unlisted.
not_listed "$S/next.md"
content_of "$S/next.md"
assert_eq "the name just written reads what was written" $'e\n' "$CONTENT"
expect_no_refusal "the same new name twice"

# --- files that are neither entries nor side files (issue 11 item 8) --------------
S=$D/s-side
F=$STORE/$PROJ/s-side.jsonl
mark "$F"
op "echo hi > notes.txt is refused at create" open:EPERM write "$S/notes.txt" <(printf 'hi\n')
assert_missing "$S/notes.txt"
expect_same "notes.txt refused"
fsx_out cat "$MNT/.pisessionfs/log"
assert_contains "notes.txt: the log says why" "refused creating $MNT/$PROJ/s-side/notes.txt: a session holds entries" "$OUT"
run_sh "a side file .x" 'echo x >"$1"' "$S/.x"
op "renaming a side file to notes.txt is refused" rename:EPERM rename "$S/.x" "$S/notes.txt"
assert_missing "$S/notes.txt"
assert_exists "$S/.x"
# Tools' temporaries still work: mktemp's tmp.XXXXXXXXXX, names without a
# dot, *.tmp, backups.
for n in "tmp.AbCd123456" "4913" "sedAbC123" "f.tmp" "f.bak" "f.orig" "f~" "x.md___jb_tmp___"; do
	op "side file $n" ok write "$S/$n" <(printf 'side\n')
	op "removing side file $n" ok unlink "$S/$n"
done
fsx_out mktemp -p "$S"
assert_eq "mktemp -p SESSION" "0" "$RC${ERR:+ $ERR}"
[[ -n ${OUT%$'\n'} ]] && op "removing mktemp's file" ok unlink "${OUT%$'\n'}"
expect_same "side files"

# --- new files saved through a temporary name (issue 11 item 12) -----------------
S=$D/s-renamed
F=$STORE/$PROJ/s-renamed.jsonl
mark "$F"
run_sh "echo x > .tmp && mv .tmp new.md" 'cd "$1" && echo x >.tmp && mv .tmp new.md' "$S"
expect_new "mv .tmp new.md: the message, as a direct write" \
	'[{"type":"message","id":"@id","parentId":"aaaa0004","timestamp":"@ts","message":{"role":"user","content":"x","timestamp":"@ms"}}]'
prev=${NEW_IDS[0]:-none}
not_listed "$S/.tmp"
not_listed "$S/new.md"
mark "$F"
fsx_out "$PY" -I -S -c '
import os, sys, tempfile
fd, tmp = tempfile.mkstemp(dir=sys.argv[1])
os.write(fd, b"from python\n")
os.close(fd)
os.replace(tmp, os.path.join(sys.argv[1], "py.md"))
print("ok")' "$S"
assert_eq "python mkstemp + os.replace onto a new name" "ok" "${OUT%$'\n'}${ERR:+ $ERR}"
expect_new "python mkstemp + os.replace(new.md): the message" \
	"[{\"type\":\"message\",\"id\":\"@id\",\"parentId\":\"$prev\",\"timestamp\":\"@ts\",\"message\":{\"role\":\"user\",\"content\":\"from python\",\"timestamp\":\"@ms\"}}]"
prev=${NEW_IDS[0]:-none}
# A rename that is refused appends nothing, and the file stays.
mark "$F"
run_sh "invalid json side file" 'printf "{\n" >"$1"' "$S/.bad"
op "renaming invalid JSON to bad.json is refused" rename:EINVAL rename "$S/.bad" "$S/bad.json"
expect_same "refused rename"
assert_exists "$S/.bad"
fsx_out cat "$MNT/.pisessionfs/log"
assert_contains "the refused rename: the log says why" "refused $MNT/$PROJ/s-renamed/bad.json: not valid JSON" "$OUT"
mark "$F"
if need rsync rsync; then
	printf 'by rsync\n' >"$T_DIR/new.md"
	mark "$F"
	fsx_out rsync "$T_DIR/new.md" "$S/"
	assert_eq "rsync new.md SESSION/" "0" "$RC${ERR:+ $ERR}"
	expect_new "rsync new.md SESSION/: the message" \
		"[{\"type\":\"message\",\"id\":\"@id\",\"parentId\":\"$prev\",\"timestamp\":\"@ts\",\"message\":{\"role\":\"user\",\"content\":\"by rsync\",\"timestamp\":\"@ms\"}}]"
	prev=${NEW_IDS[0]:-none}
	mkdir -p "$T_DIR/dir"
	chmod 755 "$T_DIR/dir"
	printf 'first\n' >"$T_DIR/dir/a.md"
	printf 'second\n' >"$T_DIR/dir/b.md"
	mark "$F"
	fsx_out rsync -a "$T_DIR/dir/" "$S/"
	assert_eq "rsync -a dir/ SESSION/" "0" "$RC${ERR:+ $ERR}"
	expect_new "rsync -a dir/ SESSION/: one message per file" \
		"[{\"type\":\"message\",\"id\":\"@id\",\"parentId\":\"$prev\",\"timestamp\":\"@ts\",\"message\":{\"role\":\"user\",\"content\":\"first\",\"timestamp\":\"@ms\"}},{\"type\":\"message\",\"id\":\"@id\",\"parentId\":\"@new0\",\"timestamp\":\"@ts\",\"message\":{\"role\":\"user\",\"content\":\"second\",\"timestamp\":\"@ms\"}}]"
fi
expect_no_refusal "new files saved by rename"

# --- install and rsync --inplace: the name answers after the save ----------------
S=$D/s-install
F=$STORE/$PROJ/s-install.jsonl
printf 'installed\n' >"$T_DIR/inst.md"
mark "$F"
fsx_out install -m 644 "$T_DIR/inst.md" "$S/"
assert_eq "install -m 644 new.md SESSION/" "0" "$RC${ERR:+ $ERR}"
expect_new "install: exactly one message" \
	'[{"type":"message","id":"@id","parentId":"aaaa0004","timestamp":"@ts","message":{"role":"user","content":"installed","timestamp":"@ms"}}]'
prev=${NEW_IDS[0]:-none}
op "chmod of the name just saved" ok chmod "$S/inst.md" 600
if need rsync rsync; then
	printf 'in place\n' >"$T_DIR/inplace.md"
	mark "$F"
	fsx_out rsync -a --inplace "$T_DIR/inplace.md" "$S/"
	assert_eq "rsync -a --inplace new.md SESSION/" "0" "$RC${ERR:+ $ERR}"
	expect_new "rsync --inplace: exactly one message" \
		"[{\"type\":\"message\",\"id\":\"@id\",\"parentId\":\"$prev\",\"timestamp\":\"@ts\",\"message\":{\"role\":\"user\",\"content\":\"in place\",\"timestamp\":\"@ms\"}}]"
fi
expect_no_refusal "install and rsync --inplace"

# --- name saved by rename --------------------------------------------------------
S=$D/s-rename-name
F=$STORE/$PROJ/s-rename-name.jsonl
run_sh "echo > name" 'echo "First name" >"$1"' "$S/name"
mark "$F"
last=$(tail -1 "$F" | "$PY" -I -S -c 'import json,sys; print(json.loads(sys.stdin.read())["id"])')
run_sh "sed -i name" 'sed -i "s/First/Sed/" "$1"' "$S/name"
expect_new "sed -i name: a session_info entry" \
	"[{\"type\":\"session_info\",\"id\":\"@id\",\"parentId\":\"$last\",\"timestamp\":\"@ts\",\"name\":\"Sed name\"}]"
assert_file_content "$S/name" $'Sed name\n'
mark "$F"
run_sh "temp + rename onto name" 'cd "$1" && echo "Renamed name" >.n && mv .n name' "$S"
assert_file_content "$S/name" $'Renamed name\n'
if need libglib2.0-bin gio; then
	run_sh "gio save name" 'echo "Gio name" | gio save "$1"' "$S/name"
	assert_file_content "$S/name" $'Gio name\n'
fi
assert_eq "name by rename: one session_info per save" "$( (command -v gio >/dev/null && echo 4) || echo 3)" \
	"$(grep -c '"type":"session_info"' "$F")"
expect_no_refusal "name by rename"

# --- stale handles -------------------------------------------------------------------
# A descriptor opened on an entry before another program rename-saves it
# keeps working; under concurrent saves every sed that succeeds appended
# once and every one that fails appended nothing.
S=$D/s-stale
F=$STORE/$PROJ/s-stale.jsonl
E3=0003-user.aaaa0003.md
mark "$F"
fsx_out "$PY" -I -S -c '
import os, subprocess, sys
entry = sys.argv[1]
fd = os.open(entry, os.O_RDONLY)
subprocess.run(["sed", "-i", "s/^alpha two$/stale two/", entry], check=True)
st = os.fstat(fd)
data = os.read(fd, 1 << 16)
os.close(fd)
print("ok" if st.st_size > 0 and b"alpha two" in data else "bad")' "$S/$E3"
assert_eq "fstat and read of a descriptor opened before a rename-save" "ok" "${OUT%$'\n'}${ERR:+ $ERR}"
expect_new "the rename-save appended once" \
	'[{"type":"message","id":"@id","parentId":"aaaa0002","timestamp":"@ts","message":{"role":"user","content":"stale two","timestamp":"@int"}}]'
mark "$F"
fsx_out bash -c 'cd "$1"; for w in 1 2 3 4; do (for i in 1 2 3 4 5; do if sed -i "s/^alpha two\$/w$w-$i/" "$2" 2>>errs; then echo ok; else echo failed; fi; done) & done; wait' _ "$S" "$E3"
succeeded=$(grep -c '^ok$' <<<"$OUT" || true)
appended=$(( $(wc -l <"$F") - MARK_LINES ))
assert_eq "concurrent sed -i: one entry per sed that succeeded" "$succeeded" "$appended"

# --- raw appends ----------------------------------------------------------------
S=$D/s-raw
F=$STORE/$PROJ/s-raw.jsonl
{
	user_msg rrrr0001 aaaa0004 "raw one"
	asst_msg rrrr0002 rrrr0001 "raw two"
} >"$T_DIR/raw.ok"
cp "$F" "$T_DIR/raw.before"
mark "$F"
run_sh "cat >> session.jsonl" 'cat "$1" >>"$2"' "$T_DIR/raw.ok" "$S/session.jsonl"
cat "$T_DIR/raw.before" "$T_DIR/raw.ok" >"$T_DIR/raw.expected"
if cmp -s "$T_DIR/raw.expected" "$F"; then pass; else fail "cat >> session.jsonl: the file is not the old one plus the two lines byte for byte"; fi
assert_exists "$S/0006-assistant.rrrr0002.md"
expect_no_refusal "raw append"

# One invalid line among valid ones: nothing at all.
{
	user_msg rrrr0003 rrrr0002 "ok line"
	printf '{"type":"message","id":"rrrr0004",\n'
	user_msg rrrr0005 rrrr0003 "ok too"
} >"$T_DIR/raw.bad"
mark "$F"
op "raw append with an invalid line" close:EINVAL append "$S/session.jsonl" "$T_DIR/raw.bad"
expect_same "raw append with an invalid line"
user_msg rrrr0001 rrrr0002 "dup" >"$T_DIR/raw.dup"
op "raw append of a duplicate id" close:EINVAL append "$S/session.jsonl" "$T_DIR/raw.dup"
expect_same "raw append of a duplicate id"
user_msg rrrr0009 ffff0000 "orphan" >"$T_DIR/raw.orphan"
op "raw append with an unknown parent" close:EINVAL append "$S/session.jsonl" "$T_DIR/raw.orphan"
expect_same "raw append with an unknown parent"
# The valid lines still go in afterwards.
user_msg rrrr0003 rrrr0002 "after refusals" >"$T_DIR/raw.after"
mark "$F"
op "raw append after refusals" ok append "$S/session.jsonl" "$T_DIR/raw.after"
expect_new "raw append after refusals" \
	'[{"type":"message","id":"rrrr0003","parentId":"rrrr0002","timestamp":"2026-01-01T00:00:01.000Z","message":{"role":"user","content":"after refusals","timestamp":1767225601000}}]'

finish
