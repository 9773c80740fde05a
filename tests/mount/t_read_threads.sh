#!/usr/bin/env bash
# Reading sessions on several threads (-o read_threads, docs/layout.md
# "The cache kept across mounts") changes nothing but the time: on a store
# of the bench's shape, sessions.md, usage.csv, the usage over time, the
# views and a search list the same bytes whether one thread read the
# sessions or four, with nothing kept from an earlier mount, and again on a
# remount that takes them from the disk cache.
. "$(dirname "$0")/lib.sh" "$@"

python3 "$LIB_DIR/../gen/gen_store.py" --preset tiny --seed 7 --out "$STORE" --jobs 1 >/dev/null 2>&1 ||
	die "gen_store.py failed"
QUERY=kubernetes.ts

# snapshot PREFIX: what this mount shows store-wide, one file each.
snapshot() {
	cat "$MNT/sessions.md" >"$1.md"
	cat "$MNT/usage.csv" >"$1.csv"
	cat "$MNT/usage-daily-models.csv" >"$1.days"
	ls "$MNT/recent" >"$1.recent"
	ls "$MNT/by-name" >"$1.by-name"
	ls "$MNT/by-id" >"$1.by-id"
	ls "$MNT/search/$QUERY" >"$1.search"
}
KINDS="md csv days recent by-name by-id search"

mount_fs "$STORE" "$MNT" -o cache_dir=off,read_threads=1
snapshot "$T_DIR/one"
umount_fs "$MNT"
assert_true "sessions.md has a row per session" test "$(grep -c '^| ' "$T_DIR/one.md")" -gt 40
assert_true "the search finds sessions" test -s "$T_DIR/one.search"
assert_true "usage.csv has a row per session" test "$(wc -l <"$T_DIR/one.csv")" -gt 40

for n in 2 4; do
	mount_fs "$STORE" "$MNT" -o cache_dir=off,read_threads=$n
	snapshot "$T_DIR/t$n"
	umount_fs "$MNT"
	for k in $KINDS; do
		assert_same_bytes "$T_DIR/one.$k" "$T_DIR/t$n.$k"
	done
done

# Kept on disk by a mount that read on four threads, taken back by the next.
mount_fs "$STORE" "$MNT" -o cache_dir="$T_DIR/cache",read_threads=4
snapshot "$T_DIR/first"
umount_fs "$MNT"
mount_fs "$STORE" "$MNT" -o cache_dir="$T_DIR/cache",read_threads=4
snapshot "$T_DIR/again"
umount_fs "$MNT"
for k in $KINDS; do
	assert_same_bytes "$T_DIR/one.$k" "$T_DIR/first.$k"
	assert_same_bytes "$T_DIR/one.$k" "$T_DIR/again.$k"
done

# An option out of range is refused at mount, with the reason.
fsx_out "$DAEMON" --store "$STORE" -f -o read_threads=17 "$MNT"
assert_ne "read_threads=17 is refused" 0 "$RC"
assert_contains "and says why" "give 1 to 16" "$ERR"
finish
