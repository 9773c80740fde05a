#!/usr/bin/env bash
# The cache kept across mounts (docs/layout.md "The cache"): a second
# mount builds sessions.md, usage.csv, the views and a search from what the
# first one derived, reading a fraction of the store (the daemon's rchar),
# with the same bytes; a session changed while nothing was mounted is read
# again (the file wins over the cache); a corrupt cache is made again, with
# a log line; -o cache_dir=off keeps nothing.  What a first search ruled
# out unread is kept too, after the search.
. "$(dirname "$0")/lib.sh" "$@"

P=--w--
mkdir -p "$STORE/$P"
# 30 sessions whose bytes are mostly tool output (as real ones are): what
# the views and search keep of them is a small part of the store.
python3 - "$STORE/$P" <<'EOF'
import json, sys
out = sys.argv[1]
blob = "tool output line\n" * 4000
for i in range(30):
    sid = f"0190{i:04d}-0000-7000-8000-000000000001"
    lines = [{"type": "session", "version": 3, "id": sid, "timestamp": "2026-01-01T00:00:00.000Z", "cwd": "/w"}]
    parent = None
    for t in range(4):
        u, a, r = f"u{i}x{t}", f"a{i}x{t}", f"r{i}x{t}"
        lines.append({"type": "message", "id": u, "parentId": parent, "timestamp": "2026-01-01T00:00:01.000Z",
                      "message": {"role": "user", "content": f"question {t} of session {i} zebra{i}", "timestamp": 1767225601000 + i * 1000 + t}})
        lines.append({"type": "message", "id": a, "parentId": u, "timestamp": "2026-01-01T00:00:02.000Z",
                      "message": {"role": "assistant", "content": [{"type": "text", "text": f"answer {t}"},
                                  {"type": "toolCall", "id": f"c{i}x{t}", "name": "bash", "arguments": {"command": "ls"}}],
                                  "api": "x", "provider": "p", "model": "m",
                                  "usage": {"input": 10, "output": 20, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 30,
                                            "cost": {"input": 0.01, "output": 0.02, "cacheRead": 0, "cacheWrite": 0, "total": 0.03}},
                                  "stopReason": "toolUse", "timestamp": 1767225602000 + i * 1000 + t}})
        lines.append({"type": "message", "id": r, "parentId": a, "timestamp": "2026-01-01T00:00:03.000Z",
                      "message": {"role": "toolResult", "toolCallId": f"c{i}x{t}", "toolName": "bash",
                                  "content": [{"type": "text", "text": blob}], "isError": False, "timestamp": 1767225603000}})
        parent = r
    lines.append({"type": "session_info", "id": f"n{i}", "parentId": parent, "timestamp": "2026-01-01T00:00:04.000Z", "name": f"Session number {i}"})
    with open(f"{out}/2026-01-01T00-00-{i:02d}-000Z_{sid}.jsonl", "w") as f:
        for l in lines:
            f.write(json.dumps(l, separators=(",", ":")) + "\n")
EOF
store_bytes=$(cat "$STORE/$P"/*.jsonl | wc -c)

rchar() { awk '/^rchar:/ { print $2 }' "/proc/$DAEMON_PID/io"; }

# Everything the cache serves, in one listing.
views() {
	cat "$MNT/sessions.md" "$MNT/usage.csv" "$MNT/$P/sessions.md" "$MNT/usage-daily.csv"
	ls "$MNT/recent" "$MNT/by-name" "$MNT/by-id"
	ls "$MNT/search/zebra17" "$MNT/search/re:zebra2[0-9]" "$MNT/$P/search/answer"
}

mount_fs "$STORE" "$MNT"
views >"$T_DIR/first.out"
umount_fs "$MNT"
assert_contains "the first mount lists the sessions" "Session number 29" "$(cat "$T_DIR/first.out")"
db=$(ls "$XDG_CACHE_HOME"/pisessionfs/store-*.sqlite 2>/dev/null | head -1)
assert_true "the cache is in \$XDG_CACHE_HOME/pisessionfs" test -n "$db"
assert_eq "the cache directory is the user's alone" 700 "$(stat -c %a "$XDG_CACHE_HOME/pisessionfs")"
assert_eq "the cache file is the user's alone" 600 "$(stat -c %a "$db")"

# A second mount: the same bytes, reading a small part of the store.
mount_fs "$STORE" "$MNT"
before=$(rchar)
views >"$T_DIR/second.out"
read_bytes=$(($(rchar) - before))
assert_same_bytes "$T_DIR/first.out" "$T_DIR/second.out" # a remount shows the same views and results
assert_true "a remount read $read_bytes bytes for them, under a tenth of the store's $store_bytes" \
	test "$read_bytes" -lt "$((store_bytes / 10))"
umount_fs "$MNT"

# A first search reads whole only the sessions a skim cannot rule out,
# and keeps the others' infos on disk after it (infokeeper.h), at the
# latest when the daemon stops: the next mount's search of another word
# reads the cache, not the store.
rm -rf "$XDG_CACHE_HOME/pisessionfs"
mount_fs "$STORE" "$MNT"
assert_eq "a first search finds its one session" 1 "$(ls "$MNT/search/zebra17" | grep -c .)"
umount_fs "$MNT"
db=$(ls "$XDG_CACHE_HOME"/pisessionfs/store-*.sqlite | head -1)
infos=$(python3 -c 'import sqlite3, sys; print(sqlite3.connect(sys.argv[1]).execute("select count(*) from kept where substr(key, 1, 1) = x'"'"'69'"'"'").fetchone()[0])' "$db")
assert_eq "the infos of all 30 sessions are kept after a search that read one whole" 30 "$infos"
mount_fs "$STORE" "$MNT"
before=$(rchar)
assert_eq "a remount's search of another word finds its session" 1 "$(ls "$MNT/search/zebra23" | grep -c .)"
read_bytes=$(($(rchar) - before))
assert_true "and read $read_bytes bytes, under a tenth of the store's $store_bytes" \
	test "$read_bytes" -lt "$((store_bytes / 10))"
umount_fs "$MNT"

# Changed while unmounted: read again, never taken from the cache.
f=$(ls "$STORE/$P"/*.jsonl | sed -n 5p)
printf '{"type":"session_info","id":"late1","parentId":"n4","timestamp":"2026-01-01T00:00:05.000Z","name":"Renamed while away"}\n' >>"$f"
printf '{"type":"message","id":"late2","parentId":"late1","timestamp":"2026-01-01T00:00:06.000Z","message":{"role":"user","content":"quagga words","timestamp":1767225699000}}\n' >>"$f"
mount_fs "$STORE" "$MNT"
assert_contains "sessions.md shows a name appended while unmounted" "Renamed while away" "$(cat "$MNT/sessions.md")"
assert_contains "by-name shows it" "Renamed while away" "$(ls "$MNT/by-name")"
assert_eq "search finds text appended while unmounted" 1 "$(ls "$MNT/search/quagga" | grep -c .)"
umount_fs "$MNT"

# A corrupt cache: made again, said in the log, and the views are right.
python3 -c 'import sys; open(sys.argv[1], "r+b").write(b"garbage!" * 512)' "$db"
rm -f "$db-wal" "$db-shm"
mount_fs "$STORE" "$MNT"
log=$(cat "$MNT/.pisessionfs/log")
assert_contains "a corrupt cache is logged" "made again" "$log"
views >"$T_DIR/third.out"
assert_contains "and the views are built from the store" "Renamed while away" "$(cat "$T_DIR/third.out")"
assert_eq "the same sessions match" "$(grep -c zebra "$T_DIR/first.out")" "$(grep -c zebra "$T_DIR/third.out")"
umount_fs "$MNT"

# The same query again, once its listing expired, after one session
# grew: the verdicts of the unchanged sessions are kept (searchmemo.h),
# so it reads what changed, not the store (no disk cache here to hide it).
mount_fs "$STORE" "$MNT" -o cache_dir=off
assert_eq "a search finds one session" 1 "$(ls "$MNT/search/zebra17" | grep -c .)"
f=$(ls "$STORE/$P"/*.jsonl | sed -n 9p)
printf '{"type":"message","id":"late3","parentId":"n8","timestamp":"2026-01-01T00:00:07.000Z","message":{"role":"user","content":"zebra17 again","timestamp":1767225699500}}\n' >>"$f"
sleep 1.2 # past the second a listing is kept
before=$(rchar)
assert_eq "the same query a second later finds the appended session too" 2 "$(ls "$MNT/search/zebra17" | grep -c .)"
read_bytes=$(($(rchar) - before))
one=$(stat -c %s "$f")
assert_true "and read $read_bytes bytes, under three times the session that grew ($one: skimmed, then read whole)" \
	test "$read_bytes" -lt "$((3 * one))"
umount_fs "$MNT"

# -o cache_dir=off: nothing kept anywhere; -o cache_dir=DIR: there.
rm -rf "$XDG_CACHE_HOME/pisessionfs"
mount_fs "$STORE" "$MNT" -o cache_dir=off
views >/dev/null
umount_fs "$MNT"
assert_missing "-o cache_dir=off keeps nothing" "$XDG_CACHE_HOME/pisessionfs"
mount_fs "$STORE" "$MNT" -o "cache_dir=$T_DIR/elsewhere"
views >/dev/null
umount_fs "$MNT"
assert_true "-o cache_dir=DIR keeps it there" test -s "$(ls "$T_DIR"/elsewhere/store-*.sqlite | head -1)"

# How long a stopping daemon may keep writing (-o keep_at_exit): 0 is
# taken, a value out of range refused with the reason.
mount_fs "$STORE" "$MNT" -o keep_at_exit=0
assert_eq "with keep_at_exit=0 a search still answers" 1 "$(ls "$MNT/search/zebra23" | grep -c .)"
umount_fs "$MNT"
fsx_out "$DAEMON" --store "$STORE" -f -o keep_at_exit=5000 "$MNT"
assert_ne "keep_at_exit=5000 is refused" 0 "$RC"
assert_contains "and says why" "give 0 to 3600" "$ERR"
finish
