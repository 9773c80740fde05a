#!/usr/bin/env bash
# transcript.md against context.json: in every tree directory of the
# fixtures (pi 1.6.0 with a branch, two version 1 files, one compacted) and
# of a session with a compaction, a branch summary, a bash run and a custom
# message, every message context.json sends to the model must be in the
# transcript, in the same order (check_transcript.py, which knows nothing of
# the daemon's code).
. "$(dirname "$0")/lib.sh" "$@"

REPO=$(cd "$(dirname "$0")/../.." && pwd)
cp "$(dirname "$0")/check_transcript.py" "$T_DIR/check.py"
mkdir -p "$STORE/--fixtures--" "$STORE/--w--"
cp "$REPO"/tests/data/fixtures/*.jsonl "$STORE/--fixtures--/"

# u1 a1 r1 a2 u2 a3 is the first line of conversation; bs1 (a branch summary
# of u2..a3) starts the branch 0005~bs1 after a2, which goes on with a user
# message, a bash run, a custom message, an assistant reply, then a
# compaction that keeps the entries from bs1 on, and two more messages.
# a7 is a second child of u3: the branch 0005~bs1/0007~a7, whose context
# holds the branch summary but no compaction.
F=$STORE/--w--/s.jsonl
usage='"usage":{"input":1,"output":1,"cacheRead":0,"cacheWrite":0,"totalTokens":2,"cost":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"total":0}}'
asst() { # ID PARENT CONTENT-JSON
	printf '{"type":"message","id":"%s","parentId":"%s","timestamp":"2026-01-01T00:00:02.000Z","message":{"role":"assistant","content":%s,"api":"x","provider":"p","model":"m",%s,"stopReason":"stop","timestamp":2}}\n' \
		"$1" "$2" "$3" "$usage"
}
{
	header 3 33333333-3333-4333-8333-333333333333
	user_msg u1 null "Start: list the files"
	asst a1 u1 '[{"type":"thinking","thinking":"I should run ls.\n\nThen report."},{"type":"text","text":"Running ls."},{"type":"toolCall","id":"c1","name":"bash","arguments":{"command":"ls"}}]'
	printf '{"type":"message","id":"r1","parentId":"a1","timestamp":"2026-01-01T00:00:03.000Z","message":{"role":"toolResult","toolCallId":"c1","toolName":"bash","content":[{"type":"text","text":"a.txt\\nb.txt\\n"}],"isError":false,"timestamp":3}}\n'
	asst a2 r1 '[{"type":"text","text":"There are two files."}]'
	user_msg u2 a2 "Now count the lines"
	asst a3 u2 '[{"type":"text","text":"Counting them."}]'
	printf '{"type":"branch_summary","id":"bs1","parentId":"a2","timestamp":"2026-01-01T00:00:04.000Z","fromId":"a3","summary":"The user asked to count lines; that branch was left.\\n"}\n'
	user_msg u3 bs1 "Instead, show the sizes"
	printf '{"type":"message","id":"x1","parentId":"u3","timestamp":"2026-01-01T00:00:05.000Z","message":{"role":"bashExecution","command":"du -sh *","output":"4.0K\\ta.txt\\n8.0K\\tb.txt\\n","exitCode":0,"cancelled":false,"truncated":false,"timestamp":5}}\n'
	printf '{"type":"custom_message","id":"cm1","parentId":"x1","timestamp":"2026-01-01T00:00:06.000Z","customType":"note","content":"Remember to be brief.","display":true}\n'
	asst a4 cm1 '[{"type":"text","text":"b.txt is the larger one."}]'
	asst a7 u3 '[{"type":"text","text":"An answer on another branch."}]'
	printf '{"type":"compaction","id":"k1","parentId":"a4","timestamp":"2026-01-01T00:00:07.000Z","summary":"Files were listed and their sizes shown.","firstKeptEntryId":"bs1","tokensBefore":1234}\n'
	user_msg u4 k1 "What next?"
	asst a5 u4 '[{"type":"text","text":"We are done."}]'
} >"$F"

mount_fs "$STORE" "$MNT"

S=$MNT/--w--/s
for d in "$S" "$S/0005~bs1" "$S/0005~bs1/0007~a7"; do
	assert_true "tree directory $d" test -f "$d/transcript.md"
done
# What the built session's contexts must hold, so the comparison below
# cannot pass on contexts that lost their summaries.
roles=$(fsx cat "$S/context.json" | python3 -c 'import json,sys; print(" ".join(m["role"] for m in json.load(sys.stdin)["messages"]))')
assert_eq "the leaf's context starts with the compaction summary, then what it kept" \
	"compactionSummary branchSummary user bashExecution custom assistant user assistant" "$roles"
roles=$(fsx cat "$S/0005~bs1/0007~a7/context.json" | python3 -c 'import json,sys; print(" ".join(m["role"] for m in json.load(sys.stdin)["messages"]))')
assert_eq "the side branch's context holds the branch summary" \
	"user assistant toolResult assistant branchSummary user assistant" "$roles"

# Every tree directory of every session: the session directory and each
# NNNN~ directory below it (by their listed names).
dirs=()
for sess in "$MNT/--fixtures--"/*/ "$S/"; do
	sess=${sess%/}
	[[ -f $sess/context.json ]] || continue
	while IFS= read -r d; do
		dirs+=("$d")
	done < <(fsx find "$sess" -type d -name '[0-9][0-9][0-9][0-9]~*' | sort)
	dirs+=("$sess")
done
assert_eq "tree directories compared (3 sessions of fixtures and 3 built)" 7 "${#dirs[@]}"
TIMEOUT=60 fsx_out python3 "$T_DIR/check.py" "${dirs[@]}"
if [[ $RC == 0 && $OUT =~ ^messages\ ([0-9]+)\ texts\ ([0-9]+)$'\n'$ ]]; then
	pass
	echo "compared: ${OUT%$'\n'}"
	if ((BASH_REMATCH[1] >= 1000 && BASH_REMATCH[2] >= 1000)); then
		pass
	else
		fail "only ${OUT%$'\n'} compared: the fixtures hold more than 1000 of each"
	fi
else
	fail "every context message is in its transcript, in order: check_transcript.py ($RC): $OUT$ERR"
fi

# The compaction summary and the branch summary, and the messages kept
# after them, are checked in the built session's directories on their own
# too (a failure there names the directory).
fsx_out python3 "$T_DIR/check.py" "$S" "$S/0005~bs1" "$S/0005~bs1/0007~a7"
assert_eq "the built session's three directories" $'0 messages 23 texts 24\n' "$RC $OUT"

finish
