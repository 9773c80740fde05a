#!/usr/bin/env bash
# Disk full and read-only stores.
#
# The store is a 1 MiB tmpfs.  Once it is full, every kind of write through
# the mount (a new .md, a raw line appended to session.jsonl, a name, an
# edited entry, a file in a pending branch made with mkdir, the first write
# to a version-2 session, which needs a migrated copy) must fail at close()
# with ENOSPC (at fsync() when the writer calls it), leave the session file
# byte-identical (no partial line: the texts are bigger than the slack in
# the file's last page, so the kernel writes part of them before it runs
# out), keep the text in MOUNT/.pisessionfs/rejected/, and say why in the
# log.  After space is freed, the same writes succeed, each entry once.  An
# fsync() that failed with ENOSPC and is retried after space was freed must
# not report success for text that never reached the file; neither may a
# close() after a refused line and a valid one on the same descriptor.
#
# Then the tmpfs is remounted read-only (the daemon keeps running), and a
# read-only bind mount of it is mounted anew: every write fails with EROFS
# (or EACCES), nothing in the store changes, and the mount still reads fine.
#
#   t_diskfull.sh DAEMON [--quick]     (the same in both modes)
# shellcheck disable=SC2016,SC2317 # bash -c '...$1' on purpose; functions run by traps
# shellcheck source=common.sh
. "$(dirname "$0")/common.sh" "$@"

need_pi
RO=$T_DIR/ro
MNT2=$T_DIR/mnt2
mkdir -p "$RO" "$MNT2"
after_unmount() {
	if awk -v mp="$RO" '$5 == mp { f = 1 } END { exit !f }' /proc/self/mountinfo; then
		timeout -s KILL 10 umount "$RO" || timeout -s KILL 10 umount -l "$RO" || true
	fi
	if awk -v mp="$STORE" '$5 == mp { f = 1 } END { exit !f }' /proc/self/mountinfo; then
		timeout -s KILL 10 umount "$STORE" || timeout -s KILL 10 umount -l "$STORE" || true
	fi
}
mount -t tmpfs -o size=1m,mode=0755 tmpfs "$STORE" || die "cannot mount a tmpfs (root is needed)"

mkdir -p "$STORE/--d--"
SF=$STORE/--d--/s.jsonl
MF=$STORE/--d--/m.jsonl
{
	header 3 dddddddd-0000-0000-0000-000000000001
	user_msg a1 null "hello"
	asst_msg a2 a1 "hi"
	user_msg a3 a2 "main line"
} >"$SF"
python3 - "$MF" <<'EOF'
import json, sys
with open(sys.argv[1], "w") as f:
    f.write(json.dumps({"type": "session", "version": 2, "id": "dddddddd-0000-0000-0000-000000000002",
                        "timestamp": "2026-01-01T00:00:00.000Z", "cwd": "/w"}) + "\n")
    p = None
    for i in range(150):
        f.write(json.dumps({"type": "message", "id": "m%03d" % i, "parentId": p, "timestamp": "2026-01-01T00:00:01.000Z",
                            "message": {"role": "user", "content": "old %d %s" % (i, "z" * 300), "timestamp": 1}}) + "\n")
        p = "m%03d" % i
EOF
MF_ORIG=$T_DIR/m.orig
cp "$MF" "$MF_ORIG"

mount_fs "$STORE" "$MNT"
S=$MNT/--d--/s
M=$MNT/--d--/m
JLOG=$MNT/.pisessionfs/log
REJ=$MNT/.pisessionfs/rejected

# Texts bigger than any slack in a page.
D=$T_DIR/data
mkdir -p "$D"
python3 - "$D" <<'EOF'
import json, os, sys
d = sys.argv[1]
big = lambda tag: " ".join("%s-%05d" % (tag, i) for i in range(4000))  # ~44 KB
open(os.path.join(d, "md"), "w").write(big("newmd") + "\n")
open(os.path.join(d, "branch"), "w").write(big("branchmd") + "\n")
open(os.path.join(d, "name"), "w").write(big("name") + "\n")
open(os.path.join(d, "small"), "w").write("first write to a version-2 session\n")
line = {"type": "message", "id": "rawbig", "parentId": "a3", "timestamp": "2026-01-01T00:00:05.000Z",
        "message": {"role": "user", "content": big("raw"), "timestamp": 1}}
open(os.path.join(d, "raw"), "w").write(json.dumps(line) + "\n")
line2 = dict(line, id="rawsync", message=dict(line["message"], content=big("rawsync")))
open(os.path.join(d, "rawsync"), "w").write(json.dumps(line2) + "\n")
EOF
# An edit of 0003-user.a3.md: its front matter and a big new body.
fsx cat "$S/0003-user.a3.md" | awk 'n < 2 { print } /^---$/ { n++ }' >"$D/edit"
python3 -c 'import sys; print(" ".join("edited-%05d" % i for i in range(4000)))' >>"$D/edit"

# fsop MODE PATH DATAFILE [--fsync]: sets R to fsop.py's one-line result.
fsop() {
	R=$(timeout -s KILL "$TIMEOUT" python3 "$STRESS_DIR/fsop.py" "$@" 2>&1) || R="fsop status $?: $R"
}

# store_sum: a digest of every file in the store (names, modes, bytes).
store_sum() {
	(cd "$STORE" && find . -path ./.filler -prune -o -printf '%p %m %s\n' | sort && find . -path ./.filler -prune -o -type f -print0 | sort -z | xargs -0 cat) | sha256sum
}

# rejected_has DATAFILE: MOUNT/.pisessionfs/rejected/ holds a file with
# exactly these bytes.
rejected_has() {
	local f
	while IFS= read -r f; do
		if timeout -s KILL "$TIMEOUT" cmp -s "$REJ/$f" "$1"; then
			return 0
		fi
	done < <(fsx ls "$REJ")
	return 1
}

# refused_case WHAT ERRNO LOGWORDS MODE PATH DATAFILE [--fsync]: the write must
# fail with ERRNO at close() (or fsync()), leave the store unchanged, keep
# the text in rejected/ and log "refused" with LOGWORDS.
refused_case() {
	local what=$1 want=$2 words=$3 stage=close
	shift 3
	[[ ${4:-} == --fsync ]] && stage=fsync
	local before after
	before=$(store_sum)
	fsop "$@"
	after=$(store_sum)
	if [[ $R == "$stage $want "* ]]; then
		pass "$what: $stage() fails with $want"
	elif [[ $want == EROFS && $R == "$stage EACCES "* ]]; then
		pass "$what: $stage() fails with EACCES"
	else
		fail "$what: expected $stage() to fail with $want, got: $R"
	fi
	if [[ $before == "$after" ]]; then
		pass "$what: the store is byte-identical"
	else
		fail "$what: the store changed: $(tail -c 300 "$SF" | tr '\n' '|')"
	fi
	if rejected_has "$3"; then
		pass "$what: the text is kept in .pisessionfs/rejected/"
	else
		fail "$what: no file in .pisessionfs/rejected/ holds the text ($(fsx ls "$REJ" | tr '\n' ' '))"
	fi
	# The log names the file by its real path, $2 itself.
	if timeout -s KILL "$TIMEOUT" grep -F "refused $2" "$JLOG" | grep -qF "$words"; then
		pass "$what: the log says why ($(timeout -s KILL "$TIMEOUT" grep -F "refused $2" "$JLOG" | tail -1 | cut -c1-160))"
	else
		fail "$what: no 'refused $2 ... $words' line in the log: $(timeout -s KILL "$TIMEOUT" tail -3 "$JLOG")"
	fi
}

# --- disk full --------------------------------------------------------------
# The mount reads the session before the store fills (so that nothing but
# the writes needs space).
assert_exists "$S/0003-user.a3.md"
assert_exists "$M/0150-user.m149.md"
dd if=/dev/zero of="$STORE/.filler" bs=4096 2>/dev/null || true
dd if=/dev/zero of="$STORE/.filler2" bs=512 2>/dev/null || true
free_kb=$(df -k --output=avail "$STORE" | tail -1 | tr -d ' ')
note "store filled: ${free_kb} KiB left; session file $(stat -c %s "$SF") bytes (its last page has $((4096 - $(stat -c %s "$SF") % 4096)) bytes of slack)"

refused_case "disk full, new .md" ENOSPC "No space left on device" new "$S/new1.md" "$D/md"
refused_case "disk full, raw line >> session.jsonl" ENOSPC "No space left on device" append "$S/session.jsonl" "$D/raw"
refused_case "disk full, name" ENOSPC "No space left on device" trunc "$S/name" "$D/name"
refused_case "disk full, edited entry" ENOSPC "No space left on device" trunc "$S/0003-user.a3.md" "$D/edit"
# A branch after a2, beside a3 (the session holds a1 a2 a3: a branch after
# the last entry would only continue the directory, docs/layout.md).
if fsx mkdir "$S/0003~br1"; then
	refused_case "disk full, .md in a pending branch (entry + label)" ENOSPC "No space left on device" new "$S/0003~br1/b.md" "$D/branch"
else
	fail "mkdir of a pending branch failed on a full disk (it is only in memory)"
fi
refused_case "disk full, first write to a version-2 session (migration)" ENOSPC "No space left on device" new "$M/first.md" "$D/small"
refused_case "disk full, raw line with fsync()" ENOSPC "No space left on device" append "$S/session.jsonl" "$D/raw" --fsync
left=$(find "$STORE" -name '*.pisessionfs*' | head -3)
check "no temporary file left beside the sessions ($left)" test -z "$left"

# An fsync() that failed, retried after space is freed.
fsop fsync-retry "$S/session.jsonl" "$D/rawsync" "rm -f '$STORE/.filler2'"
n_sync=$(grep -c '"id": "rawsync"' "$SF" || true)
note "fsync() retried after freeing space: $R; the line is in the file $n_sync times"
if [[ $R == "first=ENOSPC second=ok"* ]] && ((n_sync == 0)); then
	fail "fsync() failed with ENOSPC, then a second fsync() on the same descriptor returned 0 and close() '${R##* }', but the text never reached the session file (silent loss: expected the retry to append it, or to keep failing)"
elif [[ $R == "first=ENOSPC"* ]] && ((n_sync <= 1)); then
	pass "fsync() retried after freeing space: $R, line present $n_sync times"
else
	fail "fsync() retry: $R, line present $n_sync times"
fi

# --- space again ---------------------------------------------------------------
rm -f "$STORE/.filler" "$STORE/.filler2"
# The same descriptor after an invalid line: an invalid line, fsync(),
# then a valid line, fsync(), close().  The valid line must be appended, or
# a later call must fail: a close() that returns 0 while the valid line is
# not in the file is a silent loss.  (fsync() makes the lines durable and
# appends nothing, docs/layout.md "fsync": the close takes both lines, and
# refuses them together, keeping them in rejected/.)
printf 'this is not JSON\n' >"$D/bad"
printf '{"type":"message","id":"after-refusal","parentId":"a1","timestamp":"2026-01-01T00:00:09.000Z","message":{"role":"user","content":"valid","timestamp":1}}\n' >"$D/good"
fsop refused-then-valid "$S/session.jsonl" "$D/bad" "$D/good"
n_good=$(grep -c '"id":"after-refusal"' "$SF" || true)
if [[ $R == "first=EINVAL second=ok close=ok" ]] && ((n_good == 1)); then
	pass "a valid line after a refused one on the same descriptor is appended ($R)"
elif ((n_good == 0)) && [[ $R == *close=ok* ]]; then
	fail "same descriptor after a refusal: $R, and the valid line is not in the file: the refused text stays in the descriptor's buffer, every later line is refused with it, and close() returns 0"
elif ((n_good == 0)) && [[ $R != *close=ok* ]]; then
	pass "a valid line after a refused one on the same descriptor keeps failing ($R)"
else
	fail "same descriptor after a refusal: $R, valid line present $n_good times"
fi

for c in "new $S/new1.md $D/md" "append $S/session.jsonl $D/raw" "trunc $S/name $D/name" "trunc $S/0003-user.a3.md $D/edit" "new $M/first.md $D/small"; do
	read -r mode path data <<<"$c"
	fsop "$mode" "$path" "$data"
	assert_eq "after freeing space: $mode ${path#"$MNT/"}" ok "$R"
done
if fsx test -d "$S/0003~br1"; then
	fsop new "$S/0003~br1/b.md" "$D/branch"
	assert_eq "after freeing space: the .md in the pending branch" ok "$R"
else
	note "the pending branch 0003~br1 is gone after its refused write; made again"
	fsx mkdir "$S/0003~br1" || true
	fsop new "$S/0003~br1/b.md" "$D/branch"
	assert_eq "after freeing space: the .md in the pending branch (made again)" ok "$R"
fi
py_checks python3 - "$SF" "$MF" "$D" <<'EOF'
import json, sys
sf, mf, d = sys.argv[1:4]
lines = open(sf, "rb").read().split(b"\n")
objs = [json.loads(l) for l in lines if l]
def count(pred):
    return sum(1 for o in objs[1:] if pred(o))
msg = lambda o: (o.get("message") or {}).get("content") if o.get("type") == "message" else None
md = open(d + "/md").read()[:-1]
br = open(d + "/branch").read()[:-1]
name = open(d + "/name").read()[:-1]
checks = [
    ("the new .md", count(lambda o: msg(o) == md)),
    ("the raw line", count(lambda o: o.get("id") == "rawbig")),
    ("the name", count(lambda o: o.get("type") == "session_info" and o.get("name") == name)),
    ("the edited entry", count(lambda o: isinstance(msg(o), str) and msg(o).startswith("edited-00000"))),
    ("the branch .md", count(lambda o: msg(o) == br)),
    ("the branch label", count(lambda o: o.get("type") == "label" and o.get("label") == "br1")),
]
for what, n in checks:
    print(("ok - " if n == 1 else "not ok - ") + "%s is in the session exactly once (%d)" % (what, n))
m = [json.loads(l) for l in open(mf, "rb").read().split(b"\n") if l]
ok = m[0].get("version") == 3 and len(m) == 152 and (m[-1].get("message") or {}).get("content") == "first write to a version-2 session"
print(("ok - " if ok else "not ok - ") + "the version-2 session is migrated and holds the first write (%d lines, version %s)" % (len(m), m[0].get("version")))
EOF
mkdir -p "$T_DIR/pi"
pi_tool load "$T_DIR/pi" "$SF" "$MF" >"$T_DIR/pi.out" 2>&1 || true
check "pi loads both sessions after the disk-full episode ($(tr '\n' ' ' <"$T_DIR/pi.out" | cut -c1-300))" \
	python3 -c 'import json,sys; rs=[json.loads(l) for l in open(sys.argv[1])]; sys.exit(not (len(rs)==2 and all(r["ok"] and r["entries"]==r["lines"]-1 for r in rs)))' "$T_DIR/pi.out"

# --- read-only store -------------------------------------------------------------
# ro_cases MOUNT WHAT: every kind of write under MOUNT fails with EROFS (or
# EACCES), the store does not change, and the mount reads fine.
ro_cases() {
	local what=$2 s=$1/--d--/s before after
	before=$(store_sum)
	refused_ro() { # WHAT MODE PATH DATA
		local w=$1
		shift
		fsop "$@"
		if [[ $R == "close EROFS "* || $R == "close EACCES "* || $R == "open EROFS "* || $R == "open EACCES "* ]]; then
			pass "$what: $w fails: $R"
		else
			fail "$what: $w: expected EROFS or EACCES, got: $R"
		fi
	}
	refused_ro "new .md" new "$s/ro1.md" "$D/small"
	refused_ro "raw line >> session.jsonl" append "$s/session.jsonl" "$D/rawsync"
	refused_ro "name" trunc "$s/name" "$D/small"
	refused_ro "edited entry" trunc "$s/0003-user.a3.md" "$D/edit"
	fsx_out ln -s ../0001-user.a1.md "$s/labels/ro-label"
	if ((RC != 0)) && [[ $ERR == *"Read-only file system"* || $ERR == *"Permission denied"* ]]; then
		pass "$what: ln -s in labels/ fails: $ERR"
	else
		fail "$what: ln -s in labels/: status $RC, $(show "$ERR")"
	fi
	after=$(store_sum)
	assert_eq "$what: nothing in the store changed" "$before" "$after"
	# Reads.
	assert_true "$what: ls -R of the session" ls -R "$s"
	assert_same_bytes "$s/session.jsonl" "$SF"
	assert_json "$s/context.json"
	assert_true "$what: an entry file reads" cat "$s/0001-user.a1.md"
}

mount -o remount,ro "$STORE" || die "cannot remount the tmpfs read-only"
ro_cases "$MNT" "read-only remount (daemon running)"
mount -o remount,rw "$STORE" || die "cannot remount the tmpfs read-write"
umount_fs "$MNT"

mount --bind "$STORE" "$RO" || die "cannot bind-mount the store"
mount -o remount,bind,ro "$RO" || die "cannot make the bind mount read-only"
mount_fs "$RO" "$MNT2"
SF_SAVE=$SF
ro_cases "$MNT2" "read-only bind mount"
SF=$SF_SAVE
umount_fs "$MNT2"

# As root, mode bits do not stop the daemon; what does a 0444 session do?
mount_fs "$STORE" "$MNT"
chmod 0444 "$SF"
before=$(store_sum)
fsx_out stat -c %A "$S/0001-user.a1.md"
perm=$OUT
fsop new "$S/mode.md" "$D/small"
after=$(store_sum)
note "a 0444 session file (as root): entry files show ${perm%$'\n'}, a new .md gives: $R; store $([[ $before == "$after" ]] && echo unchanged || echo changed)"
if [[ $R == ok ]]; then
	if [[ ${perm:2:1} == w ]]; then
		fail "a 0444 session file: the mount shows entries writable (${perm%$'\n'}) and appends to it (as root)"
	else
		pass "a 0444 session file: entries shown read-only; root's append still succeeds (root ignores mode bits)"
	fi
elif [[ $R == *EACCES* || $R == *EROFS* || $R == *EPERM* ]]; then
	pass "a 0444 session file: writes refused ($R)"
else
	fail "a 0444 session file: unexpected result $R"
fi
chmod 0644 "$SF"
umount_fs "$MNT"
finish
