#!/usr/bin/env bash
# ln -s SESSION/ENTRY PROJECT/NAME forks a session, as pi's /fork does
# (docs/layout.md "Forking a session"): a new session file beside, with
# the path from the root to ENTRY and the source as its parentSession,
# named NAME; PROJECT/NAME is then a symlink to the new session directory,
# which links back to its source as `parent`.  pi loads the fork and sees
# the conversation as it was at ENTRY.  Refusals make no file.
. "$(dirname "$0")/lib.sh" "$@"
command -v setpriv >/dev/null || die "setpriv (util-linux) is needed"

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
need_pi

FIX=$ROOT/tests/data/fixtures/pi-1.6.0-v3-branched.jsonl
P=--home-u-proj--
Q=--home-u-other--
A=2026-01-01T00-00-00-000Z_aaaa
mkdir -p "$STORE/$P" "$STORE/$Q"
cp "$FIX" "$STORE/$P/$A.jsonl"
before=$(sha256sum <"$STORE/$P/$A.jsonl")
# Another user (below) may make links in $Q but not read a private source.
chmod 0755 "$STORE"
chmod 0777 "$STORE/$Q"
let_others_reach "$MNT"
mount_fs "$STORE" "$MNT" -o allow_other

# new_file: the newest session file of a folder.
new_file() { ls -t "$STORE/$1"/*.jsonl | head -1; }

assert_true "ln -s ENTRY PROJECT/NAME" ln -s "$A/0004-user.7bfd5a82.md" "$MNT/$P/retry"
assert_eq "one new session file" 2 "$(ls "$STORE/$P"/*.jsonl | wc -l)"
fork=$(new_file "$P")
stem=$(basename "$fork" .jsonl)
header=$(head -1 "$fork")
assert_contains "a version 3 header" '{"type":"session","version":3,"id":"' "$header"
assert_contains "the source's cwd, the source as parentSession" \
	"\"cwd\":\"/home/user/demo-project\",\"parentSession\":\"$STORE/$P/$A.jsonl\"}" "$header"
assert_eq "NAME is a symlink to the fork's directory" "$stem" "$(fsx readlink "$MNT/$P/retry")"
assert_true "NAME is a symlink" test -L "$MNT/$P/retry"
assert_eq "through it, the fork's name" "retry" "$(fsx cat "$MNT/$P/retry/name")"
assert_eq "the fork links back to its source" "../$A" "$(fsx readlink "$MNT/$P/$stem/parent")"
assert_true "and parent leads there" test -f "$MNT/$P/$stem/parent/0008~c34de545/0008-user.c34de545.md"
fsx_out ls "$MNT/$P/$stem"
assert_contains "the path up to the entry" "0001-model_change.5862b5cb.md
0002-thinking_level_change.5e5a4449.md
0003-system.b5b34113.md
0004-user.7bfd5a82.md
0005-label." "$OUT"
assert_true "no fork of the source came along" bash -c "! ls '$MNT/$P/$stem' | grep -q '~'"
assert_eq "the label on the entry came along" "../0004-user.7bfd5a82.md" \
	"$(fsx readlink "$MNT/$P/$stem/labels/first-question")"
assert_eq "the entry's text is the source's" "$(fsx cat "$MNT/$P/$A/0004-user.7bfd5a82.md")" \
	"$(fsx cat "$MNT/$P/$stem/0004-user.7bfd5a82.md")"
assert_eq "the source is unchanged" "$before" "$(sha256sum <"$STORE/$P/$A.jsonl")"
assert_contains "ls -l of the project shows the fork" "$stem" "$(fsx ls "$MNT/$P")"

# pi loads the fork as it is, and sees the source's conversation at the
# entry (pi's own branch(7bfd5a82) of the source).
pi_open "$fork"
cp "$fork" "$T_DIR/fork.jsonl"
cp "$STORE/$P/$A.jsonl" "$T_DIR/source.jsonl"
assert_contains "pi opens the fork" '"ok":true' "$OUT"
assert_contains "pi leaves it as it is" '"unchanged":true' "$OUT"
assert_contains "pi reads its name" '"name":"retry"' "$OUT"
fsx_out timeout -s KILL 60 "$PI_NODE" --input-type=module -e "
const { SessionManager } = await import('file://$PI_SESSION_MANAGER');
const src = SessionManager.open('$T_DIR/source.jsonl', '$T_DIR');
src.branch('7bfd5a82');
const fork = SessionManager.open('$T_DIR/fork.jsonl', '$T_DIR');
const a = JSON.stringify(src.buildSessionContext()), b = JSON.stringify(fork.buildSessionContext());
console.log(a === b ? 'same' : 'differ:\n' + a + '\n' + b);
console.log(fork.getHeader().parentSession);"
assert_eq "pi sees the conversation as it was at the entry" "same
$STORE/$P/$A.jsonl" "${OUT%$'\n'}"

# A directory forks at its tip; an absolute path on the mount works, and
# so does another project folder (the fork goes there, its cwd the
# source's, as /fork keeps it).
assert_true "ln -s of a fork directory, absolute, into another folder" \
	ln -s "$MNT/$P/$A/0008~c34de545" "$MNT/$Q/at the tip"
tip=$(new_file "$Q")
tip_stem=$(basename "$tip" .jsonl)
assert_eq "its name resolves there" "$tip_stem" "$(fsx readlink "$MNT/$Q/at the tip")"
assert_eq "its parent is across the store" "../../$P/$A" "$(fsx readlink "$MNT/$Q/$tip_stem/parent")"
assert_exists "$MNT/$Q/$tip_stem/0009-assistant.b037ea6e.md"
assert_missing "$MNT/$Q/$tip_stem/0008-user.3ecbb500.md"
assert_eq "its context is the branch's, at its tip" "$(fsx cat "$MNT/$P/$A/0008~c34de545/context.json")" \
	"$(fsx cat "$MNT/$Q/$tip_stem/context.json")"

# Refusals: nothing is made.
count() { ls "$STORE/$P"/*.jsonl "$STORE/$Q"/*.jsonl | wc -l; }
n=$(count)
assert_errno "Invalid argument" ln -s /etc/passwd "$MNT/$P/outside"
assert_errno "Invalid argument" ln -s "$A/context.json" "$MNT/$P/not an entry"
assert_errno "Invalid argument" ln -s "$A/no-such.md" "$MNT/$P/missing"
assert_errno "Invalid argument" ln -s "$A/0004-user.7bfd5a82.md" "$MNT/$P/.hidden"
assert_errno "File exists" ln -s "$A/0004-user.7bfd5a82.md" "$MNT/$P/retry"
assert_errno "File exists" ln -s "$A/0004-user.7bfd5a82.md" "$MNT/$P/$A"
assert_errno "Operation not permitted" rm "$MNT/$P/retry"
assert_true "the name still resolves" test -L "$MNT/$P/retry"
chmod 0600 "$STORE/$P/$A.jsonl"
fsx_out setpriv --reuid=52001 --regid=52001 --clear-groups -- ln -s "$MNT/$P/$A/0004-user.7bfd5a82.md" "$MNT/$Q/stolen"
assert_contains "a caller who may not read the source" "Permission denied" "$ERR"
chmod 0644 "$STORE/$P/$A.jsonl"
assert_eq "no file was made" "$n" "$(count)"
assert_eq "the source is still unchanged" "$before" "$(sha256sum <"$STORE/$P/$A.jsonl")"
umount_fs "$MNT"

# After a restart the name is still a link (the header says it is a fork).
mount_fs "$STORE" "$MNT"
assert_poll "after a restart, NAME is still a symlink" 5 test -L "$MNT/$P/retry"
assert_eq "to the fork" "$stem" "$(fsx readlink "$MNT/$P/retry")"
umount_fs "$MNT"

# A flat store: the same at the root.
FLAT=$T_DIR/flat
mkdir -p "$FLAT" "$T_DIR/mnt2"
cp "$FIX" "$FLAT/$A.jsonl"
mount_fs "$FLAT" "$T_DIR/mnt2"
assert_true "ln -s at the root of a flat store" ln -s "$A/0004-user.7bfd5a82.md" "$T_DIR/mnt2/flat fork"
flat_stem=$(basename "$(ls -t "$FLAT"/*.jsonl | head -1)" .jsonl)
assert_eq "it resolves" "$flat_stem" "$(fsx readlink "$T_DIR/mnt2/flat fork")"
assert_eq "its parent" "../$A" "$(fsx readlink "$T_DIR/mnt2/$flat_stem/parent")"
umount_fs "$T_DIR/mnt2"

finish
