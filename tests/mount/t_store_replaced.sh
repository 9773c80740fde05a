#!/usr/bin/env bash
# A store replaced while mounted (issue 22, item 1).  The mount follows the
# store's path, as pi finds it, not the directory it first opened:
#   1. rm -rf STORE: the root stays a directory with its views, empty
#      (sessions.md says 0 sessions, usage.csv has its header only); a
#      project or session path is ENOENT; df still answers; the log says
#      the store is gone;
#   2. cp -a backup STORE: the new directory is shown whole, without a
#      remount (projects, sessions.md, a session's entries as the backup
#      has them, search/), and the log says it is back;
#   3. mv STORE away and back: the same, "the same directory";
#   4. mv STORE x; mv other STORE (no gap the watcher sees, or one): the
#      mount shows the other directory;
#   5. a write after the replacement appends to the new store's file, not
#      to the old one; a write open while the store went is refused once,
#      its text kept once in rejected/.
. "$(dirname "$0")/lib.sh" "$@"

P=--w--
S=2026-01-01T00-00-00-000Z_11111111-2222-3333-4444-555555555555
mkdir -p "$STORE/$P"
{
	header 3
	alpha_turns
} >"$STORE/$P/$S.jsonl"
# The backup: an older state of the same session (two entries), and a
# session the live store does not have.
BACKUP=$T_DIR/backup
mkdir -p "$BACKUP/$P" "$BACKUP/--w-other--"
{
	header 3
	user_msg aaaa0001 null "alpha one"
	asst_msg aaaa0002 aaaa0001 "reply one"
} >"$BACKUP/$P/$S.jsonl"
touch -r "$STORE/$P/$S.jsonl" "$BACKUP/$P/$S.jsonl" # cp -a keeps times: the size tells, and the inode
O=2026-01-02T00-00-00-000Z_99999999-2222-3333-4444-555555555555
{
	printf '{"type":"session","version":3,"id":"99999999-2222-3333-4444-555555555555","timestamp":"2026-01-02T00:00:00.000Z","cwd":"/w/other"}\n'
	user_msg bbbb0001 null "zebra in the backup"
} >"$BACKUP/--w-other--/$O.jsonl"

mount_fs "$STORE" "$MNT"
LOG=$MNT/.pisessionfs/log

entries_of() { fsx ls "$MNT/$P/$S" | grep -c '^000[0-9]-' || true; }
sessions_line() { fsx cat "$MNT/sessions.md" | sed -n 3p; }

assert_eq "the live session has its four entries" 4 "$(entries_of)"
assert_contains "sessions.md counts one session" "1 session" "$(sessions_line)"
# The kernel now holds names from the first directory.
fsx stat "$MNT/$P/$S/0004-assistant.aaaa0004.md" >/dev/null

# --- 1. the store removed ------------------------------------------------------
# A writer holding the session's name open when the store goes: its close
# fails, its text is kept once (the shell's dup and the descriptor each
# close it: the first refusal is the only one).
exec 3>"$MNT/$P/$S/name"
rm -rf "$STORE"
assert_poll "the log says the store is gone" 10 grep -q "the store $STORE is gone" "$LOG"
echo "late name" >&3
exec 3>&-
assert_eq "the late name is kept once in rejected/" 1 "$(ls "$MNT/.pisessionfs/rejected" | grep -c name)"
assert_contains "and the log says why" "the session is gone" "$(fsx cat "$LOG")"
assert_poll "the log says the store is gone" 10 grep -q "the store $STORE is gone" "$LOG"
assert_poll "the project no longer resolves" 10 bash -c '! stat "$1" 2>/dev/null' _ "$MNT/$P"
assert_true "the mount root is still a directory" test -d "$MNT"
root=$(ls_names "$MNT")
for name in by-id by-name by-cwd recent search sessions.md usage.csv; do
	assert_contains "the root still lists $name" "$name" "$root"
done
assert_eq "no project is listed" "" "$(grep -- '^--' <<<"$root" || true)"
assert_contains "sessions.md says 0 sessions" "0 sessions" "$(sessions_line)"
assert_eq "usage.csv is its header alone" 1 "$(fsx cat "$MNT/usage.csv" | wc -l)"
assert_errno "No such file or directory" cat "$MNT/$P/$S/0004-assistant.aaaa0004.md"
assert_true "df still answers" df "$MNT"
assert_eq "search finds nothing" "" "$(fsx ls "$MNT/search/alpha")"

# --- 2. a backup copied in its place -------------------------------------------
cp -a "$BACKUP" "$STORE"
assert_poll "the restored project shows" 10 test -d "$MNT/$P/$S"
assert_poll "the log says the store is back, a new directory" 10 \
	grep -q "the store $STORE is back (a new directory)" "$LOG"
assert_eq "the session shows the backup's two entries" 2 "$(entries_of)"
assert_errno "No such file or directory" cat "$MNT/$P/$S/0004-assistant.aaaa0004.md"
assert_contains "the backup's other project shows" "--w-other--" "$(ls_names "$MNT")"
assert_contains "sessions.md counts the backup's two sessions" "2 sessions" "$(sessions_line)"
assert_contains "search finds the backup's session" "zebra in the backup" "$(fsx ls "$MNT/search/zebra")"
assert_contains "by-id names it" "99999999-2222-3333-4444-555555555555" "$(ls_names "$MNT/by-id")"

# --- 5. a write goes to the new store's file -----------------------------------
before=$(wc -l <"$STORE/$P/$S.jsonl")
assert_true "naming the restored session" bash -c 'echo "restored" > "$1"' _ "$MNT/$P/$S/name"
assert_eq "the name is appended to the restored file" $((before + 1)) "$(wc -l <"$STORE/$P/$S.jsonl")"
assert_contains "it is a session_info line" '"name":"restored"' "$(tail -n 1 "$STORE/$P/$S.jsonl")"

# --- 3. moved away and back -----------------------------------------------------
mv "$STORE" "$T_DIR/away"
assert_poll "moved away: the project no longer resolves" 10 bash -c '! stat "$1" 2>/dev/null' _ "$MNT/$P"
assert_eq "moved away: no project is listed" "" "$(ls_names "$MNT" | grep -- '^--' || true)"
mv "$T_DIR/away" "$STORE"
assert_poll "moved back: the project shows again" 10 test -d "$MNT/$P/$S"
assert_poll "the log says it is back, the same directory" 10 \
	grep -q "the store $STORE is back (the same directory)" "$LOG"
assert_eq "moved back: the session as it was (two entries and its name)" 3 "$(entries_of)"

# --- 4. replaced by another directory in one step --------------------------------
NEXT=$T_DIR/next
mkdir -p "$NEXT/$P"
{
	header 3
	alpha_turns
	user_msg aaaa0005 aaaa0004 "alpha three"
} >"$NEXT/$P/$S.jsonl"
mv "$STORE" "$T_DIR/old" && mv "$NEXT" "$STORE"
assert_poll "the new directory's session shows (five entries)" 10 bash -c \
	'[[ $(ls "$1" | grep -c "^000[0-9]-") == 5 ]]' _ "$MNT/$P/$S"
assert_poll "the log says the store was replaced or is back" 10 \
	grep -Eq "the store $STORE (was replaced by another directory|is back \(a new directory\))" "$LOG"
# The watcher switches the store, then has the kernel forget the old
# names: a listing between the two may still show them, for a moment.
assert_poll "the old directory's other project is not shown" 10 bash -c \
	'! ls "$1" | grep -q -- --w-other--' _ "$MNT"
old_size=$(stat -c %s "$T_DIR/old/$P/$S.jsonl")
assert_true "naming it again" bash -c 'echo "next" > "$1"' _ "$MNT/$P/$S/name"
assert_contains "appended to the new directory's file" '"name":"next"' "$(tail -n 1 "$STORE/$P/$S.jsonl")"
assert_eq "the old directory's file is untouched" "$old_size" "$(stat -c %s "$T_DIR/old/$P/$S.jsonl")"

finish
