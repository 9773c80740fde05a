#!/usr/bin/env bash
# The mount follows the store while mounted (docs/layout.md "Live updates"):
# appends, new branches, labels, new and removed sessions and projects, and
# files replaced by shorter ones, each visible within a second or two,
# through caches the kernel has already filled.
# shellcheck disable=SC2016 # the 'bash -c' checks get their arguments as $1
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh" "$@"

P=--live--
PD=$STORE/$P
mkdir -p "$PD"
F=$PD/s.jsonl
# b's text is 300 KB, so context.json is read in several chunks.
big=$(head -c 300000 /dev/zero | tr '\0' B)
{ header; user_msg a null "a-text"; asst_msg b a "b-text $big"; } >"$F"

mount_fs "$STORE" "$MNT"
S=$MNT/$P/s

# Fill the kernel's caches first: listings, attributes, symlinks, contents.
prime() {
	fsx ls -lA "$S" "$S/entries" "$S/labels" >/dev/null 2>&1 || true
	fsx cat "$S/context.json" "$S/name" "$S/problems" >/dev/null 2>&1 || true
	fsx stat "$S/context.json" "$S/session.jsonl" "$S/leaf" "$S/transcript.md" "$S/usage.json" \
		"$MNT/usage.csv" "$MNT/$P/usage.csv" >/dev/null 2>&1 || true
	fsx readlink "$S/leaf" >/dev/null 2>&1 || true
}
# link_is LINK TARGET: for polling (in 'bash -c').
# shellcheck disable=SC2317 # called by name in bash -c
link_is() {
	[[ $(readlink "$1") == "$2" ]]
}
export -f link_is

prime
fsx cat "$S/context.json" >"$T_DIR/ctx.before"
transcript_before=$(fsx stat -c %s "$S/transcript.md")
assert_eq "start: two entries" "0001-user.a.md
0002-assistant.b.md" "$(ls_names "$S" | grep '\.md$' | grep -v '^transcript\.md$')"
# start_reader FILE: opens FILE and reads its first 4 KB in a bounded
# background process, which reads the rest once end_reader is called.
start_reader() {
	rm -f "$T_DIR/opened" "$T_DIR/go" "$T_DIR/ctx.fd3"
	timeout -s KILL "$(scaled 20)" python3 - "$1" "$T_DIR/opened" "$T_DIR/go" "$T_DIR/ctx.fd3" <<'EOF' &
import os, sys, time
f = open(sys.argv[1], "rb", buffering=0)
head = f.read(4096)
open(sys.argv[2], "w").close()
while not os.path.exists(sys.argv[3]):
    time.sleep(0.05)
rest = b""
while True:
    b = f.read(65536)
    if not b:
        break
    rest += b
open(sys.argv[4], "wb").write(head + rest)
EOF
	reader=$!
	poll_until 5 test -e "$T_DIR/opened" || fail "could not open $1"
}
# end_reader WHAT BEFORE AFTER: the reader must have read exactly BEFORE, the
# version it opened (the daemon snapshots a file at open; the kernel's page
# cache must not hand it the newer version another reader fetched meanwhile).
end_reader() {
	: >"$T_DIR/go"
	wait "$reader" || fail "$1: the reader failed"
	if cmp -s "$T_DIR/ctx.fd3" "$2"; then
		pass
	elif python3 -m json.tool "$T_DIR/ctx.fd3" >/dev/null 2>&1; then
		fail "$1: a reader that opened context.json before the change got the new version ($(wc -c <"$T_DIR/ctx.fd3") bytes; it opened $(wc -c <"$2"))"
	else
		fail "$1: a reader that opened context.json before the change read a mix of two versions, not JSON ($(wc -c <"$T_DIR/ctx.fd3") bytes; before $(wc -c <"$2"), after $(wc -c <"$3"))"
	fi
}

start_reader "$S/context.json"

# --- an append ------------------------------------------------------------------
user_msg c b "c-appended-text" >>"$F"
assert_poll "append: the new entry file appears within 1s" 1 test -f "$S/0003-user.c.md"
assert_poll "append: leaf moves within 1s" 1 bash -c 'link_is "$1" 0003-user.c.md' _ "$S/leaf"
assert_poll "append: context.json has the new text within 1s" 1 grep -q c-appended-text "$S/context.json"
fsx cat "$S/context.json" >"$T_DIR/ctx.after"
if (($(wc -c <"$T_DIR/ctx.after") > $(wc -c <"$T_DIR/ctx.before"))); then pass; else fail "append: context.json did not grow"; fi
assert_eq "append: stat size of context.json equals its content" "$(wc -c <"$T_DIR/ctx.after")" "$(fsx stat -c %s "$S/context.json")"
assert_json "$S/context.json"
assert_eq "append: stat size of session.jsonl" "$(stat -c %s "$F")" "$(fsx stat -c %s "$S/session.jsonl")"
assert_same_bytes "$S/session.jsonl" "$F"
assert_exists "$S/entries/c.json"
end_reader "append" "$T_DIR/ctx.before" "$T_DIR/ctx.after"
for f in context.json leaf 0003-user.c.md entries/c.json session.jsonl; do
	assert_size "$S/$f"
done
# Sizes the kernel keeps for the timeout (10 s by default on a watched
# store) are told anew by the watcher, not left to expire.
assert_poll "append: st_size of transcript.md follows, unread" 2 bash -c 'size_is_not "$1" "$2"' _ "$S/transcript.md" "$transcript_before"
for f in "$S/transcript.md" "$S/usage.json" "$MNT/usage.csv" "$MNT/$P/usage.csv"; do
	assert_size "$f"
done
fsx_out stat -c %s "$S/leaf"
assert_eq "append: st_size of leaf" "$(($(fsx readlink "$S/leaf" | wc -c) - 1))" "${OUT%$'\n'}"

# Several appends in a row, and an append in two writes (the line completes
# in the second).
prime
asst_msg d c "d-text" >>"$F"
line=$(user_msg e d "e-split-text")
printf '%s' "${line:0:40}" >>"$F"
sleep 0.2
printf '%s\n' "${line:40}" >>"$F"
assert_poll "appends: both entries show" 1 test -f "$S/0005-user.e.md"
fsx_out readlink "$S/leaf"
assert_eq "appends: leaf" "0005-user.e.md" "${OUT%$'\n'}"
line_of "$F" 6 >"$T_DIR/want"
assert_same_bytes "$S/entries/e.json" "$T_DIR/want"
assert_eq "appends: problems stay empty" "" "$(fsx cat "$S/problems")"

# --- a new branch ---------------------------------------------------------------
prime
fsx cat "$S/context.json" >"$T_DIR/ctx.before"
start_reader "$S/context.json"
user_msg f a "f-branch-text" >>"$F"
assert_poll "branch: 0002~f appears" 2 test -d "$S/0002~f"
assert_poll "branch: listed" 2 bash -c 'ls "$1" | grep -qx "0002~f"' _ "$S"
fsx_out ls -A "$S/0002~f"
assert_eq "branch: its content (its transcript.md answers by name)" "0002-user.f.md
context.json" "${OUT%$'\n'}"
fsx_out readlink "$S/leaf"
assert_eq "branch: leaf goes into it" "0002~f/0002-user.f.md" "${OUT%$'\n'}"
assert_poll "branch: root context.json is the branch's now" 2 grep -q f-branch-text "$S/context.json"
fsx_out cat "$S/context.json"
if [[ $OUT != *c-appended-text* ]]; then pass; else fail "branch: root context.json still has the old line"; fi
assert_same_bytes "$S/context.json" "$S/0002~f/context.json"
# The context shrank (the branch leaves b's 300 KB out): the early reader
# must still get the whole version it opened, not its first 4 KB.
fsx cat "$S/context.json" >"$T_DIR/ctx.after"
end_reader "branch" "$T_DIR/ctx.before" "$T_DIR/ctx.after"
prime
fsx cat "$S/0002~f/context.json" >/dev/null
transcript_before=$(fsx stat -c %s "$S/0002~f/transcript.md")
asst_msg g f "g-in-branch" >>"$F"
assert_poll "branch: its transcript.md's st_size follows, unread" 2 bash -c 'size_is_not "$1" "$2"' _ "$S/0002~f/transcript.md" "$transcript_before"
assert_poll "branch: grows" 2 test -f "$S/0002~f/0003-assistant.g.md"
assert_poll "branch: its context.json follows" 2 grep -q g-in-branch "$S/0002~f/context.json"
assert_size "$S/0002~f/context.json"
assert_size "$S/0002~f/transcript.md"

# --- a label on the branch's first entry ------------------------------------------
prime
fsx ls "$S/0002~f" >/dev/null
label_entry l1 g f "feature" >>"$F"
assert_poll "label: the branch is listed as 0002~feature" 2 bash -c 'ls "$1" | grep -qx "0002~feature"' _ "$S"
fsx_out ls -A "$S"
assert_eq "label: 0002~f is no longer listed" "" "$(grep -x '0002~f' <<<"$OUT" || true)"
assert_true "label: 0002~f still resolves" test -f "$S/0002~f/0002-user.f.md"
assert_true "label: 0002~feature resolves" test -f "$S/0002~feature/0002-user.f.md"
assert_poll "label: labels/feature" 2 test -L "$S/labels/feature"
fsx_out readlink "$S/labels/feature"
assert_eq "label: labels/feature target" "../0002~feature/0002-user.f.md" "${OUT%$'\n'}"
fsx_out readlink "$S/leaf"
assert_eq "label: leaf goes through the label name" "0002~feature/0004-label.l1.md" "${OUT%$'\n'}"
# The label changes, then goes.
prime
label_entry l2 l1 f "feature-2" >>"$F"
assert_poll "relabel: listed as 0002~feature-2" 2 bash -c 'ls "$1" | grep -qx "0002~feature-2"' _ "$S"
assert_poll "relabel: 0002~feature is gone" 2 bash -c '! test -e "$1"' _ "$S/0002~feature"
assert_poll "relabel: labels/feature is gone" 2 bash -c '! test -L "$1"' _ "$S/labels/feature"
assert_true "relabel: 0002~f still resolves" test -d "$S/0002~f"
prime
printf '{"type":"label","id":"l3","parentId":"l2","timestamp":"2026-01-01T00:00:09.000Z","targetId":"f"}\n' >>"$F"
assert_poll "unlabel: listed as 0002~f again" 2 bash -c 'ls "$1" | grep -qx "0002~f"' _ "$S"
assert_poll "unlabel: labels/ is empty" 2 bash -c '[[ -z $(ls -A "$1") ]]' _ "$S/labels"
# A name arrives.
prime
printf '{"type":"session_info","id":"n1","parentId":"l3","timestamp":"2026-01-01T00:00:10.000Z","name":"  Live name  "}\n' >>"$F"
assert_poll "name: follows session_info" 2 bash -c '[[ $(cat "$1") == "Live name" ]]' _ "$S/name"
assert_file_content "$S/name" $'Live name\n'

# --- one write that grows two branches at once -----------------------------------------
# (pi writes one line at a time, but a batch of lines in one write must
# update every branch it touches, and the watcher handles several branch
# directories in one event.)
B2=$PD/two.jsonl
{
	header 3 55555555-0000-0000-0000-000000000000
	user_msg r null "r"
	asst_msg s r "s"
	user_msg t r "t-branch"
	user_msg u r "u-branch"
} >"$B2"
fsx ls "$MNT/$P" >/dev/null
assert_poll "two branches: the session shows" 2 test -d "$MNT/$P/two/0002~u"
for br in t u; do
	fsx cat "$MNT/$P/two/0002~$br/context.json" >/dev/null || true
	fsx ls "$MNT/$P/two/0002~$br" >/dev/null || true
done
{ asst_msg t2 t "t2-grown"; asst_msg u2 u "u2-grown"; } >>"$B2"
assert_poll "two branches: t grows" 2 test -f "$MNT/$P/two/0002~t/0003-assistant.t2.md"
assert_poll "two branches: u grows" 2 test -f "$MNT/$P/two/0002~u/0003-assistant.u2.md"
assert_poll "two branches: t's context.json follows" 2 grep -q t2-grown "$MNT/$P/two/0002~t/context.json"
assert_poll "two branches: u's context.json follows" 2 grep -q u2-grown "$MNT/$P/two/0002~u/context.json"
assert_size "$MNT/$P/two/0002~t/context.json"
assert_size "$MNT/$P/two/0002~u/context.json"
rm "$B2"

# --- sessions come and go -----------------------------------------------------------
fsx ls "$MNT/$P" >/dev/null
{ header 3 22222222-0000-0000-0000-000000000000; user_msg z null "new-session-text"; } >"$PD/new.jsonl"
assert_poll "a new session file shows as a directory" 2 test -d "$MNT/$P/new"
assert_poll "...and is listed" 2 bash -c 'ls "$1" | grep -qx new' _ "$MNT/$P"
assert_true "the new session's entry" test -f "$MNT/$P/new/0001-user.z.md"
fsx cat "$MNT/$P/new/0001-user.z.md" >/dev/null
rm "$PD/new.jsonl"
assert_poll "a removed session file disappears from the listing" 2 bash -c '! ls "$1" | grep -qx new' _ "$MNT/$P"
assert_poll "...and from lookups" 2 bash -c '! test -e "$1"' _ "$MNT/$P/new"
assert_poll "...and its files" 2 bash -c '! test -e "$1"' _ "$MNT/$P/new/0001-user.z.md"
# A session moved in by rename (how an editor or a sync tool writes).
{ header 3 33333333-0000-0000-0000-000000000000; user_msg y null "renamed-in"; } >"$T_DIR/moved.jsonl"
mv "$T_DIR/moved.jsonl" "$PD/moved.jsonl"
assert_poll "a session renamed into the project shows" 2 test -f "$MNT/$P/moved/0001-user.y.md"
mv "$PD/moved.jsonl" "$PD/moved.jsonl.bak"
assert_poll "a session renamed away disappears" 2 bash -c '! test -e "$1"' _ "$MNT/$P/moved"

# --- projects come and go -------------------------------------------------------------
fsx ls "$MNT" >/dev/null
mkdir "$STORE/--newproj--"
assert_poll "a new project directory shows" 2 bash -c 'ls "$1" | grep -qx -- --newproj--' _ "$MNT"
{ header 3 44444444-0000-0000-0000-000000000000; user_msg x null "in new project"; } >"$STORE/--newproj--/p.jsonl"
assert_poll "a session in the new project shows" 2 test -f "$MNT/--newproj--/p/0001-user.x.md"
user_msg w x "appended in new project" >>"$STORE/--newproj--/p.jsonl"
assert_poll "appends in the new project show (it is watched too)" 1 test -f "$MNT/--newproj--/p/0002-user.w.md"
rm -r "$STORE/--newproj--"
assert_poll "a removed project disappears" 2 bash -c '! ls "$1" | grep -qx -- --newproj--' _ "$MNT"
assert_poll "...and from lookups" 2 bash -c '! test -e "$1"' _ "$MNT/--newproj--"

# --- a session replaced by a shorter one ----------------------------------------------
prime
fsx cat "$S/0001-user.a.md" >/dev/null
fsx cat "$S/entries/a.json" >/dev/null
# Truncated in place to a different, shorter session with the same first id
# and the same timestamps: the same path names a different line now.
{ header; user_msg a null "A-REWRITTEN"; } >"$F"
assert_poll "truncate: re-indexed (old entries gone)" 2 bash -c '! test -e "$1"' _ "$S/0002-assistant.b.md"
assert_poll "truncate: the listing is the new file's" 2 bash -c '[[ $(ls "$1" | grep -v "^transcript\.md$" | grep -c "\.md$") == 1 ]]' _ "$S"
assert_poll "truncate: leaf" 2 bash -c 'link_is "$1" 0001-user.a.md' _ "$S/leaf"
assert_poll "truncate: branch gone" 2 bash -c '! test -e "$1"' _ "$S/0002~f"
assert_same_bytes "$S/session.jsonl" "$F"
assert_poll "truncate: entries/a.json is the new line" 2 grep -q A-REWRITTEN "$S/entries/a.json"
assert_poll "truncate: the entry file shows the new text (no stale cache)" 2 grep -q A-REWRITTEN "$S/0001-user.a.md"
assert_size "$S/0001-user.a.md"
assert_size "$S/entries/a.json"
assert_poll "truncate: context.json is the new one" 2 grep -q A-REWRITTEN "$S/context.json"
assert_size "$S/context.json"
assert_poll "truncate: name cleared" 2 bash -c '[[ -z $(cat "$1") ]]' _ "$S/name"
fsx_out cat "$S/problems"
assert_eq "truncate: no problems" "" "$OUT"
# Replaced by rename with a shorter file.
prime
{ header; user_msg q null "replaced-by-rename"; } >"$T_DIR/repl.jsonl"
mv "$T_DIR/repl.jsonl" "$F"
assert_poll "rename over: re-indexed" 2 test -f "$S/0001-user.q.md"
assert_poll "rename over: old entry gone" 2 bash -c '! test -e "$1"' _ "$S/0001-user.a.md"
assert_same_bytes "$S/session.jsonl" "$F"
assert_poll "rename over: context.json" 2 grep -q replaced-by-rename "$S/context.json"
# And it keeps following appends after that.
asst_msg r q "after-replace" >>"$F"
assert_poll "after replace: appends show" 1 test -f "$S/0002-assistant.r.md"

finish
