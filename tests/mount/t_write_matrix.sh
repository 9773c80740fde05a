#!/usr/bin/env bash
# Real tools' write patterns, one session each (docs/layout.md, "When a
# write is committed", "Editors' side files"): shell groups and subshells
# with external commands, make, tee -a, >>, sponge, gawk -i inplace,
# perl -pi, patch, unzip, Node's write-file-atomic, the temporary names
# such libraries use (NAME.md.vsctmp, NAME.md.tmp-123, NAME.md.<hash>),
# touch, and cp of an entry file to a new name.  Each case checks the
# tool's exit status and every line it appended (count, type, role, text,
# parent, fresh ids and timestamps: check_append.py) against what the tool
# meant.  Whole-session copies (tar, cp -r/-a, rsync) are in
# t_write_matrix_trees.sh.
#
# On the daemon before the write-path rewrite (commit bc68792), these
# cases fail, as the issue expects (measured):
#   * { echo a; /bin/echo b; echo c; } > new.md: /bin/echo's close(2)
#     commits "a\nb", and bash's "c", written after that commit, is
#     dropped: one message "a\nb".
#   * the same group onto an entry: two siblings, "a\nb" and "a\nb\nc".
#   * (cat header; echo more) > new.md: cat's close commits "head line";
#     "more" is dropped.
#   * make > made.md: the first recipe line's close commits "one"; the
#     other three lines are dropped.
#   * { echo x; /bin/echo y; } >> ENTRY: one sibling "alpha two\ny":
#     bash's "x" is lost.
#   * gawk -i inplace: mkstemp(ENTRY.md.gawk.XXXXXX) is refused (EPERM,
#     "refused creating"), gawk exits 2, nothing appended.
#   * patch: its temporary ENTRY.md.XXXXXXX is refused (EPERM), patch exits
#     2 ("Can't create temporary file").
#   * write-file-atomic (new file and entry rewrite): its NAME.md.<hash>
#     temporary is refused (EPERM), nothing appended.
#   * NAME.md.vsctmp, NAME.md.tmp-123, NAME.md.<digits>, NAME.json.tmp-9:
#     refused at creation (EPERM).
#   * touch new.md: nothing is appended (as it should) but the log says
#     nothing about the empty file.
#   * cp ENTRY.md copy.md: the new message keeps the copied
#     message.timestamp (1767225601000) instead of a fresh one.
# The others (tee -a, echo >>, sponge, sponge -a, perl -pi, unzip -n) pass
# there too.
# shellcheck disable=SC2016 # 'bash -c' scripts get their arguments as $1...
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh" "$@"

# The interpreter itself, not a version manager's shim (which costs 0.2 s a
# call).
PY=$(python3 -c 'import sys; print(sys.executable)')
ROOT=$(cd "$(dirname "$0")/../.." && pwd)

PROJ=--home-u-w--
mkdir -p "$STORE/$PROJ"

# --- helpers ------------------------------------------------------------------

# The base session of every case:
#   aaaa0001 user "alpha one" (root), aaaa0002 assistant "reply one",
#   aaaa0003 user "alpha two", aaaa0004 assistant "reply two" (the tip).
mksession() {
	local f=$STORE/$PROJ/$1.jsonl
	{
		header
		alpha_turns
	} >"$f"
	chmod 644 "$f"
}
U1=0001-user.aaaa0001.md
A2=0002-assistant.aaaa0002.md
U3=0003-user.aaaa0003.md

# What asst_msg writes as the message, with TEXT (JSON-escaped by the
# caller) and message timestamp TS.
asst_json() {
	printf '{"role":"assistant","content":[{"type":"text","text":"%s"}],"api":"x","provider":"p","model":"m","usage":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"totalTokens":0,"cost":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"total":0}},"stopReason":"stop","timestamp":%s}' \
		"$1" "$2"
}
# user_new PARENT TEXT: the entry a new user message (or a user entry's
# sibling) must be, as check_append.py reads it (TEXT JSON-escaped).
user_new() {
	local parent=null
	[[ $1 == null ]] || parent="\"$1\""
	printf '{"type":"message","id":"@id","parentId":%s,"timestamp":"@ts","message":{"role":"user","content":"%s","timestamp":"@ms"}}' \
		"$parent" "$2"
}

# check_append.py: the lines appended since `mark` are exactly the
# expected entries ("@id" a fresh id, "@ts"/"@ms" timestamps of now,
# "@newN" the id of appended line N).
cp "$(dirname "$0")/check_append.py" "$T_DIR/check.py"

# start SESSION: the case's session: S (its directory on the mount), F
# (its file in the store), and a mark.
start() {
	S=$MNT/$PROJ/$1
	F=$STORE/$PROJ/$1.jsonl
	mark "$F"
}

# mark FILE: remembers the session file's lines and sha256 and the log's
# length.
mark() {
	MARK_FILE=$1
	MARK_LINES=$(wc -l <"$1")
	MARK_SHA=$(sha256sum <"$1")
	MARK_LOG=$(fsx cat "$MNT/.pisessionfs/log" | wc -l)
}

# new_log: the log's lines since mark.
new_log() {
	fsx cat "$MNT/.pisessionfs/log" | tail -n +$((MARK_LOG + 1))
}

# expect_new WHAT JSON-ARRAY: the lines appended since mark are these
# entries; NEW_IDS gets their ids.  And nothing was refused.
expect_new() {
	local out
	NEW_IDS=()
	if out=$("$PY" -I -S "$T_DIR/check.py" "$MARK_FILE" "$MARK_LINES" "$2" 2>&1); then
		pass
		read -r -a NEW_IDS <<<"$out"
	else
		fail "$1: $out"
	fi
	assert_eq "$1: no refusal in the log" "" "$(new_log | grep refused || true)"
}

# expect_same WHAT: the session file is byte-identical since mark.
expect_same() {
	assert_eq "$1: session file unchanged (sha256)" "$MARK_SHA" "$(sha256sum <"$MARK_FILE")"
}

# run_sh WHAT SCRIPT ARGS...: a shell command line (bash -c, in the
# session directory S) under fsx; it must exit 0.
run_sh() {
	local what=$1 script=$2
	shift 2
	fsx_out bash -c "cd \"\$0\" && $script" "$S" "$@"
	assert_eq "$what: exit status (stderr: $(show "$ERR"))" 0 "$RC"
}

# need PACKAGE COMMAND: tests/deps.sh installs these; a missing tool fails
# the test (it is promised), it does not skip it.
need() {
	command -v "$2" >/dev/null && return 0
	fail "$2 is missing (tests/deps.sh --test installs $1)"
	return 1
}

# --- the sessions ---------------------------------------------------------------
CASES=(group group-entry subshell make tee-a append append-group sponge sponge-a
	gawk perl patch unzip-n unzip-o wfa-new wfa-entry side-names touch cp-entry)
for s in "${CASES[@]}"; do
	mksession "s-$s"
done
mount_fs "$STORE" "$MNT"
D=$MNT/$PROJ

# --- a shell group with an external command: one message -------------------------
# bash opens new.md for the group; /bin/echo inherits the descriptor and
# closes it when it exits, which is not a commit point: the opener's close
# commits the whole text once.
start s-group
run_sh "{ echo a; /bin/echo b; echo c; } > new.md" '{ echo a; /bin/echo b; echo c; } >new.md'
expect_new "group > new.md: one message a, b, c" "[$(user_new aaaa0004 'a\nb\nc')]"

# The same group onto an entry file: one sibling.
start s-group-entry
run_sh "{ echo a; /bin/echo b; echo c; } > ENTRY" '{ echo a; /bin/echo b; echo c; } >"$1"' "$U3"
expect_new "group > ENTRY: one sibling a, b, c" "[$(user_new aaaa0002 'a\nb\nc')]"

# A subshell whose first command is external.
start s-subshell
printf 'head line\n' >"$T_DIR/header"
run_sh "(cat header; echo more) > new.md" '(cat "$1"; echo more) >new.md' "$T_DIR/header"
expect_new "(cat header; echo more) > new.md: one message" "[$(user_new aaaa0004 'head line\nmore')]"

# make: every recipe line is a shell of its own (and /bin/echo inside
# one), all writing to make's standard output.
start s-make
mkdir -p "$T_DIR/mk"
printf 'all:\n\t@echo one\n\t@printf "two\\n"\n\t@/bin/echo three; echo four\n' >"$T_DIR/mk/Makefile"
run_sh "make > made.md" 'make -s --no-print-directory -C "$1" >made.md' "$T_DIR/mk"
expect_new "make > made.md: one message with all four lines" "[$(user_new aaaa0004 'one\ntwo\nthree\nfour')]"

# --- appends: tee -a, >>, a group >> ---------------------------------------------
start s-tee-a
run_sh "tee -a ENTRY" 'echo teed | tee -a "$1" >/dev/null' "$U1"
expect_new "tee -a ENTRY: a sibling root with the line added" "[$(user_new null 'alpha one\nteed')]"
mark "$F"
run_sh "tee -a new.md" 'echo "teed new" | tee -a teed.md >/dev/null'
expect_new "tee -a new.md: a new message under the tip" "[$(user_new aaaa0004 'teed new')]"

start s-append
run_sh "echo >> ENTRY" 'echo more >>"$1"' "$U3"
expect_new "echo >> ENTRY: a sibling with the line added" "[$(user_new aaaa0002 'alpha two\nmore')]"

start s-append-group
run_sh "{ echo x; /bin/echo y; } >> ENTRY" '{ echo x; /bin/echo y; } >>"$1"' "$U3"
expect_new "group >> ENTRY: one sibling" "[$(user_new aaaa0002 'alpha two\nx\ny')]"

# --- sponge (moreutils): reads everything, then writes the file ---------------------
if need moreutils sponge; then
	start s-sponge
	run_sh "sed | sponge ENTRY" 'sed "s/reply one/reply sponged/" "$1" | sponge "$1"' "$A2"
	expect_new "sponge ENTRY: a sibling assistant message" \
		"[{\"type\":\"message\",\"id\":\"@id\",\"parentId\":\"aaaa0001\",\"timestamp\":\"@ts\",\"message\":$(asst_json "reply sponged" '"@int"')}]"
	start s-sponge-a
	run_sh "sponge -a ENTRY" 'echo extra | sponge -a "$1"' "$U1"
	expect_new "sponge -a ENTRY: a sibling with the line added" "[$(user_new null 'alpha one\nextra')]"
fi

# --- in-place editors: gawk -i inplace, perl -pi, patch -----------------------------
# gawk's inplace extension writes ENTRY.md.gawk.XXXXXX (mkstemp) and renames
# it over the entry: a side file of ENTRY.md, then an edit.
if need gawk gawk; then
	start s-gawk
	run_sh "gawk -i inplace" 'gawk -i inplace "{ sub(/alpha two/, \"gawked two\") } 1" "$1"' "$U3"
	expect_new "gawk -i inplace ENTRY: one sibling" "[$(user_new aaaa0002 'gawked two')]"
	assert_eq "gawk -i inplace: no temporary left" "" "$(ls_names "$S" | grep -F '.gawk.' || true)"
fi

start s-perl
run_sh "perl -pi" 'perl -pi -e "s/alpha two/perl two/" "$1"' "$U3"
expect_new "perl -pi ENTRY: one sibling" "[$(user_new aaaa0002 'perl two')]"

# GNU patch writes the result to ENTRY.md.XXXXXXX and renames it.
if need patch patch; then
	start s-patch
	fsx cat "$S/$U3" >"$T_DIR/u3.orig"
	sed 's/^alpha two$/patched two/' "$T_DIR/u3.orig" >"$T_DIR/u3.new"
	(cd "$T_DIR" && diff -u u3.orig u3.new | sed "1s|^--- u3.orig|--- $U3|; 2s|^+++ u3.new|+++ $U3|") >"$T_DIR/u3.diff" || true
	run_sh "patch -p0 < diff" 'patch -s -p0 <"$1"' "$T_DIR/u3.diff"
	expect_new "patch ENTRY: one sibling" "[$(user_new aaaa0002 'patched two')]"
	assert_eq "patch: no temporary, .orig or .rej left" "" "$(ls_names "$S" | grep -E "^$U3." || true)"
fi

# --- unzip of an archive of entry files ------------------------------------------------
# The archive holds U1 as it is, A2 edited, and two new names.
if need unzip unzip && need zip zip; then
	mkdir -p "$T_DIR/z"
	fsx cat "$D/s-unzip-n/$U1" >"$T_DIR/z/$U1"
	fsx cat "$D/s-unzip-n/$A2" | sed 's/^reply one$/reply unzipped/' >"$T_DIR/z/$A2"
	printf 'zipped new\n' >"$T_DIR/z/znew.md"
	printf 'zipped second\n' >"$T_DIR/z/znew2.md"
	(cd "$T_DIR/z" && zip -q ../e.zip "$U1" "$A2" znew.md znew2.md)
	# unzip -n: never overwrite; the new names are new messages.
	start s-unzip-n
	run_sh "unzip -n" 'unzip -q -n "$1"' "$T_DIR/e.zip"
	expect_new "unzip -n: the two new names, in the archive's order" \
		"[$(user_new aaaa0004 'zipped new'),$(user_new '@new0' 'zipped second')]"
	# unzip -o: overwrite.  unzip (Info-ZIP 6.0 on Unix) unlink()s an
	# existing file before it creates it anew, and removing an entry is
	# EPERM (history is append-only; docs/layout.md, "Refusals"): unzip
	# says "error:  cannot delete old NAME" and exits 50, that entry is
	# not edited, and the names that are new are appended.  A removal
	# that succeeded would have to leave the entry looking absent with
	# nothing removed, which is the lie EPERM avoids; unzip -n (above) is
	# the way to add an archive's new entries.
	start s-unzip-o
	fsx_out bash -c 'cd "$0" && unzip -q -o "$1"' "$S" "$T_DIR/e.zip"
	assert_eq "unzip -o over an existing entry exits 50" 50 "$RC"
	assert_contains "and says it cannot delete the old one" "cannot delete old $A2" "$ERR"
	"$PY" -I -S "$T_DIR/check.py" "$MARK_FILE" "$MARK_LINES" \
		"[$(user_new aaaa0004 'zipped new'),$(user_new '@new0' 'zipped second')]" >"$T_DIR/uz.err" 2>&1 &&
		pass || fail "unzip -o: the new names, and no edit of $A2: $(cat "$T_DIR/uz.err")"
	assert_contains "unzip -o: the log says why" "refused removing $MNT/$PROJ/s-unzip-o/$A2: history is append-only" "$(new_log)"
fi

# --- Node's write-file-atomic ----------------------------------------------------------
# It writes NAME.<murmurhash of file, pid, thread, count> (open "w",
# write, fsync, close), chowns and chmods it like the file it replaces,
# and renames it over NAME.  Installed with npm beside pi
# (tests/diff/.work, git-ignored), run by pi's Node.js 22.
WFA_VERSION=8.0.0
need_wfa() {
	local dir=${WFA_DIR:-$ROOT/tests/diff/.work/write-file-atomic}
	WFA=$dir/node_modules/write-file-atomic
	if ! grep -qs "\"version\": \"$WFA_VERSION\"" "$WFA/package.json"; then
		mkdir -p "$dir"
		[[ -f $dir/package.json ]] || printf '{\n  "name": "pisessionfs-write-file-atomic",\n  "private": true\n}\n' >"$dir/package.json"
		(cd "$dir" && timeout 600 npm install --no-audit --no-fund --no-update-notifier --loglevel=error \
			"write-file-atomic@$WFA_VERSION") >"$T_DIR/npm.log" 2>&1 || true
	fi
	grep -qs "\"version\": \"$WFA_VERSION\"" "$WFA/package.json" && return 0
	fail "write-file-atomic@$WFA_VERSION could not be installed into $dir: $(tail -3 "$T_DIR/npm.log")"
	return 1
}
need_pi
if need_wfa; then
	start s-wfa-new
	fsx_out "$PI_NODE" -e 'const w = require(process.argv[1]);
w.sync(process.argv[2], "by write-file-atomic\n");
console.log("ok");' "$WFA" "$S/wfa.md"
	assert_eq "write-file-atomic.sync(new.md)" "ok" "${OUT%$'\n'}${ERR:+ $ERR}"
	expect_new "write-file-atomic new.md: one message" "[$(user_new aaaa0004 'by write-file-atomic')]"
	assert_eq "write-file-atomic new.md: no temporary left" "" "$(ls_names "$S" | grep -F 'wfa.md.' || true)"

	start s-wfa-entry
	fsx cat "$S/$U3" | sed 's/^alpha two$/atomic two/' >"$T_DIR/wfa.md"
	fsx_out "$PI_NODE" -e 'const fs = require("fs"), w = require(process.argv[1]);
w(process.argv[2], fs.readFileSync(process.argv[3])).then(() => console.log("ok"),
  (e) => { console.log(e.message); process.exit(1); });' "$WFA" "$S/$U3" "$T_DIR/wfa.md"
	assert_eq "write-file-atomic(ENTRY) (async)" "ok" "${OUT%$'\n'}${ERR:+ $ERR}"
	expect_new "write-file-atomic ENTRY: one sibling" "[$(user_new aaaa0002 'atomic two')]"
	assert_eq "write-file-atomic ENTRY: no temporary left" "" "$(ls_names "$S" | grep -F "$U3." || true)"
fi

# --- NAME.md.* and NAME.json.*: side files of NAME.md ---------------------------------
# (VS Code's NAME.vsctmp, NAME.tmp-PID, write-file-atomic's NAME.<hash>):
# kept in memory, listed and readable, never appended by themselves, not
# even at fsync; a rename onto NAME is the write of NAME.
start s-side-names
for n in note.md.vsctmp note.md.tmp-123 note.md.2712345678 x.json.tmp-9 "$U3.tmp-77"; do
	op_out=$(fsx "$PY" -I -S "$(dirname "$0")/fsop.py" fsync "$S/$n" <(printf 'side %s\n' "$n") 2>&1)
	assert_eq "write + fsync + close $n" "ok" "$op_out"
	assert_file_content "$S/$n" "side $n"$'\n'
	assert_contains "$n is listed" $'\n'"$n"$'\n' $'\n'"$(ls_names "$S")"$'\n'
done
expect_same "side files NAME.md.*, NAME.json.*"
assert_eq "side files: no refusal in the log" "" "$(new_log | grep refused || true)"
run_sh "rm NAME.md.tmp-123" 'rm note.md.tmp-123'
assert_missing "$S/note.md.tmp-123"
mark "$F"
run_sh "mv note.md.vsctmp note.md" 'mv note.md.vsctmp note.md'
expect_new "note.md.vsctmp renamed to note.md: the message" "[$(user_new aaaa0004 'side note.md.vsctmp')]"
m1=${NEW_IDS[0]:-none}
mark "$F"
run_sh "mv ENTRY.md.tmp-77 ENTRY.md" 'mv "$1.tmp-77" "$1"' "$U3"
expect_new "ENTRY.md.tmp-77 renamed over the entry: an edit" "[$(user_new aaaa0002 "side $U3.tmp-77")]"
mark "$F"
printf '{"role":"user","content":"as json","timestamp":1767225700000}\n' >"$T_DIR/x.json"
run_sh "JSON into x.json.tmp-9, renamed to x.json" 'cat "$1" >x.json.tmp-9 && mv x.json.tmp-9 x.json' "$T_DIR/x.json"
expect_new "x.json.tmp-9 renamed to x.json: the message it holds" \
	"[{\"type\":\"message\",\"id\":\"@id\",\"parentId\":\"$m1\",\"timestamp\":\"@ts\",\"message\":{\"role\":\"user\",\"content\":\"as json\",\"timestamp\":1767225700000}}]"

# --- touch new.md: nothing yet -------------------------------------------------------
# An empty new file is not a refusal: it waits for its text, and the log
# says so.
start s-touch
run_sh "touch new.md" 'touch new.md'
expect_same "touch new.md"
log=$(new_log)
assert_contains "touch new.md: the log names the file" "/$PROJ/s-touch/new.md" "$log"
assert_contains "touch new.md: the log says it is empty" "empty" "$log"
assert_eq "touch new.md: not a refusal" "" "$(grep refused <<<"$log" || true)"

# --- cp ENTRY.md copy.md: a new message, stamped now -------------------------------------
start s-cp-entry
run_sh "cp ENTRY.md copy.md" 'cp "$1" copy.md' "$U1"
expect_new "cp ENTRY.md copy.md: a new message under the tip, fresh id and timestamps" \
	"[$(user_new aaaa0004 'alpha one')]"

finish
