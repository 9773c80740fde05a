#!/usr/bin/env bash
# rm -r SESSION moves the session file to the freedesktop.org trash, as
# pi's /resume deletes one with `trash` (docs/layout.md "Deleting a
# session"): exit 0, no output, the file byte for byte in Trash/files
# with its info file, listed by trash-list and brought back by
# trash-restore; nothing appended on the way (a label's rm used to clear
# it).  rm of an entry is still refused and changes nothing.  Also: rm of
# session.jsonl alone, a name taken in the trash, a store on another file
# system (its own .Trash-UID), a flat store, and a caller who may not.
. "$(dirname "$0")/lib.sh" "$@"

for tool in trash-list trash-restore setpriv unshare; do
	command -v "$tool" >/dev/null || die "$tool is missing (tests/deps.sh --test installs trash-cli)"
done
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
FIX=$ROOT/tests/data/fixtures/pi-1.6.0-v3-branched.jsonl
TRASH=$XDG_DATA_HOME/Trash
P=--home-u-proj--
A=2026-01-01T00-00-00-000Z_aaaa
B=2026-01-02T00-00-00-000Z_bbbb
C=2026-01-03T00-00-00-000Z_cccc
mkdir -p "$STORE/$P"
for s in $A $B $C; do cp "$FIX" "$STORE/$P/$s.jsonl"; done
cp "$FIX" "$T_DIR/orig.jsonl"
VOL=$T_DIR/vol
after_unmount() {
	if mountpoint -q "$VOL"; then umount "$VOL"; fi
}
# Another user (below) reaches the mount, and may change the session
# file but not its folder in the store.
chmod 0755 "$STORE" "$STORE/$P"
let_others_reach "$MNT"
mount_fs "$STORE" "$MNT" -o allow_other
S=$MNT/$P/$A

fsx_out python3 -c 'import os, sys; print(os.listdir(sys.argv[1])[0])' "$S"
assert_eq "a session directory lists session.jsonl first" "session.jsonl" "${OUT%$'\n'}"

# One entry, one fork: refused, nothing changes.
assert_errno "Operation not permitted" rm "$S/0004-user.7bfd5a82.md"
assert_fails rm -r "$S/0008~c34de545"
assert_same_bytes "$STORE/$P/$A.jsonl" "$T_DIR/orig.jsonl"
assert_exists "$S/0008~c34de545/0008-user.c34de545.md"

# rm -r of the session: quiet, exit 0, and the file is in the trash whole.
fsx_out rm -r "$S"
assert_eq "rm -r exits 0" 0 "$RC"
assert_eq "rm -r prints nothing" "" "$ERR"
assert_missing "$STORE/$P/$A.jsonl"
assert_same_bytes "$TRASH/files/$A.jsonl" "$T_DIR/orig.jsonl"
info=$(cat "$TRASH/info/$A.jsonl.trashinfo")
assert_contains "the info file names where it was" "[Trash Info]
Path=$STORE/$P/$A.jsonl
DeletionDate=" "$info"
assert_true "DeletionDate is local YYYY-MM-DDThh:mm:ss" bash -c \
	"[[ \$(sed -n 3p '$TRASH/info/$A.jsonl.trashinfo') =~ ^DeletionDate=[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}$ ]]"
assert_missing "$S"
assert_true "the project no longer lists it" bash -c "! ls '$MNT/$P' | grep -qx '$A'"
assert_contains "trash-list lists it" "$STORE/$P/$A.jsonl" "$(trash_cli trash-list 2>&1)"
fsx_out cat "$MNT/.pisessionfs/log"
assert_contains "the log says where it went" "the session moved to the trash as $TRASH/files/$A.jsonl" "$OUT"

# trash-restore brings it back, byte for byte, and the mount shows it.
(cd "$T_DIR" && echo 0 | trash_cli trash-restore "$STORE/$P/$A.jsonl" >/dev/null 2>&1)
assert_same_bytes "$STORE/$P/$A.jsonl" "$T_DIR/orig.jsonl"
assert_missing "$TRASH/files/$A.jsonl"
assert_poll "the restored session shows again" 5 test -f "$S/0004-user.7bfd5a82.md"
assert_eq "with its name" "List files demo" "$(fsx cat "$S/name")"

# rm -rf, from inside the project, with a name the trash already holds:
# the next free name, and the one there untouched.
mkdir -p "$TRASH/files" "$TRASH/info"
echo "someone else's" >"$TRASH/files/$B.jsonl"
printf '[Trash Info]\nPath=/elsewhere/%s.jsonl\nDeletionDate=2026-01-01T00:00:00\n' "$B" >"$TRASH/info/$B.jsonl.trashinfo"
fsx_out bash -c "cd '$MNT/$P' && rm -rf '$B'"
assert_eq "rm -rf exits 0" 0 "$RC"
assert_eq "rm -rf prints nothing" "" "$ERR"
assert_same_bytes "$TRASH/files/${B}_2.jsonl" "$T_DIR/orig.jsonl"
assert_eq "the trashed file of the same name is untouched" "someone else's" "$(cat "$TRASH/files/$B.jsonl")"
assert_contains "its info file points back" "Path=$STORE/$P/$B.jsonl" "$(cat "$TRASH/info/${B}_2.jsonl.trashinfo")"

# rm of session.jsonl alone deletes nothing (EPERM, logged): only the
# rmdir that ends a recursive removal does.  tar xf of a backup taken
# from the mount unlinks a file it cannot create and tries again: it
# gets the same EPERM, reports it and goes on, in bounded time, and the
# session is unchanged (it trashed the session, then spun at 100% CPU).
S=$MNT/$P/$C
assert_fails rm "$S/session.jsonl"
assert_contains "rm of session.jsonl alone is EPERM" "Operation not permitted" "$ERR"
assert_same_bytes "$STORE/$P/$C.jsonl" "$T_DIR/orig.jsonl"
fsx_out cat "$MNT/.pisessionfs/log"
assert_contains "the log says how to delete" "refused removing $MNT/$P/$C/session.jsonl: to delete a session, rm -r its directory" "$OUT"
fsx_out bash -c "cd '$MNT/$P' && tar cf '$T_DIR/backup.tar' '$C'"
assert_eq "tar c of a session exits 0" "0 " "$RC $ERR"
fsx_out bash -c "cd '$MNT/$P' && tar xf '$T_DIR/backup.tar'"
assert_contains "tar says session.jsonl exists" "$C/session.jsonl: Cannot open: File exists" "$ERR"
assert_contains "and that the label exists" "$C/labels/first-question: Cannot open: File exists" "$ERR"
assert_true "tar x of it into the mount fails" test "$RC" -ne 0
assert_same_bytes "$STORE/$P/$C.jsonl" "$T_DIR/orig.jsonl"
assert_missing "$TRASH/files/$C.jsonl"
assert_true "the session is still there" test -f "$S/0004-user.7bfd5a82.md"
fsx_out bash -c "cd '$MNT/$P' && rm -r '$C'"
assert_eq "then rm -r deletes it" "0 " "$RC $ERR"
assert_same_bytes "$TRASH/files/$C.jsonl" "$T_DIR/orig.jsonl"
assert_missing "$S"

# A session started with mkdir, removed by the name typed: the rmdir that
# ends rm -r moves it; no view lists it afterwards.
assert_true "mkdir a named session" mkdir "$MNT/$P/short lived"
named=$(basename "$(ls -t "$STORE/$P"/*.jsonl | head -1)" .jsonl)
assert_true "rm -r by the typed name" rm -r "$MNT/$P/short lived"
assert_missing "$STORE/$P/$named.jsonl"
assert_contains "the trash has it" "short lived" "$(cat "$TRASH/files/$named.jsonl")"
assert_poll "the views rescanned without it" 5 bash -c "! ls '$MNT/by-id' | grep -q '${named#*_}'"
assert_missing "$MNT/$P/short lived"

# Other tools that remove trees remove in listing order too.
D=2026-01-04T00-00-00-000Z_dddd
E=2026-01-05T00-00-00-000Z_eeee
cp "$FIX" "$STORE/$P/$D.jsonl"
cp "$FIX" "$STORE/$P/$E.jsonl"
assert_poll "two more sessions show" 5 test -d "$MNT/$P/$E"
fsx_out find "$MNT/$P/$D" -delete
assert_eq "find -delete exits 0" "0 " "$RC $ERR"
assert_same_bytes "$TRASH/files/$D.jsonl" "$T_DIR/orig.jsonl"
fsx_out python3 -c 'import shutil, sys; shutil.rmtree(sys.argv[1])' "$MNT/$P/$E"
assert_eq "Python's shutil.rmtree exits 0" "0 " "$RC $ERR"
assert_same_bytes "$TRASH/files/$E.jsonl" "$T_DIR/orig.jsonl"
assert_missing "$MNT/$P/$D"
assert_missing "$MNT/$P/$E"

# A caller who may not change the store's folder: refused, nothing moves.
chmod 0666 "$TRASH/files/${B}_2.jsonl"
(cd "$T_DIR" && echo 0 | trash_cli trash-restore "$STORE/$P/$B.jsonl" >/dev/null 2>&1)
assert_poll "restored for the next check" 5 test -f "$MNT/$P/$B/session.jsonl"
fsx_out setpriv --reuid=52001 --regid=52001 --clear-groups -- rm -r "$MNT/$P/$B"
assert_ne "another user's rm -r fails" 0 "$RC"
assert_contains "with EACCES" "cannot remove '$MNT/$P/$B/session.jsonl': Permission denied" "$ERR"
assert_same_bytes "$STORE/$P/$B.jsonl" "$T_DIR/orig.jsonl"
assert_exists "$MNT/$P/$B/labels/first-question"
fsx_out cat "$MNT/.pisessionfs/log"
assert_contains "the daemon refused it" "refused removing $MNT/$P/$B/session.jsonl: the session file's directory" "$OUT"
assert_contains "and the label's removal after it" "refused removing $MNT/$P/$B/labels/first-question: the same process's" "$OUT"
assert_missing "$TRASH/files/${B}_3.jsonl"
umount_fs "$MNT"

# A store on another file system: the trash at its top, .Trash-UID, with
# the path in the info file relative to it.
mkdir -p "$VOL"
mount -t tmpfs -o size=16m tmpfs "$VOL"
mkdir -p "$VOL/store/$P" "$T_DIR/mnt2"
cp "$FIX" "$VOL/store/$P/$A.jsonl"
mount_fs "$VOL/store" "$T_DIR/mnt2"
fsx_out rm -r "$T_DIR/mnt2/$P/$A"
assert_eq "rm -r on another file system exits 0" 0 "$RC"
assert_same_bytes "$VOL/.Trash-$(id -u)/files/$A.jsonl" "$T_DIR/orig.jsonl"
assert_contains "the info path is relative to the top" "Path=store/$P/$A.jsonl" \
	"$(cat "$VOL/.Trash-$(id -u)/info/$A.jsonl.trashinfo")"
assert_contains "trash-list finds it" "$VOL/store/$P/$A.jsonl" "$(trash_cli trash-list 2>&1)"
# A trash another user planted on the volume is never used (the
# specification: .Trash-UID a real directory of the user's own, no
# symlink; .Trash/UID likewise): the session stays, rm -r fails.
me=$(id -u)
mv "$VOL/.Trash-$me" "$VOL/mine"
mkdir -p "$VOL/theirs"
chown nobody "$VOL/theirs"
ln -s "$VOL/theirs" "$VOL/.Trash-$me"
cp "$FIX" "$VOL/store/$P/$B.jsonl"
assert_poll "another session shows" 5 test -d "$T_DIR/mnt2/$P/$B"
fsx_out rm -r "$T_DIR/mnt2/$P/$B"
assert_true "a planted .Trash-UID symlink: rm -r fails" test "$RC" -ne 0
assert_same_bytes "$VOL/store/$P/$B.jsonl" "$T_DIR/orig.jsonl"
assert_eq "nothing went into the other user's directory" "" "$(ls -A "$VOL/theirs")"
rm "$VOL/.Trash-$me"
mkdir "$VOL/.Trash-$me"
chown nobody "$VOL/.Trash-$me"
fsx_out rm -r "$T_DIR/mnt2/$P/$B"
assert_true "a .Trash-UID of another owner: rm -r fails" test "$RC" -ne 0
assert_same_bytes "$VOL/store/$P/$B.jsonl" "$T_DIR/orig.jsonl"
rmdir "$VOL/.Trash-$me"
mkdir -m 1777 "$VOL/.Trash"
ln -s "$VOL/theirs" "$VOL/.Trash/$me"
fsx_out rm -r "$T_DIR/mnt2/$P/$B"
assert_eq "a symlink at .Trash/UID: the user's own .Trash-UID is made instead" "0 " "$RC $ERR"
assert_same_bytes "$VOL/.Trash-$me/files/$B.jsonl" "$T_DIR/orig.jsonl"
assert_eq "still nothing in the other user's directory" "" "$(ls -A "$VOL/theirs")"
fsx_out cat "$T_DIR/mnt2/.pisessionfs/log"
assert_contains "the refusal is logged" "could not be moved to the trash" "$OUT"
umount_fs "$T_DIR/mnt2"

# A flat store: a session at the root.
FLAT=$T_DIR/flat
mkdir -p "$FLAT" "$T_DIR/mnt3"
cp "$FIX" "$FLAT/$A.jsonl"
mount_fs "$FLAT" "$T_DIR/mnt3"
fsx_out rm -r "$T_DIR/mnt3/$A"
assert_eq "rm -r in a flat store exits 0" 0 "$RC"
assert_eq "and prints nothing" "" "$ERR"
assert_missing "$FLAT/$A.jsonl"
assert_contains "its info file" "Path=$FLAT/$A.jsonl" "$(cat "$TRASH/info/$A.jsonl.trashinfo")"
umount_fs "$T_DIR/mnt3"

finish
