#!/usr/bin/env bash
# search/QUERY/ at the root and in every project folder: the sessions pi's
# /resume search lists for QUERY, in its order, named NN-<title>~<id
# tail>, each holding a link to the session and to the entries the query
# found (docs/layout.md "Searching").  tests/diff/search/ compares the
# lists with pi itself over random stores; this pins the tree around them.
. "$(dirname "$0")/lib.sh" "$@"

mk() { # PROJECT STEM ID NAME SECONDS-OF-ACTIVITY TEXT...
	local project=$1 f=$STORE/$1/$2.jsonl id=$3 name=$4 t=$5 parent=null i=0
	shift 5
	mkdir -p "$STORE/$project"
	printf '{"type":"session","version":3,"id":"%s","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/w/%s"}\n' "$id" "$project" >"$f"
	for text in "$@"; do
		i=$((i + 1))
		printf '{"type":"message","id":"m%d","parentId":%s,"timestamp":"2026-01-01T00:00:01.000Z","message":{"role":"user","content":"%s","timestamp":%d}}\n' \
			"$i" "$parent" "$text" $((1767225600000 + t * 1000 + i)) >>"$f"
		parent="\"m$i\""
	done
	if [[ -n $name ]]; then
		printf '{"type":"session_info","id":"n1","parentId":%s,"timestamp":"2026-01-01T00:00:02.000Z","name":"%s"}\n' "$parent" "$name" >>"$f"
	fi
}
mk --w-alpha-- 2026-01-01T00-00-00-000Z_a1 01900000-0000-7000-8000-0000000000a1 "Deploy the cluster" 30 \
	"how do we deploy" "rollback plan please" "deploy again"
mk --w-alpha-- 2026-01-02T00-00-00-000Z_a2 01900000-0000-7000-8000-0000000000a2 "" 20 \
	"write the release notes" "mention the deploy fix"
mk --w-beta-- 2026-01-03T00-00-00-000Z_b1 01900000-0000-7000-8000-0000000000b1 "" 40 \
	"unrelated question about tests"
mk --w-beta-- 2026-01-04T00-00-00-000Z_c1 01900000-0000-7000-8000-0000000000c1 "" 10 \
	"open packages/coding-agent now" "the url has %2F in it"
mount_fs "$STORE" "$MNT"

assert_contains "the root lists search" "search" "$(fsx ls "$MNT")"
assert_contains "a project lists search" "search" "$(fsx ls "$MNT/--w-alpha--")"
assert_eq "search/ itself lists nothing" "" "$(fsx ls "$MNT/search")"

# Titles: the name, else the first user message; newest activity first.
assert_eq "search/deploy lists the two sessions, newest activity first" \
	$'01-Deploy the cluster~000000a1\n02-write the release notes~000000a2' "$(fsx ls "$MNT/search/deploy")"
R="$MNT/search/deploy/01-Deploy the cluster~000000a1"
assert_eq "a result holds the session and the entries found" \
	$'0001-user.m1.md\n0003-user.m3.md\nsession' "$(fsx ls "$R")"
assert_eq "the session link leads to the session" "../../../--w-alpha--/2026-01-01T00-00-00-000Z_a1" \
	"$(fsx readlink "$R/session")"
assert_contains "through it, the session" "0001-user.m1.md" "$(fsx ls "$R/session/")"
assert_contains "an entry link reads the entry" "how do we deploy" "$(fsx cat "$R/0001-user.m1.md")"
assert_eq "the links resolve (find -L finds no broken one)" "" "$(fsx find -L "$MNT/search/deploy" -type l)"

# pi's language: all tokens, phrases, fuzzy on name and cwd, regexes.
assert_eq "two tokens must both match" "01-write the release notes~000000a2" "$(fsx ls "$MNT/search/deploy release")"
assert_eq "a phrase" "01-Deploy the cluster~000000a1" "$(fsx ls "$MNT/search/\"rollback plan\"")"
assert_eq "case does not matter" "01-Deploy the cluster~000000a1" "$(fsx ls "$MNT/search/ROLLBACK")"
assert_eq "a fuzzy token matches the name" "01-Deploy the cluster~000000a1" "$(fsx ls "$MNT/search/dplyclstr")"
assert_eq "a fuzzy match marks no entry" "session" "$(fsx ls "$MNT/search/dplyclstr/01-Deploy the cluster~000000a1")"
assert_eq "a regular expression" $'01-Deploy the cluster~000000a1\n02-write the release notes~000000a2' \
	"$(fsx ls "$MNT/search/re:dep.oy")"
assert_eq "the regex marks the entries it matches" $'0002-user.m2.md\nsession' \
	"$(fsx ls "$MNT/search/re:roll(back)? plan/01-Deploy the cluster~000000a1")"
assert_eq "no match: an empty directory" "" "$(fsx ls "$MNT/search/nothing-like-this")"
assert_eq "the id matches too" "01-unrelated question about tests~000000b1" "$(fsx ls "$MNT/search/0000000000b1")"

# A project's search covers that folder alone.
assert_eq "a project's search" "01-Deploy the cluster~000000a1
02-write the release notes~000000a2" "$(fsx ls "$MNT/--w-alpha--/search/deploy")"
assert_eq "the other project has none of them" "" "$(fsx ls "$MNT/--w-beta--/search/deploy")"
assert_eq "a project's result links from one level deeper" "../../../../--w-alpha--/2026-01-01T00-00-00-000Z_a1" \
	"$(fsx readlink "$MNT/--w-alpha--/search/deploy/01-Deploy the cluster~000000a1/session")"
assert_missing "$MNT/--no-such--/search/deploy"

# An invalid regular expression: EINVAL, and the log says why.
assert_errno "Invalid argument" ls "$MNT/search/re:(unclosed"
assert_contains "the log says why" "search re:(unclosed: Invalid regular expression" "$(fsx cat "$MNT/.pisessionfs/log")"
assert_errno "Invalid argument" ls "$MNT/search/re:"

# A name once listed keeps resolving when rank and title move on.
OLD="$MNT/search/deploy/02-write the release notes~000000a2"
assert_true "the second result" test -d "$OLD"
printf '{"type":"session_info","id":"n9","parentId":"m2","timestamp":"2026-01-01T00:00:09.000Z","name":"Release day"}\n' \
	>>"$STORE/--w-alpha--/2026-01-02T00-00-00-000Z_a2.jsonl"
user_msg m9 n9 "deploy it now" | sed 's/"timestamp":1767225601000/"timestamp":1767225700000/' \
	>>"$STORE/--w-alpha--/2026-01-02T00-00-00-000Z_a2.jsonl"
assert_poll "the renamed session comes first under its new title" 5 \
	bash -c '[[ $(ls "$1" | head -1) == "01-Release day~000000a2" ]]' _ "$MNT/search/deploy"
assert_true "its old name still resolves" ls "$OLD"
assert_contains "and links the new entry" "0004-user.m9.md" "$(fsx ls "$OLD")"
assert_true "any rank and title with its id tail resolve" test -d "$MNT/search/deploy/07-whatever~000000a2"
assert_missing "$MNT/search/deploy/01-no such~ffffffff"

# A query with a / in it: no path component can hold one (the kernel
# splits 'search/re:a[/]c' at it), so in a query's directory name %2F
# stands for / and %25 for %; every other byte, and every other %XX, is
# itself, so pi's query language is otherwise typed as it is.
C="01-open packages%2Fcoding-agent now~000000c1"
assert_eq "packages%2Fcoding searches for packages/coding" "$C" "$(fsx ls "$MNT/search/packages%2Fcoding")"
assert_eq "... and marks the entry that has it" "0001-user.m1.md session" "$(fsx ls "$MNT/search/packages%2Fcoding/$C" | tr '\n' ' ' | sed 's/ $//')"
assert_eq "re:es%2Fcod is the regular expression es/cod" "$C" "$(fsx ls "$MNT/search/re:es%2Fcod")"
assert_eq "... also in a phrase, and in a project's search/" "$C" "$(fsx ls "$MNT/--w-beta--/search/\"packages%2Fcoding-agent now\"")"
assert_eq "%252F is the text %2F" "0002-user.m2.md session" "$(fsx ls "$MNT/search/%252F/$C" | tr '\n' ' ' | sed 's/ $//')"
assert_eq "another %XX is itself (%41 is not A)" "" "$(fsx ls "$MNT/search/%41")"
assert_eq "a % before anything else is itself" "" "$(fsx ls "$MNT/search/100%")"
assert_contains "the log names the query searched" "search re:(a/: Invalid regular expression" \
	"$(fsx ls "$MNT/search/re:(a%2F" 2>&1; fsx cat "$MNT/.pisessionfs/log")"

# Nothing can be made in a search directory; the store is untouched.
before=$(cat "$STORE"/*/*.jsonl | sha256sum)
assert_errno "Operation not permitted" bash -c "echo hi > '$R/new.md'"
assert_errno "Operation not permitted" mkdir "$R/x"
assert_errno "Operation not permitted" ln -s ../0001-user.m1.md "$R/lbl"
assert_eq "the session files are byte-identical" "$before" "$(cat "$STORE"/*/*.jsonl | sha256sum)"

finish
