#!/usr/bin/env bash
# Writes into version-1 and version-2 sessions migrate them to version 3
# on the first write, as pi does (and never on read); a file whose last line
# is partial gets its newline before the appended line.  Temporary files of
# migrations whose writer died go at start-up and before the next migration
# of their session; one whose writer lives (holds its lock) stays.
. "$(dirname "$0")/lib.sh" "$@"

P=$STORE/--w--
mkdir -p "$P"
cp "$(dirname "$0")/../data/fixtures/pi-v1-before-compaction.jsonl" "$P/v1.jsonl"
chmod 644 "$P/v1.jsonl"
{
	printf '{"type":"session","version":2,"id":"v2-session","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/w"}\n'
	user_msg a1 null "first"
	printf '{"type":"message","id":"h1","parentId":"a1","timestamp":"2026-01-01T00:00:02.000Z","message":{"role":"hookMessage","customType":"x","content":"hook","display":true,"timestamp":1}}\n'
} >"$P/v2.jsonl"
{
	header 3
	user_msg p1 null "before the crash"
	printf '{"type":"message","id":"p2","parentId":"p1","timest'
} >"$P/partial.jsonl"

# A killed migration's temporary file, and one whose writer is alive (it
# holds flock(2) on it, as the daemon does while it migrates).
dead_tmp=$P/v2.jsonl.pisessionfs-migrate-Dead01
live_tmp=$P/v2.jsonl.pisessionfs-migrate-Live01
cp "$P/v2.jsonl" "$dead_tmp"
cp "$P/v2.jsonl" "$live_tmp"
python3 -c 'import fcntl, sys, time
f = open(sys.argv[1])
fcntl.flock(f, fcntl.LOCK_EX)
time.sleep(60)' "$live_tmp" &
holder=$!
poll_until 5 sh -c '! flock -xn "$1" true' _ "$live_tmp" || fail "the holder did not take the lock on $live_tmp"

mount_fs "$STORE" "$MNT"
S1=$MNT/--w--/v1
S2=$MNT/--w--/v2
assert_true "start-up: the dead migration's temporary file is removed" test ! -e "$dead_tmp"
assert_true "start-up: the live one stays" test -e "$live_tmp"
assert_true "start-up: the removal is logged" grep -q "^pisessionfs: removed $dead_tmp, the temporary file of a migration" "${LOG_OF[$MNT]}"
kill "$holder" 2>/dev/null || true
wait "$holder" 2>/dev/null || true

# Reading changes nothing.
before=$(sha256sum <"$P/v1.jsonl")
fsx cat "$S1/context.json" "$S1"/*.md >/dev/null
names_before=$(fsx ls "$S1" | grep -c '\.md$')
assert_eq "v1: reading leaves the file as it was" "$before" "$(sha256sum <"$P/v1.jsonl")"
leaf_before=$(fsx readlink "$S1/leaf")

# The first write migrates, then appends.
fsx sh -c 'echo "after migration" > "$1/new.md"' _ "$S1"
assert_eq "v1: write succeeds" 0 $?
ver=$(head -n 1 "$P/v1.jsonl" | python3 -c 'import json,sys; print(json.load(sys.stdin).get("version"))')
assert_eq "v1: header is version 3 after the first write" 3 "$ver"
bad=$(python3 - "$P/v1.jsonl" <<'PY'
import json, sys
lines = open(sys.argv[1], encoding="utf-8").read().split("\n")
assert lines[-1] == ""
bad = 0
ids = set()
for l in lines[1:-1]:
    e = json.loads(l)
    if not isinstance(e.get("id"), str) or len(e["id"]) != 8 or "parentId" not in e:
        bad += 1
    if "firstKeptEntryIndex" in e:
        bad += 1
    ids.add(e["id"])
print(bad)
PY
)
assert_eq "v1: every migrated entry has an 8-hex id and a parentId, no firstKeptEntryIndex" 0 "$bad"
last=$(tail -n 1 "$P/v1.jsonl" | python3 -c 'import json,sys; e=json.load(sys.stdin); print(e["message"]["content"], e["parentId"])')
leaf_id=${leaf_before%.md}
leaf_id=${leaf_id##*.}
assert_eq "v1: the new message hangs under the old leaf" "after migration $leaf_id" "$last"
# Paths shown before the migration still name the same entries.
names_after=$(fsx ls "$S1" | grep -c '\.md$')
assert_eq "v1: the entry files stay (one more for the new message)" "$((names_before + 1))" "$names_after"
assert_exists "$S1/$leaf_before"
tmpfiles=$(find "$P" -name 'v1.jsonl.pisessionfs-*' | wc -l)
assert_eq "v1: no temporary file left beside the session" 0 "$tmpfiles"

# Version 2: hookMessage becomes custom in the rewritten file.
fsx sh -c 'echo "v2 write" > "$1/n.md"' _ "$S2"
role=$(sed -n 3p "$P/v2.jsonl" | python3 -c 'import json,sys; print(json.load(sys.stdin)["message"]["role"])')
assert_eq "v2: hookMessage migrated to custom" custom "$role"
ver=$(head -n 1 "$P/v2.jsonl" | python3 -c 'import json,sys; print(json.load(sys.stdin)["version"])')
assert_eq "v2: header is version 3" 3 "$ver"
assert_eq "v2: ids kept" "a1 h1" "$(sed -n '2,3p' "$P/v2.jsonl" | python3 -c 'import json,sys; print(" ".join(json.loads(l)["id"] for l in sys.stdin))')"
assert_true "v2: the temporary file whose writer died meanwhile went before the migration" test ! -e "$live_tmp"
tmpfiles=$(find "$P" -name '*pisessionfs-*' | wc -l)
assert_eq "v2: no temporary file or record left beside the session" 0 "$tmpfiles"

# A partial last line gets its newline first: both lines survive.
fsx sh -c 'echo "after the crash" > "$1/x.md"' _ "$MNT/--w--/partial"
assert_eq "partial: the partial line is kept as it was, now terminated" \
	'{"type":"message","id":"p2","parentId":"p1","timest' "$(sed -n 3p "$P/partial.jsonl")"
new=$(sed -n 4p "$P/partial.jsonl" | python3 -c 'import json,sys; e=json.load(sys.stdin); print(e["message"]["content"], e["parentId"])')
assert_eq "partial: the new entry is a whole line of its own, under the last whole entry" "after the crash p1" "$new"
assert_eq "partial: the file ends with a newline" "" "$(tail -c 1 "$P/partial.jsonl")"

finish
