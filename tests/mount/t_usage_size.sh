#!/usr/bin/env bash
# The size of usage.csv: st_size is the length of what a read returns, for
# the store's and a project's usage.csv, also after a session grows, a
# session is added and one is removed; and a stat does not build the file
# when nothing changed since it was last built (it does not open a session
# file: with a session cache smaller than the project, building would
# reopen them), nor does a build after the first, but for the sessions that
# changed (their rows are kept by the files' stamps).
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh" "$@"

P=$STORE/--w--
mkdir -p "$P"
# asst_cost ID PARENT INPUT COST: an assistant message of INPUT input
# tokens that cost COST.
asst_cost() {
	printf '{"type":"message","id":"%s","parentId":"%s","timestamp":"2026-01-01T00:00:02.000Z","message":{"role":"assistant","content":[{"type":"text","text":"answer"}],"api":"x","provider":"p","model":"m","usage":{"input":%s,"output":4,"cacheRead":0,"cacheWrite":0,"totalTokens":7,"cost":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"total":%s}},"stopReason":"stop","timestamp":2}}\n' \
		"$1" "$2" "$3" "$4"
}
for i in 1 2 3; do
	{ header 3 "1111111$i-2222-3333-4444-555555555555"; user_msg u1 null "question $i"; asst_cost a1 u1 3 0.5; } >"$P/s$i.jsonl"
done
{ header 3 "99999999-2222-3333-4444-555555555555"; user_msg u1 null "at the root"; } >"$STORE/flat.jsonl"

# timeout=0: every stat reaches the daemon.  cache_sessions=1: a build of
# a project's usage.csv indexes its sessions anew, opening their files.
mount_fs "$STORE" "$MNT" -o timeout=0 -o cache_sessions=1
CSVS=("$MNT/usage.csv" "$MNT/--w--/usage.csv")

sizes_match() {
	local f
	for f in "${CSVS[@]}"; do
		assert_size "$f"
	done
}
sizes_match
assert_contains "the project's usage.csv has the sessions" "--w--,s3," "$(fsx cat "$MNT/--w--/usage.csv")"

# opens_during CMD: how many times the daemon opened or read a session file
# of the project (inotify on the store) while CMD ran.  The events are
# queued before the daemon's open() returns, so before CMD's stat does.
opens_during() {
	fsx python3 - "$P" "$1" <<'EOF'
import ctypes, os, struct, subprocess, sys
IN_ACCESS, IN_OPEN = 0x1, 0x20
libc = ctypes.CDLL(None, use_errno=True)
fd = libc.inotify_init1(os.O_NONBLOCK | os.O_CLOEXEC)
if fd < 0 or libc.inotify_add_watch(fd, os.fsencode(sys.argv[1]), IN_ACCESS | IN_OPEN) < 0:
    sys.exit("inotify: " + os.strerror(ctypes.get_errno()))
if subprocess.run(["bash", "-c", sys.argv[2]]).returncode != 0:
    sys.exit("the command failed: " + sys.argv[2])
n = 0
while True:
    try:
        buf = os.read(fd, 65536)
    except BlockingIOError:
        break
    off = 0
    while off + 16 <= len(buf):
        wd, mask, cookie, size = struct.unpack_from("iIII", buf, off)
        name = buf[off + 16:off + 16 + size].rstrip(b"\0")
        off += 16 + size
        n += name.endswith(b".jsonl")
print(n)
EOF
}
stats="for k in 1 2 3 4 5; do stat -c %s '${CSVS[0]}' '${CSVS[1]}' >/dev/null || exit 1; done"
# Each session's row is kept by its file's stamp: a build reads only the
# sessions that changed.  touch opens the file itself, so before counting.
touch "$P/s1.jsonl"
assert_eq "the opens counted are the daemon's (a cat of usage.csv reads the session that changed)" yes \
	"$(n=$(opens_during "cat '${CSVS[1]}' >/dev/null"); ((n > 0)) && echo yes || echo "no ($n)")"
assert_eq "a cat of an unchanged usage.csv opens no session file (the rows are kept)" 0 \
	"$(opens_during "cat '${CSVS[0]}' '${CSVS[1]}' >/dev/null")"
assert_eq "a stat of an unchanged usage.csv opens no session file" 0 "$(opens_during "$stats")"

# A session grows: the sizes follow (3 messages, 3 + 30 input tokens: the
# row gets longer).
before=$(fsx stat -c %s "${CSVS[1]}")
asst_cost a2 a1 30 0.25 >>"$P/s2.jsonl"
assert_poll "the project's usage.csv shows the new message" 5 grep -q -- "--w--,s2,.*,3,33,8,0,0," "${CSVS[1]}"
assert_ne "the project's usage.csv got longer" "$before" "$(fsx stat -c %s "${CSVS[1]}")"
sizes_match
assert_eq "and, unchanged again, a stat opens no session file" 0 "$(opens_during "$stats")"
sizes_match

# A session added, one removed.
{ header 3 "44444444-2222-3333-4444-555555555555"; user_msg u1 null "new"; } >"$P/s4.jsonl"
assert_poll "the new session has its row" 5 grep -q -- "--w--,s4," "${CSVS[0]}"
sizes_match
rm "$P/s1.jsonl"
assert_poll "the removed session lost its row" 5 bash -c "! grep -q -- '--w--,s1,' '${CSVS[0]}'"
sizes_match
umount_fs "$MNT"

finish
