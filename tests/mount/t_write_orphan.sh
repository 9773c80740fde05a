#!/usr/bin/env bash
# No orphaned tool results (docs/layout.md "Writing"): a toolResult whose
# tool call is on no assistant message of its path is refused at close
# with EINVAL, the session file byte-identical, the text kept in
# rejected/ and the log saying why; where the call is on the path it is
# appended as before.  A raw line through session.jsonl is held to the
# same rule.
. "$(dirname "$0")/lib.sh" "$@"

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
P=--home-user-demo-project--
STEM=2026-11-29T19-11-30-970Z_01a228b8-3699-77d4-8ab4-6586c2fad309
mkdir -p "$STORE/$P"
cp "$ROOT/docs/examples/store/$P/$STEM.jsonl" "$STORE/$P/"
F=$STORE/$P/$STEM.jsonl
mount_fs "$STORE" "$MNT"
S=$MNT/$P/$STEM
RESULT=0006-toolResult-bash.128263f4.md
assert_exists "$S/$RESULT"

# Into a branch above the call (0005-assistant made it): an orphan.
before=$(sha256sum <"$F")
fsx mkdir "$S/0004~early" || fail "mkdir 0004~early"
fsx_out cp "$S/$RESULT" "$S/0004~early/new.md"
assert_ne "cp of a tool result above its call fails" 0 "$RC"
assert_contains "at close, with EINVAL" "Invalid argument" "$ERR"
assert_eq "the session file is byte-identical" "$before" "$(sha256sum <"$F")"
assert_contains "the log says why" "a toolResult for tool call call_4, which no assistant message on its path made" \
	"$(fsx cat "$MNT/.pisessionfs/log")"
assert_true "the text is kept in rejected/" bash -c "ls '$MNT/.pisessionfs/rejected/' | grep -q 'new.md'"
assert_eq "no entry in the branch" "" "$(fsx ls "$S/0004~early" | grep toolResult || true)"

# The same line through session.jsonl, parented above the call: refused.
line=$(grep '"toolCallId":"call_4"' "$F" | head -1 |
	python3 -c 'import json, sys; e = json.loads(sys.stdin.read()); e["id"] = "orph0001"; e["parentId"] = "7bfd5a82"; print(json.dumps(e, separators=(",", ":")))')
fsx_out python3 -c 'import sys; f = open(sys.argv[2], "a"); f.write(sys.argv[1] + "\n"); f.close()' "$line" "$S/session.jsonl"
assert_ne "a raw orphan line is refused" 0 "$RC"
assert_eq "the session file is still byte-identical" "$before" "$(sha256sum <"$F")"

# At the tip, below its call: appended.
fsx_out cp "$S/$RESULT" "$S/again.md"
assert_eq "cp of a tool result below its call succeeds" 0 "$RC"
assert_eq "one line appended" "$(($(wc -l <"$ROOT/docs/examples/store/$P/$STEM.jsonl") + 1))" "$(wc -l <"$F")"
assert_contains "it is a toolResult for call_4" '"toolCallId":"call_4"' "$(tail -n 1 "$F")"
finish
