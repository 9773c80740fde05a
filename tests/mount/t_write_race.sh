#!/usr/bin/env bash
# Reads, writes, fsyncs and closes of one file at once, from several
# threads, on a new name, on an entry file and on session.jsonl (issue 19,
# bug 3: psfs_read took the overlay lock then the handle's, the commit the
# handle's then the overlay's, and a read racing an fsync of a new .md
# hung the whole mount within a second).  Run under TSan by CI
# (make check-mount SANITIZE=thread), where a lock taken in both orders
# fails the test even when no hang happens; the sanitized builds also
# assert the lock order (fs/lockorder.h).  Every call must return within
# fsx's bound, and the session file must end as whole JSON lines.
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh" "$@"

PY=$(python3 -c 'import sys; print(sys.executable)')
PROJ=--home-u-w--
mkdir -p "$STORE/$PROJ"
F=$STORE/$PROJ/s1.jsonl
{
	header
	user_msg aaaa0001 null "alpha one"
	asst_msg aaaa0002 aaaa0001 "reply one"
} >"$F"
S=$MNT/$PROJ/s1
mount_fs "$STORE" "$MNT"

SECONDS_EACH=$(scaled 2)
race() { # race PATH MODE: the threads on one descriptor, then a close race
	fsx_out "$PY" - "$1" "$2" "$SECONDS_EACH" <<'PY'
import json, os, sys, threading, time
path, mode, secs = sys.argv[1], sys.argv[2], float(sys.argv[3])
flags = os.O_RDWR | (os.O_CREAT if mode == "new" else 0) | (os.O_APPEND if mode == "raw" else 0)
fd = os.open(path, flags, 0o644)
stop = time.monotonic() + secs
counts = {"read": 0, "write": 0, "fsync": 0}
errors = []
n = [0]
def text():
    n[0] += 1
    if mode == "raw":
        return (json.dumps({"type": "custom", "id": "r%07d" % n[0], "parentId": "aaaa0002",
                            "timestamp": "2026-01-01T00:00:09.000Z", "customType": "k", "data": {}}) + "\n").encode()
    return b"x%d " % n[0]
def loop(what):
    while time.monotonic() < stop:
        try:
            if what == "read":
                os.pread(fd, 4096, 0)
            elif what == "write":
                os.write(fd, text())
            else:
                os.fsync(fd)
            counts[what] += 1
        except OSError as e:
            errors.append("%s: %s" % (what, e))
            return
ts = [threading.Thread(target=loop, args=(w,)) for w in ("read", "read", "write", "fsync")]
[t.start() for t in ts]
[t.join() for t in ts]
# Then dup()ed descriptors closed at once from several threads.
dups = [os.dup(fd) for _ in range(4)]
os.write(fd, text())
go = threading.Barrier(len(dups) + 1)
def close(d):
    go.wait()
    os.close(d)
cs = [threading.Thread(target=close, args=(d,)) for d in dups]
[t.start() for t in cs]
go.wait()
os.fsync(fd)
[t.join() for t in cs]
os.close(fd)
print("errors:", errors[:3])
print("counts:", counts["write"] > 0 and counts["fsync"] > 0 and counts["read"] > 0)
PY
	assert_eq "$2: every call returned, without error" "0 errors: []"$'\n'"counts: True"$'\n' "$RC $OUT"
	assert_true "$2: the mount still answers" ls "$MNT/$PROJ"
}
race "$S/new.md" new
race "$S/0002-assistant.aaaa0002.md" entry
race "$S/session.jsonl" raw
sleep "$(scaled 1)"
fsx_out "$PY" -c 'import json, sys
for i, l in enumerate(open(sys.argv[1]).read().split("\n")[:-1]):
    json.loads(l)
print("whole")' "$F"
assert_eq "the session file is whole JSON lines" "whole"$'\n' "$OUT"
finish
