#!/usr/bin/env bash
# Start-up repair (docs/layout.md "Crashes") happens only once the mount
# will go ahead: a daemon started with a bad option, a bad mountpoint or
# none leaves every file of a store that needs repair byte-identical, and a
# daemon that then mounts the same store repairs it.
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh" "$@"

HERE=$(cd "$(dirname "$0")" && pwd)
P=$STORE/--proj--
mkdir -p "$P"
{ header; user_msg a null "before the crash"; } >"$P/s.jsonl"
base_size=$(stat -c %s "$P/s.jsonl")

# What a daemon killed in the middle of appending a 9,000-byte entry leaves:
# 5,000 bytes of it, unterminated, and the record of the append; and the
# temporary file of a migration whose daemon was killed.
python3 - "$T_DIR/line" <<'EOF'
import sys
head = ('{"type":"message","id":"b1","parentId":"a","timestamp":"2026-01-01T00:00:02.000Z",'
        '"message":{"role":"user","content":"')
body = "".join(chr(97 + i % 26) for i in range(9000 - len(head) - 4))
with open(sys.argv[1], "w") as f:
    f.write(head + body + '"}}\n')
EOF
record=$(python3 "$HERE/dead_append.py" "$P/s.jsonl" "$T_DIR/line" 5000)
printf 'half a migration\n' >"$P/s.jsonl.pisessionfs-migrate-Ab12Cd"
assert_eq "the crashed append is in the file" $((base_size + 5000)) "$(stat -c %s "$P/s.jsonl")"

# snapshot: every file of the store with its bytes, size and time.
snapshot() {
	(cd "$STORE" && find . -printf '%p %y %s %T@\n' | sort && find . -type f -print0 | sort -z | xargs -0 sha256sum)
}
before=$(snapshot)

# refused WHAT ARGS...: the daemon gives up with one line on stderr, mounts
# nothing and leaves the store as it was.
refused() {
	local what=$1
	shift
	fsx_out "$DAEMON" "$@"
	if ((RC != 0 && RC != 137)); then pass; else fail "$what: exit status $RC, expected a failure"; fi
	assert_eq "$what: one line on stderr" 1 "$(grep -c . <<<"$ERR")"
	if is_mounted "$MNT"; then
		fail "$what: $MNT got mounted"
		fusermount3 -uz "$MNT" 2>/dev/null || true
	else
		pass
	fi
	local now
	now=$(snapshot)
	if [[ $now == "$before" ]]; then
		pass
	else
		fail "$what: the store changed: $(diff <(echo "$before") <(echo "$now") | head -10)"
		before=$now
	fi
}

refused "-o timeout=-1" --store "$STORE" -f -o timeout=-1 "$MNT"
refused "-o timeout=100000" --store "$STORE" -f -o timeout=100000 "$MNT"
refused "-o timeout=soon" --store "$STORE" -f -o timeout=soon "$MNT"
refused "-o entry_cache=5000" --store "$STORE" -f -o entry_cache=5000 "$MNT"
refused "-o context_cache=-7" --store "$STORE" -f -o context_cache=-7 "$MNT"
refused "-o rejected_kept=0" --store "$STORE" -f -o rejected_kept=0 "$MNT"
refused "an unknown -o option" --store "$STORE" -f -o no_such_option "$MNT"
refused "an unknown flag" --store "$STORE" -f --no-such-flag "$MNT"
refused "no mountpoint" --store "$STORE" -f
refused "a missing mountpoint" --store "$STORE" -f "$T_DIR/no-such-dir"
mkdir -p "$T_DIR/full"
: >"$T_DIR/full/something"
before=$(snapshot)
refused "a non-empty mountpoint" --store "$STORE" -f "$T_DIR/full"
refused "a mountpoint that is a file" --store "$STORE" -f "$T_DIR/line"
refused "three arguments" -f "$STORE" "$MNT" "$T_DIR/extra"

# The same store mounted for real: repaired before anything is served.
mount_fs "$STORE" "$MNT"
assert_true "the mount serves the session" test -f "$MNT/--proj--/s/0001-user.a.md"
assert_eq "the crashed append is taken back" "$base_size" "$(stat -c %s "$P/s.jsonl")"
assert_missing "$record"
assert_missing "$P/s.jsonl.pisessionfs-migrate-Ab12Cd"
log=$(fsx cat "$MNT/.pisessionfs/log")
assert_contains "the log tells the repair" "repaired $P/s.jsonl: took back its last 5000 bytes" "$log"
assert_contains "the log tells the removed temporary file" "removed $P/s.jsonl.pisessionfs-migrate-Ab12Cd" "$log"
umount_fs "$MNT"

finish
