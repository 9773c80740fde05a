#!/usr/bin/env bash
# The navigation views at the mount root: by-id/ (with unique prefixes and tails),
# by-name/ (odd names, collisions), by-cwd/ (from the headers' cwd, so
# dashes in paths are not ambiguous), recent/ (newest first, 50 at most).
. "$(dirname "$0")/lib.sh" "$@"

mk_session() { # DIR STEM ID CWD NAME MTIME
	local f=$STORE/$1/$2.jsonl
	mkdir -p "$STORE/$1"
	printf '{"type":"session","version":3,"id":"%s","timestamp":"2026-01-01T00:00:00.000Z","cwd":"%s"}\n' "$3" "$4" >"$f"
	user_msg u1 null "hello" >>"$f"
	if [[ -n $5 ]]; then
		printf '{"type":"session_info","id":"n1","parentId":"u1","timestamp":"2026-01-01T00:00:02.000Z","name":"%s"}\n' "$5" >>"$f"
	fi
	touch -d "@$6" "$f"
}

mk_session --home-u-my-proj-- 2026-01-01T00-00-00-000Z_aaaa1111 aaaa1111-0000-0000-0000-000000000001 /home/u/my-proj "Refactor auth" 1000
mk_session --home-u-my-proj-- 2026-01-02T00-00-00-000Z_aaaa2222 aaaa2222-0000-0000-0000-000000000002 /home/u/my-proj "Refactor auth" 2000
mk_session --home-u-my--proj-- 2026-01-03T00-00-00-000Z_bbbb3333 bbbb3333-0000-0000-0000-000000000003 /home/u/my/-proj "a/b: ünïcode ✓" 3000
mk_session --srv-x-- 2026-01-04T00-00-00-000Z_cccc4444 cccc4444-0000-0000-0000-000000000004 /srv/x "" 4000

mount_fs "$STORE" "$MNT"

assert_eq "root lists the views" "by-cwd by-id by-name recent" "$(fsx ls "$MNT" | grep -E '^(by-|recent)' | tr '\n' ' ' | sed 's/ $//')"

# by-id
assert_eq "by-id lists every session id" 4 "$(fsx ls "$MNT/by-id" | wc -l)"
assert_eq "by-id link target" "../--home-u-my-proj--/2026-01-01T00-00-00-000Z_aaaa1111" \
	"$(fsx readlink "$MNT/by-id/aaaa1111-0000-0000-0000-000000000001")"
assert_eq "a unique prefix resolves" "../--srv-x--/2026-01-04T00-00-00-000Z_cccc4444" "$(fsx readlink "$MNT/by-id/cccc")"
# An ambiguous prefix is a directory of its candidates, named as by-id/
# lists them (docs/layout.md "The mount root").
assert_eq "an ambiguous prefix lists its candidates" \
	$'aaaa1111-0000-0000-0000-000000000001\naaaa2222-0000-0000-0000-000000000002' "$(fsx ls "$MNT/by-id/aaaa")"
assert_true "an ambiguous prefix is a directory" test -d "$MNT/by-id/aaaa"
assert_eq "a candidate's link leads to its session" "../../--home-u-my-proj--/2026-01-02T00-00-00-000Z_aaaa2222" \
	"$(fsx readlink "$MNT/by-id/aaaa/aaaa2222-0000-0000-0000-000000000002")"
assert_contains "cd through a candidate lands in the session" "0001-user.u1.md" \
	"$(fsx ls "$MNT/by-id/aaaa/aaaa1111-0000-0000-0000-000000000001/")"
assert_missing "$MNT/by-id/aaaa/cccc4444-0000-0000-0000-000000000004"
assert_missing "$MNT/by-id/aaa"
assert_missing "$MNT/by-id/zzzz"
assert_missing "$MNT/by-id/cccc/cccc4444-0000-0000-0000-000000000004"
assert_contains "cd through a prefix lands in the session" "0001-user.u1.md" "$(fsx ls "$MNT/by-id/bbbb3/")"
# A unique tail resolves too (UUIDv7 ids share their first characters,
# a timestamp; recent/ shows the tail): not listed, a link.
assert_eq "a unique tail resolves" "../--srv-x--/2026-01-04T00-00-00-000Z_cccc4444" \
	"$(fsx readlink "$MNT/by-id/000000000004")"
assert_eq "a tail of 4 resolves" "../--home-u-my-proj--/2026-01-01T00-00-00-000Z_aaaa1111" \
	"$(fsx readlink "$MNT/by-id/0001")"
assert_contains "cd through a tail lands in the session" "0001-user.u1.md" "$(fsx ls "$MNT/by-id/0003/")"
assert_missing "$MNT/by-id/0000"
assert_missing "$MNT/by-id/001"
assert_eq "tails are not listed" 0 "$(fsx ls "$MNT/by-id" | grep -c '^0' || true)"

# by-name: collisions get a stable suffix; / is escaped, Unicode kept
names=$(fsx ls "$MNT/by-name")
assert_contains "plain name" "Refactor auth" "$names"
assert_contains "the later session with the same name gets its id" "Refactor auth~aaaa2222" "$names"
assert_contains "slash escaped, Unicode kept" "a%2Fb: ünïcode ✓" "$names"
assert_eq "unnamed sessions are not in by-name" 3 "$(printf '%s\n' "$names" | wc -l)"
assert_eq "by-name target" "../--home-u-my-proj--/2026-01-01T00-00-00-000Z_aaaa1111" "$(fsx readlink "$MNT/by-name/Refactor auth")"

# by-cwd: from the header's cwd
assert_eq "by-cwd nests the real cwd" "2026-01-01T00-00-00-000Z_aaaa1111 2026-01-02T00-00-00-000Z_aaaa2222" \
	"$(fsx ls "$MNT/by-cwd/home/u/my-proj" | tr '\n' ' ' | sed 's/ $//')"
assert_eq "a dash in a path is not a slash" "2026-01-03T00-00-00-000Z_bbbb3333" "$(fsx ls "$MNT/by-cwd/home/u/my/-proj")"
assert_eq "by-cwd link resolves" "hello" \
	"$(fsx sed -n '$p' "$MNT/by-cwd/home/u/my-proj/2026-01-01T00-00-00-000Z_aaaa1111/0001-user.u1.md")"
assert_missing "$MNT/by-cwd/home/u/nope"

# recent: newest first
assert_eq "recent is newest first, by title" "01-hello~00000004 02-a%2Fb: ünïcode ✓~00000003" \
	"$(fsx ls "$MNT/recent" | head -2 | tr '\n' ' ' | sed 's/ $//')"

# recent/ lists what sessions.md lists: files that are not sessions (empty,
# not JSON, no header), newer than every session, are in neither.
: >"$STORE/--srv-x--/2026-01-09T00-00-00-000Z_empty.jsonl"
echo 'not json' >"$STORE/--srv-x--/2026-01-09T00-00-00-000Z_junk.jsonl"
user_msg u1 null "no header" >"$STORE/--srv-x--/2026-01-09T00-00-00-000Z_nohdr.jsonl"
touch -d @9000 "$STORE/--srv-x--/2026-01-09T00-00-00-000Z_"*.jsonl
assert_poll "the files that are not sessions show in their project" 3 \
	test -d "$MNT/--srv-x--/2026-01-09T00-00-00-000Z_junk"
rows=$(fsx grep -c '^| ' "$MNT/sessions.md" || true) # with its head and rule
assert_eq "recent lists exactly what sessions.md lists" "$((rows - 2))" "$(fsx ls "$MNT/recent" | wc -l)"
assert_eq "recent lists no file that is not a session" 0 "$(fsx ls "$MNT/recent" | grep -c '2026-01-09' || true)"
assert_eq "recent is still newest first" "01-hello~00000004" "$(fsx ls "$MNT/recent" | head -1)"
rm "$STORE/--srv-x--/2026-01-09T00-00-00-000Z_"*.jsonl

# Views follow the store.
mk_session --srv-x-- 2026-01-05T00-00-00-000Z_dddd5555 dddd5555-0000-0000-0000-000000000005 /srv/x "Fresh" 5000
assert_poll "a new session shows in by-name" 3 test -L "$MNT/by-name/Fresh"
assert_poll "and first in recent" 3 test -L "$MNT/recent/01-Fresh~00000005"

# recent holds 50 at most
for i in $(seq 10 70); do
	mk_session --many-- "2026-02-01T00-00-00-000Z_e$i" "eeee00$i-0000-0000-0000-000000000000" /m "" $((6000 + i))
done
assert_poll "recent stops at 50" 3 bash -c "[[ \$(ls '$MNT/recent' | wc -l) == 50 ]]"

# by-id: several files with one id (a copied session file, a renamed copy).
# The oldest file takes the plain id; each other is named by what tells it
# apart: its file name, or, where another file of that id has the same
# name (a copy in another project), its project and file name, the / as
# %2F.  Before, the second was named ID~<the first 8 characters of its
# file name>, a date fragment they all share ("ID~2026-03-").
D=ffff6666-0000-0000-0000-000000000006
S5=2026-03-05T00-00-00-000Z_ffff6666
S6=2026-03-06T00-00-00-000Z_ffff6666
mk_session --p1-- "$S5" "$D" /p1 "" 7000
mk_session --p1-- "$S6" "$D" /p1 "" 7001
mk_session --p2-- "$S5" "$D" /p2 "" 7002
mk_session --p3-- "$S5" "$D" /p3 "" 7003
assert_poll "the four files of one id show in by-id" 3 bash -c "[[ \$(ls '$MNT/by-id' | grep -c '^$D') == 4 ]]"
assert_eq "each has a name that tells it apart" "$D
$D~--p2--%2F$S5
$D~--p3--%2F$S5
$D~$S6" "$(fsx ls "$MNT/by-id" | grep "^$D" | sort)"
assert_eq "the plain id is the oldest file" "../--p1--/$S5" "$(fsx readlink "$MNT/by-id/$D")"
assert_eq "~FILE is that file" "../--p1--/$S6" "$(fsx readlink "$MNT/by-id/$D~$S6")"
assert_eq "~PROJECT%2FFILE is that one" "../--p2--/$S5" "$(fsx readlink "$MNT/by-id/$D~--p2--%2F$S5")"
assert_eq "... and the other" "../--p3--/$S5" "$(fsx readlink "$MNT/by-id/$D~--p3--%2F$S5")"

finish
