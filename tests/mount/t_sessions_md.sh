#!/usr/bin/env bash
# sessions.md at the root and in every project folder: the folder's
# sessions as one Markdown table, last active first, with title, start,
# last activity, messages, branches, cost and a link that resolves
# (docs/layout.md "Files").
. "$(dirname "$0")/lib.sh" "$@"

here=$(cd "$(dirname "$0")" && pwd)
cp -r "$here/../../docs/examples/store/." "$STORE/"
P=--home-user-demo-project--
mkdir -p "$STORE/--w-odd--"
{
	printf '{"type":"session","version":3,"id":"0190aaaa-0000-7000-8000-00000000beef","timestamp":"2027-01-01T00:00:00.000Z","cwd":"/w/odd"}\n'
	# Active in 2027: the newest of the store.
	user_msg u1 null "a | pipe and a \\\\ backslash" | sed 's/"timestamp":1767225601000/"timestamp":1798761601000/'
} >"$STORE/--w-odd--/2027-01-01T00-00-00-000Z_odd one.jsonl"
mkdir -p "$STORE/--w-empty--"
mount_fs "$STORE" "$MNT"

fsx_out cat "$MNT/sessions.md"
md=$OUT
assert_eq "the root's sessions.md reads" 0 "$RC"
assert_contains "a heading and the count" $'# Sessions\n\n4 sessions, last active first (times in UTC).' "$md"
assert_contains "the table's header" "| Title | Started | Last active | Messages | Branches | Cost | Directory |" "$md"
rows=$(grep '^| [^-T]' <<<"$md" | grep -v '^| Title')
assert_eq "one row per session" 4 "$(grep -c . <<<"$rows")"
assert_eq "last active first: the newest session leads" "a \\| pipe and a \\\\ backslash" \
	"$(head -1 <<<"$rows" | sed 's/ | 2027-01-01 00:00 | 2027-01-01 00:00 | .*//; s/^| //')"
assert_contains "the demo session's row" \
	"| List files demo | 2026-11-29 19:11 | 2026-11-29 19:11 | 9 | 2 | \$0.00 | [2026-11-29T19-11-30-970Z_01a228b8-3699-77d4-8ab4-6586c2fad309]($P/2026-11-29T19-11-30-970Z_01a228b8-3699-77d4-8ab4-6586c2fad309/) |" "$md"
assert_contains "the cost is rounded to cents" "| 990 | 1 | \$42.60 |" "$md"
assert_contains "a name with a space is one link" "(--w-odd--/2027-01-01T00-00-00-000Z_odd%20one/)" "$md"

# Every link resolves from the file's own folder.
check_links() { # FILE DIR
	local target bad=0 n=0
	while IFS= read -r target; do
		n=$((n + 1))
		target=$(python3 -c 'import sys, urllib.parse; print(urllib.parse.unquote(sys.argv[1]))' "$target")
		fsx test -d "$2/$target" || bad=$((bad + 1))
	done < <(fsx cat "$1" | grep -o '](\([^)]*\)/)' | sed 's/^](//; s/)$//')
	assert_eq "every link of ${1#"$MNT"/} resolves ($n links)" 0 "$bad"
	((n > 0)) || fail "${1#"$MNT"/} has no link"
}
check_links "$MNT/sessions.md" "$MNT"
check_links "$MNT/$P/sessions.md" "$MNT/$P"
assert_eq "a project's file lists its own sessions" 1 "$(fsx cat "$MNT/$P/sessions.md" | grep -c '^| List files demo')"
assert_eq "and no other" "1 session" "$(fsx cat "$MNT/$P/sessions.md" | grep -o '^[0-9]* sessions\?')"

assert_contains "a folder without sessions: none" "0 sessions, last active first" "$(fsx cat "$MNT/--w-empty--/sessions.md")"
assert_eq "and an empty search there" "" "$(fsx ls "$MNT/--w-empty--/search/anything")"

# Its size is what a read returns, and follows the sessions.
assert_eq "st_size equals the bytes read" "$(fsx cat "$MNT/sessions.md" | wc -c)" "$(fsx stat -c %s "$MNT/sessions.md")"
asst_msg a9 u1 "an answer about the pipe" >>"$STORE/--w-odd--/2027-01-01T00-00-00-000Z_odd one.jsonl"
assert_poll "an append shows in the row" 3 bash -c 'grep -q "^| a \\\\| pipe.* | 2 | 1 | \$0.00 |" "$1"' _ "$MNT/sessions.md"
assert_eq "st_size follows" "$(fsx cat "$MNT/sessions.md" | wc -c)" "$(fsx stat -c %s "$MNT/sessions.md")"
# A stat builds the text that the open right after reads (cat does both),
# unless a session changed between the two: then the open builds anew.
fsx stat -c %s "$MNT/sessions.md" >/dev/null
asst_msg a10 a9 "a second answer" >>"$STORE/--w-odd--/2027-01-01T00-00-00-000Z_odd one.jsonl"
assert_poll "an append between a stat and an open shows" 3 \
	bash -c 'grep -q "^| a \\\\| pipe.* | 3 | 1 | \$0.00 |" "$1"' _ "$MNT/sessions.md"
assert_eq "st_size follows it" "$(fsx cat "$MNT/sessions.md" | wc -c)" "$(fsx stat -c %s "$MNT/sessions.md")"
assert_errno "Permission denied" bash -c "echo x > '$MNT/sessions.md'"

finish
