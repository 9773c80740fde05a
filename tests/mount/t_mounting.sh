#!/usr/bin/env bash
# shellcheck disable=SC2016 # sh -c scripts get their arguments as $1
# Mounting, as a user meets it (issue 11, items 6, 7 and 11):
#   1. findmnt and df show the store's path as the source and
#      fuse.pisessionfs as the type, also for a path with a space and a comma;
#   2. a second mount on the same mountpoint says it is already mounted, from
#      which store, and how to unmount, and leaves the mount as it was;
#   3. quickstart.sh without a store of the user's own mounts a scratch copy
#      of the demo store (never the checkout), says where, and a second run
#      finds the mount (mountinfo parsed field by field);
#   4. --help tells of -o allow_other.
. "$(dirname "$0")/lib.sh" "$@"

REPO=$(cd "$(dirname "$0")/../.." && pwd)
command -v findmnt >/dev/null || die "findmnt is missing (package util-linux; tests/deps.sh --test)"

# --- 1. the source is the store ---------------------------------------------------
ODD="$T_DIR/my store, v2"
mkdir -p "$ODD/--w--"
{
	header 3
	user_msg a1 null "odd store"
} >"$ODD/--w--/s.jsonl"
mount_fs "$ODD" "$MNT"
assert_eq "findmnt shows the store as the source" "$ODD" "$(fsx findmnt -no SOURCE --mountpoint "$MNT")"
assert_eq "findmnt shows the type fuse.pisessionfs" "fuse.pisessionfs" "$(fsx findmnt -no FSTYPE --mountpoint "$MNT")"
assert_eq "df shows the store as the source" "$ODD" "$(fsx df --output=source "$MNT" | tail -n 1)"
assert_contains "the mount works" "odd store" "$(fsx cat "$MNT/--w--/s/0001-user.a1.md")"

# --- 2. a second mount on the same mountpoint ------------------------------------
fsx_out "$DAEMON" --store "$STORE" -f "$MNT"
assert_ne "a second mount on a mounted directory fails" 0 "$RC"
assert_contains "it says the directory is already mounted by pisessionfs" \
	"$MNT is already mounted by pisessionfs" "$ERR"
assert_contains "it names the store mounted there" "from the store $ODD;" "$ERR"
assert_contains "it says how to unmount" "fusermount3 -u $MNT" "$ERR"
assert_eq "it does not call the directory merely not empty" "" "$(grep -i 'not empty' <<<"$ERR" || true)"
assert_eq "the first mount is still the one there" "$ODD" "$(fsx findmnt -no SOURCE --mountpoint "$MNT")"
assert_contains "and still works" "odd store" "$(fsx cat "$MNT/--w--/s/0001-user.a1.md")"
# The same through mount(8)'s argument order (STORE MOUNTPOINT).
fsx_out "$DAEMON" "$STORE" "$MNT" -f
assert_contains "... also as mount(8) runs it" "already mounted by pisessionfs" "$ERR"
umount_fs "$MNT"

# --- 3. quickstart.sh -------------------------------------------------------------
# A user with no pi store: a private HOME and cache; quickstart builds (a
# no-op when the checkout's build is current) and mounts.
H=$T_DIR/home
QS=$T_DIR/qs
mkdir -p "$H"
demo_file=$(cd "$REPO/docs/examples/store" && find . -name '*.jsonl' | sort | head -n 1)
demo_sum=$(sha256sum <"$REPO/docs/examples/store/$demo_file")
demo_status=$(git -C "$REPO" status --porcelain -- docs/examples/store 2>/dev/null || true)
qs() {
	# quickstart builds first: a checkout built before is current, a
	# fresh one takes a while.
	local TIMEOUT
	TIMEOUT=$(scaled 600)
	fsx_out env -u PI_CODING_AGENT_DIR -u PI_CODING_AGENT_SESSION_DIR HOME="$H" XDG_CACHE_HOME="$H/cache" \
		"$REPO/quickstart.sh" "$QS"
}
MOUNTS+=("$QS") # unmounted at exit whatever happens
qs
assert_eq "quickstart succeeds" 0 "$RC"
COPY=$H/cache/pisessionfs/demo-store
assert_contains "it says it mounts a copy of the demo store, and where" "a copy of the demo store, $COPY" "$OUT"
assert_true "the copy is there" test -f "$COPY/$demo_file"
assert_eq "the mount's source is the copy, not the checkout" "$COPY" "$(fsx findmnt -no SOURCE --mountpoint "$QS")"
session_dir=$QS/${demo_file#./}
session_dir=${session_dir%.jsonl}
assert_true "the demo sessions show" test -d "$session_dir"
assert_true "a write through the quickstart mount" sh -c 'echo "written in the copy" > "$1/next.md"' _ "$session_dir"
assert_contains "lands in the copy" '"content":"written in the copy"' "$(tail -n 1 "$COPY/$demo_file")"
assert_eq "the checkout's demo store is unchanged" "$demo_sum" "$(sha256sum <"$REPO/docs/examples/store/$demo_file")"
assert_eq "git sees no change in docs/examples/store" "$demo_status" "$(git -C "$REPO" status --porcelain -- docs/examples/store 2>/dev/null || true)"
qs
assert_eq "quickstart again, on the mounted directory, succeeds" 0 "$RC"
assert_contains "it finds the mount and names the store" "$QS is already mounted by pisessionfs, from $COPY" "$OUT"
assert_contains "it says how to unmount" "fusermount3 -u $QS" "$OUT"
assert_eq "it does not claim to mount anything" "" "$(grep -e 'mounting a copy' -e 'is mounted at' <<<"$OUT" || true)"
assert_true "the mount is still there" test -d "$session_dir"
fsx fusermount3 -u "$QS" || fail "fusermount3 -u $QS failed"
# The copy is made once: what was written stays for the next quickstart.
qs
assert_eq "quickstart after an unmount mounts again" 0 "$RC"
assert_contains "the same copy, with what was written" "written in the copy" "$(fsx cat "$session_dir/session.jsonl")"
fsx fusermount3 -u "$QS" || fail "fusermount3 -u $QS failed"

# --- 4. --help ---------------------------------------------------------------------
fsx_out "$DAEMON" --help
assert_contains "--help tells of -o allow_other" "-o allow_other" "$OUT"
assert_contains "--help tells of --print-store" "--print-store" "$OUT"

finish
