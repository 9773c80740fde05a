#!/usr/bin/env bash
# A recursive removal of the whole mount or of a project folder moves no
# session (docs/layout.md "Deleting a session", "What a broad removal
# does"): rm -rf MOUNT, rm -r PROJECT, find MOUNT -delete, find PROJECT
# -delete and Python's shutil.rmtree(PROJECT) each fail with EPERM, leave
# every file of the store byte-identical (labels not cleared), put nothing
# in the trash, and log one line per command that says how to delete a
# session.  Deleting sessions one by one still works: rm -r S1 S2, rm -r S
# from inside the project, find S -delete, and rm -r PROJECT/* (the shell
# names each session).  A flat store (sessions at the root) likewise.
. "$(dirname "$0")/lib.sh" "$@"

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
FIX=$ROOT/tests/data/fixtures/pi-1.6.0-v3-branched.jsonl
TRASH=$XDG_DATA_HOME/Trash
P=--home-u-proj--
Q=--home-u-other--
A=2026-01-01T00-00-00-000Z_aaaa
B=2026-01-02T00-00-00-000Z_bbbb
C=2026-01-03T00-00-00-000Z_cccc
D=2026-01-04T00-00-00-000Z_dddd
E=2026-01-05T00-00-00-000Z_eeee
mkdir -p "$STORE/$P" "$STORE/$Q"
for s in $A $B $C; do cp "$FIX" "$STORE/$P/$s.jsonl"; done
for s in $D $E; do cp "$FIX" "$STORE/$Q/$s.jsonl"; done
mount_fs "$STORE" "$MNT"

store_sums() { (cd "$STORE" && find . -type f -name '*.jsonl' -print0 | sort -z | xargs -0 sha256sum); }
sessions() { find "$STORE" -type f -name '*.jsonl' | wc -l; }
trashed() { find "$TRASH/files" -type f 2>/dev/null | wc -l; }
log_lines() { fsx grep -c "removes under $1, which it holds open" "$MNT/.pisessionfs/log" || true; }
store_sums >"$T_DIR/before.sums"
assert_exists "$MNT/$P/$A/labels"
labels_before=$(fsx ls -A "$MNT/$P/$A/labels")

# refused_broad WHAT EXPECTED-LOG-LINES CMD...: CMD fails, says
# "Operation not permitted", and changes nothing in the store or trash.
refused_broad() {
	local what=$1 lines=$2 before
	shift 2
	before=$(log_lines "$lines")
	fsx_out "$@"
	assert_ne "$what: fails" 0 "$RC"
	assert_contains "$what: says why" "Operation not permitted" "$ERR"
	assert_eq "$what: every session file is still in the store" 5 "$(sessions)"
	assert_true "$what: every session file is byte-identical" \
		cmp -s "$T_DIR/before.sums" <(store_sums)
	assert_eq "$what: nothing in the trash" 0 "$(trashed)"
	assert_eq "$what: one log line" $((before + 1)) "$(log_lines "$lines")"
}

refused_broad "rm -rf MOUNT" "the whole mount" rm -rf "$MNT"
refused_broad "rm -r PROJECT" "a project folder" rm -r "$MNT/$P"
refused_broad "rm -rf PROJECT" "a project folder" rm -rf "$MNT/$Q"
refused_broad "find MOUNT -delete" "the whole mount" find "$MNT" -delete
refused_broad "find PROJECT -delete" "a project folder" find "$MNT/$P" -delete
refused_broad "shutil.rmtree(PROJECT)" "a project folder" \
	python3 -c 'import shutil, sys; shutil.rmtree(sys.argv[1])' "$MNT/$P"
assert_eq "the labels were not cleared" "$labels_before" "$(fsx ls -A "$MNT/$P/$A/labels")"
fsx_out grep -c 'history is append-only' "$MNT/.pisessionfs/log"
assert_eq "no line per refused entry" "0" "${OUT%$'\n'}"
assert_contains "the log says how to delete a session" \
	"to delete a session, rm -r its own directory (rm -r PROJECT/SESSION ...)" \
	"$(fsx cat "$MNT/.pisessionfs/log")"

# One by one, as before.
fsx_out rm -r "$MNT/$P/$A" "$MNT/$P/$B"
assert_eq "rm -r S1 S2 exits 0" 0 "$RC"
assert_eq "rm -r S1 S2: quiet" "" "$ERR"
assert_eq "rm -r S1 S2: two sessions in the trash" 2 "$(trashed)"
fsx_out bash -c 'cd "$1" && rm -r "$2"' _ "$MNT/$P" "$C"
assert_eq "cd PROJECT; rm -r S exits 0" 0 "$RC"
assert_eq "cd PROJECT; rm -r S: in the trash" 3 "$(trashed)"
fsx_out find "$MNT/$Q/$D" -delete
assert_eq "find SESSION -delete exits 0" 0 "$RC"
assert_eq "find SESSION -delete: in the trash" 4 "$(trashed)"
fsx_out bash -c 'rm -r "$1"/*' _ "$MNT/$Q"
assert_eq "rm -r PROJECT/*: the session is in the trash" 5 "$(trashed)"
assert_eq "rm -r PROJECT/*: the project's generated files were refused" 1 "$RC"
assert_eq "no session file is left in the store" 0 "$(sessions)"

# A flat store (sessions at its root): rm -rf of the mount moves nothing,
# rm -r of one session still deletes it.
FLAT=$T_DIR/flat
MNT2=$T_DIR/mnt2
mkdir -p "$FLAT" "$MNT2"
for s in $A $B; do cp "$FIX" "$FLAT/$s.jsonl"; done
mount_fs "$FLAT" "$MNT2"
fsx_out rm -rf "$MNT2"
assert_ne "flat store: rm -rf MOUNT fails" 0 "$RC"
assert_eq "flat store: both sessions stay" 2 "$(find "$FLAT" -name '*.jsonl' | wc -l)"
assert_eq "flat store: nothing in the trash" 5 "$(trashed)"
fsx_out rm -r "$MNT2/$A"
assert_eq "flat store: rm -r SESSION exits 0" 0 "$RC"
assert_eq "flat store: one session left" 1 "$(find "$FLAT" -name '*.jsonl' | wc -l)"
finish
