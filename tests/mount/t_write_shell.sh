#!/usr/bin/env bash
# Rewriting an entry file with the shell (docs/entry-format.md, "Rewriting
# with the shell"; docs/layout.md, "Writing"): `echo text > ENTRY.md`,
# `printf >`, `cat >`, `tee`, Python's open(f, "w").  A file without front
# matter is the entry's new text: exactly one entry is appended, a sibling
# of the original (same parentId) with the same role, metadata and other
# blocks and the new text, and pi 1.6.0's SessionManager loads the file
# and resumes from it.  The same text again appends nothing.  Entries with
# no text or several texts are refused: the session file stays
# byte-identical, the first write() fails with EINVAL (so echo, printf,
# cat and tee report it and exit 1; Python's close(), which makes its
# buffered write, raises it), a "refused" line in the log says why and how
# instead, and the text is kept in rejected/.
# shellcheck disable=SC2016 # 'bash -c' scripts get their arguments as $1...
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh" "$@"

PY=$(python3 -c 'import sys; print(sys.executable)')
ROOT=$(cd "$(dirname "$0")/../.." && pwd)

need_pi

PROJ=--home-u-w--
SN=s-shell
mkdir -p "$STORE/$PROJ"
F=$STORE/$PROJ/$SN.jsonl

usage='{"input":1,"output":2,"cacheRead":0,"cacheWrite":0,"totalTokens":3,"cost":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"total":0}}'
# aaaa0001 user (a string), aaaa0002 assistant (thinking and one text),
# aaaa0003 user (one text block and an image, as pi 1.6.0 writes),
# aaaa0004 custom_message, aaaa0005 branch_summary, aaaa0006 assistant
# (a tool call only), aaaa0007 model_change, aaaa0008 bashExecution
# (a command and an output), aaaa0009 assistant (two text blocks).
{
	header
	user_msg aaaa0001 null "alpha one"
	printf '{"type":"message","id":"aaaa0002","parentId":"aaaa0001","timestamp":"2026-01-01T00:00:02.000Z","message":{"role":"assistant","content":[{"type":"thinking","thinking":"hmm","thinkingSignature":"sig"},{"type":"text","text":"reply one"}],"api":"x","provider":"p","model":"m","usage":%s,"stopReason":"stop","timestamp":1767225602000}}\n' "$usage"
	printf '{"type":"message","id":"aaaa0003","parentId":"aaaa0002","timestamp":"2026-01-01T00:00:03.000Z","message":{"role":"user","content":[{"type":"text","text":"look"},{"type":"image","data":"iVBORw0KGgo=","mimeType":"image/png"}],"timestamp":1767225603000}}\n'
	printf '{"type":"custom_message","id":"aaaa0004","parentId":"aaaa0003","timestamp":"2026-01-01T00:00:04.000Z","customType":"note","content":"remember","display":true,"details":{"k":1}}\n'
	printf '{"type":"branch_summary","id":"aaaa0005","parentId":"aaaa0004","timestamp":"2026-01-01T00:00:05.000Z","fromId":"aaaa0002","summary":"tried A","fromHook":false}\n'
	printf '{"type":"message","id":"aaaa0006","parentId":"aaaa0005","timestamp":"2026-01-01T00:00:06.000Z","message":{"role":"assistant","content":[{"type":"toolCall","id":"call_1","name":"bash","arguments":{"command":"ls"}}],"api":"x","provider":"p","model":"m","usage":%s,"stopReason":"toolUse","timestamp":1767225606000}}\n' "$usage"
	printf '{"type":"model_change","id":"aaaa0007","parentId":"aaaa0006","timestamp":"2026-01-01T00:00:07.000Z","provider":"p","modelId":"m2"}\n'
	printf '{"type":"message","id":"aaaa0008","parentId":"aaaa0007","timestamp":"2026-01-01T00:00:08.000Z","message":{"role":"bashExecution","command":"ls","output":"a\\n","exitCode":0,"cancelled":false,"truncated":false,"timestamp":1767225608000}}\n'
	printf '{"type":"message","id":"aaaa0009","parentId":"aaaa0008","timestamp":"2026-01-01T00:00:09.000Z","message":{"role":"assistant","content":[{"type":"text","text":"first"},{"type":"text","text":"second"}],"api":"x","provider":"p","model":"m","usage":%s,"stopReason":"stop","timestamp":1767225609000}}\n' "$usage"
} >"$F"
chmod 644 "$F"

cp "$(dirname "$0")/check_append.py" "$T_DIR/check.py"

# mark: remembers the session file's lines and sha256 and the log's length.
mark() {
	MARK_LINES=$(wc -l <"$F")
	MARK_SHA=$(sha256sum <"$F")
	MARK_LOG=$(fsx cat "$MNT/.pisessionfs/log" | wc -l)
	MARK_REJ=$(ls_names "$MNT/.pisessionfs/rejected" | sort)
}

# new_log: the log lines since mark.
new_log() {
	fsx cat "$MNT/.pisessionfs/log" | tail -n +$((MARK_LOG + 1))
}

# expect_new WHAT JSON-ARRAY: the lines appended since mark are exactly
# these entries (check_append.py); NEW_ID gets the first one's id.
expect_new() {
	local out
	NEW_ID=
	if out=$("$PY" -I -S "$T_DIR/check.py" "$F" "$MARK_LINES" "$2" 2>&1); then
		pass
		NEW_ID=${out%% *}
	else
		fail "$1: $out"
	fi
	assert_eq "$1: no refusal in the log" "" "$(new_log | grep refused || true)"
}

# expect_pi WHAT TEXT: pi's SessionManager opens a copy of the session
# file, its leaf is the entry just appended, and the last message of the
# context it resumes with holds TEXT.
expect_pi() {
	local copy=$T_DIR/pi-copy.jsonl out
	cp -- "$F" "$copy"
	if ! out=$(timeout -s KILL 60 "$PI_NODE" "$ROOT/tests/interop/pi_open.mjs" "$PI_SESSION_MANAGER" "$copy" 2>&1); then
		fail "$1: pi_open.mjs failed: $(show "$out")"
		return
	fi
	out=$("$PY" -I -S -c '
import json, sys
r = json.loads(sys.argv[1])
want_leaf, text = sys.argv[2], sys.argv[3]
if not r.get("ok"):
    print("pi refused the file: " + str(r.get("error"))[:800])
elif r["leafId"] != want_leaf:
    print("pi resumes at %r, not at the new entry %r" % (r["leafId"], want_leaf))
elif len(r["entryIds"]) != sum(1 for l in open(sys.argv[4]) if l.strip()) - 1:
    print("pi read %d entries of the file" % len(r["entryIds"]))
elif text not in json.dumps(r["context"]["messages"][-1], ensure_ascii=False):
    print("the last message of the context is %s" % json.dumps(r["context"]["messages"][-1])[:600])
' "$out" "$NEW_ID" "$2" "$copy" 2>&1)
	assert_eq "$1: pi loads the file and resumes from the new entry" "" "$out"
}

# expect_refused WHAT NAME: nothing appended since mark, a "refused" line
# for NAME in the log that contains REASON, and the text written kept
# (exactly) in one new rejected/N-NAME.
expect_refused() {
	local what=$1 name=$2 reason=$3 text=$4 log added
	assert_eq "$what: session file unchanged (sha256)" "$MARK_SHA" "$(sha256sum <"$F")"
	log=$(new_log | grep -F "refused $MNT/$PROJ/$SN/$name: " || true)
	assert_contains "$what: the log says why" "$reason" "$log"
	added=$(comm -13 <(printf '%s\n' "$MARK_REJ") <(ls_names "$MNT/.pisessionfs/rejected" | sort) | grep . || true)
	if [[ $added =~ ^[0-9]+-"$name"$ ]]; then
		fsx cat "$MNT/.pisessionfs/rejected/$added" >"$T_DIR/kept"
		assert_eq "$what: the text is kept in rejected/" "$text" "$(cat "$T_DIR/kept"; printf .)"
	else
		fail "$what: expected one new rejected/N-$name, got $(show "$added")"
	fi
}

mount_fs "$STORE" "$MNT"
S=$MNT/$PROJ/$SN
U1=0001-user.aaaa0001.md
A2=0002-assistant.aaaa0002.md
U3=0003-user.aaaa0003.md
CM=0004-custom_message.aaaa0004.md
BS=0005-branch_summary.aaaa0005.md
TC=0006-assistant.aaaa0006.md
MC=0007-model_change.aaaa0007.md
BE=0008-bashExecution.aaaa0008.md
A9=0009-assistant.aaaa0009.md
assert_eq "the session as expected" "$U1 $A2 $U3 $CM $BS $TC $MC $BE $A9" \
	"$(ls_names "$S" | grep '^0.*\.md$' | tr '\n' ' ' | sed 's/ $//')"
for f in "$U1" "$A2" "$U3" "$CM" "$BS" "$TC" "$MC" "$BE" "$A9"; do
	fsx cat "$S/$f" >"$T_DIR/$f.orig"
done

usage_json=$usage

# --- echo >: a user message's string content ------------------------------------------
mark
assert_true "echo > a user entry" bash -c 'echo "alpha, rewritten" > "$1"' _ "$S/$U1"
expect_new "echo > $U1" '[{"type":"message","id":"@id","parentId":null,"timestamp":"@ts","message":{"role":"user","content":"alpha, rewritten","timestamp":"@ms"}}]'
expect_pi "echo > $U1" "alpha, rewritten"
assert_same_bytes "$S/$U1" "$T_DIR/$U1.orig"
assert_exists "$S/0001~$NEW_ID/0001-user.$NEW_ID.md"

# --- printf >: an assistant message's one text; its thinking and metadata kept --------
mark
assert_true "printf > an assistant entry" bash -c 'printf "two\nlines" > "$1"' _ "$S/$A2"
expect_new "printf > $A2" '[{"type":"message","id":"@id","parentId":"aaaa0001","timestamp":"@ts","message":{"role":"assistant","content":[{"type":"thinking","thinking":"hmm","thinkingSignature":"sig"},{"type":"text","text":"two\nlines"}],"api":"x","provider":"p","model":"m","usage":'"$usage_json"',"stopReason":"stop","timestamp":"@ms"}}]'
expect_pi "printf > $A2" "two\\nlines"

# --- cat >: a user message with an image; the image stays ------------------------------
printf 'look again\n' >"$T_DIR/body"
mark
assert_true "cat > a user entry with an image" bash -c 'cat "$2" > "$1"' _ "$S/$U3" "$T_DIR/body"
expect_new "cat > $U3" '[{"type":"message","id":"@id","parentId":"aaaa0002","timestamp":"@ts","message":{"role":"user","content":[{"type":"text","text":"look again"},{"type":"image","data":"iVBORw0KGgo=","mimeType":"image/png"}],"timestamp":"@ms"}}]'
expect_pi "cat > $U3" "look again"

# --- tee: a custom_message entry -------------------------------------------------------
mark
assert_true "tee a custom_message entry" bash -c 'echo "remember twice" | tee "$1" >/dev/null' _ "$S/$CM"
expect_new "tee $CM" '[{"type":"custom_message","id":"@id","parentId":"aaaa0003","timestamp":"@ts","customType":"note","content":"remember twice","display":true,"details":{"k":1}}]'
expect_pi "tee $CM" "remember twice"

# --- Python open(f, "w"): a branch summary's summary -----------------------------------
mark
assert_true "python open(w) a branch_summary entry" "$PY" -I -S -c '
import sys
with open(sys.argv[1], "w") as f:
    f.write("tried A and B\n")
' "$S/$BS"
expect_new "python > $BS" '[{"type":"branch_summary","id":"@id","parentId":"aaaa0004","timestamp":"@ts","fromId":"aaaa0002","summary":"tried A and B","fromHook":false}]'
expect_pi "python > $BS" "tried A and B"

# --- the same text again appends nothing -----------------------------------------------
mark
assert_true "echo the same text" bash -c 'echo "alpha one" > "$1"' _ "$S/$U1"
assert_eq "the same text: session file unchanged" "$MARK_SHA" "$(sha256sum <"$F")"
assert_eq "the same text: nothing in the log" "" "$(new_log)"

# --- a first line "---" is front matter: refused, with that reason ---------------------
printf -- '---\nnot front matter\n' >"$T_DIR/rule"
mark
fsx_out "$PY" -I -S "$(dirname "$0")/fsop.py" write "$S/$U1" "$T_DIR/rule"
assert_eq "a text starting with --- (close)" "close:EINVAL" "${OUT%$'\n'}"
expect_refused "a text starting with ---" "$U1" 'a file whose first line is "---" starts with front matter' \
	"$(cat "$T_DIR/rule"; printf .)"

# --- entries whose text cannot be replaced ---------------------------------------------
# refused_kind WHAT NAME REASON: Python writes a body to NAME and checks
# close() (its buffered write is made there); the shell's echo > NAME is
# refused at its write, which the shell reports (status 1): it would
# ignore a refusal at close.
refused_kind() {
	local what=$1 name=$2 reason=$3
	printf 'new text\n' >"$T_DIR/new"
	mark
	fsx_out "$PY" -I -S -c '
import sys
f = open(sys.argv[1], "w")
f.write("new text\n")
try:
    f.close()
    print("closed")
except OSError as e:
    print("close failed: " + e.strerror)
' "$S/$name"
	assert_eq "$what: Python's close() fails" "close failed: Invalid argument" "${OUT%$'\n'}"
	expect_refused "$what (python)" "$name" "$reason" "new text"$'\n.'
	assert_same_bytes "$S/$name" "$T_DIR/$name.orig"
	mark
	fsx_out bash -c 'echo "new text" > "$1"' _ "$S/$name"
	assert_eq "$what: echo's status" "1" "$RC"
	assert_eq "$what: what the shell says" "echo: write error: Invalid argument" "${ERR#*line 1: }"
	expect_refused "$what (echo)" "$name" "$reason" "new text"$'\n.'
	assert_same_bytes "$S/$name" "$T_DIR/$name.orig"
}
refused_kind "a model_change" "$MC" "but this model_change entry has no text; to change its fields, write the whole file back, front matter first"
refused_kind "an assistant message with only a tool call" "$TC" "but this assistant message has no text"
refused_kind "a bash execution" "$BE" "but this bashExecution message has 2 texts (a command, an output)"
refused_kind "an assistant message with two text blocks" "$A9" "but this assistant message has 2 texts (2 text blocks)"
# the other tools are told at their write too
for tool in printf cat tee; do
	mark
	case $tool in
	printf) fsx_out bash -c 'printf "new text\n" > "$1"' _ "$S/$MC" ;;
	cat) fsx_out bash -c 'cat "$2" > "$1"' _ "$S/$MC" "$T_DIR/new" ;;
	tee) fsx_out bash -c 'tee "$1" < "$2" > /dev/null' _ "$S/$MC" "$T_DIR/new" ;;
	esac
	assert_eq "$tool > a model_change: its status" "1" "$RC"
	assert_contains "$tool > a model_change: what it says" "Invalid argument" "$ERR"
	expect_refused "$tool > a model_change" "$MC" "but this model_change entry has no text" "new text"$'\n.'
done

# --- the rendered file with front matter still works as before ------------------------
sed 's/^reply one$/reply, edited/' "$T_DIR/$A2.orig" >"$T_DIR/a2.edit"
mark
assert_true "cat > with the front matter" bash -c 'cat "$2" > "$1"' _ "$S/$A2" "$T_DIR/a2.edit"
expect_new "front matter kept" '[{"type":"message","id":"@id","parentId":"aaaa0001","timestamp":"@ts","message":{"role":"assistant","content":[{"type":"thinking","thinking":"hmm","thinkingSignature":"sig"},{"type":"text","text":"reply, edited"}],"api":"x","provider":"p","model":"m","usage":'"$usage_json"',"stopReason":"stop","timestamp":"@ms"}}]'
expect_pi "front matter kept" "reply, edited"

finish
