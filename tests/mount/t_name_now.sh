#!/usr/bin/env bash
# A name the mount itself just wrote resolves in every view at once: the
# commit of `name` tells the catalog (docs/layout.md "Names"), so
# `echo X > SESSION/name && cd by-name/X` needs no wait for a rescan.
. "$(dirname "$0")/lib.sh" "$@"

P=--w--
mkdir -p "$STORE/$P"
for i in 1 2 3; do
	{ header 3 "0190000$i-0000-7000-8000-000000000001"; user_msg m1 null "hello $i"; } >"$STORE/$P/2026-01-0${i}T00-00-00-000Z_s$i.jsonl"
done
mount_fs "$STORE" "$MNT"
S=$MNT/$P/2026-01-01T00-00-00-000Z_s1
fsx ls "$MNT/by-name" >/dev/null # the catalog has scanned: now it must learn, not rescan
for n in 1 2 3; do
	assert_true "rename $n: echo X > name && cd by-name/X" \
		bash -c 'echo "Fresh name $2" >"$1/name" && cd "$3/by-name/Fresh name $2"' _ "$S" "$n" "$MNT"
	assert_true "rename $n: the project resolves it too" stat "$MNT/$P/Fresh name $n"
done
assert_true "mkdir PROJECT/NAME && ls by-name/NAME" \
	bash -c 'mkdir "$1/$2/Brand new" && ls "$1/by-name/Brand new" >/dev/null' _ "$MNT" "$P"
finish
