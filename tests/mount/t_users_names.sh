#!/usr/bin/env bash
# Who sees what, for every name that resolves (docs/security.md): a
# session's typed name resolves under its project only for a caller who
# may read the session file (else `stat PROJECT/'Typed Name'` would tell
# anyone the names by-name/ hides), and a kept search result is kept for
# the caller's uid, gid and supplementary groups, never shown to a caller
# with other groups.  Bare uids and gids (setpriv), no account is made.
. "$(dirname "$0")/lib.sh" "$@"
command -v setpriv >/dev/null || die "setpriv (util-linux) is needed"

ALICE=52001
BOB=52002
TEAM=52100
as() { # as UID GROUPS CMD...: CMD as that user with those supplementary groups ("" none)
	local uid=$1 groups=$2
	shift 2
	if [[ -n $groups ]]; then
		fsx_out setpriv --reuid="$uid" --regid="$uid" --groups="$groups" -- "$@"
	else
		fsx_out setpriv --reuid="$uid" --regid="$uid" --clear-groups -- "$@"
	fi
}
mk() { # PROJECT STEM ID NAME OWNER GROUP MODE
	local f=$STORE/$1/$2.jsonl
	mkdir -p "$STORE/$1"
	{ header 3 "$3"; user_msg u1 null "text of $4"; } >"$f"
	printf '{"type":"session_info","id":"n1","parentId":"u1","timestamp":"2026-01-01T00:00:02.000Z","name":"%s"}\n' "$4" >>"$f"
	chown "$5:$6" "$f"
	chmod "$7" "$f"
}
mk --w-- 2026-01-01T00-00-00-000Z_aaaa0001 aaaa0001-0000-7000-8000-000000000001 "Alpha secret" $ALICE $ALICE 600
mk --w-- 2026-01-02T00-00-00-000Z_tttt0002 tttt0002-0000-7000-8000-000000000002 "Team plan" $BOB $TEAM 640
chmod 755 "$STORE" "$STORE"/*
let_others_reach "$MNT"
chmod 755 "$MNT"
mount_fs "$STORE" "$MNT" -o allow_other

# Bob first: the kernel keeps a name it was given for the entry timeout,
# for every user (docs/security.md).
as $BOB "" stat "$MNT/--w--/Alpha secret"
assert_ne "bob: alice's private session's typed name does not resolve" 0 "$RC"
assert_contains "bob: ENOENT, as for a name nobody has" "No such file or directory" "$ERR"
as $BOB "" ls "$MNT/--w--/Alpha secret/"
assert_ne "bob: nor does a path through it" 0 "$RC"
as $ALICE "" stat "$MNT/--w--/Alpha secret"
assert_eq "alice: her session's typed name resolves" "0 " "$RC $ERR"

# Search results, kept a second, are keyed on the supplementary groups too.
as $ALICE $TEAM ls "$MNT/search/text"
assert_contains "alice in the team: search finds the team's session" "Team plan" "$OUT"
as $ALICE "" ls "$MNT/search/text"
assert_eq "alice out of the team, at once after: not the team's session" "" "$(grep 'Team plan' <<<"$OUT" || true)"
as $ALICE "" ls "$MNT/search/text/01-Team plan~tttt0002"
assert_ne "alice out of the team: the kept result's entry does not resolve" 0 "$RC"
finish
