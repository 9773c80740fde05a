#!/usr/bin/env bash
# A lookup of a name no session has does not rescan the store where the
# watcher hears every change (docs/layout.md "Names"): a loop of
# `stat PROJECT/x$RANDOM` makes the daemon read no store directory
# (getdents64, counted with strace), and a session file made directly in
# the store still resolves by its name at once (the watcher told the
# catalog).
. "$(dirname "$0")/lib.sh" "$@"
command -v strace >/dev/null || { echo "skip: no strace"; exit 77; }

P=--w--
mkdir -p "$STORE/$P"
for i in 1 2 3; do
	{ header 3 "0190000$i-0000-7000-8000-000000000001"; user_msg m1 null "hello $i"; } >"$STORE/$P/2026-01-0${i}T00-00-00-000Z_s$i.jsonl"
done
# A query of search/ is no session's typed name: looking it up on a fresh
# mount reads no session (the catalog of the whole store is not built for
# it; the search runs when the query's directory is listed).  Counted with
# strace -y as the opens of session files and the reads from descriptors
# on them, not as the daemon's rchar: the disk cache's SQLite may still
# be settling from the mount start under a slow build, and its reads are
# no session's.
mount_fs "$STORE" "$MNT"
strace -f -qq -y -e trace=openat,read,pread64,readv,preadv -o "$T_DIR/lookup.out" -p "$DAEMON_PID" &
STRACE=$!
sleep "$(scaled 1)" # attached
fsx stat "$MNT/search/hello" >/dev/null
kill -INT "$STRACE"
wait "$STRACE" 2>/dev/null || true
session_io=$(grep -cE "^[0-9]+ +(openat|read|pread64|readv|preadv)\\(.*$STORE.*\.jsonl" "$T_DIR/lookup.out" || true)
assert_eq "looking up search/hello opens or reads no session file" 0 "$session_io"
fsx ls "$MNT/by-name" >/dev/null
fsx stat "$MNT/$P/x-primer" >/dev/null 2>&1 || true
sleep 1.2 # past the once-a-second rescan the base did on a miss

strace -f -qq -e trace=getdents64 -o "$T_DIR/strace.out" -p "$DAEMON_PID" &
STRACE=$!
sleep 1 # attached
for ((i = 0; i < 30; i++)); do
	stat "$MNT/$P/x$RANDOM$i" >/dev/null 2>&1 || true
	sleep 0.05
done
kill -INT "$STRACE"
wait "$STRACE" 2>/dev/null || true
assert_eq "30 lookups of unknown names over 1.5 s read no store directory" 0 \
	"$(grep -c getdents64 "$T_DIR/strace.out" || true)"

# A session made directly in the store, named by pi: resolves by its name
# under its project at once (the watcher heard it).
f=$STORE/$P/2026-01-05T00-00-00-000Z_new.jsonl
{ header 3 01900005-0000-7000-8000-000000000001; user_msg m1 null "made outside"; } >"$f.tmp"
printf '{"type":"session_info","id":"n1","parentId":"m1","timestamp":"2026-01-01T00:00:02.000Z","name":"Made by pi"}\n' >>"$f.tmp"
mv "$f.tmp" "$f"
assert_poll "a session made in the store resolves by its name" 2 stat "$MNT/$P/Made by pi"
# And a name pi appends to a known session.
printf '{"type":"session_info","id":"n2","parentId":"m1","timestamp":"2026-01-01T00:00:03.000Z","name":"Renamed by pi"}\n' \
	>>"$STORE/$P/2026-01-02T00-00-00-000Z_s2.jsonl"
assert_poll "a name pi appends resolves" 2 stat "$MNT/$P/Renamed by pi"
finish
