#!/usr/bin/env bash
# Two users on one mount (-o allow_other): whatever the mount derives from
# a session's content (the views' names and cwds, usage.csv, the log's
# lines, the rejected texts) reaches only a caller who may read that
# session file (docs/security.md "Who sees what").  The users are bare
# uids (setpriv), no account is made.
. "$(dirname "$0")/lib.sh" "$@"
command -v setpriv >/dev/null || die "setpriv (util-linux) is needed"

ALICE=52001
BOB=52002
# as UID CMD...: CMD as that user (no supplementary groups), under fsx.
as() {
	local uid=$1
	shift
	fsx_out setpriv --reuid="$uid" --regid="$uid" --clear-groups -- "$@"
}

mk() { # PROJECT STEM ID CWD NAME OWNER MODE
	local f=$STORE/$1/$2.jsonl
	mkdir -p "$STORE/$1"
	printf '{"type":"session","version":3,"id":"%s","timestamp":"2026-01-01T00:00:00.000Z","cwd":"%s"}\n' "$3" "$4" >"$f"
	printf '{"type":"model_change","id":"m1","parentId":null,"timestamp":"2026-01-01T00:00:00.500Z","provider":"p","modelId":"m"}\n' >>"$f"
	user_msg u1 m1 "text of $5" >>"$f"
	printf '{"type":"session_info","id":"n1","parentId":"u1","timestamp":"2026-01-01T00:00:02.000Z","name":"%s"}\n' "$5" >>"$f"
	chown "$6:$6" "$f"
	chmod "$7" "$f"
}
mk --home-alice-secret-- 2026-01-01T00-00-00-000Z_aaaa0001 aaaa0001-0000-7000-8000-000000000001 /home/alice/secret-plans "Alpha secret" $ALICE 600
mk --home-bob-work-- 2026-01-02T00-00-00-000Z_bbbb0002 bbbb0002-0000-7000-8000-000000000002 /home/bob/work "Bob work" $BOB 600
mk --srv-shared-- 2026-01-03T00-00-00-000Z_cccc0003 cccc0003-0000-7000-8000-000000000003 /srv/shared "Shared notes" $ALICE 644
chmod 755 "$STORE" "$STORE"/*
# The users must reach the mountpoint through the test's scratch folders.
let_others_reach "$MNT"
chmod 755 "$MNT"

mount_fs "$STORE" "$MNT" -o allow_other
A=$MNT/--home-alice-secret--/2026-01-01T00-00-00-000Z_aaaa0001

# --- the views -------------------------------------------------------------------
as $BOB ls "$MNT/by-name"
assert_eq "bob: by-name lists his and the readable sessions" $'Bob work\nShared notes' "${OUT%$'\n'}"
as $ALICE ls "$MNT/by-name"
assert_eq "alice: by-name lists hers and the shared one" $'Alpha secret\nShared notes' "${OUT%$'\n'}"
as $BOB ls "$MNT/by-id"
assert_eq "bob: by-id has no id of alice's private session" "" "$(grep aaaa <<<"$OUT" || true)"
as $BOB readlink "$MNT/by-id/aaaa0001-0000-7000-8000-000000000001"
assert_ne "bob: alice's id does not resolve in by-id" 0 "$RC"
as $BOB ls -R "$MNT/by-cwd"
assert_eq "bob: by-cwd shows no path of alice's private cwd" "" "$(grep -E 'alice|secret' <<<"$OUT" || true)"
assert_contains "bob: by-cwd shows his own cwd" "work" "$OUT"
as $ALICE ls "$MNT/by-cwd/home/alice/secret-plans"
assert_eq "alice: by-cwd shows her session" "2026-01-01T00-00-00-000Z_aaaa0001" "${OUT%$'\n'}"
as $BOB ls "$MNT/recent"
assert_eq "bob: recent lists two sessions" 2 "$(grep -c . <<<"$OUT")"
assert_eq "bob: recent has no alice-private session" "" "$(grep aaaa0001 <<<"$OUT" || true)"

# --- search: over the sessions the caller may read, never from another's result ---
as $ALICE ls "$MNT/search/text"
assert_contains "alice: search finds her session" "Alpha secret" "$OUT"
as $BOB ls "$MNT/search/text"
assert_eq "bob, right after: his result, not alice's" "" "$(grep -E 'Alpha|aaaa' <<<"$OUT" || true)"
assert_contains "bob: search finds his own" "Bob work" "$OUT"
as $BOB ls "$MNT/search/secret"
assert_eq "bob: alice's words find nothing" "" "$OUT"
as $BOB ls "$MNT/--home-alice-secret--/search/text"
assert_eq "bob: nothing in alice's project" "" "$OUT"

# --- usage.csv, the store's and a project's --------------------------------------
as $BOB cat "$MNT/usage.csv"
assert_eq "bob: usage.csv reads" 0 "$RC"
assert_eq "bob: usage.csv has no row of alice's private session" "" "$(grep -E 'Alpha|aaaa0001|secret' <<<"$OUT" || true)"
assert_contains "bob: usage.csv has his own row" "Bob work" "$OUT"
assert_eq "bob: header and two rows" 3 "$(grep -c . <<<"$OUT")"
as $BOB cat "$MNT/--home-alice-secret--/usage.csv"
assert_eq "bob: the project's usage.csv is just the header" 1 "$(grep -c . <<<"$OUT")"
as $ALICE cat "$MNT/usage.csv"
assert_contains "alice: usage.csv has her row" "Alpha secret" "$OUT"
assert_eq "alice: no row of bob's" "" "$(grep 'Bob work' <<<"$OUT" || true)"
fsx_out cat "$MNT/usage.csv"
assert_eq "root: every row" 4 "$(grep -c . <<<"$OUT")"
# Alternating callers never get each other's text from a cache.
for i in 1 2 3; do
	as $ALICE cat "$MNT/usage.csv"
	a=$OUT
	as $BOB cat "$MNT/usage.csv"
	assert_eq "round $i: bob never sees alice's row after her read" "" "$(grep Alpha <<<"$OUT" || true)"
	assert_contains "round $i: alice still sees hers after bob's read" "Alpha secret" "$a"
done

# --- sessions.md, the same rule ------------------------------------------------------
as $BOB cat "$MNT/sessions.md"
assert_eq "bob: sessions.md has no row of alice's private session" "" "$(grep -E 'Alpha|aaaa0001|secret' <<<"$OUT" || true)"
assert_contains "bob: sessions.md counts what he may read" "2 sessions" "$OUT"
as $ALICE cat "$MNT/sessions.md"
assert_contains "alice: sessions.md has her row" "Alpha secret" "$OUT"

# --- the session itself: the kernel checks the mirrored modes --------------------
as $BOB ls "$A"
assert_ne "bob: alice's private session directory is refused" 0 "$RC"
as $BOB cat "$A/context.json"
assert_ne "bob: alice's context.json is refused" 0 "$RC"

# --- a refused write: its text and its log line are the writer's -----------------
before=$(sha256sum <"$STORE/--home-alice-secret--/2026-01-01T00-00-00-000Z_aaaa0001.jsonl")
as $ALICE bash -c "echo 'secret token 7f3a' > '$A/0001-model_change.m1.md'"
assert_ne "alice: replacing a model change's text is refused" 0 "$RC"
assert_eq "the session file is byte-identical" "$before" \
	"$(sha256sum <"$STORE/--home-alice-secret--/2026-01-01T00-00-00-000Z_aaaa0001.jsonl")"
as $ALICE ls "$MNT/.pisessionfs/rejected"
kept=${OUT%$'\n'}
assert_contains "alice: her text is kept" "0001-model_change.m1.md" "$kept"
as $ALICE cat "$MNT/.pisessionfs/rejected/$kept"
assert_eq "alice: she reads her kept text" "secret token 7f3a" "${OUT%$'\n'}"
as $ALICE cat "$MNT/.pisessionfs/log"
assert_contains "alice: the log tells her why" "0001-model_change.m1.md" "$OUT"
as $BOB ls "$MNT/.pisessionfs/rejected"
assert_eq "bob: rejected/ lists nothing of alice's" "" "$OUT"
as $BOB cat "$MNT/.pisessionfs/rejected/$kept"
assert_ne "bob: alice's kept text is refused" 0 "$RC"
assert_eq "bob: and none of it shows" "" "$(grep -F 7f3a <<<"$OUT" || true)"
as $BOB cat "$MNT/.pisessionfs/log"
assert_eq "bob: the log has no line about alice's write" "" "$(grep -E 'aaaa0001|secret|model_change' <<<"$OUT" || true)"
fsx_out cat "$MNT/.pisessionfs/log"
assert_contains "root: the log has every line" "0001-model_change.m1.md" "$OUT"
as $BOB stat -c %a "$MNT/.pisessionfs/rejected/$kept"
assert_eq "the kept text is 0400" "400" "${OUT%$'\n'}"

# --- bob's own refusal is his ------------------------------------------------------
as $BOB bash -c "echo 'bob text' > '$MNT/--home-bob-work--/2026-01-02T00-00-00-000Z_bbbb0002/0001-model_change.m1.md'"
assert_ne "bob: his refused write fails" 0 "$RC"
as $BOB ls "$MNT/.pisessionfs/rejected"
assert_contains "bob: he sees his kept text" "0001-model_change.m1.md" "$OUT"
assert_eq "bob: one text listed" 1 "$(grep -c . <<<"$OUT")"
as $ALICE ls "$MNT/.pisessionfs/rejected"
assert_eq "alice: still only hers" 1 "$(grep -c . <<<"$OUT")"

finish
