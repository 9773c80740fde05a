#!/usr/bin/env bash
# make install into a temporary prefix; the installed daemon mounts the way
# fstab and mount(8) run it (mount.fuse3 passes STORE MOUNTPOINT -o ...), and
# the man page renders.
. "$(dirname "$0")/lib.sh" "$@"

REPO=$(cd "$(dirname "$0")/../.." && pwd)
PREFIX_DIR=$T_DIR/prefix
mkdir -p "$STORE/--w--"
{
	header 3
	user_msg a1 null "installed"
} >"$STORE/--w--/s.jsonl"

# The same build the other tests use: install copies, it does not rebuild.
BUILD_DIR=$(dirname "$DAEMON")
fsx_out make -s -C "$REPO" install PREFIX="$PREFIX_DIR" BUILD="${BUILD_DIR#"$REPO"/}"
assert_eq "make install succeeds" 0 "$RC"
for f in bin/pisessionfs bin/pisession share/man/man1/pisessionfs.1; do
	assert_true "installed $f" test -f "$PREFIX_DIR/$f"
done
assert_true "the installed daemon is executable" test -x "$PREFIX_DIR/bin/pisessionfs"
fsx_out "$PREFIX_DIR/bin/pisessionfs" --version
assert_contains "--version names the program" "pisessionfs" "$OUT"
fsx_out man -l "$PREFIX_DIR/share/man/man1/pisessionfs.1"
assert_contains "the man page renders" "mount a pi coding-agent session store" "$OUT"

# mount -t fuse with the TYPE#SOURCE form (fstab: fuse.pisessionfs finds
# the program on mount's PATH; this form names it exactly).
MOUNTS+=("$MNT")
fsx_out mount -t fuse "$PREFIX_DIR/bin/pisessionfs#$STORE" "$MNT" -o auto_unmount
assert_eq "mount -t fuse PROGRAM#STORE succeeds" 0 "$RC"
poll_until 5 test -d "$MNT/--w--/s" || true
assert_eq "the mount shows the store" "s" "$(fsx ls "$MNT/--w--" | grep -v '^usage.csv$')"
assert_contains "the entry reads through the mount" "installed" "$(fsx cat "$MNT/--w--/s/0001-user.a1.md")"
assert_eq "it is a fuse.pisessionfs mount" "fuse.pisessionfs" \
	"$(awk -v mp="$MNT" '$5 == mp { for (i = 7; i <= NF; i++) if ($i == "-") { print $(i + 1); exit } }' /proc/self/mountinfo)"
fsx fusermount3 -u "$MNT"
assert_true "fusermount3 -u unmounts it" bash -c "! grep -q ' $MNT ' /proc/self/mountinfo"

finish
