#!/usr/bin/env bash
# A store on a file system without inotify (NFS, a FUSE mount): the mount
# still follows it (docs/layout.md "Live updates").  The store here lives on
# a passthrough FUSE mount (tests/helpers/passthrough_store.c) of a backing
# directory; every change is made to the backing directory, under the
# passthrough mount, where no inotify event can see it (checked first), so
# the daemon only learns of it when an access stats the session file and
# the kernel's caches expire (-o timeout).  Writes through the mount land in
# the backing files through the passthrough mount.
# shellcheck disable=SC2016 # the 'bash -c' checks get their arguments as $1
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh" "$@"

HERE=$(cd "$(dirname "$0")" && pwd)
PY=$(python3 -c 'import sys; print(sys.executable)')
passthrough_helper

# The kernel cache timeout of the mount under test; every change must show
# within it plus a margin (poll limits are stretched by TIME_SCALE).
TMO=0.5
LIMIT=2
# The views (by-id, by-name) read a catalog refreshed at most once a second.
VIEW_LIMIT=3

BACK=$T_DIR/backing
PT=$T_DIR/pt
P=--nfs--
mkdir -p "$BACK/$P" "$PT"
F=$BACK/$P/s.jsonl
{ header; user_msg a null "a-text"; asst_msg b a "b-text"; } >"$F"
{ header 3 33333333-0000-0000-0000-000000000001; user_msg ga null "gone-text"; } >"$BACK/$P/gone.jsonl"
{ header 3 33333333-0000-0000-0000-000000000002; user_msg sa null "short-a"; asst_msg sb sa "short-b"; } >"$BACK/$P/short.jsonl"
{ header 3 33333333-0000-0000-0000-000000000003; user_msg ra null "replace-a"; } >"$BACK/$P/replace.jsonl"
{ header 2 33333333-0000-0000-0000-000000000004; user_msg va null "v2-a"; asst_msg vb va "v2-b"; } >"$BACK/$P/old.jsonl"

mount_with "$PT" "$HELPER" "$BACK" "$PT" -f
assert_eq "the passthrough mount shows the backing store" "$(ls "$BACK/$P")" "$(fsx ls "$PT/$P")"

# --- the premise: changes underneath make no inotify event on the mount -------
PROBE=--probe--
mkdir -p "$BACK/$PROBE"
header >"$BACK/$PROBE/x.jsonl"
fsx_out "$PY" "$HERE/inotify_probe.py" 1 "$PT" "$PT/$PROBE" "$BACK/$PROBE" -- \
	"printf '%s\n' '{}' >>'$BACK/$PROBE/x.jsonl' && : >'$BACK/$PROBE/y.jsonl' && rm '$BACK/$PROBE/y.jsonl' && mkdir '$BACK/--probe2--'"
if ((RC != 0)); then
	fail "inotify probe (changes underneath) failed: $OUT $ERR"
else
	counts=$OUT
	assert_eq "no inotify event on the mount's root for a change underneath" "0 $PT" "$(sed -n 1p <<<"$counts")"
	assert_eq "no inotify event in the mount's project for changes underneath" "0 $PT/$PROBE" "$(sed -n 2p <<<"$counts")"
	# Controls: the probe sees the same changes on the backing directory,
	# and sees changes made through the mount on the mount.
	control=$(sed -n 3p <<<"$counts")
	if [[ ${control%% *} -gt 0 ]]; then pass; else fail "control: no inotify event on the backing directory ($counts)"; fi
fi
fsx_out "$PY" "$HERE/inotify_probe.py" 1 "$PT/$PROBE" -- "printf '%s\n' '{}' >>'$PT/$PROBE/x.jsonl'"
if ((RC == 0)) && [[ ${OUT%% *} -gt 0 ]]; then
	pass
else
	fail "control: a change through the mount must make inotify events on it: $OUT $ERR"
fi
rm -rf "${BACK:?}/$PROBE" "$BACK/--probe2--"

# --- the mount under test, on the passthrough mount ---------------------------
mount_fs "$PT" "$MNT" -o timeout=$TMO
S=$MNT/$P/s
# The daemon could set up its watches (inotify works on a FUSE mount): it
# believes it is notified, as on NFS, and must not rely on it.
assert_eq "the daemon did not fall back for lack of inotify" "" "$(grep -i inotify "${LOG_OF[$MNT]}" || true)"

# Fill the kernel's caches: listings, attributes, symlinks, contents.
prime() {
	fsx ls -lA "$MNT" "$MNT/$P" "$S" "$S/entries" "$S/labels" >/dev/null 2>&1 || true
	fsx ls -lA "$MNT/by-id" "$MNT/by-name" >/dev/null 2>&1 || true
	fsx cat "$S/context.json" "$S/name" "$S/problems" "$S/transcript.md" >/dev/null 2>&1 || true
	fsx stat "$S/context.json" "$S/session.jsonl" "$S/leaf" >/dev/null 2>&1 || true
	fsx readlink "$S/leaf" >/dev/null 2>&1 || true
	local d
	for d in "$MNT/$P"/*/; do
		fsx ls -lA "$d" >/dev/null 2>&1 || true
		fsx cat "$d/context.json" "$d"/0001-*.md >/dev/null 2>&1 || true
	done
}
# link_is LINK TARGET: for polling (in 'bash -c').
# shellcheck disable=SC2317 # called by name in bash -c
link_is() {
	[[ $(readlink "$1") == "$2" ]]
}
export -f link_is
# same_size MOUNT-FILE BACKING-FILE: st_size through the mount is the
# backing file's.
# shellcheck disable=SC2317
same_size() {
	[[ $(stat -c %s "$1") == $(stat -c %s "$2") ]]
}
export -f same_size

prime
assert_eq "start: two entries" "0001-user.a.md
0002-assistant.b.md" "$(ls_names "$S" | grep '\.md$' | grep -v '^transcript\.md$')"

# --- appends ------------------------------------------------------------------
user_msg c b "c-appended-text" >>"$F"
asst_msg d c "d-appended-text" >>"$F"
assert_poll "append: the new entry files appear" $LIMIT test -f "$S/0004-assistant.d.md"
assert_poll "append: listed" $LIMIT bash -c 'ls "$1" | grep -qx 0003-user.c.md' _ "$S"
assert_poll "append: leaf moves" $LIMIT bash -c 'link_is "$1" 0004-assistant.d.md' _ "$S/leaf"
assert_poll "append: context.json has the new text" $LIMIT grep -q d-appended-text "$S/context.json"
assert_poll "append: transcript.md has it" $LIMIT grep -q c-appended-text "$S/transcript.md"
assert_poll "append: session.jsonl's size" $LIMIT bash -c 'same_size "$1" "$2"' _ "$S/session.jsonl" "$F"
assert_same_bytes "$S/session.jsonl" "$F"
assert_file_content "$S/entries/c.json" "$(line_of "$F" 4)"$'\n'
fsx_out "$PY" -c 'import json,sys; m=json.load(open(sys.argv[1]))["messages"]; print(len(m), m[-1]["content"][0]["text"])' "$S/context.json"
assert_eq "append: context.json's messages" "4 d-appended-text" "${OUT%$'\n'}"

# --- a fork, a label, a name ----------------------------------------------------
prime
user_msg f a "f-branch-text" >>"$F"
assert_poll "fork: 0002~f appears" $LIMIT test -d "$S/0002~f"
assert_poll "fork: listed" $LIMIT bash -c 'ls "$1" | grep -qx "0002~f"' _ "$S"
assert_poll "fork: the root context.json is the branch's" $LIMIT grep -q f-branch-text "$S/context.json"
assert_poll "fork: leaf" $LIMIT bash -c 'link_is "$1" 0002~f/0002-user.f.md' _ "$S/leaf"
prime
label_entry l1 f f feature >>"$F"
assert_poll "label: the branch is listed as 0002~feature" $LIMIT bash -c 'ls "$1" | grep -qx "0002~feature"' _ "$S"
assert_poll "label: labels/feature" $LIMIT test -L "$S/labels/feature"
prime
printf '{"type":"session_info","id":"n1","parentId":"l1","timestamp":"2026-01-01T00:00:10.000Z","name":"Over NFS"}\n' >>"$F"
assert_poll "name: follows session_info" $LIMIT bash -c '[[ $(cat "$1") == "Over NFS" ]]' _ "$S/name"
assert_poll "name: by-name shows it" $VIEW_LIMIT test -L "$MNT/by-name/Over NFS"

# --- sessions and projects come and go ---------------------------------------------
prime
{ header 3 44444444-0000-0000-0000-000000000001; user_msg na null "new-session-text"; } >"$BACK/$P/new.jsonl"
assert_poll "new session: shows as a directory" $LIMIT test -d "$MNT/$P/new"
assert_poll "new session: listed" $LIMIT bash -c 'ls "$1" | grep -qx new' _ "$MNT/$P"
assert_poll "new session: its context.json" $LIMIT grep -q new-session-text "$MNT/$P/new/context.json"
assert_poll "new session: by-id" $VIEW_LIMIT test -L "$MNT/by-id/44444444-0000-0000-0000-000000000001"

prime
mkdir "$BACK/--newproj--"
{ header 3 44444444-0000-0000-0000-000000000002; user_msg x null "x-text"; } >"$BACK/--newproj--/p.jsonl"
assert_poll "new project: listed" $LIMIT bash -c 'ls "$1" | grep -qx -- --newproj--' _ "$MNT"
assert_poll "new project: its session" $LIMIT test -f "$MNT/--newproj--/p/0001-user.x.md"
prime
fsx ls "$MNT/--newproj--/p" >/dev/null 2>&1 || true
user_msg w x "w-text" >>"$BACK/--newproj--/p.jsonl"
assert_poll "new project: appends show" $LIMIT test -f "$MNT/--newproj--/p/0002-user.w.md"
assert_poll "new project: its leaf follows" $LIMIT bash -c 'link_is "$1" 0002-user.w.md' _ "$MNT/--newproj--/p/leaf"

prime
rm "$BACK/$P/gone.jsonl"
assert_poll "deleted session: gone from the listing" $LIMIT bash -c '! ls "$1" | grep -qx gone' _ "$MNT/$P"
assert_poll "deleted session: gone from lookups" $LIMIT bash -c '! test -e "$1"' _ "$MNT/$P/gone"
assert_poll "deleted session: its files too" $LIMIT bash -c '! test -e "$1"' _ "$MNT/$P/gone/0001-user.ga.md"
assert_poll "deleted session: gone from by-id" $VIEW_LIMIT bash -c '! test -e "$1"' _ "$MNT/by-id/33333333-0000-0000-0000-000000000001"

rm -rf "${BACK:?}/--newproj--"
assert_poll "removed project: gone from the listing" $LIMIT bash -c '! ls "$1" | grep -qx -- --newproj--' _ "$MNT"
assert_poll "removed project: gone from lookups" $LIMIT bash -c '! test -e "$1"' _ "$MNT/--newproj--"

# --- rewritten in place, replaced by rename ------------------------------------------
R=$MNT/$P/short
fsx cat "$R/0001-user.sa.md" "$R/0002-assistant.sb.md" "$R/context.json" >/dev/null
prime
{ header 3 33333333-0000-0000-0000-000000000002; user_msg sa null "SHORT-REWRITTEN"; } >"$BACK/$P/short.jsonl"
assert_poll "rewrite: old entries gone" $LIMIT bash -c '! test -e "$1"' _ "$R/0002-assistant.sb.md"
assert_poll "rewrite: the entry file shows the new text" $LIMIT grep -q SHORT-REWRITTEN "$R/0001-user.sa.md"
assert_poll "rewrite: entries/sa.json is the new line" $LIMIT grep -q SHORT-REWRITTEN "$R/entries/sa.json"
assert_poll "rewrite: context.json" $LIMIT grep -q SHORT-REWRITTEN "$R/context.json"
assert_poll "rewrite: leaf" $LIMIT bash -c 'link_is "$1" 0001-user.sa.md' _ "$R/leaf"

# The same entry rewritten with text of the same length: no size tells the
# kernel its cached pages are stale, only the re-index does.
fsx cat "$MNT/$P/short/0001-user.sa.md" >/dev/null
prime
{ header 3 33333333-0000-0000-0000-000000000002; user_msg sa null "SHORT-REWRITTEM"; } >"$BACK/$P/short.jsonl"
assert_poll "same-size rewrite: the entry file shows the new text" $LIMIT grep -q SHORT-REWRITTEM "$MNT/$P/short/0001-user.sa.md"
assert_poll "same-size rewrite: context.json" $LIMIT grep -q SHORT-REWRITTEM "$MNT/$P/short/context.json"

R=$MNT/$P/replace
fsx cat "$R/0001-user.ra.md" "$R/context.json" >/dev/null
prime
{ header 3 33333333-0000-0000-0000-000000000003; user_msg rq null "replaced-by-rename"; asst_msg rr rq "rr-text"; } >"$BACK/$P/.replace.tmp"
mv "$BACK/$P/.replace.tmp" "$BACK/$P/replace.jsonl"
assert_poll "rename over: re-indexed" $LIMIT test -f "$R/0002-assistant.rr.md"
assert_poll "rename over: the old entry is gone" $LIMIT bash -c '! test -e "$1"' _ "$R/0001-user.ra.md"
assert_poll "rename over: context.json" $LIMIT grep -q rr-text "$R/context.json"

# --- writes through the mount land in the backing files -------------------------------
cp "$HERE/check_append.py" "$T_DIR/check.py"
# expect_new WHAT FILE LINES-BEFORE JSON-ARRAY: the lines appended to FILE.
expect_new() {
	local out
	NEW_IDS=()
	if out=$("$PY" -I -S "$T_DIR/check.py" "$2" "$3" "$4" 2>&1); then
		pass
		read -r -a NEW_IDS <<<"$out"
	else
		fail "$1: $out"
	fi
}

prime
before=$(wc -l <"$F")
assert_true "write: echo > new.md" bash -c 'echo "written through" >"$1"' _ "$S/0002~feature/hello.md"
expect_new "write: a user message in the backing file" "$F" "$before" \
	'[{"type":"message","id":"@id","parentId":"n1","timestamp":"@ts","message":{"role":"user","content":"written through","timestamp":"@ms"}}]'
id=${NEW_IDS[0]:-none}
assert_poll "write: the entry shows" $LIMIT test -f "$S/0002~feature/0005-user.$id.md"
assert_poll "write: the leaf" $LIMIT bash -c 'link_is "$1" "0002~feature/0005-user.$2.md"' _ "$S/leaf" "$id"

before=$(wc -l <"$F")
assert_true "write: the name" bash -c 'echo "Renamed over NFS" >"$1"' _ "$S/name"
expect_new "write: a session_info entry in the backing file" "$F" "$before" \
	"[{\"type\":\"session_info\",\"id\":\"@id\",\"parentId\":\"$id\",\"timestamp\":\"@ts\",\"name\":\"Renamed over NFS\"}]"
assert_file_content "$S/name" $'Renamed over NFS\n'

# Appended outside right after the mount's own write: still indexed.
last=${NEW_IDS[0]:-none}
prime
user_msg after "$last" "after-own-write" >>"$F"
assert_poll "outside append after a write: shows" $LIMIT grep -q after-own-write "$S/context.json"

before=$(wc -l <"$F")
line=$(user_msg raw after "raw-append")
assert_true "write: append to session.jsonl" bash -c 'printf "%s\n" "$2" >>"$1"' _ "$S/session.jsonl" "$line"
assert_eq "write: the raw line is in the backing file" "$line" "$(tail -n 1 "$F")"
assert_eq "write: exactly one line" $((before + 1)) "$(wc -l <"$F")"
assert_poll "write: the raw append shows" $LIMIT grep -q raw-append "$S/context.json"

# A version-2 file is not migrated on a FUSE store: the migration rewrites
# it (a temporary file renamed over it), which could lose another
# machine's append on a shared one (docs/shared-stores.md).  The write is
# refused, the file left byte-identical, the text kept.
O=$MNT/$P/old
prime
cp "$BACK/$P/old.jsonl" "$T_DIR/old.before"
write_close "$O/new.md" $'v2-written\n'
assert_eq "migrate: the write into a version-2 session fails at close()" "EPERM" "${OUT%$'\n'}"
assert_same_bytes "$BACK/$P/old.jsonl" "$T_DIR/old.before"
assert_eq "migrate: no temporary file left" "" "$(find "$BACK/$P" -name '*pisessionfs-migrate*')"
assert_true "migrate: the old entries keep their paths" test -f "$O/0002-assistant.vb.md"
fsx_out cat "$MNT/.pisessionfs/log"
assert_contains "migrate: the log says why" "refused $MNT/$P/old/new.md: the session is a version 2 file on a FUSE file system" "$OUT"
assert_true "migrate: the text is kept" bash -c 'grep -lq v2-written "$1"/.pisessionfs/rejected/*' _ "$MNT"

# A branch made with mkdir, written through.
prime
assert_true "branch: mkdir" mkdir "$S/0002~side"
assert_true "branch: write into it" bash -c 'echo "side-text" >"$1"' _ "$S/0002~side/x.md"
assert_eq "branch: its label is in the backing file" "side" \
	"$(tail -n 1 "$F" | "$PY" -c 'import json,sys; print(json.load(sys.stdin).get("label"))')"
assert_poll "branch: listed by its label" $LIMIT bash -c 'ls "$1" | grep -qx "0002~side"' _ "$S"
assert_poll "branch: its context.json" $LIMIT grep -q side-text "$S/0002~side/context.json"

assert_same_bytes "$S/session.jsonl" "$F"
assert_eq "nothing else was refused" "" "$(fsx cat "$MNT/.pisessionfs/log" | grep refused | grep -v "/$P/old/new.md" || true)"

# --- without -o timeout: the daemon sees the store is on FUSE --------------------
# Its watches would stay silent, so it must not let the kernel keep
# attributes for the long timeout it uses on local stores (fs/main.c).
umount_fs "$MNT"
mount_fs "$PT" "$MNT"
fsx stat "$S/session.jsonl" >/dev/null
user_msg dflt raw "default-timeout-append" >>"$F"
assert_poll "default timeout: session.jsonl's st_size follows, unread" $LIMIT bash -c 'same_size "$1" "$2"' _ "$S/session.jsonl" "$F"

# --- an overview file changed between the stat that built it and the open ----------
# A stat keeps the text it built for the open that follows (cat); with
# attributes cached for a minute and no watch to drop them, the open is the
# first to hear of an append: it must build anew, not read the kept text.
umount_fs "$MNT"
mount_fs "$PT" "$MNT" -o timeout=60
fsx stat "$MNT/$P/usage.csv" >/dev/null
user_msg kept raw "between-stat-and-open" >>"$F"
row=$(fsx cat "$MNT/$P/usage.csv" | grep "^$P,s,")
assert_eq "usage.csv counts an append between stat and open" \
	"$(grep -c '"type":"message"' "$F")" "$(cut -d, -f8 <<<"$row")"
finish
