#!/usr/bin/env bash
# Hostile and broken stores: every case of docs/layout.md's "Files that are
# not sessions" and tree rules, on one mount.  The daemon must show what the
# doc says, never hang, never crash, never log an error.
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh" "$@"

P=--p--
PD=$STORE/$P
mkdir -p "$PD"
M=$MNT/$P

# problem_lines DIR: the line numbers listed in DIR/problems, one per line.
problem_lines() {
	fsx cat "$1/problems" | sed -n 's/^line \([0-9][0-9]*\):.*/\1/p' | tr '\n' ' ' | sed 's/ $//'
}
# ids_in DIR: the ids of the entry files in DIR, in ls order.
# The tree's shape is what these checks are about; transcript.md,
# tree.txt and usage.json (t_layout, t_tree and t_extras check them) are
# left out of the listings.
eval "lib_$(declare -f ls_names)"
ls_names() { lib_ls_names "$@" | grep -Ev '^(transcript\.md|tree\.txt|usage\.json)$' || true; }

entry_files() {
	ls_names "$1" | grep '\.md$' | grep -v '^transcript\.md$' | tr '\n' ' ' | sed 's/ $//'
}

# --- files: build them all, then mount ----------------------------------------

# A truncated last line: no newline, not JSON.
{ header; user_msg a null "complete"; printf '{"type":"message","id":"tr'; } >"$PD/trunc.jsonl"
# A valid last line without its newline (pi was interrupted mid-write, or is
# writing it right now): not indexed until the newline arrives.
{ header; user_msg a null "first"; asst_msg b a "pending-reply"; } >"$PD/nonl.jsonl"
truncate -s -1 "$PD/nonl.jsonl"
# Invalid lines in the middle, a blank line, entries without usable ids, a
# second header.
{
	header                                     # 1
	user_msg a null "alpha"                    # 2
	printf 'not json at all\n'                 # 3
	asst_msg b a "bravo"                       # 4
	printf '{"type":"message","id":"x",\n'     # 5
	printf '[1,2,3]\n'                         # 6
	printf '\n'                                # 7
	printf '{"type":"message","parentId":"b","message":{"role":"user","content":"no id"}}\n' # 8
	user_msg "" b "empty id"                   # 9
	header                                     # 10
	user_msg c b "charlie"                     # 11
} >"$PD/midbad.jsonl"
# No header / empty / a header that is not first JSON.
user_msg a null "no header here" >"$PD/nohdr.jsonl"
: >"$PD/empty.jsonl"
{ printf 'garbage first\n'; header; user_msg a null "after garbage"; } >"$PD/lategarbage.jsonl"
# Not sessions at all: a directory named *.jsonl, a symlink, a FIFO, a
# socket-less special file, a non-jsonl file.  A symlinked project and a
# session file at the store root are shown (docs/layout.md, "The mount
# root"); a plain file at the root is not.
mkdir "$PD/dir.jsonl"
{ header; user_msg a null "outside"; } >"$T_DIR/outside.jsonl"
ln -s "$T_DIR/outside.jsonl" "$PD/link.jsonl"
ln -s nowhere "$PD/dangling.jsonl"
mkfifo "$PD/fifo.jsonl"
cp "$T_DIR/outside.jsonl" "$PD/notes.txt"
cp "$T_DIR/outside.jsonl" "$PD/.jsonl"
mkdir -p "$T_DIR/elsewhere"
cp "$T_DIR/outside.jsonl" "$T_DIR/elsewhere/s.jsonl"
ln -s "$T_DIR/elsewhere" "$STORE/--linked--"
cp "$T_DIR/outside.jsonl" "$STORE/stray.jsonl"
echo "not a session" >"$STORE/notes.txt"
# The tree rules: a cycle, a self-parent, an orphan, an extra root,
# duplicate ids, a child of the later duplicate.
{
	header                        # 1
	user_msg r null "root text"   # 2
	user_msg a b "a-text"         # 3  parent is later: orphan
	user_msg b a "b-text"         # 4  child of a
	user_msg c c "self-parent"    # 5  orphan
	user_msg d zzzz "orphan-text" # 6  orphan
	user_msg e null "extra-root"  # 7  extra root
	user_msg r r "dup-r-text"     # 8  duplicate id, child of line 2's r
	user_msg f r "f-text"         # 9  child of line 8's r
} >"$PD/tree.jsonl"
# Escaping: ids with '/', '..', '%', a space, a control character, UTF-8.
{
	header
	user_msg 'a/b' null "slash"
	user_msg '..' 'a/b' "dotdot"
	user_msg 'c\u0001d' '..' "control"
	user_msg '%41 sp' 'c\u0001d' "percent"
	user_msg 'é' '%41 sp' "utf8 id"
	user_msg '.' 'é' "dot"
} >"$PD/esc.jsonl"
# Labels: '/' and '%' in a branch's label, UTF-8, punctuation (escaped).
{
	header
	user_msg a null "a"
	asst_msg b a "b"
	user_msg c a "branch-one"
	user_msg d a "branch-two"
	user_msg e a "branch-three"
	label_entry l1 b c "fix/bug 1"
	label_entry l2 l1 d "日本語"
	label_entry l5 l2 b "v1.2:a+b=c@d,e"
	label_entry l6 l5 b "x"
	label_entry l7 l6 a "100%"
} >"$PD/labels.jsonl"
# A 4 KB label on an entry (labels/) and on a branch (a 4 KB branch name).
big=$(head -c 4096 /dev/zero | tr '\0' L)
big2=$(head -c 4096 /dev/zero | tr '\0' M)
{
	header
	user_msg a null "a"
	asst_msg b a "b"
	user_msg c a "branch"
	label_entry l1 b a "$big"
	label_entry l2 l1 b "short"
} >"$PD/biglabel.jsonl"
{
	header
	user_msg a null "a"
	asst_msg b a "b"
	user_msg c a "branch"
	label_entry l1 b c "$big2"
} >"$PD/bigbranch.jsonl"
# A line nested 100,000 deep, a 20 MB line, invalid UTF-8 in a string, a
# NUL escape in a text.
{
	header
	user_msg a null "before deep"
	python3 -c 'print("{\"type\":\"message\",\"id\":\"deep\",\"parentId\":\"a\",\"x\":" + "[" * 100000 + "]" * 100000 + "}")'
	asst_msg b a "after deep"
	python3 -c 'import sys; sys.stdout.write("{\"type\":\"message\",\"id\":\"big\",\"parentId\":\"b\",\"timestamp\":\"2026-01-01T00:00:05.000Z\",\"message\":{\"role\":\"user\",\"content\":\"" + "x" * (20 * 1024 * 1024) + " END-OF-BIG\",\"timestamp\":1}}\n")'
	printf '{"type":"message","id":"u8","parentId":"big","timestamp":"2026-01-01T00:00:06.000Z","message":{"role":"user","content":"bad \xff\xfe utf8","timestamp":2}}\n'
	user_msg nul u8 'before\u0000after-nul'
} >"$PD/weird.jsonl"
# 300-byte label, branch label and id: listed (under 1024 bytes the kernel
# takes them) but longer than NAME_MAX, so a listed name would not resolve.
l300=$(head -c 300 /dev/zero | tr '\0' N)
i300=$(head -c 300 /dev/zero | tr '\0' 7)
i2000=$(head -c 2000 /dev/zero | tr '\0' 8)
{
	header
	user_msg a null "a"
	asst_msg b a "b"
	user_msg c a "branch"
	label_entry l1 b a "$l300"
	label_entry l2 l1 c "O$l300"
	user_msg "$i300" l2 "long id"
} >"$PD/long300.jsonl"
{
	header
	user_msg a null "a"
	user_msg "$i2000" a "longer id"
} >"$PD/longid.jsonl"
for f in "$PD"/*.jsonl; do
	[[ -f $f && ! -L $f ]] && cp "$f" "$f.orig"
done

mount_fs "$STORE" "$MNT"

# --- what the store shows -------------------------------------------------------
assert_eq "ls of the mount root: the project, the symlinked project, the session at the root" "--linked--
$P
.pisessionfs
stray" "$(ls_names "$MNT" | grep -Ev '^(by-id|by-name|by-cwd|recent|usage(-daily|-monthly|-daily-models)?\.csv|usage\.svg|sessions\.md|search)$')"
assert_eq "ls of the project: only regular *.jsonl files" "bigbranch
biglabel
empty
esc
labels
lategarbage
long300
longid
midbad
nohdr
nonl
tree
trunc
weird" "$(ls_names "$M" | grep -Ev '(\.orig|^usage(-daily|-monthly|-daily-models)?\.csv|^usage\.svg|^sessions\.md|^search)$' || true)"
for n in dir link dangling fifo notes.txt --nothing; do
	assert_missing "$M/$n"
done
# (".jsonl" would be a session with an empty name: the listing above has no
# empty line.)  A symlinked project is followed; a session file at the store
# root is a session directory at the mount root; other files there are not
# shown.
assert_contains "the symlinked project's session reads" "outside" "$(fsx cat "$MNT/--linked--/s/0001-user.a.md")"
assert_contains "the session at the store root reads" "outside" "$(fsx cat "$MNT/stray/0001-user.a.md")"
assert_missing "$MNT/stray.jsonl"
assert_missing "$MNT/notes.txt"
assert_missing "$MNT/notes"

# --- truncated last line -----------------------------------------------------------
assert_eq "truncated: only the complete entry" "0001-user.a.md" "$(entry_files "$M/trunc")"
fsx_out readlink "$M/trunc/leaf"
assert_eq "truncated: leaf is the complete entry" "0001-user.a.md" "${OUT%$'\n'}"
# Not shown, but not hidden either: problems says it is there (pi skips
# it), as long as it stays without its newline.
tail_why="no newline at its end (26 bytes), not shown: cut short by a crash or a full disk, or being written now; pi skips it unless it is whole JSON, and the mount's next append ends it with a newline first"
assert_file_content "$M/trunc/problems" "line 3: $tail_why"$'\n'
assert_same_bytes "$M/trunc/session.jsonl" "$PD/trunc.jsonl"
fsx_out stat -c %s "$M/trunc/session.jsonl"
assert_eq "truncated: session.jsonl size includes the partial line" "$(stat -c %s "$PD/trunc.jsonl")" "${OUT%$'\n'}"
# The next append through the mount ends it with a newline first: the cut
# line becomes line 3, skipped as pi skips it, and the new message line 4.
# shellcheck disable=SC2016 # bash -c gets its argument as $1
fsx_out bash -c 'echo after-cut >"$1"' _ "$M/trunc/new.md"
assert_eq "truncated: a message appended through the mount" 0 "$RC"
assert_eq "truncated: the cut line got its newline, then the message" \
	'{"type":"message","id":"tr' "$(sed -n 3p "$PD/trunc.jsonl")"
assert_contains "truncated: the message is line 4" '"content":"after-cut"' "$(sed -n 4p "$PD/trunc.jsonl")"
assert_file_content "$M/trunc/problems" "line 3: not a JSON object, skipped"$'\n'

# --- a valid line without its newline: not shown until the newline comes ----------
assert_eq "no newline: b not shown" "0001-user.a.md" "$(entry_files "$M/nonl")"
assert_missing "$M/nonl/entries/b.json"
fsx_out readlink "$M/nonl/leaf"
assert_eq "no newline: leaf is a" "0001-user.a.md" "${OUT%$'\n'}"
assert_eq "no newline: problems names the line" "3" "$(problem_lines "$M/nonl")"
printf '\n' >>"$PD/nonl.jsonl"
assert_poll "no newline: b shows once its newline arrives" 2 test -f "$M/nonl/0002-assistant.b.md"
assert_poll "no newline: problems empty once it arrives" 2 test ! -s "$M/nonl/problems"
fsx_out readlink "$M/nonl/leaf"
assert_eq "no newline: leaf is b after the newline" "0002-assistant.b.md" "${OUT%$'\n'}"
line_of "$PD/nonl.jsonl" 3 >"$T_DIR/want"
assert_same_bytes "$M/nonl/entries/b.json" "$T_DIR/want"
# A partial line that completes as garbage becomes a problem then.
printf '{"broken' >>"$PD/nonl.jsonl"
assert_poll "no newline: the partial line is listed as such" 2 \
	grep -qxF "line 4: ${tail_why/26 bytes/8 bytes}" "$M/nonl/problems"
printf '\n' >>"$PD/nonl.jsonl"
assert_poll "no newline: the completed bad line is listed" 2 grep -qxF 'line 4: not a JSON object, skipped' "$M/nonl/problems"

# --- invalid lines in the middle ----------------------------------------------------
assert_eq "middle: the good entries in one chain" "0001-user.a.md 0002-assistant.b.md 0003-user.c.md" "$(entry_files "$M/midbad")"
assert_eq "middle: entries/" "a.json
b.json
c.json" "$(ls_names "$M/midbad/entries")"
assert_eq "middle: problems name the bad lines" "3 5 6 8 9 10" "$(problem_lines "$M/midbad")"
fsx_out cat "$M/midbad/problems"
assert_eq "middle: problems has one line per problem, newline-terminated" "6" "$(printf '%s' "$OUT" | wc -l)"
assert_eq "middle: every problem says why (line N: reason)" "" "$(grep -Ev '^line [0-9]+: [^ ].*$' <<<"${OUT%$'\n'}" || true)"
assert_missing "$M/midbad/error"
assert_json "$M/midbad/context.json"
fsx_out cat "$M/midbad/0003-user.c.md"
assert_contains "middle: c's parent is b" "parentId: b" "$OUT"
assert_same_bytes "$M/midbad/session.jsonl" "$PD/midbad.jsonl"

# --- not sessions: only session.jsonl and error -------------------------------------
for n in nohdr empty; do
	assert_eq "$n: only error and session.jsonl" "error
session.jsonl" "$(ls_names "$M/$n")"
	fsx_out cat "$M/$n/error"
	assert_eq "$n: error is one line" "1" "$(printf '%s' "$OUT" | wc -l)"
	assert_ne "$n: error says something" "" "${OUT%$'\n'}"
	assert_same_bytes "$M/$n/session.jsonl" "$PD/$n.jsonl"
	assert_missing "$M/$n/context.json"
	assert_missing "$M/$n/0001-user.a.md"
	fsx_out stat -c %s "$M/$n/error"
	assert_eq "$n: st_size of error" "$(fsx cat "$M/$n/error" | wc -c)" "${OUT%$'\n'}"
done
fsx_out cat "$M/empty/error"
assert_contains "empty: error says empty" "empty" "$OUT"
fsx_out cat "$M/nohdr/error"
assert_contains "nohdr: error names the header" "header" "$OUT"
# The first JSON line is the header here: the garbage line is a problem.
assert_eq "garbage then header: a session" "0001-user.a.md" "$(entry_files "$M/lategarbage")"
assert_eq "garbage then header: the garbage is a problem" "1" "$(problem_lines "$M/lategarbage")"

# --- tree rules -----------------------------------------------------------------------
T=$M/tree
assert_eq "tree: session directory" "0001-user.r.md
0001~a
0001~c
0001~d
0001~e
0002-user.r.md
0003-user.f.md
context.json
header.json
labels
leaf
loadout.json
name
problems
session.jsonl" "$(ls_names "$T")"
assert_eq "tree: a cycle a->b->a: a is an orphan (forward parent), b its child" "0001-user.a.md
0002-user.b.md
context.json" "$(ls_names "$T/0001~a")"
assert_eq "tree: a self-parent is an orphan" "0001-user.c.md
context.json" "$(ls_names "$T/0001~c")"
assert_eq "tree: a missing parent makes an orphan" "0001-user.d.md
context.json" "$(ls_names "$T/0001~d")"
assert_eq "tree: an extra root" "0001-user.e.md
context.json" "$(ls_names "$T/0001~e")"
fsx_out readlink "$T/leaf"
assert_eq "tree: leaf is the last line" "0003-user.f.md" "${OUT%$'\n'}"
fsx_out cat "$T/0001~a/context.json"
assert_contains "tree: the orphan's context has its chain" "b-text" "$OUT"
fsx_out cat "$T/context.json"
assert_contains "tree: the leaf's context goes through the later r" "dup-r-text" "$OUT"
assert_contains "tree: the leaf's context starts at the first r" "root text" "$OUT"
assert_eq "tree: duplicate ids: entries/" "a.json
b.json
c.json
d.json
e.json
f.json
r.json
r~2.json" "$(ls_names "$T/entries")"
line_of "$PD/tree.jsonl" 8 >"$T_DIR/want"
assert_same_bytes "$T/entries/r.json" "$T_DIR/want"
line_of "$PD/tree.jsonl" 2 >"$T_DIR/want"
assert_same_bytes "$T/entries/r~2.json" "$T_DIR/want"
fsx_out cat "$T/0001-user.r.md"
assert_contains "tree: the earlier r keeps its own file" "root text" "$OUT"
fsx_out cat "$T/0002-user.r.md"
assert_contains "tree: the later r is its child" "dup-r-text" "$OUT"
problems=" $(problem_lines "$T") "
for l in 3 5 6; do
	assert_contains "tree: problems list orphan line $l" " $l " "$problems"
done
assert_contains "tree: problems list the duplicate id (line 8)" " 8 " "$problems"

# --- escaping ------------------------------------------------------------------------
E=$M/esc
fsx_out ls -A "$E"
names=${OUT%$'\n'}
assert_eq "escape: entry files" "0001-user.a%2Fb.md
0002-user.%2E%2E.md
0003-user.c%01d.md
0004-user.%2541%20sp.md
0005-user.%C3%A9.md
0006-user.%2E.md" "$(grep '\.md$' <<<"$names" | grep -v '^transcript\.md$' || true)"
bad=$(grep -E '^\.{1,2}$|/|[[:cntrl:]]' <<<"$names" || true)
assert_eq "escape: no name is . or .. or holds / or a control char" "" "$bad"
fsx_out ls -A "$E/entries"
assert_eq "escape: entries/" "%2541%20sp.json
%2E%2E.json
%2E.json
%C3%A9.json
a%2Fb.json
c%01d.json" "${OUT%$'\n'}"
line_of "$PD/esc.jsonl" 3 >"$T_DIR/want"
assert_same_bytes "$E/entries/%2E%2E.json" "$T_DIR/want"
fsx_out cat "$E/0004-user.%2541%20sp.md"
assert_contains "escape: the file of id '%41 sp'" "percent" "$OUT"
# Unescaped spellings do not resolve to anything (no path games).
assert_missing "$E/0004-user.%41 sp.md"
assert_missing "$E/entries/a%2fb.json"
assert_missing "$E/0001-user.a%2fb.md"
assert_missing "$E/0004-user.%2541%2Osp.md"
assert_missing "$E/0004-user.%25%34%31%20sp.md"
assert_missing "$E/entries/..json"

# --- labels ---------------------------------------------------------------------------
L=$M/labels
fsx_out ls -A "$L"
lsl=${OUT%$'\n'}
assert_eq "labels: branches named by label as typed, only '/' escaped" "0001-user.a.md
0002-assistant.b.md
0002~e
0002~fix%2Fbug 1
0002~日本語
0003-label.l1.md
0004-label.l2.md
0005-label.l5.md
0006-label.l6.md
0007-label.l7.md" "$(grep -v '^[a-z]' <<<"$lsl" || true)"
assert_exists "$L/0002~c"
assert_exists "$L/0002~d"
assert_same_bytes "$L/0002~c/0002-user.c.md" "$L/0002~fix%2Fbug 1/0002-user.c.md"
fsx_out ls -A "$L/labels"
assert_eq "labels: labels/" "100%
fix%2Fbug 1
x
日本語" "${OUT%$'\n'}"
fsx_out readlink "$L/labels/fix%2Fbug 1"
assert_eq "labels: the '/' label's target" "../0002~fix%2Fbug 1/0002-user.c.md" "${OUT%$'\n'}"
assert_same_bytes "$L/labels/fix%2Fbug 1" "$L/0002~c/0002-user.c.md"
# The names of before (every byte outside A-Za-z0-9_- escaped) resolve.
assert_same_bytes "$L/labels/fix%2Fbug%201" "$L/0002~c/0002-user.c.md"
assert_exists "$L/0002~fix%2Fbug%201"
assert_exists "$L/labels/100%25"
assert_exists "$L/labels/%E6%97%A5%E6%9C%AC%E8%AA%9E"
fsx_out readlink "$L/labels/x"
assert_eq "labels: the latest label of b wins" "../0002-assistant.b.md" "${OUT%$'\n'}"
PUNCT='v1%2E2%3Aa%2Bb%3Dc%40d%2Ce'   # "v1.2:a+b=c@d,e" as it was named before
assert_missing "$L/labels/v1.2:a+b=c@d,e"   # replaced by "x"
label_entry l8 l7 e "v1.2:a+b=c@d,e" >>"$PD/labels.jsonl"
assert_poll "labels: punctuation kept in a branch name" 2 test -d "$L/0002~v1.2:a+b=c@d,e"
assert_poll "labels: punctuation kept in labels/" 2 test -L "$L/labels/v1.2:a+b=c@d,e"
assert_eq "labels: listed as typed" 1 "$(fsx ls -A "$L/labels" | grep -cxF 'v1.2:a+b=c@d,e' || true)"
# The name of before resolves too, and no other spelling does.
assert_exists "$L/labels/$PUNCT"
assert_exists "$L/0002~$PUNCT"
assert_missing "$L/labels/${PUNCT,,}"
assert_missing "$L/0002~${PUNCT,,}"
assert_missing "$L/labels/%78"     # "x" spelled %78
assert_missing "$L/0002~%65"       # branch "e" spelled %65
# A label named ".." or "." must not make labels/.. or labels/. mean it.
label_entry l9 l8 c ".." >>"$PD/labels.jsonl"
label_entry l10 l9 d "." >>"$PD/labels.jsonl"
# shellcheck disable=SC2016 # $1 is the inner shell's
assert_poll "labels: the '.' and '..' labels are listed" 2 bash -c '[[ $(ls -A "$1" | wc -l) == 5 ]]' _ "$L/labels"
fsx_out ls -A "$L/labels"
assert_eq "labels: no label listed as . or .." "" "$(grep -Ex '\.{1,2}' <<<"${OUT%$'\n'}" || true)"
fsx_out ls -A "$L"
assert_eq "labels: no branch named . or .." "" "$(grep -Ex '\.{1,2}' <<<"${OUT%$'\n'}" || true)"
fsx_out stat -c %F "$L/labels/.."
assert_eq "labels: labels/.. is still the session directory" "directory" "${OUT%$'\n'}"
fsx_out stat -c %F "$L/labels/."
assert_eq "labels: labels/. is still labels/" "directory" "${OUT%$'\n'}"

# A 4 KB label: listing must still work (the kernel rejects names longer
# than 1024 bytes in a readdir reply with EIO, and no file name may exceed
# NAME_MAX = 255 bytes); the labelled entry and the branch stay reachable.
for n in biglabel bigbranch; do
	fsx_out ls -A "$M/$n"
	assert_eq "$n: ls of the session directory works ($(show "${ERR##*: }"))" "0" "$RC"
	assert_eq "$n: no listed name longer than 255 bytes" "" "$(awk 'length($0) > 255' <<<"${OUT%$'\n'}")"
done
fsx_out ls -A "$M/biglabel/labels"
assert_eq "biglabel: ls labels/ works ($(show "${ERR##*: }"))" "0" "$RC"
assert_contains "biglabel: the short label is listed" "short" "$OUT"
assert_eq "biglabel: no label name longer than 255 bytes" "" "$(awk 'length($0) > 255' <<<"${OUT%$'\n'}")"
assert_eq "bigbranch: the branch still resolves by id" "0002-user.c.md
context.json" "$(ls_names "$M/bigbranch/0002~c")"
fsx_out grep -rl --include='*.md' "branch" "$M/bigbranch"
assert_eq "bigbranch: grep -r reaches the branch ($(show "${ERR##*: }"))" "0" "$RC"

# Names over NAME_MAX: whatever the daemon calls them, every listed name
# must resolve, and nothing may break the listing.
for d in "$M/long300" "$M/long300/labels" "$M/longid" "$M/longid/entries" "$M/long300/entries"; do
	fsx_out ls -A "$d"
	assert_eq "${d#"$M"/}: ls works ($(show "${ERR##*: }"))" 0 "$RC"
	assert_eq "${d#"$M"/}: no listed name longer than 255 bytes" "" "$(awk 'length($0) > 255 { print substr($0, 1, 40) "...(" length($0) ")" }' <<<"${OUT%$'\n'}")"
	unresolved=()
	while IFS= read -r n; do
		[[ -n $n ]] || continue
		fsx stat -- "$d/$n" >/dev/null 2>&1 || unresolved+=("${n:0:40}...(${#n})")
	done <<<"${OUT%$'\n'}"
	assert_eq "${d#"$M"/}: every listed name resolves" "" "${unresolved[*]}"
done
assert_exists "$M/long300/0002~c/0002-user.c.md"
fsx_out find "$M/long300" "$M/longid"
assert_eq "long names: find walks them without errors ($(show "${ERR:0:200}"))" 0 "$RC"

# --- deep nesting, a 20 MB line, bad UTF-8, NUL ----------------------------------------
W=$M/weird
assert_eq "weird: the deep line is skipped, the rest shown" \
	"0001-user.a.md 0002-assistant.b.md 0003-user.big.md 0004-user.u8.md 0005-user.nul.md" "$(entry_files "$W")"
assert_eq "weird: the deep line is a problem" "3" "$(problem_lines "$W")"
fsx_out stat -c %s "$W/0003-user.big.md"
bigsize=${OUT%$'\n'}
if [[ $bigsize =~ ^[0-9]+$ ]] && ((bigsize > 20 * 1024 * 1024)); then pass; else fail "weird: the 20 MB entry's size is $bigsize"; fi
assert_eq "weird: st_size of the 20 MB entry is what cat gives" "$bigsize" "$(fsx cat "$W/0003-user.big.md" | wc -c)"
fsx_out tail -c 200 "$W/0003-user.big.md"
assert_contains "weird: the 20 MB entry's end" "x END-OF-BIG" "$OUT"
fsx_out grep -rl --include='*.md' --exclude=transcript.md END-OF-BIG "$W"
assert_eq "weird: grep finds the end of the 20 MB entry" "$W/0003-user.big.md" "${OUT%$'\n'}"
line_of "$PD/weird.jsonl" 5 >"$T_DIR/want"
assert_same_bytes "$W/entries/big.json" "$T_DIR/want"
assert_json "$W/context.json"
fsx cat "$W/context.json" >"$T_DIR/ctx.json" || true
assert_eq "weird: context.json size" "$(wc -c <"$T_DIR/ctx.json")" "$(fsx stat -c %s "$W/context.json")"
check=$(python3 - "$T_DIR/ctx.json" <<'EOF' 2>&1
import json, sys
m = json.load(open(sys.argv[1]))["messages"]
print(m[2]["content"].endswith(" END-OF-BIG"), len(m[2]["content"]))
print(m[3]["content"] == "bad \ufffd\ufffd utf8")
print(m[4]["content"] == "before\u0000after-nul")
EOF
)
assert_eq "weird: context has the 20 MB text, U+FFFD for bad bytes, the NUL" "True $((20 * 1024 * 1024 + 11))
True
True" "$check"
fsx_out cat "$W/0004-user.u8.md"
assert_contains "weird: invalid UTF-8 shows as U+FFFD" $'bad \xef\xbf\xbd\xef\xbf\xbd utf8' "$OUT"
fsx cat "$W/0005-user.nul.md" >"$T_DIR/nul.md" || true
if grep -q 'after-nul' "$T_DIR/nul.md" && grep -aq 'before' "$T_DIR/nul.md"; then pass; else fail "weird: the text after a NUL is lost: $(show "$(tr '\0' '@' <"$T_DIR/nul.md")")"; fi
assert_eq "weird: st_size of the NUL entry" "$(wc -c <"$T_DIR/nul.md")" "$(fsx stat -c %s "$W/0005-user.nul.md")"

# --- nothing was written, and everything is still readable ------------------------------
RC=0
# (big* and long* are left out: checked above)
fsx find "$MNT" \( -name 'big*' -o -name 'long*' \) -prune -o -type f -name '*.md' -exec cat {} + >/dev/null 2>"$T_DIR/err" || RC=$?
assert_eq "every entry file reads ($(head -3 "$T_DIR/err"))" "0" "$RC"
for f in "$PD"/*.orig; do
	cur=${f%.orig}
	case $cur in */nonl.jsonl | */labels.jsonl | */trunc.jsonl) continue ;; esac # appended to above
	if cmp -s "$f" "$cur"; then pass; else fail "the mount changed $(basename "$cur")"; fi
done

finish
