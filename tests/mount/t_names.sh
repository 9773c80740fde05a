#!/usr/bin/env bash
# Names as typed, and names that do not move (issue 11, items 4 and 9;
# docs/layout.md "Escaping", "Named branches", "Names that move").
#
# * A label or branch name is listed as the user typed it: spaces,
#   Unicode, '%', a leading '.', 250 bytes.  Only what a file name cannot
#   hold ('/', NUL, "." and "..", over 255 bytes) or a listing should not
#   show (control characters) is written %XX, and '%' only before two
#   upper-case hex digits.
# * ln -s into labels/ that succeeds appends exactly one label and the
#   name answers lstat at once; a retry is EEXIST and appends nothing; a
#   name no label can have (%41) is EINVAL with a log line, nothing
#   appended; a second label on an entry that has one is EMLINK.
# * mkdir 'NNNN~my idea', cd into it, write: the shell's directory keeps
#   existing, under the name typed.  mkdir past the last entry, or right
#   after it (no branch: the write would continue the directory): ERANGE
#   and a log line.
# * Names once listed keep resolving: recent/NN-<session> under any rank,
#   by-name/<name>~<id8> after the older holder of <name> is renamed,
#   labels/<label>~<id> after the earlier holder of <label> lets it go,
#   and the names of before (my%20label).
# shellcheck disable=SC2016,SC2317,SC2012 # bash -c '...$1' on purpose; listed_first runs in bash -c; ls of the mount's names
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh" "$@"

PROJ=--w--
STEM=2026-01-01T00-00-00-000Z_names
SRC=$STORE/$PROJ/$STEM.jsonl
mkdir -p "$STORE/$PROJ"
{
	header
	user_msg u1 null "first"
	asst_msg a1 u1 "answer"
	user_msg u2 a1 "second"
	asst_msg a2 u2 "answer two"
	user_msg u3 a2 "third"
	label_entry l1 u3 u1 "a/b"
	label_entry l2 l1 a1 "dup"
	label_entry l3 l2 u2 "dup"
} >"$SRC"
# A session whose cwd holds a '%' and a space (by-cwd shows it as it is).
{
	printf '{"type":"session","version":3,"id":"cccc3333-0000-0000-0000-000000000003","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/srv/100%%/a b"}\n'
	user_msg c1 null "in an odd cwd"
} >"$STORE/$PROJ/2026-01-04T00-00-00-000Z_cwd.jsonl"
touch -d @100 "$STORE/$PROJ/2026-01-04T00-00-00-000Z_cwd.jsonl" # last in recent/
mount_fs "$STORE" "$MNT"
S=$MNT/$PROJ/$STEM
LOG=$MNT/.pisessionfs/log

lines() { wc -l <"$SRC"; }

# --- labels as typed ---------------------------------------------------------------
fsx_out ls -A "$S/labels"
assert_eq "labels/ lists a/b as a%2Fb and the later dup as dup~u2" "a%2Fb
dup
dup~u2" "${OUT%$'\n'}"

# try_label NAME WHAT: ln -s into labels/ succeeds, appends exactly one line,
# and NAME is listed as typed and answers lstat and readlink.
try_label() {
	local name=$1 what=$2 before after
	before=$(lines)
	fsx_out ln -s ../0005-user.u3.md "$S/labels/$name"
	after=$(lines)
	assert_eq "ln -s for $what exits 0 (${ERR:-no error})" 0 "$RC"
	assert_eq "ln -s for $what appends one label entry" $((before + 1)) "$after"
	assert_contains "the label entry holds the label $what as typed" "$(python3 -c 'import json,sys; print(json.dumps(sys.argv[1], ensure_ascii=False)[1:-1])' "$name")" "$(tail -1 "$SRC")"
	assert_eq "labels/ lists $what as typed" 1 "$(fsx ls -A "$S/labels" | grep -cxF -- "$name" || true)"
	assert_eq "readlink of $what" "../0005-user.u3.md" "$(fsx readlink -- "$S/labels/$name")"
	# A retry is EEXIST, appends nothing.
	assert_errno "File exists" ln -s ../0004-assistant.a2.md "$S/labels/$name"
	assert_eq "a retry of $what appends nothing" "$after" "$(lines)"
	# An entry has one label: u3 is free for the next one.
	assert_true "rm labels/$what" rm -- "$S/labels/$name"
}
try_label "my label" "a label with a space"
try_label "café ☕ ünïcode" "a Unicode label"
try_label "100%" "a label ending in %"
try_label "50%OFF" "a label with % before non-hex"
try_label ".hidden" "a label with a leading dot"
try_label "v1~old" "a label holding ~"
long=$(printf 'L%.0s' {1..250})
try_label "$long" "a 250-byte label"

# '/' cannot be typed in a name: %2F is its escape, and the label holds '/'.
# u1 has the label a/b: a second one is refused until it goes.
before=$(lines)
assert_errno "Too many links" ln -s ../0001-user.u1.md "$S/labels/x%2Fy"
assert_eq "a second label on u1 appends nothing" "$before" "$(lines)"
assert_true "rm labels/a%2Fb" rm "$S/labels/a%2Fb"
before=$(lines)
fsx_out ln -s ../0001-user.u1.md "$S/labels/x%2Fy"
assert_eq "ln -s labels/x%2Fy exits 0 (${ERR:-})" 0 "$RC"
assert_contains "x%2Fy is the label x/y" '"label":"x/y"' "$(tail -1 "$SRC")"
assert_eq "x%2Fy appended one line" $((before + 1)) "$(lines)"
assert_eq "labels/x%2Fy resolves" "../0001-user.u1.md" "$(fsx readlink "$S/labels/x%2Fy")"

# A literal % before two hex digits is %25; "%41" names no label.
assert_true "rm labels/x%2Fy" rm "$S/labels/x%2Fy"
before=$(lines)
fsx_out ln -s ../0001-user.u1.md "$S/labels/a%2541"
assert_eq "ln -s labels/a%2541 exits 0 (${ERR:-})" 0 "$RC"
assert_contains "a%2541 is the label a%41" '"label":"a%41"' "$(tail -1 "$SRC")"
before=$(lines)
assert_errno "Invalid argument" ln -s ../0001-user.u1.md "$S/labels/%41"
assert_eq "labels/%41 appends nothing" "$before" "$(lines)"
assert_contains "the log says why %41 was refused" "no label is named so" "$(fsx cat "$LOG")"

# A tab typed in a name: listed %09, and the name typed answers too.
assert_true "rm labels/a%2541" rm "$S/labels/a%2541"
before=$(lines)
fsx_out ln -s ../0001-user.u1.md "$S/labels/tab"$'\t'"here"
assert_eq "ln -s of a label with a tab exits 0 (${ERR:-})" 0 "$RC"
assert_eq "it appended one line" $((before + 1)) "$(lines)"
assert_eq "the tab is listed as %09" 1 "$(fsx ls -A "$S/labels" | grep -cxF 'tab%09here' || true)"
assert_errno "File exists" ln -s ../0001-user.u1.md "$S/labels/tab"$'\t'"here"
assert_eq "its retry appends nothing" $((before + 1)) "$(lines)"

# The names of before: every byte outside A-Z a-z 0-9 _ - was %XX.
fsx ln -s ../0004-assistant.a2.md "$S/labels/my label" || true # asserted below
assert_eq "labels/my%20label (the name of before) resolves" "../0004-assistant.a2.md" \
	"$(fsx readlink "$S/labels/my%20label" 2>&1 || true)"
# mv in labels/: the new name as typed.
before=$(lines)
fsx_out mv "$S/labels/my label" "$S/labels/your label"
assert_eq "mv labels/'my label' 'your label' exits 0 (${ERR:-})" 0 "$RC"
assert_eq "it appended one line" $((before + 1)) "$(lines)"
assert_exists "$S/labels/your label"

# --- branches as typed -------------------------------------------------------------
before=$(lines)
fsx_out bash -c 'cd "$1" && mkdir "0003~my idea" && cd "0003~my idea" && echo "a new idea" > new.md && ls >/dev/null && pwd && ls' _ "$S"
assert_eq "mkdir, cd, write in '0003~my idea' exits 0 (${ERR:-})" 0 "$RC"
assert_contains "the shell's directory is still there after the write" "0003-user." "$OUT"
assert_eq "the write appended the message and its label" $((before + 2)) "$(lines)"
assert_eq "the branch is listed as typed" 1 "$(fsx ls -A "$S" | grep -cxF '0003~my idea' || true)"
assert_contains "the label holds the name typed" '"label":"my idea"' "$(tail -1 "$SRC")"
fsx_out bash -c 'cd "$1/0003~my idea" && echo "more" > next.md && ls' _ "$S"
assert_eq "a second write in the branch works (${ERR:-})" 0 "$RC"
assert_eq "the branch holds both messages" 2 "$(fsx ls "$S/0003~my idea" | grep -c 'user\.' || true)"
assert_exists "$S/0003~my%20idea"

before=$(lines)
fsx_out bash -c 'cd "$1" && mkdir "0004~ünï ✓" && echo x > "0004~ünï ✓/n.md" && ls "0004~ünï ✓"' _ "$S"
assert_eq "a Unicode branch name works (${ERR:-})" 0 "$RC"
assert_eq "it appended the message and its label" $((before + 2)) "$(lines)"

# Past the last entry: ERANGE, and the log says the range.
before=$(lines)
assert_errno "Numerical result out of range" mkdir "$S/0099~far"
assert_contains "the log says why 0099~far was refused" "no entry of depth 98 in this directory" "$(fsx cat "$LOG")"
assert_contains "and which depths work" "so NNNN is 0001 to 00" "$(fsx cat "$LOG")"
assert_eq "mkdir 0099~far appends nothing" "$before" "$(lines)"
# Right after the last entry there is no branch to make: what is written
# there continues the directory (the shell's directory would vanish).
tip=$(fsx ls "$S" | grep -E '^[0-9]{4}-' | tail -1)
next=$(printf '%04d' $((10#${tip%%-*} + 1)))
assert_errno "Numerical result out of range" mkdir "$S/${next}~after-the-tip"
assert_contains "the log says why ${next}~after-the-tip was refused" "nothing follows the entry of depth" "$(fsx cat "$LOG")"
assert_eq "mkdir after the tip appends nothing" "$before" "$(lines)"

# --- by-cwd: the cwd as it is ----------------------------------------------------------
assert_eq "by-cwd shows a cwd with % and a space as it is" "2026-01-04T00-00-00-000Z_cwd" \
	"$(fsx ls "$MNT/by-cwd/srv/100%/a b" 2>&1 || true)"
assert_eq "the by-cwd name of before (100%25) resolves" "2026-01-04T00-00-00-000Z_cwd" \
	"$(fsx ls "$MNT/by-cwd/srv/100%25/a b" 2>&1 || true)"
assert_eq "by-cwd lists 100% once" "100%" "$(fsx ls "$MNT/by-cwd/srv")"

# --- names that move keep resolving ----------------------------------------------------
# labels/: dup~u2 was listed; once a1's dup is cleared u2's is plain dup,
# and dup~u2 still resolves.
fsx rm "$S/labels/dup" || true # asserted below
assert_poll "u2's label becomes plain dup" 3 bash -c '[[ $(readlink "$1") == ../0003-user.u2.md ]]' _ "$S/labels/dup"
assert_eq "labels/ no longer lists dup~u2" 0 "$(fsx ls "$S/labels" | grep -cxF 'dup~u2' || true)"
assert_eq "labels/dup~u2, listed before, still resolves" "../0003-user.u2.md" "$(fsx readlink "$S/labels/dup~u2" 2>&1 || true)"

# recent/: ranks move when another session becomes active.
mk_session() { # STEM ID NAME MTIME
	local f=$STORE/$PROJ/$1.jsonl
	{
		header 3 "$2"
		user_msg u1 null "hello"
		printf '{"type":"session_info","id":"n1","parentId":"u1","timestamp":"2026-01-01T00:00:02.000Z","name":"%s"}\n' "$3"
	} >"$f"
	touch -d "@$4" "$f"
}
mk_session 2026-01-02T00-00-00-000Z_older aaaa1111-0000-0000-0000-000000000001 "Same name" 1000
mk_session 2026-01-03T00-00-00-000Z_newer bbbb2222-0000-0000-0000-000000000002 "Same name" 2000
touch -d @500 "$SRC"
# listed_first DIR NAME: DIR lists NAME first (a listing: a lookup would
# resolve NAME under any rank).
listed_first() { [[ $(ls "$1" | head -1) == "$2" ]]; }
export -f listed_first
# recent/ names carry the title (the name, else the first user message)
# and the end of the id.
assert_poll "recent/ lists the newer session first" 3 bash -c 'listed_first "$@"' _ "$MNT/recent" "01-Same name~00000002"
first="01-Same name~00000002"
touch "$SRC" # the session becomes the most recent: every rank moves
assert_poll "recent/ lists the touched session first" 3 bash -c 'listed_first "$@"' _ "$MNT/recent" "01-first~55555555"
assert_eq "and the newer one second" 1 "$(fsx ls "$MNT/recent" | grep -cxF "02-Same name~00000002" || true)"
assert_eq "recent/ no longer lists $first" 0 "$(fsx ls "$MNT/recent" | grep -cxF "$first" || true)"
assert_eq "recent/$first, listed before, still resolves" "../--w--/2026-01-03T00-00-00-000Z_newer" \
	"$(fsx readlink "$MNT/recent/$first" 2>&1 || true)"
assert_eq "any rank and title resolve: the id's end decides" "../--w--/2026-01-03T00-00-00-000Z_newer" \
	"$(fsx readlink "$MNT/recent/77-Renamed since~00000002" 2>&1 || true)"
assert_eq "the names of before (the file's name) resolve" "../--w--/2026-01-03T00-00-00-000Z_newer" \
	"$(fsx readlink "$MNT/recent/77-2026-01-03T00-00-00-000Z_newer" 2>&1 || true)"
assert_missing "$MNT/recent/01-Same name~0002"
assert_missing "$MNT/recent/01-no-such-session"
assert_missing "$MNT/recent/2026-01-03T00-00-00-000Z_newer"

# by-name/: the later of two sessions named alike is "Same name~bbbb2222";
# when the older is renamed, the later takes the plain name, and the
# suffixed name keeps resolving.
assert_poll "by-name lists the later one with its id" 3 bash -c 'ls "$1" | grep -qxF "Same name~bbbb2222"' _ "$MNT/by-name"
echo "Renamed" | fsx tee "$MNT/$PROJ/2026-01-02T00-00-00-000Z_older/name" >/dev/null
assert_poll "the later session takes the plain name" 3 \
	bash -c '[[ $(readlink "$1") == ../--w--/2026-01-03T00-00-00-000Z_newer ]]' _ "$MNT/by-name/Same name"
assert_eq "by-name no longer lists Same name~bbbb2222" 0 "$(fsx ls "$MNT/by-name" | grep -cxF 'Same name~bbbb2222' || true)"
assert_eq "by-name/Same name~bbbb2222, listed before, still resolves" "../--w--/2026-01-03T00-00-00-000Z_newer" \
	"$(fsx readlink "$MNT/by-name/Same name~bbbb2222" 2>&1 || true)"

finish
