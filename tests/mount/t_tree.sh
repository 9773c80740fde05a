#!/usr/bin/env bash
# tree.txt (docs/layout.md "tree.txt"): the session's entry tree drawn as
# pi's /tree draws it, listed in the session directory only, read-only,
# and following appends (a new entry, a new fork, a label) as soon as they
# are indexed, through the sizes the kernel keeps.
# shellcheck disable=SC2016 # the 'bash -c' checks get their arguments as $1
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh" "$@"

P=--tree--
mkdir -p "$STORE/$P"
F=$STORE/$P/s.jsonl
{
	header
	user_msg aaaa0001 null "first question"
	asst_msg aaaa0002 aaaa0001 "first answer"
	user_msg aaaa0003 aaaa0002 "second question"
	asst_msg aaaa0004 aaaa0003 "second answer"
	user_msg bbbb0003 aaaa0002 "second question, asked again"
	asst_msg bbbb0004 bbbb0003 "another answer"
} >"$F"

mount_fs "$STORE" "$MNT"
S=$MNT/$P/s

# --- listed once, in the session directory ---------------------------------
assert_contains "tree.txt is listed in the session directory" $'\ntree.txt\n' $'\n'"$(ls_names "$S")"$'\n'
assert_eq "a fork directory has none" "" "$(ls_names "$S/0003~bbbb0003" | grep -x tree.txt || true)"
assert_missing "$S/0003~bbbb0003/tree.txt"

# --- the drawing --------------------------------------------------------------
assert_file_content "$S/tree.txt" "• 0001-user.aaaa0001  first question
• 0002-assistant.aaaa0002  first answer
├─ • 0003-user.bbbb0003  second question, asked again
│     • 0004-assistant.bbbb0004  another answer  ← leaf
└─ 0003-user.aaaa0003  second question
      0004-assistant.aaaa0004  second answer
"
assert_size "$S/tree.txt"
fsx_out stat -c %A "$S/tree.txt"
assert_eq "read-only mode" "-r--r--r--" "${OUT%$'\n'}"

# --- read-only ------------------------------------------------------------------
assert_errno "Operation not permitted" bash -c 'printf "x\n" | tee "$1" >/dev/null' _ "$S/tree.txt"
assert_errno "Operation not permitted" bash -c 'printf "x\n" >>"$1"' _ "$S/tree.txt"
assert_fails truncate -s 0 "$S/tree.txt"
assert_fails rm -f "$S/tree.txt"

# --- follows appends ------------------------------------------------------------
# Prime the kernel's attributes first: the watcher must tell it anew.
size_before=$(fsx stat -c %s "$S/tree.txt")
user_msg aaaa0005 aaaa0004 "back on the first line" >>"$F"
assert_poll "an append: st_size of tree.txt follows, unread" 2 bash -c 'size_is_not "$1" "$2"' _ "$S/tree.txt" "$size_before"
assert_poll "an append shows in tree.txt, the leaf moved to it" 2 \
	bash -c 'grep -qx "│     • 0005-user.aaaa0005  back on the first line  ← leaf" "$1"' _ "$S/tree.txt"
assert_file_content "$S/tree.txt" "• 0001-user.aaaa0001  first question
• 0002-assistant.aaaa0002  first answer
├─ • 0003-user.aaaa0003  second question
│     • 0004-assistant.aaaa0004  second answer
│     • 0005-user.aaaa0005  back on the first line  ← leaf
└─ 0003-user.bbbb0003  second question, asked again
      0004-assistant.bbbb0004  another answer
"
assert_size "$S/tree.txt"

# A label and a new fork deeper down.
{
	label_entry cccc0001 aaaa0005 aaaa0001 "start"
	asst_msg cccc0002 aaaa0004 "a second reply"
} >>"$F"
assert_poll "a label and a fork show" 2 \
	bash -c 'grep -q "^• 0001-user.aaaa0001  first question  \[start\]$" "$1" && grep -q "a second reply  ← leaf$" "$1"' _ "$S/tree.txt"
assert_file_content "$S/tree.txt" "• 0001-user.aaaa0001  first question  [start]
• 0002-assistant.aaaa0002  first answer
├─ • 0003-user.aaaa0003  second question
│     • 0004-assistant.aaaa0004  second answer
│     ├─ • 0005-assistant.cccc0002  a second reply  ← leaf
│     └─ 0005-user.aaaa0005  back on the first line
│           0006-label.cccc0001  [label: start]
└─ 0003-user.bbbb0003  second question, asked again
      0004-assistant.bbbb0004  another answer
"
assert_size "$S/tree.txt"

# A tool call and its result are one line, the result's (pi's /tree
# leaves out an assistant message that only calls tools).
{
	printf '{"type":"message","id":"dddd0001","parentId":"cccc0002","timestamp":"2026-01-01T00:00:04.000Z","message":{"role":"assistant","content":[{"type":"toolCall","id":"call1","name":"bash","arguments":{"command":"ls -l"}}],"api":"x","provider":"p","model":"m","usage":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"totalTokens":0,"cost":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"total":0}},"stopReason":"toolUse","timestamp":1767225604000}}\n'
	printf '{"type":"message","id":"dddd0002","parentId":"dddd0001","timestamp":"2026-01-01T00:00:05.000Z","message":{"role":"toolResult","toolCallId":"call1","toolName":"bash","content":[{"type":"text","text":"total 0"}],"isError":false,"timestamp":1767225605000}}\n'
} >>"$F"
assert_poll "a tool call and its result show as one line" 2 \
	bash -c 'grep -qx "│     │     • 0007-toolResult-bash.dddd0002  \[bash: ls -l\]  ← leaf" "$1"' _ "$S/tree.txt"
assert_eq "... and the call itself has none" "" "$(fsx cat "$S/tree.txt" | grep dddd0001 || true)"
assert_size "$S/tree.txt"

# Every line names an entry file that is in the mount.
fsx_out cat "$S/tree.txt"
missing=
while IFS= read -r line; do
	[[ -n $line ]] || continue
	name=$(grep -o '[0-9]\{4,\}-[A-Za-z_-]*\.[0-9a-z]*' <<<"$line" | head -1 || true)
	[[ -n $(fsx find "$S" -name "$name.md" -print -quit) ]] || missing+="$name "
done <<<"$OUT"
assert_eq "every line's entry file is found by its name" "" "$missing"

finish
