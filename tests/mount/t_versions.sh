#!/usr/bin/env bash
# Version-1 sessions (no ids): they mount, their derived ids are 8 hex
# digits and the same on every mount, the v1 migration shows, and mounting
# and reading never modifies the files.
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh" "$@"

FIXDIR=$(cd "$(dirname "$0")/../data/fixtures" && pwd)
PROJ=--Users-badlogic-workspaces-pi-mono--
S1=2025-12-08T22-41-00-000Z_ffae836b-9420-4060-ac13-7745215f90ff
S2=2025-11-20T23-33-50-805Z_d703a1a9-1b7b-4fb1-b512-c9738b1fe617
mkdir -p "$STORE/$PROJ" "$STORE/--copy--"
cp "$FIXDIR/pi-v1-before-compaction.jsonl" "$STORE/$PROJ/$S1.jsonl"
cp "$FIXDIR/pi-v1-large-session.jsonl" "$STORE/$PROJ/$S2.jsonl"
# The same file under another project and name: ids come from the session
# id in the header and the line number, not from the path.
cp "$FIXDIR/pi-v1-large-session.jsonl" "$STORE/--copy--/copy.jsonl"
chmod 644 "$STORE/$PROJ/"*.jsonl "$STORE/--copy--/copy.jsonl"
# Old times, to see that nothing touches them.
touch -d '2025-12-09 10:00:00.123456789' "$STORE/$PROJ/$S1.jsonl" "$STORE/$PROJ/$S2.jsonl"

snapshot() {
	local f
	for f in "$STORE/$PROJ/$S1.jsonl" "$STORE/$PROJ/$S2.jsonl" "$STORE/--copy--/copy.jsonl"; do
		printf '%s %s\n' "$(sha256sum <"$f")" "$(stat -c '%y %s %i' "$f")"
	done
}
before=$(snapshot)

mount_fs "$STORE" "$MNT"
assert_eq "ls of the project" "$S2
$S1" "$(ls_names "$MNT/$PROJ" | grep -Ev '^(usage(-daily|-monthly|-daily-models)?\.csv|usage\.svg|sessions\.md|search)$')"

check_session() { # NAME FIXTURE LINES
	local name=$1 fix=$2 lines=$3
	local d=$MNT/$PROJ/$name
	local entries=$((lines - 1))
	fsx_out ls -A "$d"
	# the entry files: transcript.md is generated, not an entry
	OUT=$(grep -v '^transcript\.md$' <<<"$OUT"; printf .)
	OUT=${OUT%.}
	printf '%s' "$OUT" >"$T_DIR/ls.$name"
	local md
	md=$(grep -c '\.md$' "$T_DIR/ls.$name" || true)
	assert_eq "$name: one entry file per line after the header" "$entries" "$md"
	local bad
	bad=$(grep '\.md$' "$T_DIR/ls.$name" | grep -Ev '^[0-9]{4,}-[A-Za-z_]+(-[A-Za-z0-9_.=@,:+%-]+)?\.[0-9a-f]{8}\.md$' | head -5 || true)
	assert_eq "$name: entry names end in an 8-hex id" "" "$bad"
	assert_eq "$name: no branches (v1 is linear)" "" "$(grep '~' "$T_DIR/ls.$name" || true)"
	fsx_out ls -A "$d/entries"
	bad=$(grep -Ev '^[0-9a-f]{8}\.json$' <<<"${OUT%$'\n'}" | head -5 || true)
	assert_eq "$name: entries/ are 8-hex ids" "" "$bad"
	assert_eq "$name: entries/ count" "$entries" "$(grep -c . <<<"${OUT%$'\n'}")"
	assert_eq "$name: ids are unique" "$entries" "$(grep '\.md$' "$T_DIR/ls.$name" | sed 's/.*\.\([0-9a-f]*\)\.md$/\1/' | sort -u | wc -l)"
	# Depth numbers run 0001..N: each entry's parent is the previous one.
	assert_eq "$name: depths 1..N" "$(seq -f '%04g' 1 "$entries")" "$(grep '\.md$' "$T_DIR/ls.$name" | cut -c1-4)"
	assert_file_content "$d/problems" ""
	assert_json "$d/header.json"
	assert_json "$d/context.json"
	assert_same_bytes "$d/session.jsonl" "$STORE/$PROJ/$name.jsonl"
	# entries/<id>.json of the first and last entries are lines 2 and N.
	local first last
	first=$(grep '^0001-' "$T_DIR/ls.$name" | sed 's/.*\.\([0-9a-f]*\)\.md$/\1/')
	last=$(grep '\.md$' "$T_DIR/ls.$name" | tail -1 | sed 's/.*\.\([0-9a-f]*\)\.md$/\1/')
	fsx cat "$d/entries/$first.json" >"$T_DIR/got" 2>&1 || true
	line_of "$fix" 2 >"$T_DIR/want"
	if cmp -s "$T_DIR/got" "$T_DIR/want"; then pass; else fail "$name: entries/$first.json is not line 2"; fi
	fsx cat "$d/entries/$last.json" >"$T_DIR/got" 2>&1 || true
	line_of "$fix" "$lines" >"$T_DIR/want"
	if cmp -s "$T_DIR/got" "$T_DIR/want"; then pass; else fail "$name: entries/$last.json is not line $lines"; fi
	fsx_out readlink "$d/leaf"
	assert_eq "$name: leaf is the last entry" "$(grep '\.md$' "$T_DIR/ls.$name" | tail -1)" "${OUT%$'\n'}"
	# The second entry's parent is the first (derived ids in the front matter).
	local second
	second=$(grep '^0002-' "$T_DIR/ls.$name")
	fsx_out cat "$d/$second"
	assert_contains "$name: 0002's parentId is 0001's id" "parentId: $first" "$OUT"
}
check_session "$S1" "$FIXDIR/pi-v1-before-compaction.jsonl" 1003
check_session "$S2" "$FIXDIR/pi-v1-large-session.jsonl" 1019

# v1 migration: firstKeptEntryIndex 293 (line 361's compaction) becomes the
# id of the 293rd entry; the context after the second compaction starts
# with its summary.
D1=$MNT/$PROJ/$S1
comp=$(grep '^0359-compaction\.' "$T_DIR/ls.$S1" || true)
assert_ne "the first compaction is entry 359" "" "$comp"
kept=$(grep '^0293-' "$T_DIR/ls.$S1" | sed 's/.*\.\([0-9a-f]*\)\.md$/\1/')
fsx_out cat "$D1/$comp"
assert_contains "firstKeptEntryIndex became firstKeptEntryId" "firstKeptEntryId: $kept" "$OUT"
fsx cat "$D1/context.json" >"$T_DIR/ctx.json" || true
first_role=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["messages"][0]["role"])' "$T_DIR/ctx.json" 2>&1 || true)
assert_eq "v1 context starts with the compaction summary" "compactionSummary" "$first_role"

# Reading everything (find + cat of every file) must not touch the store.
fsx_out find "$MNT" -type f -exec cat {} +
if ((RC == 0)); then pass; else fail "reading every file failed: $(show "$ERR")"; fi
fsx_out grep -rlc "AgentSession" "$MNT/$PROJ/$S1"
assert_ne "grep -r finds words in a v1 session" "" "$OUT"

# The copy under another project and name shows the same names.
assert_eq "a copy elsewhere has the same ids" "$(cat "$T_DIR/ls.$S2")" "$(ls_names "$MNT/--copy--/copy" | grep -v "^transcript\.md$")"

fsx find "$MNT" | sed "s|^$MNT||" | sort >"$T_DIR/find.1"
umount_fs "$MNT"

# A second mount (new daemon, new mountpoint): the same names everywhere.
MNT2=$T_DIR/mnt2
mkdir -p "$MNT2"
mount_fs "$STORE" "$MNT2"
fsx find "$MNT2" | sed "s|^$MNT2||" | sort >"$T_DIR/find.2"
if cmp -s "$T_DIR/find.1" "$T_DIR/find.2"; then
	pass
else
	fail "a second mount shows other names: $(diff "$T_DIR/find.1" "$T_DIR/find.2" | head -10)"
fi
assert_eq "the derived ids are not empty" "1" "$(($(wc -l <"$T_DIR/find.2") > 2000))"
fsx cat "$MNT2/$PROJ/$S1/context.json" >"$T_DIR/ctx2.json" || true
assert_same_bytes "$T_DIR/ctx.json" "$T_DIR/ctx2.json"
umount_fs "$MNT2"

assert_eq "the session files are untouched (sha256, mtime, size, inode)" "$before" "$(snapshot)"
finish
