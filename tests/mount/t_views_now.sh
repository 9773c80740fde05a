#!/usr/bin/env bash
# The views follow a change the watcher heard at once, not at the next
# scan of the store (at most one a second; docs/layout.md "Live
# updates"): right after recent/ was listed (a scan), another process
# appends to a session and renames one by appending a session_info line,
# and recent/ and by-name/ show both within a fraction of that second.
. "$(dirname "$0")/lib.sh" "$@"

P=--w--
mkdir -p "$STORE/$P"
for i in 1 2 3; do
	f=$STORE/$P/2026-01-0${i}T00-00-00-000Z_s$i.jsonl
	{
		header 3 "0000000$i-0000-0000-0000-00000000000$i"
		user_msg "u$i" null "question $i"
	} >"$f"
	touch -d "@$((1000 * i))" "$f"
done
mount_fs "$STORE" "$MNT"
# listed_first DIR NAME: DIR lists NAME first.
listed_first() { [[ $(ls "$1" | head -1) == "$2" ]]; }
names_has() { ls "$1" | grep -qxF "$2"; }
export -f listed_first names_has

assert_eq "recent/ lists the newest first" "01-question 3~00000003" "$(fsx ls "$MNT/recent" | head -1)"
# Within the second after that listing's scan:
user_msg n1 u1 "more" >>"$STORE/$P/2026-01-01T00-00-00-000Z_s1.jsonl"
assert_poll "an appended session leads recent/ at once" 0.4 bash -c 'listed_first "$@"' _ "$MNT/recent" "01-question 1~00000001"
printf '{"type":"session_info","id":"i2","parentId":"u2","timestamp":"2026-01-02T00:00:01.000Z","name":"renamed two"}\n' \
	>>"$STORE/$P/2026-01-02T00-00-00-000Z_s2.jsonl"
assert_poll "a name appended shows in by-name/ at once" 0.4 bash -c 'names_has "$@"' _ "$MNT/by-name" "renamed two"
finish
