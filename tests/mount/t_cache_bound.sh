#!/usr/bin/env bash
# The cache directory has limits (docs/layout.md "The cache kept across
# mounts"): at mount, off its critical path, the databases of stores that
# no longer exist and that no mount used for 30 days are removed, with a
# log line, and no other; a database a mount uses is never removed;
# `pisession cache` shows the databases and `pisession cache clear`
# removes those no mount uses; -o cache_max bounds the directory: the
# least recently used other databases go first, then the mount's own
# values used least recently, and the views it serves stay the same.
. "$(dirname "$0")/lib.sh" "$@"

TOOL=${PISESSION:-$(dirname "$DAEMON")/pisession}
[[ -x $TOOL ]] || TOOL=$REPO/build/pisession
C=$XDG_CACHE_HOME/pisessionfs

# mk_store DIR N: N sessions whose message texts are large (what search/
# keeps on disk of each is about 100 KB).
mk_store() {
	mkdir -p "$1/--w--"
	python3 - "$1/--w--" "$2" <<'EOF'
import json, sys
out, n = sys.argv[1], int(sys.argv[2])
words = " ".join("word%d" % k for k in range(12000))
for i in range(n):
    sid = "0190%04d-0000-7000-8000-%012d" % (i, i)
    lines = [{"type": "session", "version": 3, "id": sid, "timestamp": "2026-01-01T00:00:00.000Z", "cwd": "/w"},
             {"type": "message", "id": "u%d" % i, "parentId": None, "timestamp": "2026-01-01T00:00:01.000Z",
              "message": {"role": "user", "content": "question %d zebra%d %s" % (i, i, words), "timestamp": 1767225601000 + i}},
             {"type": "session_info", "id": "n%d" % i, "parentId": "u%d" % i, "timestamp": "2026-01-01T00:00:02.000Z",
              "name": "Session number %d" % i}]
    with open("%s/2026-01-01T00-00-%02d-000Z_%s.jsonl" % (out, i, sid), "w") as f:
        for l in lines:
            f.write(json.dumps(l, separators=(",", ":")) + "\n")
EOF
}

# db_of STORE: the database file of STORE (by what it says it is for).
db_of() {
	local f
	for f in "$C"/store-*.sqlite; do
		if [[ $(python3 -c 'import sqlite3, sys; print(sqlite3.connect(sys.argv[1]).execute("select v from meta where k = ?", ("store",)).fetchone()[0])' "$f" 2>/dev/null) == "$1" ]]; then
			echo "$f"
			return 0
		fi
	done
	return 1
}

# age DB DAYS: as if no mount had used it for DAYS days.
age() {
	local lock=${1%.sqlite}.lock
	touch -d "$2 days ago" "$1" "$lock"
}

mk_store "$STORE" 8
mk_store "$T_DIR/gone" 2
mk_store "$T_DIR/other" 2

# Three databases besides the one the test mounts: a store removed since
# and unused for 40 days, one removed but used 5 days ago, one that still
# exists, unused for 40 days.
mount_fs "$T_DIR/gone" "$MNT"
cat "$MNT/sessions.md" >/dev/null
umount_fs "$MNT"
cp -a "$T_DIR/gone" "$T_DIR/gone2"
mount_fs "$T_DIR/gone2" "$MNT"
cat "$MNT/sessions.md" >/dev/null
umount_fs "$MNT"
mount_fs "$T_DIR/other" "$MNT"
cat "$MNT/sessions.md" >/dev/null
umount_fs "$MNT"
gone_db=$(db_of "$T_DIR/gone")
gone2_db=$(db_of "$T_DIR/gone2")
other_db=$(db_of "$T_DIR/other")
assert_true "each store has its database" test -f "$gone_db" -a -f "$gone2_db" -a -f "$other_db"
assert_true "and its lock file" test -f "${gone_db%.sqlite}.lock"
rm -rf "$T_DIR/gone" "$T_DIR/gone2"
age "$gone_db" 40
age "$gone2_db" 5
age "$other_db" 40

mount_fs "$STORE" "$MNT"
assert_poll "the database of a store gone and unused for 30 days is removed at mount" 10 \
	grep -q "removed the cache $gone_db" "$MNT/.pisessionfs/log"
assert_true "it is gone" bash -c "! test -e '$gone_db'"
assert_true "with its lock file" bash -c "! test -e '${gone_db%.sqlite}.lock'"
assert_contains "naming the store and the last use" \
	"of $T_DIR/gone, a store that no longer exists, unused since $(date -u -d '40 days ago' +%F)" \
	"$(cat "$MNT/.pisessionfs/log")"
assert_true "a gone store's database used 5 days ago stays" test -f "$gone2_db"
assert_true "a database unused for 40 days whose store exists stays" test -f "$other_db"

# pisession cache: every database, the one in use marked.
own_db=$(db_of "$STORE")
"$TOOL" cache >"$T_DIR/cache.out" 2>&1
OUT=$(cat "$T_DIR/cache.out")
assert_contains "pisession cache names the directory" "$C: 3 databases" "$OUT"
assert_true "the mounted store's database is in use" grep -qE "  in use +$STORE\$" "$T_DIR/cache.out"
assert_true "the other store's is kept" grep -qE "  kept +$T_DIR/other\$" "$T_DIR/cache.out"
assert_true "the gone store's is gone" grep -qE "  gone +$T_DIR/gone2\$" "$T_DIR/cache.out"
assert_eq "with the header line" "      SIZE  LAST USED   STATE       STORE" "$(sed -n 2p "$T_DIR/cache.out")"
# pisession cache clear: what no mount uses.
OUT=$("$TOOL" cache clear 2>&1)
assert_contains "clear removes the unused ones" "removed $other_db (" "$OUT"
assert_contains "clear keeps the one in use" "kept $own_db (" "$OUT"
assert_contains "and says why" "a mount uses it; unmount it first" "$OUT"
assert_contains "and counts" "2 removed (" "$OUT"
assert_true "the unused databases are gone" bash -c "! test -e '$other_db' && ! test -e '$gone2_db'"
assert_true "the mounted store's is there" test -f "$own_db"
assert_eq "the mount still serves its sessions" 8 "$(grep -c 'Session number' "$MNT/sessions.md")"
OUT=$("$TOOL" cache clear "$T_DIR/none" 2>&1) && st=0 || st=$?
assert_eq "clear STORE without a database: status 1" 1 "$st"
assert_contains "and says so" "no cache of the store $T_DIR/none in $C" "$OUT"
umount_fs "$MNT"
OUT=$("$TOOL" cache clear "$STORE" 2>&1)
assert_contains "clear STORE, unmounted: removed" "removed $own_db (" "$OUT"
assert_true "nothing is left" bash -c "! ls '$C'/store-* 2>/dev/null | grep -q ."

# -o cache_max: the views stay the same while the database keeps to it.
mount_fs "$STORE" "$MNT" -o cache_dir=off
{ cat "$MNT/sessions.md" "$MNT/usage.csv"; ls "$MNT/search/zebra3" "$MNT/search/word11999"; } >"$T_DIR/unbounded"
umount_fs "$MNT"
mk_store "$T_DIR/small" 1
mount_fs "$T_DIR/small" "$MNT" # another store's database, used earlier
cat "$MNT/sessions.md" >/dev/null
umount_fs "$MNT"
small_db=$(db_of "$T_DIR/small")
age "$small_db" 1
mount_fs "$STORE" "$MNT" -o cache_max=1
{ cat "$MNT/sessions.md" "$MNT/usage.csv"; ls "$MNT/search/zebra3" "$MNT/search/word11999"; } >"$T_DIR/bounded"
assert_same_bytes "$T_DIR/unbounded" "$T_DIR/bounded" # a bounded cache serves the same views
assert_poll "past the bound, the other database no mount uses goes, with a log line" 10 \
	grep -q "removed the cache $small_db (.*, to keep the cache directory within -o cache_max=1 MiB" "$MNT/.pisessionfs/log"
assert_true "it is gone" bash -c "! test -e '$small_db'"
assert_poll "its own values past its share are dropped, with a log line" 10 \
	grep -q "more than its 1.0 MB share of -o cache_max: dropped the" "$MNT/.pisessionfs/log"
umount_fs "$MNT"
own_db=$(db_of "$STORE")
size=$(du -b "$own_db"* | awk '{ s += $1 } END { print s }')
assert_true "the database takes $size bytes, at most 1 MiB" test "$size" -le $((1 << 20))
mount_fs "$STORE" "$MNT" -o cache_max=1
{ cat "$MNT/sessions.md" "$MNT/usage.csv"; ls "$MNT/search/zebra3" "$MNT/search/word11999"; } >"$T_DIR/again"
assert_same_bytes "$T_DIR/unbounded" "$T_DIR/again" # the next mount, from what was kept, the same
umount_fs "$MNT"
# A bad bound is refused before mounting.
OUT=$("$DAEMON" --store "$STORE" -o cache_max=0 "$MNT" 2>&1) && st=0 || st=$?
assert_eq "-o cache_max=0 is refused" 1 "$st"
assert_contains "saying what to give" "-o cache_max=0: give 1 to 1048576 (MiB)" "$OUT"
finish
