#!/usr/bin/env bash
# loadout.json (issue 21, item 1): the session loadout pi applies, as the
# spec defines it (pi.loadout custom entries: the latest valid one in file
# order, not along the current branch; an empty overrides array is a reset
# marker), and writing it:
#   1. shown in the session directory only, read from the file as it is;
#      no loadout saved: version 1, no overrides;
#   2. a write of a valid payload appends one pi.loadout custom entry under
#      the leaf, with the written payload; the same payload again, or a
#      reset when none is saved, appends nothing; a reset of a saved
#      loadout appends the marker;
#   3. an invalid payload is refused (EINVAL at close), the session file
#      byte-identical, the text kept in rejected/, the log says why;
#   4. editors: jq > file, temp file + rename (Python's os.replace), sed -i,
#      vim;
#   5. a fork (ln -s ENTRY PROJECT/NAME, pisession fork) keeps exactly the
#      loadout entries on its path: a loadout saved on another branch stays
#      behind.
. "$(dirname "$0")/lib.sh" "$@"

REPO=$(cd "$(dirname "$0")/../.." && pwd)
TOOL=${PISESSION:-$(dirname "$DAEMON")/pisession}
[[ -x $TOOL ]] || TOOL=$REPO/build/pisession
P=--w--
S=2026-01-01T00-00-00-000Z_11111111-2222-3333-4444-555555555555
F=$STORE/$P/$S.jsonl
mkdir -p "$STORE/$P"
{
	header 3
	alpha_turns
} >"$F"
mount_fs "$STORE" "$MNT"
D=$MNT/$P/$S

ov() { printf '{"reference":{"type":"skill","origin":"top-level","scope":"user","relativePath":"%s"},"enabled":%s}' "$1" "$2"; }
REVIEW='{"version":1,"overrides":['"$(ov skills/review/SKILL.md false)"']}'
TWO='{"version":1,"overrides":['"$(ov prompts/fix.md true),$(ov skills/a/SKILL.md false)"']}'
RESET='{"version":1,"overrides":[]}'
loadout() { fsx cat "$D/loadout.json" | jq -c .; }
lines() { wc -l <"$F"; }
last_line() { tail -n 1 "$F"; }

# --- 1. shown --------------------------------------------------------------------
assert_contains "the session directory lists loadout.json" loadout.json "$(ls_names "$D")"
assert_eq "no loadout saved: version 1, no overrides" "$RESET" "$(loadout)"
assert_eq "it is pretty-printed JSON with a final newline" '{
  "version": 1,
  "overrides": []
}' "$(fsx cat "$D/loadout.json")"
mkdir_fork=$(ls_names "$D" | grep -c '~' || true)
assert_eq "(the session has no fork yet)" 0 "$mkdir_fork"

# --- 2. writing a valid payload --------------------------------------------------
n=$(lines)
write_close "$D/loadout.json" "$REVIEW"
assert_eq "a valid loadout closes cleanly" closed "${OUT%$'\n'}"
assert_eq "one line appended" $((n + 1)) "$(lines)"
assert_eq "it is a pi.loadout custom entry with the written payload" "custom pi.loadout $REVIEW" \
	"$(last_line | jq -c -r '"\(.type) \(.customType) \(.data|tojson)"')"
assert_eq "its parent is the leaf it was written on" aaaa0004 "$(last_line | jq -r .parentId)"
assert_eq "loadout.json shows it" "$REVIEW" "$(loadout)"
n=$(lines)
write_close "$D/loadout.json" "$REVIEW"
assert_eq "the same loadout again: closes cleanly" closed "${OUT%$'\n'}"
assert_eq "and appends nothing" "$n" "$(lines)"
assert_true "a shell's echo of another loadout" bash -c 'echo "$2" > "$1"' _ "$D/loadout.json" "$TWO"
assert_eq "appended" $((n + 1)) "$(lines)"
assert_eq "loadout.json shows the latest" "$TWO" "$(loadout)"

# The reset marker.
n=$(lines)
write_close "$D/loadout.json" "$RESET"
assert_eq "clearing a saved loadout closes cleanly" closed "${OUT%$'\n'}"
assert_eq "the reset marker is appended" $((n + 1)) "$(lines)"
assert_eq "it is an empty overrides array" '{"version":1,"overrides":[]}' "$(last_line | jq -c .data)"
assert_eq "loadout.json shows no loadout" "$RESET" "$(loadout)"
write_close "$D/loadout.json" "$RESET"
assert_eq "a reset with nothing saved closes cleanly" closed "${OUT%$'\n'}"
assert_eq "and appends nothing" $((n + 1)) "$(lines)"

# --- 3. refusals -----------------------------------------------------------------
refuse() {
	local what=$1 text=$2 why=$3 before
	before=$(sha256sum <"$F")
	write_close "$D/loadout.json" "$text"
	assert_eq "$what: close fails with EINVAL" EINVAL "${OUT%$'\n'}"
	assert_eq "$what: the session file is byte-identical" "$before" "$(sha256sum <"$F")"
	assert_contains "$what: the log says why" "$why" "$(fsx tail -n 1 "$MNT/.pisessionfs/log")"
}
refuse "not JSON" '{"version":1,' "not valid JSON"
refuse "version 2" '{"version":2,"overrides":[]}' '"version" must be 1'
refuse "no overrides" '{"version":1}' '"overrides" must be an array'
refuse "enabled not a boolean" '{"version":1,"overrides":['"$(ov x '"no"')"']}' \
	"overrides[0].enabled is not true or false"
refuse "no relativePath" '{"version":1,"overrides":[{"reference":{"type":"skill","origin":"o","scope":"user"},"enabled":true}]}' \
	"overrides[0].reference.relativePath is not a non-empty string"
refuse "an override that is a string" '{"version":1,"overrides":["skills/x"]}' "overrides[0] is not an object"
refuse "an empty file" '' "not valid JSON"
refuse "an array" '[{"version":1,"overrides":[]}]' 'a loadout is a JSON object with "version" and "overrides"'
refuse "a string" '"version 1"' 'a loadout is a JSON object'
refuse "null" 'null' 'a loadout is a JSON object'
refuse "a number" '1' 'a loadout is a JSON object'
assert_contains "the refused text is kept" '"version":2' "$(fsx cat "$MNT/.pisessionfs/rejected/"*loadout.json* | tr -d '\n')"
assert_eq "after the refusals, the loadout is as it was" "$RESET" "$(loadout)"

# --- 4. editors ----------------------------------------------------------------------
n=$(lines)
assert_true "jq into loadout.json" bash -c 'jq -c --argjson o "$2" ".overrides = [\$o]" "$1" > "$1.new" && cat "$1.new" > "$1"; rm -f "$1.new"' \
	_ "$D/loadout.json" "$(ov skills/jq/SKILL.md true)"
assert_eq "jq: one entry appended" $((n + 1)) "$(lines)"
assert_eq "jq: shown" skills/jq/SKILL.md "$(loadout | jq -r '.overrides[0].reference.relativePath')"
assert_true "a temp file renamed over loadout.json" python3 -c 'import os, sys, tempfile
d = os.path.dirname(sys.argv[1])
fd, tmp = tempfile.mkstemp(dir=d, prefix=".loadout.", suffix=".tmp")
os.write(fd, sys.argv[2].encode())
os.close(fd)
os.replace(tmp, sys.argv[1])' "$D/loadout.json" "$TWO"
assert_eq "rename: one entry appended" $((n + 2)) "$(lines)"
assert_eq "rename: shown" "$TWO" "$(loadout)"
assert_true "sed -i on loadout.json" sed -i 's/"enabled": true/"enabled": false/' "$D/loadout.json"
assert_eq "sed -i: one entry appended" $((n + 3)) "$(lines)"
assert_eq "sed -i: shown" "false false" "$(loadout | jq -r '[.overrides[].enabled|tostring]|join(" ")')"
assert_true "vim saves loadout.json" timeout -s KILL 20 vim -Nu NONE -i NONE -es \
	-c 'g/"enabled": false/s//"enabled": true/' -c wq "$D/loadout.json"
assert_eq "vim: one entry appended" $((n + 4)) "$(lines)"
assert_eq "vim: shown" "true true" "$(loadout | jq -r '[.overrides[].enabled|tostring]|join(" ")')"
assert_eq "no temporary or backup name is left" "" \
	"$(ls_names "$D" | grep -E 'loadout\..*tmp|loadout.json.new|loadout.json~|\.sw[px]$' || true)"

# --- 5. forks keep the loadouts on their path ---------------------------------------
# A session with a loadout on the main path (before aaaa0003) and a later
# one on a side branch (under aaaa0001).
G=$STORE/$P/2026-01-02T00-00-00-000Z_22222222-2222-3333-4444-555555555555.jsonl
GS=$(basename "$G" .jsonl)
{
	header 3 22222222-2222-3333-4444-555555555555
	user_msg aaaa0001 null "alpha one"
	asst_msg aaaa0002 aaaa0001 "reply one"
	printf '{"type":"custom","id":"lmain001","parentId":"aaaa0002","timestamp":"2026-01-01T00:00:03.000Z","customType":"pi.loadout","data":%s}\n' "$REVIEW"
	user_msg aaaa0003 lmain001 "alpha two"
	printf '{"type":"custom","id":"lside001","parentId":"aaaa0001","timestamp":"2026-01-01T00:00:04.000Z","customType":"pi.loadout","data":%s}\n' "$TWO"
	asst_msg aaaa0004 aaaa0003 "reply two"
} >"$G"
assert_poll "the second session shows" 10 test -d "$MNT/$P/$GS"
assert_eq "the latest valid in file order counts, though on another branch" "$TWO" \
	"$(fsx cat "$MNT/$P/$GS/loadout.json" | jq -c .)"
entry=$(ls_names "$MNT/$P/$GS" | grep -m1 -- '-assistant.aaaa0004.md$')
assert_true "a fork at the main leaf" ln -s "$GS/$entry" "$MNT/$P/main fork"
assert_poll "the fork shows" 10 test -d "$MNT/$P/main fork"
forked=$(readlink -f "$STORE/$P/$(readlink "$MNT/$P/main fork").jsonl")
assert_eq "the fork holds the main path's loadout entry only" "lmain001:" \
	"$(jq -r 'select(.customType == "pi.loadout") | .id' "$forked" | tr '\n' ':')"
assert_eq "its loadout.json shows the main path's loadout" "$REVIEW" \
	"$(fsx cat "$MNT/$P/main fork/loadout.json" | jq -c .)"
out=$("$TOOL" fork "$G" aaaa0001 --dir "$T_DIR")
assert_eq "pisession fork at aaaa0001 keeps no loadout entry" "" \
	"$(jq -r 'select(.customType == "pi.loadout") | .id' "$out")"
assert_eq "pisession loadout of that fork: none" "$RESET" "$("$TOOL" loadout "$out" | jq -c .)"
out=$("$TOOL" fork "$G" aaaa0003 --dir "$T_DIR")
assert_eq "pisession fork at aaaa0003 keeps the main path's" "lmain001" \
	"$(jq -r 'select(.customType == "pi.loadout") | .id' "$out")"

# --- a loadout entry appended by another writer (pi) shows -----------------------------
printf '{"type":"custom","id":"lpi00001","parentId":"aaaa0004","timestamp":"2026-01-01T00:00:05.000Z","customType":"pi.loadout","data":%s}\n' "$REVIEW" >>"$G"
assert_poll "an appended loadout shows" 10 bash -c '[[ $(jq -c . "$1") == "$2" ]]' _ "$MNT/$P/$GS/loadout.json" "$REVIEW"

finish
