#!/usr/bin/env bash
# The cache names a store on a file system that stopped answering (an
# sshfs whose link died; here a passthrough FUSE mount stopped with
# SIGSTOP), and another store is mounted: the mount starts, serves and
# stops as usual.  The sweep of the cache directory at mount
# (docs/layout.md "The cache") looks at every store its databases name,
# to drop those of stores that are gone; it used to stat each one, and a
# stat of a frozen FUSE store waits as long as the server does, so the
# daemon never exited after its unmount.  A store on a FUSE or network
# file system is now known as one from the mount table alone.
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh" "$@"

passthrough_helper

BACK=$T_DIR/backing
PT=$T_DIR/pt
P=--far--
mkdir -p "$BACK/$P" "$PT" "$STORE/--near--" "$T_DIR/mnt2"
{ header; user_msg a null "far-text"; } >"$BACK/$P/s.jsonl"
{ header; user_msg a null "near-text"; } >"$STORE/--near--/s.jsonl"

mount_with "$PT" "$HELPER" "$BACK" "$PT" -f
PT_PID=$DAEMON_PID
teardown() {
	kill -CONT "$PT_PID" 2>/dev/null || true
}

# A mount of the store on FUSE leaves its database in the cache.
mount_fs "$PT" "$MNT"
fsx_out cat "$MNT/sessions.md"
assert_contains "the store on FUSE is read" "far-text" "$OUT"
umount_fs "$MNT"
FAR_DB=$(find "$XDG_CACHE_HOME/pisessionfs" -name '*.sqlite')
assert_eq "the cache holds that store's database" 1 "$(grep -c . <<<"$FAR_DB")"

# The premise: a stat of the frozen store does not answer.
kill -STOP "$PT_PID"
start=$(date +%s%N)
if bash -c 'timeout -s KILL 2 stat "$1"' _ "$PT/$P" >/dev/null 2>&1; then
	fail "a stat of the frozen passthrough mount answered: the test could not fail"
else
	pass
fi

# Another store's mount, with the same cache, while the first stays frozen.
mount_fs "$STORE" "$T_DIR/mnt2"
fsx_out cat "$T_DIR/mnt2/sessions.md"
assert_contains "the other store's mount serves" "near-text" "$OUT"
sleep 1 # the sweep has run by now (it starts with the mount)
umount_fs "$T_DIR/mnt2"
elapsed=$((($(date +%s%N) - start) / 1000000))
echo "# with the store on FUSE frozen: another store mounted, read and unmounted in $elapsed ms"
assert_exists "$FAR_DB" # the frozen store's database is kept: it may come back

kill -CONT "$PT_PID"
fsx_out ls "$PT/$P"
assert_eq "the passthrough mount answers again" "s.jsonl" "${OUT%$'\n'}"
finish
