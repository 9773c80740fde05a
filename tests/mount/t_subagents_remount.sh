#!/usr/bin/env bash
# What a mount started again keeps of subagent families and of the
# store-wide files (docs/layout.md "The cache kept across mounts"): on an
# unchanged store it gives the same bytes of sessions.md and the usage
# files, from one text kept per file and each family kept with its
# folders' stamps; whatever changed while nothing was mounted shows: a new
# run and its child, an artifact that names a run's agent (the child's
# name then changes, and with it every row that shows it), a family
# folder removed, a child that grew.  A damaged family value in the cache
# is read as none.
. "$(dirname "$0")/lib.sh" "$@"

P=--home-u-proj--
PARENT=2026-02-01T10-00-00-000Z_01aa0000-0000-7000-8000-000000000001
OTHER=2026-02-01T09-00-00-000Z_01aa0000-0000-7000-8000-000000000002
FAM=$STORE/$P/$PARENT
ART=$STORE/$P/subagent-artifacts
mkdir -p "$FAM/run1/run-0" "$FAM/run1/run-1" "$STORE/$P/$OTHER/run9/run-0" "$ART"
{ header 3 01aa0000-0000-7000-8000-000000000001; alpha_turns; } >"$STORE/$P/$PARENT.jsonl"
{ header 3 01aa0000-0000-7000-8000-000000000002; alpha_turns; } >"$STORE/$P/$OTHER.jsonl"
child() { # child FILE ID TEXT: a subagent's session as pi-subagents names it
	{
		printf '{"type":"session","version":3,"id":"%s","timestamp":"2026-02-01T10:0%s:00.000Z","cwd":"/w"}\n' "$2" "${2: -1}"
		user_msg "${2:0:8}" null "$3"
		asst_msg "${2:0:7}b" "${2:0:8}" "done: $3"
	} >"$1"
}
child "$FAM/run1/run-0/session.jsonl" 01aa0000-0000-7000-8000-000000000011 "first task"
child "$FAM/run1/run-1/session.jsonl" 01aa0000-0000-7000-8000-000000000012 "second task"
child "$STORE/$P/$OTHER/run9/run-0/session.jsonl" 01aa0000-0000-7000-8000-000000000013 "other task"
printf 'task\n' >"$ART/run1_scout_0_input.md"

files() {
	cat "$MNT/sessions.md" "$MNT/usage.csv" "$MNT/$P/sessions.md" "$MNT/$P/usage.csv" "$MNT/usage-daily.csv" \
		"$MNT/usage-monthly.csv" "$MNT/usage.svg"
}
rows() { cut -d, -f2 "$MNT/usage.csv" | sort; }
db() { ls "$XDG_CACHE_HOME"/pisessionfs/store-*.sqlite | head -1; }
kept() { # kept HEXPREFIX: the values the cache holds under that key prefix
	python3 -c 'import sqlite3, sys; print(sqlite3.connect(sys.argv[1]).execute("select count(*) from kept where hex(substr(key, 1, 1)) = ?", (sys.argv[2],)).fetchone()[0])' "$(db)" "$1"
}

mount_fs "$STORE" "$MNT"
files >"$T_DIR/first.out"
rows >"$T_DIR/first.rows"
umount_fs "$MNT"
assert_contains "the first mount shows the children" "subagents/2026-02-01T10-01-00-000Z_scout_run1_0" \
	"$(cat "$T_DIR/first.rows")"
assert_eq "the cache keeps both families" 2 "$(kept 66)"       # 'f'
assert_eq "and one text per store-wide file read" 7 "$(kept 6F)" # 'o'

mount_fs "$STORE" "$MNT"
files >"$T_DIR/second.out"
assert_same_bytes "$T_DIR/first.out" "$T_DIR/second.out" # an unchanged store: the same bytes again
umount_fs "$MNT"
assert_eq "still one text per file" 7 "$(kept 6F)"

# While unmounted: a new run with its child and its agent named.
mkdir -p "$FAM/run2/run-0"
child "$FAM/run2/run-0/session.jsonl" 01aa0000-0000-7000-8000-000000000014 "third task"
printf 'task\n' >"$ART/run2_reviewer_input.md"
mount_fs "$STORE" "$MNT"
assert_contains "a run added while unmounted is in usage.csv" "subagents/2026-02-01T10-04-00-000Z_reviewer_run2_0" "$(rows)"
assert_contains "and sessions.md counts it" "3 subagent sessions" "$(cat "$MNT/sessions.md")"
umount_fs "$MNT"

# An artifact naming run1's second child's agent: its name changes.
printf 'task\n' >"$ART/run1_worker_1_input.md"
mount_fs "$STORE" "$MNT"
OUT=$(rows)
assert_contains "an agent named while unmounted renames the child" "subagents/2026-02-01T10-02-00-000Z_worker_run1_1" "$OUT"
assert_true "and the old name is in no row" bash -c "! grep -q 'run_run1_1' <<<'$OUT'"
assert_contains "the project's usage.csv too" "2026-02-01T10-02-00-000Z_worker_run1_1" "$(cat "$MNT/$P/usage.csv")"
umount_fs "$MNT"

# A child that grew; a family folder removed.
asst_msg cccc0001 01aa0000b "more work" >>"$FAM/run1/run-0/session.jsonl"
rm -rf "${STORE:?}/$P/$OTHER"
mount_fs "$STORE" "$MNT"
OUT=$(rows)
assert_true "a family removed while unmounted leaves usage.csv" bash -c "! grep -q '$OTHER/subagents' <<<'$OUT'"
assert_eq "a child that grew counts its new message" 3 \
	"$(grep "subagents/2026-02-01T10-01-00-000Z_scout_run1_0," "$MNT/usage.csv" | cut -d, -f8)"
files >"$T_DIR/third.out"
umount_fs "$MNT"

# A damaged family value: read as none, the family walked again.
python3 -c 'import sqlite3, sys; c = sqlite3.connect(sys.argv[1]); c.execute("update kept set value = x'"'"'66616d31ffff'"'"' where hex(substr(key, 1, 1)) = ?", ("66",)); c.execute("delete from kept where hex(substr(key, 1, 1)) = ?", ("6F",)); c.commit()' "$(db)"
mount_fs "$STORE" "$MNT"
files >"$T_DIR/fourth.out"
assert_same_bytes "$T_DIR/third.out" "$T_DIR/fourth.out" # damaged family values: the same files, walked again
umount_fs "$MNT"
finish
