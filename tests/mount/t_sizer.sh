#!/usr/bin/env bash
# The first stat-everything listing of a session (`find -printf %s`, as
# `ls -l` does) is served partly by the sizer threads, which render entry
# files ahead of the lookups (fs/sizer.c): every size a stat reports must
# be the length of what a read returns, also when the session grows and is
# rewritten in place while the sizers work.
. "$(dirname "$0")/lib.sh" "$@"

PY=$(python3 -c 'import sys; print(sys.executable)')
P=--sizer--
mkdir -p "$STORE/$P"
F=$STORE/$P/s.jsonl
# 3,000 entries of varied length, a fork every 250 entries.
"$PY" - "$F" <<'EOF'
import json, sys
out = open(sys.argv[1], "w")
out.write(json.dumps({"type": "session", "version": 3, "id": "sizer-1",
                      "timestamp": "2026-01-01T00:00:00.000Z", "cwd": "/w"}) + "\n")
prev = None
for i in range(3000):
    parent = prev
    if i % 250 == 249:
        parent = "e%d" % (i - 10)  # a second child: a fork
    role = "user" if i % 2 == 0 else "assistant"
    text = ("entry %d " % i) + "x\u00e9\"\\n" * ((i * 37) % 400)
    msg = {"role": role, "content": text, "timestamp": 1767225601000 + i}
    if role == "assistant":
        msg = {"role": role, "content": [{"type": "text", "text": text}], "api": "x", "provider": "p",
               "model": "m", "usage": {"input": i, "output": 1, "cacheRead": 0, "cacheWrite": 0,
               "totalTokens": i + 1, "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0,
               "total": 0.001 * i}}, "stopReason": "stop", "timestamp": 1767225601000 + i}
    out.write(json.dumps({"type": "message", "id": "e%d" % i, "parentId": parent,
                          "timestamp": "2026-01-01T00:00:01.000Z", "message": msg}) + "\n")
    if i % 250 != 249:
        prev = "e%d" % i
EOF

# check_sizes DIR WHAT: every entry file's st_size (one find, as ls -l
# asks) equals the bytes a read returns.
check_sizes() {
	fsx_out "$PY" - "$1" <<'EOF'
import os, sys
bad, n = [], 0
for root, dirs, files in os.walk(sys.argv[1]):
    dirs[:] = [d for d in dirs if d != "entries"]
    for f in files:
        if not (f[:1].isdigit() and f.endswith(".md")):
            continue
        p = os.path.join(root, f)
        size = os.lstat(p).st_size
        with open(p, "rb") as fh:
            got = len(fh.read())
        n += 1
        if size != got:
            bad.append("%s: st_size %d, read %d" % (p, size, got))
print(n)
for b in bad[:5]:
    print(b)
sys.exit(1 if bad else 0)
EOF
	if ((RC == 0)); then
		pass
	else
		fail "$2: $OUT$ERR"
	fi
}

mount_fs "$STORE" "$MNT"
S=$MNT/$P/s
fsx ls "$S" >/dev/null
# The listing first (what a user's ls -l does: sizes before any read).
fsx_out find "$S" -path "$S/entries" -prune -o -name '[0-9]*.md' -printf '%s %p\n'
assert_eq "find -printf %s lists every entry file" 3000 "$(grep -c . <<<"$OUT")"
first=$OUT
check_sizes "$S" "first listing"
fsx_out find "$S" -path "$S/entries" -prune -o -name '[0-9]*.md' -printf '%s %p\n'
assert_eq "a second listing reports the same sizes" "$first" "$OUT"

# Remount (nothing sized), then grow the file and rewrite it in place while
# the first listing runs: the sizers' batches of the old text must not land.
umount_fs "$MNT"
mount_fs "$STORE" "$MNT"
fsx ls "$S" >/dev/null
fsx find "$S" -path "$S/entries" -prune -o -name '[0-9]*.md' -printf '%s %p\n' >/dev/null &
lister=$!
for i in 1 2 3; do
	asst_msg "late$i" e2999 "appended while sizing $i" >>"$F"
done
# Same names, other text: every entry's line gets longer.
sed -i 's/"entry \([0-9]*\) /"entry \1 rewritten /' "$F"
wait "$lister" || true
assert_poll "the rewrite is indexed" 5 grep -q "rewritten" "$S/0001-user.e0.md"
check_sizes "$S" "after growth and a rewrite during sizing"
finish
