#!/usr/bin/env bash
# ln -s SESSION/session.jsonl PROJECT/NAME forks the whole session into
# PROJECT, as pi's SessionManager.forkFrom does (docs/layout.md "Forking a
# whole session into another project"): a new session file there holding
# every entry of the source (all branches), its header with PROJECT's cwd
# (the one its sessions' headers give) and the source as parentSession,
# named NAME, which is then a symlink to the new session directory.  pi
# loads it.  Refusals (also of a caller who may not read the source) make
# no file and are logged.
. "$(dirname "$0")/lib.sh" "$@"
command -v setpriv >/dev/null || die "setpriv (util-linux) is needed"

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
need_pi

FIX=$ROOT/tests/data/fixtures/pi-1.6.0-v3-branched.jsonl
P=--home-user-demo-project--
Q=--home-u-my-other--
E=--home-u-empty--
A=2026-01-01T00-00-00-000Z_aaaa
B=2026-01-02T00-00-00-000Z_bbbb
mkdir -p "$STORE/$P" "$STORE/$Q" "$STORE/$E"
cp "$FIX" "$STORE/$P/$A.jsonl"
# Q's cwd has a dash of its own: its folder's name cannot tell it, its
# session's header does.
printf '%s\n' '{"type":"session","version":3,"id":"bbbb","timestamp":"2026-01-02T00:00:00.000Z","cwd":"/home/u/my-other"}' \
	'{"type":"message","id":"q1","parentId":null,"timestamp":"2026-01-02T00:00:01.000Z","message":{"role":"user","content":"q"}}' \
	>"$STORE/$Q/$B.jsonl"
before=$(sha256sum <"$STORE/$P/$A.jsonl")
# Another user (below) may make links in $Q but not read a private source.
chmod 0755 "$STORE"
chmod 0777 "$STORE/$Q"
let_others_reach "$MNT"
mount_fs "$STORE" "$MNT" -o allow_other

new_file() { ls -t "$STORE/$1"/*.jsonl | head -1; }
count() { ls "$STORE/$P"/*.jsonl "$STORE/$Q"/*.jsonl "$STORE/$E"/*.jsonl 2>/dev/null | wc -l; }

assert_true "ln -s SESSION/session.jsonl OTHERPROJECT/NAME" ln -s "../$P/$A/session.jsonl" "$MNT/$Q/carried over"
assert_eq "one new session file in the other project" 2 "$(ls "$STORE/$Q"/*.jsonl | wc -l)"
fork=$(new_file "$Q")
stem=$(basename "$fork" .jsonl)
header=$(head -1 "$fork")
assert_contains "a version 3 header" '{"type":"session","version":3,"id":"' "$header"
assert_contains "the target project's cwd, the source as parentSession" \
	"\"cwd\":\"/home/u/my-other\",\"parentSession\":\"$STORE/$P/$A.jsonl\"}" "$header"
assert_eq "the file's name is pi's for its header" "$stem" \
	"$(python3 -c 'import json,sys; h=json.loads(sys.argv[1]); print(h["timestamp"].replace(":","-").replace(".","-")+"_"+h["id"])' "$header")"
assert_eq "every entry, all branches, byte for byte" "$(tail -n +2 "$STORE/$P/$A.jsonl")" \
	"$(tail -n +2 "$fork" | head -n -1)"
assert_contains "then the name, after the source's last line" \
	"\"parentId\":\"$(tail -1 "$STORE/$P/$A.jsonl" | python3 -c 'import json,sys; print(json.load(sys.stdin)["id"])')\"," \
	"$(tail -1 "$fork")"
assert_contains "a session_info" '{"type":"session_info","id":"' "$(tail -1 "$fork")"
assert_eq "NAME is a symlink to the new session" "$stem" "$(fsx readlink "$MNT/$Q/carried over")"
assert_true "NAME is a symlink" test -L "$MNT/$Q/carried over"
assert_eq "through it, the name" "carried over" "$(fsx cat "$MNT/$Q/carried over/name")"
assert_eq "it links back to its source" "../../$P/$A" "$(fsx readlink "$MNT/$Q/$stem/parent")"
new_id=$(tail -1 "$fork" | python3 -c 'import json,sys; print(json.load(sys.stdin)["id"])')
assert_eq "the same tree as the source, and the name after its leaf" \
	"$(cd "$MNT/$P/$A" && find . -name '*.md' ! -name transcript.md | sort)" \
	"$(cd "$MNT/$Q/$stem" && find . -name '*.md' ! -name transcript.md ! -name "*.$new_id.md" | sort)"
# The source's last line is on a branch: the name hangs under it there.
assert_exists "$MNT/$Q/$stem/0008~c34de545/0010-session_info.$new_id.md"
assert_eq "the source is unchanged" "$before" "$(sha256sum <"$STORE/$P/$A.jsonl")"

pi_open "$fork"
assert_contains "pi opens it" '"ok":true' "$OUT"
assert_contains "pi leaves it as it is" '"unchanged":true' "$OUT"
assert_contains "pi reads its name" '"name":"carried over"' "$OUT"
cp "$fork" "$T_DIR/fork.jsonl"
fsx_out timeout -s KILL 60 "$PI_NODE" --input-type=module -e "
const { SessionManager } = await import('file://$PI_SESSION_MANAGER');
const fork = SessionManager.open('$T_DIR/fork.jsonl', '$T_DIR');
console.log(fork.getEntries().length, fork.getHeader().cwd, fork.getHeader().parentSession);"
assert_eq "pi sees every entry, the cwd and the parent" \
	"$(($(wc -l <"$STORE/$P/$A.jsonl"))) /home/u/my-other $STORE/$P/$A.jsonl" "${OUT%$'\n'}"

# Into the source's own folder: the source's cwd; an absolute link target.
assert_true "ln -s of an absolute session.jsonl, same project" ln -s "$MNT/$P/$A/session.jsonl" "$MNT/$P/copy"
own=$(new_file "$P")
assert_contains "the source's own cwd" "\"cwd\":\"/home/user/demo-project\",\"parentSession\":\"$STORE/$P/$A.jsonl\"}" \
	"$(head -1 "$own")"
assert_eq "it resolves" "$(basename "$own" .jsonl)" "$(fsx readlink "$MNT/$P/copy")"

# Refusals: nothing is made, each logged.
n=$(count)
assert_errno "Invalid argument" ln -s "../$P/$A/session.jsonl" "$MNT/$E/nowhere"
assert_errno "Invalid argument" ln -s "../$P/$A/session.jsonl" "$MNT/$Q/.hidden"
assert_errno "File exists" ln -s "../$P/$A/session.jsonl" "$MNT/$Q/carried over"
printf 'not a session\n' >"$STORE/$P/junk.jsonl"
assert_poll "the junk file shows" 5 test -d "$MNT/$P/junk"
assert_errno "Invalid argument" ln -s "../$P/junk/session.jsonl" "$MNT/$Q/from junk"
rm "$STORE/$P/junk.jsonl"
chmod 0600 "$STORE/$P/$A.jsonl"
fsx_out setpriv --reuid=52001 --regid=52001 --clear-groups -- ln -s "$MNT/$P/$A/session.jsonl" "$MNT/$Q/stolen"
assert_contains "a caller who may not read the source" "Permission denied" "$ERR"
chmod 0644 "$STORE/$P/$A.jsonl"
assert_eq "no file was made" "$n" "$(count)"
assert_eq "the source is still unchanged" "$before" "$(sha256sum <"$STORE/$P/$A.jsonl")"
fsx_out cat "$MNT/.pisessionfs/log"
assert_contains "the log names the folder without a cwd" \
	"refused ln -s ../$P/$A/session.jsonl $MNT/$E/nowhere: a whole session forked into $E takes that folder's cwd" "$OUT"
assert_contains "the log says why a file that is no session is refused" \
	"$MNT/$Q/from junk: the fork could not be written: the source is not a session pi can fork (empty or invalid)" "$OUT"
assert_contains "the log names the fork" "forked all of $P/$A into $Q as the session $Q/$stem (cwd /home/u/my-other)" "$OUT"
umount_fs "$MNT"

# After a restart the name is still a link.
mount_fs "$STORE" "$MNT"
assert_poll "after a restart, NAME is still a symlink" 5 test -L "$MNT/$Q/carried over"
assert_eq "to the fork" "$stem" "$(fsx readlink "$MNT/$Q/carried over")"
umount_fs "$MNT"

finish
